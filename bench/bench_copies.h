/* SPDX-License-Identifier: MIT */
/*
 * bench_copies.h — `tandem-bench --only copies` (bench_copies.c): the copies survey's
 * report and its entry points, for bench.c.
 */
#ifndef TANDEM_BENCH_BENCH_COPIES_H_
#define TANDEM_BENCH_BENCH_COPIES_H_

#include <stdio.h>

#include "bench_lab.h"

/* bench_copies.c: raw vkCmdCopyBuffer from and to every host-visible memory
 * type, on each of tandem's queues, both directions at once, and split over
 * queues and regions; beside tandem's own copies between HOST_VISIBLE and
 * GPU_LOCAL buffers and the memory types tandem chose. */
#define COPY_MAX_QUEUES RAW_LANES
#define COPY_MAX_ROWS 32

/* Which tandem graph a row is the raw equivalent of. */
enum { COPY_TANDEM_NONE = -1, COPY_TANDEM_UP = 0, COPY_TANDEM_DOWN = 1, COPY_TANDEM_BOTH = 2 };

typedef struct copy_queue {
  int lane;      /* the first lane on this VkQueue (its pool and timeline) */
  char name[32]; /* the lanes on it: "upload", "upload+download", or "all-lanes" */
  uint32_t family, index, family_flags; /* VkQueueFlags of the family */
  uint32_t timestamp_bits;              /* timestampValidBits of the family */
} copy_queue_t;

typedef struct copy_row {
  char name[128];
  uint64_t bytes; /* moved by one run, both directions together */
  uint32_t up_parts, down_parts;
  summary_t wall, gpu; /* microseconds */
  bool has_gpu;
  int tandem; /* COPY_TANDEM_*: the same copy as that tandem graph */
} copy_row_t;

typedef struct copy_type_report {
  uint32_t index, properties, heap;
  uint64_t heap_bytes;
  bool heap_device_local;
  const char *skipped; /* why it was not measured, or NULL */
  double host_write_gbps, host_read_gbps;
  uint64_t host_read_bytes;
  double host_read_s;
  uint32_t row_count;
  copy_row_t rows[COPY_MAX_ROWS];
} copy_type_report_t;

typedef struct bench_copies_report {
  bool ran;
  uint64_t bytes; /* per direction */
  uint32_t runs, warmup;
  uint32_t queue_count;
  copy_queue_t queues[COPY_MAX_QUEUES];
  int lane_queue[RAW_LANES];
  double timestamp_period_ns;
  VkPhysicalDeviceMemoryProperties memory;
  tandem_buffer_memory_t tandem_host, tandem_gpu; /* HOST_VISIBLE, GPU_LOCAL */
  bool tandem_measured;
  summary_t tandem[3]; /* COPY_TANDEM_UP, _DOWN, _BOTH: microseconds */
  uint32_t type_count;
  copy_type_report_t types[VK_MAX_MEMORY_TYPES];
} bench_copies_report_t;

void bench_copies(const bench_options_t *o, tandem_runtime_t *rt, raw_t *raw,
                  bench_copies_report_t *report);
void bench_copies_print(const bench_copies_report_t *r, FILE *f);
/* The report as the value of a JSON key (an object, no trailing newline). */
void bench_copies_json(const bench_copies_report_t *r, FILE *f);

#endif /* TANDEM_BENCH_BENCH_COPIES_H_ */
