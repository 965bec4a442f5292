/* SPDX-License-Identifier: MIT */
/*
 * npu_int.h — an NPU program's layout (npu.c): its contract, which the graph
 * checks runs against and accesses (access.c) are derived from.
 */
#ifndef TANDEM_CORE_NPU_INT_H_
#define TANDEM_CORE_NPU_INT_H_

#include "core/types.h"

struct tandem_npu_program {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  char name[128];
  uint32_t binding_count;
  uint32_t scalar_count; /* 32-bit words (a U64 scalar is two) */
  tandem_binding_contract_t bindings[TANDEM_MAX_BINDINGS];
  void *native;
};

#endif /* TANDEM_CORE_NPU_INT_H_ */
