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
 * thread. A long region is recorded in pieces, each into a command buffer of
 * its own ("Pieces", below), and at prepare a program large enough records
 * its slots and pieces on parallel threads (tandem__record_slots, below).
 */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/buffer_int.h"
#include "core/graph_int.h"
#include "core/handoff.h"
#include "core/kernel_int.h"
#include "core/node_kind.h"
#include "core/plan_int.h"
#include "core/record.h"
#include "core/runtime_int.h"

/* A dispatch's bindings always fit an empty batch, so every chunk of a
 * region (tandem__record_region) holds at least one node. */
_Static_assert(TANDEM__BINDING_BATCH >= TANDEM_MAX_BINDINGS, "a dispatch fits one batch");

/* The kinds of work |node| does as a barrier's source (what must finish)
 * and as its destination (what must wait): its kind's (node_kind.c). */
static uint32_t tandem__node_src_work(const tandem__node_t *node) {
  uint32_t work = tandem__node_info(node)->src_work;
  assert(work != 0); /* a node in a GPU region */
  return work;
}

/* Node |node|'s bindings (a dispatch): each view's buffer native and offset,
 * with the contract's bytes (the view's length for a view-sized binding).
 * Returns how many. */
static inline uint32_t tandem__bindings_of(const tandem__node_t *node,
                                           tandem__binding_t *bindings) {
  assert(node->kind == TANDEM__NODE_DISPATCH && node->view_count <= TANDEM_MAX_BINDINGS);
  const tandem_view_t *views = node->views;
  const tandem_binding_contract_t *contract = node->kernel->bindings;
  for (uint32_t b = 0; b < node->view_count; b++) {
    bindings[b].buffer = views[b].buffer->native;
    bindings[b].offset = views[b].offset;
    bindings[b].range = tandem__binding_bytes(&contract[b], views[b]);
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

/*--------------------------------------------------------------------------
 * Pieces: a long region recorded into several command buffers.
 *
 * One command buffer is recorded by one thread, so a program of one long
 * region (a 10 000-node chain) recorded its slots in parallel still took one
 * thread's time per slot. A region of at least 2 x piece_min commands with
 * no user commands is therefore split into pieces of at least piece_min
 * commands, each recorded as a recording of its own (core/backend.h,
 * "Pieces"), and prepare records pieces x slots on parallel threads.
 *
 * A piece starts only at a command with a barrier before it, and that
 * barrier is the piece's first command, with the source scope the whole
 * region's recording gives it (the kinds of work since the barrier before,
 * in the previous piece) and the destination scope up to the next barrier:
 * the pieces in order record exactly the commands and barriers of the whole
 * region (test_plan_table pins it). The backend keeps the order across
 * pieces (Vulkan: one batch, the buffers in piece order). Regions without
 * barriers (independent dispatches) are left whole: splitting them is
 * possible anywhere outside a binding batch, but they gain nothing from
 * parallel threads on the H200 so far (bench/NOTES.md).
 *
 * The split is a pure function of the plan and piece_min, computed again
 * where needed (tandem__region_piece_end), so re-recording at submit needs
 * no stored table and allocates nothing.
 *--------------------------------------------------------------------------*/

uint32_t tandem__record_piece_min(void) {
  const char *env = getenv("TANDEM_RECORD_PIECE_MIN");
  if (env && *env) {
    char *end = NULL;
    unsigned long v = strtoul(env, &end, 10);
    if (*end == '\0' && v >= 1 && v <= UINT32_MAX) return (uint32_t)v;
  }
  return TANDEM__RECORD_PIECE_MIN;
}

static uint32_t tandem__piece_min(const tandem__plan_t *plan) {
  return plan->piece_min ? plan->piece_min : TANDEM__RECORD_PIECE_MIN;
}

/* Whether GPU region |region| is recorded in pieces at all. */
static bool tandem__region_splits(const tandem__plan_t *plan, uint32_t region) {
  const tandem__region_t *r = &plan->regions[region];
  uint32_t min = tandem__piece_min(plan);
  if (r->lane == TANDEM_LANE_NPU || r->count / 2u < min) return false;
  for (uint32_t k = 0; k < r->count; k++)
    if (plan->nodes[plan->order[r->first + k]].kind == TANDEM__NODE_VULKAN_COMMANDS) return false;
  return true;
}

/* The end (a position in the region, exclusive) of the piece that starts at
 * |start|: the first position at least piece_min on whose node has a barrier
 * before it and leaves at least piece_min commands after, else the region's
 * end. |splits|: tandem__region_splits. */
static uint32_t tandem__region_piece_end(const tandem__plan_t *plan, uint32_t region, bool splits,
                                         uint32_t start) {
  const tandem__region_t *r = &plan->regions[region];
  if (!splits) return r->count;
  uint32_t min = tandem__piece_min(plan);
  const uint32_t *order = &plan->order[r->first];
  for (uint64_t k = (uint64_t)start + min; k + min <= r->count; k++)
    if (plan->nodes[order[k]].barrier_before) return (uint32_t)k;
  return r->count;
}

uint32_t tandem__region_pieces(const tandem__plan_t *plan, uint32_t region) {
  bool splits = tandem__region_splits(plan, region);
  uint32_t pieces = 0, count = plan->regions[region].count;
  for (uint32_t k = 0; k < count || pieces == 0; pieces++)
    k = tandem__region_piece_end(plan, region, splits, k);
  return pieces;
}

/* Records piece |piece| of GPU region |region_index| of slot |slot|: the
 * region's positions start .. end-1. */
static tandem_status_t tandem__record_piece(tandem__gpu_t *gpu, void *native,
                                            const tandem__plan_t *plan, uint32_t slot,
                                            uint32_t region_index, uint32_t piece, uint32_t start,
                                            uint32_t end_of_piece) {
  const tandem__gpu_vtable_t *vt = gpu->vtable;
  const tandem__region_t *region = &plan->regions[region_index];
  assert(region->lane != TANDEM_LANE_NPU);             /* the NPU lane thread runs those */
  const uint32_t *order = &plan->order[region->first]; /* the region's nodes, in record order */
  const tandem__node_t *nodes = plan->nodes;
  uint32_t count = region->count; /* barrier scopes look to the region's end */
  assert((start < end_of_piece || count == 0) && end_of_piece <= count);
  assert(start == 0 || nodes[order[start]].barrier_before);
  tandem_status_t s = vt->record.begin(gpu, native, slot, region_index, piece);
  if (s != TANDEM_OK) return s;
  /* The region goes in chunks: the bindings of a chunk's dispatches (up to
   * one batch of them), then the chunk's commands, which carry the same
   * bindings without building them again. Nothing recorded before a chunk
   * binds its dispatches' descriptors, so a backend may write them then. */
  uint32_t ids[TANDEM__BINDING_BATCH], counts[TANDEM__BINDING_BATCH];
  tandem__binding_t bindings[TANDEM__BINDING_BATCH];
  tandem__binding_batch_t batch = {.ids = ids, .binding_counts = counts, .bindings = bindings};
  tandem__cmd_dispatch_t dispatch;
  /* Kinds of work since the last barrier (or the region's start): for a
   * piece after the first, the work of the previous piece since its last
   * barrier, as the whole region's recording has it at this point. */
  uint32_t since = 0;
  for (uint32_t j = start; j-- > 0;) {
    since |= tandem__node_src_work(&nodes[order[j]]);
    if (nodes[order[j]].barrier_before) break;
  }
  uint32_t k = start;
  tandem_status_t user = TANDEM_OK; /* a user callback's failure ends the region */
  while (k < end_of_piece && user == TANDEM_OK) {
    uint32_t end = k, used = 0;
    batch.count = 0;
    for (; end < end_of_piece; end++) {
      const tandem__node_t *node = &nodes[order[end]];
      if (node->kind != TANDEM__NODE_DISPATCH || node->view_count == 0) continue;
      if (used + node->view_count > TANDEM__BINDING_BATCH) break;
      ids[batch.count] = order[end];
      counts[batch.count++] = tandem__bindings_of(node, &bindings[used]);
      used += node->view_count;
    }
    if (batch.count) vt->record.bindings(gpu, native, slot, piece, &batch);
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
        vt->record.barrier(gpu, native, slot, piece, since, until);
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
          vt->record.fill(gpu, native, slot, piece, &fill);
          break;
        }
        case TANDEM__NODE_COPY: {
          tandem__cmd_copy_t copy = {.id = n,
                                     .src = node->views[0].buffer->native,
                                     .dst = node->views[1].buffer->native,
                                     .src_offset = node->views[0].offset,
                                     .dst_offset = node->views[1].offset,
                                     .bytes = node->views[0].length};
          vt->record.copy(gpu, native, slot, piece, &copy);
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
          vt->record.dispatch(gpu, native, slot, piece, &dispatch);
          break;
        case TANDEM__NODE_VULKAN_COMMANDS: {
          tandem__user_context_t context = {gpu, plan, n};
          tandem__cmd_user_t cmd = {.id = n, .record = tandem__user_record, .context = &context};
          user = vt->record.user(gpu, native, slot, piece, &cmd);
          break;
        }
        case TANDEM__NODE_NPU_RUN: /* never in a GPU region (core/graph.c) */
        case TANDEM__NODE_KIND_COUNT: assert(!"a node with no GPU recorder in a GPU region"); break;
      }
    }
    assert(user != TANDEM_OK || at == used);
  }
  if (user == TANDEM_OK) return vt->record.end(gpu, native, slot, piece);
  /* Ended even after a callback failed: a buffer left recording could not
   * be begun again. The region's version stays old, so it is recorded again
   * before any submit uses it (core/submit.c). The message is the callback's. */
  char saved[TANDEM__MESSAGE_BYTES];
  tandem__save_error(saved, sizeof saved);
  (void)vt->record.end(gpu, native, slot, piece);
  tandem__restore_error(saved);
  return user;
}

