#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dev-persistent.sh — one device call's look inside examples/llama's
# persistent step (--engine persistent) on SmolLM-135M's shape: build, make
# the model (llama_h200.py make: random weights, seed 0, bf16), one checked
# run whose logits are compared with transformers in float32, then --profile
# (the step beside variants of its kernel with parts left out, GPU
# timestamps) for each of PROFILE_OPTS (';'-separated option strings), then
# timing runs without timestamps for each of VARIANTS, ROUNDS times
# (SKIP_CHECK=1 leaves out the checked run; PROFILE_OPTS=none, the profile).
# CLOCK_OPTS (';'-separated option strings) runs --clocks with each: every
# stage's and barrier's share of the step, from the device clock. GPU_CTEST=1 also runs the
# example's CTests (example_llama_*: tiny models against the CPU reference,
# validation layer on) on the GPU, where the persistent step runs 128
# workgroups with its slices in shared memory, which lavapipe cannot. OLD=DIR
# (another tree of tandem, e.g. `git archive` of an earlier commit) is built
# too: its --profile runs once, and each round times OLD_VARIANTS with it
# right after VARIANTS with this tree, so that before and after alternate in
# one call. On the GPU machine, from the tree's root:
#   source .device/on-device.sh && bench/llama/dev-persistent.sh
# Logs go to $OUT/dev-persistent.tgz (the device tool brings it back).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
out=$(mktemp -d /tmp/dev-persistent.XXXXXX)
build=${BUILD:-/tmp/build-llama-dev}
pack_at_exit "$out" "${OUT:-/tmp/dev-persistent-out}/dev-persistent.tgz"
machine_lines 2>&1 | tee "$out/env.txt"
step build
build_llama "$root" "$build" "$out/tandem"
llama=$build/examples/llama/tandem_example_llama
[ -z "${OLD:-}" ] || build_llama "$OLD" "$build-old" "$out/old"
old=$build-old/examples/llama/tandem_example_llama
if [ "${GPU_CTEST:-0}" = 1 ]; then
  step "the example's CTests on the GPU"
  llama_ctest "$root" "$build-ctest" "$out"
fi
step "make the model"
[ -f "$model/config.json" ] || "$py" "$root/bench/llama/llama_h200.py" make "$model" > "$out/make.txt" 2>&1 ||
  { tail -20 "$out/make.txt"; exit 1; }
rc=0
if [ "${SKIP_CHECK:-0}" = 0 ]; then
  step "checked run: logits of every position against the CPU reference and transformers"
  "$llama" --model "$model" --prompt $prompt --tokens 64 --repeat 3 --check --engine persistent \
    ${FIRST_OPTS:-} --logits-out "$out/tandem-logits.f32" --json "$out/tandem.json" 2>&1 |
    tee "$out/tandem.txt" | grep -E "engine|check|speed|tokens" || rc=1
  "$py" "$root/bench/llama/llama_h200.py" compare "$model" "$out" 2>&1 | tee "$out/compare.txt" | tail -4 || rc=1
  rm -f "$out/tandem-logits.f32"
fi
# opt_runs FLAG OPTIONS...: a run of the step with --FLAG (profile or
# clocks, with GPU timestamps) for each option string, logs numbered on from $i
opt_runs() {
  local flag=$1 v
  shift
  for v in "$@"; do
    i=$((i + 1))
    step "--$flag $v"
    "$llama" --model "$model" --prompt $prompt --tokens 64 --repeat 3 --engine persistent --$flag $v \
      2>&1 | tee "$out/$flag-$i.txt" | grep -E "engine|speed|$flag|^  [a-zA-Z]" || rc=1
  done
}
IFS=';' read -r -a popts <<< "${PROFILE_OPTS-}"
[ ${#popts[@]} -gt 0 ] || popts=("")
[ "${PROFILE_OPTS-}" != none ] || popts=()
IFS=';' read -r -a copts <<< "${CLOCK_OPTS-}"
i=0
opt_runs profile "${popts[@]}"
opt_runs clocks "${copts[@]}"
if [ -n "${OLD:-}" ]; then
  step "--profile, the OLD tree ($OLD)"
  "$old" --model "$model" --prompt $prompt --tokens 64 --repeat 3 --engine persistent --profile \
    2>&1 | tee "$out/profile-old.txt" | grep -E "engine|speed|profile|^  [a-zA-Z]" || rc=1
fi
# time_runs BIN WHAT OPTIONS...: a timing run of BIN (no timestamps) for each
# non-empty option string, logs numbered on from $i
time_runs() {
  local bin=$1 what=$2 v
  shift 2
  for v in "$@"; do
    [ -n "$v" ] || continue
    i=$((i + 1))
    step "round $r: timing$what $v"
    "$bin" --model "$model" --prompt $prompt --tokens 64 --repeat 7 --no-timestamps $v \
      2>&1 | tee "$out/timing-$i.txt" | grep -E "speed|tokens:" || rc=1
  done
}
IFS=';' read -r -a variants <<< "${VARIANTS-}"
IFS=';' read -r -a ovariants <<< "${OLD_VARIANTS-}"
for r in $(seq "${ROUNDS:-1}"); do
  time_runs "$llama" "" "${variants[@]}"
  [ -z "${OLD:-}" ] || time_runs "$old" ", the OLD tree:" "${ovariants[@]}"
done
step "the SM clock of each step and run"
"$py" "$root/bench/llama/llama_h200.py" clocks "$out" 2>&1 | tee "$out/clocks.txt"
exit $rc
