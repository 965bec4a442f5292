# SPDX-License-Identifier: MIT
# One device call: the whole suite on the H200 (scripts/device-run.sh tests),
# then prepare before / after splitting regions with few or no barriers too, built side by
# side and run in alternating rounds. Run from the repository root with
# `git archive <before> -o old-tree.tar` beside it:
#   source .device/on-device.sh && bash bench/results/2026-12-02-h200-flat/run.sh
set -u
scripts/device-run.sh tests
scripts/prepare-ab.sh 6
