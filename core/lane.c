/* SPDX-License-Identifier: MIT */
/*
 * lane.c — the runtime's lane table: every lane is an object with a timeline.
 *
 * Ids 0..3 are the built-in lanes (GPU 0's three queues and the NPU thread,
 * tandem_lane_t), and ids from TANDEM__USER_LANE_END on the other GPUs'
 * queues (three each, core/backend.h), fixed for the runtime's life. Ids
 * TANDEM_LANE_COUNT .. TANDEM__USER_LANE_END - 1 are user lanes, taken and
 * given back under
 * runtime->mutex: an imported timeline made a lane (EXTERNAL, interop.c;
 * tandem only waits on it) and native sessions (SESSION, session.c; tandem
 * signals it from the host when a stage ends). The timeline behind a user id
 * lives in GPU 0's backend under the same id (lane_bind), so a region
 * submission's per-id wait values reach the right semaphore with no lookup.
 *
 * A user id goes back only after every queued wait on its timeline has
 * passed (tandem__lane_t.waited_by): the semaphore must outlive the batches
 * that wait on it, and a new owner of the id must not inherit them.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "core/lane.h"
#include "core/exec_int.h"
#include "core/lost.h"
#include "core/npu_lane.h"
#include "core/plan_int.h"
#include "core/runtime_int.h"
#include "core/struct_size.h"
#include "core/wait.h"

void tandem__lanes_init(tandem_runtime_t *rt) {
  for (int l = 0; l < TANDEM__MAX_LANES; l++) {
    tandem__lane_t *lane = &rt->lanes[l];
    int g = tandem__lane_gpu(l);
    bool gpu_lane = g >= 0 && (uint32_t)g < rt->gpu_count;
    lane->kind = gpu_lane               ? TANDEM_LANE_KIND_GPU_QUEUE
                 : l == TANDEM_LANE_NPU ? TANDEM_LANE_KIND_NPU_THREAD
                                        : TANDEM_LANE_KIND_UNUSED;
    if (l < TANDEM_LANE_COUNT)
      snprintf(lane->name, sizeof lane->name, "%s", tandem_lane_name((tandem_lane_t)l));
    else if (gpu_lane)
      snprintf(lane->name, sizeof lane->name, "gpu%d.%s", g,
               tandem_lane_name(tandem__lane_local(l)));
    atomic_init(&lane->submissions, 0);
    atomic_init(&lane->copied_bytes, 0);
  }
}

bool tandem__lane_host_signalled_locked(const tandem_runtime_t *rt, int l) {
  if (l == TANDEM_LANE_NPU) return true;
  return tandem__lane_is_user(l) && rt->lanes[l].kind == TANDEM_LANE_KIND_SESSION;
}

tandem_status_t tandem__lane_take_locked(tandem_runtime_t *rt, tandem__gpu_t *gpu,
                                         tandem_lane_kind_t kind, const char *name, void *imported,
                                         tandem_lane_t *out_lane) {
  assert(kind == TANDEM_LANE_KIND_EXTERNAL || kind == TANDEM_LANE_KIND_SESSION);
  int l = TANDEM_LANE_COUNT;
  while (l < TANDEM__USER_LANE_END && rt->lanes[l].kind != TANDEM_LANE_KIND_UNUSED) l++;
  if (l == TANDEM__USER_LANE_END)
    return TANDEM_FAIL(TANDEM_ERROR_BUSY,
                       "all %d user lanes of the runtime are taken (TANDEM_MAX_LANES %d less "
                       "the %d built-in lanes); destroy a session or an imported timeline's "
                       "lane first",
                       TANDEM__USER_LANE_END - TANDEM_LANE_COUNT, TANDEM__USER_LANE_END,
                       TANDEM_LANE_COUNT);
  TANDEM_RETURN_IF_ERROR(gpu->vtable->lane.bind(gpu, (tandem_lane_t)l, imported));
  tandem__lane_t *lane = &rt->lanes[l];
  lane->kind = kind;
  lane->closing = false;
  memset(lane->waited_by, 0, sizeof lane->waited_by);
  lane->failed_value = 0;
  atomic_store(&lane->submissions, 0);
  atomic_store(&lane->copied_bytes, 0);
  if (name && name[0]) {
    snprintf(lane->name, sizeof lane->name, "%s", name);
  } else {
    snprintf(lane->name, sizeof lane->name, "%s %d",
             kind == TANDEM_LANE_KIND_EXTERNAL ? "external" : "session", l);
  }
  *out_lane = (tandem_lane_t)l;
  return TANDEM_OK;
}

void tandem__lane_give_back(tandem_runtime_t *rt, tandem_lane_t l) {
  assert(tandem__lane_is_user(l));
  uint64_t values[TANDEM__MAX_LANES] = {0};
  pthread_mutex_lock(&rt->mutex);
  tandem__lane_t *lane = &rt->lanes[l];
  assert(lane->kind != TANDEM_LANE_KIND_UNUSED && !lane->closing);
  lane->closing = true; /* no submission may add a wait on it from now */
  memcpy(values, lane->waited_by, sizeof lane->waited_by);
  pthread_mutex_unlock(&rt->mutex);
  /* Every queued wait on the timeline sits in work that signals one of these
   * values: once they are reached, nothing waits on it any more. A lost
   * runtime's wait returns at once, yet loss does not mean the queues
   * stopped (lost.c): work that waits on the timeline may still run, so the
   * queues are idled before the timeline goes (as before an executable's
   * command buffers are freed). */
  (void)tandem__runtime_wait(rt, values, TANDEM__WAIT_FOREVER);
  tandem__runtime_drain_if_lost(rt);
  pthread_mutex_lock(&rt->mutex);
  tandem__gpu_t *gpu = tandem__gpu_at(rt, 0); /* user lanes are GPU 0's */
  gpu->vtable->lane.unbind(gpu, l);
  lane->kind = TANDEM_LANE_KIND_UNUSED;
  lane->closing = false;
  lane->name[0] = '\0';
  pthread_mutex_unlock(&rt->mutex);
}

