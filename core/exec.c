/* SPDX-License-Identifier: MIT */
/*
 * exec.c — executable graphs, submission and completions.
 *
 * Slot state machine (one per graph slot, guarded by runtime->mutex):
 *
 *     FREE --submit--> IN_FLIGHT --retire (lanes passed)--> DONE --release--> FREE
 *                          |                                   ^
 *                          +--release (user lets go first)-----+-> FREE at retire
 *
 * Submission acquires everything fallible first (a free slot, a submission
 * count, no conflicting host map, no poisoned input), computes the waits, and
 * only then hands out timeline values and calls the backend: a BUSY answer
 * leaves no trace. Nothing on this path allocates: records, submit
 * descriptions and completions live in the slot, made at prepare.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/struct_size.h"

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
    if (node->kind == TANDEM__NODE_COPY) exec->copied_per_lane[node->lane] += node->views[0].length;
    exec->uses_lane[node->lane] = true;
    exec->node_view[i] = exec->view_total;
    if (node->kind != TANDEM__NODE_NPU_RUN) exec->view_total += node->view_count;
  }
  exec->accesses = malloc((count ? count : 1) * sizeof *exec->accesses);
  exec->access_region = malloc((count ? count : 1) * sizeof *exec->access_region);
  exec->slot_count = slot_count;
  exec->slots = calloc(exec->slot_count, sizeof *exec->slots);
  exec->region_copied = calloc(plan->region_count, sizeof *exec->region_copied);
  exec->region_version = calloc(plan->region_count, sizeof *exec->region_version);
  bool ok = exec->accesses && exec->access_region && exec->slots && exec->region_copied &&
            exec->node_access && exec->node_view && exec->region_version;
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
      if (node->kind == TANDEM__NODE_NPU_RUN) continue;
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
        if (node->kind == TANDEM__NODE_COPY) exec->region_copied[r] += node->views[0].length;
        exec->node_access[n] = a;
        uint32_t m = tandem__node_accesses(node, &exec->accesses[a]);
        for (uint32_t x = 0; x < m; x++) exec->access_region[a + x] = r;
        a += m;
      }
    }
    exec->access_count = a;
    plan->piece_min = tandem__record_piece_min();
    s = tandem__program_create(gpu, plan, exec->slot_count, &exec->native);
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
                                    node->scalars, node->scalar_count,
                                    &exec->slots[k].npu_runs[i]);
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
  tandem__gpu_t *gpu = atomic_load(&rt->gpu);
  assert(tandem__exec_check_free(exec));
  if (exec->native) gpu->vtable->program_destroy(gpu, exec->native);
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
  tandem__plan_free(&exec->plan);
  free(exec);
  tandem__runtime_release(rt);
}

void tandem_exec_retain(tandem_exec_t *exec) {
  if (exec) atomic_fetch_add(&exec->refs, 1);
}

void tandem_exec_release(tandem_exec_t *exec) {
  if (!exec || atomic_fetch_sub(&exec->refs, 1) != 1) return;
  /* Nobody can submit any more and no completion is held (each holds a
   * reference): wait for the slots still in flight, then free (I1). */
  char saved[256]; /* the caller's message survives the waits below */
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

tandem_status_t tandem__maps_check_locked(const tandem__access_t *a) {
  const tandem_buffer_t *b = a->buffer;
  for (uint32_t i = 0; i < b->map_count; i++) {
    const tandem__host_map_t *m = &b->maps[i];
    if ((m->write || (a->access & TANDEM_ACCESS_WRITE)) &&
        tandem__ranges_overlap(m->offset, m->length, a->offset, a->length))
      return TANDEM_FAIL(TANDEM_ERROR_BUSY,
                         "bytes %llu..%llu of a %s buffer are held by a live host %s map; "
                         "unmap it before submitting work that %s them",
                         (unsigned long long)a->offset, (unsigned long long)(a->offset + a->length),
                         tandem_placement_name(b->placement), m->write ? "write" : "read",
                         (a->access & TANDEM_ACCESS_WRITE) ? "writes" : "reads");
  }
  return TANDEM_OK;
}

