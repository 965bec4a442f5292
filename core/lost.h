/* SPDX-License-Identifier: MIT */
/*
 * lost.h — what core may call of lost.c: device loss as a runtime state.
 */
#ifndef TANDEM_CORE_LOST_H_
#define TANDEM_CORE_LOST_H_

#include "core/types.h"

/* lost.c: records the first device failure (sticky; TANDEM_ABORT_ON_DEVICE_LOST=1
 * aborts there), and before freeing an executable of a lost runtime waits for
 * everything already handed to the queues and the NPU lane. */
void tandem__runtime_set_lost_locked(tandem_runtime_t *runtime, tandem_status_t s);
void tandem__runtime_drain_if_lost(tandem_runtime_t *runtime);
/* As set_lost_locked, for a call that answered |s| without the lock: a
 * DEVICE_LOST from any driver call (a buffer's zero-fill, a pipeline, an
 * import, an interop wait...) makes the runtime lost; other codes do not. */
void tandem__runtime_note_loss(tandem_runtime_t *runtime, tandem_status_t s);
/* Makes the runtime lost when the NPU lane thread saw the GPU fail
 * (runtime->lost_pending). Returns runtime->lost. */
tandem_status_t tandem__runtime_fold_loss_locked(tandem_runtime_t *runtime);
/* After program_submit failed for |slot| (values |next| per lane): makes
 * sure nothing the queues already hold waits for a value nobody signals (the
 * NPU lane signals the submission's NPU values). Needs runtime->mutex. */
void tandem__submit_abandon_locked(tandem_runtime_t *runtime, tandem__slot_t *slot,
                                   const uint64_t next[TANDEM__MAX_LANES]);

#endif /* TANDEM_CORE_LOST_H_ */
