/* SPDX-License-Identifier: MIT */
/*
 * graph.h — what core may call of graph.c: node references, and the checks
 * shared by recording and tandem_exec_set_*.
 */
#ifndef TANDEM_CORE_GRAPH_H_
#define TANDEM_CORE_GRAPH_H_

#include "core/types.h"

/* graph.c: a node's references to its buffers, kernel and program. */
void tandem__node_retain(tandem__node_t *node);
void tandem__node_release(tandem__node_t *node);

/* graph.c: checks shared by recording and tandem_exec_set_*. */
tandem_status_t tandem__dispatch_views_check(tandem_runtime_t *rt, const tandem_kernel_t *kernel,
                                             const tandem_view_t *views, uint32_t count);
tandem_status_t tandem__workgroups_check(tandem_runtime_t *rt, const tandem_kernel_t *kernel,
                                         const uint32_t workgroups[3]);
tandem_status_t tandem__fill_view_check(tandem_runtime_t *rt, tandem_view_t dst);
tandem_status_t tandem__copy_views_check(tandem_runtime_t *rt, tandem_view_t src,
                                         tandem_view_t dst);

#endif /* TANDEM_CORE_GRAPH_H_ */
