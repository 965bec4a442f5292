/* SPDX-License-Identifier: MIT */
/*
 * backend.h — the one interface through which core/ drives a GPU backend.
 *
 * core/ decides everything that is not device-specific: lanes, regions,
 * dependencies, timeline values, slots, statistics. A backend turns those
 * decisions into native objects and calls. The vtable starts with destroy; a
 * backend's device object embeds tandem__gpu_t first. Capability bits in
 * tandem__gpu_t.info are queried at open; core branches on them, never on
 * NULL function pointers (every slot is filled).
 */
#ifndef TANDEM_CORE_BACKEND_H_
#define TANDEM_CORE_BACKEND_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/kernel_interface.h"
#include "tandem/tandem.h"
#include "tandem/tandem_vulkan.h"

typedef struct tandem__gpu tandem__gpu_t;

/*--------------------------------------------------------------------------
 * The command interface: how core records a prepared program.
 *
 * Core walks its plan (core/record.c) and hands a backend one region of one
 * slot at a time as a list of commands: fill, copy, dispatch, and the
 * barriers between them, each with its scope already computed. Core decides
 * the order, the regions, where barriers go and what they cover, and the
 * timeline values a region waits for and signals (program.submit); a backend
 * decides only the native objects and calls that carry them out. A backend
 * never sees core's plan or node layouts.
 *
 * Commands are numbered across the program (|id|, 0 .. command_count-1,
 * stable for the program's life: the plan's node index); descriptors and
 * similar per-command native state hang off that number. A new kind of
 * command (say, one a user's callback records into the backend's native
 * command buffer) is a new record_* entry and a case in core/record.c; a
 * command whose contents the backend cannot see must make it forget what it
 * believed bound, and take TANDEM__WORK_ALL in the barriers around it.
 *--------------------------------------------------------------------------*/

/* Kinds of GPU work: a barrier's source and destination scopes are sets of
 * them. Core derives them from the commands on either side of the barrier. */
enum {
  TANDEM__WORK_COMPUTE = 1u << 0,  /* dispatches: shader storage reads and writes */
  TANDEM__WORK_TRANSFER = 1u << 1, /* fills and copies */
  /* An indirect dispatch reading its workgroup counts (a destination kind
   * only: on a device it is a stage of its own, and naming it costs, so core
   * names it only when an indirect dispatch is in the barrier's destination). */
  TANDEM__WORK_INDIRECT = 1u << 2,
  TANDEM__WORK_ALL = TANDEM__WORK_COMPUTE | TANDEM__WORK_TRANSFER | TANDEM__WORK_INDIRECT,
  /* Commands a user's callback recorded (record_user): the backend cannot see
   * which they are, so this names every shader and transfer stage the lane's
   * queue can run, with every read and write access of them. */
  TANDEM__WORK_USER = 1u << 3,
};

/* One storage binding of a dispatch: |range| bytes of |buffer| (a backend
 * buffer native) from |offset| — the contract's bytes, all the kernel sees. */
typedef struct tandem__binding {
  void *buffer;
  uint64_t offset, range;
} tandem__binding_t;

/* The bindings of up to TANDEM__BINDING_BATCH bindings' worth of dispatches
 * (record.bindings): dispatch i is command ids[i], with the next
 * binding_counts[i] entries of |bindings|. */
#define TANDEM__BINDING_BATCH 128u
typedef struct tandem__binding_batch {
  uint32_t count;
  const uint32_t *ids;
  const uint32_t *binding_counts;
  const tandem__binding_t *bindings;
} tandem__binding_batch_t;

typedef struct tandem__cmd_fill {
  uint32_t id;
  void *buffer;
  uint64_t offset, length;
  uint32_t pattern;
} tandem__cmd_fill_t;

typedef struct tandem__cmd_copy {
  uint32_t id;
  void *src, *dst;
  uint64_t src_offset, dst_offset, bytes;
} tandem__cmd_copy_t;

