/* SPDX-License-Identifier: MIT */
/*
 * types.h — core's types by name only, as SQLite's btree.h declares `Btree`
 * over btreeInt.h: module interfaces (core/X.h beside core/X.c) speak of
 * slots, nodes, plans and records through these forward declarations and
 * never include a layout (*_int.h), so including a module's calls hands
 * the reader no fields. A .c file includes the layouts it really reads;
 * tests/core/check_modules.sh holds both rules, and which files may include
 * which layout. The lane-count constant and the backend types come with
 * the backend interfaces (backend.h, npu_backend.h), which are not modules.
 */
#ifndef TANDEM_CORE_TYPES_H_
#define TANDEM_CORE_TYPES_H_

#include "core/backend.h"
#include "core/npu_backend.h"
#include "tandem/tandem.h"

/* runtime_int.h */
typedef struct tandem__slot tandem__slot_t;
typedef struct tandem__npu_job tandem__npu_job_t;
typedef struct tandem__npu_lane tandem__npu_lane_t;
/* buffer_int.h */
typedef struct tandem__record tandem__record_t;
typedef struct tandem__poison tandem__poison_t;
typedef struct tandem__host_map tandem__host_map_t;
/* graph_int.h */
typedef struct tandem__access tandem__access_t;
typedef struct tandem__node tandem__node_t;
/* plan_int.h */
typedef struct tandem__plan tandem__plan_t;

#endif /* TANDEM_CORE_TYPES_H_ */
