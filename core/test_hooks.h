/* SPDX-License-Identifier: MIT */
/*
 * test_hooks.h — what a GPU backend offers the test-only API
 * (tandem_testing.h: tandem_test_control) and nothing else: kept out of the
 * backend interface (core/backend.h) so that production entries and test
 * controls never mix. A backend that has controls points
 * tandem__gpu_t.test_hooks at its table; core/runtime.c answers
 * UNSUPPORTED for a backend without.
 */
#ifndef TANDEM_CORE_TEST_HOOKS_H_
#define TANDEM_CORE_TEST_HOOKS_H_

#include "core/backend.h"
#include "tandem/tandem_testing.h"

typedef struct tandem__gpu_test_hooks {
  /* Carries out |op| (tandem_test_op_t) on the device, or says why not. */
  tandem_status_t (*control)(tandem__gpu_t *gpu, tandem_test_op_t op);
  /* The ordering check's findings (tandem_test_unordered); NULL: none. */
  void (*unordered)(tandem__gpu_t *gpu, tandem_test_unordered_t *out);
} tandem__gpu_test_hooks_t;

#endif /* TANDEM_CORE_TEST_HOOKS_H_ */
