#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_xrt_headers.sh — compiles libtandem's XRT C side (backends/xrt/*.c,
# through internal/xrt_headers.h) and the bridge (backends/xrt/xrt_bridge.cpp)
# against every XRT header layout it can find, with tandem's own warning flags
# and XRT as a system include, the way the top CMakeLists.txt builds them
# (the same layout/version probe, passed as TANDEM_XRT_HEADER_LAYOUT and
# TANDEM_XRT_VERSION_CODE). Layouts (issue 31; npu-xdna-second-reading.md §1):
#   2.13   Debian's libxrt-dev, /usr/include/xrt (C side only: no hw_context)
#   2.17   the XRT scripts/build-xrt-noop.sh installed ($TANDEM_XRT_NOOP_PREFIX)
#   2.17, 2.18, 2.19, 2.26-dev   src/runtime_src/core/include exported with
#          `git archive` from $TANDEM_XRT_GIT_DIR at tags 202410.2.17.319,
#          202420.2.18.179, 202510.2.19.194 and commit 963c58ee, with the
#          version header XRT's build generates made from that commit's
#          src/CMake/config/version(-slim).h.in
# Each AMD layout is compiled twice where Debian's headers are installed: as
# is (Debian's /usr/include/xrt then answers for "xrt/experimental/...", the
# trap issue 31 names) and isolated (-nostdinc, the default system folders
# again but /usr/include through a copy of links without xrt/).
# Usage: check_xrt_headers.sh SOURCE_DIR WORK_DIR. Exit 0: every layout found
# compiled; 1: one failed (the compiler's output is shown); 77: none found.
set -uo pipefail

src=${1:?usage: $0 SOURCE_DIR WORK_DIR}
work=${2:?usage: $0 SOURCE_DIR WORK_DIR}
CC=${CC:-cc}
CXX=${CXX:-c++}
mkdir -p "$work"
ran=0 failed=0

say() { printf '%s\n' "$*"; }

# The probe of the top CMakeLists.txt: version code from the first version
# header that names one, layout 2 when xrt/experimental/xrt_xclbin.h exists.
probe() { # probe INCLUDE_DIR -> "LAYOUT CODE" or nothing
  local inc=$1 layout code="" h line
  if [[ -f $inc/xrt/experimental/xrt_xclbin.h ]]; then
    layout=2
  elif [[ -f $inc/experimental/xrt_xclbin.h ]]; then
    layout=1
  else
    return 1
  fi
  for h in xrt/detail/version-slim.h version.h xrt/detail/version.h; do
    [[ -f $inc/$h ]] || continue
    line=$(grep -m1 -E 'define XRT_VERSION_CODE XRT_VERSION\(' "$inc/$h") || continue
    if [[ $line =~ XRT_VERSION\(([0-9]+),\ *([0-9]+)\) ]]; then
      code=$((BASH_REMATCH[1] * 65536 + BASH_REMATCH[2]))
      break
    fi
  done
  [[ -n $code ]] || return 1
  echo "$layout $code"
}

# The compiler's default system include folders, in order, for language $1.
default_dirs() {
  local lang=$1 compiler=$CC
  [[ $lang == c++ ]] && compiler=$CXX
  "$compiler" -x "$lang" -E -Wp,-v /dev/null 2>&1 >/dev/null |
    sed -n '/#include <...> search starts here:/,/End of search list./p' | sed '1d;$d;s/^ *//'
}

