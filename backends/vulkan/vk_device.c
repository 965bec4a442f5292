/* SPDX-License-Identifier: MIT */
/*
 * vk_device.c — opening and destroying the runtime's Vulkan device: tandem's
 * own (an instance of vk_instance.c, a physical device vk_physical.c
 * describes, a VkDevice with the features and extensions it offers) or the
 * application's (checked by vk_byo.c); then what every open shares: the
 * decisions (timestamps, descriptors, interop), clock calibration, the lanes'
 * queues, timelines and command pools. The vtable the device gets is
 * vk_backend.c's, passed down (tandem_vk_tables_t), so nothing here calls up.
 */
#include <stddef.h>
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/vulkan/vk_internal.h"

void tandem_vk_gpu_destroy(tandem__gpu_t *base) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  if (g->device) {
    /* Only tandem's queues, under their locks, on the application's device:
     * it may be using its other queues right now. A failed wait: the device
     * is lost, and teardown goes on as tandem_vk_queues_wait_idle_locked
     * says. */
    tandem_vk_gpu_idle(&g->base);
    for (int l = 0; l < TANDEM__MAX_LANES; l++) {
      tandem_vk_lane_t *lane = &g->lanes[l];
      /* User lanes were given back before the runtime's last reference went
       * (sessions and imported timelines hold one); an imported timeline is
       * its owner's to destroy in any case. */
      assert(l < TANDEM_LANE_COUNT || !lane->timeline);
      if (lane->timeline && (l < TANDEM_LANE_COUNT || lane->owned))
        g->vk.vkDestroySemaphore(g->device, lane->timeline, NULL);
      if (lane->mirror) g->vk.vkDestroySemaphore(g->device, lane->mirror, NULL);
      for (int i = 0; i < TANDEM_VK_SLOT_POOLS; i++)
        if (lane->pools[i]) g->vk.vkDestroyCommandPool(g->device, lane->pools[i], NULL);
    }
    tandem_vk_descriptor_pools_trim(&g->base);
    tandem_vk_fault_forget_device(g->device); /* only void calls follow */
    if (!g->borrowed) g->vk.vkDestroyDevice(g->device, NULL);
  }
  for (int l = 0; l < TANDEM__MAX_LANES; l++)
    for (int i = 0; i < TANDEM_VK_SLOT_POOLS; i++)
      pthread_mutex_destroy(&g->lanes[l].pool_mutex[i]);
  pthread_mutex_destroy(&g->signal_mutex);
  pthread_mutex_destroy(&g->clock_mutex);
  pthread_mutex_destroy(&g->kept_mutex);
  for (uint32_t i = 0; i < g->queue_count; i++) pthread_mutex_destroy(&g->queues[i].mutex);
  if (g->messenger) vkDestroyDebugUtilsMessengerEXT(g->instance, g->messenger, NULL);
  if (g->instance && !g->borrowed) vkDestroyInstance(g->instance, NULL);
  g->tag = 0; /* a later cast of this pointer trips tandem_vk_gpu_cast's check */
  free(g);
}

