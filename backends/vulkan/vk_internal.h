/* SPDX-License-Identifier: MIT */
/*
 * vk_internal.h — the Vulkan backend's objects, shared by its files.
 *
 * One tandem_vk_gpu per runtime: an instance (with the validation layer when
 * asked), one device, up to three VkQueues serving the three GPU lanes, and one
 * timeline semaphore per lane. Lanes that land on the same VkQueue share one
 * tandem_vk_queue and its mutex (VkQueue is externally synchronised). Buffers
 * use VK_SHARING_MODE_CONCURRENT over the families the lanes use, so no
 * queue-family ownership transfers are needed between lanes: for buffers (no
 * layouts, no compression) this costs nothing measurable and keeps every
 * cross-lane edge a plain semaphore wait.
 */
#ifndef TANDEM_BACKENDS_VULKAN_VK_INTERNAL_H_
#define TANDEM_BACKENDS_VULKAN_VK_INTERNAL_H_

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/backend.h"
#include "core/status.h"
#include "tandem/tandem_vulkan.h"
#include "volk.h"

typedef struct tandem_vk_queue {
  VkQueue queue;
  uint32_t family;
  pthread_mutex_t mutex; /* guards every use of |queue|; recursive (vk_device.c) */
  /* The thread holding |mutex| through tandem_runtime_queue_lock (0: none)
   * and how many times; |app_depth| is written only by that thread, under
   * |mutex|. An unlock from any other thread is ignored. */
  _Atomic uintptr_t app_owner;
  uint32_t app_depth;
} tandem_vk_queue_t;

/* Command pools per GPU lane: as many as core records at once
 * (TANDEM__RECORD_THREADS in core/record.c). */
#define TANDEM_VK_SLOT_POOLS 4

typedef struct tandem_vk_lane {
  tandem_vk_queue_t *queue;
  VkSemaphore timeline; /* signalled only by this lane's submissions (I2) */
  /* With export_timelines: an exportable timeline signalled with the same
   * values as |timeline| (same submissions, same host signals), the one
   * tandem_runtime_export_timeline_fd hands out. tandem itself never waits
   * on it: the validation layer (1.3.239) stops tracking a semaphore's queue
   * submissions once it is exported, and would then think every command
   * buffer that signalled it still in use. VK_NULL_HANDLE otherwise. */
  VkSemaphore mirror;
  /* User lanes (ids TANDEM_LANE_COUNT..): |timeline| is bound by lane_bind,
   * either an imported one (owned by core's tandem_external_timeline_t) or
   * one made for a native session (owned: |owned| set). Written under
   * signal_mutex, so a query never reads a semaphore being destroyed. */
  bool owned;
  /* Command buffers of this lane's regions: piece q of slot s of a program
   * of S slots records into pools[(q * S + s) % TANDEM_VK_SLOT_POOLS], the
   * pool of the thread core gives that piece (core/backend.h, "Pieces"), so
   * the slots and pieces of one program can be recorded on different threads
   * at once (core/record.c). A pool is
   * externally synchronised, also while any of its buffers records: each is
   * used only under its own mutex, which recording holds from begin to end.
   * One-off submissions (tandem_vk_run_once) use pools[0]. */
  VkCommandPool pools[TANDEM_VK_SLOT_POOLS];
  pthread_mutex_t pool_mutex[TANDEM_VK_SLOT_POOLS]; /* guards pools[i] */
  VkPipelineStageFlags2 stages;                     /* what a barrier on this lane may name */
  VkAccessFlags2 src_access, dst_access;
} tandem_vk_lane_t;

/* A descriptor pool and what it was made to hold (vk_descriptors.c). */
typedef struct tandem_vk_descriptor_pool {
  VkDescriptorPool pool;      /* VK_NULL_HANDLE: none */
  uint32_t sets, descriptors; /* maxSets; STORAGE_BUFFER descriptors */
} tandem_vk_descriptor_pool_t;

/* How many descriptor pools of destroyed programs a device keeps. */
#define TANDEM_VK_KEPT_POOLS 2

/* What tandem_vk_gpu_t.tag holds: tandem_vk_gpu_cast checks it in Debug builds,
 * so a tandem__gpu_t of another backend (the host GPU's) is never read as one. */
#define TANDEM_VK_GPU_TAG 0x55504756u /* "VGPU" */

