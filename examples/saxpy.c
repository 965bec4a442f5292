/* SPDX-License-Identifier: MIT */
/*
 * saxpy.c — the smallest complete tandem program: upload two vectors, run
 * y = a*x + y on the GPU, download y and check it against the CPU. Shows the
 * whole life of every object: runtime, buffers, kernel with its contract,
 * graph, executable, completion. Run it with TANDEM_VALIDATION=1 to turn the
 * Vulkan validation layer on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tandem/tandem.h"
#include "tandem_example_shaders.h"

#define CHECK(expr)                                                          \
  do {                                                                       \
    tandem_status_t s_ = (expr);                                             \
    if (s_ != TANDEM_OK) {                                                   \
      fprintf(stderr, "saxpy: %s: %s\n", #expr, tandem_error_message());     \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

int main(void) {
  const uint32_t n = 1u << 22;
  const uint64_t bytes = (uint64_t)n * sizeof(float);
  const float a = 2.5f;
  tandem_runtime_t *rt;
  CHECK(tandem_runtime_create(NULL, &rt));
  CHECK(tandem_runtime_open_gpu(rt));
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  tandem_runtime_gpu_info(rt, 0, &info);
  printf("device: %s (%s %s)\n", info.name, info.driver_name, info.driver_info);

  tandem_buffer_t *host_x, *host_y, *x, *y;
  CHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE, &host_x));
  CHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE, &host_y));
  CHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &x));
  CHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &y));

  tandem_map_t mx, my;
  CHECK(tandem_map_write(tandem_buffer_whole(host_x), &mx));
  CHECK(tandem_map_write(tandem_buffer_whole(host_y), &my));
  float *xs = mx.data, *ys = my.data;
  float *expect = malloc(bytes);
  srand(7);
  for (uint32_t i = 0; i < n; i++) {
    xs[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    ys[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    expect[i] = a * xs[i] + ys[i];
  }
  tandem_unmap(&mx);
  tandem_unmap(&my);

  tandem_binding_contract_t bindings[2] = {
      {.bytes = bytes, .alignment = 4, .access = TANDEM_ACCESS_READ},
      {.bytes = bytes, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE},
  };
  tandem_kernel_desc_t desc = {.struct_size = sizeof(tandem_kernel_desc_t),
                               .name = "saxpy",
                               .spirv = tandem_spv_saxpy,
                               .spirv_size = tandem_spv_saxpy_size,
                               .workgroups = {n / 256, 1, 1},
                               .bindings = bindings,
                               .binding_count = 2,
                               .push_constant_bytes = 8};
  tandem_kernel_t *saxpy;
  CHECK(tandem_kernel_create(rt, &desc, &saxpy));

  struct {
    float a;
    uint32_t n;
  } push = {a, n};
  tandem_graph_t *graph;
  CHECK(tandem_graph_create(rt, &graph));
  CHECK(tandem_graph_add_copy(graph, tandem_buffer_whole(host_x), tandem_buffer_whole(x),
                              TANDEM_LANE_AUTO));
  CHECK(tandem_graph_add_copy(graph, tandem_buffer_whole(host_y), tandem_buffer_whole(y),
                              TANDEM_LANE_AUTO));
  tandem_view_t views[2] = {tandem_buffer_whole(x), tandem_buffer_whole(y)};
  CHECK(tandem_graph_add_dispatch(graph, saxpy, views, 2, &push, sizeof push));
  CHECK(tandem_graph_add_copy(graph, tandem_buffer_whole(y), tandem_buffer_whole(host_y),
                              TANDEM_LANE_AUTO));
  tandem_exec_t *exec;
  CHECK(tandem_graph_prepare(graph, &exec));
  tandem_graph_release(graph);

  tandem_completion_t *done;
  CHECK(tandem_exec_submit(exec, &done));
  CHECK(tandem_completion_wait(done));
  tandem_completion_release(done);

  tandem_map_t result;
  CHECK(tandem_map_read(tandem_buffer_whole(host_y), &result));
  const float *got = result.data;
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; i++)
    if (fabsf(got[i] - expect[i]) > 1e-6f * fmaxf(1.0f, fabsf(expect[i]))) bad++;
  tandem_unmap(&result);
  tandem_statistics_t st;
  tandem_statistics_init(&st);
  tandem_runtime_statistics(rt, &st);
  tandem_lane_info_t up, down;
  tandem_lane_info_init(&up);
  tandem_lane_info_init(&down);
  CHECK(tandem_runtime_lane_info(rt, TANDEM_LANE_UPLOAD, &up));
  CHECK(tandem_runtime_lane_info(rt, TANDEM_LANE_DOWNLOAD, &down));
  printf("saxpy on %u floats: %u mismatches; copied %llu bytes (upload %llu, download %llu); "
         "%llu validation messages\n",
         n, bad, (unsigned long long)st.copied_bytes,
         (unsigned long long)up.copied_bytes, (unsigned long long)down.copied_bytes,
         (unsigned long long)tandem_runtime_validation_messages(rt));
  free(expect);
  tandem_exec_release(exec);
  tandem_kernel_release(saxpy);
  tandem_buffer_release(host_x);
  tandem_buffer_release(host_y);
  tandem_buffer_release(x);
  tandem_buffer_release(y);
  uint64_t messages = tandem_runtime_validation_messages(rt);
  tandem_runtime_destroy(rt);
  return bad || messages ? 1 : 0;
}
