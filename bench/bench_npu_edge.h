/* SPDX-License-Identifier: MIT */
/*
 * bench_npu_edge.h — `tandem-bench --only npu-edge` (bench_npu_edge.c): the GPU -> NPU -> GPU
 * row's entry points, for bench.c.
 */
#ifndef TANDEM_BENCH_BENCH_NPU_EDGE_H_
#define TANDEM_BENCH_BENCH_NPU_EDGE_H_

#include "bench_lab.h"

/* bench_npu_edge.c: one GPU -> NPU -> GPU edge (emulated NPU) through tandem
 * vs direct Vulkan + XRT calls; appends one row. The first returns why it
 * cannot run here, or NULL. */
const char *bench_npu_edge_unavailable(const raw_t *raw);
void bench_npu_edge(const bench_options_t *o, raw_t *raw, bench_row_t *rows, uint32_t *count);

#endif /* TANDEM_BENCH_BENCH_NPU_EDGE_H_ */
