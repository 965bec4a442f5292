#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the user-space half of Xilinx XRT 2.17 (tag 202410.2.17.319) with its
# `noop` shim — only the targets xrt_coreutil and xrt_noop — from repository
# snapshots pinned by commit, and installs its headers and those two libraries
# into a prefix. tests/npu/test_bridge_xrt_real.c runs tandem's bridge against
# the result (CMake: -DTANDEM_XRT_NOOP_PREFIX=<prefix>/xrt). Nothing from XRT
# or ELFIO is copied into tandem's tree: both are exported with `git archive`
# from git directories given on the command line or in the environment.
#
# Usage: scripts/build-xrt-noop.sh [XRT_GIT_DIR [ELFIO_GIT_DIR]]
#   XRT_GIT_DIR    git dir holding XRT commit $XRT_COMMIT   (env XRT_GIT_DIR)
#   ELFIO_GIT_DIR  git dir holding ELFIO commit $ELFIO_COMMIT (env ELFIO_GIT_DIR)
#   env XRT_SRC (default /work/xrt-src), XRT_BUILD (/work/xrt-build),
#       XRT_PREFIX (/work/xrt-install), JOBS (2), TANDEM_SKIP_DEPS=1 skips apt-get.
# Takes 20-50 minutes on two cores. Not run by CI (issue 31).
set -euo pipefail

XRT_COMMIT=a75e9843c875bac0f52d34a1763e39e16fb3c9a7 # tag 202410.2.17.319
# ELFIO at exactly the commit XRT 2.17 pins as its submodule
# src/runtime_src/core/common/elf (git ls-tree 202410.2.17.319 shows it).
ELFIO_COMMIT=a04810f12625207cce72665d783babb80f0175a8

XRT_GIT_DIR=${1:-${XRT_GIT_DIR:-}}
ELFIO_GIT_DIR=${2:-${ELFIO_GIT_DIR:-}}
XRT_SRC=${XRT_SRC:-/work/xrt-src}
XRT_BUILD=${XRT_BUILD:-/work/xrt-build}
XRT_PREFIX=${XRT_PREFIX:-/work/xrt-install}
JOBS=${JOBS:-2}

if [[ -z "$XRT_GIT_DIR" || -z "$ELFIO_GIT_DIR" ]]; then
  echo "usage: $0 XRT_GIT_DIR ELFIO_GIT_DIR (or set XRT_GIT_DIR and ELFIO_GIT_DIR)" >&2
  echo "  e.g. a clone of https://github.com/Xilinx/XRT and of https://github.com/serge1/ELFIO" >&2
  exit 2
fi

run() { # print the exact command, then run it
  printf '+'
  printf ' %q' "$@"
  printf '\n'
  "$@"
}

for pair in "$XRT_GIT_DIR:$XRT_COMMIT" "$ELFIO_GIT_DIR:$ELFIO_COMMIT"; do
  dir=${pair%%:*} commit=${pair##*:}
  if ! git -C "$dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "error: $dir has no commit $commit; fetch it into that repository first" >&2
    exit 1
  fi
done
echo "XRT   $XRT_GIT_DIR @ $XRT_COMMIT (tags: $(git -C "$XRT_GIT_DIR" tag --points-at "$XRT_COMMIT" | tr '\n' ' '))"
echo "ELFIO $ELFIO_GIT_DIR @ $ELFIO_COMMIT"
pinned=$(git -C "$XRT_GIT_DIR" ls-tree "$XRT_COMMIT" src/runtime_src/core/common/elf | awk '{print $3}')
if [[ "$pinned" != "$ELFIO_COMMIT" ]]; then
  echo "error: XRT pins ELFIO at '$pinned', this script at $ELFIO_COMMIT" >&2
  exit 1
fi

# Debian 12 packages XRT 2.17's configure step requires (found by trying; see
# bench/results/2026-12-05-xrt-2.17-noop/README.md). The legacy configure needs
# them even though only two targets are built.
packages=(
  libboost-dev libboost-filesystem-dev libboost-program-options-dev libboost-system-dev
  ocl-icd-opencl-dev opencl-headers # nativeLnx.cmake: pkg_check_modules(OpenCL REQUIRED)
  rapidjson-dev                      # tools/xclbinutil: find_package(RapidJSON REQUIRED)
  libprotobuf-dev protobuf-compiler  # pcie/emulation/common_em: find_package(Protobuf REQUIRED)
  systemtap-sdt-dev                  # core/common/detail/linux/trace.h: #include <sys/sdt.h>
  libdrm-dev libncurses-dev uuid-dev pkg-config
)
if [[ "${TANDEM_SKIP_DEPS:-0}" != 1 ]]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})); then
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  fi
fi

