/* SPDX-License-Identifier: MIT */
/*
 * check.c — checkers for the invariants I1–I6 written in core/runtime_int.h.
 *
 * Each checker walks the state an invariant speaks about and returns false
 * (after printing which invariant broke, and where) when it does not hold.
 * They are called only inside assert(), so release builds (NDEBUG) drop both
 * the calls and their cost; the Debug preset and the ASan build keep them.
 * They never change state and never allocate. docs/design.md lists which
 * checker enforces which invariant and where it is called.
 */
#include <stdio.h>

#include "core/check.h"
#include "core/exec_int.h"
#include "core/handle.h"
#include "core/runtime_int.h"

/* Set on the NPU lane thread (I6). */
static _Thread_local bool tandem__on_npu_lane;

static bool tandem__broken(const char *invariant, const char *what, unsigned long long a,
                           unsigned long long b) {
  fprintf(stderr, "tandem: invariant %s broken: %s (%llu, %llu)\n", invariant, what, a, b);
  return false;
}

void tandem__check_mark_npu_lane_thread(void) { tandem__on_npu_lane = true; }

bool tandem__check_not_npu_lane(void) {
  if (tandem__on_npu_lane)
    return tandem__broken("I6", "the NPU lane thread holds runtime->mutex", 0, 0);
  return true;
}

static bool tandem__slot_listed(const tandem_runtime_t *rt, const tandem__slot_t *slot) {
  for (const tandem__slot_t *s = rt->in_flight; s; s = s->next_in_flight)
    if (s == slot) return true;
  return false;
}

static bool tandem__record_linked(const tandem__record_t *rec) {
  for (const tandem__record_t *r = rec->access.buffer->records; r; r = r->next)
    if (r == rec) return true;
  return false;
}

bool tandem__runtime_check_locked(const tandem_runtime_t *rt) {
  if (!tandem__check_not_npu_lane()) return false;
  /* I4 (runtime side): the FIFO holds exactly the IN_FLIGHT slots it counts. */
  uint32_t n = 0;
  const tandem__slot_t *last = NULL;
  uint64_t prev[TANDEM__MAX_LANES] = {0};
  for (const tandem__slot_t *s = rt->in_flight; s; s = s->next_in_flight) {
    n++;
    last = s;
    if (s->state != TANDEM__SLOT_IN_FLIGHT)
      return tandem__broken("I4", "a slot in the in-flight list is not IN_FLIGHT (slot, state)",
                            s->index, s->state);
    /* I2: values are handed out in increasing order and the FIFO is in
     * submission order, so each lane's values increase along it. */
    const tandem__plan_t *plan = &s->exec->plan;
    uint64_t region_last[TANDEM__MAX_LANES] = {0};
    for (uint32_t r = 0; r < plan->region_count; r++) {
      tandem_lane_t l = plan->regions[r].lane;
      uint64_t v = s->submits[r].signal_value;
      if (v <= region_last[l] || v <= prev[l] || v > rt->lane_next_value[l])
        return tandem__broken("I2", "a region's signal value is out of order (value, lane)", v, l);
      region_last[l] = v;
    }
    for (int l = 0; l < TANDEM__MAX_LANES; l++) {
      if (s->lane_values[l] != region_last[l])
        return tandem__broken("I2",
                              "a slot's final lane value is not its last region's (lane, value)",
                              (unsigned)l, s->lane_values[l]);
      if (s->lane_values[l]) prev[l] = s->lane_values[l];
    }
    /* I3, one way: every record of an in-flight slot is in its buffer's list. */
    for (uint32_t i = 0; i < s->exec->access_count; i++) {
      const tandem__record_t *rec = &s->records[i];
      if (rec->slot != s || !tandem__record_linked(rec))
        return tandem__broken("I3", "a record of an in-flight slot is not linked (slot, access)",
                              s->index, i);
      /* I3, the other way: whatever shares that list belongs to an in-flight slot. */
      for (const tandem__record_t *r = rec->access.buffer->records; r; r = r->next) {
        if (!r->slot) { /* a native session's open stage (session.c) */
          if (!tandem__lane_is_user(r->lane) ||
              rt->lanes[r->lane].kind != TANDEM_LANE_KIND_SESSION ||
              r->value <= rt->lane_done_value[r->lane])
            return tandem__broken("I3",
                                  "a buffer lists a session record of no open stage "
                                  "(lane, value)",
                                  (uint64_t)r->lane, r->value);
          continue;
        }
        if (r->slot->state != TANDEM__SLOT_IN_FLIGHT || !tandem__slot_listed(rt, r->slot))
          return tandem__broken("I3",
                                "a buffer lists a record of a slot not in flight (slot, state)",
                                r->slot->index, r->slot->state);
      }
    }
  }
  if (n != rt->in_flight_count || last != rt->in_flight_tail)
    return tandem__broken("I4", "in_flight_count or tail disagree with the list (count, listed)",
                          rt->in_flight_count, n);
  if (n > rt->options.max_submissions)
    return tandem__broken("I4", "more slots in flight than max_submissions", n,
                          rt->options.max_submissions);
  return true;
}

