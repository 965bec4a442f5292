/* SPDX-License-Identifier: MIT */
/*
 * test_validation_selftest.c — proves the suite's validation check can fail:
 * a deliberately invalid Vulkan call (tandem_test_control) must reach both the
 * runtime's counter and the harness callback. Without this, "0 validation
 * messages" in every other test would prove nothing.
 */
#include <stdlib.h>
#include <unistd.h>

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

/* Runs one injected validation error on a runtime made from |o| with stderr
 * captured; returns what was printed (static buffer) and the count. */
static const char *inject_capturing_stderr(const tandem_runtime_options_t *o, uint64_t *count) {
  static char text[8192];
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  fflush(stderr);
  int saved = dup(2);
  assert_true(saved >= 0);
  assert_true(dup2(fileno(tmp), 2) >= 0);
  tandem_runtime_t *rt = NULL;
  tandem_status_t s = tandem_runtime_create(o, &rt);
  if (s == TANDEM_OK) s = tandem_runtime_open_gpu(rt);
  if (s == TANDEM_OK) s = tandem_test_control(rt, TANDEM_TEST_INJECT_VALIDATION_ERROR);
  *count = rt ? tandem_runtime_validation_messages(rt) : 0;
  tandem_runtime_destroy(rt);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  TH_ASSERT_OK(s);
  rewind(tmp);
  size_t n = fread(text, 1, sizeof text - 1, tmp);
  text[n] = '\0';
  fclose(tmp);
  return text;
}

static unsigned own_callback_calls;
static void own_callback(void *user, tandem_validation_severity_t severity, const char *message) {
  (void)user, (void)severity, (void)message;
  own_callback_calls++;
}

/* TANDEM_VALIDATION=1 in a program without a callback prints each message;
 * a program that set a callback, or asked for validation itself, decides. */
static void test_env_validation_prints_to_stderr(void **state) {
  (void)state;
  th_validation_reset();
  th_expect_validation_messages();
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  uint64_t count = 0;
  assert_int_equal(setenv("TANDEM_VALIDATION", "1", 1), 0);
  const char *printed = inject_capturing_stderr(&o, &count);
  fprintf(stderr, "TANDEM_VALIDATION=1, no callback: %llu message(s), printed:\n%s",
          (unsigned long long)count, printed);
  assert_true(count >= 1);
  assert_non_null(strstr(printed, "tandem: validation error: "));
  assert_non_null(strstr(printed, "VUID-VkBufferCreateInfo-"));

  /* The program's own choice: validation asked for in the options (counted,
   * not printed), or a callback of its own. */
  o.validation = true;
  printed = inject_capturing_stderr(&o, &count);
  assert_true(count >= 1);
  assert_null(strstr(printed, "tandem: validation"));
  o.validation = false;
  o.validation_callback = own_callback;
  printed = inject_capturing_stderr(&o, &count);
  assert_true(count >= 1);
  assert_int_equal(own_callback_calls, count);
  assert_null(strstr(printed, "tandem: validation"));
  assert_int_equal(unsetenv("TANDEM_VALIDATION"), 0);
  th_validation_reset();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_injected_error_is_counted),
      cmocka_unit_test(test_clean_runtime_counts_nothing),
      cmocka_unit_test(test_env_validation_prints_to_stderr),
      cmocka_unit_test_setup_teardown(test_unknown_op, th_setup_gpu, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
