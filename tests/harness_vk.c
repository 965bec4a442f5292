/* SPDX-License-Identifier: MIT */
/*
 * harness_vk.c — plain Vulkan for the tests that bring their own device,
 * hand tandem their own objects or record and submit their own commands
 * (harness.h, "Plain Vulkan"; harness_vk.h): a VkInstance with the
 * validation layer and synchronization validation whose messages the harness
 * counts like tandem's, a VkDevice created with the features and extensions
 * tandem uses (or without a chosen one), VkBuffers and compute pipelines made
 * without tandem, for adoption, and the one table of device entry points
 * every test's raw Vulkan goes through, with the steps they share (command
 * pools and buffers, fenced submissions under tandem's queue lock, timeline
 * semaphores). Everything goes through the system loader (libvulkan.so.1),
 * the one tandem uses.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "harness_vk.h"

#define TH_VK_CHECK(call)                                                           \
  do {                                                                              \
    VkResult th__r = (call);                                                        \
    if (th__r != VK_SUCCESS) fail_msg("%s failed: VkResult %d", #call, (int)th__r); \
  } while (0)

struct th_vk_device {
  void *lib;
  PFN_vkGetInstanceProcAddr gipa;
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice physical;
  VkDevice device;
  VkPhysicalDeviceFeatures2 f;
  VkPhysicalDeviceVulkan11Features f11;
  VkPhysicalDeviceVulkan12Features f12;
  VkPhysicalDeviceVulkan13Features f13;
  VkPhysicalDeviceShaderClockFeaturesKHR clock; /* chained after f13 with its extension */
  const char *extensions[8];
  uint32_t extension_count;
  tandem_vulkan_device_t desc;
};

static VKAPI_ATTR VkBool32 VKAPI_CALL th_vk_messenger(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)types;
  (void)user;
  th__validation_note((severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
                          ? TANDEM_VALIDATION_ERROR
                          : TANDEM_VALIDATION_WARNING,
                      data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

static PFN_vkGetInstanceProcAddr th_vk_loader(void **out_lib) {
  void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "SKIP: no Vulkan loader: %s\n", dlerror());
    exit(TH_EXIT_SKIP);
  }
  *out_lib = lib;
  PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
  assert_non_null(gipa);
  return gipa;
}

/* Keeps in |d|'s chain only what tandem uses (the device has it), then
 * drops |drop|: "synchronization2", "timelineSemaphore" or "16bit". */
