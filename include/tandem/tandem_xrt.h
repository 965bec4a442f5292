/* SPDX-License-Identifier: MIT */
/*
 * tandem_xrt.h — what only tandem's XRT NPU backends have.
 *
 * XRT's own words as extensions of tandem.h's structs: the NPU profile
 * (runtime options and NPU info) and programs' argument ABI and XDNA-style
 * instruction streams (program description); and for programs
 * that call XRT themselves on the NPU tandem drives, the XRT buffer object
 * behind a tandem buffer. What every user needs, the NPU device and
 * programs included, is in <tandem/tandem.h>, which this header includes;
 * its Conventions hold here too. What you do with the BO is outside
 * tandem's tracker (tandem.h, "Sharing"): wait for the completions
 * that touch its bytes first, and do not touch bytes that tandem work in
 * flight reads or writes. tandem keeps ownership of the BO: do not free it.
 * It lives as long as the buffer. docs/interop.md has the whole picture.
 */
#ifndef TANDEM_TANDEM_XRT_H_
#define TANDEM_TANDEM_XRT_H_

#include "tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

/*============================================================================
 * XRT profiles
 *============================================================================
 */

/* How tandem speaks to the NPU's XRT: which buffer flags and banks it uses.
 * AUTO (the option's default) follows what the device reports: an amdxdna
 * device (/dev/accel with the amdxdna driver, or the emulated NPU in its
 * default XDNA mode) is XDNA, anything else PLAIN. The chosen profile is in
 * tandem_xrt_npu_info_t.profile. */
typedef enum tandem_npu_profile {
  TANDEM_NPU_PROFILE_AUTO = 0,  /* option value: from what the device reports */
  TANDEM_NPU_PROFILE_PLAIN = 1, /* FPGA-style XRT: buffers with no flags, instruction
                                   buffer in its argument's bank */
  TANDEM_NPU_PROFILE_XDNA = 2,  /* AMD XDNA (Ryzen AI): HOST_ONLY data buffers in bank
                                   0, a CACHEABLE instruction buffer in its argument's
                                   bank; a binding whose kernel argument is in another
                                   bank than 0 is CONTRACT (never a hidden clone) */
} tandem_npu_profile_t;

/* "auto", "plain", "xdna". Thread-safe. */
TANDEM_API const char *tandem_npu_profile_name(tandem_npu_profile_t profile);

/* The type tag of tandem_xrt_runtime_options_t (tandem.h, Conventions,
 * "Extension chains"). */
#define TANDEM_STRUCT_XRT_RUNTIME_OPTIONS 0x58520002u

/* The XRT NPU backends' runtime options, chained from
 * tandem_runtime_options_t.next (read during tandem_runtime_create). None
 * chained: the defaults below. Both "xrt" and "emulated" read it. */
typedef struct tandem_xrt_runtime_options {
  uint32_t struct_size; /* sizeof(tandem_xrt_runtime_options_t) */
  uint32_t type;        /* TANDEM_STRUCT_XRT_RUNTIME_OPTIONS */
  const void *next;     /* the next extension, or NULL */
  /* The NPU profile (AUTO, the default: from what the device reports).
   * TANDEM_NPU_PROFILE=auto|plain|xdna overrides it for a runtime with an
   * XRT NPU backend; another value there fails tandem_runtime_create. */
  tandem_npu_profile_t profile;
} tandem_xrt_runtime_options_t;

/* Zeroes |options|, sets struct_size and type. NULL is ignored. */
static inline void tandem_xrt_runtime_options_init(tandem_xrt_runtime_options_t *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->struct_size = (uint32_t)sizeof *options;
  options->type = TANDEM_STRUCT_XRT_RUNTIME_OPTIONS;
}

/* The type tag of tandem_xrt_npu_info_t. */
#define TANDEM_STRUCT_XRT_NPU_INFO 0x58520003u

/* What tandem_runtime_npu_info tells of an XRT NPU, chained from
 * tandem_npu_info_t.next; filled by the library (its struct_size, type and
 * next are kept as the caller set them). */
typedef struct tandem_xrt_npu_info {
  uint32_t struct_size;         /* sizeof(tandem_xrt_npu_info_t) */
  uint32_t type;                /* TANDEM_STRUCT_XRT_NPU_INFO */
  void *next;                   /* the next extension, or NULL */
  tandem_npu_profile_t profile; /* PLAIN or XDNA: the profile in use */
} tandem_xrt_npu_info_t;

