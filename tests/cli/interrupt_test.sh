#!/bin/sh
# SPDX-License-Identifier: MIT
# interrupt_test.sh TOOL PIPELINE WORK_DIR — Ctrl-C during `tandem run`: starts
# a run of PIPELINE with far more iterations than can finish, sends SIGINT
# once the timed runs are being submitted, and expects exit status 130, a
# summary saying how many iterations ran, and the outputs written under
# WORK_DIR/out. Exit 77 (skip) when the tool finds no device.
set -eu
tool=$1; pipeline=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
"$tool" run "$pipeline" --iterations 200000 --output-dir "$work/out" \
  > "$work/stdout" 2> "$work/stderr" &
pid=$!
trap 'kill -KILL $pid 2>/dev/null || true' EXIT
i=0
until grep -q '^running ' "$work/stdout"; do
  if ! kill -0 $pid 2>/dev/null; then
    set +e; wait $pid; rc=$?; set -e
    cat "$work/stdout" "$work/stderr"
    [ $rc = 77 ] && exit 77
    echo "interrupt_test: the run ended (exit $rc) before it started submitting" >&2; exit 1
  fi
  i=$((i + 1))
  [ $i -lt 1200 ] || { echo "interrupt_test: the run did not start within 120 s" >&2; exit 1; }
  sleep 0.1
done
sleep 0.5
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
trap - EXIT
cat "$work/stdout"; cat "$work/stderr" >&2
[ $rc = 130 ] || { echo "interrupt_test: exit status $rc after SIGINT, expected 130" >&2; exit 1; }
grep -q '^interrupted: [0-9]* of 200000 iterations ran' "$work/stdout" ||
  { echo "interrupt_test: no 'interrupted: N of 200000 iterations ran' summary" >&2; exit 1; }
grep -q '^checks: not run' "$work/stdout" ||
  { echo "interrupt_test: the summary does not say the checks were not run" >&2; exit 1; }
n=$(ls "$work/out" | wc -l)
[ "$n" -ge 1 ] || { echo "interrupt_test: no output was written under $work/out" >&2; exit 1; }
for f in "$work/out"/*; do
  [ -s "$f" ] || { echo "interrupt_test: output $f is empty" >&2; exit 1; }
done
echo "interrupt_test: stopped with a summary and $n output file(s)"
