/* SPDX-License-Identifier: MIT */
/*
 * tandem_vulkan.h — tandem beside your own Vulkan code, and its manual.
 *
 * For the few programs that bring their own VkDevice or work with tandem's:
 * a renderer or an ML runtime that embeds tandem, a benchmark that measures
 * against raw Vulkan on the same queues, code that records its own commands
 * into tandem's ordering. Everything here names Vulkan objects (as void *,
 * so no Vulkan header is needed: cast them to the Vk* types named). What
 * every user needs, and what is shared through file descriptors (exported
 * memory and timelines, native sessions), is in <tandem/tandem.h>, which this
 * header includes; its Conventions (results, out-parameters, versioned
 * structs, ownership, threads, "Errors:" lines) hold here too. The versioned
 * structs here are tandem_vulkan_handles_t and tandem_vulkan_scope_t (filled
 * by tandem), tandem_vulkan_device_t, tandem_vulkan_buffer_t and
 * tandem_vulkan_kernel_t (passed in); tandem_vulkan_lane_t,
 * tandem_vulkan_queue_t, tandem_vulkan_view_t, tandem_vulkan_signal_t and
 * tandem_access_decl_t keep their layout for the life of a SONAME.
 *
 * Read it top to bottom, as an application meets it: tandem's native handles
 * and the queue lock; running on the application's own device (bring your
 * own device); what a raw submission beside tandem must wait for; a view as
 * Vulkan sees it; adopting the application's buffers and pipelines; the
 * application's own commands as a graph node (scoped handoff); and its own
 * submissions ordered against tandem's (external submit). docs/interop.md
 * has worked examples and the costs measured on real devices.
 */
#ifndef TANDEM_TANDEM_VULKAN_H_
#define TANDEM_TANDEM_VULKAN_H_

#include "tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

/*============================================================================
 * Native handles and the queue lock
 *============================================================================*/

/* Native Vulkan handles of the runtime's GPU, for code that measures or
 * cooperates with tandem on the same device (a second VkDevice in one
 * process makes every round trip between the two markedly slower on some
 * drivers, so a baseline belongs on tandem's own device and queues: see
 * docs/interop.md). Handles are typed void * so this header needs no Vulkan
 * headers: cast them to VkInstance,
 * VkPhysicalDevice, VkDevice, VkQueue, VkSemaphore and
 * PFN_vkGetInstanceProcAddr. tandem keeps ownership: do not destroy them.
 *
 * What you do with them is outside tandem's tracker: work you submit is not
 * ordered against tandem's, and a lane's timeline semaphore may be waited on
 * but never signalled by you. A VkQueue is externally synchronised: hold
 * tandem_runtime_queue_lock(lane) around every call that uses it (the lock
 * is per VkQueue: see tandem_runtime_queue_lock). */
typedef struct tandem_vulkan_lane {
  void *queue; /* VkQueue (lanes may share one) */
  uint32_t queue_family;
  uint32_t queue_index;
  void *timeline; /* VkSemaphore the lane signals */
} tandem_vulkan_lane_t;

typedef struct tandem_vulkan_handles {
  uint32_t struct_size;          /* sizeof(tandem_vulkan_handles_t): see Conventions */
  void *instance;                /* VkInstance */
  void *physical_device;         /* VkPhysicalDevice */
  void *device;                  /* VkDevice */
  void *get_instance_proc_addr;  /* PFN_vkGetInstanceProcAddr of the loader tandem uses */
  uint32_t api_version;          /* the instance's VK_API_VERSION */
  tandem_vulkan_lane_t lanes[3]; /* by tandem_lane_t: upload, compute, download */
} tandem_vulkan_handles_t;

/* Zeroes |handles| and sets struct_size, ready for
 * tandem_runtime_vulkan_handles. NULL is ignored. */
static inline void tandem_vulkan_handles_init(tandem_vulkan_handles_t *handles) {
  if (!handles) return;
  memset(handles, 0, sizeof *handles);
  handles->struct_size = (uint32_t)sizeof *handles;
}

