/* SPDX-License-Identifier: MIT */
/*
 * record.c — core's side of the command interface (core/backend.h): it turns
 * a prepared plan into the backend-neutral description a program is made
 * from, and records each GPU region of each slot by walking the plan and
 * calling the backend once per command.
 *
 * Everything device-agnostic about recording is decided here, so that every
 * backend (Vulkan, the host GPU of the core tests) gets the same commands and
 * barriers and the tests can pin them: the order of the commands (the plan's
 * record order inside a region), where barriers go (the plan's
 * barrier_before), and each barrier's scope. A barrier is as narrow as the
 * work allows: its source is the kinds of work since the previous barrier
 * (or the region's start), its destination the kinds of work from it to the
 * next barrier (or the region's end), with TANDEM__WORK_INDIRECT added when
 * an indirect dispatch is among the latter (it reads its counts before its
 * shader runs). The plan relies on a barrier ordering everything before it
 * against everything after it (core/plan.c); these scopes keep that true
 * through chains of barriers, because each barrier's source is exactly the
 * previous one's destination (less INDIRECT, which a COMPUTE source covers:
 * the counts are read before the shader that COMPUTE names). A
 * dispatch-to-dispatch chain gets a compute-to-compute barrier, which is what
 * hand-written code would use (bench/NOTES.md measures the difference on the
 * H200).
 *
 * Recording allocates nothing: re-recording a region after tandem_exec_set_*
 * happens inside tandem_exec_submit (test_replay_alloc), on the submitting
 * thread. At prepare, a program large enough records its slots on parallel
 * threads (tandem__record_slots, below).
 */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/internal.h"

/* A dispatch's bindings always fit an empty batch, so every chunk of a
 * region (tandem__record_region) holds at least one node. */
_Static_assert(TANDEM__BINDING_BATCH >= TANDEM_MAX_BINDINGS, "a dispatch fits one batch");

/* The kinds of work |node| does as a barrier's source (what must finish)
 * and as its destination (what must wait). */
static uint32_t tandem__node_src_work(const tandem__node_t *node) {
  if (node->kind == TANDEM__NODE_VULKAN_COMMANDS) return TANDEM__WORK_USER;
  return node->kind == TANDEM__NODE_DISPATCH ? TANDEM__WORK_COMPUTE : TANDEM__WORK_TRANSFER;
}

static uint32_t tandem__node_dst_work(const tandem__node_t *node) {
  if (node->kind == TANDEM__NODE_VULKAN_COMMANDS) return TANDEM__WORK_USER;
  if (node->kind != TANDEM__NODE_DISPATCH) return TANDEM__WORK_TRANSFER;
  return TANDEM__WORK_COMPUTE | (node->indirect.buffer ? TANDEM__WORK_INDIRECT : 0u);
}

/* Node |node|'s bindings (a dispatch): each view's buffer native and offset,
 * with the contract's bytes. Returns how many. */
static inline uint32_t tandem__bindings_of(const tandem__node_t *node,
                                           tandem__binding_t *bindings) {
  assert(node->kind == TANDEM__NODE_DISPATCH && node->view_count <= TANDEM_MAX_BINDINGS);
  const tandem_view_t *views = node->views;
  const tandem_binding_contract_t *contract = node->kernel->bindings;
  for (uint32_t b = 0; b < node->view_count; b++) {
    bindings[b].buffer = views[b].buffer->native;
    bindings[b].offset = views[b].offset;
    bindings[b].range = contract[b].bytes;
  }
  return node->view_count;
}

/* What a Vulkan commands node's record trampoline needs (core/handoff.c
 * builds the user's scope from the plan). */
typedef struct tandem__user_context {
  tandem__gpu_t *gpu;
  const tandem__plan_t *plan;
  uint32_t node;
} tandem__user_context_t;

static tandem_status_t tandem__user_record(void *context, void *command_buffer) {
  const tandem__user_context_t *c = context;
  return tandem__vulkan_commands_record(c->gpu, c->plan, c->node, command_buffer);
}

