#!/bin/sh
# SPDX-License-Identifier: MIT
# check_nevers.sh SOURCE_DIR — the house's four "nevers" between its parts,
# checked in the sources (ctest test_house_nevers, label "core"). A part may
# reach another only through what sits below both (internal/, cmdline/, the
# public headers), never into its private files:
#   bench-tools    bench/ (tandem-bench) never includes a tools/ header or
#                  links a target tools/CMakeLists.txt defines: the helpers
#                  both programs use are cmdline/'s;
#   emu-backends   the emulated NPU (npu/emu/) never includes a backends/
#                  header or names backends/ in its CMake commands: what the
#                  emulator and the XRT backend share belongs in internal/;
#   host-vulkan    the host GPU (backends/host/) never includes a
#                  backends/vulkan/ header nor names a tandem_vk_ function:
#                  SPIR-V reflection is backends/spirv/'s;
#   tools-emu      the shipped tool (tools/) never includes an npu/ header
#                  or links a target npu/emu/CMakeLists.txt defines (a build
#                  order dependency, add_dependencies, is allowed: the tool
#                  finds the emulator at run time): the DPU instruction format
#                  it executes on the CPU is internal/emu_dpu.h.
# An include counts by the file it reaches: "tools/cli.h" from the root (even
# when that file is gone), a path next to the including file
# ("../tools/cli.h"), or a bare name that an include folder makes resolve
# ("cli.h" with tools/ on the include path: any name that is a file of the
# forbidden part and not one next to the includer or from the root). Prints
# each break with the rule and the mend.
#
# ALLOWED lists the breaks known today, each "rule file reached"; the check
# also fails on an entry that no longer breaks, so the entry goes with the fix.
set -u
cd "$1" || exit 2
root=$(pwd -P)
status=0

# --- known breaks ---------------------------------------------------------
# None today: the XRT bridge's C interface, which the emulator implements,
# moved to internal/xrt_bridge_abi.h (issue 33).
ALLOWED=''

allowed() { # rule file reached
  printf '%s\n' "$ALLOWED" | grep -qxF "$1 $2 $3"
}
seen_allowed=''

# The project-relative path of an existing path, or "" when outside the tree.
rel() {
  p=$(cd "$(dirname "$1")" 2>/dev/null && pwd -P) || return 0
  case "$p/" in "$root"/*) ;; *) return 0 ;; esac
  p="$p/$(basename "$1")"
  printf '%s\n' "${p#"$root"/}"
}

# includes RULE FORBIDDEN-DIR WHY FILES...: every quoted include of FILES
# that reaches a file under FORBIDDEN-DIR breaks RULE.
includes() {
  rule=$1 forbidden=$2 why=$3
  shift 3
  (cd "$forbidden" && find . -type f) > "$tmp/files"
  for f in "$@"; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
      while IFS= read -r inc; do
        reached=''
        if [ "${inc#"$forbidden"/}" != "$inc" ]; then
          reached=$inc # named from the root, whether or not the file is there
        elif [ -f "$(dirname "$f")/$inc" ]; then
          reached=$(rel "$(dirname "$f")/$inc")
        elif [ -f "$inc" ]; then
          reached=$(rel "$inc")
        elif [ -f "$forbidden/$inc" ]; then
          reached="$forbidden/$inc" # only an include folder makes it resolve
        else
          # a file of the forbidden part below a folder on the include path
          reached=$(awk -v s="/$inc" \
            'substr($0, length($0) - length(s) + 1) == s { print; exit }' "$tmp/files")
          [ -n "$reached" ] && reached="$forbidden/${reached#./}"
        fi
        case "$reached" in
          "$forbidden"/*)
            if allowed "$rule" "$f" "$reached"; then
              echo "$rule $f $reached" >> "$tmp/seen"
            else
              echo "$f: #include \"$inc\" reaches $reached" >&2
              echo "  never $rule: $why" >&2
              echo 1 > "$tmp/fail"
            fi
            ;;
        esac
      done
  done
}

# cmake_commands FILE: each CMake command of FILE on one line ("name args"),
# comments dropped, a command's lines joined.
cmake_commands() {
  sed 's/#.*//' "$1" | awk '
    { line = line " " $0; opens += gsub(/\(/, "("); closes += gsub(/\)/, ")")
      if (opens > 0 && opens == closes) { gsub(/[[:space:]]+/, " ", line); sub(/^ /, "", line)
        print line; line = ""; opens = closes = 0 } }'
}