typedef struct tandem__cmd_dispatch {
  uint32_t id;
  void *kernel; /* the kernel's native (kernel.create) */
  const tandem__binding_t *bindings;
  uint32_t binding_count; /* the program description's for this id */
  const void *push;
  uint32_t push_bytes;
  uint32_t workgroups[3]; /* direct dispatch */
  void *indirect;         /* buffer native holding the counts, or NULL: direct */
  uint64_t indirect_offset;
} tandem__cmd_dispatch_t;

/* Commands a user's callback records into the backend's native command
 * buffer (a Vulkan commands node, core/handoff.c): the backend calls
 * record(context, command_buffer) and then forgets what it believed bound. */
typedef struct tandem__cmd_user {
  uint32_t id;
  tandem_status_t (*record)(void *context, void *command_buffer);
  void *context;
} tandem__cmd_user_t;

/* What a command id needs made once per slot: a dispatch's kernel and its
 * binding count (kernel NULL for every other command). */
typedef struct tandem__program_command {
  void *kernel;
  uint32_t binding_count;
} tandem__program_command_t;

/* Coherence with the NPU (docs/interop.md, "Coherence with the NPU"): a
 * byte range of a SHARED buffer that GPU region |region| hands to the NPU at
 * its end (|release|: the NPU reads or writes it later) or takes back from
 * the NPU at its start (the NPU read or wrote it earlier). Core finds them
 * (core/plan.c: only where a GPU and an NPU node conflict over SHARED
 * bytes, so a graph without such a crossing has none); a backend records
 * what its API requires for memory another engine uses: in Vulkan, a
 * queue-family ownership transfer to or from VK_QUEUE_FAMILY_EXTERNAL for
 * |external| memory, a host-domain barrier (HOST stage) for host memory. */
typedef struct tandem__handoff {
  uint32_t region;
  bool release;
  /* dma-buf memory the NPU reaches as another device; false: host memory the
   * NPU side reaches through the host (host-pointer import, staged copies). */
  bool external;
  void *buffer; /* backend buffer native */
  uint64_t offset, length;
} tandem__handoff_t;

/* A prepared program as a backend sees it (program.create). */
typedef struct tandem__program_desc {
  uint32_t slot_count;
  uint32_t region_count;
  const tandem_lane_t *region_lane; /* [region]; NPU regions are never recorded */
  const uint32_t *region_commands;  /* [region]: its commands, barriers not counted */
  /* [region]: the pieces a GPU region is recorded in (>= 1; 1 for an NPU
   * region, never recorded), each into a native command buffer of its own, submitted in
   * piece order as one batch (see "Pieces" above record.begin). */
  const uint32_t *region_pieces;
  /* [piece, region by region: the pieces of region 0, then region 1 ...]:
   * each piece's commands, barriers not counted (they sum to the region's). */
  const uint32_t *piece_commands;
  uint32_t command_count;
  const tandem__program_command_t *commands; /* [id] */
  /* Sorted by region, a region's acquires before its releases; the first
   * piece of a region records its acquires before its first command, the
   * last piece its releases after its last. Entries of a region this
   * backend does not run (region_lane NPU) are not its own: skipped. */
  uint32_t handoff_count;
  const tandem__handoff_t *handoffs;
} tandem__program_desc_t;

/* Lane ids, as core numbers them (the public ids, tandem.h "Lanes"):
 *   0 .. 2    GPU 0's upload, compute and download lanes (tandem_lane_t)
 *   3         the NPU lane
 *   4 .. 7    user lanes: imported timelines, native sessions (core/lane.c)
 *   8 .. 16   the lanes of GPUs 1 .. 3, three each (tandem_gpu_lane)
 * Every region submission carries a wait value per lane id and a backend
 * keeps one wait descriptor per lane id per region, made at prepare so
 * replay allocates nothing; the fixed table costs memory per region only.
 *
 * A backend sees the ids of its own device: its lanes are 0 .. 2 there,
 * whichever GPU of the runtime it is (tandem__lane_in_gpu), 3 is the NPU
 * lane (host-signalled), and every other id is a timeline lane.bind gave it:
 * a user lane, or the proxy of another GPU's lane that the relay signals
 * from the host (core/relay.c). */
