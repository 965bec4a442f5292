# SPDX-License-Identifier: MIT
# Second device call on the same tree as run.sh: the prepare curve with push
# descriptors (scripts/prepare-curve.sh 1), then `tandem bench --only
# dispatch` and `--only independent1000` with push descriptors and with sets
# (TANDEM_VK_PUSH_DESCRIPTORS=0), alternated six and three rounds, to see
# whether pushing costs a replay anything.
#   source .device/on-device.sh && bash bench/results/2026-12-02-h200-push/run2.sh
set -u
out=${OUT:-/tmp/tandem-out}
mkdir -p "$out"
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build build-device -j16 >/dev/null || exit 1
bash scripts/prepare-curve.sh 1
tool=build-device/tools/tandem
{
  for i in 1 2 3 4 5 6; do
    for push in 0 1; do
      echo "== round $i push=$push dispatch"
      TANDEM_VK_PUSH_DESCRIPTORS=$push $tool bench --only dispatch 2>/dev/null
      if [ $i -le 3 ]; then
        echo "== round $i push=$push independent1000"
        TANDEM_VK_PUSH_DESCRIPTORS=$push $tool bench --only independent1000 2>/dev/null
      fi
    done
  done
} | tee "$out/replay-push-2.txt"
