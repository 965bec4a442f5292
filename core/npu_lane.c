/* SPDX-License-Identifier: MIT */
/*
 * npu_lane.c — the NPU lane: one host thread running NPU regions in
 * submission order, started when the NPU opens (npu.c) and stopped when the
 * runtime goes.
 *
 * The lane thread (I5, I6): never takes runtime->mutex (core/runtime_int.h);
 * for each NPU region it waits for the GPU values the region depends on,
 * skips the work if the submission was cancelled or a dependency failed,
 * syncs every range the run reads or writes to the device and every output
 * range back (counted as cache-maintenance bytes), and signals the NPU timeline to the region's value, always — a
 * failed, skipped or timed-out run still signals, and records its failure in
 * the slot, which fails the completion and its dependents at retirement.
 * After the signal the job is not touched again: the slot may be reused.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/access.h"
#include "core/buffer_int.h"
#include "core/check.h"
#include "core/exec_int.h"
#include "core/graph_int.h"
#include "core/npu_lane.h"
#include "core/plan_int.h"
#include "core/relay.h"
#include "core/runtime_int.h"

static void *tandem__npu_lane_main(void *arg);

tandem_status_t tandem__npu_lane_start(tandem_runtime_t *rt) {
  pthread_mutex_init(&rt->npu_lane.mutex, NULL);
  pthread_cond_init(&rt->npu_lane.wake, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&rt->npu_lane.done_changed, &attr);
  pthread_condattr_destroy(&attr);
  if (pthread_create(&rt->npu_lane.thread, NULL, tandem__npu_lane_main, rt) != 0) {
    pthread_mutex_destroy(&rt->npu_lane.mutex);
    pthread_cond_destroy(&rt->npu_lane.wake);
    pthread_cond_destroy(&rt->npu_lane.done_changed);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "starting the NPU lane thread");
  }
  rt->npu_lane.started = true;
  return TANDEM_OK;
}

void tandem__npu_lane_push(tandem_runtime_t *rt, tandem__npu_job_t *job) {
  tandem__npu_lane_t *lane = &rt->npu_lane;
  pthread_mutex_lock(&lane->mutex);
  job->next = NULL;
  if (lane->tail) {
    lane->tail->next = job;
  } else {
    lane->head = job;
  }
  lane->tail = job;
  pthread_cond_signal(&lane->wake);
  pthread_mutex_unlock(&lane->mutex);
}

uint64_t tandem__npu_lane_done(tandem_runtime_t *rt) {
  tandem__npu_lane_t *lane = &rt->npu_lane;
  if (!atomic_load(&rt->npu)) return 0;
  pthread_mutex_lock(&lane->mutex);
  uint64_t done = lane->done;
  pthread_mutex_unlock(&lane->mutex);
  return done;
}

tandem_status_t tandem__npu_lane_wait(tandem_runtime_t *rt, uint64_t value, uint64_t timeout_ns) {
  tandem__npu_lane_t *lane = &rt->npu_lane;
  struct timespec deadline = tandem__deadline_after(timeout_ns);
  tandem_status_t s = TANDEM_OK;
  pthread_mutex_lock(&lane->mutex);
  while (lane->done < value) {
    if (timeout_ns == TANDEM__WAIT_FOREVER) {
      pthread_cond_wait(&lane->done_changed, &lane->mutex);
    } else if (pthread_cond_timedwait(&lane->done_changed, &lane->mutex, &deadline) != 0 &&
               lane->done < value) {
      s = TANDEM_ERROR_TIMEOUT;
      break;
    }
  }
  pthread_mutex_unlock(&lane->mutex);
  return s;
}

void tandem__npu_lane_stop(tandem_runtime_t *rt) {
  tandem__npu_lane_t *lane = &rt->npu_lane;
  if (!lane->started) return;
  pthread_mutex_lock(&lane->mutex);
  lane->stop = true;
  pthread_cond_signal(&lane->wake);
  pthread_mutex_unlock(&lane->mutex);
  pthread_join(lane->thread, NULL);
  pthread_mutex_destroy(&lane->mutex);
  pthread_cond_destroy(&lane->wake);
  pthread_cond_destroy(&lane->done_changed);
  lane->started = false;
}

/* Moves the bytes of one binding between the GPU-visible and NPU sides
 * (staged sharing only) and makes them visible to the consumer. Before a
 * run every range it touches is synced to the device, those it only writes
 * too (without the staged copy: the NPU overwrites them): on XDNA a sync is
 * a clflush whatever its direction (amd/xdna-driver@856409ca
 * src/shim/buffer.cpp:664-681), so host bytes left dirty in the CPU cache
 * over an output range would be written back over the NPU's results by the
 * FROM_DEVICE sync after the run; mlir-aie's hosts sync outputs before a
 * run for the same reason. This costs one more flush of each write-only
 * range per run; flushing on host unmap instead would miss every other CPU
 * writer of those lines (the staged copies here, a neighbouring range's map
 * sharing a 64-byte line). */
