/* SPDX-License-Identifier: MIT */
/*
 * test_user_vulkan.c — tandem on the application's Vulkan objects
 * (tandem_vulkan.h, "Bring your own device" and "Adoption"): a runtime on a VkDevice
 * the test creates with plain Vulkan (required features missing → refused
 * naming them; optional ones off → kernels needing them refused; the device
 * still usable after the runtime, by a second one), and a VkBuffer and a
 * compute pipeline made with plain Vulkan adopted into a runtime and used in
 * graphs, checked against CPU references on random data; another device's
 * objects and mismatched contracts refused with their messages. The suite's
 * graph tests also run on an own device (CTest test_graph_own_device).
 * Validation: tandem's own devices run with the layer through the harness;
 * the test's devices have the layer and synchronization validation on their
 * instance, with a messenger counting into the same counter. Label "vulkan".
 */
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <inttypes.h>
#include <stdlib.h>

#include "harness.h"
#include "tandem/tandem_vulkan.h"
#include "tandem_test_shaders.h"

/* A runtime on |dev|, whose messenger counts its messages. */
static tandem_runtime_t *own_runtime(th_vk_device_t *dev, tandem_budget_t *budget) {
  return th_runtime_on_device(th_vk_device_desc(dev), budget);
}

/* v[i] += 1 on the GPU over a HOST_VISIBLE buffer of random uints: the
 * result equals the CPU's. */
static void add_one_roundtrip(tandem_runtime_t *rt, uint64_t stream) {
  enum { N = 1000 };
  uint32_t data[N], got[N];
  th_rng_t rng = th_rng(stream);
  th_fill_random_u32(&rng, data, N);
  tandem_buffer_t *b = th_buffer(rt, sizeof data, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(b, 0, data, sizeof data);
  tandem_kernel_t *k = th_add_one_kernel(rt, N);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(b), N));
  th_run_graph(g, 3);
  th_read(b, 0, got, sizeof got);
  for (int i = 0; i < N; i++) data[i] += 3;
  TH_ASSERT_U32_ARRAY(got, data, N, "v + 3 after three runs");
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
}

/*---------------------------------------------------------- own device --*/

static void test_own_device_missing_required(void **state) {
  (void)state;
  th_validation_reset();
  static const char *const drops[] = {"synchronization2", "timelineSemaphore"};
  /* The whole name, with the struct that holds it (vk_physical.c's table). */
  static const char *const named[] = {
      "feature synchronization2 (VkPhysicalDeviceVulkan13Features)",
      "feature timelineSemaphore (VkPhysicalDeviceVulkan12Features)"};
  for (size_t i = 0; i < 2; i++) {
    th_vk_device_t *dev = th_vk_device_create(drops[i]);
    tandem_runtime_options_t o;
    tandem_runtime_options_init(&o);
    o.vulkan_device = th_vk_device_desc(dev);
    tandem_runtime_t *rt = (tandem_runtime_t *)(uintptr_t)1;
    TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_UNSUPPORTED, drops[i]);
    TH_ASSERT_MESSAGE_HAS(named[i]);
    TH_ASSERT_MESSAGE_HAS("feature chain given to vkCreateDevice");
    assert_null(rt);
    th_vk_device_destroy(dev);
  }
  TH_ASSERT_U64_EQ(th_validation_count(), 0);
}

static void test_own_device_bad_description(void **state) {
  (void)state;
  th_validation_reset();
  th_vk_device_t *dev = th_vk_device_create(NULL);
  tandem_vulkan_device_t d = *th_vk_device_desc(dev);
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.vulkan_device = &d;
  tandem_runtime_t *rt = NULL;

  d.get_instance_proc_addr = (void *)&own_runtime; /* not the loader's */
  TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_UNSUPPORTED,
                       "get_instance_proc_addr is not the system loader's");
  d = *th_vk_device_desc(dev);
  d.api_version = VK_API_VERSION_1_2;
  TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_UNSUPPORTED,
                       "created for Vulkan 1.2");
  d = *th_vk_device_desc(dev);
  d.lanes[TANDEM_LANE_DOWNLOAD].queue_family = 99;
  TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT,
                       "the download lane's queue_family is 99");
  d = *th_vk_device_desc(dev);
  d.lanes[TANDEM_LANE_COMPUTE].queue_index = 64;
  TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT,
                       "the compute lane's queue_index is 64");
  d = *th_vk_device_desc(dev);
  d.physical_device = NULL;
  TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT,
                       "physical_device is NULL");
  assert_null(rt);
  th_vk_device_destroy(dev);
  TH_ASSERT_U64_EQ(th_validation_count(), 0);
}

