/* SPDX-License-Identifier: MIT */
/*
 * slot.c — a slot's life, in one place. A prepared executable has
 * graph_slots slots (prepare.c); each submission runs in one:
 *
 *   FREE ──find_free, enter_flight (submit.c)──▶ IN_FLIGHT
 *   IN_FLIGHT ──leave_flight (tracker.c, retirement)──▶ DONE, or FREE when
 *                the user already gave the completion back
 *   DONE ──give_back (completion.c, tandem_completion_release)──▶ FREE
 *
 * This file is the only writer of a slot's state, user_ref and FIFO link,
 * and of the runtime's in-flight FIFO and count (runtime_int.h), so the
 * transitions above are the only ones there are; each asserts where it
 * starts. An abandoned submission (lost.c) keeps its slot IN_FLIGHT until
 * the lost runtime retires it like any other. Needs runtime->mutex.
 */
#include "core/slot.h"

#include <assert.h>

#include "core/exec_int.h"
#include "core/runtime_int.h"

tandem__slot_t *tandem__slot_find_free_locked(tandem_exec_t *exec) {
  for (uint32_t k = 0; k < exec->slot_count; k++)
    if (exec->slots[k].state == TANDEM__SLOT_FREE) return &exec->slots[k];
  return NULL;
}

void tandem__slot_enter_flight_locked(tandem_runtime_t *rt, tandem__slot_t *slot) {
  assert(slot->state == TANDEM__SLOT_FREE && !slot->next_in_flight);
  assert(rt->in_flight_count < rt->options.max_submissions);
  slot->state = TANDEM__SLOT_IN_FLIGHT;
  slot->user_ref = true;
  slot->result = TANDEM_OK;
  slot->generation++;
  slot->submission = ++rt->submission_count;
  if (rt->in_flight_tail) {
    rt->in_flight_tail->next_in_flight = slot;
  } else {
    rt->in_flight = slot;
  }
  rt->in_flight_tail = slot;
  rt->in_flight_count++;
}

void tandem__slot_leave_flight_locked(tandem_runtime_t *rt, tandem__slot_t *slot,
                                      tandem__slot_t *prev) {
  assert(slot->state == TANDEM__SLOT_IN_FLIGHT && rt->in_flight_count > 0);
  assert(prev ? prev->next_in_flight == slot : rt->in_flight == slot);
  if (prev) {
    prev->next_in_flight = slot->next_in_flight;
  } else {
    rt->in_flight = slot->next_in_flight;
  }
  if (rt->in_flight_tail == slot) rt->in_flight_tail = prev;
  slot->next_in_flight = NULL;
  slot->state = slot->user_ref ? TANDEM__SLOT_DONE : TANDEM__SLOT_FREE;
  rt->in_flight_count--;
}

void tandem__slot_give_back_locked(tandem__slot_t *slot) {
  assert(slot->user_ref && slot->state != TANDEM__SLOT_FREE);
  slot->user_ref = false;
  if (slot->state == TANDEM__SLOT_DONE) slot->state = TANDEM__SLOT_FREE;
}