static void th_vk_select(th_vk_device_t *d, const char *drop) {
  VkPhysicalDeviceFeatures2 have = d->f;
  VkPhysicalDeviceVulkan11Features h11 = d->f11;
  VkPhysicalDeviceVulkan12Features h12 = d->f12;
  VkPhysicalDeviceVulkan13Features h13 = d->f13;
  memset(&d->f.features, 0, sizeof d->f.features);
  memset(&d->f11.storageBuffer16BitAccess, 0,
         sizeof d->f11 - offsetof(VkPhysicalDeviceVulkan11Features, storageBuffer16BitAccess));
  memset(&d->f12.samplerMirrorClampToEdge, 0,
         sizeof d->f12 - offsetof(VkPhysicalDeviceVulkan12Features, samplerMirrorClampToEdge));
  memset(&d->f13.robustImageAccess, 0,
         sizeof d->f13 - offsetof(VkPhysicalDeviceVulkan13Features, robustImageAccess));
  d->f.features.shaderInt16 = have.features.shaderInt16;
  d->f.features.shaderInt64 = have.features.shaderInt64;
  d->f.features.shaderFloat64 = have.features.shaderFloat64;
  d->f11.storageBuffer16BitAccess = h11.storageBuffer16BitAccess;
  d->f11.uniformAndStorageBuffer16BitAccess = h11.uniformAndStorageBuffer16BitAccess;
  d->f11.storagePushConstant16 = h11.storagePushConstant16;
  d->f12.storageBuffer8BitAccess = h12.storageBuffer8BitAccess;
  d->f12.uniformAndStorageBuffer8BitAccess = h12.uniformAndStorageBuffer8BitAccess;
  d->f12.storagePushConstant8 = h12.storagePushConstant8;
  d->f12.shaderFloat16 = h12.shaderFloat16;
  d->f12.shaderInt8 = h12.shaderInt8;
  d->f12.shaderSubgroupExtendedTypes = h12.shaderSubgroupExtendedTypes;
  d->f12.shaderBufferInt64Atomics = h12.shaderBufferInt64Atomics;
  d->f12.vulkanMemoryModel = h12.vulkanMemoryModel;
  d->f12.vulkanMemoryModelDeviceScope = h12.vulkanMemoryModelDeviceScope;
  d->f12.hostQueryReset = h12.hostQueryReset;
  d->f12.timelineSemaphore = h12.timelineSemaphore;
  d->f13.shaderIntegerDotProduct = h13.shaderIntegerDotProduct;
  d->f13.subgroupSizeControl = h13.subgroupSizeControl;
  d->f13.computeFullSubgroups = h13.computeFullSubgroups;
  d->f13.synchronization2 = h13.synchronization2;
  d->f13.maintenance4 = h13.maintenance4;
  if (drop && strcmp(drop, "maintenance4") == 0) d->f13.maintenance4 = VK_FALSE;
  if (drop && strcmp(drop, "synchronization2") == 0) d->f13.synchronization2 = VK_FALSE;
  if (drop && strcmp(drop, "timelineSemaphore") == 0) d->f12.timelineSemaphore = VK_FALSE;
  if (drop && strcmp(drop, "16bit") == 0) {
    d->f11.storageBuffer16BitAccess = VK_FALSE;
    d->f11.uniformAndStorageBuffer16BitAccess = VK_FALSE;
    d->f11.storagePushConstant16 = VK_FALSE;
  }
}

th_vk_device_t *th_vk_device_create(const char *drop) {
  th_vk_device_t *d = calloc(1, sizeof *d);
  assert_non_null(d);
  d->gipa = th_vk_loader(&d->lib);
  PFN_vkCreateInstance CreateInstance =
      (PFN_vkCreateInstance)d->gipa(VK_NULL_HANDLE, "vkCreateInstance");
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "tandem tests (own device)",
                           .apiVersion = VK_API_VERSION_1_3};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *inst_ext[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
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
      .pfnUserCallback = th_vk_messenger};
  VkValidationFeaturesEXT vf = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                .pNext = &mci,
                                .enabledValidationFeatureCount = 1,
                                .pEnabledValidationFeatures = enables};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pNext = &vf,
                              .pApplicationInfo = &app,
                              .enabledLayerCount = 1,
                              .ppEnabledLayerNames = layers,
                              .enabledExtensionCount = 2,
                              .ppEnabledExtensionNames = inst_ext};
  VkResult r = CreateInstance(&ici, NULL, &d->instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
    fprintf(stderr, "SKIP: no Vulkan driver (vkCreateInstance: INCOMPATIBLE_DRIVER)\n");
    exit(TH_EXIT_SKIP);
  }
  TH_VK_CHECK(r);
#define TH_I(name) PFN_vk##name name = (PFN_vk##name)d->gipa(d->instance, "vk" #name)
  TH_I(CreateDebugUtilsMessengerEXT);
  TH_I(EnumeratePhysicalDevices);
  TH_I(GetPhysicalDeviceFeatures2);
  TH_I(GetPhysicalDeviceProperties);
  TH_I(GetPhysicalDeviceQueueFamilyProperties);
  TH_I(EnumerateDeviceExtensionProperties);
  TH_I(CreateDevice);