/* Optional features the application did not enable are off: the device
 * info does not list them and a kernel needing them is refused, while the
 * same kernel loads on a device that has them enabled. */
static void test_own_device_optional_off(void **state) {
  (void)state;
  th_validation_reset();
  const tandem_binding_contract_t b[4] = {{64 * 2, 4, TANDEM_ACCESS_READ},
                                          {64 * 4, 4, TANDEM_ACCESS_READ},
                                          {4, 4, TANDEM_ACCESS_READ},
                                          {64 * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t kd =
      th_kernel_desc("f16_storage", tandem_spv_f16_storage, tandem_spv_f16_storage_size, b, 4, 4);
  const uint32_t need = TANDEM_SHADER_STORAGE_BUFFER_16BIT | TANDEM_SHADER_FLOAT16;

  th_vk_device_t *full = th_vk_device_create(NULL);
  tandem_runtime_t *rt = own_runtime(full, NULL);
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  bool has = (info.shader_features & need) == need;
  tandem_kernel_t *k = NULL;
  if (has) {
    TH_ASSERT_OK(tandem_kernel_create(rt, &kd, &k));
    tandem_kernel_release(k);
  }
  th_runtime_destroy(rt);
  th_vk_device_destroy(full);

  th_vk_device_t *dev = th_vk_device_create("16bit");
  rt = own_runtime(dev, NULL);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  assert_false(info.shader_features & TANDEM_SHADER_STORAGE_BUFFER_16BIT);
  assert_false(info.shader_features & TANDEM_SHADER_UNIFORM_AND_STORAGE_BUFFER_16BIT);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &kd, &k), TANDEM_ERROR_UNSUPPORTED,
                       "storageBuffer16BitAccess");
  /* Issue 23: where the GPU has the feature, the refusal says it was not
   * enabled on the application's device, and how to enable it. */
  if (has)
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &kd, &k), TANDEM_ERROR_UNSUPPORTED,
                         "has but the application's VkDevice was created without: enable it");
  assert_null(k);
  th_runtime_destroy(rt);
  th_vk_device_destroy(dev);
  print_message("(16-bit storage and Float16 %s)\n", has ? "enabled: the kernel loaded" : "absent");
}

/* The application's messenger sees what tandem does wrong on its device
 * (the harness's own-device mode relies on it); the runtime counts nothing. */
static void test_own_device_validation_counted(void **state) {
  (void)state;
  th_validation_reset();
  th_vk_device_t *dev = th_vk_device_create(NULL);
  tandem_runtime_t *rt = own_runtime(dev, NULL);
  TH_ASSERT_U64_EQ(th_validation_count(), 0);
  TH_ASSERT_OK(tandem_test_control(rt, TANDEM_TEST_INJECT_VALIDATION_ERROR));
  assert_true(th_validation_count() >= 1);
  TH_ASSERT_U64_EQ(tandem_runtime_validation_messages(rt), 0);
  tandem_runtime_destroy(rt);
  th_vk_device_destroy(dev);
  th_validation_reset();
}

/* Destroying a runtime leaves the application's device usable: a second
 * runtime on it computes correctly, and the device is destroyed cleanly
 * after both (any leftover tandem object would be reported). */