# export GIT_DIR COMMIT DEST: `git archive` of COMMIT into DEST. A snapshot
# may lack the blobs of its largest files (the `fetch` tool's snapshots do);
# those paths are named and left out, and the build shows whether any mattered.
# (git still prints "invalid object" for each one left out, and exits 0.)
export_tree() {
  local dir=$1 commit=$2 dest=$3 missing
  missing=$(git -C "$dir" ls-tree -r --format='%(objecttype) %(objectname) %(path)' "$commit" |
    awk '$1 == "blob" {print $2}' | git -C "$dir" cat-file --batch-check |
    awk '$2 == "missing" {print $1}' | while read -r blob; do
      git -C "$dir" ls-tree -r --format='%(objectname) %(path)' "$commit" |
        awk -v b="$blob" '$1 == b {print ":(exclude)" $2}'
    done)
  local excludes=()
  if [[ -n "$missing" ]]; then
    mapfile -t excludes <<<"$missing"
    echo "note: $dir lacks these blobs at $commit; left out: ${excludes[*]}"
  fi
  run mkdir -p "$dest"
  echo "+ git -C $dir archive $commit -- . ${excludes[*]} | tar -x -C $dest"
  git -C "$dir" archive "$commit" -- . "${excludes[@]}" | tar -x -C "$dest"
}

# Sources: a fresh export each time, so a stale tree never builds.
run rm -rf "$XRT_SRC"
export_tree "$XRT_GIT_DIR" "$XRT_COMMIT" "$XRT_SRC"
export_tree "$ELFIO_GIT_DIR" "$ELFIO_COMMIT" "$XRT_SRC/src/runtime_src/core/common/elf"

# Configure the legacy (Alveo + noop) build as XRT's build.sh would, then build
# only the two libraries tandem loads.
cmake_args=(
  -S "$XRT_SRC/src" -B "$XRT_BUILD"
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCMAKE_INSTALL_PREFIX="$XRT_PREFIX"
  # python/pybind11 requires pybind11 whenever it finds Python 3 development
  # files; XRT's Python bindings are not built here, so the search is
  # switched off (a CMake option, no patch to XRT).
  -DCMAKE_DISABLE_FIND_PACKAGE_Python3=ON
)
if command -v ccache >/dev/null; then
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
run rm -rf "$XRT_BUILD"
# The tag's build number as XRT's release builds set it (src/CMakeLists.txt
# reads XRT_VERSION_PATCH from the environment).
export XRT_VERSION_PATCH=319
# An export has no .git, so src/CMake/version.cmake's git queries would come
# back empty, and an empty XRT_HEAD_COMMITS breaks the build of
# core/common/api/xrt_version.cpp ("return-statement with no value"). XRT's
# own way to build copied sources is DK_ROOT set in the environment (its
# promotion builds): version.cmake then skips git, and version.h.in's fields
# take the values given here as cache variables, read from the XRT git
# directory at the pinned commit as version.cmake would read them from a
# checkout. DK_ROOT is read nowhere else (git grep DK_ROOT at the tag).
export DK_ROOT=tandem-build-xrt-noop
cmake_args+=(
  -DXRT_BRANCH=202410.2.17.319
  -DXRT_HASH="$XRT_COMMIT"
  -DXRT_HEAD_COMMITS="$(git -C "$XRT_GIT_DIR" rev-list --count "$XRT_COMMIT")"
  -DXRT_BRANCH_COMMITS="$(git -C "$XRT_GIT_DIR" rev-list --count "$XRT_COMMIT" ^master 2>/dev/null || echo 0)"
  -DXRT_HASH_DATE="$(git -C "$XRT_GIT_DIR" log -1 --format=%cD "$XRT_COMMIT")"
  -DXRT_MODIFIED_FILES=
)
run env DK_ROOT="$DK_ROOT" XRT_VERSION_PATCH="$XRT_VERSION_PATCH" cmake "${cmake_args[@]}"
# xrt_coreutil_static is the same objects archived; it is built only because
# core/common's install script installs it beside xrt_coreutil.
run cmake --build "$XRT_BUILD" -j"$JOBS" --target xrt_coreutil xrt_coreutil_static xrt_noop

# Install: only the headers' and these libraries' install scripts, since a full
# `cmake --install` would first need every other target built.
run rm -rf "$XRT_PREFIX"
for sub in runtime_src/core/include runtime_src/core/common runtime_src/core/pcie/noop; do
  run cmake -DCMAKE_INSTALL_PREFIX="$XRT_PREFIX" -P "$XRT_BUILD/$sub/cmake_install.cmake"
done
# The generated version.h is installed by the top-level script
# (src/CMake/version.cmake: install(FILES gen/version.h DESTINATION xrt/include)),
# which would install every target; this is that one rule.
run install -m 0644 "$XRT_BUILD/gen/version.h" "$XRT_PREFIX/xrt/include/version.h"
echo "installed: $XRT_PREFIX/xrt (TANDEM_XRT_NOOP_PREFIX=$XRT_PREFIX/xrt)"
ls -l "$XRT_PREFIX/xrt/lib"