#undef TH_I
  TH_VK_CHECK(CreateDebugUtilsMessengerEXT(d->instance, &mci, NULL, &d->messenger));
  uint32_t n = 1;
  r = EnumeratePhysicalDevices(d->instance, &n, &d->physical);
  if (n == 0) {
    fprintf(stderr, "SKIP: no Vulkan physical device\n");
    exit(TH_EXIT_SKIP);
  }
  assert_true(r == VK_SUCCESS || r == VK_INCOMPLETE);
  VkPhysicalDeviceProperties props;
  GetPhysicalDeviceProperties(d->physical, &props);
  if (props.apiVersion < VK_API_VERSION_1_3) {
    fprintf(stderr, "SKIP: device 0 offers Vulkan below 1.3\n");
    exit(TH_EXIT_SKIP);
  }

  d->f13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  d->f12 =
      (VkPhysicalDeviceVulkan12Features){.sType =
                                             VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                         .pNext = &d->f13};
  d->f11 =
      (VkPhysicalDeviceVulkan11Features){.sType =
                                             VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                         .pNext = &d->f12};
  d->f = (VkPhysicalDeviceFeatures2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                     .pNext = &d->f11};
  GetPhysicalDeviceFeatures2(d->physical, &d->f);
  th_vk_select(d, drop);

  uint32_t en = 0;
  TH_VK_CHECK(EnumerateDeviceExtensionProperties(d->physical, NULL, &en, NULL));
  VkExtensionProperties *exts = calloc(en ? en : 1, sizeof *exts);
  assert_non_null(exts);
  TH_VK_CHECK(EnumerateDeviceExtensionProperties(d->physical, NULL, &en, exts));
  static const char *const wanted[] = {
      VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,    VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME,
      VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME,  VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
      VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  for (size_t w = 0; w < sizeof wanted / sizeof wanted[0]; w++)
    for (uint32_t i = 0; i < en; i++)
      if (strcmp(exts[i].extensionName, wanted[w]) == 0)
        d->extensions[d->extension_count++] = wanted[w];
  /* VK_KHR_shader_clock with the clocks the device has, its struct chained
   * after the 1.3 features (unless |drop| leaves it or its device clock off). */
  bool clock = !(drop && strcmp(drop, "shaderClock") == 0);
  for (uint32_t i = 0; i < en && clock; i++)
    if (strcmp(exts[i].extensionName, VK_KHR_SHADER_CLOCK_EXTENSION_NAME) == 0) {
      d->clock.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR;
      VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                      .pNext = &d->clock};
      GetPhysicalDeviceFeatures2(d->physical, &f2);
      if (drop && strcmp(drop, "shaderDeviceClock") == 0) d->clock.shaderDeviceClock = VK_FALSE;
      d->clock.pNext = NULL;
      d->f13.pNext = &d->clock;
      d->extensions[d->extension_count++] = VK_KHR_SHADER_CLOCK_EXTENSION_NAME;
    }
  assert_true(d->extension_count <= sizeof d->extensions / sizeof d->extensions[0]);
  free(exts);

  /* Queues as tandem picks them: compute lane on the first compute family,
   * copies on a transfer-only family when there is one. */
  VkQueueFamilyProperties q[16];
  uint32_t qn = 16;
  GetPhysicalDeviceQueueFamilyProperties(d->physical, &qn, q);
  uint32_t compute = UINT32_MAX, transfer = UINT32_MAX;
  for (uint32_t i = 0; i < qn && compute == UINT32_MAX; i++)
    if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) compute = i;
  for (uint32_t i = 0; i < qn && transfer == UINT32_MAX; i++)
    if ((q[i].queueFlags & VK_QUEUE_TRANSFER_BIT) &&
        !(q[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
      transfer = i;
  assert_int_not_equal(compute, UINT32_MAX);
  tandem_vulkan_queue_t *lanes = d->desc.lanes;
  lanes[TANDEM_LANE_COMPUTE] = (tandem_vulkan_queue_t){compute, 0};
  if (transfer != UINT32_MAX) {
    lanes[TANDEM_LANE_UPLOAD] = (tandem_vulkan_queue_t){transfer, 0};
    lanes[TANDEM_LANE_DOWNLOAD] = (tandem_vulkan_queue_t){transfer, q[transfer].queueCount > 1};
  } else {
    uint32_t c = q[compute].queueCount;
    lanes[TANDEM_LANE_UPLOAD] = (tandem_vulkan_queue_t){compute, c > 1 ? 1 : 0};
    lanes[TANDEM_LANE_DOWNLOAD] =
        (tandem_vulkan_queue_t){compute, c > 2 ? 2 : lanes[TANDEM_LANE_UPLOAD].queue_index};
  }
  float priorities[4] = {1, 1, 1, 1};
  VkDeviceQueueCreateInfo qci[3];
  uint32_t qci_count = 0;
  for (int l = 0; l < 3; l++) {
    uint32_t k = 0;
    while (k < qci_count && qci[k].queueFamilyIndex != lanes[l].queue_family) k++;
    if (k == qci_count)
      qci[qci_count++] =
          (VkDeviceQueueCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                    .queueFamilyIndex = lanes[l].queue_family,
                                    .pQueuePriorities = priorities};
    if (lanes[l].queue_index + 1 > qci[k].queueCount) qci[k].queueCount = lanes[l].queue_index + 1;
  }
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &d->f,
                            .queueCreateInfoCount = qci_count,
                            .pQueueCreateInfos = qci,
                            .enabledExtensionCount = d->extension_count,
                            .ppEnabledExtensionNames = d->extensions};
  TH_VK_CHECK(CreateDevice(d->physical, &dci, NULL, &d->device));

  d->desc.struct_size = sizeof d->desc;
  d->desc.instance = d->instance;
  d->desc.physical_device = d->physical;
  d->desc.device = d->device;
  d->desc.get_instance_proc_addr = (void *)d->gipa;
  d->desc.api_version = VK_API_VERSION_1_3;
  d->desc.extensions = d->extensions;
  d->desc.extension_count = d->extension_count;
  d->desc.features = &d->f;
  d->desc.enabled_features = NULL;
  return d;
}

const tandem_vulkan_device_t *th_vk_device_desc(th_vk_device_t *d) { return &d->desc; }

tandem_runtime_t *th_runtime_on_device(const tandem_vulkan_device_t *desc,
                                       tandem_budget_t *budget) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.vulkan_device = desc;
  o.budget = budget;
  tandem_runtime_t *rt = NULL;
  TH_ASSERT_OK(tandem_runtime_create(&o, &rt));
  assert_non_null(rt);
  return rt;
}