tandem_status_t tandem__record_region(tandem__gpu_t *gpu, void *native, const tandem__plan_t *plan,
                                      uint32_t slot, uint32_t region) {
  bool splits = tandem__region_splits(plan, region);
  uint32_t count = plan->regions[region].count, start = 0, piece = 0;
  /* Piece by piece, in order; the first failure ends the region (its version
   * stays old, so every piece is recorded again before a submit uses it). */
  do {
    uint32_t end = tandem__region_piece_end(plan, region, splits, start);
    tandem_status_t s = tandem__record_piece(gpu, native, plan, slot, region, piece++, start, end);
    if (s != TANDEM_OK) return s;
    start = end;
  } while (start < count);
  return TANDEM_OK;
}

/*--------------------------------------------------------------------------
 * Recording the slots and pieces of a new program in parallel.
 *
 * Each slot of a program records every piece of every GPU region once at
 * prepare, and these recordings are independent: each (slot, piece) has its
 * own command buffer, the slot its own descriptor sets (a piece writes only
 * its own dispatches'), and the backend keeps each recording's state apart
 * (core/backend.h). So prepare records them on several threads: piece q of
 * slot s goes to thread (q x slots + s) mod threads, the calling thread
 * being thread 0, and one extra thread per further share is created for
 * this prepare and joined before it returns. That is the Vulkan backend's
 * pool rule too, so with 2 or 4 threads no two threads share a pool.
 *
 * Why threads of the prepare's own rather than a pool kept by the runtime: a
 * large prepare costs milliseconds and a thread's creation and join tens of
 * microseconds (24 us at best on the 2-core development machine), so a pool
 * would save nothing measurable where parallel recording is used at all (see
 * TANDEM__RECORD_PARALLEL_MIN); and threads that exist only
 * inside tandem__program_create need no start, stop, wake-up or fork story in
 * the runtime, and hold nothing when no prepare runs.
 *
 * Ownership: while the threads run, thread t alone records its (slot,
 * piece) pairs (their command buffers, the descriptor sets of their
 * dispatches and backend recording state); the plan and the program's
 * description are only read. Each thread's result (status, message) is its
 * own tandem__record_share_t, read by the calling thread after the join.
 *
 * Errors: as recorded on one thread, the first failure in (slot, region,
 * piece) order wins. A share records its pairs in that order and stops at
 * its first failure, so every pair it leaves unrecorded is later than that
 * failure; the failure reported is the lowest failing pair's, with its own
 * message (the worker's thread-local message is carried back), whatever the
 * timing.
 *--------------------------------------------------------------------------*/

