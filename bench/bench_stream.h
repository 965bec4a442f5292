/* SPDX-License-Identifier: MIT */
/*
 * bench_stream.h — `tandem-bench`'s stream rows, transfer and overlap (bench_stream.c):
 * their entry points, for bench.c.
 */
#ifndef TANDEM_BENCH_BENCH_STREAM_H_
#define TANDEM_BENCH_BENCH_STREAM_H_

#include "bench_lab.h"

/* bench_stream.c: appends rows (transfer: 2, overlap: 1). */
void bench_transfer(const bench_options_t *o, tandem_runtime_t *rt, raw_t *raw, bench_row_t *rows,
                    uint32_t *count);
void bench_overlap(const bench_options_t *o, tandem_runtime_t *rt, raw_t *raw, bench_row_t *rows,
                   uint32_t *count);

#endif /* TANDEM_BENCH_BENCH_STREAM_H_ */
