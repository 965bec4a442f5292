/* SPDX-License-Identifier: MIT */
/*
 * submit.c — one submission of an executable graph, in named phases.
 *
 * tandem_exec_submit and its variants (after completions, waiting on user
 * lanes, around an application's own submission) all build one
 * tandem__submission_t and run it through these phases, in this order:
 *
 *   1. submit_check_args       the arguments, outside the lock
 *   (runtime->mutex is taken here and held to the end)
 *   2. submit_check_runtime    not lost; the user-lane waits name live lanes
 *   3. submit_acquire_slot     a FREE slot and a submission count (BUSY)
 *   4. submit_check_inputs     no conflicting host map, no poisoned input,
 *                              no failed completion to wait after
 *   5. submit_compute_waits    timeline values and per-region waits, into
 *                              the slot (nothing committed yet)
 *   6. submit_rerecord         regions whose parameters changed since this
 *                              slot recorded them, recorded again
 *   7. submit_to_backend       the application's submission (external), then
 *                              the backend's program_submit; a failure here
 *                              may be half-submitted: the runtime is lost
 *   8. submit_commit           lane values, tracker records, the slot
 *                              IN_FLIGHT in the runtime's FIFO, statistics
 *   9. submit_publish          the relay's wants (several GPUs), NPU regions
 *                              to the NPU lane thread, the completion handle
 *
 * Phases 1-6 can fail and leave no trace: they acquire everything fallible
 * before any timeline value is handed out (a BUSY answer changes nothing).
 * Phases 8-9 cannot fail. Nothing on this path allocates: records, submit
 * descriptions and completion handles live in the slot, made at prepare
 * (prepare.c). Views a re-recorded slot no longer binds are released after
 * the lock is dropped (a last reference frees device memory).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/access.h"
#include "core/check.h"
#include "core/exec_int.h"
#include "core/graph_int.h"
#include "core/handle.h"
#include "core/handoff.h"
#include "core/lane.h"
#include "core/lost.h"
#include "core/map.h"
#include "core/node_kind.h"
#include "core/npu_lane.h"
#include "core/record.h"
#include "core/relay.h"
#include "core/runtime_int.h"
#include "core/slot.h"
#include "core/submit.h"
#include "core/tracker.h"

/* One submission as it goes through the phases. The inputs are set by the
 * entry points; the rest by the phases, under runtime->mutex from phase 2. */
typedef struct tandem__submission {
  /* Inputs. */
  tandem_exec_t *exec;
  tandem_completion_t *const *after; /* ordered after these completions */
  uint32_t after_count;
  const tandem_lane_wait_t *lane_waits; /* user lanes every region waits on */
  uint32_t lane_wait_count;
  tandem_vulkan_submit_fn external; /* the application's own submission, or NULL */
  void *external_user;
  /* Set by the phases. */
  tandem_runtime_t *rt;
  const tandem__plan_t *plan;
  tandem__slot_t *slot;             /* phase 3 */
  uint64_t next[TANDEM__MAX_LANES]; /* phase 5: the lanes' values once committed */
  uint32_t release_count;           /* phase 6: slot->to_release entries */
  uint64_t submit_ns;               /* phase 7: before the queues see it */
} tandem__submission_t;

/* The graph's own writes before one of its nodes: for the exposed-reads
 * rule (tracker.c, tandem__poison_exposed_locked), a byte that an earlier
 * node writes is read as that node left it (the conflict orders them), so
 * its poison does not matter to the reader. Walks the nodes in the order
 * they were recorded; only reached when a read buffer holds poison. */
typedef struct {
  const tandem_exec_t *exec;
  uint32_t node; /* the reader: nodes [0, node) come first */
} tandem__graph_before_t;

