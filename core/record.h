/* SPDX-License-Identifier: MIT */
/*
 * record.h — what core may call of record.c: making a plan's program on the
 * backend and recording its regions, whole or in pieces.
 */
#ifndef TANDEM_CORE_RECORD_H_
#define TANDEM_CORE_RECORD_H_

#include <stdint.h>

#include "core/types.h"

/* record.c: makes |plan|'s program on |gpu|, the runtime's GPU |g| (of the
 * plan's regions on g), from a description of it (no plan
 * layout crosses to the backend) and records every GPU region of every slot,
 * the slots on several threads when the program is large enough to pay. */
tandem_status_t tandem__program_create(tandem__gpu_t *gpu, uint32_t g, const tandem__plan_t *plan,
                                       uint32_t slot_count, void **out_native);
/* record.c: a new program with fewer recorded commands than this (over all
 * slots) records on the calling thread only. Measured on lavapipe, 2 cores,
 * a dependent chain, two slots (bench/NOTES.md, "prepare: parallel slot
 * recording"): up to 3 000
 * commands, two threads were 0.03-0.1 ms slower than one (0.49 against
 * 0.62 ms at 3 000), from 3 600 on faster (2.4 against 0.73 ms; 7.0 against
 * 0.86 ms at 4 096). Small prepares keep their latency and create no thread.
 * A build may set another value (-DTANDEM__RECORD_PARALLEL_MIN=...) to
 * measure a device's own crossover. */
#ifndef TANDEM__RECORD_PARALLEL_MIN
#define TANDEM__RECORD_PARALLEL_MIN 3072u
#endif
/* record.c: a GPU region of at least twice this many commands, with no user
 * commands, is recorded in pieces of at least this many commands, each into
 * a command buffer of its own, split only before a command with a barrier
 * before it, so that the pieces of every slot record on parallel threads at
 * prepare (bench/NOTES.md, "prepare: long regions recorded in pieces"). Half
 * the parallel threshold: a region is split exactly when it alone would make
 * a one-slot prepare parallel. The environment variable
 * TANDEM_RECORD_PIECE_MIN, read at prepare, overrides it (tests split short
 * chains with it). */
#ifndef TANDEM__RECORD_PIECE_MIN
#define TANDEM__RECORD_PIECE_MIN (TANDEM__RECORD_PARALLEL_MIN / 2u)
#endif
/* record.c: the piece minimum for a prepare now (TANDEM_RECORD_PIECE_MIN or
 * the default). */
uint32_t tandem__record_piece_min(void);
/* record.c: how many pieces GPU region |region| of |plan| is recorded in. */
uint32_t tandem__region_pieces(const tandem__plan_t *plan, uint32_t region);
/* record.c: records GPU region |region| of slot |slot| again from |plan|'s
 * current node parameters, command by command, piece after piece in order
 * on the calling thread (core/backend.h). Only while that slot is not in
 * flight, under runtime->mutex (re-recording at submit; prepare records its
 * pieces through tandem__program_create). Allocates nothing. */
tandem_status_t tandem__record_region(tandem__gpu_t *gpu, void *native, const tandem__plan_t *plan,
                                      uint32_t slot, uint32_t region);

#endif /* TANDEM_CORE_RECORD_H_ */
