#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs on the GPU machine of the `device` tool (see ../shared/device/README.md):
# builds tandem, runs the whole CTest suite with the validation layer on the
# real GPU, runs the benchmarks, and leaves logs under $OUT. Usage there:
#   source .device/on-device.sh && scripts/device-run.sh [tests|bench|decode|all|a,b,...]
# (decode: the transformer decode-step example's figures, examples/README.md;
# prepare: the prepare-scale bench alone;
# perf: waits against polling, prepare scale, the round trip's floor and
# pre-armed batches, the tracker against live buffers; copies: the copies
# survey alone, at 64 MiB and 256 MiB per direction — `bench` already includes
# the 64 MiB one; paths: copy engines against a copy kernel on the shader cores,
# and the barrier survey: the two experiments behind issue 10's unmet targets)
# Everything is written to a scratch folder and packed into $OUT/results.tgz at
# the end (the device tool brings back at most 8 files).
set -uo pipefail
what=",${1:-all},"
case "$what" in *,all,*) what=",tests,bench,decode,";; esac
final=${OUT:-/tmp/tandem-out}
out=$(mktemp -d /tmp/tandem-results.XXXXXX)
mkdir -p "$final"
pack() { tar czf "$final/results.tgz" -C "$out" . ; }
trap pack EXIT
trap 'exit 124' TERM
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
  vulkaninfo --summary 2>/dev/null | grep -E "deviceName|driverInfo|apiVersion" | head -6
} | tee "$out/env.txt"
# The system Python there has no NumPy; a venv that has it runs the Python
# suite and examples instead (they are skipped without it).
py_opt=()
for py in ${TANDEM_DEVICE_PYTHON:-} /opt/torch/.venv/bin/python3; do
  if [ -x "$py" ] && "$py" -c "import numpy" 2>/dev/null; then py_opt=(-DTANDEM_PYTHON="$py"); break; fi
done
echo "python: ${py_opt[*]:-system}" | tee -a "$out/env.txt"
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release "${py_opt[@]}" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-device -j16 > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
rc=0
if [[ $what == *,tests,* ]]; then
  TANDEM_TEST_DEVICE=1 ctest --test-dir build-device --output-on-failure -j4 > "$out/ctest.log" 2>&1 || rc=1
  tail -25 "$out/ctest.log"
fi
if [[ $what == *,bench,* ]]; then
  build-device/bench/tandem-bench --json "$out/bench.json" 2>&1 | tee "$out/bench.txt" || rc=1
  build-device/tools/tandem run examples/demo.json --npu emulated --trace "$out/demo-trace.json" \
    --svg "$out/demo-timeline.svg" 2>&1 | tee "$out/demo.txt" || rc=1
fi
if [[ $what == *,perf,* ]]; then
  # The performance issue's figures: the wait against the polling floor, both
  # sides polling, and prepare at 1 k / 10 k / 100 k nodes.
  build-device/bench/tandem-bench --only dispatch --direct-spin --json "$out/wait-vs-poll.json" \
    2>&1 | tee "$out/wait-vs-poll.txt" || rc=1
  build-device/bench/tandem-bench --only dispatch --spin --json "$out/poll-vs-poll.json" \
    2>&1 | tee "$out/poll-vs-poll.txt" || rc=1
  TANDEM_WAIT_SPIN_US=0 build-device/bench/tandem-bench --only dispatch --json "$out/block-vs-block.json" \
    2>&1 | tee "$out/block-vs-block.txt" || rc=1
  build-device/bench/tandem_bench_prepare 1000 10000 100000 2>&1 | tee "$out/prepare.txt"
  build-device/bench/tandem_bench_round_trip 4000 2>&1 | tee "$out/round-trip.txt" || rc=1
  build-device/bench/tandem_bench_tracker 10 1000 100000 2>&1 | tee "$out/tracker.txt" || rc=1
fi
if [[ $what == *,prepare,* ]]; then
  build-device/bench/tandem_bench_prepare 1000 10000 100000 2>&1 | tee "$out/prepare.txt"
fi
if [[ $what == *,copies,* ]]; then
  # Issue 10: raw vkCmdCopyBuffer per host-visible memory type, queue, pair
  # and split, beside tandem's copies and its memory-type choice.
  build-device/bench/tandem-bench --only copies --json "$out/copies.json" \
    2>&1 | tee "$out/copies.txt" || rc=1
  build-device/bench/tandem-bench --only copies --transfer-mib 256 --json "$out/copies-256.json" \
    2>&1 | tee "$out/copies-256.txt" || rc=1
fi
if [[ $what == *,paths,* ]]; then
  build-device/bench/tandem_bench_copy_paths --mib 256 --rounds 30 2>&1 | tee "$out/copy-paths.txt" || rc=1
  build-device/bench/tandem_bench_copy_paths --mib 64 --rounds 30 2>&1 | tee "$out/copy-paths-64.txt" || rc=1
  build-device/bench/tandem-bench --only barriers 2>&1 | tee "$out/barriers.txt" || rc=1
fi
if [[ $what == *,decode,* ]]; then
  for mode in "" "--inflight 2" "--no-timestamps" "--no-timestamps --inflight 2" \
              "--npu" "--npu --inflight 2"; do
    name=decode$(echo "$mode" | tr -d ' ' | sed 's/--/-/g')
    build-device/examples/tandem_example_decode --tokens 64 --repeat 5 $mode \
      --json "$out/$name.json" --trace "$out/$name-trace.json" 2>&1 | tee "$out/$name.txt" || rc=1
  done
fi
exit $rc