static void test_own_device_outlives_runtime(void **state) {
  (void)state;
  th_validation_reset();
  th_vk_device_t *dev = th_vk_device_create(NULL);
  tandem_runtime_t *rt = own_runtime(dev, NULL);
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  assert_ptr_equal(h.device, th_vk_device_desc(dev)->device);
  assert_ptr_equal(h.instance, th_vk_device_desc(dev)->instance);
  add_one_roundtrip(rt, 1);
  th_runtime_destroy(rt);
  rt = own_runtime(dev, NULL);
  add_one_roundtrip(rt, 2);
  th_runtime_destroy(rt);
  th_vk_device_destroy(dev);
  TH_ASSERT_U64_EQ(th_validation_count(), 0);
}

/*------------------------------------------------------------- buffers --*/

#define HOST_FLAGS (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)

/* A HOST_VISIBLE buffer made with plain Vulkan and filled by the test: after
 * adoption tandem maps the application's bytes (not zeroed), a graph adds
 * one, and after release the VkBuffer is still the test's, holding the
 * result. The allocation counts in the statistics while adopted. */
static void test_adopt_host_visible(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 777 };
  uint32_t data[N], got[N];
  th_rng_t rng = th_rng(3);
  th_fill_random_u32(&rng, data, N);
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  th_vk_buffer_t vb = th_vk_buffer_create(&h, sizeof data, HOST_FLAGS);
  th_vk_buffer_access(&h, &vb, NULL, data, sizeof data);

  tandem_statistics_t before = th_stats(rt);
  tandem_vulkan_buffer_t desc = th_vk_buffer_desc(&vb, sizeof data, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *b = NULL;
  TH_ASSERT_OK(tandem_buffer_adopt_vulkan(rt, &desc, &b));
  assert_non_null(b);
  TH_ASSERT_U64_EQ(tandem_buffer_size(b), sizeof data);
  assert_int_equal(tandem_buffer_placement(b), TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_statistics_t during = th_stats(rt);
  TH_ASSERT_U64_EQ(during.allocations, before.allocations + 1);
  TH_ASSERT_U64_EQ(during.live_bytes, before.live_bytes + sizeof data);
  tandem_buffer_memory_t mem;
  TH_ASSERT_OK(tandem_buffer_memory(b, &mem));
  TH_ASSERT_U64_EQ(mem.memory_type, vb.memory_type);
  tandem_vulkan_view_t vv;
  TH_ASSERT_OK(tandem_view_vulkan_buffer(tandem_buffer_whole(b), &vv));
  assert_ptr_equal(vv.buffer, vb.buffer);

  th_read(b, 0, got, sizeof got);
  TH_ASSERT_U32_ARRAY(got, data, N, "the application's bytes, seen through tandem's map");
  tandem_kernel_t *k = th_add_one_kernel(rt, N);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(b), N));
  th_run_graph(g, 2);
  for (int i = 0; i < N; i++) data[i] += 2;
  th_read(b, 0, got, sizeof got);
  TH_ASSERT_U32_ARRAY(got, data, N, "v + 2, read through tandem's map");
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
  TH_ASSERT_U64_EQ(th_stats(rt).live_bytes, before.live_bytes);

  /* Still the test's: tandem unmapped it (a second map would be invalid
   * otherwise) and destroyed nothing. */
  memset(got, 0, sizeof got);
  th_vk_buffer_access(&h, &vb, got, NULL, sizeof got);
  TH_ASSERT_U32_ARRAY(got, data, N, "v + 2, read by the application after release");
  th_vk_buffer_destroy(&h, &vb);
}

/* GPU_LOCAL adoption in a graph of copies and a dispatch; the budget is
 * charged the size, or nothing when the desc says it is already charged. */
