/* SPDX-License-Identifier: MIT */
/*
 * tandem.h — the public API of tandem, and its manual.
 *
 * tandem runs GPU kernels (Vulkan compute) and NPU kernels (XRT) as one
 * coordinated pipeline. You allocate buffers with an explicit placement, load
 * kernels together with a contract that says which bytes each binding reads or
 * writes, record a graph of fills, copies and dispatches, prepare it once and
 * submit it many times. tandem infers the ordering between nodes from the
 * contracts and the byte ranges they touch.
 *
 * Read this file top to bottom: conventions first, then one banner per object
 * in the order a program meets them (status, budget, runtime, device, buffer,
 * host map, kernel, NPU device and programs, graph, executable graph,
 * completion, traces, statistics, lanes), and last what lets other processes
 * and APIs share tandem's memory and timelines through file descriptors, and
 * host code work on its bytes as a tracked stage (sessions).
 *
 * Code that uses Vulkan or XRT itself beside tandem includes one more header:
 * <tandem/tandem_vulkan.h> for tandem's native Vulkan handles and queue
 * lock, a runtime on the application's own VkDevice (bring your own
 * device), adopted VkBuffers and VkPipelines, the application's own commands
 * as graph nodes and its own submissions ordered against tandem's; and
 * <tandem/tandem_xrt.h> for the XRT buffer object behind a buffer. Both
 * include this one. Measured costs of the calls here are in docs/design.md
 * ("Measured costs"), with the device and date of each measurement.
 */
#ifndef TANDEM_TANDEM_H_
#define TANDEM_TANDEM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TANDEM_API
#else
#define TANDEM_API __attribute__((visibility("default")))
#endif

/* The version of this header. The build checks that it equals the CMake
 * project version the library is built with (core/version.c), and
 * tandem_version() (under Status below) says which library was loaded. */
#define TANDEM_VERSION_MAJOR 0
#define TANDEM_VERSION_MINOR 1
#define TANDEM_VERSION_PATCH 0

/*============================================================================
 * Conventions
 *============================================================================
 *
 * Results.  Every function that can fail returns a tandem_status_t: 0
 * (TANDEM_OK) on success, a negative TANDEM_ERROR_* code otherwise. On failure
 * the calling thread's error message (tandem_error_message()) says what went
 * wrong in words a user can act on, naming the object and the numbers, e.g.
 *   "binding 2 of 'saxpy': view is 64 bytes, contract needs 4096".
 * Nothing is printed by the library, with one exception: validation messages
 * when TANDEM_VALIDATION=1 turned validation on and no callback is set. The
 * libraries it loads may print on their own: XRT writes a banner (version,
 * PID, user, host) and its error to stderr when it cannot open a device; an
 * xrt.ini with "[Runtime]" and "runtime_log = null", named by the
 * environment variable XRT_INI_PATH, silences it (docs/npu.md).
 *
 * Outputs.  Parameters named out_* are written on success and set to NULL
 * (or zeroed) on failure, so a failed call never leaves a half-made object.
 *
 * Versioned structs.  A struct that will grow starts with a uint32_t
 * struct_size: the options and descriptions you pass in
 * (tandem_runtime_options_t, tandem_kernel_desc_t, tandem_dispatch_desc_t,
 * tandem_npu_program_desc_t, tandem_external_memory_t for an import) and the
 * ones the library fills (tandem_device_info_t, tandem_kernel_info_t,
 * tandem_spec_constant_info_t,
 * tandem_npu_info_t, tandem_statistics_t, tandem_lane_info_t,
 * tandem_completion_profile_t, tandem_external_memory_t from an export);
 * tandem_vulkan.h lists its own, which follow the same rules. Set it with the struct's *_init
 * function (static inline in this header, so it is the struct's size as the
 * header you compile against declares it), or to sizeof(type) yourself,
 * before the struct goes into or comes out of a call. A struct_size above
 * 65536 is taken for an uninitialised field and refused.
 * The library reads and writes only the first struct_size bytes:
 *   - 0, or less than the oldest layout this library reads, is
 *     INVALID_ARGUMENT naming the struct and the fix ("set struct_size =
 *     sizeof(tandem_statistics_t)"); nothing is written to the struct;
 *   - larger than the library knows (a program built against a newer header):
 *     in a struct you pass in, every byte past the library's own size must be
 *     zero, else INVALID_ARGUMENT (you set a field this library does not
 *     have); in a struct the library fills, those bytes are set to zero.
 * struct_size itself is never changed by the library. Fields are only ever
 * appended, and a field added later has 0 as its default, so a program built
 * against an older header keeps working with a newer library. While the
 * SONAME is 0 (no release has shipped a struct_size yet) the oldest layout is
 * the current one. A struct tandem fills for your callback
 * (tandem_vulkan_scope_t) goes the other way: tandem sets its struct_size. Small value structs that travel in arrays
 * or are embedded (tandem_view_t, tandem_map_t, tandem_binding_contract_t,
 * tandem_spec_constant_t, tandem_access_decl_t, tandem_session_access_t,
 * tandem_lane_wait_t, tandem_region_profile_t, tandem_trace_event_t,
 * tandem_queue_family_info_t, tandem_buffer_memory_t) keep
 * their layout for the life of a SONAME; growing one is a new SONAME.
 *
 * Extension chains.  A versioned struct with a `next` member (as Vulkan's
 * pNext) takes what one backend alone understands in extension structs
 * chained from it, declared in that backend's header (tandem_xrt.h for
 * XRT). Each starts with the head tandem_chain_t: its own struct_size (the
 * rules above), its type tag (TANDEM_STRUCT_*, unique across tandem's
 * headers) and the next extension or NULL. An extension whose tag the
 * runtime's backend does not read, or one chained twice, is
 * INVALID_ARGUMENT naming the tag: nothing is silently ignored.
 *
 * Ownership.  Objects are opaque and reference-counted. A *_create function
 * returns an object with one reference that the caller owns and must give up
 * with the matching *_release (or *_destroy for the runtime). Accessors return
 * borrowed values that live as long as the object. An object that is in use by
 * the device (recorded in a graph, bound to in-flight work) is kept alive by
 * tandem until that use ends: releasing it early is always safe.
 *
 * Threads.  Functions documented as thread-safe may be called from any thread
 * at the same time. A function whose documentation says nothing about threads
 * is not thread-safe for the same object: serialise calls on that object.
 *
 * Blocking.  Only functions whose names or documentation say so block: the
 * blocking map functions and the completion waits. try_* functions never block
 * and return TANDEM_ERROR_BUSY when they would.
 *
 * Sizes.  Buffer sizes are 1 .. SIZE_MAX/2 bytes. Byte ranges are (offset,
 * length) pairs; every range is bounds-checked when it is made.
 *
 * Errors lines.  Each function's "Errors:" lists every code it can return and
 * when; tests/cts/test_errors.c provokes each one that can be provoked on a
 * real device and checks the code and the message. INVALID_ARGUMENT always
 * covers a NULL object or out-parameter. A function that says "Opens the GPU
 * if needed" can also fail as tandem_runtime_open_gpu does, and one that
 * opens the NPU as tandem_runtime_open_npu does. INTERNAL means a native
 * (Vulkan, XRT) call failed in a way tandem does not classify; the message
 * names the call.
 */

/*============================================================================
 * Status
 *============================================================================*/

/* One list makes both the enum and tandem_status_name(). */
#define TANDEM_STATUS_LIST(X)                                               \
  X(OK, 0, "success")                                                       \
  X(ERROR_INVALID_ARGUMENT, -1, "an argument is invalid")                   \
  X(ERROR_OUT_OF_RANGE, -2, "a size, offset or index is out of range")      \
  X(ERROR_UNSUPPORTED, -3, "not supported by this placement or device")     \
  X(ERROR_BUSY, -4, "would have to wait, or a fixed capacity is exhausted") \
  X(ERROR_OVER_BUDGET, -5, "the memory budget would be exceeded")           \
  X(ERROR_OUT_OF_MEMORY, -6, "host or device memory is exhausted")          \
  X(ERROR_CONTRACT, -7, "a kernel contract and its code or views disagree") \
  X(ERROR_INVALID_KERNEL, -8, "kernel code is malformed or unusable")       \
  X(ERROR_NO_DEVICE, -9, "no usable device")                                \
  X(ERROR_DEVICE_LOST, -10, "the device was lost")                          \
  X(ERROR_TIMEOUT, -11, "the wait timed out")                               \
  X(ERROR_CANCELLED, -12, "the work was cancelled")                         \
  X(ERROR_FAILED_DEPENDENCY, -13, "work this depends on failed")            \
  X(ERROR_IO, -14, "a file could not be read")                              \
  X(ERROR_UNIMPLEMENTED, -15, "not implemented by this backend")            \
  X(ERROR_INTERNAL, -16, "a native API call failed unexpectedly")

typedef enum tandem_status {
#define TANDEM__STATUS_ENUM(name, value, text) TANDEM_##name = value,
  TANDEM_STATUS_LIST(TANDEM__STATUS_ENUM)
#undef TANDEM__STATUS_ENUM
} tandem_status_t;

/* The constant's name without prefix ("ERROR_BUSY"), or "UNKNOWN".
 * Thread-safe; the string is static. */
TANDEM_API const char *tandem_status_name(tandem_status_t status);

/* A one-line description of the code itself ("the wait timed out").
 * Thread-safe; the string is static. */
TANDEM_API const char *tandem_status_describe(tandem_status_t status);

/* The library's version, "MAJOR.MINOR.PATCH" (the CMake project version it
 * was built from). A program built against this header can compare it with
 * TANDEM_VERSION_MAJOR/MINOR/PATCH to tell which libtandem it runs with.
 * Thread-safe; the string is static. */
TANDEM_API const char *tandem_version(void);

/* The message of the last failure on the calling thread, with the source
 * location that raised it; "" when this thread has seen no failure. The text
 * stays valid until the next tandem call on this thread. Thread-safe (each
 * thread has its own). */
TANDEM_API const char *tandem_error_message(void);

/*============================================================================
 * Memory budget
 *============================================================================
 *
 * A byte ceiling that one or more runtimes share. Every tracked allocation
 * reserves its size from the budget before it allocates device memory, and
 * gives it back when the buffer's last reference goes. A reservation that would
 * pass the limit fails with TANDEM_ERROR_OVER_BUDGET and allocates nothing.
 */

typedef struct tandem_budget tandem_budget_t;

/* Makes a budget of |limit_bytes| (1 .. SIZE_MAX/2). The caller owns one
 * reference. Errors: INVALID_ARGUMENT (out_budget NULL), OUT_OF_RANGE (limit),
 * OUT_OF_MEMORY. Thread-safe. */
TANDEM_API tandem_status_t tandem_budget_create(uint64_t limit_bytes, tandem_budget_t **out_budget);
/* Reference counting. NULL is ignored. Thread-safe. */
TANDEM_API void tandem_budget_retain(tandem_budget_t *budget);
TANDEM_API void tandem_budget_release(tandem_budget_t *budget);
/* The limit, and the bytes reserved right now. Thread-safe. */
TANDEM_API uint64_t tandem_budget_limit(const tandem_budget_t *budget);
TANDEM_API uint64_t tandem_budget_used(const tandem_budget_t *budget);

/*============================================================================
 * Runtime
 *============================================================================
 *
 * The allocation and scheduling domain: it owns the GPU device (opened lazily,
 * on the first call that needs it), the lanes, the statistics and the limits
 * below. Objects made from a runtime belong to it and cannot be mixed with
 * another runtime's.
 */

typedef struct tandem_runtime tandem_runtime_t;

/* Severity of a message from the Vulkan validation layer. */
typedef enum tandem_validation_severity {
  TANDEM_VALIDATION_INFO = 0,
  TANDEM_VALIDATION_WARNING = 1,
  TANDEM_VALIDATION_ERROR = 2,
} tandem_validation_severity_t;

/* How GPU and NPU see one SHARED buffer; negotiated per device pair, best
 * first (AUTO tries DMABUF_TO_GPU, HOST_POINTER, STAGED; DMABUF_TO_NPU is
 * only used when forced: unverified, and reported to fault on amdxdna).
 * SHARED buffers' NPU side is whole pages. Only STAGED copies bytes
 * (counted in copied_bytes). */
typedef enum tandem_sharing {
  TANDEM_SHARING_AUTO = 0,          /* option value: the best path tandem can prove */
  TANDEM_SHARING_DMABUF_TO_GPU = 1, /* NPU buffer exported as dma-buf, imported into Vulkan */
  TANDEM_SHARING_DMABUF_TO_NPU = 2, /* Vulkan memory exported, imported into XRT (xrtBOImport) */
  TANDEM_SHARING_HOST_POINTER = 3,  /* NPU buffer's mapping imported into Vulkan
                                       (VK_EXT_external_memory_host) */
  TANDEM_SHARING_STAGED = 4,        /* two allocations and explicit copies */
} tandem_sharing_t;

/* "auto", "dma-buf into GPU", ... Thread-safe. */
TANDEM_API const char *tandem_sharing_name(tandem_sharing_t sharing);

/* Called for every validation message of warning or error severity, on the
 * thread that made the Vulkan call. |message| is valid during the call only. */
typedef void (*tandem_validation_callback_t)(void *user_data, tandem_validation_severity_t severity,
                                             const char *message);

/* Several GPUs in one runtime (the runtime option gpus; docs/design.md,
 * "Several GPUs"). GPU g of a runtime (0 .. gpu_count - 1) is one device of
 * one backend; each has its own three lanes, queues and timelines. Buffers
 * and kernels are placed on a GPU when made (tandem_buffer_create_on, the
 * kernel description's gpu; GPU 0 by default, so a program that names none
 * runs as on a one-GPU runtime); a graph node runs on the GPU of what it
 * touches, and a node that touches two GPUs' buffers is refused, naming both,
 * except a copy between them (tandem_graph_add_copy: staged through host
 * memory, two nodes). Dependencies are inferred across GPUs as across lanes: a node on
 * GPU 1 that reads what GPU 0 wrote waits for it, and fails with it.
 * tandem_runtime_gpu_pair (below) says which path a pair of GPUs takes. */
#define TANDEM_MAX_GPUS 4

typedef struct tandem_gpu_choice {
  const char *backend; /* as the option gpu_backend: NULL ("vulkan"), "vulkan", "host" */
  uint32_t index;      /* the backend's enumeration index, as the option gpu_index */
} tandem_gpu_choice_t;

/* Described in tandem_vulkan.h (the runtime option vulkan_device). */
struct tandem_vulkan_device;

