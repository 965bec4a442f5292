/* SPDX-License-Identifier: MIT */
/*
 * internal.h — core's object layouts and the invariants that tie them.
 *
 * Lifetimes (who keeps whom alive):
 *   buffer, kernel, graph, exec  → runtime   (one reference each)
 *   graph, exec                  → buffers and kernels their nodes use
 *   user-held completion         → its exec  (one exec reference each)
 * and the exec's last release waits for its in-flight slots before freeing,
 * so nothing a queue may touch is freed while it is in flight (I1).
 *
 * Locking: runtime->mutex ("the tracker lock") guards every field marked
 * [mutex] below: lane values, in-flight slots and their access records, buffer
 * record lists and host maps. Backend queue submission happens under it, which
 * keeps each lane's timeline values submitted in increasing order (I2).
 * Waiting on a timeline never holds it.
 *
 * Invariants:
 *   I1  A buffer's memory is freed only when its refcount is 0, which implies no
 *       graph, exec or in-flight slot refers to it.
 *   I2  For each lane, signal values are handed out and submitted in strictly
 *       increasing order under runtime->mutex.
 *   I3  A tracker record is linked in its buffer's list iff its slot is in flight
 *       (submitted and not yet retired); a native session's record (no slot)
 *       iff its stage is open (its value above its lane's done value).
 *   I4  A slot is FREE iff it is not in flight and its completion has no user
 *       reference; its completion handle is live iff the user holds it
 *       (core/handle.c).
 *   I5  The NPU lane signals every NPU region's value exactly once, in
 *       submission order, whatever happened to the run (core/npu.c).
 *   I6  The NPU lane thread never takes runtime->mutex: driver calls made
 *       under it may wait for a queue that waits for the NPU lane.
 * Each has a checker in core/check.c, called inside assert() (Debug and ASan
 * builds); docs/design.md lists which checker enforces which and where.
 */
#ifndef TANDEM_CORE_INTERNAL_H_
#define TANDEM_CORE_INTERNAL_H_

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/backend.h"
#include "core/npu_backend.h"
#include "core/registry.h"
#include "core/status.h"
#include "tandem/tandem.h"
#include "tandem/tandem_vulkan.h"

#define TANDEM__MAX_BYTES ((uint64_t)(SIZE_MAX / 2))
#define TANDEM__WAIT_FOREVER UINT64_MAX

/*--------------------------------------------------------------------------*/
struct tandem_budget {
  atomic_uint_fast64_t refs;
  uint64_t limit;
  atomic_uint_fast64_t used;
};

tandem_status_t tandem__budget_reserve(tandem_budget_t *budget, uint64_t bytes);
void tandem__budget_unreserve(tandem_budget_t *budget, uint64_t bytes);

/*--------------------------------------------------------------------------*/
typedef struct tandem__slot tandem__slot_t;
typedef struct tandem__npu_job tandem__npu_job_t;

/* The NPU lane: one host thread running NPU regions in submission order.
 * It waits for the GPU values a region depends on, syncs, runs, and signals
 * the NPU lane's timeline from the host — always, even after a failure, so
 * GPU work queued behind it never hangs. */
typedef struct tandem__npu_lane {
  pthread_mutex_t mutex;          /* guards the fields below */
  pthread_cond_t wake;            /* jobs arrived or stop */
  pthread_cond_t done_changed;    /* done advanced (CLOCK_MONOTONIC timed waits) */
  tandem__npu_job_t *head, *tail; /* [mutex] FIFO of submitted NPU regions */
  bool stop;                      /* [mutex] */
  uint64_t done;                  /* [mutex] last value signalled (after the call returned) */
  bool started;                   /* set once under runtime->open_mutex */
  pthread_t thread;
} tandem__npu_lane_t;

/* A lane (core/lane.c): an entry of the runtime's lane table, indexed by
 * lane id. Built-in ids 0..3 are fixed at creation; user ids are taken and
 * given back under runtime->mutex. Its timeline lives in the GPU backend
 * under the same id (lane_bind for user lanes); values are in
 * runtime->lane_next_value / lane_done_value. */
typedef struct tandem__lane {
  tandem_lane_kind_t kind;  /* [mutex] UNUSED for a free user id */
  bool closing;             /* [mutex] being given back: no new waits, id not free yet */
  char name[64];            /* [mutex] */
  /* [mutex] User lanes: per built-in lane, the highest value whose work
   * waits on this lane's timeline on the GPU (or on the NPU thread). Giving
   * the id back waits for those first: the timeline must outlive every queued
   * wait on it. */
  uint64_t waited_by[TANDEM_LANE_COUNT];
  /* [mutex] SESSION: the value of the last stage that ended in failure (0
   * none); work waiting for that value fails with it. (Only the open stage's
   * value is ever waited for: a stage's records go when it ends.) */
  uint64_t failed_value;
  atomic_uint_fast64_t submissions, copied_bytes; /* tandem_lane_info_t */
} tandem__lane_t;

struct tandem_runtime {
  atomic_uint_fast64_t refs;
  tandem_runtime_options_t options; /* budget retained */