/* True when in-flight work rewrites bytes [offset, offset+length) of |b|:
 * a reader submitted now is ordered after it (and fails with it, through its
 * dependencies, if it fails), so the poison of earlier bytes there no longer
 * matters to that reader. Only WRITE counts: it promises every byte is
 * overwritten and none read (the shader's writeonly is checked at load);
 * READ_WRITE would read the poisoned bytes. A native session's stage (no
 * slot) does not count: what it writes is the client's, and tandem cannot
 * tell whether it rewrites every byte. */
static bool tandem__rewrite_in_flight_locked(const tandem_buffer_t *b, uint64_t offset,
                                             uint64_t length) {
  for (const tandem__record_t *r = b->records; r; r = r->next)
    if (r->access.access == TANDEM_ACCESS_WRITE && r->access.offset <= offset &&
        r->access.offset + r->access.length >= offset + length && r->slot &&
        !atomic_load(&r->slot->cancel_requested) && !r->slot->inject_failure)
      return true;
  return false;
}

/* The first poisoned range of |a|'s bytes that no in-flight rewrite covers
 * (what a reader submitted now would read as failed), or NULL. */
static const tandem__poison_t *tandem__poisoned_input_locked(const tandem__access_t *a) {
  const tandem_buffer_t *b = a->buffer;
  if (!(a->access & TANDEM_ACCESS_READ)) return NULL;
  for (uint32_t i = 0; i < b->poison_count; i++) {
    const tandem__poison_t *p = &b->poison[i];
    if (!tandem__ranges_overlap(p->offset, p->length, a->offset, a->length)) continue;
    uint64_t lo = p->offset > a->offset ? p->offset : a->offset;
    uint64_t hi = p->offset + p->length < a->offset + a->length ? p->offset + p->length
                                                                : a->offset + a->length;
    if (!tandem__rewrite_in_flight_locked(b, lo, hi - lo)) return p;
  }
  return NULL;
}

/* Submits |exec| after |after|, its regions also waiting for |lane_waits|
 * (user lanes' values); with |external|, a one-region executable whose
 * region also waits for what external(|external_user|) submits. */
