/* SPDX-License-Identifier: MIT */
/*
 * test_shader_clock.c — kernels that read a clock (VK_KHR_shader_clock;
 * tandem.h, the shader feature list: TANDEM_SHADER_SUBGROUP_CLOCK and
 * TANDEM_SHADER_DEVICE_CLOCK): each OpReadClockKHR needs the clock of its
 * scope (GL_EXT_shader_realtime_clock's the device clock, GL_ARB_shader_clock's
 * the subgroup clock; the capability with no read, the subgroup clock), and
 * such a kernel loads where the device has that clock and is refused naming
 * it where the device lacks it or the application's VkDevice was created
 * without it (without the feature, the extension, or the extension named).
 * `test_shader_clock run` reads the device clock twice in one invocation
 * and checks that the second reading is not before the first, on real
 * dispatches; it exits 77 (skip) where the device has no shaderDeviceClock.
 * Validation: as every CTS program (harness.h). Label "vulkan".
 */
#include <inttypes.h>
#include <stdlib.h>

#include "harness.h"
#include "tandem_test_shaders.h"

enum {
  CLOCKS = TANDEM_SHADER_SUBGROUP_CLOCK | TANDEM_SHADER_DEVICE_CLOCK,
  OUT_BYTES = 24, /* uvec2 t[2]; uvec2 sink */
};

static const tandem_binding_contract_t k_out[1] = {{OUT_BYTES, 8, TANDEM_ACCESS_WRITE}};

static tandem_kernel_desc_t clock_desc(const char *name, const uint32_t *spirv, size_t size) {
  tandem_kernel_desc_t d = th_kernel_desc(name, spirv, size, k_out, 1, 0);
  d.workgroups[0] = d.workgroups[1] = d.workgroups[2] = 1;
  return d;
}

static tandem_kernel_desc_t realtime_desc(void) {
  return clock_desc("clock_realtime", tandem_spv_clock_realtime, tandem_spv_clock_realtime_size);
}

static tandem_kernel_desc_t subgroup_desc(void) {
  return clock_desc("clock_subgroup", tandem_spv_clock_subgroup, tandem_spv_clock_subgroup_size);
}

static tandem_device_info_t device_info(tandem_runtime_t *rt) {
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  return info;
}

/* |d| loads on |rt| where |have| (its shader features) holds |bit|, and
 * then needs exactly |bit| of the clocks; elsewhere it is refused with
 * UNSUPPORTED naming |name|. */
static void expect_clock(tandem_runtime_t *rt, uint32_t have, const tandem_kernel_desc_t *d,
                         uint32_t bit, const char *name) {
  tandem_kernel_t *k = NULL;
  if (!(have & bit)) {
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, d, &k), TANDEM_ERROR_UNSUPPORTED, name);
    assert_null(k);
    return;
  }
  TH_ASSERT_OK(tandem_kernel_create(rt, d, &k));
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.shader_features & CLOCKS, bit);
  tandem_kernel_release(k);
}

/* clock_realtime's module with each OpReadClockKHR (4 words) made OpUndef
 * of its type and OpNoLine (3 + 1): it declares ShaderClockKHR and reads no
 * clock; spirv-val accepts it. The caller frees it. */
static uint32_t *capability_only(size_t *out_size) {
  size_t n = tandem_spv_clock_realtime_size / 4, reads = 0;
  uint32_t *w = malloc(tandem_spv_clock_realtime_size);
  assert_non_null(w);
  memcpy(w, tandem_spv_clock_realtime, tandem_spv_clock_realtime_size);
  for (size_t i = 5; i < n;) {
    uint32_t count = w[i] >> 16;
    assert_true(count > 0 && i + count <= n);
    if ((w[i] & 0xFFFFu) == 5056u && count == 4) { /* OpReadClockKHR type id scope */
      w[i] = 3u << 16 | 1u;                        /* OpUndef type id */
      w[i + 3] = 1u << 16 | 317u;                  /* OpNoLine */
      reads++;
    }
    i += count;
  }
  TH_ASSERT_U64_EQ(reads, 2);
  *out_size = tandem_spv_clock_realtime_size;
  return w;
}

/*---------------------------------------------------------------------------
 * Which clock a kernel needs, on tandem's device
 *---------------------------------------------------------------------------*/

