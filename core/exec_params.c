/* SPDX-License-Identifier: MIT */
/*
 * exec_params.c — parameters of a prepared executable that change per
 * submission without preparing again (the cudaGraphExecKernelNodeSetParams
 * idea, done safely): push constants and workgroup counts of dispatch nodes,
 * and the views of dispatch, fill and copy nodes.
 *
 * A set writes the plan's node (the current parameters) and bumps its
 * region's version, both under runtime->mutex. Nothing in flight changes: each
 * slot keeps its own command buffers, descriptor sets and retained views, and
 * the next submit re-records only the regions whose version moved, for the
 * slot it uses (core/submit.c). A new view range updates the executable's
 * access list, so later submissions are ordered against in-flight work by the
 * new bytes; ordering inside the graph was fixed at prepare, so a range that
 * would need an order the plan lacks is refused (tandem__plan_orders).
 */
#include <assert.h>
#include <string.h>

#include "core/access.h"
#include "core/buffer_int.h"
#include "core/exec_int.h"
#include "core/graph.h"
#include "core/graph_int.h"
#include "core/kernel_int.h"
#include "core/node_kind.h"
#include "core/plan.h"
#include "core/runtime_int.h"

/* Node |node| of |exec| when it is of a kind |what| accepts (a dispatch, or
 * with |any_gpu| any GPU node), or a failure naming what is wrong. */
static tandem_status_t tandem__param_node(tandem_exec_t *exec, uint32_t node, const char *what,
                                          bool any_gpu, tandem__node_t **out) {
  *out = NULL;
  if (!exec) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "%s: exec is NULL", what);
  if (node >= exec->plan.node_count)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s: node %u is out of range; the executable has nodes 0..%u", what, node,
                       exec->plan.node_count - 1);
  tandem__node_t *n = &exec->plan.nodes[node];
  bool ok = n->kind == TANDEM__NODE_DISPATCH || (any_gpu && tandem__node_info(n)->views_settable);
  if (!ok)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "%s: node %u is a %s node; %s", what, node,
                       tandem__node_info(n)->name,
                       any_gpu ? "NPU runs and Vulkan commands nodes keep the views they were "
                                 "recorded with"
                               : "only dispatch nodes take this parameter");
  *out = n;
  return TANDEM_OK;
}

/* The name of node |n| for messages: its kernel's, or its kind's. */
static const char *tandem__node_label(const tandem__node_t *n) {
  return tandem__node_info(n)->label(n);
}

tandem_status_t tandem_exec_set_push_constants(tandem_exec_t *exec, uint32_t node,
                                               const void *push_constants,
                                               uint32_t push_constant_bytes) {
  tandem__node_t *n;
  TANDEM_RETURN_IF_ERROR(tandem__param_node(exec, node, "set_push_constants", false, &n));
  if (push_constant_bytes != n->kernel->push_constant_bytes)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "node %u ('%s'): %u push-constant bytes given, the contract needs %u", node,
                       n->kernel->name, push_constant_bytes, n->kernel->push_constant_bytes);
  if (push_constant_bytes && !push_constants)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "node %u ('%s'): push_constants is NULL",
                       node, n->kernel->name);
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  if (memcmp(n->push, push_constants, push_constant_bytes) != 0) {
    memcpy(n->push, push_constants, push_constant_bytes);
    exec->region_version[exec->plan.node_region[node]]++;
  }
  pthread_mutex_unlock(&rt->mutex);
  return TANDEM_OK;
}

tandem_status_t tandem_exec_set_workgroups(tandem_exec_t *exec, uint32_t node,
                                           const uint32_t workgroups[3]) {
  tandem__node_t *n;
  TANDEM_RETURN_IF_ERROR(tandem__param_node(exec, node, "set_workgroups", false, &n));
  if (!workgroups)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "node %u: workgroups is NULL", node);
  if (n->indirect.buffer)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "node %u ('%s') is an indirect dispatch: its counts are read on the GPU; "
                       "write them into its indirect view instead",
                       node, n->kernel->name);
  TANDEM_RETURN_IF_ERROR(tandem__workgroups_check(exec->runtime, n->kernel, workgroups));
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  if (memcmp(n->workgroups, workgroups, sizeof n->workgroups) != 0) {
    memcpy(n->workgroups, workgroups, sizeof n->workgroups);
    exec->region_version[exec->plan.node_region[node]]++;
  }
  pthread_mutex_unlock(&rt->mutex);
  return TANDEM_OK;
}