bool tandem_vk_clock_pair(tandem_vk_gpu_t *g, uint64_t *out_tick, uint64_t *out_host_ns) {
  VkCalibratedTimestampInfoEXT info[2] = {{.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                                           .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT},
                                          {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                                           .timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
  uint64_t best = UINT64_MAX;
  for (int attempt = 0; attempt < 3; attempt++) {
    uint64_t values[2], deviation;
    if (g->vk.vkGetCalibratedTimestampsEXT(g->device, 2, info, values, &deviation) < 0)
      return best != UINT64_MAX;
    if (deviation < best) {
      best = deviation;
      *out_tick = values[0] & g->timestamp_mask;
      *out_host_ns = values[1];
    }
  }
  return true;
}

/* Maps the GPU timestamp counter to CLOCK_MONOTONIC with a calibrated pair,
 * if the device offers both time domains (kept fresh: vk_internal.h). */
static void tandem_vk_calibrate(tandem_vk_gpu_t *g) {
  uint32_t n = 0;
  if (vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(g->physical, &n, NULL) < 0 || n == 0) return;
  VkTimeDomainEXT domains[8];
  if (n > 8) n = 8;
  if (vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(g->physical, &n, domains) < 0) return;
  bool device = false, monotonic = false;
  for (uint32_t i = 0; i < n; i++) {
    device |= domains[i] == VK_TIME_DOMAIN_DEVICE_EXT;
    monotonic |= domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  }
  if (!device || !monotonic) return;
  if (!tandem_vk_clock_pair(g, &g->tick_first, &g->host_first)) return;
  g->tick_anchor = g->tick_first;
  g->host_anchor = g->host_first;
  g->clock_rate = g->timestamp_period;
  g->calibrated = true;
}

/* Decides timestamps from the lanes' families, whether hostQueryReset is
 * (or will be) enabled, and the option. */
static void tandem_vk_timestamps_decide(tandem_vk_gpu_t *g, const tandem_runtime_options_t *options,
                                        const VkQueueFamilyProperties *qprops,
                                        const uint32_t family[TANDEM_LANE_COUNT_GPU],
                                        bool host_query_reset) {
  uint32_t valid_bits = 64;
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++)
    if (qprops[family[l]].timestampValidBits < valid_bits)
      valid_bits = qprops[family[l]].timestampValidBits;
  g->timestamps =
      options->gpu_timestamps && valid_bits > 0 && host_query_reset && g->timestamp_period > 0;
  g->timestamp_mask = valid_bits >= 64 ? UINT64_MAX : ((1ull << valid_bits) - 1);
}

/* How dispatches get their bindings: pushed into the command buffer where
 * the device has VK_KHR_push_descriptor with room for every binding (and,
 * on the application's device, was created with it), else from descriptor
 * sets. Pushing spares prepare a descriptor pool and its fresh memory
 * (bench/NOTES.md, "push descriptors"). TANDEM_VK_PUSH_DESCRIPTORS=0 keeps
 * sets (measurements, and the tests of the sets path). */
static void tandem_vk_descriptors_decide(tandem_vk_gpu_t *g) {
  const char *env = getenv("TANDEM_VK_PUSH_DESCRIPTORS");
  g->push_descriptors =
      (g->base.info.features & TANDEM_GPU_PUSH_DESCRIPTORS) && !(env && strcmp(env, "0") == 0);
}

/* Interop capabilities from the extensions in info->features (the ones the
 * device has and, on the application's device, was created with). */
static void tandem_vk_interop_decide(tandem_vk_gpu_t *g, const tandem_runtime_options_t *options) {
  const tandem_device_info_t *info = &g->base.info;
  g->base.can_import_host = info->features & TANDEM_GPU_EXTERNAL_MEMORY_HOST;
  g->base.can_import_dmabuf = (info->features & TANDEM_GPU_EXTERNAL_MEMORY_DMA_BUF) &&
                              (info->features & TANDEM_GPU_EXTERNAL_MEMORY_FD);
  if (info->features & TANDEM_GPU_EXTERNAL_MEMORY_FD)
    g->base.external_memory_types |= TANDEM_EXTERNAL_MEMORY_OPAQUE_FD;
  if (g->base.can_import_dmabuf) g->base.external_memory_types |= TANDEM_EXTERNAL_MEMORY_DMA_BUF;
  /* The lanes' timelines are made exportable only when the runtime asks. */
  if (info->features & TANDEM_GPU_EXTERNAL_SEMAPHORE_FD) {
    bool exportable, importable;
    tandem_vk_timeline_caps(g->physical, &exportable, &importable);
    g->base.timelines_exportable = options->export_timelines && exportable;
    g->base.can_import_timelines = importable;
  }
  if (g->base.can_import_host) {
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 pp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &hp};
    vkGetPhysicalDeviceProperties2(g->physical, &pp);
    g->base.host_import_alignment = hp.minImportedHostPointerAlignment;
  }
}

/* Everything after the VkDevice exists: its function table, calibration,
 * the lanes' queues, timelines and pools. Destroys |g| on failure. */
