/* SPDX-License-Identifier: MIT */
/*
 * vk_byo.c — bringing your own device (runtime option vulkan_device): the
 * checks of the application's instance, physical device and VkDevice before
 * tandem uses them, and what they restrict. The features and extensions
 * count only where the application enabled them (gathered from its
 * vkCreateDevice chain) and the device has them; the lanes' queues are the
 * families and indices it names. Nothing is created here: on failure the
 * application's objects are untouched.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/vulkan/vk_internal.h"

/* The features the application enabled, gathered from its vkCreateDevice
 * chain (Features2, the 1.1/1.2/1.3 structs and the per-feature structs
 * that carry what tandem uses) into one tandem_vk_feature_chain_t. */
static tandem_status_t tandem_vk_chain_enabled(const tandem_vulkan_device_t *d,
                                               tandem_vk_feature_chain_t *c) {
  tandem_vk_feature_chain_init(c);
  if (d->enabled_features) c->f.features = *(const VkPhysicalDeviceFeatures *)d->enabled_features;
  const VkBaseInStructure *s = d->features;
  for (uint32_t n = 0; s; s = s->pNext, n++) {
    if (n == 256)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "vulkan_device->features: the pNext chain has more than 256 structs "
                         "(a cycle?); pass VkDeviceCreateInfo.pNext as given to vkCreateDevice");
    tandem_vk_feature_chain_or(c, s); /* vk_physical.c's table */
  }
  return TANDEM_OK;
}

/* Checks the application's description and fills |g| from it: physical
 * device, info (restricted to what the device was created with), queues.
 * On failure |g| is left for the caller to destroy. */
/* Whether the application's device description |ctx| enabled extension
 * |name|, for tandem_vk_extension_features. */
static bool tandem_vk_byo_enabled(const void *ctx, const char *name) {
  const tandem_vulkan_device_t *d = ctx;
  for (uint32_t e = 0; e < d->extension_count; e++)
    if (d->extensions[e] && strcmp(d->extensions[e], name) == 0) return true;
  return false;
}