static tandem_status_t tandem__npu_make_visible(tandem_runtime_t *rt, tandem__npu_t *npu,
                                                const tandem__access_t *a, bool to_npu) {
  tandem_buffer_t *b = a->buffer;
  bool staged = b->placement == TANDEM_PLACEMENT_SHARED && b->sharing == TANDEM_SHARING_STAGED;
  if (to_npu && staged && (a->access & TANDEM_ACCESS_READ)) {
    memcpy((uint8_t *)b->npu_host + a->offset, (uint8_t *)b->host + a->offset, a->length);
    atomic_fetch_add(&rt->stats.copied_bytes, a->length);
    atomic_fetch_add(&rt->lanes[TANDEM_LANE_NPU].copied_bytes, a->length);
  }
  TANDEM_RETURN_IF_ERROR(npu->vtable->bo_sync(npu, b->npu_bo, to_npu, a->offset, a->length));
  atomic_fetch_add(&rt->stats.cache_maintenance_bytes, a->length);
  if (!to_npu && staged) {
    memcpy((uint8_t *)b->host + a->offset, (uint8_t *)b->npu_host + a->offset, a->length);
    atomic_fetch_add(&rt->stats.copied_bytes, a->length);
    atomic_fetch_add(&rt->lanes[TANDEM_LANE_NPU].copied_bytes, a->length);
  }
  return TANDEM_OK;
}

static tandem_status_t tandem__npu_run_region(tandem_runtime_t *rt, tandem__npu_t *npu,
                                              tandem__slot_t *slot, uint32_t region) {
  const tandem__plan_t *plan = &slot->exec->plan;
  const tandem__region_t *reg = &plan->regions[region];
  for (uint32_t k = 0; k < reg->count; k++) {
    uint32_t n = plan->order[reg->first + k];
    const tandem__node_t *node = &plan->nodes[n];
    tandem__access_t acc[TANDEM__MAX_NODE_ACCESSES];
    uint32_t count = tandem__node_accesses(node, acc);
    /* An earlier execution the watchdog left on the NPU still holds these
     * buffers: it ends (or this run fails) before they are synced. */
    TANDEM_RETURN_IF_ERROR(npu->vtable->run_ready(npu, slot->npu_runs[n]));
    for (uint32_t i = 0; i < count; i++) /* every range, written ones too: made clean */
      TANDEM_RETURN_IF_ERROR(tandem__npu_make_visible(rt, npu, &acc[i], true));
    TANDEM_RETURN_IF_ERROR(
        npu->vtable->run_execute(npu, slot->npu_runs[n], rt->options.npu_timeout_ms));
    atomic_fetch_add(&rt->stats.npu_runs, 1);
    for (uint32_t i = 0; i < count; i++)
      if (acc[i].access & TANDEM_ACCESS_WRITE)
        TANDEM_RETURN_IF_ERROR(tandem__npu_make_visible(rt, npu, &acc[i], false));
  }
  return TANDEM_OK;
}

/* Waits for |waits| (core's ids; the NPU lane's entry 0) on each GPU, in
 * its backend's ids: user lanes are GPU 0's. Takes no runtime->mutex (I6). */
static tandem_status_t tandem__npu_wait_gpus(tandem_runtime_t *rt,
                                             const uint64_t waits[TANDEM__MAX_LANES]) {
  for (uint32_t g = 0; g < rt->gpu_count; g++) {
    uint64_t local[TANDEM__MAX_LANES];
    if (!tandem__lane_values_for_gpu(g, waits, local)) continue;
    TANDEM_RETURN_IF_ERROR(tandem__relay_wait_delivered(rt, g, TANDEM__WAIT_FOREVER));
    tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
    TANDEM_RETURN_IF_ERROR(gpu->vtable->lane.wait(gpu, local, TANDEM__WAIT_FOREVER));
  }
  return TANDEM_OK;
}

