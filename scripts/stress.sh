#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The long stress run: tests/cts/test_stress.c (8 threads, max_submissions 8,
# BUSY back-pressure, every result checked) for STRESS_SECONDS (default 180),
# first in the normal build, then under ThreadSanitizer when TSAN=1.
# The suite runs the same test briefly (a fixed number of submissions).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${STRESS_SECONDS:-180}
jobs=${JOBS:-2}
here=$PWD

run() { # build-dir
  cmake --build "$1" -j"$jobs" --target test_stress
  echo "stress: $1, ${seconds} s"
  (cd "$1/tests" && TANDEM_STRESS_SECONDS=$seconds \
    LSAN_OPTIONS="suppressions=$here/tests/lsan.supp:print_suppressions=0" \
    TSAN_OPTIONS="suppressions=$here/tests/tsan.supp:halt_on_error=1:second_deadlock_stack=1" \
    ./test_stress)
}

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
run build
if [ "${TSAN:-0}" = 1 ]; then
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_TSAN=ON >/dev/null
  run build-tsan
fi