static bool tandem__graph_written_before(const void *ctx, const tandem_buffer_t *b, uint64_t at,
                                         uint64_t *end) {
  const tandem__graph_before_t *g = ctx;
  const tandem_exec_t *exec = g->exec;
  for (uint32_t n = 0; n < g->node; n++) {
    tandem__access_t scratch[TANDEM__MAX_NODE_ACCESSES];
    uint32_t m = tandem__node_accesses(&exec->plan.nodes[n], scratch); /* the count only */
    for (uint32_t x = 0; x < m; x++) { /* this submission's views (tandem_exec_set_view) */
      const tandem__access_t *w = &exec->accesses[exec->node_access[n] + x];
      if (w->buffer == b && (w->access & TANDEM_ACCESS_WRITE) && w->offset <= at &&
          w->offset + w->length > at) {
        *end = w->offset + w->length;
        return true;
      }
    }
  }
  return false;
}

/* 1. The arguments: every |after| handle live and of this runtime. Outside
 * the lock; checked live again under it (phase 4), because a release revokes
 * under that lock before it drops the executable. */
static tandem_status_t submit_check_args(tandem__submission_t *sub) {
  if (!sub->exec) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "exec is NULL");
  sub->rt = sub->exec->runtime;
  sub->plan = &sub->exec->plan;
  if (sub->lane_wait_count && (sub->exec->gpu_mask & ~1u))
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "waits on external lanes: this graph runs on a GPU other than GPU 0, and "
                       "imported timelines are GPU 0's; wait in a graph on GPU 0 and order "
                       "this one after it (tandem_exec_submit_after)");
  if (sub->after_count && !sub->after)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "after is NULL with after_count %u",
                       sub->after_count);
  for (uint32_t i = 0; i < sub->after_count; i++) {
    char what[32];
    snprintf(what, sizeof what, "after[%u]", i);
    tandem__slot_t *a = NULL;
    TANDEM_RETURN_IF_ERROR(tandem__completion_acquire(sub->after[i], what, &a));
    bool other = a->exec->runtime != sub->rt;
    tandem_exec_release(a->exec);
    if (other)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "after[%u] belongs to another runtime", i);
  }
  return TANDEM_OK;
}

/* 2. The runtime can take work, and each user-lane wait names a live
 * EXTERNAL lane and a value above 0. */
static tandem_status_t submit_check_runtime_locked(const tandem__submission_t *sub) {
  tandem_runtime_t *rt = sub->rt;
  if (tandem__runtime_fold_loss_locked(rt) != TANDEM_OK)
    return TANDEM_FAIL(rt->lost, "the runtime's GPU failed earlier (%s); nothing can be submitted",
                       tandem_status_name(rt->lost));
  for (uint32_t i = 0; i < sub->lane_wait_count; i++) {
    int l = sub->lane_waits[i].lane;
    if (!tandem__lane_is_user(l) || rt->lanes[l].kind != TANDEM_LANE_KIND_EXTERNAL ||
        rt->lanes[l].closing)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "waits[%u]: lane %d is not an external lane of this runtime (make one "
                         "with tandem_external_timeline_lane; built-in lanes are ordered through "
                         "tandem_exec_submit_after)",
                         i, l);
    if (sub->lane_waits[i].value == 0)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "waits[%u]: value 0 on lane %d waits for nothing; timelines start at 0", i,
                         l);
  }
  return TANDEM_OK;
}

/* 3. A FREE slot of the executable and room under max_submissions.
 * Finished work is retired only when a limit is in the way: waits retire
 * what they waited for, so the common replay path makes no timeline
 * queries. */
static tandem_status_t submit_acquire_slot_locked(tandem__submission_t *sub) {
  tandem_runtime_t *rt = sub->rt;
  tandem_exec_t *exec = sub->exec;
  tandem__slot_t *slot = NULL;
  for (int attempt = 0; attempt < 2; attempt++) {
    if (!slot) slot = tandem__slot_find_free_locked(exec);
    if (slot && rt->in_flight_count < rt->options.max_submissions) break;
    if (attempt == 0) tandem__tracker_poll_locked(rt);
  }
  if (!slot)
    return TANDEM_FAIL(TANDEM_ERROR_BUSY,
                       "all %u graph slots of this executable are in use; a slot is free again "
                       "once its submission has finished and its completion is released "
                       "(tandem_completion_release; waiting alone keeps the slot); the runtime "
                       "option graph_slots sets how many",
                       exec->slot_count);
  if (rt->in_flight_count >= rt->options.max_submissions)
    return TANDEM_FAIL(TANDEM_ERROR_BUSY,
                       "%u submissions are in flight, the runtime's max_submissions",
                       rt->in_flight_count);
  sub->slot = slot;
  return TANDEM_OK;
}

