/* SPDX-License-Identifier: MIT */
/*
 * session.c — native sessions: a long-lived stage for clients that do their
 * own work synchronously on the calling thread (their own Vulkan submits on
 * tandem's device, host code, another API) and must stay ordered against
 * tandem's graphs.
 *
 * A session is a user lane (lane.c) whose timeline tandem signals from the
 * host. tandem_session_begin waits on the host for earlier conflicting
 * tracked work (graphs, other sessions' stages), then records the stage's
 * accesses in the tracker as in flight on the session's lane at the stage's
 * value: later conflicting submissions get a GPU wait on that value and
 * cannot overtake the stage, host maps and other sessions wait for it.
 * tandem_session_end signals the value. A stage that ends with a failure
 * quarantines the session (later begins fail), poisons what it wrote, and
 * fails every submission that waited for it with FAILED_DEPENDENCY.
 *
 * Stage records have no slot (tandem__record_t.slot == NULL); they are linked
 * exactly while the stage is open, i.e. while its value is above the lane's
 * done value (I3, checked in check.c). Locking: everything here is guarded by
 * runtime->mutex except the signal itself, made without it as the NPU lane
 * does; one session's calls must not overlap (its owner's thread).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buffer.h"
#include "core/buffer_int.h"
#include "core/check.h"
#include "core/exec_int.h"
#include "core/graph_int.h"
#include "core/lane.h"
#include "core/lost.h"
#include "core/map.h"
#include "core/runtime.h"
#include "core/runtime_int.h"
#include "core/tracker.h"
#include "core/wait.h"

struct tandem_session {
  tandem_runtime_t *runtime; /* a reference: the lane and device outlive the session */
  tandem_lane_t lane;        /* its user lane, for life */
  tandem__record_t *records; /* [mutex] the open stage's accesses, linked while open */
  uint32_t record_count, record_capacity;
  bool open;                  /* [mutex] a stage is open */
  uint64_t value;             /* [mutex] the open (or last) stage's value on |lane| */
  tandem_status_t quarantine; /* [mutex] how the failed stage ended, or OK */
};

tandem_status_t tandem_session_create(tandem_runtime_t *runtime, const char *name,
                                      tandem_session_t **out_session) {
  if (!out_session) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_session is NULL");
  *out_session = NULL;
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(runtime, &gpu));
  tandem_session_t *session = calloc(1, sizeof *session);
  if (!session) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a session");
  pthread_mutex_lock(&runtime->mutex);
  tandem_status_t s =
      tandem__lane_take_locked(runtime, gpu, TANDEM_LANE_KIND_SESSION, name, NULL, &session->lane);
  pthread_mutex_unlock(&runtime->mutex);
  if (s != TANDEM_OK) {
    free(session);
    return s;
  }
  session->runtime = runtime;
  tandem__runtime_retain(runtime);
  *out_session = session;
  return TANDEM_OK;
}

tandem_lane_t tandem_session_lane(const tandem_session_t *session) {
  return session ? session->lane : TANDEM_LANE_AUTO;
}

/* Checks the stage's accesses and makes room for their records. */
static tandem_status_t tandem__session_prepare(tandem_session_t *session,
                                               const tandem_session_access_t *accesses,
                                               uint32_t count) {
  tandem_runtime_t *rt = session->runtime;
  if (count && !accesses)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "accesses is NULL with count %u", count);
  for (uint32_t i = 0; i < count; i++) {
    char what[40];
    snprintf(what, sizeof what, "accesses[%u]", i);
    TANDEM_RETURN_IF_ERROR(tandem__view_check(rt, accesses[i].view, what));
    if (accesses[i].view.buffer->gpu != 0)
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "%s: the buffer is on GPU %u; a native session runs on GPU 0's device",
                         what, accesses[i].view.buffer->gpu);
    tandem_access_t a = accesses[i].access;
    if (a != TANDEM_ACCESS_READ && a != TANDEM_ACCESS_WRITE && a != TANDEM_ACCESS_READ_WRITE)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "accesses[%u]: access %d is not TANDEM_ACCESS_READ, _WRITE or "
                         "_READ_WRITE",
                         i, (int)a);
  }
  if (count > session->record_capacity) {
    tandem__record_t *grown = realloc(session->records, count * sizeof *grown);
    if (!grown)
      return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating records for %u session accesses",
                         count);
    session->records = grown;
    session->record_capacity = count;
  }
  return TANDEM_OK;
}