typedef struct tandem_runtime_options {
  uint32_t struct_size; /* sizeof(tandem_runtime_options_t): see Conventions */
  /* Extensions (Conventions, "Extension chains") the NPU backend reads: for
   * XRT, tandem_xrt_runtime_options_t (tandem_xrt.h: the NPU profile). One
   * chained to a runtime without an NPU backend is INVALID_ARGUMENT. They
   * are read during tandem_runtime_create only. */
  const void *next;
  /* Which GPU backend runs the GPU lanes, by name: NULL or "vulkan", or
   * "host": the host GPU, a test and development device on host memory and
   * threads (never hardware; it runs tandem's test kernels, registered with
   * tandem_testing.h, not SPIR-V of its own). The NPU backend is chosen by
   * name too (the option npu_backend, below).
   * tandem_runtime_create fails with INVALID_ARGUMENT for an unknown name,
   * listing the known ones. The string need not outlive the call. */
  const char *gpu_backend;
  /* Which Vulkan physical device, in the loader's enumeration order.
   * Default 0. Checked when the GPU opens (NO_DEVICE if absent). */
  uint32_t gpu_index;
  /* How many submissions may be in flight at once across the runtime. A
   * submission beyond it fails with BUSY; nothing grows. 1 .. 65536, default 64. */
  uint32_t max_submissions;
  /* In-flight instances per executable graph (1 .. 1024, default 2). */
  uint32_t graph_slots;
  /* Optional shared budget; the runtime keeps a reference. NULL: unlimited. */
  tandem_budget_t *budget;
  /* Enable the Khronos validation layer with synchronization validation.
   * Also enabled by the environment variable TANDEM_VALIDATION=1; when the
   * variable turns it on and validation_callback is NULL, each message is
   * printed to stderr ("tandem: validation error: ..."). Opening the GPU
   * fails with UNSUPPORTED when the layer is not installed. */
  bool validation;
  /* Record GPU timestamps at the start and end of every region, for
   * tandem_completion_profile and traces. Costs two timestamp writes per region
   * and a query reset per submission (on a software driver that can double a
   * short submission's round trip: docs/design.md, "Measured costs"), so it
   * is off by default; TANDEM_GPU_TIMESTAMPS=1 also turns it on, and so
   * does tandem_runtime_trace_start before the GPU opens. */
  bool gpu_timestamps;
  /* The NPU: its backend by name (below), device index,
   * the emulated device's library (NULL: TANDEM_NPU_LIBRARY, else
   * libtandem_npu_emu.so.0 beside libtandem, else on the loader's path),
   * the watchdog for one NPU
   * run (default 10000 ms; a run that exceeds it fails and its dependents
   * fail, the GPU never hangs; an XDNA driver's own hang detection resets the
   * NPU well before the default (docs/npu.md), which ends the run first as
   * an NPU fault,
   * DEVICE_LOST), and the sharing path (AUTO or a forced one;
   * forcing a path the pair cannot do makes opening the NPU UNSUPPORTED).
   * npu_backend: NULL or "" (default): no NPU; "xrt": the system's XRT and
   * its NPU device npu_index; "emulated": tandem's emulated NPU
   * (libtandem_npu_emu.so), a test and development device that runs kernels
   * on the CPU through the same XRT code path, never chosen silently and
   * always reporting itself as emulated. TANDEM_NPU=<name> overrides
   * ("none": no NPU). tandem_runtime_create fails with INVALID_ARGUMENT for
   * an unknown name, listing the known ones. The string need not outlive
   * the call. */
  const char *npu_backend;
  uint32_t npu_index;
  const char *npu_library;
  uint32_t npu_timeout_ms;
  tandem_sharing_t sharing;
  /* Receives validation messages (warning and error severity). May be NULL;
   * the messages are counted either way (tandem_runtime_validation_messages). */
  tandem_validation_callback_t validation_callback;
  void *validation_user_data;
  /* How long a completion wait polls the lanes' timelines before it blocks in
   * the driver, in µs (0 .. 100000, default 50; TANDEM_WAIT_SPIN_US
   * overrides). Work that finishes within it is seen as soon as it finishes
   * (a blocking wait adds the driver's wake-up latency: docs/design.md,
   * "Measured costs"); the price
   * is up to that much CPU time per wait on the waiting thread. 0: block at
   * once. */
  uint32_t wait_spin_us;
  /* Make the lanes' timeline semaphores exportable as opaque fds, for
   * tandem_runtime_export_timeline_fd (see Sharing). Needs
   * VK_KHR_external_semaphore_fd; without it the GPU still opens and the
   * export fails with UNSUPPORTED. Off by default: an exportable semaphore
   * may take a different path in the driver, and tandem does not make every
   * runtime pay for a feature few use. */
  bool export_timelines;
  /* Run on the application's own Vulkan device instead of opening one
   * (tandem_vulkan.h, "Bring your own device"). NULL (default): tandem creates
   * its instance and device. When set, tandem_runtime_create opens the GPU at
   * once on it and reads the description only during that call; gpu_index,
   * validation (and TANDEM_VALIDATION) and the validation callback do not
   * apply: validation is the application's instance's business. */
  const struct tandem_vulkan_device *vulkan_device;
  /* Several GPUs (see TANDEM_MAX_GPUS above): GPU g is gpus[g], for g below
   * gpu_count (0 .. TANDEM_MAX_GPUS). 0 (default): one GPU, the option
   * gpu_backend's device gpu_index. With gpu_count set, gpu_backend must be
   * NULL and gpu_index 0 (one choice, not two) and vulkan_device is refused;
   * the same device may not be named twice. Each GPU opens when first used
   * (tandem_runtime_open_gpu_at). The NPU, interop (tandem_vulkan.h) and
   * sessions work with GPU 0 only. */
  uint32_t gpu_count;
  tandem_gpu_choice_t gpus[TANDEM_MAX_GPUS];
} tandem_runtime_options_t;

/* Fills |options| with the defaults above and sets struct_size. NULL is
 * ignored. Errors: none. */
static inline void tandem_runtime_options_init(tandem_runtime_options_t *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->struct_size = (uint32_t)sizeof *options;
  options->max_submissions = 64;
  options->graph_slots = 2;
  options->npu_timeout_ms = 10000;
  options->sharing = TANDEM_SHARING_AUTO;
  options->wait_spin_us = 50;
}

/* Makes a runtime. The GPU is not opened yet, unless options->vulkan_device
 * is set: then it is opened now, on that device. |options| may be NULL for
 * the defaults. Errors: INVALID_ARGUMENT (an option out of range or not a
 * value of its enum, a gpu_backend or npu_backend no backend has, or a malformed
 * TANDEM_WAIT_SPIN_US, with its name and the allowed range or names; a
 * struct_size that is 0, too small, or larger with a non-zero tail, see
 * Conventions; a vulkan_device with a NULL handle, a physical device not of
 * its instance, or a lane's queue family or index outside the device's,
 * named), UNSUPPORTED (vulkan_device with a gpu_backend that cannot run on
 * an application's device; vulkan_device: Vulkan below 1.3, or a feature or
 * extension tandem needs that the device was not created with, each named
 * with the fix; a get_instance_proc_addr of another loader), OUT_OF_MEMORY,
 * and from opening the application's device NO_DEVICE (no Vulkan loader),
 * DEVICE_LOST, INTERNAL (the driver refused tandem's semaphores or pools). */
TANDEM_API tandem_status_t tandem_runtime_create(const tandem_runtime_options_t *options,
                                                 tandem_runtime_t **out_runtime);

/* Gives up the caller's reference. Buffers, kernels, graphs and completions
 * made from the runtime keep it alive; the device closes when the last of them
 * is released. Waits for nothing: release completions to let it close. NULL is
 * ignored. */
TANDEM_API void tandem_runtime_destroy(tandem_runtime_t *runtime);

/* Number of validation messages of warning or error severity seen so far.
 * Thread-safe. */
TANDEM_API uint64_t tandem_runtime_validation_messages(const tandem_runtime_t *runtime);

/* Gives back the memory the runtime keeps for reuse. When an executable is
 * freed (tandem_exec_release), the Vulkan backend keeps its descriptor pool
 * (an executable has one when a dispatch uses descriptor sets: an adopted
 * kernel's, or any on a device without TANDEM_GPU_PUSH_DESCRIPTORS)
 * for the next tandem_graph_prepare whose descriptor sets fit in it — the
 * two largest such pools, each sized for its graph's dispatches times its
 * graph_slots (hundreds of bytes per dispatch and slot) — because a prepare
 * that reuses one is several times cheaper than one that makes a new one
 * (docs/design.md, "Measured costs"). Call
 * this after preparing a large graph you will not prepare again, or when
 * memory is short; kept pools are also freed with the runtime. Never
 * affects an executable that exists. Errors: INVALID_ARGUMENT (NULL).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_trim(tandem_runtime_t *runtime);

/*============================================================================
 * Devices
 *============================================================================*/

#define TANDEM_MAX_QUEUE_FAMILIES 16

typedef enum tandem_queue_caps {
  TANDEM_QUEUE_GRAPHICS = 1u << 0,
  TANDEM_QUEUE_COMPUTE = 1u << 1,
  TANDEM_QUEUE_TRANSFER = 1u << 2,
  TANDEM_QUEUE_TIMESTAMPS = 1u << 3,
} tandem_queue_caps_t;

/* Extensions and features tandem uses or negotiates, as queried from the device. */
typedef enum tandem_gpu_feature {
  TANDEM_GPU_TIMELINE_SEMAPHORE = 1u << 0,
  TANDEM_GPU_SYNCHRONIZATION2 = 1u << 1,
  TANDEM_GPU_EXTERNAL_MEMORY_FD = 1u << 2,
  TANDEM_GPU_EXTERNAL_MEMORY_DMA_BUF = 1u << 3,
  TANDEM_GPU_EXTERNAL_MEMORY_HOST = 1u << 4,
  TANDEM_GPU_EXTERNAL_SEMAPHORE_FD = 1u << 5,
  TANDEM_GPU_CALIBRATED_TIMESTAMPS = 1u << 6,
  TANDEM_GPU_BUFFER_DEVICE_ADDRESS = 1u << 7,
  /* VK_KHR_push_descriptor with room for TANDEM_MAX_BINDINGS: tandem's own
   * kernels then push their bindings into the command buffer at each
   * dispatch instead of drawing descriptor sets from a pool */
  TANDEM_GPU_PUSH_DESCRIPTORS = 1u << 8,
  /* VK_EXT_pipeline_robustness with pipelineRobustness: kernels may turn
   * buffer robustness off (TANDEM_KERNEL_DISABLE_ROBUSTNESS) */
  TANDEM_GPU_PIPELINE_ROBUSTNESS = 1u << 9,
} tandem_gpu_feature_t;

/* Optional shader capabilities, as the device reports them. Every one the
 * device supports is enabled when tandem opens it; a kernel whose SPIR-V needs
 * one the device lacks is refused with UNSUPPORTED naming it. One list makes
 * the enum and tandem_shader_feature_name().
 *
 * The two clocks come with VK_KHR_shader_clock (enabled where the device
 * offers it) and its features; a kernel declaring SPIR-V capability
 * ShaderClockKHR needs the clock of each OpReadClockKHR it makes, by scope:
 * SUBGROUP_CLOCK for Subgroup (GLSL GL_ARB_shader_clock's clockARB,
 * clock2x32ARB), DEVICE_CLOCK for Device (GL_EXT_shader_realtime_clock's
 * clockRealtimeEXT, clockRealtime2x32EXT); one that reads neither needs
 * SUBGROUP_CLOCK, which every device with the extension has. The counters
 * tick in no stated unit: only differences mean anything, and a subgroup
 * clock's only between reads of the same subgroup (the device clock's
 * across the device).
 *
 * LOCAL_SIZE_ID is Vulkan 1.3's maintenance4, which a module whose entry
 * point takes its workgroup size from the LocalSizeId execution mode
 * (glslang's local_size_x_id for SPIR-V 1.6) needs. */
#define TANDEM_SHADER_FEATURE_LIST(X)                                          \
  X(FLOAT16, 0, "float16") /* shaderFloat16 (Float16) */                       \
  X(INT8, 1, "int8")       /* shaderInt8 (Int8) */                             \
  X(INT16, 2, "int16")     /* shaderInt16 (Int16) */                           \
  X(INT64, 3, "int64")     /* shaderInt64 (Int64) */                           \
  X(FLOAT64, 4, "float64") /* shaderFloat64 (Float64) */                       \
  X(STORAGE_BUFFER_16BIT, 5, "storageBuffer16BitAccess")                       \
  X(UNIFORM_AND_STORAGE_BUFFER_16BIT, 6, "uniformAndStorageBuffer16BitAccess") \
  X(PUSH_CONSTANT_16BIT, 7, "storagePushConstant16")                           \
  X(STORAGE_BUFFER_8BIT, 8, "storageBuffer8BitAccess")                         \
  X(UNIFORM_AND_STORAGE_BUFFER_8BIT, 9, "uniformAndStorageBuffer8BitAccess")   \
  X(PUSH_CONSTANT_8BIT, 10, "storagePushConstant8")                            \
  X(SUBGROUP_BASIC, 11, "subgroup basic") /* in compute shaders */             \
  X(SUBGROUP_VOTE, 12, "subgroup vote")                                        \
  X(SUBGROUP_ARITHMETIC, 13, "subgroup arithmetic")                            \
  X(SUBGROUP_BALLOT, 14, "subgroup ballot")                                    \
  X(SUBGROUP_SHUFFLE, 15, "subgroup shuffle")                                  \
  X(SUBGROUP_SHUFFLE_RELATIVE, 16, "subgroup shuffle relative")                \
  X(SUBGROUP_CLUSTERED, 17, "subgroup clustered")                              \
  X(SUBGROUP_QUAD, 18, "subgroup quad")                                        \
  X(SUBGROUP_EXTENDED_TYPES, 19, "shaderSubgroupExtendedTypes")                \
  X(SUBGROUP_SIZE_CONTROL, 20, "subgroupSizeControl")                          \
  X(INT64_ATOMICS, 21, "shaderBufferInt64Atomics")                             \
  X(VULKAN_MEMORY_MODEL, 22, "vulkanMemoryModel")                              \
  X(VULKAN_MEMORY_MODEL_DEVICE_SCOPE, 23, "vulkanMemoryModelDeviceScope")      \
  X(INTEGER_DOT_PRODUCT, 24, "shaderIntegerDotProduct")                        \
  X(FULL_SUBGROUPS, 25, "computeFullSubgroups")                                \
  X(SUBGROUP_CLOCK, 26, "shaderSubgroupClock") /* OpReadClockKHR, Subgroup */  \
  X(DEVICE_CLOCK, 27, "shaderDeviceClock")     /* OpReadClockKHR, Device */    \
  X(LOCAL_SIZE_ID, 28, "maintenance4")         /* the LocalSizeId mode */

typedef enum tandem_shader_feature {
#define TANDEM__SHADER_FEATURE_ENUM(name, bit, text) TANDEM_SHADER_##name = 1u << (bit),
  TANDEM_SHADER_FEATURE_LIST(TANDEM__SHADER_FEATURE_ENUM)
#undef TANDEM__SHADER_FEATURE_ENUM
} tandem_shader_feature_t;

/* The Vulkan name of one feature bit ("storageBuffer16BitAccess"), or
 * "unknown". Thread-safe; the string is static. */
TANDEM_API const char *tandem_shader_feature_name(tandem_shader_feature_t feature);

typedef struct tandem_queue_family_info {
  uint32_t caps;        /* tandem_queue_caps_t bits */
  uint32_t queue_count; /* queues in the family */
} tandem_queue_family_info_t;

typedef struct tandem_device_info {
  uint32_t struct_size; /* sizeof(tandem_device_info_t): see Conventions */
  uint32_t index;       /* enumeration index (the runtime option gpu_index) */
  char name[256];
  char driver_name[256]; /* e.g. "llvmpipe", "NVIDIA" */
  char driver_info[256]; /* driver version string as the driver reports it */
  uint32_t api_version;  /* Vulkan version; see TANDEM_VERSION_* below */
  uint32_t vendor_id, device_id;
  bool is_cpu;       /* a software implementation (lavapipe) */
  uint32_t features; /* tandem_gpu_feature_t bits */
  uint32_t queue_family_count;
  tandem_queue_family_info_t queue_families[TANDEM_MAX_QUEUE_FAMILIES];
  uint64_t device_local_bytes; /* largest device-local heap */
  double timestamp_period_ns;  /* GPU timestamp tick, 0 if none */
  /* Kernel limits and optional shader features (all enabled when the device
   * is opened by a runtime). */
  uint32_t shader_features;                      /* tandem_shader_feature_t bits */
  uint32_t max_local_size[3];                    /* maxComputeWorkGroupSize */
  uint32_t max_local_invocations;                /* maxComputeWorkGroupInvocations */
  uint32_t max_workgroups[3];                    /* maxComputeWorkGroupCount */
  uint32_t subgroup_size;                        /* the default subgroup size */
  uint32_t min_subgroup_size, max_subgroup_size; /* with SUBGROUP_SIZE_CONTROL */
  uint32_t max_shared_memory_bytes;              /* maxComputeSharedMemorySize */
  /* Vulkan's deviceUUID and driverUUID (VkPhysicalDeviceIDProperties): two
   * devices can import each other's opaque-fd memory and timelines only when
   * both match. Zero on the host GPU. */
  uint8_t device_uuid[16], driver_uuid[16];
} tandem_device_info_t;

