/* SPDX-License-Identifier: MIT */
/*
 * tracker.c — the runtime-wide record of in-flight accesses.
 *
 * Every submitted access (buffer, byte range, read/write, lane, value) is
 * linked into its buffer's list until its submission retires (I3). New work
 * and host maps look up the records that overlap them with a conflicting
 * access and wait for exactly those values: two submissions touching disjoint
 * ranges of one buffer never wait for each other. Retirement is lazy: whoever
 * holds the tracker lock next polls the timelines. It also keeps each
 * buffer's poisoned byte ranges (what failed work wrote). Nothing here
 * allocates.
 */
#include <assert.h>
#include <string.h>

#include "core/access.h"
#include "core/buffer_int.h"
#include "core/check.h"
#include "core/exec_int.h"
#include "core/lane.h"
#include "core/lost.h"
#include "core/npu_lane.h"
#include "core/runtime_int.h"
#include "core/slot.h"
#include "core/trace_events.h"
#include "core/tracker.h"
#include "core/wait.h"

void tandem__tracker_link_locked(tandem__record_t *record) {
  tandem_buffer_t *buffer = record->access.buffer;
  record->prev = NULL;
  record->next = buffer->records;
  if (buffer->records) buffer->records->prev = record;
  buffer->records = record;
}

void tandem__tracker_unlink_locked(tandem__record_t *record) {
  if (record->prev) {
    record->prev->next = record->next;
  } else {
    record->access.buffer->records = record->next;
  }
  if (record->next) record->next->prev = record->prev;
  record->next = record->prev = NULL;
}

/*--------------------------------------------------------------------------*/
/* Poisoned ranges. A buffer keeps at most TANDEM__POISON_RANGES of them
 * apart; past that the two closest merge into one that spans the gap, so
 * the bytes between them read as poisoned too until they are rewritten:
 * conservative, never a failed byte passed on as good. */

/* Merges the two ranges with the smallest gap between them. */
static void tandem__poison_merge_closest(tandem_buffer_t *b) {
  uint32_t best = 0;
  uint64_t best_gap = UINT64_MAX;
  for (uint32_t i = 0; i + 1 < b->poison_count; i++) {
    uint64_t gap = b->poison[i + 1].offset - (b->poison[i].offset + b->poison[i].length);
    if (gap < best_gap) {
      best_gap = gap;
      best = i;
    }
  }
  tandem__poison_t *l = &b->poison[best], *r = &b->poison[best + 1];
  l->length = r->offset + r->length - l->offset;
  if (r->code == TANDEM_ERROR_DEVICE_LOST) l->code = TANDEM_ERROR_DEVICE_LOST;
  memmove(r, r + 1, (b->poison_count - best - 2) * sizeof *r);
  b->poison_count--;
}

void tandem__poison_clear_locked(tandem_buffer_t *b, uint64_t offset, uint64_t length) {
  uint64_t end = offset + length;
  for (uint32_t i = 0; i < b->poison_count;) {
    tandem__poison_t *p = &b->poison[i];
    uint64_t p_end = p->offset + p->length;
    if (p_end <= offset || p->offset >= end) {
      i++;
    } else if (p->offset < offset && p_end > end) { /* the middle: split in two */
      memmove(p + 2, p + 1, (b->poison_count - i - 1) * sizeof *p);
      p[1] = *p;
      p[1].offset = end;
      p[1].length = p_end - end;
      p->length = offset - p->offset;
      b->poison_count++;
      i += 2;
    } else if (p->offset < offset) {
      p->length = offset - p->offset;
      i++;
    } else if (p_end > end) {
      p->offset = end;
      p->length = p_end - end;
      i++;
    } else { /* wholly rewritten */
      memmove(p, p + 1, (b->poison_count - i - 1) * sizeof *p);
      b->poison_count--;
    }
  }
  if (b->poison_count > TANDEM__POISON_RANGES) tandem__poison_merge_closest(b);
}