tandem_vulkan_handles_t th_vk_device_handles(th_vk_device_t *d) {
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  memset(&h, 0, sizeof h);
  h.instance = d->instance;
  h.physical_device = d->physical;
  h.device = d->device;
  h.get_instance_proc_addr = (void *)d->gipa;
  h.api_version = VK_API_VERSION_1_3;
  for (int l = 0; l < 3; l++) {
    h.lanes[l].queue_family = d->desc.lanes[l].queue_family;
    h.lanes[l].queue_index = d->desc.lanes[l].queue_index;
  }
  return h;
}

void th_vk_device_destroy(th_vk_device_t *d) {
  if (!d) return;
  PFN_vkGetDeviceProcAddr gdpa =
      (PFN_vkGetDeviceProcAddr)d->gipa(d->instance, "vkGetDeviceProcAddr");
  PFN_vkDeviceWaitIdle DeviceWaitIdle = (PFN_vkDeviceWaitIdle)gdpa(d->device, "vkDeviceWaitIdle");
  PFN_vkDestroyDevice DestroyDevice = (PFN_vkDestroyDevice)gdpa(d->device, "vkDestroyDevice");
  PFN_vkDestroyDebugUtilsMessengerEXT DestroyMessenger =
      (PFN_vkDestroyDebugUtilsMessengerEXT)d->gipa(d->instance, "vkDestroyDebugUtilsMessengerEXT");
  PFN_vkDestroyInstance DestroyInstance =
      (PFN_vkDestroyInstance)d->gipa(d->instance, "vkDestroyInstance");
  (void)DeviceWaitIdle(d->device);
  DestroyDevice(d->device, NULL);
  DestroyMessenger(d->instance, d->messenger, NULL);
  DestroyInstance(d->instance, NULL);
  dlclose(d->lib);
  free(d);
}

