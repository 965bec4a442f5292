/* SPDX-License-Identifier: MIT */
/*
 * bench_raw.c — `tandem bench`'s baseline: the same work through raw Vulkan
 * (volk, no libvulkan link), on its own VkInstance and VkDevice for the same
 * physical device. Queues are picked the way tandem picks its lanes' queues:
 * compute on the first compute family, upload and download on a dedicated
 * transfer family when there is one (download on its second queue if it has
 * two), else on the compute family's further queues.
 *
 * This file is the comparison, not tandem logic: it is plain Vulkan written
 * for the benchmarks, with the validation layer on under --validate.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

uint64_t bench_raw_validation_messages;

static VKAPI_ATTR VkBool32 VKAPI_CALL raw_messenger(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)types;
  (void)user;
  if (!(severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)))
    return VK_FALSE;
  __atomic_fetch_add(&bench_raw_validation_messages, 1, __ATOMIC_RELAXED);
  fprintf(stderr, "tandem: bench: direct-side validation %s: %s\n",
          (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning",
          data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

static bool raw_has_layer(const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return false;
  VkLayerProperties *props = calloc(n, sizeof *props);
  if (!props) bench_die("out of memory");
  bool found = false;
  if (vkEnumerateInstanceLayerProperties(&n, props) >= 0)
    for (uint32_t i = 0; i < n && !found; i++) found = !strcmp(props[i].layerName, name);
  free(props);
  return found;
}

static void pick_queues(const VkQueueFamilyProperties *q, uint32_t qn, raw_t *raw) {
  uint32_t compute = UINT32_MAX, transfer = UINT32_MAX;
  for (uint32_t i = 0; i < qn && compute == UINT32_MAX; i++)
    if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) compute = i;
  if (compute == UINT32_MAX) bench_die("direct side: '%s' has no compute queue family", raw->name);
  for (uint32_t i = 0; i < qn && transfer == UINT32_MAX; i++)
    if ((q[i].queueFlags & VK_QUEUE_TRANSFER_BIT) &&
        !(q[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
      transfer = i;
  raw->family[TANDEM_LANE_COMPUTE] = compute;
  raw->index[TANDEM_LANE_COMPUTE] = 0;
  if (transfer != UINT32_MAX) {
    raw->family[TANDEM_LANE_UPLOAD] = raw->family[TANDEM_LANE_DOWNLOAD] = transfer;
    raw->index[TANDEM_LANE_UPLOAD] = 0;
    raw->index[TANDEM_LANE_DOWNLOAD] = q[transfer].queueCount > 1 ? 1 : 0;
  } else {
    raw->family[TANDEM_LANE_UPLOAD] = raw->family[TANDEM_LANE_DOWNLOAD] = compute;
    uint32_t n = q[compute].queueCount;
    raw->index[TANDEM_LANE_UPLOAD] = n > 1 ? 1 : 0;
    raw->index[TANDEM_LANE_DOWNLOAD] = n > 2 ? 2 : raw->index[TANDEM_LANE_UPLOAD];
  }
}

void raw_open(raw_t *raw, uint32_t gpu_index, bool validate) {
  memset(raw, 0, sizeof *raw);
  if (volkInitialize() != VK_SUCCESS) bench_die("direct side: the Vulkan loader could not be loaded");
  if (volkGetInstanceVersion() < VK_API_VERSION_1_3)
    bench_die("direct side: the Vulkan loader is older than 1.3");
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "tandem bench (direct)",
                           .apiVersion = VK_API_VERSION_1_3};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                              VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkDebugUtilsMessengerCreateInfoEXT mci = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = raw_messenger};
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .pNext = &mci,
                                      .enabledValidationFeatureCount = 1,
                                      .pEnabledValidationFeatures = enables};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app};
  if (validate) {
    if (!raw_has_layer(layers[0]))
      bench_die("direct side: --validate needs VK_LAYER_KHRONOS_validation, which is not installed");
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = layers;
    ici.enabledExtensionCount = 2;
    ici.ppEnabledExtensionNames = extensions;
    ici.pNext = &features;
  }
  VKCHECK(vkCreateInstance(&ici, NULL, &raw->instance));
  volkLoadInstanceOnly(raw->instance);
  if (validate)
    VKCHECK(vkCreateDebugUtilsMessengerEXT(raw->instance, &mci, NULL, &raw->messenger));

  uint32_t n = 0;
  VKCHECK(vkEnumeratePhysicalDevices(raw->instance, &n, NULL));
  if (gpu_index >= n) bench_die("direct side: GPU %u requested, the loader reports %u", gpu_index, n);
  VkPhysicalDevice *pds = calloc(n, sizeof *pds);
  if (!pds) bench_die("out of memory");
  VKCHECK(vkEnumeratePhysicalDevices(raw->instance, &n, pds));
  raw->physical = pds[gpu_index];
  free(pds);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(raw->physical, &props);
  snprintf(raw->name, sizeof raw->name, "%s", props.deviceName);
  if (props.limits.minStorageBufferOffsetAlignment > 256)
    bench_die("direct side: minStorageBufferOffsetAlignment %llu exceeds 256",
              (unsigned long long)props.limits.minStorageBufferOffsetAlignment);
  vkGetPhysicalDeviceMemoryProperties(raw->physical, &raw->memory);

  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(raw->physical, &qn, NULL);
  VkQueueFamilyProperties *q = calloc(qn ? qn : 1, sizeof *q);
  if (!q) bench_die("out of memory");
  vkGetPhysicalDeviceQueueFamilyProperties(raw->physical, &qn, q);
  pick_queues(q, qn, raw);
  free(q);

  float priority[4] = {1, 1, 1, 1};
  VkDeviceQueueCreateInfo qci[RAW_LANES];
  uint32_t qci_count = 0;
  for (int l = 0; l < RAW_LANES; l++) {
    uint32_t k = 0;
    while (k < qci_count && qci[k].queueFamilyIndex != raw->family[l]) k++;
    if (k == qci_count) {
      qci[qci_count++] = (VkDeviceQueueCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                                   .queueFamilyIndex = raw->family[l],
                                                   .queueCount = 0,
                                                   .pQueuePriorities = priority};
      raw->distinct_families[raw->distinct_count++] = raw->family[l];
    }
    if (qci[k].queueCount < raw->index[l] + 1) qci[k].queueCount = raw->index[l] + 1;
  }
  VkPhysicalDeviceVulkan13Features f13 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, .synchronization2 = VK_TRUE};
  VkPhysicalDeviceVulkan12Features f12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .pNext = &f13,
      .timelineSemaphore = VK_TRUE};
  /* VK_EXT_external_memory_host, when offered: the npu-edge baseline imports
   * the NPU's buffer mappings like tandem's host-pointer sharing does. */
  uint32_t en = 0;
  vkEnumerateDeviceExtensionProperties(raw->physical, NULL, &en, NULL);
  VkExtensionProperties *exts = calloc(en ? en : 1, sizeof *exts);
  if (!exts) bench_die("out of memory");
  vkEnumerateDeviceExtensionProperties(raw->physical, NULL, &en, exts);
  for (uint32_t i = 0; i < en; i++)
    if (!strcmp(exts[i].extensionName, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) raw->host_import = true;
  free(exts);
  const char *dev_ext[1] = {VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME};
  if (raw->host_import) {
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 pp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &hp};
    vkGetPhysicalDeviceProperties2(raw->physical, &pp);
    raw->host_import_alignment = hp.minImportedHostPointerAlignment;
  }
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f12,
                            .queueCreateInfoCount = qci_count,
                            .pQueueCreateInfos = qci,
                            .enabledExtensionCount = raw->host_import ? 1 : 0,
                            .ppEnabledExtensionNames = dev_ext};
  VKCHECK(vkCreateDevice(raw->physical, &dci, NULL, &raw->device));
  volkLoadDeviceTable(&raw->vk, raw->device);
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  for (int l = 0; l < RAW_LANES; l++) {
    raw->vk.vkGetDeviceQueue(raw->device, raw->family[l], raw->index[l], &raw->queue[l]);
    VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = raw->family[l]};
    VKCHECK(raw->vk.vkCreateCommandPool(raw->device, &cpci, NULL, &raw->pool[l]));
    VKCHECK(raw->vk.vkCreateSemaphore(raw->device, &sci, NULL, &raw->timeline[l]));
  }
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1024};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = 512,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
  VKCHECK(raw->vk.vkCreateDescriptorPool(raw->device, &dpci, NULL, &raw->descriptor_pool));
}