/* Zeroes |info| and sets struct_size, ready for tandem_runtime_gpu_info.
 * NULL is ignored. Errors: none. */
static inline void tandem_device_info_init(tandem_device_info_t *info) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->struct_size = (uint32_t)sizeof *info;
}

#define TANDEM_VERSION_MAJOR_OF(v) (((uint32_t)(v) >> 22) & 0x7Fu)
#define TANDEM_VERSION_MINOR_OF(v) (((uint32_t)(v) >> 12) & 0x3FFu)
#define TANDEM_VERSION_PATCH_OF(v) ((uint32_t)(v)&0xFFFu)

/* Number of Vulkan devices the loader reports. Does not open the runtime's GPU.
 * Errors: INVALID_ARGUMENT, NO_DEVICE (no Vulkan loader or driver, or a loader
 * older than Vulkan 1.3), OUT_OF_MEMORY, INTERNAL. */
TANDEM_API tandem_status_t tandem_runtime_gpu_count(tandem_runtime_t *runtime, uint32_t *out_count);
/* Describes device |index| (not necessarily the runtime's own) of GPU 0's
 * backend; for the runtime's other GPUs see tandem_runtime_gpu_describe. Set
 * out_info->struct_size first (tandem_device_info_init). Errors:
 * INVALID_ARGUMENT (also a bad struct_size), OUT_OF_RANGE (index, with the
 * device count), NO_DEVICE, OUT_OF_MEMORY, INTERNAL. */
TANDEM_API tandem_status_t tandem_runtime_gpu_info(tandem_runtime_t *runtime, uint32_t index,
                                                   tandem_device_info_t *out_info);
/* Opens the runtime's GPU if it is not open yet. Every call that needs the GPU
 * does this itself; calling it first moves the cost (and any NO_DEVICE error)
 * to a place of your choosing. A failed open is not remembered: the next call
 * tries again. Errors: INVALID_ARGUMENT, NO_DEVICE (no loader or driver,
 * gpu_index past the devices, or a device without Vulkan 1.3, timeline
 * semaphores and synchronization2), UNSUPPORTED (validation asked for and the
 * layer not installed), OUT_OF_MEMORY, DEVICE_LOST, INTERNAL. Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_open_gpu(tandem_runtime_t *runtime);

/* How many GPUs the runtime has (the option gpu_count, or 1). 0 for NULL.
 * Thread-safe. */
TANDEM_API uint32_t tandem_runtime_gpus(const tandem_runtime_t *runtime);
/* Opens the runtime's GPU |gpu| (0 .. tandem_runtime_gpus - 1) if it is not
 * open yet, as tandem_runtime_open_gpu does GPU 0. Errors: those of
 * tandem_runtime_open_gpu, and OUT_OF_RANGE (gpu). Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_open_gpu_at(tandem_runtime_t *runtime, uint32_t gpu);
/* Describes the runtime's GPU |gpu| into |out_info| (its backend's device;
 * out_info->index is that backend's enumeration index), opening nothing.
 * Errors: INVALID_ARGUMENT, OUT_OF_RANGE (gpu), and those of
 * tandem_runtime_gpu_info. Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_gpu_describe(tandem_runtime_t *runtime, uint32_t gpu,
                                                       tandem_device_info_t *out_info);
/* The name of the backend GPU |gpu| runs on ("vulkan", "host"), or NULL for
 * a bad runtime or gpu. The string is static. Thread-safe. */
TANDEM_API const char *tandem_runtime_gpu_backend(const tandem_runtime_t *runtime, uint32_t gpu);

/* How work crosses from one GPU of a runtime to another: the path a copy
 * between them takes and how a node on one waits for the other's lanes,
 * with the choice in words, as tandem_npu_info_t reports the GPU-NPU path. */
typedef struct tandem_gpu_pair_info {
  uint32_t struct_size; /* sizeof(tandem_gpu_pair_info_t): see Conventions */
  /* Whether tandem_graph_add_copy can copy between the two (false when one
   * cannot import host memory: the copy is UNSUPPORTED, |reason| names it). */
  bool can_copy;
  /* The copy's path when it can: STAGED, host memory both GPUs import, a
   * download on the source GPU and an upload on the destination, each node
   * counting its bytes as copied. Peer memory (one GPU reading the other's
   * directly) is not built: |reason| says what the pair would need. */
  tandem_sharing_t copy;
  /* Whether a node on one GPU waits for the other's lanes on the GPU. false:
   * through the relay, a host thread that signals a timeline of the waiting
   * GPU as the other GPU's lanes advance (docs/design.md, "Several GPUs");
   * nothing waits on the host in the caller's thread either way. */
  bool waits_on_gpu;
  /* The two devices, the paths chosen and why nothing better, in words. */
  char reason[768];
} tandem_gpu_pair_info_t;

/* Zeroes |info| and sets struct_size, ready for tandem_runtime_gpu_pair.
 * NULL is ignored. */
static inline void tandem_gpu_pair_info_init(tandem_gpu_pair_info_t *info) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->struct_size = (uint32_t)sizeof *info;
}

/* Describes how work crosses between the runtime's GPUs |from| and |to|
 * (the same answer either way round) into |out_info|, opening both if
 * needed. Errors: INVALID_ARGUMENT (NULL, a bad struct_size, |from| equal to
 * |to|), OUT_OF_RANGE (a GPU past the runtime's), and those of
 * tandem_runtime_open_gpu_at. Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_gpu_pair(tandem_runtime_t *runtime, uint32_t from,
                                                   uint32_t to, tandem_gpu_pair_info_t *out_info);

/*============================================================================
 * Buffers and views
 *============================================================================
 *
 * A buffer is device memory with a placement:
 *   GPU_LOCAL     device memory, never mapped by the host; move data in and out
 *                 with copy nodes through a HOST_VISIBLE buffer.
 *   HOST_VISIBLE  coherent memory the host maps and the GPU reads and writes.
 *   SHARED        one allocation seen by GPU and NPU with zero copies where the
 *                 sharing path allows (see tandem_sharing_t); host-mapped.
 *   NPU_LOCAL     an NPU buffer object, host-mapped; GPU nodes refuse it.
 * SHARED and NPU_LOCAL need a runtime with an NPU (option npu_backend).
 *
 * Which Vulkan memory type a placement gets (tandem_buffer_memory says, per
 * buffer):
 *   GPU_LOCAL     DEVICE_LOCAL, preferring a type the host cannot map.
 *   HOST_VISIBLE  HOST_VISIBLE|HOST_COHERENT, preferring first a type that is
 *                 not DEVICE_LOCAL, then HOST_CACHED. On a discrete GPU a
 *                 DEVICE_LOCAL|HOST_VISIBLE type is the PCIe BAR window into
 *                 VRAM: the host reads it uncached (orders of magnitude slower
 *                 than system memory: docs/design.md, "Measured costs") and
 *                 GPU copies into it never cross the link, so a buffer the
 *                 host reads back must not live there. A device-local type is
 *                 taken only when every coherent host-visible type is one
 *                 (integrated GPUs, lavapipe: there it is system memory).
 *                 HOST_CACHED makes host reads run at memory speed, and the
 *                 GPU's copies reach system memory either way. Upload sources
 *                 and download targets get the same type: any HOST_VISIBLE
 *                 buffer may be mapped for reading, so there is no placement
 *                 for "the host only writes this".
 *   SHARED        decided by the sharing path (tandem_sharing_t); host-pointer
 *                 imports prefer HOST_COHERENT, then HOST_CACHED memory.
 * Every buffer starts zero-filled. A view names a byte range of a buffer; views
 * are plain values that borrow the buffer (they do not retain it).
 */

typedef struct tandem_buffer tandem_buffer_t;

typedef enum tandem_placement {
  TANDEM_PLACEMENT_GPU_LOCAL = 0,
  TANDEM_PLACEMENT_HOST_VISIBLE = 1,
  TANDEM_PLACEMENT_SHARED = 2,
  TANDEM_PLACEMENT_NPU_LOCAL = 3,
} tandem_placement_t;

/* "GPU_LOCAL", "HOST_VISIBLE", ... or "UNKNOWN". Thread-safe. */
TANDEM_API const char *tandem_placement_name(tandem_placement_t placement);

typedef struct tandem_view {
  tandem_buffer_t *buffer;
  uint64_t offset;
  uint64_t length;
} tandem_view_t;

/* Allocates |size| bytes (1 .. SIZE_MAX/2) with |placement|, zero-filled. Opens
 * the GPU if needed, and for SHARED and NPU_LOCAL the NPU. The budget is
 * charged before device memory is touched. Errors: OUT_OF_RANGE (size),
 * INVALID_ARGUMENT (placement), UNSUPPORTED (SHARED and NPU_LOCAL on a runtime
 * without an NPU; no memory type for the placement), OVER_BUDGET,
 * OUT_OF_MEMORY (also: larger than the device's heap, largest allocation or
 * largest buffer, with the numbers), DEVICE_LOST (zero-filling a GPU_LOCAL buffer),
 * IO (the NPU's zero-fill sync failed), INTERNAL. Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_create(tandem_runtime_t *runtime, uint64_t size,
                                                tandem_placement_t placement,
                                                tandem_buffer_t **out_buffer);
/* As tandem_buffer_create, on the runtime's GPU |gpu| (tandem_buffer_create is
 * GPU 0). SHARED and NPU_LOCAL buffers live on GPU 0, beside the NPU: for
 * another GPU they are INVALID_ARGUMENT. Errors: also OUT_OF_RANGE (gpu). */
TANDEM_API tandem_status_t tandem_buffer_create_on(tandem_runtime_t *runtime, uint32_t gpu,
                                                   uint64_t size, tandem_placement_t placement,
                                                   tandem_buffer_t **out_buffer);
/* The runtime's GPU the buffer's memory is on. 0 for NULL. Thread-safe. */
TANDEM_API uint32_t tandem_buffer_gpu(const tandem_buffer_t *buffer);
/* Reference counting. The memory (and its budget reservation) goes back when
 * the last reference is dropped and no in-flight work uses it. NULL is ignored.
 * Thread-safe. */
TANDEM_API void tandem_buffer_retain(tandem_buffer_t *buffer);
TANDEM_API void tandem_buffer_release(tandem_buffer_t *buffer);
/* Size and placement. Thread-safe. */
TANDEM_API uint64_t tandem_buffer_size(const tandem_buffer_t *buffer);
TANDEM_API tandem_placement_t tandem_buffer_placement(const tandem_buffer_t *buffer);

/* Memory property bits of tandem_buffer_memory_t.properties: the values of
 * Vulkan's VkMemoryPropertyFlagBits (other bits the driver sets are kept). */
typedef enum tandem_memory_property {
  TANDEM_MEMORY_DEVICE_LOCAL = 1u << 0,
  TANDEM_MEMORY_HOST_VISIBLE = 1u << 1,
  TANDEM_MEMORY_HOST_COHERENT = 1u << 2,
  TANDEM_MEMORY_HOST_CACHED = 1u << 3,
} tandem_memory_property_t;

/* Where a buffer's GPU memory lives, as vkGetPhysicalDeviceMemoryProperties
 * numbers it. */
typedef struct tandem_buffer_memory {
  uint32_t memory_type;   /* index into VkPhysicalDeviceMemoryProperties.memoryTypes */
  uint32_t properties;    /* that type's VkMemoryPropertyFlags */
  uint32_t heap;          /* its heapIndex */
  uint64_t heap_bytes;    /* that heap's size */
  bool heap_device_local; /* the heap is VK_MEMORY_HEAP_DEVICE_LOCAL_BIT */
} tandem_buffer_memory_t;

/* Fills |out| for |buffer| (see "Which Vulkan memory type" above). Errors:
 * INVALID_ARGUMENT (NULL), UNSUPPORTED (NPU_LOCAL: no GPU memory; |out| then
 * holds UINT32_MAX type and heap). Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_memory(const tandem_buffer_t *buffer,
                                                tandem_buffer_memory_t *out);

/* Makes the view (buffer, offset, length). length must be ≥ 1 and the range
 * inside the buffer. Errors: INVALID_ARGUMENT (NULL), OUT_OF_RANGE (with the
 * numbers). Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_view(tandem_buffer_t *buffer, uint64_t offset,
                                              uint64_t length, tandem_view_t *out_view);
/* The view of the whole buffer. Thread-safe. */
TANDEM_API tandem_view_t tandem_buffer_whole(tandem_buffer_t *buffer);

/*============================================================================
 * Host maps (read and write guards)
 *============================================================================
 *
 * A map gives the host a pointer to a view of a HOST_VISIBLE, SHARED or
 * NPU_LOCAL buffer for as long
 * as it lives. Read maps are shared, write maps exclusive:
 *   - a read map conflicts with overlapping write maps and with in-flight
 *     device work that writes the range;
 *   - a write map conflicts with any overlapping map and with in-flight device
 *     work that reads or writes the range.
 * The blocking forms wait for exactly the conflicting device work; a
 * conflicting live map is reported as BUSY even then, because waiting for
 * another host map could deadlock the caller. The try_ forms never block.
 * While a map lives, a submission that touches its range in a conflicting way
 * fails with BUSY and is not started.
 * Mapping a GPU_LOCAL buffer fails with UNSUPPORTED: copy it to a HOST_VISIBLE
 * buffer with a copy node and map that.
 * Failure: maps of poisoned bytes fail with FAILED_DEPENDENCY (DEVICE_LOST
 * after a loss), and a map waits until every submission writing its bytes
 * retired, so it sees that submission's result; a write map clears the
 * poison of its range. The whole model is in the Completions section.
 * The tandem_map_t is caller storage; copying it is fine, unmapping it twice
 * is not.
 */

typedef struct tandem_map {
  void *data;      /* first byte of the view; const for read maps */
  uint64_t length; /* the view's length */
  /* private: which buffer, which registration, read or write */
  tandem_buffer_t *buffer_;
  uint64_t id_;
  int mode_;
} tandem_map_t;

/* Blocking maps. |out_map| is caller storage. Errors: INVALID_ARGUMENT (no
 * buffer), OUT_OF_RANGE (a view not inside its buffer), UNSUPPORTED
 * (placement), BUSY (a conflicting live map), DEVICE_LOST and
 * FAILED_DEPENDENCY (the work that last wrote the range failed; the bytes are
 * poisoned; DEVICE_LOST also when waiting for that work failed),
 * OUT_OF_MEMORY. Thread-safe. */
TANDEM_API tandem_status_t tandem_map_read(tandem_view_t view, tandem_map_t *out_map);
TANDEM_API tandem_status_t tandem_map_write(tandem_view_t view, tandem_map_t *out_map);
/* As above, but BUSY instead of waiting for device work. Never block.
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_try_map_read(tandem_view_t view, tandem_map_t *out_map);
TANDEM_API tandem_status_t tandem_try_map_write(tandem_view_t view, tandem_map_t *out_map);
/* Ends the map; |map| is zeroed. Unmapping a zeroed map does nothing.
 * Thread-safe. */
TANDEM_API void tandem_unmap(tandem_map_t *map);

