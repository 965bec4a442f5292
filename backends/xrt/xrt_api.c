/* SPDX-License-Identifier: MIT */
/*
 * xrt_api.c — dlopen-based loading of the XRT C API table (xrt_api.h).
 *
 * Libraries are opened RTLD_NOW | RTLD_LOCAL for the emulator and
 * RTLD_GLOBAL for real XRT (its shims look each other up by symbol). Every
 * symbol is resolved up front, so a missing one is an error at open, never a
 * crash at first use. The emulator, unless a path is given, is looked for
 * beside the library this code lives in (libtandem.so, built and installed
 * with it there), then on the loader's path.
 */
#include "backends/xrt/xrt_api.h"
#include "internal/xrt_bridge_abi.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* clang-format off */
#define TANDEM_XRT_SYMBOLS(X)                                                                \
  X(xrtDeviceOpen) X(xrtDeviceClose) X(xrtDeviceLoadXclbinHandle) X(xrtXclbinAllocFilename) \
  X(xrtXclbinGetUUID) X(xrtXclbinFreeHandle) X(xrtPLKernelOpen) X(xrtKernelClose)           \
  X(xrtKernelArgGroupId) X(xrtBOAlloc) X(xrtBOImport) X(xrtBOExport) X(xrtBOFree)          \
  X(xrtBOSize) X(xrtBOMap) X(xrtBOSync) X(xrtRunOpen) X(xrtRunSetArg) X(xrtRunStart)       \
  X(xrtRunWaitFor) X(xrtRunWait) X(xrtRunState) X(xrtRunClose)
/* clang-format on */

void tandem_xrt_api_unload(tandem_xrt_api_t *api) {
  if (!api) return;
  /* Close in reverse order of opening. */
  for (int i = 2; i >= 0; i--)
    if (api->libs[i]) dlclose(api->libs[i]);
  memset(api, 0, sizeof *api);
}

/* "<folder of the object holding this code>/|file|" when that file exists
 * (libtandem.so's folder, in the build tree and installed), else NULL. |buf|
 * holds the result. */
static const char *tandem_xrt_beside_us(const char *file, char *buf, size_t size) {
  Dl_info info;
  if (!dladdr((void *)&tandem_xrt_beside_us, &info) || !info.dli_fname) return NULL;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash) return NULL;
  int n = snprintf(buf, size, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, file);
  if (n < 0 || (size_t)n >= size || access(buf, R_OK) != 0) return NULL;
  return buf;
}

tandem_status_t tandem_xrt_api_load(tandem_xrt_flavor_t flavor, const char *emulator_path,
                                    tandem_xrt_api_t *api) {
  memset(api, 0, sizeof *api);
  api->flavor = flavor;
  void *lookup = NULL;
  if (flavor == TANDEM_XRT_EMULATED) {
    char beside[4096];
    const char *path = emulator_path;
    if (!path) path = tandem_xrt_beside_us("libtandem_npu_emu.so.0", beside, sizeof beside);
    if (!path) path = "libtandem_npu_emu.so.0";
    api->libs[0] = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!api->libs[0])
      return TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE,
                         "no NPU: the emulated NPU device '%s' could not be loaded (%s); set "
                         "the runtime option npu_library or TANDEM_NPU_LIBRARY to its path",
                         path, dlerror());
    lookup = api->libs[0];
    /* The path is bounded so the text always fits (-O3 checks that). */
    snprintf(api->description, sizeof api->description, "emulated NPU (CPU test device, %.150s)",
             path);
  } else {
    /* The first library is XRT's device shim: whichever shim is loaded first
     * registers itself as XRT's device system, and XRT then never looks at
     * XCL_EMULATION_MODE. So pick it the way XRT's own shim loader would:
     * XCL_EMULATION_MODE=noop -> libxrt_noop.so.2 (a device that accepts
     * everything and computes nothing; no XILINX_XRT needed), otherwise the
     * hardware shim libxrt_core.so.2 (no device: xrtDeviceOpen returns NULL,
     * errno ENOENT). tests/npu/README-noop.md has the experiments. */
    const char *mode = getenv("XCL_EMULATION_MODE");
    const char *shim = mode && strcmp(mode, "noop") == 0 ? "libxrt_noop.so.2" : "libxrt_core.so.2";
    /* Where XRT lives: $XILINX_XRT/lib when set (what XRT's own setup.sh
     * exports), then the loader's path (Debian's libxrt2), then
     * /opt/xilinx/xrt/lib (AMD's packages, off the loader's path). Both
     * libraries come from the first folder that has the shim. */
    char xilinx[4096] = "";
    const char *root = getenv("XILINX_XRT");
    if (root && root[0]) snprintf(xilinx, sizeof xilinx, "%s/lib", root);
    const char *const folders[3] = {xilinx[0] ? xilinx : NULL, "", "/opt/xilinx/xrt/lib"};
    char why[512] = "";
    for (int f = 0; f < 3 && !api->libs[1]; f++) {
      if (!folders[f]) continue;
      char path[4200];
      snprintf(path, sizeof path, "%s%s%s", folders[f], folders[f][0] ? "/" : "", shim);
      api->libs[0] = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
      if (api->libs[0]) {
        snprintf(path, sizeof path, "%s%slibxrt_coreutil.so.2", folders[f],
                 folders[f][0] ? "/" : "");
        api->libs[1] = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
      }
      if (!api->libs[1]) {
        const char *e = dlerror();
        if (!why[0]) snprintf(why, sizeof why, "%s", e ? e : "dlopen failed");
        if (api->libs[0]) dlclose(api->libs[0]);
        api->libs[0] = NULL;
      }
    }
    if (!api->libs[1]) {
      tandem_xrt_api_unload(api);
      return TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE,
                         "no NPU: XRT is not installed (%s; looked in %s%sthe loader's path and "
                         "/opt/xilinx/xrt/lib); install Debian's libxrt2 or AMD's XRT (set "
                         "XILINX_XRT to its folder), or choose the emulated NPU",
                         why, xilinx[0] ? xilinx : "", xilinx[0] ? ", " : "");
    }
    lookup = api->libs[1];
    /* Name the folder the libraries came from (tandem devices shows it). */
    char origin[PATH_MAX] = "?", folder[PATH_MAX];
    if (dlinfo(api->libs[1], RTLD_DI_ORIGIN, origin) != 0) snprintf(origin, sizeof origin, "?");
    if (realpath(origin, folder)) memcpy(origin, folder, sizeof origin);
    snprintf(api->description, sizeof api->description, "XRT (%s + libxrt_coreutil.so.2 in %.100s)",
             shim, origin);
  }