#define TANDEM__USER_LANE_END TANDEM_MAX_LANES
#define TANDEM__MAX_LANES (TANDEM_MAX_LANES + TANDEM_LANE_COUNT_GPU * (TANDEM_MAX_GPUS - 1))

/* A user lane id (EXTERNAL or SESSION kind when taken). */
static inline bool tandem__lane_is_user(int lane) {
  return lane >= TANDEM_LANE_COUNT && lane < TANDEM__USER_LANE_END;
}
/* The GPU a lane id's queue belongs to, or -1 (the NPU lane, user lanes). */
static inline int tandem__lane_gpu(int lane) {
  if (lane >= 0 && lane < TANDEM_LANE_COUNT_GPU) return 0;
  if (lane >= TANDEM__USER_LANE_END && lane < TANDEM__MAX_LANES)
    return 1 + (lane - TANDEM__USER_LANE_END) / TANDEM_LANE_COUNT_GPU;
  return -1;
}
/* Which of its GPU's lanes a GPU lane id is: UPLOAD, COMPUTE or DOWNLOAD. */
static inline tandem_lane_t tandem__lane_local(int lane) {
  return (tandem_lane_t)(lane < TANDEM_LANE_COUNT_GPU
                             ? lane
                             : (lane - TANDEM__USER_LANE_END) % TANDEM_LANE_COUNT_GPU);
}
/* The lane id of GPU |g|'s |local| lane (UPLOAD, COMPUTE or DOWNLOAD). */
static inline int tandem__gpu_lane(uint32_t g, tandem_lane_t local) {
  return g == 0 ? (int)local
                : TANDEM__USER_LANE_END + (int)(g - 1) * TANDEM_LANE_COUNT_GPU + (int)local;
}
/* The entries of |values| (core's ids) that GPU |g| waits for itself, into
 * |local| in its backend's ids: its own lanes, and on GPU 0 the user lanes
 * (bound there only). False when there is none. */
static inline bool tandem__lane_values_for_gpu(uint32_t g, const uint64_t *values, uint64_t *local);

/* The id core's lane |lane| has in GPU |g|'s backend: g's own lanes are 0 .. 2
 * there and GPU 0's lanes take g's ids; every other id is itself. Its own
 * inverse, and the identity on GPU 0. */
static inline int tandem__lane_in_gpu(uint32_t g, int lane) {
  if (g == 0) return lane;
  int base = tandem__gpu_lane(g, TANDEM_LANE_UPLOAD);
  if (lane >= 0 && lane < TANDEM_LANE_COUNT_GPU) return base + lane;
  if (lane >= base && lane < base + TANDEM_LANE_COUNT_GPU) return lane - base;
  return lane;
}

/* One region's submission: which prepared region, and the values it waits for
 * on each lane id, user lanes included (0 = no wait), and signals on its own
 * (built-in) lane. */
typedef struct tandem__region_submit {
  uint32_t region;
  uint64_t wait_values[TANDEM__MAX_LANES];
  uint64_t signal_value;
  /* One more wait, on a timeline semaphore of the user's (tandem_runtime_submit_vulkan):
   * the native semaphore and its value; NULL none. GPU regions only. */
  void *external_wait;
  uint64_t external_value;
  bool submitted; /* set by program.submit once the region is handed to its queue */
} tandem__region_submit_t;

/* The device as a whole. */
typedef struct tandem__gpu_device_ops {
  void (*destroy)(tandem__gpu_t *gpu);
  /* Waits until every queue is idle, whatever any wait answered before
   * (vkDeviceWaitIdle; a device lost for real returns at once). Used after
   * device loss, before freeing what the queues may still run (core/lost.c). */
  void (*idle)(tandem__gpu_t *gpu);
  /* Optional (NULL: the backend keeps nothing). Gives back what the backend
   * keeps from destroyed programs (tandem_runtime_trim). Thread-safe against
   * every other entry. */
  void (*trim)(tandem__gpu_t *gpu);
} tandem__gpu_device_ops_t;

