/* SPDX-License-Identifier: MIT */
/*
 * graph.c — recording graphs and turning them into plans.
 *
 * Recording checks each node completely before appending it, so a failed add
 * leaves the graph unchanged. Planning (tandem__plan_build, plan.c) infers
 * ordering from byte ranges and groups nodes into regions:
 *   - a region is a run of nodes of one lane that starts after its waits;
 *   - a node joins its lane's open region only if no other region waits on that
 *     region yet and the node needs no wait the region lacks; otherwise it
 *     opens a new region. This keeps independent chunks of a stream in
 *     separate regions so the lanes overlap, and keeps independent dispatches
 *     of one lane in one region with no barrier between them;
 *   - inside a region a barrier goes before a node only when it conflicts with
 *     a node since the region's last barrier.
 * Region creation order is a topological order: every wait names an earlier
 * region.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/access.h"
#include "core/buffer.h"
#include "core/buffer_int.h"
#include "core/graph.h"
#include "core/graph_int.h"
#include "core/kernel_int.h"
#include "core/node_kind.h"
#include "core/npu.h"
#include "core/npu_int.h"
#include "core/runtime.h"
#include "core/runtime_int.h"
#include "core/struct_size.h"

tandem_status_t tandem_graph_create(tandem_runtime_t *runtime, tandem_graph_t **out_graph) {
  if (!out_graph) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_graph is NULL");
  *out_graph = NULL;
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  tandem_graph_t *graph = calloc(1, sizeof *graph);
  if (!graph) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a graph");
  atomic_init(&graph->refs, 1);
  graph->runtime = runtime;
  tandem__runtime_retain(runtime);
  *out_graph = graph;
  return TANDEM_OK;
}

void tandem__node_retain(tandem__node_t *node) {
  for (uint32_t i = 0; i < node->view_count; i++) tandem_buffer_retain(node->views[i].buffer);
  tandem_buffer_retain(node->indirect.buffer);
  tandem_kernel_retain(node->kernel);
  tandem__npu_program_retain(node->program);
}

void tandem__node_release(tandem__node_t *node) {
  for (uint32_t i = 0; i < node->view_count; i++) tandem_buffer_release(node->views[i].buffer);
  tandem_buffer_release(node->indirect.buffer);
  tandem_kernel_release(node->kernel);
  tandem_npu_program_release(node->program);
}

void tandem_graph_retain(tandem_graph_t *graph) {
  if (graph) atomic_fetch_add(&graph->refs, 1);
}

void tandem_graph_release(tandem_graph_t *graph) {
  if (!graph || atomic_fetch_sub(&graph->refs, 1) != 1) return;
  for (uint32_t i = 0; i < graph->node_count; i++) tandem__node_release(&graph->nodes[i]);
  free(graph->nodes);
  for (uint32_t c = 0; c < graph->view_chunk_count; c++) free(graph->view_chunks[c]);
  free(graph->view_chunks);
  tandem_runtime_t *rt = graph->runtime;
  free(graph);
  tandem__runtime_release(rt);
}

uint32_t tandem_graph_node_count(const tandem_graph_t *graph) {
  return graph ? graph->node_count : 0;
}

/* Room for |count| views in the graph's chunked storage, or NULL. */
#define TANDEM__VIEW_CHUNK 4096u
static tandem_view_t *tandem__graph_views(tandem_graph_t *graph, uint32_t count) {
  assert(count <= TANDEM__VIEW_CHUNK);
  if (!graph->view_chunk_count || graph->view_chunk_used + count > TANDEM__VIEW_CHUNK) {
    tandem_view_t **chunks =
        realloc(graph->view_chunks, (graph->view_chunk_count + 1) * sizeof *chunks);
    if (!chunks) return NULL;
    graph->view_chunks = chunks;
    tandem_view_t *chunk = malloc(TANDEM__VIEW_CHUNK * sizeof *chunk);
    if (!chunk) return NULL;
    chunks[graph->view_chunk_count++] = chunk;
    graph->view_chunk_used = 0;
  }
  tandem_view_t *v = &graph->view_chunks[graph->view_chunk_count - 1][graph->view_chunk_used];
  graph->view_chunk_used += count;
  return v;
}

