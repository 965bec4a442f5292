/* SPDX-License-Identifier: MIT */
/*
 * prepare.c — an executable graph's life: tandem_graph_prepare builds its
 * plan, its graph slots (records, submit descriptions, completion handles,
 * NPU run handles: everything a submission uses, so that submitting never
 * allocates) and the backend's program; the last tandem_exec_release waits
 * for the slots still in flight (I1) and frees it all.
 *
 * Slot state machine (one per graph slot, guarded by runtime->mutex):
 *
 *     FREE --submit--> IN_FLIGHT --retire (lanes passed)--> DONE --release--> FREE
 *                          |                                   ^
 *                          +--release (user lets go first)-----+-> FREE at retire
 *
 * submit.c takes a slot from FREE to IN_FLIGHT, tracker.c retires it,
 * completion.c (the user's release) gives it back.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/access.h"
#include "core/check.h"
#include "core/exec_int.h"
#include "core/graph_int.h"
#include "core/handle.h"
#include "core/lost.h"
#include "core/node_kind.h"
#include "core/npu_int.h"
#include "core/plan.h"
#include "core/prepare.h"
#include "core/record.h"
#include "core/runtime.h"
#include "core/runtime_int.h"
#include "core/struct_size.h"
#include "core/tracker.h"
#include "core/wait.h"

tandem_status_t tandem_graph_prepare(tandem_graph_t *graph, tandem_exec_t **out_exec) {
  return tandem__graph_prepare_slots(graph, graph ? graph->runtime->options.graph_slots : 1,
                                     out_exec);
}

tandem_status_t tandem__graph_prepare_slots(tandem_graph_t *graph, uint32_t slot_count,
                                            tandem_exec_t **out_exec) {
  assert(slot_count >= 1);
  if (!out_exec) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_exec is NULL");
  *out_exec = NULL;
  if (!graph) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "graph is NULL");
  tandem_runtime_t *rt = graph->runtime;
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(rt, &gpu));
  /* Every GPU a node runs on is open: its buffers or kernel opened it. */
  uint32_t gpu_mask = 0;
  for (uint32_t i = 0; i < graph->node_count; i++) {
    int g = tandem__lane_gpu(graph->nodes[i].lane);
    if (g >= 0) gpu_mask |= 1u << g;
  }
  if (!gpu_mask) gpu_mask = 1u; /* NPU runs alone: GPU 0's program signals nothing but is there */
  tandem_exec_t *exec = calloc(1, sizeof *exec);
  if (!exec) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating an executable graph");
  tandem_status_t s = tandem__plan_build(graph, &exec->plan);
  if (s != TANDEM_OK) {
    free(exec);
    return s;
  }
  tandem__plan_t *plan = &exec->plan;
  uint32_t count = 0;
  exec->node_access = calloc(plan->node_count, sizeof *exec->node_access);
  exec->node_view = calloc(plan->node_count, sizeof *exec->node_view);
  for (uint32_t i = 0; exec->node_view && i < plan->node_count; i++) {
    const tandem__node_t *node = &plan->nodes[i];
    tandem__access_t scratch[TANDEM__MAX_NODE_ACCESSES];
    count += tandem__node_accesses(node, scratch);
    if (tandem__node_info(node)->copies) exec->copied_per_lane[node->lane] += node->views[0].length;
    exec->uses_lane[node->lane] = true;
    exec->node_view[i] = exec->view_total;
    if (tandem__node_info(node)->gpu) exec->view_total += node->view_count;
  }
  exec->accesses = malloc((count ? count : 1) * sizeof *exec->accesses);
  exec->access_region = malloc((count ? count : 1) * sizeof *exec->access_region);
  exec->slot_count = slot_count;
  exec->slots = calloc(exec->slot_count, sizeof *exec->slots);
  exec->region_copied = calloc(plan->region_count, sizeof *exec->region_copied);
  exec->region_version = calloc(plan->region_count, sizeof *exec->region_version);
  if (gpu_mask != 1u) {
    exec->submit_scratch = calloc(plan->region_count, sizeof *exec->submit_scratch);
    exec->times_scratch = calloc(2 * (size_t)plan->region_count, sizeof *exec->times_scratch);
  }
  bool ok = exec->accesses && exec->access_region && exec->slots && exec->region_copied &&
            exec->node_access && exec->node_view && exec->region_version &&
            (gpu_mask == 1u || (exec->submit_scratch && exec->times_scratch));
  /* Before anything can fail: destroy gives back only the entries taken. */
  for (uint32_t k = 0; exec->slots && k < exec->slot_count; k++)
    exec->slots[k].handle_index = UINT32_MAX;
  for (uint32_t k = 0; ok && k < exec->slot_count; k++) {
    tandem__slot_t *slot = &exec->slots[k];
    slot->exec = exec;
    slot->index = k;
    slot->records = calloc(count, sizeof *slot->records);
    slot->submits = calloc(plan->region_count, sizeof *slot->submits);
    slot->deps = calloc(rt->options.max_submissions, sizeof *slot->deps);
    slot->timestamps = calloc(2 * (size_t)plan->region_count, sizeof *slot->timestamps);
    slot->npu_jobs = calloc(plan->region_count, sizeof *slot->npu_jobs);
    slot->npu_runs = calloc(plan->node_count, sizeof *slot->npu_runs);
    slot->npu_times = calloc(2 * (size_t)plan->region_count, sizeof *slot->npu_times);
    slot->region_version = calloc(plan->region_count, sizeof *slot->region_version);
    slot->views = calloc(exec->view_total ? exec->view_total : 1, sizeof *slot->views);
    slot->to_release = calloc(exec->view_total ? exec->view_total : 1, sizeof *slot->to_release);
    ok = slot->records && slot->submits && slot->deps && slot->timestamps && slot->npu_jobs &&
         slot->npu_runs && slot->npu_times && slot->region_version && slot->views &&
         slot->to_release;
    /* Each slot binds what the plan binds now, and keeps it alive. */
    for (uint32_t i = 0; ok && i < plan->node_count; i++) {
      const tandem__node_t *node = &plan->nodes[i];
      if (!tandem__node_info(node)->gpu) continue;
      for (uint32_t v = 0; v < node->view_count; v++) {
        slot->views[exec->node_view[i] + v] = node->views[v];
        tandem_buffer_retain(node->views[v].buffer);
      }
    }
  }
  tandem_status_t handles = TANDEM_OK;
  for (uint32_t k = 0; ok && k < exec->slot_count; k++) {
    handles = tandem__handle_take(&exec->slots[k]);
    ok = handles == TANDEM_OK;
  }
  if (ok) {
    uint32_t a = 0;
    for (uint32_t r = 0; r < plan->region_count; r++) {
      for (uint32_t k = 0; k < plan->regions[r].count; k++) {
        uint32_t n = plan->order[plan->regions[r].first + k];
        const tandem__node_t *node = &plan->nodes[n];
        if (tandem__node_info(node)->copies) exec->region_copied[r] += node->views[0].length;
        exec->node_access[n] = a;
        uint32_t m = tandem__node_accesses(node, &exec->accesses[a]);
        for (uint32_t x = 0; x < m; x++) exec->access_region[a + x] = r;
        a += m;
      }
    }
    exec->access_count = a;
    plan->piece_min = tandem__record_piece_min();
    exec->gpu_mask = gpu_mask;
    for (uint32_t g = 0; s == TANDEM_OK && g < rt->gpu_count; g++)
      if (gpu_mask & (1u << g))
        s = tandem__program_create(tandem__gpu_at(rt, g), g, plan, exec->slot_count,
                                   &exec->natives[g]);
    tandem__runtime_note_loss(rt, s);
    /* NPU runs: one run handle per slot and node, every argument set now. */
    tandem__npu_t *npu = atomic_load(&rt->npu);
    for (uint32_t k = 0; s == TANDEM_OK && k < exec->slot_count; k++) {
      for (uint32_t i = 0; s == TANDEM_OK && i < plan->node_count; i++) {
        const tandem__node_t *node = &plan->nodes[i];
        if (node->kind != TANDEM__NODE_NPU_RUN) continue;
        void *bos[TANDEM_MAX_BINDINGS];
        for (uint32_t v = 0; v < node->view_count; v++) bos[v] = node->views[v].buffer->npu_bo;
        s = npu->vtable->run_create(npu, node->program->native, bos, node->view_count,
                                    node->scalars, node->scalar_count, &exec->slots[k].npu_runs[i]);
      }
    }
  } else if (handles != TANDEM_OK) {
    s = handles; /* its message is set */
  } else {
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating %u graph slots", exec->slot_count);
  }
  atomic_init(&exec->refs, 1);
  exec->runtime = rt;
  tandem__runtime_retain(rt);
  if (s != TANDEM_OK) {
    tandem__exec_destroy(exec);
    return s;
  }
  *out_exec = exec;
  return TANDEM_OK;
}

