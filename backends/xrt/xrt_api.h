/* SPDX-License-Identifier: MIT */
/*
 * xrt_api.h — the XRT C API subset tandem uses, as a table of function
 * pointers loaded at run time (dlopen), like volk does for Vulkan.
 *
 * The same table is filled either from the real XRT 2.13 libraries
 * (libxrt_core.so.2 + libxrt_coreutil.so.2, found through the loader's search
 * path) or from tandem's emulated NPU device (libtandem_npu_emu.so, which
 * implements these functions on the CPU). Types come from Debian's XRT
 * headers (libxrt-dev), so a signature mismatch is a compile error.
 * XRT 2.13 has no hardware-context API; AMD XDNA NPUs need XRT 2.19+'s C++
 * xrt::hw_context. That difference lives behind tandem_xrt_api_t.open_kernel:
 * a later loader can fill it with a hw-context-based implementation without
 * touching core/ (docs/npu.md).
 */
#ifndef TANDEM_BACKENDS_XRT_XRT_API_H_
#define TANDEM_BACKENDS_XRT_XRT_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "internal/xrt_headers.h"

typedef enum tandem_xrt_flavor {
  TANDEM_XRT_REAL = 0,     /* the system's XRT libraries */
  TANDEM_XRT_EMULATED = 1, /* tandem's emulated NPU (a test and development device) */
} tandem_xrt_flavor_t;

