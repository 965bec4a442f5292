/* SPDX-License-Identifier: MIT */
/*
 * xrt_bridge_abi.h — the C interface of tandem's XRT bridge: the few things
 * an AMD XDNA NPU needs that XRT's C API cannot do, each a plain C function.
 * It lives in internal/, below both of its sides: the XRT backend
 * (backends/xrt/) calls it and the emulated NPU (npu/emu/) implements it,
 * so neither reaches into the other's private files.
 *
 * XRT's C API cannot register an xclbin (xrtDeviceLoadXclbin* is refused by
 * the XDNA plugin: xclbins are registered, and loaded when a hardware context
 * is made) and cannot list a kernel's arguments. xrtPLKernelOpen already
 * builds a hardware context from the xclbin's UUID (XRT 2.17 onwards), and
 * fails only because nothing registered the xclbin: so registering it is the
 * bridge's tier 0, and the rest of the path stays on the C API (inferred from
 * XRT's source; the first thing to confirm on a Ryzen AI machine, see
 * docs/npu.md).
 *
 * Two implementations export these symbols, with C linkage:
 *  - backends/xrt/xrt_bridge.cpp, libtandem_xrt_bridge.so, over XRT's C++ API
 *    (built only where XRT >= 2.17 headers are found; every exception is
 *    caught and its what() text returned);
 *  - the emulated NPU (npu/emu/emulator.c) in its XDNA mode, so CI runs the
 *    same backend path.
 * xrt_api.c resolves them with dlsym by these C names, never C++ symbols.
 * Tier 0 (always): register an xclbin, list a kernel's arguments. Tier 1
 * (below; all its symbols or none): contexts, kernels, runs. Tier 2: ELF
 * contexts (XRT >= 2.19). Every function returns 0 (or the value it says)
 * or a negative errno; on failure |msg| (|cap| bytes, may be NULL/0) holds
 * the reason in words (XRT's what() text from the real bridge).
 */
#ifndef TANDEM_INTERNAL_XRT_BRIDGE_ABI_H_
#define TANDEM_INTERNAL_XRT_BRIDGE_ABI_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include <stdint.h>

/* The bridge's interface version: tandemBridgeVersion() returns it. 2: tier
 * 1 (contexts, kernels, runs) and tier 2 (ELF contexts) added. */
#define TANDEM_XRT_BRIDGE_VERSION 2

/* TANDEM_XRT_BRIDGE_VERSION of the library. */
int tandemBridgeVersion(void);

/* Registers the xclbin at |xclbin_path| with the device behind the C handle
 * |device| (an xrtDeviceHandle), as xrt::device::register_xclbin does, so
 * that xrtPLKernelOpen finds it and opens a hardware context for it. Again
 * for a registered xclbin: 0. */
int tandemBridgeRegisterXclbin(void *device, const char *xclbin_path, char *msg, size_t cap);

/* The arguments of kernel |kernel| in the xclbin at |xclbin_path|, from its
 * metadata: one character per argument, in argument order, into |kinds|
 * ('b' a buffer, 'u' a 32-bit scalar, 'U' a 64-bit scalar, '?' a scalar of
 * another size), NUL-terminated. Returns the count (>= 0) or a negative
 * errno (-ENOENT: no such kernel; -ENOSPC: more than |capacity| - 1). */
int tandemBridgeKernelArgs(void *device, const char *xclbin_path, const char *kernel, char *kinds,
                           size_t capacity, char *msg, size_t cap);

/* ---- Tier 1: hardware contexts, kernels and runs (optional as a set) ----
 *
 * What XDNA applications do in C++ (register_xclbin, xrt::hw_context,
 * xrt::kernel(ctx, name), xrt::run), as C: tandem opens one context per
 * xclbin and shares it among every program of that xclbin (an NPU has very
 * few), opens each program's kernel through it, and runs with a timed wait
 * that reports the run's final state and an abort. Data buffers stay C
 * xrtBufferHandles (xrtBOAlloc), handed to the run as they are. Handles are
 * opaque; a call on a closed one is undefined. */