void tandem__exec_destroy(tandem_exec_t *exec) {
  tandem_runtime_t *rt = exec->runtime;
  assert(tandem__exec_check_free(exec));
  for (uint32_t g = 0; g < rt->gpu_count; g++) {
    tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
    if (exec->natives[g]) gpu->vtable->program.destroy(gpu, exec->natives[g]);
  }
  if (exec->slots) {
    for (uint32_t k = 0; k < exec->slot_count; k++) {
      if (exec->slots[k].handle_index != UINT32_MAX) tandem__handle_give_back(&exec->slots[k]);
      free(exec->slots[k].records);
      free(exec->slots[k].submits);
      free(exec->slots[k].deps);
      free(exec->slots[k].timestamps);
      free(exec->slots[k].npu_jobs);
      free(exec->slots[k].npu_times);
      free(exec->slots[k].region_version);
      free(exec->slots[k].to_release);
      if (exec->slots[k].views) {
        for (uint32_t v = 0; v < exec->view_total; v++)
          tandem_buffer_release(exec->slots[k].views[v].buffer);
        free(exec->slots[k].views);
      }
      if (exec->slots[k].npu_runs) {
        tandem__npu_t *npu = atomic_load(&rt->npu);
        for (uint32_t i = 0; i < exec->plan.node_count; i++)
          if (exec->slots[k].npu_runs[i]) npu->vtable->run_destroy(npu, exec->slots[k].npu_runs[i]);
        free(exec->slots[k].npu_runs);
      }
    }
  }
  free(exec->slots);
  free(exec->accesses);
  free(exec->access_region);
  free(exec->region_copied);
  free(exec->node_access);
  free(exec->node_view);
  free(exec->region_version);
  free(exec->submit_scratch);
  free(exec->times_scratch);
  tandem__plan_free(&exec->plan);
  free(exec);
  tandem__runtime_release(rt);
}

