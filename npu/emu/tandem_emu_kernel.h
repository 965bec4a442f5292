/* SPDX-License-Identifier: MIT */
/*
 * tandem_emu_kernel.h — the kernel ABI of tandem's emulated NPU device.
 *
 * The emulated NPU is a test and development device, not hardware. Its
 * "xclbin" names a native shared library; that library exports one function,
 * tandem_emu_kernels(), returning a table of kernels. The emulator calls a
 * kernel's run() on its worker thread with the arguments of an xrtRun: buffer
 * objects as (device-side pointer, size), scalars as values. Shared by the
 * emulator (npu/emu/emulator.c) and every kernels library (npu/emu/kernels.c).
 */
#ifndef TANDEM_NPU_EMU_TANDEM_EMU_KERNEL_H_
#define TANDEM_NPU_EMU_TANDEM_EMU_KERNEL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One character per argument in tandem_emu_kernel_t.arg_kinds. */
typedef enum tandem_emu_arg_kind {
  TANDEM_EMU_ARG_BO = 'b',  /* buffer object: xrtRunSetArg reads an xrtBufferHandle */
  TANDEM_EMU_ARG_U32 = 'u', /* 32-bit scalar: xrtRunSetArg reads an unsigned int */
  TANDEM_EMU_ARG_U64 = 'U', /* 64-bit scalar: xrtRunSetArg reads a uint64_t */
} tandem_emu_arg_kind_t;

/* BO: ptr + size of the device-side copy (value is 0); scalar: value (ptr NULL, size 0). */
typedef struct tandem_emu_arg {
  void *ptr;
  size_t size;
  uint64_t value;
} tandem_emu_arg_t;

typedef struct tandem_emu_kernel {
  const char *name;      /* the name xrtPLKernelOpen looks up */
  const char *arg_kinds; /* one tandem_emu_arg_kind_t per argument, e.g. "bbbu" */
  /* 0 on success; nonzero = the run ends in ERT_CMD_STATE_ERROR. May check
   * sizes. |count| == strlen(arg_kinds). Runs on the emulator's worker thread. */
  int (*run)(const tandem_emu_arg_t *args, uint32_t count);
  /* Optional: the memory bank (group id) of each argument, one character per
   * argument as in arg_kinds: '0'..'9' for a buffer, anything for a scalar.
   * NULL: every buffer is in bank 0. The XDNA mode refuses a buffer of
   * another bank (where real XRT would clone it into the right one). */
  const char *arg_banks;
} tandem_emu_kernel_t;

/* The symbol every kernels library exports (default visibility). Returns a
 * table valid until the library is unloaded; *out_count = its length. */
#define TANDEM_EMU_KERNELS_SYMBOL "tandem_emu_kernels"
typedef const tandem_emu_kernel_t *(*tandem_emu_kernels_fn)(uint32_t *out_count);

#if defined(__GNUC__)
#define TANDEM_EMU_KERNELS_EXPORT __attribute__((visibility("default")))
#else
#define TANDEM_EMU_KERNELS_EXPORT
#endif

TANDEM_EMU_KERNELS_EXPORT const tandem_emu_kernel_t *tandem_emu_kernels(uint32_t *out_count);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_NPU_EMU_TANDEM_EMU_KERNEL_H_ */
