/* SPDX-License-Identifier: MIT */
/*
 * slot.h — what core may call of slot.c: a slot's life, FREE → IN_FLIGHT →
 * DONE → FREE, and the runtime's in-flight FIFO. slot.c is the only writer
 * of a slot's |state|, |user_ref| and FIFO link, and of the runtime's
 * in_flight list and count. All functions need runtime->mutex.
 */
#ifndef TANDEM_CORE_SLOT_H_
#define TANDEM_CORE_SLOT_H_

#include <stdbool.h>
#include <stdint.h>

#include "tandem/tandem.h"

typedef struct tandem__slot tandem__slot_t;

/* A FREE slot of |exec|, or NULL when all are taken (submit phase 3). */
tandem__slot_t *tandem__slot_find_free_locked(tandem_exec_t *exec);
/* |slot| (FREE) enters flight: IN_FLIGHT, its completion held by the user,
 * result OK, a new generation and runtime-wide submission number, appended
 * to the runtime's FIFO (retirement follows submission order). Submit phase
 * 8; the caller sets everything else of the submission first. */
void tandem__slot_enter_flight_locked(tandem_runtime_t *rt, tandem__slot_t *slot);
/* |slot| (IN_FLIGHT, its result set; |prev| its predecessor in the FIFO or
 * NULL) leaves it: DONE while the user holds the completion, else FREE. */
void tandem__slot_leave_flight_locked(tandem_runtime_t *rt, tandem__slot_t *slot,
                                      tandem__slot_t *prev);
/* The user gave the completion back: a DONE slot is FREE again; an
 * IN_FLIGHT one becomes FREE when it leaves flight. */
void tandem__slot_give_back_locked(tandem__slot_t *slot);

#endif /* TANDEM_CORE_SLOT_H_ */
