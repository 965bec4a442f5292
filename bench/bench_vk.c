/* SPDX-License-Identifier: MIT */
/*
 * bench_vk.c — bench/'s raw-Vulkan harness (bench_vk.h): the same work as
 * tandem's through raw Vulkan (volk, no libvulkan link) on tandem's own
 * VkDevice and the very queues of tandem's lanes
 * (tandem_runtime_vulkan_handles), with its own pools, semaphores and
 * buffers. The benchmarks are one thread and alternate the two sides, so the
 * queues are never used by both at once.
 *
 * This file is the comparison, not tandem logic: it is plain Vulkan written
 * for the benchmarks, with the validation layer on under --validate.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench_vk.h"

void bench_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", program_invocation_short_name);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

void bench_vk_load(tandem_runtime_t *rt, tandem_vulkan_handles_t *h, struct VolkDeviceTable *vk) {
  tandem_vulkan_handles_init(h);
  tandem_status_t s = tandem_runtime_vulkan_handles(rt, h);
  if (s == TANDEM_ERROR_NO_DEVICE) { /* 77: CTest's skip code, as bench_common.h's CHECK */
    fprintf(stderr, "%s: no usable Vulkan device: %s\n", program_invocation_short_name,
            tandem_error_message());
    exit(77);
  }
  if (s != TANDEM_OK)
    bench_die("tandem_runtime_vulkan_handles: %s: %s", tandem_status_name(s),
              tandem_error_message());
  if (volkInitialize() != VK_SUCCESS) bench_die("the Vulkan loader could not be loaded");
  volkLoadInstanceOnly((VkInstance)h->instance);
  volkLoadDeviceTable(vk, (VkDevice)h->device);
}

/* The direct side runs on tandem's own VkDevice and queues (through
 * tandem_runtime_vulkan_handles), never on a second device: two devices in one
 * process cost each round trip about 160 µs on the H200 and would slow both
 * sides alike, flattering every ratio. It makes its own command pools,
 * timeline semaphores, descriptor pool and buffers on that device. */
VkResult bench_vk_submit_one(const struct VolkDeviceTable *vk, tandem_runtime_t *rt, int lane,
                             VkQueue queue, VkCommandBuffer cb, VkSemaphore timeline,
                             uint64_t value) {
  VkCommandBufferSubmitInfo cbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                   .commandBuffer = cb};
  VkSemaphoreSubmitInfo signal = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                  .semaphore = timeline,
                                  .value = value,
                                  .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkSubmitInfo2 si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                      .commandBufferInfoCount = 1,
                      .pCommandBufferInfos = &cbi,
                      .signalSemaphoreInfoCount = 1,
                      .pSignalSemaphoreInfos = &signal};
  tandem_runtime_queue_lock(rt, lane);
  VkResult r = vk->vkQueueSubmit2(queue, 1, &si, VK_NULL_HANDLE);
  tandem_runtime_queue_unlock(rt, lane);
  return r;
}

void raw_open(raw_t *raw, tandem_runtime_t *rt) { raw_open_at(raw, rt, 0); }

void raw_open_at(raw_t *raw, tandem_runtime_t *rt, uint32_t gpu) {
  memset(raw, 0, sizeof *raw);
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TCHECK(tandem_runtime_vulkan_handles_at(rt, gpu, &h));
  raw->gpu = gpu;
  if (volkInitialize() != VK_SUCCESS)
    bench_die("direct side: the Vulkan loader could not be loaded");
  raw->runtime = rt;
  raw->instance = h.instance;
  raw->physical = h.physical_device;
  raw->device = h.device;
  volkLoadInstanceOnly(raw->instance);
  volkLoadDeviceTable(&raw->vk, raw->device);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(raw->physical, &props);
  snprintf(raw->name, sizeof raw->name, "%s", props.deviceName);
  if (props.limits.minStorageBufferOffsetAlignment > 256)
    bench_die("direct side: minStorageBufferOffsetAlignment %llu exceeds 256",
              (unsigned long long)props.limits.minStorageBufferOffsetAlignment);
  vkGetPhysicalDeviceMemoryProperties(raw->physical, &raw->memory);
  for (int l = 0; l < RAW_LANES; l++) {
    raw->family[l] = h.lanes[l].queue_family;
    raw->index[l] = h.lanes[l].queue_index;
    raw->queue[l] = h.lanes[l].queue;
    uint32_t k = 0;
    while (k < raw->distinct_count && raw->distinct_families[k] != raw->family[l]) k++;
    if (k == raw->distinct_count) raw->distinct_families[raw->distinct_count++] = raw->family[l];
  }
  /* Host-pointer import, when tandem enabled it (it does whenever the device
   * offers VK_EXT_external_memory_host). */
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TCHECK(tandem_runtime_gpu_describe(rt, gpu, &info));
  uint32_t en = 0;
  vkEnumerateDeviceExtensionProperties(raw->physical, NULL, &en, NULL);
  VkExtensionProperties *exts = calloc(en ? en : 1, sizeof *exts);
  if (!exts) bench_die("out of memory");
  vkEnumerateDeviceExtensionProperties(raw->physical, NULL, &en, exts);
  for (uint32_t i = 0; i < en; i++)
    if (!strcmp(exts[i].extensionName, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME))
      raw->host_import = true;
  free(exts);
  if (raw->host_import) {
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 pp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &hp};
    vkGetPhysicalDeviceProperties2(raw->physical, &pp);
    raw->host_import_alignment = hp.minImportedHostPointerAlignment;
  }
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  for (int l = 0; l < RAW_LANES; l++) {
    VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = raw->family[l]};
    VKCHECK(raw->vk.vkCreateCommandPool(raw->device, &cpci, NULL, &raw->pool[l]));
    VKCHECK(raw->vk.vkCreateSemaphore(raw->device, &sci, NULL, &raw->timeline[l]));
  }
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4096};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = 2048,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
  VKCHECK(raw->vk.vkCreateDescriptorPool(raw->device, &dpci, NULL, &raw->descriptor_pool));
}