/* Fills |out| with GPU 0's handles. Opens the GPU if needed. Errors:
 * INVALID_ARGUMENT, UNSUPPORTED (a GPU backend without Vulkan). Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_vulkan_handles(tandem_runtime_t *runtime,
                                                         tandem_vulkan_handles_t *out);
/* The same for the runtime's GPU |gpu| (several GPUs: tandem.h,
 * TANDEM_MAX_GPUS): its own instance, device and queues; lanes[l] is the
 * lane whose id is tandem_gpu_lane(gpu, l), and its queue lock is taken with
 * that id. Each GPU is a VkDevice of its own, so work you submit on one is
 * not ordered against another GPU's queues by anything but your own waits.
 * Opens that GPU if needed. Errors: those of tandem_runtime_vulkan_handles,
 * and OUT_OF_RANGE (gpu). Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_vulkan_handles_at(tandem_runtime_t *runtime, uint32_t gpu,
                                                            tandem_vulkan_handles_t *out);
/* Takes / gives back the lock that guards |lane|'s VkQueue (the one tandem
 * holds around its own submissions). |lane| is a GPU lane id: GPU 0's
 * UPLOAD, COMPUTE or DOWNLOAD, or tandem_gpu_lane(g, l) for GPU g's. Blocks
 * while tandem submits. There is
 * one lock per distinct VkQueue: lanes on one queue (equal
 * tandem_vulkan_lane_t.queue) share it, so holding it for any one of them
 * guards the queue. It nests on the holding thread: locking another lane of
 * the same queue, or the same lane again, counts, and each lock needs its
 * unlock (locking "each lane on a queue" in any order never deadlocks).
 * Unlocking a lock this thread does not hold is ignored. Only for GPU lanes
 * of a GPU that is open; anything else is ignored. */
TANDEM_API void tandem_runtime_queue_lock(tandem_runtime_t *runtime, int lane);
TANDEM_API void tandem_runtime_queue_unlock(tandem_runtime_t *runtime, int lane);

/*============================================================================
 * Bring your own device
 *============================================================================
 *
 * A runtime can run on a VkDevice the application created (runtime option
 * vulkan_device, in tandem.h). The application keeps ownership of the
 * instance, the physical device, the device and its queues: tandem
 * creates only its own objects on them (timeline semaphores, command pools,
 * buffers, pipelines, descriptor pools) and destroys only those, when the
 * runtime closes; the device must outlive the runtime and everything made
 * from it. Vulkan cannot be asked what a VkDevice was created with, so the
 * description repeats it: the extension names and the feature chain exactly
 * as given to vkCreateDevice.
 *
 * What tandem needs, checked at tandem_runtime_create (UNSUPPORTED naming
 * every missing one and how to enable it): instance and device Vulkan 1.3,
 * features timelineSemaphore and synchronization2 enabled. What it uses when
 * enabled, and otherwise leaves off: the optional shader features
 * (shaderFloat16, shaderInt8, shaderInt16/64, shaderFloat64, 16- and 8-bit
 * storage, subgroupSizeControl, shaderIntegerDotProduct, vulkanMemoryModel,
 * ...: a kernel that needs one not enabled is UNSUPPORTED, naming it and
 * saying the device was created without it when the GPU has it, and
 * tandem_device_info_t.shader_features lists only enabled ones; the shader
 * clocks need VK_KHR_shader_clock among the extensions too, with
 * VkPhysicalDeviceShaderClockFeaturesKHR in the chain),
 * hostQueryReset (with the gpu_timestamps option),
 * VK_EXT_calibrated_timestamps, VK_KHR_external_memory_fd,
 * VK_EXT_external_memory_dma_buf, VK_EXT_external_memory_host and
 * VK_KHR_external_semaphore_fd (interop and NPU sharing paths).
 *
 * Queues: per GPU lane, a queue family and index the device was created
 * with (lanes may share one queue; the compute lane's family must support
 * compute). tandem checks queue_index against the family's queueCount;
 * that the device was created with that many queues of the family is
 * trusted (Vulkan cannot be asked, and vkGetDeviceQueue of a queue never
 * created is undefined). A VkQueue is externally synchronised: while the
 * runtime lives,
 * every submission of yours to one of these queues (and vkQueueWaitIdle,
 * vkDeviceWaitIdle) must hold tandem_runtime_queue_lock of a lane on it (the
 * lock is per queue; for vkDeviceWaitIdle, of every queue the lanes use);
 * two live runtimes must not share a queue. Validation: tandem cannot add a
 * layer to an instance it did not create: enable VK_LAYER_KHRONOS_validation
 * (and synchronization validation) on your instance and read its messages
 * with your own debug messenger; tandem_runtime_validation_messages counts
 * nothing on such a runtime.
 *
 * The runtime's GPU index: tandem_runtime_create sets the runtime's
 * gpu_index to where tandem's own enumeration (tandem_runtime_gpu_info,
 * `tandem devices`) finds the application's physical device, and
 * tandem_runtime_gpu_info at that index describes the application's device
 * as created (its enabled features only); other indices describe the
 * system's other GPUs as tandem would open them.
 */

