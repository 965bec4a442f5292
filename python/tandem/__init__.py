# SPDX-License-Identifier: MIT
"""tandem: GPU (Vulkan compute) and NPU (XRT) kernels as one pipeline, from Python.

    import numpy as np, struct, tandem

    with tandem.Runtime() as rt:
        x = rt.buffer(4 * n)                          # HOST_VISIBLE, zero-filled
        with x.map_write("float32") as a:             # a NumPy array over the mapped bytes
            a[:] = np.arange(n)
        k = rt.kernel(glsl=SRC, bindings=[(4 * n, "read_write")],
                      push_constant_bytes=4, workgroups=(n // 256,))
        g = rt.graph()
        g.dispatch(k, [x], struct.pack("I", n))
        exe = g.prepare()
        exe.submit().wait()
        with x.map_read("float32") as a:
            print(a[:4])

The types (Runtime, Buffer, View, Map, Kernel, NpuProgram, Graph, Executable,
Completion, Trace) are the C extension's, tandem._tandem; this module adds
what is easier in Python: the info dataclasses, NumPy arrays over maps that
refuse use after unmap, asyncio support and the trace context manager.
docs/python.md is the guide; include/tandem/tandem.h is the manual of
every call underneath.
"""
from __future__ import annotations

import asyncio as _asyncio
import collections as _collections
import contextlib as _contextlib
import dataclasses as _dataclasses
import threading as _threading
import typing as _typing

from . import _tandem
from ._tandem import (  # noqa: F401  (re-exported)
    Buffer,
    BusyError,
    CancelledError,
    Completion,
    ContractError,
    DeviceLostError,
    Error,
    Executable,
    FailedDependencyError,
    Graph,
    InternalError,
    InvalidArgumentError,
    InvalidKernelError,
    IOError,
    Kernel,
    Map,
    NoDeviceError,
    NpuProgram,
    OutOfMemoryError,
    OutOfRangeError,
    OverBudgetError,
    Tensor,
    TimeoutError,
    Trace,
    UnimplementedError,
    UnsupportedError,
    View,
    cuda_unavailable_reason,
    library_path,
    validation_messages,
)

__version__ = _tandem.version()

try:
    import numpy as _np
except ImportError:  # maps then give memoryviews
    _np = None


#: A binding's bytes meaning "the bound view's length" (TANDEM_BYTES_VIEW):
#: one kernel then serves views of every size; a fixed size must match the
#: view exactly.
BYTES_VIEW = 0


class Binding(_typing.NamedTuple):
    """One binding of a contract: the bytes the kernel touches from the
    view's start (exactly the view's length, or BYTES_VIEW for any view),
    'read' / 'write' / 'read_write', the view offset alignment."""

    bytes: int
    access: str = "read_write"
    alignment: int = 4


# --- info objects (the C structs, as frozen dataclasses) -------------------


@_dataclasses.dataclass(frozen=True)
class DeviceInfo:
    index: int
    name: str
    driver_name: str
    driver_info: str
    api_version: tuple
    vendor_id: int
    device_id: int
    is_cpu: bool
    features: list
    shader_features: list
    queue_families: list
    device_local_bytes: int
    timestamp_period_ns: float
    max_local_size: tuple
    max_local_invocations: int
    max_workgroups: tuple
    subgroup_size: int
    max_shared_memory_bytes: int


@_dataclasses.dataclass(frozen=True)
class NpuInfo:
    name: str
    backend: str
    emulated: bool
    sharing: str
    drm_nodes: list


@_dataclasses.dataclass(frozen=True)
class KernelInfo:
    local_size: tuple
    local_size_specialized: bool
    workgroups: tuple
    binding_count: int
    push_constant_bytes: int
    spec_constant_count: int
    shader_features: int
    required_subgroup_size: int
    shared_memory_bytes: int


@_dataclasses.dataclass(frozen=True)
class Statistics:
    allocations: int
    live_bytes: int
    peak_bytes: int
    submissions: int
    completions: int
    imports: int
    copied_bytes: int
    cache_maintenance_bytes: int
    npu_runs: int


@_dataclasses.dataclass(frozen=True)
class LaneInfo:
    id: int
    kind: str
    name: str
    value: int
    submissions: int
    copied_bytes: int


@_dataclasses.dataclass(frozen=True)
class Profile:
    host_submit_ns: int
    host_observed_ns: int
    queue_ns: int
    execution_ns: int
    gpu_times_valid: bool
    regions: list
    gpu_times_status: str = "OK"  # why GPU times are missing: ERROR_UNSUPPORTED, ERROR_DEVICE_LOST


# --- NumPy arrays over maps -------------------------------------------------


class UnmappedError(ValueError):
    """An array over a map was used after the map ended."""