/*============================================================================
 * Kernels and contracts
 *============================================================================
 *
 * A GPU kernel is a SPIR-V compute shader with one entry point and a
 * contract. Binding i of the contract is descriptor (set 0, binding i), a
 * storage buffer. The contract states per binding the bytes the kernel may
 * touch, the required offset alignment of the view bound there and whether it
 * reads, writes or both; and the exact push-constant size.
 *
 * What the access modes promise (the tracker and the NPU lane rely on it):
 *   READ        the kernel only reads the binding. The shader must declare it
 *               readonly (NonWritable).
 *   WRITE       the kernel overwrites every declared byte and never reads the
 *               old contents. The shader must declare it writeonly
 *               (NonReadable); a buffer the shader may read is READ_WRITE.
 *   READ_WRITE  anything inside the declared bytes.
 *
 * At load, tandem validates and reflects the SPIR-V and rejects any
 * disagreement with CONTRACT: binding count or numbering, push-constant size,
 * a READ binding the shader may write, a WRITE binding the shader may read.
 * At record time each view is checked against its binding: offset a multiple
 * of alignment, and a length that matches the binding's bytes (below). The
 * contract is trusted for what the kernel does inside the declared bytes;
 * memory reached any other way (device addresses) is refused at load.
 *
 * Fixed or view-sized bytes.  A binding's bytes is either a fixed size or
 * TANDEM_BYTES_VIEW (0): "the bound view's length".
 *   fixed       the view must be exactly |bytes| long: shorter is CONTRACT
 *               ("view is 64 bytes, contract needs 4096"), and so is longer,
 *               naming both sizes — a longer view would be bound and tracked
 *               only as far as the contract, and a kernel that sizes its work
 *               by the buffer (arrayLength) or the dispatch would silently
 *               compute part of it. Bind a sub-view (tandem_buffer_view) to
 *               use part of a buffer.
 *   view-sized  one kernel serves every size: the descriptor is bound to the
 *               view's range, the tracker orders exactly the view's bytes
 *               (READ reads all of them, WRITE overwrites all of them), and
 *               tandem_exec_set_view may give a view of another length on
 *               any submission. A view longer than the device's
 *               maxStorageBufferRange is UNSUPPORTED.
 * The kernel is still trusted to stay inside what it is bound to; shaders
 * usually learn the size from a push constant or arrayLength().
 *
 * Contracts from the shader.  With TANDEM_KERNEL_CONTRACT_FROM_SHADER (and
 * bindings NULL, binding_count 0) the contract is what the shader says: one
 * view-sized binding per storage buffer it declares, alignment 4, READ where
 * the buffer is declared readonly and READ_WRITE otherwise — also where it is
 * writeonly, because WRITE promises that every byte of the view is
 * overwritten, which no qualifier says (declare the contract yourself to
 * promise it); and push_constant_bytes as the shader declares them when the
 * desc gives 0. tandem_kernel_info reports the counts. Everything else
 * (numbering, descriptor types, sets) is checked as for a written contract.
 *
 * Specialization constants.  Every OpSpecConstant with a SpecId is reflected
 * (tandem_kernel_spec_constant_info lists each one's id, name, type, default
 * and the value the pipeline was built with). Values given in the desc are
 * checked: a value whose type does not fit the declared one (bool, 32- or
 * 64-bit integer or float; a signed/unsigned integer is accepted when the
 * value is representable; a bool also takes a 4-byte 0 or 1, Vulkan's
 * VkBool32, as INT32 or UINT32, and any other 4-byte value is refused naming
 * the constant) is CONTRACT. A value for an id the module does not declare is
 * accepted and ignored, as Vulkan ignores such a VkSpecializationMapEntry
 * (optimising compilers strip unused constants while runtimes still pass
 * them); tandem_kernel_info_t.ignored_spec_ids lists those ids. With
 * TANDEM_KERNEL_STRICT_SPEC_IDS such an id is CONTRACT instead, naming it and
 * the ids the module declares (to catch typos). One SpecId may name several constants (glslang
 * emits `layout(local_size_x_id = 0) in;` and `layout(constant_id = 0) const
 * uint BLOCK = 32;` as two constants with SpecId 0 and defaults 1 and 32; the
 * runtime's value sets both). If such constants disagree on their default and
 * the id is not given, the kernel would run with a workgroup size other than
 * the one its code assumes: that is CONTRACT, naming both defaults.
 *
 * Workgroup size.  The effective local size is, per dimension: desc.local_size
 * when given; else the value of the specialization constant the shader sizes
 * it with (LocalSizeId, or a WorkgroupSize built-in made of spec constants),
 * given or default; else the shader's literal size. desc.local_size is applied
 * through those spec constants; a dimension the shader fixes with a different
 * literal is CONTRACT (declare `layout(local_size_x_id = N) in;` to make it
 * settable; note that glslang writes 1,1,1 for a shader that declares no local
 * size at all), unless the desc says TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE.
 *
 * Literal size override.  With TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE (and
 * desc.local_size given), tandem does what ncnn does at pipeline creation: it
 * rewrites the operands of the entry point's LocalSize execution mode in a
 * copy of the module to desc.local_size, validates the copy with SPIRV-Tools
 * again and builds the pipeline from it; dimensions sized by spec constants
 * are still set through them. The flag is the caller's explicit statement
 * that the code is correct at that size: a shader whose shared arrays, loops
 * or index arithmetic assume its literal size (rather than reading
 * gl_WorkGroupSize / gl_LocalInvocationID bounds) computes something else, and
 * tandem cannot tell. A literal that is not a LocalSize execution mode (a
 * WorkgroupSize built-in or LocalSizeId made of plain constants, which other
 * code may use) cannot be rewritten: CONTRACT. tandem_kernel_info_t reports
 * local_size_overridden. For an adopted pipeline (tandem_kernel_adopt_vulkan,
 * tandem_vulkan.h)
 * nothing is rewritten: the flag states that the application built it so.
 * The size is checked against maxComputeWorkGroupSize and
 * maxComputeWorkGroupInvocations, and reported by tandem_kernel_info; so is
 * the workgroup (shared) memory the specialized kernel takes, checked against
 * maxComputeSharedMemorySize (INVALID_ARGUMENT when over).
 *
 * Device features.  The capabilities the module declares (16-/8-bit storage,
 * Float16, Int8, Int16, Int64, Float64, subgroup operation groups, ...) are
 * mapped to tandem_shader_feature_t bits; a kernel that needs a feature the
 * device lacks is UNSUPPORTED, naming the feature. A capability tandem does
 * not know how to enable is UNSUPPORTED too, naming the capability.
 *
 * Aliased bindings.  By default two bindings of one dispatch that overlap in
 * one buffer, at least one of them written, are refused at record time
 * (CONTRACT). Kernels such as ncnn's gemm bind one output twice (a scalar and
 * a vec4 view of the same bytes) and write through one: desc.aliased_bindings
 * names, as a bit mask (bit i = binding i), the bindings that may share
 * bytes with each other in one dispatch. Such overlaps are then accepted, and
 * each binding in the mask is tracked as READ_WRITE over its bytes (so the
 * union of the aliased ranges is READ_WRITE for ordering against other work,
 * and a WRITE binding in the mask no longer counts as rewriting every byte).
 * Inside the dispatch the kernel is responsible for its own aliasing: tandem
 * orders work between dispatches, never inside one, so an element written
 * through one binding and read through another in the same dispatch needs the
 * shader's own barriers (and coherent memory), or the two must touch disjoint
 * elements. Overlaps with a binding outside the mask are still refused.
 *
 * Pipeline flags.  TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS builds the stage with
 * VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT: every subgroup
 * of a workgroup is full. It needs computeFullSubgroups
 * (VK_EXT_subgroup_size_control / Vulkan 1.3; TANDEM_SHADER_FULL_SUBGROUPS),
 * else UNSUPPORTED, and local_size x a multiple of the subgroup size
 * (required_subgroup_size when given; else the device's max_subgroup_size for
 * a SPIR-V 1.6 module, whose subgroup size may vary, and subgroup_size for
 * older ones), else INVALID_ARGUMENT with the numbers.
 * TANDEM_KERNEL_DISABLE_ROBUSTNESS builds the pipeline with
 * VkPipelineRobustnessCreateInfoEXT setting storage and uniform buffer
 * robustness to DISABLED (what llama.cpp's disable_robustness does): an
 * out-of-bounds access is then undefined even on a device created with
 * robustBufferAccess. It needs VK_EXT_pipeline_robustness with its
 * pipelineRobustness feature (TANDEM_GPU_PIPELINE_ROBUSTNESS; on an
 * application's device: the extension enabled and
 * VkPhysicalDevicePipelineRobustnessFeaturesEXT in its feature chain), else
 * UNSUPPORTED naming the extension (lavapipe 22.3 lacks it). tandem's own
 * device does not enable robustBufferAccess, so there the flag only makes the
 * choice explicit.
 */

typedef struct tandem_kernel tandem_kernel_t;

typedef enum tandem_access {
  TANDEM_ACCESS_READ = 1,
  TANDEM_ACCESS_WRITE = 2,
  TANDEM_ACCESS_READ_WRITE = 3,
} tandem_access_t;

/* A binding's bytes that mean "the bound view's length" (see "Fixed or
 * view-sized bytes" above). */
#define TANDEM_BYTES_VIEW 0u

typedef struct tandem_binding_contract {
  /* Bytes the kernel touches from the view's start: a fixed size the view
   * must match exactly, or TANDEM_BYTES_VIEW (0) for the view's length. */
  uint64_t bytes;
  uint64_t alignment; /* required view offset alignment, a power of two ≥ 1;
                         also raised to the device's storage-buffer alignment */
  tandem_access_t access;
} tandem_binding_contract_t;

#define TANDEM_MAX_BINDINGS 32
#define TANDEM_MAX_PUSH_CONSTANT_BYTES 128
#define TANDEM_MAX_SPEC_CONSTANTS 64

/* The type of a specialization constant value. */
typedef enum tandem_scalar_type {
  TANDEM_SCALAR_BOOL = 1,
  TANDEM_SCALAR_INT32 = 2,
  TANDEM_SCALAR_UINT32 = 3,
  TANDEM_SCALAR_FLOAT32 = 4,
  TANDEM_SCALAR_INT64 = 5,
  TANDEM_SCALAR_UINT64 = 6,
  TANDEM_SCALAR_FLOAT64 = 7,
} tandem_scalar_type_t;

/* "bool", "int32", ... or "unknown". Thread-safe. */
TANDEM_API const char *tandem_scalar_type_name(tandem_scalar_type_t type);

/* Flags of tandem_kernel_desc_t.flags (see "Literal size override",
 * "Specialization constants" and "Pipeline flags" above). */
typedef enum tandem_kernel_flag {
  /* Rewrite the module's literal LocalSize to desc.local_size. */
  TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE = 1u << 0,
  /* Refuse values for SpecIds the module does not declare. */
  TANDEM_KERNEL_STRICT_SPEC_IDS = 1u << 1,
  /* VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT. */
  TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS = 1u << 2,
  /* Storage and uniform buffer robustness off (VK_EXT_pipeline_robustness). */
  TANDEM_KERNEL_DISABLE_ROBUSTNESS = 1u << 3,
  /* Take the contract from the shader ("Contracts from the shader" above). */
  TANDEM_KERNEL_CONTRACT_FROM_SHADER = 1u << 4,
} tandem_kernel_flag_t;

/* One (SpecId, value) pair; the member of |value| named by |type| is read. */
typedef struct tandem_spec_constant {
  uint32_t id;
  tandem_scalar_type_t type;
  union {
    bool b;
    int32_t i32;
    uint32_t u32;
    float f32;
    int64_t i64;
    uint64_t u64;
    double f64;
  } value;
} tandem_spec_constant_t;

typedef struct tandem_kernel_desc {
  uint32_t struct_size;    /* sizeof(tandem_kernel_desc_t): see Conventions */
  const char *name;        /* used in messages; defaults to the entry point */
  const void *spirv;       /* SPIR-V words; or NULL and spirv_path */
  size_t spirv_size;       /* bytes, a multiple of 4 */
  const char *spirv_path;  /* file to read when spirv is NULL */
  const char *entry_point; /* default "main" */
  /* Default dispatch size in workgroups, each ≥ 1; or all 0: no default, every
   * dispatch node gives its own (tandem_dispatch_desc_t.workgroups). */
  uint32_t workgroups[3];
  const tandem_binding_contract_t *bindings;
  uint32_t binding_count;       /* 0 .. TANDEM_MAX_BINDINGS */
  uint32_t push_constant_bytes; /* exact size, 0 .. TANDEM_MAX_PUSH_CONSTANT_BYTES */
  /* Specialization constants (see above); each id at most once. */
  const tandem_spec_constant_t *spec_constants;
  uint32_t spec_constant_count; /* 0 .. TANDEM_MAX_SPEC_CONSTANTS */
  /* Workgroup size, each ≥ 1; or all 0: the shader's own (see above). */
  uint32_t local_size[3];
  /* Required subgroup size (a power of two in the device's
   * min_subgroup_size .. max_subgroup_size, needs SUBGROUP_SIZE_CONTROL);
   * 0: the driver chooses. */
  uint32_t required_subgroup_size;
  /* GLSL source of a compute shader (NUL-terminated), compiled to SPIR-V at
   * creation (glslang, Vulkan 1.2 / SPIR-V 1.5 rules, default limits, no
   * #include) instead of spirv / spirv_path, which must then be NULL. GLSL
   * passed as spirv or in spirv_path is refused with INVALID_KERNEL and the
   * glslangValidator command that compiles it ahead of time. */
  const char *glsl_source;
  /* tandem_kernel_flag_t bits; 0: none. */
  uint32_t flags;
  /* Bindings that may overlap each other in one dispatch (bit i = binding
   * i; at least two bits, all below binding_count); 0: none may. See
   * "Aliased bindings" above. */
  uint32_t aliased_bindings;
  /* The runtime's GPU the kernel runs on (0 .. tandem_runtime_gpus - 1;
   * OUT_OF_RANGE past them): its dispatches run there, on buffers of that
   * GPU. Default 0. */
  uint32_t gpu;
} tandem_kernel_desc_t;

/* Zeroes |desc| and sets struct_size; then set the fields you need. NULL is
 * ignored. Errors: none. */
static inline void tandem_kernel_desc_init(tandem_kernel_desc_t *desc) {
  if (!desc) return;
  memset(desc, 0, sizeof *desc);
  desc->struct_size = (uint32_t)sizeof *desc;
}

/* Loads a kernel. The descriptor and the SPIR-V are copied; they may be freed
 * after the call. Opens the GPU if needed. Errors: INVALID_ARGUMENT (a field,
 * named; a struct_size that is 0, too small, or larger with a non-zero tail,
 * see Conventions; a local size, workgroup count or workgroup memory over the
 * device's limit, with the limit), IO (spirv_path unreadable, or not a regular file: a
 * FIFO is refused, never waited on), INVALID_KERNEL (malformed SPIR-V, missing
 * entry point, not a compute shader, GLSL given as SPIR-V, glsl_source that
 * does not compile, with glslang's message), CONTRACT (reflection disagrees
 * with the contract, a specialization constant or local size that does not fit
 * the shader, naming the binding or constant and both values; a shader that
 * reaches memory through device addresses; with TANDEM_KERNEL_STRICT_SPEC_IDS
 * an id the module does not declare; a bool constant given a 4-byte value
 * other than 0 or 1; a literal local size that differs from local_size
 * without TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE, or that the flag cannot rewrite),
 * UNSUPPORTED (the kernel needs a shader feature or capability the device
 * lacks, named; a required_subgroup_size outside the device's range;
 * TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS without computeFullSubgroups;
 * TANDEM_KERNEL_DISABLE_ROBUSTNESS without VK_EXT_pipeline_robustness),
 * OUT_OF_MEMORY, INTERNAL (glslang could not start, or the driver refused the
 * pipeline). INVALID_ARGUMENT also covers: an unknown flag bit;
 * TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE without local_size; aliased_bindings
 * naming fewer than two bindings or one past binding_count; a local size x
 * that is not a multiple of the subgroup size with
 * TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS. Thread-safe. */
TANDEM_API tandem_status_t tandem_kernel_create(tandem_runtime_t *runtime,
                                                const tandem_kernel_desc_t *desc,
                                                tandem_kernel_t **out_kernel);
