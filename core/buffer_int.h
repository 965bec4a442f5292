/* SPDX-License-Identifier: MIT */
/*
 * buffer_int.h — a buffer's layout (buffer.c): its memory, and the state the
 * tracker (records, poison) and host maps (map.c) keep on it under
 * runtime->mutex.
 */
#ifndef TANDEM_CORE_BUFFER_INT_H_
#define TANDEM_CORE_BUFFER_INT_H_

#include "core/types.h"

typedef struct tandem__record tandem__record_t;

/* A byte range of a buffer whose last writer failed: reads of it fail with
 * |code| (FAILED_DEPENDENCY, or DEVICE_LOST) until it is written again by
 * work that succeeds; |cause| is how that writer ended. */
enum { TANDEM__POISON_RANGES = 8 };
typedef struct tandem__poison {
  uint64_t offset, length;
  tandem_status_t code, cause;
} tandem__poison_t;

typedef struct tandem__host_map tandem__host_map_t; /* map.c */

struct tandem_buffer {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  uint64_t size;
  uint64_t charged; /* bytes reserved in the runtime's budget: size, or 0 for an
                       adopted buffer the application had already charged */
  tandem_placement_t placement;
  uint32_t gpu;             /* the runtime's GPU |native| belongs to; never changed */
  void *native;             /* GPU backend buffer; NULL for NPU_LOCAL */
  void *host;               /* what host maps see: HOST_VISIBLE and SHARED/NPU_LOCAL mappings */
  void *npu_bo;             /* SHARED and NPU_LOCAL: the NPU buffer object */
  void *npu_host;           /* its mapping (equals host except for staged sharing) */
  uint64_t npu_size;        /* BO size (rounded for host-pointer import) */
  tandem_sharing_t sharing; /* SHARED: the path this buffer uses */
  /* Adopted without the usage indirect dispatch reads need: never an
   * indirect view (graph.c). Set at creation, never changed. */
  bool no_indirect;
  /* A cross-GPU copy's staging (tandem__buffer_staging_pair): host memory
   * imported into two GPUs as two buffers. |host_owned| is that memory (the
   * first buffer frees it); the second buffer's accesses are tracked on the
   * first (|tracked_as|, retained), so the tracker and the planner see one
   * memory. Both are internal: no user call gets them. */
  void *host_owned;
  tandem_buffer_t *tracked_as;

  tandem__record_t *records;        /* [mutex] in-flight accesses (I3) */
  tandem__host_map_t *maps;         /* [mutex] live host maps */
  uint32_t map_count, map_capacity; /* [mutex] */
  uint64_t next_map_id;             /* [mutex] */
  /* [mutex] Poisoned byte ranges: bytes whose last writer failed, sorted by
   * offset and disjoint (tracker.c). One spare entry: a change may add one
   * range before the closest two are merged back to TANDEM__POISON_RANGES. */
  tandem__poison_t poison[TANDEM__POISON_RANGES + 1];
  uint32_t poison_count;
};

#endif /* TANDEM_CORE_BUFFER_INT_H_ */
