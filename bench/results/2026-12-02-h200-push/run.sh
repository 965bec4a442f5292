# SPDX-License-Identifier: MIT
# One device call: the whole suite on the H200 (scripts/device-run.sh tests,
# which builds build-device), then push descriptors against descriptor sets
# on the same binary (TANDEM_VK_PUSH_DESCRIPTORS=0 keeps sets), alternated:
# prepare at 1 k / 10 k nodes (best of 5, four rounds), a process's first
# prepare of 10 k nodes (three fresh processes per side and shape), every
# shape at 1 k / 10 k / 100 k, and replay of 1 000-node graphs and one
# dispatch (`tandem bench`, tandem against raw Vulkan on the same device).
#   source .device/on-device.sh && bash bench/results/2026-12-02-h200-push/run.sh
set -u
out=${OUT:-/tmp/tandem-out}
mkdir -p "$out"
scripts/device-run.sh tests
bin=build-device/bench/tandem_bench_prepare
tool=build-device/tools/tandem
{
  echo "cores: $(nproc); load: $(cat /proc/loadavg)"
  for i in 1 2 3 4; do
    for push in 0 1; do
      for shape in chain independent; do
        line=$(TANDEM_VK_PUSH_DESCRIPTORS=$push $bin --shape $shape --reps 5 1000 10000 2>&1 | grep -E "^$shape")
        echo "round $i push=$push $shape: $line"
      done
    done
  done
  for shape in independent chain; do
    for i in 1 2 3; do
      for push in 0 1; do
        line=$(TANDEM_VK_PUSH_DESCRIPTORS=$push $bin --shape $shape --reps 1 10000 2>&1 | grep -E "^$shape")
        echo "fresh process $i push=$push $shape: $line"
      done
    done
  done
  for push in 0 1; do
    echo "== push=$push, all shapes, 1k / 10k / 100k"
    TANDEM_VK_PUSH_DESCRIPTORS=$push $bin 1000 10000 100000 2>&1
  done
} | tee "$out/prepare-push.txt"
{
  for i in 1 2; do
    for push in 0 1; do
      for row in dispatch independent1000 chain1000; do
        echo "== round $i push=$push $row"
        TANDEM_VK_PUSH_DESCRIPTORS=$push $tool bench --only $row 2>/dev/null
      done
    done
  done
} | tee "$out/replay-push.txt"