/* Buffers: device memory, and memory another device (the NPU) owns. */
typedef struct tandem__gpu_buffer_ops {
  /* Device memory. |out_host| is the persistent mapping for HOST_VISIBLE, else
   * NULL. The memory is zero-filled and visible to every lane on return.
   * |export_types| (tandem_external_memory_type_t bits, 0: none) makes the
   * memory exportable as those handle types; only bits in
   * external_memory_types are passed. */
  tandem_status_t (*create)(tandem__gpu_t *gpu, uint64_t size, tandem_placement_t placement,
                            uint32_t export_types, void **out_native, void **out_host);
  void (*destroy)(tandem__gpu_t *gpu, void *native);
  /* Which memory type |native| (any buffer this backend made or imported) lives in. */
  void (*memory)(tandem__gpu_t *gpu, void *native, tandem_buffer_memory_t *out);
  /* Wraps memory another device owns as a GPU buffer usable by every lane:
   * a host mapping (VK_EXT_external_memory_host; |host| and |size| aligned to
   * host_import_alignment), or a dma-buf fd (the fd stays the caller's).
   * Only called when can_import_host / can_import_dmabuf are set. */
  tandem_status_t (*import_host)(tandem__gpu_t *gpu, void *host, uint64_t size, void **out_native);
  tandem_status_t (*import_dmabuf)(tandem__gpu_t *gpu, int fd, uint64_t size, void **out_native);
  /* Device memory exported as a dma-buf |out_fd| (the caller closes it), for
   * another device to import. Only called when can_import_dmabuf is set (the
   * same extensions cover export). */
  tandem_status_t (*create_dmabuf)(tandem__gpu_t *gpu, uint64_t size, void **out_native,
                                   int *out_fd);
} tandem__gpu_buffer_ops_t;

/* Kernels: reflection and pipelines. */
typedef struct tandem__gpu_kernel_ops {
  /* Validates and reflects code for core/kernel.c to check the contract
   * against, before any native object is made from it. */
  tandem_status_t (*reflect)(tandem__gpu_t *gpu, const void *code, size_t code_bytes,
                             const char *entry_point, const char *name,
                             tandem__kernel_interface_t *out_iface);
  /* Builds the pipeline of a kernel whose contract was checked, with the
   * specialization core resolved (|build|). */
  tandem_status_t (*create)(tandem__gpu_t *gpu, tandem__kernel_build_t *build, const char *name,
                            void **out_native);
  void (*destroy)(tandem__gpu_t *gpu, void *native);
} tandem__gpu_kernel_ops_t;

/* Programs: the native objects of a prepared graph, their submission and timestamps. */
typedef struct tandem__gpu_program_ops {
  /* Makes the native objects of a prepared program (|desc|, below): per
   * slot, a command buffer per GPU region and descriptors per dispatch.
   * Records nothing: core records every GPU region of every slot right after
   * (core/record.c). |desc| and its arrays are the caller's; copy what is
   * kept. */
  tandem_status_t (*create)(tandem__gpu_t *gpu, const tandem__program_desc_t *desc,
                            void **out_native);
  /* Only called when no slot of the program is in flight. The backend may
   * keep some of the program's objects for later programs (the Vulkan
   * backend keeps descriptor pools), until trim. */
  void (*destroy)(tandem__gpu_t *gpu, void *native);
  /* Submits regions of slot |slot| in the given order (creation order, so every
   * wait names a value already submitted). Caller holds runtime->mutex. Must
   * not allocate. Marks each region it handed to a queue |submitted|: after
   * a failure, those may still run (core/lost.c). */
  tandem_status_t (*submit)(tandem__gpu_t *gpu, void *native, uint32_t slot,
                            tandem__region_submit_t *regions, uint32_t region_count);
  /* GPU start and end of each region of |slot|'s last run, converted to the
   * host's CLOCK_MONOTONIC: out[2r], out[2r+1]. The run must have finished.
   * Returns OK; UNSUPPORTED (and zeros, no message) when the program keeps
   * no timestamps or the device cannot calibrate its clock; or the
   * readback's failure (zeros; DEVICE_LOST when the device answered so). */
  tandem_status_t (*timestamps)(tandem__gpu_t *gpu, void *native, uint32_t slot,
                                uint64_t *out_pairs);
} tandem__gpu_program_ops_t;