/*----------------------------------------------------- the entry-point table --*/

th_vk_fns_t th_vk_fns(const tandem_vulkan_handles_t *h) {
  PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)h->get_instance_proc_addr;
  VkInstance instance = (VkInstance)h->instance;
  PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa(instance, "vkGetDeviceProcAddr");
  assert_non_null(gdpa);
  th_vk_fns_t f = {.physical_device = (VkPhysicalDevice)h->physical_device,
                   .device = (VkDevice)h->device};
#define TH_I(name)                                   \
  f.name = (PFN_vk##name)gipa(instance, "vk" #name); \
  assert_non_null(f.name)
  TH_I(GetPhysicalDeviceMemoryProperties);
  TH_I(GetPhysicalDeviceQueueFamilyProperties);
#undef TH_I
#define TH_D(name)                                   \
  f.name = (PFN_vk##name)gdpa(f.device, "vk" #name); \
  assert_non_null(f.name)
  TH_D(CreateBuffer);
  TH_D(DestroyBuffer);
  TH_D(GetBufferMemoryRequirements);
  TH_D(AllocateMemory);
  TH_D(FreeMemory);
  TH_D(BindBufferMemory);
  TH_D(MapMemory);
  TH_D(UnmapMemory);
  TH_D(CreateShaderModule);
  TH_D(DestroyShaderModule);
  TH_D(CreateDescriptorSetLayout);
  TH_D(DestroyDescriptorSetLayout);
  TH_D(CreatePipelineLayout);
  TH_D(DestroyPipelineLayout);
  TH_D(CreateComputePipelines);
  TH_D(DestroyPipeline);
  TH_D(CreateDescriptorPool);
  TH_D(DestroyDescriptorPool);
  TH_D(AllocateDescriptorSets);
  TH_D(UpdateDescriptorSets);
  TH_D(CreateCommandPool);
  TH_D(DestroyCommandPool);
  TH_D(AllocateCommandBuffers);
  TH_D(FreeCommandBuffers);
  TH_D(BeginCommandBuffer);
  TH_D(EndCommandBuffer);
  TH_D(CmdCopyBuffer);
  TH_D(CmdFillBuffer);
  TH_D(CmdUpdateBuffer);
  TH_D(CmdPipelineBarrier2);
  TH_D(CmdBindPipeline);
  TH_D(CmdBindDescriptorSets);
  TH_D(CmdPushConstants);
  TH_D(CmdDispatch);
  TH_D(QueueSubmit);
  TH_D(QueueSubmit2);
  TH_D(CreateFence);
  TH_D(DestroyFence);
  TH_D(WaitForFences);
  TH_D(CreateSemaphore);
  TH_D(DestroySemaphore);
  TH_D(WaitSemaphores);
  TH_D(SignalSemaphore);
  TH_D(GetSemaphoreCounterValue);
#undef TH_D
  return f;
}

/*---------------------------------------------------- buffers and pipelines --*/

th_vk_buffer_t th_vk_buffer_create(const tandem_vulkan_handles_t *h, uint64_t size,
                                   uint32_t want_flags) {
  th_vk_fns_t f = th_vk_fns(h);
  uint32_t families[3], family_count = 0;
  for (int l = 0; l < 3; l++) {
    uint32_t k = 0;
    while (k < family_count && families[k] != h->lanes[l].queue_family) k++;
    if (k == family_count) families[family_count++] = h->lanes[l].queue_family;
  }
  VkBufferCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = size,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
      .sharingMode = family_count > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE,
      .queueFamilyIndexCount = family_count > 1 ? family_count : 0,
      .pQueueFamilyIndices = family_count > 1 ? families : NULL};
  th_vk_buffer_t b = {.device = h->device, .usage = ci.usage, .concurrent = family_count > 1};
  VkBuffer buffer;
  TH_VK_CHECK(f.CreateBuffer(f.device, &ci, NULL, &buffer));
  VkMemoryRequirements req;
  f.GetBufferMemoryRequirements(f.device, buffer, &req);
  VkPhysicalDeviceMemoryProperties mem;
  f.GetPhysicalDeviceMemoryProperties(f.physical_device, &mem);
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < mem.memoryTypeCount && type == UINT32_MAX; i++)
    if ((req.memoryTypeBits & (1u << i)) &&
        (mem.memoryTypes[i].propertyFlags & want_flags) == want_flags)
      type = i;
  assert_int_not_equal(type, UINT32_MAX);
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .allocationSize = req.size,
                             .memoryTypeIndex = type};
  VkDeviceMemory memory;
  TH_VK_CHECK(f.AllocateMemory(f.device, &ai, NULL, &memory));
  TH_VK_CHECK(f.BindBufferMemory(f.device, buffer, memory, 0));
  b.buffer = buffer;
  b.memory = memory;
  b.memory_type = type;
  b.memory_size = req.size;
  b.memory_flags = mem.memoryTypes[type].propertyFlags;
  return b;
}

