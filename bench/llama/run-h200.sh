#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-h200.sh — the side-by-side of examples/llama against PyTorch on the
# H200, in one device call (bench/NOTES.md has what it showed). On the GPU
# machine, from the tree's root:
#   source .device/on-device.sh && bench/llama/run-h200.sh
# It builds tandem and the example (Release), makes a Llama of SmolLM-135M's
# shape with transformers (random weights, seed 0, bf16 safetensors), runs
# tandem's decoder on it (a fixed 8-token prompt, 64 greedy tokens) and
# compares every position's logits with transformers in float32
# (llama_h200.py compare), then times decode for tandem (the first version
# and today's, several --inflight and --chunk settings, GPU timestamps off;
# every run must generate the same tokens) and for PyTorch: transformers' eager
# generate, transformers over a StaticCache in a CUDA graph captured by hand,
# a minimal hand-written PyTorch decoder (eager and CUDA graph) and, if it
# compiles in time, the same through torch.compile. A device copy (Vulkan
# and torch) gives the weight-read floor. TORCH_PARTS (default "eager static
# minimal") and COMPILE_S (default 150; 0 skips it) trim the PyTorch side.
# BENCH_VARIANTS (tandem runs with --bench, GPU timestamps; each a string of
# options, separated by ';') and VARIANTS (timing runs, no timestamps, ';'
# separated) replace the default lists; FIRST_OPTS are added to the first run
# (the one whose logits are compared); ROUNDS=N times VARIANTS N times,
# alternated (default 1). GPU_CTEST=1 also builds the tests and runs the
# example's CTests on the GPU (common.sh's llama_ctest). LLAMACPP=DIR (a checkout root holding
# .llama/, see ../shared/bench/llamacpp) also runs llama.cpp's CUDA and Vulkan
# llama-bench on the same model shape in the same call: its builds start in the
# background first (LC_JOBS cores) and its benchmarks run after tandem's and
# PyTorch's timings, so that nothing else uses the GPU while each is timed.
# Everything lands in $OUT/llama-h200.tgz (the logits file left out: 14 MB of
# random floats), llama.cpp's results in its llamacpp/ folder.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run=$(mktemp -d /tmp/llama-h200.XXXXXX)
build=${BUILD:-/tmp/build-llama-h200}
pack_at_exit "$run" "${OUT:-/tmp/llama-h200-out}/llama-h200.tgz"
export PYTHONUNBUFFERED=1
{
  machine_lines
  echo "command: bench/llama/run-h200.sh $*"
  "$py" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
} 2>&1 | tee "$run/env.txt"

# lc ARGS: llama.cpp's script, from $LLAMACPP, in the environment saved in
# $LLAMACPP_ENV (`export -p` before .device/on-device.sh was sourced: its
# Debian 12 headers and libraries are for tandem's build, not the CUDA one;
# llama.cpp's script sources it itself for its Vulkan half)
lc() {
  if [ -n "${LLAMACPP_ENV:-}" ]; then
    env -i bash -c "source '$LLAMACPP_ENV'; cd '$LLAMACPP' && $*"
  else
    (cd "$LLAMACPP" && bash -c "$*")
  fi
}
if [ -n "${LLAMACPP:-}" ]; then
  step "llama.cpp builds in the background ($LLAMACPP/.llama)"
  # (llama.cpp's script has no build-only mode: this pass benchmarks what it
  # built too, into llamacpp-build/, while tandem's part before the timing
  # waits for it; the figures reported are the second pass's, below.)
  # LC_VULKAN=0: the Vulkan half sources .device/on-device.sh, which unpacks
  # its packages again into / and /opt/tandem-deps; beside tandem's build and
  # runs that rewrote a library tandem was linking against (2026-12-06: "file
  # too short"), so the Vulkan build waits for the benchmark pass below, when
  # nothing else runs.
  lc OUT="$run/llamacpp-build" LC_VULKAN=0 LC_JOBS=${LC_JOBS:-12} LC_BUILD_CAP=${LC_BUILD_CAP:-440} \
    LC_BUDGET=${LC_BUILD_BUDGET:-530} bash .llama/run-h200.sh \
    > "$run/llamacpp-build.log" 2>&1 &
  lc_pid=$!
fi

step build
build_llama "$root" "$build" "$run/tandem"
llama=$build/examples/llama/tandem_example_llama

step make the model
"$py" "$root/bench/llama/llama_h200.py" make "$model" 2>&1 | tee "$run/make.txt" || exit 1
cp "$model/config.json" "$run/config.json"

rc=0
step "tandem: logits of every position, GPU timestamps, --bench"
"$llama" --model "$model" --prompt $prompt --tokens 64 --repeat 3 --bench ${FIRST_OPTS:-} \
  --logits-out "$run/tandem-logits.f32" --json "$run/tandem.json" 2>&1 | tee "$run/tandem.txt" || rc=1
step "compare with transformers (float32)"
"$py" "$root/bench/llama/llama_h200.py" compare "$model" "$run" 2>&1 | tee "$run/compare.txt" || rc=1