void raw_close(raw_t *raw) {
  if (raw->device) {
    VKCHECK(raw->vk.vkDeviceWaitIdle(raw->device));
    for (int l = 0; l < RAW_LANES; l++) {
      raw->vk.vkDestroySemaphore(raw->device, raw->timeline[l], NULL);
      raw->vk.vkDestroyCommandPool(raw->device, raw->pool[l], NULL);
    }
    raw->vk.vkDestroyDescriptorPool(raw->device, raw->descriptor_pool, NULL);
    raw->vk.vkDestroyDevice(raw->device, NULL);
  }
  if (raw->messenger) vkDestroyDebugUtilsMessengerEXT(raw->instance, raw->messenger, NULL);
  if (raw->instance) vkDestroyInstance(raw->instance, NULL);
  memset(raw, 0, sizeof *raw);
}

void raw_kernel_create(raw_t *raw, const uint32_t *code, size_t code_bytes, uint32_t bindings,
                       uint32_t push_bytes, raw_kernel_t *k) {
  *k = (raw_kernel_t){.push_bytes = push_bytes, .bindings = bindings};
  VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = code_bytes,
                                   .pCode = code};
  VKCHECK(raw->vk.vkCreateShaderModule(raw->device, &smci, NULL, &k->module));
  VkDescriptorSetLayoutBinding b[4];
  for (uint32_t i = 0; i < bindings; i++)
    b[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .descriptorCount = 1,
                                          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dci = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = bindings,
      .pBindings = b};
  VKCHECK(raw->vk.vkCreateDescriptorSetLayout(raw->device, &dci, NULL, &k->set_layout));
  VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = push_bytes};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .setLayoutCount = 1,
                                    .pSetLayouts = &k->set_layout,
                                    .pushConstantRangeCount = push_bytes ? 1 : 0,
                                    .pPushConstantRanges = &range};
  VKCHECK(raw->vk.vkCreatePipelineLayout(raw->device, &lci, NULL, &k->layout));
  VkComputePipelineCreateInfo pci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = k->module,
                .pName = "main"},
      .layout = k->layout};
  VKCHECK(raw->vk.vkCreateComputePipelines(raw->device, VK_NULL_HANDLE, 1, &pci, NULL,
                                           &k->pipeline));
}