/* Command recording. */
typedef struct tandem__gpu_record_ops {
  /* Recording one GPU region of one slot, command by command (core/record.c
   * decides every command, its order and every barrier's scope; see "The
   * command interface" above). Only called while that slot is not in flight.
   *
   * Which state lives where: a program keeps one recording state per slot
   * and piece (below, "Pieces"; read "slot" as "slot and piece" here)
   * (the native command buffer being recorded, what it believes bound, the
   * descriptor writes not yet handed over), and every record_* call names
   * its slot. A slot records one region at a time, and the calls of one
   * slot's recording come from one thread; the recordings of different
   * slots of one program may run at the same time on different threads
   * (prepare records the slots in parallel, core/record.c). So a backend
   * keeps per-slot state apart, and whatever the slots share (a command pool,
   * a descriptor pool, the device's tables) must be safe to use from two
   * recordings at once: in Vulkan, concurrent recordings use command buffers
   * of different command pools, since a pool is externally synchronised
   * while any of its buffers records. program.create, program.destroy and
   * program.submit are never called while a recording runs. After prepare,
   * recording happens under runtime->mutex (re-recording at submit), one
   * slot and piece at a time, the pieces of a region in order.
   *
   * Pieces: core may split a long region into pieces (region_pieces in the
   * description; core/record.c decides where: only at a command that has a
   * barrier before it, never in a region with user commands), and records
   * each piece of each slot as a recording of its own, named by (slot,
   * piece): record.begin(slot, region, piece) .. record.end(slot, piece).
   * The pieces of one slot and region may record at the same time on
   * different threads (prepare), like different slots; a piece starts with
   * nothing bound. The commands and barriers of a region's pieces, in piece
   * order, are exactly those one recording of the whole region would get:
   * the barrier that starts a piece is that piece's first command, with the
   * scope the unsplit recording would give it, so a backend must keep
   * ordering across the pieces' command buffers (in Vulkan: one batch, the
   * buffers in piece order). A region's timestamps are written at the
   * start of its first piece and the end of its last. A (slot, piece)
   * records one region at a time, from one thread. In Vulkan the recording
   * (slot, piece) uses pool (piece * slot_count + slot) % 4 of its lane, so
   * the recordings core runs at once on up to four threads use different
   * pools; two on one pool would only wait for each other.
   *
   * Sequence per (slot, piece): record.begin; then, in order, record.bindings with a
   * batch of the dispatches ahead (those with bindings, each before its
   * dispatch command and with the bindings that command carries; no command
   * recorded so far bound any of them, so a backend may write their
   * descriptors now) and the commands up to the next batch; record.end.
   * After a record.begin that succeeded core always calls record.end; the
   * commands cannot fail (a backend that meets a failure between them
   * reports it from record.end). Allocates nothing of tandem's own:
   * re-recording happens at submit. */
  tandem_status_t (*begin)(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t region,
                           uint32_t piece);
  void (*bindings)(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
                   const tandem__binding_batch_t *batch);
  void (*barrier)(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
                  uint32_t src_work, uint32_t dst_work);
  void (*fill)(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
               const tandem__cmd_fill_t *cmd);
  void (*copy)(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
               const tandem__cmd_copy_t *cmd);
  void (*dispatch)(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
                   const tandem__cmd_dispatch_t *cmd);
  /* The one command that can fail: the user's callback's status. Core then
   * records nothing more into the region and calls record.end. Core never
   * records a program with user commands on more than one thread: a user's
   * callback is called from the thread that prepares or submits. */
  tandem_status_t (*user)(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece,
                          const tandem__cmd_user_t *cmd);
  tandem_status_t (*end)(tandem__gpu_t *gpu, void *native, uint32_t slot, uint32_t piece);
} tandem__gpu_record_ops_t;

