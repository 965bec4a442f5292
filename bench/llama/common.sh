# SPDX-License-Identifier: MIT
# common.sh — what bench/llama's device scripts (run-h200.sh,
# dev-persistent.sh) share; they source it after `set -uo pipefail`. It sets
# root (the tree), py (a Python with torch where the device machine has
# one), model and prompt (SmolLM-135M's shape with random weights, and
# llama_h200.py's PROMPT: the scripts and the Python side must agree), and
# defines:
#   step TEXT...             a heading with the time
#   machine_lines            date, commit (COMMIT, else the tree's git HEAD:
#                            on the device copy that HEAD can be stale, so a
#                            caller that knows the commit passes COMMIT),
#                            host, GPU and Vulkan driver
#   build_llama SRC BUILD LOGPREFIX
#                            builds examples/llama from SRC into BUILD (logs
#                            LOGPREFIX-configure.log and -build.log), or exits
#   llama_ctest SRC BUILD DIR
#                            builds SRC with its tests into BUILD and runs
#                            the example's CTests (example_llama_*: tiny
#                            models against the CPU reference, validation
#                            on) on the GPU, where the persistent step runs
#                            128 workgroups, which lavapipe cannot; logs in
#                            DIR/ctest*.txt|log; returns ctest's status.
#                            CTEST_ARGS replaces the selection (default
#                            -R ^example_llama; -L vulkan: every Vulkan
#                            test, with every target built)
#   pack_at_exit DIR TGZ     packs DIR into TGZ when the script ends (the
#                            logits file left out: 14 MB of random floats);
#                            SIGTERM (the device tool's limit) ends it too.
#                            From then on, every step and mark is written
#                            with its time into DIR/marks.txt, and the GPU's
#                            clocks are sampled every 200 ms into
#                            DIR/gpu-clocks.csv (nvidia-smi, where there is
#                            one), so that `llama_h200.py clocks DIR` gives
#                            the SM clock each step and run ran at
#   mark TEXT                a mark in DIR/marks.txt (a timing run's start)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$py" ] || py=python3
model=/tmp/llama-smol135-random
prompt=1,450,4996,17354,1119,3453,975,278 # llama_h200.py's PROMPT

marks=""
mark() { [ -z "$marks" ] || echo "$(date +%s.%N) $*" >> "$marks"; }
step() { echo; echo "== $* ($(date -u +%H:%M:%S))"; mark "$*"; }

machine_lines() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: ${COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
  echo "host: $(uname -srm)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
  vulkaninfo --summary 2>/dev/null | grep -E "deviceName|driverInfo|apiVersion" | head -3
}

build_llama() {
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DTANDEM_BUILD_TESTS=OFF \
    > "$3-configure.log" 2>&1 || { tail -30 "$3-configure.log"; exit 1; }
  cmake --build "$2" -j16 --target tandem_example_llama > "$3-build.log" 2>&1 ||
    { grep -E "error" "$3-build.log" | head -30; exit 1; }
}

llama_ctest() {
  local s
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release > "$3/ctest-configure.log" 2>&1 &&
    if [ -n "${CTEST_ARGS:-}" ]; then
      cmake --build "$2" -j16 > "$3/ctest-build.log" 2>&1
    else
      cmake --build "$2" -j16 --target tandem_example_llama > "$3/ctest-build.log" 2>&1
    fi &&
    ctest --test-dir "$2" ${CTEST_ARGS:--R ^example_llama} -j4 --output-on-failure > "$3/ctest.txt" 2>&1
  s=$?
  echo "ctest exit $s"
  grep -E "tests passed|Failed|Not Run" "$3/ctest.txt" 2>/dev/null | head -20
  return $s
}

pack_at_exit() {
  mkdir -p "$(dirname "$2")"
  marks=$1/marks.txt
  local sampler=""
  # The SM clock beside each run: with GPU timestamps on, an H100 was seen
  # at 510 MHz (bench/NOTES.md, 2026-12-06, fourth session).
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,pstate \
      --format=csv,noheader,nounits -lms 200 > "$1/gpu-clocks.csv" 2>&1 &
    sampler=$!
  fi
  trap "${sampler:+kill $sampler 2>/dev/null; }rm -f '$1/tandem-logits.f32'; tar czf '$2' -C '$1' ." EXIT
  trap 'exit 124' TERM
}
