/* SPDX-License-Identifier: MIT */
/*
 * vk_interop.c — timeline semaphores across VkDevices and processes
 * (VK_KHR_external_semaphore_fd, opaque fds): an exportable mirror of each
 * lane's timeline when the runtime asks (option export_timelines; signalled
 * with the same values, see tandem_vk_lane_t.mirror), its export,
 * imported timelines that the host waits on, and user lanes (lane_bind): an
 * imported timeline the queues wait on, or a native session's own timeline.
 *
 * Buffer memory export and import live in vk_buffer.c, beside the buffer
 * record they need. Imported timelines are only waited on: signalling a
 * lane's timeline from outside would break I2 (core/runtime_int.h).
 */
#include <assert.h>
#include <stdlib.h>

#include "backends/vulkan/vk_internal.h"

void tandem_vk_timeline_caps(VkPhysicalDevice physical, bool *exportable, bool *importable) {
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkPhysicalDeviceExternalSemaphoreInfo info = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
      .pNext = &type,
      .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkExternalSemaphoreProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
  vkGetPhysicalDeviceExternalSemaphoreProperties(physical, &info, &props);
  *exportable = props.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT;
  *importable = props.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT;
}

tandem_status_t tandem_vk_timeline_create(tandem_vk_gpu_t *g, bool exportable, VkSemaphore *out) {
  *out = VK_NULL_HANDLE;
  VkExportSemaphoreCreateInfo exp = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                     .handleTypes =
                                         VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .pNext = exportable ? &exp : NULL,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
                                    .initialValue = 0};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  VkResult r = g->vk.vkCreateSemaphore(g->device, &sci, NULL, out);
  if (r < 0) {
    *out = VK_NULL_HANDLE;
    return tandem_vk_fail(r, "vkCreateSemaphore (timeline)", __FILE__, __LINE__);
  }
  return TANDEM_OK;
}

tandem_status_t tandem_vk_timeline_export(tandem__gpu_t *base, tandem_lane_t lane, int *out_fd) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  VkSemaphoreGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                .semaphore = g->lanes[lane].mirror,
                                .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  int fd = -1;
  VkResult r = g->vk.vkGetSemaphoreFdKHR(g->device, &gi, &fd);
  if (r < 0) return tandem_vk_fail(r, "vkGetSemaphoreFdKHR", __FILE__, __LINE__);
  *out_fd = fd;
  return TANDEM_OK;
}

tandem_status_t tandem_vk_timeline_import(tandem__gpu_t *base, int fd, void **out_native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  /* Opaque-fd payloads import into a semaphore of the same type: a timeline.
   * Permanent import (flags 0): the semaphore is the exported one from now. */
  VkSemaphore sem;
  TANDEM_RETURN_IF_ERROR(tandem_vk_timeline_create(g, false, &sem));
  VkImportSemaphoreFdInfoKHR ii = {.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR,
                                   .semaphore = sem,
                                   .flags = 0,
                                   .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT,
                                   .fd = fd};
  VkResult r = g->vk.vkImportSemaphoreFdKHR(g->device, &ii);
  if (r < 0) {
    /* Not consumed: the fd stays the caller's. */
    g->vk.vkDestroySemaphore(g->device, sem, NULL);
    if (r == VK_ERROR_INVALID_EXTERNAL_HANDLE)
      return TANDEM_FAIL(TANDEM_ERROR_INTERNAL,
                         "vkImportSemaphoreFdKHR refused fd %d (VK_ERROR_INVALID_EXTERNAL_HANDLE): "
                         "not an opaque-fd timeline semaphore of this device and driver",
                         fd);
    return tandem_vk_fail(r, "vkImportSemaphoreFdKHR", __FILE__, __LINE__);
  }
  *out_native = (void *)sem;
  return TANDEM_OK;
}

tandem_status_t tandem_vk_timeline_wait(tandem__gpu_t *base, void *native, uint64_t value,
                                        uint64_t timeout_ns) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  VkSemaphore sem = (VkSemaphore)native;
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &sem,
                            .pValues = &value};
  VkResult r = g->vk.vkWaitSemaphores(g->device, &wi, timeout_ns);
  if (r == VK_TIMEOUT) return TANDEM_ERROR_TIMEOUT;
  if (r < 0) return tandem_vk_fail(r, "vkWaitSemaphores (imported timeline)", __FILE__, __LINE__);
  return TANDEM_OK;
}

void tandem_vk_timeline_destroy(tandem__gpu_t *base, void *native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  if (native) g->vk.vkDestroySemaphore(g->device, (VkSemaphore)native, NULL);
}

tandem_status_t tandem_vk_lane_bind(tandem__gpu_t *base, tandem_lane_t lane, void *imported) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  assert(lane >= TANDEM_LANE_COUNT && lane < TANDEM__MAX_LANES && !g->lanes[lane].timeline);
  VkSemaphore sem = (VkSemaphore)imported;
  /* A session's timeline: a plain one, signalled from the host like the NPU
   * lane's (tandem_vk_signal), waited on by the regions ordered after it. */
  if (!sem) TANDEM_RETURN_IF_ERROR(tandem_vk_timeline_create(g, false, &sem));
  pthread_mutex_lock(&g->signal_mutex);
  g->lanes[lane].timeline = sem;
  g->lanes[lane].owned = !imported;
  pthread_mutex_unlock(&g->signal_mutex);
  return TANDEM_OK;
}

void tandem_vk_lane_unbind(tandem__gpu_t *base, tandem_lane_t lane) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  assert(lane >= TANDEM_LANE_COUNT && lane < TANDEM__MAX_LANES && g->lanes[lane].timeline);
  pthread_mutex_lock(&g->signal_mutex);
  VkSemaphore sem = g->lanes[lane].timeline;
  bool owned = g->lanes[lane].owned;
  g->lanes[lane].timeline = VK_NULL_HANDLE;
  g->lanes[lane].owned = false;
  /* Inside the lock: a query that read the handle has finished with it. */
  if (owned) g->vk.vkDestroySemaphore(g->device, sem, NULL);
  pthread_mutex_unlock(&g->signal_mutex);
}