static void test_adopt_gpu_local_budget(void **state) {
  (void)state;
  th_validation_reset();
  enum { N = 4096 };
  const uint64_t bytes = N * 4;
  tandem_budget_t *budget = NULL;
  TH_ASSERT_OK(tandem_budget_create(3 * bytes, &budget));
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.budget = budget;
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  th_vk_buffer_t v1 = th_vk_buffer_create(&h, bytes, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  th_vk_buffer_t v2 = th_vk_buffer_create(&h, bytes, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);

  tandem_vulkan_buffer_t d1 = th_vk_buffer_desc(&v1, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *a1 = NULL, *a2 = NULL;
  TH_ASSERT_OK(tandem_buffer_adopt_vulkan(rt, &d1, &a1));
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), bytes);
  tandem_vulkan_buffer_t d2 = th_vk_buffer_desc(&v2, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  d2.budget_charged = true;
  TH_ASSERT_OK(tandem_buffer_adopt_vulkan(rt, &d2, &a2));
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), bytes);
  tandem_map_t m;
  TH_ASSERT_STATUS(tandem_map_read(tandem_buffer_whole(a1), &m), TANDEM_ERROR_UNSUPPORTED);

  tandem_buffer_t *in = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 3 * bytes);
  /* Over budget: charging a third adoption would pass the limit. */
  tandem_buffer_t *a3 = NULL;
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d1, &a3), TANDEM_ERROR_OVER_BUDGET,
                       "would exceed the memory budget");
  assert_null(a3);

  uint32_t data[N], got[N];
  th_rng_t rng = th_rng(4);
  th_fill_random_u32(&rng, data, N);
  th_write(in, 0, data, bytes);
  tandem_kernel_t *k = th_add_one_kernel(rt, N);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(in), tandem_buffer_whole(a1), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(a1), N));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(a1), tandem_buffer_whole(a2), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(a2), N));
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(a2), tandem_buffer_whole(out),
                                     TANDEM_LANE_AUTO));
  th_run_graph(g, 1);
  th_read(out, 0, got, bytes);
  for (int i = 0; i < N; i++) data[i] += 2;
  TH_ASSERT_U32_ARRAY(got, data, N, "in + 1 in one adopted buffer, + 1 in the other");
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(out);
  tandem_buffer_release(a1);
  tandem_buffer_release(a2);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 0);
  th_vk_buffer_destroy(&h, &v1);
  th_vk_buffer_destroy(&h, &v2);
  th_runtime_destroy(rt);
  tandem_budget_release(budget);
}

