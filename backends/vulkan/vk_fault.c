/* SPDX-License-Identifier: MIT */
/*
 * vk_fault.c — numbered fault injection (core/fault.h) for every fallible
 * Vulkan call tandem makes.
 *
 * Instance-level calls go through volk's global pointers: after volk loads
 * them, each VkResult-returning one tandem uses is swapped for a wrapper that
 * asks tandem__fault() and then calls the saved original (always, in testable
 * builds: they run only while opening). Device-level calls go through each
 * device's VolkDeviceTable: when injection is armed as the device is created,
 * its fallible entries are swapped too, and the original table is kept in a
 * small registry keyed by the loader's dispatch pointer, which a VkDevice and
 * its VkQueues and VkCommandBuffers share (the first word of every
 * dispatchable handle). Unarmed devices keep the driver's pointers: replay
 * pays nothing. An injected failure returns VK_ERROR_OUT_OF_HOST_MEMORY
 * without calling the driver, except: vkQueueSubmit2 and vkGetQueryPoolResults
 * return VK_ERROR_DEVICE_LOST without calling it; waits, signals and counter
 * reads are made and then answer VK_ERROR_DEVICE_LOST (a device lost after
 * the work ended: tandem must not free what the GPU still runs); that
 * includes vkDeviceWaitIdle and vkQueueWaitIdle, called only after loss and
 * while destroying the device (vk_device.c says what a failed one means).
 * vkResetDescriptorPool fails with VK_ERROR_OUT_OF_HOST_MEMORY without
 * calling the driver (it cannot fail per the spec; vk_descriptors.c says what
 * tandem does if a driver answers otherwise: the prepare fails). TANDEM_UNTESTABLE builds
 * compile none of it.
 */
#include <pthread.h>

#include "backends/vulkan/vk_internal.h"
#include "core/fault.h"

#ifndef TANDEM_UNTESTABLE

/*------------------------------------------------------ instance level --*/

#define TANDEM_VKF_GLOBAL(name, err, params, args)              \
  static PFN_##name tandem_vkf_real_##name;                     \
  static VkResult VKAPI_CALL tandem_vkf_##name params {         \
    if (tandem__fault(TANDEM__FAULT_VULKAN, #name)) return err; \
    return tandem_vkf_real_##name args;                         \
  }
#define TANDEM_VKF_SWAP(name)                \
  do {                                       \
    if (name && name != tandem_vkf_##name) { \
      tandem_vkf_real_##name = name;         \
      name = tandem_vkf_##name;              \
    }                                        \
  } while (0)

TANDEM_VKF_GLOBAL(vkCreateInstance, VK_ERROR_OUT_OF_HOST_MEMORY,
                  (const VkInstanceCreateInfo *ci, const VkAllocationCallbacks *a, VkInstance *out),
                  (ci, a, out))
TANDEM_VKF_GLOBAL(vkEnumerateInstanceLayerProperties, VK_ERROR_OUT_OF_HOST_MEMORY,
                  (uint32_t * n, VkLayerProperties *p), (n, p))
TANDEM_VKF_GLOBAL(vkEnumeratePhysicalDevices, VK_ERROR_OUT_OF_HOST_MEMORY,
                  (VkInstance i, uint32_t *n, VkPhysicalDevice *p), (i, n, p))
TANDEM_VKF_GLOBAL(vkEnumerateDeviceExtensionProperties, VK_ERROR_OUT_OF_HOST_MEMORY,
                  (VkPhysicalDevice pd, const char *layer, uint32_t *n, VkExtensionProperties *p),
                  (pd, layer, n, p))
TANDEM_VKF_GLOBAL(vkCreateDevice, VK_ERROR_OUT_OF_HOST_MEMORY,
                  (VkPhysicalDevice pd, const VkDeviceCreateInfo *ci,
                   const VkAllocationCallbacks *a, VkDevice *out),
                  (pd, ci, a, out))
TANDEM_VKF_GLOBAL(vkCreateDebugUtilsMessengerEXT, VK_ERROR_OUT_OF_HOST_MEMORY,
                  (VkInstance i, const VkDebugUtilsMessengerCreateInfoEXT *ci,
                   const VkAllocationCallbacks *a, VkDebugUtilsMessengerEXT *out),
                  (i, ci, a, out))
TANDEM_VKF_GLOBAL(vkGetPhysicalDeviceCalibrateableTimeDomainsEXT, VK_ERROR_OUT_OF_HOST_MEMORY,
                  (VkPhysicalDevice pd, uint32_t *n, VkTimeDomainEXT *d), (pd, n, d))

void tandem_vk_fault_wrap_loader(void) {
  TANDEM_VKF_SWAP(vkCreateInstance);
  TANDEM_VKF_SWAP(vkEnumerateInstanceLayerProperties);
}

void tandem_vk_fault_wrap_instance(void) {
  TANDEM_VKF_SWAP(vkEnumeratePhysicalDevices);
  TANDEM_VKF_SWAP(vkEnumerateDeviceExtensionProperties);
  TANDEM_VKF_SWAP(vkCreateDevice);
  TANDEM_VKF_SWAP(vkCreateDebugUtilsMessengerEXT);
  TANDEM_VKF_SWAP(vkGetPhysicalDeviceCalibrateableTimeDomainsEXT);
}

/*-------------------------------------------------------- device level --*/

#define TANDEM_VKF_MAX_DEVICES 32

static pthread_mutex_t tandem_vkf_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
  const void *key; /* the loader's dispatch pointer; NULL: free entry */
  struct VolkDeviceTable real;
} tandem_vkf_devices[TANDEM_VKF_MAX_DEVICES];