static void test_clock_scopes(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  assert_string_equal(tandem_shader_feature_name(TANDEM_SHADER_SUBGROUP_CLOCK),
                      "shaderSubgroupClock");
  assert_string_equal(tandem_shader_feature_name(TANDEM_SHADER_DEVICE_CLOCK), "shaderDeviceClock");
  /* VK_KHR_shader_clock requires shaderSubgroupClock wherever it is. */
  if (dev.shader_features & TANDEM_SHADER_DEVICE_CLOCK)
    assert_true(dev.shader_features & TANDEM_SHADER_SUBGROUP_CLOCK);

  tandem_kernel_desc_t d = realtime_desc();
  expect_clock(rt, dev.shader_features, &d, TANDEM_SHADER_DEVICE_CLOCK, "shaderDeviceClock");
  d = subgroup_desc();
  expect_clock(rt, dev.shader_features, &d, TANDEM_SHADER_SUBGROUP_CLOCK, "shaderSubgroupClock");
  size_t size;
  uint32_t *words = capability_only(&size);
  d = clock_desc("clock_capability_only", words, size);
  expect_clock(rt, dev.shader_features, &d, TANDEM_SHADER_SUBGROUP_CLOCK, "shaderSubgroupClock");
  free(words);
  print_message("(GPU '%s': shaderSubgroupClock %s, shaderDeviceClock %s)\n", dev.name,
                (dev.shader_features & TANDEM_SHADER_SUBGROUP_CLOCK) ? "yes" : "no",
                (dev.shader_features & TANDEM_SHADER_DEVICE_CLOCK) ? "yes" : "no");
}

/*---------------------------------------------------------------------------
 * The application's device: the clocks count only where it enabled them
 *---------------------------------------------------------------------------*/

static void test_clock_own_device(void **state) {
  (void)state;
  th_validation_reset();
  /* Everything the GPU has, enabled (the harness enables VK_KHR_shader_clock
   * and its features where the device has them). */
  th_vk_device_t *dev = th_vk_device_create(NULL);
  tandem_runtime_t *rt = th_runtime_on_device(th_vk_device_desc(dev), NULL);
  uint32_t have = device_info(rt).shader_features;
  tandem_kernel_desc_t realtime = realtime_desc(), subgroup = subgroup_desc();
  expect_clock(rt, have, &realtime, TANDEM_SHADER_DEVICE_CLOCK, "shaderDeviceClock");
  expect_clock(rt, have, &subgroup, TANDEM_SHADER_SUBGROUP_CLOCK, "shaderSubgroupClock");
  th_runtime_destroy(rt);
  /* The same device described without the extension's name: its features
   * do not count (the description is what tandem knows). */
  tandem_vulkan_device_t unnamed = *th_vk_device_desc(dev);
  if (have & CLOCKS) {
    assert_true(unnamed.extension_count > 0);
    assert_string_equal(unnamed.extensions[unnamed.extension_count - 1],
                        "VK_KHR_shader_clock"); /* the harness's last */
    unnamed.extension_count--;
  }
  rt = th_runtime_on_device(&unnamed, NULL);
  TH_ASSERT_U64_EQ(device_info(rt).shader_features & CLOCKS, 0);
  tandem_kernel_t *k = NULL;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &realtime, &k), TANDEM_ERROR_UNSUPPORTED,
                       "shaderDeviceClock");
  if (have & TANDEM_SHADER_DEVICE_CLOCK) TH_ASSERT_MESSAGE_HAS("VK_KHR_shader_clock");
  assert_null(k);
  th_runtime_destroy(rt);
  th_vk_device_destroy(dev);

  /* The device clock left off (the subgroup clock on): only the device
   * clock's kernel is refused, saying the device was created without it. */
  dev = th_vk_device_create("shaderDeviceClock");
  rt = th_runtime_on_device(th_vk_device_desc(dev), NULL);
  uint32_t on = device_info(rt).shader_features;
  assert_false(on & TANDEM_SHADER_DEVICE_CLOCK);
  TH_ASSERT_U64_EQ(on & TANDEM_SHADER_SUBGROUP_CLOCK, have & TANDEM_SHADER_SUBGROUP_CLOCK);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &realtime, &k), TANDEM_ERROR_UNSUPPORTED,
                       "shaderDeviceClock");
  if (have & TANDEM_SHADER_DEVICE_CLOCK)
    TH_ASSERT_MESSAGE_HAS("has but the application's VkDevice was created without");
  assert_null(k);
  expect_clock(rt, on, &subgroup, TANDEM_SHADER_SUBGROUP_CLOCK, "shaderSubgroupClock");
  th_runtime_destroy(rt);
  th_vk_device_destroy(dev);

  /* No VK_KHR_shader_clock at all: both refused, the fix named. */
  dev = th_vk_device_create("shaderClock");
  rt = th_runtime_on_device(th_vk_device_desc(dev), NULL);
  TH_ASSERT_U64_EQ(device_info(rt).shader_features & CLOCKS, 0);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &realtime, &k), TANDEM_ERROR_UNSUPPORTED,
                       "shaderDeviceClock");
  if (have & TANDEM_SHADER_DEVICE_CLOCK)
    TH_ASSERT_MESSAGE_HAS("VkPhysicalDeviceShaderClockFeaturesKHR, with VK_KHR_shader_clock");
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &subgroup, &k), TANDEM_ERROR_UNSUPPORTED,
                       "shaderSubgroupClock");
  assert_null(k);
  th_runtime_destroy(rt);
  th_vk_device_destroy(dev);
  TH_ASSERT_U64_EQ(th_validation_count(), 0);
}