/* Reference counting; NULL is ignored. Thread-safe. */
TANDEM_API void tandem_kernel_retain(tandem_kernel_t *kernel);
TANDEM_API void tandem_kernel_release(tandem_kernel_t *kernel);
/* The kernel's name (borrowed). Thread-safe. */
TANDEM_API const char *tandem_kernel_name(const tandem_kernel_t *kernel);

typedef struct tandem_kernel_info {
  uint32_t struct_size;        /* sizeof(tandem_kernel_info_t): see Conventions */
  uint32_t local_size[3];      /* the effective workgroup size */
  bool local_size_specialized; /* true when a spec constant sets some dimension */
  uint32_t workgroups[3];      /* the default dispatch size, 0,0,0 for none */
  uint32_t binding_count;
  uint32_t push_constant_bytes;
  uint32_t spec_constant_count;    /* OpSpecConstants the shader declares */
  uint32_t shader_features;        /* tandem_shader_feature_t bits it needs */
  uint32_t required_subgroup_size; /* 0: the driver's choice */
  /* Workgroup (shared) memory with this specialization, checked against the
   * device's maxComputeSharedMemorySize at load; 0 when a size depends on an
   * expression tandem cannot evaluate (then only the driver checks it). */
  uint64_t shared_memory_bytes;
  uint32_t flags; /* the desc's tandem_kernel_flag_t bits */
  /* True when the module's literal LocalSize was rewritten
   * (TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE with a size that differs). */
  bool local_size_overridden;
  uint32_t aliased_bindings; /* the desc's mask */
  /* SpecIds the desc gave values for that the module does not declare
   * (accepted and ignored), in the desc's order. */
  uint32_t ignored_spec_count;
  uint32_t ignored_spec_ids[TANDEM_MAX_SPEC_CONSTANTS];
} tandem_kernel_info_t;

/* Zeroes |info| and sets struct_size, ready for tandem_kernel_info. NULL is
 * ignored. Errors: none. */
static inline void tandem_kernel_info_init(tandem_kernel_info_t *info) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->struct_size = (uint32_t)sizeof *info;
}

/* Describes a loaded kernel. Set out_info->struct_size first
 * (tandem_kernel_info_init). Errors: INVALID_ARGUMENT (NULL, a bad
 * struct_size). Thread-safe. */
TANDEM_API tandem_status_t tandem_kernel_info(const tandem_kernel_t *kernel,
                                              tandem_kernel_info_t *out_info);

/* One reflected specialization constant (an OpSpecConstant,
 * OpSpecConstantTrue or OpSpecConstantFalse with a SpecId). */
typedef struct tandem_spec_constant_info {
  uint32_t struct_size; /* sizeof(tandem_spec_constant_info_t): see Conventions */
  uint32_t id;          /* its SpecId (several constants may share one) */
  char name[64];        /* its OpName (truncated), "" when the module has none */
  /* The type a desc value must have (bool: BOOL, or INT32/UINT32 0 or 1);
   * 0 for an 8- or 16-bit constant, which tandem cannot set. */
  tandem_scalar_type_t type;
  uint32_t width; /* bits: 1 for bool, 8, 16, 32 or 64 */
  bool is_signed; /* a signed integer */
  bool is_float;  /* a floating-point constant */
  /* The module's default, as |type| (for type 0, value.u64 holds the bits). */
  tandem_spec_constant_t default_value;
  bool given; /* the desc (spec_constants or local_size) set this id */
  /* What the pipeline was built with: the given value, else the default. */
  tandem_spec_constant_t value;
} tandem_spec_constant_info_t;

/* Zeroes |info| and sets struct_size, ready for
 * tandem_kernel_spec_constant_info. NULL is ignored. Errors: none. */
static inline void tandem_spec_constant_info_init(tandem_spec_constant_info_t *info) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->struct_size = (uint32_t)sizeof *info;
}

/* Describes reflected constant |index| (0 .. tandem_kernel_info_t.
 * spec_constant_count - 1, in the module's declaration order) of |kernel|.
 * Set out_info->struct_size first (tandem_spec_constant_info_init). Errors:
 * INVALID_ARGUMENT (NULL, a bad struct_size), OUT_OF_RANGE (index, with the
 * count). Thread-safe. */
TANDEM_API tandem_status_t tandem_kernel_spec_constant_info(const tandem_kernel_t *kernel,
                                                            uint32_t index,
                                                            tandem_spec_constant_info_t *out_info);

/*============================================================================
 * NPU device and programs
 *============================================================================
 *
 * With the runtime option npu_backend set, the runtime drives one NPU through XRT's C
 * API (loaded at run time: tandem builds and runs without XRT) or through the
 * emulated NPU, which implements the same API on the CPU for tests. Buffers
 * the NPU touches are SHARED (one allocation seen by GPU and NPU) or NPU_LOCAL
 * (an NPU buffer object the host can map, the GPU cannot use).
 *
 * An NPU program is a program file (for XRT an xclbin) plus a kernel name
 * with a contract, like a GPU kernel: one buffer per binding, then the
 * scalars (scalar_count, typed by scalar_types). What only one NPU API has
 * is an extension chained from the description: for XRT
 * (tandem_xrt_program_desc_t in tandem_xrt.h) the ABI that puts leading
 * arguments before the buffers and an XDNA-style instruction stream.
 *
 * The emulated NPU's kernels.  A runtime with npu_backend "emulated" runs
 * the kernels of tandem's own kernels library, which its xclbin names; give
 * program_path = TANDEM_NPU_EMULATED_XCLBIN ("@emulated", the spelling
 * pipeline files use) or the path tandem_npu_emulated_xclbin() returns. Each
 * kernel fails its run (INTERNAL on the completion) when a buffer is smaller
 * than its scalars say. The PLAIN kernels take their buffers first (binding i
 * is argument i), then the scalars (32-bit unless said):
 *   matmul_f32     A, B, C; M, N, K   C[MxN] = A[MxK]·B[KxN], f32, row-major
 *                                     (bindings READ, READ, WRITE)
 *   matmul_i8      A, B, C; M, N, K   the same with int8 A, B and int32 C
 *                                     (wrapping sums)
 *   scale_add_f32  X, Y; n, scale, bias   y = x·scale + bias over n floats;
 *                                     scale and bias are f32 bit patterns
 *   add_i32        A, B, C; n         C = A + B over n int32s, wrapping
 *   fill_u64       BO; value (u64), n writes the 64-bit value n times
 *   sleep_ms       BO; ms             sleeps, then writes 1 to the BO's first
 *                                     uint32 (for timeouts and watchdogs)
 *   fail           BO                 always fails
 * and in the other ABIs (up to five data buffers; unused ones stay unset):
 *   dpu_vector          DPU: runs the emulated instruction stream
 *                       (internal/emu_dpu.h) over the data buffers
 *   dpu_module_add_i32  DPU_MODULE: bo2 = bo0 + bo1 (int32)
 *   elf_add_i32         ELF: bo2 = bo0 + bo1 (int32)
 * (npu/emu/README.md has each kernel's exact argument list.)
 * Your own emulated kernels: write a shared library that exports
 * tandem_emu_kernels() as <tandem/tandem_emu_kernel.h> (installed beside this
 * header) declares, and an xclbin text file of two lines,
 *   tandem-emulated-xclbin 1
 *   library /path/to/libmy_kernels.so
 * (a relative library path is taken from the xclbin's folder). The emulated
 * NPU loads only its own library and those listed in the environment
 * variable TANDEM_EMU_KERNELS (colon-separated paths): an xclbin cannot make
 * it run arbitrary code.
 */

typedef struct tandem_npu_program tandem_npu_program_t;

/* The program_path that names the emulated NPU's own kernels (above). */
#define TANDEM_NPU_EMULATED_XCLBIN "@emulated"

/* The path of the emulated NPU's xclbin: TANDEM_EMU_XCLBIN when set, else
 * tandem/tandem_emu_kernels.xclbin in libtandem.so's folder (the build tree
 * and an install share that layout), else in the library folder tandem was
 * configured to install into (for statically linked programs); NULL when
 * none is readable. The string is valid until the calling thread's next
 * call. Thread-safe. */
TANDEM_API const char *tandem_npu_emulated_xclbin(void);

typedef struct tandem_npu_info {
  uint32_t struct_size; /* sizeof(tandem_npu_info_t): see Conventions */
  /* Extensions the backend fills (Conventions, "Extension chains"): for
   * XRT, tandem_xrt_npu_info_t (tandem_xrt.h: the profile in use). Kept as
   * the caller set it. */
  void *next;
  char name[128];    /* "emulated NPU (CPU test device)" or the XRT device */
  char backend[192]; /* which library serves it */
  bool emulated;
  tandem_sharing_t sharing; /* the path used with this runtime's GPU */
  uint32_t drm_node_count;  /* /dev/accel and /dev/dri nodes found (libdrm) */
  char drm_nodes[8][64];
} tandem_npu_info_t;

/* Zeroes |info| and sets struct_size, ready for tandem_runtime_npu_info. NULL
 * is ignored. Errors: none. */
static inline void tandem_npu_info_init(tandem_npu_info_t *info) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->struct_size = (uint32_t)sizeof *info;
}

/* Opens the runtime's NPU (and its GPU, if needed) if not open yet, and
 * negotiates the sharing path. Errors: those of tandem_runtime_open_gpu,
 * NO_DEVICE ("no NPU: ..." saying what is missing: the option, XRT, the
 * device), UNSUPPORTED (a forced sharing path the pair cannot do, no path at
 * all, or an XRT library without a function tandem calls), OUT_OF_MEMORY, IO
 * and DEVICE_LOST (a sharing probe failed for a reason other than the path).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_open_npu(tandem_runtime_t *runtime);
/* Describes the runtime's NPU, opening it if needed. Set
 * out_info->struct_size first (tandem_npu_info_init). Errors: as open_npu,
 * and INVALID_ARGUMENT (NULL, a bad struct_size). Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_npu_info(tandem_runtime_t *runtime,
                                                   tandem_npu_info_t *out_info);

/* An NPU scalar argument's type. A U64 scalar takes two consecutive 32-bit
 * words of tandem_graph_add_npu_run's scalars, low word first. */
typedef enum tandem_npu_scalar_type {
  TANDEM_NPU_SCALAR_U32 = 0,
  TANDEM_NPU_SCALAR_U64 = 1,
} tandem_npu_scalar_type_t;

/* The head of every extension struct (Conventions, "Extension chains"). */
typedef struct tandem_chain {
  uint32_t struct_size; /* the extension's own sizeof */
  uint32_t type;        /* its TANDEM_STRUCT_* tag; 0 is no extension */
  const void *next;     /* the next extension, or NULL */
} tandem_chain_t;

/* An NPU program, in words every NPU backend shares: a program file, a
 * kernel in it, its buffers and scalars. What one backend alone reads is an
 * extension chained from next: for XRT, tandem_xrt_program_desc_t
 * (tandem_xrt.h: the argument ABI and an instruction stream). */
typedef struct tandem_npu_program_desc {
  uint32_t struct_size; /* sizeof(tandem_npu_program_desc_t): see Conventions */
  const void *next;     /* extensions (Conventions, "Extension chains"), or NULL */
  const char *name;     /* used in messages; defaults to kernel_name */
  /* The program the backend loads. XRT: an xclbin (or, where the bridge
   * supports it, a full ELF), or TANDEM_NPU_EMULATED_XCLBIN ("@emulated"):
   * the emulated NPU's own (tandem_npu_emulated_xclbin). */
  const char *program_path;
  const char *kernel_name;                   /* the kernel inside it */
  const tandem_binding_contract_t *bindings; /* one per buffer argument */
  uint32_t binding_count;                    /* 1 .. TANDEM_MAX_BINDINGS */
  uint32_t scalar_count;                     /* scalar arguments after the buffers, 0 .. 16 */
  /* scalar_count types; NULL: every scalar is U32. At most 16 words in all
   * (a U64 scalar is two). */
  const tandem_npu_scalar_type_t *scalar_types;
} tandem_npu_program_desc_t;

/* Zeroes |desc| and sets struct_size. NULL is ignored. */
static inline void tandem_npu_program_desc_init(tandem_npu_program_desc_t *desc) {
  if (!desc) return;
  memset(desc, 0, sizeof *desc);
  desc->struct_size = (uint32_t)sizeof *desc;
}

#define TANDEM_MAX_NPU_SCALARS 16

/* Loads an NPU program, opening the NPU if needed. The kernel's arguments are
 * checked against the contract (and, on XRT, its extension's ABI: see
 * tandem_xrt_program_desc_t): each binding a buffer argument in tandem's
 * data bank, each scalar a scalar of its type (where the metadata says the
 * width), and no argument left over (PLAIN) or only buffers left over (DPU,
 * DPU_MODULE, ELF: they stay unset).
 * The emulated NPU loads only its own kernels library
 * (or libraries listed in TANDEM_EMU_KERNELS). Errors: those of open_npu,
 * INVALID_ARGUMENT (a field, named; an extension the backend does not read,
 * naming its tag; on XRT instruction_bytes without instructions,
 * instructions missing for DPU or given for DPU_MODULE / ELF, an unknown
 * abi; an unknown scalar type; more than 16 scalar words),
 * IO (xclbin unreadable or not a regular file; "@emulated" and no emulated
 * xclbin found, naming TANDEM_EMU_XCLBIN; the instruction stream could not
 * be synced to the NPU: a failed xrtBOSync is IO everywhere),
 * INVALID_KERNEL (not an xclbin the device accepts, kernel missing, a
 * kernels library the emulated NPU may not load), CONTRACT (argument kinds or
 * count disagree, naming the argument), OUT_OF_MEMORY. Thread-safe. */
TANDEM_API tandem_status_t tandem_npu_program_create(tandem_runtime_t *runtime,
                                                     const tandem_npu_program_desc_t *desc,
                                                     tandem_npu_program_t **out_program);
/* Reference counting; NULL is ignored. Thread-safe. */
TANDEM_API void tandem_npu_program_retain(tandem_npu_program_t *program);
TANDEM_API void tandem_npu_program_release(tandem_npu_program_t *program);
TANDEM_API const char *tandem_npu_program_name(const tandem_npu_program_t *program);

/*============================================================================
 * Graphs
 *============================================================================
 *
 * A graph records nodes: fills, copies, dispatches, NPU runs and your own
 * Vulkan commands (tandem_graph_add_vulkan_commands, tandem_vulkan.h). Recording checks every
 * view against the node's needs; a failed add leaves the graph unchanged.
 * Nodes are ordered only where their byte ranges conflict (read-after-write,
 * write-after-read, write-after-write; read/read never orders). Each node runs
 * on a lane: copies from HOST_VISIBLE to device-only memory on the upload lane,
 * the reverse on the download lane, everything else on the compute lane,
 * unless the node names a lane. A graph retains the buffers and kernels its
 * nodes use until it is released.
 *
 * Nodes are numbered from 0 in the order they are added (the graph's node
 * count before an add is the new node's number); an executable names its
 * nodes by the same numbers (tandem_exec_set_*).
 *
 * A graph holds at most TANDEM_MAX_GRAPH_NODES nodes; the add that would pass
 * it fails with OUT_OF_RANGE. Preparing costs time and memory in proportion to
 * the nodes times the graph slots (docs/design.md, "Measured costs"), so at
 * the limit one prepare takes seconds and hundreds of MiB on a slow device.
 * Split longer work into several graphs and order them with
 * tandem_exec_submit_after.
 */

typedef struct tandem_graph tandem_graph_t;

#define TANDEM_MAX_GRAPH_NODES (1u << 17) /* 131072 */

typedef enum tandem_lane {
  TANDEM_LANE_AUTO = -1, /* choose from the placements (see above) */
  TANDEM_LANE_UPLOAD = 0,
  TANDEM_LANE_COMPUTE = 1,
  TANDEM_LANE_DOWNLOAD = 2,
  TANDEM_LANE_COUNT_GPU = 3, /* the GPU lanes are 0 .. 2 */
  TANDEM_LANE_NPU = 3,       /* NPU runs; a host thread per NPU device */
  TANDEM_LANE_COUNT = 4,     /* the built-in lanes are 0 .. 3; user lanes follow */
} tandem_lane_t;