static tandem_status_t tandem__submit(tandem_exec_t *exec, tandem_completion_t *const *after,
                                      uint32_t after_count, const tandem_lane_wait_t *lane_waits,
                                      uint32_t lane_wait_count, tandem_vulkan_submit_fn external,
                                      void *external_user,
                                      tandem_completion_t **out_completion) {
  if (!out_completion)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_completion is NULL");
  *out_completion = NULL;
  if (!exec) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "exec is NULL");
  tandem_runtime_t *rt = exec->runtime;
  if (after_count && !after)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "after is NULL with after_count %u",
                       after_count);
  for (uint32_t i = 0; i < after_count; i++) {
    char what[32];
    snprintf(what, sizeof what, "after[%u]", i);
    tandem__slot_t *a = NULL;
    TANDEM_RETURN_IF_ERROR(tandem__completion_acquire(after[i], what, &a));
    bool other = a->exec->runtime != rt;
    /* Checked live again under the lock below (a release revokes under
     * that lock before it drops the executable). */
    tandem_exec_release(a->exec);
    if (other)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "after[%u] belongs to another runtime", i);
  }
  tandem__gpu_t *gpu = atomic_load(&rt->gpu);
  const tandem__plan_t *plan = &exec->plan;
  tandem_status_t s = TANDEM_OK;
  uint32_t release_count = 0;
  tandem__slot_t *slot = NULL;

  pthread_mutex_lock(&rt->mutex);
  if (tandem__runtime_fold_loss_locked(rt) != TANDEM_OK) {
    s = TANDEM_FAIL(rt->lost, "the runtime's GPU failed earlier (%s); nothing can be submitted",
                    tandem_status_name(rt->lost));
    goto out;
  }
  for (uint32_t i = 0; i < lane_wait_count; i++) {
    int l = lane_waits[i].lane;
    if (l < TANDEM_LANE_COUNT || l >= TANDEM__MAX_LANES ||
        rt->lanes[l].kind != TANDEM_LANE_KIND_EXTERNAL || rt->lanes[l].closing) {
      s = TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                      "waits[%u]: lane %d is not an external lane of this runtime (make one "
                      "with tandem_external_timeline_lane; built-in lanes are ordered through "
                      "tandem_exec_submit_after)",
                      i, l);
      goto out;
    }
    if (lane_waits[i].value == 0) {
      s = TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                      "waits[%u]: value 0 on lane %d waits for nothing; timelines start at 0",
                      i, l);
      goto out;
    }
  }
  /* Retire finished work only when a limit is in the way: waits retire what
   * they waited for, so the common replay path makes no timeline queries. */
  for (int attempt = 0; attempt < 2; attempt++) {
    for (uint32_t k = 0; k < exec->slot_count && !slot; k++)
      if (exec->slots[k].state == TANDEM__SLOT_FREE) slot = &exec->slots[k];
    if (slot && rt->in_flight_count < rt->options.max_submissions) break;
    if (attempt == 0) tandem__tracker_poll_locked(rt);
  }
  if (!slot) {
    s = TANDEM_FAIL(TANDEM_ERROR_BUSY,
                    "all %u graph slots of this executable are in use; a slot is free again once "
                    "its submission has finished and its completion is released "
                    "(tandem_completion_release; waiting alone keeps the slot); the runtime "
                    "option graph_slots sets how many",
                    exec->slot_count);
    goto out;
  }
  if (rt->in_flight_count >= rt->options.max_submissions) {
    s = TANDEM_FAIL(TANDEM_ERROR_BUSY,
                    "%u submissions are in flight, the runtime's max_submissions", rt->in_flight_count);
    goto out;
  }
  for (uint32_t i = 0; i < exec->access_count; i++) {
    const tandem__access_t *a = &exec->accesses[i];
    s = tandem__maps_check_locked(a);
    if (s != TANDEM_OK) goto out;
    const tandem__poison_t *p = tandem__poisoned_input_locked(a);
    if (p) {
      s = TANDEM_FAIL(TANDEM_ERROR_FAILED_DEPENDENCY,
                      "bytes %llu..%llu of a %llu-byte buffer this graph reads (it reads "
                      "%llu..%llu) were last written by work that failed (%s); write them "
                      "again with work that succeeds, or read other bytes",
                      (unsigned long long)p->offset, (unsigned long long)(p->offset + p->length),
                      (unsigned long long)a->buffer->size, (unsigned long long)a->offset,
                      (unsigned long long)(a->offset + a->length), tandem_status_name(p->cause));
      goto out;
    }
  }
  for (uint32_t i = 0; i < after_count; i++) {
    const tandem__slot_t *a = tandem__handle_slot(after[i]);
    if (!a) { /* released by another thread since the check above */
      s = TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                      "after[%u] was released while this submission was being made", i);
      goto out;
    }
    if (a->state != TANDEM__SLOT_IN_FLIGHT && a->result != TANDEM_OK) {
      s = TANDEM_FAIL(TANDEM_ERROR_FAILED_DEPENDENCY,
                      "after[%u] ended with %s; work ordered after it cannot run", i,
                      tandem_status_name(a->result));
      goto out;
    }
  }
  /* Values and waits, computed into the slot before anything is committed. */
  slot->dep_count = 0;
  uint64_t next[TANDEM__MAX_LANES];
  memcpy(next, rt->lane_next_value, sizeof next);
  for (uint32_t r = 0; r < plan->region_count; r++) {
    tandem__region_submit_t *sub = &slot->submits[r];
    sub->region = r;
    sub->submitted = false;
    sub->signal_value = ++next[plan->regions[r].lane];
    sub->external_wait = NULL;
    sub->external_value = 0;
    memset(sub->wait_values, 0, sizeof sub->wait_values);
    for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
      int32_t w = plan->regions[r].wait_region[l];
      sub->wait_values[l] = w >= 0 ? slot->submits[w].signal_value : 0;
    }
    /* Waits on user lanes (tandem_exec_submit_waiting): every region. */
    for (uint32_t i = 0; i < lane_wait_count; i++)
      if (lane_waits[i].value > sub->wait_values[lane_waits[i].lane])
        sub->wait_values[lane_waits[i].lane] = lane_waits[i].value;
  }
  for (uint32_t i = 0; i < exec->access_count; i++)
    tandem__tracker_conflicts_locked(rt, &exec->accesses[i],
                                     slot->submits[exec->access_region[i]].wait_values, slot);
  for (uint32_t i = 0; i < after_count; i++) {
    tandem__slot_t *a = tandem__handle_slot(after[i]);
    assert(a); /* checked above, under this lock */
    if (a->state != TANDEM__SLOT_IN_FLIGHT) continue;
    tandem__slot_add_dep_locked(slot, a, true);
    for (uint32_t r = 0; r < plan->region_count; r++)
      for (int l = 0; l < TANDEM_LANE_COUNT; l++)
        if (a->lane_values[l] > slot->submits[r].wait_values[l])
          slot->submits[r].wait_values[l] = a->lane_values[l];
  }
  /* Regions whose parameters changed since this slot last recorded them are
   * recorded again, into this slot's own command buffers and descriptor sets
   * (no running work uses them: the slot is FREE). Views the slot no longer
   * binds are released after the lock is dropped. */
  release_count = 0;
  for (uint32_t r = 0; r < plan->region_count; r++) {
    if (slot->region_version[r] == exec->region_version[r]) continue;
    const tandem__region_t *region = &plan->regions[r];
    for (uint32_t k = 0; k < region->count; k++) {
      uint32_t n = plan->order[region->first + k];
      const tandem__node_t *node = &plan->nodes[n];
      if (node->kind == TANDEM__NODE_NPU_RUN) continue;
      for (uint32_t v = 0; v < node->view_count; v++) {
        tandem_view_t *held = &slot->views[exec->node_view[n] + v];
        if (held->buffer != node->views[v].buffer) {
          tandem_buffer_retain(node->views[v].buffer);
          slot->to_release[release_count++] = held->buffer;
        }
        *held = node->views[v];
      }
    }
    s = tandem__record_region(gpu, exec->native, plan, slot->index, r);
    if (s != TANDEM_OK) goto out; /* the version stays old: recorded again next time */
    slot->region_version[r] = exec->region_version[r];
  }
  /* The user's work goes to its queue now, waiting for what the region
   * waits for; the region then waits for its end too. */
  if (external) {
    assert(plan->region_count == 1 && plan->regions[0].lane < TANDEM_LANE_COUNT_GPU);
    s = tandem__vulkan_submit_call(gpu, plan, external, external_user, &slot->submits[0]);
    if (s != TANDEM_OK) goto out;
  }
  uint64_t submit_ns = tandem__now_ns(); /* before the queues see it */
  s = gpu->vtable->program_submit(gpu, exec->native, slot->index, slot->submits,
                                  plan->region_count);
  if (s != TANDEM_OK) {
    /* Values may be half-submitted: the lanes cannot be trusted any more. */
    tandem__submit_abandon_locked(rt, slot, next);
    tandem__runtime_set_lost_locked(rt, TANDEM_ERROR_DEVICE_LOST);
    if (s != TANDEM_ERROR_DEVICE_LOST) /* say what the runtime now is */
      s = tandem__annotate(TANDEM_ERROR_DEVICE_LOST,
                           "submitting to the GPU failed half-way, so the runtime is lost");
    goto out;
  }
  /* Committed: from here on nothing fails. */
  memcpy(rt->lane_next_value, next, sizeof next);
  memset(slot->lane_values, 0, sizeof slot->lane_values);
  for (uint32_t r = 0; r < plan->region_count; r++)
    slot->lane_values[plan->regions[r].lane] = slot->submits[r].signal_value;
  tandem__slot_set_cover_locked(rt, gpu, slot);
  tandem__lane_note_waits_locked(rt, slot);
  for (uint32_t i = 0; i < exec->access_count; i++) {
    tandem__record_t *rec = &slot->records[i];
    uint32_t r = exec->access_region[i];
    rec->access = exec->accesses[i];
    rec->lane = plan->regions[r].lane;
    rec->value = slot->submits[r].signal_value;
    rec->slot = slot;
    tandem__tracker_link_locked(rec);
  }
  slot->state = TANDEM__SLOT_IN_FLIGHT;
  slot->user_ref = true;
  slot->result = TANDEM_OK;
  slot->generation++;
  slot->submission = ++rt->submission_count;
  atomic_store(&slot->cancel_requested, false);
  /* A session stage it waits for may already have ended in failure (its
   * records stay until its value is signalled): fail with it. */
  atomic_store(&slot->dep_failed, tandem__lane_failed_waits_locked(rt, slot));
  atomic_store(&slot->abandoned, false);
  atomic_store(&slot->npu_result, TANDEM_OK);
  slot->inject_failure = rt->fail_next;
  rt->fail_next = false;
  slot->host_submit_ns = submit_ns;
  slot->npu_message[0] = '\0';
  slot->host_observed_ns = 0;
  slot->next_in_flight = NULL; /* FIFO: retirement follows submission order */
  if (rt->in_flight_tail) {
    rt->in_flight_tail->next_in_flight = slot;
  } else {
    rt->in_flight = slot;
  }
  rt->in_flight_tail = slot;
  rt->in_flight_count++;
  atomic_fetch_add(&rt->stats.submissions, 1);
  for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
    if (exec->uses_lane[l]) atomic_fetch_add(&rt->lanes[l].submissions, 1);
    if (!exec->copied_per_lane[l]) continue;
    atomic_fetch_add(&rt->lanes[l].copied_bytes, exec->copied_per_lane[l]);
    atomic_fetch_add(&rt->stats.copied_bytes, exec->copied_per_lane[l]);
  }
  for (uint32_t i = 0; i < lane_wait_count; i++) {
    bool again = false; /* one count per lane, however many entries name it */
    for (uint32_t j = 0; j < i; j++) again |= lane_waits[j].lane == lane_waits[i].lane;
    if (!again) atomic_fetch_add(&rt->lanes[lane_waits[i].lane].submissions, 1);
  }
  /* NPU regions go to the lane thread last: the GPU regions that wait for
   * them are queued already (wait-before-signal on the NPU timeline). */
  for (uint32_t r = 0; r < plan->region_count; r++) {
    if (plan->regions[r].lane != TANDEM_LANE_NPU) continue;
    slot->npu_jobs[r] = (tandem__npu_job_t){.slot = slot, .region = r};
    tandem__npu_lane_push(rt, &slot->npu_jobs[r]);
  }
  atomic_fetch_add(&exec->refs, 1); /* the completion's reference */
  *out_completion = tandem__handle_issue(slot);
  assert(tandem__runtime_check_locked(rt) && tandem__exec_check_locked(exec));