  pthread_mutex_t open_mutex; /* guards gpu creation */
  /* Found in the registry (core/registry.h) at create, never changed: the
   * option gpu_backend's entry, and the option npu's (NULL for NONE). */
  const tandem__gpu_backend_t *gpu_backend;
  const tandem__npu_backend_t *npu_backend;
  tandem__gpu_t *_Atomic gpu; /* set once, under open_mutex, by gpu_backend->open */
  tandem__npu_t *_Atomic npu; /* set once, under open_mutex */
  tandem_sharing_t sharing;   /* negotiated when the NPU opens (before npu is set) */
  tandem__npu_lane_t npu_lane;

  pthread_mutex_t mutex;                            /* the tracker lock */
  tandem__lane_t lanes[TANDEM__MAX_LANES];          /* the lane table (lane.c) */
  /* [mutex] Per lane id: last value handed out, last seen reached. Never
   * reset when a user id is given back and taken again, so a new session's
   * values stay above every value an older record of that id carries.
   * EXTERNAL lanes use neither (their values are another process's). */
  uint64_t lane_next_value[TANDEM__MAX_LANES];
  uint64_t lane_done_value[TANDEM__MAX_LANES];
  /* Broadcast (with runtime->mutex) when a SESSION lane's done value moves:
   * host waits for host-signalled user lanes wait on it, as the NPU lane's
   * waits wait on npu_lane.done_changed. CLOCK_MONOTONIC. */
  pthread_cond_t host_lane_signalled;
  /* [mutex] Per in-order GPU queue (tandem__gpu_t.lane_queue) and
   * host-signalled lane (the NPU, sessions): the highest value of that lane
   * any work submitted to the queue so far depends on. Work on one queue runs
   * in submission order, so a later value on it waits for those host signals
   * too (see tandem__slot_t.cover). */
  uint64_t queue_horizon[TANDEM_LANE_COUNT_GPU][TANDEM__MAX_LANES];
  tandem__slot_t *in_flight;                        /* [mutex] FIFO via next_in_flight */
  tandem__slot_t *in_flight_tail;                   /* [mutex] last of that list */
  uint64_t submission_count;                        /* [mutex] numbers submissions */
  bool fail_next;                                   /* [mutex] test hook: fail the next one */
  struct tandem_trace *trace;                       /* [mutex] running trace or NULL */
  uint32_t in_flight_count;                         /* [mutex] ≤ max_submissions */
  tandem_status_t lost;                             /* [mutex] sticky device failure */
  /* The NPU lane thread saw the GPU fail (a semaphore wait or signal): it
   * may not take the mutex (I6), so whoever holds it next makes the runtime
   * lost (tandem__runtime_fold_loss_locked). */
  atomic_bool lost_pending;

  atomic_uint_fast64_t validation_messages;

  struct {
    atomic_uint_fast64_t allocations, live_bytes, peak_bytes, submissions, completions,
        copied_bytes; /* per lane: lanes[].copied_bytes */
    atomic_uint_fast64_t imports, cache_maintenance_bytes, npu_runs;
  } stats;
};

/* buffer.c: budget → device memory → counters, for every kind of creation:
 * ordinary (export_types 0, import NULL), exportable, or imported (|import|;
 * placement GPU_LOCAL or HOST_VISIBLE). Placement and size already checked. */
tandem_status_t tandem__buffer_make(tandem_runtime_t *runtime, uint64_t size,
                                    tandem_placement_t placement, uint32_t export_types,
                                    const tandem_external_memory_t *import,
                                    tandem_buffer_t **out_buffer);
/* As tandem__buffer_make, or the application's buffer (|adopt|, core/adopt.c):
 * the budget is charged 0 when adopt->budget_charged. */
tandem_status_t tandem__buffer_make_from(tandem_runtime_t *runtime, uint64_t size,
                                         tandem_placement_t placement, uint32_t export_types,
                                         const tandem_external_memory_t *import,
                                         const tandem_vulkan_buffer_t *adopt,
                                         tandem_buffer_t **out_buffer);
/* kernel.c: loads |desc| (tandem_kernel_create's checks, in order), then
 * builds the pipeline, or with |adopt| wraps the application's (core/adopt.c). */
tandem_status_t tandem__kernel_load(tandem_runtime_t *runtime, const tandem_kernel_desc_t *desc,
                                    const tandem_vulkan_kernel_t *adopt,
                                    tandem_kernel_t **out_kernel);

void tandem__runtime_retain(tandem_runtime_t *runtime);
void tandem__runtime_release(tandem_runtime_t *runtime);
/* Opens the GPU on first use; returns it (borrowed) in |out_gpu|. */
tandem_status_t tandem__runtime_gpu(tandem_runtime_t *runtime, tandem__gpu_t **out_gpu);

/*--------------------------------------------------------------------------*/
typedef struct tandem__record tandem__record_t;

/* A byte range of a buffer whose last writer failed: reads of it fail with
 * |code| (FAILED_DEPENDENCY, or DEVICE_LOST) until it is written again by
 * work that succeeds; |cause| is how that writer ended. */
enum { TANDEM__POISON_RANGES = 8 };
typedef struct tandem__poison {
  uint64_t offset, length;
  tandem_status_t code, cause;
} tandem__poison_t;

/* One live host map of a buffer range. */
typedef struct tandem__host_map {
  uint64_t id, offset, length;
  bool write;
} tandem__host_map_t;

