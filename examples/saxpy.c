/* SPDX-License-Identifier: MIT */
/*
 * saxpy.c — the smallest complete tandem program: y = a*x + y on the GPU for
 * 4M floats, checked against the CPU. The explicit model in its shortest
 * form: buffers with a placement (GPU_LOCAL, filled and read back through
 * counted staging copies), a kernel whose contract comes from the shader
 * (x readonly: READ; y: READ_WRITE; both the bound view's length), a graph of
 * one dispatch run once. Run it with TANDEM_VALIDATION=1 to turn the Vulkan
 * validation layer on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tandem/tandem.h"
#include "tandem_example_shaders.h"

/* Exit 77 (skipped, for CTest) when there is no usable device. */
#define CHECK(expr)                                                      \
  do {                                                                   \
    tandem_status_t s_ = (expr);                                         \
    if (s_ != TANDEM_OK) {                                               \
      fprintf(stderr, "saxpy: %s: %s\n", #expr, tandem_error_message()); \
      exit(s_ == TANDEM_ERROR_NO_DEVICE ? 77 : 1);                       \
    }                                                                    \
  } while (0)

int main(void) {
  const uint32_t n = 1u << 22;
  const uint64_t bytes = (uint64_t)n * sizeof(float);
  struct {
    float a;
    uint32_t n;
  } push = {2.5f, n};
  float *x = malloc(bytes), *y = malloc(bytes), *got = malloc(bytes);
  srand(7);
  for (uint32_t i = 0; i < n; i++)
    x[i] = (float)rand() / (float)RAND_MAX - 0.5f, y[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  tandem_runtime_t *rt;
  CHECK(tandem_runtime_create(NULL, &rt));
  tandem_buffer_t *bx, *by; /* GPU_LOCAL, filled through counted staging copies */
  CHECK(tandem_buffer_create_staged(rt, x, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &bx));
  CHECK(tandem_buffer_create_staged(rt, y, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &by));

  tandem_kernel_desc_t desc = {.struct_size = sizeof desc,
                               .spirv = tandem_spv_saxpy,
                               .spirv_size = tandem_spv_saxpy_size,
                               .workgroups = {n / 256, 1, 1},
                               .flags = TANDEM_KERNEL_CONTRACT_FROM_SHADER};
  tandem_kernel_t *saxpy;
  CHECK(tandem_kernel_create(rt, &desc, &saxpy));
  tandem_graph_t *graph;
  CHECK(tandem_graph_create(rt, &graph));
  tandem_view_t views[2] = {tandem_buffer_whole(bx), tandem_buffer_whole(by)};
  CHECK(tandem_graph_add_dispatch(graph, saxpy, views, 2, &push, sizeof push));
  CHECK(tandem_graph_run(graph)); /* prepare, submit once, wait */
  CHECK(tandem_buffer_read_staged(tandem_buffer_whole(by), got));

  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; i++)
    bad += fabsf(got[i] - (push.a * x[i] + y[i])) > 1e-6f * fmaxf(1.0f, fabsf(got[i]));
  uint64_t messages = tandem_runtime_validation_messages(rt);
  printf("saxpy on %u floats: %u mismatches, %llu validation messages\n", n, bad,
         (unsigned long long)messages);
  tandem_graph_release(graph);
  tandem_kernel_release(saxpy);
  tandem_buffer_release(bx);
  tandem_buffer_release(by);
  tandem_runtime_destroy(rt);
  free(x), free(y), free(got);
  return bad || messages ? 1 : 0;
}
