/* SPDX-License-Identifier: MIT */
/*
 * vk_physical.c — physical devices: what one offers (the device description
 * `tandem devices` and the runtime report: limits, features, extensions,
 * queue families, memory), the optional features tandem enables, read into
 * one feature chain, and the queues it picks for the lanes. Features are
 * decided from what the device reports (vkGetPhysicalDeviceFeatures2,
 * extension lists), never from whether a function pointer loaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/vulkan/vk_internal.h"

static bool tandem_vk_has_ext(const VkExtensionProperties *exts, uint32_t n, const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(exts[i].extensionName, name) == 0) return true;
  return false;
}

void tandem_vk_feature_chain_init(tandem_vk_feature_chain_t *c) {
  memset(c, 0, sizeof *c);
  c->f13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  c->f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  c->f12.pNext = &c->f13;
  c->f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  c->f11.pNext = &c->f12;
  c->f.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  c->f.pNext = &c->f11;
}

/* Shader feature bits from a queried chain and the subgroup properties. */
uint32_t tandem_vk_shader_features(const tandem_vk_feature_chain_t *c,
                                   const VkPhysicalDeviceVulkan11Properties *p11,
                                   const VkPhysicalDeviceVulkan13Properties *p13) {
  uint32_t bits = 0;
#define TANDEM_VK_BIT(cond, bit) \
  if (cond) bits |= (bit)
  TANDEM_VK_BIT(c->f12.shaderFloat16, TANDEM_SHADER_FLOAT16);
  TANDEM_VK_BIT(c->f12.shaderInt8, TANDEM_SHADER_INT8);
  TANDEM_VK_BIT(c->f.features.shaderInt16, TANDEM_SHADER_INT16);
  TANDEM_VK_BIT(c->f.features.shaderInt64, TANDEM_SHADER_INT64);
  TANDEM_VK_BIT(c->f.features.shaderFloat64, TANDEM_SHADER_FLOAT64);
  TANDEM_VK_BIT(c->f11.storageBuffer16BitAccess, TANDEM_SHADER_STORAGE_BUFFER_16BIT);
  TANDEM_VK_BIT(c->f11.uniformAndStorageBuffer16BitAccess,
                TANDEM_SHADER_UNIFORM_AND_STORAGE_BUFFER_16BIT);
  TANDEM_VK_BIT(c->f11.storagePushConstant16, TANDEM_SHADER_PUSH_CONSTANT_16BIT);
  TANDEM_VK_BIT(c->f12.storageBuffer8BitAccess, TANDEM_SHADER_STORAGE_BUFFER_8BIT);
  TANDEM_VK_BIT(c->f12.uniformAndStorageBuffer8BitAccess,
                TANDEM_SHADER_UNIFORM_AND_STORAGE_BUFFER_8BIT);
  TANDEM_VK_BIT(c->f12.storagePushConstant8, TANDEM_SHADER_PUSH_CONSTANT_8BIT);
  TANDEM_VK_BIT(c->f12.shaderSubgroupExtendedTypes, TANDEM_SHADER_SUBGROUP_EXTENDED_TYPES);
  TANDEM_VK_BIT(c->f12.shaderBufferInt64Atomics, TANDEM_SHADER_INT64_ATOMICS);
  TANDEM_VK_BIT(c->f12.vulkanMemoryModel, TANDEM_SHADER_VULKAN_MEMORY_MODEL);
  TANDEM_VK_BIT(c->f12.vulkanMemoryModelDeviceScope,
                TANDEM_SHADER_VULKAN_MEMORY_MODEL_DEVICE_SCOPE);
  TANDEM_VK_BIT(c->f13.shaderIntegerDotProduct, TANDEM_SHADER_INTEGER_DOT_PRODUCT);
  TANDEM_VK_BIT(c->f13.subgroupSizeControl &&
                    (p13->requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT),
                TANDEM_SHADER_SUBGROUP_SIZE_CONTROL);
  TANDEM_VK_BIT(c->f13.computeFullSubgroups, TANDEM_SHADER_FULL_SUBGROUPS);
  if (p11->subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) {
    VkSubgroupFeatureFlags ops = p11->subgroupSupportedOperations;
    TANDEM_VK_BIT(ops & VK_SUBGROUP_FEATURE_BASIC_BIT, TANDEM_SHADER_SUBGROUP_BASIC);
    TANDEM_VK_BIT(ops & VK_SUBGROUP_FEATURE_VOTE_BIT, TANDEM_SHADER_SUBGROUP_VOTE);
    TANDEM_VK_BIT(ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, TANDEM_SHADER_SUBGROUP_ARITHMETIC);
    TANDEM_VK_BIT(ops & VK_SUBGROUP_FEATURE_BALLOT_BIT, TANDEM_SHADER_SUBGROUP_BALLOT);
    TANDEM_VK_BIT(ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT, TANDEM_SHADER_SUBGROUP_SHUFFLE);
    TANDEM_VK_BIT(ops & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT,
                  TANDEM_SHADER_SUBGROUP_SHUFFLE_RELATIVE);
    TANDEM_VK_BIT(ops & VK_SUBGROUP_FEATURE_CLUSTERED_BIT, TANDEM_SHADER_SUBGROUP_CLUSTERED);
    TANDEM_VK_BIT(ops & VK_SUBGROUP_FEATURE_QUAD_BIT, TANDEM_SHADER_SUBGROUP_QUAD);
  }
#undef TANDEM_VK_BIT
  return bits;
}