# targets FILE: the targets FILE defines (add_library, add_executable,
# tandem_add_shaders).
targets() {
  cmake_commands "$1" |
    sed -n 's/^\(add_library\|add_executable\|tandem_add_shaders\) *( *\([A-Za-z0-9_]*\).*/\2/p'
}

# links RULE FILE OTHER-CMAKE FORBIDDEN-DIR WHY: no command of FILE that
# compiles or links (target_link_libraries, target_include_directories,
# target_sources, add_library, add_executable) names a target OTHER-CMAKE
# defines or a path into FORBIDDEN-DIR.
links() {
  rule=$1 file=$2 other=$3 forbidden=$4 why=$5
  names=$(targets "$other" | tr '\n' '|')
  names=${names%|}
  [ -n "$names" ] || names='-no target-'
  cmake_commands "$file" |
    grep -E '^(target_link_libraries|target_include_directories|target_sources|add_library|add_executable) *\(' |
    while IFS= read -r cmd; do
      hit=$(printf '%s\n' "$cmd" | tr ' ()' '\n\n\n' | grep -v '^$' |
        grep -xE "($names)|(.*/)?$forbidden(/.*)?" | head -n 1)
      if [ -n "$hit" ]; then
        echo "$file: $(printf '%s' "$cmd" | cut -c1-100)... names $hit" >&2
        echo "  never $rule: $why" >&2
        echo 1 > "$tmp/fail"
      fi
    done
}

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/seen"

why='tandem-bench shares what it needs of the tool through cmdline/ (or internal/), never tools/'
includes bench-tools tools "$why" bench/*.c bench/*.h
links bench-tools bench/CMakeLists.txt tools/CMakeLists.txt tools "$why"

why='what the emulator shares with a backend belongs in internal/, below both'
includes emu-backends backends "$why" npu/emu/*.c npu/emu/*.h npu/emu/*.cpp
if cmake_commands npu/emu/CMakeLists.txt | grep -E 'backends/'; then
  echo "npu/emu/CMakeLists.txt names backends/ in a command (above)" >&2
  echo "  never emu-backends: $why" >&2
  echo 1 > "$tmp/fail"
fi

why='the host GPU uses backends/spirv/ and core/backend.h, never the Vulkan backend'
includes host-vulkan backends/vulkan "$why" backends/host/*.c backends/host/*.h
if grep -nE '\btandem_vk_[a-z_]+' backends/host/*.c backends/host/*.h; then
  echo "backends/host/ names a Vulkan backend function (above)" >&2
  echo "  never host-vulkan: $why" >&2
  echo 1 > "$tmp/fail"
fi

why='the shipped tool reads what it shares with the emulator from internal/, never npu/'
includes tools-emu npu "$why" tools/*.c tools/*.h
links tools-emu tools/CMakeLists.txt npu/emu/CMakeLists.txt npu "$why"

# An allowed break that no longer happens: its entry must go too.
printf '%s\n' "$ALLOWED" | while IFS= read -r entry; do
  [ -n "$entry" ] || continue
  if ! grep -qxF "$entry" "$tmp/seen"; then
    echo "ALLOWED entry '$entry' breaks nothing any more: remove it from $0" >&2
    echo 1 > "$tmp/fail"
  fi
done

[ -f "$tmp/fail" ] && status=1
exit $status
