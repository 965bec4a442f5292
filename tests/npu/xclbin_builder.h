/* SPDX-License-Identifier: MIT */
/*
 * xclbin_builder.h — test helper: hand-made xclbin files for real XRT's noop
 * shim (2.13: tests/npu/test_xrt_noop.c, README-noop.md; 2.17: the DPU shape
 * below).
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
 *
 * The _dpu variants write the xclbin mlir-aie's aiecc makes for an NPU
 * (xclbinutil --add-kernel on its kernels.json, for XRT >= 2.17's noop
 * shim, tests/npu/test_bridge_xrt_real.c):
 *   MEM_TOPOLOGY       bank 0 "HOST", bank 1 "SRAM" (MEM_DRAM)
 *   IP_LAYOUT          one IP_PS_KERNEL "<kernel>:<instance>", subtype DPU,
 *                      kernel id 0x901
 *   CONNECTIVITY       instr -> bank 1, bo0.. -> bank 0
 *   EMBEDDED_METADATA  kernel type "dpu": opcode (uint64_t), instr (char *),
 *                      ninstr (uint32_t), bo0.. (void*)
 * The AIE_PARTITION section (the PDI) is left out: noop never reads it.
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

/* The DPU kernel's IP_LAYOUT / extended-data values, as aiecc writes them
 * ("subtype": "DPU", "functional": "0", "dpu_kernel_id": "0x901"). */
#define TANDEM_TEST_DPU_SUBTYPE 1    /* ST_DPU */
#define TANDEM_TEST_DPU_FUNCTIONAL 0 /* FC_DPU */
#define TANDEM_TEST_DPU_KERNEL_ID 0x901
#define TANDEM_TEST_DPU_MAX_BUFFERS 5 /* aiecc declares bo0..bo4 */

/* A DPU-shaped xclbin (above) with kernel |kernel| (aiecc: "MLIR_AIE"),
 * instance |instance| ("MLIRAIE") and |data_buffers| (1..5) data arguments
 * bo0..; arguments 0-2 are opcode, instr, ninstr. Returns 0 or -1 as
 * tandem_test_xclbin_build. */
int tandem_test_xclbin_build_dpu(const char *kernel, const char *instance, int data_buffers,
                                 void **out_data, size_t *out_size, unsigned char out_uuid[16]);
int tandem_test_xclbin_write_dpu(const char *path, const char *kernel, const char *instance,
                                 int data_buffers, unsigned char out_uuid[16]);

#endif /* TANDEM_TESTS_NPU_XCLBIN_BUILDER_H_ */