void raw_close(raw_t *raw) {
  /* The device is tandem's: wait for the direct side's own work only. */
  if (raw->device) {
    for (int l = 0; l < RAW_LANES; l++) {
      VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                .semaphoreCount = 1,
                                .pSemaphores = &raw->timeline[l],
                                .pValues = &raw->value[l]};
      VKCHECK(raw->vk.vkWaitSemaphores(raw->device, &wi, UINT64_MAX));
      raw->vk.vkDestroySemaphore(raw->device, raw->timeline[l], NULL);
      raw->vk.vkDestroyCommandPool(raw->device, raw->pool[l], NULL);
    }
    raw->vk.vkDestroyDescriptorPool(raw->device, raw->descriptor_pool, NULL);
  }
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
  VkDescriptorSetLayoutCreateInfo dci = {.sType =
                                             VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
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
  VKCHECK(
      raw->vk.vkCreateComputePipelines(raw->device, VK_NULL_HANDLE, 1, &pci, NULL, &k->pipeline));
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
                            .queueFamilyIndexCount =
                                raw->distinct_count > 1 ? raw->distinct_count : 0,
                            .pQueueFamilyIndices = raw->distinct_families};
  VKCHECK(raw->vk.vkCreateBuffer(raw->device, &bci, NULL, &b->buffer));
  VkMemoryRequirements req;
  raw->vk.vkGetBufferMemoryRequirements(raw->device, b->buffer, &req);
  return req;
}

void raw_buffer_create(raw_t *raw, VkDeviceSize size, bool host, raw_buffer_t *b) {
  VkMemoryRequirements req = raw_buffer_make(raw, size, NULL, b);
  VkMemoryPropertyFlags want =
      host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
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

bool raw_buffer_create_in(raw_t *raw, VkDeviceSize size, uint32_t type, raw_buffer_t *b,
                          const char **why) {
  VkMemoryRequirements req = raw_buffer_make(raw, size, NULL, b);
  const VkMemoryType *t = &raw->memory.memoryTypes[type];
  *why = NULL;
  if (!(req.memoryTypeBits & (1u << type))) *why = "storage/transfer buffers cannot use this type";
  else if (req.size > raw->memory.memoryHeaps[t->heapIndex].size)
    *why = "its heap is smaller than the buffer";
  VkResult r = VK_SUCCESS;
  if (!*why) {
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    r = raw->vk.vkAllocateMemory(raw->device, &mai, NULL, &b->memory);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
      b->memory = VK_NULL_HANDLE;
      *why = "vkAllocateMemory ran out of memory";
    } else {
      VKCHECK(r);
    }
  }
  if (*why) {
    raw->vk.vkDestroyBuffer(raw->device, b->buffer, NULL);
    memset(b, 0, sizeof *b);
    return false;
  }
  VKCHECK(raw->vk.vkBindBufferMemory(raw->device, b->buffer, b->memory, 0));
  if (t->propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
    VKCHECK(raw->vk.vkMapMemory(raw->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped));
  return true;
}

void raw_buffer_import_host(raw_t *raw, void *host, VkDeviceSize size, raw_buffer_t *b) {
  const VkExternalMemoryHandleTypeFlagBits type =
      VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  VkExternalMemoryBufferCreateInfo ext = {.sType =
                                              VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                          .handleTypes = type};
  VkMemoryRequirements req = raw_buffer_make(raw, size, &ext, b);
  VkMemoryHostPointerPropertiesEXT hpp = {.sType =
                                              VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
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
