/* SPDX-License-Identifier: MIT */
/*
 * wait.h — what core may call of wait.c: a host wait for lane values.
 */
#ifndef TANDEM_CORE_WAIT_H_
#define TANDEM_CORE_WAIT_H_

#include "core/types.h"

/* wait.c: blocks until every lane reached |values| (0 = ignore); records
 * device loss. */
tandem_status_t tandem__runtime_wait(tandem_runtime_t *runtime,
                                     const uint64_t values[TANDEM__MAX_LANES], uint64_t timeout_ns);
/* wait.c: every built-in lane's value now, in core's ids: each open GPU's
 * timelines (queried without blocking) and the NPU lane's record; user
 * lanes 0 (a session's done value moves when its stage ends, session.c; an
 * external lane's values are another process's). The first failed query's
 * status (the values of that GPU then 0). Takes no core lock. */
tandem_status_t tandem__runtime_query_lanes(tandem_runtime_t *runtime,
                                            uint64_t out_values[TANDEM__MAX_LANES]);

#endif /* TANDEM_CORE_WAIT_H_ */
