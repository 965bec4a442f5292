# SPDX-License-Identifier: MIT
"""pipeline.py — the 3-stage demo (examples/demo.json) in Python: per frame,
upload → GPU preprocess (a = frame*0.5 + bias) → emulated NPU matmul
(c = a × weights) → GPU postprocess (c*2 + 1) → download, 4 frames per graph
run, 50 runs, every frame checked against NumPy. The NPU buffers are SHARED:
GPU and NPU see one allocation. Run: PYTHONPATH=build/python python3
examples/python/pipeline.py"""
import struct
import sys

import numpy as np

import tandem

SCALE_ADD = """#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { float scale; uint n; } pc;
void main() { uint i = gl_GlobalInvocationID.x; if (i < pc.n) c[i] = a[i] * pc.scale + b[i]; }
"""
N, FRAMES, RUNS = 128, 4, 50
size = 4 * N * N
rng = np.random.default_rng(1)
weights, bias = rng.uniform(-0.1, 0.1, (N, N)).astype(np.float32), rng.uniform(-1, 1, (N, N)).astype(np.float32)

with tandem.Runtime(npu="emulated") as rt:
    contract = [(size, "read"), (size, "read"), (size, "write")]
    scale_add = rt.kernel(glsl=SCALE_ADD, bindings=contract, push_constant_bytes=8,
                          workgroups=(N * N // 256,))
    matmul = rt.npu_program("matmul_f32", bindings=contract, scalar_count=3)  # the emulated NPU's
    w, b = rt.buffer(weights, "shared"), rt.buffer(bias, "gpu_local")
    one = rt.buffer(np.ones((N, N), np.float32), "gpu_local")
    g, ins, outs = rt.graph(), [], []
    for _ in range(FRAMES):
        hin, frame, out = rt.buffer(size), rt.buffer(size, "gpu_local"), rt.buffer(size)
        a, c, res = rt.buffer(size, "shared"), rt.buffer(size, "shared"), rt.buffer(size, "gpu_local")
        g.copy(hin, frame)
        g.dispatch(scale_add, [frame, b, a], struct.pack("fI", 0.5, N * N))
        g.npu_run(matmul, [a, w, c], [N, N, N])
        g.dispatch(scale_add, [c, one, res], struct.pack("fI", 2.0, N * N))
        g.copy(res, out)
        ins.append(hin)
        outs.append(out)
    exe = g.prepare()
    bad = 0
    for run in range(RUNS):
        frames = rng.random((FRAMES, N, N), dtype=np.float32)
        for hin, f in zip(ins, frames):
            with hin.map_write("float32", (N, N)) as arr:
                arr[:] = f
        exe.submit().wait()
        for out, f in zip(outs, frames):
            with out.map_read("float32", (N, N)) as got:
                bad += not np.allclose(got, ((f * 0.5 + bias) @ weights) * 2 + 1, rtol=1e-4, atol=1e-4)
    st = rt.statistics()
    messages = rt.validation_message_count
    print(f"{RUNS * FRAMES} frames on {rt.gpu_info().name} + {rt.npu_info().name}: {bad} wrong; "
          f"{st.npu_runs} NPU runs, {messages} validation messages")
sys.exit(1 if bad or messages else 0)
