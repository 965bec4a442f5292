/* SPDX-License-Identifier: MIT */
/*
 * tracker_scale.c — the cross-submission tracker's cost per access as the
 * number of live buffers grows (issue 10: flat at 10 / 1 000 / 100 000 live).
 *
 * For each count L it creates L live 256-byte GPU_LOCAL buffers, prepares a
 * graph of 16 fills on 16 of them (spread over the whole set), and times the
 * tandem_exec_submit call alone (where the tracker looks for conflicts and
 * links its records), median of many submissions, each waited for and
 * released before the next. A second submission is kept in flight on the
 * same 16 buffers while timing, so every access finds a record to check.
 * Prints µs per submission and per access; exits 1 when the largest count's
 * per-access cost exceeds 2x the smallest's (a tracker that scanned live
 * buffers would grow 10 000x). No validation layer. A user of the public API.
 *
 *   build/bench/tandem_bench_tracker [L1 L2 ...]     (default 10 1000 100000)
 *   build/bench/tandem_bench_tracker --smoke          (CTest: 16 and 256 live,
 *                                                      no timing verdict)
 */
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_NAME "tracker_scale"
#include "bench_common.h"

#define ACCESSES 16u
#define ROUNDS 2000u

/* Median ns of the submit call with |live| buffers alive. */
static double measure(tandem_runtime_t *rt, uint32_t live, double *create_us) {
  tandem_buffer_t **bufs = calloc(live, sizeof *bufs);
  uint64_t *t = calloc(ROUNDS, sizeof *t);
  if (!bufs || !t) exit(1);
  uint64_t c0 = now_ns();
  for (uint32_t i = 0; i < live; i++)
    CHECK(tandem_buffer_create(rt, 256, TANDEM_PLACEMENT_GPU_LOCAL, &bufs[i]));
  *create_us = (double)(now_ns() - c0) / 1e3 / live;
  tandem_graph_t *g = NULL;
  CHECK(tandem_graph_create(rt, &g));
  for (uint32_t a = 0; a < ACCESSES; a++)
    CHECK(tandem_graph_add_fill(g, tandem_buffer_whole(bufs[(uint64_t)a * live / ACCESSES]), a,
                                TANDEM_LANE_COMPUTE));
  tandem_exec_t *e = NULL;
  CHECK(tandem_graph_prepare(g, &e));
  tandem_completion_t *held = NULL;
  for (uint32_t i = 0; i < ROUNDS + ROUNDS / 10; i++) {
    /* One earlier submission stays in flight: the timed one conflicts with
     * it on every access (write after write). */
    if (!held) CHECK(tandem_exec_submit(e, &held));
    tandem_completion_t *c = NULL;
    uint64_t start = now_ns();
    CHECK(tandem_exec_submit(e, &c));
    uint64_t spent = now_ns() - start;
    if (i >= ROUNDS / 10) t[i - ROUNDS / 10] = spent;
    CHECK(tandem_completion_wait(c));
    tandem_completion_release(c);
    tandem_completion_release(held);
    held = NULL;
  }
  qsort(t, ROUNDS, sizeof *t, cmp_u64);
  double median = (double)t[ROUNDS / 2];
  tandem_exec_release(e);
  tandem_graph_release(g);
  for (uint32_t i = 0; i < live; i++) tandem_buffer_release(bufs[i]);
  free(bufs);
  free(t);
  return median;
}

int main(int argc, char **argv) {
  uint32_t counts[8] = {10, 1000, 100000};
  uint32_t n = 3;
  bool smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
  if (smoke) {
    counts[0] = 16;
    counts[1] = 256;
    n = 2;
  } else if (argc > 1) {
    n = 0;
    for (int i = 1; i < argc && n < 8; i++) counts[n++] = (uint32_t)strtoul(argv[i], NULL, 10);
  }
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.validation = smoke;
  if (smoke)
    o.validation_callback =
        on_validation; /* the smoke runs under the layer; measurements never do */
  o.graph_slots = 2;
  tandem_runtime_t *rt = NULL;
  CHECK(tandem_runtime_create(&o, &rt));
  CHECK(tandem_runtime_open_gpu(rt));
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  CHECK(tandem_runtime_gpu_info(rt, 0, &info));
  printf("tracker_scale: %s; %u fills per submission, each conflicting with one in flight\n",
         info.name, ACCESSES);
  printf("%10s %14s %14s %16s\n", "live", "submit us", "us per access", "create us/buf");
  double first = 0, last = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (counts[i] < ACCESSES) counts[i] = ACCESSES;
    double create_us = 0;
    double ns = measure(rt, counts[i], &create_us);
    printf("%10u %14.2f %14.3f %16.2f\n", counts[i], ns / 1e3, ns / 1e3 / ACCESSES, create_us);
    if (i == 0) first = ns;
    last = ns;
  }
  if (bench_runtime_destroy(rt)) return 1;
  if (!smoke && n > 1 && last > 2 * first) {
    printf("tracker_scale: FAIL: the submit cost grew %.1fx with the live-buffer count\n",
           last / first);
    return 1;
  }
  return 0;
}
