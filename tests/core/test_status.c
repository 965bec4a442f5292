/* SPDX-License-Identifier: MIT */
/*
 * test_status.c — the parts of the API that need no GPU: status names and
 * descriptions, the per-thread error message, runtime options and their
 * limits, budgets, and NULL handling. Label "core".
 */
#include "harness.h"

#include <pthread.h>
#include <stdlib.h>

#define SENTINEL ((void *)(uintptr_t)0x5A5A5A5A)

/*---------------------------------------------------------------------------*/

static void *message_of_fresh_thread(void *arg) {
  (void)arg;
  const char *m = tandem_error_message();
  return (void *)(uintptr_t)(m != NULL && m[0] == '\0');
}

static void test_error_message_empty_at_start(void **state) {
  (void)state;
  /* This runs first in main's thread, before any tandem call failed. */
  const char *m = tandem_error_message();
  assert_non_null(m);
  assert_string_equal(m, "");
  /* And a brand-new thread starts empty too. */
  pthread_t t;
  void *ok = NULL;
  assert_int_equal(pthread_create(&t, NULL, message_of_fresh_thread, NULL), 0);
  assert_int_equal(pthread_join(t, &ok), 0);
  assert_true(ok != NULL);
}

typedef struct expected_status {
  tandem_status_t code;
  int value;
  const char *name;
  const char *text;
} expected_status_t;

static const expected_status_t k_statuses[] = {
#define X(name, value, text) {TANDEM_##name, value, #name, text},
    TANDEM_STATUS_LIST(X)
#undef X
};

static void test_status_names_and_descriptions(void **state) {
  (void)state;
  const size_t n = sizeof k_statuses / sizeof k_statuses[0];
  TH_ASSERT_U64_EQ(n, 17); /* OK .. ERROR_INTERNAL */
  for (size_t i = 0; i < n; ++i) {
    const expected_status_t *e = &k_statuses[i];
    assert_int_equal((int)e->code, e->value);
    assert_int_equal(e->value, -(int)i); /* dense 0, -1, ..., -16 */
    const char *name = tandem_status_name(e->code);
    const char *text = tandem_status_describe(e->code);
    assert_non_null(name);
    assert_non_null(text);
    assert_string_equal(name, e->name);
    assert_string_equal(text, e->text);
    assert_true(strlen(text) > 0);
    assert_string_not_equal(name, "UNKNOWN");
    /* Descriptions are distinct: each code explains itself. */
    for (size_t j = 0; j < i; ++j) {
      assert_string_not_equal(text, tandem_status_describe(k_statuses[j].code));
    }
  }
  assert_string_equal(tandem_status_name(TANDEM_OK), "OK");
  assert_string_equal(tandem_status_name(TANDEM_ERROR_BUSY), "ERROR_BUSY");
  assert_string_equal(tandem_status_describe(TANDEM_ERROR_TIMEOUT), "the wait timed out");
}

static void test_status_unknown_code(void **state) {
  (void)state;
  const int unknown[] = {1, 7, -17, -100, 12345, -2147483647};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    tandem_status_t s = (tandem_status_t)unknown[i];
    assert_string_equal(tandem_status_name(s), "UNKNOWN");
    const char *d = tandem_status_describe(s);
    assert_non_null(d);
    assert_true(strlen(d) > 0);
    for (size_t j = 0; j < sizeof k_statuses / sizeof k_statuses[0]; ++j) {
      assert_string_not_equal(d, k_statuses[j].text);
    }
  }
}

static void test_placement_and_lane_names(void **state) {
  (void)state;
  assert_string_equal(tandem_placement_name(TANDEM_PLACEMENT_GPU_LOCAL), "GPU_LOCAL");
  assert_string_equal(tandem_placement_name(TANDEM_PLACEMENT_HOST_VISIBLE), "HOST_VISIBLE");
  assert_string_equal(tandem_placement_name(TANDEM_PLACEMENT_SHARED), "SHARED");
  assert_string_equal(tandem_placement_name(TANDEM_PLACEMENT_NPU_LOCAL), "NPU_LOCAL");
  assert_string_equal(tandem_placement_name((tandem_placement_t)42), "UNKNOWN");
  assert_string_equal(tandem_lane_name(TANDEM_LANE_UPLOAD), "upload");
  assert_string_equal(tandem_lane_name(TANDEM_LANE_COMPUTE), "compute");
  assert_string_equal(tandem_lane_name(TANDEM_LANE_DOWNLOAD), "download");
  assert_string_equal(tandem_lane_name((tandem_lane_t)17), "unknown");
}