struct tandem_buffer {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  uint64_t size;
  uint64_t charged; /* bytes reserved in the runtime's budget: size, or 0 for an
                       adopted buffer the application had already charged */
  tandem_placement_t placement;
  void *native; /* GPU backend buffer; NULL for NPU_LOCAL */
  void *host;   /* what host maps see: HOST_VISIBLE and SHARED/NPU_LOCAL mappings */
  void *npu_bo;   /* SHARED and NPU_LOCAL: the NPU buffer object */
  void *npu_host; /* its mapping (equals host except for staged sharing) */
  uint64_t npu_size;          /* BO size (rounded for host-pointer import) */
  tandem_sharing_t sharing;   /* SHARED: the path this buffer uses */
  /* Adopted without the usage indirect dispatch reads need: never an
   * indirect view (graph.c). Set at creation, never changed. */
  bool no_indirect;

  tandem__record_t *records;   /* [mutex] in-flight accesses (I3) */
  tandem__host_map_t *maps;    /* [mutex] live host maps */
  uint32_t map_count, map_capacity; /* [mutex] */
  uint64_t next_map_id;        /* [mutex] */
  /* [mutex] Poisoned byte ranges: bytes whose last writer failed, sorted by
   * offset and disjoint (tracker.c). One spare entry: a change may add one
   * range before the closest two are merged back to TANDEM__POISON_RANGES. */
  tandem__poison_t poison[TANDEM__POISON_RANGES + 1];
  uint32_t poison_count;
};

/*--------------------------------------------------------------------------*/
/* A reflected specialization constant and the value the pipeline got. */
typedef struct tandem__kernel_spec {
  tandem__reflected_spec_t reflected;
  bool given;    /* the desc set its SpecId */
  uint64_t bits; /* given or default */
} tandem__kernel_spec_t;

struct tandem_kernel {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  char name[128];
  uint32_t workgroups[3];
  uint32_t binding_count;
  tandem_binding_contract_t bindings[TANDEM_MAX_BINDINGS];
  uint32_t push_constant_bytes;
  uint32_t local_size[3];           /* effective workgroup size */
  bool local_size_specialized;
  uint32_t shader_features;         /* what the module needs */
  uint32_t spec_constant_count;     /* declared by the module */
  uint32_t required_subgroup_size;
  uint64_t shared_memory_bytes;     /* 0: the backend could not tell */
  uint32_t flags;                   /* tandem_kernel_flag_t bits of the desc */
  bool local_size_overridden;       /* the module's LocalSize was rewritten */
  /* Bindings that may overlap in one dispatch; their bindings[].access is
   * READ_WRITE whatever the desc said (tracked over the union). */
  uint32_t aliased_bindings;
  uint32_t ignored_spec_count;      /* given SpecIds the module lacks */
  uint32_t ignored_spec_ids[TANDEM_MAX_SPEC_CONSTANTS];
  tandem__kernel_spec_t *specs;     /* spec_constant_count of them, or NULL */
  void *native;
};

/*--------------------------------------------------------------------------*/
typedef enum tandem__node_kind {
  TANDEM__NODE_FILL,
  TANDEM__NODE_COPY,
  TANDEM__NODE_DISPATCH,
  TANDEM__NODE_NPU_RUN,
  TANDEM__NODE_VULKAN_COMMANDS, /* the user's own commands (handoff.c) */
} tandem__node_kind_t;


struct tandem_npu_program {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  char name[128];
  uint32_t binding_count;
  uint32_t scalar_count; /* 32-bit words (a U64 scalar is two) */
  tandem_binding_contract_t bindings[TANDEM_MAX_BINDINGS];
  void *native;
};

/* A byte range one node touches, and how. */
typedef struct tandem__access {
  tandem_buffer_t *buffer;
  uint64_t offset, length;
  tandem_access_t access;
} tandem__access_t;

typedef struct tandem__node {
  tandem__node_kind_t kind;
  tandem_lane_t lane;           /* resolved at record time */
  tandem_kernel_t *kernel;      /* DISPATCH: retained */
  tandem_npu_program_t *program; /* NPU_RUN: retained */
  uint32_t scalar_count;        /* NPU_RUN */
  uint32_t scalars[TANDEM_MAX_NPU_SCALARS];
  uint32_t view_count;          /* FILL 1 (dst), COPY 2 (src, dst), DISPATCH n,
                                   VULKAN_COMMANDS its declared accesses */
  /* view_count views, buffers retained. They live outside the node so a node
   * stays small (prepare copies nodes, 100 000 of them at scale): in the
   * graph's chunked view storage (graph.c; addresses stable while the graph
   * lives) or in the plan's one array (plan.c). A node built on the stack
   * points at a local array until tandem__graph_append copies it in. */
  tandem_view_t *views;
  uint32_t pattern;             /* FILL */
  uint32_t push_bytes;
  uint8_t push[TANDEM_MAX_PUSH_CONSTANT_BYTES];
  uint32_t workgroups[3];       /* DISPATCH, direct: counts (in an exec, [mutex]) */
  tandem_view_t indirect;       /* DISPATCH: counts read on the GPU when .buffer set
                                   (retained) */
  bool barrier_before;          /* set by prepare: barrier ahead of it in its region */
  /* VULKAN_COMMANDS: the user's callback and its pointer, and the declared
   * access of each view, 2 bits (a tandem_access_t) per view from bit 0. */
  tandem_vulkan_record_fn record;
  void *record_user;
  uint64_t access_bits;
} tandem__node_t;