/* Lane ids of a runtime go up to TANDEM_MAX_LANES - 1: the four built-in
 * lanes above, then user lanes (an imported timeline made a lane,
 * tandem_external_timeline_lane; a native session, tandem_session_create),
 * which take the lowest free id and give it back when destroyed. */
#define TANDEM_MAX_LANES 8

/* On a runtime with several GPUs (the option gpus), GPU g's lanes (g ≥ 1)
 * have ids from TANDEM_MAX_LANES on, three per GPU: tandem_gpu_lane(g, lane)
 * is the id of GPU g's |lane| (UPLOAD, COMPUTE or DOWNLOAD), and
 * tandem_gpu_lane(0, lane) is |lane|; -1 for a bad pair. Lane ids of a
 * runtime are below TANDEM_MAX_LANE_IDS (tandem_runtime_lane_info takes them
 * all; a GPU's lanes exist from creation, named "gpu1.compute" and so on).
 * A graph node names a lane of its own GPU as UPLOAD, COMPUTE or DOWNLOAD. */
#define TANDEM_MAX_LANE_IDS (TANDEM_MAX_LANES + TANDEM_LANE_COUNT_GPU * (TANDEM_MAX_GPUS - 1))
static inline int tandem_gpu_lane(uint32_t gpu, tandem_lane_t lane) {
  if (gpu >= TANDEM_MAX_GPUS || lane < TANDEM_LANE_UPLOAD || lane > TANDEM_LANE_DOWNLOAD) return -1;
  return gpu == 0 ? (int)lane
                  : TANDEM_MAX_LANES + (int)(gpu - 1) * TANDEM_LANE_COUNT_GPU + (int)lane;
}

/* "upload", "compute", "download", "npu" or "unknown". Thread-safe. */
TANDEM_API const char *tandem_lane_name(tandem_lane_t lane);

/* Makes an empty graph. Errors: INVALID_ARGUMENT, OUT_OF_MEMORY. */
TANDEM_API tandem_status_t tandem_graph_create(tandem_runtime_t *runtime,
                                               tandem_graph_t **out_graph);
/* Reference counting; NULL is ignored. Thread-safe. */
TANDEM_API void tandem_graph_retain(tandem_graph_t *graph);
TANDEM_API void tandem_graph_release(tandem_graph_t *graph);

/* Fills |view| with the 32-bit |pattern| repeated. The view's offset and length
 * must be multiples of 4 (Vulkan's rule for fills). Errors: INVALID_ARGUMENT
 * (a lane, a view without a buffer or from another runtime), OUT_OF_RANGE
 * (alignment, with the numbers; a view not inside its buffer; a graph already
 * holding TANDEM_MAX_GRAPH_NODES), UNSUPPORTED (an NPU_LOCAL view),
 * OUT_OF_MEMORY. */
TANDEM_API tandem_status_t tandem_graph_add_fill(tandem_graph_t *graph, tandem_view_t dst,
                                                 uint32_t pattern, tandem_lane_t lane);
/* Copies src to dst. Lengths must be equal; the ranges must not overlap when
 * both are in one buffer. With src and dst on two GPUs of the runtime, the
 * copy is staged through host memory both GPUs import, as two nodes: a
 * download on the source GPU, then an upload on the destination GPU (|lane|,
 * when named, is the lane of both), each counting the bytes as copied; the
 * staging is charged to the budget and lives as long as the nodes.
 * Errors: INVALID_ARGUMENT (as add_fill), OUT_OF_RANGE (unequal lengths,
 * overlapping ranges, with the numbers; as add_fill), UNSUPPORTED (an
 * NPU_LOCAL view; between GPUs, a GPU that cannot import host memory),
 * OVER_BUDGET, OUT_OF_MEMORY. */
TANDEM_API tandem_status_t tandem_graph_add_copy(tandem_graph_t *graph, tandem_view_t src,
                                                 tandem_view_t dst, tandem_lane_t lane);
/* Dispatches |kernel| with its default workgroup count, |views| bound to
 * bindings 0..view_count-1 and |push_constants| (exactly the contract's
 * push-constant bytes; NULL when 0). A kernel without a default count needs
 * tandem_graph_add_dispatch_node (INVALID_ARGUMENT here).
 * Checks: view_count equals the contract's binding count; each view's length
 * equals a fixed binding's bytes (any length for a view-sized one) and its
 * offset is aligned; two views that overlap in one buffer are rejected when
 * either binding writes. Errors: INVALID_ARGUMENT (a NULL, a kernel or view
 * of another runtime, no default workgroup count), CONTRACT (view count,
 * push-constant bytes, a view against its binding — shorter or longer than
 * its fixed bytes, misaligned — naming the binding and the numbers),
 * OUT_OF_RANGE (a view not inside its buffer; a full graph, as add_fill),
 * UNSUPPORTED (an NPU_LOCAL view; a view-sized binding's view over the
 * device's maxStorageBufferRange), OUT_OF_MEMORY. */
TANDEM_API tandem_status_t tandem_graph_add_dispatch(tandem_graph_t *graph, tandem_kernel_t *kernel,
                                                     const tandem_view_t *views,
                                                     uint32_t view_count,
                                                     const void *push_constants,
                                                     uint32_t push_constant_bytes);
/* A dispatch node in full. Zero-initialise it, then set what you need. */
typedef struct tandem_dispatch_desc {
  uint32_t struct_size; /* sizeof(tandem_dispatch_desc_t): see Conventions */
  tandem_kernel_t *kernel;
  const tandem_view_t *views; /* bound to bindings 0 .. view_count-1 */
  uint32_t view_count;        /* the contract's binding count */
  const void *push_constants; /* exactly the contract's bytes; NULL when 0 */
  uint32_t push_constant_bytes;
  /* Workgroups to dispatch, each 1 .. the device's maxComputeWorkGroupCount;
   * 0,0,0: the kernel's default (INVALID_ARGUMENT when it has none). */
  uint32_t workgroups[3];
  /* Indirect dispatch: when indirect.buffer is set, the workgroup counts are
   * read on the GPU, when the node runs, from the 12 bytes at indirect.offset
   * (three uint32 x, y, z, as VkDispatchIndirectCommand; the offset a multiple
   * of 4, the view at least 12 bytes). The node READs those bytes, so it is
   * ordered after the work that writes them. tandem cannot check counts made
   * on the GPU: the producer must keep them within the device's
   * maxComputeWorkGroupCount (tandem_device_info_t.max_workgroups). */
  tandem_view_t indirect;
} tandem_dispatch_desc_t;

/* Zeroes |desc| and sets struct_size; then set kernel, views and what else
 * the dispatch needs. NULL is ignored. */
static inline void tandem_dispatch_desc_init(tandem_dispatch_desc_t *desc) {
  if (!desc) return;
  memset(desc, 0, sizeof *desc);
  desc->struct_size = (uint32_t)sizeof *desc;
}

/* Adds the dispatch |desc| describes and returns its node number in
 * |out_node| (may be NULL). Checks as tandem_graph_add_dispatch, plus the
 * workgroup counts against the device limits and the indirect view. Errors:
 * as tandem_graph_add_dispatch, plus INVALID_ARGUMENT (workgroups out of
 * range, or both workgroups and an indirect view) and OUT_OF_RANGE (indirect
 * view alignment or size). */
TANDEM_API tandem_status_t tandem_graph_add_dispatch_node(tandem_graph_t *graph,
                                                          const tandem_dispatch_desc_t *desc,
                                                          uint32_t *out_node);

/* Runs |program| on the NPU lane with |views| bound to its buffer arguments
 * and |scalars| as its scalar arguments: scalar_count 32-bit words, one per
 * U32 scalar and two (low first) per U64 one. Views must be SHARED or NPU_LOCAL
 * and start at offset 0 (an NPU argument is a whole buffer object); each is
 * checked against its binding (length, alignment) as for dispatches.
 * Errors: INVALID_ARGUMENT (a NULL, a program or view of another runtime),
 * CONTRACT (view or scalar count; a view against its binding: no NPU side, not
 * at offset 0, too short, naming the binding and the numbers), OUT_OF_RANGE (a
 * view not inside its buffer; a full graph, as add_fill), OUT_OF_MEMORY. */
TANDEM_API tandem_status_t tandem_graph_add_npu_run(tandem_graph_t *graph,
                                                    tandem_npu_program_t *program,
                                                    const tandem_view_t *views, uint32_t view_count,
                                                    const uint32_t *scalars, uint32_t scalar_count);
/* Number of nodes recorded. */
TANDEM_API uint32_t tandem_graph_node_count(const tandem_graph_t *graph);

/*============================================================================
 * Executable graphs
 *============================================================================
 *
 * prepare turns a graph into an executable: dependencies inferred, command
 * buffers recorded once, waits and signals computed once, graph_slots
 * completion slots made. Submitting then allocates nothing.
 */

typedef struct tandem_exec tandem_exec_t;
typedef struct tandem_completion tandem_completion_t;

/* Prepares |graph|. Opens the GPU if needed. The graph may be changed or
 * released afterwards; the executable keeps what it needs. Time and memory
 * grow with the node count (see TANDEM_MAX_GRAPH_NODES) times graph_slots.
 * Errors: INVALID_ARGUMENT (empty graph), OUT_OF_MEMORY (also: the process
 * holds more graph slots than completion handles can name), UNSUPPORTED (a
 * binding's contract bytes over the device's maxStorageBufferRange), CONTRACT
 * (XRT refused an NPU run's argument), INTERNAL (a Vulkan or XRT call, named),
 * and any code a Vulkan commands node's record callback returned (naming the
 * node; see tandem_vulkan.h, "Scoped handoff"). */
TANDEM_API tandem_status_t tandem_graph_prepare(tandem_graph_t *graph, tandem_exec_t **out_exec);
/* Reference counting. Releasing an executable with work in flight is safe:
 * the last release blocks until that work has finished, then frees (the
 * runtime may keep its descriptor pool for a later prepare: see
 * tandem_runtime_trim). NULL is ignored. Thread-safe. */
TANDEM_API void tandem_exec_retain(tandem_exec_t *exec);
TANDEM_API void tandem_exec_release(tandem_exec_t *exec);

/* Parameters that change per submission, without preparing again.
 *
 * These change one node of |exec| (numbered as in its graph) for the
 * submissions made after the call; a submission already made is never
 * affected, whether it is in flight or not. The next submit re-records only
 * the regions whose nodes changed, for the slot it uses; it allocates nothing.
 * A node keeps its new value until it is set again. Thread-safe (they take
 * the runtime's tracker lock); a set racing a submit of the same executable
 * lands either before or after that submit, never half.
 *
 * set_push_constants: exactly the contract's bytes. set_workgroups: each
 * 1 .. the device's maxComputeWorkGroupCount; not for indirect nodes.
 * set_view: the view bound to |binding| of a dispatch node, re-checked
 * against the contract (length: exactly a fixed binding's bytes, any length
 * for a view-sized one, which is then bound and tracked at the new length;
 * alignment, no write overlap with another
 * binding of the node, a GPU-visible buffer of this runtime with the same
 * placement as the view it replaces); or view 0 (destination) of a fill node,
 * view 0 (source) or 1 (destination) of a copy node, with the same length and
 * placement and the rules of add_fill / add_copy. NPU runs and Vulkan
 * commands nodes keep their views. Submissions after it are ordered against in-flight work by the
 * new range. The graph's own ordering was decided at prepare: a new range that
 * would conflict with another node of the graph in a way the prepared plan
 * does not already order is refused with CONTRACT naming both nodes (prepare
 * a graph recorded with that dependency instead). So is moving a GPU node's
 * view off, or onto, a SHARED buffer an NPU node of the graph uses: the
 * barriers that hand those bytes between the GPU and the NPU are placed at
 * prepare.
 * Errors: INVALID_ARGUMENT (NULL, a node number out of range or of a kind the
 * call does not take, a binding out of range, workgroups out of range, an
 * indirect node, a view without a buffer or from another runtime), CONTRACT
 * (as above, naming the numbers), OUT_OF_RANGE (a view not inside its buffer,
 * a fill offset, overlapping copy ranges). */
TANDEM_API tandem_status_t tandem_exec_set_push_constants(tandem_exec_t *exec, uint32_t node,
                                                          const void *push_constants,
                                                          uint32_t push_constant_bytes);
TANDEM_API tandem_status_t tandem_exec_set_workgroups(tandem_exec_t *exec, uint32_t node,
                                                      const uint32_t workgroups[3]);
TANDEM_API tandem_status_t tandem_exec_set_view(tandem_exec_t *exec, uint32_t node,
                                                uint32_t binding, tandem_view_t view);

/* Submits one run of |exec|, ordered after every earlier in-flight submission
 * whose byte ranges conflict with it (on any lane, from any graph). GPU regions
 * go to their queues, NPU runs to the NPU lane thread. Returns a completion
 * the caller owns. Does not wait for the GPU or the NPU; allocates nothing.
 * Errors: INVALID_ARGUMENT, BUSY (all graph_slots of |exec| in flight,
 * max_submissions reached, or a live conflicting host map: nothing was
 * started), FAILED_DEPENDENCY (bytes it reads are poisoned by a failed run),
 * OUT_OF_MEMORY or INTERNAL (re-recording a region whose parameters changed
 * failed; nothing was started; also any code a Vulkan commands node's record
 * callback returned then), DEVICE_LOST (the runtime was lost earlier, or
 * is now: a queue refused the submission). Thread-safe. */
TANDEM_API tandem_status_t tandem_exec_submit(tandem_exec_t *exec,
                                              tandem_completion_t **out_completion);

/* As tandem_exec_submit, and also ordered after every completion in |after|
 * (after_count entries, each from this runtime; ones that already finished
 * successfully are ignored). The wait happens on the GPU through the lanes'
 * semaphores: this call does not block. If one of them fails or is cancelled
 * while this submission is in flight, this submission ends with
 * FAILED_DEPENDENCY; if one had already finished with a failure, this call
 * refuses at once with FAILED_DEPENDENCY and submits nothing. Errors: as
 * tandem_exec_submit, plus INVALID_ARGUMENT (a NULL, stale or foreign
 * completion) and FAILED_DEPENDENCY (an |after| that already failed).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_exec_submit_after(tandem_exec_t *exec,
                                                    tandem_completion_t *const *after,
                                                    uint32_t after_count,
                                                    tandem_completion_t **out_completion);

/* One GPU-side wait of a submission: |lane| (an EXTERNAL lane,
 * tandem_external_timeline_lane) must reach |value| first. */
typedef struct tandem_lane_wait {
  tandem_lane_t lane;
  uint64_t value;
} tandem_lane_wait_t;

/* As tandem_exec_submit, and every region of the submission first waits on
 * the GPU (in its VkSubmitInfo2 wait list, never on the host) until each
 * lane in |waits| (wait_count entries, at most TANDEM_MAX_LANES) reaches its
 * value: another process's or device's work, through an imported timeline.
 * The value is per submission: a replayed executable waits for whatever the
 * producer signals next time. This call does not block. A value that never
 * comes holds the submission, and everything ordered after it, on the GPU:
 * tandem_completion_wait then waits for ever, so wait with
 * tandem_completion_wait_timeout (TIMEOUT; the work stays queued) when the
 * producer may fail, and destroying the timeline waits for the submission.
 * Errors: as tandem_exec_submit, plus INVALID_ARGUMENT (waits NULL with a
 * count, more than TANDEM_MAX_LANES entries, a lane that is not an EXTERNAL
 * lane of this runtime, a value of 0). Thread-safe. */
TANDEM_API tandem_status_t tandem_exec_submit_waiting(tandem_exec_t *exec,
                                                      const tandem_lane_wait_t *waits,
                                                      uint32_t wait_count,
                                                      tandem_completion_t **out_completion);

