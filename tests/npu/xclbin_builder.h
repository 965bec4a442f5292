/* SPDX-License-Identifier: MIT */
/*
 * xclbin_builder.h — test helper: hand-made xclbin files for real XRT 2.13's
 * noop shim (tests/npu/test_xrt_noop.c, README-noop.md).
 *
 * The file is a struct axlf (xrt/xclbin.h: magic "xclbin2", header, section
 * headers) with the four sections XRT needs to load it and open a kernel:
 *   MEM_TOPOLOGY       one used DDR bank "bank0" (1 GiB at address 0)
 *   IP_LAYOUT          one IP_KERNEL "<kernel>:<kernel>_1", AP_CTRL_HS, at
 *                      TANDEM_TEST_XCLBIN_CU_BASE
 *   CONNECTIVITY       every buffer argument of that CU -> bank 0
 *   EMBEDDED_METADATA  the XML XRT parses for kernel names and arguments
 *                      (project/platform/device/core/kernel/arg)
 * Each call gets a fresh random uuid (version 4), returned in |out_uuid|.
 * Nothing here computes anything; it is only good for the noop shim.
 */
#ifndef TANDEM_TESTS_NPU_XCLBIN_BUILDER_H_
#define TANDEM_TESTS_NPU_XCLBIN_BUILDER_H_

#include <stddef.h>

#define TANDEM_TEST_XCLBIN_CU_BASE 0x1800000ull

/* Builds the xclbin in memory. |kernel|: kernel name (at most 30 chars);
 * |arg_names|/|arg_is_buffer|: |argc| (1..32) arguments in order; a buffer is
 * a global pointer ("int*", addressQualifier 1) connected to bank 0, anything
 * else a 32-bit scalar ("uint", addressQualifier 0). On success returns 0 and
 * a malloc'ed image in |*out_data| (free() it) of |*out_size| bytes; on
 * failure returns -1 and writes a reason to stderr. */
int tandem_test_xclbin_build(const char *kernel, const char *const *arg_names,
                             const int *arg_is_buffer, int argc, void **out_data, size_t *out_size,
                             unsigned char out_uuid[16]);

/* Same, written to |path| (created or truncated). Returns 0 or -1. */
int tandem_test_xclbin_write(const char *path, const char *kernel, const char *const *arg_names,
                             const int *arg_is_buffer, int argc, unsigned char out_uuid[16]);

#endif /* TANDEM_TESTS_NPU_XCLBIN_BUILDER_H_ */