typedef struct tandem_xrt_api {
  tandem_xrt_flavor_t flavor;
  void *libs[3];         /* dlopen handles (the bridge last), closed by tandem_xrt_api_unload */
  char description[192]; /* copied into tandem_npu_info_t.backend[192] */

  xrtDeviceHandle (*xrtDeviceOpen)(unsigned int index);
  int (*xrtDeviceClose)(xrtDeviceHandle dhdl);
  int (*xrtDeviceLoadXclbinHandle)(xrtDeviceHandle dhdl, xrtXclbinHandle xhdl);
  xrtXclbinHandle (*xrtXclbinAllocFilename)(const char *filename);
  int (*xrtXclbinGetUUID)(xrtXclbinHandle xhdl, xuid_t ret_uuid);
  int (*xrtXclbinFreeHandle)(xrtXclbinHandle xhdl);
  /* The kernel-open seam: xrtPLKernelOpen on XRT 2.13 and the emulator. */
  xrtKernelHandle (*xrtPLKernelOpen)(xrtDeviceHandle dhdl, const xuid_t xclbin_id,
                                     const char *name);
  int (*xrtKernelClose)(xrtKernelHandle khdl);
  int (*xrtKernelArgGroupId)(xrtKernelHandle khdl, int argno);
  xrtBufferHandle (*xrtBOAlloc)(xrtDeviceHandle dhdl, size_t size, xrtBufferFlags flags,
                                xrtMemoryGroup grp);
  xrtBufferHandle (*xrtBOImport)(xrtDeviceHandle dhdl, xclBufferExportHandle ehdl);
  xclBufferExportHandle (*xrtBOExport)(xrtBufferHandle bhdl);
  int (*xrtBOFree)(xrtBufferHandle bhdl);
  size_t (*xrtBOSize)(xrtBufferHandle bhdl);
  void *(*xrtBOMap)(xrtBufferHandle bhdl);
  int (*xrtBOSync)(xrtBufferHandle bhdl, enum xclBOSyncDirection dir, size_t size, size_t offset);
  xrtRunHandle (*xrtRunOpen)(xrtKernelHandle khdl);
  int (*xrtRunSetArg)(xrtRunHandle rhdl, int index, ...);
  int (*xrtRunStart)(xrtRunHandle rhdl);
  enum ert_cmd_state (*xrtRunWaitFor)(xrtRunHandle rhdl, unsigned int timeout_ms);
  enum ert_cmd_state (*xrtRunWait)(xrtRunHandle rhdl);
  enum ert_cmd_state (*xrtRunState)(xrtRunHandle rhdl);
  int (*xrtRunClose)(xrtRunHandle rhdl);
  /* Optional (NULL when absent): the emulated NPU's answer to "which XRT
   * do you behave like": "xdna" or "plain" (TANDEM_EMU_MODE). */
  const char *(*tandemEmuDeviceFamily)(xrtDeviceHandle dhdl);
  /* Optional: abort a run in flight (the emulated NPU's; XRT's abort is
   * xrt::run::abort, C++ only, on a run the C API cannot hand over). */
  int (*tandemEmuRunAbort)(xrtRunHandle rhdl);
  /* The bridge (internal/xrt_bridge_abi.h), optional (all NULL when absent): the
   * emulated NPU's own, or libtandem_xrt_bridge.so beside libtandem for real
   * XRT >= 2.17. bridge_description names where it came from. */
  int (*tandemBridgeVersion)(void);
  int (*tandemBridgeRegisterXclbin)(void *device, const char *xclbin_path, char *msg, size_t cap);
  int (*tandemBridgeKernelArgs)(void *device, const char *xclbin_path, const char *kernel,
                                char *kinds, size_t capacity, char *msg, size_t cap);
  /* Tier 1 (all or none): contexts, kernels, runs with a timed wait and
   * abort. Tier 2 (optional): ELF contexts. */
  unsigned (*tandemBridgeXrtVersion)(void);
  int (*tandemBridgeContextOpen)(void *device, const char *xclbin_path, void **out_context,
                                 char *msg, size_t cap);
  int (*tandemBridgeContextClose)(void *context);
  int (*tandemBridgeKernelOpen)(void *context, const char *name, void **out_kernel, char *msg,
                                size_t cap);
  int (*tandemBridgeKernelClose)(void *kernel);
  int (*tandemBridgeKernelGroup)(void *kernel, int argno);
  int (*tandemBridgeRunOpen)(void *kernel, void **out_run, char *msg, size_t cap);
  int (*tandemBridgeRunSetBuffer)(void *run, int index, void *bo, char *msg, size_t cap);
  int (*tandemBridgeRunSetU32)(void *run, int index, uint32_t value, char *msg, size_t cap);
  int (*tandemBridgeRunSetU64)(void *run, int index, uint64_t value, char *msg, size_t cap);
  int (*tandemBridgeRunStart)(void *run, char *msg, size_t cap);
  int (*tandemBridgeRunWait)(void *run, unsigned timeout_ms, char *msg, size_t cap);
  int (*tandemBridgeRunAbort)(void *run, char *msg, size_t cap);
  int (*tandemBridgeRunClose)(void *run);
  int (*tandemBridgeContextOpenElf)(void *device, const char *elf_path, void **out_context,
                                    char *msg, size_t cap);
  bool bridge_tier1; /* every tier-1 symbol resolved */
  bool bridge_tier2; /* tier 1, the ELF symbol, and the bridge's XRT >= 2.19 */
  char bridge_description[160];
} tandem_xrt_api_t;

/* Loads the table. |flavor| REAL: dlopen the device shim, then
 * libxrt_coreutil.so.2 (RTLD_GLOBAL, shim first: coreutil alone makes
 * xrtDeviceOpen abort unless XILINX_XRT is set, see the brief). The shim is
 * libxrt_core.so.2 (hardware), or libxrt_noop.so.2 when XCL_EMULATION_MODE is
 * "noop" — each shim registers itself as the device when loaded, so the
 * choice must be made before loading (tests/npu/README-noop.md). EMULATED:
 * dlopen |emulator_path| (NULL: "libtandem_npu_emu.so.0" through the normal
 * search path). Errors: NO_DEVICE with the dlerror() text and what to install
 * or set; UNSUPPORTED when a symbol is missing (named). */
tandem_status_t tandem_xrt_api_load(tandem_xrt_flavor_t flavor, const char *emulator_path,
                                    tandem_xrt_api_t *out_api);
void tandem_xrt_api_unload(tandem_xrt_api_t *api);

#endif /* TANDEM_BACKENDS_XRT_XRT_API_H_ */