/* Appends |node| (a |what| node, for messages), retaining what it uses.
 * Refuses the node that would pass TANDEM_MAX_GRAPH_NODES (tandem.h says why). */
/* The runtime's GPU node |n| (a |what| node) runs on: its kernel's for a
 * dispatch, else its first view's; every view (and the indirect one) must be
 * on it. NPU runs stay on the NPU lane (their buffers are GPU 0's). */
static tandem_status_t tandem__node_gpu(const tandem__node_t *n, const char *what,
                                        uint32_t *out_gpu) {
  *out_gpu = 0;
  if (!tandem__node_info(n)->gpu) return TANDEM_OK;
  uint32_t g = n->kind == TANDEM__NODE_DISPATCH ? n->kernel->gpu
               : n->view_count                  ? n->views[0].buffer->gpu
                                                : 0;
  for (uint32_t v = 0; v < n->view_count; v++) {
    uint32_t on = n->views[v].buffer->gpu;
    if (on == g) continue;
    switch (n->kind) { /* no default: a new kind says how it refuses a second GPU */
      case TANDEM__NODE_COPY:
        return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                           "%s: the source is on GPU %u and the destination on GPU %u; a copy "
                           "node runs on one GPU. Move the bytes through the host: copy into a "
                           "HOST_VISIBLE buffer on GPU %u, map it after the submission, and "
                           "write a HOST_VISIBLE buffer on GPU %u (docs/design.md, \"Several "
                           "GPUs\")",
                           what, g, on, g, on);
      case TANDEM__NODE_DISPATCH:
        return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                           "%s: binding %u's buffer is on GPU %u, and kernel '%s' runs on GPU "
                           "%u; make the kernel on GPU %u too (tandem_kernel_desc_t.gpu) or bind "
                           "a buffer of GPU %u",
                           what, v, on, n->kernel->name, g, on, g);
      case TANDEM__NODE_FILL:
      case TANDEM__NODE_VULKAN_COMMANDS:
      case TANDEM__NODE_NPU_RUN: /* not a GPU node: returned above */
      case TANDEM__NODE_KIND_COUNT: break;
    }
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s: view %u's buffer is on GPU %u and view 0's on GPU %u; a node runs "
                       "on one GPU",
                       what, v, on, g);
  }
  if (n->kind == TANDEM__NODE_DISPATCH && n->indirect.buffer && n->indirect.buffer->gpu != g)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s: the indirect view's buffer is on GPU %u, and kernel '%s' runs on GPU "
                       "%u",
                       what, n->indirect.buffer->gpu, n->kernel->name, g);
  if (n->kind == TANDEM__NODE_VULKAN_COMMANDS && g != 0)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "%s: Vulkan commands nodes record into GPU 0's command buffers (interop "
                       "is GPU 0's); its buffers are on GPU %u",
                       what, g);
  *out_gpu = g;
  return TANDEM_OK;
}