/*---------------------------------------------------------------------------*/

static void test_options_defaults(void **state) {
  (void)state;
  tandem_runtime_options_t o;
  memset(&o, 0xAB, sizeof o);
  tandem_runtime_options_init(&o);
  TH_ASSERT_U64_EQ(o.gpu_index, 0);
  TH_ASSERT_U64_EQ(o.max_submissions, 64);
  TH_ASSERT_U64_EQ(o.graph_slots, 2);
  TH_ASSERT_U64_EQ(o.wait_spin_us, 50);
  assert_null(o.budget);
  assert_false(o.validation);
  assert_false(o.gpu_timestamps);
  assert_null(o.validation_callback);
  assert_null(o.validation_user_data);
}

#define expect_bad_option(o, field) expect_bad_option_at((o), (field), __FILE__, __LINE__)
static void expect_bad_option_at(tandem_runtime_options_t o, const char *field, const char *file,
                                 int line) {
  tandem_runtime_t *rt = SENTINEL;
  th__check_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT,
                   "tandem_runtime_create", file, line);
  th__check_message_has(field, file, line);
  assert_null(rt); /* out_ is NULL on failure */
}

static void expect_good_option(tandem_runtime_options_t o) {
  tandem_runtime_t *rt = NULL;
  TH_ASSERT_OK(tandem_runtime_create(&o, &rt));
  assert_non_null(rt);
  tandem_runtime_destroy(rt);
}

static void test_runtime_rejects_bad_options(void **state) {
  (void)state;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);

  o.max_submissions = 0;
  expect_bad_option(o, "max_submissions");
  TH_ASSERT_MESSAGE_HAS("65536"); /* the allowed range */
  o.max_submissions = 65537;
  expect_bad_option(o, "max_submissions");
  TH_ASSERT_MESSAGE_HAS("65537");
  o.max_submissions = 1;
  expect_good_option(o);
  o.max_submissions = 65536;
  expect_good_option(o);

  tandem_runtime_options_init(&o);
  o.graph_slots = 0;
  expect_bad_option(o, "graph_slots");
  TH_ASSERT_MESSAGE_HAS("1024");
  o.graph_slots = 1025;
  expect_bad_option(o, "graph_slots");
  TH_ASSERT_MESSAGE_HAS("1025");
  o.graph_slots = 1;
  expect_good_option(o);
  o.graph_slots = 1024;
  expect_good_option(o);

  tandem_runtime_options_init(&o);
  o.wait_spin_us = 100001;
  expect_bad_option(o, "wait_spin_us");
  TH_ASSERT_MESSAGE_HAS("0..100000");
  o.wait_spin_us = 0;
  expect_good_option(o);
  o.wait_spin_us = 100000;
  expect_good_option(o);
  /* The variable overrides, and is checked. */
  setenv("TANDEM_WAIT_SPIN_US", "12x", 1);
  expect_bad_option(o, "TANDEM_WAIT_SPIN_US");
  setenv("TANDEM_WAIT_SPIN_US", "200000", 1);
  expect_bad_option(o, "TANDEM_WAIT_SPIN_US");
  setenv("TANDEM_WAIT_SPIN_US", "0", 1);
  expect_good_option(o);
  unsetenv("TANDEM_WAIT_SPIN_US");
}