void raw_kernel_destroy(raw_t *raw, raw_kernel_t *k) {
  raw->vk.vkDestroyPipeline(raw->device, k->pipeline, NULL);
  raw->vk.vkDestroyPipelineLayout(raw->device, k->layout, NULL);
  raw->vk.vkDestroyDescriptorSetLayout(raw->device, k->set_layout, NULL);
  raw->vk.vkDestroyShaderModule(raw->device, k->module, NULL);
}

static uint32_t raw_memory_type(const raw_t *raw, uint32_t bits, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < raw->memory.memoryTypeCount; i++)
    if ((bits & (1u << i)) && (raw->memory.memoryTypes[i].propertyFlags & want) == want) return i;
  return UINT32_MAX;
}

/* The VkBuffer (storage, transfer src/dst, shared by the lanes' families) of
 * |b|, with |chain| in its create info; returns its memory requirements. */
static VkMemoryRequirements raw_buffer_make(raw_t *raw, VkDeviceSize size, const void *chain,
                                            raw_buffer_t *b) {
  *b = (raw_buffer_t){.size = size};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .pNext = chain,
                            .size = size,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            .sharingMode = raw->distinct_count > 1 ? VK_SHARING_MODE_CONCURRENT
                                                                    : VK_SHARING_MODE_EXCLUSIVE,
                            .queueFamilyIndexCount = raw->distinct_count > 1 ? raw->distinct_count : 0,
                            .pQueueFamilyIndices = raw->distinct_families};
  VKCHECK(raw->vk.vkCreateBuffer(raw->device, &bci, NULL, &b->buffer));
  VkMemoryRequirements req;
  raw->vk.vkGetBufferMemoryRequirements(raw->device, b->buffer, &req);
  return req;
}

void raw_buffer_create(raw_t *raw, VkDeviceSize size, bool host, raw_buffer_t *b) {
  VkMemoryRequirements req = raw_buffer_make(raw, size, NULL, b);
  VkMemoryPropertyFlags want = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                    : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t type = raw_memory_type(raw, req.memoryTypeBits, want);
  if (type == UINT32_MAX) bench_die("direct side: no memory type with flags 0x%x", (unsigned)want);
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = type};
  VKCHECK(raw->vk.vkAllocateMemory(raw->device, &mai, NULL, &b->memory));
  VKCHECK(raw->vk.vkBindBufferMemory(raw->device, b->buffer, b->memory, 0));
  if (host) VKCHECK(raw->vk.vkMapMemory(raw->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped));
}

