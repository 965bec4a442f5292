/* SPDX-License-Identifier: MIT */
/*
 * bench_vk.h — the one raw-Vulkan harness of bench/: raw Vulkan beside
 * tandem, on tandem's own VkDevice and lane queues
 * (tandem_runtime_vulkan_handles), never on a second device (which costs the
 * H200 ~160 µs per round trip and flatters every ratio). Two levels:
 *   bench_vk_load   the device table of tandem's device, for a program that
 *                   builds its own objects (round_trip_floor.c, host_pages.c,
 *                   driver_memory.c);
 *   raw_t           that device with a command pool and timeline per lane, a
 *                   descriptor pool, kernels, buffers and submit-and-wait, the
 *                   baseline `tandem-bench` measures tandem against.
 * Built once with volk (VK_NO_PROTOTYPES) as the static library
 * tandem_bench_vk (bench/CMakeLists.txt). It is the comparison, not tandem
 * logic: plain Vulkan, with the validation layer on when tandem's is.
 */
#ifndef TANDEM_BENCH_VK_H_
#define TANDEM_BENCH_VK_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tandem/tandem_vulkan.h"
#include "volk.h"

/* Fatal errors (a benchmark has nothing to unwind into): "<program>: <fmt>"
 * on stderr, exit status 1. */
void bench_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
#define TCHECK(expr)                                                                           \
  do {                                                                                         \
    tandem_status_t s_ = (expr);                                                               \
    if (s_ != TANDEM_OK)                                                                       \
      bench_die("%s:%d: %s failed: %s: %s", __FILE__, __LINE__, #expr, tandem_status_name(s_), \
                tandem_error_message());                                                       \
  } while (0)
#define VKCHECK(expr)                                                                 \
  do {                                                                                \
    VkResult r_ = (expr);                                                             \
    if (r_ != VK_SUCCESS)                                                             \
      bench_die("%s:%d: %s failed: VkResult %d", __FILE__, __LINE__, #expr, (int)r_); \
  } while (0)

/* Fills |h| with |rt|'s native handles (opening its GPU if needed), loads
 * volk's instance-level functions from its instance and |vk| with its
 * device's functions. */
void bench_vk_load(tandem_runtime_t *rt, tandem_vulkan_handles_t *h, struct VolkDeviceTable *vk);

/* Submits |cb| to |queue| under tandem's queue lock of lane id |lane| (a
 * tandem_gpu_lane id), signalling |timeline| to |value| and waiting for
 * nothing; the submit's result. */
VkResult bench_vk_submit_one(const struct VolkDeviceTable *vk, tandem_runtime_t *rt, int lane,
                             VkQueue queue, VkCommandBuffer cb, VkSemaphore timeline,
                             uint64_t value);

/* Lanes of the raw side, in tandem's numbering (upload, compute, download). */
#define RAW_LANES 3

typedef struct raw_kernel {
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t push_bytes, bindings;
} raw_kernel_t;

typedef struct raw_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped;
  VkDeviceSize size;
} raw_buffer_t;

typedef struct raw {
  tandem_runtime_t *runtime; /* whose device and queues these are */
  uint32_t gpu;              /* which of its GPUs (raw_open_at) */
  VkInstance instance;
  VkPhysicalDevice physical;
  VkPhysicalDeviceMemoryProperties memory;
  VkDevice device;
  struct VolkDeviceTable vk;
  uint32_t family[RAW_LANES], index[RAW_LANES];
  uint32_t distinct_families[RAW_LANES], distinct_count;
  VkQueue queue[RAW_LANES];
  VkCommandPool pool[RAW_LANES];
  VkDescriptorPool descriptor_pool;
  VkSemaphore timeline[RAW_LANES];
  uint64_t value[RAW_LANES]; /* last value signalled per lane */
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  bool host_import; /* VK_EXT_external_memory_host enabled */
  VkDeviceSize host_import_alignment;
} raw_t;

void raw_open(raw_t *raw, tandem_runtime_t *rt);
/* The same on the runtime's GPU |gpu| (tandem_runtime_vulkan_handles_at):
 * its own device and lane queues; lane l there is tandem_gpu_lane(gpu, l). */
void raw_open_at(raw_t *raw, tandem_runtime_t *rt, uint32_t gpu);
void raw_close(raw_t *raw);
void raw_kernel_create(raw_t *raw, const uint32_t *code, size_t code_bytes, uint32_t bindings,
                       uint32_t push_bytes, raw_kernel_t *k);
void raw_kernel_destroy(raw_t *raw, raw_kernel_t *k);
/* host: HOST_VISIBLE|HOST_COHERENT, mapped; else DEVICE_LOCAL. Shared by all
 * the lanes' families (CONCURRENT) when they differ. */
void raw_buffer_create(raw_t *raw, VkDeviceSize size, bool host, raw_buffer_t *b);
/* The same buffer in memory type |type| (mapped when host-visible). False,
 * with nothing left behind and |why| saying why, when the buffer cannot use
 * that type, its heap is too small or the allocation runs out of memory. */
bool raw_buffer_create_in(raw_t *raw, VkDeviceSize size, uint32_t type, raw_buffer_t *b,
                          const char **why);
void raw_buffer_destroy(raw_t *raw, raw_buffer_t *b);
/* A storage buffer over |size| bytes of host memory at |host| (both aligned to
 * host_import_alignment), through VK_EXT_external_memory_host. */
void raw_buffer_import_host(raw_t *raw, void *host, VkDeviceSize size, raw_buffer_t *b);
VkCommandBuffer raw_begin(raw_t *raw, int lane);
void raw_barrier(raw_t *raw, VkCommandBuffer cb, VkPipelineStageFlags2 src_stage,
                 VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                 VkAccessFlags2 dst_access);
/* Submits |cbs| on |lane| after everything before on every lane, waits. */
void raw_run(raw_t *raw, int lane, const VkCommandBuffer *cbs, uint32_t count);
/* A descriptor set for |k| with |buffers| (offset, range) bound 0..n-1. */
VkDescriptorSet raw_descriptor_set(raw_t *raw, const raw_kernel_t *k, const VkBuffer *buffers,
                                   const VkDeviceSize *offsets, const VkDeviceSize *ranges);

#endif /* TANDEM_BENCH_VK_H_ */
