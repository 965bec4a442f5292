// SPDX-License-Identifier: MIT
//
// xrt_bridge.cpp — tandem's XRT bridge over XRT's C++ API (the C interface
// is internal/xrt_bridge_abi.h). Tier 0: registering an xclbin with the
// device behind a C xrtDeviceHandle, and listing a kernel's arguments from
// the xclbin's metadata. Tier 1: a hardware context per xclbin
// (xrt::hw_context), kernels opened through it, runs with a timed wait that
// reports the final state, and abort (xrt::run::abort). Tier 2: contexts
// from a full ELF (xrt::elf, XRT >= 2.19 only, by version macro). Built as libtandem_xrt_bridge.so only where XRT >= 2.17 headers
// are found (Debian 12 ships 2.13: there it is not built, and it has never
// run on hardware; docs/npu.md says how it was compile-checked). Every entry
// point has C linkage and catches every exception, returning a negative
// errno and XRT's what() text: nothing C++ crosses the interface.

#include "internal/xrt_bridge_abi.h"

#include <cerrno>
#include <cstdio>
#include <exception>
#include <string>
#include <system_error>

#include <chrono>
#include <cstdint>

#include "xrt/xrt_device.h"
#include "xrt/xrt_hw_context.h"
#include "xrt/xrt_kernel.h"
#include "xrt/xrt_bo.h"
// XRT 2.19 moved the experimental headers under xrt/ (npu-research.md's
// version table); 2.17-2.18 have them in experimental/. The branch comes from
// TANDEM_XRT_HEADER_LAYOUT, which CMake sets by probing TANDEM_XRT_INCLUDE_DIR
// (internal/xrt_headers.h says why __has_include cannot: Debian's 2.13 in
// /usr/include/xrt answers for "xrt/experimental/..."); without it (a
// hand-written compile), the root experimental/ copies every version has.
#if defined(TANDEM_XRT_HEADER_LAYOUT) && TANDEM_XRT_HEADER_LAYOUT == 2
#include "xrt/experimental/xrt_xclbin.h"
#include "xrt/experimental/xrt_version.h"
#else
#include "experimental/xrt_xclbin.h"
#include "experimental/xrt_version.h"
#endif
// The headers compiled against are the XRT CMake found (its version.h or
// version-slim.h, reached through xrt/detail/abi.h), not another one earlier
// on the include path.
#if defined(TANDEM_XRT_VERSION_CODE) && defined(XRT_VERSION_CODE)
static_assert(XRT_VERSION_CODE == TANDEM_XRT_VERSION_CODE,
              "XRT headers of another version than TANDEM_XRT_INCLUDE_DIR's are first on the "
              "include path");
#endif
// Tier 2 needs hw_context(device, elf) and xrt::ext::kernel(ctx, name), new
// in XRT 2.19 (read in XRT's headers at 2.19 and at the commit this was
// compile-checked against, docs/npu.md; not verified against every later
// release). XRT_VERSION_CODE comes from xrt/detail/version-slim.h, through
// xrt/detail/abi.h (2.19 onwards); 2.19 is also where the layout changed.
#if defined(XRT_VERSION_CODE) && defined(XRT_VERSION) && XRT_VERSION_CODE >= XRT_VERSION(2, 19) && \
    (!defined(TANDEM_XRT_HEADER_LAYOUT) || TANDEM_XRT_HEADER_LAYOUT == 2) &&                       \
    __has_include("xrt/experimental/xrt_elf.h") && __has_include("xrt/experimental/xrt_ext.h")
#define TANDEM_BRIDGE_TIER2 1
#include "xrt/experimental/xrt_elf.h"
#include "xrt/experimental/xrt_ext.h"
#else
#define TANDEM_BRIDGE_TIER2 0
#endif