/* Lanes and their timelines. */
typedef struct tandem__gpu_lane_ops {
  /* Blocks until every lane L reached values[L] (0 = ignore) or |timeout_ns|
   * passed (TIMEOUT). Only lanes with a timeline (built-in, or bound by
   * lane.bind) are named. Thread-safe; takes no core lock. */
  tandem_status_t (*wait)(tandem__gpu_t *gpu, const uint64_t values[TANDEM__MAX_LANES],
                          uint64_t timeout_ns);
  /* Signals |lane|'s timeline to |value| from the host (the NPU lane).
   * Thread-safe. */
  tandem_status_t (*signal)(tandem__gpu_t *gpu, tandem_lane_t lane, uint64_t value);
  /* Current value of every lane's timeline (0 for a user lane id with none
   * bound). Thread-safe. */
  tandem_status_t (*query)(tandem__gpu_t *gpu, uint64_t out_values[TANDEM__MAX_LANES]);
  /* Gives user lane id |lane| (TANDEM_LANE_COUNT ..) a timeline that region
   * submissions may wait on: |imported| (a timeline_import native, still
   * owned by the caller, only waited on), or, when NULL, a new timeline of
   * the backend's own that signal() advances from the host (a native
   * session). Called under runtime->mutex for an id with none bound. */
  tandem_status_t (*bind)(tandem__gpu_t *gpu, tandem_lane_t lane, void *imported);
  /* Forgets |lane|'s timeline (destroying one lane.bind made). Called under
   * runtime->mutex once no queued work waits on it any more. */
  void (*unbind)(tandem__gpu_t *gpu, tandem_lane_t lane);
} tandem__gpu_lane_ops_t;

/* Interop with the application's own Vulkan code (core/interop.c,
 * core/adopt.c, core/handoff.c): Vulkan-only, so a backend without Vulkan
 * leaves tandem__gpu_vtable_t.interop NULL (and external_memory_types 0,
 * timelines_exportable and can_import_timelines false, so the export and
 * import entries are never reached), and core answers the interop calls
 * UNSUPPORTED: tandem__gpu_native_handles leaves the handles zeroed (no
 * VkDevice). */
