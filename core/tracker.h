/* SPDX-License-Identifier: MIT */
/*
 * tracker.h — what core may call of tracker.c: in-flight accesses,
 * retirement, dependencies between submissions, poisoned bytes.
 */
#ifndef TANDEM_CORE_TRACKER_H_
#define TANDEM_CORE_TRACKER_H_

#include "core/types.h"

/* Tracker (tracker.c). All _locked functions need runtime->mutex. */
/* Reads the lanes' timelines and retires every in-flight slot they passed. */
void tandem__tracker_poll_locked(tandem_runtime_t *runtime);
/* As poll, with lane values the caller already knows were reached (a finished
 * wait), or a query failure |s|: saves the timeline queries. */
void tandem__tracker_advance_locked(tandem_runtime_t *runtime, uint64_t values[TANDEM__MAX_LANES],
                                    tandem_status_t s);
/* Largest in-flight value per lane that conflicts with |access|, into waits[]
 * (kept when already larger). Returns true when any was found. With a
 * |dependent| slot, the conflicting slots become its dependencies; without
 * (a host wait), waits[] also cover the conflicting slots' cover. A write
 * whose lane value has passed still counts while its slot is in flight (the
 * slot may yet fail and poison those bytes): it adds a dependency, or for a
 * host wait its slot's cover, but no wait on the passed value. */
bool tandem__tracker_conflicts_locked(tandem_runtime_t *runtime, const tandem__access_t *access,
                                      uint64_t waits[TANDEM__MAX_LANES], tandem__slot_t *dependent);
/* Records that |slot| is ordered after |on|'s current submission. */
void tandem__slot_add_dep_locked(tandem__slot_t *slot, tandem__slot_t *on, bool fails_with);
/* Poisoned ranges of |buffer| (tracker.c): marks [offset, offset+length)
 * poisoned by a writer that ended with |cause|; clears it (written again by
 * work that succeeded); the first poisoned range overlapping it, or NULL. */
void tandem__poison_mark_locked(tandem_buffer_t *buffer, uint64_t offset, uint64_t length,
                                tandem_status_t cause);
void tandem__poison_clear_locked(tandem_buffer_t *buffer, uint64_t offset, uint64_t length);
const tandem__poison_t *tandem__poison_find_locked(const tandem_buffer_t *buffer, uint64_t offset,
                                                   uint64_t length);
/* Writes that come before a read in the same work (the nodes a graph
 * records before the reader): when one of them writes byte |at| of
 * |buffer|, sets *end to the end of its range and returns true. */
typedef bool (*tandem__written_before_fn)(const void *ctx, const tandem_buffer_t *buffer,
                                          uint64_t at, uint64_t *end);
/* The one poison rule for submissions and native sessions: the first
 * poisoned range holding a byte |access| reads before anything rewrites it
 * (its exposed reads), or NULL. A byte is not exposed when |before| (may be
 * NULL) says the same work writes it first, or when an in-flight WRITE that
 * can still succeed rewrites it (the reader is ordered after that write and
 * fails with it if it fails). Accesses without READ read nothing. */
const tandem__poison_t *tandem__poison_exposed_locked(const tandem__access_t *access,
                                                      tandem__written_before_fn before,
                                                      const void *ctx);

/* Computes slot->cover of a slot being committed (its lane values and
 * dependencies set) and raises the NPU horizons of the queues it uses. */
void tandem__slot_set_cover_locked(tandem_runtime_t *rt, tandem__slot_t *slot);
void tandem__tracker_link_locked(tandem__record_t *record);
void tandem__tracker_unlink_locked(tandem__record_t *record);

#endif /* TANDEM_CORE_TRACKER_H_ */
