#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets (clang, ASan+UBSan, Debug) in build-fuzz/ and
# runs each for FUZZ_SECONDS (default 300) from its seed corpus. New inputs go
# to build-fuzz/corpus/<target>/ (the tree's corpus is only read); a crash
# leaves build-fuzz/crash-* and fails the script. `make fuzz` calls this; CI
# calls it with FUZZ_SECONDS=45 as a smoke run. fuzz/README.md has the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
# clang and libFuzzer's runtime: not in the base dependencies (make demo and
# make test do not need them); a no-op when installed or TANDEM_SKIP_DEPS=1.
./scripts/install-deps.sh fuzz
seconds=${FUZZ_SECONDS:-300}
jobs=${JOBS:-2}

CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DTANDEM_FUZZ=ON \
  -DTANDEM_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_kernel fuzz_pipeline

export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for target in fuzz_pipeline fuzz_kernel; do
  work=build-fuzz/corpus/$target
  mkdir -p "$work"
  echo "fuzz: $target for ${seconds} s"
  # -close_fd_mask=2: the targets explain every rejection on stderr; libFuzzer
  # keeps its own output and sanitizer reports on a duplicate of it.
  build-fuzz/fuzz/$target "$work" "fuzz/corpus/$target" \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=65536 \
    -close_fd_mask=2 -print_final_stats=1 -artifact_prefix=build-fuzz/"$target"-
done