void tandem__poison_mark_locked(tandem_buffer_t *b, uint64_t offset, uint64_t length,
                                tandem_status_t cause) {
  tandem__poison_clear_locked(b, offset, length); /* leaves a hole exactly there */
  uint32_t i = 0;
  while (i < b->poison_count && b->poison[i].offset < offset) i++;
  memmove(&b->poison[i + 1], &b->poison[i], (b->poison_count - i) * sizeof b->poison[0]);
  b->poison[i] =
      (tandem__poison_t){offset, length,
                         cause == TANDEM_ERROR_DEVICE_LOST ? TANDEM_ERROR_DEVICE_LOST
                                                           : TANDEM_ERROR_FAILED_DEPENDENCY,
                         cause};
  b->poison_count++;
  if (b->poison_count > TANDEM__POISON_RANGES) tandem__poison_merge_closest(b);
}

const tandem__poison_t *tandem__poison_find_locked(const tandem_buffer_t *b, uint64_t offset,
                                                   uint64_t length) {
  for (uint32_t i = 0; i < b->poison_count; i++)
    if (tandem__ranges_overlap(b->poison[i].offset, b->poison[i].length, offset, length))
      return &b->poison[i];
  return NULL;
}

/* True when in-flight work rewrites byte |at| of |b|; sets *end to the end
 * of that write. Only WRITE counts: it promises every byte is overwritten
 * and none read (the shader's writeonly is checked at load); READ_WRITE
 * would read the poisoned bytes. A native session's stage (no slot) does
 * not count: what it writes is the client's, and tandem cannot tell whether
 * it rewrites every byte. Nor does a slot already cancelled or set to fail. */
static bool tandem__rewritten_in_flight_locked(const tandem_buffer_t *b, uint64_t at,
                                               uint64_t *end) {
  for (const tandem__record_t *r = b->records; r; r = r->next)
    if (r->access.access == TANDEM_ACCESS_WRITE && r->access.offset <= at &&
        r->access.offset + r->access.length > at && r->slot &&
        !atomic_load(&r->slot->cancel_requested) && !r->slot->inject_failure) {
      *end = r->access.offset + r->access.length;
      return true;
    }
  return false;
}

const tandem__poison_t *tandem__poison_exposed_locked(const tandem__access_t *a,
                                                      tandem__written_before_fn before,
                                                      const void *ctx) {
  const tandem_buffer_t *b = a->buffer;
  if (!(a->access & TANDEM_ACCESS_READ)) return NULL;
  for (uint32_t i = 0; i < b->poison_count; i++) {
    const tandem__poison_t *p = &b->poison[i];
    if (!tandem__ranges_overlap(p->offset, p->length, a->offset, a->length)) continue;
    uint64_t at = p->offset > a->offset ? p->offset : a->offset;
    uint64_t hi = p->offset + p->length < a->offset + a->length ? p->offset + p->length
                                                                : a->offset + a->length;
    /* Walk the poisoned bytes the access reads; each write found moves
     * |at| past its range, so the walk ends (every step advances). */
    while (at < hi) {
      uint64_t end = 0;
      if (!(before && before(ctx, b, at, &end)) && !tandem__rewritten_in_flight_locked(b, at, &end))
        return p; /* byte |at| is read as the failed work left it */
      assert(end > at);
      at = end;
    }
  }
  return NULL;
}

/*--------------------------------------------------------------------------*/

static bool tandem__slot_passed(const tandem_runtime_t *rt, const tandem__slot_t *slot) {
  for (int l = 0; l < TANDEM__MAX_LANES; l++) /* user lanes' entries are 0 */
    if (slot->lane_values[l] > rt->lane_done_value[l]) return false;
  return true;
}

/* True when every submission |slot| depends on has retired. */
static bool tandem__slot_deps_retired(const tandem__slot_t *slot) {
  for (uint32_t d = 0; d < slot->dep_count; d++) {
    const tandem__slot_t *on = slot->deps[d].slot;
    if (on->generation == slot->deps[d].generation && on->state == TANDEM__SLOT_IN_FLIGHT)
      return false;
  }
  return true;
}

/* The result a finished slot ends with; the first cause wins. */
static tandem_status_t tandem__slot_outcome(const tandem_runtime_t *rt,
                                            const tandem__slot_t *slot) {
  if (rt->lost != TANDEM_OK) return rt->lost;
  if (slot->inject_failure) return TANDEM_ERROR_INTERNAL;
  tandem_status_t npu = (tandem_status_t)atomic_load(&slot->npu_result);
  if (npu != TANDEM_OK) return npu;
  if (atomic_load(&slot->cancel_requested)) return TANDEM_ERROR_CANCELLED;
  if (atomic_load(&slot->dep_failed)) return TANDEM_ERROR_FAILED_DEPENDENCY;
  return TANDEM_OK;
}

