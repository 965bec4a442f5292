/* SPDX-License-Identifier: MIT */
/*
 * run_report.c — prints the summary of a `tandem run` (run_report.h) as text
 * or as JSON. The two carry the same facts; the JSON field names are the
 * documented interface for scripts (docs/cli.md), the text is for people and
 * may change.
 */
#include "run_report.h"

#include "cli.h"

static void fmt_time(char *buf, size_t n, uint64_t ns) {
  if (ns >= 10000000ull) snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
  else if (ns >= 10000ull) snprintf(buf, n, "%.2f ms", (double)ns / 1e6);
  else snprintf(buf, n, "%.1f us", (double)ns / 1e3);
}

static void fmt_bytes(char *buf, size_t n, uint64_t b) {
  if (b >= (1ull << 30)) snprintf(buf, n, "%.2f GiB", (double)b / (double)(1ull << 30));
  else if (b >= (1ull << 20)) snprintf(buf, n, "%.2f MiB", (double)b / (double)(1ull << 20));
  else if (b >= 1024) snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
  else snprintf(buf, n, "%llu B", (unsigned long long)b);
}

static double per_second(const run_report_t *r) {
  return r->wall_ns ? (double)r->completed / ((double)r->wall_ns / 1e9) : 0.0;
}

void run_report_text(FILE *f, const run_report_t *r) {
  char t1[32], t2[32], b1[32];
  fmt_time(t1, sizeof t1, r->wall_ns);
  const char *its = r->iterations == 1 ? "iteration" : "iterations";
  if (r->interrupted && !r->completed)
    fprintf(f, "\ninterrupted: 0 of %u %s ran (stopped before the first)\n", r->iterations, its);
  else if (r->interrupted)
    fprintf(f, "\ninterrupted: %u of %u %s ran, in %s: %.1f iterations/s\n", r->completed,
            r->iterations, its, t1, per_second(r));
  else
    fprintf(f, "\nran %u %s in %s: %.1f iterations/s\n", r->completed,
            r->completed == 1 ? "iteration" : "iterations", t1, per_second(r));
  if (r->interrupted && !r->completed)
    ; /* no timing to qualify */
  else if (r->warmup)
    fprintf(f, "(after %u untimed warm-up iteration%s)\n", r->warmup, r->warmup == 1 ? "" : "s");
  else fprintf(f, "(includes first-use costs; --warmup N runs N untimed iterations first)\n");
  fmt_time(t2, sizeof t2, r->span_ns);
  fprintf(f, "GPU/NPU time span (trace): %s\n", t2);
  fprintf(f, "%-13s %10s %12s %8s %14s\n", "lane", "regions", "busy", "busy %", "copied");
  for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++) {
    if (!r->regions[l] && !r->copied_per_lane[l]) continue;
    fmt_time(t1, sizeof t1, r->busy_ns[l]);
    fmt_bytes(b1, sizeof b1, r->copied_per_lane[l]);
    fprintf(f, "%-13s %10u %12s %7.1f%% %14s\n", cli_lane_label(l), r->regions[l], t1,
            r->span_ns ? 100.0 * (double)r->busy_ns[l] / (double)r->span_ns : 0.0, b1);
  }
  fmt_bytes(b1, sizeof b1, r->copied_bytes);
  fprintf(f, "copied bytes: %s", b1);
  fmt_bytes(b1, sizeof b1, r->cache_maintenance_bytes);
  fprintf(f, ", cache maintenance: %s, imports: %llu, NPU runs: %llu\n", b1,
          (unsigned long long)r->imports, (unsigned long long)r->npu_runs);
  if (r->trace_dropped)
    fprintf(f, "trace: %llu oldest events dropped (ring full)\n",
            (unsigned long long)r->trace_dropped);
  if (r->checks_run) fprintf(f, "checks: %u of %u passed\n", r->checks_passed, r->p->check_count);
  else if (r->p->check_count) fprintf(f, "checks: not run (the run did not complete)\n");
  fprintf(f, "validation messages: %llu%s\n", (unsigned long long)r->validation_messages,
          r->validation ? "" : " (validation off; --validate turns it on)");
  for (uint32_t i = 0; r->output_paths && i < r->p->output_count; i++)
    if (r->output_paths[i]) fprintf(f, "output: %s\n", r->output_paths[i]);
  if (r->trace_path) fprintf(f, "trace: %s\n", r->trace_path);
  if (r->svg_path) fprintf(f, "timeline: %s\n", r->svg_path);
}

static void json_str_or_null(FILE *f, const char *s) {
  if (s) json_write_string(f, s);
  else fputs("null", f);
}

