/* SPDX-License-Identifier: MIT */
/*
 * vk_physical.c — physical devices: what one offers (the device description
 * `tandem devices` and the runtime report: limits, features, extensions,
 * queue families, memory), the optional features tandem enables, read into
 * one feature chain, and the queues it picks for the lanes. Features are
 * decided from what the device reports (vkGetPhysicalDeviceFeatures2,
 * extension lists), never from whether a function pointer loaded.
 */
#include <stddef.h>
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

/*--------------------------------------------------------------------------
 * The features tandem reads, one row each: where the VkBool32 sits in
 * tandem_vk_feature_chain_t, what it gives (a shader feature bit, a GPU
 * feature bit), whether tandem enables it wherever the device has it, and
 * the struct that carried it before Vulkan 1.2/1.3 promoted it (an
 * application's vkCreateDevice chain may name either). Every loop over
 * features below walks this table; what a device has is always read from
 * vkGetPhysicalDeviceFeatures2 or the application's chain, never inferred
 * from a function pointer.
 *--------------------------------------------------------------------------*/

typedef struct tandem_vk_feature {
  const char *name;          /* the member's name */
  size_t at;                 /* its offset in tandem_vk_feature_chain_t */
  uint32_t shader_bit;       /* tandem_shader_feature_t it gives (0: none) */
  uint32_t gpu_bit;          /* tandem_gpu_feature_t it gives (0: none) */
  bool optional;             /* enabled wherever the device has it (chain_select) */
  bool required;             /* an application's VkDevice must have it enabled */
  VkStructureType from_type; /* the pre-promotion struct carrying it (0: none) */
  size_t from_at;            /* its offset there */
} tandem_vk_feature_t;

#define TANDEM_VK_AT(member) offsetof(tandem_vk_feature_chain_t, member)
#define TANDEM_VK_FROM(type, stype, member) VK_STRUCTURE_TYPE_##stype, offsetof(type, member)
#define TANDEM_VK_CORE_ONLY (VkStructureType)0, 0