static void test_runtime_create_defaults(void **state) {
  (void)state;
  tandem_runtime_t *rt = NULL;
  TH_ASSERT_OK(tandem_runtime_create(NULL, &rt));
  assert_non_null(rt);
  /* Nothing allocated, nothing counted, GPU not opened. */
  tandem_statistics_t st;
  memset(&st, 0xEE, sizeof st);
  st.struct_size = sizeof st; /* after the poison */
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &st));
  TH_ASSERT_U64_EQ(st.allocations, 0);
  TH_ASSERT_U64_EQ(st.live_bytes, 0);
  TH_ASSERT_U64_EQ(st.peak_bytes, 0);
  TH_ASSERT_U64_EQ(st.submissions, 0);
  TH_ASSERT_U64_EQ(st.completions, 0);
  TH_ASSERT_U64_EQ(st.copied_bytes, 0);
  for (int i = 0; i < TANDEM_LANE_COUNT; ++i) TH_ASSERT_U64_EQ(th_lane_copied(rt, i), 0);
  TH_ASSERT_U64_EQ(tandem_runtime_validation_messages(rt), 0);
  tandem_runtime_destroy(rt);
}

/*---------------------------------------------------------------------------*/

static void test_budget_basics(void **state) {
  (void)state;
  tandem_budget_t *b = NULL;
  TH_ASSERT_OK(tandem_budget_create(1000, &b));
  assert_non_null(b);
  TH_ASSERT_U64_EQ(tandem_budget_limit(b), 1000);
  TH_ASSERT_U64_EQ(tandem_budget_used(b), 0);
  tandem_budget_retain(b);
  tandem_budget_release(b);
  TH_ASSERT_U64_EQ(tandem_budget_limit(b), 1000); /* still alive: one reference left */

  /* A runtime keeps its own reference to the budget. */
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.budget = b;
  tandem_runtime_t *rt = NULL;
  TH_ASSERT_OK(tandem_runtime_create(&o, &rt));
  tandem_budget_release(b);
  TH_ASSERT_U64_EQ(tandem_budget_limit(b), 1000); /* the runtime's reference */
  TH_ASSERT_U64_EQ(tandem_budget_used(b), 0);
  tandem_runtime_destroy(rt);

  /* The extremes of the range. */
  TH_ASSERT_OK(tandem_budget_create(1, &b));
  TH_ASSERT_U64_EQ(tandem_budget_limit(b), 1);
  tandem_budget_release(b);
  TH_ASSERT_OK(tandem_budget_create((uint64_t)(SIZE_MAX / 2), &b));
  TH_ASSERT_U64_EQ(tandem_budget_limit(b), (uint64_t)(SIZE_MAX / 2));
  TH_ASSERT_U64_EQ(tandem_budget_used(b), 0);
  tandem_budget_release(b);
}

static void test_budget_out_of_range(void **state) {
  (void)state;
  const uint64_t bad[] = {0, (uint64_t)(SIZE_MAX / 2) + 1, UINT64_MAX};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    tandem_budget_t *b = SENTINEL;
    TH_ASSERT_STATUS(tandem_budget_create(bad[i], &b), TANDEM_ERROR_OUT_OF_RANGE);
    assert_null(b);
  }
}

/*---------------------------------------------------------------------------*/