static void test_adopt_buffer_refused(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  th_vk_buffer_t vb = th_vk_buffer_create(&h, 4096, HOST_FLAGS);
  tandem_buffer_t *b = (tandem_buffer_t *)(uintptr_t)1;
  tandem_statistics_t before = th_stats(rt);

  tandem_vulkan_buffer_t d = th_vk_buffer_desc(&vb, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, NULL), TANDEM_ERROR_INVALID_ARGUMENT,
                       "out_buffer is NULL");
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, NULL, &b), TANDEM_ERROR_INVALID_ARGUMENT,
                       "desc is NULL");
  assert_null(b);
  d.memory = NULL;
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_INVALID_ARGUMENT,
                       "desc->memory is NULL");
  d = th_vk_buffer_desc(&vb, 4096, TANDEM_PLACEMENT_SHARED);
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_INVALID_ARGUMENT,
                       "placement SHARED (2) cannot be adopted");
  d = th_vk_buffer_desc(&vb, 0, TANDEM_PLACEMENT_HOST_VISIBLE);
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_OUT_OF_RANGE,
                       "size 0 is outside");
  d = th_vk_buffer_desc(&vb, 4096 + 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_OUT_OF_RANGE,
                       "size 8192 is more than the buffer holds");
  d = th_vk_buffer_desc(&vb, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  d.usage &= ~(uint32_t)VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_INVALID_ARGUMENT,
                       "lacks STORAGE_BUFFER");
  d = th_vk_buffer_desc(&vb, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  d.memory_type = 99;
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_UNSUPPORTED,
                       "memory_type 99 is not a memory type");
  d = th_vk_buffer_desc(&vb, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  d.memory_offset = 1;
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_OUT_OF_RANGE,
                       "memory_offset 1 is not a multiple");
  d = th_vk_buffer_desc(&vb, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  d.memory_size = 1024;
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_OUT_OF_RANGE,
                       "past the end of the 1024-byte memory");
  assert_null(b);

  /* Memory that is not host-visible and coherent is never passed off as
   * HOST_VISIBLE (where the device has such memory). */
  th_vk_buffer_t local = th_vk_buffer_create(&h, 4096, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if ((local.memory_flags & HOST_FLAGS) != HOST_FLAGS) {
    d = th_vk_buffer_desc(&local, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
    TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_UNSUPPORTED,
                         "is not HOST_VISIBLE|HOST_COHERENT");
  } else {
    print_message("(every device-local type here is host-visible: that refusal needs a "
                  "discrete GPU)\n");
  }
  th_vk_buffer_destroy(&h, &local);

  /* Another VkDevice's buffer. */
  th_vk_device_t *other = th_vk_device_create(NULL);
  tandem_vulkan_handles_t oh = th_vk_device_handles(other);
  th_vk_buffer_t ob = th_vk_buffer_create(&oh, 4096, HOST_FLAGS);
  d = th_vk_buffer_desc(&ob, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  TH_ASSERT_STATUS_MSG(tandem_buffer_adopt_vulkan(rt, &d, &b), TANDEM_ERROR_INVALID_ARGUMENT,
                       "the buffer belongs to another VkDevice");
  assert_null(b);
  th_vk_buffer_destroy(&oh, &ob);
  th_vk_device_destroy(other);

  /* Nothing was charged or counted by the refusals. */
  tandem_statistics_t after = th_stats(rt);
  TH_ASSERT_U64_EQ(after.allocations, before.allocations);
  TH_ASSERT_U64_EQ(after.live_bytes, before.live_bytes);
  th_vk_buffer_destroy(&h, &vb);
}

/*----------------------------------------------------------- pipelines --*/

static const tandem_binding_contract_t k_add_one[1] = {{4096 * 4, 4, TANDEM_ACCESS_READ_WRITE}};

/* What the pipeline of add_one_desc was built from (tests run on one thread). */
static tandem_kernel_desc_t g_add_one_kernel;

static tandem_vulkan_kernel_t add_one_desc(const th_vk_pipeline_t *p) {
  tandem_vulkan_kernel_t d;
  tandem_vulkan_kernel_init(&d);
  d.device = p->device;
  d.pipeline = p->pipeline;
  d.pipeline_layout = p->layout;
  d.set_layout = p->set_layout;
  g_add_one_kernel = th_kernel_desc("adopted_add_one", tandem_spv_add_one_u32,
                                    tandem_spv_add_one_u32_size, k_add_one, 1, 4);
  g_add_one_kernel.workgroups[0] = 4096 / 256;
  g_add_one_kernel.workgroups[1] = g_add_one_kernel.workgroups[2] = 1;
  d.kernel = &g_add_one_kernel;
  return d;
}

/* Issue 23: INDIRECT_BUFFER usage is asked only of a buffer dispatches read
 * their sizes from. Without it a buffer adopts, binds and computes, and is
 * refused as an indirect view by name. */
static void test_adopt_buffer_without_indirect(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 256 };
  uint32_t data[N], got[N];
  for (uint32_t i = 0; i < N; i++) data[i] = i * 3u;
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  th_vk_buffer_t vb = th_vk_buffer_create(&h, sizeof data, HOST_FLAGS);
  th_vk_buffer_access(&h, &vb, NULL, data, sizeof data);
  tandem_vulkan_buffer_t d = th_vk_buffer_desc(&vb, sizeof data, TANDEM_PLACEMENT_HOST_VISIBLE);
  d.usage &= ~(uint32_t)VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
  tandem_buffer_t *b = NULL;
  TH_ASSERT_OK(tandem_buffer_adopt_vulkan(rt, &d, &b));
  tandem_kernel_t *k = th_add_one_kernel(rt, N);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(b), N));
  th_run_graph(g, 1);
  th_read(b, 0, got, sizeof got);
  for (uint32_t i = 0; i < N; i++) data[i] += 1;
  TH_ASSERT_U32_ARRAY(got, data, N, "v + 1 in an adopted buffer without INDIRECT_BUFFER");
  tandem_view_t v = tandem_buffer_whole(b);
  tandem_dispatch_desc_t dd;
  tandem_dispatch_desc_init(&dd);
  dd.kernel = k;
  dd.views = &v;
  dd.view_count = 1;
  const uint32_t count = N;
  dd.push_constants = &count;
  dd.push_constant_bytes = sizeof count;
  dd.indirect = th_view(b, 0, 12);
  uint32_t n = 0;
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch_node(g, &dd, &n), TANDEM_ERROR_INVALID_ARGUMENT,
                       "the indirect view's buffer was adopted without indirect-buffer usage");
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
  th_vk_buffer_destroy(&h, &vb);
  TH_ASSERT_U64_EQ(th_validation_count(), 0);
}
/* A pipeline built with plain Vulkan from add_one_u32 runs in a graph like
 * a loaded kernel; releasing the kernel leaves the pipeline the test's (it
 * is adopted a second time, then destroyed by the test). */
