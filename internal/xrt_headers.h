/* SPDX-License-Identifier: MIT */
/*
 * xrt_headers.h — XRT's C API headers (2.13 and later), included once for every user
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
/* Where the experimental headers are: TANDEM_XRT_HEADER_LAYOUT, which the
 * top CMakeLists.txt sets by probing TANDEM_XRT_INCLUDE_DIR itself (never
 * __has_include: with Debian's libxrt-dev installed, /usr/include/xrt is XRT
 * 2.13's root, so "xrt/experimental/..." resolves to 2.13's copy from
 * /usr/include whatever XRT tandem was pointed at):
 *   1  experimental/xrt_xclbin.h at the root: Debian's 2.13, AMD's 2.17-2.18
 *   2  xrt/experimental/xrt_xclbin.h: XRT 2.19 and later (whose root
 *      experimental/ still has forwarding copies that print a #pragma message)
 * Without the define (a hand-written compile command), the root copy, which
 * every version from 2.13 to 2.26-dev has and nothing shadows. */
#if defined(TANDEM_XRT_HEADER_LAYOUT) && TANDEM_XRT_HEADER_LAYOUT == 2
#include "xrt/experimental/xrt_xclbin.h"
#else
#include "experimental/xrt_xclbin.h"
#endif
#include "xrt/xrt_bo.h"
#include "xrt/xrt_device.h"
#include "xrt/xrt_kernel.h"
#pragma GCC diagnostic pop

#endif /* TANDEM_INTERNAL_XRT_HEADERS_H_ */