bool tandem__exec_check_locked(const tandem_exec_t *exec) {
  const tandem_runtime_t *rt = exec->runtime;
  for (uint32_t k = 0; k < exec->slot_count; k++) {
    const tandem__slot_t *s = &exec->slots[k];
    bool listed = tandem__slot_listed(rt, s);
    int live = tandem__handle_state(s);
    if (live >= 0 && (live == 1) != s->user_ref)
      return tandem__broken("I4", "a completion handle is live iff the user holds it (live, held)",
                            (uint64_t)live, s->user_ref);
    switch (s->state) {
      case TANDEM__SLOT_FREE:
        if (listed || s->user_ref)
          return tandem__broken("I4", "a FREE slot is in flight or held (listed, held)", listed,
                                s->user_ref);
        break;
      case TANDEM__SLOT_IN_FLIGHT:
        if (!listed)
          return tandem__broken("I4", "an IN_FLIGHT slot is not in the in-flight list (slot)", k,
                                0);
        break;
      case TANDEM__SLOT_DONE:
        if (listed || !s->user_ref)
          return tandem__broken("I4", "a DONE slot is in flight or not held (listed, held)", listed,
                                s->user_ref);
        break;
    }
  }
  return true;
}

bool tandem__exec_check_free(const tandem_exec_t *exec) {
  for (uint32_t k = 0; exec->slots && k < exec->slot_count; k++)
    if (exec->slots[k].state == TANDEM__SLOT_IN_FLIGHT)
      return tandem__broken("I1", "an executable is freed with a slot in flight (slot)", k, 0);
  return true;
}

bool tandem__buffer_check_free(const tandem_buffer_t *buffer) {
  if (atomic_load(&((tandem_buffer_t *)buffer)->refs) != 0)
    return tandem__broken("I1", "a buffer is freed with references",
                          (unsigned long long)atomic_load(&((tandem_buffer_t *)buffer)->refs), 0);
  if (buffer->records)
    return tandem__broken("I1", "a buffer is freed while in-flight work records it (value, lane)",
                          buffer->records->value, buffer->records->lane);
  if (buffer->map_count)
    return tandem__broken("I1", "a buffer is freed with live host maps", buffer->map_count, 0);
  return true;
}

bool tandem__npu_lane_check_signal(const tandem__npu_lane_t *lane, uint64_t value) {
  /* I5: NPU values are handed out one per NPU region, in submission order,
   * and jobs are queued in that order: each signal is the next value. Only
   * this thread writes |done|, so reading it here needs no lock. */
  if (value != lane->done + 1)
    return tandem__broken("I5", "the NPU lane signals out of order (value, last signalled)", value,
                          lane->done);
  return true;
}
