/* SPDX-License-Identifier: MIT */
/*
 * vk_reflect.h — checks and reflects a SPIR-V compute kernel for the Vulkan
 * backend. The module is validated in process with SPIRV-Tools (so malformed
 * or hostile bytes never reach SPIRV-Cross or the driver), then reflected with
 * SPIRV-Cross into a tandem__kernel_interface_t that core/kernel.c compares
 * with the user's contract.
 */
#ifndef TANDEM_BACKENDS_VULKAN_VK_REFLECT_H_
#define TANDEM_BACKENDS_VULKAN_VK_REFLECT_H_

#include <stddef.h>

#include "core/kernel_interface.h"

/* Validates |words| (SPIR-V, |size_bytes| bytes; any alignment) with
 * SPIRV-Tools for Vulkan 1.2 (Vulkan 1.3 for SPIR-V 1.6 modules) and reflects
 * it with SPIRV-Cross. |entry_point| defaults to "main" when NULL;
 * |kernel_name| is used in messages. On success fills |out| (bindings sorted
 * by (set, binding), one entry per descriptor binding); on failure |out| is
 * zeroed. Errors: INVALID_ARGUMENT (NULL words with a size, NULL out),
 * INVALID_KERNEL (not SPIR-V, fails validation, entry point missing or not
 * GLCompute, too many bindings), OUT_OF_MEMORY. Never prints. Thread-safe. */
tandem_status_t tandem_vk_reflect(const void *words, size_t size_bytes, const char *entry_point,
                                  const char *kernel_name, tandem__kernel_interface_t *out);

#endif /* TANDEM_BACKENDS_VULKAN_VK_REFLECT_H_ */