/* Why a stage cannot begin now (quarantine, an open stage, a lost runtime,
 * a live host map, a poisoned input), or OK. The stage's accesses are in
 * session->records[0..count). Needs runtime->mutex. */
static tandem_status_t tandem__session_refusal_locked(const tandem_session_t *session,
                                                      uint32_t count) {
  const tandem_runtime_t *rt = session->runtime;
  const tandem__lane_t *lane = &rt->lanes[session->lane];
  if (session->quarantine != TANDEM_OK)
    return TANDEM_FAIL(TANDEM_ERROR_FAILED_DEPENDENCY,
                       "session '%s' is quarantined: a stage of it ended with %s; destroy it "
                       "and create a new session",
                       lane->name, tandem_status_name(session->quarantine));
  if (session->open)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "session '%s' already has a stage open; end it (tandem_session_end) "
                       "before beginning another",
                       lane->name);
  if (rt->lost != TANDEM_OK)
    return TANDEM_FAIL(rt->lost, "the runtime's GPU failed earlier (%s); no stage can begin",
                       tandem_status_name(rt->lost));
  for (uint32_t i = 0; i < count; i++) {
    const tandem__access_t *a = &session->records[i].access;
    TANDEM_RETURN_IF_ERROR(tandem__maps_check_locked(a));
    /* The submissions' rule with nothing written before: a stage's accesses
     * have no order among themselves. An in-flight rewrite counts: this
     * loop runs again after the stage waits for it, by then retired. */
    const tandem__poison_t *p = tandem__poison_exposed_locked(a, NULL, NULL);
    if (p)
      return TANDEM_FAIL(TANDEM_ERROR_FAILED_DEPENDENCY,
                         "accesses[%u]: bytes %llu..%llu of the buffer were last written by work "
                         "that failed (%s); write them again first, or read other bytes",
                         i, (unsigned long long)p->offset,
                         (unsigned long long)(p->offset + p->length), tandem_status_name(p->cause));
  }
  return TANDEM_OK;
}

tandem_status_t tandem_session_begin(tandem_session_t *session,
                                     const tandem_session_access_t *accesses, uint32_t count,
                                     uint64_t timeout_ns) {
  if (!session) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "session is NULL");
  tandem_runtime_t *rt = session->runtime;
  pthread_mutex_lock(&rt->mutex);
  bool open = session->open;
  pthread_mutex_unlock(&rt->mutex);
  if (open) /* its records are linked: they must not be touched */
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "the session already has a stage open; end it (tandem_session_end) "
                       "before beginning another");
  /* No stage open: the records array is the owner's thread's alone. */
  TANDEM_RETURN_IF_ERROR(tandem__session_prepare(session, accesses, count));
  for (uint32_t i = 0; i < count; i++)
    session->records[i].access =
        (tandem__access_t){accesses[i].view.buffer, accesses[i].view.offset,
                           accesses[i].view.length, accesses[i].access};
  uint64_t start = tandem__now_ns();
  /* 0: no deadline (also when start + timeout would not fit). */
  uint64_t deadline = timeout_ns > UINT64_MAX - start ? 0 : start + timeout_ns;
  pthread_mutex_lock(&rt->mutex);
  tandem_status_t s;
  for (;;) {
    /* Refusals first, and again after every wait: the lock was dropped. */
    (void)tandem__runtime_fold_loss_locked(rt);
    s = tandem__session_refusal_locked(session, count);
    if (s != TANDEM_OK) break;
    tandem__tracker_poll_locked(rt);
    uint64_t waits[TANDEM__MAX_LANES] = {0};
    bool found = false;
    for (uint32_t i = 0; i < count; i++)
      found |= tandem__tracker_conflicts_locked(rt, &session->records[i].access, waits, NULL);
    if (!found) break;
    pthread_mutex_unlock(&rt->mutex);
    uint64_t left = TANDEM__WAIT_FOREVER;
    if (deadline) {
      uint64_t now = tandem__now_ns();
      left = deadline > now ? deadline - now : 0;
    }
    s = tandem__runtime_wait(rt, waits, left);
    if (s == TANDEM_ERROR_TIMEOUT)
      return TANDEM_FAIL(s,
                         "earlier work on the session's buffers did not finish within %llu ns; "
                         "no stage was begun",
                         (unsigned long long)timeout_ns);
    if (s != TANDEM_OK) return s;
    pthread_mutex_lock(&rt->mutex);
  }
  if (s == TANDEM_OK) {
    /* Committed: the stage is in flight on the session's lane. */
    session->value = ++rt->lane_next_value[session->lane];
    for (uint32_t i = 0; i < count; i++) {
      tandem__record_t *rec = &session->records[i];
      tandem_buffer_retain(rec->access.buffer); /* I1: a linked record keeps its buffer */
      rec->lane = session->lane;
      rec->value = session->value;
      rec->slot = NULL;
      tandem__tracker_link_locked(rec);
    }
    session->record_count = count;
    session->open = true;
    atomic_fetch_add(&rt->lanes[session->lane].submissions, 1);
    assert(tandem__runtime_check_locked(rt));
  }
  pthread_mutex_unlock(&rt->mutex);
  return s;
}