out:
  pthread_mutex_unlock(&rt->mutex);
  /* Outside the lock: a last reference frees device memory. */
  for (uint32_t i = 0; i < release_count; i++) tandem_buffer_release(slot->to_release[i]);
  return s;
}

tandem_status_t tandem_exec_submit(tandem_exec_t *exec, tandem_completion_t **out_completion) {
  return tandem__submit(exec, NULL, 0, NULL, 0, NULL, NULL, out_completion);
}

tandem_status_t tandem_exec_submit_waiting(tandem_exec_t *exec, const tandem_lane_wait_t *waits,
                                           uint32_t wait_count,
                                           tandem_completion_t **out_completion) {
  if (out_completion) *out_completion = NULL; /* on every error, as tandem_exec_submit */
  if (wait_count && !waits)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "waits is NULL with wait_count %u",
                       wait_count);
  if (wait_count > TANDEM_MAX_LANES)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "wait_count %u: a submission waits on at most %d lanes (one entry each)",
                       wait_count, TANDEM_MAX_LANES);
  return tandem__submit(exec, NULL, 0, waits, wait_count, NULL, NULL, out_completion);
}

tandem_status_t tandem_exec_submit_after(tandem_exec_t *exec, tandem_completion_t *const *after,
                                         uint32_t after_count,
                                         tandem_completion_t **out_completion) {
  return tandem__submit(exec, after, after_count, NULL, 0, NULL, NULL, out_completion);
}

