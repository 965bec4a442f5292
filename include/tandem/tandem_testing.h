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
   * submission that reads them fails with FAILED_DEPENDENCY (tandem.h,
   * Completions: the failure model). */
  TANDEM_TEST_FAIL_NEXT_SUBMISSION = 2,
} tandem_test_op_t;

/*--------------------------------------------------------------------------
 * Numbered fault injection (SQLite's sqlite3FaultSim idea). Process-wide:
 * once armed, every counted native call takes the next number — each host
 * allocation of the library (malloc, calloc, realloc, strdup), each fallible
 * Vulkan call (those returning VkResult, through tandem's function tables),
 * each XRT call (through the loaded API table) — and call |fail_at| fails as
 * the native API would (NULL / ENOMEM; VK_ERROR_OUT_OF_HOST_MEMORY, or
 * VK_ERROR_DEVICE_LOST for queue, wait and signal calls; XRT's error return
 * with errno EIO). With |persistent|, every later counted call fails too.
 * Tests run a scenario for fail_at = 1, 2, ... until a run reports no
 * failure (tests/cts/test_fault.c).
 *--------------------------------------------------------------------------*/
typedef enum tandem_test_fault_kind {
  TANDEM_TEST_FAULT_ALLOC = 1,
  TANDEM_TEST_FAULT_VULKAN = 2,
  TANDEM_TEST_FAULT_XRT = 4,
  TANDEM_TEST_FAULT_ALL = 7,
} tandem_test_fault_kind_t;

typedef struct tandem_test_fault {
  uint64_t fail_at;  /* 1-based number of the call to fail; 0 turns injection off */
  bool persistent;   /* also fail every counted call after it */
  uint32_t kinds;    /* tandem_test_fault_kind_t bits to count; 0 = all */
} tandem_test_fault_t;

typedef struct tandem_test_fault_report {
  uint64_t counted;     /* counted calls since the last tandem_test_fault_set */
  uint64_t failed;      /* of them, made to fail */
  char first_site[128]; /* the first call made to fail ("vkQueueSubmit2", "core/exec.c:51") */
} tandem_test_fault_report_t;

/* Arms (or with NULL / fail_at 0 disarms) injection and zeroes the counts.
 * Errors: INVALID_ARGUMENT (unknown kind bits), UNIMPLEMENTED
 * (TANDEM_UNTESTABLE). Thread-safe, but calls racing with it may or may not
 * be counted. */
TANDEM_API tandem_status_t tandem_test_fault_set(const tandem_test_fault_t *fault);
/* What happened since the last tandem_test_fault_set. Errors:
 * INVALID_ARGUMENT (NULL), UNIMPLEMENTED (TANDEM_UNTESTABLE). Thread-safe. */
TANDEM_API tandem_status_t tandem_test_fault_report(tandem_test_fault_report_t *out_report);

/* Coverage of the sweep: every distinct site counted (reached, failed or
 * not) while injection was armed, since the process started, of the kinds
 * in |kinds| (0 = all): allocation sites as "core/prepare.c:42", Vulkan and
 * XRT calls by name. Writes up to |capacity| of them to |out_sites| (static
 * strings, valid while the library is loaded; NULL with capacity 0 asks
 * only the count) and how many there are to *out_count. A process keeps
 * up to 512 sites. Errors: INVALID_ARGUMENT (NULL out_count, NULL out_sites
 * with capacity, unknown kind bits), UNIMPLEMENTED (TANDEM_UNTESTABLE).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_test_fault_sites(uint32_t kinds, const char **out_sites,
                                                   uint32_t capacity, uint32_t *out_count);

/* Runs test operation |op| on |runtime|. Errors: INVALID_ARGUMENT (unknown op),
 * UNIMPLEMENTED (TANDEM_UNTESTABLE build), and whatever the operation raises. */
TANDEM_API tandem_status_t tandem_test_control(tandem_runtime_t *runtime, tandem_test_op_t op);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_TANDEM_TESTING_H_ */