/* 4. What the submission touches can be touched: no live host map
 * conflicts, no byte it reads is poisoned (unless in-flight work rewrites
 * it), and no completion it runs after has failed. */
static tandem_status_t submit_check_inputs_locked(const tandem__submission_t *sub) {
  const tandem_exec_t *exec = sub->exec;
  bool poisoned = false; /* the common case: nothing this graph touches failed */
  for (uint32_t i = 0; i < exec->access_count; i++) {
    TANDEM_RETURN_IF_ERROR(tandem__maps_check_locked(&exec->accesses[i]));
    poisoned |= exec->accesses[i].buffer->poison_count != 0;
  }
  /* Poison: only the graph's exposed reads, node by node in recorded order. */
  for (uint32_t n = 0; poisoned && n < sub->plan->node_count; n++) {
    tandem__access_t scratch[TANDEM__MAX_NODE_ACCESSES];
    uint32_t m = tandem__node_accesses(&sub->plan->nodes[n], scratch); /* the count only */
    tandem__graph_before_t before = {exec, n};
    for (uint32_t x = 0; x < m; x++) {
      const tandem__access_t *a = &exec->accesses[exec->node_access[n] + x];
      if (!a->buffer->poison_count) continue;
      const tandem__poison_t *p =
          tandem__poison_exposed_locked(a, tandem__graph_written_before, &before);
      if (p)
        return TANDEM_FAIL(TANDEM_ERROR_FAILED_DEPENDENCY,
                           "node %u: bytes %llu..%llu of a %llu-byte buffer it reads (it reads "
                           "%llu..%llu) were last written by work that failed (%s), and no "
                           "node recorded before it writes them first; write them again first "
                           "(with such a node, or with earlier work that succeeds), or read "
                           "other bytes",
                           n, (unsigned long long)p->offset,
                           (unsigned long long)(p->offset + p->length),
                           (unsigned long long)a->buffer->size, (unsigned long long)a->offset,
                           (unsigned long long)(a->offset + a->length),
                           tandem_status_name(p->cause));
    }
  }
  for (uint32_t i = 0; i < sub->after_count; i++) {
    const tandem__slot_t *a = tandem__handle_slot(sub->after[i]);
    if (!a) /* released by another thread since phase 1 */
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "after[%u] was released while this submission was being made", i);
    if (a->state != TANDEM__SLOT_IN_FLIGHT && a->result != TANDEM_OK)
      return TANDEM_FAIL(TANDEM_ERROR_FAILED_DEPENDENCY,
                         "after[%u] ended with %s; work ordered after it cannot run", i,
                         tandem_status_name(a->result));
  }
  return TANDEM_OK;
}

/* 5. Timeline values and waits, computed into the slot before anything is
 * committed: each region signals its lane's next value and waits for the
 * regions of this submission it follows, the user lanes' values, the
 * in-flight work its accesses conflict with (the tracker) and the
 * completions it runs after. Cannot fail. */
