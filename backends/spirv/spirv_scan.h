/* SPDX-License-Identifier: MIT */
/*
 * spirv_scan.h — tandem's own scanner over validated SPIR-V words
 * (spirv_scan.c): what SPIRV-Cross does not give safely (capabilities,
 * specialization constants, the workgroup size, the workgroup memory as terms
 * of the specialization). spirv_reflect.c runs the scan inside reflection;
 * the Vulkan backend evaluates the terms at pipeline creation.
 */
#ifndef TANDEM_BACKENDS_SPIRV_SPIRV_SCAN_H_
#define TANDEM_BACKENDS_SPIRV_SPIRV_SCAN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/kernel_interface.h"

/* Scans validated words (|n| of them, aligned) for capabilities
 * (as shader feature bits), scalar specialization constants, the
 * workgroup size of GLCompute entry point |entry| with the SpecIds that set
 * it, and the Workgroup variables' size as terms (out->workgroup); fills those
 * fields of |out|. One walk of the module, counted (tandem_spirv_walks).
 * Errors as tandem_spirv_reflect (spirv_reflect.h); INVALID_KERNEL too when
 * the workgroup memory needs more than TANDEM__MAX_WG_NODES terms. */
tandem_status_t tandem_spirv_scan(const uint32_t *words, size_t n, const char *entry,
                                  const char *kernel_name, tandem__kernel_interface_t *out);

/* The workgroup (shared) memory a module takes with the specialization
 * |specs| applied, from the terms tandem_spirv_scan wrote (|terms|; no walk of
 * the module), into |out_bytes|; false (and 0) when it cannot tell: terms
 * unknown, or a division by 0 or an array past 2^64 bytes with these values.
 * Allocates nothing. */
bool tandem_spirv_workgroup_bytes(const tandem__wg_terms_t *terms,
                                  const tandem__spec_entry_t *specs, uint32_t spec_count,
                                  uint64_t *out_bytes);

/* How many times tandem_spirv_scan has walked a module, process-wide (one
 * per kernel load: tests/core/test_spirv_walks.c). */
uint64_t tandem_spirv_walks(void);

#endif /* TANDEM_BACKENDS_SPIRV_SPIRV_SCAN_H_ */