/* graph.c: a node's references to its buffers, kernel and program. */
void tandem__node_retain(tandem__node_t *node);
void tandem__node_release(tandem__node_t *node);

/* The bytes binding |b| covers when |view| is bound to it: the contract's
 * fixed bytes, or the whole view for a view-sized binding (TANDEM_BYTES_VIEW).
 * Checks, tracking and the descriptor's range all use this one number. */
static inline uint64_t tandem__binding_bytes(const tandem_binding_contract_t *b,
                                             tandem_view_t view) {
  return b->bytes == TANDEM_BYTES_VIEW ? view.length : b->bytes;
}

/* handoff.c: the declared access of view |i| of a VULKAN_COMMANDS node. */
static inline tandem_access_t tandem__node_decl_access(const tandem__node_t *node, uint32_t i) {
  assert(node->kind == TANDEM__NODE_VULKAN_COMMANDS && i < node->view_count);
  tandem_access_t a = (tandem_access_t)((node->access_bits >> (2 * i)) & 3u);
  assert(a != 0); /* every declared view has READ, WRITE or both (checked at add) */
  return a;
}
typedef struct tandem__plan tandem__plan_t; /* defined below */
/* handoff.c: records node |node_index| of |plan|, a VULKAN_COMMANDS node on a
 * GPU lane, into |command_buffer| (a VkCommandBuffer the backend is
 * recording) by calling the user's callback with a scope. A failure carries
 * the callback's code and a message naming the node. Called by the backend
 * while it records the node's region. */
tandem_status_t tandem__vulkan_commands_record(tandem__gpu_t *gpu, const tandem__plan_t *plan,
                                               uint32_t node_index, void *command_buffer);
/* handoff.c: calls |submit| (tandem_runtime_submit_vulkan) for |plan|'s one
 * node, a VULKAN_COMMANDS node that records nothing, with the timeline values
 * |waits| its region waits for, and sets |region|'s external wait to what it
 * signals. Needs runtime->mutex (the slot's values are being committed). */
tandem_status_t tandem__vulkan_submit_call(tandem__gpu_t *gpu, const tandem__plan_t *plan,
                                           tandem_vulkan_submit_fn submit, void *user,
                                           tandem__region_submit_t *region);
/* submit.c: tandem_exec_submit of a one-region executable whose region also
 * waits for the work |submit| submits (called once the waits are known). */
tandem_status_t tandem__exec_submit_external(tandem_exec_t *exec, tandem_vulkan_submit_fn submit,
                                             void *user, tandem_completion_t **out_completion);
/* prepare.c: prepare with |slot_count| graph slots (tandem_graph_prepare uses
 * the runtime option graph_slots). */
tandem_status_t tandem__graph_prepare_slots(tandem_graph_t *graph, uint32_t slot_count,
                                            tandem_exec_t **out_exec);

/* A node touches at most its bindings plus an indirect argument. */
#define TANDEM__MAX_NODE_ACCESSES (TANDEM_MAX_BINDINGS + 1)

/* Accesses of a node, derived from its views and (for dispatches) contract;
 * the indirect argument, when there is one, comes last. */
uint32_t tandem__node_accesses(const tandem__node_t *node, tandem__access_t *out);

struct tandem_graph {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  tandem__node_t *nodes;
  uint32_t node_count, node_capacity;
  /* The nodes' views: chunks of TANDEM__VIEW_CHUNK, never moved. */
  tandem_view_t **view_chunks;
  uint32_t view_chunk_count, view_chunk_used; /* used: entries of the last chunk */
  uint64_t view_total;                        /* sum of the nodes' view_count */
};


/* A prepared region: consecutive nodes of one lane (in order[]), the regions
 * of this graph it must wait for (latest per lane, -1 none). */
typedef struct tandem__region {
  tandem_lane_t lane;
  uint32_t first, count; /* into plan->order */
  int32_t wait_region[TANDEM_LANE_COUNT];
} tandem__region_t;

/* What prepare computed; core/record.c walks it to record (backends never see
 * it). In an executable, the dispatch parameters of |nodes| (views, push
 * constants, workgroups) are the current ones, changed by tandem_exec_set_*
 * under runtime->mutex; recording reads them under the same lock. */
struct tandem__plan {
  tandem__node_t *nodes; /* copies, retaining buffers and kernels */
  uint32_t node_count;
  tandem_view_t *views;  /* every node's views, nodes[i].views points in here */
  uint32_t *order;       /* node indices grouped by region */
  tandem__region_t *regions;
  uint32_t region_count;
  uint32_t *node_region;     /* region of each node */
  uint32_t *node_pos;        /* position of each node in order[] */
  uint32_t *barrier_prefix;  /* per order[] position: barriers at or before it */
  /* The fewest commands a recorded piece of a GPU region holds (core/record.c,
   * tandem__region_piece_end); set once before the program is made, so the
   * pieces never change for the program's life. */
  uint32_t piece_min;
};

/* record.c: makes |plan|'s program on |gpu| from a description of it (no plan
 * layout crosses to the backend) and records every GPU region of every slot,
 * the slots on several threads when the program is large enough to pay. */
tandem_status_t tandem__program_create(tandem__gpu_t *gpu, const tandem__plan_t *plan,
                                       uint32_t slot_count, void **out_native);
