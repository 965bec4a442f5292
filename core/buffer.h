/* SPDX-License-Identifier: MIT */
/*
 * buffer.h — what core may call of buffer.c: making buffers of every kind,
 * and checking views.
 */
#ifndef TANDEM_CORE_BUFFER_H_
#define TANDEM_CORE_BUFFER_H_

#include "core/types.h"
#include "tandem/tandem_vulkan.h"

/* buffer.c: budget → device memory → counters, for every kind of creation:
 * ordinary (export_types 0, import NULL), exportable, or imported (|import|;
 * placement GPU_LOCAL or HOST_VISIBLE). Placement and size already checked. */
tandem_status_t tandem__buffer_make(tandem_runtime_t *runtime, uint64_t size,
                                    tandem_placement_t placement, uint32_t export_types,
                                    const tandem_external_memory_t *import,
                                    tandem_buffer_t **out_buffer);
/* As tandem__buffer_make on the runtime's GPU |gpu| (checked against
 * gpu_count), or the application's buffer (|adopt|, core/adopt.c): the budget
 * is charged 0 when adopt->budget_charged. */
tandem_status_t tandem__buffer_make_on(tandem_runtime_t *runtime, uint32_t gpu, uint64_t size,
                                       tandem_placement_t placement, uint32_t export_types,
                                       const tandem_external_memory_t *import,
                                       const tandem_vulkan_buffer_t *adopt,
                                       tandem_buffer_t **out_buffer);
/* The staging of a copy from GPU |from| to GPU |to| of |bytes| (rounded up to
 * both GPUs' host-import alignment): host memory imported into both, as two
 * HOST_VISIBLE buffers whose accesses are tracked as one (buffer_int.h).
 * UNSUPPORTED when either GPU cannot import host memory; charged to the
 * budget. *out_to keeps *out_from alive. */
tandem_status_t tandem__buffer_staging_pair(tandem_runtime_t *rt, uint32_t from, uint32_t to,
                                            uint64_t bytes, tandem_buffer_t **out_from,
                                            tandem_buffer_t **out_to);
/* buffer.c: checks that |view| is well-formed and belongs to |runtime|;
 * |what| names it. */
tandem_status_t tandem__view_check(tandem_runtime_t *runtime, tandem_view_t view, const char *what);

#endif /* TANDEM_CORE_BUFFER_H_ */