/*---------------------------------------------------------------------------
 * `run`: the device clock read on the device (77 where it has none)
 *---------------------------------------------------------------------------*/

/* Runs |d| (one invocation) three times, each into a buffer filled with
 * ones first: the kernel wrote (sink's high word is 0, the first reading
 * not all ones) and its second reading, as a 64-bit value, is not before
 * its first. */
static void read_twice(tandem_runtime_t *rt, const tandem_kernel_desc_t *d, const char *what) {
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, d, &k));
  tandem_buffer_t *out = th_buffer(rt, OUT_BYTES, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_view_t v = tandem_buffer_whole(out);
  for (int run = 0; run < 3; run++) {
    uint32_t w[OUT_BYTES / 4];
    memset(w, 0xFF, sizeof w);
    th_write(out, 0, w, sizeof w);
    tandem_graph_t *g = th_graph(rt);
    tandem_dispatch_desc_t dd = {.struct_size = sizeof(tandem_dispatch_desc_t),
                                 .kernel = k,
                                 .views = &v,
                                 .view_count = 1,
                                 .workgroups = {1, 1, 1}};
    TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &dd, NULL));
    th_run_graph(g, 1);
    tandem_graph_release(g);
    th_read(out, 0, w, sizeof w);
    uint64_t first = w[0] | (uint64_t)w[1] << 32, second = w[2] | (uint64_t)w[3] << 32;
    TH_ASSERT_U64_EQ(w[5], 0); /* sink.y: the kernel ran */
    if (first == UINT64_MAX) fail_msg("%s: the first reading was not written", what);
    if (second < first)
      fail_msg("%s: the second reading %" PRIu64 " is before the first %" PRIu64, what, second,
               first);
    printf("%s, run %d: %" PRIu64 " then %" PRIu64 " (+%" PRIu64 ")\n", what, run, first, second,
           second - first);
  }
  tandem_buffer_release(out);
  tandem_kernel_release(k);
}

static int run_clocks(void) {
  th_init();
  tandem_runtime_t *rt = th_runtime_create(NULL);
  tandem_device_info_t dev = device_info(rt);
  tandem_kernel_desc_t d = realtime_desc();
  if (!(dev.shader_features & TANDEM_SHADER_DEVICE_CLOCK)) {
    tandem_kernel_t *k = NULL;
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED,
                         "shaderDeviceClock");
    fprintf(stderr, "SKIP: GPU '%s' has no shaderDeviceClock (VK_KHR_shader_clock): %s\n", dev.name,
            th_last_message());
    th_runtime_destroy(rt);
    return TH_EXIT_SKIP;
  }
  read_twice(rt, &d, "device clock");
  if (dev.shader_features & TANDEM_SHADER_SUBGROUP_CLOCK) {
    d = subgroup_desc();
    read_twice(rt, &d, "subgroup clock");
  }
  th_runtime_destroy(rt);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "run") == 0) return run_clocks();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_clock_scopes, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test(test_clock_own_device),
  };
  return TH_RUN_GROUP(tests);
}