if _np is not None:

    def _check(arr):
        m = getattr(arr, "_tandem_map", None)
        if m is not None and not m.live:
            raise UnmappedError(
                "this array views a tandem map that was unmapped (the with block ended): "
                "map the buffer again, or copy the data out (np.array(a)) while mapped"
            )

    class MappedArray(_np.ndarray):
        """A NumPy array over a tandem map's bytes (no copy). Every use after
        the map ended raises UnmappedError instead of touching stale memory.
        np.asarray(a) / a.view(np.ndarray) give a plain array that escapes
        the check: its bytes stay valid memory, but are no longer ordered
        against the GPU."""

        def __array_finalize__(self, obj):
            self._tandem_map = getattr(obj, "_tandem_map", None)

        def __getitem__(self, key):
            _check(self)
            return super().__getitem__(key)

        def __setitem__(self, key, value):
            _check(self)
            super().__setitem__(key, value)

        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            for x in inputs + tuple(kwargs.get("out", ())):
                if isinstance(x, MappedArray):
                    _check(x)
            inputs = tuple(x.view(_np.ndarray) if isinstance(x, MappedArray) else x for x in inputs)
            if "out" in kwargs:
                kwargs["out"] = tuple(
                    x.view(_np.ndarray) if isinstance(x, MappedArray) else x for x in kwargs["out"]
                )
            return getattr(ufunc, method)(*inputs, **kwargs)

        def __array_function__(self, func, types, args, kwargs):
            def strip(x):
                if isinstance(x, MappedArray):
                    _check(x)
                    return x.view(_np.ndarray)
                if isinstance(x, (list, tuple)):
                    return type(x)(strip(y) for y in x)
                return x

            return func(*strip(args), **{k: strip(v) for k, v in kwargs.items()})

        def __array__(self, dtype=None, *args, **kwargs):
            _check(self)
            a = self.view(_np.ndarray)
            return a if dtype is None else a.astype(dtype, copy=False)

        def __repr__(self):
            _check(self)
            return "Mapped" + repr(self.view(_np.ndarray))

        def __str__(self):
            _check(self)
            return str(self.view(_np.ndarray))

        def __iter__(self):
            _check(self)
            return super().__iter__()

        def __len__(self):
            _check(self)
            return super().__len__()

        def tobytes(self, *args, **kwargs):
            _check(self)
            return super().tobytes(*args, **kwargs)

        def tolist(self):
            _check(self)
            return super().tolist()

        def __dlpack__(self, *args, **kwargs):
            raise BufferError("export the Map (m.tensor(...)), not its array: the map's life is the tensor's")

    def _make_array(m, dtype, shape):
        dt = _np.dtype("uint8" if dtype is None else dtype)
        if m.nbytes % dt.itemsize:
            raise ValueError(f"{m.nbytes} mapped bytes are not a whole number of {dt} elements")
        a = _np.frombuffer(m, dtype=dt)
        if shape is not None:
            count = int(_np.prod(shape))
            a = a[:count].reshape(shape)
        a = a.view(MappedArray)
        a._tandem_map = m
        return a

    def _dtype_name(dtype):
        return _np.dtype(dtype).name

    _tandem._register(make_array=_make_array, dtype_name=_dtype_name)


# --- asyncio: one waiter thread per process, never one per completion ------


class _Waiter:
    """Waits for awaited completions on one thread (GIL released in each
    wait) and resolves their futures on their event loops."""

    def __init__(self):
        self._lock = _threading.Lock()
        self._pending = _collections.deque()
        self._wake = _threading.Event()
        self._thread = None

    def add(self, completion, loop, future):
        with self._lock:
            self._pending.append((completion, loop, future))
            if self._thread is None or not self._thread.is_alive():
                self._thread = _threading.Thread(target=self._run, name="tandem-await", daemon=True)
                self._thread.start()
        self._wake.set()

    @staticmethod
    def _resolve(future, error):
        if future.cancelled():
            return
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)

    @staticmethod
    def _outcome(completion):
        try:
            completion.wait(timeout=0)
        except Error as e:
            return e
        return None

    def _run(self):
        while True:
            with self._lock:
                items = list(self._pending)
                self._pending.clear()
                if not items:
                    self._wake.clear()
            if not items:
                self._wake.wait(1.0)
                continue
            keep = []
            for i, (c, loop, fut) in enumerate(items):
                # The oldest waits a slice (new arrivals are seen within
                # it); the others are only polled.
                try:
                    c.wait(timeout=0.002 if i == 0 else 0)
                    err = None
                except TimeoutError:
                    if not c.done:
                        keep.append((c, loop, fut))
                        continue
                    # It finished between the wait's timeout and the done
                    # check: ask again for its real outcome (a submission
                    # can itself fail with ERROR_TIMEOUT, so this timeout
                    # error is not yet the answer).
                    err = self._outcome(c)
                except Error as e:
                    err = e
                if not loop.is_closed():
                    loop.call_soon_threadsafe(self._resolve, fut, err)
            if keep:
                with self._lock:
                    self._pending.extendleft(reversed(keep))