void tandem__lane_note_waits_locked(tandem_runtime_t *rt, const tandem__slot_t *slot) {
  const tandem__plan_t *plan = &slot->exec->plan;
  for (uint32_t r = 0; r < plan->region_count; r++) {
    const tandem__region_submit_t *sub = &slot->submits[r];
    tandem_lane_t own = plan->regions[r].lane;
    for (int l = TANDEM_LANE_COUNT; l < TANDEM__USER_LANE_END; l++) {
      if (!sub->wait_values[l]) continue;
      /* Only live user lanes are waited on: submit checks external lanes,
       * and session records exist only while their lane does. */
      assert(rt->lanes[l].kind == TANDEM_LANE_KIND_EXTERNAL ||
             rt->lanes[l].kind == TANDEM_LANE_KIND_SESSION);
      if (sub->signal_value > rt->lanes[l].waited_by[own])
        rt->lanes[l].waited_by[own] = sub->signal_value;
    }
  }
}

bool tandem__lane_failed_waits_locked(const tandem_runtime_t *rt, const tandem__slot_t *slot) {
  const tandem__plan_t *plan = &slot->exec->plan;
  for (uint32_t r = 0; r < plan->region_count; r++)
    for (int l = TANDEM_LANE_COUNT; l < TANDEM__USER_LANE_END; l++) {
      uint64_t w = slot->submits[r].wait_values[l];
      if (w && rt->lanes[l].kind == TANDEM_LANE_KIND_SESSION && w == rt->lanes[l].failed_value)
        return true;
    }
  return false;
}

/*------------------------------------------------------------- public --*/

uint32_t tandem_runtime_lane_count(const tandem_runtime_t *runtime) {
  if (!runtime) return 0;
  tandem_runtime_t *rt = (tandem_runtime_t *)runtime;
  uint32_t count = rt->gpu_count > 1
                       ? (uint32_t)tandem__gpu_lane(rt->gpu_count - 1, TANDEM_LANE_DOWNLOAD) + 1
                       : TANDEM_LANE_COUNT;
  pthread_mutex_lock(&rt->mutex);
  for (int l = TANDEM_LANE_COUNT; l < TANDEM__MAX_LANES; l++)
    if (rt->lanes[l].kind != TANDEM_LANE_KIND_UNUSED && (uint32_t)l + 1 > count)
      count = (uint32_t)l + 1;
  pthread_mutex_unlock(&rt->mutex);
  return count;
}

tandem_status_t tandem_runtime_lane_info(tandem_runtime_t *runtime, int lane,
                                         tandem_lane_info_t *user_info) {
  if (!user_info) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_info is NULL");
  TANDEM_RETURN_IF_ERROR(
      tandem__struct_out_check(user_info, TANDEM__OLDEST_LANE_INFO, "tandem_lane_info_t"));
  tandem__struct_clear(user_info);
  tandem_lane_info_t known;
  tandem_lane_info_init(&known);
  tandem_lane_info_t *out_info = &known;
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  if (lane < 0 || lane >= TANDEM__MAX_LANES)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "lane %d: lane ids are 0..%d (TANDEM_MAX_LANE_IDS - 1)", lane,
                       TANDEM__MAX_LANES - 1);
  tandem_runtime_t *rt = runtime;
  /* The lane's timeline: its GPU's for a GPU lane, GPU 0's for a user lane. */
  int owner = tandem__lane_gpu(lane);
  uint32_t g = owner < 0 ? 0 : (uint32_t)owner;
  tandem__gpu_t *gpu = g < rt->gpu_count ? tandem__gpu_at(rt, g) : NULL;
  uint64_t values[TANDEM__MAX_LANES] = {0};
  /* Outside the tracker lock, as every timeline read: a query takes only
   * the backend's own. A failed query leaves 0: the counters still hold. */
  if (gpu && gpu->vtable->lane.query(gpu, values) != TANDEM_OK) memset(values, 0, sizeof values);
  pthread_mutex_lock(&rt->mutex);
  const tandem__lane_t *l = &rt->lanes[lane];
  out_info->kind = l->kind;
  snprintf(out_info->name, sizeof out_info->name, "%s", l->name);
  if (l->kind == TANDEM_LANE_KIND_GPU_QUEUE || l->kind == TANDEM_LANE_KIND_EXTERNAL) {
    out_info->value = values[tandem__lane_in_gpu(g, lane)];
  } else if (l->kind == TANDEM_LANE_KIND_SESSION) {
    out_info->value = rt->lane_done_value[lane];
  }
  if (l->kind != TANDEM_LANE_KIND_UNUSED) {
    out_info->submissions = atomic_load(&l->submissions);
    out_info->copied_bytes = atomic_load(&l->copied_bytes);
  }
  pthread_mutex_unlock(&rt->mutex);
  if (out_info->kind == TANDEM_LANE_KIND_NPU_THREAD) out_info->value = tandem__npu_lane_done(rt);
  tandem__struct_out(user_info, out_info, sizeof *out_info);
  return TANDEM_OK;
}

const char *tandem_lane_name(tandem_lane_t lane) {
  switch (lane) {
    case TANDEM_LANE_UPLOAD: return "upload";
    case TANDEM_LANE_COMPUTE: return "compute";
    case TANDEM_LANE_DOWNLOAD: return "download";
    case TANDEM_LANE_NPU: return "npu";
    default: return "unknown";
  }
}
