/* SPDX-License-Identifier: MIT */
/*
 * runtime.h — what core may call of runtime.c: a runtime's references and
 * its GPU, opened on first use.
 */
#ifndef TANDEM_CORE_RUNTIME_H_
#define TANDEM_CORE_RUNTIME_H_

#include "core/types.h"

void tandem__runtime_retain(tandem_runtime_t *runtime);
void tandem__runtime_release(tandem_runtime_t *runtime);
/* Opens GPU 0 on first use; returns it (borrowed) in |out_gpu|. */
tandem_status_t tandem__runtime_gpu(tandem_runtime_t *runtime, tandem__gpu_t **out_gpu);
/* OUT_OF_RANGE, with the count, unless |g| is one of the runtime's GPUs. */
tandem_status_t tandem__runtime_gpu_check(const tandem_runtime_t *runtime, uint32_t g);
/* The same for GPU |g| (OUT_OF_RANGE past the runtime's GPUs). */
tandem_status_t tandem__runtime_gpu_at(tandem_runtime_t *runtime, uint32_t g,
                                       tandem__gpu_t **out_gpu);

#endif /* TANDEM_CORE_RUNTIME_H_ */
