/* SPDX-License-Identifier: MIT */
/*
 * oneshot.c — the one-call helpers of a short first program: a buffer made
 * from host data, host data written into or read out of a view, and a graph
 * run once. They are built only from the public calls a program would make
 * itself (buffers, maps, a copy node, prepare, submit, wait), so they keep
 * the explicit model's rules and counters: a GPU_LOCAL view goes through a
 * HOST_VISIBLE staging buffer and one copy node on the upload or download
 * lane, which statistics and lane info count like any other copy; a view the
 * host can map is written or read through a map, with no copy. Each blocks
 * until its work is done and prepares a graph per call: for work repeated in
 * a loop, prepare the graph once and submit it.
 *
 * The one-shot scoped handoffs (tandem_vulkan.h) are here too: the user's
 * own Vulkan commands, or own submission, as a one-node, one-slot
 * executable whose completion holds it (handoff.c builds the scope).
 */
#include <stdlib.h>
#include <string.h>

#include "core/buffer.h"
#include "core/buffer_int.h"
#include "core/prepare.h"
#include "core/runtime_int.h"
#include "core/submit.h"
#include "tandem/tandem_vulkan.h"

tandem_status_t tandem_graph_run(tandem_graph_t *graph) {
  if (!graph) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "graph is NULL");
  tandem_exec_t *exec = NULL;
  TANDEM_RETURN_IF_ERROR(tandem_graph_prepare(graph, &exec));
  tandem_completion_t *done = NULL;
  tandem_status_t s = tandem_exec_submit(exec, &done);
  if (s == TANDEM_OK) s = tandem_completion_wait(done);
  /* The failure's message survives the releases (they do not fail). */
  tandem_completion_release(done);
  tandem_exec_release(exec);
  return s;
}

/* Whether the host can map |view|'s buffer (no staging needed). */
static bool tandem__host_mappable(tandem_view_t view) {
  return view.buffer->placement != TANDEM_PLACEMENT_GPU_LOCAL;
}

/* One copy through a fresh HOST_VISIBLE staging buffer of |view|'s length:
 * |src| into staging, staging into |view| (upload); or |view| into staging,
 * staging into |dst| (download). */
static tandem_status_t tandem__staged(tandem_view_t view, const void *src, void *dst) {
  tandem_runtime_t *rt = view.buffer->runtime;
  tandem_buffer_t *staging = NULL;
  TANDEM_RETURN_IF_ERROR(
      tandem_buffer_create(rt, view.length, TANDEM_PLACEMENT_HOST_VISIBLE, &staging));
  tandem_view_t host = tandem_buffer_whole(staging);
  tandem_map_t map;
  tandem_status_t s = TANDEM_OK;
  if (src) {
    s = tandem_map_write(host, &map);
    if (s == TANDEM_OK) {
      memcpy(map.data, src, view.length);
      tandem_unmap(&map);
    }
  }
  tandem_graph_t *graph = NULL;
  if (s == TANDEM_OK) s = tandem_graph_create(rt, &graph);
  if (s == TANDEM_OK)
    s = src ? tandem_graph_add_copy(graph, host, view, TANDEM_LANE_AUTO)
            : tandem_graph_add_copy(graph, view, host, TANDEM_LANE_AUTO);
  if (s == TANDEM_OK) s = tandem_graph_run(graph);
  tandem_graph_release(graph);
  if (s == TANDEM_OK && dst) {
    s = tandem_map_read(host, &map);
    if (s == TANDEM_OK) {
      memcpy(dst, map.data, view.length);
      tandem_unmap(&map);
    }
  }
  tandem_buffer_release(staging);
  return s;
}

tandem_status_t tandem_buffer_write_staged(tandem_view_t view, const void *data) {
  if (!view.buffer || !data)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "write_staged: %s is NULL",
                       view.buffer ? "data" : "the view's buffer");
  tandem_status_t s = tandem__view_check(view.buffer->runtime, view, "write_staged view");
  if (s != TANDEM_OK) return s;
  if (!tandem__host_mappable(view)) return tandem__staged(view, data, NULL);
  tandem_map_t map;
  TANDEM_RETURN_IF_ERROR(tandem_map_write(view, &map));
  memcpy(map.data, data, view.length);
  tandem_unmap(&map);
  return TANDEM_OK;
}