static void *tandem__npu_lane_main(void *arg) {
  tandem_runtime_t *rt = arg;
  tandem__npu_lane_t *lane = &rt->npu_lane;
  tandem__gpu_t *gpu = tandem__gpu_at(rt, 0); /* the NPU lane's timeline is GPU 0's */
  tandem__check_mark_npu_lane_thread();
  for (;;) {
    pthread_mutex_lock(&lane->mutex);
    while (!lane->head && !lane->stop) pthread_cond_wait(&lane->wake, &lane->mutex);
    tandem__npu_job_t *job = lane->head;
    if (!job) { /* stop requested and nothing left */
      pthread_mutex_unlock(&lane->mutex);
      return NULL;
    }
    lane->head = job->next;
    if (!lane->head) lane->tail = NULL;
    pthread_mutex_unlock(&lane->mutex);

    tandem__slot_t *slot = job->slot;
    uint32_t region = job->region;
    const tandem__region_submit_t *sub = &slot->submits[region];
    uint64_t signal = sub->signal_value;
    /* I5: wait for the GPU lanes; earlier NPU values are ours, in order. */
    uint64_t waits[TANDEM__MAX_LANES];
    memcpy(waits, sub->wait_values, sizeof waits);
    waits[TANDEM_LANE_NPU] = 0;
    tandem__npu_t *npu = atomic_load(&rt->npu);
    /* An abandoned submission (lost.c) may wait for GPU values that were
     * never submitted: signal without waiting or running. */
    tandem_status_t s = TANDEM_OK;
    if (atomic_load(&slot->abandoned)) {
      s = TANDEM_FAIL(TANDEM_ERROR_DEVICE_LOST,
                      "the submission failed before all of it reached the queues; the NPU run "
                      "was skipped");
    } else {
      s = tandem__npu_wait_gpus(rt, waits);
      /* A failed semaphore wait loses the runtime, as on any thread
       * (tracker.c); this one may not take the lock (I6). */
      if (s != TANDEM_OK) {
        s = tandem__annotate(TANDEM_ERROR_DEVICE_LOST,
                             "the NPU lane's wait for the GPU failed (%s), so the runtime is "
                             "lost",
                             tandem_status_name(s));
        atomic_store(&rt->lost_pending, true);
      }
    }
    /* I6: no runtime->mutex on this thread; the slot's flags are atomics. */
    bool skip = atomic_load(&slot->cancel_requested) || atomic_load(&slot->dep_failed) ||
                atomic_load(&slot->npu_result) != TANDEM_OK;
    slot->npu_times[2 * region] = tandem__now_ns();
    if (s == TANDEM_OK && !skip) s = tandem__npu_run_region(rt, npu, slot, region);
    slot->npu_times[2 * region + 1] = tandem__now_ns();
    /* The failure is recorded before the signal and before |done| moves, so
     * whoever retires the slot sees it. */
    int expected = TANDEM_OK;
    if (s != TANDEM_OK) {
      /* The text first: the result is what makes readers look at it. */
      if (atomic_load(&slot->npu_result) == TANDEM_OK)
        snprintf(slot->npu_message, sizeof slot->npu_message, "%s", tandem_error_message());
      atomic_compare_exchange_strong(&slot->npu_result, &expected, (int)s);
    }
    /* Always signal: GPU work behind this region must never hang. */
    assert(tandem__npu_lane_check_signal(lane, signal));
    tandem_status_t signalled = gpu->vtable->lane.signal(gpu, TANDEM_LANE_NPU, signal);
    if (signalled != TANDEM_OK) {
      if (atomic_load(&slot->npu_result) == TANDEM_OK)
        snprintf(slot->npu_message, sizeof slot->npu_message,
                 "signalling the NPU lane's timeline failed (%s), so the runtime is lost: %s",
                 tandem_status_name(signalled), tandem_error_message());
      expected = TANDEM_OK;
      atomic_compare_exchange_strong(&slot->npu_result, &expected, (int)TANDEM_ERROR_DEVICE_LOST);
      atomic_store(&rt->lost_pending, true); /* I6: folded in under the lock */
    }
    tandem__clear_error();
    pthread_mutex_lock(&lane->mutex);
    lane->done = signal;
    pthread_cond_broadcast(&lane->done_changed);
    pthread_mutex_unlock(&lane->mutex);
  }
}
