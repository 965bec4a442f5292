/* SPDX-License-Identifier: MIT */
/*
 * spirv_reflect.h — checks and reflects a SPIR-V compute kernel for the Vulkan
 * backend. The module is validated in process with SPIRV-Tools (so malformed
 * or hostile bytes never reach SPIRV-Cross or the driver), then reflected with
 * SPIRV-Cross into a tandem__kernel_interface_t that core/kernel.c compares
 * with the user's contract.
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
tandem_status_t tandem_vk_reflect(const void *words, size_t size_bytes, const char *entry_point,
                                  const char *kernel_name, tandem__kernel_interface_t *out);

/* Validates |word_count| aligned words with SPIRV-Tools as tandem_vk_reflect
 * does (for a module tandem rewrote). Errors: INVALID_KERNEL, OUT_OF_MEMORY.
 * Thread-safe. */
tandem_status_t tandem_vk_spirv_validate(const uint32_t *words, size_t word_count,
                                         const char *kernel_name);

/* spirv_scan.c: scans validated words (|n| of them, aligned) for capabilities
 * (as shader feature bits), scalar specialization constants, and the
 * workgroup size of GLCompute entry point |entry| with the SpecIds that set
 * it; fills those fields of |out|. Errors as tandem_vk_reflect. */
tandem_status_t tandem_vk_spirv_scan(const uint32_t *words, size_t n, const char *entry,
                                     const char *kernel_name, tandem__kernel_interface_t *out);

/* spirv_scan.c: the workgroup (shared) memory the module's Workgroup variables
 * take with the specialization |specs| applied, into |out_bytes|, and
 * whether it could tell (*out_known false, and 0, when a size depends on
 * something it cannot evaluate). Errors: OUT_OF_MEMORY (its scratch). */
tandem_status_t tandem_vk_spirv_workgroup_bytes(const uint32_t *words, size_t n,
                                                const tandem__spec_entry_t *specs,
                                                uint32_t spec_count, uint64_t *out_bytes,
                                                bool *out_known);

#endif /* TANDEM_BACKENDS_SPIRV_SPIRV_REFLECT_H_ */