void raw_buffer_import_host(raw_t *raw, void *host, VkDeviceSize size, raw_buffer_t *b) {
  const VkExternalMemoryHandleTypeFlagBits type =
      VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  VkExternalMemoryBufferCreateInfo ext = {
      .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, .handleTypes = type};
  VkMemoryRequirements req = raw_buffer_make(raw, size, &ext, b);
  VkMemoryHostPointerPropertiesEXT hpp = {.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  VKCHECK(raw->vk.vkGetMemoryHostPointerPropertiesEXT(raw->device, type, host, &hpp));
  uint32_t bits = hpp.memoryTypeBits & req.memoryTypeBits;
  if (!bits) bench_die("direct side: no memory type can hold imported host memory as a buffer");
  uint32_t index = 0;
  while (!(bits & (1u << index))) index++;
  VkImportMemoryHostPointerInfoEXT import = {
      .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
      .handleType = type,
      .pHostPointer = host};
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .pNext = &import,
                              .allocationSize = size,
                              .memoryTypeIndex = index};
  VKCHECK(raw->vk.vkAllocateMemory(raw->device, &mai, NULL, &b->memory));
  VKCHECK(raw->vk.vkBindBufferMemory(raw->device, b->buffer, b->memory, 0));
}

void raw_buffer_destroy(raw_t *raw, raw_buffer_t *b) {
  if (!b->buffer) return;
  if (b->mapped) raw->vk.vkUnmapMemory(raw->device, b->memory);
  raw->vk.vkDestroyBuffer(raw->device, b->buffer, NULL);
  raw->vk.vkFreeMemory(raw->device, b->memory, NULL);
  memset(b, 0, sizeof *b);
}

void raw_barrier(raw_t *raw, VkCommandBuffer cb, VkPipelineStageFlags2 src_stage,
                 VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                 VkAccessFlags2 dst_access) {
  VkMemoryBarrier2 mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                         .srcStageMask = src_stage,
                         .srcAccessMask = src_access,
                         .dstStageMask = dst_stage,
                         .dstAccessMask = dst_access};
  VkDependencyInfo dep = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                          .memoryBarrierCount = 1,
                          .pMemoryBarriers = &mb};
  raw->vk.vkCmdPipelineBarrier2(cb, &dep);
}

VkCommandBuffer raw_begin(raw_t *raw, int lane) {
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = raw->pool[lane],
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkCommandBuffer cb;
  VKCHECK(raw->vk.vkAllocateCommandBuffers(raw->device, &ai, &cb));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKCHECK(raw->vk.vkBeginCommandBuffer(cb, &bi));
  return cb;
}

void raw_run(raw_t *raw, int lane, const VkCommandBuffer *cbs, uint32_t count) {
  VkCommandBufferSubmitInfo infos[4];
  if (count > 4) bench_die("internal: raw_run of %u command buffers", count);
  for (uint32_t i = 0; i < count; i++)
    infos[i] = (VkCommandBufferSubmitInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                           .commandBuffer = cbs[i]};
  VkSemaphoreSubmitInfo waits[RAW_LANES];
  for (int l = 0; l < RAW_LANES; l++)
    waits[l] = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                       .semaphore = raw->timeline[l],
                                       .value = raw->value[l],
                                       .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkSemaphoreSubmitInfo signal = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                  .semaphore = raw->timeline[lane],
                                  .value = ++raw->value[lane],
                                  .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkSubmitInfo2 si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                      .waitSemaphoreInfoCount = RAW_LANES,
                      .pWaitSemaphoreInfos = waits,
                      .commandBufferInfoCount = count,
                      .pCommandBufferInfos = infos,
                      .signalSemaphoreInfoCount = 1,
                      .pSignalSemaphoreInfos = &signal};
  VKCHECK(raw->vk.vkQueueSubmit2(raw->queue[lane], 1, &si, VK_NULL_HANDLE));
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &raw->timeline[lane],
                            .pValues = &raw->value[lane]};
  VKCHECK(raw->vk.vkWaitSemaphores(raw->device, &wi, UINT64_MAX));
}

VkDescriptorSet raw_descriptor_set(raw_t *raw, const raw_kernel_t *k, const VkBuffer *buffers,
                                   const VkDeviceSize *offsets, const VkDeviceSize *ranges) {
  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = raw->descriptor_pool,
                                    .descriptorSetCount = 1,
                                    .pSetLayouts = &k->set_layout};
  VkDescriptorSet set;
  VKCHECK(raw->vk.vkAllocateDescriptorSets(raw->device, &ai, &set));
  VkDescriptorBufferInfo info[4];
  VkWriteDescriptorSet w[4];
  for (uint32_t i = 0; i < k->bindings; i++) {
    info[i] = (VkDescriptorBufferInfo){buffers[i], offsets[i], ranges[i]};
    w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstSet = set,
                                  .dstBinding = i,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &info[i]};
  }
  raw->vk.vkUpdateDescriptorSets(raw->device, k->bindings, w, 0, NULL);
  return set;
}
