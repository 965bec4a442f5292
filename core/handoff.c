/* SPDX-License-Identifier: MIT */
/*
 * handoff.c — the scoped handoff (tandem_vulkan.h, "Scoped handoff"): the
 * user's own Vulkan commands as a graph node. graph.c records the node (its
 * declared views and accesses, the callback), plan.c orders it like any node
 * through tandem__node_accesses, and the backend, when it records the node's
 * region, calls tandem__vulkan_commands_record here with the command buffer
 * it is recording. This file builds the scope the callback sees and answers
 * tandem_vulkan_scope_view from it; the one-shot handoffs
 * (tandem_runtime_run_vulkan_commands, tandem_runtime_submit_vulkan) are
 * one-node executables made in oneshot.c.
 *
 * The external-submit form (tandem_runtime_submit_vulkan) is a one-node,
 * one-slot executable whose node records nothing: submit.c computes
 * the region's waits as for any submission, then, still under the tracker
 * lock and before the region goes to its queue, tandem__vulkan_submit_call
 * hands those waits (lane timelines and values) to the user's callback,
 * which submits its own work; the region then also waits, on the GPU, for
 * the timeline value the callback returned. The tracker records the declared
 * accesses at the region's value, so everything later that conflicts waits
 * for the user's work through it.
 *
 * Core stays free of Vulkan: the command buffer and every handle are void *
 * here, and the VkBuffer of a view comes from the backend (buffer_vulkan).
 *
 * A scope lives on the recording thread's stack for the duration of one
 * callback. Its state's |live| is set just before the call and cleared just
 * after, so a scope kept past its callback is refused by the accessor (as far
 * as the memory still holds it; the rules forbid keeping it).
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "core/buffer_int.h"
#include "core/graph_int.h"
#include "core/handoff.h"
#include "core/plan_int.h"
#include "core/runtime_int.h"
#include "tandem/tandem_vulkan.h"

/* What tandem_vulkan_scope_t.internal points at. */
typedef struct tandem__scope_state {
  uint64_t live; /* TANDEM__SCOPE_LIVE during the callback, 0 otherwise */
  const tandem__node_t *node;
  uint32_t node_index;
} tandem__scope_state_t;

#define TANDEM__SCOPE_LIVE 0x68616e646f666621ull /* "handoff!" */

tandem_status_t tandem__vulkan_commands_record(tandem__gpu_t *gpu, const tandem__plan_t *plan,
                                               uint32_t node_index, void *command_buffer) {
  const tandem__node_t *node = &plan->nodes[node_index];
  assert(node->kind == TANDEM__NODE_VULKAN_COMMANDS && node->record);
  assert(node->lane >= 0 && node->lane < TANDEM_LANE_COUNT_GPU && command_buffer);
  tandem__scope_state_t state = {.live = TANDEM__SCOPE_LIVE,
                                 .node = node,
                                 .node_index = node_index};
  tandem_vulkan_scope_t scope = {.struct_size = sizeof scope,
                                 .command_buffer = command_buffer,
                                 .lane = node->lane,
                                 .node = node_index,
                                 .access_count = node->view_count,
                                 .internal = &state};
  tandem_vulkan_handles_init(&scope.handles);
  tandem__gpu_native_handles(gpu, &scope.handles);
  scope.queue_family = scope.handles.lanes[node->lane].queue_family;
  /* The message after a failure is the callback's own (a refused
   * tandem_vulkan_scope_view), or none: never one left from earlier. After
   * a success the caller's message is as it was. */
  char saved[TANDEM__MESSAGE_BYTES];
  tandem__save_error(saved, sizeof saved);
  tandem__clear_error();
  tandem_status_t s = node->record(node->record_user, &scope);
  state.live = 0;
  if (s == TANDEM_OK) {
    tandem__restore_error(saved);
    return TANDEM_OK;
  }
  if (s > 0 || strcmp(tandem_status_name(s), "UNKNOWN") == 0)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "Vulkan commands node %u (%s lane): its record callback returned %d, "
                       "which is not a tandem_status_t; return TANDEM_OK or a TANDEM_ERROR_* "
                       "code",
                       node_index, tandem_lane_name(node->lane), (int)s);
  if (tandem_error_message()[0])
    return tandem__annotate(s,
                            "Vulkan commands node %u (%s lane): its record callback failed "
                            "with %s",
                            node_index, tandem_lane_name(node->lane), tandem_status_name(s));
  return TANDEM_FAIL(s,
                     "Vulkan commands node %u (%s lane): its record callback returned %s; the "
                     "executable cannot be recorded until it returns TANDEM_OK",
                     node_index, tandem_lane_name(node->lane), tandem_status_name(s));
}