static const tandem_vk_feature_t tandem_vk_features[] = {
    {"shaderInt16", TANDEM_VK_AT(f.features.shaderInt16), TANDEM_SHADER_INT16, 0, true, false,
     TANDEM_VK_CORE_ONLY},
    {"shaderInt64", TANDEM_VK_AT(f.features.shaderInt64), TANDEM_SHADER_INT64, 0, true, false,
     TANDEM_VK_CORE_ONLY},
    {"shaderFloat64", TANDEM_VK_AT(f.features.shaderFloat64), TANDEM_SHADER_FLOAT64, 0, true, false,
     TANDEM_VK_CORE_ONLY},
    {"storageBuffer16BitAccess", TANDEM_VK_AT(f11.storageBuffer16BitAccess),
     TANDEM_SHADER_STORAGE_BUFFER_16BIT, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDevice16BitStorageFeatures, PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                    storageBuffer16BitAccess)},
    {"uniformAndStorageBuffer16BitAccess", TANDEM_VK_AT(f11.uniformAndStorageBuffer16BitAccess),
     TANDEM_SHADER_UNIFORM_AND_STORAGE_BUFFER_16BIT, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDevice16BitStorageFeatures, PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                    uniformAndStorageBuffer16BitAccess)},
    {"storagePushConstant16", TANDEM_VK_AT(f11.storagePushConstant16),
     TANDEM_SHADER_PUSH_CONSTANT_16BIT, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDevice16BitStorageFeatures, PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                    storagePushConstant16)},
    {"storageBuffer8BitAccess", TANDEM_VK_AT(f12.storageBuffer8BitAccess),
     TANDEM_SHADER_STORAGE_BUFFER_8BIT, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDevice8BitStorageFeatures, PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES,
                    storageBuffer8BitAccess)},
    {"uniformAndStorageBuffer8BitAccess", TANDEM_VK_AT(f12.uniformAndStorageBuffer8BitAccess),
     TANDEM_SHADER_UNIFORM_AND_STORAGE_BUFFER_8BIT, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDevice8BitStorageFeatures, PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES,
                    uniformAndStorageBuffer8BitAccess)},
    {"storagePushConstant8", TANDEM_VK_AT(f12.storagePushConstant8),
     TANDEM_SHADER_PUSH_CONSTANT_8BIT, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDevice8BitStorageFeatures, PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES,
                    storagePushConstant8)},
    {"shaderFloat16", TANDEM_VK_AT(f12.shaderFloat16), TANDEM_SHADER_FLOAT16, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceShaderFloat16Int8Features,
                    PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, shaderFloat16)},
    {"shaderInt8", TANDEM_VK_AT(f12.shaderInt8), TANDEM_SHADER_INT8, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceShaderFloat16Int8Features,
                    PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, shaderInt8)},
    {"timelineSemaphore", TANDEM_VK_AT(f12.timelineSemaphore), 0, TANDEM_GPU_TIMELINE_SEMAPHORE,
     false, true,
     TANDEM_VK_FROM(VkPhysicalDeviceTimelineSemaphoreFeatures,
                    PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES, timelineSemaphore)},
    {"hostQueryReset", TANDEM_VK_AT(f12.hostQueryReset), 0, 0, false, false,
     TANDEM_VK_FROM(VkPhysicalDeviceHostQueryResetFeatures,
                    PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES, hostQueryReset)},
    {"shaderSubgroupExtendedTypes", TANDEM_VK_AT(f12.shaderSubgroupExtendedTypes),
     TANDEM_SHADER_SUBGROUP_EXTENDED_TYPES, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures,
                    PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES,
                    shaderSubgroupExtendedTypes)},
    {"shaderBufferInt64Atomics", TANDEM_VK_AT(f12.shaderBufferInt64Atomics),
     TANDEM_SHADER_INT64_ATOMICS, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceShaderAtomicInt64Features,
                    PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES, shaderBufferInt64Atomics)},
    {"vulkanMemoryModel", TANDEM_VK_AT(f12.vulkanMemoryModel), TANDEM_SHADER_VULKAN_MEMORY_MODEL, 0,
     true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceVulkanMemoryModelFeatures,
                    PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, vulkanMemoryModel)},
    {"vulkanMemoryModelDeviceScope", TANDEM_VK_AT(f12.vulkanMemoryModelDeviceScope),
     TANDEM_SHADER_VULKAN_MEMORY_MODEL_DEVICE_SCOPE, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceVulkanMemoryModelFeatures,
                    PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, vulkanMemoryModelDeviceScope)},
    {"bufferDeviceAddress", TANDEM_VK_AT(f12.bufferDeviceAddress), 0,
     TANDEM_GPU_BUFFER_DEVICE_ADDRESS, false, false,
     TANDEM_VK_FROM(VkPhysicalDeviceBufferDeviceAddressFeatures,
                    PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES, bufferDeviceAddress)},
    {"synchronization2", TANDEM_VK_AT(f13.synchronization2), 0, TANDEM_GPU_SYNCHRONIZATION2, false,
     true,
     TANDEM_VK_FROM(VkPhysicalDeviceSynchronization2Features,
                    PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES, synchronization2)},
    /* Its shader bit also needs compute among requiredSubgroupSizeStages
     * (tandem_vk_shader_features). */
    {"subgroupSizeControl", TANDEM_VK_AT(f13.subgroupSizeControl), 0, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceSubgroupSizeControlFeatures,
                    PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES, subgroupSizeControl)},
    {"computeFullSubgroups", TANDEM_VK_AT(f13.computeFullSubgroups), TANDEM_SHADER_FULL_SUBGROUPS,
     0, true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceSubgroupSizeControlFeatures,
                    PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES, computeFullSubgroups)},
    {"shaderIntegerDotProduct", TANDEM_VK_AT(f13.shaderIntegerDotProduct),
     TANDEM_SHADER_INTEGER_DOT_PRODUCT, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceShaderIntegerDotProductFeatures,
                    PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES, shaderIntegerDotProduct)},
    /* LocalSizeId (VUID-RuntimeSpirv-LocalSizeId-06434) */
    {"maintenance4", TANDEM_VK_AT(f13.maintenance4), TANDEM_SHADER_LOCAL_SIZE_ID, 0, true, false,
     TANDEM_VK_FROM(VkPhysicalDeviceMaintenance4Features, PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES,
                    maintenance4)},
    /* Outside the chain (tandem_vk_feature_chain_t): only as read from an
     * application's chain; tandem_vk_describe queries it on its own. */
    {"pipelineRobustness", TANDEM_VK_AT(pipeline_robustness), 0, 0, false, false,
     TANDEM_VK_FROM(VkPhysicalDevicePipelineRobustnessFeaturesEXT,
                    PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT, pipelineRobustness)},
    /* Outside the chain too (VK_KHR_shader_clock): tandem_vk_describe
     * queries them only where the device has the extension, vk_device.c
     * enables them from the bits they gave. */
    {"shaderSubgroupClock", TANDEM_VK_AT(shader_subgroup_clock), TANDEM_SHADER_SUBGROUP_CLOCK, 0,
     false, false,
     TANDEM_VK_FROM(VkPhysicalDeviceShaderClockFeaturesKHR,
                    PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR, shaderSubgroupClock)},
    {"shaderDeviceClock", TANDEM_VK_AT(shader_device_clock), TANDEM_SHADER_DEVICE_CLOCK, 0, false,
     false,
     TANDEM_VK_FROM(VkPhysicalDeviceShaderClockFeaturesKHR,
                    PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR, shaderDeviceClock)},
};

