/* SPDX-License-Identifier: MIT */
/*
 * exec_int.h — an executable's layout (prepare.c) and its graph slots: the
 * life of one submission (submit.c), its tracker records (tracker.c), its
 * completion handle (handle.c) and its NPU jobs (npu_lane.c).
 */
#ifndef TANDEM_CORE_EXEC_INT_H_
#define TANDEM_CORE_EXEC_INT_H_

#include "core/buffer_int.h"
#include "core/graph_int.h"
#include "core/plan_int.h"

/* One access of an in-flight submission, linked into its buffer's list. */
struct tandem__record {
  tandem__record_t *next, *prev; /* [mutex] buffer->records */
  tandem__access_t access;
  tandem_lane_t lane;   /* a built-in lane, or a SESSION lane for a session's record */
  uint64_t value;       /* the region's signal value on |lane| (a session: its stage's) */
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
  uint64_t generation; /* [mutex] bumped at every submit */
  uint64_t submission; /* [mutex] runtime-wide number */
  tandem__dep_t *deps; /* [mutex] max_submissions entries */
  uint32_t dep_count;  /* [mutex] */
  /* The three below are also read by the NPU lane thread, which never takes
   * runtime->mutex (I6: it must not, or a driver call made under that lock
   * and waiting for the GPU queue, itself waiting for the NPU, deadlocks):
   * atomics, written under the mutex except npu_result. */
  atomic_bool cancel_requested;
  bool inject_failure;         /* [mutex] test hook */
  atomic_bool dep_failed;      /* a submission it was ordered after failed */
  atomic_bool abandoned;       /* its submission failed half-way (lost.c): the NPU
                                        lane signals its regions without waiting or running */
  uint64_t *timestamps;        /* 2 per region, scratch for traces (no allocation) */
  atomic_int npu_result;       /* first failure of an NPU region (lane thread), or OK */
  char npu_message[224];       /* its text, written by the lane thread that set
                                        npu_result, before it signals */
  tandem__npu_job_t *npu_jobs; /* one per NPU region, made at prepare */
  void **npu_runs;             /* run handle per plan node (NULL for GPU nodes) */
  /* Host start/end per region, written by the NPU lane before it signals
   * and read at retirement. Atomic: a runtime that became lost retires its
   * slots at once (lane values forced past), possibly while the NPU lane is
   * still finishing a region of one, so a lost runtime's trace may show a
   * partial NPU time; the memory stays, since releasing an executable of a
   * lost runtime first drains the NPU lane (lost.c). */
  _Atomic uint64_t *npu_times;
  uint64_t host_submit_ns, host_observed_ns; /* [mutex] CLOCK_MONOTONIC */
  tandem__slot_state_t state;                /* [mutex] */
  bool user_ref;                             /* [mutex] the completion is held by the user */
  tandem_status_t result;                    /* [mutex] final result once DONE */
  uint64_t lane_values[TANDEM__MAX_LANES];   /* [mutex] final value per lane, 0 none */
  tandem__slot_t *next_in_flight;            /* [mutex] runtime->in_flight */
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
  tandem__record_t *records;        /* plan access count entries */
  tandem__region_submit_t *submits; /* region_count entries */
  /* Per-submission parameters: the version of each region's parameters this
   * slot's command buffers were recorded with, and the dispatch views they
   * use (GPU nodes; retained: a buffer replaced by tandem_exec_set_view stays alive
   * until every slot recorded with it has been re-recorded or freed).
   * [mutex]; changed only while the slot is FREE. */
  uint64_t *region_version;     /* region_count entries */
  tandem_view_t *views;         /* exec->view_total entries */
  tandem_buffer_t **to_release; /* exec->view_total entries, scratch for submit */
  uint32_t handle_index;        /* its completion-handle entry (handle.c), for life */
};

struct tandem_exec {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  tandem__plan_t plan;
  tandem__access_t *accesses; /* all accesses, grouped by region */
  uint32_t *access_region;    /* region of each access */
  uint32_t access_count;
  /* Per GPU of the runtime: the backend program of the regions on it, or
   * NULL when none is (tandem__exec_native). */
  void *natives[TANDEM_MAX_GPUS];
  uint32_t gpu_mask; /* bit g: a region runs on GPU g (GPU 0 for an NPU-only graph) */
  /* Several GPUs: one region_count entries, where submit puts each GPU's
   * view of a slot's submissions ([mutex]); NULL on GPU 0 alone. */
  tandem__region_submit_t *submit_scratch;
  uint64_t *times_scratch; /* the same for timestamps: 2 per region ([mutex]) */
  tandem__slot_t *slots;
  uint32_t slot_count;
  uint64_t copied_per_lane[TANDEM__MAX_LANES]; /* bytes one run copies */
  bool uses_lane[TANDEM__MAX_LANES];           /* a region of it runs on the lane */
  uint64_t *region_copied;                     /* bytes each region copies */
  uint32_t *node_access;                       /* first index into accesses of each node */
  uint32_t *node_view;                         /* first index into a slot's views of each node */
  uint32_t view_total;                         /* views of all GPU nodes (fill, copy, dispatch) */
  uint64_t *region_version;                    /* [mutex] bumped by tandem_exec_set_* */
};

/* One more reference to |exec| (tandem_exec_retain; the last release is
 * prepare.c's). */
static inline void tandem__exec_retain(tandem_exec_t *exec) { atomic_fetch_add(&exec->refs, 1); }

struct tandem__npu_job {
  tandem__npu_job_t *next; /* [npu_lane.mutex] */
  tandem__slot_t *slot;
  uint32_t region;
};

#endif /* TANDEM_CORE_EXEC_INT_H_ */