/* record.c: a new program with fewer recorded commands than this (over all
 * slots) records on the calling thread only. Measured on lavapipe, 2 cores,
 * a dependent chain, two slots (bench/NOTES.md, "prepare: parallel slot
 * recording"): up to 3 000
 * commands, two threads were 0.03-0.1 ms slower than one (0.49 against
 * 0.62 ms at 3 000), from 3 600 on faster (2.4 against 0.73 ms; 7.0 against
 * 0.86 ms at 4 096). Small prepares keep their latency and create no thread.
 * A build may set another value (-DTANDEM__RECORD_PARALLEL_MIN=...) to
 * measure a device's own crossover. */
#ifndef TANDEM__RECORD_PARALLEL_MIN
#define TANDEM__RECORD_PARALLEL_MIN 3072u
#endif
/* record.c: a GPU region of at least twice this many commands, with no user
 * commands, is recorded in pieces of at least this many commands, each into
 * a command buffer of its own, split only before a command with a barrier
 * before it, so that the pieces of every slot record on parallel threads at
 * prepare (bench/NOTES.md, "prepare: long regions recorded in pieces"). Half
 * the parallel threshold: a region is split exactly when it alone would make
 * a one-slot prepare parallel. The environment variable
 * TANDEM_RECORD_PIECE_MIN, read at prepare, overrides it (tests split short
 * chains with it). */
#ifndef TANDEM__RECORD_PIECE_MIN
#define TANDEM__RECORD_PIECE_MIN (TANDEM__RECORD_PARALLEL_MIN / 2u)
#endif
/* record.c: the piece minimum for a prepare now (TANDEM_RECORD_PIECE_MIN or
 * the default). */
uint32_t tandem__record_piece_min(void);
/* record.c: how many pieces GPU region |region| of |plan| is recorded in. */
uint32_t tandem__region_pieces(const tandem__plan_t *plan, uint32_t region);
/* record.c: records GPU region |region| of slot |slot| again from |plan|'s
 * current node parameters, command by command, piece after piece in order
 * on the calling thread (core/backend.h). Only while that slot is not in
 * flight, under runtime->mutex (re-recording at submit; prepare records its
 * pieces through tandem__program_create). Allocates nothing. */
tandem_status_t tandem__record_region(tandem__gpu_t *gpu, void *native, const tandem__plan_t *plan,
                                      uint32_t slot, uint32_t region);

/* True when the prepared |plan| orders node |a| before node |b| (a < b in
 * record order): a barrier between them in one region, or a chain of
 * semaphore waits from b's region back to a's. */
bool tandem__plan_orders(const tandem__plan_t *plan, uint32_t a, uint32_t b);

/*--------------------------------------------------------------------------*/
/* One access of an in-flight submission, linked into its buffer's list. */
struct tandem__record {
  tandem__record_t *next, *prev; /* [mutex] buffer->records */
  tandem__access_t access;
  tandem_lane_t lane; /* a built-in lane, or a SESSION lane for a session's record */
  uint64_t value; /* the region's signal value on |lane| (a session: its stage's) */
  tandem__slot_t *slot; /* NULL for a session stage's record (session.c) */
};

typedef enum tandem__slot_state {
  TANDEM__SLOT_FREE,
  TANDEM__SLOT_IN_FLIGHT, /* submitted, not retired */
  TANDEM__SLOT_DONE,      /* retired; completion still referenced by the user */
} tandem__slot_state_t;

typedef struct tandem_exec tandem_exec_t;

/* A submission this slot's submission was ordered after; |generation| tells
 * whether |slot| still holds that submission. */
typedef struct tandem__dep {
  tandem__slot_t *slot;
  uint64_t generation;
  /* The dependent reads bytes |slot| writes (or was submitted after it):
   * |slot|'s failure is its failure. Otherwise (write after write, write
   * after read) the dependency only orders retirement. */
  bool fails_with;
} tandem__dep_t;