tandem_status_t tandem__record_region(tandem__gpu_t *gpu, void *native, const tandem__plan_t *plan,
                                      uint32_t slot, uint32_t region_index) {
  const tandem__gpu_vtable_t *vt = gpu->vtable;
  const tandem__region_t *region = &plan->regions[region_index];
  assert(region->lane != TANDEM_LANE_NPU); /* the NPU lane thread runs those */
  const uint32_t *order = &plan->order[region->first]; /* the region's nodes, in record order */
  const tandem__node_t *nodes = plan->nodes;
  uint32_t count = region->count;
  tandem_status_t s = vt->record_begin(gpu, native, slot, region_index);
  if (s != TANDEM_OK) return s;
  /* The region goes in chunks: the bindings of a chunk's dispatches (up to
   * one batch of them), then the chunk's commands, which carry the same
   * bindings without building them again. Nothing recorded before a chunk
   * binds its dispatches' descriptors, so a backend may write them then. */
  uint32_t ids[TANDEM__BINDING_BATCH], counts[TANDEM__BINDING_BATCH];
  tandem__binding_t bindings[TANDEM__BINDING_BATCH];
  tandem__binding_batch_t batch = {.ids = ids, .binding_counts = counts, .bindings = bindings};
  tandem__cmd_dispatch_t dispatch;
  uint32_t since = 0; /* kinds of work since the last barrier (or the start) */
  uint32_t k = 0;
  tandem_status_t user = TANDEM_OK; /* a user callback's failure ends the region */
  while (k < count && user == TANDEM_OK) {
    uint32_t end = k, used = 0;
    batch.count = 0;
    for (; end < count; end++) {
      const tandem__node_t *node = &nodes[order[end]];
      if (node->kind != TANDEM__NODE_DISPATCH || node->view_count == 0) continue;
      if (used + node->view_count > TANDEM__BINDING_BATCH) break;
      ids[batch.count] = order[end];
      counts[batch.count++] = tandem__bindings_of(node, &bindings[used]);
      used += node->view_count;
    }
    if (batch.count) vt->record_bindings(gpu, native, slot, &batch);
    uint32_t at = 0; /* the next dispatch's first binding in |bindings| */
    for (; k < end && user == TANDEM_OK; k++) {
      uint32_t n = order[k];
      const tandem__node_t *node = &nodes[n];
      if (node->barrier_before) {
        uint32_t until = tandem__node_dst_work(node); /* kinds from here to the next barrier */
        for (uint32_t j = k + 1; j < count; j++) {
          const tandem__node_t *later = &nodes[order[j]];
          if (later->barrier_before) break;
          until |= tandem__node_dst_work(later);
        }
        /* A barrier follows a conflict with work since the last one
         * (plan.c), so neither side is empty. */
        assert(since != 0 && until != 0);
        vt->record_barrier(gpu, native, slot, since, until);
        since = 0;
      }
      since |= tandem__node_src_work(node);
      switch (node->kind) {
        case TANDEM__NODE_FILL: {
          tandem__cmd_fill_t fill = {.id = n,
                                     .buffer = node->views[0].buffer->native,
                                     .offset = node->views[0].offset,
                                     .length = node->views[0].length,
                                     .pattern = node->pattern};
          vt->record_fill(gpu, native, slot, &fill);
          break;
        }
        case TANDEM__NODE_COPY: {
          tandem__cmd_copy_t copy = {.id = n,
                                     .src = node->views[0].buffer->native,
                                     .dst = node->views[1].buffer->native,
                                     .src_offset = node->views[0].offset,
                                     .dst_offset = node->views[1].offset,
                                     .bytes = node->views[0].length};
          vt->record_copy(gpu, native, slot, &copy);
          break;
        }
        case TANDEM__NODE_DISPATCH:
          dispatch.id = n;
          dispatch.kernel = node->kernel->native;
          dispatch.bindings = &bindings[at];
          dispatch.binding_count = node->view_count;
          at += node->view_count;
          assert(at <= used);
          dispatch.push = node->push;
          dispatch.push_bytes = node->push_bytes;
          dispatch.workgroups[0] = node->workgroups[0];
          dispatch.workgroups[1] = node->workgroups[1];
          dispatch.workgroups[2] = node->workgroups[2];
          dispatch.indirect = node->indirect.buffer ? node->indirect.buffer->native : NULL;
          dispatch.indirect_offset = node->indirect.offset;
          vt->record_dispatch(gpu, native, slot, &dispatch);
          break;
        case TANDEM__NODE_VULKAN_COMMANDS: {
          tandem__user_context_t context = {gpu, plan, n};
          tandem__cmd_user_t cmd = {.id = n, .record = tandem__user_record, .context = &context};
          user = vt->record_user(gpu, native, slot, &cmd);
          break;
        }
        case TANDEM__NODE_NPU_RUN: /* never in a GPU region (core/graph.c) */
          assert(!"an NPU run in a GPU region");
          break;
      }
    }
    assert(user != TANDEM_OK || at == used);
  }
  if (user == TANDEM_OK) return vt->record_end(gpu, native, slot);
  /* Ended even after a callback failed: a buffer left recording could not
   * be begun again. The region's version stays old, so it is recorded again
   * before any submit uses it (core/exec.c). The message is the callback's. */
  char saved[1024];
  tandem__save_error(saved, sizeof saved);
  (void)vt->record_end(gpu, native, slot);
  tandem__restore_error(saved);
  return user;
}