static tandem_status_t tandem__graph_append(tandem_graph_t *graph, const tandem__node_t *given,
                                            const char *what) {
  /* The node's lane becomes its GPU's (core's lane ids, core/backend.h). */
  uint32_t g;
  TANDEM_RETURN_IF_ERROR(tandem__node_gpu(given, what, &g));
  tandem__node_t placed = *given;
  if (placed.lane != TANDEM_LANE_NPU) placed.lane = (tandem_lane_t)tandem__gpu_lane(g, placed.lane);
  const tandem__node_t *node = &placed;
  if (graph->node_count >= TANDEM_MAX_GRAPH_NODES)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "%s: the graph already holds %u nodes, the most one graph may hold "
                       "(TANDEM_MAX_GRAPH_NODES = %u: prepare's time and memory grow with "
                       "every node); split the work into several graphs and order them with "
                       "tandem_exec_submit_after",
                       what, graph->node_count, TANDEM_MAX_GRAPH_NODES);
  if (graph->node_count == graph->node_capacity) {
    uint32_t cap = graph->node_capacity ? graph->node_capacity * 2 : 16;
    if (cap > TANDEM_MAX_GRAPH_NODES) cap = TANDEM_MAX_GRAPH_NODES;
    tandem__node_t *nodes = realloc(graph->nodes, (size_t)cap * sizeof *nodes);
    if (!nodes)
      return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                         "%s: growing a graph of %u nodes to room for %u (%zu bytes)", what,
                         graph->node_count, cap, (size_t)cap * sizeof *nodes);
    graph->nodes = nodes;
    graph->node_capacity = cap;
  }
  tandem_view_t *views = NULL;
  if (node->view_count) {
    views = tandem__graph_views(graph, node->view_count);
    if (!views)
      return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "%s: growing a graph's view storage", what);
    memcpy(views, node->views, node->view_count * sizeof *views);
  }
  graph->nodes[graph->node_count] = *node;
  graph->nodes[graph->node_count].views = views;
  graph->view_total += node->view_count;
  tandem__node_retain(&graph->nodes[graph->node_count]);
  graph->node_count++;
  return TANDEM_OK;
}

static tandem_status_t tandem__lane_check(tandem_lane_t lane, const char *what) {
  if (lane == TANDEM_LANE_NPU)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s: the NPU lane (%d) runs only NPU programs (tandem_graph_add_npu_run); "
                       "a %s goes on a GPU lane (upload, compute, download) or "
                       "TANDEM_LANE_AUTO",
                       what, (int)lane, what);
  if (lane != TANDEM_LANE_AUTO && (lane < 0 || lane >= TANDEM_LANE_COUNT_GPU))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s: lane %d is not a tandem_lane_t (GPU lanes are 0..%d, or "
                       "TANDEM_LANE_AUTO)",
                       what, (int)lane, TANDEM_LANE_COUNT_GPU - 1);
  return TANDEM_OK;
}

/* GPU nodes need a GPU side: every placement but NPU_LOCAL has one. */
static tandem_status_t tandem__gpu_view_check(tandem_runtime_t *rt, tandem_view_t v,
                                              const char *what) {
  TANDEM_RETURN_IF_ERROR(tandem__view_check(rt, v, what));
  if (v.buffer->placement == TANDEM_PLACEMENT_NPU_LOCAL)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "%s: an NPU_LOCAL buffer is not visible to the GPU; use a SHARED buffer",
                       what);
  return TANDEM_OK;
}

tandem_status_t tandem__fill_view_check(tandem_runtime_t *rt, tandem_view_t dst) {
  TANDEM_RETURN_IF_ERROR(tandem__gpu_view_check(rt, dst, "fill destination"));
  if (dst.offset % 4 || dst.length % 4)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "fill: offset %llu and length %llu must both be multiples of 4",
                       (unsigned long long)dst.offset, (unsigned long long)dst.length);
  return TANDEM_OK;
}

tandem_status_t tandem__copy_views_check(tandem_runtime_t *rt, tandem_view_t src,
                                         tandem_view_t dst) {
  TANDEM_RETURN_IF_ERROR(tandem__gpu_view_check(rt, src, "copy source"));
  TANDEM_RETURN_IF_ERROR(tandem__gpu_view_check(rt, dst, "copy destination"));
  if (src.length != dst.length)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "copy: source is %llu bytes, destination %llu; they must be equal",
                       (unsigned long long)src.length, (unsigned long long)dst.length);
  if (src.buffer == dst.buffer &&
      tandem__ranges_overlap(src.offset, src.length, dst.offset, dst.length))
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "copy: source bytes %llu..%llu and destination bytes %llu..%llu overlap "
                       "in one buffer",
                       (unsigned long long)src.offset,
                       (unsigned long long)(src.offset + src.length),
                       (unsigned long long)dst.offset,
                       (unsigned long long)(dst.offset + dst.length));
  return TANDEM_OK;
}

