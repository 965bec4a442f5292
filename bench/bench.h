/* SPDX-License-Identifier: MIT */
/*
 * bench.h — what the parts of `tandem-bench` (bench/, the benchmark lab)
 * share: options, the timing loop and statistics (bench.c), and the stream,
 * copy, barrier and NPU-edge benchmarks. The raw-Vulkan baseline they are
 * measured against is bench_vk.h's harness, shared with bench/'s other
 * programs.
 */
#ifndef TANDEM_BENCH_BENCH_H_
#define TANDEM_BENCH_BENCH_H_

#include <stdbool.h>
#include <stdint.h>

#include "bench_vk.h"
#include "cli.h"

typedef struct bench_options {
  uint32_t iterations, warmup; /* dispatch benchmarks */
  uint32_t stream_iterations;  /* transfer and overlap */
  uint64_t transfer_bytes;     /* transfer size */
  uint32_t chunks;             /* overlap: K chunks */
  uint64_t chunk_bytes;        /* overlap: bytes per chunk */
  uint32_t rounds;             /* overlap: compute work per element */
  uint32_t gpu_index;
  bool validate, direct_first, quick;
  bool spin;        /* dispatch rows: poll for completion instead of blocking waits */
  bool direct_spin; /* dispatch rows: only the direct side polls */
  uint32_t given;   /* BENCH_GIVEN_* bits: sizes the user chose (not scaled by device) */
  const char *json_path;
  const char *only;
} bench_options_t;

enum {
  BENCH_GIVEN_ITERATIONS = 1u << 0,
  BENCH_GIVEN_WARMUP = 1u << 1,
  BENCH_GIVEN_STREAM_ITERATIONS = 1u << 2,
  BENCH_GIVEN_TRANSFER = 1u << 3,
  BENCH_GIVEN_CHUNKS = 1u << 4,
  BENCH_GIVEN_CHUNK_BYTES = 1u << 5,
  BENCH_GIVEN_ROUNDS = 1u << 6,
};

typedef struct summary {
  double median, p10, p90, min, mean;
} summary_t;
summary_t bench_summarize(double *v, uint32_t n);

/* The alternated timing loop: |tandem_exec| (submit + wait + release) vs
 * |raw_job(raw, ctx)| (submit + wait), warmup + iterations pairs; per-pair
 * microseconds into tt/dt (iterations entries each). */
typedef void (*raw_job_t)(raw_t *raw, void *ctx);
void bench_time_pairs(const bench_options_t *o, const char *label, uint32_t iterations,
                      uint32_t warmup, tandem_exec_t *exec, raw_job_t job, void *ctx, double *tt,
                      double *dt);
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One row of the results. */
typedef struct bench_row {
  char name[32];
  uint32_t nodes;
  summary_t tandem, direct, pair_ratio;
  /* dispatch rows: the submit call alone (tandem_exec_submit / vkQueueSubmit2) */
  bool has_split;
  summary_t tandem_submit, direct_submit;
  double ratio;
  /* transfer: bytes per run; overlap: ideal and efficiency */
  uint64_t bytes;
  bool is_overlap;
  double tandem_ideal_us, direct_ideal_us;
  double tandem_lane_us[RAW_LANES], direct_lane_us[RAW_LANES];
} bench_row_t;

/* bench_npu_edge.c: one GPU -> NPU -> GPU edge (emulated NPU) through tandem
 * vs direct Vulkan + XRT calls; appends one row. The first returns why it
 * cannot run here, or NULL. */
const char *bench_npu_edge_unavailable(const raw_t *raw);
void bench_npu_edge(const bench_options_t *o, raw_t *raw, bench_row_t *rows, uint32_t *count);

/* bench_stream.c: appends rows (transfer: 2, overlap: 1). */
void bench_transfer(const bench_options_t *o, tandem_runtime_t *rt, raw_t *raw, bench_row_t *rows,
                    uint32_t *count);
void bench_overlap(const bench_options_t *o, tandem_runtime_t *rt, raw_t *raw, bench_row_t *rows,
                   uint32_t *count);

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

/* bench_barriers.c: prints what one dependency between dispatches costs the
 * GPU by each kind of barrier (raw Vulkan, GPU timestamps); |increment| is
 * the chain kernel's raw pipeline. Skips (with a line on stderr) without
 * compute timestamps. */
void bench_barriers(const bench_options_t *o, raw_t *raw, const raw_kernel_t *increment);

#endif /* TANDEM_BENCH_BENCH_H_ */