/*============================================================================
 * Completions
 *============================================================================
 *
 * A completion is a checked handle, not a pointer: it stays valid until
 * tandem_completion_release. After that — or once its graph slot carries a
 * later submission — every call below refuses it with INVALID_ARGUMENT
 * ("not a live completion") rather than acting on the newer submission, and a
 * second release changes nothing. Bytes that never were a completion are
 * refused the same way. (Handles count submissions in 40 bits: a handle kept
 * across 2^40 later submissions in one process could alias; nothing else
 * can.)
 *
 * Failure (the model, written once here; docs/design.md tells why):
 * Failure is per submission, poison per byte range. A submission that fails
 * (the device was lost, it was cancelled, an NPU run failed, a test hook
 * failed it, or it read bytes whose writer failed) poisons every byte range
 * it writes, the ranges its finished regions already wrote included. Every
 * submission that reads bytes a failed submission wrote fails with
 * FAILED_DEPENDENCY: refused at submit when the failure is already known,
 * counting only its exposed reads — the bytes it reads before it writes them
 * (a node reads what no node recorded before it wrote; a native session's
 * stage reads everything it reads) and that no write still in flight
 * rewrites, so a graph that refills its own poisoned scratch before reading
 * it is accepted —
 * ending with it when the failure comes later (a write is tracked until its
 * submission retires, even after its lane passed it). Host maps of poisoned
 * bytes fail with FAILED_DEPENDENCY (DEVICE_LOST after a loss); a map waits
 * until every submission writing its bytes retired, so it sees that
 * submission's result. Bytes a failed submission never wrote stay readable,
 * by maps and by copies. Writing a poisoned range again, by work that
 * succeeds or through a write map, clears it. The writers of a byte retire in
 * submission order whether their completions are waited for or polled, so a
 * failure that retires late never poisons bytes a later submission rewrote.
 * Work that only writes bytes a failed submission wrote, or writes bytes it
 * read, is ordered after it but does not fail with it; work submitted after
 * it with tandem_exec_submit_after does. A buffer keeps up to 8 poisoned
 * ranges apart; past that the two closest merge, and the bytes between them
 * read as poisoned until written again.
 */

/* Blocks until the submission finished (successfully or not) and returns its
 * result: OK, or the failure that ended it (DEVICE_LOST, also when the NPU's
 * driver ended an NPU run in TIMEOUT or ABORT — an NPU fault, after which the
 * runtime's later NPU runs fail too; FAILED_DEPENDENCY, CANCELLED, TIMEOUT
 * when an NPU run exceeded the npu_timeout_ms watchdog, INTERNAL when an NPU
 * run failed, IO when syncing its buffers failed ...), or INVALID_ARGUMENT
 * for a NULL or
 * stale handle. Waits on the GPU lanes' timeline semaphores on the calling
 * thread (and on the NPU lane's progress when the submission has NPU runs, or
 * depends on NPU runs of earlier submissions). Thread-safe. */
TANDEM_API tandem_status_t tandem_completion_wait(tandem_completion_t *completion);
/* As wait, but gives up after |timeout_ns| with TIMEOUT; the work goes on. */
TANDEM_API tandem_status_t tandem_completion_wait_timeout(tandem_completion_t *completion,
                                                          uint64_t timeout_ns);
/* Never blocks. A NULL or stale handle answers false (the error message says
 * why). Thread-safe. */
TANDEM_API bool tandem_completion_is_complete(tandem_completion_t *completion);
/* Cancels the submission. Work not yet handed to a device is skipped; GPU
 * regions already queued run to the end (Vulkan cannot take them back) but
 * their results are discarded: the completion's result becomes CANCELLED, the
 * bytes it writes are poisoned (later reads of them fail with
 * FAILED_DEPENDENCY until they are written again) and submissions that read
 * them fail with FAILED_DEPENDENCY (the Completions section's failure model). Cancelling a finished submission changes nothing and
 * returns OK. Errors: INVALID_ARGUMENT (NULL or stale handle). Does not block.
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_completion_cancel(tandem_completion_t *completion);

/* Timing of one region (a run of nodes of one lane between semaphore waits). */
typedef struct tandem_region_profile {
  tandem_lane_t lane;
  uint32_t node_count;
  uint64_t gpu_start_ns, gpu_end_ns; /* GPU timestamps on the host's CLOCK_MONOTONIC */
} tandem_region_profile_t;

typedef struct tandem_completion_profile {
  uint32_t struct_size;      /* sizeof(tandem_completion_profile_t): see Conventions */
  uint64_t host_submit_ns;   /* CLOCK_MONOTONIC when submit handed it to the queues */
  uint64_t host_observed_ns; /* CLOCK_MONOTONIC when tandem first saw it finished */
  uint64_t queue_ns;         /* submit → first region started on the GPU */
  uint64_t execution_ns;     /* first region start → last region end, on the GPU */
  bool gpu_times_valid;      /* false without the gpu_timestamps option or calibration */
  uint32_t region_count;
  /* Why the GPU times are there or not: OK (gpu_times_valid), UNSUPPORTED
   * (no gpu_timestamps option, or no calibration), DEVICE_LOST (reading
   * them back failed because the device was lost: the runtime is lost), or
   * OUT_OF_MEMORY (the readback ran out of memory). */
  tandem_status_t gpu_times_status;
} tandem_completion_profile_t;

/* Zeroes |profile| and sets struct_size, ready for tandem_completion_profile.
 * NULL is ignored. */
static inline void tandem_completion_profile_init(tandem_completion_profile_t *profile) {
  if (!profile) return;
  memset(profile, 0, sizeof *profile);
  profile->struct_size = (uint32_t)sizeof *profile;
}

/* The profile of a finished submission; fills up to |capacity| entries of
 * |regions| (may be NULL with capacity 0). Errors: BUSY (not finished yet),
 * INVALID_ARGUMENT (NULL or stale handle, NULL out_profile, NULL regions with
 * a capacity). Thread-safe. */
TANDEM_API tandem_status_t tandem_completion_profile(tandem_completion_t *completion,
                                                     tandem_completion_profile_t *out_profile,
                                                     tandem_region_profile_t *regions,
                                                     uint32_t capacity);

/* Gives up the caller's reference; the handle is dead from here on. The slot
 * returns to its executable when the work is done. NULL is ignored; a stale
 * handle changes nothing (the error message says so). Thread-safe. */
TANDEM_API void tandem_completion_release(tandem_completion_t *completion);

/*============================================================================
 * One-shot helpers
 *============================================================================
 *
 * A short first program without hiding the model: each helper below is the
 * calls you would otherwise write (a staging buffer, a map, a copy node, a
 * prepare, a submit, a wait), made in one call that blocks until its work is
 * done. Staging is explicit in the name and counted like any other copy: a
 * GPU_LOCAL view goes through a HOST_VISIBLE staging buffer of its length and
 * one copy node on the upload or download lane (statistics' copied_bytes and
 * tandem_runtime_lane_info count it; the staging buffer counts as an
 * allocation); a view of a HOST_VISIBLE, SHARED or NPU_LOCAL buffer is
 * written or read through a map, with no copy. Each call prepares a graph of
 * its own each time: for work repeated in a loop, prepare once and
 * submit.
 */

/* Makes a buffer of |size| bytes with |placement| holding a copy of |data|
 * (|size| bytes), staged as above. Errors: those of tandem_buffer_create and
 * tandem_buffer_write_staged; INVALID_ARGUMENT (NULL data or out_buffer).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_create_staged(tandem_runtime_t *runtime, const void *data,
                                                       uint64_t size, tandem_placement_t placement,
                                                       tandem_buffer_t **out_buffer);
/* Copies view.length bytes from |data| into |view|, or from |view| into
 * |out_data|, staged as above; waits for conflicting device work first (as
 * the blocking maps and the tracker do). Errors: INVALID_ARGUMENT (NULL),
 * OUT_OF_RANGE (a view not inside its buffer), those of the blocking maps
 * (BUSY for a conflicting live map, FAILED_DEPENDENCY for poisoned bytes),
 * and for a GPU_LOCAL view those of tandem_buffer_create (the staging
 * buffer: OVER_BUDGET, OUT_OF_MEMORY) and tandem_graph_run. Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_write_staged(tandem_view_t view, const void *data);
TANDEM_API tandem_status_t tandem_buffer_read_staged(tandem_view_t view, void *out_data);

/* Prepares |graph|, submits it once, waits and releases what it made: the
 * graph's one-shot run. Returns the run's result (as tandem_completion_wait).
 * The graph is unchanged and may be run again or prepared. Errors: those of
 * tandem_graph_prepare, tandem_exec_submit and tandem_completion_wait. */
TANDEM_API tandem_status_t tandem_graph_run(tandem_graph_t *graph);

/*============================================================================
 * Traces
 *============================================================================
 *
 * An opt-in, bounded record of what ran: one event per region, with its lane,
 * host submit time, GPU start and end (on the host clock), bytes copied, the
 * nodes it ran (by name) and the regions it waited for.
 * The ring is allocated when tracing starts and never grows: once full, the
 * oldest events are overwritten (the trace says how many were lost).
 */

typedef struct tandem_trace tandem_trace_t;

typedef struct tandem_trace_event {
  tandem_lane_t lane;
  uint32_t region;     /* region index inside its executable */
  uint64_t submission; /* runtime-wide submission number, from 1 */
  uint32_t node_count;
  uint64_t copied_bytes; /* bytes moved by copy nodes of the region */
  uint64_t host_submit_ns;
  uint64_t gpu_start_ns, gpu_end_ns; /* 0 when not calibrated */
  tandem_status_t result;
  /* What ran, for people: each node as its kernel or NPU program name (or
   * "copy", "fill") and its record-order index, e.g. "saxpy #2, scale_add #3";
   * ", +N more" when they do not all fit. NUL-terminated. */
  char name[64];
  uint32_t first_node; /* record-order index of the region's first node */
  uint64_t bytes;      /* bytes its nodes name: copy and fill lengths, the sum of
                          a dispatch's or NPU run's views */
  /* Per lane id, the region of the same submission this one waited for (-1:
   * none; its own lane and user lanes are always -1): the dependencies a
   * trace draws, across GPUs too. */
  int32_t waits_for[TANDEM_MAX_LANE_IDS];
} tandem_trace_event_t;

/* Starts recording up to |capacity| events (1 .. 1<<24). Every GPU event
 * has real start and end times: a runtime whose GPU is not open yet opens it
 * now with GPU timestamps on (as the gpu_timestamps option does, with its
 * cost per submission, for the rest of the runtime's life); a GPU opened
 * earlier without the option is refused, since its executables were made
 * without timestamp queries — set gpu_timestamps (or TANDEM_GPU_TIMESTAMPS=1)
 * or start the trace before the first call that opens the GPU. Opens the GPU
 * if needed. Errors: INVALID_ARGUMENT, BUSY (a trace is already running),
 * OUT_OF_RANGE, UNSUPPORTED (the GPU is open without timestamps, or the
 * device has no calibrated timestamps; the message says which and the fix),
 * OUT_OF_MEMORY. Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_trace_start(tandem_runtime_t *runtime, uint32_t capacity);
/* Stops recording and hands the events over; the caller owns |out_trace|.
 * Events of work still in flight are not included: wait for completions
 * first. Errors: INVALID_ARGUMENT (no trace running). Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_trace_stop(tandem_runtime_t *runtime,
                                                     tandem_trace_t **out_trace);
/* The events, oldest first (borrowed), their count, and how many were lost. */
TANDEM_API const tandem_trace_event_t *tandem_trace_events(const tandem_trace_t *trace,
                                                           uint32_t *out_count);
TANDEM_API uint64_t tandem_trace_dropped(const tandem_trace_t *trace);
/* Writes the trace as Chrome / Perfetto JSON (one track per lane); a trace
 * with no events is valid JSON too. A regular file is written under a
 * temporary name beside |path| and renamed over it at the end, so |path|
 * never holds a partly written trace (a device or FIFO is written in place).
 * Errors: INVALID_ARGUMENT, IO (with the path and the reason). */
TANDEM_API tandem_status_t tandem_trace_write_json(const tandem_trace_t *trace, const char *path);
/* Frees a trace returned by tandem_runtime_trace_stop. NULL is ignored. */
TANDEM_API void tandem_trace_release(tandem_trace_t *trace);

/*============================================================================
 * Statistics
 *============================================================================*/

typedef struct tandem_statistics {
  uint32_t struct_size;             /* sizeof(tandem_statistics_t): see Conventions */
  uint64_t allocations;             /* buffers created */
  uint64_t live_bytes;              /* bytes of buffers alive now */
  uint64_t peak_bytes;              /* highest live_bytes seen */
  uint64_t submissions;             /* successful submits */
  uint64_t completions;             /* submissions observed finished */
  uint64_t imports;                 /* memory imported from another device (sharing) */
  uint64_t copied_bytes;            /* bytes moved by copy nodes and staged sharing, all lanes;
                             per lane: tandem_runtime_lane_info */
  uint64_t cache_maintenance_bytes; /* bytes made visible to another engine (xrtBOSync) */
  uint64_t npu_runs;                /* NPU kernel runs executed */
  /* GPU buffer barriers submitted to hand SHARED bytes to or from the NPU
   * (docs/interop.md, "Coherence with the NPU"); 0 on graphs without such a
   * crossing */
  uint64_t coherence_barriers;
} tandem_statistics_t;

/* Zeroes |statistics| and sets struct_size, ready for
 * tandem_runtime_statistics. NULL is ignored. Errors: none. */
static inline void tandem_statistics_init(tandem_statistics_t *statistics) {
  if (!statistics) return;
  memset(statistics, 0, sizeof *statistics);
  statistics->struct_size = (uint32_t)sizeof *statistics;
}

/* A snapshot of the counters into |out_statistics|, whose struct_size must be
 * set (tandem_statistics_init). Errors: INVALID_ARGUMENT (runtime or
 * out_statistics NULL, a bad struct_size: nothing is written then).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_statistics(const tandem_runtime_t *runtime,
                                                     tandem_statistics_t *out_statistics);

/*
 * Lanes.  Every lane is an object with a timeline: the three GPU queues and
 * the NPU thread (ids 0..3, tandem_lane_t), and user lanes after them: an
 * imported timeline made a lane (EXTERNAL: tandem only waits on it) or a
 * native session (SESSION: signalled from the host when a stage ends).
 */
typedef enum tandem_lane_kind {
  TANDEM_LANE_KIND_UNUSED = 0,     /* a user lane id that is free now */
  TANDEM_LANE_KIND_GPU_QUEUE = 1,  /* upload, compute, download */
  TANDEM_LANE_KIND_NPU_THREAD = 2, /* the NPU lane */
  TANDEM_LANE_KIND_EXTERNAL = 3,   /* an imported timeline (tandem_external_timeline_lane) */
  TANDEM_LANE_KIND_SESSION = 4,    /* a native session (tandem_session_create) */
} tandem_lane_kind_t;

typedef struct tandem_lane_info {
  uint32_t struct_size; /* sizeof(tandem_lane_info_t): see Conventions */
  tandem_lane_kind_t kind;
  char name[64];  /* "compute", "npu", the session's name, "external 4" ... */
  uint64_t value; /* the timeline's value now (0 before the GPU is opened) */
  /* Built-in lanes: submissions with work on the lane. EXTERNAL: submissions
   * that waited on it. SESSION: stages begun. Counted since the lane id was
   * last taken. */
  uint64_t submissions;
  uint64_t copied_bytes; /* bytes moved by copy nodes on the lane (and staged sharing on NPU) */
} tandem_lane_info_t;

/* Zeroes |info| and sets struct_size, ready for tandem_runtime_lane_info.
 * NULL is ignored. */
static inline void tandem_lane_info_init(tandem_lane_info_t *info) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->struct_size = (uint32_t)sizeof *info;
}

