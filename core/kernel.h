/* SPDX-License-Identifier: MIT */
/*
 * kernel.h — what core may call of kernel.c: loading a kernel, its own or
 * the application's pipeline (adopt.c).
 */
#ifndef TANDEM_CORE_KERNEL_H_
#define TANDEM_CORE_KERNEL_H_

#include "core/types.h"
#include "tandem/tandem_vulkan.h"

/* kernel.c: loads |desc| (tandem_kernel_create's checks, in order), then
 * builds the pipeline, or with |adopt| wraps the application's (core/adopt.c). */
tandem_status_t tandem__kernel_load(tandem_runtime_t *runtime, const tandem_kernel_desc_t *desc,
                                    const tandem_vulkan_kernel_t *adopt,
                                    tandem_kernel_t **out_kernel);

#endif /* TANDEM_CORE_KERNEL_H_ */