/* The core feature structs of the chain, each read or combined whole: the
 * run of VkBool32 members from |first| to |last| (no padding). */
typedef struct tandem_vk_core_struct {
  const char *name;
  VkStructureType type;
  size_t at;           /* the struct's offset in tandem_vk_feature_chain_t */
  size_t first, count; /* its VkBool32 members: offset of the first, how many */
} tandem_vk_core_struct_t;

#define TANDEM_VK_CORE(stype, member, type, first, last)                           \
  {                                                                                \
#type, VK_STRUCTURE_TYPE_##stype, TANDEM_VK_AT(member), offsetof(type, first), \
        (offsetof(type, last) - offsetof(type, first)) / sizeof(VkBool32) + 1      \
  }

static const tandem_vk_core_struct_t tandem_vk_core_structs[] = {
    TANDEM_VK_CORE(PHYSICAL_DEVICE_FEATURES_2, f, VkPhysicalDeviceFeatures2,
                   features.robustBufferAccess, features.inheritedQueries),
    TANDEM_VK_CORE(PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, f11, VkPhysicalDeviceVulkan11Features,
                   storageBuffer16BitAccess, shaderDrawParameters),
    TANDEM_VK_CORE(PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, f12, VkPhysicalDeviceVulkan12Features,
                   samplerMirrorClampToEdge, subgroupBroadcastDynamicId),
    TANDEM_VK_CORE(PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, f13, VkPhysicalDeviceVulkan13Features,
                   robustImageAccess, maintenance4),
};

#define TANDEM_VK_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static VkBool32 *tandem_vk_feature_in(tandem_vk_feature_chain_t *c, size_t at) {
  return (VkBool32 *)((char *)c + at);
}

static VkBool32 tandem_vk_feature_of(const tandem_vk_feature_chain_t *c, size_t at) {
  return *(const VkBool32 *)((const char *)c + at);
}

/* Shader feature bits from a queried chain and the subgroup properties. */
uint32_t tandem_vk_shader_features(const tandem_vk_feature_chain_t *c,
                                   const VkPhysicalDeviceVulkan11Properties *p11,
                                   const VkPhysicalDeviceVulkan13Properties *p13) {
  uint32_t bits = 0;
  for (size_t i = 0; i < TANDEM_VK_COUNT(tandem_vk_features); i++)
    if (tandem_vk_feature_of(c, tandem_vk_features[i].at)) bits |= tandem_vk_features[i].shader_bit;
  if (c->f13.subgroupSizeControl && (p13->requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT))
    bits |= TANDEM_SHADER_SUBGROUP_SIZE_CONTROL;
  if (p11->subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) {
    static const struct {
      VkSubgroupFeatureFlagBits op;
      uint32_t bit;
    } ops[] = {
        {VK_SUBGROUP_FEATURE_BASIC_BIT, TANDEM_SHADER_SUBGROUP_BASIC},
        {VK_SUBGROUP_FEATURE_VOTE_BIT, TANDEM_SHADER_SUBGROUP_VOTE},
        {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, TANDEM_SHADER_SUBGROUP_ARITHMETIC},
        {VK_SUBGROUP_FEATURE_BALLOT_BIT, TANDEM_SHADER_SUBGROUP_BALLOT},
        {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, TANDEM_SHADER_SUBGROUP_SHUFFLE},
        {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, TANDEM_SHADER_SUBGROUP_SHUFFLE_RELATIVE},
        {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, TANDEM_SHADER_SUBGROUP_CLUSTERED},
        {VK_SUBGROUP_FEATURE_QUAD_BIT, TANDEM_SHADER_SUBGROUP_QUAD},
    };
    for (size_t i = 0; i < TANDEM_VK_COUNT(ops); i++)
      if (p11->subgroupSupportedOperations & ops[i].op) bits |= ops[i].bit;
  }
  return bits;
}