tandem_status_t tandem__exec_submit_external(tandem_exec_t *exec, tandem_vulkan_submit_fn submit,
                                             void *user, tandem_completion_t **out_completion) {
  return tandem__submit(exec, NULL, 0, NULL, 0, submit, user, out_completion);
}

/*--------------------------------------------------------------------------*/

/* The completion's slot and generation while it is live under the lock, or
 * INVALID_ARGUMENT: released by another thread since it was acquired. */
static tandem_status_t tandem__completion_live_locked(const tandem_completion_t *completion,
                                                      const tandem__slot_t *slot) {
  if (tandem__handle_slot(completion) == slot) return TANDEM_OK;
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                     "the completion was released by another thread during this call");
}

static tandem_status_t tandem__completion_wait_acquired(tandem_completion_t *completion,
                                                        tandem__slot_t *slot,
                                                        uint64_t timeout_ns) {
  tandem_runtime_t *rt = slot->exec->runtime;
  uint64_t values[TANDEM__MAX_LANES];
  pthread_mutex_lock(&rt->mutex);
  tandem_status_t live = tandem__completion_live_locked(completion, slot);
  uint64_t generation = slot->generation;
  bool in_flight = slot->state == TANDEM__SLOT_IN_FLIGHT;
  /* The wait covers the submissions this one depends on (it retires after
   * them) and the NPU signals its GPU values depend on: its cover. */
  memcpy(values, slot->cover, sizeof values);
  pthread_mutex_unlock(&rt->mutex);
  if (live != TANDEM_OK) return live;
  if (in_flight) {
    tandem_status_t s = tandem__runtime_wait(rt, values, timeout_ns);
    if (s == TANDEM_ERROR_TIMEOUT)
      return TANDEM_FAIL(s, "the submission did not finish within %llu ns",
                         (unsigned long long)timeout_ns);
    pthread_mutex_lock(&rt->mutex);
    if (s == TANDEM_OK) {
      tandem__tracker_advance_locked(rt, values, TANDEM_OK); /* reached: no query */
    } else {
      tandem__tracker_poll_locked(rt);
    }
  } else {
    pthread_mutex_lock(&rt->mutex);
  }
  /* Released by another thread meanwhile and submitted again: the slot now
   * holds another submission, and this one's result is gone. (Released
   * only, the slot keeps the result: it is answered.) */
  if (slot->generation != generation) {
    pthread_mutex_unlock(&rt->mutex);
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "the completion was released by another thread while it was waited "
                       "for, and its slot reused: its result is gone");
  }
  tandem_status_t result = slot->result;
  /* The NPU's own text, when its failure is what ended the submission. */
  char npu_message[sizeof slot->npu_message] = "";
  if (result != TANDEM_OK && result == (tandem_status_t)atomic_load(&slot->npu_result))
    memcpy(npu_message, slot->npu_message, sizeof npu_message);
  pthread_mutex_unlock(&rt->mutex);
  if (result != TANDEM_OK)
    return TANDEM_FAIL(result, "the submission failed: %s%s%s", tandem_status_describe(result),
                       npu_message[0] ? "; the NPU said: " : "", npu_message);
  return TANDEM_OK;
}

