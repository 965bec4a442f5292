/* SPDX-License-Identifier: MIT */
/*
 * three_stage.c — GPU → NPU → GPU in one graph, the pipeline of demo.json as
 * a C program: a = frame·0.5 + bias (GPU), c = a × W (the emulated NPU's
 * matmul_f32, 128×128), result = c·2 + 1 (GPU), checked against the CPU.
 * a and c are SHARED buffers, seen by both devices; tandem orders the three
 * nodes from their contracts and the bytes they touch (the GPU kernels' from
 * the shader, the NPU program's written out: an xclbin has no reflection).
 * Needs no NPU hardware: the runtime drives the emulated NPU, named
 * "@emulated". Run it with TANDEM_VALIDATION=1 for the validation layer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tandem/tandem.h"
#include "tandem_example_shaders.h"

/* Exit 77 (skipped, for CTest) when there is no usable GPU or NPU. */
#define CHECK(expr)                                                            \
  do {                                                                         \
    tandem_status_t s_ = (expr);                                               \
    if (s_ != TANDEM_OK) {                                                     \
      fprintf(stderr, "three_stage: %s: %s\n", #expr, tandem_error_message()); \
      exit(s_ == TANDEM_ERROR_NO_DEVICE ? 77 : 1);                             \
    }                                                                          \
  } while (0)

enum { N = 128, COUNT = N * N, BYTES = COUNT * 4 };

static float *random_floats(float lo, float hi) {
  float *v = malloc(BYTES);
  for (int i = 0; i < COUNT; i++) v[i] = lo + (hi - lo) * (float)rand() / (float)RAND_MAX;
  return v;
}

int main(void) {
  srand(1);
  float *frame = random_floats(0, 1), *bias = random_floats(-1, 1), *w = random_floats(-.1f, .1f);
  float *ones = malloc(BYTES), *got = malloc(BYTES);
  for (int i = 0; i < COUNT; i++) ones[i] = 1.0f;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "emulated";
  tandem_runtime_t *rt;
  CHECK(tandem_runtime_create(&o, &rt));

  tandem_buffer_t *in, *b, *weights, *one, *a, *c, *result;
  CHECK(tandem_buffer_create_staged(rt, frame, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &in));
  CHECK(tandem_buffer_create_staged(rt, bias, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &b));
  CHECK(tandem_buffer_create_staged(rt, ones, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &one));
  CHECK(tandem_buffer_create_staged(rt, w, BYTES, TANDEM_PLACEMENT_SHARED, &weights));
  CHECK(tandem_buffer_create(rt, BYTES, TANDEM_PLACEMENT_SHARED, &a));
  CHECK(tandem_buffer_create(rt, BYTES, TANDEM_PLACEMENT_SHARED, &c));
  CHECK(tandem_buffer_create(rt, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &result));

  /* c[i] = a[i]·scale + b[i]; bindings and push constants from the shader. */
  tandem_kernel_desc_t kd = {.struct_size = sizeof kd,
                             .spirv = tandem_spv_scale_add,
                             .spirv_size = tandem_spv_scale_add_size,
                             .workgroups = {COUNT / 256, 1, 1},
                             .flags = TANDEM_KERNEL_CONTRACT_FROM_SHADER};
  tandem_kernel_t *scale_add;
  CHECK(tandem_kernel_create(rt, &kd, &scale_add));
  tandem_binding_contract_t mm[3] = {{BYTES, 4, TANDEM_ACCESS_READ},
                                     {BYTES, 4, TANDEM_ACCESS_READ},
                                     {BYTES, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t pd = {.struct_size = sizeof pd,
                                  .program_path = TANDEM_NPU_EMULATED_XCLBIN, /* "@emulated" */
                                  .kernel_name = "matmul_f32",
                                  .bindings = mm,
                                  .binding_count = 3,
                                  .scalar_count = 3};
  tandem_npu_program_t *matmul;
  CHECK(tandem_npu_program_create(rt, &pd, &matmul));

  tandem_graph_t *g;
  CHECK(tandem_graph_create(rt, &g));
  struct {
    float scale;
    uint32_t n;
  } pre = {0.5f, COUNT}, post = {2.0f, COUNT};
  tandem_view_t v1[3] = {tandem_buffer_whole(in), tandem_buffer_whole(b), tandem_buffer_whole(a)};
  tandem_view_t v2[3] = {tandem_buffer_whole(a), tandem_buffer_whole(weights),
                         tandem_buffer_whole(c)};
  tandem_view_t v3[3] = {tandem_buffer_whole(c), tandem_buffer_whole(one),
                         tandem_buffer_whole(result)};
  const uint32_t mnk[3] = {N, N, N};
  CHECK(tandem_graph_add_dispatch(g, scale_add, v1, 3, &pre, sizeof pre));
  CHECK(tandem_graph_add_npu_run(g, matmul, v2, 3, mnk, 3));
  CHECK(tandem_graph_add_dispatch(g, scale_add, v3, 3, &post, sizeof post));
  CHECK(tandem_graph_run(g));
  CHECK(tandem_buffer_read_staged(tandem_buffer_whole(result), got));

  uint32_t bad = 0;
  for (int r = 0; r < N; r++)
    for (int col = 0; col < N; col++) {
      double sum = 0;
      for (int k = 0; k < N; k++)
        sum += (double)(frame[r * N + k] * 0.5f + bias[r * N + k]) * w[k * N + col];
      float want = (float)sum * 2.0f + 1.0f;
      bad += fabsf(got[r * N + col] - want) > 1e-4f * fmaxf(1.0f, fabsf(want));
    }
  uint64_t messages = tandem_runtime_validation_messages(rt);
  printf("three_stage: %d outputs, %u mismatches, %llu validation messages\n", COUNT, bad,
         (unsigned long long)messages);
  tandem_graph_release(g);
  tandem_kernel_release(scale_add);
  tandem_npu_program_release(matmul);
  tandem_buffer_t *all[7] = {in, b, weights, one, a, c, result};
  for (int i = 0; i < 7; i++) tandem_buffer_release(all[i]);
  tandem_runtime_destroy(rt);
  free(frame), free(bias), free(w), free(ones), free(got);
  return bad || messages ? 1 : 0;
}
