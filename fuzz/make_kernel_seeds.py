#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the seed corpus of fuzz_kernel (fuzz/corpus/fuzz_kernel/) from the
# compiled test shaders: each seed is the 16-byte header, the contract and
# the SPIR-V in the format fuzz/fuzz_kernel.c reads. Some seeds carry the
# right contract (the kernel loads), some a wrong one (CONTRACT), so the
# fuzzer starts from both sides of every check.
#   usage: fuzz/make_kernel_seeds.py BUILD_DIR   (after `make build`)
import os
import struct
import subprocess
import sys

R, W, RW = 1, 2, 3
# name: (bindings as (access, bytes), push-constant bytes)
SEEDS = {
    "saxpy": ([(R, 4096), (RW, 4096)], 8),
    "scale_add": ([(R, 1024), (R, 1024), (W, 1024)], 8),
    "add_one_u32": ([(RW, 1024)], 4),
    "copy_u32": ([(R, 1024), (W, 1024)], 4),
    "push16": ([(W, 1024)], 16),
    "three_bindings": ([(R, 64), (R, 64), (W, 64)], 0),
    "writes_binding0": ([(R, 64), (R, 64)], 4),  # wrong: binding 0 is written
    "gap_binding": ([(R, 64), (RW, 64)], 0),      # wrong: bindings 0 and 2
    "uniform_binding": ([(R, 16), (RW, 64)], 0),  # wrong: a uniform buffer
    "set1": ([(RW, 64)], 0),                      # wrong: set 1
}


def seed(bindings, push, spirv, local_size=None, spec=()):
    h = bytearray(16)
    h[0] = len(bindings)
    h[1] = push
    h[2] = len(spec)
    if local_size:
        h[3] = 1
        h[4:7] = bytes(local_size)
    h[7] = 1
    body = b"".join(struct.pack("<BBH", a, 2, n) for a, n in bindings)
    body += b"".join(struct.pack("<BBxxI", i, t, v) for i, t, v in spec)
    return bytes(h) + body + spirv


def main():
    build = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "corpus", "fuzz_kernel")
    os.makedirs(out, exist_ok=True)
    shaders = os.path.join(build, "tests", "tandem_test_shaders")
    for name, (bindings, push) in SEEDS.items():
        with open(os.path.join(shaders, name + ".spv"), "rb") as f:
            spirv = f.read()
        with open(os.path.join(out, name), "wb") as f:
            f.write(seed(bindings, push, spirv))
    # saxpy with an explicit local size, and with a spec constant it lacks.
    with open(os.path.join(shaders, "saxpy.spv"), "rb") as f:
        spirv = f.read()
    with open(os.path.join(out, "saxpy_local_size"), "wb") as f:
        f.write(seed(SEEDS["saxpy"][0], 8, spirv, local_size=(64, 1, 1)))
    with open(os.path.join(out, "saxpy_spec"), "wb") as f:
        f.write(seed(SEEDS["saxpy"][0], 8, spirv, spec=[(0, 3, 32)]))
    # Hand-written modules (fuzz/seeds/*.spvasm), assembled with spirv-as.
    seeds = os.path.join(here, "seeds")
    for asm in sorted(os.listdir(seeds)):
        if not asm.endswith(".spvasm"):
            continue
        spv = subprocess.run(["spirv-as", "--target-env", "vulkan1.3", "-o", "-",
                              os.path.join(seeds, asm)], check=True, capture_output=True).stdout
        with open(os.path.join(out, asm[:-7]), "wb") as f:
            f.write(seed([], 0, spv))


if __name__ == "__main__":
    main()
