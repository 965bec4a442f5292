/* SPDX-License-Identifier: MIT */
/*
 * bench_vk.h — raw Vulkan beside tandem in bench/: a VkResult check that
 * exits naming the call, and loading the device table of tandem's own
 * device (tandem_runtime_vulkan_handles), so a raw path always runs on the
 * same VkDevice and queues as tandem, never on a second device (which costs
 * the H200 ~160 µs per round trip and flatters every ratio). Include after
 * bench_common.h (BENCH_NAME set), in a program built with volk and
 * VK_NO_PROTOTYPES.
 */
#ifndef TANDEM_BENCH_VK_H_
#define TANDEM_BENCH_VK_H_

#include "bench_common.h"
#include "tandem/tandem_vulkan.h"
#include "volk.h"

#define VKCHECK(expr)                                                   \
  do {                                                                  \
    VkResult r_ = (expr);                                               \
    if (r_ != VK_SUCCESS) {                                             \
      fprintf(stderr, BENCH_NAME ": %s answered %d\n", #expr, (int)r_); \
      exit(1);                                                          \
    }                                                                   \
  } while (0)

/* Fills |h| with |rt|'s native handles (opening its GPU if needed), loads
 * volk's instance-level functions from its instance and |vk| with its
 * device's functions. */
static inline void bench_vk_load(tandem_runtime_t *rt, tandem_vulkan_handles_t *h,
                                 struct VolkDeviceTable *vk) {
  tandem_vulkan_handles_init(h);
  CHECK(tandem_runtime_vulkan_handles(rt, h));
  VKCHECK(volkInitialize());
  volkLoadInstanceOnly((VkInstance)h->instance);
  volkLoadDeviceTable(vk, (VkDevice)h->device);
}

#endif /* TANDEM_BENCH_VK_H_ */
