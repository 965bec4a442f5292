#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that the tracked C sources (git ls-files '*.c' '*.h') are formatted as
# .clang-format says, with Debian 12's clang-format (14): lists each file that
# differs and fails. CI's first phase (.ci/run); not a CTest test, so a user's
# `make test` never fails on layout.
#
#   scripts/check-format.sh              check every tracked C source
#   scripts/check-format.sh --diff       also print what would change
#   scripts/check-format.sh --fix        rewrite the files that differ
#   scripts/check-format.sh [..] FILE..  only these files
#
# CLANG_FORMAT picks the binary (default clang-format-14 if present, else
# clang-format); another major version formats some constructs differently, so
# the script says so instead of failing silently on its differences.
# Places the formatter would mangle (X-macro lists, macros that expand to
# braced initializers) are fenced with /* clang-format off */ ... on.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check
files=()
named=0
for arg in "$@"; do
  case $arg in
    --fix) mode=fix ;;
    --diff) mode=diff ;;
    -h | --help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-format: unknown option '$arg' (--fix, --diff, --help)" >&2; exit 2 ;;
    *.c | *.h) files+=("$arg"); named=1 ;;
    *) named=1
       echo "check-format: skipping $arg: only C sources (*.c, *.h) are checked" >&2 ;;
  esac
done

# clang-format alone (builds do not need it, the check needs nothing else); a
# no-op when installed or TANDEM_SKIP_DEPS=1.
./scripts/install-deps.sh --only format

if [ -z "${CLANG_FORMAT:-}" ]; then
  if command -v clang-format-14 >/dev/null 2>&1; then
    CLANG_FORMAT=clang-format-14
  else
    CLANG_FORMAT=clang-format
  fi
fi
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  echo "check-format: $CLANG_FORMAT not found (Debian: apt-get install clang-format)" >&2
  exit 2
fi
version=$("$CLANG_FORMAT" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$version" != 14 ]; then
  echo "check-format: note: $CLANG_FORMAT is version ${version:-?}; the tree follows 14" \
    "(Debian 12): a difference may be the version's" >&2
fi

if [ ${#files[@]} -eq 0 ] && [ $named = 0 ]; then
  if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "check-format: not a git checkout: name the files" >&2
    exit 2
  fi
  mapfile -t files < <(git ls-files -- '*.c' '*.h')
fi

differ=()
for f in "${files[@]}"; do
  # A file deleted in the work tree but still tracked: nothing to check.
  [ -f "$f" ] || continue
  if ! "$CLANG_FORMAT" --style=file "$f" | cmp -s - "$f"; then
    differ+=("$f")
    case $mode in
      fix) "$CLANG_FORMAT" --style=file -i "$f" ;;
      diff) "$CLANG_FORMAT" --style=file "$f" | diff -u --label "$f" --label "$f (formatted)" "$f" - || true ;;
    esac
  fi
done

if [ ${#differ[@]} -eq 0 ]; then
  echo "check-format: ${#files[@]} files formatted as .clang-format says"
  exit 0
fi
if [ $mode = fix ]; then
  echo "check-format: rewrote ${#differ[@]} of ${#files[@]} files:"
  printf '  %s\n' "${differ[@]}"
  exit 0
fi
echo "check-format: ${#differ[@]} of ${#files[@]} files differ from .clang-format:" >&2
printf '  %s\n' "${differ[@]}" >&2
echo "check-format: fix with scripts/check-format.sh --fix (see first: --diff)" >&2
exit 1
