/* SPDX-License-Identifier: MIT */
/*
 * spirv_reflect.h — checks and reflects a SPIR-V compute kernel for both GPU
 * backends (the Vulkan backend, and the host GPU for kernels with C twins).
 * The module is validated in process with SPIRV-Tools (so malformed or
 * hostile bytes never reach SPIRV-Cross or the driver), then reflected with
 * SPIRV-Cross into a tandem__kernel_interface_t that core/kernel.c compares
 * with the user's contract. No Vulkan: backends/spirv/ includes no Vulkan,
 * volk or backend header (tests/core/check_boundary.sh).
 */
#ifndef TANDEM_BACKENDS_SPIRV_SPIRV_REFLECT_H_
#define TANDEM_BACKENDS_SPIRV_SPIRV_REFLECT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/kernel_interface.h"

/* Validates |words| (SPIR-V, |size_bytes| bytes; any alignment) with
 * SPIRV-Tools for Vulkan 1.2 (Vulkan 1.3 for SPIR-V 1.6 modules) and reflects
 * it with SPIRV-Cross. |entry_point| defaults to "main" when NULL;
 * |kernel_name| is used in messages. On success fills |out| (bindings sorted
 * by (set, binding), one entry per descriptor binding); on failure |out| is
 * zeroed. Errors: INVALID_ARGUMENT (NULL words with a size, NULL out),
 * INVALID_KERNEL (not SPIR-V, fails validation, entry point missing or not
 * GLCompute, too many bindings, a workgroup size it cannot tell), CONTRACT
 * (device addresses), UNSUPPORTED (a capability tandem cannot enable),
 * OUT_OF_MEMORY. Never prints. Thread-safe. */
tandem_status_t tandem_spirv_reflect(const void *words, size_t size_bytes, const char *entry_point,
                                     const char *kernel_name, tandem__kernel_interface_t *out);

/* Validates |word_count| aligned words with SPIRV-Tools as tandem_spirv_reflect
 * does (for a module tandem rewrote). Errors: INVALID_KERNEL, OUT_OF_MEMORY.
 * Thread-safe. */
tandem_status_t tandem_spirv_validate(const uint32_t *words, size_t word_count,
                                      const char *kernel_name);

#endif /* TANDEM_BACKENDS_SPIRV_SPIRV_REFLECT_H_ */
