/* SPDX-License-Identifier: MIT */
/*
 * npu_emulated.h — what core may call of npu_emulated.c: where the emulated
 * NPU's xclbin is.
 */
#ifndef TANDEM_CORE_NPU_EMULATED_H_
#define TANDEM_CORE_NPU_EMULATED_H_

#include "tandem/tandem.h"

/* npu_emulated.c: |program_path| itself, or for "@emulated" the emulated
 * NPU's xclbin (IO naming the fix when it cannot be found). */
tandem_status_t tandem__npu_xclbin_resolve(const char *program_path, const char *name,
                                           const char **out_path);

#endif /* TANDEM_CORE_NPU_EMULATED_H_ */