static tandem_status_t tandem_vk_gpu_finish(tandem_vk_gpu_t *g, bool calibrate,
                                            const VkQueueFamilyProperties *qprops,
                                            const uint32_t family[TANDEM_LANE_COUNT_GPU],
                                            const uint32_t index[TANDEM_LANE_COUNT_GPU],
                                            tandem__gpu_t **out_gpu) {
  volkLoadDeviceTable(&g->vk, g->device);
  tandem_vk_fault_wrap_device(&g->vk, g->device);
  if (calibrate) tandem_vk_calibrate(g);
  g->base.timestamps = g->timestamps && g->calibrated;

  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) {
    VkQueue queue;
    g->vk.vkGetDeviceQueue(g->device, family[l], index[l], &queue);
    tandem_vk_queue_t *shared = NULL;
    for (uint32_t k = 0; k < g->queue_count; k++)
      if (g->queues[k].queue == queue) shared = &g->queues[k];
    if (!shared) {
      shared = &g->queues[g->queue_count++];
      shared->queue = queue;
      shared->family = family[l];
      /* Recursive: an application holds tandem_runtime_queue_lock of each
       * lane on a queue, and lanes on one queue share this one lock, so its
       * second lock (another lane of the queue, or the same lane again) from
       * the holding thread must nest, not deadlock. tandem's own paths take
       * it once per call and never while calling out. */
      pthread_mutexattr_t attr;
      pthread_mutexattr_init(&attr);
      pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
      pthread_mutex_init(&shared->mutex, &attr);
      pthread_mutexattr_destroy(&attr);
    }
    tandem_vk_lane_t *lane = &g->lanes[l];
    lane->queue = shared;
    g->base.lane_queue[l] = (uint8_t)(shared - g->queues);
    g->lane_queue_index[l] = index[l];
    bool compute_capable = qprops[family[l]].queueFlags & VK_QUEUE_COMPUTE_BIT;
    lane->stages = VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
    lane->src_access = VK_ACCESS_2_TRANSFER_WRITE_BIT;
    lane->dst_access = VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT;
    if (compute_capable) {
      lane->stages |= VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
      lane->src_access |= VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
      lane->dst_access |=
          VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
    }
    tandem_status_t ls = tandem_vk_timeline_create(g, false, &lane->timeline);
    if (ls == TANDEM_OK && g->base.timelines_exportable)
      ls = tandem_vk_timeline_create(g, true, &lane->mirror);
    if (ls == TANDEM_OK) {
      VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                     .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                     .queueFamilyIndex = family[l]};
      for (int i = 0; ls == TANDEM_OK && i < TANDEM_VK_SLOT_POOLS; i++) {
        VkResult r = g->vk.vkCreateCommandPool(g->device, &pci, NULL, &lane->pools[i]);
        if (r < 0) {
          lane->pools[i] = VK_NULL_HANDLE;
          ls = tandem_vk_fail(r, "vkCreateCommandPool", __FILE__, __LINE__);
        }
      }
    }
    if (ls != TANDEM_OK) {
      tandem_vk_gpu_destroy(&g->base);
      return tandem__annotate(ls, "creating the %s lane's timeline or command pool",
                              tandem_lane_name((tandem_lane_t)l));
    }
  }
  /* The NPU lane's timeline: no queue, signalled from the host. */
  tandem_status_t ts = tandem_vk_timeline_create(g, false, &g->lanes[TANDEM_LANE_NPU].timeline);
  if (ts == TANDEM_OK && g->base.timelines_exportable)
    ts = tandem_vk_timeline_create(g, true, &g->lanes[TANDEM_LANE_NPU].mirror);
  if (ts != TANDEM_OK) {
    tandem_vk_gpu_destroy(&g->base);
    return tandem__annotate(ts, "the NPU lane's timeline");
  }
  *out_gpu = &g->base;
  return TANDEM_OK;
}

/* Records the distinct families of the lanes in g->families. */
static void tandem_vk_families(tandem_vk_gpu_t *g, const uint32_t family[TANDEM_LANE_COUNT_GPU]) {
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) {
    uint32_t k = 0;
    while (k < g->family_count && g->families[k] != family[l]) k++;
    if (k == g->family_count) g->families[g->family_count++] = family[l];
  }
}

static tandem_vk_gpu_t *tandem_vk_gpu_alloc(const tandem_vk_tables_t *tables,
                                            const tandem_runtime_options_t *options,
                                            atomic_uint_fast64_t *validation_counter) {
  tandem_vk_gpu_t *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->tag = TANDEM_VK_GPU_TAG;
  g->base.vtable = tables->vtable;
  g->base.test_hooks = tables->test_hooks;
  g->validation_counter = validation_counter;
  g->validation_callback = options->validation_callback;
  g->validation_user_data = options->validation_user_data;
  g->wait_spin_ns = (uint64_t)options->wait_spin_us * 1000;
  for (int l = 0; l < TANDEM__MAX_LANES; l++)
    for (int i = 0; i < TANDEM_VK_SLOT_POOLS; i++)
      pthread_mutex_init(&g->lanes[l].pool_mutex[i], NULL);
  pthread_mutex_init(&g->signal_mutex, NULL);
  pthread_mutex_init(&g->clock_mutex, NULL);
  pthread_mutex_init(&g->kept_mutex, NULL);
  return g;
}

/*--------------------------------------------------- the application's device --*/

