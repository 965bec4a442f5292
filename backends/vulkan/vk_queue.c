/* SPDX-License-Identifier: MIT */
/*
 * vk_queue.c — helpers over the lanes' VkQueues, below everything that
 * submits: waiting for tandem's queues to be idle, the application's queue
 * lock (tandem_runtime_queue_lock), and one-off command buffers run and
 * waited for (zero-filling new memory, off the replay path). Each VkQueue is
 * externally synchronised: every use here holds its tandem_vk_queue's mutex.
 */
#include <assert.h>

#include "backends/vulkan/vk_internal.h"

/* Waits until tandem's queues are idle; the caller holds every queue's lock.
 * A failed wait (DEVICE_LOST, or an out-of-memory answer) means the device is
 * lost. There is no caller left to tell: idle runs only once the runtime is
 * lost already (core/lost.c), and destroy only when nothing of the runtime is
 * left to answer DEVICE_LOST. So a failed wait is followed as the lost path
 * goes: a lost device's waits return at once and the work on it finishes,
 * and its objects may then be destroyed (Vulkan's "Lost Device"). Memory the
 * GPU may still use is never freed before a wait was made on every queue:
 * on tandem's own device a failed vkDeviceWaitIdle is followed by a
 * vkQueueWaitIdle of each queue, for an answer that did not come from the
 * device stopping. Returns whether every wait succeeded. */
static bool tandem_vk_queues_wait_idle_locked(tandem_vk_gpu_t *g) {
  if (!g->borrowed && g->vk.vkDeviceWaitIdle(g->device) == VK_SUCCESS) return true;
  bool ok = g->borrowed; /* on tandem's own device the device wait failed */
  for (uint32_t k = 0; k < g->queue_count; k++)
    if (g->vk.vkQueueWaitIdle(g->queues[k].queue) != VK_SUCCESS) ok = false;
  return ok;
}

void tandem_vk_gpu_idle(tandem__gpu_t *base) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  /* vkDeviceWaitIdle needs every queue externally synchronized. On the
   * application's device tandem holds the locks of its own queues only, so
   * it waits for those one by one. The runtime is lost already: a failed
   * wait changes nothing more. */
  for (uint32_t k = 0; k < g->queue_count; k++) pthread_mutex_lock(&g->queues[k].mutex);
  (void)tandem_vk_queues_wait_idle_locked(g);
  for (uint32_t k = g->queue_count; k-- > 0;) pthread_mutex_unlock(&g->queues[k].mutex);
}

void tandem_vk_queue_lock(tandem__gpu_t *base, tandem_lane_t lane, bool lock) {
  tandem_vk_queue_t *q = tandem_vk_gpu_cast(base)->lanes[lane].queue;
  uintptr_t self = (uintptr_t)pthread_self();
  if (lock) {
    pthread_mutex_lock(&q->mutex);
    atomic_store(&q->app_owner, self);
    q->app_depth++;
  } else if (atomic_load(&q->app_owner) == self) {
    assert(q->app_depth > 0);
    if (--q->app_depth == 0) atomic_store(&q->app_owner, 0);
    pthread_mutex_unlock(&q->mutex);
  }
}

tandem_status_t tandem_vk_run_once(tandem_vk_gpu_t *g, tandem_lane_t lane_id,
                                   void (*record)(tandem_vk_gpu_t *g, VkCommandBuffer cb,
                                                  void *ctx),
                                   void *ctx) {
  tandem_vk_lane_t *lane = &g->lanes[lane_id];
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  const char *step = "vkAllocateCommandBuffers";
  pthread_mutex_lock(&lane->pool_mutex[0]);
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = lane->pools[0],
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkResult r = g->vk.vkAllocateCommandBuffers(g->device, &ai, &cb);
  if (r >= 0) {
    step = "vkBeginCommandBuffer";
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    r = g->vk.vkBeginCommandBuffer(cb, &bi);
    if (r >= 0) {
      record(g, cb, ctx);
      step = "vkEndCommandBuffer";
      r = g->vk.vkEndCommandBuffer(cb);
    }
  } else {
    cb = VK_NULL_HANDLE;
  }
  pthread_mutex_unlock(&lane->pool_mutex[0]);
  if (r >= 0) {
    step = "vkCreateFence";
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = g->vk.vkCreateFence(g->device, &fci, NULL, &fence);
  }
  if (r >= 0) {
    step = "vkQueueSubmit2";
    VkCommandBufferSubmitInfo ci = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                    .commandBuffer = cb};
    VkSubmitInfo2 si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                        .commandBufferInfoCount = 1,
                        .pCommandBufferInfos = &ci};
    pthread_mutex_lock(&lane->queue->mutex);
    r = g->vk.vkQueueSubmit2(lane->queue->queue, 1, &si, fence);
    pthread_mutex_unlock(&lane->queue->mutex);
  }
  if (r >= 0) {
    step = "vkWaitForFences";
    r = g->vk.vkWaitForFences(g->device, 1, &fence, VK_TRUE, UINT64_MAX);
  }
  if (fence) g->vk.vkDestroyFence(g->device, fence, NULL);
  if (cb) {
    pthread_mutex_lock(&lane->pool_mutex[0]);
    g->vk.vkFreeCommandBuffers(g->device, lane->pools[0], 1, &cb);
    pthread_mutex_unlock(&lane->pool_mutex[0]);
  }
  if (r < 0) return tandem_vk_fail(r, step, __FILE__, __LINE__);
  return TANDEM_OK;
}
