# SPDX-License-Identifier: MIT
# One device call: the whole suite on the H200 (scripts/device-run.sh tests),
# then prepare before / after splitting regions with few or no barriers too, built side by
# side and run in alternating rounds. Run from the repository root with
# `git archive <before> -o old-tree.tar` beside it:
#   source .device/on-device.sh && bash bench/results/2026-12-02-h200-flat/run.sh
set -u
scripts/device-run.sh tests
mkdir -p /tmp/old && tar xf old-tree.tar -C /tmp/old
cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/old/b -j16 --target tandem_bench_prepare >/dev/null
old=/tmp/old/b/bench/tandem_bench_prepare
new=build-device/bench/tandem_bench_prepare
{
  echo "cores: $(nproc); load: $(cat /proc/loadavg)"
  for i in 1 2 3 4 5 6; do
    for side in old new; do
      bin=$old; [ $side = new ] && bin=$new
      for shape in chain independent; do
        echo "round $i $side $shape: $($bin --shape $shape --reps 5 1000 10000 2>&1 | grep -E "^$shape")"
      done
    done
  done
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    echo "== $side, all shapes, 1k / 10k / 100k"
    $bin 1000 10000 100000 2>&1
  done
} | tee "$OUT/prepare-ab.txt"
