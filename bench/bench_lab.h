/* SPDX-License-Identifier: MIT */
/*
 * bench_lab.h — the frame every benchmark of `tandem-bench` (bench/, the
 * benchmark lab) runs in: the options, the alternated timing loop, the
 * statistics, progress lines and the row of results. bench.c parses the
 * options, calls the benchmarks (bench_stream.h, bench_copies.h,
 * bench_barriers.h, bench_npu_edge.h) and reports their rows; the
 * benchmarks take only this frame, never bench.c. The raw-Vulkan baseline
 * they are measured against is bench_vk.h's harness, shared with bench/'s
 * other programs.
 */
#ifndef TANDEM_BENCH_BENCH_LAB_H_
#define TANDEM_BENCH_BENCH_LAB_H_

#include <stdbool.h>
#include <stdint.h>

#include "bench_vk.h"

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
/* Sorts |v| (n > 0 values) and summarizes it. */
summary_t bench_summarize(double *v, uint32_t n);

/* CLOCK_MONOTONIC in microseconds. */
double bench_now_us(void);
/* A progress message on stderr, flushed. */
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What the dispatch rows add to the timing loop: the submit call's share of
 * each timed iteration, and polling instead of blocking waits. The loop
 * writes |tandem_submit| and |index|; the raw job (which finds this struct
 * through its context) writes |direct_submit| and reads the rest. */
typedef struct bench_split {
  double *tandem_submit; /* per timed iteration: tandem_exec_submit, microseconds */
  double *direct_submit; /* per timed iteration: the raw job's vkQueueSubmit2 */
  uint32_t index;        /* the timed iteration being run, or UINT32_MAX in warm-up */
  bool spin;             /* both sides poll for completion (--spin) */
  bool direct_spin;      /* only the direct side polls (--direct-spin) */
} bench_split_t;

/* The alternated timing loop: |tandem_exec| (submit + wait + release) vs
 * |raw_job(raw, ctx)| (submit + wait), warmup + iterations pairs; per-pair
 * microseconds into tt/dt (iterations entries each). |split|: NULL, or the
 * dispatch rows' extras above. */
typedef void (*raw_job_t)(raw_t *raw, void *ctx);
void bench_time_pairs(const bench_options_t *o, const char *label, uint32_t iterations,
                      uint32_t warmup, tandem_exec_t *exec, raw_job_t job, void *ctx,
                      bench_split_t *split, double *tt, double *dt);

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

#endif /* TANDEM_BENCH_BENCH_LAB_H_ */