struct tandem__slot {
  tandem_exec_t *exec; /* not a reference: the completion holds one (see top) */
  uint32_t index;
  uint64_t generation;               /* [mutex] bumped at every submit */
  uint64_t submission;               /* [mutex] runtime-wide number */
  tandem__dep_t *deps;               /* [mutex] max_submissions entries */
  uint32_t dep_count;                /* [mutex] */
  /* The three below are also read by the NPU lane thread, which never takes
   * runtime->mutex (I6: it must not, or a driver call made under that lock
   * and waiting for the GPU queue, itself waiting for the NPU, deadlocks):
   * atomics, written under the mutex except npu_result. */
  atomic_bool cancel_requested;
  bool inject_failure;               /* [mutex] test hook */
  atomic_bool dep_failed;            /* a submission it was ordered after failed */
  atomic_bool abandoned;             /* its submission failed half-way (lost.c): the NPU
                                        lane signals its regions without waiting or running */
  uint64_t *timestamps;              /* 2 per region, scratch for traces (no allocation) */
  atomic_int npu_result;             /* first failure of an NPU region (lane thread), or OK */
  char npu_message[224];             /* its text, written by the lane thread that set
                                        npu_result, before it signals */
  tandem__npu_job_t *npu_jobs;       /* one per NPU region, made at prepare */
  void **npu_runs;                   /* run handle per plan node (NULL for GPU nodes) */
  /* Host start/end per region, written by the NPU lane before it signals
   * and read at retirement. Atomic: a runtime that became lost retires its
   * slots at once (lane values forced past), possibly while the NPU lane is
   * still finishing a region of one, so a lost runtime's trace may show a
   * partial NPU time; the memory stays, since releasing an executable of a
   * lost runtime first drains the NPU lane (lost.c). */
  _Atomic uint64_t *npu_times;
  uint64_t host_submit_ns, host_observed_ns; /* [mutex] CLOCK_MONOTONIC */
  tandem__slot_state_t state;        /* [mutex] */
  bool user_ref;                     /* [mutex] the completion is held by the user */
  tandem_status_t result;            /* [mutex] final result once DONE */
  uint64_t lane_values[TANDEM_LANE_COUNT]; /* [mutex] final value per lane, 0 none */
  tandem__slot_t *next_in_flight;    /* [mutex] runtime->in_flight */
  /* [mutex] Per lane, the value a host wait for this submission waits for:
   * its own lane values and, transitively, those of every submission it
   * depends on. A slot retires only after its dependencies (so their
   * failures reach it), so a wait that covered only its own values could
   * see it finished and still in flight.
   * cover[NPU] is also the NPU horizon: the highest NPU value its GPU values
   * depend on (NPU waits of its regions, and earlier work on the same
   * in-order queue: runtime->queue_horizon). tandem__runtime_wait waits
   * for the NPU lane first, so a host wait never returns from the driver
   * while the NPU signal it depends on is still inside vkSignalSemaphore:
   * Debian 12's validation layer (1.3.239) stalls 10 s and reports
   * UNASSIGNED-VkSemaphore-state-timeout in that window. SESSION lanes
   * (host-signalled too) are covered the same way: cover[session lane] is
   * the stage value its regions wait for. */
  uint64_t cover[TANDEM__MAX_LANES];
  tandem__record_t *records;         /* plan access count entries */
  tandem__region_submit_t *submits;  /* region_count entries */
  /* Per-submission parameters: the version of each region's parameters this
   * slot's command buffers were recorded with, and the dispatch views they
   * use (GPU nodes; retained: a buffer replaced by tandem_exec_set_view stays alive
   * until every slot recorded with it has been re-recorded or freed).
   * [mutex]; changed only while the slot is FREE. */
  uint64_t *region_version;          /* region_count entries */
  tandem_view_t *views;              /* exec->view_total entries */
  tandem_buffer_t **to_release;      /* exec->view_total entries, scratch for submit */
  uint32_t handle_index;             /* its completion-handle entry (handle.c), for life */
};

struct tandem_exec {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  tandem__plan_t plan;
  tandem__access_t *accesses;  /* all accesses, grouped by region */
  uint32_t *access_region;     /* region of each access */
  uint32_t access_count;
  void *native;
  tandem__slot_t *slots;
  uint32_t slot_count;
  uint64_t copied_per_lane[TANDEM_LANE_COUNT]; /* bytes one run copies */
  bool uses_lane[TANDEM_LANE_COUNT];           /* a region of it runs on the lane */
  uint64_t *region_copied;     /* bytes each region copies */
  uint32_t *node_access;       /* first index into accesses of each node */
  uint32_t *node_view;         /* first index into a slot's views of each node */
  uint32_t view_total;         /* views of all GPU nodes (fill, copy, dispatch) */
  uint64_t *region_version;    /* [mutex] bumped by tandem_exec_set_* */
};

/* One more reference to |exec| (tandem_exec_retain; the last release is
 * prepare.c's). */
static inline void tandem__exec_retain(tandem_exec_t *exec) { atomic_fetch_add(&exec->refs, 1); }

struct tandem__npu_job {
  tandem__npu_job_t *next; /* [npu_lane.mutex] */
  tandem__slot_t *slot;
  uint32_t region;
};

/* npu.c */
tandem_status_t tandem__runtime_npu(tandem_runtime_t *runtime, tandem__npu_t **out_npu);
/* npu_lane.c: starts the lane thread (the NPU just opened, under open_mutex). */
tandem_status_t tandem__npu_lane_start(tandem_runtime_t *runtime);
void tandem__npu_lane_push(tandem_runtime_t *runtime, tandem__npu_job_t *job);
void tandem__npu_lane_stop(tandem_runtime_t *runtime);
/* Waits until the NPU lane signalled |value| (TIMEOUT after |timeout_ns|). */
tandem_status_t tandem__npu_lane_wait(tandem_runtime_t *runtime, uint64_t value, uint64_t timeout_ns);
/* The NPU lane's last signalled value (0 without an NPU). */
uint64_t tandem__npu_lane_done(tandem_runtime_t *runtime);
/* Makes the NPU and GPU sides of a SHARED or NPU_LOCAL buffer. */
tandem_status_t tandem__npu_buffer_create(tandem_runtime_t *runtime, tandem_buffer_t *buffer);
void tandem__npu_buffer_destroy(tandem_runtime_t *runtime, tandem_buffer_t *buffer);
void tandem__npu_program_retain(tandem_npu_program_t *program);
/* npu_emulated.c: |xclbin_path| itself, or for "@emulated" the emulated
 * NPU's xclbin (IO naming the fix when it cannot be found). */