tandem_status_t tandem_graph_add_fill(tandem_graph_t *graph, tandem_view_t dst, uint32_t pattern,
                                      tandem_lane_t lane) {
  if (!graph) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "graph is NULL");
  TANDEM_RETURN_IF_ERROR(tandem__lane_check(lane, "fill"));
  TANDEM_RETURN_IF_ERROR(tandem__fill_view_check(graph->runtime, dst));
  tandem__node_t node = {.kind = TANDEM__NODE_FILL,
                         .lane = lane == TANDEM_LANE_AUTO ? TANDEM_LANE_COMPUTE : lane,
                         .view_count = 1,
                         .views = &dst,
                         .pattern = pattern};
  return tandem__graph_append(graph, &node, "fill");
}

/* A copy between two GPUs, staged through host memory both import
 * (tandem__buffer_staging_pair): a download on the source GPU into the
 * staging, then an upload on the destination GPU from it, two nodes (the
 * user's lane, or download and upload). The planner and the tracker see one
 * staging memory, so the upload waits for the download (through the relay)
 * and the next run's download waits for this run's upload. */
static tandem_status_t tandem__graph_add_cross_copy(tandem_graph_t *graph, tandem_view_t src,
                                                    tandem_view_t dst, tandem_lane_t lane) {
  if (graph->node_count + 2 > TANDEM_MAX_GRAPH_NODES)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "copy between GPUs: it takes two nodes, and the graph holds %u of "
                       "TANDEM_MAX_GRAPH_NODES = %u",
                       graph->node_count, TANDEM_MAX_GRAPH_NODES);
  tandem_buffer_t *from = NULL, *to = NULL;
  TANDEM_RETURN_IF_ERROR(tandem__buffer_staging_pair(graph->runtime, src.buffer->gpu,
                                                     dst.buffer->gpu, src.length, &from, &to));
  tandem_view_t down[2] = {src, {from, 0, src.length}};
  tandem_view_t up[2] = {{to, 0, src.length}, dst};
  tandem__node_t a = {.kind = TANDEM__NODE_COPY,
                      .lane = lane == TANDEM_LANE_AUTO ? TANDEM_LANE_DOWNLOAD : lane,
                      .view_count = 2,
                      .views = down};
  tandem__node_t b = {.kind = TANDEM__NODE_COPY,
                      .lane = lane == TANDEM_LANE_AUTO ? TANDEM_LANE_UPLOAD : lane,
                      .view_count = 2,
                      .views = up};
  tandem_status_t s = tandem__graph_append(graph, &a, "copy between GPUs (download)");
  if (s == TANDEM_OK) {
    s = tandem__graph_append(graph, &b, "copy between GPUs (upload)");
    if (s != TANDEM_OK) { /* the graph keeps no half of a copy */
      tandem__node_release(&graph->nodes[--graph->node_count]);
      graph->view_total -= 2;
    }
  }
  /* The nodes hold their own references. */
  tandem_buffer_release(to);
  tandem_buffer_release(from);
  return s;
}