tandem_status_t tandem_buffer_read_staged(tandem_view_t view, void *out_data) {
  if (!view.buffer || !out_data)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "read_staged: %s is NULL",
                       view.buffer ? "out_data" : "the view's buffer");
  tandem_status_t s = tandem__view_check(view.buffer->runtime, view, "read_staged view");
  if (s != TANDEM_OK) return s;
  if (!tandem__host_mappable(view)) return tandem__staged(view, NULL, out_data);
  tandem_map_t map;
  TANDEM_RETURN_IF_ERROR(tandem_map_read(view, &map));
  memcpy(out_data, map.data, view.length);
  tandem_unmap(&map);
  return TANDEM_OK;
}

tandem_status_t tandem_buffer_create_staged(tandem_runtime_t *runtime, const void *data,
                                            uint64_t size, tandem_placement_t placement,
                                            tandem_buffer_t **out_buffer) {
  if (!out_buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_buffer is NULL");
  *out_buffer = NULL;
  if (!data) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "create_staged: data is NULL");
  tandem_buffer_t *buffer = NULL;
  TANDEM_RETURN_IF_ERROR(tandem_buffer_create(runtime, size, placement, &buffer));
  tandem_status_t s = tandem_buffer_write_staged(tandem_buffer_whole(buffer), data);
  if (s != TANDEM_OK) {
    tandem_buffer_release(buffer);
    return s;
  }
  *out_buffer = buffer;
  return TANDEM_OK;
}

tandem_status_t tandem_runtime_run_vulkan_commands(tandem_runtime_t *runtime, tandem_lane_t lane,
                                                   const tandem_access_decl_t *accesses,
                                                   uint32_t access_count,
                                                   tandem_vulkan_record_fn record, void *user,
                                                   tandem_completion_t **out_completion) {
  if (!out_completion) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_completion is NULL");
  *out_completion = NULL;
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  tandem_graph_t *graph = NULL;
  tandem_exec_t *exec = NULL;
  tandem_status_t s = tandem_graph_create(runtime, &graph);
  if (s == TANDEM_OK)
    s = tandem_graph_add_vulkan_commands(graph, lane, accesses, access_count, record, user);
  /* One slot: the callback records once, and the executable lives exactly
   * as long as the completion (which holds its reference). */
  if (s == TANDEM_OK) s = tandem__graph_prepare_slots(graph, 1, &exec);
  if (s == TANDEM_OK) s = tandem_exec_submit(exec, out_completion);
  tandem_exec_release(exec); /* keeps the message; the completion holds exec */
  tandem_graph_release(graph);
  return s;
}

/* The node of a submit handoff records nothing: its region only waits. */
static tandem_status_t tandem__record_nothing(void *user, const tandem_vulkan_scope_t *scope) {
  (void)user;
  (void)scope;
  return TANDEM_OK;
}

tandem_status_t tandem_runtime_submit_vulkan(tandem_runtime_t *runtime, tandem_lane_t lane,
                                             const tandem_access_decl_t *accesses,
                                             uint32_t access_count, tandem_vulkan_submit_fn submit,
                                             void *user, tandem_completion_t **out_completion) {
  if (!out_completion) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_completion is NULL");
  *out_completion = NULL;
  if (!runtime || !submit)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "Vulkan submit: %s is NULL",
                       runtime ? "the submit callback" : "runtime");
  tandem_graph_t *graph = NULL;
  tandem_exec_t *exec = NULL;
  tandem_status_t s = tandem_graph_create(runtime, &graph);
  if (s == TANDEM_OK)
    s = tandem_graph_add_vulkan_commands(graph, lane, accesses, access_count,
                                         tandem__record_nothing, NULL);
  if (s == TANDEM_OK) s = tandem__graph_prepare_slots(graph, 1, &exec);
  if (s == TANDEM_OK) s = tandem__exec_submit_external(exec, submit, user, out_completion);
  tandem_exec_release(exec); /* keeps the message; the completion holds exec */
  tandem_graph_release(graph);
  return s;
}