typedef struct tandem_vulkan_queue {
  uint32_t queue_family;
  uint32_t queue_index; /* < the queueCount the device was created with */
} tandem_vulkan_queue_t;

typedef struct tandem_vulkan_device {
  uint32_t struct_size;  /* sizeof(tandem_vulkan_device_t): see Conventions */
  void *instance;        /* VkInstance */
  void *physical_device; /* VkPhysicalDevice of |instance| */
  void *device;          /* VkDevice created on |physical_device| */
  /* PFN_vkGetInstanceProcAddr the instance came from; NULL: the system
   * loader's (libvulkan.so.1), the only one tandem can use. */
  void *get_instance_proc_addr;
  uint32_t api_version;          /* the instance's VkApplicationInfo.apiVersion */
  const char *const *extensions; /* VkDeviceCreateInfo.ppEnabledExtensionNames */
  uint32_t extension_count;      /* VkDeviceCreateInfo.enabledExtensionCount */
  /* VkDeviceCreateInfo.pNext as given (VkPhysicalDeviceFeatures2,
   * VkPhysicalDeviceVulkan11/12/13Features and the per-feature structs are
   * read; other structs are skipped), and pEnabledFeatures (a
   * VkPhysicalDeviceFeatures *, or NULL). */
  const void *features;
  const void *enabled_features;
  tandem_vulkan_queue_t lanes[3]; /* by tandem_lane_t: upload, compute, download */
} tandem_vulkan_device_t;

/* Zeroes |device| and sets struct_size; then fill in the handles, the
 * extensions, the features and the lanes' queues. NULL is ignored. */
static inline void tandem_vulkan_device_init(tandem_vulkan_device_t *device) {
  if (!device) return;
  memset(device, 0, sizeof *device);
  device->struct_size = (uint32_t)sizeof *device;
}

/*============================================================================
 * Raw Vulkan beside tandem
 *============================================================================
 *
 * What you do with the handles above is outside tandem's tracker (the rule
 * of tandem.h, "Sharing"): wait for the completions that touch bytes before
 * your own work touches them, and do not touch bytes that tandem work in
 * flight reads or writes. Adoption, scoped handoff and external submit
 * (below) bring such work into the tracker instead.
 *
 * Your next raw Vulkan submission after a host wait: a host wait (the
 * completion's, or vkWaitSemaphores) orders tandem's work before the host,
 * not before your GPU commands' memory accesses. Make them visible either
 * by waiting, in that submission, for the lane timeline values
 * tandem_completion_lane_values gives (a VkSemaphoreSubmitInfo at a stage
 * no later than the first access; free when already reached), which is
 * right on any queue; or, on a queue a lane of that work uses, by a
 * pipeline barrier from ALL_COMMANDS / MEMORY_WRITE to your stages and
 * accesses, which covers earlier submissions on that queue only.
 *
 * Native accessors.  A view's VkBuffer, offset and range. tandem keeps
 * ownership: do not destroy, free or rebind it. It lives as long as the
 * buffer.
 */

/* A view as Vulkan sees it: bind (buffer, offset, range) as a descriptor or
 * use it in commands. */
typedef struct tandem_vulkan_view {
  void *buffer;    /* VkBuffer */
  uint64_t offset; /* VkDeviceSize: the view's offset in it */
  uint64_t range;  /* the view's length */
} tandem_vulkan_view_t;

/* Fills |out| with |view|'s VkBuffer, offset and length. A SHARED buffer's
 * VkBuffer is the GPU side of its sharing path (with staged sharing, the
 * GPU-visible copy, not the NPU's bytes). Errors: INVALID_ARGUMENT (|out|
 * NULL, a malformed view), OUT_OF_RANGE (the range is outside the buffer),
 * UNSUPPORTED (an NPU_LOCAL buffer: it has no VkBuffer). Thread-safe. */