tandem_status_t tandem_graph_add_copy(tandem_graph_t *graph, tandem_view_t src, tandem_view_t dst,
                                      tandem_lane_t lane) {
  if (!graph) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "graph is NULL");
  TANDEM_RETURN_IF_ERROR(tandem__lane_check(lane, "copy"));
  TANDEM_RETURN_IF_ERROR(tandem__copy_views_check(graph->runtime, src, dst));
  if (src.buffer->gpu != dst.buffer->gpu)
    return tandem__graph_add_cross_copy(graph, src, dst, lane);
  if (lane == TANDEM_LANE_AUTO) {
    bool src_host = src.buffer->placement == TANDEM_PLACEMENT_HOST_VISIBLE;
    bool dst_host = dst.buffer->placement == TANDEM_PLACEMENT_HOST_VISIBLE;
    lane = src_host && !dst_host   ? TANDEM_LANE_UPLOAD
           : !src_host && dst_host ? TANDEM_LANE_DOWNLOAD
                                   : TANDEM_LANE_COMPUTE;
  }
  tandem_view_t views[2] = {src, dst};
  tandem__node_t node = {.kind = TANDEM__NODE_COPY, .lane = lane, .view_count = 2, .views = views};
  return tandem__graph_append(graph, &node, "copy");
}

/* Checks views[0..count) against |kernel|'s contract for a dispatch: GPU
 * visible, long enough, aligned, and no overlap in one buffer where either
 * binding writes. Shared by recording and tandem_exec_set_view. */
tandem_status_t tandem__dispatch_views_check(tandem_runtime_t *rt, const tandem_kernel_t *kernel,
                                             const tandem_view_t *views, uint32_t count) {
  tandem__gpu_t *gpu = tandem__gpu_at(rt, kernel->gpu); /* open: the kernel exists */
  for (uint32_t i = 0; i < count; i++) {
    const tandem_binding_contract_t *b = &kernel->bindings[i];
    tandem_view_t v = views[i];
    tandem_status_t s = tandem__gpu_view_check(rt, v, "dispatch view");
    if (s != TANDEM_OK) return tandem__annotate(s, "binding %u of '%s'", i, kernel->name);
    if (v.buffer->gpu != kernel->gpu)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "binding %u of '%s': the buffer is on GPU %u, and the kernel runs on "
                         "GPU %u; make the kernel on GPU %u too (tandem_kernel_desc_t.gpu) or "
                         "bind a buffer of GPU %u",
                         i, kernel->name, v.buffer->gpu, kernel->gpu, v.buffer->gpu, kernel->gpu);
    if (b->bytes != TANDEM_BYTES_VIEW && v.length < b->bytes)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "binding %u of '%s': view is %llu bytes, contract needs %llu", i,
                         kernel->name, (unsigned long long)v.length, (unsigned long long)b->bytes);
    /* A longer view would be bound (and tracked) only as far as the
     * contract's bytes: the kernel would silently compute part of it. */
    if (b->bytes != TANDEM_BYTES_VIEW && v.length > b->bytes)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "binding %u of '%s': view is %llu bytes, the contract's fixed size is "
                         "%llu; bind a view of exactly %llu bytes, or declare the binding's "
                         "bytes as TANDEM_BYTES_VIEW (0) so the kernel takes any view whole",
                         i, kernel->name, (unsigned long long)v.length,
                         (unsigned long long)b->bytes, (unsigned long long)b->bytes);
    if (b->bytes == TANDEM_BYTES_VIEW && v.length > gpu->max_storage_range)
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "binding %u of '%s': view-sized binding of %llu bytes exceeds the "
                         "device's maxStorageBufferRange %llu",
                         i, kernel->name, (unsigned long long)v.length,
                         (unsigned long long)gpu->max_storage_range);
    uint64_t align = b->alignment > gpu->storage_alignment ? b->alignment : gpu->storage_alignment;
    if (v.offset % align)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "binding %u of '%s': view offset %llu is not a multiple of %llu", i,
                         kernel->name, (unsigned long long)v.offset, (unsigned long long)align);
    for (uint32_t j = 0; j < i; j++) {
      const tandem_binding_contract_t *c = &kernel->bindings[j];
      /* Bindings the contract lets alias: tracked as READ_WRITE (kernel.c). */
      uint32_t pair = (1u << i) | (1u << j);
      if ((kernel->aliased_bindings & pair) == pair) continue;
      if (views[j].buffer == v.buffer && tandem__accesses_conflict(b->access, c->access) &&
          tandem__ranges_overlap(views[j].offset, tandem__binding_bytes(c, views[j]), v.offset,
                                 tandem__binding_bytes(b, v)))
        return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                           "bindings %u and %u of '%s' overlap in one buffer and at least one "
                           "writes (if the kernel means them to alias, name both in the "
                           "kernel's aliased_bindings)",
                           j, i, kernel->name);
    }
  }
  return TANDEM_OK;
}