/* Opens the runtime's GPU on the application's device (vulkan_device). */
static tandem_status_t tandem_vk_gpu_open_byo(const tandem_vk_tables_t *tables,
                                              const tandem_runtime_options_t *options,
                                              atomic_uint_fast64_t *validation_counter,
                                              tandem__gpu_t **out_gpu) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_alloc(tables, options, validation_counter);
  if (!g) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating the Vulkan device");
  uint32_t family[TANDEM_LANE_COUNT_GPU], index[TANDEM_LANE_COUNT_GPU];
  VkQueueFamilyProperties qprops[TANDEM_MAX_QUEUE_FAMILIES];
  tandem_vk_feature_chain_t enabled;
  tandem_status_t s =
      tandem_vk_byo_check(g, options->vulkan_device, family, index, qprops, &enabled);
  if (s != TANDEM_OK) {
    /* Nothing of tandem's exists on the application's objects yet. */
    g->device = VK_NULL_HANDLE;
    tandem_vk_gpu_destroy(&g->base);
    return s;
  }
  tandem_vk_gpu_properties(g);
  tandem_vk_families(g, family);
  tandem_vk_timestamps_decide(g, options, qprops, family, enabled.f12.hostQueryReset);
  tandem_vk_interop_decide(g, options);
  tandem_vk_descriptors_decide(g);
  bool calibrate = g->timestamps && (g->base.info.features & TANDEM_GPU_CALIBRATED_TIMESTAMPS);
  return tandem_vk_gpu_finish(g, calibrate, qprops, family, index, out_gpu);
}

/*------------------------------------------------------------ tandem's own --*/

