# SPDX-License-Identifier: MIT
# One device call: prepare from 1 k to 100 k nodes with page faults counted
# (scripts/prepare-curve.sh), then copies from the driver's host memory
# against imported host memory in 4 KiB and 2 MiB pages
# (tandem_bench_host_pages, at 256 and 64 MiB) and its smoke test with the
# validation layer on the H200. Run from the repository root:
#   source .device/on-device.sh && bash bench/results/2026-12-02-h200-curve/run.sh
set -u
out=${OUT:-/tmp/tandem-out}
mkdir -p "$out"
bash scripts/prepare-curve.sh 2
cmake --build build-device -j16 --target tandem_bench_host_pages >/dev/null || exit 1
TANDEM_TEST_DEVICE=1 ctest --test-dir build-device -R bench_host_pages_smoke --output-on-failure \
  2>&1 | tail -5 | tee "$out/host-pages-smoke.txt"
for mib in 256 64; do
  build-device/bench/tandem_bench_host_pages --mib $mib --rounds 30 2>&1 | tee "$out/host-pages-$mib.txt"
done
