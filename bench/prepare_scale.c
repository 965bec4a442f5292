/* SPDX-License-Identifier: MIT */
/*
 * prepare_scale.c — how tandem_graph_prepare grows with the node count.
 *
 * Builds graphs of 1 k, 10 k and 100 k nodes (or the 1 to 8 sizes given) in four
 * shapes — a dependent chain on one buffer, independent dispatches on 64
 * rotating buffers, a chunked stream (upload → compute → download per
 * 256-byte chunk of a 1 MiB buffer) and independent fills of 64 rotating
 * buffers — and times prepare, best of three, with no validation layer (the
 * layer's own bookkeeping grows faster than linearly and would be what is
 * measured). Prints ms and µs per node; exits 1 when 10x the nodes (the last
 * two sizes) costs more than 25x the time (n log n from 10 k to 100 k is about
 * 12.5x). A user of the public API only.
 *
 *   build/bench/tandem_bench_prepare [--shape chain|independent|stream|fill]
 *                                    [--reps R] [n1 ... n8]
 *
 * --shape runs one shape only and --reps sets the prepares per size (best
 * of R), so one process measures one case: run it under /usr/bin/time -v for
 * the peak memory of that case. Beside the best time it prints the first
 * prepare's time and the minor page faults per node of the best prepare and
 * of recording the nodes: where fresh memory is slow to touch (in a virtual
 * machine), a size whose memory the allocator hands back to the system
 * between prepares pays for its first touches again each time. A size the graph cannot hold (over
 * TANDEM_MAX_GRAPH_NODES) prints the error tandem returns and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "prepare_scale"
#include "bench_common.h"
#include "tandem_bench_shaders.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

enum { SHAPE_CHAIN, SHAPE_INDEPENDENT, SHAPE_STREAM, SHAPE_FILL, SHAPE_COUNT };
static const char *const shape_names[SHAPE_COUNT] = {"chain", "independent", "stream", "fill"};

typedef struct ctx {
  tandem_runtime_t *rt;
  tandem_kernel_t *k;
  tandem_buffer_t *bufs[64], *host, *big;
} ctx_t;

/* Records |n| nodes of |shape| (the time it took into *add_ms, the minor page
 * faults into *add_faults) and returns the best prepare time of |reps| (the
 * minor page faults of that prepare into *faults, the first prepare's time
 * and faults into *first_ms and *first_faults). */
static double prepare_ms(const ctx_t *c, int shape, uint32_t n, int reps, double *add_ms,
                         long *add_faults, long *faults, double *first_ms, long *first_faults) {
  tandem_graph_t *g;
  CHECK(tandem_graph_create(c->rt, &g));
  long f_add = minor_faults();
  double t_add = now_ms();
  for (uint32_t i = 0; i < n; i++) {
    tandem_view_t v;
    if (shape == SHAPE_FILL) {
      CHECK(tandem_graph_add_fill(g, tandem_buffer_whole(c->bufs[i % 64]), i, TANDEM_LANE_AUTO));
      continue;
    }
    if (shape == SHAPE_CHAIN) {
      v = tandem_buffer_whole(c->bufs[0]);
    } else if (shape == SHAPE_INDEPENDENT) {
      v = tandem_buffer_whole(c->bufs[i % 64]);
    } else {
      uint64_t chunk = (uint64_t)(i / 3) % 4096 * 256;
      tandem_view_t dev, h;
      CHECK(tandem_buffer_view(c->big, chunk, 256, &dev));
      CHECK(tandem_buffer_view(c->host, chunk, 256, &h));
      if (i % 3 != 1) {
        CHECK(tandem_graph_add_copy(g, i % 3 ? dev : h, i % 3 ? h : dev, TANDEM_LANE_AUTO));
        continue;
      }
      v = dev;
    }
    CHECK(tandem_graph_add_dispatch(g, c->k, &v, 1, NULL, 0));
  }
  *add_ms = now_ms() - t_add;
  *add_faults = minor_faults() - f_add;
  double best = 1e30;
  for (int rep = 0; rep < reps; rep++) {
    tandem_exec_t *e = NULL;
    long f0 = minor_faults();
    double t0 = now_ms();
    CHECK(tandem_graph_prepare(g, &e));
    double t = now_ms() - t0;
    long f = minor_faults() - f0;
    if (rep == 0) *first_ms = t, *first_faults = f;
    if (t < best) best = t, *faults = f;
    tandem_exec_release(e);
  }
  tandem_graph_release(g);
  return best;
}

