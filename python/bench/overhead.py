# SPDX-License-Identifier: MIT
"""overhead.py — the Python binding's costs, against the same work in C
(submit_wait.c, the path of whose binary is argv[1]): submit + wait of a
one-dispatch executable, map_read + unmap, and on NVIDIA with PyTorch the
kDLCUDA hand-over of a 256 MiB tandem buffer (bytes copied; tandem submit →
a PyTorch kernel has read the data, GPU-ordered against host-ordered).
Medians of 15 rounds; a benchmark, not a test."""
import statistics
import subprocess
import sys
import time

import tandem

SRC = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Y { uint y[]; };
void main() { y[gl_GlobalInvocationID.x] += 1u; }
"""


def rounds(fn, n=1000, r=15):
    out = []
    for _ in range(r):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(out)


def main():
    c_out = dict(line.split() for line in subprocess.run([sys.argv[1]], check=True, capture_output=True,
                                                          text=True).stdout.splitlines())
    with tandem.Runtime() as rt:
        b = rt.buffer(256)
        k = rt.kernel(glsl=SRC, bindings=[(256, "read_write")], workgroups=(1,))
        g = rt.graph()
        g.dispatch(k, [b])
        exe = g.prepare()
        py_sw = rounds(lambda: exe.submit().wait())

        def m():
            b.map_read().unmap()

        py_map = rounds(m)
        print("device", rt.gpu_info().name, rt.gpu_info().driver_info)
    c_sw, c_map = float(c_out["c_submit_wait_us"]), float(c_out["c_map_us"])
    print(f"submit+wait: C {c_sw:.2f} us, Python {py_sw:.2f} us, extra {py_sw - c_sw:.2f} us")
    print(f"map_read+unmap: C {c_map:.2f} us, Python {py_map:.2f} us, extra {py_map - c_map:.2f} us")
    if tandem.cuda_unavailable_reason():
        print("kDLCUDA:", tandem.cuda_unavailable_reason())
        return
    import torch

    with tandem.Runtime(export_timelines=True) as rt:
        n = 64 << 20  # 256 MiB of int32
        gpu = rt.buffer(4 * n, "gpu_local", exportable=True)
        g = rt.graph()
        g.fill(gpu, 7)
        fill = g.prepare()
        fill.submit().wait()
        before = torch.cuda.memory_allocated()
        t1 = torch.from_dlpack(gpu.tensor("int32"))
        t2 = torch.from_dlpack(gpu.tensor("int32"))
        copied = torch.cuda.memory_allocated() - before
        print(f"from_dlpack 256 MiB: torch allocated {copied} bytes; same data_ptr twice: "
              f"{t1.data_ptr() == t2.data_ptr()}; value ok: {int((t1 != 7).sum().item()) == 0}")
        del t1, t2
        gpu_ordered, host_ordered = [], []
        for _ in range(15):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fill.submit()
            t = torch.from_dlpack(gpu.tensor("int32"))  # the stream waits on the GPU
            s = t.sum()
            torch.cuda.synchronize()
            gpu_ordered.append((time.perf_counter() - t0) * 1e6)
            del t
            t0 = time.perf_counter()
            fill.submit().wait()
            t = torch.from_dlpack(gpu.tensor("int32"), )
            s = t.sum()
            torch.cuda.synchronize()
            host_ordered.append((time.perf_counter() - t0) * 1e6)
            del t
        assert int(s.item()) == 7 * n
        print(f"submit -> torch sum of 256 MiB read: GPU-ordered {statistics.median(gpu_ordered):.1f} us, "
              f"host-ordered {statistics.median(host_ordered):.1f} us")


main()
