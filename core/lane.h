/* SPDX-License-Identifier: MIT */
/*
 * lane.h — what core may call of lane.c: the runtime's lane table, user
 * lanes taken and given back, and the waits that keep a timeline alive.
 */
#ifndef TANDEM_CORE_LANE_H_
#define TANDEM_CORE_LANE_H_

#include "core/types.h"

/* Lanes (lane.c). init: the built-in entries, at runtime creation. */
void tandem__lanes_init(tandem_runtime_t *runtime);
/* True for a lane whose timeline tandem signals from the host (the NPU lane,
 * SESSION lanes): host waits for it wait for the signaller's record, not the
 * semaphore. Needs runtime->mutex. */
bool tandem__lane_host_signalled_locked(const tandem_runtime_t *runtime, int lane);
/* Takes the lowest free user id as |kind| named |name| and binds its
 * timeline in the backend (|imported|: lane_bind). BUSY when every id is
 * taken. Needs runtime->mutex. */
tandem_status_t tandem__lane_take_locked(tandem_runtime_t *runtime, tandem__gpu_t *gpu,
                                         tandem_lane_kind_t kind, const char *name, void *imported,
                                         tandem_lane_t *out_lane);
/* Gives user lane |lane| back: no new waits on it, then (without the lock)
 * a host wait for every queued wait on its timeline, then unbinds it and
 * frees the id. Takes runtime->mutex itself. */
void tandem__lane_give_back(tandem_runtime_t *runtime, tandem_lane_t lane);
/* True when a region of |slot| waits for a SESSION stage that ended in
 * failure (tandem__lane_t.failed_value). Needs runtime->mutex. */
bool tandem__lane_failed_waits_locked(const tandem_runtime_t *runtime, const tandem__slot_t *slot);

/* Commit-time bookkeeping of a submission whose regions wait on user lanes:
 * raises those lanes' waited_by. Needs runtime->mutex. */
void tandem__lane_note_waits_locked(tandem_runtime_t *runtime, const tandem__slot_t *slot);

#endif /* TANDEM_CORE_LANE_H_ */
