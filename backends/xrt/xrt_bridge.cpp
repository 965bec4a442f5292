// SPDX-License-Identifier: MIT
//
// xrt_bridge.cpp — tandem's XRT bridge over XRT's C++ API (the C interface
// is backends/xrt/xrt_bridge.h): registering an xclbin with the device behind
// a C xrtDeviceHandle, and listing a kernel's arguments from the xclbin's
// metadata. Built as libtandem_xrt_bridge.so only where XRT >= 2.17 headers
// are found (Debian 12 ships 2.13: there it is not built, and it has never
// run on hardware; docs/npu.md says how it was compile-checked). Every entry
// point has C linkage and catches every exception, returning a negative
// errno and XRT's what() text: nothing C++ crosses the interface.

#include "backends/xrt/xrt_bridge.h"

#include <cerrno>
#include <cstdio>
#include <exception>
#include <string>
#include <system_error>

#include "xrt/xrt_device.h"
#include "xrt/experimental/xrt_xclbin.h"

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
