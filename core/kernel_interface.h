/* SPDX-License-Identifier: MIT */
/*
 * kernel_interface.h — what a backend learned about a kernel's code by
 * reflecting it (bindings, their writability, push-constant size, workgroup
 * size, specialization constants, the shader features it needs). Backends fill
 * it; core/kernel.c compares it with the user's contract and desc, so the
 * comparison and its messages are written once for every backend.
 */
#ifndef TANDEM_CORE_KERNEL_INTERFACE_H_
#define TANDEM_CORE_KERNEL_INTERFACE_H_

#include <stdbool.h>
#include <stdint.h>

#include "tandem/tandem.h"

typedef struct tandem__reflected_binding {
  uint32_t set;
  uint32_t binding;
  bool is_storage_buffer; /* false: some other descriptor type (uniform, image...) */
  bool writable;          /* false only when the shader declares it NonWritable */
  bool readable;          /* false only when the shader declares it NonReadable */
} tandem__reflected_binding_t;

/* The kind of a scalar specialization constant as declared. */
typedef enum tandem__spec_kind {
  TANDEM__SPEC_BOOL,
  TANDEM__SPEC_INT, /* integer; |is_signed| says which */
  TANDEM__SPEC_FLOAT,
} tandem__spec_kind_t;

/* One OpSpecConstant / OpSpecConstantTrue / OpSpecConstantFalse with a SpecId.
 * Several may share a SpecId (see tandem.h). */
typedef struct tandem__reflected_spec {
  uint32_t spec_id;
  tandem__spec_kind_t kind;
  uint32_t width;        /* bits: 1 for bool, 8, 16, 32 or 64 */
  bool is_signed;        /* INT only */
  uint64_t default_bits; /* the default value's bits, zero-extended */
  char name[64];         /* its OpName (truncated), "" when the module has none */
} tandem__reflected_spec_t;

#define TANDEM__MAX_REFLECTED_SPECS 256

/* The workgroup (shared) memory a kernel takes, as terms of its
 * specialization: array lengths of Workgroup variables are often spec
 * constants or expressions of them, so the size is known only once core has
 * chosen the values. The reflection scan (backends/spirv/spirv_scan.c) writes
 * the size as a straight-line program, and pipeline creation evaluates it
 * (tandem_spirv_workgroup_bytes) without walking the module again. Node i
 * reads only nodes before it (a, b < i); the last node is the total.
 * Constant parts are folded by the scan, so a module without spec-sized
 * workgroup memory is one CONST node. */
typedef enum tandem__wg_op {
  TANDEM__WG_CONST,     /* value */
  TANDEM__WG_SPEC,      /* the bits given for SpecId spec_id, else value (its default) */
  TANDEM__WG_SPEC_BOOL, /* as SPEC for a bool constant: given bits != 0 */
  /* a op b, wrapping (OpSpecConstantOp's integer operations); UDIV and UMOD
   * by 0 leave the size unknown, shifts by 64 or more give 0; CONVERT is a. */
  TANDEM__WG_ADD,
  TANDEM__WG_SUB,
  TANDEM__WG_MUL,
  TANDEM__WG_UDIV,
  TANDEM__WG_UMOD,
  TANDEM__WG_SHR,
  TANDEM__WG_SHL,
  TANDEM__WG_OR,
  TANDEM__WG_XOR,
  TANDEM__WG_AND,
  TANDEM__WG_CONVERT,
  TANDEM__WG_ARRAY, /* a * b, an array's bytes: unknown when it passes 2^64 */
  TANDEM__WG_ALIGN, /* a rounded up to a multiple of value (>= 1) */
} tandem__wg_op_t;

typedef struct tandem__wg_node {
  uint8_t op; /* tandem__wg_op_t */
  uint16_t a, b;
  uint32_t spec_id;
  uint64_t value;
} tandem__wg_node_t;

#define TANDEM__MAX_WG_NODES 256

typedef struct tandem__wg_terms {
  /* false: a size the scan cannot evaluate whatever the values (or a
   * backend that does not say); pipeline creation then reports 0 and
   * checks no limit. */
  bool known;
  uint32_t count;
  tandem__wg_node_t nodes[TANDEM__MAX_WG_NODES];
} tandem__wg_terms_t;

typedef struct tandem__kernel_interface {
  uint32_t binding_count;
  tandem__reflected_binding_t bindings[TANDEM_MAX_BINDINGS * 2];
  uint32_t push_constant_bytes; /* declared size of the push-constant block, 0 if none */
  /* Workgroup size: per dimension either a literal (local_size_spec[d] < 0)
   * or the SpecId of the constant that sets it, whose default is in
   * local_size[d]. */
  uint32_t local_size[3];
  int64_t local_size_spec[3];
  /* Word index of the entry point's OpExecutionMode LocalSize when it is
   * what sets the literal dimensions (so they can be rewritten); 0 when
   * the size comes from LocalSizeId or a WorkgroupSize built-in. */
  uint32_t local_size_mode_at;
  uint32_t spirv_version; /* the module header's version word */
  uint32_t spec_count;
  tandem__reflected_spec_t specs[TANDEM__MAX_REFLECTED_SPECS];
  uint32_t shader_features;     /* tandem_shader_feature_t bits the module needs */
  tandem__wg_terms_t workgroup; /* its workgroup memory, for kernel_create */
} tandem__kernel_interface_t;

/* A resolved specialization entry handed to the backend: the bytes Vulkan's
 * VkSpecializationInfo wants for that SpecId (4 for bool and 32-bit, 8 for
 * 64-bit types). */
typedef struct tandem__spec_entry {
  uint32_t spec_id;
  uint32_t size;
  uint64_t bits;
} tandem__spec_entry_t;

/* What core/kernel.c decided and the backend builds the pipeline from. */
typedef struct tandem__kernel_build {
  const void *spirv;
  size_t spirv_size;
  const char *entry_point;
  uint32_t binding_count;
  uint32_t push_constant_bytes;
  uint32_t spec_count;
  tandem__spec_entry_t specs[TANDEM__MAX_REFLECTED_SPECS];
  uint32_t required_subgroup_size; /* 0: none */
  uint32_t flags;                  /* tandem_kernel_flag_t bits of the desc */
  /* The effective workgroup size; with |rewrite_local_size| the operands of
   * the LocalSize instruction at word |local_size_mode_at| become it in the
   * copy of the module the pipeline is built from. */
  uint32_t local_size[3];
  bool rewrite_local_size;
  uint32_t local_size_mode_at;
  uint32_t spirv_version;
  /* SpecIds given that the module does not declare (not passed on). */
  uint32_t ignored_count;
  uint32_t ignored_ids[TANDEM_MAX_SPEC_CONSTANTS];
  /* The reflection's workgroup-memory terms (copied by core/kernel.c). */
  tandem__wg_terms_t workgroup;
  /* Out: workgroup memory the kernel takes with this specialization, 0 when
   * the backend cannot tell (set by kernel_create). */
  uint64_t shared_memory_bytes;
} tandem__kernel_build_t;

#endif /* TANDEM_CORE_KERNEL_INTERFACE_H_ */