/*--------------------------------------------------------------------------
 * Recording the slots of a new program in parallel.
 *
 * Each slot of a program records every GPU region once at prepare, and the
 * slots' recordings are independent: each has its own command buffers and
 * descriptor sets, and the backend keeps each slot's recording state apart
 * (core/backend.h). So prepare records them on several threads: the calling
 * thread takes slot 0 (and every |threads|-th after it), and one extra thread
 * per further share is created for this prepare and joined before it returns.
 *
 * Why threads of the prepare's own rather than a pool kept by the runtime: a
 * large prepare costs milliseconds and a thread's creation and join tens of
 * microseconds (24 us at best on the 2-core development machine), so a pool
 * would save nothing measurable where parallel recording is used at all (see
 * TANDEM__RECORD_PARALLEL_MIN); and threads that exist only
 * inside tandem__program_create need no start, stop, wake-up or fork story in
 * the runtime, and hold nothing when no prepare runs.
 *
 * Ownership: while the threads run, thread t alone records the slots
 * t, t + threads, ... (their command buffers, sets and backend recording
 * state); the plan and the program's description are only read. Each
 * thread's result (status, message) is its own tandem__record_share_t,
 * read by the calling thread after the join.
 *
 * Errors: as recorded on one thread, the first failure in (slot, region)
 * order wins. A share stops at its first failure, and the slots it leaves
 * unrecorded are later than that failure; the failure reported is that of
 * the lowest failing slot, with its own message (the worker's thread-local
 * message is carried back), whatever the timing.
 *--------------------------------------------------------------------------*/

/* At most this many threads (the caller included) record one prepare. */
#define TANDEM__RECORD_THREADS 4u

typedef struct tandem__record_share {
  tandem__gpu_t *gpu;
  void *native;
  const tandem__plan_t *plan;
  uint32_t first, stride, slot_count;
  uint32_t failed_slot; /* the slot that failed, UINT32_MAX: none */
  tandem_status_t status;
  char message[1024]; /* the failure's message (status.c's size) */
} tandem__record_share_t;

/* Records every GPU region of the share's slots, in order; stops at the
 * first failure and keeps its slot and message. */
static void tandem__record_share(tandem__record_share_t *share) {
  share->status = TANDEM_OK;
  share->failed_slot = UINT32_MAX;
  const tandem__plan_t *plan = share->plan;
  for (uint32_t sl = share->first; sl < share->slot_count; sl += share->stride) {
    for (uint32_t r = 0; r < plan->region_count; r++) {
      if (plan->regions[r].lane == TANDEM_LANE_NPU) continue;
      tandem_status_t s = tandem__record_region(share->gpu, share->native, plan, sl, r);
      if (s != TANDEM_OK) {
        share->status = s;
        share->failed_slot = sl;
        tandem__save_error(share->message, sizeof share->message);
        return;
      }
    }
  }
}

static void *tandem__record_thread(void *arg) {
  tandem__record_share((tandem__record_share_t *)arg);
  return NULL;
}

/* How many threads record |plan|'s |slot_count| slots: one unless there is
 * more than one slot, enough commands for threads to pay, and no user
 * commands (a user's callback is only called on the thread that prepares). */
static uint32_t tandem__record_threads(const tandem__plan_t *plan, uint32_t slot_count) {
  if (slot_count < 2) return 1;
  uint64_t commands = 0;
  for (uint32_t r = 0; r < plan->region_count; r++)
    if (plan->regions[r].lane != TANDEM_LANE_NPU) commands += plan->regions[r].count;
  if (commands * slot_count < TANDEM__RECORD_PARALLEL_MIN) return 1;
  for (uint32_t i = 0; i < plan->node_count; i++)
    if (plan->nodes[i].kind == TANDEM__NODE_VULKAN_COMMANDS) return 1;
  return slot_count < TANDEM__RECORD_THREADS ? slot_count : TANDEM__RECORD_THREADS;
}

