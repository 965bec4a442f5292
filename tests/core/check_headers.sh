#!/bin/sh
# SPDX-License-Identifier: MIT
# check_headers.sh INCLUDE_DIR CC CXX [HEADER...] — each public header
# compiles on its own, as the first and only include of a translation unit,
# in C11 (-pedantic) and in C++11, with -Wall -Wextra -Werror: a header that
# needs another one included first, or that a C++ program cannot include,
# fails here (ctest test_public_headers on the source tree's include/, and
# tests/install/install_test.sh on the installed one). HEADERs are names
# under INCLUDE_DIR/tandem (default: every *.h there). Prints each failure
# with the compiler's message.
set -u
inc=$1; cc=$2; cxx=$3; shift 3
[ $# -gt 0 ] || set -- $(cd "$inc/tandem" && ls *.h)
[ $# -gt 0 ] || { echo "check_headers: no headers in $inc/tandem" >&2; exit 1; }
status=0
for h in "$@"; do
  [ -f "$inc/tandem/$h" ] || { echo "check_headers: $inc/tandem/$h is missing" >&2; status=1; continue; }
  src="#include <tandem/$h>
int main(void) { return 0; }"
  ok=1
  if ! printf '%s\n' "$src" | "$cc" -std=c11 -pedantic -Wall -Wextra -Werror -fsyntax-only \
       -I"$inc" -x c -; then
    echo "check_headers: tandem/$h does not compile alone as C11" >&2; ok=0
  fi
  if ! printf '%s\n' "$src" | "$cxx" -std=c++11 -Wall -Wextra -Werror -fsyntax-only \
       -I"$inc" -x c++ -; then
    echo "check_headers: tandem/$h does not compile alone as C++11" >&2; ok=0
  fi
  if [ $ok = 1 ]; then echo "tandem/$h: compiles alone as C11 and C++11"; else status=1; fi
done
exit $status