_waiter = _Waiter()


async def _await_completion(completion):
    if completion.done:
        completion.wait()
        return None
    loop = _asyncio.get_running_loop()
    future = loop.create_future()
    _waiter.add(completion, loop, future)
    await future
    return None


_tandem._register(
    await_completion=_await_completion,
    DeviceInfo=DeviceInfo,
    NpuInfo=NpuInfo,
    KernelInfo=KernelInfo,
    Statistics=Statistics,
    LaneInfo=LaneInfo,
    Profile=Profile,
)


# --- the Runtime -------------------------------------------------------------


class Runtime(_tandem.Runtime):
    """Runtime(**options) — tandem's allocation and scheduling domain.

    Options (keyword-only, tandem_runtime_options_t): gpu_backend, gpu_index,
    max_submissions, graph_slots, budget (bytes), validation, gpu_timestamps,
    npu (the NPU backend by name, the option npu_backend: 'xrt' |
    'emulated', or 'none'), npu_index, npu_library,
    npu_timeout_ms, sharing, wait_spin_us, export_timelines (needed for
    kDLCUDA tensors and Runtime.cuda_signal). A context manager: leaving the
    with block closes it (objects made from it keep working until released).
    """

    @_contextlib.contextmanager
    def trace(self, path=None, capacity=65536):
        """with rt.trace("trace.json") as t: ... — records every region run
        inside the block and writes Chrome/Perfetto JSON to |path| at its
        end (wait for your completions inside the block). t.trace is the
        stopped Trace afterwards. Needs GPU timestamps: a runtime made with
        gpu_timestamps=True, or one whose GPU is not open yet (the trace
        then opens it with timestamps on); else UnsupportedError."""
        holder = _TraceHolder()
        self.trace_start(capacity)
        try:
            yield holder
        finally:
            holder.trace = self.trace_stop()
            if path is not None:
                holder.trace.write_json(path)

    def buffer(self, size_or_data, placement="host_visible", *, exportable=False):
        """buffer(nbytes | array, placement='host_visible', *, exportable=False) -> Buffer.

        With an int: that many zero-filled bytes. With an array (anything
        with the buffer protocol: NumPy arrays, bytes, array.array): a
        buffer of its size holding a copy of its bytes; a GPU_LOCAL one is
        filled through a HOST_VISIBLE staging buffer and a copy node (this
        call then waits for that copy)."""
        if isinstance(size_or_data, int) and not isinstance(size_or_data, bool):
            return super().buffer(size_or_data, placement, exportable=exportable)
        try:
            mv = memoryview(size_or_data)
        except TypeError:
            raise TypeError(
                f"buffer() takes a size in bytes or an array, not {type(size_or_data).__name__}"
            ) from None
        if "O" in mv.format:
            raise TypeError("buffer(): an array of Python objects has no bytes to copy; use a numeric dtype")
        if not mv.c_contiguous:
            raise ValueError("buffer(): the array is not C-contiguous; pass np.ascontiguousarray(a)")
        if mv.nbytes == 0:
            raise ValueError("buffer(): the array is empty; a buffer is at least 1 byte")
        src = mv.cast("B")
        buf = super().buffer(mv.nbytes, placement, exportable=exportable)
        if buf.placement == "gpu_local":
            staging = super().buffer(mv.nbytes, "host_visible")
            _copy_in(staging, src)
            g = self.graph()
            g.copy(staging, buf)
            g.prepare().submit().wait()
        else:
            _copy_in(buf, src)
        return buf

    def __repr__(self):
        return "<tandem.Runtime closed>" if self.closed else "<tandem.Runtime>"


def _copy_in(buf, src):
    m = buf.map_write()
    try:
        memoryview(m)[:] = src
    finally:
        m.unmap()


class _TraceHolder:
    trace = None

    @property
    def events(self):
        return self.trace.events if self.trace else []


__all__ = [
    "Runtime", "Buffer", "View", "Map", "Kernel", "NpuProgram", "Graph", "Executable", "Completion",
    "Trace", "Tensor", "Binding", "BYTES_VIEW", "DeviceInfo", "NpuInfo", "KernelInfo", "Statistics", "LaneInfo",
    "Profile", "Error", "InvalidArgumentError", "OutOfRangeError", "UnsupportedError", "BusyError",
    "OverBudgetError", "OutOfMemoryError", "ContractError", "InvalidKernelError", "NoDeviceError",
    "DeviceLostError", "TimeoutError", "CancelledError", "FailedDependencyError", "IOError",
    "UnimplementedError", "InternalError", "UnmappedError", "validation_messages",
    "cuda_unavailable_reason", "library_path",
]
