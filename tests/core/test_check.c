/* SPDX-License-Identifier: MIT */
/*
 * test_check.c — proves the invariant checkers of core/check.c can fail.
 *
 * The suite calls the checkers inside assert() on every submission and
 * retirement (Debug and ASan builds), where they must always pass; this test
 * builds the runtime, executable, slot, record and buffer objects by hand in
 * a consistent state, checks that every checker accepts it, then breaks one
 * invariant at a time (I1–I6) and checks that the matching checker says so.
 * It links the static library to reach the internal checkers; no GPU. Label
 * "core".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/check.h"
#include "core/exec_int.h"
#include "core/runtime_int.h"
#include "core/tracker.h"

/* One runtime, one executable with one compute region reading and writing
 * one buffer, two slots: slot 0 in flight with value 1, slot 1 free. */
typedef struct world {
  tandem_runtime_t rt;
  tandem_exec_t exec;
  tandem__slot_t slots[2];
  tandem__region_t region;
  tandem__region_submit_t submits[2];
  tandem__record_t records[2];
  tandem__access_t access;
  tandem_buffer_t buffer;
} world_t;

static world_t *world_make(void) {
  world_t *w = calloc(1, sizeof *w);
  assert_non_null(w);
  w->rt.options.max_submissions = 4;
  w->rt.lane_next_value[TANDEM_LANE_COMPUTE] = 1;
  w->buffer.size = 256;
  w->access = (tandem__access_t){&w->buffer, 0, 256, TANDEM_ACCESS_READ_WRITE};
  w->region = (tandem__region_t){.lane = TANDEM_LANE_COMPUTE,
                                 .first = 0,
                                 .count = 1,
                                 .wait_region = {-1, -1, -1, -1}};
  w->exec.runtime = &w->rt;
  w->exec.plan.regions = &w->region;
  w->exec.plan.region_count = 1;
  w->exec.accesses = &w->access;
  w->exec.access_count = 1;
  w->exec.slots = w->slots;
  w->exec.slot_count = 2;
  for (uint32_t k = 0; k < 2; k++) {
    w->slots[k].exec = &w->exec;
    w->slots[k].index = k;
    w->slots[k].submits = &w->submits[k];
    w->slots[k].records = &w->records[k];
  }
  tandem__slot_t *s = &w->slots[0];
  s->state = TANDEM__SLOT_IN_FLIGHT;
  s->user_ref = true;
  s->submits[0].signal_value = 1;
  s->lane_values[TANDEM_LANE_COMPUTE] = 1;
  s->records[0] =
      (tandem__record_t){.access = w->access, .lane = TANDEM_LANE_COMPUTE, .value = 1, .slot = s};
  tandem__tracker_link_locked(&s->records[0]);
  w->rt.in_flight = w->rt.in_flight_tail = s;
  w->rt.in_flight_count = 1;
  return w;
}

static bool world_ok(const world_t *w) {
  return tandem__runtime_check_locked(&w->rt) && tandem__exec_check_locked(&w->exec);
}

static void test_consistent_state_passes(void **state) {
  (void)state;
  world_t *w = world_make();
  assert_true(world_ok(w));
  free(w);
}

static void test_i1_buffer_freed_while_recorded(void **state) {
  (void)state;
  world_t *w = world_make();
  /* refs is 0 (calloc), but in-flight work still records the buffer. */
  assert_false(tandem__buffer_check_free(&w->buffer));
  w->buffer.records = NULL;
  assert_true(tandem__buffer_check_free(&w->buffer));
  w->buffer.map_count = 1; /* a live host map */
  assert_false(tandem__buffer_check_free(&w->buffer));
  free(w);
}

static void test_i1_exec_freed_in_flight(void **state) {
  (void)state;
  world_t *w = world_make();
  assert_false(tandem__exec_check_free(&w->exec));
  w->slots[0].state = TANDEM__SLOT_DONE;
  assert_true(tandem__exec_check_free(&w->exec));
  free(w);
}

static void test_i2_values_out_of_order(void **state) {
  (void)state;
  world_t *w = world_make();
  /* A value the lane never handed out. */
  w->submits[0].signal_value = 2;
  w->slots[0].lane_values[TANDEM_LANE_COMPUTE] = 2;
  assert_false(tandem__runtime_check_locked(&w->rt));
  free(w);

  /* Two in-flight slots whose values go backwards along the FIFO. */
  w = world_make();
  w->rt.lane_next_value[TANDEM_LANE_COMPUTE] = 2;
  tandem__slot_t *a = &w->slots[0], *b = &w->slots[1];
  a->submits[0].signal_value = 2;
  a->lane_values[TANDEM_LANE_COMPUTE] = 2;
  a->records[0].value = 2;
  b->state = TANDEM__SLOT_IN_FLIGHT;
  b->user_ref = true;
  b->submits[0].signal_value = 1;
  b->lane_values[TANDEM_LANE_COMPUTE] = 1;
  b->records[0] =
      (tandem__record_t){.access = w->access, .lane = TANDEM_LANE_COMPUTE, .value = 1, .slot = b};
  tandem__tracker_link_locked(&b->records[0]);
  a->next_in_flight = b;
  w->rt.in_flight_tail = b;
  w->rt.in_flight_count = 2;
  assert_false(tandem__runtime_check_locked(&w->rt));
  /* In the right order they pass. */
  a->submits[0].signal_value = 1;
  a->lane_values[TANDEM_LANE_COMPUTE] = 1;
  b->submits[0].signal_value = 2;
  b->lane_values[TANDEM_LANE_COMPUTE] = 2;
  assert_true(world_ok(w));
  free(w);
}

