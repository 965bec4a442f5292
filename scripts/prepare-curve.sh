#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How prepare grows from 1 k to 100 k nodes, on the GPU machine of the
# `device` tool, in one call: builds tandem_bench_prepare (Release, this tree)
# and runs the chain, independent and fill shapes at 1 k / 10 k / 20 k / 50 k /
# 100 k nodes, best of 5, with glibc's default malloc and with its trim and
# mmap thresholds raised (memory freed by one prepare is kept for the next),
# in alternating rounds. Each size prints ms, µs per node and minor page
# faults per node, so a per-node cost that rises with the size can be told
# apart as first touches of fresh memory or not. Also records the CPU's
# caches, the kernel's huge-page setting and what one first touch of fresh
# memory costs there (tandem_bench_faults); then 10 000-node prepares each the
# first of a fresh process. Writes $OUT/prepare-curve.txt.
#   source .device/on-device.sh && bash scripts/prepare-curve.sh [ROUNDS]
set -u
rounds=${1:-2}
out=${OUT:-/tmp/tandem-out}
mkdir -p "$out"
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build build-device -j16 --target tandem_bench_prepare tandem_bench_faults >/dev/null || exit 1
bin=build-device/bench/tandem_bench_prepare
tunables=glibc.malloc.trim_threshold=536870912:glibc.malloc.mmap_threshold=33554432:glibc.malloc.top_pad=67108864
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); host: $(uname -srm); cores: $(nproc); load: $(cat /proc/loadavg)"
  lscpu 2>/dev/null | grep -E "Model name|Socket|NUMA node\(s\)|L1d|L2|L3"
  echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
  grep -E "MemTotal|MemFree" /proc/meminfo
  build-device/bench/tandem_bench_faults 256
  for i in $(seq 1 "$rounds"); do
    for malloc in default tuned; do
      for shape in independent chain fill; do
        echo "== round $i, $malloc malloc, $shape"
        if [ $malloc = tuned ]; then
          GLIBC_TUNABLES=$tunables $bin --shape $shape --reps 5 1000 10000 20000 50000 100000 2>&1 | grep -v "^device\|^shape"
        else
          $bin --shape $shape --reps 5 1000 10000 20000 50000 100000 2>&1 | grep -v "^device\|^shape"
        fi
      done
    done
  done
  # A process's first graph: each prepare below is the first in its process,
  # so its memory is all fresh, as for an application preparing its graph.
  for shape in independent chain; do
    echo "== fresh process per prepare, $shape, 10 000 nodes, 5 processes"
    for i in 1 2 3 4 5; do
      $bin --shape $shape --reps 1 10000 2>&1 | grep -E "^$shape|first|faults"
    done
  done
} | tee "$out/prepare-curve.txt"