/* Keeps in |c| only the optional features tandem enables (the queried
 * values of those), clearing everything else it queried: the chain then goes
 * to vkCreateDevice as is. */
void tandem_vk_feature_chain_select(tandem_vk_feature_chain_t *c) {
  tandem_vk_feature_chain_t keep;
  tandem_vk_feature_chain_init(&keep);
  keep.f.features.shaderInt16 = c->f.features.shaderInt16;
  keep.f.features.shaderInt64 = c->f.features.shaderInt64;
  keep.f.features.shaderFloat64 = c->f.features.shaderFloat64;
  keep.f11.storageBuffer16BitAccess = c->f11.storageBuffer16BitAccess;
  keep.f11.uniformAndStorageBuffer16BitAccess = c->f11.uniformAndStorageBuffer16BitAccess;
  keep.f11.storagePushConstant16 = c->f11.storagePushConstant16;
  keep.f12.storageBuffer8BitAccess = c->f12.storageBuffer8BitAccess;
  keep.f12.uniformAndStorageBuffer8BitAccess = c->f12.uniformAndStorageBuffer8BitAccess;
  keep.f12.storagePushConstant8 = c->f12.storagePushConstant8;
  keep.f12.shaderFloat16 = c->f12.shaderFloat16;
  keep.f12.shaderInt8 = c->f12.shaderInt8;
  keep.f12.shaderSubgroupExtendedTypes = c->f12.shaderSubgroupExtendedTypes;
  keep.f12.shaderBufferInt64Atomics = c->f12.shaderBufferInt64Atomics;
  keep.f12.vulkanMemoryModel = c->f12.vulkanMemoryModel;
  keep.f12.vulkanMemoryModelDeviceScope = c->f12.vulkanMemoryModelDeviceScope;
  keep.f13.shaderIntegerDotProduct = c->f13.shaderIntegerDotProduct;
  keep.f13.subgroupSizeControl = c->f13.subgroupSizeControl;
  keep.f13.computeFullSubgroups = c->f13.computeFullSubgroups;
  *c = keep;
  c->f.pNext = &c->f11;
  c->f11.pNext = &c->f12;
  c->f12.pNext = &c->f13;
  c->f13.pNext = NULL;
}

/* Fails (OUT_OF_MEMORY, or the enumeration's own error) rather than describe
 * a device without the extensions it has: sharing would silently degrade. */
