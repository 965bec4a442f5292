/* SPDX-License-Identifier: MIT */
/*
 * spirv_scan.h — tandem's own scanner over validated SPIR-V words
 * (spirv_scan.c): what SPIRV-Cross does not give safely (capabilities,
 * specialization constants, the workgroup size) and the workgroup memory a
 * specialization takes. spirv_reflect.c runs the scan inside reflection;
 * the Vulkan backend asks for the workgroup memory at pipeline creation.
 */
#ifndef TANDEM_BACKENDS_SPIRV_SPIRV_SCAN_H_
#define TANDEM_BACKENDS_SPIRV_SPIRV_SCAN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/kernel_interface.h"

/* Scans validated words (|n| of them, aligned) for capabilities
 * (as shader feature bits), scalar specialization constants, and the
 * workgroup size of GLCompute entry point |entry| with the SpecIds that set
 * it; fills those fields of |out|. Errors as tandem_spirv_reflect (spirv_reflect.h). */
tandem_status_t tandem_spirv_scan(const uint32_t *words, size_t n, const char *entry,
                                  const char *kernel_name, tandem__kernel_interface_t *out);

/* The workgroup (shared) memory the module's Workgroup variables
 * take with the specialization |specs| applied, into |out_bytes|, and
 * whether it could tell (*out_known false, and 0, when a size depends on
 * something it cannot evaluate). Errors: OUT_OF_MEMORY (its scratch). */
tandem_status_t tandem_spirv_workgroup_bytes(const uint32_t *words, size_t n,
                                             const tandem__spec_entry_t *specs, uint32_t spec_count,
                                             uint64_t *out_bytes, bool *out_known);

#endif /* TANDEM_BACKENDS_SPIRV_SPIRV_SCAN_H_ */