/* Records every GPU region of every slot of a new program (before anyone
 * else can see it), on up to TANDEM__RECORD_THREADS threads. */
static tandem_status_t tandem__record_slots(tandem__gpu_t *gpu, void *native,
                                            const tandem__plan_t *plan, uint32_t slot_count) {
  tandem__record_share_t shares[TANDEM__RECORD_THREADS];
  pthread_t threads[TANDEM__RECORD_THREADS];
  bool started[TANDEM__RECORD_THREADS] = {false};
  uint32_t n = tandem__record_threads(plan, slot_count);
  assert(n >= 1 && n <= TANDEM__RECORD_THREADS);
  for (uint32_t t = 0; t < n; t++)
    shares[t] = (tandem__record_share_t){.gpu = gpu,
                                         .native = native,
                                         .plan = plan,
                                         .first = t,
                                         .stride = n,
                                         .slot_count = slot_count};
  /* A thread that cannot be created leaves its share to the calling
   * thread, after its own: the outcome is the same, only slower. */
  for (uint32_t t = 1; t < n; t++)
    started[t] = pthread_create(&threads[t], NULL, tandem__record_thread, &shares[t]) == 0;
  tandem__record_share(&shares[0]);
  for (uint32_t t = 1; t < n; t++) {
    if (started[t])
      pthread_join(threads[t], NULL);
    else
      tandem__record_share(&shares[t]);
  }
  const tandem__record_share_t *first = NULL; /* the lowest failing slot */
  for (uint32_t t = 0; t < n; t++)
    if (shares[t].status != TANDEM_OK && (!first || shares[t].failed_slot < first->failed_slot))
      first = &shares[t];
  if (!first) return TANDEM_OK;
  tandem__restore_error(first->message);
  return first->status;
}

tandem_status_t tandem__program_create(tandem__gpu_t *gpu, const tandem__plan_t *plan,
                                       uint32_t slot_count, void **out_native) {
  *out_native = NULL;
  uint32_t rc = plan->region_count, n = plan->node_count;
  /* A binding the device cannot bind in one descriptor: refused before any
   * native object is made. */
  for (uint32_t i = 0; i < n; i++) {
    const tandem__node_t *node = &plan->nodes[i];
    if (node->kind != TANDEM__NODE_DISPATCH) continue;
    for (uint32_t b = 0; b < node->view_count; b++)
      if (node->kernel->bindings[b].bytes > gpu->max_storage_range)
        return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                           "binding %u of '%s': contract bytes %llu exceed the device's "
                           "maxStorageBufferRange %llu",
                           b, node->kernel->name,
                           (unsigned long long)node->kernel->bindings[b].bytes,
                           (unsigned long long)gpu->max_storage_range);
  }
  tandem_lane_t *region_lane = malloc((rc ? rc : 1) * sizeof *region_lane);
  uint32_t *region_commands = malloc((rc ? rc : 1) * sizeof *region_commands);
  tandem__program_command_t *commands = malloc((n ? n : 1) * sizeof *commands);
  if (!region_lane || !region_commands || !commands) {
    free(region_lane);
    free(region_commands);
    free(commands);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a program of %u regions", rc);
  }
  for (uint32_t r = 0; r < rc; r++) {
    region_lane[r] = plan->regions[r].lane;
    region_commands[r] = plan->regions[r].count;
  }
  for (uint32_t i = 0; i < n; i++) {
    const tandem__node_t *node = &plan->nodes[i];
    bool dispatch = node->kind == TANDEM__NODE_DISPATCH;
    commands[i].kernel = dispatch ? node->kernel->native : NULL;
    commands[i].binding_count = dispatch ? node->view_count : 0;
  }
  tandem__program_desc_t desc = {.slot_count = slot_count,
                                 .region_count = rc,
                                 .region_lane = region_lane,
                                 .region_commands = region_commands,
                                 .command_count = n,
                                 .commands = commands};
  void *native = NULL;
  tandem_status_t s = gpu->vtable->program_create(gpu, &desc, &native);
  free(region_lane);
  free(region_commands);
  free(commands);
  if (s == TANDEM_OK) s = tandem__record_slots(gpu, native, plan, slot_count);
  if (s != TANDEM_OK) {
    if (native) gpu->vtable->program_destroy(gpu, native);
    return s;
  }
  *out_native = native;
  return TANDEM_OK;
}
