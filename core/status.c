/* SPDX-License-Identifier: MIT */
/*
 * status.c — status names and the per-thread error message.
 *
 * Each thread owns one fixed buffer for its last failure, so raising an error
 * never allocates (allocation failure itself must be reportable) and messages
 * of one thread never overwrite another's.
 */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char tandem__message[TANDEM__MESSAGE_BYTES];

const char *tandem_status_name(tandem_status_t status) {
  switch (status) {
#define TANDEM__NAME(name, value, text) \
  case TANDEM_##name: return #name;
    TANDEM_STATUS_LIST(TANDEM__NAME)
#undef TANDEM__NAME
  }
  return "UNKNOWN";
}

const char *tandem_status_describe(tandem_status_t status) {
  switch (status) {
#define TANDEM__TEXT(name, value, text) \
  case TANDEM_##name: return text;
    TANDEM_STATUS_LIST(TANDEM__TEXT)
#undef TANDEM__TEXT
  }
  return "unknown status";
}

const char *tandem_error_message(void) { return tandem__message; }

void tandem__clear_error(void) { tandem__message[0] = '\0'; }

void tandem__save_error(char *buf, size_t size) { snprintf(buf, size, "%s", tandem__message); }

void tandem__restore_error(const char *buf) {
  snprintf(tandem__message, sizeof tandem__message, "%s", buf);
}

tandem_status_t tandem__fail(tandem_status_t code, const char *file, int line, const char *fmt,
                             ...) {
  char text[TANDEM__MESSAGE_BYTES];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  snprintf(tandem__message, sizeof tandem__message, "%.900s [%s, %s:%d]", text,
           tandem_status_name(code), base, line);
  return code;
}

tandem_status_t tandem__annotate(tandem_status_t code, const char *fmt, ...) {
  char prefix[256];
  char old[TANDEM__MESSAGE_BYTES];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, tandem__message, sizeof old);
  snprintf(tandem__message, sizeof tandem__message, "%s: %.760s", prefix, old);
  return code;
}
