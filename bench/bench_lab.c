/* SPDX-License-Identifier: MIT */
/*
 * bench_lab.c — the frame tandem-bench's benchmarks run in (bench_lab.h):
 * the alternated timing loop, the statistics over its samples and the
 * progress lines. One timed iteration is submit + wait on CLOCK_MONOTONIC;
 * tandem and the direct side alternate within each pair (--direct-first
 * swaps the order) so drift in clocks or temperature hits both alike.
 */
#include "bench_lab.h"

#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmdline/cmdline.h"

void bench_progress(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fflush(stderr);
}

double bench_now_us(void) { return (double)cli_now_ns() / 1e3; }

/*--------------------------------------------------------------------------
 * Statistics
 *--------------------------------------------------------------------------*/

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double quantile_sorted(const double *v, uint32_t n, double q) {
  double pos = q * (double)(n - 1);
  uint32_t lo = (uint32_t)pos;
  if (lo + 1 >= n) return v[n - 1];
  return v[lo] + (v[lo + 1] - v[lo]) * (pos - (double)lo);
}

summary_t bench_summarize(double *v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  double sum = 0;
  for (uint32_t i = 0; i < n; i++) sum += v[i];
  return (summary_t){.median = quantile_sorted(v, n, 0.5),
                     .p10 = quantile_sorted(v, n, 0.1),
                     .p90 = quantile_sorted(v, n, 0.9),
                     .min = v[0],
                     .mean = sum / (double)n};
}

/*--------------------------------------------------------------------------
 * The timing loop
 *--------------------------------------------------------------------------*/

void bench_time_pairs(const bench_options_t *o, const char *label, uint32_t iterations,
                      uint32_t warmup, tandem_exec_t *exec, raw_job_t job, void *ctx,
                      bench_split_t *split, double *tt, double *dt) {
  uint32_t total = warmup + iterations;
  uint32_t tick = total >= 40 ? total / 20 : 1;
  bool tty = isatty(2); /* a percentage that updates in place, on terminals only */
  if (!tty) bench_progress("  %-22s ...", label);
  double started = bench_now_us();
  for (uint32_t it = 0; it < total; it++) {
    double t = 0, d = 0;
    for (int half = 0; half < 2; half++) {
      if ((half == 0) != o->direct_first) {
        if (!exec) continue;
        tandem_completion_t *c = NULL;
        double t0 = bench_now_us();
        tandem_status_t s = tandem_exec_submit(exec, &c);
        if (split && split->tandem_submit && it >= warmup)
          split->tandem_submit[it - warmup] = bench_now_us() - t0;
        if (s == TANDEM_OK && split && split->spin)
          while (!tandem_completion_is_complete(c)) {
          }
        if (s == TANDEM_OK) s = tandem_completion_wait(c);
        tandem_completion_release(c);
        t = bench_now_us() - t0;
        if (s != TANDEM_OK)
          bench_die("%s: tandem iteration %u failed: %s: %s", label, it, tandem_status_name(s),
                    tandem_error_message());
      } else {
        if (!job) continue;
        double d0 = bench_now_us();
        if (split) split->index = it >= warmup ? it - warmup : UINT32_MAX;
        job(NULL, ctx);
        d = bench_now_us() - d0;
      }
    }
    if (it >= warmup) {
      if (tt) tt[it - warmup] = t;
      if (dt) dt[it - warmup] = d;
    }
    if (tty && ((it + 1) % tick == 0 || it + 1 == total))
      bench_progress("\r  %-22s %3u%%", label, (unsigned)((it + 1) * 100 / total));
  }
  if (tty) bench_progress("\r  %-22s done in %.1f s\n", label, (bench_now_us() - started) / 1e6);
  else bench_progress(" done in %.1f s\n", (bench_now_us() - started) / 1e6);
}