void tandem_exec_retain(tandem_exec_t *exec) {
  if (exec) tandem__exec_retain(exec);
}

void tandem_exec_release(tandem_exec_t *exec) {
  if (!exec || atomic_fetch_sub(&exec->refs, 1) != 1) return;
  /* Nobody can submit any more and no completion is held (each holds a
   * reference): wait for the slots still in flight, then free (I1). */
  char saved[TANDEM__MESSAGE_BYTES]; /* the caller's message survives the waits below */
  tandem__save_error(saved, sizeof saved);
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  for (;;) {
    tandem__tracker_poll_locked(rt); /* after a failed wait (lost) this retires all */
    uint64_t waits[TANDEM__MAX_LANES] = {0};
    bool busy = false;
    for (uint32_t k = 0; k < exec->slot_count; k++) {
      const tandem__slot_t *slot = &exec->slots[k];
      if (slot->state != TANDEM__SLOT_IN_FLIGHT) continue;
      busy = true;
      for (int l = 0; l < TANDEM__MAX_LANES; l++)
        if (slot->cover[l] > waits[l]) waits[l] = slot->cover[l];
    }
    if (!busy) break;
    pthread_mutex_unlock(&rt->mutex);
    (void)tandem__runtime_wait(rt, waits, TANDEM__WAIT_FOREVER);
    pthread_mutex_lock(&rt->mutex);
  }
  pthread_mutex_unlock(&rt->mutex);
  tandem__runtime_drain_if_lost(rt); /* lost: retired is not finished */
  tandem__restore_error(saved);
  tandem__exec_destroy(exec);
}
