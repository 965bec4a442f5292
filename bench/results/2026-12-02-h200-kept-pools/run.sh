# SPDX-License-Identifier: MIT
# One device call: the whole suite on the H200 (scripts/device-run.sh tests),
# then prepare before / after keeping freed executables' descriptor pools,
# built side by side and run in alternating rounds, then this tree's prepare
# curve with page faults. Run from the repository root with
# `git archive 564dced -o old-tree.tar` beside it:
#   source .device/on-device.sh && bash bench/results/2026-12-02-h200-kept-pools/run.sh
set -u
scripts/device-run.sh tests
scripts/prepare-ab.sh 6
bash scripts/prepare-curve.sh 1