/* Zeroes |info|, sets struct_size and type. NULL is ignored. */
static inline void tandem_xrt_npu_info_init(tandem_xrt_npu_info_t *info) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->struct_size = (uint32_t)sizeof *info;
  info->type = TANDEM_STRUCT_XRT_NPU_INFO;
}

/*============================================================================
 * XRT programs
 *============================================================================
 *
 * What only XRT's programs have: how a kernel's arguments are packed (its
 * ABI) and an instruction stream, in tandem_xrt_program_desc_t chained from
 * tandem_npu_program_desc_t.next. A program with none is PLAIN with no
 * instruction stream. Both NPU backends "xrt" and "emulated" read it (the
 * emulated NPU is an XRT device); another backend refuses it, naming its
 * tag.
 */

/* How an XRT program's kernel arguments are laid out. Checked against the
 * kernel's argument metadata when the program is created (CONTRACT, naming
 * the argument). "data" is the bindings, then the scalars. */
typedef enum tandem_npu_abi {
  /* [instruction buffer, u32 word count] when instructions are given, then
   * data; the kernel takes exactly these arguments (FPGA-style kernels). */
  TANDEM_NPU_ABI_PLAIN = 0,
  /* mlir-aie / IRON xclbin kernels: opcode (u64 3), the instruction buffer
   * (instructions required), its u32 word count, data from argument 3.
   * Buffer arguments after the data may stay unset (aiecc declares five). */
  TANDEM_NPU_ABI_DPU = 1,
  /* xclbin + ELF module kernels (XRT >= 2.16): opcode 3, then arguments 1 and
   * 2 left zero (the instruction stream is the module's), data from 3. No
   * instructions. Trailing buffers may stay unset. */
  TANDEM_NPU_ABI_DPU_MODULE = 2,
  /* full-ELF kernels (XRT >= 2.19): data from argument 0. No instructions.
   * Trailing buffers may stay unset. */
  TANDEM_NPU_ABI_ELF = 3,
} tandem_npu_abi_t;

/* "plain", "dpu", "dpu_module", "elf". Thread-safe. */
TANDEM_API const char *tandem_npu_abi_name(tandem_npu_abi_t abi);

/* The type tag of tandem_xrt_program_desc_t (Conventions, "Extension
 * chains"). */
#define TANDEM_STRUCT_XRT_PROGRAM_DESC 0x58520001u

typedef struct tandem_xrt_program_desc {
  uint32_t struct_size;     /* sizeof(tandem_xrt_program_desc_t) */
  uint32_t type;            /* TANDEM_STRUCT_XRT_PROGRAM_DESC */
  const void *next;         /* the next extension, or NULL */
  tandem_npu_abi_t abi;     /* how the arguments are packed; default PLAIN */
  const void *instructions; /* optional instruction stream (XDNA-style), copied */
  size_t instruction_bytes; /* a positive multiple of 4 with instructions, else 0 */
} tandem_xrt_program_desc_t;

/* Zeroes |desc|, sets struct_size and type. NULL is ignored. */
static inline void tandem_xrt_program_desc_init(tandem_xrt_program_desc_t *desc) {
  if (!desc) return;
  memset(desc, 0, sizeof *desc);
  desc->struct_size = (uint32_t)sizeof *desc;
  desc->type = TANDEM_STRUCT_XRT_PROGRAM_DESC;
}

/*============================================================================
 * XRT buffer objects
 *============================================================================ */

/* The XRT buffer object (xrtBufferHandle, as void *) of a SHARED or
 * NPU_LOCAL |buffer|, in |*out_bo|. It belongs to the XRT library tandem
 * loaded (tandem_npu_info_t.backend names it; for the emulated NPU, the
 * emulator's), so only that library's functions may be called on it.
 * Offsets in views of the buffer are offsets in the BO. Errors:
 * INVALID_ARGUMENT (NULL), UNSUPPORTED (the runtime has no NPU open, or a
 * GPU_LOCAL / HOST_VISIBLE buffer: no BO). Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_xrt_bo(tandem_buffer_t *buffer, void **out_bo);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_TANDEM_XRT_H_ */