/* Checks a direct workgroup count against the device's limits. */
tandem_status_t tandem__workgroups_check(tandem_runtime_t *rt, const tandem_kernel_t *kernel,
                                         const uint32_t wg[3]) {
  tandem__gpu_t *gpu = tandem__gpu_at(rt, kernel->gpu);
  for (int i = 0; i < 3; i++)
    if (wg[i] == 0 || wg[i] > gpu->max_workgroups[i])
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "dispatch of '%s': workgroups[%d] is %u; it must be 1..%u "
                         "(maxComputeWorkGroupCount)",
                         kernel->name, i, wg[i], gpu->max_workgroups[i]);
  return TANDEM_OK;
}

tandem_status_t tandem_graph_add_dispatch_node(tandem_graph_t *graph,
                                               const tandem_dispatch_desc_t *user_desc,
                                               uint32_t *out_node) {
  if (out_node) *out_node = UINT32_MAX;
  if (!graph || !user_desc)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "graph or desc is NULL");
  TANDEM__STRUCT_IN(tandem_dispatch_desc, user_desc, known, TANDEM__OLDEST_DISPATCH_DESC);
  const tandem_dispatch_desc_t *desc = &known;
  if (!desc->kernel) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "desc->kernel is NULL");
  tandem_kernel_t *kernel = desc->kernel;
  tandem_runtime_t *rt = graph->runtime;
  if (kernel->runtime != rt)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "kernel '%s' belongs to another runtime",
                       kernel->name);
  if (desc->view_count != kernel->binding_count)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "dispatch of '%s': %u views given, the contract has %u bindings",
                       kernel->name, desc->view_count, kernel->binding_count);
  if (desc->view_count && !desc->views)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "dispatch of '%s': views is NULL",
                       kernel->name);
  if (desc->push_constant_bytes != kernel->push_constant_bytes)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "dispatch of '%s': %u push-constant bytes given, the contract needs %u",
                       kernel->name, desc->push_constant_bytes, kernel->push_constant_bytes);
  if (desc->push_constant_bytes && !desc->push_constants)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "dispatch of '%s': push_constants is NULL",
                       kernel->name);
  tandem__node_t node = {.kind = TANDEM__NODE_DISPATCH,
                         .lane = TANDEM_LANE_COMPUTE,
                         .kernel = kernel,
                         .view_count = desc->view_count,
                         .push_bytes = desc->push_constant_bytes};
  const uint32_t *wg = desc->workgroups;
  bool wg_given = wg[0] || wg[1] || wg[2];
  if (desc->indirect.buffer) {
    if (wg_given)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "dispatch of '%s': give either workgroups or an indirect view, not "
                         "both",
                         kernel->name);
    tandem_status_t s = tandem__gpu_view_check(rt, desc->indirect, "indirect view");
    if (s != TANDEM_OK) return tandem__annotate(s, "dispatch of '%s'", kernel->name);
    if (desc->indirect.offset % 4 || desc->indirect.length < 12)
      return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                         "dispatch of '%s': the indirect view (offset %llu, %llu bytes) must "
                         "start at a multiple of 4 and hold 12 bytes (x, y, z counts)",
                         kernel->name, (unsigned long long)desc->indirect.offset,
                         (unsigned long long)desc->indirect.length);
    if (desc->indirect.buffer->no_indirect)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "dispatch of '%s': the indirect view's buffer was adopted without "
                         "indirect-buffer usage (VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT); create "
                         "the VkBuffer with it to read dispatch sizes from it",
                         kernel->name);
    node.indirect = (tandem_view_t){desc->indirect.buffer, desc->indirect.offset, 12};
  } else {
    const uint32_t *use = wg_given ? wg : kernel->workgroups;
    if (!use[0] && !use[1] && !use[2])
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "dispatch of '%s': the kernel has no default workgroup count; give "
                         "workgroups (or an indirect view) in the dispatch",
                         kernel->name);
    TANDEM_RETURN_IF_ERROR(tandem__workgroups_check(rt, kernel, use));
    memcpy(node.workgroups, use, sizeof node.workgroups);
  }
  TANDEM_RETURN_IF_ERROR(tandem__dispatch_views_check(rt, kernel, desc->views, desc->view_count));
  node.views = (tandem_view_t *)desc->views; /* copied by tandem__graph_append */
  if (desc->push_constant_bytes) memcpy(node.push, desc->push_constants, desc->push_constant_bytes);
  uint32_t id = graph->node_count;
  char what[160];
  snprintf(what, sizeof what, "dispatch of '%s'", kernel->name);
  TANDEM_RETURN_IF_ERROR(tandem__graph_append(graph, &node, what));
  if (out_node) *out_node = id;
  return TANDEM_OK;
}

