/* SPDX-License-Identifier: MIT */
/*
 * test_spirv_walks.c — one kernel load walks its SPIR-V once (issue 33 item
 * 3): reflection's scan (backends/spirv/spirv_scan.c) keeps the workgroup
 * memory as terms of the specialization, and the Vulkan backend's pipeline
 * creation evaluates those terms instead of walking the module again. The
 * scan counts its walks (tandem_spirv_walks, internal: this test links the
 * library's objects, not the shared library, and the harness's sources with
 * them). Each load below must add exactly one walk, whatever path it takes:
 * spec-sized shared arrays (nested, two variables), the refusal over the
 * device's limit, and the LocalSize rewrite; the sizes are checked against
 * hand-computed values, and the kernels that run are checked against a CPU
 * reference. Vulkan with the validation layer (the harness's runtime).
 */
#include <stdlib.h>

#include "backends/spirv/spirv_scan.h"
#include "harness.h"
#include "tandem_test_shaders.h"

static tandem_kernel_info_t kernel_info(const tandem_kernel_t *k) {
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  return info;
}

/* Loads |d| and asserts |expected|; the load walked the module exactly once. */
static tandem_kernel_t *load_once(tandem_runtime_t *rt, const tandem_kernel_desc_t *d,
                                  tandem_status_t expected, const char *needle) {
  uint64_t before = tandem_spirv_walks();
  tandem_kernel_t *k = NULL;
  if (expected == TANDEM_OK) TH_ASSERT_OK(tandem_kernel_create(rt, d, &k));
  else TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, d, &k), expected, needle);
  uint64_t walks = tandem_spirv_walks() - before;
  if (walks != 1)
    fail_msg("kernel '%s': the load walked its SPIR-V %llu times, expected once", d->name,
             (unsigned long long)walks);
  return k;
}

static void test_shared_rows_walked_once(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev;
  tandem_device_info_init(&dev);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &dev));
  enum { ROWS = 16, GROUPS = 4, N = GROUPS * ROWS * 64 };
  const tandem_binding_contract_t b[2] = {{N * 4, 4, TANDEM_ACCESS_READ},
                                          {GROUPS * ROWS * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d =
      th_kernel_desc("shared_rows", tandem_spv_shared_rows, tandem_spv_shared_rows_size, b, 2, 0);
  tandem_spec_constant_t rows = {.id = 0, .type = TANDEM_SCALAR_UINT32};
  d.spec_constants = &rows;
  d.spec_constant_count = 1;
  /* Over the limit by one row: refused by the terms, no second walk. */
  rows.value.u32 = dev.max_shared_memory_bytes / 256 + 1;
  assert_null(load_once(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT, "maxComputeSharedMemorySize"));
  rows.value.u32 = ROWS;
  tandem_kernel_t *k = load_once(rt, &d, TANDEM_OK, NULL);
  TH_ASSERT_U64_EQ(kernel_info(k).shared_memory_bytes, ROWS * 64 * 4);
  /* It computes what it says: row sums. */
  float *x = malloc(N * 4), out[GROUPS * ROWS];
  assert_non_null(x);
  th_rng_t rng = th_rng(33);
  th_fill_random_float(&rng, x, N);
  tandem_buffer_t *in = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *ob = th_buffer(rt, sizeof out, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(in, 0, x, N * 4);
  tandem_view_t v[2] = {tandem_buffer_whole(in), tandem_buffer_whole(ob)};
  tandem_graph_t *g = th_graph(rt);
  tandem_dispatch_desc_t dd = {.struct_size = sizeof(tandem_dispatch_desc_t),
                               .kernel = k,
                               .views = v,
                               .view_count = 2,
                               .workgroups = {GROUPS, 1, 1}};
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &dd, NULL));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  th_read(ob, 0, out, sizeof out);
  for (uint32_t r = 0; r < GROUPS * ROWS; r++) {
    float want = 0;
    for (uint32_t i = 0; i < 64; i++) want += x[r * 64 + i];
    float diff = out[r] - want;
    if (diff < 0) diff = -diff;
    if (diff > 1e-4f * (1.0f + (want < 0 ? -want : want)))
      fail_msg("row %u: sum %.7g, expected %.7g", r, (double)out[r], (double)want);
  }
  free(x);
  tandem_buffer_release(in);
  tandem_buffer_release(ob);
  tandem_kernel_release(k);
}

/* Two spec-sized two-dimensional arrays (TILE x TILE floats each). */
static void test_tiles_walked_once(void **state) {
  tandem_runtime_t *rt = *state;
  const tandem_binding_contract_t b[3] = {{TANDEM_BYTES_VIEW, 4, TANDEM_ACCESS_READ},
                                          {TANDEM_BYTES_VIEW, 4, TANDEM_ACCESS_READ},
                                          {TANDEM_BYTES_VIEW, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d = th_kernel_desc("tiled_matmul", tandem_spv_tiled_matmul,
                                          tandem_spv_tiled_matmul_size, b, 3, 12);
  /* SpecId 0 also sets the workgroup size, so it is always given. */
  tandem_spec_constant_t tile = {.id = 0, .type = TANDEM_SCALAR_UINT32, .value.u32 = 16};
  d.spec_constants = &tile;
  d.spec_constant_count = 1;
  tandem_kernel_t *k = load_once(rt, &d, TANDEM_OK, NULL);
  TH_ASSERT_U64_EQ(kernel_info(k).shared_memory_bytes, 2 * 16 * 16 * 4);
  tandem_kernel_release(k);
  tile.value.u32 = 8;
  k = load_once(rt, &d, TANDEM_OK, NULL);
  TH_ASSERT_U64_EQ(kernel_info(k).shared_memory_bytes, 2 * 8 * 8 * 4);
  tandem_kernel_release(k);
}

/* The LocalSize rewrite path: the module pipeline creation builds from is a
 * rewritten copy (validated again by SPIRV-Tools, which is not tandem's
 * walk); the terms found in the original still hold. */
static void test_rewrite_walked_once(void **state) {
  tandem_runtime_t *rt = *state;
  const tandem_binding_contract_t b[2] = {{TANDEM_BYTES_VIEW, 4, TANDEM_ACCESS_READ},
                                          {TANDEM_BYTES_VIEW, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d = th_kernel_desc("no_local_size", tandem_spv_no_local_size,
                                          tandem_spv_no_local_size_size, b, 2, 0);
  d.flags = TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE;
  d.local_size[0] = 256, d.local_size[1] = 1, d.local_size[2] = 1;
  tandem_kernel_t *k = load_once(rt, &d, TANDEM_OK, NULL);
  tandem_kernel_info_t info = kernel_info(k);
  assert_true(info.local_size_overridden);
  TH_ASSERT_U64_EQ(info.shared_memory_bytes, 256 * 4);
  tandem_kernel_release(k);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_shared_rows_walked_once, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_tiles_walked_once, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_rewrite_walked_once, th_setup_gpu, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
