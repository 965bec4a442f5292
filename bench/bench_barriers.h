/* SPDX-License-Identifier: MIT */
/*
 * bench_barriers.h — `tandem-bench --only barriers` (bench_barriers.c): the barrier survey's
 * entry point, for bench.c.
 */
#ifndef TANDEM_BENCH_BENCH_BARRIERS_H_
#define TANDEM_BENCH_BENCH_BARRIERS_H_

#include "bench_lab.h"

/* bench_barriers.c: prints what one dependency between dispatches costs the
 * GPU by each kind of barrier (raw Vulkan, GPU timestamps); |increment| is
 * the chain kernel's raw pipeline. Skips (with a line on stderr) without
 * compute timestamps. */
void bench_barriers(const bench_options_t *o, raw_t *raw, const raw_kernel_t *increment);

#endif /* TANDEM_BENCH_BENCH_BARRIERS_H_ */