typedef struct tandem__gpu_interop_ops {
  /* The native handles (tandem_runtime_vulkan_handles) into |out|, which
   * core passes zeroed in this library's layout (tandem_vulkan_handles_init):
   * a backend sets the fields it has and leaves struct_size; and the lock of
   * a GPU lane's queue for code outside tandem. */
  void (*native_handles)(tandem__gpu_t *gpu, tandem_vulkan_handles_t *out);
  /* The native timeline semaphore of |lane| (any lane, the NPU's too), for
   * user submissions to wait on; NULL without Vulkan. */
  void *(*lane_timeline)(tandem__gpu_t *gpu, tandem_lane_t lane);
  void (*queue_lock)(tandem__gpu_t *gpu, tandem_lane_t lane, bool lock);
  /* Interop (core/interop.c). The native buffer's VkBuffer, as void *. */
  void *(*buffer_vulkan)(tandem__gpu_t *gpu, void *native);
  /* A new fd of |type| for a buffer created with that type in export_types
   * (UNSUPPORTED otherwise); fills every field of |out| but size. */
  tandem_status_t (*buffer_export)(tandem__gpu_t *gpu, void *native,
                                   tandem_external_memory_type_t type,
                                   tandem_external_memory_t *out);
  /* A buffer of |size| bytes over |memory| (a type in external_memory_types):
   * checks device, memory type and sizes against this device; |out_host|
   * as buffer.create. Imports a duplicate of memory->fd: the caller's fd is
   * left alone, whatever the outcome. Not zero-filled. */
  tandem_status_t (*buffer_import)(tandem__gpu_t *gpu, const tandem_external_memory_t *memory,
                                   uint64_t size, tandem_placement_t placement, void **out_native,
                                   void **out_host);
  /* An opaque fd of |lane|'s timeline (only with timelines_exportable). */
  tandem_status_t (*timeline_export)(tandem__gpu_t *gpu, tandem_lane_t lane, int *out_fd);
  /* A timeline semaphore over opaque fd |fd| (only with can_import_timelines);
   * on success the fd belongs to the driver, on failure it stays the caller's. */
  tandem_status_t (*timeline_import)(tandem__gpu_t *gpu, int fd, void **out_native);
  /* Blocks until the imported timeline reaches |value| (TIMEOUT after
   * |timeout_ns|). Thread-safe. */
  tandem_status_t (*timeline_wait)(tandem__gpu_t *gpu, void *native, uint64_t value,
                                   uint64_t timeout_ns);
  void (*timeline_destroy)(tandem__gpu_t *gpu, void *native);
  /* Adoption (core/adopt.c): the application's buffer or pipeline as this
   * backend's native object, after checking it against this device
   * (another device's is INVALID_ARGUMENT). The native object borrows the
   * application's handles: buffer.destroy / kernel.destroy then free only
   * what the backend added (the record, a mapping it made). buffer_adopt:
   * |out_host| as buffer.create (HOST_VISIBLE), not zero-filled;
   * |out_indirect|: whether dispatches may read their sizes from it (an
   * application's buffer may lack the usage that needs; graph.c refuses it
   * as an indirect view then).
   * kernel_adopt: |build| as kernel.create, already checked against the
   * contract; the backend checks what only it can (workgroup memory). */
  tandem_status_t (*buffer_adopt)(tandem__gpu_t *gpu, const tandem_vulkan_buffer_t *desc,
                                  void **out_native, void **out_host, bool *out_indirect);
  tandem_status_t (*kernel_adopt)(tandem__gpu_t *gpu, tandem__kernel_build_t *build,
                                  const char *name, const tandem_vulkan_kernel_t *desc,
                                  void **out_native);
} tandem__gpu_interop_ops_t;

/* A GPU backend's interface, by object. Every entry of the embedded tables
 * is filled (trim may be NULL); interop may be NULL. Test hooks are not
 * here: a backend that has them sets tandem__gpu_t.test_hooks
 * (core/test_hooks.h). */
typedef struct tandem__gpu_vtable {
  tandem__gpu_device_ops_t device;
  tandem__gpu_buffer_ops_t buffer;
  tandem__gpu_kernel_ops_t kernel;
  tandem__gpu_program_ops_t program;
  tandem__gpu_record_ops_t record;
  tandem__gpu_lane_ops_t lane;
  const tandem__gpu_interop_ops_t *interop;
} tandem__gpu_vtable_t;