TANDEM_API tandem_status_t tandem_view_vulkan_buffer(tandem_view_t view, tandem_vulkan_view_t *out);

/*============================================================================
 * Adoption
 *============================================================================
 *
 * A VkBuffer or a compute VkPipeline the application made with
 * plain Vulkan on the runtime's VkDevice (its own, or the one
 * tandem_runtime_vulkan_handles names) can become a tandem buffer or kernel
 * and then take part in graphs like any other: tracked by byte range,
 * viewed, mapped (HOST_VISIBLE), bound to dispatches. The application keeps
 * ownership: releasing the tandem object never destroys, frees or unmaps
 * what you gave; yours must outlive the tandem object and every submission
 * that uses it (release the completions first), and must not be destroyed,
 * rebound or written by your own work while tandem work on it is in flight.
 * Objects of another VkDevice are refused (INVALID_ARGUMENT, "belongs to
 * another VkDevice").
 */

/* A buffer to adopt. Vulkan cannot be asked how a buffer was created or
 * where it is bound, so the description says so; what can be checked
 * against vkGetBufferMemoryRequirements and the device's memory types is. */
typedef struct tandem_vulkan_buffer {
  uint32_t struct_size;   /* sizeof(tandem_vulkan_buffer_t): see Conventions */
  void *device;           /* VkDevice the buffer was created on */
  void *buffer;           /* VkBuffer */
  void *memory;           /* VkDeviceMemory it is bound to */
  uint64_t memory_offset; /* vkBindBufferMemory's memoryOffset */
  uint64_t memory_size;   /* the memory's allocationSize */
  uint32_t memory_type;   /* the memory's memoryTypeIndex */
  /* VkBufferUsageFlags it was created with: STORAGE_BUFFER, TRANSFER_SRC
   * and TRANSFER_DST are needed (any view may be bound, copied or filled);
   * INDIRECT_BUFFER only for a buffer a dispatch reads its sizes from
   * (without it, tandem_graph_add_dispatch refuses it as the indirect view,
   * INVALID_ARGUMENT). */
  uint32_t usage;
  /* Created with VK_SHARING_MODE_CONCURRENT over every queue family of the
   * runtime's lanes (tandem_vulkan_handles_t.lanes). Required when those are
   * more than one family: tandem does no queue-family ownership transfers. */
  bool concurrent;
  uint64_t size;                /* bytes tandem uses from the buffer's start, ≤ its
                              VkBufferCreateInfo.size */
  tandem_placement_t placement; /* GPU_LOCAL or HOST_VISIBLE */
  /* HOST_VISIBLE: your mapping of the buffer's first byte when you keep the
   * memory mapped; NULL: tandem maps it (vkMapMemory) and unmaps it at
   * release, and you must not map it meanwhile. Ignored for GPU_LOCAL. */
  void *host;
  /* The bytes are already charged to the runtime's budget (by an earlier
   * adoption or by you through tandem_budget_*): adoption charges 0 then,
   * size otherwise. */
  bool budget_charged;
} tandem_vulkan_buffer_t;

/* Zeroes |desc| and sets struct_size. NULL is ignored. */
static inline void tandem_vulkan_buffer_init(tandem_vulkan_buffer_t *desc) {
  if (!desc) return;
  memset(desc, 0, sizeof *desc);
  desc->struct_size = (uint32_t)sizeof *desc;
}

