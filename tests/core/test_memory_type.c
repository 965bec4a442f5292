/* SPDX-License-Identifier: MIT */
/*
 * test_memory_type.c — the memory-type rules of backends/vulkan/vk_buffer.c
 * (tandem_vk_memory_type) on memory tables written out by hand: an NVIDIA
 * discrete GPU with and without resizable BAR, lavapipe, an integrated GPU,
 * and tables built to catch a wrong order of preferences (a device-local
 * cached type listed before plain host memory). The rule that matters most:
 * a HOST_VISIBLE buffer, which the host may read back, never lands in
 * DEVICE_LOCAL|HOST_VISIBLE (BAR) memory while a coherent host-visible type
 * outside VRAM exists. Links the library's objects to reach the internal
 * function; no GPU. Label "core".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/vulkan/vk_internal.h"

enum {
  DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
  HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
  HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
  CACHED = VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
};

/* A table of |n| types with |flags| and |heaps| (heap i device-local when
 * heap_dl has bit i). */
static VkPhysicalDeviceMemoryProperties table(uint32_t n, const uint32_t *flags,
                                              const uint32_t *heaps, uint32_t heap_dl) {
  VkPhysicalDeviceMemoryProperties m;
  memset(&m, 0, sizeof m);
  m.memoryTypeCount = n;
  for (uint32_t i = 0; i < n; i++) {
    m.memoryTypes[i].propertyFlags = flags[i];
    m.memoryTypes[i].heapIndex = heaps[i];
    if (heaps[i] + 1 > m.memoryHeapCount) m.memoryHeapCount = heaps[i] + 1;
  }
  for (uint32_t h = 0; h < m.memoryHeapCount; h++) {
    m.memoryHeaps[h].size = 1ull << 30;
    m.memoryHeaps[h].flags = (heap_dl >> h) & 1 ? VK_MEMORY_HEAP_DEVICE_LOCAL_BIT : 0;
  }
  return m;
}

#define ALL 0xFFFFFFFFu

/* NVIDIA's Linux driver on a discrete GPU without resizable BAR: a 256 MiB
 * BAR heap (2) beside VRAM (0) and system memory (1). */
static void test_nvidia_small_bar(void **state) {
  (void)state;
  const uint32_t f[] = {0, DL, DL, HV | HC, HV | HC | CACHED, DL | HV | HC};
  const uint32_t h[] = {1, 0, 0, 1, 1, 2};
  VkPhysicalDeviceMemoryProperties m = table(6, f, h, 0x5);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_HOST), 4);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_GPU_LOCAL), 1);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_EXPORT), 1);
  /* A buffer kind that may not use the cached type falls back to plain host
   * memory, still not the BAR. */
  assert_int_equal(tandem_vk_memory_type(&m, ALL & ~(1u << 4), TANDEM_VK_MEMORY_HOST), 3);
  /* Host-pointer import: the driver offers the system-memory types. */
  assert_int_equal(tandem_vk_memory_type(&m, (1u << 3) | (1u << 4), TANDEM_VK_MEMORY_HOST_IMPORT),
                   4);
}

/* The same driver with resizable BAR: VRAM itself is host-visible. */
static void test_nvidia_rebar(void **state) {
  (void)state;
  const uint32_t f[] = {0, DL, DL | HV | HC, HV | HC, HV | HC | CACHED};
  const uint32_t h[] = {1, 0, 0, 1, 1};
  VkPhysicalDeviceMemoryProperties m = table(5, f, h, 0x1);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_HOST), 4);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_GPU_LOCAL), 1);
  /* Only the BAR type and VRAM allowed, no system memory: nothing else is
   * coherent and host-visible, so the BAR it is (the documented fallback). */
  assert_int_equal(tandem_vk_memory_type(&m, (1u << 1) | (1u << 2), TANDEM_VK_MEMORY_HOST), 2);
}

/* A device-local cached type listed first must not beat plain, uncached
 * host memory: not being device-local outranks being cached. */
static void test_not_device_local_outranks_cached(void **state) {
  (void)state;
  const uint32_t f[] = {DL, DL | HV | HC | CACHED, HV | HC};
  const uint32_t h[] = {0, 0, 1};
  VkPhysicalDeviceMemoryProperties m = table(3, f, h, 0x1);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_HOST), 2);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_GPU_LOCAL), 0);
}

/* Non-coherent memory is never HOST_VISIBLE (tandem flushes nothing). */
static void test_coherent_required(void **state) {
  (void)state;
  const uint32_t f[] = {DL, HV | CACHED, DL | HV | HC};
  const uint32_t h[] = {0, 1, 0};
  VkPhysicalDeviceMemoryProperties m = table(3, f, h, 0x1);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_HOST), 2);
  /* An import prefers coherent memory too. */
  assert_int_equal(tandem_vk_memory_type(&m, (1u << 1) | (1u << 2), TANDEM_VK_MEMORY_HOST_IMPORT),
                   2);
}

/* lavapipe: one type, everything at once. */
static void test_lavapipe(void **state) {
  (void)state;
  const uint32_t f[] = {DL | HV | HC | CACHED};
  const uint32_t h[] = {0};
  VkPhysicalDeviceMemoryProperties m = table(1, f, h, 0x1);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_HOST), 0);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_GPU_LOCAL), 0);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_HOST_IMPORT), 0);
}

/* An integrated GPU (RADV on an APU): GTT memory outside the carve-out wins
 * for HOST_VISIBLE, the carve-out for GPU_LOCAL. */
static void test_integrated(void **state) {
  (void)state;
  const uint32_t f[] = {DL, DL | HV | HC, HV | HC, HV | HC | CACHED};
  const uint32_t h[] = {0, 0, 1, 1};
  VkPhysicalDeviceMemoryProperties m = table(4, f, h, 0x1);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_HOST), 3);
  assert_int_equal(tandem_vk_memory_type(&m, ALL, TANDEM_VK_MEMORY_GPU_LOCAL), 0);
}

/* Nothing qualifies: -1. */
static void test_none(void **state) {
  (void)state;
  const uint32_t f[] = {DL, HV | HC};
  const uint32_t h[] = {0, 1};
  VkPhysicalDeviceMemoryProperties m = table(2, f, h, 0x1);
  assert_int_equal(tandem_vk_memory_type(&m, 1u << 0, TANDEM_VK_MEMORY_HOST), -1);
  assert_int_equal(tandem_vk_memory_type(&m, 1u << 1, TANDEM_VK_MEMORY_GPU_LOCAL), -1);
  assert_int_equal(tandem_vk_memory_type(&m, 0, TANDEM_VK_MEMORY_HOST_IMPORT), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nvidia_small_bar),
      cmocka_unit_test(test_nvidia_rebar),
      cmocka_unit_test(test_not_device_local_outranks_cached),
      cmocka_unit_test(test_coherent_required),
      cmocka_unit_test(test_lavapipe),
      cmocka_unit_test(test_integrated),
      cmocka_unit_test(test_none),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
