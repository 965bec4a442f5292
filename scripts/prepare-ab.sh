#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prepare before / after, on the GPU machine of the `device` tool, in one call:
# builds tandem_bench_prepare from old-tree.tar (`git archive <before> -o
# old-tree.tar`, beside the checkout) and compares it with this tree's
# build-device (scripts/device-run.sh builds it), in alternating rounds of
# `--shape chain|independent --reps 5 1000 10000`, then every shape at
# 1 k / 10 k / 100 k nodes per side. Writes $OUT/prepare-ab.txt. Usage there:
#   source .device/on-device.sh && scripts/device-run.sh tests && scripts/prepare-ab.sh ROUNDS [tuned]
# tuned: each round also runs with GLIBC_TUNABLES fixing glibc's trim and mmap
# thresholds (bench/NOTES.md, "prepare: where the time goes").
set -u
rounds=${1:?rounds}
tuned_too=${2:-}
mkdir -p /tmp/old && tar xf old-tree.tar -C /tmp/old
cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/old/b -j16 --target tandem_bench_prepare >/dev/null
old=/tmp/old/b/bench/tandem_bench_prepare
new=build-device/bench/tandem_bench_prepare
tunables=glibc.malloc.trim_threshold=536870912:glibc.malloc.mmap_threshold=33554432:glibc.malloc.top_pad=67108864
mallocs=default
[ "$tuned_too" = tuned ] && mallocs="default tuned"
{
  echo "cores: $(nproc); load: $(cat /proc/loadavg)"
  for i in $(seq 1 "$rounds"); do
    for side in old new; do
      bin=$old; [ $side = new ] && bin=$new
      for malloc in $mallocs; do
        for shape in chain independent; do
          tag="$side $shape"; [ "$tuned_too" = tuned ] && tag="$side $malloc $shape"
          if [ $malloc = tuned ]; then
            line=$(GLIBC_TUNABLES=$tunables $bin --shape $shape --reps 5 1000 10000 2>&1 | grep -E "^$shape")
          else
            line=$($bin --shape $shape --reps 5 1000 10000 2>&1 | grep -E "^$shape")
          fi
          echo "round $i $tag: $line"
        done
      done
    done
  done
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    echo "== $side, all shapes, 1k / 10k / 100k"
    $bin 1000 10000 100000 2>&1
  done
} | tee "$OUT/prepare-ab.txt"