tandem_vulkan_buffer_t th_vk_buffer_desc(const th_vk_buffer_t *b, uint64_t size,
                                         tandem_placement_t placement) {
  tandem_vulkan_buffer_t d;
  tandem_vulkan_buffer_init(&d);
  d.device = b->device;
  d.buffer = b->buffer;
  d.memory = b->memory;
  d.memory_offset = 0;
  d.memory_size = b->memory_size;
  d.memory_type = b->memory_type;
  d.usage = b->usage;
  d.concurrent = b->concurrent;
  d.size = size;
  d.placement = placement;
  return d;
}

void th_vk_buffer_access(const tandem_vulkan_handles_t *h, const th_vk_buffer_t *b, void *read,
                         const void *write, uint64_t bytes) {
  th_vk_fns_t f = th_vk_fns(h);
  void *p = NULL;
  TH_VK_CHECK(f.MapMemory(f.device, (VkDeviceMemory)b->memory, 0, VK_WHOLE_SIZE, 0, &p));
  if (write) memcpy(p, write, (size_t)bytes);
  if (read) memcpy(read, p, (size_t)bytes);
  f.UnmapMemory(f.device, (VkDeviceMemory)b->memory);
}

void th_vk_buffer_destroy(const tandem_vulkan_handles_t *h, th_vk_buffer_t *b) {
  th_vk_fns_t f = th_vk_fns(h);
  f.DestroyBuffer(f.device, (VkBuffer)b->buffer, NULL);
  f.FreeMemory(f.device, (VkDeviceMemory)b->memory, NULL);
  memset(b, 0, sizeof *b);
}

