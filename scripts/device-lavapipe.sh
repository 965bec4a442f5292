#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine: unpacks what scripts/pack-lavapipe.sh packed into
# /opt/tandem-lavapipe, writes an ICD manifest naming the driver by its full
# path there, and checks that every library the driver loads is found.
# Usage there (a call carrying .lavapipe):  bash .lavapipe/device-lavapipe.sh
# Later calls on the same machine use it through scripts/device-run.sh's
# `gpus` item: VK_DRIVER_FILES names the GPU's own driver and lavapipe,
# LD_LIBRARY_PATH the unpacked libraries.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=/opt/tandem-lavapipe
rm -rf "$dest" && mkdir -p "$dest"
xz -dc "$here/lavapipe.tar.xz" | tar xf - -C "$dest"
sed "s#\"library_path\": \"[^\"]*\"#\"library_path\": \"$dest/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so\"#" \
  "$dest/usr/share/vulkan/icd.d/lvp_icd.x86_64.json" > "$dest/lvp_icd.json"
libs=$dest/usr/lib/x86_64-linux-gnu:$dest/lib/x86_64-linux-gnu
if LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
     ldd "$dest/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so" | grep "not found"; then
  echo "device-lavapipe: libraries above are missing: add their packages to scripts/pack-lavapipe.sh" >&2
  exit 1
fi
echo "device-lavapipe: lavapipe unpacked into $dest"
