/* SPDX-License-Identifier: MIT */
/*
 * test_local_size_id.c — a kernel as a Vulkan 1.3 toolchain writes it:
 * glslang --target-env vulkan1.3 makes SPIR-V 1.6, where local_size_x_id is
 * the LocalSizeId execution mode, which needs Vulkan 1.3's maintenance4
 * (VUID-RuntimeSpirv-LocalSizeId-06434; tandem.h's shader feature
 * TANDEM_SHADER_LOCAL_SIZE_ID). Before tandem enabled maintenance4 such a
 * kernel loaded and ran with a validation error. Here it runs with the
 * workgroup width from its specialization, checked against a CPU
 * reference, where the device has maintenance4; on an application's
 * VkDevice created without it, it is refused naming maintenance4 and the
 * fix. Validation: as every CTS program (harness.h). Label "vulkan".
 */
#include <stdlib.h>

#include "harness.h"
#include "tandem_test_shaders_vk13.h"

enum { N = 1000 }; /* not a multiple of any width: the shader's bound check runs */

static const tandem_binding_contract_t k_io[2] = {{N * 4, 4, TANDEM_ACCESS_READ},
                                                  {N * 4, 4, TANDEM_ACCESS_WRITE}};

static tandem_device_info_t device_info(tandem_runtime_t *rt) {
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  return info;
}

static tandem_spec_constant_t spec_u32(uint32_t id, uint32_t v) {
  tandem_spec_constant_t c = {.id = id, .type = TANDEM_SCALAR_UINT32};
  c.value.u32 = v;
  return c;
}

/* local_size_id with |width| (spec 0) and, when |scale| is not 0, SCALE
 * (spec 1; else its default 3). */
static tandem_kernel_desc_t lsid_desc(tandem_spec_constant_t specs[2], uint32_t width,
                                      uint32_t scale) {
  tandem_kernel_desc_t d = th_kernel_desc("local_size_id", tandem_spv_local_size_id,
                                          tandem_spv_local_size_id_size, k_io, 2, 4);
  specs[0] = spec_u32(0, width);
  specs[1] = spec_u32(1, scale);
  d.spec_constants = specs;
  d.spec_constant_count = scale ? 2 : 1;
  return d;
}

/* Creates the kernel with |width| and |scale|, checks its reported
 * workgroup size, runs it over N elements and compares with the CPU. */
static void run_width(tandem_runtime_t *rt, uint32_t width, uint32_t scale) {
  tandem_spec_constant_t specs[2];
  tandem_kernel_desc_t d = lsid_desc(specs, width, scale);
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.local_size[0], width);
  TH_ASSERT_U64_EQ(info.local_size[1], 1);
  TH_ASSERT_U64_EQ(info.local_size[2], 1);

  tandem_buffer_t *in = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t x[N], y[N], want[N];
  th_rng_t rng = th_rng(width);
  for (uint32_t i = 0; i < N; i++) x[i] = th_rand_u32(&rng) % 100000;
  th_write(in, 0, x, sizeof x);
  tandem_view_t v[2] = {tandem_buffer_whole(in), tandem_buffer_whole(out)};
  const uint32_t n = N;
  th_run_dispatch(rt, k, v, 2, &n, 4, (N + width - 1) / width, 1);
  th_read(out, 0, y, sizeof y);
  for (uint32_t i = 0; i < N; i++) want[i] = x[i] * (scale ? scale : 3) + width;
  TH_ASSERT_U32_ARRAY(y, want, N, "local_size_id: x * SCALE + the workgroup width");
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(out);
}

/* On tandem's own device: maintenance4 is enabled wherever the device has
 * it, and the kernel runs at two widths (the second with SCALE's default);
 * a device without it refuses the kernel naming maintenance4. */
static void test_local_size_id_runs(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  assert_string_equal(tandem_shader_feature_name(TANDEM_SHADER_LOCAL_SIZE_ID), "maintenance4");
  /* Vulkan 1.3 requires maintenance4 of every device: one of 1.3 (lavapipe,
   * NVIDIA's) must report it, or tandem did not read or enable it. */
  const bool vk13 =
      TANDEM_VERSION_MAJOR_OF(dev.api_version) > 1 || TANDEM_VERSION_MINOR_OF(dev.api_version) >= 3;
  if (vk13) assert_true(dev.shader_features & TANDEM_SHADER_LOCAL_SIZE_ID);
  if (!(dev.shader_features & TANDEM_SHADER_LOCAL_SIZE_ID)) {
    tandem_spec_constant_t specs[2];
    tandem_kernel_desc_t d = lsid_desc(specs, 64, 5);
    tandem_kernel_t *k = NULL;
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED,
                         "maintenance4");
    assert_null(k);
    return;
  }
  run_width(rt, 64, 5);
  run_width(rt, 128, 0);
}

/* On an application's VkDevice: created without maintenance4 the kernel is
 * refused, saying the device has it and how to enable it; created with it
 * (the harness's device enables what tandem uses) it runs. */
static void test_local_size_id_own_device(void **state) {
  (void)state;
  th_vk_device_t *dev = th_vk_device_create("maintenance4");
  tandem_runtime_t *rt = th_runtime_on_device(th_vk_device_desc(dev), NULL);
  tandem_runtime_t *probe = th_runtime_create(NULL);
  const uint32_t have = device_info(probe).shader_features;
  th_runtime_destroy(probe);
  assert_false(device_info(rt).shader_features & TANDEM_SHADER_LOCAL_SIZE_ID);
  tandem_spec_constant_t specs[2];
  tandem_kernel_desc_t d = lsid_desc(specs, 64, 5);
  tandem_kernel_t *k = NULL;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED, "maintenance4");
  if (have & TANDEM_SHADER_LOCAL_SIZE_ID)
    TH_ASSERT_MESSAGE_HAS("has but the application's VkDevice was created without");
  assert_null(k);
  th_runtime_destroy(rt);
  th_vk_device_destroy(dev);

  if (have & TANDEM_SHADER_LOCAL_SIZE_ID) {
    dev = th_vk_device_create(NULL);
    rt = th_runtime_on_device(th_vk_device_desc(dev), NULL);
    assert_true(device_info(rt).shader_features & TANDEM_SHADER_LOCAL_SIZE_ID);
    run_width(rt, 32, 7);
    th_runtime_destroy(rt);
    th_vk_device_destroy(dev);
  }
  TH_ASSERT_U64_EQ(th_validation_count(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_local_size_id_runs, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test(test_local_size_id_own_device),
  };
  return TH_RUN_GROUP(tests);
}