namespace {

// Copies |text| into the caller's message buffer (bounded, NUL-terminated).
void tell(char *msg, size_t cap, const std::string &text) {
  if (msg && cap) std::snprintf(msg, cap, "%s", text.c_str());
}

// What a caught exception means: XRT's std::system_error carries an errno
// (ENOTSUP, ENOENT, ...); anything else is EIO with its text.
int fail(char *msg, size_t cap, const std::exception &e) {
  tell(msg, cap, e.what());
  if (auto *se = dynamic_cast<const std::system_error *>(&e)) {
    int code = se->code().value();
    return code > 0 ? -code : -EIO;
  }
  return -EIO;
}

// The C handles of tier 1: plain structs owning the C++ objects.
struct bridge_context {
  xrt::device device;
  xrt::hw_context context;
  bool elf; // made from a full ELF: kernels open as xrt::ext::kernel
};
struct bridge_kernel {
  xrt::kernel kernel;
};
struct bridge_run {
  xrt::run run;
  bool started;
};

// The core device behind a C xrtDeviceHandle (XRT keeps a handle -> device
// map), so objects made here and by the C API share one device.
xrt::device device_of(void *device) {
  return xrt::device{xrtDeviceToXclDevice(static_cast<xrtDeviceHandle>(device))};
}

bool in_flight(ert_cmd_state s) {
  return s == ERT_CMD_STATE_NEW || s == ERT_CMD_STATE_QUEUED || s == ERT_CMD_STATE_RUNNING ||
         s == ERT_CMD_STATE_SUBMITTED;
}

// Runs |body| (returning int), turning every exception into a negative errno
// and its text: nothing C++ crosses the interface.
template <typename F>
int guarded(char *msg, size_t cap, F &&body) {
  try {
    return body();
  } catch (const std::exception &e) {
    return fail(msg, cap, e);
  } catch (...) {
    tell(msg, cap, "XRT threw an exception that is not a std::exception");
    return -EIO;
  }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int tandemBridgeVersion(void) {
  return TANDEM_XRT_BRIDGE_VERSION;
}

__attribute__((visibility("default"))) int tandemBridgeRegisterXclbin(void *device,
                                                                      const char *xclbin_path,
                                                                      char *msg, size_t cap) {
  try {
    // The same core device the C handle uses (XRT keeps a handle -> device
    // map), so xrtPLKernelOpen on that handle then finds the xclbin.
    xrt::device dev{xrtDeviceToXclDevice(static_cast<xrtDeviceHandle>(device))};
    dev.register_xclbin(xrt::xclbin{std::string{xclbin_path}});
    return 0;
  } catch (const std::exception &e) {
    return fail(msg, cap, e);
  } catch (...) {
    tell(msg, cap, "XRT threw an exception that is not a std::exception");
    return -EIO;
  }
}

__attribute__((visibility("default"))) int tandemBridgeKernelArgs(void *device,
                                                                  const char *xclbin_path,
                                                                  const char *kernel, char *kinds,
                                                                  size_t capacity, char *msg,
                                                                  size_t cap) {
  (void)device;
  try {
    xrt::xclbin xclbin{std::string{xclbin_path}};
    xrt::xclbin::kernel k;
    for (const auto &candidate : xclbin.get_kernels())
      if (candidate.get_name() == kernel) k = candidate;
    if (!k) {
      tell(msg, cap, std::string{"no kernel named '"} + kernel + "' in '" + xclbin_path + "'");
      return -ENOENT;
    }
    const auto args = k.get_args();
    if (args.size() + 1 > capacity) {
      tell(msg, cap, "the kernel has more arguments than tandem can check");
      return -ENOSPC;
    }
    for (size_t i = 0; i < capacity; i++) kinds[i] = '\0';
    for (const auto &a : args) {
      size_t index = a.get_index();
      if (index + 1 >= capacity) {
        tell(msg, cap, "a kernel argument index is out of range");
        return -ENOSPC;
      }
      // Buffers are pointers in the metadata ("char *", "uint32_t*");
      // scalars are values whose size says the width.
      const std::string type = a.get_host_type();
      const bool buffer = type.find('*') != std::string::npos;
      kinds[index] = buffer ? 'b' : a.get_size() == 8 ? 'U' : a.get_size() == 4 ? 'u' : '?';
    }
    return static_cast<int>(args.size());
  } catch (const std::exception &e) {
    return fail(msg, cap, e);
  } catch (...) {
    tell(msg, cap, "XRT threw an exception that is not a std::exception");
    return -EIO;
  }
}

}  // extern "C"

// Each entry point below has C linkage and default visibility.
#define TANDEM_BRIDGE_API extern "C" __attribute__((visibility("default")))

// ---- tier 1 -------------------------------------------------------------

TANDEM_BRIDGE_API unsigned tandemBridgeXrtVersion(void) {
  try {
    return xrtVersionCode(); // XRT >= 2.17 (npu-research.md)
  } catch (...) {
    return 0;
  }
}

TANDEM_BRIDGE_API int tandemBridgeContextOpen(void *device, const char *xclbin_path,
                                              void **out_context, char *msg, size_t cap) {
  *out_context = nullptr;
  return guarded(msg, cap, [&] {
    xrt::device dev = device_of(device);
    const xrt::uuid uuid = dev.register_xclbin(xrt::xclbin{std::string{xclbin_path}});
    // Shared access (the default): other processes' contexts may coexist.
    *out_context = new bridge_context{dev, xrt::hw_context{dev, uuid}, false};
    return 0;
  });
}

TANDEM_BRIDGE_API int tandemBridgeContextClose(void *context) {
  return guarded(nullptr, 0, [&] {
    delete static_cast<bridge_context *>(context);
    return 0;
  });
}

TANDEM_BRIDGE_API int tandemBridgeKernelOpen(void *context, const char *name, void **out_kernel,
                                             char *msg, size_t cap) {
  *out_kernel = nullptr;
  return guarded(msg, cap, [&] {
    auto *c = static_cast<bridge_context *>(context);
#if TANDEM_BRIDGE_TIER2
    if (c->elf) {
      *out_kernel = new bridge_kernel{xrt::ext::kernel{c->context, std::string{name}}};
      return 0;
    }
#endif
    *out_kernel = new bridge_kernel{xrt::kernel{c->context, std::string{name}}};
    return 0;
  });
}

TANDEM_BRIDGE_API int tandemBridgeKernelClose(void *kernel) {
  return guarded(nullptr, 0, [&] {
    delete static_cast<bridge_kernel *>(kernel);
    return 0;
  });
}

TANDEM_BRIDGE_API int tandemBridgeKernelGroup(void *kernel, int argno) {
  return guarded(nullptr, 0, [&] {
    // XRT's encoded group id, slot << 16 | bank (xrt_kernel.cpp:2143-2161 at
    // XRT 963c58ee): passed on whole. A scalar's bank field is 0xffff (its
    // no_memidx); older XRT answered -1, or threw, for a non-buffer.
    const int g = static_cast<bridge_kernel *>(kernel)->kernel.group_id(argno);
    return g >= 0 ? g : -EINVAL;
  });
}

TANDEM_BRIDGE_API int tandemBridgeRunOpen(void *kernel, void **out_run, char *msg, size_t cap) {
  *out_run = nullptr;
  return guarded(msg, cap, [&] {
    *out_run = new bridge_run{xrt::run{static_cast<bridge_kernel *>(kernel)->kernel}, false};
    return 0;
  });
}

TANDEM_BRIDGE_API int tandemBridgeRunSetBuffer(void *run, int index, void *bo, char *msg,
                                               size_t cap) {
  return guarded(msg, cap, [&] {
    // xrt::bo(xrtBufferHandle): the C buffer's own object, no copy (it
    // throws for a handle not made by xrtBOAlloc / xrtBOImport).
    static_cast<bridge_run *>(run)->run.set_arg(index, xrt::bo{static_cast<xrtBufferHandle>(bo)});
    return 0;
  });
}

TANDEM_BRIDGE_API int tandemBridgeRunSetU32(void *run, int index, uint32_t value, char *msg,
                                            size_t cap) {
  return guarded(msg, cap, [&] {
    static_cast<bridge_run *>(run)->run.set_arg(index, value); // 4 bytes
    return 0;
  });
}

TANDEM_BRIDGE_API int tandemBridgeRunSetU64(void *run, int index, uint64_t value, char *msg,
                                            size_t cap) {
  return guarded(msg, cap, [&] {
    static_cast<bridge_run *>(run)->run.set_arg(index, value); // 8 bytes
    return 0;
  });
}

TANDEM_BRIDGE_API int tandemBridgeRunStart(void *run, char *msg, size_t cap) {
  return guarded(msg, cap, [&] {
    auto *r = static_cast<bridge_run *>(run);
    r->run.start();
    r->started = true;
    return 0;
  });
}

TANDEM_BRIDGE_API int tandemBridgeRunWait(void *run, unsigned timeout_ms, char *msg, size_t cap) {
  return guarded(msg, cap, [&] {
    auto *r = static_cast<bridge_run *>(run);
    // run::wait, not wait2: tandem wants the state, and wait2 throws for
    // every abnormal one. wait answers TIMEOUT both when the wait ran out
    // and when the driver ended the run; the run's own state tells which.
    ert_cmd_state s = r->run.wait(std::chrono::milliseconds{timeout_ms});
    if (s == ERT_CMD_STATE_TIMEOUT) s = r->run.state();
    return static_cast<int>(s);
  });
}

TANDEM_BRIDGE_API int tandemBridgeRunAbort(void *run, char *msg, size_t cap) {
  return guarded(msg, cap, [&] {
    auto *r = static_cast<bridge_run *>(run);
    const ert_cmd_state s = r->run.state();
    if (!r->started || !in_flight(s)) return static_cast<int>(s);
    // Sends ERT_ABORT and waits (xrt_kernel.cpp:3100-3124 at XRT 963c58ee).
    // amdxdna refuses that command (EOPNOTSUPP, thrown as a system_error and
    // returned as -EOPNOTSUPP by guarded): the caller must not then close the
    // run, which is still in flight.
    return static_cast<int>(r->run.abort());
  });
}

// Never called on a run in flight (xrt_npu.c settles or parks it first):
// ~run_impl would std::abort() the process (xrt_kernel.cpp:2744-2754).
TANDEM_BRIDGE_API int tandemBridgeRunClose(void *run) {
  return guarded(nullptr, 0, [&] {
    delete static_cast<bridge_run *>(run);
    return 0;
  });
}

// ---- tier 2 -------------------------------------------------------------

#if TANDEM_BRIDGE_TIER2
TANDEM_BRIDGE_API int tandemBridgeContextOpenElf(void *device, const char *elf_path,
                                                 void **out_context, char *msg, size_t cap) {
  *out_context = nullptr;
  return guarded(msg, cap, [&] {
    xrt::device dev = device_of(device);
    *out_context = new bridge_context{dev, xrt::hw_context{dev, xrt::elf{std::string{elf_path}}}, true};
    return 0;
  });
}
#endif