# A folder of links to every entry of /usr/include but xrt/: /usr/include
# without Debian's XRT.
farm=$work/usr-include-without-xrt
if [[ -d /usr/include/xrt && ! -d $farm ]]; then
  mkdir -p "$farm.tmp"
  for e in /usr/include/*; do
    [[ $(basename "$e") == xrt ]] || ln -s "$e" "$farm.tmp/"
  done
  mv "$farm.tmp" "$farm"
fi
isolated_flags() { # isolated_flags LANG -> -nostdinc and the default folders, /usr/include replaced
  local d
  printf '%s\n' -nostdinc
  while read -r d; do
    [[ $d == /usr/include ]] && d=$farm
    printf '%s\n' -isystem "$d"
  done < <(default_dirs "$1")
}

c_flags=(-std=c11 -fsyntax-only -D_GNU_SOURCE -DVK_NO_PROTOTYPES -Wall -Wextra -Wshadow
         -Wstrict-prototypes -Wno-unused-parameter -Werror -fvisibility=hidden
         -I"$src/include" -I"$src")
cxx_flags=(-std=c++17 -fsyntax-only -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter
           -Werror -fvisibility=hidden -I"$src")
c_files=(backends/xrt/xrt_api.c backends/xrt/xrt_npu.c backends/xrt/xrt_fault.c
         backends/xrt/xrt_nodes.c)

# compile NAME INCLUDE_DIR BRIDGE(0/1): every mode that applies.
compile() {
  local name=$1 inc=$2 bridge=$3 probed layout code mode out rc f
  if ! probed=$(probe "$inc"); then
    say "FAIL $name: $inc has no XRT version header or experimental/xrt_xclbin.h"
    failed=1
    return
  fi
  read -r layout code <<<"$probed"
  local modes=(visible)
  [[ -d /usr/include/xrt && $inc != /usr/include/xrt ]] && modes+=(isolated)
  for mode in "${modes[@]}"; do
    local bad=0 what="C side"
    ((bridge)) && what="C side + bridge"
    local sys_c=() sys_cxx=() drm=(-I/usr/include/libdrm)
    if [[ $mode == isolated ]]; then
      mapfile -t sys_c < <(isolated_flags c)
      mapfile -t sys_cxx < <(isolated_flags c++)
      drm=(-I"$farm/libdrm")
    fi
    for f in "${c_files[@]}"; do
      out=$("$CC" "${c_flags[@]}" "${drm[@]}" -isystem "$inc" "${sys_c[@]}" \
        -DTANDEM_XRT_HEADER_LAYOUT="$layout" "$src/$f" 2>&1)
      rc=$?
      ran=1
      if ((rc)); then
        say "FAIL $name ($mode, layout $layout, code $code): C side $f"
        say "$out"
        bad=1
      fi
    done
    if ((bridge)); then
      out=$("$CXX" "${cxx_flags[@]}" -isystem "$inc" "${sys_cxx[@]}" \
        -DTANDEM_XRT_HEADER_LAYOUT="$layout" -DTANDEM_XRT_VERSION_CODE="$code" \
        "$src/backends/xrt/xrt_bridge.cpp" 2>&1)
      rc=$?
      if ((rc)); then
        say "FAIL $name ($mode, layout $layout, code $code): bridge"
        say "$out"
        bad=1
      fi
    fi
    if ((bad)); then
      failed=1
    else
      say "ok   $name ($mode): layout $layout, XRT $((code >> 16)).$((code & 0xffff)), $what"
    fi
  done
}

# 2.13: Debian's.
if [[ -f /usr/include/xrt/xrt/xrt_device.h ]]; then
  compile "Debian 2.13 (/usr/include/xrt)" /usr/include/xrt 0
else
  say "skip Debian 2.13: libxrt-dev is not installed (/usr/include/xrt/xrt/xrt_device.h)"
fi

# 2.17 as scripts/build-xrt-noop.sh installed it.
prefix=${TANDEM_XRT_NOOP_PREFIX:-}
if [[ -n $prefix && -f $prefix/include/xrt/xrt_hw_context.h ]]; then
  compile "XRT 2.17 built from source ($prefix/include)" "$prefix/include" 1
else
  say "skip built XRT: TANDEM_XRT_NOOP_PREFIX ${prefix:-is unset}${prefix:+ has no include/xrt/xrt_hw_context.h} (scripts/build-xrt-noop.sh makes one)"
fi

# The rest from a git directory of Xilinx/XRT.
git_dir=${TANDEM_XRT_GIT_DIR:-}
if [[ -z $git_dir ]] || ! git -C "$git_dir" rev-parse --git-dir >/dev/null 2>&1; then
  say "skip XRT 2.17/2.18/2.19/2.26-dev headers: TANDEM_XRT_GIT_DIR ${git_dir:-is unset}${git_dir:+ is not a git directory} (a clone of https://github.com/Xilinx/XRT)"
else
  for ref in 202410.2.17.319 202420.2.18.179 202510.2.19.194 963c58ee224491e191b3be78d76f51e55e152177; do
    if ! commit=$(git -C "$git_dir" rev-parse -q --verify "$ref^{commit}"); then
      say "skip XRT $ref: not in $git_dir"
      continue
    fi
    inc=$work/xrt-${commit:0:8}/include
    if [[ ! -f $inc/.done ]]; then
      rm -rf "$work/xrt-${commit:0:8}"
      mkdir -p "$inc"
      git -C "$git_dir" archive "$commit" src/runtime_src/core/include 2>/dev/null |
        tar -x -C "$inc" --strip-components=4
      # The version XRT's build stamps: src/CMakeLists.txt (2.17-2.19) or
      # src/CMake/settings.cmake (later) at that commit.
      settings=$(git -C "$git_dir" show "$commit:src/CMake/settings.cmake" 2>/dev/null
                 git -C "$git_dir" show "$commit:src/CMakeLists.txt" 2>/dev/null)
      major=$(grep -m1 -oiE 'XRT_VERSION_MAJOR +[0-9]+' <<<"$settings" | grep -oE '[0-9]+$')
      minor=$(grep -m1 -oiE 'XRT_VERSION_MINOR +[0-9]+' <<<"$settings" | grep -oE '[0-9]+$')
      subst=(-e "s/@XRT_VERSION_MAJOR@/$major/g" -e "s/@XRT_VERSION_MINOR@/$minor/g"
             -e "s/@XRT_VERSION_STRING@/$major.$minor.0/g" -e 's/@XRT_VERSION_PATCH@/0/g'
             -e 's/@XRT_HEAD_COMMITS@/0/g' -e 's/@XRT_BRANCH_COMMITS@/0/g' -e 's/@[A-Z_]*@//g')
      # 2.20 on: xrt/detail/version-slim.h; before: version.h, found by
      # xrt/detail/abi.h either on the path root or as xrt/detail/version.h.
      if git -C "$git_dir" cat-file -e "$commit:src/CMake/config/version-slim.h.in" 2>/dev/null; then
        git -C "$git_dir" show "$commit:src/CMake/config/version-slim.h.in" | sed "${subst[@]}" \
          >"$inc/xrt/detail/version-slim.h"
      else
        git -C "$git_dir" show "$commit:src/CMake/config/version.h.in" | sed "${subst[@]}" \
          >"$inc/version.h"
        cp "$inc/version.h" "$inc/xrt/detail/version.h"
      fi
      touch "$inc/.done"
    fi
    compile "XRT $ref (git ${commit:0:8})" "$inc" 1
  done
fi

if ((failed)); then
  say "FAIL"
  exit 1
fi
if ((!ran)); then
  say "SKIP: no XRT headers found"
  exit 77
fi
say "PASS"
