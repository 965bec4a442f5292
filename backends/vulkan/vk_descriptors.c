/* SPDX-License-Identifier: MIT */
/*
 * vk_descriptors.c — descriptor pools kept from one prepared program to the
 * next.
 *
 * A program draws all its descriptor sets (one per dispatch with bindings,
 * per slot) from one VkDescriptorPool. Making a pool and writing its sets
 * costs the driver fresh memory: on the H200 about 890 bytes per set, first
 * touched at 1.6 µs per 4 KiB page in that virtual machine, and past about
 * 20 000 sets the NVIDIA driver hands a destroyed pool's memory back and
 * touches new memory for the next (bench/NOTES.md, "prepare: 100 000 nodes
 * and fresh memory": 100 000 sets take 64.6 ms in a new pool, 21.7 ms in a
 * reset one). So a destroyed program's pool is kept, the
 * TANDEM_VK_KEPT_POOLS largest of them, and a new program whose sets fit
 * takes the smallest that fits and resets it (vkResetDescriptorPool, which
 * keeps the pool's memory). tandem_runtime_trim and the device's destruction
 * give kept pools back.
 *
 * Invariants: a kept pool has no set in use, since programs are destroyed
 * only when no slot of theirs is in flight (core/backend.h), so it can be
 * reset at any time; g->kept is guarded by g->kept_mutex; a pool is either
 * kept or owned by exactly one program. vkResetDescriptorPool's only result
 * is VK_SUCCESS; a driver that answers anything else (a driver bug, or an
 * injected fault: it is a fault-injection site) fails the prepare with that
 * answer, naming the call, and the pool goes back to the kept ones: no set
 * of it is in use, and the next take resets it again before any set is
 * allocated from it. Nothing is allocated from a pool whose reset failed.
 */
#include <assert.h>

#include "backends/vulkan/vk_internal.h"

tandem_status_t tandem_vk_descriptor_pool_take(tandem_vk_gpu_t *g, uint32_t sets,
                                               uint32_t descriptors,
                                               tandem_vk_descriptor_pool_t *out) {
  *out = (tandem_vk_descriptor_pool_t){VK_NULL_HANDLE, 0, 0};
  pthread_mutex_lock(&g->kept_mutex);
  int best = -1;
  for (int i = 0; i < TANDEM_VK_KEPT_POOLS; i++) {
    const tandem_vk_descriptor_pool_t *k = &g->kept[i];
    if (k->pool && k->sets >= sets && k->descriptors >= descriptors &&
        (best < 0 || k->sets < g->kept[best].sets))
      best = i;
  }
  if (best >= 0) {
    *out = g->kept[best];
    g->kept[best] = (tandem_vk_descriptor_pool_t){VK_NULL_HANDLE, 0, 0};
  }
  pthread_mutex_unlock(&g->kept_mutex);
  if (out->pool) {
    assert(out->sets >= sets && out->descriptors >= descriptors);
    VkResult r = g->vk.vkResetDescriptorPool(g->device, out->pool, 0);
    if (r == VK_SUCCESS) return TANDEM_OK;
    /* Kept again, unused (every later take resets it first); the prepare
     * fails with the driver's answer. */
    tandem_vk_descriptor_pool_give(g, *out);
    *out = (tandem_vk_descriptor_pool_t){VK_NULL_HANDLE, 0, 0};
    return tandem_vk_fail(r, "vkResetDescriptorPool", __FILE__, __LINE__);
  }
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = sets,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
  VkResult r = g->vk.vkCreateDescriptorPool(g->device, &dpci, NULL, &out->pool);
  if (r < 0) {
    out->pool = VK_NULL_HANDLE;
    return tandem_vk_fail(r, "vkCreateDescriptorPool", __FILE__, __LINE__);
  }
  out->sets = sets;
  out->descriptors = descriptors;
  return TANDEM_OK;
}

void tandem_vk_descriptor_pool_give(tandem_vk_gpu_t *g, tandem_vk_descriptor_pool_t pool) {
  if (!pool.pool) return;
  pthread_mutex_lock(&g->kept_mutex);
  /* An empty place, else the smallest kept pool if |pool| is larger. */
  int at = -1;
  for (int i = 0; i < TANDEM_VK_KEPT_POOLS; i++) {
    if (!g->kept[i].pool) {
      at = i;
      break;
    }
    if (g->kept[i].sets < pool.sets && (at < 0 || g->kept[i].sets < g->kept[at].sets)) at = i;
  }
  tandem_vk_descriptor_pool_t evicted = pool;
  if (at >= 0) {
    evicted = g->kept[at];
    g->kept[at] = pool;
  }
  pthread_mutex_unlock(&g->kept_mutex);
  if (evicted.pool) g->vk.vkDestroyDescriptorPool(g->device, evicted.pool, NULL);
}

void tandem_vk_descriptor_pools_trim(tandem__gpu_t *base) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_descriptor_pool_t kept[TANDEM_VK_KEPT_POOLS];
  pthread_mutex_lock(&g->kept_mutex);
  for (int i = 0; i < TANDEM_VK_KEPT_POOLS; i++) {
    kept[i] = g->kept[i];
    g->kept[i] = (tandem_vk_descriptor_pool_t){VK_NULL_HANDLE, 0, 0};
  }
  pthread_mutex_unlock(&g->kept_mutex);
  for (int i = 0; i < TANDEM_VK_KEPT_POOLS; i++)
    if (kept[i].pool) g->vk.vkDestroyDescriptorPool(g->device, kept[i].pool, NULL);
}