static void submit_compute_waits_locked(tandem__submission_t *sub) {
  tandem_runtime_t *rt = sub->rt;
  const tandem_exec_t *exec = sub->exec;
  const tandem__plan_t *plan = sub->plan;
  tandem__slot_t *slot = sub->slot;
  slot->dep_count = 0;
  memcpy(sub->next, rt->lane_next_value, sizeof sub->next);
  for (uint32_t r = 0; r < plan->region_count; r++) {
    tandem__region_submit_t *rs = &slot->submits[r];
    rs->region = r;
    rs->submitted = false;
    rs->signal_value = ++sub->next[plan->regions[r].lane];
    rs->external_wait = NULL;
    rs->external_value = 0;
    memset(rs->wait_values, 0, sizeof rs->wait_values);
    for (int l = 0; l < TANDEM__MAX_LANES; l++) {
      int32_t w = plan->regions[r].wait_region[l];
      rs->wait_values[l] = w >= 0 ? slot->submits[w].signal_value : 0;
    }
    for (uint32_t i = 0; i < sub->lane_wait_count; i++)
      if (sub->lane_waits[i].value > rs->wait_values[sub->lane_waits[i].lane])
        rs->wait_values[sub->lane_waits[i].lane] = sub->lane_waits[i].value;
  }
  for (uint32_t i = 0; i < exec->access_count; i++)
    tandem__tracker_conflicts_locked(rt, &exec->accesses[i],
                                     slot->submits[exec->access_region[i]].wait_values, slot);
  for (uint32_t i = 0; i < sub->after_count; i++) {
    tandem__slot_t *a = tandem__handle_slot(sub->after[i]);
    assert(a); /* checked in phase 4, under this lock */
    if (a->state != TANDEM__SLOT_IN_FLIGHT) continue;
    tandem__slot_add_dep_locked(slot, a, true);
    for (uint32_t r = 0; r < plan->region_count; r++)
      for (int l = 0; l < TANDEM__MAX_LANES; l++)
        if (a->lane_values[l] > slot->submits[r].wait_values[l])
          slot->submits[r].wait_values[l] = a->lane_values[l];
  }
}

/* 6. Regions whose parameters changed since this slot last recorded them
 * are recorded again, into this slot's own command buffers and descriptor
 * sets (no running work uses them: the slot is FREE). Views the slot no
 * longer binds go to slot->to_release, released after the lock is dropped.
 * A failed recording leaves that region's version old: it is recorded
 * again next time. */
static tandem_status_t submit_rerecord_locked(tandem__submission_t *sub) {
  const tandem_exec_t *exec = sub->exec;
  const tandem__plan_t *plan = sub->plan;
  tandem__slot_t *slot = sub->slot;
  for (uint32_t r = 0; r < plan->region_count; r++) {
    if (slot->region_version[r] == exec->region_version[r]) continue;
    const tandem__region_t *region = &plan->regions[r];
    for (uint32_t k = 0; k < region->count; k++) {
      uint32_t n = plan->order[region->first + k];
      const tandem__node_t *node = &plan->nodes[n];
      if (!tandem__node_info(node)->gpu) continue;
      for (uint32_t v = 0; v < node->view_count; v++) {
        tandem_view_t *held = &slot->views[exec->node_view[n] + v];
        if (held->buffer != node->views[v].buffer) {
          tandem_buffer_retain(node->views[v].buffer);
          slot->to_release[sub->release_count++] = held->buffer;
        }
        *held = node->views[v];
      }
    }
    uint32_t g = (uint32_t)tandem__lane_gpu(region->lane);
    TANDEM_RETURN_IF_ERROR(
        tandem__record_region(tandem__gpu_at(sub->rt, g), exec->natives[g], plan, slot->index, r));
    slot->region_version[r] = exec->region_version[r];
  }
  return TANDEM_OK;
}

/* 7. The application's own submission first (it waits for what the region
 * waits for; the region then waits for its end too), then the backend's
 * submission of every region. A backend failure may leave values
 * half-submitted: the lanes cannot be trusted any more, so the runtime is
 * lost and the slot's values abandoned. */