tandem_status_t tandem_vk_device_open(const tandem_vk_tables_t *tables,
                                      const tandem_runtime_options_t *options,
                                      atomic_uint_fast64_t *validation_counter,
                                      tandem__gpu_t **out_gpu) {
  *out_gpu = NULL;
  if (options->vulkan_device)
    return tandem_vk_gpu_open_byo(tables, options, validation_counter, out_gpu);
  tandem_vk_gpu_t *g = tandem_vk_gpu_alloc(tables, options, validation_counter);
  if (!g) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating the Vulkan device");

  tandem_status_t s = tandem_vk_instance_create(options->validation, g, &g->instance);
  VkPhysicalDevice *pds = NULL;
  uint32_t n = 0;
  if (s == TANDEM_OK) s = tandem_vk_physical_devices(g->instance, &pds, &n);
  if (s == TANDEM_OK && options->gpu_index >= n)
    s = TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE,
                    "runtime option gpu_index is %u but the Vulkan loader reports %u device%s",
                    options->gpu_index, n, n == 1 ? "" : "s");
  if (s != TANDEM_OK) {
    free(pds);
    tandem_vk_gpu_destroy(&g->base);
    return s;
  }
  g->physical = pds[options->gpu_index];
  free(pds);
  s = tandem_vk_describe(g->physical, options->gpu_index, &g->base.info);
  if (s != TANDEM_OK) {
    tandem_vk_gpu_destroy(&g->base);
    return s;
  }
  const tandem_device_info_t *info = &g->base.info;
  uint32_t need = TANDEM_GPU_TIMELINE_SEMAPHORE | TANDEM_GPU_SYNCHRONIZATION2;
  if (info->api_version < VK_API_VERSION_1_3 || (info->features & need) != need) {
    tandem_vk_gpu_destroy(&g->base);
    return TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE,
                       "GPU %u ('%s') offers Vulkan %u.%u; tandem needs 1.3 with timeline "
                       "semaphores and synchronization2",
                       options->gpu_index, info->name, VK_API_VERSION_MAJOR(info->api_version),
                       VK_API_VERSION_MINOR(info->api_version));
  }
  tandem_vk_gpu_properties(g);

  uint32_t qn = TANDEM_MAX_QUEUE_FAMILIES;
  VkQueueFamilyProperties qprops[TANDEM_MAX_QUEUE_FAMILIES];
  vkGetPhysicalDeviceQueueFamilyProperties(g->physical, &qn, qprops);
  uint32_t family[TANDEM_LANE_COUNT_GPU], index[TANDEM_LANE_COUNT_GPU];
  tandem_vk_pick_queues(qprops, qn, family, index);
  tandem_vk_families(g, family);

  /* One VkDeviceQueueCreateInfo per distinct family, enough queues for its lanes. */
  VkDeviceQueueCreateInfo qci[TANDEM_LANE_COUNT_GPU];
  float priorities[4] = {1, 1, 1, 1};
  uint32_t qci_count = 0;
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) {
    uint32_t k = 0;
    while (k < qci_count && qci[k].queueFamilyIndex != family[l]) k++;
    if (k == qci_count)
      qci[qci_count++] =
          (VkDeviceQueueCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                    .queueFamilyIndex = family[l],
                                    .queueCount = 0,
                                    .pQueuePriorities = priorities};
    if (index[l] + 1 > qci[k].queueCount) qci[k].queueCount = index[l] + 1;
  }
  /* Every optional shader feature the device has is enabled (the set
   * info->shader_features reports), plus what tandem itself needs. */
  tandem_vk_feature_chain_t chain;
  tandem_vk_feature_chain_init(&chain);
  vkGetPhysicalDeviceFeatures2(g->physical, &chain.f);
  bool host_query_reset = chain.f12.hostQueryReset;
  tandem_vk_feature_chain_select(&chain);
  chain.f13.synchronization2 = VK_TRUE;
  chain.f12.timelineSemaphore = VK_TRUE;
  /* Timestamps need a valid counter on every lane's family and host query
   * reset (reset at submit, no command needed on transfer queues). */
  tandem_vk_timestamps_decide(g, options, qprops, family, host_query_reset);
  chain.f12.hostQueryReset = g->timestamps ? VK_TRUE : VK_FALSE;
  /* Sharing with an NPU and interop (vk_interop.c): enabled when the device
   * offers them (decided from the extension list, never from loaded function
   * pointers); enabling the extensions costs nothing. */
  tandem_vk_interop_decide(g, options);
  tandem_vk_descriptors_decide(g);
  const char *dev_ext[12];
  uint32_t dev_ext_count = 0;
  bool calibrate = g->timestamps && (info->features & TANDEM_GPU_CALIBRATED_TIMESTAMPS);
  if (calibrate) dev_ext[dev_ext_count++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
  if (g->base.can_import_host)
    dev_ext[dev_ext_count++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
  if (info->features & TANDEM_GPU_EXTERNAL_MEMORY_FD)
    dev_ext[dev_ext_count++] = VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
  if (g->base.can_import_dmabuf)
    dev_ext[dev_ext_count++] = VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME;
  if (info->features & TANDEM_GPU_EXTERNAL_SEMAPHORE_FD)
    dev_ext[dev_ext_count++] = VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;
  if (info->features & TANDEM_GPU_PUSH_DESCRIPTORS)
    dev_ext[dev_ext_count++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
  /* Pipeline robustness: enabled where offered, so kernels may turn it off
   * (TANDEM_KERNEL_DISABLE_ROBUSTNESS). */
  VkPhysicalDevicePipelineRobustnessFeaturesEXT robustness = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT,
      .pipelineRobustness = VK_TRUE};
  if (info->features & TANDEM_GPU_PIPELINE_ROBUSTNESS) {
    dev_ext[dev_ext_count++] = VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME;
    chain.f13.pNext = &robustness;
  }
  /* The shader clocks: VK_KHR_shader_clock enabled where offered, with the
   * features the device has (the bits tandem_vk_describe read from them). */
  VkPhysicalDeviceShaderClockFeaturesKHR clock = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR,
      .shaderSubgroupClock = (info->shader_features & TANDEM_SHADER_SUBGROUP_CLOCK) != 0,
      .shaderDeviceClock = (info->shader_features & TANDEM_SHADER_DEVICE_CLOCK) != 0};
  if (clock.shaderSubgroupClock || clock.shaderDeviceClock) {
    dev_ext[dev_ext_count++] = VK_KHR_SHADER_CLOCK_EXTENSION_NAME;
    clock.pNext = chain.f13.pNext;
    chain.f13.pNext = &clock;
  }
  assert(dev_ext_count <= sizeof dev_ext / sizeof dev_ext[0]);
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &chain.f,
                            .queueCreateInfoCount = qci_count,
                            .pQueueCreateInfos = qci,
                            .enabledExtensionCount = dev_ext_count,
                            .ppEnabledExtensionNames = dev_ext};
  VkResult r = vkCreateDevice(g->physical, &dci, NULL, &g->device);
  if (r < 0) {
    g->device = VK_NULL_HANDLE;
    tandem_vk_gpu_destroy(&g->base);
    return tandem_vk_fail(r, "vkCreateDevice", __FILE__, __LINE__);
  }
  return tandem_vk_gpu_finish(g, calibrate, qprops, family, index, out_gpu);
}