static void test_adopt_pipeline(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 4096 };
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  th_vk_pipeline_t p =
      th_vk_pipeline_create(&h, tandem_spv_add_one_u32, tandem_spv_add_one_u32_size, 1, 4);
  tandem_vulkan_kernel_t d = add_one_desc(&p);
  uint32_t data[N], got[N];
  th_rng_t rng = th_rng(5);
  th_fill_random_u32(&rng, data, N);
  for (int round = 0; round < 2; round++) {
    tandem_kernel_t *k = NULL;
    TH_ASSERT_OK(tandem_kernel_adopt_vulkan(rt, &d, &k));
    assert_string_equal(tandem_kernel_name(k), "adopted_add_one");
    tandem_kernel_info_t info;
    tandem_kernel_info_init(&info);
    TH_ASSERT_OK(tandem_kernel_info(k, &info));
    assert_int_equal(info.local_size[0], 256);
    assert_int_equal(info.binding_count, 1);
    assert_int_equal(info.push_constant_bytes, 4);
    tandem_buffer_t *b = th_buffer(rt, sizeof data, TANDEM_PLACEMENT_HOST_VISIBLE);
    th_write(b, 0, data, sizeof data);
    tandem_graph_t *g = th_graph(rt);
    uint32_t n = N - 5; /* the last five stay as they were */
    TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, (tandem_view_t[]){tandem_buffer_whole(b)}, 1, &n,
                                           sizeof n));
    th_run_graph(g, 1);
    th_read(b, 0, got, sizeof got);
    uint32_t want[N];
    for (int i = 0; i < N; i++) want[i] = data[i] + ((uint32_t)i < n ? 1u : 0u);
    TH_ASSERT_U32_ARRAY(got, want, N, "the adopted pipeline's v + 1 over n elements");
    tandem_graph_release(g);
    tandem_buffer_release(b);
    tandem_kernel_release(k);
  }
  th_vk_pipeline_destroy(&h, &p);
}

/* Mismatched contracts are refused with tandem_kernel_create's messages,
 * word for word; another device's pipeline is refused as such. */
