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
# and the barrier survey: the two experiments behind issue 10's unmet targets;
# gpus: the GPU beside lavapipe in one runtime — the several-GPU tests, the
# two-GPU example pipeline and tandem_bench_gpus both ways round — after a
# call that unpacked lavapipe: scripts/pack-lavapipe.sh says how)
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
if [[ $what == *,gpus,* ]]; then
  # Issue 25: the GPU beside lavapipe, two Vulkan devices of different
  # drivers in one runtime. lavapipe was unpacked by an earlier call on this
  # machine (scripts/pack-lavapipe.sh, .lavapipe/device-lavapipe.sh); the
  # GPU's own driver comes first in VK_DRIVER_FILES, so it is Vulkan device 0.
  lvp=/opt/tandem-lavapipe
  if [ ! -f "$lvp/lvp_icd.json" ]; then
    echo "gpus: lavapipe is not unpacked on this machine: run .lavapipe/device-lavapipe.sh" \
         "in an earlier call (scripts/pack-lavapipe.sh)" | tee "$out/gpus.txt"
    rc=1
  else
    gpu_icd=
    for f in ${VK_DRIVER_FILES:-} /usr/share/vulkan/icd.d/nvidia_icd.json \
             /etc/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
      if [ -f "$f" ]; then gpu_icd=$f; break; fi
    done
    genv=(env "VK_DRIVER_FILES=${gpu_icd:+$gpu_icd:}$lvp/lvp_icd.json"
          "LD_LIBRARY_PATH=$lvp/usr/lib/x86_64-linux-gnu:$lvp/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}")
    { "${genv[@]}" vulkaninfo --summary 2>&1 | grep -E "^GPU|deviceName|deviceType|driverName"
      "${genv[@]}" build-device/tools/tandem devices; } > "$out/gpus-devices.txt" 2>&1 || rc=1
    cat "$out/gpus-devices.txt"
    # The suite's several-GPU tests with validation on: test_gpus runs its
    # vulkan + vulkan case (the GPU beside lavapipe) only where two exist.
    "${genv[@]}" ctest --test-dir build-device -V \
      -R '^(test_gpus|cli_run_two_gpus|cli_run_two_gpus_json|bench_gpus_smoke)$' \
      > "$out/gpus-ctest.log" 2>&1 || rc=1
    grep -E "test_gpus: |tests passed|\*\*\*Failed" "$out/gpus-ctest.log"
    # The example pipeline on the two Vulkan devices, checked against the CPU.
    sed 's/"host:0"/"vulkan:1"/' examples/two-gpus.json > "$out/two-gpus-vulkan.json"
    "${genv[@]}" build-device/tools/tandem run "$out/two-gpus-vulkan.json" --validate --warmup 2 \
      --trace "$out/two-gpus-trace.json" --svg "$out/two-gpus.svg" 2>&1 | tee "$out/two-gpus.txt" || rc=1
    # The bench both ways round, each GPU's rounds sized to its speed
    # (TANDEM_GPUS_BENCH adds options).
    "${genv[@]}" build-device/bench/tandem_bench_gpus --gpus vulkan:0,vulkan:1 \
      --chunks 8 --chunk-kib 1024 --rounds0 32768 --rounds1 16 --runs 10 --handovers 200 \
      ${TANDEM_GPUS_BENCH:-} --json "$out/gpus-01.json" --trace "$out/gpus-01-trace.json" \
      2>&1 | tee "$out/gpus-01.txt" || rc=1
    "${genv[@]}" build-device/bench/tandem_bench_gpus --gpus vulkan:1,vulkan:0 \
      --chunks 8 --chunk-kib 1024 --rounds0 16 --rounds1 32768 --runs 10 --handovers 200 \
      ${TANDEM_GPUS_BENCH:-} --json "$out/gpus-10.json" --trace "$out/gpus-10-trace.json" \
      2>&1 | tee "$out/gpus-10.txt" || rc=1
  fi
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
