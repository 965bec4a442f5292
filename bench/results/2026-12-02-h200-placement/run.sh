# SPDX-License-Identifier: MIT
# One device call: why the same binary prepares a 10 000-node chain in about
# 13 or about 20.5 ms (results/2026-12-02-h200-parallel/), and why
# independent dispatches do not gain from parallel slot recording. Two builds
# of one tree: the default (slots recorded on parallel threads from 3 072
# commands) and one that never records in parallel; each run unpinned and
# pinned to cores 0-3 (taskset), alternated over six rounds. Run from the
# repository root:
#   source .device/on-device.sh && bash bench/results/2026-12-02-h200-placement/run.sh
set -u
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  lscpu | grep -E "^(Model name|Socket|NUMA node|Core|Thread|CPU\(s\))"
  numactl --hardware 2>/dev/null | head -4
  echo "load: $(cat /proc/loadavg)"
} | tee "$OUT/machine.txt"
cmake -S . -B /tmp/par -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/par -j16 --target tandem_bench_prepare >/dev/null
cmake -S . -B /tmp/ser -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-DTANDEM__RECORD_PARALLEL_MIN=4000000000u >/dev/null &&
  cmake --build /tmp/ser -j16 --target tandem_bench_prepare >/dev/null
{
  for i in 1 2 3 4 5 6; do
    for build in ser par; do
      for pin in none 0-3; do
        for shape in chain independent; do
          bin=/tmp/$build/bench/tandem_bench_prepare
          if [ $pin = none ]; then
            line=$($bin --shape $shape --reps 5 1000 10000 2>&1 | grep -E "^$shape")
          else
            line=$(taskset -c $pin $bin --shape $shape --reps 5 1000 10000 2>&1 | grep -E "^$shape")
          fi
          echo "round $i $build pin=$pin $shape: $line"
        done
      done
    done
  done
} | tee "$OUT/placement.txt"