/* Retires |slot| (finished: see tandem__tracker_advance_locked). A slot
 * never retires before a dependency, and every in-flight write of bytes a
 * later submission touches is its dependency (even a write whose lane value
 * had passed), so the writers of a byte retire in submission order: the last
 * one decides whether it is poisoned, however completions are waited or
 * polled. A failure is passed on to exactly the in-flight submissions that
 * read what this one wrote (or were submitted after it). */
static void tandem__slot_retire_locked(tandem_runtime_t *rt, tandem__slot_t *slot,
                                       tandem__slot_t *prev) {
  tandem_exec_t *exec = slot->exec;
  slot->result = tandem__slot_outcome(rt, slot);
  slot->host_observed_ns = tandem__now_ns();
  for (uint32_t i = 0; i < exec->access_count; i++) {
    tandem__record_t *rec = &slot->records[i];
    tandem_buffer_t *b = rec->access.buffer;
    /* Per submission: a failed one poisons every range it writes, even
     * those its regions that finished had written (the whole submission's
     * result is what its readers are told); one that succeeded cleans them. */
    if (rec->access.access & TANDEM_ACCESS_WRITE) {
      if (slot->result != TANDEM_OK) {
        tandem__poison_mark_locked(b, rec->access.offset, rec->access.length, slot->result);
      } else {
        tandem__poison_clear_locked(b, rec->access.offset, rec->access.length);
      }
    }
    tandem__tracker_unlink_locked(rec);
  }
  if (slot->result != TANDEM_OK) {
    for (tandem__slot_t *t = rt->in_flight; t; t = t->next_in_flight)
      for (uint32_t d = 0; d < t->dep_count; d++)
        if (t->deps[d].slot == slot && t->deps[d].generation == slot->generation &&
            t->deps[d].fails_with)
          atomic_store(&t->dep_failed, true);
  }
  if (rt->trace) tandem__trace_slot_locked(rt, slot);
  tandem__slot_leave_flight_locked(rt, slot, prev);
  atomic_fetch_add(&rt->stats.completions, 1);
}

void tandem__tracker_poll_locked(tandem_runtime_t *rt) {
  if (!rt->in_flight) return;
  uint64_t values[TANDEM__MAX_LANES];
  tandem_status_t s = tandem__runtime_query_lanes(rt, values);
  tandem__tracker_advance_locked(rt, values, s);
}

void tandem__tracker_advance_locked(tandem_runtime_t *rt, uint64_t values[TANDEM__MAX_LANES],
                                    tandem_status_t s) {
  if (s == TANDEM_OK) s = tandem__runtime_fold_loss_locked(rt);
  if (s != TANDEM_OK) {
    /* A lost device finishes nothing normally: fail every slot, release all. */
    tandem__runtime_set_lost_locked(rt, s);
    for (int l = 0; l < TANDEM__MAX_LANES; l++)
      if (!tandem__lane_is_user(l)) values[l] = UINT64_MAX;
  }
  /* Built-in lanes only: user lanes' values here are waits that were reached
   * (a session's are recorded by the session itself). */
  for (int l = 0; l < TANDEM__MAX_LANES; l++)
    if (!tandem__lane_is_user(l) && values[l] > rt->lane_done_value[l])
      rt->lane_done_value[l] = values[l];
  /* Retire in submission order, each slot once its values were reached and
   * every submission it depends on has retired: dependencies were submitted
   * earlier, so they retire first in this same pass when they can, and hand
   * on their failure. A slot whose own values were reached but a dependency's
   * were not stays in flight (its dependency may still fail: the dependent
   * waited for one of its regions, not all). */
  tandem__slot_t *prev = NULL, *slot = rt->in_flight;
  while (slot) {
    tandem__slot_t *next = slot->next_in_flight;
    if (tandem__slot_passed(rt, slot) && tandem__slot_deps_retired(slot)) {
      tandem__slot_retire_locked(rt, slot, prev); /* leaves the FIFO: |prev| stays */
    } else {
      prev = slot;
    }
    slot = next;
  }
  assert(tandem__runtime_check_locked(rt));
}

