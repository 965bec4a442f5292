/* SPDX-License-Identifier: MIT */
/*
 * prepare_scale.c — how tandem_graph_prepare grows with the node count.
 *
 * Builds graphs of 1 k, 10 k and 100 k nodes (or the sizes given) in three
 * shapes — a dependent chain on one buffer, independent dispatches on 64
 * rotating buffers, and a chunked stream (upload → compute → download per
 * 256-byte chunk of a 1 MiB buffer) — and times prepare, best of three, with
 * no validation layer (the layer's own bookkeeping grows faster than linearly
 * and would be what is measured). Prints ms and µs per node; exits 1 when 10x
 * the nodes costs more than 25x the time (n log n from 10 k to 100 k is about
 * 12.5x). A user of the public API only.
 *
 *   build/bench/tandem_bench_prepare [n1 n2 n3]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tandem/tandem.h"
#include "tandem_bench_shaders.h"

#define CHECK(expr)                                                                  \
  do {                                                                               \
    tandem_status_t s_ = (expr);                                                     \
    if (s_ != TANDEM_OK) {                                                           \
      fprintf(stderr, "prepare_scale: %s: %s\n", #expr, tandem_error_message());     \
      exit(s_ == TANDEM_ERROR_NO_DEVICE ? 77 : 1);                                   \
    }                                                                                \
  } while (0)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

enum { SHAPE_CHAIN, SHAPE_INDEPENDENT, SHAPE_STREAM, SHAPE_COUNT };
static const char *const shape_names[SHAPE_COUNT] = {"chain", "independent", "stream"};

typedef struct ctx {
  tandem_runtime_t *rt;
  tandem_kernel_t *k;
  tandem_buffer_t *bufs[64], *host, *big;
} ctx_t;

static double prepare_ms(const ctx_t *c, int shape, uint32_t n) {
  tandem_graph_t *g;
  CHECK(tandem_graph_create(c->rt, &g));
  for (uint32_t i = 0; i < n; i++) {
    tandem_view_t v;
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
  double best = 1e30;
  for (int rep = 0; rep < 3; rep++) {
    tandem_exec_t *e = NULL;
    double t0 = now_ms();
    CHECK(tandem_graph_prepare(g, &e));
    double t = now_ms() - t0;
    if (t < best) best = t;
    tandem_exec_release(e);
  }
  tandem_graph_release(g);
  return best;
}

int main(int argc, char **argv) {
  uint32_t sizes[3] = {1000, 10000, 100000};
  for (int i = 1; i < argc && i <= 3; i++) sizes[i - 1] = (uint32_t)strtoul(argv[i], NULL, 10);
  ctx_t c;
  CHECK(tandem_runtime_create(NULL, &c.rt));
  CHECK(tandem_runtime_open_gpu(c.rt));
  tandem_binding_contract_t b = {256, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t d = {.name = "bench_increment",
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
  CHECK(tandem_runtime_gpu_info(c.rt, 0, &info));
  printf("device: %s (%s %s)\n", info.name, info.driver_name, info.driver_info);
  printf("%-12s %12s %12s %12s   (ms, best of 3; us/node in brackets)\n", "shape", "n1", "n2",
         "n3");
  int rc = 0;
  for (int shape = 0; shape < SHAPE_COUNT; shape++) {
    double t[3];
    for (int s = 0; s < 3; s++) t[s] = prepare_ms(&c, shape, sizes[s]);
    printf("%-12s %12.2f %12.2f %12.2f   [%.2f %.2f %.2f]  (%u / %u / %u nodes)\n",
           shape_names[shape], t[0], t[1], t[2], t[0] * 1e3 / sizes[0], t[1] * 1e3 / sizes[1],
           t[2] * 1e3 / sizes[2], sizes[0], sizes[1], sizes[2]);
    double growth = t[2] / t[1], allowed = 2.5 * (double)sizes[2] / sizes[1];
    if (growth > allowed) {
      printf("  %s: %.1fx the time for %.1fx the nodes; near-linear allows %.1fx\n",
             shape_names[shape], growth, (double)sizes[2] / sizes[1], allowed);
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