tandem_status_t tandem_vk_describe(VkPhysicalDevice pd, uint32_t index,
                                   tandem_device_info_t *info) {
  memset(info, 0, sizeof *info);
  info->index = index;
  VkPhysicalDeviceVulkan13Properties p13 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties p11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                       .pNext = &driver};
  /* The 1.1/1.3 property structs exist only on devices of those versions. */
  VkPhysicalDeviceProperties one;
  vkGetPhysicalDeviceProperties(pd, &one);
  if (one.apiVersion >= VK_API_VERSION_1_3) {
    driver.pNext = &p11;
    p11.pNext = &p13;
  }
  vkGetPhysicalDeviceProperties2(pd, &props);
  snprintf(info->name, sizeof info->name, "%s", props.properties.deviceName);
  snprintf(info->driver_name, sizeof info->driver_name, "%s", driver.driverName);
  snprintf(info->driver_info, sizeof info->driver_info, "%s", driver.driverInfo);
  info->api_version = props.properties.apiVersion;
  info->vendor_id = props.properties.vendorID;
  info->device_id = props.properties.deviceID;
  info->is_cpu = props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  info->timestamp_period_ns = props.properties.limits.timestampPeriod;

  const VkPhysicalDeviceLimits *lim = &props.properties.limits;
  for (int k = 0; k < 3; k++) {
    info->max_local_size[k] = lim->maxComputeWorkGroupSize[k];
    info->max_workgroups[k] = lim->maxComputeWorkGroupCount[k];
  }
  info->max_local_invocations = lim->maxComputeWorkGroupInvocations;
  info->max_shared_memory_bytes = lim->maxComputeSharedMemorySize;
  if (props.properties.apiVersion >= VK_API_VERSION_1_3) {
    tandem_vk_feature_chain_t c;
    tandem_vk_feature_chain_init(&c);
    vkGetPhysicalDeviceFeatures2(pd, &c.f);
    if (c.f12.timelineSemaphore) info->features |= TANDEM_GPU_TIMELINE_SEMAPHORE;
    if (c.f12.bufferDeviceAddress) info->features |= TANDEM_GPU_BUFFER_DEVICE_ADDRESS;
    if (c.f13.synchronization2) info->features |= TANDEM_GPU_SYNCHRONIZATION2;
    info->shader_features = tandem_vk_shader_features(&c, &p11, &p13);
    info->subgroup_size = p11.subgroupSize;
    _Static_assert(sizeof info->device_uuid == VK_UUID_SIZE, "deviceUUID fits the info");
    memcpy(info->device_uuid, p11.deviceUUID, sizeof info->device_uuid);
    memcpy(info->driver_uuid, p11.driverUUID, sizeof info->driver_uuid);
    info->min_subgroup_size = p13.minSubgroupSize;
    info->max_subgroup_size = p13.maxSubgroupSize;
  }
  uint32_t n = 0;
  TANDEM_VK_RETURN_IF_ERROR(vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL));
  VkExtensionProperties *exts = calloc(n ? n : 1, sizeof *exts);
  if (!exts)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                       "GPU %u: allocating the list of its %u device extensions", index, n);
  VkResult er = vkEnumerateDeviceExtensionProperties(pd, NULL, &n, exts);
  if (er < 0) {
    free(exts);
    return tandem_vk_fail(er, "vkEnumerateDeviceExtensionProperties", __FILE__, __LINE__);
  }
  {
    static const struct {
      const char *name;
      uint32_t bit;
    } known[] = {
        {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, TANDEM_GPU_EXTERNAL_MEMORY_FD},
        {VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME, TANDEM_GPU_EXTERNAL_MEMORY_DMA_BUF},
        {VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME, TANDEM_GPU_EXTERNAL_MEMORY_HOST},
        {VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME, TANDEM_GPU_EXTERNAL_SEMAPHORE_FD},
        {VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME, TANDEM_GPU_CALIBRATED_TIMESTAMPS},
        {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME, TANDEM_GPU_PUSH_DESCRIPTORS},
        {VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME, TANDEM_GPU_PIPELINE_ROBUSTNESS},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
      if (tandem_vk_has_ext(exts, n, known[k].name)) info->features |= known[k].bit;
  }
  /* Pipeline robustness counts only with its feature. */
  if (info->features & TANDEM_GPU_PIPELINE_ROBUSTNESS) {
    VkPhysicalDevicePipelineRobustnessFeaturesEXT pr = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &pr};
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    if (!pr.pipelineRobustness) info->features &= ~(uint32_t)TANDEM_GPU_PIPELINE_ROBUSTNESS;
  }
  /* Push descriptors count only with room for every binding a kernel may
   * have (VkPhysicalDevicePushDescriptorPropertiesKHR.maxPushDescriptors). */
  if (info->features & TANDEM_GPU_PUSH_DESCRIPTORS) {
    VkPhysicalDevicePushDescriptorPropertiesKHR push = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &push};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    if (push.maxPushDescriptors < TANDEM_MAX_BINDINGS)
      info->features &= ~(uint32_t)TANDEM_GPU_PUSH_DESCRIPTORS;
  }
  free(exts);

  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, NULL);
  VkQueueFamilyProperties q[TANDEM_MAX_QUEUE_FAMILIES];
  if (qn > TANDEM_MAX_QUEUE_FAMILIES) qn = TANDEM_MAX_QUEUE_FAMILIES;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, q);
  info->queue_family_count = qn;
  for (uint32_t i = 0; i < qn; i++) {
    uint32_t caps = 0;
    if (q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) caps |= TANDEM_QUEUE_GRAPHICS;
    if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) caps |= TANDEM_QUEUE_COMPUTE;
    /* Graphics and compute queues support transfers implicitly. */
    if (q[i].queueFlags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT))
      caps |= TANDEM_QUEUE_TRANSFER;
    if (q[i].timestampValidBits) caps |= TANDEM_QUEUE_TIMESTAMPS;
    info->queue_families[i] = (tandem_queue_family_info_t){caps, q[i].queueCount};
  }
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; i++)
    if ((mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
        mem.memoryHeaps[i].size > info->device_local_bytes)
      info->device_local_bytes = mem.memoryHeaps[i].size;
  return TANDEM_OK;
}