tandem_status_t tandem_completion_wait_timeout(tandem_completion_t *completion,
                                               uint64_t timeout_ns) {
  tandem__slot_t *slot;
  TANDEM_RETURN_IF_ERROR(tandem__completion_acquire(completion, "completion", &slot));
  tandem_exec_t *exec = slot->exec;
  tandem_status_t s = tandem__completion_wait_acquired(completion, slot, timeout_ns);
  tandem_exec_release(exec); /* the acquire's reference; keeps the error message */
  return s;
}

tandem_status_t tandem_completion_wait(tandem_completion_t *completion) {
  return tandem_completion_wait_timeout(completion, TANDEM__WAIT_FOREVER);
}

bool tandem_completion_is_complete(tandem_completion_t *completion) {
  tandem__slot_t *slot;
  if (tandem__completion_acquire(completion, "completion", &slot) != TANDEM_OK) return false;
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  tandem__tracker_poll_locked(rt);
  bool done = slot->state != TANDEM__SLOT_IN_FLIGHT;
  pthread_mutex_unlock(&rt->mutex);
  tandem_exec_release(exec);
  return done;
}

void tandem_completion_release(tandem_completion_t *completion) {
  if (!completion) return;
  tandem__slot_t *slot;
  /* A stale handle (released twice, or bytes that were never a handle)
   * changes nothing; the error message says so. */
  if (tandem__completion_acquire(completion, "completion", &slot) != TANDEM_OK) return;
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  bool won = tandem__handle_slot(completion) == slot; /* else a concurrent release won */
  if (won) {
    tandem__handle_revoke(slot);
    slot->user_ref = false;
    if (slot->state == TANDEM__SLOT_DONE) slot->state = TANDEM__SLOT_FREE;
    assert(tandem__exec_check_locked(exec));
  }
  pthread_mutex_unlock(&rt->mutex);
  tandem_exec_release(exec); /* the acquire's reference */
  if (won) tandem_exec_release(exec); /* the completion's */
}