static tandem_status_t submit_to_backend_locked(tandem__submission_t *sub) {
  const tandem__plan_t *plan = sub->plan;
  tandem__slot_t *slot = sub->slot;
  tandem_runtime_t *rt = sub->rt;
  tandem_exec_t *exec = sub->exec;
  if (sub->external) {
    assert(plan->region_count == 1 && plan->regions[0].lane < TANDEM_LANE_COUNT_GPU);
    TANDEM_RETURN_IF_ERROR(tandem__vulkan_submit_call(tandem__gpu_at(rt, 0), plan, sub->external,
                                                      sub->external_user, &slot->submits[0]));
  }
  sub->submit_ns = tandem__now_ns();
  tandem_status_t s = TANDEM_OK;
  if (exec->gpu_mask == 1u) { /* GPU 0 alone: its ids are core's */
    s = tandem__gpu_at(rt, 0)->vtable->program.submit(tandem__gpu_at(rt, 0), exec->natives[0],
                                                      slot->index, slot->submits,
                                                      plan->region_count);
  } else {
    /* Each GPU gets every region, in order, with the waits in its own ids
     * (tandem__lane_in_gpu); it runs only its own (the others are NPU
     * regions in its program, core/record.c). The exec's scratch is used
     * under runtime->mutex only. */
    for (uint32_t g = 0; s == TANDEM_OK && g < rt->gpu_count; g++) {
      if (!(exec->gpu_mask & (1u << g))) continue;
      tandem__region_submit_t *local = exec->submit_scratch;
      for (uint32_t r = 0; r < plan->region_count; r++) {
        local[r] = slot->submits[r];
        for (int l = 0; l < TANDEM__MAX_LANES; l++)
          local[r].wait_values[tandem__lane_in_gpu(g, l)] = slot->submits[r].wait_values[l];
      }
      tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
      s = gpu->vtable->program.submit(gpu, exec->natives[g], slot->index, local,
                                      plan->region_count);
      for (uint32_t r = 0; r < plan->region_count; r++)
        if (tandem__lane_gpu(plan->regions[r].lane) == (int)g)
          slot->submits[r].submitted = local[r].submitted;
    }
  }
  if (s == TANDEM_OK) return TANDEM_OK;
  tandem__submit_abandon_locked(sub->rt, slot, sub->next);
  tandem__runtime_set_lost_locked(sub->rt, TANDEM_ERROR_DEVICE_LOST);
  if (s != TANDEM_ERROR_DEVICE_LOST) /* say what the runtime now is */
    s = tandem__annotate(TANDEM_ERROR_DEVICE_LOST,
                         "submitting to the GPU failed half-way, so the runtime is lost");
  return s;
}

/* 8. Committed: the lanes' next values, the slot's lane values and cover,
 * one tracker record per access (I3), the slot IN_FLIGHT at the tail of the
 * runtime's FIFO (retirement follows submission order), statistics. */
static void submit_commit_locked(tandem__submission_t *sub) {
  tandem_runtime_t *rt = sub->rt;
  tandem_exec_t *exec = sub->exec;
  const tandem__plan_t *plan = sub->plan;
  tandem__slot_t *slot = sub->slot;
  memcpy(rt->lane_next_value, sub->next, sizeof sub->next);
  memset(slot->lane_values, 0, sizeof slot->lane_values);
  for (uint32_t r = 0; r < plan->region_count; r++)
    slot->lane_values[plan->regions[r].lane] = slot->submits[r].signal_value;
  tandem__slot_set_cover_locked(rt, slot);
  tandem__lane_note_waits_locked(rt, slot);
  for (uint32_t i = 0; i < exec->access_count; i++) {
    tandem__record_t *rec = &slot->records[i];
    uint32_t r = exec->access_region[i];
    rec->access = exec->accesses[i];
    rec->lane = plan->regions[r].lane;
    rec->value = slot->submits[r].signal_value;
    rec->slot = slot;
    tandem__tracker_link_locked(rec);
  }
  tandem__slot_enter_flight_locked(rt, slot); /* IN_FLIGHT, at the FIFO's tail */
  atomic_store(&slot->cancel_requested, false);
  /* A session stage it waits for may already have ended in failure (its
   * records stay until its value is signalled): fail with it. */
  atomic_store(&slot->dep_failed, tandem__lane_failed_waits_locked(rt, slot));
  atomic_store(&slot->abandoned, false);
  atomic_store(&slot->npu_result, TANDEM_OK);
  slot->inject_failure = rt->fail_next;
  rt->fail_next = false;
  slot->host_submit_ns = sub->submit_ns;
  slot->npu_message[0] = '\0';
  slot->host_observed_ns = 0;
  atomic_fetch_add(&rt->stats.submissions, 1);
  for (int l = 0; l < TANDEM__MAX_LANES; l++) {
    if (exec->uses_lane[l]) atomic_fetch_add(&rt->lanes[l].submissions, 1);
    if (!exec->copied_per_lane[l]) continue;
    atomic_fetch_add(&rt->lanes[l].copied_bytes, exec->copied_per_lane[l]);
    atomic_fetch_add(&rt->stats.copied_bytes, exec->copied_per_lane[l]);
  }
  for (uint32_t i = 0; i < sub->lane_wait_count; i++) {
    bool again = false; /* one count per lane, however many entries name it */
    for (uint32_t j = 0; j < i; j++) again |= sub->lane_waits[j].lane == sub->lane_waits[i].lane;
    if (!again) atomic_fetch_add(&rt->lanes[sub->lane_waits[i].lane].submissions, 1);
  }
}

