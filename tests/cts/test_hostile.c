/* SPDX-License-Identifier: MIT */
/*
 * test_hostile.c — regression tests for hostile or odd inputs that once
 * crashed, hung or were misreported (issue 11, and fuzz findings): each test
 * names the input and the exact answer the header promises. Label "vulkan".
 */
#include "harness.h"

#include <stdlib.h>

/* Reads a whole file into a malloc'ed buffer. */
static void *read_all(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  assert_true(n > 0);
  rewind(f);
  void *data = malloc((size_t)n);
  assert_non_null(data);
  assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *out_size = (size_t)n;
  return data;
}

/* Issue 11, item 1: a module whose LocalSizeId x operand is an
 * OpSpecConstantOp passes spirv-val (vulkan1.3) but made SPIRV-Cross throw
 * "Bad cast" from C code that cannot catch it: SIGABRT. It must be refused
 * with INVALID_KERNEL naming the operand. The module is the fuzz seed
 * (fuzz/seeds/local_size_id_spec_op.spvasm), after its 16-byte header. */
static void test_local_size_id_spec_op_refused(void **state) {
  tandem_runtime_t *rt = *state;
  size_t size;
  uint8_t *seed = read_all(TANDEM_TEST_FUZZ_CORPUS "/fuzz_kernel/local_size_id_spec_op", &size);
  assert_true(size > 16);
  tandem_kernel_desc_t d = {.name = "lsid", .spirv = seed + 16, .spirv_size = size - 16};
  tandem_kernel_t *k = (tandem_kernel_t *)1;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_KERNEL,
                       "LocalSizeId x");
  assert_null(k);
  free(seed);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_local_size_id_spec_op_refused, th_setup_gpu,
                                      th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
