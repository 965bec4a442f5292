/* SPDX-License-Identifier: MIT */
/*
 * wait.c — a host wait for lane values: tandem__runtime_wait blocks until
 * every lane reached the values it is given, in the order the lanes'
 * signallers require: session lanes (host-signalled, session.c) first,
 * then the NPU lane (the lane thread's record of its signal, npu_lane.c), then
 * each GPU's timelines (its backend's wait, in its own lane ids; with several
 * GPUs, after the relay delivered what that GPU's work waits for, relay.c).
 * A failed GPU wait leaves the
 * runtime lost (lost.c). Completions, executable release and host maps
 * wait through it; retirement stays the tracker's (tracker.c).
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "core/lost.h"
#include "core/npu_lane.h"
#include "core/relay.h"
#include "core/runtime_int.h"
#include "core/wait.h"

/* Waits until every SESSION lane reached |values| (its stage ended and the
 * session recorded it, session.c) and clears those entries of |values|.
 * Values of user ids that are not sessions now are cleared unwaited: a lane
 * is given back only after every queued wait on it passed. */
static tandem_status_t tandem__host_lanes_wait(tandem_runtime_t *rt,
                                               uint64_t values[TANDEM__MAX_LANES],
                                               uint64_t timeout_ns) {
  bool any = false;
  for (int l = TANDEM_LANE_COUNT; l < TANDEM__USER_LANE_END; l++) any |= values[l] != 0;
  if (!any) return TANDEM_OK; /* the common case: no lock taken */
  uint64_t now = tandem__now_ns();
  /* 0: no deadline (also when now + timeout would not fit). */
  uint64_t deadline = timeout_ns > UINT64_MAX - now ? 0 : now + timeout_ns;
  tandem_status_t s = TANDEM_OK;
  pthread_mutex_lock(&rt->mutex);
  for (int l = TANDEM_LANE_COUNT; l < TANDEM__USER_LANE_END && s == TANDEM_OK; l++) {
    while (values[l] && rt->lanes[l].kind == TANDEM_LANE_KIND_SESSION &&
           rt->lane_done_value[l] < values[l] && rt->lost == TANDEM_OK) {
      if (!deadline) {
        pthread_cond_wait(&rt->host_lane_signalled, &rt->mutex);
        continue;
      }
      now = tandem__now_ns();
      if (now >= deadline) {
        s = TANDEM_ERROR_TIMEOUT;
        break;
      }
      struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
      pthread_cond_timedwait(&rt->host_lane_signalled, &rt->mutex, &ts);
    }
    values[l] = 0;
  }
  pthread_mutex_unlock(&rt->mutex);
  return s;
}

tandem_status_t tandem__runtime_wait(tandem_runtime_t *rt, const uint64_t values[TANDEM__MAX_LANES],
                                     uint64_t timeout_ns) {
  uint64_t gpu_values[TANDEM__MAX_LANES];
  memcpy(gpu_values, values, sizeof gpu_values);
  tandem_status_t s = TANDEM_OK;
  /* Host-signalled lanes first, as the NPU lane below: a host wait must not
   * return from the driver while a signal it depends on is still inside
   * vkSignalSemaphore (tandem__slot_t.cover). */
  uint64_t host_start = tandem__now_ns();
  s = tandem__host_lanes_wait(rt, gpu_values, timeout_ns);
  if (timeout_ns != TANDEM__WAIT_FOREVER) {
    uint64_t spent = tandem__now_ns() - host_start;
    timeout_ns = spent < timeout_ns ? timeout_ns - spent : 0;
  }
  if (s == TANDEM_OK && values[TANDEM_LANE_NPU]) {
    /* The NPU lane is host-signalled: wait for the lane thread's record of
     * it (made after vkSignalSemaphore returned), not the semaphore. */
    uint64_t start = tandem__now_ns();
    s = tandem__npu_lane_wait(rt, values[TANDEM_LANE_NPU], timeout_ns);
    uint64_t spent = tandem__now_ns() - start;
    if (timeout_ns != TANDEM__WAIT_FOREVER)
      timeout_ns = spent < timeout_ns ? timeout_ns - spent : 0;
    gpu_values[TANDEM_LANE_NPU] = 0;
  }
  /* Each GPU waits for its own lanes, in its backend's ids; user lanes are
   * GPU 0's (bound there only). */
  for (uint32_t g = 0; s == TANDEM_OK && g < rt->gpu_count; g++) {
    uint64_t local[TANDEM__MAX_LANES];
    if (!tandem__lane_values_for_gpu(g, gpu_values, local)) continue;
    uint64_t start = tandem__now_ns();
    s = tandem__relay_wait_delivered(rt, g, timeout_ns);
    tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
    if (s == TANDEM_OK) {
      uint64_t spent = tandem__now_ns() - start;
      if (timeout_ns != TANDEM__WAIT_FOREVER)
        timeout_ns = spent < timeout_ns ? timeout_ns - spent : 0;
      start = tandem__now_ns();
      s = gpu->vtable->lane.wait(gpu, local, timeout_ns);
      spent = tandem__now_ns() - start;
      if (timeout_ns != TANDEM__WAIT_FOREVER)
        timeout_ns = spent < timeout_ns ? timeout_ns - spent : 0;
    }
  }
  if (s != TANDEM_OK && s != TANDEM_ERROR_TIMEOUT) {
    pthread_mutex_lock(&rt->mutex);
    tandem__runtime_set_lost_locked(rt, s);
    pthread_mutex_unlock(&rt->mutex);
    /* A failed wait leaves the runtime lost (lost.c), whatever the driver said. */
    if (s != TANDEM_ERROR_DEVICE_LOST)
      s = tandem__annotate(TANDEM_ERROR_DEVICE_LOST,
                           "waiting for the GPU failed, so the runtime is lost");
  }
  return s;
}

tandem_status_t tandem__runtime_query_lanes(tandem_runtime_t *rt,
                                            uint64_t out_values[TANDEM__MAX_LANES]) {
  memset(out_values, 0, TANDEM__MAX_LANES * sizeof out_values[0]);
  tandem_status_t s = TANDEM_OK;
  for (uint32_t g = 0; g < rt->gpu_count; g++) {
    tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
    if (!gpu) continue;
    uint64_t local[TANDEM__MAX_LANES];
    tandem_status_t q = gpu->vtable->lane.query(gpu, local);
    if (q != TANDEM_OK) {
      if (s == TANDEM_OK) s = q;
      continue;
    }
    for (int k = 0; k < TANDEM_LANE_COUNT_GPU; k++) {
      int l = tandem__gpu_lane(g, (tandem_lane_t)k);
      out_values[l] = local[tandem__lane_in_gpu(g, l)];
    }
  }
  out_values[TANDEM_LANE_NPU] = tandem__npu_lane_done(rt);
  return s;
}
