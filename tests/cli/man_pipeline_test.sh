#!/bin/sh
# SPDX-License-Identifier: MIT
# man_pipeline_test.sh TOOL PAGE DATA_DIR WORK_DIR — tandem-pipeline(5): its
# EXAMPLE is a pipeline that runs and passes its check (with DATA_DIR's
# ramp.bin as data/ramp.bin), it names every top-level field, and (where groff
# is installed) it renders without a troff warning. Exit 77 without a device.
set -eu
tool=$1; page=$2; data=$3; work=$4
rm -rf "$work"; mkdir -p "$work/data"
cp "$data/ramp.bin" "$work/data/"
sed -n '/^\.SH EXAMPLE/,/^\.fi/p' "$page" | sed '1,2d;$d' > "$work/example.json"
set +e
(cd "$work" && "$tool" run example.json --validate)
rc=$?
set -e
[ $rc = 0 ] || { echo "man_pipeline_test: the page's EXAMPLE exited $rc" >&2; exit $rc; }
for field in name iterations gpus buffers kernels npu_programs nodes outputs checks; do
  grep -q -- "$field" "$page" || { echo "man_pipeline_test: no '$field' in $page" >&2; exit 1; }
done
if command -v groff > /dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || { echo "man_pipeline_test: groff warns: $warnings" >&2; exit 1; }
fi
echo "man_pipeline_test: the EXAMPLE runs and passes its check"
