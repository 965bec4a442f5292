/* SPDX-License-Identifier: MIT */
/*
 * xrt_headers.h — the XRT 2.13 C API headers, included once for every user
 * (the backend, the emulated NPU, its tests, the npu-edge benchmark): below
 * all of them, in internal/ (internal/CMakeLists.txt, target tandem_internal).
 *
 * XRT's headers declare a few functions without prototypes (`xclProbe()`),
 * which -Wstrict-prototypes rejects under -Werror. They are system headers on
 * Debian, but on the GPU machine they arrive through CPATH, which GCC treats
 * as an ordinary include directory; so the warning is silenced here, for these
 * headers only, whatever the include path.
 */
#ifndef TANDEM_INTERNAL_XRT_HEADERS_H_
#define TANDEM_INTERNAL_XRT_HEADERS_H_

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include "xrt/experimental/xrt_xclbin.h"
#include "xrt/xrt_bo.h"
#include "xrt/xrt_device.h"
#include "xrt/xrt_kernel.h"
#pragma GCC diagnostic pop

#endif /* TANDEM_INTERNAL_XRT_HEADERS_H_ */
