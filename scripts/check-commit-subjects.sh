#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the subjects of a range of commits against the rules of README.md's
# "Layout and commits": `area: summary` (or `area, area: summary`), at most 72
# characters, each area one of the list there (read from README.md, so the
# list has one home). Merge commits are skipped. Lists each subject that
# breaks a rule and fails.
#
#   scripts/check-commit-subjects.sh                 main..HEAD
#   scripts/check-commit-subjects.sh RANGE           e.g. origin/main..HEAD, -5
#
# Not run by CI: the history before the rules is not held to them.
set -euo pipefail
cd "$(dirname "$0")/.."

range=${1:-main..HEAD}
if [ $# -gt 1 ]; then
  echo "check-commit-subjects: one range at most (got $*)" >&2
  exit 2
fi

# The areas: README.md's list items "- `area`: ..." under "### Layout and commits".
mapfile -t areas < <(awk '
  /^### Layout and commits/ { in_section = 1; next }
  /^#/ { in_section = 0 }
  in_section && /^- `[a-z0-9-]+`:/ { sub(/^- `/, ""); sub(/`.*/, ""); print }
' README.md)
if [ ${#areas[@]} -eq 0 ]; then
  echo "check-commit-subjects: no areas found in README.md's \"Layout and commits\"" >&2
  exit 2
fi
is_area() {
  local a
  for a in "${areas[@]}"; do [ "$a" = "$1" ] && return 0; done
  return 1
}

bad=0
count=0
while IFS= read -r line; do
  hash=${line%% *}
  subject=${line#* }
  count=$((count + 1))
  problems=()
  # Characters, not bytes: subjects may hold µ or an em dash.
  length=$(printf '%s' "$subject" | LC_ALL=C.UTF-8 wc -m)
  [ "$length" -le 72 ] || problems+=("$length characters, more than 72")
  if [[ $subject =~ ^([^:]+):\ [^\ ] ]]; then
    IFS=',' read -r -a named <<<"${BASH_REMATCH[1]}"
    for a in "${named[@]}"; do
      a=${a# }
      a=${a% }
      is_area "$a" || problems+=("'$a' is not an area")
    done
  else
    problems+=("not 'area: summary'")
  fi
  if [ ${#problems[@]} -gt 0 ]; then
    bad=$((bad + 1))
    printf '%s %s\n' "$hash" "$subject"
    printf '    %s\n' "${problems[@]}"
  fi
done < <(git log --no-merges --format='%h %s' "$range")

if [ $bad -gt 0 ]; then
  echo "check-commit-subjects: $bad of $count subjects in $range break the rules" \
    "(areas: ${areas[*]})" >&2
  exit 1
fi
echo "check-commit-subjects: $count subjects in $range follow the rules"
