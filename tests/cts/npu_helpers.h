/* SPDX-License-Identifier: MIT */
/*
 * npu_helpers.h — what the CTS programs that put GPU work around the
 * emulated NPU share (test_npu.c, test_external_sync.c): a runtime with the
 * emulated NPU open, the scale_add kernel and its dispatch, and the
 * emulated NPU's matmul_f32 program. Static inline: each program compiles
 * what it uses; the emulated NPU's paths come from the program's own
 * compile definitions (tests/CMakeLists.txt).
 */
#ifndef TANDEM_TESTS_NPU_HELPERS_H_
#define TANDEM_TESTS_NPU_HELPERS_H_

#include "harness.h"
#include "tandem/tandem_xrt.h"
#include "tandem_test_shaders.h"

/* A runtime with the emulated NPU and |sharing|; |timeout_ms| 0 keeps the
 * watchdog's default. The NPU is opened: with |out_open| its status is
 * handed back, without it the open must succeed. */
static inline tandem_runtime_t *th_npu_runtime(tandem_sharing_t sharing, uint32_t timeout_ms,
                                               tandem_status_t *out_open) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "emulated";
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  o.sharing = sharing;
  if (timeout_ms) o.npu_timeout_ms = timeout_ms;
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_status_t s = tandem_runtime_open_npu(rt);
  if (out_open) {
    *out_open = s;
  } else {
    TH_ASSERT_OK(s);
  }
  return rt;
}

/* c = scale * a + b over |n| floats (the scale_add shader; push {scale, n}). */
static inline tandem_kernel_t *th_scale_add_kernel(tandem_runtime_t *rt, uint32_t n) {
  tandem_binding_contract_t b[3] = {{n * 4u, 4, TANDEM_ACCESS_READ},
                                    {n * 4u, 4, TANDEM_ACCESS_READ},
                                    {n * 4u, 4, TANDEM_ACCESS_WRITE}};
  return th_kernel_load(rt, "scale_add", tandem_spv_scale_add, tandem_spv_scale_add_size,
                        (n + 255) / 256, b, 3, 8);
}

static inline void th_add_scale_add(tandem_graph_t *g, tandem_kernel_t *k, tandem_buffer_t *a,
                                    tandem_buffer_t *b, tandem_buffer_t *c, float scale,
                                    uint32_t n) {
  struct {
    float scale;
    uint32_t n;
  } push = {scale, n};
  tandem_view_t v[3] = {th_view(a, 0, n * 4u), th_view(b, 0, n * 4u), th_view(c, 0, n * 4u)};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, v, 3, &push, sizeof push));
}

/* The emulated NPU's matmul_f32: C (m x n) = A (m x k) · B (k x n), floats,
 * scalars {m, n, k}. */
static inline tandem_npu_program_t *th_matmul_program(tandem_runtime_t *rt, uint32_t m, uint32_t n,
                                                      uint32_t k) {
  tandem_binding_contract_t b[3] = {{m * k * 4u, 4, TANDEM_ACCESS_READ},
                                    {k * n * 4u, 4, TANDEM_ACCESS_READ},
                                    {m * n * 4u, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .name = "matmul",
                                 .program_path = TANDEM_TEST_EMU_XCLBIN,
                                 .kernel_name = "matmul_f32",
                                 .bindings = b,
                                 .binding_count = 3,
                                 .scalar_count = 3};
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_OK(tandem_npu_program_create(rt, &d, &p));
  return p;
}

#endif /* TANDEM_TESTS_NPU_HELPERS_H_ */