int main(int argc, char **argv) {
  enum { MAX_SIZES = 8 };
  uint32_t sizes[MAX_SIZES] = {1000, 10000, 100000};
  int only = -1, reps = 3, given = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
      for (int k = 0; k < SHAPE_COUNT; k++)
        if (strcmp(argv[i + 1], shape_names[k]) == 0) only = k;
      if (only < 0) {
        fprintf(stderr, "prepare_scale: unknown shape '%s'\n", argv[i + 1]);
        return 2;
      }
      i++;
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = atoi(argv[++i]);
      if (reps < 1) reps = 1;
    } else if (given < MAX_SIZES) {
      sizes[given++] = (uint32_t)strtoul(argv[i], NULL, 10);
    }
  }
  ctx_t c;
  CHECK(tandem_runtime_create(NULL, &c.rt));
  CHECK(tandem_runtime_open_gpu(c.rt));
  tandem_binding_contract_t b = {256, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = "bench_increment",
                            .spirv = tandem_spv_bench_increment,
                            .spirv_size = tandem_spv_bench_increment_size,
                            .workgroups = {1, 1, 1},
                            .bindings = &b,
                            .binding_count = 1,
                            .push_constant_bytes = 0};
  CHECK(tandem_kernel_create(c.rt, &d, &c.k));
  for (int i = 0; i < 64; i++)
    CHECK(tandem_buffer_create(c.rt, 256, TANDEM_PLACEMENT_GPU_LOCAL, &c.bufs[i]));
  CHECK(tandem_buffer_create(c.rt, 4096 * 256, TANDEM_PLACEMENT_HOST_VISIBLE, &c.host));
  CHECK(tandem_buffer_create(c.rt, 4096 * 256, TANDEM_PLACEMENT_GPU_LOCAL, &c.big));
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  CHECK(tandem_runtime_gpu_info(c.rt, 0, &info));
  printf("device: %s (%s %s)\n", info.name, info.driver_name, info.driver_info);
  int count = given ? given : 3;
  printf("%-12s", "shape");
  for (int k = 0; k < count; k++) printf(" %12s", "n");
  printf("   (prepare ms, best of %d; us/node in brackets)\n", reps);
  int rc = 0;
  for (int shape = 0; shape < SHAPE_COUNT; shape++) {
    if (only >= 0 && shape != only) continue;
    double t[MAX_SIZES], add[MAX_SIZES], first[MAX_SIZES];
    long add_faults[MAX_SIZES], faults[MAX_SIZES], first_faults[MAX_SIZES];
    for (int k = 0; k < count; k++)
      t[k] = prepare_ms(&c, shape, sizes[k], reps, &add[k], &add_faults[k], &faults[k], &first[k],
                        &first_faults[k]);
    printf("%-12s", shape_names[shape]);
    for (int k = 0; k < count; k++) printf(" %12.2f", t[k]);
    printf("   [");
    for (int k = 0; k < count; k++) printf("%s%.2f", k ? " " : "", t[k] * 1e3 / sizes[k]);
    printf("]  (");
    for (int k = 0; k < count; k++) printf("%s%u", k ? " / " : "", sizes[k]);
    printf(" nodes)\n%-12s", "  add");
    for (int k = 0; k < count; k++) printf(" %12.2f", add[k]);
    printf("   (recording the nodes, ms)\n%-12s", "  first");
    for (int k = 0; k < count; k++) printf(" %12.2f", first[k]);
    printf("   (the first prepare of the graph, ms)\n%-12s", "  faults");
    for (int k = 0; k < count; k++) printf(" %12.3f", (double)faults[k] / sizes[k]);
    printf("   (minor page faults per node, in the best prepare)\n%-12s", "  1st faults");
    for (int k = 0; k < count; k++) printf(" %12.3f", (double)first_faults[k] / sizes[k]);
    printf("   (minor page faults per node, in the first prepare)\n%-12s", "  add faults");
    for (int k = 0; k < count; k++) printf(" %12.3f", (double)add_faults[k] / sizes[k]);
    printf("   (minor page faults per node, recording the nodes)\n");
    if (count < 2) continue;
    double growth = t[count - 1] / t[count - 2];
    double nodes = (double)sizes[count - 1] / sizes[count - 2], allowed = 2.5 * nodes;
    if (growth > allowed) {
      printf("  %s: %.1fx the time for %.1fx the nodes; near-linear allows %.1fx\n",
             shape_names[shape], growth, nodes, allowed);
      rc = 1;
    }
  }
  for (int i = 0; i < 64; i++) tandem_buffer_release(c.bufs[i]);
  tandem_buffer_release(c.host);
  tandem_buffer_release(c.big);
  tandem_kernel_release(c.k);
  tandem_runtime_destroy(c.rt);
  return rc;
}
