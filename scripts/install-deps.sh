#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages tandem needs to build and test, and nothing else
# (install-deps.sh fuzz adds the fuzzing ones, install-deps.sh format the
# formatter).
# Called by the Makefile before every build. Skipped when TANDEM_SKIP_DEPS=1 (the
# GPU machine, where ../shared/device carries the packages) or when every package
# is already installed. Only apt-get with Debian package names; nothing downloaded.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libvulkan-dev libvulkan-volk-dev vulkan-validationlayers mesa-vulkan-drivers vulkan-tools
  glslang-tools glslang-dev spirv-tools libspirv-cross-c-shared-dev
  libdrm-dev libxrt-dev uuid-dev
  libcmocka-dev libjansson-dev
  # examples/llama/make_tiny.py writes the Llama example's CI checkpoints with NumPy
  python3-numpy
  librsvg2-bin
  # the Python package (python/): headers to build the extension, NumPy and
  # pytest for its suite. python3-torch (1.13, CPU) is optional: about 180
  # packages; without it the PyTorch kDLCPU test is skipped with the reason.
  python3-dev python3-numpy python3-pytest
)

# Groups named on the command line add theirs: `fuzz` (make fuzz and CI's
# fuzz smoke, both through scripts/fuzz.sh): libFuzzer is Debian's clang and
# its compiler-rt, which ships libclang_rt.fuzzer; GCC has no coverage-guided
# fuzzing engine. `format` (scripts/check-format.sh, CI's first phase):
# clang-format; Debian 12's is version 14, the one .clang-format is tuned for.
# `--only` leaves out the base packages (check-format needs none of them);
# `--list` prints the packages instead of installing them.
fuzz_packages=(clang libclang-rt-dev)
format_packages=(clang-format)
list=0
only=0
groups=()
for arg in "$@"; do
  case $arg in
    fuzz) groups+=("${fuzz_packages[@]}") ;;
    format) groups+=("${format_packages[@]}") ;;
    --list) list=1 ;;
    --only) only=1 ;;
    *) echo "install-deps: unknown group '$arg' (groups: fuzz, format; --only leaves out" \
         "the base packages, --list prints the packages)" >&2
       exit 2 ;;
  esac
done
if [ $only = 1 ]; then
  packages=()
fi
packages+=("${groups[@]}")
if [ $list = 1 ]; then
  [ ${#packages[@]} -eq 0 ] || printf '%s\n' "${packages[@]}"
  exit 0
fi

if [ "${TANDEM_SKIP_DEPS:-0}" = 1 ]; then
  echo "install-deps: TANDEM_SKIP_DEPS=1, not installing packages"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
  sudo=sudo
else
  sudo=
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
