/* SPDX-License-Identifier: MIT */
/*
 * completion.c — what a submission's caller holds: tandem_completion_t
 * (wait, poll, cancel, profile, release). A completion is a handle
 * (handle.c) naming a slot and the generation it was issued for; each call
 * acquires it (retaining the executable), checks it is still live under
 * runtime->mutex, and answers from the slot. Releasing the handle frees a
 * slot that has retired (DONE -> FREE), or lets retirement free it.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/exec_int.h"
#include "core/handle.h"
#include "core/runtime_int.h"
#include "core/slot.h"
#include "core/struct_size.h"
#include "core/trace_events.h"
#include "core/tracker.h"
#include "core/wait.h"

/* The completion's slot and generation while it is live under the lock, or
 * INVALID_ARGUMENT: released by another thread since it was acquired. */
static tandem_status_t tandem__completion_live_locked(const tandem_completion_t *completion,
                                                      const tandem__slot_t *slot) {
  if (tandem__handle_slot(completion) == slot) return TANDEM_OK;
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                     "the completion was released by another thread during this call");
}

static tandem_status_t tandem__completion_wait_acquired(tandem_completion_t *completion,
                                                        tandem__slot_t *slot, uint64_t timeout_ns) {
  tandem_runtime_t *rt = slot->exec->runtime;
  uint64_t values[TANDEM__MAX_LANES];
  pthread_mutex_lock(&rt->mutex);
  tandem_status_t live = tandem__completion_live_locked(completion, slot);
  uint64_t generation = slot->generation;
  bool in_flight = slot->state == TANDEM__SLOT_IN_FLIGHT;
  /* The wait covers the submissions this one depends on (it retires after
   * them) and the NPU signals its GPU values depend on: its cover. */
  memcpy(values, slot->cover, sizeof values);
  pthread_mutex_unlock(&rt->mutex);
  if (live != TANDEM_OK) return live;
  if (in_flight) {
    tandem_status_t s = tandem__runtime_wait(rt, values, timeout_ns);
    if (s == TANDEM_ERROR_TIMEOUT)
      return TANDEM_FAIL(s, "the submission did not finish within %llu ns",
                         (unsigned long long)timeout_ns);
    pthread_mutex_lock(&rt->mutex);
    if (s == TANDEM_OK) {
      tandem__tracker_advance_locked(rt, values, TANDEM_OK); /* reached: no query */
    } else {
      tandem__tracker_poll_locked(rt);
    }
  } else {
    pthread_mutex_lock(&rt->mutex);
  }
  /* Released by another thread meanwhile and submitted again: the slot now
   * holds another submission, and this one's result is gone. (Released
   * only, the slot keeps the result: it is answered.) */
  if (slot->generation != generation) {
    pthread_mutex_unlock(&rt->mutex);
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "the completion was released by another thread while it was waited "
                       "for, and its slot reused: its result is gone");
  }
  tandem_status_t result = slot->result;
  /* The NPU's own text, when its failure is what ended the submission. */
  char npu_message[sizeof slot->npu_message] = "";
  if (result != TANDEM_OK && result == (tandem_status_t)atomic_load(&slot->npu_result))
    memcpy(npu_message, slot->npu_message, sizeof npu_message);
  pthread_mutex_unlock(&rt->mutex);
  if (result != TANDEM_OK)
    return TANDEM_FAIL(result, "the submission failed: %s%s%s", tandem_status_describe(result),
                       npu_message[0] ? "; the NPU said: " : "", npu_message);
  return TANDEM_OK;
}

tandem_status_t tandem_completion_wait_timeout(tandem_completion_t *completion,
                                               uint64_t timeout_ns) {
  tandem__slot_t *slot;
  TANDEM_RETURN_IF_ERROR(tandem__completion_acquire(completion, "completion", &slot));
  tandem_exec_t *exec = slot->exec;
  tandem_status_t s = tandem__completion_wait_acquired(completion, slot, timeout_ns);
  tandem_exec_release(exec); /* the acquire's reference; keeps the error message */
  return s;
}

tandem_status_t tandem_completion_wait(tandem_completion_t *completion) {
  return tandem_completion_wait_timeout(completion, TANDEM__WAIT_FOREVER);
}

bool tandem_completion_is_complete(tandem_completion_t *completion) {
  tandem__slot_t *slot;
  if (tandem__completion_acquire(completion, "completion", &slot) != TANDEM_OK) return false;
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  tandem__tracker_poll_locked(rt);
  bool done = slot->state != TANDEM__SLOT_IN_FLIGHT;
  pthread_mutex_unlock(&rt->mutex);
  tandem_exec_release(exec);
  return done;
}

