#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs Debian 12's lavapipe (Mesa's software Vulkan driver) and the
# libraries it loads into .lavapipe/lavapipe.tar.xz (git-ignored), for runs on
# the GPU machine of the `device` tool that put lavapipe beside its GPU (two
# Vulkan devices of different drivers in one runtime: issue 25). Only the
# files lavapipe needs travel (about 40 MiB): with ../shared/device's .device
# (20 MiB) they exceed one call's 64 MiB, so the first call carries this
# folder and unpacks it (scripts/device-lavapipe.sh), and the next call, on
# the same warm machine, carries .device. Run from anywhere in the checkout:
#     scripts/pack-lavapipe.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
grep -qxF '/.lavapipe/' .git/info/exclude 2>/dev/null || echo '/.lavapipe/' >> .git/info/exclude
work=$(mktemp -d /tmp/tandem-lavapipe.XXXXXX)
trap 'rm -rf "$work"' EXIT
o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/tandem-amd64
   -oAPT::Sandbox::User=root)
mkdir -p /tmp/tandem-amd64/partial "$work/debs" "$work/root"
apt-get "${o[@]}" update -qq
# mesa-vulkan-drivers and what libvulkan_lvp.so and libLLVM-15 load that an
# Ubuntu 24.04 machine may lack (ldd on the device names anything missed).
(cd "$work/debs" && apt-get "${o[@]}" download -qq \
  mesa-vulkan-drivers libllvm15 libz3-4 libxml2 libicu72 libedit2 libtinfo6 \
  libwayland-client0 libx11-xcb1 libxcb-dri3-0 libxcb-present0 libxcb-randr0 libxcb-shm0 libxcb-sync1 \
  libxcb-xfixes0 libxshmfence1)
for f in "$work"/debs/*.deb; do dpkg -x "$f" "$work/root"; done
L=usr/lib/x86_64-linux-gnu
mkdir -p .lavapipe
(cd "$work/root" && tar cf - $L/libvulkan_lvp.so $L/libLLVM-15.so.1 $L/libz3.so.4 \
  $L/libxml2.so.2* $L/libicuuc.so.72* $L/libicudata.so.72* $L/libedit.so.2* \
  $L/libwayland-client.so.0* $L/libX11-xcb.so.1* $L/libxcb-dri3.so.0* $L/libxcb-present.so.0* $L/libxcb-randr.so.0* \
  $L/libxcb-shm.so.0* $L/libxcb-sync.so.1* $L/libxcb-xfixes.so.0* $L/libxshmfence.so.1* \
  lib/x86_64-linux-gnu/libtinfo.so.6* usr/share/vulkan/icd.d/lvp_icd.x86_64.json) |
  xz -9 -T2 > .lavapipe/lavapipe.tar.xz
cp scripts/device-lavapipe.sh .lavapipe/
du -sh .lavapipe | sed 's/^/packed: /'