/* A GPU node's view over a SHARED buffer that an NPU node of the same graph
 * uses does not move (nor move onto one): the barriers that hand those bytes
 * between the GPU and the NPU (plan.c, handoffs) were placed for the
 * prepared ranges, and a moved view would cross without them. */
static tandem_status_t tandem__param_npu_crossing_check(const tandem_exec_t *exec, uint32_t node,
                                                        uint32_t binding,
                                                        const tandem_buffer_t *old_buffer,
                                                        const tandem_buffer_t *new_buffer) {
  const tandem__plan_t *plan = &exec->plan;
  const tandem__node_t *n = &plan->nodes[node];
  if (!tandem__node_info(n)->gpu) return TANDEM_OK;
  for (uint32_t m = 0; m < plan->node_count; m++) {
    const tandem__node_t *npu = &plan->nodes[m];
    if (tandem__node_info(npu)->gpu) continue;
    tandem__access_t acc[TANDEM__MAX_NODE_ACCESSES];
    uint32_t count = tandem__node_accesses(npu, acc);
    for (uint32_t x = 0; x < count; x++) {
      const tandem_buffer_t *b = acc[x].buffer;
      if (b->placement != TANDEM_PLACEMENT_SHARED || (b != old_buffer && b != new_buffer)) continue;
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "node %u binding %u ('%s'): %s a SHARED buffer that NPU node %u ('%s') "
                         "of this graph uses; the barriers that hand its bytes between the GPU "
                         "and the NPU are placed when the graph is prepared, so this view cannot "
                         "move there: prepare the graph again with the new view",
                         node, binding, tandem__node_info(n)->label(n),
                         b == old_buffer ? "its view is on" : "the new view is on", m,
                         tandem__node_info(npu)->label(npu));
    }
  }
  return TANDEM_OK;
}

/* Fails with CONTRACT when |access| of node |node| would conflict with an
 * access of another node that the prepared plan does not order. */
static tandem_status_t tandem__param_order_check_locked(const tandem_exec_t *exec, uint32_t node,
                                                        uint32_t binding,
                                                        const tandem__access_t *access) {
  const tandem__plan_t *plan = &exec->plan;
  for (uint32_t j = 0; j < plan->node_count; j++) {
    if (j == node) continue;
    tandem__access_t acc[TANDEM__MAX_NODE_ACCESSES];
    uint32_t m = tandem__node_accesses(&plan->nodes[j], acc);
    for (uint32_t x = 0; x < m; x++) {
      if (acc[x].buffer != access->buffer ||
          !tandem__accesses_conflict(acc[x].access, access->access) ||
          !tandem__ranges_overlap(acc[x].offset, acc[x].length, access->offset, access->length))
        continue;
      uint32_t a = j < node ? j : node, b = j < node ? node : j;
      if (tandem__plan_orders(plan, a, b)) continue;
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "node %u binding %u ('%s'): bytes %llu..%llu would conflict with "
                         "node %u, and the prepared graph does not order node %u before node "
                         "%u; choose a range that does not overlap, or record the graph with "
                         "that dependency and prepare it again",
                         node, binding, tandem__node_label(&plan->nodes[node]),
                         (unsigned long long)access->offset,
                         (unsigned long long)(access->offset + access->length), j, a, b);
    }
  }
  return TANDEM_OK;
}

/* Checks the views of a fill or copy node after one of them changed: the
 * rules of tandem_graph_add_fill / add_copy, with the length fixed at record
 * time (a copy's bytes are counted per lane at prepare). */