tandem_status_t tandem_vk_byo_check(tandem_vk_gpu_t *g, const tandem_vulkan_device_t *d,
                                    uint32_t family[TANDEM_LANE_COUNT_GPU],
                                    uint32_t index[TANDEM_LANE_COUNT_GPU],
                                    VkQueueFamilyProperties *qprops,
                                    tandem_vk_feature_chain_t *enabled) {
  if (!d->instance || !d->physical_device || !d->device)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "vulkan_device: instance, physical_device and device must all be set "
                       "(%s is NULL)",
                       !d->instance          ? "instance"
                       : !d->physical_device ? "physical_device"
                                             : "device");
  if (d->extension_count && !d->extensions)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "vulkan_device: extension_count is %u but extensions is NULL",
                       d->extension_count);
  TANDEM_RETURN_IF_ERROR(tandem_vk_loader_init());
  if (d->get_instance_proc_addr && d->get_instance_proc_addr != (void *)vkGetInstanceProcAddr)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "vulkan_device: get_instance_proc_addr is not the system loader's "
                       "(libvulkan.so.1), the one tandem calls through; create the instance "
                       "through that loader, or pass NULL if you did");
  if (d->api_version < VK_API_VERSION_1_3)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "vulkan_device: the instance was created for Vulkan %u.%u; tandem needs "
                       "1.3 (set VkApplicationInfo.apiVersion to VK_API_VERSION_1_3 and "
                       "api_version with it)",
                       VK_API_VERSION_MAJOR(d->api_version), VK_API_VERSION_MINOR(d->api_version));
  g->instance = (VkInstance)d->instance;
  g->physical = (VkPhysicalDevice)d->physical_device;
  g->device = (VkDevice)d->device;
  g->borrowed = true;
  tandem_vk_load_instance(g->instance, false);

  VkPhysicalDevice *pds;
  uint32_t n;
  TANDEM_RETURN_IF_ERROR(tandem_vk_physical_devices(g->instance, &pds, &n));
  uint32_t at = 0;
  while (at < n && pds[at] != g->physical) at++;
  free(pds);
  if (at == n)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "vulkan_device: physical_device is not one of the instance's %u physical "
                       "devices (vkEnumeratePhysicalDevices); pass the one the VkDevice was "
                       "created on",
                       n);
  TANDEM_RETURN_IF_ERROR(tandem_vk_describe(g->physical, at, &g->base.info));
  tandem_device_info_t *info = &g->base.info;
  if (info->api_version < VK_API_VERSION_1_3)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "vulkan_device: GPU '%s' offers Vulkan %u.%u; tandem needs 1.3", info->name,
                       VK_API_VERSION_MAJOR(info->api_version),
                       VK_API_VERSION_MINOR(info->api_version));

  /* Features: what the application enabled, and of that what the device has. */
  TANDEM_RETURN_IF_ERROR(tandem_vk_chain_enabled(d, enabled));
  tandem_vk_feature_chain_t have;
  tandem_vk_feature_chain_init(&have);
  vkGetPhysicalDeviceFeatures2(g->physical, &have.f);
  tandem_vk_feature_chain_and(enabled, &have);
  char missing[512] = "";
  tandem_vk_features_missing(enabled, missing, sizeof missing);
  if (missing[0])
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "vulkan_device: the VkDevice on GPU '%s' was not created with %s, which "
                       "tandem needs: enable them in the feature chain given to vkCreateDevice "
                       "(and pass that chain as features)",
                       info->name, missing);
  VkPhysicalDeviceVulkan11Properties p11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceVulkan13Properties p13 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES,
      .pNext = &p11};
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                       .pNext = &p13};
  vkGetPhysicalDeviceProperties2(g->physical, &props);
  /* Shader features: what the application enabled of what the device
   * offers (tandem_vk_describe's bits, which unlike |have| hold
   * VK_KHR_shader_clock's), an extension's only where the application
   * enabled the extension too. */
  uint32_t offered = info->shader_features;
  info->shader_features = tandem_vk_shader_features(enabled, &p11, &p13) & offered &
                          (~tandem_vk_extension_shader_feature_bits() |
                           tandem_vk_extension_shader_features(tandem_vk_byo_enabled, d));
  g->base.shader_features_not_enabled = offered & ~info->shader_features;
  if (!enabled->f12.bufferDeviceAddress)
    info->features &= ~(uint32_t)TANDEM_GPU_BUFFER_DEVICE_ADDRESS;
  /* Extensions: the ones tandem uses count only when the application
   * enabled them. */
  info->features &=
      ~tandem_vk_extension_feature_bits() | tandem_vk_extension_features(tandem_vk_byo_enabled, d);
  if (!enabled->pipeline_robustness) info->features &= ~(uint32_t)TANDEM_GPU_PIPELINE_ROBUSTNESS;

  /* Queues: the families and indices the application names. */
  uint32_t qn = TANDEM_MAX_QUEUE_FAMILIES;
  vkGetPhysicalDeviceQueueFamilyProperties(g->physical, &qn, qprops);
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) {
    const tandem_vulkan_queue_t *q = &d->lanes[l];
    const char *lane = tandem_lane_name((tandem_lane_t)l);
    if (q->queue_family >= qn)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "vulkan_device: the %s lane's queue_family is %u; GPU '%s' has %u "
                         "queue families",
                         lane, q->queue_family, info->name, qn);
    if (q->queue_index >= qprops[q->queue_family].queueCount)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "vulkan_device: the %s lane's queue_index is %u; queue family %u has "
                         "%u queues",
                         lane, q->queue_index, q->queue_family, qprops[q->queue_family].queueCount);
    VkQueueFlags need =
        l == TANDEM_LANE_COMPUTE
            ? VK_QUEUE_COMPUTE_BIT
            : (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT);
    if (!(qprops[q->queue_family].queueFlags & need))
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "vulkan_device: the %s lane's queue family %u cannot do %s; name a "
                         "family that can",
                         lane, q->queue_family, l == TANDEM_LANE_COMPUTE ? "compute" : "transfers");
    family[l] = q->queue_family;
    index[l] = q->queue_index;
  }
  return TANDEM_OK;
}
