/* SPDX-License-Identifier: MIT */
/*
 * runtime_int.h — the runtime's layout, and the invariants that tie core's
 * objects together. Every core file may read it; the layouts of the other
 * objects are in their owners' *_int.h (buffer, kernel, npu, graph, plan,
 * exec), and each module's calls in its own header (docs/design.md, the
 * module map).
 *
 * Lifetimes (who keeps whom alive):
 *   buffer, kernel, graph, exec  → runtime   (one reference each)
 *   graph, exec                  → buffers and kernels their nodes use
 *   user-held completion         → its exec  (one exec reference each)
 * and the exec's last release waits for its in-flight slots before freeing,
 * so nothing a queue may touch is freed while it is in flight (I1).
 *
 * Locking: runtime->mutex ("the tracker lock") guards every field marked
 * [mutex] here and in the other layouts: lane values, in-flight slots and their access records, buffer
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
 *       submission order, whatever happened to the run (core/npu_lane.c).
 *   I6  The NPU lane thread never takes runtime->mutex: driver calls made
 *       under it may wait for a queue that waits for the NPU lane. Nor does
 *       the relay thread (core/relay.c), for the same reason.
 * Each has a checker in core/check.c (core/check.h), called inside assert()
 * (Debug and ASan builds); docs/design.md lists which checker enforces which
 * and where.
 */
#ifndef TANDEM_CORE_RUNTIME_INT_H_
#define TANDEM_CORE_RUNTIME_INT_H_

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/backend.h"
#include "core/npu_backend.h"
#include "core/status.h"
#include "tandem/tandem.h"

#define TANDEM__MAX_BYTES ((uint64_t)(SIZE_MAX / 2))

/* GPU |g|'s device, or NULL while it is not open. */
static inline tandem__gpu_t *tandem__gpu_at(const tandem_runtime_t *rt, uint32_t g);
#define TANDEM__WAIT_FOREVER UINT64_MAX

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
  tandem_lane_kind_t kind; /* [mutex] UNUSED for a free user id */
  bool closing;            /* [mutex] being given back: no new waits, id not free yet */
  char name[64];           /* [mutex] */
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

/* One GPU of the runtime (the runtime option gpus; GPU 0 from gpu_backend
 * and gpu_index when it names none). */
typedef struct tandem__runtime_gpu {
  /* Found in the registry (core/registry.h) at create, never changed. */
  const tandem__gpu_backend_t *backend;
  uint32_t index;             /* the backend's enumeration index */
  tandem__gpu_t *_Atomic gpu; /* set once, under open_mutex, by backend->open */
} tandem__runtime_gpu_t;

/* The relay (core/relay.c): a host thread that carries values of one GPU's
 * lanes (and the NPU lane's) to the GPUs whose work waits for them. A GPU
 * waits only on timelines of its own device, so each GPU has a host-signalled
 * proxy timeline for every lane of the other GPUs (bound when both are open)
 * and for the NPU lane; the relay signals a proxy once the value it stands
 * for was reached, in increasing order per proxy. */
typedef struct tandem__relay {
  pthread_mutex_t mutex; /* guards the fields below */
  pthread_cond_t wake;   /* a want was raised, or stop */
  /* [mutex] Per GPU and lane id: the highest value work submitted to that GPU
   * waits for on its proxy of the lane (raised at submit, under
   * runtime->mutex then this one), and the value the relay signalled it to. */
  uint64_t want[TANDEM_MAX_GPUS][TANDEM__MAX_LANES];
  uint64_t signalled[TANDEM_MAX_GPUS][TANDEM__MAX_LANES];
  bool stop;    /* [mutex] */
  bool started; /* [mutex] the thread runs (started when a second GPU opens) */
  /* Set when the runtime is lost: every proxy is signalled to its want at
   * once, so no queue waits forever for a value a lost device never makes. */
  atomic_bool release_all;
  pthread_t thread;
} tandem__relay_t;

struct tandem_runtime {
  atomic_uint_fast64_t refs;
  tandem_runtime_options_t options; /* budget retained */

  pthread_mutex_t open_mutex; /* guards gpu and npu creation */
  /* The GPUs, 1 .. TANDEM_MAX_GPUS of them (gpu_count), each opened lazily;
   * their lanes are in the lane table from creation (core/lane.c). */
  uint32_t gpu_count;
  tandem__runtime_gpu_t gpus[TANDEM_MAX_GPUS];
  /* The option npu_backend's entry (NULL: no NPU), found at create, and
   * what it read of the options' extensions then (its own, freed with the
   * runtime by its options_free). */
  const tandem__npu_backend_t *npu_backend;
  void *npu_options;
  tandem__npu_t *_Atomic npu; /* set once, under open_mutex */
  tandem__relay_t relay;
  tandem_sharing_t sharing; /* negotiated when the NPU opens (before npu is set) */
  tandem__npu_lane_t npu_lane;

  pthread_mutex_t mutex;                   /* the tracker lock */
  tandem__lane_t lanes[TANDEM__MAX_LANES]; /* the lane table (lane.c) */
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
  uint64_t queue_horizon[TANDEM_MAX_GPUS][TANDEM_LANE_COUNT_GPU][TANDEM__MAX_LANES];
  tandem__slot_t *in_flight;      /* [mutex] FIFO via next_in_flight */
  tandem__slot_t *in_flight_tail; /* [mutex] last of that list */
  uint64_t submission_count;      /* [mutex] numbers submissions */
  bool fail_next;                 /* [mutex] test hook: fail the next one */
  struct tandem_trace *trace;     /* [mutex] running trace or NULL */
  uint32_t in_flight_count;       /* [mutex] ≤ max_submissions */
  tandem_status_t lost;           /* [mutex] sticky device failure */
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

/* The running trace (runtime->trace): made by tandem_runtime_trace_start
 * (trace.c), written at retirement (trace_events.c), handed to the caller by
 * stop, freed with the runtime if still running. */
struct tandem_trace {
  tandem_trace_event_t *events; /* ring of |capacity| */
  uint32_t capacity;
  uint64_t written; /* events ever written; index = written % capacity */
};

/* CLOCK_MONOTONIC |timeout_ns| from now, for the condition-variable waits
 * made with that clock (TANDEM__WAIT_FOREVER: now, unused by those waits). */
static inline struct timespec tandem__deadline_after(uint64_t timeout_ns) {
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  if (timeout_ns != TANDEM__WAIT_FOREVER) {
    uint64_t ns = (uint64_t)deadline.tv_nsec + timeout_ns % 1000000000u;
    deadline.tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
    deadline.tv_nsec = (long)(ns % 1000000000u);
  }
  return deadline;
}

static inline tandem__gpu_t *tandem__gpu_at(const tandem_runtime_t *rt, uint32_t g) {
  assert(g < TANDEM_MAX_GPUS);
  return atomic_load_explicit(&((tandem_runtime_t *)rt)->gpus[g].gpu, memory_order_acquire);
}

#endif /* TANDEM_CORE_RUNTIME_INT_H_ */
