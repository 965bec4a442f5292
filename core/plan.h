/* SPDX-License-Identifier: MIT */
/*
 * plan.h — what core may call of plan.c: building and freeing a plan, and
 * the order it gives two nodes.
 */
#ifndef TANDEM_CORE_PLAN_H_
#define TANDEM_CORE_PLAN_H_

#include <stdbool.h>
#include <stdint.h>

#include "core/types.h"

tandem_status_t tandem__plan_build(const tandem_graph_t *graph, tandem__plan_t *plan);
void tandem__plan_free(tandem__plan_t *plan);
/* True when the prepared |plan| orders node |a| before node |b| (a < b in
 * record order): a barrier between them in one region, or a chain of
 * semaphore waits from b's region back to a's. */
bool tandem__plan_orders(const tandem__plan_t *plan, uint32_t a, uint32_t b);

#endif /* TANDEM_CORE_PLAN_H_ */
