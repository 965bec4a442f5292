# SPDX-License-Identifier: MIT
"""The Python binding's suite: every path checked on data against NumPy,
errors checked by class, status and message. Run by CTest as test_python
(python/CMakeLists.txt); the kDLCUDA tests run where a CUDA driver and
PyTorch with CUDA are present (the H200) and skip with the reason elsewhere."""
import asyncio
import json
import os
import shutil
import struct
import subprocess
import threading
import time

import pytest

import tandem
from conftest import make_runtime

np = pytest.importorskip("numpy", reason="NumPy is not installed (apt-get install python3-numpy)")

SAXPY = """
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { float a; uint n; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) y[i] = pc.a * x[i] + y[i];
}
"""

SCALE_SPEC = """
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint BLOCK = 32;
layout(constant_id = 1) const float SCALE = 1.0;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) writeonly buffer B { float b[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  b[i] = a[i] * SCALE + float(BLOCK);
}
"""


def saxpy_setup(rt, n, a=2.5):
    rng = np.random.default_rng(7)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    hx, hy = rt.buffer(x), rt.buffer(y)
    gx, gy = rt.buffer(4 * n, "gpu_local"), rt.buffer(4 * n, "gpu_local")
    k = rt.kernel(glsl=SAXPY, bindings=[(4 * n, "read"), (4 * n, "read_write")],
                  push_constant_bytes=8, workgroups=(n // 64,), name="saxpy")
    g = rt.graph()
    g.copy(hx, gx)
    g.copy(hy, gy)
    node = g.dispatch(k, [gx, gy], struct.pack("fI", a, n))
    g.copy(gy, hy)
    return g.prepare(), node, x, y, hy


# --- buffers, views, maps ---------------------------------------------------


def test_buffer_views_and_maps(rt):
    b = rt.buffer(4096)
    assert (b.size, b.placement, len(b)) == (4096, "host_visible", 4096)
    with b.map_read("uint32") as a:
        assert a.shape == (1024,) and not a.flags.writeable and (a == 0).all()  # zero-filled
    with b[1024:2048].map_write("float32", (16, 16)) as a:
        assert a.shape == (16, 16) and a.flags.writeable
        a[:] = np.arange(256, dtype=np.float32).reshape(16, 16)
    with b.map_read("float32") as a:
        assert (a[256:512] == np.arange(256)).all() and (a[:256] == 0).all() and (a[512:] == 0).all()
    v = b[100:200]
    assert (v.offset, v.length, v.buffer.size) == (100, 100, 4096)
    assert v[10:20].offset == 110
    arr = np.arange(1000, dtype=np.int32)
    b2 = rt.buffer(arr, "gpu_local")  # staged upload
    assert b2.placement == "gpu_local" and b2.size == 4000
    back = rt.buffer(4000)
    g = rt.graph()
    g.copy(b2, back)
    g.prepare().submit().wait()
    with back.map_read(np.int32) as a:
        assert (a == arr).all()


def test_map_is_zero_copy(rt):
    b = rt.buffer(64)
    with b.map_write("uint8") as a:
        m_addr = a.__array_interface__["data"][0]
        a[:] = 5
    m = b.map_read()
    assert m.address == m_addr  # the same host bytes, twice
    assert bytes(memoryview(m)) == b"\x05" * 64
    m.unmap()


def test_array_refuses_use_after_unmap(rt):
    b = rt.buffer(1024)
    with b.map_write("float32") as a:
        a[:] = 1.0
        row = a[10:20]
    for use in (lambda: a[0], lambda: a.sum(), lambda: np.add(a, 1), lambda: row[0],
                lambda: a.__setitem__(0, 2.0), lambda: repr(a), lambda: a.tolist(), lambda: np.mean(a)):
        with pytest.raises(tandem.UnmappedError):
            use()
    m = b.map_read()
    m.unmap()
    with pytest.raises(BufferError):
        memoryview(m)
    with pytest.raises(ValueError):
        m.array()


def test_map_conflicts_are_busy(rt):
    b = rt.buffer(256)
    w = b.map_write()
    with pytest.raises(tandem.BusyError) as e:
        b.map_read(wait=False)
    assert e.value.status == -4 and e.value.status_name == "ERROR_BUSY" and e.value.message
    w.unmap()
    b.map_read(wait=False).unmap()


def test_bad_arguments(rt):
    with pytest.raises(ValueError, match="negative"):
        rt.buffer(-1)
    with pytest.raises(ValueError, match="at least 1"):
        rt.buffer(0)
    with pytest.raises(TypeError):
        rt.buffer("many")
    with pytest.raises(ValueError, match="placement"):
        rt.buffer(16, "video_memory")
    with pytest.raises(ValueError, match="contiguous"):
        rt.buffer(np.arange(10, dtype=np.float32)[::2])
    with pytest.raises(TypeError, match="objects"):
        rt.buffer(np.array([object()] * 4))
    with pytest.raises(ValueError, match="step"):
        rt.buffer(16)[0:16:2]
    with pytest.raises(tandem.UnsupportedError):
        rt.buffer(16, "gpu_local").map_read()
    with pytest.raises(tandem.OutOfRangeError):
        rt.buffer(16).view(8, 16)
    with pytest.raises(TypeError, match="access"):
        rt.kernel(glsl=SAXPY, bindings=[(16, 3.5)])
    with pytest.raises(ValueError, match="exactly one"):
        rt.kernel(bindings=[])
    with pytest.raises(ValueError):
        tandem.Runtime(max_submissions=0)  # InvalidArgumentError is a ValueError too


# --- kernels, graphs, executables -----------------------------------------


def test_npu_backend_by_name():
    # The NPU backend is chosen by name; an unknown one is refused naming
    # every known backend, and a name must be a string.
    with pytest.raises(tandem.InvalidArgumentError, match="'tpu'.*'xrt', 'emulated'"):
        tandem.Runtime(npu="tpu")
    with pytest.raises(TypeError, match="backend name"):
        tandem.Runtime(npu=2)
    tandem.Runtime(npu="none").close()


def test_saxpy_glsl(rt):
    n = 4096
    exe, _, x, y, hy = saxpy_setup(rt, n)
    c = exe.submit()
    c.wait()
    assert c.done and c.status == "OK"
    with hy.map_read("float32") as got:
        np.testing.assert_allclose(got, 2.5 * x + y, rtol=1e-6, atol=1e-6)  # FMA on the GPU
    st = rt.statistics()
    assert st.submissions == 1 and st.copied_bytes == 3 * 4 * n  # two uploads, one download


def test_view_sized_bindings(rt):
    """One kernel, bindings of tandem.BYTES_VIEW: every size runs whole."""
    k = rt.kernel(glsl=SAXPY, bindings=[(tandem.BYTES_VIEW, "read"), (tandem.BYTES_VIEW, "read_write")],
                  push_constant_bytes=8, name="saxpy_any")
    rng = np.random.default_rng(3)
    for n in (1024, 2048):
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        hx, hy = rt.buffer(x), rt.buffer(y)
        g = rt.graph()
        g.dispatch(k, [hx, hy], struct.pack("fI", 2.0, n), workgroups=(n // 64,))
        c = g.prepare().submit()
        c.wait()
        assert c.status == "OK"
        with hy.map_read("float32") as got:
            np.testing.assert_allclose(got, 2.0 * x + y, rtol=1e-6, atol=1e-6)


def test_per_submission_parameters(rt):
    n = 1024
    exe, node, x, y, hy = saxpy_setup(rt, n, a=1.0)
    exe.submit().wait()  # each run uploads hy again: y accumulates
    y1 = 1.0 * x + y
    exe.set_push_constants(node, struct.pack("fI", -3.0, n))
    exe.submit().wait()
    y2 = -3.0 * x + y1
    with hy.map_read("float32") as got:
        np.testing.assert_allclose(got, y2, rtol=1e-5, atol=1e-5)  # FMA on the GPU
    exe.set_workgroups(node, (n // 128,))  # half the elements
    exe.set_push_constants(node, struct.pack("fI", 10.0, n))
    exe.submit().wait()
    with hy.map_read("float32") as got:
        np.testing.assert_allclose(got[: n // 2], 10.0 * x[: n // 2] + y2[: n // 2], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[n // 2:], y2[n // 2:], rtol=1e-5, atol=1e-5)


def compile_spirv(src, tmp_path):
    tool = shutil.which("glslangValidator")
    if not tool:
        pytest.skip("glslangValidator is not installed (apt-get install glslang-tools)")
    comp, spv = tmp_path / "k.comp", tmp_path / "k.spv"
    comp.write_text(src)
    subprocess.run([tool, "-V", "--target-env", "vulkan1.2", str(comp), "-o", str(spv)], check=True,
                   capture_output=True)
    return spv.read_bytes()


@pytest.mark.parametrize("source", ["glsl", "spirv"])
def test_spec_constants_and_local_size(rt, source, tmp_path):
    n = 512
    code = {"glsl": SCALE_SPEC} if source == "glsl" else {"spirv": compile_spirv(SCALE_SPEC, tmp_path)}
    k = rt.kernel(**code, bindings=[tandem.Binding(4 * n, "read"), tandem.Binding(4 * n, "write")],
                  spec_constants={0: 128, 1: 3.0}, workgroups=(n // 128,))
    assert k.info.local_size == (128, 1, 1) and k.info.local_size_specialized
    a = np.linspace(-1, 1, n, dtype=np.float32)
    ha, hb = rt.buffer(a), rt.buffer(4 * n)
    g = rt.graph()
    g.dispatch(k, [ha, hb])
    g.prepare().submit().wait()
    with hb.map_read("float32") as got:
        np.testing.assert_allclose(got, a * 3.0 + 128.0, rtol=1e-6)
    k2 = rt.kernel(glsl=SCALE_SPEC, bindings=[(4 * n, "read"), (4 * n, "write")], local_size=(64,),
                   spec_constants={1: ("float32", 0.5)})
    assert k2.info.local_size == (64, 1, 1)
    g = rt.graph()
    g.dispatch(k2, [ha, hb], workgroups=(n // 64,))
    g.prepare().submit().wait()
    with hb.map_read("float32") as got:
        np.testing.assert_allclose(got, a * 0.5 + 64.0, rtol=1e-6)


def test_contract_errors(rt):
    with pytest.raises(tandem.ContractError) as e:
        rt.kernel(glsl=SAXPY, bindings=[(64, "read")], push_constant_bytes=8)  # shader has 2
    assert e.value.status == -7 and e.value.status_name == "ERROR_CONTRACT"
    assert isinstance(e.value, tandem.Error) and "binding" in e.value.message
    k = rt.kernel(glsl=SAXPY, bindings=[(4096, "read"), (4096, "read_write")], push_constant_bytes=8,
                  workgroups=(64,))
    g = rt.graph()
    with pytest.raises(tandem.ContractError, match="4096"):
        g.dispatch(k, [rt.buffer(64), rt.buffer(4096)], struct.pack("fI", 1, 1))
    with pytest.raises(tandem.ContractError):
        g.dispatch(k, [rt.buffer(4096), rt.buffer(4096)], b"\0" * 4)  # push constants: 8 bytes
    with pytest.raises(tandem.InvalidKernelError):
        rt.kernel(glsl="#version 450\nvoid main() { syntax error }", bindings=[])
    assert len(g) == 0  # failed adds leave the graph unchanged


# --- NPU (emulated) ----------------------------------------------------------


def test_npu_three_stage(npu_rt):
    rt, n = npu_rt, 32
    assert rt.npu_info().emulated
    rng = np.random.default_rng(3)
    frame, w = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    pre = rt.kernel(glsl=SCALE_SPEC, bindings=[(4 * n * n, "read"), (4 * n * n, "write")],
                    spec_constants={0: 64, 1: 0.5}, workgroups=(n * n // 64,))
    post = rt.kernel(glsl=SCALE_SPEC, bindings=[(4 * n * n, "read"), (4 * n * n, "write")],
                     spec_constants={0: 64, 1: 2.0}, workgroups=(n * n // 64,))
    mm = rt.npu_program("matmul_f32", bindings=[(4 * n * n, "read")] * 2 + [(4 * n * n, "write")],
                        scalar_count=3)
    hin, a, wb, c, hout = (rt.buffer(frame), rt.buffer(4 * n * n, "shared"), rt.buffer(w, "shared"),
                           rt.buffer(4 * n * n, "shared"), rt.buffer(4 * n * n))
    g = rt.graph()
    g.dispatch(pre, [hin, a])
    g.npu_run(mm, [a, wb, c], [n, n, n])
    g.dispatch(post, [c, hout])
    g.prepare().submit().wait()
    expect = ((frame * 0.5 + 64) @ w) * 2.0 + 64
    with hout.map_read("float32", (n, n)) as got:
        np.testing.assert_allclose(got, expect, rtol=1e-4)
    assert rt.statistics().npu_runs == 1


def sleeper(rt, ms):
    prog = rt.npu_program("sleep_ms", bindings=[(4, "write")], scalar_count=1)
    flag = rt.buffer(4, "shared")
    g = rt.graph()
    g.npu_run(prog, [flag], [ms])
    return g.prepare(), flag


def test_wait_timeout_cancel_and_profile(npu_rt):
    exe, flag = sleeper(npu_rt, 300)
    c = exe.submit()
    assert not c.done and c.status is None
    with pytest.raises(tandem.TimeoutError) as e:
        c.wait(timeout=0.01)
    assert isinstance(e.value, TimeoutError) and e.value.status_name == "ERROR_TIMEOUT"
    c.wait()
    with flag.map_read("uint32") as a:
        assert a[0] == 1
    p = c.profile
    assert isinstance(p, tandem.Profile) and p.host_observed_ns >= p.host_submit_ns
    with pytest.raises(ValueError, match="≥ 0"):
        c.wait(timeout=-1)
    c2 = exe.submit()
    c2.cancel()
    with pytest.raises(tandem.CancelledError):
        c2.wait()
    with pytest.raises(tandem.FailedDependencyError):  # what it wrote is poisoned
        flag.map_read()
    flag.map_write().unmap()  # a whole-buffer write map clears the poison


def test_gil_released_during_wait(npu_rt):
    exe, _ = sleeper(npu_rt, 400)
    ticks = 0
    stop = threading.Event()

    def spin():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    c = exe.submit()
    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.01)
    before = ticks
    c.wait()  # the other thread runs Python code all the while
    during = ticks - before
    stop.set()
    t.join()
    assert during > 10000, f"the spinning thread advanced only {during} times during a 400 ms wait"


def test_await_does_not_block_the_loop(npu_rt):
    exe, _ = sleeper(npu_rt, 300)

    async def main():
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        ticker = asyncio.create_task(tick())
        completions = [exe.submit(), exe.submit()]
        await asyncio.gather(*completions)
        ticker.cancel()
        return ticks, completions

    threads_before = threading.active_count()
    ticks, completions = asyncio.run(main())
    assert all(c.done and c.status == "OK" for c in completions)
    assert ticks >= 20, f"the event loop ran only {ticks} ticks during two 300 ms runs"
    assert threading.active_count() <= threads_before + 1  # one waiter thread, not one per completion


# --- statistics, lanes, traces ----------------------------------------------


@pytest.fixture
def timed_rt():
    r = make_runtime(gpu_timestamps=True)  # traces need GPU timestamps
    yield r
    assert r.validation_message_count == 0
    r.close()


def test_statistics_lanes_and_trace(timed_rt, tmp_path):
    rt = timed_rt
    exe, *_ = saxpy_setup(rt, 1024)
    path = tmp_path / "trace.json"
    with rt.trace(path) as t:
        exe.submit().wait()
    events = t.events
    assert {e["lane"] for e in events} >= {"upload", "compute", "download"}
    doc = json.loads(path.read_text())
    names = [e.get("name", "") for e in doc["traceEvents"]]
    assert any("saxpy" in nm for nm in names)
    lanes = rt.lanes()
    assert [ln.name for ln in lanes[:4]] == ["upload", "compute", "download", "npu"]
    assert lanes[1].submissions >= 1
    st = rt.statistics()
    assert isinstance(st, tandem.Statistics) and st.live_bytes > 0 and st.allocations >= 4


def test_runtime_context_and_budget():
    with make_runtime(budget=1 << 20) as rt:
        rt.buffer(1 << 19)
        with pytest.raises(tandem.OverBudgetError):
            rt.buffer(1 << 21)
        b = rt.buffer(16)
    assert rt.closed
    with pytest.raises(ValueError, match="closed"):
        rt.buffer(16)
    with b.map_write("uint8") as a:  # objects outlive the closed runtime
        a[:] = 1


# --- DLPack -----------------------------------------------------------------


def test_dlpack_cpu_numpy_zero_copy(rt):
    b = rt.buffer(4096)
    m = b.map_write()
    t = np.from_dlpack(m.tensor("float32", (32, 32)))
    assert t.shape == (32, 32) and t.__array_interface__["data"][0] == m.address  # no copy
    a = m.array("float32", (32, 32))
    a[:] = np.eye(32, dtype=np.float32)
    a[0, 1] = 7.0
    m.unmap()  # the tensor keeps the tandem map: its bytes stay ordered
    with pytest.raises(tandem.BusyError):
        b.map_write(wait=False)
    assert t[0, 1] == 7.0 and t[1, 1] == 1.0 and t[1, 0] == 0.0  # the map's bytes, seen by NumPy
    del t
    b.map_write(wait=False).unmap()  # the tensor's release ended the map
    u = np.from_dlpack(b)  # a whole buffer: uint8, its own map for the tensor's life
    assert u.dtype == np.uint8 and u.size == 4096
    assert b.__dlpack_device__() == (1, 0)
    del u
    b.map_write().unmap()


def test_dlpack_cpu_torch(rt):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (apt-get install python3-torch)")
    b = rt.buffer(np.arange(64, dtype=np.float32))
    with b.map_write() as _:
        pass
    m = b.map_write()
    t = torch.from_dlpack(m.tensor("float32"))
    assert t.data_ptr() == m.address and t.device.type == "cpu"
    assert t.sum().item() == sum(range(64))
    t.mul_(2)
    m.unmap()
    del t
    with b.map_read("float32") as a:
        assert (a == 2 * np.arange(64)).all()


def cuda_torch():
    reason = tandem.cuda_unavailable_reason()
    if reason:
        pytest.skip(f"kDLCUDA: {reason}")
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    return torch


def nvidia_runtime():
    rt = make_runtime(export_timelines=True)
    if rt.gpu_info().vendor_id != 0x10DE:
        rt.close()
        pytest.skip("tandem's GPU is not NVIDIA")
    return rt


def test_dlpack_cuda_both_directions():
    torch = cuda_torch()
    rt = nvidia_runtime()
    n = 16 << 20  # 64 MiB of uint32
    gpu = rt.buffer(4 * n, "gpu_local", exportable=True)
    host = rt.buffer(4 * n)
    g = rt.graph()
    fill = g.fill(gpu, 0x01020304)
    fill_exe = g.prepare()
    g = rt.graph()
    g.copy(gpu, host)
    down = g.prepare()
    for rnd in range(3):
        pattern = 0x01020304 + rnd
        g = rt.graph()
        g.fill(gpu, pattern)
        fill_exe = g.prepare()
        c = fill_exe.submit()  # no host wait before torch reads
        t = torch.from_dlpack(gpu.tensor("int32"))
        assert t.is_cuda and t.numel() == n
        assert int((t != pattern).sum().item()) == 0, f"round {rnd}: torch read before tandem's fill"
        # The other way: torch writes, tandem waits for the stream on the GPU.
        t.fill_(1000 + rnd)
        w = rt.cuda_signal(torch.cuda.current_stream().cuda_stream)
        down.submit(waits=[w]).wait()
        with host.map_read("int32") as a:
            assert (a == 1000 + rnd).all(), f"round {rnd}: tandem read before torch's fill"
        c.wait()
        del t
    assert fill >= 0
    rt.close()