struct tandem__gpu {
  const tandem__gpu_vtable_t *vtable;
  /* Test-only controls (core/test_hooks.h); NULL: the backend has none. */
  const struct tandem__gpu_test_hooks *test_hooks;
  tandem_device_info_t info;
  uint64_t storage_alignment;       /* minStorageBufferOffsetAlignment */
  uint32_t max_workgroups[3];       /* maxComputeWorkGroupCount (also in info) */
  uint32_t max_workgroup_subgroups; /* maxComputeWorkgroupSubgroups */
  uint64_t max_storage_range; /* the most bytes one binding may cover (maxStorageBufferRange) */
  /* Regions get GPU start and end times on the host clock (program.timestamps
   * answers true): the gpu_timestamps option, and a device that can calibrate. */
  bool timestamps;
  bool can_import_host;           /* VK_EXT_external_memory_host enabled */
  bool can_import_dmabuf;         /* VK_EXT_external_memory_dma_buf enabled */
  uint64_t host_import_alignment; /* minImportedHostPointerAlignment */
  /* Interop: the tandem_external_memory_type_t bits buffers can be exported
   * and imported as (OPAQUE_FD with VK_KHR_external_memory_fd, DMA_BUF with
   * VK_EXT_external_memory_dma_buf too); whether the lanes' timelines were
   * made exportable (runtime option export_timelines and
   * VK_KHR_external_semaphore_fd), and whether opaque-fd timelines import. */
  uint32_t external_memory_types;
  bool timelines_exportable;
  bool can_import_timelines;
  /* Which GPU lanes share one in-order queue: lanes with equal numbers do
   * (lavapipe has a single queue; the H200 one per lane). */
  uint8_t lane_queue[TANDEM_LANE_COUNT_GPU];
  /* On an application's VkDevice (runtime option vulkan_device): the
   * tandem_shader_feature_t bits the physical device has but the device was
   * created without, so a kernel refused for one says "not enabled" and how
   * to enable it. 0 on tandem's own device (it enables all it has). */
  uint32_t shader_features_not_enabled;
  /* Buffer barriers of handoffs (tandem__handoff_t) in the regions this
   * device was given to run: added by program.submit, read by
   * tandem_runtime_statistics (coherence_barriers). */
  atomic_uint_fast64_t coherence_barriers;
};

/* The backend's native handles into |out| (zeroed by the caller), or
 * nothing (no VkDevice) when it has no interop table. */
static inline void tandem__gpu_native_handles(tandem__gpu_t *gpu, tandem_vulkan_handles_t *out) {
  if (gpu->vtable->interop) gpu->vtable->interop->native_handles(gpu, out);
}

/* CLOCK_MONOTONIC in ns, the clock every time tandem reports is on (backends
 * convert device timestamps to it). */
static inline uint64_t tandem__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A GPU backend as core knows it: how many devices it sees, the description
 * of one, and opening one for a runtime. Core never names a backend's
 * functions: a runtime finds its entry by name in the registry
 * (core/registry.h) at creation and calls through it. */
typedef struct tandem__gpu_backend {
  const char *name; /* "vulkan": the runtime option gpu_backend that selects it */
  /* open accepts the runtime option vulkan_device (the application's own
   * VkDevice). A backend without it is refused that option at
   * tandem_runtime_create, so no runtime silently runs elsewhere. */
  bool opens_vulkan_device;
  /* The fault-injection kind (core/fault.h, tandem__fault_kind_t) that
   * counts its native calls; 0: it makes none (the host GPU). */
  uint32_t fault_kind;
  tandem_status_t (*count)(uint32_t *out_count);
  tandem_status_t (*info)(uint32_t index, tandem_device_info_t *out_info);
  tandem_status_t (*open)(const tandem_runtime_options_t *options,
                          atomic_uint_fast64_t *validation_counter, tandem__gpu_t **out_gpu);
} tandem__gpu_backend_t;

/* The Vulkan backend (backends/vulkan/vk_device.c): the registry's "vulkan",
 * every runtime's unless its options name another. Only core/registry.c
 * names it. */
extern const tandem__gpu_backend_t tandem_vk_gpu_backend;
/* The host GPU (backends/host/host_gpu.c): the registry's "host", a test and
 * development device on host memory and threads, never hardware. Only
 * core/registry.c names it. */
extern const tandem__gpu_backend_t tandem_host_gpu_backend;

static inline bool tandem__lane_values_for_gpu(uint32_t g, const uint64_t *values,
                                               uint64_t *local) {
  bool any = false;
  for (int l = 0; l < TANDEM__MAX_LANES; l++) local[l] = 0;
  for (int l = 0; l < TANDEM__MAX_LANES; l++) {
    int owner = tandem__lane_gpu(l);
    if (!values[l] || (owner < 0 ? g != 0 : (uint32_t)owner != g)) continue;
    local[tandem__lane_in_gpu(g, l)] = values[l];
    any = true;
  }
  return any;
}

#endif /* TANDEM_CORE_BACKEND_H_ */