tandem_status_t tandem__npu_xclbin_resolve(const char *xclbin_path, const char *name,
                                           const char **out_path);

struct tandem_trace {
  tandem_trace_event_t *events; /* ring of |capacity| */
  uint32_t capacity;
  uint64_t written;             /* events ever written; index = written % capacity */
};

/* Fills |out| (2 per region) with the times of |slot|'s last run: GPU
 * timestamps (when the backend has them) and the NPU lane's host times.
 * Returns OK when GPU times are there, UNSUPPORTED when the device keeps
 * none (no gpu_timestamps option, no calibration), or the readback's
 * failure (DEVICE_LOST makes the runtime lost). Needs runtime->mutex. */
tandem_status_t tandem__slot_times(tandem__slot_t *slot, uint64_t *out);
/* Appends |slot|'s regions to the running trace (retire time). */
void tandem__trace_slot_locked(tandem_runtime_t *runtime, tandem__slot_t *slot);

/* Tracker (tracker.c). All _locked functions need runtime->mutex. */
/* Reads the lanes' timelines and retires every in-flight slot they passed. */
void tandem__tracker_poll_locked(tandem_runtime_t *runtime);
/* As poll, with lane values the caller already knows were reached (a finished
 * wait), or a query failure |s|: saves the timeline queries. */
void tandem__tracker_advance_locked(tandem_runtime_t *runtime,
                                    uint64_t values[TANDEM__MAX_LANES], tandem_status_t s);
/* Largest in-flight value per lane that conflicts with |access|, into waits[]
 * (kept when already larger). Returns true when any was found. With a
 * |dependent| slot, the conflicting slots become its dependencies; without
 * (a host wait), waits[] also cover the conflicting slots' cover. A write
 * whose lane value has passed still counts while its slot is in flight (the
 * slot may yet fail and poison those bytes): it adds a dependency, or for a
 * host wait its slot's cover, but no wait on the passed value. */
bool tandem__tracker_conflicts_locked(tandem_runtime_t *runtime, const tandem__access_t *access,
                                      uint64_t waits[TANDEM__MAX_LANES],
                                      tandem__slot_t *dependent);
/* Records that |slot| is ordered after |on|'s current submission. */
void tandem__slot_add_dep_locked(tandem__slot_t *slot, tandem__slot_t *on, bool fails_with);
/* Poisoned ranges of |buffer| (tracker.c): marks [offset, offset+length)
 * poisoned by a writer that ended with |cause|; clears it (written again by
 * work that succeeded); the first poisoned range overlapping it, or NULL. */
void tandem__poison_mark_locked(tandem_buffer_t *buffer, uint64_t offset, uint64_t length,
                                tandem_status_t cause);
void tandem__poison_clear_locked(tandem_buffer_t *buffer, uint64_t offset, uint64_t length);
const tandem__poison_t *tandem__poison_find_locked(const tandem_buffer_t *buffer, uint64_t offset,
                                                   uint64_t length);

/* Completion handles (handle.c). take/give_back: once per slot, at prepare
 * and at executable destruction. issue: a fresh handle for the slot's new
 * submission (under runtime->mutex); revoke: the user released it (same).
 * acquire: the slot of a live handle with its executable retained (the
 * caller releases it with tandem_exec_release when done), or
 * INVALID_ARGUMENT naming |what|. */
tandem_status_t tandem__handle_take(tandem__slot_t *slot);
void tandem__handle_give_back(tandem__slot_t *slot);
tandem_completion_t *tandem__handle_issue(tandem__slot_t *slot);
void tandem__handle_revoke(tandem__slot_t *slot);
/* For checkers: 1 live, 0 not live, -1 the slot owns no entry. */
int tandem__handle_state(const tandem__slot_t *slot);
tandem__slot_t *tandem__handle_slot(const tandem_completion_t *completion);
tandem_status_t tandem__completion_acquire(const tandem_completion_t *completion,
                                           const char *what, tandem__slot_t **out_slot);
/* Computes slot->cover of a slot being committed (its lane values and
 * dependencies set) and raises the NPU horizons of the queues it uses. */
void tandem__slot_set_cover_locked(tandem_runtime_t *rt, const tandem__gpu_t *gpu,
                                         tandem__slot_t *slot);
void tandem__tracker_link_locked(tandem__record_t *record);
void tandem__tracker_unlink_locked(tandem__record_t *record);
/* wait.c: blocks until every lane reached |values| (0 = ignore); records
 * device loss. */
tandem_status_t tandem__runtime_wait(tandem_runtime_t *runtime,
                                     const uint64_t values[TANDEM__MAX_LANES],
                                     uint64_t timeout_ns);
/* buffer.c: checks that |view| is well-formed and belongs to |runtime|;
 * |what| names it. */
tandem_status_t tandem__view_check(tandem_runtime_t *runtime, tandem_view_t view,
                                   const char *what);
bool tandem__ranges_overlap(uint64_t a_off, uint64_t a_len, uint64_t b_off, uint64_t b_len);
bool tandem__accesses_conflict(tandem_access_t a, tandem_access_t b);

tandem_status_t tandem__plan_build(const tandem_graph_t *graph, tandem__plan_t *plan);
/* graph.c: checks shared by recording and tandem_exec_set_*. */
tandem_status_t tandem__dispatch_views_check(tandem_runtime_t *rt, const tandem_kernel_t *kernel,
                                             const tandem_view_t *views, uint32_t count);