/* Makes a tandem buffer of desc->size bytes over |desc|'s VkBuffer. The
 * bytes are yours, not zero-filled. Checks: the VkDevice is the runtime's;
 * placement GPU_LOCAL or HOST_VISIBLE; size fits the buffer's memory
 * requirements and the memory (offset aligned, range inside
 * memory_size); the memory type is one the buffer allows and fits the
 * placement (HOST_VISIBLE needs HOST_VISIBLE|HOST_COHERENT memory; GPU_LOCAL
 * accepts any type); usage and sharing as above. What cannot be checked:
 * the creation size beyond the requirements' size, the binding itself, the
 * usage flags and sharing mode you state. The budget is charged size
 * (unless budget_charged) and statistics count an allocation of size bytes.
 * Opens the GPU if needed. Errors: INVALID_ARGUMENT (NULL; a handle NULL;
 * another VkDevice's buffer; a placement not GPU_LOCAL or HOST_VISIBLE;
 * usage lacking a needed flag, named; not concurrent over the lanes'
 * families), OUT_OF_RANGE (size 0 or past the buffer or the memory, an
 * unaligned or outside offset, with the numbers), UNSUPPORTED (a memory type
 * the buffer cannot use, or one not host-visible and coherent for
 * HOST_VISIBLE), OVER_BUDGET, OUT_OF_MEMORY, NO_DEVICE, INTERNAL (vkMapMemory
 * failed). Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_adopt_vulkan(tandem_runtime_t *runtime,
                                                      const tandem_vulkan_buffer_t *desc,
                                                      tandem_buffer_t **out_buffer);

/* A compute pipeline to adopt, and what it was built from. tandem checks the
 * contract against the SPIR-V exactly as tandem_kernel_create does, so
 * *kernel must describe the pipeline truthfully: the code (spirv,
 * spirv_path or glsl_source), entry point, specialization constants, local
 * size and required subgroup size the pipeline was created with, plus the
 * contract. The layouts must be the ones tandem would make, which Vulkan
 * cannot be asked about: set 0 of |pipeline_layout| is |set_layout|, with
 * bindings 0..binding_count-1 each one STORAGE_BUFFER descriptor for the
 * compute stage (no flags), and one push-constant range at offset 0 of
 * push_constant_bytes for the compute stage when that is not 0. */
typedef struct tandem_vulkan_kernel {
  uint32_t struct_size;  /* sizeof(tandem_vulkan_kernel_t): see Conventions */
  void *device;          /* VkDevice the objects were created on */
  void *pipeline;        /* VkPipeline (compute) */
  void *pipeline_layout; /* VkPipelineLayout it was created with */
  void *set_layout;      /* VkDescriptorSetLayout of set 0 */
  /* What the pipeline was built from, with the contract (read during the
   * call only). A pointer, not a member, so each struct grows on its own. */
  const tandem_kernel_desc_t *kernel;
} tandem_vulkan_kernel_t;

/* Zeroes |desc| and sets struct_size. NULL is ignored. */
static inline void tandem_vulkan_kernel_init(tandem_vulkan_kernel_t *desc) {
  if (!desc) return;
  memset(desc, 0, sizeof *desc);
  desc->struct_size = (uint32_t)sizeof *desc;
}

/* Makes a kernel over |desc|'s pipeline. Errors: as tandem_kernel_create
 * (INVALID_ARGUMENT, IO, INVALID_KERNEL, CONTRACT, UNSUPPORTED,
 * OUT_OF_MEMORY, INTERNAL: the same checks and messages), plus
 * INVALID_ARGUMENT (a NULL handle; objects of another VkDevice) and
 * NO_DEVICE. Thread-safe. */
TANDEM_API tandem_status_t tandem_kernel_adopt_vulkan(tandem_runtime_t *runtime,
                                                      const tandem_vulkan_kernel_t *desc,
                                                      tandem_kernel_t **out_kernel);

/*============================================================================
 * Scoped handoff
 *============================================================================
 *
 * Your own Vulkan commands inside tandem's ordering: a graph
 * node that declares the byte ranges it touches (views, each READ, WRITE or
 * READ_WRITE, as a dispatch's bindings do) and a callback that records
 * commands into a command buffer tandem gives it. Unlike raw Vulkan beside
 * tandem (above), this crosses into the tracker: tandem orders the node after
 * earlier conflicting work and before later conflicting work (barriers in a
 * region, semaphore waits between lanes and submissions), a live host map
 * that conflicts with a declared view makes the submit BUSY, and the node is
 * prepared and replayed like any other. docs/interop.md ("Handoff") has a
 * complete example.
 *
 * The callback's rules (tandem checks what it can; the rest it cannot order):
 *   - It records commands only: no submit, no wait, no vkBeginCommandBuffer /
 *     vkEndCommandBuffer, and it does not keep the command buffer after it
 *     returns.
 *   - Its commands touch only the declared views' bytes, each as declared.
 *     tandem_vulkan_scope_view gives declared access i as (VkBuffer, offset,
 *     range) and refuses any other index.
 *   - tandem's barrier before the commands and after them covers the compute
 *     shader and transfer stages with shader and transfer reads and writes
 *     (transfer only on a lane whose queue family cannot compute: check
 *     scope->queue_family). Commands that touch the bytes otherwise (indirect
 *     arguments, vertex input, host access) are not covered. Barriers between
 *     your own commands are yours; none may rely on anything outside them.
 *   - Pipelines, descriptor sets and push constants it binds are its own:
 *     tandem binds its own again after it.
 *   - The commands are replayed at every submit of the executable: every
 *     object they use (pipeline, layout, descriptor set) must outlive the
 *     executable, and data baked into commands (vkCmdUpdateBuffer, push
 *     constants) is that of the recording; pass changing data in buffers.
 *   - It runs at prepare once per graph slot (each slot has its own command
 *     buffers), and again whenever tandem re-records the region the node lies
 *     in (a tandem_exec_set_* changed another node of that region; then on the
 *     submitting thread with tandem's tracker lock held). It must record the
 *     same work each time and call no tandem function other than
 *     tandem_vulkan_scope_view. It is never called per submit.
 *   - It returns TANDEM_OK, or a TANDEM_ERROR_* code: then the prepare (or
 *     the submit that re-records) fails with that code and a message naming
 *     the node (and holding tandem_vulkan_scope_view's message if that is what
 *     failed).
 */