tandem_status_t tandem_vk_gpu_count(uint32_t *out_count) {
  VkInstance instance;
  TANDEM_RETURN_IF_ERROR(tandem_vk_instance_create(false, NULL, &instance));
  VkPhysicalDevice *pds;
  tandem_status_t s = tandem_vk_physical_devices(instance, &pds, out_count);
  free(pds);
  vkDestroyInstance(instance, NULL);
  return s;
}

tandem_status_t tandem_vk_gpu_info(uint32_t index, tandem_device_info_t *out_info) {
  VkInstance instance;
  TANDEM_RETURN_IF_ERROR(tandem_vk_instance_create(false, NULL, &instance));
  VkPhysicalDevice *pds;
  uint32_t n;
  tandem_status_t s = tandem_vk_physical_devices(instance, &pds, &n);
  if (s == TANDEM_OK && index >= n)
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE, "GPU index %u: the loader reports %u device%s",
                    index, n, n == 1 ? "" : "s");
  if (s == TANDEM_OK) s = tandem_vk_describe(pds[index], index, out_info);
  free(pds);
  vkDestroyInstance(instance, NULL);
  return s;
}

/* Picks families and queue indices for the lanes (see vk_internal.h). */
void tandem_vk_pick_queues(const VkQueueFamilyProperties *q, uint32_t qn,
                           uint32_t family[TANDEM_LANE_COUNT_GPU],
                           uint32_t index[TANDEM_LANE_COUNT_GPU]) {
  uint32_t compute = UINT32_MAX, transfer = UINT32_MAX;
  for (uint32_t i = 0; i < qn && compute == UINT32_MAX; i++)
    if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) compute = i;
  for (uint32_t i = 0; i < qn && transfer == UINT32_MAX; i++)
    if ((q[i].queueFlags & VK_QUEUE_TRANSFER_BIT) &&
        !(q[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
      transfer = i;
  family[TANDEM_LANE_COMPUTE] = compute;
  index[TANDEM_LANE_COMPUTE] = 0;
  if (transfer != UINT32_MAX) {
    family[TANDEM_LANE_UPLOAD] = family[TANDEM_LANE_DOWNLOAD] = transfer;
    index[TANDEM_LANE_UPLOAD] = 0;
    index[TANDEM_LANE_DOWNLOAD] = q[transfer].queueCount > 1 ? 1 : 0;
  } else {
    family[TANDEM_LANE_UPLOAD] = family[TANDEM_LANE_DOWNLOAD] = compute;
    uint32_t n = q[compute].queueCount;
    index[TANDEM_LANE_UPLOAD] = n > 1 ? 1 : 0;
    index[TANDEM_LANE_DOWNLOAD] = n > 2 ? 2 : index[TANDEM_LANE_UPLOAD];
  }
}

/* The device's properties the backend keeps (limits, memory; its UUIDs are
 * base.info's, from tandem_vk_describe). */
void tandem_vk_gpu_properties(tandem_vk_gpu_t *g) {
  VkPhysicalDeviceVulkan11Properties p11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceVulkan13Properties p13 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES,
      .pNext = &p11};
  VkPhysicalDeviceProperties2 props2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                        .pNext = &p13};
  vkGetPhysicalDeviceProperties2(g->physical, &props2);
  const VkPhysicalDeviceProperties *props = &props2.properties;
  g->max_allocation = p11.maxMemoryAllocationSize;
  g->base.storage_alignment = props->limits.minStorageBufferOffsetAlignment;
  for (int i = 0; i < 3; i++) g->base.max_workgroups[i] = props->limits.maxComputeWorkGroupCount[i];
  g->base.max_workgroup_subgroups = p13.maxComputeWorkgroupSubgroups;
  g->max_buffer_size = p13.maxBufferSize;
  g->base.max_storage_range = props->limits.maxStorageBufferRange;
  g->timestamp_period = props->limits.timestampPeriod;
  vkGetPhysicalDeviceMemoryProperties(g->physical, &g->memory);
}
