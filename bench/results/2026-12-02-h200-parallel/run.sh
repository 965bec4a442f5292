# SPDX-License-Identifier: MIT
# One device call: the whole suite on the H200 (scripts/device-run.sh tests),
# then prepare before / after parallel slot recording, built side by side and
# run in alternating rounds, each with the default malloc and with the
# GLIBC_TUNABLES that keep glibc from returning heap memory between prepares
# (bench/NOTES.md, "prepare: where the time goes"). Run from the repository
# root with `git archive <before> -o old-tree.tar` beside it:
#   source .device/on-device.sh && bash bench/results/2026-12-02-h200-parallel/run.sh
set -u
scripts/device-run.sh tests
scripts/prepare-ab.sh 4 tuned