/* One declared access of a Vulkan commands node: the bytes and how the
 * commands use them. */
typedef struct tandem_access_decl {
  tandem_view_t view;
  tandem_access_t access; /* READ, WRITE (every byte overwritten) or READ_WRITE */
} tandem_access_decl_t;

/* What a record (or submit) callback gets: valid only during the call. */
typedef struct tandem_vulkan_scope {
  /* Set by tandem to the size of the layout it fills (Conventions): a
   * callback built against a newer header reads a field only when
   * struct_size covers it. */
  uint32_t struct_size;
  void *command_buffer;            /* VkCommandBuffer, recording: record into it
                                      (NULL for a submit callback) */
  tandem_vulkan_handles_t handles; /* as tandem_runtime_vulkan_handles */
  tandem_lane_t lane;              /* the lane the commands run on */
  uint32_t queue_family;           /* that lane's queue family: what commands it takes */
  uint32_t node;                   /* the node's number in its graph */
  uint32_t access_count;           /* declared accesses, 0 .. access_count-1 */
  /* A submit callback's waits (0 for a record callback, which tandem orders
   * itself): the submission must wait, on the GPU, until each timeline
   * semaphore wait_semaphores[i] (a VkSemaphore) reaches wait_values[i]
   * before it touches the declared bytes. */
  uint32_t wait_count;
  void *wait_semaphores[TANDEM_MAX_LANES]; /* built-in and user lanes */
  uint64_t wait_values[TANDEM_MAX_LANES];
  const void *internal; /* tandem's own; do not touch */
} tandem_vulkan_scope_t;

/* Records the node's commands into scope->command_buffer (the rules above);
 * |user| is the pointer given at add. */
typedef tandem_status_t (*tandem_vulkan_record_fn)(void *user, const tandem_vulkan_scope_t *scope);

/* Adds a Vulkan commands node on |lane| (a GPU lane; AUTO: compute) that
 * declares |accesses| (access_count entries, 0 .. TANDEM_MAX_BINDINGS; the
 * array is copied) and records with |record|(|user|, scope). With no
 * accesses the node is ordered against nothing. Opens the GPU if needed.
 * Errors: INVALID_ARGUMENT (a NULL, a lane that is not a GPU lane, an access
 * that is not a tandem_access_t, a view without a buffer or from another
 * runtime), OUT_OF_RANGE (more than TANDEM_MAX_BINDINGS accesses; a view not
 * inside its buffer; a full graph, as add_fill), UNSUPPORTED (an NPU_LOCAL
 * view: it has no VkBuffer; a GPU backend without a VkDevice), OUT_OF_MEMORY. */
TANDEM_API tandem_status_t tandem_graph_add_vulkan_commands(
    tandem_graph_t *graph, tandem_lane_t lane, const tandem_access_decl_t *accesses,
    uint32_t access_count, tandem_vulkan_record_fn record, void *user);

/* Declared access |index| of the node being recorded, as Vulkan sees it:
 * (VkBuffer, offset, range) of its view. Only inside a record callback, with
 * the scope it was given. Errors: INVALID_ARGUMENT (a NULL; an index that is
 * not a declared access, naming the index and the node; a scope whose
 * callback has returned). */