tandem_status_t tandem_graph_add_dispatch(tandem_graph_t *graph, tandem_kernel_t *kernel,
                                          const tandem_view_t *views, uint32_t view_count,
                                          const void *push_constants,
                                          uint32_t push_constant_bytes) {
  tandem_dispatch_desc_t desc = {.struct_size = sizeof desc,
                                 .kernel = kernel,
                                 .views = views,
                                 .view_count = view_count,
                                 .push_constants = push_constants,
                                 .push_constant_bytes = push_constant_bytes};
  return tandem_graph_add_dispatch_node(graph, &desc, NULL);
}

tandem_status_t tandem_graph_add_npu_run(tandem_graph_t *graph, tandem_npu_program_t *program,
                                         const tandem_view_t *views, uint32_t view_count,
                                         const uint32_t *scalars, uint32_t scalar_count) {
  if (!graph || !program)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "graph or program is NULL");
  tandem_runtime_t *rt = graph->runtime;
  if (program->runtime != rt)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "NPU program '%s' belongs to another runtime",
                       program->name);
  if (view_count != program->binding_count)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "NPU run of '%s': %u views given, the contract has %u bindings",
                       program->name, view_count, program->binding_count);
  if (scalar_count != program->scalar_count)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "NPU run of '%s': %u scalars given, the contract has %u (in 32-bit "
                       "words: a 64-bit scalar takes two)",
                       program->name, scalar_count, program->scalar_count);
  if ((view_count && !views) || (scalar_count && !scalars))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "NPU run of '%s': %s is NULL", program->name,
                       view_count && !views ? "views" : "scalars");
  tandem__node_t node = {.kind = TANDEM__NODE_NPU_RUN,
                         .lane = TANDEM_LANE_NPU,
                         .program = program,
                         .view_count = view_count,
                         .scalar_count = scalar_count};
  for (uint32_t i = 0; i < view_count; i++) {
    const tandem_binding_contract_t *b = &program->bindings[i];
    tandem_view_t v = views[i];
    tandem_status_t s = tandem__view_check(rt, v, "NPU run view");
    if (s != TANDEM_OK) return tandem__annotate(s, "binding %u of '%s'", i, program->name);
    if (!v.buffer->npu_bo)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "binding %u of '%s': a %s buffer has no NPU side; NPU runs need SHARED "
                         "or NPU_LOCAL buffers",
                         i, program->name, tandem_placement_name(v.buffer->placement));
    if (v.offset != 0)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "binding %u of '%s': view offset %llu; an NPU kernel argument is a whole "
                         "buffer object from its start (XRT 2.13's C API has no sub-buffers here)",
                         i, program->name, (unsigned long long)v.offset);
    if (b->bytes != TANDEM_BYTES_VIEW && v.length < b->bytes)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "binding %u of '%s': view is %llu bytes, contract needs %llu", i,
                         program->name, (unsigned long long)v.length, (unsigned long long)b->bytes);
    for (uint32_t j = 0; j < i; j++) {
      const tandem_binding_contract_t *c = &program->bindings[j];
      if (views[j].buffer == v.buffer && tandem__accesses_conflict(b->access, c->access))
        return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                           "bindings %u and %u of '%s' are one buffer and at least one writes", j,
                           i, program->name);
    }
  }
  node.views = (tandem_view_t *)views; /* copied by tandem__graph_append */
  if (scalar_count) memcpy(node.scalars, scalars, scalar_count * sizeof *scalars);
  char what[160];
  snprintf(what, sizeof what, "NPU run of '%s'", program->name);
  return tandem__graph_append(graph, &node, what);
}

