/* SPDX-License-Identifier: MIT */
/*
 * wait.h — what core may call of wait.c: a host wait for lane values.
 */
#ifndef TANDEM_CORE_WAIT_H_
#define TANDEM_CORE_WAIT_H_

#include "core/runtime_int.h"

/* wait.c: blocks until every lane reached |values| (0 = ignore); records
 * device loss. */
tandem_status_t tandem__runtime_wait(tandem_runtime_t *runtime,
                                     const uint64_t values[TANDEM__MAX_LANES], uint64_t timeout_ns);

#endif /* TANDEM_CORE_WAIT_H_ */