TANDEM_API tandem_status_t tandem_vulkan_scope_view(const tandem_vulkan_scope_t *scope,
                                                    uint32_t index, tandem_vulkan_view_t *out);

/* One run of a single Vulkan commands node, as add_vulkan_commands on a
 * one-node graph prepared with one slot and submitted: |record| is called
 * once, before this returns, on this thread, and the commands are ordered
 * against in-flight work as a submit orders them. Returns a completion the
 * caller owns. Does not wait for the GPU. Errors: those of
 * tandem_graph_add_vulkan_commands, of tandem_graph_prepare (including what
 * |record| returned) and of tandem_exec_submit. Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_run_vulkan_commands(
    tandem_runtime_t *runtime, tandem_lane_t lane, const tandem_access_decl_t *accesses,
    uint32_t access_count, tandem_vulkan_record_fn record, void *user,
    tandem_completion_t **out_completion);

/*============================================================================
 * External submit
 *============================================================================
 *
 * The same declared accesses, but your code submits the
 * work itself (on any queue of tandem's VkDevice: a lane's queue under
 * tandem_runtime_queue_lock, or, on an application's device, a queue no lane
 * uses, which is then yours alone to synchronise; the ordering is by
 * timeline semaphores, which cross queues) and tells tandem which timeline semaphore value
 * marks its end. Both directions are GPU-side waits:
 *   - before: the scope lists the timeline values (tandem's lane timelines)
 *     of in-flight tracked work that conflicts with the declared accesses;
 *     your submission waits for them (VkSemaphoreSubmitInfo or
 *     VkTimelineSemaphoreSubmitInfo, at a stage no later than its first
 *     access) before it touches the bytes;
 *   - after: tandem submits an empty region on |lane| that waits for your
 *     semaphore's value, and tracks the declared accesses at that region's
 *     value: later conflicting work (any lane, any graph), host maps and the
 *     returned completion wait for your work through it.
 * The callback's rules: it runs once, on the calling thread, before the call
 * returns, with tandem's tracker lock held, so it must submit and never wait
 * on the host, and call no tandem function but tandem_vulkan_scope_view and
 * tandem_runtime_queue_lock / _unlock. It signals out->semaphore, a timeline
 * semaphore of tandem's VkDevice that you created (never a lane's timeline),
 * to out->value (above any value it had) when its work on the declared bytes
 * is done; the semaphore must live until the returned completion has
 * finished. A value that is never reached stalls that region, everything
 * that conflicts with the declared accesses after it, and the completion
 * (tandem cannot time it out). It returns TANDEM_OK after submitting, or an
 * error code when it submitted nothing: then nothing is started and the call
 * fails with that code.
 */

/* The timeline value a submit callback's work signals at its end. */
typedef struct tandem_vulkan_signal {
  void *semaphore; /* VkSemaphore, a timeline semaphore of tandem's VkDevice */
  uint64_t value;
} tandem_vulkan_signal_t;

/* Submits the work (the rules above), waiting as scope->wait_* say, and
 * fills |out| with what it signals at its end. */
typedef tandem_status_t (*tandem_vulkan_submit_fn)(void *user, const tandem_vulkan_scope_t *scope,
                                                   tandem_vulkan_signal_t *out);

/* Orders work |submit| submits itself against tandem's, through |accesses|
 * (as tandem_runtime_run_vulkan_commands) and the waits above; |lane| (a GPU
 * lane; AUTO: compute) carries the region that waits for its end. Returns
 * a completion the caller owns, finished once that region (so your work)
 * has. Does not wait for the GPU. Errors: those of
 * tandem_graph_add_vulkan_commands and tandem_exec_submit (BUSY with a
 * conflicting live host map: |submit| is not called; FAILED_DEPENDENCY),
 * OUT_OF_MEMORY, INTERNAL, INVALID_ARGUMENT (|submit| returned OK without a
 * semaphore: its work is then not ordered), and any code |submit| returned.
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_submit_vulkan(tandem_runtime_t *runtime,
                                                        tandem_lane_t lane,
                                                        const tandem_access_decl_t *accesses,
                                                        uint32_t access_count,
                                                        tandem_vulkan_submit_fn submit, void *user,
                                                        tandem_completion_t **out_completion);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_TANDEM_VULKAN_H_ */