static tandem_status_t tandem__transfer_views_check(tandem_runtime_t *rt, const tandem__node_t *n,
                                                    const tandem_view_t *views, uint32_t binding,
                                                    uint32_t node) {
  tandem_view_t v = views[binding];
  if (v.buffer && v.length != n->views[binding].length)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "node %u (%s): the new view is %llu bytes, the prepared one %llu; a %s "
                       "node keeps its length",
                       node, tandem__node_info(n)->name, (unsigned long long)v.length,
                       (unsigned long long)n->views[binding].length, tandem__node_info(n)->name);
  switch (n->kind) { /* no default: a new settable kind names its checks here */
    case TANDEM__NODE_FILL: return tandem__fill_view_check(rt, v);
    case TANDEM__NODE_COPY: return tandem__copy_views_check(rt, views[0], views[1]);
    case TANDEM__NODE_DISPATCH:
    case TANDEM__NODE_NPU_RUN:
    case TANDEM__NODE_VULKAN_COMMANDS:
    case TANDEM__NODE_KIND_COUNT: break;
  }
  assert(!"not a transfer node");
  return TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "node %u: not a fill or copy node", node);
}

tandem_status_t tandem_exec_set_view(tandem_exec_t *exec, uint32_t node, uint32_t binding,
                                     tandem_view_t view) {
  tandem__node_t *n;
  TANDEM_RETURN_IF_ERROR(tandem__param_node(exec, node, "set_view", true, &n));
  if (binding >= n->view_count)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "node %u ('%s'): binding %u is out of range; the node has %u view%s", node,
                       tandem__node_label(n), binding, n->view_count,
                       n->view_count == 1 ? "" : "s");
  const tandem_buffer_t *held = n->views[binding].buffer;
  if (held && (held->host_owned || held->tracked_as))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "node %u binding %u: the staging memory of a copy between GPUs is "
                       "tandem's; change the copy's other view",
                       node, binding);
  tandem_runtime_t *rt = exec->runtime;
  tandem_buffer_t *old = NULL;
  tandem_status_t s = TANDEM_OK;
  pthread_mutex_lock(&rt->mutex);
  tandem_view_t views[TANDEM_MAX_BINDINGS];
  memcpy(views, n->views, n->view_count * sizeof *views);
  views[binding] = view;
  if (view.buffer && n->views[binding].buffer &&
      view.buffer->placement != n->views[binding].buffer->placement) {
    s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                    "node %u binding %u ('%s'): the new view is in a %s buffer, the prepared "
                    "one in a %s buffer; a view may change its range or buffer, not its "
                    "placement",
                    node, binding, tandem__node_label(n),
                    tandem_placement_name(view.buffer->placement),
                    tandem_placement_name(n->views[binding].buffer->placement));
  }
  if (s == TANDEM_OK && view.buffer && n->views[binding].buffer &&
      view.buffer->gpu != n->views[binding].buffer->gpu)
    s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                    "node %u binding %u ('%s'): the new view's buffer is on GPU %u, the node "
                    "runs on GPU %u; a view may change its buffer, not its GPU",
                    node, binding, tandem__node_label(n), view.buffer->gpu,
                    n->views[binding].buffer->gpu);
  if (s == TANDEM_OK)
    s = n->kind == TANDEM__NODE_DISPATCH
            ? tandem__dispatch_views_check(rt, n->kernel, views, n->view_count)
            : tandem__transfer_views_check(rt, n, views, binding, node);
  /* The access the moved view makes, as tandem__node_accesses would. */
  const tandem__node_kind_info_t *kind = tandem__node_info(n);
  tandem__access_t access = {view.buffer, view.offset, kind->view_bytes(n, binding, view),
                             kind->view_access(n, binding)};
  if (s == TANDEM_OK && memcmp(&n->views[binding], &view, sizeof view) != 0)
    s = tandem__param_npu_crossing_check(exec, node, binding, n->views[binding].buffer,
                                         view.buffer);
  if (s == TANDEM_OK) s = tandem__param_order_check_locked(exec, node, binding, &access);
  if (s == TANDEM_OK && memcmp(&n->views[binding], &view, sizeof view) != 0) {
    old = n->views[binding].buffer;
    tandem_buffer_retain(view.buffer);
    n->views[binding] = view;
    exec->accesses[exec->node_access[node] + binding] = access;
    exec->region_version[exec->plan.node_region[node]]++;
  }
  pthread_mutex_unlock(&rt->mutex);
  /* Outside the lock: the plan's last reference may free device memory (the
   * slots hold their own references to what they bind). */
  tandem_buffer_release(old);
  if (s != TANDEM_OK) return tandem__annotate(s, "tandem_exec_set_view");
  return TANDEM_OK;
}