/* The XRT the bridge runs with, as xrtVersionCode() answers: major << 16 |
 * minor (2.19 is 0x20013). 0: unknown. */
unsigned tandemBridgeXrtVersion(void);

/* Registers the xclbin at |xclbin_path| with |device| (an xrtDeviceHandle)
 * and makes a hardware context for it (shared access); *out_context is its
 * handle. Each call makes a new context: callers share one per xclbin.
 * -EBUSY: the NPU has no free context. */
int tandemBridgeContextOpen(void *device, const char *xclbin_path, void **out_context, char *msg,
                            size_t cap);
int tandemBridgeContextClose(void *context);

/* Kernel |name| of |context|'s xclbin (ELF), opened through the context:
 * no context of its own. -ENOENT: no such kernel. */
int tandemBridgeKernelOpen(void *context, const char *name, void **out_kernel, char *msg,
                           size_t cap);
int tandemBridgeKernelClose(void *kernel);
/* XRT's group id of argument |argno| (kernel.group_id), as it is: an
 * encoded xcl_bo_flags, slot << 16 | bank, where on amdxdna the slot is the
 * hardware context's handle (from 1), so bank 0 reads 0x10000; a scalar's
 * bank field is 0xffff (XRT's no_memidx). Callers compare the bank (& 0xffff)
 * and pass the whole value back to xrtBOAlloc. A negative errno when XRT
 * refused (a bad index). */
int tandemBridgeKernelGroup(void *kernel, int argno);

/* A run of |kernel|, every argument unset (an unset argument is zero). */
int tandemBridgeRunOpen(void *kernel, void **out_run, char *msg, size_t cap);
/* Argument |index| := the C buffer |bo| (an xrtBufferHandle from xrtBOAlloc
 * or xrtBOImport of the same device). */
int tandemBridgeRunSetBuffer(void *run, int index, void *bo, char *msg, size_t cap);
int tandemBridgeRunSetU32(void *run, int index, uint32_t value, char *msg, size_t cap);
int tandemBridgeRunSetU64(void *run, int index, uint64_t value, char *msg, size_t cap);
int tandemBridgeRunStart(void *run, char *msg, size_t cap);
/* Waits up to |timeout_ms| (0: no limit) and returns the run's state, an
 * enum ert_cmd_state (>= 0): a final one (COMPLETED, ERROR, ABORT, TIMEOUT
 * when the driver ended the run, NORESPONSE, ...) or, when the wait ran out
 * first, the state it is still in (QUEUED, RUNNING, ...): never TIMEOUT for
 * "the wait ran out". A negative errno when the wait itself failed. */
int tandemBridgeRunWait(void *run, unsigned timeout_ms, char *msg, size_t cap);
/* Aborts a started run (xrt::run::abort) and waits for it to end; returns
 * its final state (>= 0) or a negative errno. A run already final is left as
 * it is. Best effort: on amdxdna the ERT_ABORT command is refused
 * ("Unsupported op", -EOPNOTSUPP, thrown by XRT), and where a driver took it
 * the call returns only when the run ends by itself or by the driver's reset. */
int tandemBridgeRunAbort(void *run, char *msg, size_t cap);
/* Closes a run that is not in flight. Never call it on a run in flight:
 * XRT's ~run_impl calls std::abort() for that (xrt_kernel.cpp:2744-2754 at
 * XRT 963c58ee); wait for the run, or keep it. */
int tandemBridgeRunClose(void *run);

/* ---- Tier 2: full-ELF programs, no xclbin (optional; XRT >= 2.19) ----
 *
 * A hardware context made from the ELF at |elf_path| (xrt::elf,
 * xrt::hw_context(device, elf)); its kernels open with
 * tandemBridgeKernelOpen (xrt::ext::kernel(ctx, name)). Exported only by a
 * bridge built against XRT >= 2.19 headers; tandem uses it only when
 * tandemBridgeXrtVersion() is >= 2.19 too. */
int tandemBridgeContextOpenElf(void *device, const char *elf_path, void **out_context, char *msg,
                               size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_INTERNAL_XRT_BRIDGE_ABI_H_ */
