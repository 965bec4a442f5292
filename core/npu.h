/* SPDX-License-Identifier: MIT */
/*
 * npu.h — what core may call of npu.c: the runtime's NPU, opened on first
 * use, the NPU side of buffers, and program references.
 */
#ifndef TANDEM_CORE_NPU_H_
#define TANDEM_CORE_NPU_H_

#include "core/types.h"

tandem_status_t tandem__runtime_npu(tandem_runtime_t *runtime, tandem__npu_t **out_npu);
/* Makes the NPU and GPU sides of a SHARED or NPU_LOCAL buffer. */
tandem_status_t tandem__npu_buffer_create(tandem_runtime_t *runtime, tandem_buffer_t *buffer);
void tandem__npu_buffer_destroy(tandem_runtime_t *runtime, tandem_buffer_t *buffer);
void tandem__npu_program_retain(tandem_npu_program_t *program);

#endif /* TANDEM_CORE_NPU_H_ */
