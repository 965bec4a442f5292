/* SPDX-License-Identifier: MIT */
/*
 * trace_events.h — what core may call of trace_events.c: a slot's times and
 * the trace events a retired slot writes.
 */
#ifndef TANDEM_CORE_TRACE_EVENTS_H_
#define TANDEM_CORE_TRACE_EVENTS_H_

#include <stdint.h>

#include "core/types.h"

/* Fills |out| (2 per region) with the times of |slot|'s last run: GPU
 * timestamps (when the backend has them) and the NPU lane's host times.
 * Returns OK when GPU times are there, UNSUPPORTED when the device keeps
 * none (no gpu_timestamps option, no calibration), or the readback's
 * failure (DEVICE_LOST makes the runtime lost). Needs runtime->mutex. */
tandem_status_t tandem__slot_times(tandem__slot_t *slot, uint64_t *out);
/* Appends |slot|'s regions to the running trace (retire time). */
void tandem__trace_slot_locked(tandem_runtime_t *runtime, tandem__slot_t *slot);

#endif /* TANDEM_CORE_TRACE_EVENTS_H_ */
