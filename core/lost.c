/* SPDX-License-Identifier: MIT */
/*
 * lost.c — device loss as a runtime state.
 *
 * A runtime whose GPU failed (a wait, a query or a submission failed, whatever
 * code the driver gave, or a submission failed half-way; or any other driver
 * call answered DEVICE_LOST: a buffer's zero-fill, the NPU lane's semaphore
 * wait or signal, a timestamp readback, an interop wait) is lost for good:
 * runtime->lost becomes DEVICE_LOST, every later submission fails fast with
 * it, every in-flight submission retires with it (tracker.c), and
 * TANDEM_ABORT_ON_DEVICE_LOST=1 aborts at the moment of loss, for debugging.
 * Loss does not mean the queues stopped: before an executable's command
 * buffers and descriptor sets are freed, tandem_exec_release drains the NPU
 * lane and idles the queues (a device lost for real answers at once; work
 * still running finishes), so nothing is freed under running work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lost.h"
#include "core/exec_int.h"
#include "core/npu_lane.h"
#include "core/plan_int.h"
#include "core/relay.h"
#include "core/runtime_int.h"

void tandem__runtime_set_lost_locked(tandem_runtime_t *rt, tandem_status_t s) {
  if (rt->lost != TANDEM_OK || s == TANDEM_OK) return;
  /* Whatever failed (the device, or a wait, query or submission the driver
   * refused with another code), the lanes cannot be trusted any more: the
   * runtime is lost and answers DEVICE_LOST from now on. The failing call's
   * own message names the cause. */
  rt->lost = TANDEM_ERROR_DEVICE_LOST;
  pthread_cond_broadcast(&rt->host_lane_signalled); /* host-lane waits stop waiting */
  tandem__relay_release(rt); /* no queue waits for a value a lost GPU never makes */
  const char *abort_env = getenv("TANDEM_ABORT_ON_DEVICE_LOST");
  if (abort_env && strcmp(abort_env, "1") == 0) {
    fprintf(stderr,
            "tandem: the runtime's GPU failed (%s): %s; aborting "
            "(TANDEM_ABORT_ON_DEVICE_LOST=1)\n",
            tandem_status_name(s), tandem_error_message());
    abort();
  }
}

void tandem__runtime_note_loss(tandem_runtime_t *rt, tandem_status_t s) {
  if (s != TANDEM_ERROR_DEVICE_LOST) return;
  pthread_mutex_lock(&rt->mutex);
  tandem__runtime_set_lost_locked(rt, s);
  pthread_mutex_unlock(&rt->mutex);
}

tandem_status_t tandem__runtime_fold_loss_locked(tandem_runtime_t *rt) {
  if (rt->lost == TANDEM_OK && atomic_load(&rt->lost_pending))
    tandem__runtime_set_lost_locked(rt, TANDEM_ERROR_DEVICE_LOST);
  return rt->lost;
}

void tandem__runtime_drain_if_lost(tandem_runtime_t *rt) {
  pthread_mutex_lock(&rt->mutex);
  bool lost = rt->lost != TANDEM_OK;
  uint64_t values[TANDEM__MAX_LANES];
  memcpy(values, rt->lane_next_value, sizeof values);
  pthread_mutex_unlock(&rt->mutex);
  if (!lost) return;
  char saved[TANDEM__MESSAGE_BYTES];
  tandem__save_error(saved, sizeof saved);
  /* The NPU lane signals every value it was given, run or not (I5). */
  if (values[TANDEM_LANE_NPU])
    (void)tandem__npu_lane_wait(rt, values[TANDEM_LANE_NPU], TANDEM__WAIT_FOREVER);
  /* Then the queues, whatever the waits answered: the failure that made the
   * runtime lost may have come from a call, not from the GPU stopping. */
  for (uint32_t g = 0; g < rt->gpu_count; g++) {
    tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
    if (gpu) gpu->vtable->device.idle(gpu);
  }
  tandem__restore_error(saved);
}

void tandem__submit_abandon_locked(tandem_runtime_t *rt, tandem__slot_t *slot,
                                   const uint64_t next[TANDEM__MAX_LANES]) {
  const tandem__plan_t *plan = &slot->exec->plan;
  /* GPU lanes: lane_next_value records the last value that reached a queue
   * (the runtime is lost: no value is handed out after this). Regions reach
   * the queues in creation order, which is topological: a submitted region
   * waits only for submitted regions, or for this submission's NPU regions. */
  bool npu = false;
  for (uint32_t r = 0; r < plan->region_count; r++) {
    tandem_lane_t l = plan->regions[r].lane;
    if (l == TANDEM_LANE_NPU) {
      npu = true;
    } else if (slot->submits[r].submitted &&
               slot->submits[r].signal_value > rt->lane_next_value[l]) {
      rt->lane_next_value[l] = slot->submits[r].signal_value;
    }
  }
  if (!npu) return;
  /* NPU regions: queued GPU regions may wait for their values, so the lane
   * signals each, in order after its earlier jobs (I5), without running. The
   * slot stays untouched until the drain saw those values (exec release). */
  atomic_store(&slot->abandoned, true);
  atomic_store(&slot->cancel_requested, false);
  atomic_store(&slot->dep_failed, false);
  atomic_store(&slot->npu_result, TANDEM_OK);
  slot->npu_message[0] = '\0';
  rt->lane_next_value[TANDEM_LANE_NPU] = next[TANDEM_LANE_NPU];
  for (uint32_t r = 0; r < plan->region_count; r++) {
    if (plan->regions[r].lane != TANDEM_LANE_NPU) continue;
    slot->npu_jobs[r] = (tandem__npu_job_t){.slot = slot, .region = r};
    tandem__npu_lane_push(rt, &slot->npu_jobs[r]);
  }
}
