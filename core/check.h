/* SPDX-License-Identifier: MIT */
/*
 * check.h — what core may call of check.c: the invariant checkers, each
 * for use inside assert() only (the invariants are in runtime_int.h).
 */
#ifndef TANDEM_CORE_CHECK_H_
#define TANDEM_CORE_CHECK_H_

#include <stdbool.h>
#include <stdint.h>

#include "core/types.h"

/* Invariant checkers (check.c), called only inside assert(): each returns
 * false, after printing the invariant it found broken, when it does not hold. */
bool tandem__runtime_check_locked(const tandem_runtime_t *runtime); /* I2, I3, I4, I6 */
bool tandem__exec_check_locked(const tandem_exec_t *exec);          /* I4 per slot */
bool tandem__exec_check_free(const tandem_exec_t *exec);            /* I1 */
bool tandem__buffer_check_free(const tandem_buffer_t *buffer);      /* I1 */
bool tandem__npu_lane_check_signal(const tandem__npu_lane_t *lane, uint64_t value); /* I5 */
bool tandem__check_not_npu_lane(void);                                              /* I6 */
/* Marks the calling thread as the NPU lane (for the I6 check; any build). */
void tandem__check_mark_npu_lane_thread(void);

#endif /* TANDEM_CORE_CHECK_H_ */
