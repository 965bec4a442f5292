/* SPDX-License-Identifier: MIT */
/*
 * submit_wait.c — the C side of python/bench/overhead.py: the same loop of
 * submit + wait of a one-dispatch executable, and of map_read + unmap, that
 * the Python benchmark times, so the difference is the binding's overhead.
 * Prints "c_submit_wait_us <median>" and "c_map_us <median>" (µs per iteration,
 * median of 15 rounds of 1000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tandem/tandem.h"

static const char *src = "#version 450\nlayout(local_size_x = 64) in;\n"
                         "layout(std430, binding = 0) buffer Y { uint y[]; };\n"
                         "void main() { y[gl_GlobalInvocationID.x] += 1u; }\n";

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define CHECK(e)                                               \
  do {                                                         \
    if ((e) != TANDEM_OK) {                                    \
      fprintf(stderr, "%s: %s\n", #e, tandem_error_message()); \
      return 1;                                                \
    }                                                          \
  } while (0)

int main(void) {
  tandem_runtime_t *rt;
  CHECK(tandem_runtime_create(NULL, &rt));
  tandem_buffer_t *b;
  CHECK(tandem_buffer_create(rt, 256, TANDEM_PLACEMENT_HOST_VISIBLE, &b));
  tandem_binding_contract_t bind = {.bytes = 256,
                                    .alignment = 4,
                                    .access = TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t d;
  tandem_kernel_desc_init(&d);
  d.glsl_source = src;
  d.bindings = &bind;
  d.binding_count = 1;
  d.workgroups[0] = d.workgroups[1] = d.workgroups[2] = 1;
  tandem_kernel_t *k;
  CHECK(tandem_kernel_create(rt, &d, &k));
  tandem_graph_t *g;
  CHECK(tandem_graph_create(rt, &g));
  tandem_view_t v = tandem_buffer_whole(b);
  CHECK(tandem_graph_add_dispatch(g, k, &v, 1, NULL, 0));
  tandem_exec_t *e;
  CHECK(tandem_graph_prepare(g, &e));
  double rounds[15];
  for (int r = 0; r < 15; r++) {
    double t0 = now_us();
    for (int i = 0; i < 1000; i++) {
      tandem_completion_t *c;
      CHECK(tandem_exec_submit(e, &c));
      CHECK(tandem_completion_wait(c));
      tandem_completion_release(c);
    }
    rounds[r] = (now_us() - t0) / 1000;
  }
  qsort(rounds, 15, sizeof rounds[0], cmp);
  printf("c_submit_wait_us %.3f\n", rounds[7]);
  for (int r = 0; r < 15; r++) {
    double t0 = now_us();
    for (int i = 0; i < 1000; i++) {
      tandem_map_t m;
      CHECK(tandem_map_read(v, &m));
      tandem_unmap(&m);
    }
    rounds[r] = (now_us() - t0) / 1000;
  }
  qsort(rounds, 15, sizeof rounds[0], cmp);
  printf("c_map_us %.3f\n", rounds[7]);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
  tandem_runtime_destroy(rt);
  return 0;
}