/* At most this many threads (the caller included) record one prepare. */
#define TANDEM__RECORD_THREADS 4u

/* One piece of one GPU region (every slot records each). */
typedef struct tandem__piece {
  uint32_t region, piece, start, end;
} tandem__piece_t;

/* The pieces of every region of |plan|, region by region, in order (an NPU
 * region is one piece, never recorded) (malloc'd, *out_count of them); NULL
 * when out of memory. */
static tandem__piece_t *tandem__plan_pieces(const tandem__plan_t *plan, uint32_t *out_count) {
  uint32_t total = 0;
  for (uint32_t r = 0; r < plan->region_count; r++) total += tandem__region_pieces(plan, r);
  tandem__piece_t *pieces = malloc((total ? total : 1) * sizeof *pieces);
  if (!pieces) return NULL;
  uint32_t at = 0;
  for (uint32_t r = 0; r < plan->region_count; r++) {
    bool splits = tandem__region_splits(plan, r);
    uint32_t start = 0, piece = 0;
    do {
      uint32_t end = tandem__region_piece_end(plan, r, splits, start);
      pieces[at++] = (tandem__piece_t){.region = r, .piece = piece++, .start = start, .end = end};
      start = end;
    } while (start < plan->regions[r].count);
  }
  assert(at == total);
  *out_count = total;
  return pieces;
}