typedef struct tandem_vk_gpu {
  tandem__gpu_t base;
  uint32_t tag; /* TANDEM_VK_GPU_TAG, set at allocation (vk_device.c) */
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice physical;
  VkDevice device;
  /* The application's instance and device (runtime option vulkan_device):
   * tandem destroys only what it created on them, never them, and waits for
   * its own queues only (vk_device.c). Set once at open. */
  bool borrowed;
  struct VolkDeviceTable vk;
  tandem_vk_queue_t queues[TANDEM_LANE_COUNT_GPU];
  uint32_t queue_count;
  /* GPU lanes own a queue and a pool; the NPU lane only its timeline, which
   * the NPU lane thread signals from the host. */
  tandem_vk_lane_t lanes[TANDEM__MAX_LANES];        /* by lane id, user lanes too */
  uint32_t families[TANDEM_LANE_COUNT_GPU];         /* distinct families the lanes use */
  uint32_t lane_queue_index[TANDEM_LANE_COUNT_GPU]; /* queue index in its family */
  uint32_t family_count;
  VkPhysicalDeviceMemoryProperties memory;
  /* GPU timestamps: valid on every lane's family, and mapped to CLOCK_MONOTONIC
   * by calibrated pairs (calibrated == false: times are not reported). A GPU's
   * counter drifts from the host's clock (the H200's by -2 ppm, 2026-12-04:
   * 7 ms an hour, which would misplace a long-lived runtime's regions against
   * its submit times and another GPU's), so the mapping is kept fresh
   * (vk_submit.c, tandem_vk_clock_map): a new pair when the last is over 100
   * ms old, and the rate measured between the first pair and the newest once
   * they are a second apart. Guarded by clock_mutex. */
  bool timestamps;
  bool calibrated;
  uint64_t timestamp_mask; /* from the smallest timestampValidBits of the lanes */
  double timestamp_period; /* ns per tick, as the device reports it */
  pthread_mutex_t clock_mutex;
  uint64_t tick_first, host_first;   /* the pair taken at open */
  uint64_t tick_anchor, host_anchor; /* the newest pair */
  double clock_rate;                 /* ns per tick: timestamp_period until measured */
  uint64_t wait_spin_ns;             /* completion waits poll this long before blocking */
  /* Held across the NPU lane's vkSignalSemaphore and across every timeline
   * counter read, so no read returns a GPU value whose NPU wait is signalled
   * but not yet recorded by the validation layer: Debian 12's layer (1.3.239)
   * then stalls 10 s and reports UNASSIGNED-VkSemaphore-state-timeout.
   * Blocking waits do not take it; core waits for the NPU first instead
   * (tandem__slot_t.npu_horizon). Costs one uncontended lock per read. */
  pthread_mutex_t signal_mutex;
  /* Descriptor pools of destroyed programs, kept for the next programs
   * whose sets fit (vk_descriptors.c): none of their sets is in use. The
   * largest TANDEM_VK_KEPT_POOLS are kept; trim and the device's destruction
   * give them back. Guarded by kept_mutex. */
  pthread_mutex_t kept_mutex;
  tandem_vk_descriptor_pool_t kept[TANDEM_VK_KEPT_POOLS];
  /* tandem's own kernels push their bindings (VK_KHR_push_descriptor) and
   * draw no descriptor sets; adopted kernels keep sets. Set once at open
   * (vk_device.c, tandem_vk_descriptors_decide). */
  bool push_descriptors;
  VkDeviceSize max_allocation;  /* maxMemoryAllocationSize */
  VkDeviceSize max_buffer_size; /* maxBufferSize (Vulkan 1.3) */
  /* validation messages go to the runtime's counter and callback */
  atomic_uint_fast64_t *validation_counter;
  tandem_validation_callback_t validation_callback;
  void *validation_user_data;
} tandem_vk_gpu_t;

/* The Vulkan GPU behind core's |base|: the one cast from core's type to the
 * backend's, checked (a GPU of another backend, or a destroyed one, trips
 * the assert in Debug builds). */
static inline tandem_vk_gpu_t *tandem_vk_gpu_cast(tandem__gpu_t *base) {
  tandem_vk_gpu_t *g = (tandem_vk_gpu_t *)base;
  assert(g && g->tag == TANDEM_VK_GPU_TAG);
  return g;
}