uint32_t tandem_vk_gpu_features(const tandem_vk_feature_chain_t *c) {
  uint32_t bits = 0;
  for (size_t i = 0; i < TANDEM_VK_COUNT(tandem_vk_features); i++)
    if (tandem_vk_feature_of(c, tandem_vk_features[i].at)) bits |= tandem_vk_features[i].gpu_bit;
  return bits;
}

/* Keeps in |c| only the optional features tandem enables (the queried
 * values of those), clearing everything else it queried: the chain then goes
 * to vkCreateDevice as is. */
void tandem_vk_feature_chain_select(tandem_vk_feature_chain_t *c) {
  tandem_vk_feature_chain_t keep;
  tandem_vk_feature_chain_init(&keep);
  for (size_t i = 0; i < TANDEM_VK_COUNT(tandem_vk_features); i++)
    if (tandem_vk_features[i].optional)
      *tandem_vk_feature_in(&keep, tandem_vk_features[i].at) =
          tandem_vk_feature_of(c, tandem_vk_features[i].at);
  *c = keep;
  c->f.pNext = &c->f11;
  c->f11.pNext = &c->f12;
  c->f12.pNext = &c->f13;
  c->f13.pNext = NULL;
}

void tandem_vk_feature_chain_or(tandem_vk_feature_chain_t *c, const VkBaseInStructure *s) {
  for (size_t i = 0; i < TANDEM_VK_COUNT(tandem_vk_core_structs); i++) {
    const tandem_vk_core_struct_t *t = &tandem_vk_core_structs[i];
    if (s->sType != t->type) continue;
    VkBool32 *d = tandem_vk_feature_in(c, t->at + t->first);
    const VkBool32 *x = (const VkBool32 *)((const char *)s + t->first);
    for (size_t k = 0; k < t->count; k++) d[k] = d[k] || x[k];
    return;
  }
  for (size_t i = 0; i < TANDEM_VK_COUNT(tandem_vk_features); i++) {
    const tandem_vk_feature_t *f = &tandem_vk_features[i];
    if (f->from_type && s->sType == f->from_type)
      *tandem_vk_feature_in(c, f->at) |= *(const VkBool32 *)((const char *)s + f->from_at);
  }
}

void tandem_vk_features_missing(const tandem_vk_feature_chain_t *c, char *list, size_t cap) {
  for (size_t i = 0; i < TANDEM_VK_COUNT(tandem_vk_features); i++) {
    const tandem_vk_feature_t *f = &tandem_vk_features[i];
    if (!f->required || tandem_vk_feature_of(c, f->at)) continue;
    const char *in = "";
    for (size_t k = 0; k < TANDEM_VK_COUNT(tandem_vk_core_structs); k++) {
      const tandem_vk_core_struct_t *t = &tandem_vk_core_structs[k];
      if (f->at >= t->at + t->first && f->at < t->at + t->first + t->count * sizeof(VkBool32))
        in = t->name;
    }
    size_t used = strlen(list);
    snprintf(list + used, cap - used, "%sfeature %s (%s)", used ? ", " : "", f->name, in);
  }
}

void tandem_vk_feature_chain_and(tandem_vk_feature_chain_t *c,
                                 const tandem_vk_feature_chain_t *have) {
  for (size_t i = 0; i < TANDEM_VK_COUNT(tandem_vk_core_structs); i++) {
    const tandem_vk_core_struct_t *t = &tandem_vk_core_structs[i];
    VkBool32 *d = tandem_vk_feature_in(c, t->at + t->first);
    const VkBool32 *h = (const VkBool32 *)((const char *)have + t->at + t->first);
    for (size_t k = 0; k < t->count; k++) d[k] = d[k] && h[k];
  }
}

/* Fails (OUT_OF_MEMORY, or the enumeration's own error) rather than describe
 * a device without the extensions it has: sharing would silently degrade. */
/* The device extensions tandem uses and the TANDEM_GPU_* bit each gives,
 * or the shader feature bits it may give (its features decide which). */