void run_report_json(FILE *f, const run_report_t *r) {
  const pipeline_t *p = r->p;
  fputs("{\"tandem_version\": ", f);
  fprintf(f, "\"%d.%d.%d\", \"pipeline\": {\"name\": ", TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR,
          TANDEM_VERSION_PATCH);
  json_write_string(f, p->name);
  fputs(", \"file\": ", f);
  json_write_string(f, p->file);
  fprintf(f, ", \"buffers\": %u, \"kernels\": %u, \"npu_programs\": %u, \"nodes\": %u}",
          p->buffer_count, p->kernel_count, p->program_count, p->node_count);
  fprintf(f, ",\n \"gpu\": {\"index\": %u, \"name\": ", r->gpu_index);
  json_write_string(f, r->gpu_name);
  fputs(", \"driver\": ", f);
  json_write_string(f, r->gpu_driver);
  fputs(", \"driver_info\": ", f);
  json_write_string(f, r->gpu_driver_info);
  fputs("}, \"npu\": ", f);
  if (r->has_npu) {
    fputs("{\"name\": ", f);
    json_write_string(f, r->npu_name);
    fprintf(f, ", \"emulated\": %s, \"sharing\": ", r->npu_emulated ? "true" : "false");
    json_write_string(f, r->npu_sharing);
    fputs("}", f);
  } else {
    fputs("null", f);
  }
  if (r->pair_count) {
    fputs(",\n \"gpu_pairs\": [", f);
    for (uint32_t i = 0; i < r->pair_count; i++) {
      const struct run_report_pair *q = &r->pairs[i];
      fprintf(f, "%s{\"gpus\": [0, %u], \"name\": ", i ? ", " : "", q->gpu);
      json_write_string(f, q->name);
      fputs(", \"backend\": ", f);
      json_write_string(f, q->backend);
      fputs(", \"copy\": ", f);
      if (q->copy) json_write_string(f, q->copy);
      else fputs("null", f);
      fprintf(f, ", \"waits_on_gpu\": %s}", q->waits_on_gpu ? "true" : "false");
    }
    fputs("]", f);
  }
  fprintf(f,
          ",\n \"warmup\": %u, \"iterations\": %u, \"completed\": %u, \"interrupted\": %s, "
          "\"wall_ns\": %llu, \"iterations_per_s\": %.3f, \"span_ns\": %llu,\n \"lanes\": [",
          r->warmup, r->iterations, r->completed, r->interrupted ? "true" : "false",
          (unsigned long long)r->wall_ns, per_second(r), (unsigned long long)r->span_ns);
  bool first = true;
  for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++) {
    if (!r->regions[l] && !r->copied_per_lane[l]) continue;
    fprintf(f,
            "%s{\"lane\": \"%s\", \"regions\": %u, \"busy_ns\": %llu, \"busy_fraction\": %.4f, "
            "\"copied_bytes\": %llu}",
            first ? "" : ", ", cli_lane_label(l), r->regions[l], (unsigned long long)r->busy_ns[l],
            r->span_ns ? (double)r->busy_ns[l] / (double)r->span_ns : 0.0,
            (unsigned long long)r->copied_per_lane[l]);
    first = false;
  }
  fprintf(f,
          "],\n \"submissions\": %llu, \"copied_bytes\": %llu, \"cache_maintenance_bytes\": %llu, "
          "\"imports\": %llu, \"npu_runs\": %llu, \"trace_dropped\": %llu,\n",
          (unsigned long long)r->submissions, (unsigned long long)r->copied_bytes,
          (unsigned long long)r->cache_maintenance_bytes, (unsigned long long)r->imports,
          (unsigned long long)r->npu_runs, (unsigned long long)r->trace_dropped);
  if (r->checks_run)
    fprintf(f, " \"checks\": {\"total\": %u, \"passed\": %u}", p->check_count, r->checks_passed);
  else fprintf(f, " \"checks\": null");
  fprintf(f, ", \"validation\": %s, \"validation_messages\": %llu,\n \"outputs\": [",
          r->validation ? "true" : "false", (unsigned long long)r->validation_messages);
  first = true;
  for (uint32_t i = 0; r->output_paths && i < p->output_count; i++) {
    if (!r->output_paths[i]) continue;
    if (!first) fputs(", ", f);
    json_write_string(f, r->output_paths[i]);
    first = false;
  }
  fputs("], \"trace\": ", f);
  json_str_or_null(f, r->trace_path);
  fputs(", \"timeline\": ", f);
  json_str_or_null(f, r->svg_path);
  fprintf(f, ", \"exit_code\": %d}\n", r->exit_code);
}