static void test_adopt_pipeline_refused(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  th_vk_pipeline_t p =
      th_vk_pipeline_create(&h, tandem_spv_add_one_u32, tandem_spv_add_one_u32_size, 1, 4);
  const tandem_binding_contract_t two[2] = {k_add_one[0], k_add_one[0]};
  const tandem_binding_contract_t read_only[1] = {{4096 * 4, 4, TANDEM_ACCESS_READ}};
  struct {
    const tandem_binding_contract_t *bindings;
    uint32_t count, push;
    const char *needle;
  } cases[] = {
      {two, 2, 4, "the shader declares 1 bindings, the contract has 2"},
      {k_add_one, 1, 8, "the shader's push constants are 4 bytes, the contract says 8"},
      {read_only, 1, 4, "the contract says READ but the shader may write"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tandem_vulkan_kernel_t d = add_one_desc(&p);
    tandem_kernel_desc_t kd = *d.kernel;
    kd.bindings = cases[i].bindings;
    kd.binding_count = cases[i].count;
    kd.push_constant_bytes = cases[i].push;
    d.kernel = &kd;
    tandem_kernel_t *k = (tandem_kernel_t *)(uintptr_t)1;
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, d.kernel, &k), TANDEM_ERROR_CONTRACT,
                         cases[i].needle);
    char created[1024];
    snprintf(created, sizeof created, "%s", th_last_message());
    TH_ASSERT_STATUS_MSG(tandem_kernel_adopt_vulkan(rt, &d, &k), TANDEM_ERROR_CONTRACT,
                         cases[i].needle);
    assert_string_equal(th_last_message(), created);
    assert_null(k);
  }
  tandem_vulkan_kernel_t d = add_one_desc(&p);
  d.pipeline = NULL;
  tandem_kernel_t *k = NULL;
  TH_ASSERT_STATUS_MSG(tandem_kernel_adopt_vulkan(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "desc->pipeline is NULL");
  TH_ASSERT_STATUS_MSG(tandem_kernel_adopt_vulkan(rt, NULL, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "desc is NULL");

  th_vk_device_t *other = th_vk_device_create(NULL);
  tandem_vulkan_handles_t oh = th_vk_device_handles(other);
  th_vk_pipeline_t op =
      th_vk_pipeline_create(&oh, tandem_spv_add_one_u32, tandem_spv_add_one_u32_size, 1, 4);
  d = add_one_desc(&op);
  TH_ASSERT_STATUS_MSG(tandem_kernel_adopt_vulkan(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "the pipeline of kernel 'adopted_add_one' belongs to another VkDevice");
  assert_null(k);
  th_vk_pipeline_destroy(&oh, &op);
  th_vk_device_destroy(other);
  th_vk_pipeline_destroy(&h, &p);
}

/* Both adoptions on a runtime that itself runs on the application's device. */
static void test_adopt_on_own_device(void **state) {
  (void)state;
  th_validation_reset();
  enum { N = 4096 };
  th_vk_device_t *dev = th_vk_device_create(NULL);
  tandem_runtime_t *rt = own_runtime(dev, NULL);
  tandem_vulkan_handles_t h = th_vk_device_handles(dev);
  th_vk_buffer_t vb = th_vk_buffer_create(&h, N * 4, HOST_FLAGS);
  th_vk_pipeline_t p =
      th_vk_pipeline_create(&h, tandem_spv_add_one_u32, tandem_spv_add_one_u32_size, 1, 4);
  uint32_t data[N], got[N];
  th_rng_t rng = th_rng(6);
  th_fill_random_u32(&rng, data, N);
  th_vk_buffer_access(&h, &vb, NULL, data, sizeof data);
  tandem_vulkan_buffer_t bd = th_vk_buffer_desc(&vb, sizeof data, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *b = NULL;
  TH_ASSERT_OK(tandem_buffer_adopt_vulkan(rt, &bd, &b));
  tandem_vulkan_kernel_t kd = add_one_desc(&p);
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_adopt_vulkan(rt, &kd, &k));
  tandem_graph_t *g = th_graph(rt);
  uint32_t n = N;
  TH_ASSERT_OK(
      tandem_graph_add_dispatch(g, k, (tandem_view_t[]){tandem_buffer_whole(b)}, 1, &n, sizeof n));
  th_run_graph(g, 4);
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
  th_runtime_destroy(rt);
  th_vk_buffer_access(&h, &vb, got, NULL, sizeof got);
  for (int i = 0; i < N; i++) data[i] += 4;
  TH_ASSERT_U32_ARRAY(got, data, N, "v + 4 by the adopted pipeline on the adopted buffer");
  th_vk_pipeline_destroy(&h, &p);
  th_vk_buffer_destroy(&h, &vb);
  th_vk_device_destroy(dev);
  TH_ASSERT_U64_EQ(th_validation_count(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_own_device_missing_required),
      cmocka_unit_test(test_own_device_bad_description),
      cmocka_unit_test(test_own_device_optional_off),
      cmocka_unit_test(test_own_device_validation_counted),
      cmocka_unit_test(test_own_device_outlives_runtime),
      cmocka_unit_test_setup_teardown(test_adopt_host_visible, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test(test_adopt_gpu_local_budget),
      cmocka_unit_test_setup_teardown(test_adopt_buffer_refused, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_adopt_buffer_without_indirect, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_adopt_pipeline, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_adopt_pipeline_refused, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test(test_adopt_on_own_device),
  };
  return TH_RUN_GROUP(tests);
}