static const struct VolkDeviceTable *tandem_vkf_real(const void *handle) {
  const void *key = *(const void *const *)handle;
  const struct VolkDeviceTable *t = NULL;
  pthread_mutex_lock(&tandem_vkf_mutex);
  for (int i = 0; i < TANDEM_VKF_MAX_DEVICES && !t; i++)
    if (tandem_vkf_devices[i].key == key) t = &tandem_vkf_devices[i].real;
  pthread_mutex_unlock(&tandem_vkf_mutex);
  return t; /* registered before the table was handed out, kept until destroy */
}

#define TANDEM_VKF_DEVICE(name, err, first, params, args)       \
  static VkResult VKAPI_CALL tandem_vkf_##name params {         \
    if (tandem__fault(TANDEM__FAULT_VULKAN, #name)) return err; \
    return tandem_vkf_real(first)->name args;                   \
  }
/* A device lost while waiting, signalling or reading back: the call is made
 * (work in flight still finishes, as on a device that is lost for real and
 * then idles), and the answer is VK_ERROR_DEVICE_LOST. */
#define TANDEM_VKF_DEVICE_LOST_AFTER(name, first, params, args) \
  static VkResult VKAPI_CALL tandem_vkf_##name params {         \
    bool lost = tandem__fault(TANDEM__FAULT_VULKAN, #name);     \
    VkResult r = tandem_vkf_real(first)->name args;             \
    return lost ? VK_ERROR_DEVICE_LOST : r;                     \
  }

#define OOM VK_ERROR_OUT_OF_HOST_MEMORY
#define LOST VK_ERROR_DEVICE_LOST
TANDEM_VKF_DEVICE(vkQueueSubmit2, LOST, q,
                  (VkQueue q, uint32_t n, const VkSubmitInfo2 *s, VkFence f), (q, n, s, f))
TANDEM_VKF_DEVICE_LOST_AFTER(vkWaitSemaphores, d,
                             (VkDevice d, const VkSemaphoreWaitInfo *w, uint64_t t), (d, w, t))
TANDEM_VKF_DEVICE_LOST_AFTER(vkSignalSemaphore, d, (VkDevice d, const VkSemaphoreSignalInfo *s),
                             (d, s))
TANDEM_VKF_DEVICE_LOST_AFTER(vkGetSemaphoreCounterValue, d,
                             (VkDevice d, VkSemaphore s, uint64_t *v), (d, s, v))
TANDEM_VKF_DEVICE_LOST_AFTER(vkWaitForFences, d,
                             (VkDevice d, uint32_t n, const VkFence *f, VkBool32 all, uint64_t t),
                             (d, n, f, all, t))
TANDEM_VKF_DEVICE_LOST_AFTER(vkQueueWaitIdle, q, (VkQueue q), (q))
TANDEM_VKF_DEVICE_LOST_AFTER(vkDeviceWaitIdle, d, (VkDevice d), (d))
TANDEM_VKF_DEVICE(vkResetDescriptorPool, OOM, d,
                  (VkDevice d, VkDescriptorPool p, VkDescriptorPoolResetFlags f), (d, p, f))
TANDEM_VKF_DEVICE(vkGetQueryPoolResults, LOST, d,
                  (VkDevice d, VkQueryPool p, uint32_t first, uint32_t n, size_t size, void *data,
                   VkDeviceSize stride, VkQueryResultFlags flags),
                  (d, p, first, n, size, data, stride, flags))
TANDEM_VKF_DEVICE(vkGetCalibratedTimestampsEXT, OOM, d,
                  (VkDevice d, uint32_t n, const VkCalibratedTimestampInfoEXT *i, uint64_t *ts,
                   uint64_t *dev),
                  (d, n, i, ts, dev))
TANDEM_VKF_DEVICE(vkBeginCommandBuffer, OOM, c,
                  (VkCommandBuffer c, const VkCommandBufferBeginInfo *i), (c, i))
TANDEM_VKF_DEVICE(vkEndCommandBuffer, OOM, c, (VkCommandBuffer c), (c))
TANDEM_VKF_DEVICE(vkAllocateCommandBuffers, OOM, d,
                  (VkDevice d, const VkCommandBufferAllocateInfo *i, VkCommandBuffer *out),
                  (d, i, out))
TANDEM_VKF_DEVICE(vkCreateCommandPool, OOM, d,
                  (VkDevice d, const VkCommandPoolCreateInfo *i, const VkAllocationCallbacks *a,
                   VkCommandPool *out),
                  (d, i, a, out))
TANDEM_VKF_DEVICE(vkCreateSemaphore, OOM, d,
                  (VkDevice d, const VkSemaphoreCreateInfo *i, const VkAllocationCallbacks *a,
                   VkSemaphore *out),
                  (d, i, a, out))
TANDEM_VKF_DEVICE(vkCreateFence, OOM, d,
                  (VkDevice d, const VkFenceCreateInfo *i, const VkAllocationCallbacks *a,
                   VkFence *out),
                  (d, i, a, out))
TANDEM_VKF_DEVICE(vkCreateBuffer, OOM, d,
                  (VkDevice d, const VkBufferCreateInfo *i, const VkAllocationCallbacks *a,
                   VkBuffer *out),
                  (d, i, a, out))
TANDEM_VKF_DEVICE(vkAllocateMemory, OOM, d,
                  (VkDevice d, const VkMemoryAllocateInfo *i, const VkAllocationCallbacks *a,
                   VkDeviceMemory *out),
                  (d, i, a, out))
TANDEM_VKF_DEVICE(vkBindBufferMemory, OOM, d,
                  (VkDevice d, VkBuffer b, VkDeviceMemory m, VkDeviceSize o), (d, b, m, o))
TANDEM_VKF_DEVICE(vkMapMemory, OOM, d,
                  (VkDevice d, VkDeviceMemory m, VkDeviceSize o, VkDeviceSize s, VkMemoryMapFlags f,
                   void **out),
                  (d, m, o, s, f, out))
TANDEM_VKF_DEVICE(vkGetMemoryHostPointerPropertiesEXT, OOM, d,
                  (VkDevice d, VkExternalMemoryHandleTypeFlagBits t, const void *h,
                   VkMemoryHostPointerPropertiesEXT *out),
                  (d, t, h, out))
TANDEM_VKF_DEVICE(vkGetMemoryFdPropertiesKHR, OOM, d,
                  (VkDevice d, VkExternalMemoryHandleTypeFlagBits t, int fd,
                   VkMemoryFdPropertiesKHR *out),
                  (d, t, fd, out))
TANDEM_VKF_DEVICE(vkGetMemoryFdKHR, OOM, d, (VkDevice d, const VkMemoryGetFdInfoKHR *i, int *fd),
                  (d, i, fd))
TANDEM_VKF_DEVICE(vkGetSemaphoreFdKHR, OOM, d,
                  (VkDevice d, const VkSemaphoreGetFdInfoKHR *i, int *fd), (d, i, fd))
TANDEM_VKF_DEVICE(vkImportSemaphoreFdKHR, OOM, d, (VkDevice d, const VkImportSemaphoreFdInfoKHR *i),
                  (d, i))
TANDEM_VKF_DEVICE(vkCreateShaderModule, OOM, d,
                  (VkDevice d, const VkShaderModuleCreateInfo *i, const VkAllocationCallbacks *a,
                   VkShaderModule *out),
                  (d, i, a, out))
TANDEM_VKF_DEVICE(vkCreateDescriptorSetLayout, OOM, d,
                  (VkDevice d, const VkDescriptorSetLayoutCreateInfo *i,
                   const VkAllocationCallbacks *a, VkDescriptorSetLayout *out),
                  (d, i, a, out))
TANDEM_VKF_DEVICE(vkCreatePipelineLayout, OOM, d,
                  (VkDevice d, const VkPipelineLayoutCreateInfo *i, const VkAllocationCallbacks *a,
                   VkPipelineLayout *out),
                  (d, i, a, out))
TANDEM_VKF_DEVICE(vkCreateComputePipelines, OOM, d,
                  (VkDevice d, VkPipelineCache c, uint32_t n, const VkComputePipelineCreateInfo *i,
                   const VkAllocationCallbacks *a, VkPipeline *out),
                  (d, c, n, i, a, out))
TANDEM_VKF_DEVICE(vkCreateDescriptorPool, OOM, d,
                  (VkDevice d, const VkDescriptorPoolCreateInfo *i, const VkAllocationCallbacks *a,
                   VkDescriptorPool *out),
                  (d, i, a, out))
TANDEM_VKF_DEVICE(vkAllocateDescriptorSets, OOM, d,
                  (VkDevice d, const VkDescriptorSetAllocateInfo *i, VkDescriptorSet *out),
                  (d, i, out))
TANDEM_VKF_DEVICE(vkCreateQueryPool, OOM, d,
                  (VkDevice d, const VkQueryPoolCreateInfo *i, const VkAllocationCallbacks *a,
                   VkQueryPool *out),
                  (d, i, a, out))
#undef OOM
#undef LOST

#define TANDEM_VKF_TABLE(name) \
  if (t->name) t->name = tandem_vkf_##name

void tandem_vk_fault_wrap_device(struct VolkDeviceTable *t, VkDevice device) {
  if (!tandem__fault_armed()) return;
  const void *key = *(const void *const *)device;
  bool registered = false;
  pthread_mutex_lock(&tandem_vkf_mutex);
  for (int i = 0; i < TANDEM_VKF_MAX_DEVICES && !registered; i++) {
    if (tandem_vkf_devices[i].key) continue;
    tandem_vkf_devices[i].key = key;
    tandem_vkf_devices[i].real = *t;
    registered = true;
  }
  pthread_mutex_unlock(&tandem_vkf_mutex);
  if (!registered) return; /* too many armed devices at once: this one runs unwrapped */
  TANDEM_VKF_TABLE(vkQueueSubmit2);
  TANDEM_VKF_TABLE(vkWaitSemaphores);
  TANDEM_VKF_TABLE(vkSignalSemaphore);
  TANDEM_VKF_TABLE(vkGetSemaphoreCounterValue);
  TANDEM_VKF_TABLE(vkWaitForFences);
  TANDEM_VKF_TABLE(vkQueueWaitIdle);
  TANDEM_VKF_TABLE(vkDeviceWaitIdle);
  TANDEM_VKF_TABLE(vkResetDescriptorPool);
  TANDEM_VKF_TABLE(vkGetQueryPoolResults);
  TANDEM_VKF_TABLE(vkGetCalibratedTimestampsEXT);
  TANDEM_VKF_TABLE(vkBeginCommandBuffer);
  TANDEM_VKF_TABLE(vkEndCommandBuffer);
  TANDEM_VKF_TABLE(vkAllocateCommandBuffers);
  TANDEM_VKF_TABLE(vkCreateCommandPool);
  TANDEM_VKF_TABLE(vkCreateSemaphore);
  TANDEM_VKF_TABLE(vkCreateFence);
  TANDEM_VKF_TABLE(vkCreateBuffer);
  TANDEM_VKF_TABLE(vkAllocateMemory);
  TANDEM_VKF_TABLE(vkBindBufferMemory);
  TANDEM_VKF_TABLE(vkMapMemory);
  TANDEM_VKF_TABLE(vkGetMemoryHostPointerPropertiesEXT);
  TANDEM_VKF_TABLE(vkGetMemoryFdPropertiesKHR);
  TANDEM_VKF_TABLE(vkGetMemoryFdKHR);
  TANDEM_VKF_TABLE(vkGetSemaphoreFdKHR);
  TANDEM_VKF_TABLE(vkImportSemaphoreFdKHR);
  TANDEM_VKF_TABLE(vkCreateShaderModule);
  TANDEM_VKF_TABLE(vkCreateDescriptorSetLayout);
  TANDEM_VKF_TABLE(vkCreatePipelineLayout);
  TANDEM_VKF_TABLE(vkCreateComputePipelines);
  TANDEM_VKF_TABLE(vkCreateDescriptorPool);
  TANDEM_VKF_TABLE(vkAllocateDescriptorSets);
  TANDEM_VKF_TABLE(vkCreateQueryPool);
}

void tandem_vk_fault_forget_device(VkDevice device) {
  const void *key = *(const void *const *)device;
  pthread_mutex_lock(&tandem_vkf_mutex);
  for (int i = 0; i < TANDEM_VKF_MAX_DEVICES; i++)
    if (tandem_vkf_devices[i].key == key) tandem_vkf_devices[i].key = NULL;
  pthread_mutex_unlock(&tandem_vkf_mutex);
}

#else /* TANDEM_UNTESTABLE */

void tandem_vk_fault_wrap_loader(void) {}
void tandem_vk_fault_wrap_instance(void) {}
void tandem_vk_fault_wrap_device(struct VolkDeviceTable *t, VkDevice device) {
  (void)t;
  (void)device;
}
void tandem_vk_fault_forget_device(VkDevice device) { (void)device; }

#endif