th_vk_pipeline_t th_vk_pipeline_create(const tandem_vulkan_handles_t *h, const uint32_t *spirv,
                                       size_t spirv_size, uint32_t binding_count,
                                       uint32_t push_bytes) {
  th_vk_fns_t f = th_vk_fns(h);
  th_vk_pipeline_t p = {.device = h->device};
  VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = spirv_size,
                                   .pCode = spirv};
  VkShaderModule module;
  TH_VK_CHECK(f.CreateShaderModule(f.device, &smci, NULL, &module));
  VkDescriptorSetLayoutBinding bindings[TANDEM_MAX_BINDINGS];
  for (uint32_t i = 0; i < binding_count; i++)
    bindings[i] =
        (VkDescriptorSetLayoutBinding){.binding = i,
                                       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                       .descriptorCount = 1,
                                       .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dci = {.sType =
                                             VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = binding_count,
                                         .pBindings = bindings};
  VkDescriptorSetLayout set_layout;
  TH_VK_CHECK(f.CreateDescriptorSetLayout(f.device, &dci, NULL, &set_layout));
  VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = push_bytes};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .setLayoutCount = 1,
                                    .pSetLayouts = &set_layout,
                                    .pushConstantRangeCount = push_bytes ? 1 : 0,
                                    .pPushConstantRanges = &range};
  VkPipelineLayout layout;
  TH_VK_CHECK(f.CreatePipelineLayout(f.device, &lci, NULL, &layout));
  VkComputePipelineCreateInfo pci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module,
                .pName = "main"},
      .layout = layout};
  VkPipeline pipeline;
  TH_VK_CHECK(f.CreateComputePipelines(f.device, VK_NULL_HANDLE, 1, &pci, NULL, &pipeline));
  p.module = module;
  p.set_layout = set_layout;
  p.layout = layout;
  p.pipeline = pipeline;
  return p;
}

void th_vk_pipeline_destroy(const tandem_vulkan_handles_t *h, th_vk_pipeline_t *p) {
  th_vk_fns_t f = th_vk_fns(h);
  f.DestroyPipeline(f.device, (VkPipeline)p->pipeline, NULL);
  f.DestroyPipelineLayout(f.device, (VkPipelineLayout)p->layout, NULL);
  f.DestroyDescriptorSetLayout(f.device, (VkDescriptorSetLayout)p->set_layout, NULL);
  f.DestroyShaderModule(f.device, (VkShaderModule)p->module, NULL);
  memset(p, 0, sizeof *p);
}

/*------------------------------------------------ commands and submission --*/

VkCommandPool th_vk_command_pool(const th_vk_fns_t *f, uint32_t queue_family) {
  VkCommandPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .queueFamilyIndex = queue_family};
  VkCommandPool pool;
  TH_VK_CHECK(f->CreateCommandPool(f->device, &ci, NULL, &pool));
  return pool;
}

VkCommandBuffer th_vk_begin(const th_vk_fns_t *f, VkCommandPool pool) {
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkCommandBuffer cb;
  TH_VK_CHECK(f->AllocateCommandBuffers(f->device, &ai, &cb));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  TH_VK_CHECK(f->BeginCommandBuffer(cb, &bi));
  return cb;
}

void th_vk_submit_wait(const th_vk_fns_t *f, tandem_runtime_t *runtime, tandem_lane_t lane,
                       VkQueue queue, VkCommandBuffer cb) {
  TH_VK_CHECK(f->EndCommandBuffer(cb));
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  TH_VK_CHECK(f->CreateFence(f->device, &fci, NULL, &fence));
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .commandBufferCount = 1,
                     .pCommandBuffers = &cb};
  tandem_runtime_queue_lock(runtime, lane);
  VkResult r = f->QueueSubmit(queue, 1, &si, fence);
  tandem_runtime_queue_unlock(runtime, lane);
  TH_VK_CHECK(r);
  TH_VK_CHECK(f->WaitForFences(f->device, 1, &fence, VK_TRUE, UINT64_MAX));
  f->DestroyFence(f->device, fence, NULL);
}

VkSemaphore th_vk_timeline(const th_vk_fns_t *f) {
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  VkSemaphore s;
  TH_VK_CHECK(f->CreateSemaphore(f->device, &ci, NULL, &s));
  return s;
}

void th_vk_timeline_signal(const th_vk_fns_t *f, VkSemaphore timeline, uint64_t value) {
  VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                              .semaphore = timeline,
                              .value = value};
  TH_VK_CHECK(f->SignalSemaphore(f->device, &si));
}