tandem_status_t tandem__vulkan_submit_call(tandem__gpu_t *gpu, const tandem__plan_t *plan,
                                           tandem_vulkan_submit_fn submit, void *user,
                                           tandem__region_submit_t *region) {
  assert(plan->node_count == 1 && plan->nodes[0].kind == TANDEM__NODE_VULKAN_COMMANDS);
  const tandem__node_t *node = &plan->nodes[0];
  tandem__scope_state_t state = {.live = TANDEM__SCOPE_LIVE, .node = node, .node_index = 0};
  tandem_vulkan_scope_t scope = {.struct_size = sizeof scope,
                                 .lane = node->lane,
                                 .access_count = node->view_count,
                                 .internal = &state};
  tandem_vulkan_handles_init(&scope.handles);
  tandem__gpu_native_handles(gpu, &scope.handles);
  scope.queue_family = scope.handles.lanes[node->lane].queue_family;
  /* Built-in lanes and user lanes (an open session's stage, an imported
   * timeline's value) alike. */
  for (int l = 0; l < TANDEM__MAX_LANES; l++) {
    if (!region->wait_values[l]) continue;
    scope.wait_semaphores[scope.wait_count] =
        gpu->vtable->interop->lane_timeline(gpu, (tandem_lane_t)l);
    scope.wait_values[scope.wait_count++] = region->wait_values[l];
  }
  tandem_vulkan_signal_t signal = {0};
  char saved[TANDEM__MESSAGE_BYTES]; /* as in tandem__vulkan_commands_record */
  tandem__save_error(saved, sizeof saved);
  tandem__clear_error();
  tandem_status_t s = submit(user, &scope, &signal);
  state.live = 0;
  if (s == TANDEM_OK) tandem__restore_error(saved);
  const char *lane = tandem_lane_name(node->lane);
  if (s > 0 || strcmp(tandem_status_name(s), "UNKNOWN") == 0)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "Vulkan submit (%s lane): its submit callback returned %d, which is not "
                       "a tandem_status_t; return TANDEM_OK or a TANDEM_ERROR_* code",
                       lane, (int)s);
  if (s != TANDEM_OK && tandem_error_message()[0])
    return tandem__annotate(s, "Vulkan submit (%s lane): its submit callback failed with %s", lane,
                            tandem_status_name(s));
  if (s != TANDEM_OK)
    return TANDEM_FAIL(s,
                       "Vulkan submit (%s lane): its submit callback returned %s; nothing was "
                       "started",
                       lane, tandem_status_name(s));
  if (!signal.semaphore || !signal.value)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "Vulkan submit (%s lane): the submit callback returned TANDEM_OK with "
                       "%s; tandem cannot order the work it submitted, so wait for that work "
                       "yourself before touching the declared bytes",
                       lane, signal.semaphore ? "signal value 0" : "no semaphore");
  region->external_wait = signal.semaphore;
  region->external_value = signal.value;
  return TANDEM_OK;
}

tandem_status_t tandem_vulkan_scope_view(const tandem_vulkan_scope_t *scope, uint32_t index,
                                         tandem_vulkan_view_t *out) {
  if (!out) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "scope view: out is NULL");
  memset(out, 0, sizeof *out);
  if (!scope || !scope->internal)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "scope view: %s is NULL; call it inside a record callback with the scope "
                       "it was given",
                       scope ? "scope->internal" : "scope");
  const tandem__scope_state_t *state = scope->internal;
  if (state->live != TANDEM__SCOPE_LIVE)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "scope view: the scope's record callback has returned; a scope is valid "
                       "only during its callback");
  const tandem__node_t *node = state->node;
  if (index >= node->view_count)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "Vulkan commands node %u: access %u is not declared (the node declares "
                       "%u); declare every view the commands touch when adding the node",
                       state->node_index, index, node->view_count);
  /* Checked at add: the view is inside a buffer with a VkBuffer, of a
   * backend with interop (what tandem_view_vulkan_buffer would check). */
  tandem_view_t view = node->views[index];
  tandem__gpu_t *gpu = tandem__gpu_at(view.buffer->runtime, 0);
  assert(view.buffer->native && gpu && gpu->vtable->interop);
  out->buffer = gpu->vtable->interop->buffer_vulkan(gpu, view.buffer->native);
  out->offset = view.offset;
  out->range = view.length;
  return TANDEM_OK;
}