step "tandem: the 2026-12-02 kernels (--matvec old --attention spread), --bench"
"$llama" --model "$model" --prompt $prompt --tokens 64 --repeat 3 --bench --matvec old \
  --attention spread --json "$run/tandem-before.json" 2>&1 | tee "$run/tandem-before.txt" || rc=1
IFS=';' read -r -a bvariants <<< "${BENCH_VARIANTS---attention spread;--lanes 16;--block 32;--attention fused;--prefetch on}"
for v in "${bvariants[@]}"; do
  [ -n "$v" ] || continue
  name=b$(echo "$v" | tr -d ' -')
  step "tandem --bench $v"
  "$llama" --model "$model" --prompt $prompt --tokens 64 --repeat 3 --bench $v \
    --json "$run/tandem-$name.json" 2>&1 | tee "$run/tandem-$name.txt" | grep -E "nodes|speed|span|bench:|  [a-z_]+ +[0-9.]+ us" || rc=1
done

for part in ${TORCH_PARTS-eager minimal}; do
  step "PyTorch: $part"
  "$py" "$root/bench/llama/llama_h200.py" time "$model" "$run" $part 2>&1 | tee "$run/torch-$part.txt" || rc=1
done
if [ "${COMPILE_S:-150}" != 0 ]; then
  step "PyTorch: torch.compile (at most ${COMPILE_S:-150} s)"
  timeout "${COMPILE_S:-150}" "$py" "$root/bench/llama/llama_h200.py" compile "$model" "$run" 2>&1 |
    tee "$run/compile.txt" | grep -v "^ *warnings.warn\|UserWarning" | tail -20
  echo "compile exit: ${PIPESTATUS[0]}" | tee -a "$run/compile.txt"
fi

if [ -n "${LLAMACPP:-}" ]; then
  step "llama.cpp: waiting for its builds"
  wait "$lc_pid"
  grep -E "^BUILD|both builds" "$run/llamacpp-build.log"
fi
# (after llama.cpp's builds: its own build would slow theirs, capped at
# LC_BUILD_CAP; a build of its own: tests on, which the timed one is not)
if [ "${GPU_CTEST:-0}" = 1 ]; then
  step "the example's CTests on the GPU"
  llama_ctest "$root" "$build-ctest" "$run" || rc=1
fi

step "tandem: timing (no timestamps), the defaults and variants"
"$llama" --model "$model" --prompt $prompt --tokens 64 --repeat 7 --no-timestamps \
  --json "$run/tandem-notimestamps.json" 2>&1 | tee "$run/tandem-notimestamps.txt" || rc=1
IFS=';' read -r -a variants <<< "${VARIANTS---matvec old --attention spread;--inflight 1;--chunk 63 --inflight 1;--attention fused;--prefetch on}"
for r in $(seq "${ROUNDS:-1}"); do
  for v in "${variants[@]}"; do
    [ -n "$v" ] || continue
    name=v$(echo "$v" | tr -d ' -')
    [ "$r" = 1 ] || name=$name-r$r
    mark "timing $v (round $r)"
    "$llama" --model "$model" --prompt $prompt --tokens 64 --repeat 7 --no-timestamps $v \
      --json "$run/tandem-$name.json" 2>&1 | tee "$run/tandem-$name.txt" || rc=1
  done
done
# every variant generates the same tokens
"$py" - "$run" <<'PY' || rc=1
import glob, json, sys
runs = {p: json.load(open(p))["generated"] for p in sorted(glob.glob(sys.argv[1] + "/tandem*.json"))}
ref = next(iter(runs.values()))
bad = [p for p, t in runs.items() if t != ref]
print(f"tokens: {len(runs)} tandem runs, {len(runs) - len(bad)} generated the same 64 tokens", bad or "")
sys.exit(1 if bad else 0)
PY

if [ -n "${LLAMACPP:-}" ]; then
  step "llama.cpp: llama-bench, CUDA and Vulkan (the builds above, reused)"
  # The script keeps 90 s of its budget for the benchmarks and gives its
  # builds the rest: with less than about 150 s, a rebuild that only relinks
  # (it happened on 2026-12-06 with LC_BUDGET=80) is cut off at 1 s and
  # nothing is benchmarked.
  # Since the Vulkan half is built here (see above), the pass needs more:
  # with LC_BUDGET=200 its builds got 109 s, and the Vulkan one, side by side
  # with the CUDA one's resumption, stopped at step 513 of 544 (2026-12-06,
  # bench/results/2026-12-06-h100-final). 260 gives them 170 s; not yet run.
  lcb=${LC_BUDGET:-260}
  [ "$lcb" -ge 260 ] || { echo "LC_BUDGET=$lcb is too short for the benchmark pass: 260"; lcb=260; }
  lc OUT="$run/llamacpp" LC_BUDGET=$lcb bash .llama/run-h200.sh 2>&1 |
    grep -vE "^\[|^ *[0-9]+ \|" | tail -60
fi

step summary
"$py" "$root/bench/llama/llama_h200.py" summary "$run" 2>&1 | tee "$run/summary.txt"
"$py" "$root/bench/llama/llama_h200.py" clocks "$run" 2>&1 | tee "$run/clocks.txt"
exit $rc
