#!/bin/sh
# SPDX-License-Identifier: MIT
# man_test.sh TOOL MANPAGE — the manual page documents every option that each
# command's --help lists, and (where groff is installed) renders without a
# single troff warning.
set -eu
tool=$1; page=$2
text=$(sed 's/\\-/-/g' "$page")
missing=0
for cmd in "" devices run; do
  for flag in $("$tool" $cmd --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    if ! printf '%s\n' "$text" | grep -q -- "$flag"; then
      echo "man_test: 'tandem $cmd --help' lists $flag, the manual page does not" >&2
      missing=1
    fi
  done
done
[ $missing = 0 ] || exit 1
echo "man_test: every --help option is in the manual page"
if command -v groff > /dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || { echo "man_test: groff warns: $warnings" >&2; exit 1; }
  echo "man_test: groff renders it without warnings"
fi
