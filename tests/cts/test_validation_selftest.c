/* SPDX-License-Identifier: MIT */
/*
 * test_validation_selftest.c — proves the suite's validation check can fail:
 * a deliberately invalid Vulkan call (tandem_test_control) must reach both the
 * runtime's counter and the harness callback. Without this, "0 validation
 * messages" in every other test would prove nothing.
 */
#include "harness.h"

static void test_injected_error_is_counted(void **state) {
  (void)state;
  th_validation_reset();
  tandem_runtime_t *rt = th_runtime_create(NULL);
  uint64_t before_rt = tandem_runtime_validation_messages(rt);
  uint64_t before_cb = th_validation_count();
  TH_ASSERT_U64_EQ(before_rt, 0); /* opening the GPU itself is clean */
  TH_ASSERT_U64_EQ(before_cb, 0);

  /* This test provokes messages on purpose: teardown must not fail on them. */
  th_expect_validation_messages();
  TH_ASSERT_OK(tandem_test_control(rt, TANDEM_TEST_INJECT_VALIDATION_ERROR));

  uint64_t after_rt = tandem_runtime_validation_messages(rt);
  uint64_t after_cb = th_validation_count();
  fprintf(stderr, "injected: runtime counter %llu -> %llu, callback %llu -> %llu\n",
          (unsigned long long)before_rt, (unsigned long long)after_rt,
          (unsigned long long)before_cb, (unsigned long long)after_cb);
  assert_true(after_rt >= before_rt + 1);
  assert_true(after_cb >= before_cb + 1);
  /* Every counted message went to the callback (warning/error only both sides). */
  TH_ASSERT_U64_EQ(after_cb, after_rt);

  /* A second injection counts again. */
  TH_ASSERT_OK(tandem_test_control(rt, TANDEM_TEST_INJECT_VALIDATION_ERROR));
  assert_true(tandem_runtime_validation_messages(rt) >= after_rt + 1);
  th_runtime_destroy(rt);
  th_validation_reset();
}

static void test_clean_runtime_counts_nothing(void **state) {
  (void)state;
  th_validation_reset();
  tandem_runtime_t *rt = th_runtime_create(NULL);
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t data[1024];
  for (uint32_t i = 0; i < 1024; ++i) data[i] = i * 2654435761u;
  th_write(b, 0, data, sizeof data);
  uint32_t back[1024];
  th_read(b, 0, back, sizeof back);
  TH_ASSERT_U32_ARRAY(back, data, 1024, "host round trip");
  tandem_buffer_release(b);
  TH_ASSERT_U64_EQ(tandem_runtime_validation_messages(rt), 0);
  th_runtime_destroy(rt); /* the normal zero check applies here */
}

static void test_unknown_op(void **state) {
  tandem_runtime_t *rt = *state;
  TH_ASSERT_STATUS(tandem_test_control(rt, (tandem_test_op_t)9999), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_U64_EQ(tandem_runtime_validation_messages(rt), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_injected_error_is_counted),
      cmocka_unit_test(test_clean_runtime_counts_nothing),
      cmocka_unit_test_setup_teardown(test_unknown_op, th_setup_gpu, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
