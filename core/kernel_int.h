/* SPDX-License-Identifier: MIT */
/*
 * kernel_int.h — a kernel's layout (kernel.c): its contract and what the
 * module declares. The graph checks dispatches against it; the recorder and
 * the backend use |native|.
 */
#ifndef TANDEM_CORE_KERNEL_INT_H_
#define TANDEM_CORE_KERNEL_INT_H_

#include "core/types.h"

typedef struct tandem__kernel_spec tandem__kernel_spec_t; /* kernel.c */

struct tandem_kernel {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  char name[128];
  uint32_t gpu; /* the runtime's GPU |native| belongs to; never changed */
  uint32_t workgroups[3];
  uint32_t binding_count;
  tandem_binding_contract_t bindings[TANDEM_MAX_BINDINGS];
  uint32_t push_constant_bytes;
  uint32_t local_size[3]; /* effective workgroup size */
  bool local_size_specialized;
  uint32_t shader_features;     /* what the module needs */
  uint32_t spec_constant_count; /* declared by the module */
  uint32_t required_subgroup_size;
  uint64_t shared_memory_bytes; /* 0: the backend could not tell */
  uint32_t flags;               /* tandem_kernel_flag_t bits of the desc */
  bool local_size_overridden;   /* the module's LocalSize was rewritten */
  /* Bindings that may overlap in one dispatch; their bindings[].access is
   * READ_WRITE whatever the desc said (tracked over the union). */
  uint32_t aliased_bindings;
  uint32_t ignored_spec_count; /* given SpecIds the module lacks */
  uint32_t ignored_spec_ids[TANDEM_MAX_SPEC_CONSTANTS];
  tandem__kernel_spec_t *specs; /* spec_constant_count of them, or NULL */
  void *native;
};

#endif /* TANDEM_CORE_KERNEL_INT_H_ */