/* 9. NPU regions go to the lane thread last: the GPU regions that wait for
 * them are queued already (wait-before-signal on the NPU timeline). Then
 * the completion handle, holding a reference to the executable. */
static tandem_completion_t *submit_publish_locked(tandem__submission_t *sub) {
  const tandem__plan_t *plan = sub->plan;
  tandem__slot_t *slot = sub->slot;
  tandem__relay_post_locked(sub->rt, slot);
  for (uint32_t r = 0; r < plan->region_count; r++) {
    if (plan->regions[r].lane != TANDEM_LANE_NPU) continue;
    slot->npu_jobs[r] = (tandem__npu_job_t){.slot = slot, .region = r};
    tandem__npu_lane_push(sub->rt, &slot->npu_jobs[r]);
  }
  atomic_fetch_add(&sub->exec->refs, 1); /* the completion's reference */
  return tandem__handle_issue(slot);
}

#ifndef NDEBUG
/* Each phase's postcondition, checked after it in Debug builds (Mesa's
 * vk_queue_submit_final asserts as it goes; these check what the phase
 * promised, before the next one relies on it). */

/* 3: a FREE slot of this executable, and room for one more submission. */
static bool submit_acquired(const tandem__submission_t *sub) {
  const tandem__slot_t *slot = sub->slot;
  return slot && slot->exec == sub->exec && slot->state == TANDEM__SLOT_FREE &&
         sub->rt->in_flight_count < sub->rt->options.max_submissions;
}

/* 5: each region signals a value above everything its lane handed out so
 * far (I2), in region order per lane, and waits on no later value of its
 * own lane; each dependency is in flight. */
static bool submit_waits_computed(const tandem__submission_t *sub) {
  const tandem__plan_t *plan = sub->plan;
  const tandem__slot_t *slot = sub->slot;
  uint64_t last[TANDEM__MAX_LANES];
  memcpy(last, sub->rt->lane_next_value, sizeof last);
  for (uint32_t r = 0; r < plan->region_count; r++) {
    tandem_lane_t l = plan->regions[r].lane;
    const tandem__region_submit_t *rs = &slot->submits[r];
    if (rs->region != r || rs->submitted || rs->signal_value <= last[l] ||
        rs->wait_values[l] >= rs->signal_value)
      return false;
    last[l] = rs->signal_value;
  }
  for (uint32_t d = 0; d < slot->dep_count; d++)
    if (slot->deps[d].slot->state != TANDEM__SLOT_IN_FLIGHT) return false;
  return memcmp(last, sub->next, sizeof last) == 0;
}

/* 6: every region recorded with the executable's current parameters. */
static bool submit_recorded(const tandem__submission_t *sub) {
  for (uint32_t r = 0; r < sub->plan->region_count; r++)
    if (sub->slot->region_version[r] != sub->exec->region_version[r]) return false;
  return true;
}

/* 7: every GPU region handed to its queue; NPU regions wait for the lane. */
static bool submit_handed_over(const tandem__submission_t *sub) {
  for (uint32_t r = 0; r < sub->plan->region_count; r++)
    if (sub->slot->submits[r].submitted != (sub->plan->regions[r].lane != TANDEM_LANE_NPU))
      return false;
  return true;
}