typedef struct tandem__record_share {
  tandem__gpu_t *gpu;
  uint32_t gpu_number; /* the runtime's GPU |gpu| is: its regions only */
  void *native;
  const tandem__plan_t *plan;
  const tandem__piece_t *pieces;
  uint32_t piece_count, slot_count;
  uint32_t thread, threads;
  uint64_t failed; /* the (slot, piece) that failed: slot * piece_count + piece; UINT64_MAX none */
  tandem_status_t status;
  char message[1024]; /* the failure's message (status.c's size) */
} tandem__record_share_t;

/* Which thread records piece |p| of slot |slot|: (piece in its region x
 * slots + slot) mod threads, the backend's pool rule (core/backend.h,
 * "Pieces") with a power-of-two thread count, so that threads never share a
 * pool. */
static uint32_t tandem__record_thread_of(const tandem__record_share_t *share, uint32_t slot,
                                         const tandem__piece_t *p) {
  return (uint32_t)(((uint64_t)p->piece * share->slot_count + slot) % share->threads);
}

/* Records the share's (slot, piece) pairs in (slot, region, piece) order;
 * stops at the first failure and keeps which it was and its message. */
static void tandem__record_share(tandem__record_share_t *share) {
  share->status = TANDEM_OK;
  share->failed = UINT64_MAX;
  for (uint32_t sl = 0; sl < share->slot_count; sl++) {
    for (uint32_t i = 0; i < share->piece_count; i++) {
      const tandem__piece_t *p = &share->pieces[i];
      if (tandem__lane_gpu(share->plan->regions[p->region].lane) != (int)share->gpu_number)
        continue;
      if (tandem__record_thread_of(share, sl, p) != share->thread) continue;
      tandem_status_t s = tandem__record_piece(share->gpu, share->native, share->plan, sl,
                                               p->region, p->piece, p->start, p->end);
      if (s != TANDEM_OK) {
        share->status = s;
        share->failed = (uint64_t)sl * share->piece_count + i;
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

/* How many threads record |plan|'s |slot_count| slots of |pieces|: one
 * unless there is more than one (slot, piece) of a region, enough commands
 * for threads to pay, and no user commands (a user's callback is only
 * called on the thread that prepares); else 2 or 4 (a power of two:
 * tandem__record_thread_of). */
static uint32_t tandem__record_threads(const tandem__plan_t *plan, uint32_t g, uint32_t slot_count,
                                       const tandem__piece_t *pieces, uint32_t piece_count) {
  uint32_t most = 0; /* the most pieces of one region */
  for (uint32_t i = 0; i < piece_count; i++)
    if (pieces[i].piece + 1 > most) most = pieces[i].piece + 1;
  uint64_t jobs = (uint64_t)most * slot_count;
  if (jobs < 2) return 1;
  uint64_t commands = 0;
  for (uint32_t r = 0; r < plan->region_count; r++)
    if (tandem__lane_gpu(plan->regions[r].lane) == (int)g) commands += plan->regions[r].count;
  if (commands * slot_count < TANDEM__RECORD_PARALLEL_MIN) return 1;
  for (uint32_t i = 0; i < plan->node_count; i++)
    if (plan->nodes[i].kind == TANDEM__NODE_VULKAN_COMMANDS) return 1;
  return jobs >= TANDEM__RECORD_THREADS ? TANDEM__RECORD_THREADS : 2;
}
_Static_assert(TANDEM__RECORD_THREADS == 4, "2 and 4 threads: powers of two");

/* Records every piece of every GPU region of every slot of a new program
 * (before anyone else can see it), on up to TANDEM__RECORD_THREADS threads. */
static tandem_status_t tandem__record_slots(tandem__gpu_t *gpu, uint32_t g, void *native,
                                            const tandem__plan_t *plan, uint32_t slot_count,
                                            const tandem__piece_t *pieces, uint32_t piece_count) {
  tandem__record_share_t shares[TANDEM__RECORD_THREADS];
  pthread_t threads[TANDEM__RECORD_THREADS];
  bool started[TANDEM__RECORD_THREADS] = {false};
  uint32_t n = tandem__record_threads(plan, g, slot_count, pieces, piece_count);
  assert(n >= 1 && n <= TANDEM__RECORD_THREADS);
  for (uint32_t t = 0; t < n; t++)
    shares[t] = (tandem__record_share_t){.gpu = gpu,
                                         .gpu_number = g,
                                         .native = native,
                                         .plan = plan,
                                         .pieces = pieces,
                                         .piece_count = piece_count,
                                         .slot_count = slot_count,
                                         .thread = t,
                                         .threads = n};
  /* A thread that cannot be created leaves its share to the calling
   * thread, after its own: the outcome is the same, only slower. */
  for (uint32_t t = 1; t < n; t++)
    started[t] = pthread_create(&threads[t], NULL, tandem__record_thread, &shares[t]) == 0;
  tandem__record_share(&shares[0]);
  for (uint32_t t = 1; t < n; t++) {
    if (started[t]) pthread_join(threads[t], NULL);
    else tandem__record_share(&shares[t]);
  }
  const tandem__record_share_t *first = NULL; /* the lowest failing (slot, piece) */
  for (uint32_t t = 0; t < n; t++)
    if (shares[t].status != TANDEM_OK && (!first || shares[t].failed < first->failed))
      first = &shares[t];
  if (!first) return TANDEM_OK;
  tandem__restore_error(first->message);
  return first->status;
}

tandem_status_t tandem__program_create(tandem__gpu_t *gpu, uint32_t g, const tandem__plan_t *plan,
                                       uint32_t slot_count, void **out_native) {
  *out_native = NULL;
  uint32_t rc = plan->region_count, n = plan->node_count;
  /* A binding the device cannot bind in one descriptor: refused before any
   * native object is made. */
  for (uint32_t i = 0; i < n; i++) {
    const tandem__node_t *node = &plan->nodes[i];
    if (node->kind != TANDEM__NODE_DISPATCH || tandem__lane_gpu(node->lane) != (int)g) continue;
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
  uint32_t *region_pieces = malloc((rc ? rc : 1) * sizeof *region_pieces);
  tandem__program_command_t *commands = malloc((n ? n : 1) * sizeof *commands);
  uint32_t piece_count = 0;
  tandem__piece_t *pieces = tandem__plan_pieces(plan, &piece_count);
  uint32_t *piece_commands = malloc((piece_count ? piece_count : 1) * sizeof *piece_commands);
  if (!region_lane || !region_commands || !region_pieces || !commands || !pieces ||
      !piece_commands) {
    free(region_lane);
    free(region_commands);
    free(region_pieces);
    free(commands);
    free(pieces);
    free(piece_commands);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a program of %u regions", rc);
  }
  /* The backend sees its own lanes as 0 .. 2, and every region another GPU
   * (or the NPU) runs as an NPU region: never recorded or submitted here. */
  for (uint32_t r = 0; r < rc; r++) {
    tandem_lane_t l = plan->regions[r].lane;
    region_lane[r] = tandem__lane_gpu(l) == (int)g ? tandem__lane_local(l) : TANDEM_LANE_NPU;
    region_commands[r] = plan->regions[r].count;
  }
  for (uint32_t i = 0; i < piece_count; i++) {
    region_pieces[pieces[i].region] = pieces[i].piece + 1;
    piece_commands[i] = pieces[i].end - pieces[i].start;
  }
  for (uint32_t i = 0; i < n; i++) {
    const tandem__node_t *node = &plan->nodes[i];
    bool dispatch = node->kind == TANDEM__NODE_DISPATCH && tandem__lane_gpu(node->lane) == (int)g;
    commands[i].kernel = dispatch ? node->kernel->native : NULL;
    commands[i].binding_count = dispatch ? node->view_count : 0;
  }
  tandem__program_desc_t desc = {.slot_count = slot_count,
                                 .region_count = rc,
                                 .region_lane = region_lane,
                                 .region_commands = region_commands,
                                 .region_pieces = region_pieces,
                                 .piece_commands = piece_commands,
                                 .command_count = n,
                                 .commands = commands,
                                 .handoff_count = plan->handoff_count,
                                 .handoffs = plan->handoffs};
  void *native = NULL;
  tandem_status_t s = gpu->vtable->program.create(gpu, &desc, &native);
  free(region_lane);
  free(region_commands);
  free(region_pieces);
  free(commands);
  free(piece_commands);
  if (s == TANDEM_OK)
    s = tandem__record_slots(gpu, g, native, plan, slot_count, pieces, piece_count);
  free(pieces);
  if (s != TANDEM_OK) {
    if (native) gpu->vtable->program.destroy(gpu, native);
    return s;
  }
  *out_native = native;
  return TANDEM_OK;
}
