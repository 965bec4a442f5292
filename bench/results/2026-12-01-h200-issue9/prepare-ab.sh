set -e
source .device/on-device.sh
mkdir -p /tmp/old && tar xf old-tree.tar -C /tmp/old
cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /tmp/old/b -j16 --target tandem_bench_prepare >/dev/null
cmake -S . -B /tmp/new-b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /tmp/new-b -j16 --target tandem_bench_prepare >/dev/null
for i in 1 2 3 4; do
  for side in old new; do
    if [ $side = old ]; then bin=/tmp/old/b/bench/tandem_bench_prepare; else bin=/tmp/new-b/bench/tandem_bench_prepare; fi
    for shape in chain independent; do
      echo "round $i $side $shape: $($bin --shape $shape --reps 5 1000 10000 2>&1 | grep -E "^$shape")"
    done
  done
done | tee $OUT/prepare-ab.txt