bool tandem__tracker_conflicts_locked(tandem_runtime_t *rt, const tandem__access_t *access,
                                      uint64_t waits[TANDEM__MAX_LANES],
                                      tandem__slot_t *dependent) {
  assert(tandem__check_not_npu_lane());
  bool found = false;
  for (const tandem__record_t *r = access->buffer->records; r; r = r->next) {
    bool passed = r->value <= rt->lane_done_value[r->lane];
    /* A passed write of a slot still in flight (its record is linked, I3):
     * the slot may still fail, poisoning these bytes at its retirement. */
    if (passed && !(r->slot && (r->access.access & TANDEM_ACCESS_WRITE))) continue;
    if (!tandem__accesses_conflict(r->access.access, access->access)) continue;
    if (!tandem__ranges_overlap(r->access.offset, r->access.length, access->offset, access->length))
      continue;
    if (!passed && r->value > waits[r->lane]) waits[r->lane] = r->value;
    found = true;
    /* A session stage's record (no slot): waiting for its value is all; a
     * failed stage fails its dependents when it ends (session.c). */
    if (!r->slot) continue;
    if (dependent)
      tandem__slot_add_dep_locked(dependent, r->slot,
                                  (r->access.access & TANDEM_ACCESS_WRITE) &&
                                      (access->access & TANDEM_ACCESS_READ));
    /* A host wait covers what the slot waits for to retire (its
     * dependencies) and the host signals its work depends on: its cover. */
    if (!dependent)
      for (int l = 0; l < TANDEM__MAX_LANES; l++)
        if (r->slot->cover[l] > waits[l]) waits[l] = r->slot->cover[l];
  }
  return found;
}

void tandem__slot_add_dep_locked(tandem__slot_t *slot, tandem__slot_t *on, bool fails_with) {
  for (uint32_t d = 0; d < slot->dep_count; d++)
    if (slot->deps[d].slot == on) {
      slot->deps[d].fails_with |= fails_with;
      return;
    }
  /* At most max_submissions slots are in flight, the capacity of deps. */
  slot->deps[slot->dep_count++] = (tandem__dep_t){on, on->generation, fails_with};
}

void tandem__slot_set_cover_locked(tandem_runtime_t *rt, tandem__slot_t *slot) {
  const tandem__plan_t *plan = &slot->exec->plan;
  uint64_t *cover = slot->cover;
  memcpy(cover, slot->lane_values, sizeof slot->cover);
  bool on_queue[TANDEM_MAX_GPUS][TANDEM_LANE_COUNT_GPU] = {{false}};
  bool host[TANDEM__MAX_LANES];
  for (int l = TANDEM_LANE_NPU; l < TANDEM__MAX_LANES; l++)
    host[l] = tandem__lane_host_signalled_locked(rt, l);
  for (uint32_t r = 0; r < plan->region_count; r++) {
    for (int l = TANDEM_LANE_NPU; l < TANDEM__MAX_LANES; l++) {
      uint64_t w = slot->submits[r].wait_values[l];
      if (host[l] && w > cover[l]) cover[l] = w;
    }
    tandem_lane_t l = plan->regions[r].lane;
    int g = tandem__lane_gpu(l);
    if (g >= 0)
      on_queue[g][tandem__gpu_at(rt, (uint32_t)g)->lane_queue[tandem__lane_local(l)]] = true;
  }
  /* Dependencies were found under this lock, just now: all in flight. */
  for (uint32_t d = 0; d < slot->dep_count; d++) {
    assert(slot->deps[d].slot->generation == slot->deps[d].generation);
    for (int l = 0; l < TANDEM__MAX_LANES; l++)
      if (slot->deps[d].slot->cover[l] > cover[l]) cover[l] = slot->deps[d].slot->cover[l];
  }
  for (uint32_t g = 0; g < rt->gpu_count; g++)
    for (int q = 0; q < TANDEM_LANE_COUNT_GPU; q++) {
      if (!on_queue[g][q]) continue;
      for (int l = TANDEM_LANE_NPU; l < TANDEM__MAX_LANES; l++)
        if (rt->queue_horizon[g][q][l] > cover[l]) cover[l] = rt->queue_horizon[g][q][l];
    }
  for (uint32_t g = 0; g < rt->gpu_count; g++)
    for (int q = 0; q < TANDEM_LANE_COUNT_GPU; q++) {
      if (!on_queue[g][q]) continue;
      for (int l = TANDEM_LANE_NPU; l < TANDEM__MAX_LANES; l++)
        rt->queue_horizon[g][q][l] = cover[l];
    }
}
