/* SPDX-License-Identifier: MIT */
/*
 * run_report.h — the summary of one `tandem run` (run_report.c): what ran
 * where, how long, per-lane busy time, bytes, checks and validation, printed
 * as text for people or, with --json, as one JSON object for scripts
 * (docs/cli.md lists its fields). pipeline_run.c fills it; nothing here
 * touches the device.
 */
#ifndef TANDEM_TOOLS_RUN_REPORT_H_
#define TANDEM_TOOLS_RUN_REPORT_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline.h"

typedef struct run_report {
  const pipeline_t *p;
  uint32_t gpu_index;
  const char *gpu_name, *gpu_driver, *gpu_driver_info;
  bool has_npu;
  const char *npu_name, *npu_sharing;
  bool npu_emulated;
  /* GPU 0 paired with each other GPU of the pipeline (tandem_runtime_gpu_pair):
   * the copy path between them (NULL: none) and whether waits cross on the GPU. */
  uint32_t pair_count;
  struct run_report_pair {
    uint32_t gpu;
    const char *name, *backend, *copy;
    bool waits_on_gpu;
  } pairs[TANDEM_MAX_GPUS - 1];
  uint32_t warmup;     /* untimed runs before the timed ones */
  uint32_t iterations; /* timed runs asked for */
  uint32_t completed;  /* timed runs that finished (< iterations when interrupted) */
  bool interrupted;
  uint64_t wall_ns; /* the timed runs, host clock */
  uint64_t span_ns; /* first region start to last region end, device clocks */
  uint64_t busy_ns[TANDEM_MAX_LANE_IDS];
  uint32_t regions[TANDEM_MAX_LANE_IDS];
  uint64_t copied_per_lane[TANDEM_MAX_LANE_IDS];
  uint64_t submissions, copied_bytes, cache_maintenance_bytes, imports, npu_runs;
  uint64_t trace_dropped;
  bool checks_run;
  uint32_t checks_passed;
  bool validation;
  uint64_t validation_messages;
  const char *trace_path, *svg_path;
  char **output_paths; /* p->output_count entries; NULL when not written */
  int exit_code;
} run_report_t;

/* The human summary (stdout of a run without --json). */
void run_report_text(FILE *f, const run_report_t *r);
/* The same as one JSON object and a newline. */
void run_report_json(FILE *f, const run_report_t *r);

#endif /* TANDEM_TOOLS_RUN_REPORT_H_ */