static void test_i3_record_not_linked(void **state) {
  (void)state;
  world_t *w = world_make();
  w->buffer.records = NULL; /* in flight, but its access is not tracked */
  assert_false(tandem__runtime_check_locked(&w->rt));
  free(w);
}

static void test_i3_stale_record_linked(void **state) {
  (void)state;
  world_t *w = world_make();
  /* Slot 1 is FREE, yet a record of it sits in the buffer's list. */
  w->slots[1].records[0] = (tandem__record_t){.access = w->access,
                                              .lane = TANDEM_LANE_COMPUTE,
                                              .value = 1,
                                              .slot = &w->slots[1]};
  tandem__tracker_link_locked(&w->slots[1].records[0]);
  assert_false(tandem__runtime_check_locked(&w->rt));
  free(w);
}

static void test_i3_session_record(void **state) {
  (void)state;
  world_t *w = world_make();
  /* A native session's open stage: lane 4 at value 1, not yet reached. */
  tandem__record_t stage = {.access = w->access,
                            .lane = (tandem_lane_t)TANDEM_LANE_COUNT,
                            .value = 1,
                            .slot = NULL};
  w->rt.lanes[TANDEM_LANE_COUNT].kind = TANDEM_LANE_KIND_SESSION;
  tandem__tracker_link_locked(&stage);
  assert_true(world_ok(w));
  /* The stage ended (its value reached) but its record stayed linked. */
  w->rt.lane_done_value[TANDEM_LANE_COUNT] = 1;
  assert_false(tandem__runtime_check_locked(&w->rt));
  /* A record without a slot on a lane that is no session. */
  w->rt.lane_done_value[TANDEM_LANE_COUNT] = 0;
  w->rt.lanes[TANDEM_LANE_COUNT].kind = TANDEM_LANE_KIND_EXTERNAL;
  assert_false(tandem__runtime_check_locked(&w->rt));
  stage.lane = TANDEM_LANE_COMPUTE;
  assert_false(tandem__runtime_check_locked(&w->rt));
  free(w);
}

static void test_i4_slot_states(void **state) {
  (void)state;
  world_t *w = world_make();
  w->slots[1].user_ref = true; /* FREE but held by the user */
  assert_false(tandem__exec_check_locked(&w->exec));
  w->slots[1].user_ref = false;
  w->slots[1].state = TANDEM__SLOT_IN_FLIGHT; /* IN_FLIGHT but not in the list */
  assert_false(tandem__exec_check_locked(&w->exec));
  w->slots[1].state = TANDEM__SLOT_DONE; /* DONE but nobody holds it */
  assert_false(tandem__exec_check_locked(&w->exec));
  free(w);

  w = world_make();
  w->rt.in_flight_count = 2; /* the count disagrees with the list */
  assert_false(tandem__runtime_check_locked(&w->rt));
  w->rt.in_flight_count = 1;
  w->rt.options.max_submissions = 0; /* more in flight than allowed */
  assert_false(tandem__runtime_check_locked(&w->rt));
  free(w);
}

static void test_i5_npu_signal_order(void **state) {
  (void)state;
  tandem__npu_lane_t lane = {.done = 3};
  assert_true(tandem__npu_lane_check_signal(&lane, 4));
  assert_false(tandem__npu_lane_check_signal(&lane, 3)); /* twice */
  assert_false(tandem__npu_lane_check_signal(&lane, 6)); /* skipped 5 */
}

static void *as_npu_lane(void *arg) {
  world_t *w = arg;
  tandem__check_mark_npu_lane_thread();
  return (void *)(uintptr_t)tandem__runtime_check_locked(&w->rt);
}

static void test_i6_npu_lane_never_locks(void **state) {
  (void)state;
  world_t *w = world_make();
  assert_true(tandem__check_not_npu_lane());
  pthread_t t;
  void *ok = (void *)1;
  assert_int_equal(pthread_create(&t, NULL, as_npu_lane, w), 0);
  assert_int_equal(pthread_join(t, &ok), 0);
  assert_null(ok); /* the same state fails on the lane thread */
  assert_true(world_ok(w));
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_consistent_state_passes),
      cmocka_unit_test(test_i1_buffer_freed_while_recorded),
      cmocka_unit_test(test_i1_exec_freed_in_flight),
      cmocka_unit_test(test_i2_values_out_of_order),
      cmocka_unit_test(test_i3_record_not_linked),
      cmocka_unit_test(test_i3_stale_record_linked),
      cmocka_unit_test(test_i3_session_record),
      cmocka_unit_test(test_i4_slot_states),
      cmocka_unit_test(test_i5_npu_signal_order),
      cmocka_unit_test(test_i6_npu_lane_never_locks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
