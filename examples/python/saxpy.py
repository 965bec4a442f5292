# SPDX-License-Identifier: MIT
"""saxpy.py — examples/saxpy.c in Python: upload x and y, y = a*x + y on the
GPU, download y, check against NumPy. Run: PYTHONPATH=build/python python3
examples/python/saxpy.py (TANDEM_VALIDATION=1 turns the validation layer on)."""
import struct
import sys

import numpy as np

import tandem

SAXPY = """#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { float a; uint n; } pc;
void main() { uint i = gl_GlobalInvocationID.x; if (i < pc.n) y[i] = pc.a * x[i] + y[i]; }
"""
n, a = 1 << 22, 2.5
rng = np.random.default_rng(7)
x, y = rng.random(n, dtype=np.float32) - 0.5, rng.random(n, dtype=np.float32) - 0.5

with tandem.Runtime() as rt:
    print("device:", rt.gpu_info().name)
    hx, hy = rt.buffer(x), rt.buffer(y)  # HOST_VISIBLE copies of the arrays
    gx, gy = rt.buffer(4 * n, "gpu_local"), rt.buffer(4 * n, "gpu_local")
    saxpy = rt.kernel(glsl=SAXPY, bindings=[(4 * n, "read"), (4 * n, "read_write")],
                      push_constant_bytes=8, workgroups=(n // 256,), name="saxpy")
    g = rt.graph()
    g.copy(hx, gx)
    g.copy(hy, gy)
    g.dispatch(saxpy, [gx, gy], struct.pack("fI", a, n))
    g.copy(gy, hy)
    g.prepare().submit().wait()
    with hy.map_read("float32") as got:
        bad = int((~np.isclose(got, a * x + y, rtol=1e-6, atol=1e-6)).sum())  # GPUs may fuse a*x+y
    messages = rt.validation_message_count
    print(f"saxpy on {n} floats: {bad} mismatches; copied {rt.statistics().copied_bytes} bytes; "
          f"{messages} validation messages")
sys.exit(1 if bad or messages else 0)