_Static_assert(2 * TANDEM_MAX_BINDINGS <= 64, "access_bits holds 2 bits per declared view");

tandem_status_t tandem_graph_add_vulkan_commands(tandem_graph_t *graph, tandem_lane_t lane,
                                                 const tandem_access_decl_t *accesses,
                                                 uint32_t access_count,
                                                 tandem_vulkan_record_fn record, void *user) {
  if (!graph || !record)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "Vulkan commands: %s is NULL",
                       graph ? "the record callback" : "graph");
  tandem_runtime_t *rt = graph->runtime;
  uint32_t id = graph->node_count;
  if (lane != TANDEM_LANE_AUTO && (lane < 0 || lane >= TANDEM_LANE_COUNT_GPU))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "Vulkan commands node %u: lane %d is not a GPU lane (upload, compute or "
                       "download; AUTO is compute)",
                       id, (int)lane);
  if (access_count > TANDEM_MAX_BINDINGS)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "Vulkan commands node %u: %u accesses declared, at most %u "
                       "(TANDEM_MAX_BINDINGS); split the commands into several nodes",
                       id, access_count, TANDEM_MAX_BINDINGS);
  if (access_count && !accesses)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "Vulkan commands node %u: accesses is NULL with access_count %u", id,
                       access_count);
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(rt, &gpu));
  tandem_vulkan_handles_t handles;
  tandem_vulkan_handles_init(&handles);
  tandem__gpu_native_handles(gpu, &handles);
  if (!handles.device)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "Vulkan commands node %u: the runtime's GPU backend '%s' has no VkDevice "
                       "to record Vulkan commands for",
                       id, rt->gpus[0].backend->name);
  tandem_view_t views[TANDEM_MAX_BINDINGS];
  tandem__node_t node = {.kind = TANDEM__NODE_VULKAN_COMMANDS,
                         .lane = lane == TANDEM_LANE_AUTO ? TANDEM_LANE_COMPUTE : lane,
                         .view_count = access_count,
                         .views = views,
                         .record = record,
                         .record_user = user};
  for (uint32_t i = 0; i < access_count; i++) {
    tandem_access_t a = accesses[i].access;
    if (a != TANDEM_ACCESS_READ && a != TANDEM_ACCESS_WRITE && a != TANDEM_ACCESS_READ_WRITE)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "access %u of Vulkan commands node %u: %d is not a tandem_access_t "
                         "(READ, WRITE or READ_WRITE)",
                         i, id, (int)a);
    tandem_status_t s = tandem__gpu_view_check(rt, accesses[i].view, "view");
    if (s != TANDEM_OK) return tandem__annotate(s, "access %u of Vulkan commands node %u", i, id);
    views[i] = accesses[i].view;
    node.access_bits |= (uint64_t)a << (2 * i);
  }
  char what[64];
  snprintf(what, sizeof what, "Vulkan commands node %u", id);
  return tandem__graph_append(graph, &node, what);
}
