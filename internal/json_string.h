/* SPDX-License-Identifier: MIT */
/*
 * json_string.h — the one JSON string escaper of the tree, for libtandem's
 * trace writer (core/trace.c), the tandem tool's --json output and
 * tandem-bench's. Compiled into libtandem (hidden, as all its internals)
 * and, as the static library tandem_json, into the programs.
 */
#ifndef TANDEM_INTERNAL_JSON_STRING_H_
#define TANDEM_INTERNAL_JSON_STRING_H_

#include <stdio.h>

/* Writes |s| to |f| as a JSON string literal, quotes included: '"' and '\\'
 * escaped, control characters as \u00XX, other bytes (UTF-8) as they are.
 * NULL is written as "". */
void json_write_string(FILE *f, const char *s);

#endif /* TANDEM_INTERNAL_JSON_STRING_H_ */