tandem_status_t tandem_session_end(tandem_session_t *session, tandem_status_t status) {
  if (!session) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "session is NULL");
  tandem_runtime_t *rt = session->runtime;
  tandem__gpu_t *gpu = tandem__gpu_at(rt, 0);
  tandem_lane_t l = session->lane;
  pthread_mutex_lock(&rt->mutex);
  if (!session->open) {
    pthread_mutex_unlock(&rt->mutex);
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "session '%s' has no stage open (tandem_session_begin first)",
                       rt->lanes[l].name);
  }
  uint64_t value = session->value;
  if (status != TANDEM_OK) {
    /* Before the signal, so nothing ordered after the stage can finish
     * first: what it wrote is poisoned, the session quarantined, and every
     * submission waiting for its value fails (those submitted from now on
     * see failed_value at commit). */
    session->quarantine = status;
    rt->lanes[l].failed_value = value;
    for (uint32_t i = 0; i < session->record_count; i++) {
      const tandem__access_t *a = &session->records[i].access;
      if (!(a->access & TANDEM_ACCESS_WRITE)) continue;
      tandem__poison_mark_locked(a->buffer, a->offset, a->length, status);
    }
    for (tandem__slot_t *t = rt->in_flight; t; t = t->next_in_flight)
      if (tandem__lane_failed_waits_locked(rt, t)) atomic_store(&t->dep_failed, true);
  } else {
    for (uint32_t i = 0; i < session->record_count; i++) {
      const tandem__access_t *a = &session->records[i].access;
      if (a->access & TANDEM_ACCESS_WRITE) /* rewritten by a stage that succeeded */
        tandem__poison_clear_locked(a->buffer, a->offset, a->length);
    }
  }
  pthread_mutex_unlock(&rt->mutex);
  /* Without the tracker lock, as the NPU lane signals (I6's reason: a
   * driver call under it may wait for a queue that waits for this value). */
  tandem_status_t s = gpu->vtable->lane.signal(gpu, l, value);
  pthread_mutex_lock(&rt->mutex);
  if (s != TANDEM_OK) tandem__runtime_set_lost_locked(rt, s);
  /* Reached (or lost): the stage is over; host waits for it may return. */
  if (value > rt->lane_done_value[l]) rt->lane_done_value[l] = value;
  for (uint32_t i = 0; i < session->record_count; i++)
    tandem__tracker_unlink_locked(&session->records[i]);
  uint32_t released = session->record_count;
  session->record_count = 0;
  session->open = false;
  pthread_cond_broadcast(&rt->host_lane_signalled);
  assert(tandem__runtime_check_locked(rt));
  pthread_mutex_unlock(&rt->mutex);
  for (uint32_t i = 0; i < released; i++) tandem_buffer_release(session->records[i].access.buffer);
  if (s != TANDEM_OK && s != TANDEM_ERROR_DEVICE_LOST)
    s = tandem__annotate(TANDEM_ERROR_DEVICE_LOST,
                         "signalling the session's timeline failed, so the runtime is lost");
  return s;
}

void tandem_session_destroy(tandem_session_t *session) {
  if (!session) return;
  tandem_runtime_t *rt = session->runtime;
  pthread_mutex_lock(&rt->mutex);
  bool open = session->open;
  pthread_mutex_unlock(&rt->mutex);
  /* An open stage ends as cancelled: whatever waits for it is released, and
   * fails rather than reads what the client may not have finished. */
  char saved[TANDEM__MESSAGE_BYTES];
  tandem__save_error(saved, sizeof saved);
  if (open) (void)tandem_session_end(session, TANDEM_ERROR_CANCELLED);
  tandem__lane_give_back(rt, session->lane);
  tandem__restore_error(saved);
  free(session->records);
  free(session);
  tandem__runtime_release(rt);
}
