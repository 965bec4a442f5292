/* SPDX-License-Identifier: MIT */
/*
 * json_string.c — JSON string literals (json_string.h): the escaper that
 * core/trace.c, tools/ and bench/ had each written for themselves.
 */
#include "internal/json_string.h"

void json_write_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}