static void test_null_handling(void **state) {
  (void)state;
  /* Releases of NULL do nothing. */
  tandem_budget_retain(NULL);
  tandem_budget_release(NULL);
  tandem_runtime_destroy(NULL);
  tandem_buffer_retain(NULL);
  tandem_buffer_release(NULL);
  tandem_kernel_retain(NULL);
  tandem_kernel_release(NULL);
  tandem_graph_retain(NULL);
  tandem_graph_release(NULL);
  tandem_exec_retain(NULL);
  tandem_exec_release(NULL);
  tandem_completion_release(NULL);
  tandem_map_t zero;
  memset(&zero, 0, sizeof zero);
  tandem_unmap(&zero); /* a zeroed map: nothing */
  assert_null(zero.data);

  /* NULL out-parameters. */
  TH_ASSERT_STATUS(tandem_budget_create(100, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_runtime_create(NULL, NULL), TANDEM_ERROR_INVALID_ARGUMENT);

  tandem_runtime_t *rt = NULL;
  TH_ASSERT_OK(tandem_runtime_create(NULL, &rt));
  TH_ASSERT_STATUS(tandem_graph_create(rt, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_buffer_create(rt, 64, TANDEM_PLACEMENT_HOST_VISIBLE, NULL),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_kernel_create(rt, NULL, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_kernel_t *k = SENTINEL;
  TH_ASSERT_STATUS(tandem_kernel_create(rt, NULL, &k), TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(k);
  TH_ASSERT_STATUS(tandem_runtime_gpu_count(rt, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_runtime_gpu_info(rt, 0, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_statistics_t st;
  tandem_statistics_init(&st);
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &st));
  TH_ASSERT_U64_EQ(st.allocations, 0); /* nothing above allocated */
  TH_ASSERT_U64_EQ(st.live_bytes, 0);
  tandem_runtime_destroy(rt);

  /* NULL objects. */
  tandem_graph_t *g = SENTINEL;
  TH_ASSERT_STATUS(tandem_graph_create(NULL, &g), TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(g);
  tandem_buffer_t *b = SENTINEL;
  TH_ASSERT_STATUS(tandem_buffer_create(NULL, 64, TANDEM_PLACEMENT_HOST_VISIBLE, &b),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(b);
  tandem_view_t v;
  TH_ASSERT_STATUS(tandem_buffer_view(NULL, 0, 4, &v), TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_view_t null_view = {NULL, 0, 4};
  tandem_map_t m;
  TH_ASSERT_STATUS(tandem_map_read(null_view, &m), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_map_write(null_view, &m), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_try_map_read(null_view, &m), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_try_map_write(null_view, &m), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_graph_add_fill(NULL, null_view, 0, TANDEM_LANE_AUTO),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_graph_add_copy(NULL, null_view, null_view, TANDEM_LANE_AUTO),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_graph_add_dispatch(NULL, NULL, NULL, 0, NULL, 0),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_exec_t *e = SENTINEL;
  TH_ASSERT_STATUS(tandem_graph_prepare(NULL, &e), TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(e);
  tandem_completion_t *c = SENTINEL;
  TH_ASSERT_STATUS(tandem_exec_submit(NULL, &c), TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(c);
  TH_ASSERT_STATUS(tandem_completion_wait(NULL), TANDEM_ERROR_INVALID_ARGUMENT);
}

/*---------------------------------------------------------------------------*/

typedef struct thread_msg {
  char seen_before[256];
  char seen_after[256];
} thread_msg_t;

static void *fail_in_thread(void *arg) {
  thread_msg_t *t = arg;
  snprintf(t->seen_before, sizeof t->seen_before, "%s", tandem_error_message());
  tandem_budget_t *b = NULL;
  (void)tandem_budget_create(0, &b); /* OUT_OF_RANGE on this thread */
  snprintf(t->seen_after, sizeof t->seen_after, "%s", tandem_error_message());
  return NULL;
}

static void test_error_message_is_per_thread(void **state) {
  (void)state;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.graph_slots = 0;
  tandem_runtime_t *rt = NULL;
  TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT,
                       "graph_slots");
  char mine[2048];
  snprintf(mine, sizeof mine, "%s", tandem_error_message());

  thread_msg_t t;
  memset(&t, 0, sizeof t);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, fail_in_thread, &t), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_string_equal(t.seen_before, ""); /* not main's failure */
  assert_true(strlen(t.seen_after) > 0);
  assert_null(strstr(t.seen_after, "graph_slots"));
  assert_string_equal(tandem_error_message(), mine); /* main's is untouched */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_error_message_empty_at_start), /* must stay first */
      cmocka_unit_test(test_status_names_and_descriptions),
      cmocka_unit_test(test_status_unknown_code),
      cmocka_unit_test(test_placement_and_lane_names),
      cmocka_unit_test(test_options_defaults),
      cmocka_unit_test(test_runtime_rejects_bad_options),
      cmocka_unit_test(test_runtime_create_defaults),
      cmocka_unit_test(test_budget_basics),
      cmocka_unit_test(test_budget_out_of_range),
      cmocka_unit_test(test_null_handling),
      cmocka_unit_test(test_error_message_is_per_thread),
  };
  (void)th_seed();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