/* 8: in flight at the FIFO's tail, every access linked to this slot at its
 * region's value, the lanes' next values taken. */
static bool submit_committed(const tandem__submission_t *sub) {
  const tandem__slot_t *slot = sub->slot;
  const tandem_exec_t *exec = sub->exec;
  if (slot->state != TANDEM__SLOT_IN_FLIGHT || sub->rt->in_flight_tail != slot ||
      memcmp(sub->rt->lane_next_value, sub->next, sizeof sub->next) != 0)
    return false;
  for (uint32_t i = 0; i < exec->access_count; i++) {
    const tandem__record_t *rec = &slot->records[i];
    if (rec->slot != slot || rec->value != slot->submits[exec->access_region[i]].signal_value)
      return false;
  }
  return true;
}
#endif /* NDEBUG */

/* Runs |sub| through the phases; the completion in |out_completion|. */
static tandem_status_t tandem__submit(tandem__submission_t *sub,
                                      tandem_completion_t **out_completion) {
  if (!out_completion) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_completion is NULL");
  *out_completion = NULL;
  TANDEM_RETURN_IF_ERROR(submit_check_args(sub));
  tandem_runtime_t *rt = sub->rt;
  pthread_mutex_lock(&rt->mutex);
  tandem_status_t s = submit_check_runtime_locked(sub);
  if (s == TANDEM_OK) s = submit_acquire_slot_locked(sub);
  assert(s != TANDEM_OK || submit_acquired(sub));
  if (s == TANDEM_OK) s = submit_check_inputs_locked(sub);
  if (s == TANDEM_OK) {
    submit_compute_waits_locked(sub);
    assert(submit_waits_computed(sub));
    s = submit_rerecord_locked(sub);
    assert(s != TANDEM_OK || submit_recorded(sub));
  }
  if (s == TANDEM_OK) s = submit_to_backend_locked(sub);
  assert(s != TANDEM_OK || submit_handed_over(sub));
  if (s == TANDEM_OK) {
    submit_commit_locked(sub); /* from here on nothing fails */
    assert(submit_committed(sub));
    *out_completion = submit_publish_locked(sub);
    assert(tandem__runtime_check_locked(rt) && tandem__exec_check_locked(sub->exec));
  }
  pthread_mutex_unlock(&rt->mutex);
  /* Outside the lock: a last reference frees device memory. */
  for (uint32_t i = 0; i < sub->release_count; i++) tandem_buffer_release(sub->slot->to_release[i]);
  return s;
}

tandem_status_t tandem_exec_submit(tandem_exec_t *exec, tandem_completion_t **out_completion) {
  tandem__submission_t sub = {.exec = exec};
  return tandem__submit(&sub, out_completion);
}

tandem_status_t tandem_exec_submit_waiting(tandem_exec_t *exec, const tandem_lane_wait_t *waits,
                                           uint32_t wait_count,
                                           tandem_completion_t **out_completion) {
  if (out_completion) *out_completion = NULL; /* on every error, as tandem_exec_submit */
  if (wait_count && !waits)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "waits is NULL with wait_count %u",
                       wait_count);
  if (wait_count > TANDEM_MAX_LANES)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "wait_count %u: a submission waits on at most %d lanes (one entry each)",
                       wait_count, TANDEM_MAX_LANES);
  tandem__submission_t sub = {.exec = exec, .lane_waits = waits, .lane_wait_count = wait_count};
  return tandem__submit(&sub, out_completion);
}

tandem_status_t tandem_exec_submit_after(tandem_exec_t *exec, tandem_completion_t *const *after,
                                         uint32_t after_count,
                                         tandem_completion_t **out_completion) {
  tandem__submission_t sub = {.exec = exec, .after = after, .after_count = after_count};
  return tandem__submit(&sub, out_completion);
}

tandem_status_t tandem__exec_submit_external(tandem_exec_t *exec, tandem_vulkan_submit_fn submit,
                                             void *user, tandem_completion_t **out_completion) {
  tandem__submission_t sub = {.exec = exec, .external = submit, .external_user = user};
  return tandem__submit(&sub, out_completion);
}