tandem_status_t tandem_completion_cancel(tandem_completion_t *completion) {
  tandem__slot_t *slot;
  TANDEM_RETURN_IF_ERROR(tandem__completion_acquire(completion, "completion", &slot));
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  tandem_status_t s = tandem__completion_live_locked(completion, slot);
  tandem__tracker_poll_locked(rt);
  if (s == TANDEM_OK && slot->state == TANDEM__SLOT_IN_FLIGHT)
    atomic_store(&slot->cancel_requested, true);
  pthread_mutex_unlock(&rt->mutex);
  tandem_exec_release(exec);
  return s;
}

static tandem_status_t tandem__completion_profile_acquired(tandem_completion_t *completion,
                                                           tandem__slot_t *slot,
                                                           tandem_completion_profile_t *out,
                                                           tandem_region_profile_t *regions,
                                                           uint32_t capacity) {
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  pthread_mutex_lock(&rt->mutex);
  tandem_status_t live = tandem__completion_live_locked(completion, slot);
  if (live != TANDEM_OK) {
    pthread_mutex_unlock(&rt->mutex);
    return live;
  }
  tandem__tracker_poll_locked(rt);
  bool done = slot->state != TANDEM__SLOT_IN_FLIGHT;
  out->host_submit_ns = slot->host_submit_ns;
  out->host_observed_ns = slot->host_observed_ns;
  const tandem__plan_t *plan = &exec->plan;
  uint32_t rc = plan->region_count;
  out->region_count = rc;
  uint64_t *pairs = slot->timestamps;
  tandem__gpu_t *gpu = atomic_load(&rt->gpu);
  /* The slot is DONE and held by the caller: it cannot be reused meanwhile. */
  (void)gpu;
  if (done) {
    out->gpu_times_status = tandem__slot_times(slot, pairs);
    out->gpu_times_valid = out->gpu_times_status == TANDEM_OK;
  }
  if (!done) {
    pthread_mutex_unlock(&rt->mutex);
    memset(out, 0, sizeof *out);
    return TANDEM_FAIL(TANDEM_ERROR_BUSY, "the submission has not finished; wait for it first");
  }
  uint64_t first = UINT64_MAX, last = 0;
  for (uint32_t r = 0; r < rc; r++) {
    if (pairs[2 * r] < first) first = pairs[2 * r];
    if (pairs[2 * r + 1] > last) last = pairs[2 * r + 1];
    if (r < capacity)
      regions[r] = (tandem_region_profile_t){plan->regions[r].lane, plan->regions[r].count,
                                             pairs[2 * r], pairs[2 * r + 1]};
  }
  if (out->gpu_times_valid) {
    out->queue_ns = first > out->host_submit_ns ? first - out->host_submit_ns : 0;
    out->execution_ns = last > first ? last - first : 0;
  }
  pthread_mutex_unlock(&rt->mutex);
  return TANDEM_OK;
}

tandem_status_t tandem_completion_profile(tandem_completion_t *completion,
                                          tandem_completion_profile_t *out_profile,
                                          tandem_region_profile_t *regions, uint32_t capacity) {
  if (!out_profile) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_profile is NULL");
  TANDEM_RETURN_IF_ERROR(tandem__struct_out_check(out_profile, TANDEM__OLDEST_COMPLETION_PROFILE,
                                                  "tandem_completion_profile_t"));
  tandem__struct_clear(out_profile);
  tandem_completion_profile_t known;
  tandem_completion_profile_init(&known);
  tandem_completion_profile_t *out = &known;
  if (capacity && !regions)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "regions is NULL with capacity %u",
                       capacity);
  tandem__slot_t *slot;
  TANDEM_RETURN_IF_ERROR(tandem__completion_acquire(completion, "completion", &slot));
  tandem_exec_t *exec = slot->exec;
  tandem_status_t s = tandem__completion_profile_acquired(completion, slot, out, regions, capacity);
  tandem_exec_release(exec);
  if (s != TANDEM_OK) return s;
  tandem__struct_out(out_profile, out, sizeof *out);
  return TANDEM_OK;
}
