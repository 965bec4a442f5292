/* SPDX-License-Identifier: MIT */
/*
 * xrt_bridge.h — the C interface of tandem's XRT bridge: the few things an
 * AMD XDNA NPU needs that XRT's C API cannot do, each a plain C function.
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
 * Every function returns 0 or a negative errno; on failure |msg| (|cap|
 * bytes, may be 0) holds the reason in words.
 */
#ifndef TANDEM_BACKENDS_XRT_XRT_BRIDGE_H_
#define TANDEM_BACKENDS_XRT_XRT_BRIDGE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The bridge's interface version: tandemBridgeVersion() returns it. */
#define TANDEM_XRT_BRIDGE_VERSION 1

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

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_BACKENDS_XRT_XRT_BRIDGE_H_ */