#define TANDEM_XRT_RESOLVE(name)                                                             \
  *(void **)&api->name = dlsym(lookup, #name);                                               \
  if (!api->name) {                                                                          \
    tandem_xrt_api_unload(api);                                                              \
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "no NPU: the XRT library lacks %s", #name); \
  }
  TANDEM_XRT_SYMBOLS(TANDEM_XRT_RESOLVE)
#undef TANDEM_XRT_RESOLVE
  if (flavor == TANDEM_XRT_EMULATED) {
    *(void **)&api->tandemEmuDeviceFamily = dlsym(lookup, "tandemEmuDeviceFamily");
    *(void **)&api->tandemEmuRunAbort = dlsym(lookup, "tandemEmuRunAbort");
  }
  /* The bridge: the emulator's own symbols, or libtandem_xrt_bridge.so (built
   * against XRT >= 2.17) from TANDEM_XRT_BRIDGE or beside libtandem, loaded
   * after XRT so its XRT symbols resolve to the libraries loaded above. Its
   * absence is normal (XRT 2.13, FPGA-style devices). */
  void *bridge = NULL;
  if (flavor == TANDEM_XRT_EMULATED) {
    bridge = lookup;
    snprintf(api->bridge_description, sizeof api->bridge_description, "the emulated NPU's");
  } else {
    char path[4096];
    const char *env = getenv("TANDEM_XRT_BRIDGE");
    const char *where =
        env && env[0] ? env : tandem_xrt_beside_us("libtandem_xrt_bridge.so", path, sizeof path);
    if (where) api->libs[2] = dlopen(where, RTLD_NOW | RTLD_LOCAL);
    bridge = api->libs[2];
    if (bridge) snprintf(api->bridge_description, sizeof api->bridge_description, "%.150s", where);
  }
  if (bridge) {
    *(void **)&api->tandemBridgeVersion = dlsym(bridge, "tandemBridgeVersion");
    *(void **)&api->tandemBridgeRegisterXclbin = dlsym(bridge, "tandemBridgeRegisterXclbin");
    *(void **)&api->tandemBridgeKernelArgs = dlsym(bridge, "tandemBridgeKernelArgs");
    /* All or nothing, and only of this interface's version. */
    if (!api->tandemBridgeVersion || api->tandemBridgeVersion() != TANDEM_XRT_BRIDGE_VERSION ||
        !api->tandemBridgeRegisterXclbin || !api->tandemBridgeKernelArgs) {
      api->tandemBridgeVersion = NULL;
      api->tandemBridgeRegisterXclbin = NULL;
      api->tandemBridgeKernelArgs = NULL;
      api->bridge_description[0] = '\0';
    }
  }
  /* Tier 1: all its symbols or none; tier 2 on top of it, chosen by the
   * XRT version the bridge reports (full ELF needs XRT >= 2.19). */
  /* clang-format off */
#define TANDEM_BRIDGE_TIER1(X)                                                                 \
  X(tandemBridgeXrtVersion) X(tandemBridgeContextOpen) X(tandemBridgeContextClose)             \
  X(tandemBridgeKernelOpen) X(tandemBridgeKernelClose) X(tandemBridgeKernelGroup)              \
  X(tandemBridgeRunOpen) X(tandemBridgeRunSetBuffer) X(tandemBridgeRunSetU32)                 \
  X(tandemBridgeRunSetU64) X(tandemBridgeRunStart) X(tandemBridgeRunWait)                     \
  X(tandemBridgeRunAbort) X(tandemBridgeRunClose)
  /* clang-format on */
  if (bridge && api->tandemBridgeVersion) {
    bool all = true;
#define TANDEM_BRIDGE_RESOLVE(name)            \
  *(void **)&api->name = dlsym(bridge, #name); \
  all = all && api->name;
    TANDEM_BRIDGE_TIER1(TANDEM_BRIDGE_RESOLVE)
#undef TANDEM_BRIDGE_RESOLVE
    api->bridge_tier1 = all;
    *(void **)&api->tandemBridgeContextOpenElf = dlsym(bridge, "tandemBridgeContextOpenElf");
    api->bridge_tier2 = all && api->tandemBridgeContextOpenElf &&
                        api->tandemBridgeXrtVersion() >= ((2u << 16) + 19u);
    if (!all) {
#define TANDEM_BRIDGE_CLEAR(name) api->name = NULL;
      TANDEM_BRIDGE_TIER1(TANDEM_BRIDGE_CLEAR)
#undef TANDEM_BRIDGE_CLEAR
    }
    if (!api->bridge_tier2) api->tandemBridgeContextOpenElf = NULL;
  }
#undef TANDEM_BRIDGE_TIER1
  return TANDEM_OK;
}