/* One more than the highest lane id in use: TANDEM_LANE_COUNT while no user
 * lane exists, at most TANDEM_MAX_LANES. Ids below it may be UNUSED (a user
 * lane given back). 0 for NULL. Thread-safe. */
TANDEM_API uint32_t tandem_runtime_lane_count(const tandem_runtime_t *runtime);

/* Describes lane |lane| (0 .. TANDEM_MAX_LANES - 1) into |out_info|; a free
 * user id answers kind UNUSED. Errors: INVALID_ARGUMENT (NULL, a lane out of
 * range). Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_lane_info(tandem_runtime_t *runtime, int lane,
                                                    tandem_lane_info_t *out_info);

/*============================================================================
 * Sharing: memory and timelines with other processes and APIs
 *============================================================================
 *
 * For other processes and other APIs (CUDA, another Vulkan device, a camera's
 * dma-buf) that share memory and timelines with tandem through file
 * descriptors, and for host code that works on tandem's bytes as a stage of
 * its own (native sessions). Code that uses tandem's Vulkan objects
 * themselves goes through <tandem/tandem_vulkan.h>, and XRT code through
 * <tandem/tandem_xrt.h>. docs/interop.md has the whole picture, including
 * what is not built yet.
 *
 * What crosses this boundary is outside tandem's tracker (sessions excepted:
 * they are tracked). tandem orders its own work by the byte ranges of its
 * graphs; it does not see what you do with an exported fd or a native
 * handle. Order such work yourself: wait for the completions that touch the
 * bytes before you touch them, and do not touch bytes that tandem work in
 * flight reads or writes (except through tandem_exec_submit_waiting, whose
 * GPU-side waits order tandem's work after your producer's: then your
 * producer may write the bytes the submission reads, before the value it
 * signals).
 */

/*
 * Exported and imported memory.  A buffer's memory can leave the process as
 * a file descriptor, and a descriptor can come in as a buffer:
 *   OPAQUE_FD  VK_KHR_external_memory_fd; imports only into the same device
 *              and driver (another VkDevice on it, in this or another
 *              process): device and driver UUIDs, memory type and allocation
 *              size travel with the fd in tandem_external_memory_t and must
 *              match.
 *   DMA_BUF    VK_EXT_external_memory_dma_buf too; Linux's cross-device
 *              buffer sharing (another GPU, an NPU, a camera).
 * A buffer is exportable only when it was created so
 * (tandem_buffer_create_exportable): exportable memory is one dedicated
 * allocation with an OS handle behind it, which some drivers place or
 * allocate differently (lavapipe backs it with a memfd: one open file per
 * buffer), so ordinary buffers do not pay for it.
 *
 * Ownership of fds follows Vulkan's rules. An exported fd is the caller's:
 * close it (after sending it, or after an import elsewhere consumed a copy).
 * An fd given to tandem_buffer_import_fd belongs to tandem after a successful
 * import: do not close it, use it or pass it again (tandem closes it when the
 * buffer's memory is freed; the memory lives as long as any importer or
 * exporter still holds it). After a failed import the fd is still the
 * caller's, untouched.
 */

typedef enum tandem_external_memory_type {
  TANDEM_EXTERNAL_MEMORY_OPAQUE_FD = 1u << 0, /* VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT */
  TANDEM_EXTERNAL_MEMORY_DMA_BUF = 1u << 1,   /* ..._DMA_BUF_BIT_EXT */
} tandem_external_memory_type_t;

/* One exported memory: the fd plus what an importer must know. Plain bytes
 * apart from fd: send the struct along with the fd (SCM_RIGHTS) and set fd
 * to the received descriptor on the other side. */
typedef struct tandem_external_memory {
  uint32_t struct_size; /* sizeof(tandem_external_memory_t): see Conventions */
  int fd;
  tandem_external_memory_type_t type;
  uint64_t size;              /* the exported buffer's size in bytes */
  uint64_t allocation_size;   /* bytes of the memory behind the fd */
  uint32_t memory_type_index; /* the exporter's memory type (OPAQUE_FD: must match) */
  bool dedicated;             /* a dedicated allocation (the import must be too) */
  uint8_t device_uuid[16];    /* VkPhysicalDeviceIDProperties of the exporter */
  uint8_t driver_uuid[16];
} tandem_external_memory_t;

/* Zeroes |memory|, sets fd to -1 and sets struct_size, ready for
 * tandem_buffer_export_fd (or to describe memory for tandem_buffer_import_fd).
 * NULL is ignored. */
static inline void tandem_external_memory_init(tandem_external_memory_t *memory) {
  if (!memory) return;
  memset(memory, 0, sizeof *memory);
  memory->struct_size = (uint32_t)sizeof *memory;
  memory->fd = -1;
}

/* As tandem_buffer_create, and the memory can be exported as every type in
 * |types| (tandem_external_memory_type_t bits, at least one). Placement
 * GPU_LOCAL or HOST_VISIBLE. Errors: as tandem_buffer_create, plus
 * INVALID_ARGUMENT (types 0 or unknown bits), UNSUPPORTED (SHARED or
 * NPU_LOCAL; a type the device lacks, naming the extension; a type the driver
 * cannot export for storage buffers, or two types it cannot combine).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_create_exportable(tandem_runtime_t *runtime, uint64_t size,
                                                           tandem_placement_t placement,
                                                           uint32_t types,
                                                           tandem_buffer_t **out_buffer);

/* Exports |buffer|'s memory as a new fd of |type| (the caller owns and
 * closes it) and fills |out|; out->fd is -1 on failure. Each call makes a new
 * fd. Errors: INVALID_ARGUMENT (NULL, |type| not one type), UNSUPPORTED (the
 * buffer was not created exportable as |type|), OUT_OF_MEMORY (no fd left),
 * INTERNAL (the driver refused the export).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_export_fd(tandem_buffer_t *buffer,
                                                   tandem_external_memory_type_t type,
                                                   tandem_external_memory_t *out);

/* Makes a buffer of |size| bytes over the exported memory |memory|, with
 * |placement| GPU_LOCAL or HOST_VISIBLE. |size| is 1 .. allocation_size for
 * an opaque fd, 1 .. the dma-buf's own size for a dma-buf (whose fields
 * other than fd, type and dedicated may then be 0). HOST_VISIBLE maps it,
 * and needs a host-visible coherent memory type (OPAQUE_FD: the exporter's
 * own; export a HOST_VISIBLE buffer to read it by map elsewhere). The budget
 * is charged |size| and statistics count an allocation and an import. The
 * bytes are the exporter's, not zero-filled, and whoever else holds the
 * memory may change them at any time: order that with the exporter (see the
 * timelines below). Ownership of memory->fd: see above (tandem's after
 * success only). Errors: INVALID_ARGUMENT (NULL, a negative or closed fd, an
 * fd that is no exported memory — a pipe, FIFO, socket, directory, block
 * device or a regular file other than shared memory, refused by its kind
 * before the driver sees it — an unknown type or placement), OUT_OF_RANGE (size 0, or more than the memory
 * holds, with the numbers), UNSUPPORTED (SHARED or NPU_LOCAL; the type's
 * extension is missing, naming it; OPAQUE_FD from another device or driver;
 * the memory type does not fit this device, a storage buffer or the
 * placement), OVER_BUDGET, OUT_OF_MEMORY, NO_DEVICE, INTERNAL (the driver
 * refused the fd or the mapping). Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_import_fd(tandem_runtime_t *runtime,
                                                   const tandem_external_memory_t *memory,
                                                   uint64_t size, tandem_placement_t placement,
                                                   tandem_buffer_t **out_buffer);

/*
 * Exported timelines.  Each lane signals one timeline semaphore, in
 * increasing values, and only that lane signals it (tandem's invariant I2).
 * With the runtime option export_timelines, a lane's timeline can be
 * exported as an opaque fd (VK_KHR_external_semaphore_fd) and imported by
 * another VkDevice on the same device and driver, in this or another process.
 *
 * The importer may only wait on it, never signal it: a signal from outside
 * would break I2 and with it every ordering tandem computes (its own later
 * signals would go backwards, which Vulkan forbids). What to wait for:
 * tandem_completion_lane_values gives, per lane, the value its timeline
 * reaches when that submission's work on the lane has finished (0: none on
 * that lane). A lane's value covers all its earlier work too. Reaching the
 * values means the work ended, not that it succeeded: a failed, cancelled
 * or lost submission may still reach them (and a lost device may never);
 * only the exporting runtime's tandem_completion_wait tells the result, so
 * wait with a timeout and confirm through your own channel when that
 * matters.
 *
 * Imported timelines can be waited on from the host
 * (tandem_external_timeline_wait), or made a lane
 * (tandem_external_timeline_lane) that submissions wait on on the GPU
 * (tandem_exec_submit_waiting).
 */

/* Exports |lane|'s timeline (a GPU lane or TANDEM_LANE_NPU) as a new opaque
 * fd the caller owns and closes. Opens the GPU if needed. Errors:
 * INVALID_ARGUMENT (NULL, a lane out of range), UNSUPPORTED (the runtime
 * option export_timelines is off, or the device lacks
 * VK_KHR_external_semaphore_fd or cannot export timeline semaphores, named),
 * OUT_OF_MEMORY, NO_DEVICE, INTERNAL (the driver refused the export).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_export_timeline_fd(tandem_runtime_t *runtime,
                                                             tandem_lane_t lane, int *out_fd);

/* The timeline value each lane reaches when |completion|'s submission has
 * finished its work on that lane, into out_values[TANDEM_LANE_COUNT] (0 for
 * lanes it does not use). Stable for the completion's life. Errors:
 * INVALID_ARGUMENT (NULL, or not a live completion). Thread-safe. */
TANDEM_API tandem_status_t tandem_completion_lane_values(tandem_completion_t *completion,
                                                         uint64_t out_values[TANDEM_LANE_COUNT]);

typedef struct tandem_external_timeline tandem_external_timeline_t;

/* Imports an exported timeline (an opaque fd from
 * tandem_runtime_export_timeline_fd, or any timeline semaphore exported as
 * an opaque fd on the same device and driver) into |runtime|'s device. The
 * fd belongs to tandem after success, and is still the caller's after a
 * failure. The caller owns |out_timeline| (tandem_external_timeline_destroy).
 * Errors: INVALID_ARGUMENT (NULL, a negative fd), UNSUPPORTED (the device
 * lacks VK_KHR_external_semaphore_fd or cannot import timelines), INTERNAL
 * (the driver refused the fd: not an opaque-fd timeline of this device),
 * OUT_OF_MEMORY, NO_DEVICE. Thread-safe. */
TANDEM_API tandem_status_t tandem_runtime_import_timeline_fd(
    tandem_runtime_t *runtime, int fd, tandem_external_timeline_t **out_timeline);

/* Blocks until |timeline| reaches |value| or |timeout_ns| passed (TIMEOUT;
 * 0 polls). Errors: INVALID_ARGUMENT, TIMEOUT, DEVICE_LOST, OUT_OF_MEMORY (the
 * driver's answer to the wait). Thread-safe. */
TANDEM_API tandem_status_t tandem_external_timeline_wait(tandem_external_timeline_t *timeline,
                                                         uint64_t value, uint64_t timeout_ns);

/* Makes |timeline| a lane of its runtime (kind EXTERNAL: tandem waits on it
 * and never signals it), so submissions can wait for its values on the GPU
 * (tandem_exec_submit_waiting). The first call takes the lowest free user
 * lane id; later calls answer the same id. The lane lives until the timeline
 * is destroyed. Errors: INVALID_ARGUMENT (NULL), BUSY (all TANDEM_MAX_LANES
 * - TANDEM_LANE_COUNT user lane ids are taken). Thread-safe. */
TANDEM_API tandem_status_t tandem_external_timeline_lane(tandem_external_timeline_t *timeline,
                                                         tandem_lane_t *out_lane);

/* Destroys an imported timeline (one owner: not reference-counted). No host
 * wait on it may be running. When it was made a lane, first waits for every
 * submission that waits on it on the GPU (so those must be able to finish:
 * their values must come), then gives the lane id back. NULL is ignored. */
TANDEM_API void tandem_external_timeline_destroy(tandem_external_timeline_t *timeline);

/*
 * Native sessions.  A long-lived stage for a client that does its own work
 * synchronously on the calling thread (Vulkan commands it submits itself on
 * tandem's device and waits for, host code, another API), ordered against
 * tandem's graphs by the tracker. A session is a user lane (kind SESSION)
 * signalled from the host:
 *   - tandem_session_begin(accesses) waits on the host for earlier
 *     submissions (and other sessions' stages) whose byte ranges conflict
 *     with |accesses|, then records the stage as in flight on the session's
 *     lane. From then on the client may touch those bytes.
 *   - Later conflicting submissions get a GPU wait on the stage's value:
 *     they are queued at once and cannot overtake the stage. Host maps and
 *     other sessions' begins wait for the stage to end.
 *   - tandem_session_end(status) signals the value. With a status other than
 *     OK the stage failed: the session is quarantined (every later begin
 *     fails with FAILED_DEPENDENCY), what it wrote is poisoned, and every
 *     submission that waited for it finishes with FAILED_DEPENDENCY.
 * The client's own GPU work must have finished before end (a fence or
 * vkQueueWaitIdle): the value says the stage is done, nothing more. Do not
 * submit the client's work to a queue behind a tandem submission that waits
 * for the open stage: an in-order queue would then wait for itself.
 * One session's calls must not overlap; different sessions are independent.
 */
typedef struct tandem_session tandem_session_t;

typedef struct tandem_session_access {
  tandem_view_t view;
  tandem_access_t access; /* READ, WRITE (every byte rewritten) or READ_WRITE */
} tandem_session_access_t;

/* Makes a session named |name| (for lane info; NULL: "session N") on its
 * own user lane. Opens the GPU if needed. Errors: INVALID_ARGUMENT (NULL),
 * BUSY (all user lane ids are taken), OUT_OF_MEMORY, NO_DEVICE, INTERNAL
 * (the timeline could not be made). Thread-safe. */
TANDEM_API tandem_status_t tandem_session_create(tandem_runtime_t *runtime, const char *name,
                                                 tandem_session_t **out_session);

/* The session's lane id (for tandem_runtime_lane_info), or TANDEM_LANE_AUTO
 * for NULL. */
TANDEM_API tandem_lane_t tandem_session_lane(const tandem_session_t *session);

/* Begins a stage over |accesses| (count entries): waits up to |timeout_ns|
 * (UINT64_MAX: for ever) for earlier conflicting work, then records the
 * stage. Errors: INVALID_ARGUMENT (NULL, accesses NULL with a count, a view
 * without a buffer or from another runtime, an access that is not READ,
 * WRITE or READ_WRITE, a stage already open), OUT_OF_RANGE (a view outside
 * its buffer), BUSY (a live host map conflicts: nothing was begun),
 * FAILED_DEPENDENCY (the session is quarantined, or bytes it reads were
 * last written by work that failed and no earlier work still in flight
 * rewrites them; a rewrite in flight is waited for and decides), TIMEOUT (earlier work did not finish in
 * time: nothing was begun), OUT_OF_MEMORY, DEVICE_LOST. */
TANDEM_API tandem_status_t tandem_session_begin(tandem_session_t *session,
                                                const tandem_session_access_t *accesses,
                                                uint32_t count, uint64_t timeout_ns);

/* Ends the open stage with |status| (OK: it succeeded; anything else: it
 * failed, see above) and signals its value; returns OK once the stage is
 * over, whatever |status| said. Errors: INVALID_ARGUMENT (NULL, no stage
 * open), DEVICE_LOST (the signal failed: the runtime is lost). */
TANDEM_API tandem_status_t tandem_session_end(tandem_session_t *session, tandem_status_t status);

/* Ends an open stage as CANCELLED, waits for every submission that waits on
 * the session's lane on the GPU, gives the lane back and frees the session.
 * NULL is ignored. */
TANDEM_API void tandem_session_destroy(tandem_session_t *session);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_TANDEM_H_ */