/* SPDX-License-Identifier: MIT */
/*
 * tandem_testing.h — test-only controls. Not for applications: the interface
 * may change without notice, and builds with TANDEM_UNTESTABLE defined return
 * UNIMPLEMENTED from every call here.
 *
 * The suite uses these hooks to prove that its own checks can fail (a
 * deliberately invalid Vulkan call must be counted as a validation message)
 * and to inject failures at numbered sites inside the library.
 */
#ifndef TANDEM_TANDEM_TESTING_H_
#define TANDEM_TANDEM_TESTING_H_

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tandem_test_op {
  /* Makes one deliberately invalid Vulkan call on the runtime's device
   * (vkCreateBuffer with size 0), which the validation layer must report.
   * The runtime's GPU must be open. */
  TANDEM_TEST_INJECT_VALIDATION_ERROR = 1,
  /* The next submission on this runtime fails when it finishes, as if its
   * device had reported an error: its completion's result is
   * TANDEM_ERROR_INTERNAL, the bytes it writes are poisoned, and every
   * submission ordered after it fails with FAILED_DEPENDENCY. */
  TANDEM_TEST_FAIL_NEXT_SUBMISSION = 2,
} tandem_test_op_t;

/* Runs test operation |op| on |runtime|. Errors: INVALID_ARGUMENT (unknown op),
 * UNIMPLEMENTED (TANDEM_UNTESTABLE build), and whatever the operation raises. */
TANDEM_API tandem_status_t tandem_test_control(tandem_runtime_t *runtime, tandem_test_op_t op);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_TANDEM_TESTING_H_ */