static const struct {
  const char *name;
  uint32_t bit;
  uint32_t shader_bits;
} tandem_vk_extension_bits[] = {
    {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, TANDEM_GPU_EXTERNAL_MEMORY_FD, 0},
    {VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME, TANDEM_GPU_EXTERNAL_MEMORY_DMA_BUF, 0},
    {VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME, TANDEM_GPU_EXTERNAL_MEMORY_HOST, 0},
    {VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME, TANDEM_GPU_EXTERNAL_SEMAPHORE_FD, 0},
    {VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME, TANDEM_GPU_CALIBRATED_TIMESTAMPS, 0},
    {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME, TANDEM_GPU_PUSH_DESCRIPTORS, 0},
    {VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME, TANDEM_GPU_PIPELINE_ROBUSTNESS, 0},
    {VK_KHR_SHADER_CLOCK_EXTENSION_NAME, 0,
     TANDEM_SHADER_SUBGROUP_CLOCK | TANDEM_SHADER_DEVICE_CLOCK},
};
#define TANDEM_VK_EXTENSION_BITS \
  (sizeof tandem_vk_extension_bits / sizeof tandem_vk_extension_bits[0])

uint32_t tandem_vk_extension_features(bool (*ext_present)(const void *ctx, const char *name),
                                      const void *ctx) {
  uint32_t bits = 0;
  for (size_t k = 0; k < TANDEM_VK_EXTENSION_BITS; k++)
    if (ext_present(ctx, tandem_vk_extension_bits[k].name)) bits |= tandem_vk_extension_bits[k].bit;
  return bits;
}

uint32_t tandem_vk_extension_feature_bits(void) {
  uint32_t bits = 0;
  for (size_t k = 0; k < TANDEM_VK_EXTENSION_BITS; k++) bits |= tandem_vk_extension_bits[k].bit;
  return bits;
}

uint32_t tandem_vk_extension_shader_features(bool (*ext_present)(const void *ctx, const char *name),
                                             const void *ctx) {
  uint32_t bits = 0;
  for (size_t k = 0; k < TANDEM_VK_EXTENSION_BITS; k++)
    if (tandem_vk_extension_bits[k].shader_bits &&
        ext_present(ctx, tandem_vk_extension_bits[k].name))
      bits |= tandem_vk_extension_bits[k].shader_bits;
  return bits;
}

uint32_t tandem_vk_extension_shader_feature_bits(void) {
  uint32_t bits = 0;
  for (size_t k = 0; k < TANDEM_VK_EXTENSION_BITS; k++)
    bits |= tandem_vk_extension_bits[k].shader_bits;
  return bits;
}

/* tandem_vk_describe's extension list, for tandem_vk_extension_features. */
typedef struct {
  const VkExtensionProperties *exts;
  uint32_t n;
} tandem_vk_ext_list_t;

static bool tandem_vk_described_has(const void *ctx, const char *name) {
  const tandem_vk_ext_list_t *have = ctx;
  return tandem_vk_has_ext(have->exts, have->n, name);
}

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
  tandem_vk_feature_chain_t c;
  tandem_vk_feature_chain_init(&c);
  if (props.properties.apiVersion >= VK_API_VERSION_1_3) {
    vkGetPhysicalDeviceFeatures2(pd, &c.f);
    info->features |= tandem_vk_gpu_features(&c);
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
  const tandem_vk_ext_list_t have = {exts, n};
  info->features |= tandem_vk_extension_features(tandem_vk_described_has, &have);
  /* Pipeline robustness counts only with its feature. */
  if (info->features & TANDEM_GPU_PIPELINE_ROBUSTNESS) {
    VkPhysicalDevicePipelineRobustnessFeaturesEXT pr = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &pr};
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    if (!pr.pipelineRobustness) info->features &= ~(uint32_t)TANDEM_GPU_PIPELINE_ROBUSTNESS;
  }
  /* The shader clocks count only with their features: VK_KHR_shader_clock's
   * struct, outside the core chain, is queried only where the extension is,
   * into the chain's own members (the feature table's rows give the bits). */
  if (tandem_vk_extension_shader_features(tandem_vk_described_has, &have) &
      (TANDEM_SHADER_SUBGROUP_CLOCK | TANDEM_SHADER_DEVICE_CLOCK)) {
    VkPhysicalDeviceShaderClockFeaturesKHR clock = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &clock};
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    tandem_vk_feature_chain_or(&c, (const VkBaseInStructure *)&clock);
  }
  if (props.properties.apiVersion >= VK_API_VERSION_1_3)
    info->shader_features = tandem_vk_shader_features(&c, &p11, &p13);
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