/* Converts a failed VkResult into a status naming the call. */
tandem_status_t tandem_vk_fail(VkResult result, const char *call, const char *file, int line);
const char *tandem_vk_result_name(VkResult result);

#define TANDEM_VK_RETURN_IF_ERROR(call)                                             \
  do {                                                                              \
    VkResult tandem__r = (call);                                                    \
    if (tandem__r < 0) return tandem_vk_fail(tandem__r, #call, __FILE__, __LINE__); \
  } while (0)

/* The optional features tandem enables, queried into one chain (Vulkan 1.1,
 * 1.2 and 1.3 feature structs). tandem_vk_shader_features reads them as
 * tandem_shader_feature_t bits; vk_device.c enables exactly the queried set. */
typedef struct tandem_vk_feature_chain {
  VkPhysicalDeviceFeatures2 f;
  VkPhysicalDeviceVulkan11Features f11;
  VkPhysicalDeviceVulkan12Features f12;
  VkPhysicalDeviceVulkan13Features f13;
  /* Not in the chain: VkPhysicalDevicePipelineRobustnessFeaturesEXT's one
   * feature, as read from an application's vkCreateDevice chain. */
  VkBool32 pipeline_robustness;
  /* Not in the chain either: VkPhysicalDeviceShaderClockFeaturesKHR's two
   * (VK_KHR_shader_clock), queried only where the device has the extension
   * (tandem_vk_describe) or read from an application's chain. */
  VkBool32 shader_subgroup_clock, shader_device_clock;
} tandem_vk_feature_chain_t;

/* vk_physical.c: what a physical device offers, and the lanes' queues on it. */
void tandem_vk_feature_chain_init(tandem_vk_feature_chain_t *c);
/* Shader feature bits (tandem_shader_feature_t) from a queried chain and the
 * subgroup properties. */
uint32_t tandem_vk_shader_features(const tandem_vk_feature_chain_t *c,
                                   const VkPhysicalDeviceVulkan11Properties *p11,
                                   const VkPhysicalDeviceVulkan13Properties *p13);
/* TANDEM_GPU_* feature bits (tandem_gpu_feature_t) from a queried chain. */
uint32_t tandem_vk_gpu_features(const tandem_vk_feature_chain_t *c);
/* The TANDEM_GPU_* bits that come with device extensions tandem uses, one
 * entry per extension: |ext_present(ctx, name)| says whether the device
 * has (or the application enabled) that extension. */
uint32_t tandem_vk_extension_features(bool (*ext_present)(const void *ctx, const char *name),
                                      const void *ctx);
/* Every bit tandem_vk_extension_features can give. */
uint32_t tandem_vk_extension_feature_bits(void);
/* The tandem_shader_feature_t bits that come with device extensions tandem
 * uses (VK_KHR_shader_clock's clocks), of the extensions |ext_present|
 * says are there: the most they may give; their features decide. */
uint32_t tandem_vk_extension_shader_features(bool (*ext_present)(const void *ctx, const char *name),
                                             const void *ctx);
/* Every bit tandem_vk_extension_shader_features can give. */
uint32_t tandem_vk_extension_shader_feature_bits(void);
/* Keeps in |c| only the optional features tandem enables. */
void tandem_vk_feature_chain_select(tandem_vk_feature_chain_t *c);
/* ORs the features of |s| (one struct of a vkCreateDevice chain: a core
 * features struct whole, or a pre-promotion struct's members tandem reads)
 * into |c|; a struct tandem does not read changes nothing. */
void tandem_vk_feature_chain_or(tandem_vk_feature_chain_t *c, const VkBaseInStructure *s);
/* Appends to |list| (|cap| bytes, ", "-separated) "feature name (struct)"
 * for each feature tandem needs that |c| lacks. */
void tandem_vk_features_missing(const tandem_vk_feature_chain_t *c, char *list, size_t cap);
/* ANDs every feature of the core structs of |have| into |c| (what is
 * enabled and supported). */
void tandem_vk_feature_chain_and(tandem_vk_feature_chain_t *c,
                                 const tandem_vk_feature_chain_t *have);
/* Describes |pd| (GPU |index|) into |info|. Errors: OUT_OF_MEMORY, or the
 * extension enumeration's own. */
tandem_status_t tandem_vk_describe(VkPhysicalDevice pd, uint32_t index, tandem_device_info_t *info);
/* The registry entry's count and info (core/backend.h), on an instance of their own. */
tandem_status_t tandem_vk_gpu_count(uint32_t *out_count);
tandem_status_t tandem_vk_gpu_info(uint32_t index, tandem_device_info_t *out_info);
/* Picks families and queue indices for the lanes. */
void tandem_vk_pick_queues(const VkQueueFamilyProperties *q, uint32_t qn,
                           uint32_t family[TANDEM_LANE_COUNT_GPU],
                           uint32_t index[TANDEM_LANE_COUNT_GPU]);
/* Reads the limits and memory properties the backend keeps into |g|. */
void tandem_vk_gpu_properties(tandem_vk_gpu_t *g);

/* vk_byo.c: checks the application's description |d| (runtime option
 * vulkan_device) and fills |g| from it: physical device, info (restricted to
 * what the device was created with), the lanes' queues (|family|, |index|,
 * the families' |qprops|) and the features it enabled that the device has
 * (|enabled|). On failure |g| is left for the caller to destroy. */
tandem_status_t tandem_vk_byo_check(tandem_vk_gpu_t *g, const tandem_vulkan_device_t *d,
                                    uint32_t family[TANDEM_LANE_COUNT_GPU],
                                    uint32_t index[TANDEM_LANE_COUNT_GPU],
                                    VkQueueFamilyProperties *qprops,
                                    tandem_vk_feature_chain_t *enabled);

/* vk_queue.c: the lanes' queues. */
/* Waits until tandem's queues are idle, each under its lock (the device's
 * idle entry; the device's destruction). */
void tandem_vk_gpu_idle(tandem__gpu_t *base);
/* tandem_runtime_queue_lock: takes (|lock|) or gives back |lane|'s queue lock
 * for the application; a give-back from a thread not holding it is ignored. */
void tandem_vk_queue_lock(tandem__gpu_t *base, tandem_lane_t lane, bool lock);
/* Runs one command buffer recorded by |record| on |lane|'s queue and waits
 * for it (used for zero-filling new memory, off the replay path). */
tandem_status_t tandem_vk_run_once(tandem_vk_gpu_t *g, tandem_lane_t lane,
                                   void (*record)(tandem_vk_gpu_t *g, VkCommandBuffer cb,
                                                  void *ctx),
                                   void *ctx);

/* vk_device.c: opening and destroying the device. */
/* The tables an opened device gets (vk_backend.c's): passed down to the
 * open, so that no file below vk_backend.c names them. */
struct tandem__gpu_test_hooks;
typedef struct tandem_vk_tables {
  const tandem__gpu_vtable_t *vtable;
  const struct tandem__gpu_test_hooks *test_hooks;
} tandem_vk_tables_t;
/* The registry entry's open (core/backend.h) with |tables| for the device. */
tandem_status_t tandem_vk_device_open(const tandem_vk_tables_t *tables,
                                      const tandem_runtime_options_t *options,
                                      atomic_uint_fast64_t *validation_counter,
                                      tandem__gpu_t **out_gpu);
void tandem_vk_gpu_destroy(tandem__gpu_t *base);

/* vk_instance.c: the loader, instances and their physical devices. */
/* Loads libvulkan.so.1 once per process. Errors: NO_DEVICE (no loader). */
tandem_status_t tandem_vk_loader_init(void);
/* Loads the instance-level entry points (once per process), and the
 * debug-utils ones from the first |instance| that enabled them. */
void tandem_vk_load_instance(VkInstance instance, bool debug_utils);
/* Creates an instance; with |g| non-NULL and |validation|, with the layer,
 * synchronization validation and |g|'s messenger. */
tandem_status_t tandem_vk_instance_create(bool validation, tandem_vk_gpu_t *g, VkInstance *out);
/* The physical devices of |instance|, in a malloc'd array the caller frees. */
tandem_status_t tandem_vk_physical_devices(VkInstance instance, VkPhysicalDevice **out,
                                           uint32_t *out_count);

/* vk_buffer.c */
/* What a buffer's memory type is chosen for (tandem_vk_memory_type). */
typedef enum tandem_vk_memory_use {
  TANDEM_VK_MEMORY_GPU_LOCAL,   /* GPU_LOCAL: device-local, preferably not host-mappable */
  TANDEM_VK_MEMORY_HOST,        /* HOST_VISIBLE (and SHARED's staged copy): read and written
                                   by the host, so never the BAR window when there is a choice */
  TANDEM_VK_MEMORY_HOST_IMPORT, /* an imported host allocation (SHARED, host-pointer path) */
  TANDEM_VK_MEMORY_EXPORT,      /* device memory exported as a dma-buf */
} tandem_vk_memory_use_t;
/* The memory type among |bits| for |use| (the rules are in vk_buffer.c), or
 * -1 when none qualifies. Pure: reads only |mem|. */
int32_t tandem_vk_memory_type(const VkPhysicalDeviceMemoryProperties *mem, uint32_t bits,
                              tandem_vk_memory_use_t use);
tandem_status_t tandem_vk_buffer_create(tandem__gpu_t *gpu, uint64_t size,
                                        tandem_placement_t placement, uint32_t export_types,
                                        void **out_native, void **out_host);
void *tandem_vk_buffer_vulkan(tandem__gpu_t *gpu, void *native);
tandem_status_t tandem_vk_buffer_export(tandem__gpu_t *gpu, void *native,
                                        tandem_external_memory_type_t type,
                                        tandem_external_memory_t *out);
tandem_status_t tandem_vk_buffer_import(tandem__gpu_t *gpu, const tandem_external_memory_t *memory,
                                        uint64_t size, tandem_placement_t placement,
                                        void **out_native, void **out_host);
void tandem_vk_buffer_destroy(tandem__gpu_t *gpu, void *native);
tandem_status_t tandem_vk_buffer_adopt(tandem__gpu_t *gpu, const tandem_vulkan_buffer_t *desc,
                                       void **out_native, void **out_host, bool *out_indirect);
VkBuffer tandem_vk_buffer_handle(void *native);
void tandem_vk_buffer_memory(tandem__gpu_t *gpu, void *native, tandem_buffer_memory_t *out);
tandem_status_t tandem_vk_buffer_import_host(tandem__gpu_t *gpu, void *host, uint64_t size,
                                             void **out_native);
tandem_status_t tandem_vk_buffer_import_dmabuf(tandem__gpu_t *gpu, int fd, uint64_t size,
                                               void **out_native);
tandem_status_t tandem_vk_buffer_create_dmabuf(tandem__gpu_t *gpu, uint64_t size, void **out_native,
                                               int *out_fd);
tandem_status_t tandem_vk_signal(tandem__gpu_t *gpu, tandem_lane_t lane, uint64_t value);

/* vk_interop.c: exported lane timelines and imported ones (core/interop.c). */
tandem_status_t tandem_vk_timeline_create(tandem_vk_gpu_t *g, bool exportable, VkSemaphore *out);
tandem_status_t tandem_vk_timeline_export(tandem__gpu_t *gpu, tandem_lane_t lane, int *out_fd);
tandem_status_t tandem_vk_timeline_import(tandem__gpu_t *gpu, int fd, void **out_native);
tandem_status_t tandem_vk_timeline_wait(tandem__gpu_t *gpu, void *native, uint64_t value,
                                        uint64_t timeout_ns);
void tandem_vk_timeline_destroy(tandem__gpu_t *gpu, void *native);
tandem_status_t tandem_vk_lane_bind(tandem__gpu_t *gpu, tandem_lane_t lane, void *imported);
void tandem_vk_lane_unbind(tandem__gpu_t *gpu, tandem_lane_t lane);
/* Whether timeline semaphores can be exported / imported as opaque fds. */
void tandem_vk_timeline_caps(VkPhysicalDevice physical, bool *exportable, bool *importable);

/* vk_kernel.c */
tandem_status_t tandem_vk_kernel_reflect(tandem__gpu_t *gpu, const void *code, size_t code_bytes,
                                         const char *entry_point, const char *name,
                                         tandem__kernel_interface_t *out_iface);
tandem_status_t tandem_vk_kernel_create(tandem__gpu_t *gpu, tandem__kernel_build_t *build,
                                        const char *name, void **out_native);
void tandem_vk_kernel_destroy(tandem__gpu_t *gpu, void *native);
typedef struct tandem_vk_kernel {
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t binding_count;
  uint32_t push_constant_bytes;
  bool adopted; /* the layouts and pipeline are the application's: never destroyed */
  bool push;    /* set_layout is a push-descriptor layout: its dispatches push their
                   bindings and have no descriptor set */
} tandem_vk_kernel_t;
/* |pipeline|: the application's objects, adopted as they are. */
tandem_status_t tandem_vk_kernel_adopt(tandem__gpu_t *gpu, tandem__kernel_build_t *build,
                                       const char *name, const tandem_vulkan_kernel_t *pipeline,
                                       void **out_native);

/* vk_descriptors.c */
/* A pool for |sets| sets of |descriptors| storage-buffer descriptors in all:
 * the smallest kept pool that holds them, reset, or a new one of exactly
 * that size. |*out| is the caller's until it gives it back. Errors: what
 * vkCreateDescriptorPool answers, named. */
tandem_status_t tandem_vk_descriptor_pool_take(tandem_vk_gpu_t *g, uint32_t sets,
                                               uint32_t descriptors,
                                               tandem_vk_descriptor_pool_t *out);
/* Gives |pool| back once no set of it is in use: kept if it is among the
 * TANDEM_VK_KEPT_POOLS largest, else destroyed. A null pool is ignored. */
void tandem_vk_descriptor_pool_give(tandem_vk_gpu_t *g, tandem_vk_descriptor_pool_t pool);
/* Destroys every kept pool (tandem_runtime_trim; the device's destruction). */
void tandem_vk_descriptor_pools_trim(tandem__gpu_t *gpu);

/* vk_submit.c */
tandem_status_t tandem_vk_program_create(tandem__gpu_t *gpu, const tandem__program_desc_t *desc,
                                         void **out_native);
void tandem_vk_program_destroy(tandem__gpu_t *gpu, void *native);
tandem_status_t tandem_vk_record_begin(tandem__gpu_t *gpu, void *native, uint32_t slot,
                                       uint32_t region, uint32_t piece);
void tandem_vk_record_bindings(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
                               const tandem__binding_batch_t *batch);
void tandem_vk_record_barrier(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
                              uint32_t src_work, uint32_t dst_work);
void tandem_vk_record_fill(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
                           const tandem__cmd_fill_t *cmd);
void tandem_vk_record_copy(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
                           const tandem__cmd_copy_t *cmd);
void tandem_vk_record_dispatch(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
                               const tandem__cmd_dispatch_t *cmd);
tandem_status_t tandem_vk_record_user(tandem__gpu_t *gpu, void *native, uint32_t slot,
                                      uint32_t piece, const tandem__cmd_user_t *cmd);
tandem_status_t tandem_vk_record_end(tandem__gpu_t *gpu, void *native, uint32_t slot,
                                     uint32_t piece);
tandem_status_t tandem_vk_program_submit(tandem__gpu_t *gpu, void *native, uint32_t slot,
                                         tandem__region_submit_t *regions, uint32_t region_count);
tandem_status_t tandem_vk_program_timestamps(tandem__gpu_t *gpu, void *native, uint32_t slot,
                                             uint64_t *out_pairs);
tandem_status_t tandem_vk_wait(tandem__gpu_t *gpu, const uint64_t values[TANDEM__MAX_LANES],
                               uint64_t timeout_ns);
tandem_status_t tandem_vk_query(tandem__gpu_t *gpu, uint64_t out_values[TANDEM__MAX_LANES]);

/* vk_fault.c: numbered fault injection for Vulkan calls (core/fault.h).
 * wrap_loader after volkInitialize, wrap_instance after volkLoadInstanceOnly,
 * wrap_device after volkLoadDeviceTable (only while injection is armed),
 * forget_device just before vkDestroyDevice. */
void tandem_vk_fault_wrap_loader(void);
void tandem_vk_fault_wrap_instance(void);
void tandem_vk_fault_wrap_device(struct VolkDeviceTable *table, VkDevice device);
void tandem_vk_fault_forget_device(VkDevice device);

/* One calibrated pair (GPU tick, CLOCK_MONOTONIC ns): the best of three
 * tries by the driver's maxDeviation. False when the call fails. */
bool tandem_vk_clock_pair(tandem_vk_gpu_t *g, uint64_t *out_tick, uint64_t *out_host_ns);

#endif /* TANDEM_BACKENDS_VULKAN_VK_INTERNAL_H_ */