tandem_status_t tandem__workgroups_check(tandem_runtime_t *rt, const tandem_kernel_t *kernel,
                                         const uint32_t workgroups[3]);
tandem_status_t tandem__fill_view_check(tandem_runtime_t *rt, tandem_view_t dst);
tandem_status_t tandem__copy_views_check(tandem_runtime_t *rt, tandem_view_t src,
                                         tandem_view_t dst);
void tandem__plan_free(tandem__plan_t *plan);
void tandem__exec_destroy(tandem_exec_t *exec);

/* glsl.c: compiles a compute shader's GLSL |source| to SPIR-V (*out_spirv
 * malloc'ed, the caller frees); INVALID_KERNEL with glslang's first error. */
tandem_status_t tandem__glsl_compile(const char *source, const char *name, void **out_spirv,
                                     size_t *out_bytes);
/* INVALID_KERNEL, with the command that compiles it, when |code| (read from
 * |path|, or NULL) is GLSL text rather than SPIR-V; OK otherwise. */
tandem_status_t tandem__glsl_refuse_as_spirv(const void *code, size_t bytes, const char *path,
                                             const char *name);

/* lost.c: records the first device failure (sticky; TANDEM_ABORT_ON_DEVICE_LOST=1
 * aborts there), and before freeing an executable of a lost runtime waits for
 * everything already handed to the queues and the NPU lane. */
void tandem__runtime_set_lost_locked(tandem_runtime_t *runtime, tandem_status_t s);
void tandem__runtime_drain_if_lost(tandem_runtime_t *runtime);
/* As set_lost_locked, for a call that answered |s| without the lock: a
 * DEVICE_LOST from any driver call (a buffer's zero-fill, a pipeline, an
 * import, an interop wait...) makes the runtime lost; other codes do not. */
void tandem__runtime_note_loss(tandem_runtime_t *runtime, tandem_status_t s);
/* Makes the runtime lost when the NPU lane thread saw the GPU fail
 * (runtime->lost_pending). Returns runtime->lost. */
tandem_status_t tandem__runtime_fold_loss_locked(tandem_runtime_t *runtime);
/* After program_submit failed for |slot| (values |next| per lane): makes
 * sure nothing the queues already hold waits for a value nobody signals (the
 * NPU lane signals the submission's NPU values). Needs runtime->mutex. */
void tandem__submit_abandon_locked(tandem_runtime_t *runtime, tandem__slot_t *slot,
                                   const uint64_t next[TANDEM__MAX_LANES]);

/* Lanes (lane.c). init: the built-in entries, at runtime creation. */
void tandem__lanes_init(tandem_runtime_t *runtime);
/* True for a lane whose timeline tandem signals from the host (the NPU lane,
 * SESSION lanes): host waits for it wait for the signaller's record, not the
 * semaphore. Needs runtime->mutex. */
bool tandem__lane_host_signalled_locked(const tandem_runtime_t *runtime, int lane);
/* Takes the lowest free user id as |kind| named |name| and binds its
 * timeline in the backend (|imported|: lane_bind). BUSY when every id is
 * taken. Needs runtime->mutex. */
tandem_status_t tandem__lane_take_locked(tandem_runtime_t *runtime, tandem__gpu_t *gpu,
                                         tandem_lane_kind_t kind, const char *name,
                                         void *imported, tandem_lane_t *out_lane);
/* Gives user lane |lane| back: no new waits on it, then (without the lock)
 * a host wait for every queued wait on its timeline, then unbinds it and
 * frees the id. Takes runtime->mutex itself. */
void tandem__lane_give_back(tandem_runtime_t *runtime, tandem_lane_t lane);
/* True when a region of |slot| waits for a SESSION stage that ended in
 * failure (tandem__lane_t.failed_value). Needs runtime->mutex. */
bool tandem__lane_failed_waits_locked(const tandem_runtime_t *runtime, const tandem__slot_t *slot);
/* map.c: BUSY when a live host map conflicts with |a|. Needs runtime->mutex. */
tandem_status_t tandem__maps_check_locked(const tandem__access_t *a);

/* Commit-time bookkeeping of a submission whose regions wait on user lanes:
 * raises those lanes' waited_by. Needs runtime->mutex. */
void tandem__lane_note_waits_locked(tandem_runtime_t *runtime, const tandem__slot_t *slot);

/* Invariant checkers (check.c), called only inside assert(): each returns
 * false, after printing the invariant it found broken, when it does not hold. */
bool tandem__runtime_check_locked(const tandem_runtime_t *runtime); /* I2, I3, I4, I6 */
bool tandem__exec_check_locked(const tandem_exec_t *exec);          /* I4 per slot */
bool tandem__exec_check_free(const tandem_exec_t *exec);            /* I1 */
bool tandem__buffer_check_free(const tandem_buffer_t *buffer);      /* I1 */
bool tandem__npu_lane_check_signal(const tandem__npu_lane_t *lane, uint64_t value); /* I5 */
bool tandem__check_not_npu_lane(void);                              /* I6 */
/* Marks the calling thread as the NPU lane (for the I6 check; any build). */
void tandem__check_mark_npu_lane_thread(void);

#endif /* TANDEM_CORE_INTERNAL_H_ */