void tandem_completion_release(tandem_completion_t *completion) {
  if (!completion) return;
  tandem__slot_t *slot;
  /* A stale handle (released twice, or bytes that were never a handle)
   * changes nothing; the error message says so. */
  if (tandem__completion_acquire(completion, "completion", &slot) != TANDEM_OK) return;
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  bool won = tandem__handle_slot(completion) == slot; /* else a concurrent release won */
  if (won) {
    tandem__handle_revoke(slot);
    tandem__slot_give_back_locked(slot);
    assert(tandem__exec_check_locked(exec));
  }
  pthread_mutex_unlock(&rt->mutex);
  tandem_exec_release(exec);          /* the acquire's reference */
  if (won) tandem_exec_release(exec); /* the completion's */
}

tandem_status_t tandem_completion_cancel(tandem_completion_t *completion) {
  tandem__slot_t *slot;
  TANDEM_RETURN_IF_ERROR(tandem__completion_acquire(completion, "completion", &slot));
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  tandem_status_t s = tandem__completion_live_locked(completion, slot);
  tandem__tracker_poll_locked(rt);
  if (s == TANDEM_OK && slot->state == TANDEM__SLOT_IN_FLIGHT)
    atomic_store(&slot->cancel_requested, true);
  pthread_mutex_unlock(&rt->mutex);
  tandem_exec_release(exec);
  return s;
}

static tandem_status_t tandem__completion_profile_acquired(tandem_completion_t *completion,
                                                           tandem__slot_t *slot,
                                                           tandem_completion_profile_t *out,
                                                           tandem_region_profile_t *regions,
                                                           uint32_t capacity) {
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  tandem_status_t live = tandem__completion_live_locked(completion, slot);
  if (live != TANDEM_OK) {
    pthread_mutex_unlock(&rt->mutex);
    return live;
  }
  tandem__tracker_poll_locked(rt);
  bool done = slot->state != TANDEM__SLOT_IN_FLIGHT;
  out->host_submit_ns = slot->host_submit_ns;
  out->host_observed_ns = slot->host_observed_ns;
  const tandem__plan_t *plan = &exec->plan;
  uint32_t rc = plan->region_count;
  out->region_count = rc;
  uint64_t *pairs = slot->timestamps;
  tandem__gpu_t *gpu = tandem__gpu_at(rt, 0);
  /* The slot is DONE and held by the caller: it cannot be reused meanwhile. */
  (void)gpu;
  if (done) {
    out->gpu_times_status = tandem__slot_times(slot, pairs);
    out->gpu_times_valid = out->gpu_times_status == TANDEM_OK;
  }
  if (!done) {
    pthread_mutex_unlock(&rt->mutex);
    memset(out, 0, sizeof *out);
    return TANDEM_FAIL(TANDEM_ERROR_BUSY, "the submission has not finished; wait for it first");
  }
  uint64_t first = UINT64_MAX, last = 0;
  for (uint32_t r = 0; r < rc; r++) {
    if (pairs[2 * r] < first) first = pairs[2 * r];
    if (pairs[2 * r + 1] > last) last = pairs[2 * r + 1];
    if (r < capacity)
      regions[r] = (tandem_region_profile_t){plan->regions[r].lane, plan->regions[r].count,
                                             pairs[2 * r], pairs[2 * r + 1]};
  }
  if (out->gpu_times_valid) {
    out->queue_ns = first > out->host_submit_ns ? first - out->host_submit_ns : 0;
    out->execution_ns = last > first ? last - first : 0;
  }
  pthread_mutex_unlock(&rt->mutex);
  return TANDEM_OK;
}

tandem_status_t tandem_completion_profile(tandem_completion_t *completion,
                                          tandem_completion_profile_t *out_profile,
                                          tandem_region_profile_t *regions, uint32_t capacity) {
  if (!out_profile) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_profile is NULL");
  TANDEM_RETURN_IF_ERROR(tandem__struct_out_check(out_profile, TANDEM__OLDEST_COMPLETION_PROFILE,
                                                  "tandem_completion_profile_t"));
  tandem__struct_clear(out_profile);
  tandem_completion_profile_t known;
  tandem_completion_profile_init(&known);
  tandem_completion_profile_t *out = &known;
  if (capacity && !regions)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "regions is NULL with capacity %u", capacity);
  tandem__slot_t *slot;
  TANDEM_RETURN_IF_ERROR(tandem__completion_acquire(completion, "completion", &slot));
  tandem_exec_t *exec = slot->exec;
  tandem_status_t s = tandem__completion_profile_acquired(completion, slot, out, regions, capacity);
  tandem_exec_release(exec);
  if (s != TANDEM_OK) return s;
  tandem__struct_out(out_profile, out, sizeof *out);
  return TANDEM_OK;
}
