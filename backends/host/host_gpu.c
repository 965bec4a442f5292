/* SPDX-License-Identifier: MIT */
/*
 * host_gpu.c — the host GPU of host_gpu.h: core/backend.h's vtable on host
 * memory and host threads, the registry's GPU backend "host". A test and
 * development device, never hardware: the suite runs on it to check core's
 * ordering with three real queues and no Vulkan device.
 *
 * Objects: a buffer is host memory (imported host memory for SHARED buffers
 * on the host-pointer sharing path); a kernel is a copy of its
 * host_gpu_kernel_code_t; a program keeps, per slot and region, the list of
 * commands core recorded through the command interface (core/backend.h:
 * barriers with their scopes, fills, copies, dispatches; so a submission
 * made never changes, as with Vulkan command buffers), per slot a copy of
 * each dispatch's bindings (its "descriptor set"), and one preallocated
 * job, which program_submit queues without allocating. It sees commands
 * only, never core's plan: what it runs and checks is what a device would
 * be given.
 *
 * Threads: one per queue (three, or one with config.one_queue). A queue
 * starts its head job when the job's lane is not held and every lane's
 * timeline reached the job's wait values, runs its commands outside the
 * lock, then sets its lane's timeline to the job's value. One mutex guards
 * timelines, queues, holds, the log and the ordering check; one condition
 * variable (CLOCK_MONOTONIC) announces every change. Lock order:
 * runtime->mutex before host_gpu.mutex (core queries under its lock); a
 * queue thread takes only host_gpu.mutex and its queue's exec mutex.
 *
 * Invariants (asserted in Debug builds):
 *   H1  each lane's timeline only increases, by signals of the values core
 *       handed out: a queue signals its jobs' values in queue order;
 *   H2  a job is queued at most once at a time (a slot's region is in flight
 *       once), and is idle again before its slot can be submitted again;
 *   H3  a job starts only when every timeline reached its wait values.
 */
#include <assert.h>
#include <stddef.h>
#include <stdio.h> /* snprintf */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "backends/spirv/spirv_reflect.h" /* SPIR-V reflection: SPIRV-Cross, no Vulkan */
#include "core/backend.h"
#include "core/status.h"
#include "core/test_hooks.h"
#include "host_gpu.h"

enum {
  /* Buffers one command touches: a dispatch's bindings and its indirect
   * counts buffer. */
  HG_MAX_CMD_ACCESSES = TANDEM_MAX_BINDINGS + 1,
  HG_HISTORY = 64, /* accesses kept per buffer for the ordering check */
  HG_KNOW = 1024,  /* values kept per lane for the ordering check */
  HG_MAX_QUEUES = TANDEM_LANE_COUNT_GPU,
};

/* One GPU access, kept for the ordering check. */
typedef struct hg_access {
  uint64_t offset, length;
  tandem_access_t access;
  tandem_lane_t lane;
  uint64_t value; /* the region's signal value on |lane| */
} hg_access_t;

typedef struct hg_buffer {
  uint8_t *bytes;
  uint64_t size;
  bool owned;                      /* false: imported host memory */
  hg_access_t history[HG_HISTORY]; /* [gpu mutex] ring of the latest accesses */
  uint32_t history_written;        /* [gpu mutex] */
} hg_buffer_t;

typedef struct hg_kernel {
  host_gpu_kernel_code_t code;
  tandem_test_host_kernel_fn twin; /* a SPIR-V kernel's C twin; NULL: code.run */
  uint32_t local_size[3];
} hg_kernel_t;

typedef enum hg_job_state { HG_JOB_IDLE, HG_JOB_QUEUED, HG_JOB_RUNNING } hg_job_state_t;

typedef struct hg_program hg_program_t;

typedef struct hg_job {
  struct hg_job *next;  /* [gpu mutex] its queue */
  hg_job_state_t state; /* [gpu mutex] (H2) */
  hg_program_t *program;
  uint32_t slot, region;
  tandem_lane_t lane;
  uint64_t waits[TANDEM__MAX_LANES];
  uint64_t signal;
  /* What the job is ordered after: at submit, what the host had observed
   * (host_after); at start, joined with what its waits name. */
  uint64_t known[TANDEM__MAX_LANES];
} hg_job_t;

typedef enum hg_cmd_kind {
  HG_CMD_BARRIER,
  HG_CMD_FILL,
  HG_CMD_COPY,
  HG_CMD_DISPATCH,
} hg_cmd_kind_t;

/* One command as recorded (core/backend.h's command interface): what a
 * Vulkan command buffer would hold. Buffers are not retained: core keeps
 * every buffer a recorded slot uses alive (tandem__slot_t.views). */
typedef struct hg_cmd {
  hg_cmd_kind_t kind;
  uint32_t id;                 /* the command's id (core: its plan node) */
  uint32_t src_work, dst_work; /* BARRIER: TANDEM__WORK_* scopes */
  struct hg_buffer *dst, *src; /* FILL: dst; COPY: src to dst */
  uint64_t dst_offset, src_offset, length;
  uint32_t pattern;
  const struct hg_kernel *kernel;    /* DISPATCH */
  const tandem__binding_t *bindings; /* the slot's "descriptor set" of |id| */
  uint32_t binding_count;
  uint32_t push_bytes;
  uint8_t push[TANDEM_MAX_PUSH_CONSTANT_BYTES];
  uint32_t workgroups[3];
  struct hg_buffer *indirect;
  uint64_t indirect_offset;
} hg_cmd_t;

/* One region as recorded for one slot: its command list, barriers included
 * (at most one before each command, so 2 x its commands). A region recorded
 * in pieces (core/backend.h, "Pieces") has each piece write its own stretch
 * of |cmds| (2 x the commands before it on): piece_counts[piece] entries
 * there, which program_submit closes up into one list of |count| when the
 * pieces were recorded again (|fresh|), as a queue runs a batch's command
 * buffers one after the other. */
typedef struct hg_region {
  tandem_lane_t lane;
  uint32_t count, capacity;
  hg_cmd_t *cmds;
  uint32_t pieces;
  uint32_t *piece_at;     /* [piece]: the piece's first entry in |cmds| */
  uint32_t *piece_counts; /* [piece]: written by the piece's recording thread */
  bool *fresh;            /* [piece]: recorded since the last close-up */
} hg_region_t;

/* A recording in progress, of one (slot, piece) (core/backend.h). */
typedef struct hg_recording {
  hg_region_t *region; /* NULL: none */
  uint32_t piece, count, capacity;
  hg_cmd_t *cmds; /* the piece's stretch of region->cmds */
} hg_recording_t;

struct hg_program {
  uint32_t id, slot_count, region_count, command_count;
  hg_region_t *regions; /* [slot * region_count + region] */
  hg_job_t *jobs;       /* same index */
  uint64_t *times;      /* 2 per entry: CLOCK_MONOTONIC start and end of its last run */
  hg_cmd_t *cmd_store;
  /* Per slot, each dispatch's bindings as record_bindings wrote them (what a
   * descriptor set holds): binding_store[slot * binding_total + binding_at[id]]. */
  tandem__binding_t *binding_store;
  uint32_t *binding_at;
  uint32_t *binding_count; /* [id]: from the program description */
  uint32_t binding_total;
  /* [slot * max_pieces + piece] The recording in progress of each slot and
   * piece (core/backend.h: a (slot, piece) records one region at a time on
   * one thread; others may record on different threads at once, at
   * prepare). Each entry is written only by the thread recording it (Debug
   * builds check: |recording_owner|). */
  uint32_t max_pieces;
  hg_recording_t *recording;
  uint32_t *piece_store; /* piece_at and piece_counts of every region */
  bool *fresh_store;
  /* [slot * max_pieces + piece] Kept in every build, so that the
   * allocation sites are the same whatever NDEBUG says (the fault sweep
   * names each); asserted in Debug. */
  pthread_t *recording_owner;
};

typedef struct hg_queue {
  hg_job_t *head, *tail; /* [gpu mutex] */
  bool running;          /* [gpu mutex] one of its jobs runs */
  pthread_mutex_t exec;  /* held while a job's commands run (tandem_runtime_queue_lock) */
  pthread_t thread;
  bool started;
  struct host_gpu *gpu;
} hg_queue_t;

/* What reaching value |value| of a lane is ordered after, per lane. */
typedef struct hg_know {
  uint64_t value;
  uint64_t after[TANDEM__MAX_LANES];
} hg_know_t;

struct host_gpu {
  tandem__gpu_t base;
  host_gpu_config_t config;
  bool timestamps;
  pthread_mutex_t mutex;
  pthread_cond_t changed;
  uint64_t timeline[TANDEM__MAX_LANES]; /* [mutex] (H1) */
  uint64_t allow[TANDEM__MAX_LANES];    /* [mutex] regions a lane may still start */
  bool stop;                            /* [mutex] */
  hg_queue_t queues[HG_MAX_QUEUES];
  uint32_t queue_count;
  hg_know_t know[TANDEM__MAX_LANES][HG_KNOW]; /* [mutex] ring per lane, by value */
  host_gpu_event_t *log;                      /* [mutex] */
  uint32_t log_count;                         /* [mutex] */
  uint64_t log_dropped;                       /* [mutex] */
  uint64_t unordered;                         /* [mutex] */
  char first_unordered[256];                  /* [mutex] the first one, in words */
  /* [mutex] What the host has observed reached (waits and queries) and so
   * what work submitted from now on is ordered after: core retires a
   * submission when it sees its values, and then orders nothing after it. */
  uint64_t host_after[TANDEM__MAX_LANES];
  uint32_t next_program; /* [mutex] */
};

static const tandem__gpu_vtable_t hg_vtable;

static host_gpu_t *hg_cast(tandem__gpu_t *base) {
  assert(base->vtable == &hg_vtable);
  return (host_gpu_t *)base;
}

static uint64_t hg_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Appends |e| to the log. Needs the mutex. */
static void hg_log_locked(host_gpu_t *g, const host_gpu_event_t *e) {
  if (g->log_count == g->config.log_capacity) {
    g->log_dropped++;
    return;
  }
  g->log[g->log_count++] = *e;
}

static void hg_log(host_gpu_t *g, const host_gpu_event_t *e) {
  pthread_mutex_lock(&g->mutex);
  hg_log_locked(g, e);
  pthread_mutex_unlock(&g->mutex);
}

/*--------------------------------------------------------------------------
 * The ordering check
 *--------------------------------------------------------------------------*/

/* The host thread's knowledge: what its successful waits ordered it after.
 * The NPU lane thread passes it on with its signals. */
static _Thread_local struct {
  const host_gpu_t *gpu;
  uint64_t after[TANDEM__MAX_LANES];
} hg_thread;

static void hg_join(uint64_t into[TANDEM__MAX_LANES], const uint64_t from[TANDEM__MAX_LANES]) {
  for (int l = 0; l < TANDEM__MAX_LANES; l++)
    if (from[l] > into[l]) into[l] = from[l];
}

/* Joins into |into| what value |value| of |lane| is ordered after (itself
 * included). An entry the ring no longer holds gives only the value. */
static void hg_join_known_locked(const host_gpu_t *g, tandem_lane_t lane, uint64_t value,
                                 uint64_t into[TANDEM__MAX_LANES]) {
  if (value == 0) return;
  const hg_know_t *k = &g->know[lane][value % HG_KNOW];
  if (k->value == value) hg_join(into, k->after);
  if (value > into[lane]) into[lane] = value;
}

/* Records that reaching |value| on |lane| is ordered after |after|, and
 * (a lane's values complete in order) after its previous value. */
static void hg_set_known_locked(host_gpu_t *g, tandem_lane_t lane, uint64_t value,
                                const uint64_t after[TANDEM__MAX_LANES]) {
  hg_know_t *k = &g->know[lane][value % HG_KNOW];
  uint64_t a[TANDEM__MAX_LANES];
  memcpy(a, after, sizeof a);
  hg_join_known_locked(g, lane, value - 1, a);
  a[lane] = value;
  k->value = value;
  memcpy(k->after, a, sizeof a);
}

static void hg_unordered_locked(host_gpu_t *g, const hg_job_t *job, const hg_access_t *earlier,
                                uint64_t offset, uint64_t length) {
  g->unordered++;
  host_gpu_event_t e = {.kind = HOST_GPU_UNORDERED,
                        .program = job->program->id,
                        .slot = job->slot,
                        .region = job->region,
                        .lane = job->lane,
                        .value = job->signal,
                        .other_lane = earlier->lane,
                        .other_value = earlier->value,
                        .offset = offset,
                        .length = length};
  hg_log_locked(g, &e);
  if (g->unordered == 1)
    snprintf(g->first_unordered, sizeof g->first_unordered,
             "region %u (lane %s, value %llu) touches bytes %llu..%llu, which region (lane %s, "
             "value %llu) also touched, and no wait orders them",
             job->region, tandem_lane_name(job->lane), (unsigned long long)job->signal,
             (unsigned long long)offset, (unsigned long long)(offset + length),
             tandem_lane_name(earlier->lane), (unsigned long long)earlier->value);
}

/* One byte range a command touches: how, and the kind of work it is as a
 * barrier's source (what must finish) and destination (what must wait). */
typedef struct hg_cmd_access {
  hg_buffer_t *buffer;
  uint64_t offset, length;
  tandem_access_t access;
  uint32_t src_work, dst_work;
} hg_cmd_access_t;

/* What command |c| touches, derived from the command alone (as a device
 * would run it): a dispatch's bindings as its kernel reads and writes them,
 * its indirect counts read at TANDEM__WORK_INDIRECT. */
static uint32_t hg_cmd_accesses(const hg_cmd_t *c, hg_cmd_access_t *out) {
  uint32_t n = 0;
  switch (c->kind) {
    case HG_CMD_BARRIER: break;
    case HG_CMD_FILL:
      out[n++] = (hg_cmd_access_t){c->dst,
                                   c->dst_offset,
                                   c->length,
                                   TANDEM_ACCESS_WRITE,
                                   TANDEM__WORK_TRANSFER,
                                   TANDEM__WORK_TRANSFER};
      break;
    case HG_CMD_COPY:
      out[n++] = (hg_cmd_access_t){c->src,
                                   c->src_offset,
                                   c->length,
                                   TANDEM_ACCESS_READ,
                                   TANDEM__WORK_TRANSFER,
                                   TANDEM__WORK_TRANSFER};
      out[n++] = (hg_cmd_access_t){c->dst,
                                   c->dst_offset,
                                   c->length,
                                   TANDEM_ACCESS_WRITE,
                                   TANDEM__WORK_TRANSFER,
                                   TANDEM__WORK_TRANSFER};
      break;
    case HG_CMD_DISPATCH:
      for (uint32_t b = 0; b < c->binding_count; b++) {
        tandem_access_t a = (c->kernel->code.reads[b] ? TANDEM_ACCESS_READ : 0) |
                            (c->kernel->code.writes[b] ? TANDEM_ACCESS_WRITE : 0);
        if (a)
          out[n++] = (hg_cmd_access_t){c->bindings[b].buffer, c->bindings[b].offset,
                                       c->bindings[b].range,  a,
                                       TANDEM__WORK_COMPUTE,  TANDEM__WORK_COMPUTE};
      }
      /* The counts are read before the shader runs: a COMPUTE source scope
       * covers the read, a destination must name INDIRECT. */
      if (c->indirect)
        out[n++] =
            (hg_cmd_access_t){c->indirect,        c->indirect_offset,   12,
                              TANDEM_ACCESS_READ, TANDEM__WORK_COMPUTE, TANDEM__WORK_INDIRECT};
      break;
  }
  return n;
}

/* Whether, inside a region, command |j|'s access |earlier| is ordered before
 * command |i|'s access |later| by the barriers between them. Vulkan's
 * model: a barrier orders work of its source kinds before it against work of
 * its destination kinds after it, and barriers chain when one's source
 * meets what an earlier one ordered. */
static bool hg_barriers_order(const hg_region_t *rec, uint32_t j, uint32_t i,
                              const hg_cmd_access_t *earlier, const hg_cmd_access_t *later) {
  uint32_t ordered = 0; /* kinds of work after the barriers so far that wait for |earlier| */
  for (uint32_t p = j + 1; p < i; p++) {
    const hg_cmd_t *c = &rec->cmds[p];
    if (c->kind == HG_CMD_BARRIER && ((ordered | earlier->src_work) & c->src_work))
      ordered |= c->dst_work;
  }
  return (later->dst_work & ordered) != 0;
}

/* The ordering check's own hazard rule, Vulkan's (a read after a write, a
 * write after a read or a write), written here rather than taken from core,
 * so the check does not share a mistake with what it checks. */
static bool hg_ranges_overlap(uint64_t a_off, uint64_t a_len, uint64_t b_off, uint64_t b_len) {
  return a_off < b_off + b_len && b_off < a_off + a_len;
}

static bool hg_accesses_conflict(tandem_access_t a, tandem_access_t b) {
  return (a & TANDEM_ACCESS_WRITE) || (b & TANDEM_ACCESS_WRITE);
}

/* At the start of |job|: checks its accesses against the earlier ones to the
 * same bytes, then adds them to the buffers' histories. Inside the region,
 * conflicting commands need barriers between them whose scopes order them
 * (hg_barriers_order). */
static void hg_check_locked(host_gpu_t *g, hg_job_t *job, const hg_region_t *rec) {
  for (uint32_t i = 0; i < rec->count; i++) {
    hg_cmd_access_t acc[HG_MAX_CMD_ACCESSES];
    uint32_t n = hg_cmd_accesses(&rec->cmds[i], acc);
    for (uint32_t a = 0; a < n; a++) {
      hg_buffer_t *b = acc[a].buffer;
      uint32_t kept = b->history_written < HG_HISTORY ? b->history_written : HG_HISTORY;
      for (uint32_t h = 0; h < kept; h++) {
        const hg_access_t *e = &b->history[h];
        if (e->lane == job->lane && e->value == job->signal) continue; /* this region */
        if (!hg_accesses_conflict(e->access, acc[a].access) ||
            !hg_ranges_overlap(e->offset, e->length, acc[a].offset, acc[a].length))
          continue;
        if (job->known[e->lane] < e->value)
          hg_unordered_locked(g, job, e, acc[a].offset, acc[a].length);
      }
      /* Inside the region: every earlier conflicting command must be
       * ordered by the barriers between them. */
      for (uint32_t j = 0; j < i; j++) {
        hg_cmd_access_t other[HG_MAX_CMD_ACCESSES];
        uint32_t m = hg_cmd_accesses(&rec->cmds[j], other);
        for (uint32_t o = 0; o < m; o++) {
          if (other[o].buffer != acc[a].buffer ||
              !hg_accesses_conflict(other[o].access, acc[a].access) ||
              !hg_ranges_overlap(other[o].offset, other[o].length, acc[a].offset, acc[a].length) ||
              hg_barriers_order(rec, j, i, &other[o], &acc[a]))
            continue;
          hg_access_t same = {other[o].offset, other[o].length, other[o].access, job->lane,
                              job->signal};
          hg_unordered_locked(g, job, &same, acc[a].offset, acc[a].length);
        }
      }
    }
  }
  for (uint32_t i = 0; i < rec->count; i++) {
    hg_cmd_access_t acc[HG_MAX_CMD_ACCESSES];
    uint32_t n = hg_cmd_accesses(&rec->cmds[i], acc);
    for (uint32_t a = 0; a < n; a++) {
      hg_buffer_t *b = acc[a].buffer;
      b->history[b->history_written++ % HG_HISTORY] =
          (hg_access_t){acc[a].offset, acc[a].length, acc[a].access, job->lane, job->signal};
    }
  }
}

/*--------------------------------------------------------------------------
 * Running regions
 *--------------------------------------------------------------------------*/

static void hg_fill(const hg_cmd_t *c) {
  assert(c->dst_offset % 4 == 0 && c->length % 4 == 0);
  for (uint64_t at = 0; at < c->length; at += 4)
    memcpy(c->dst->bytes + c->dst_offset + at, &c->pattern, 4);
}

static void hg_copy(const hg_cmd_t *c) {
  memmove(c->dst->bytes + c->dst_offset, c->src->bytes + c->src_offset, c->length);
}

static void hg_dispatch(const hg_cmd_t *c) {
  host_gpu_dispatch_t d = {.binding_count = c->binding_count,
                           .push = c->push,
                           .push_bytes = c->push_bytes};
  for (uint32_t i = 0; i < c->binding_count; i++) {
    const hg_buffer_t *b = c->bindings[i].buffer;
    d.bindings[i] = b->bytes + c->bindings[i].offset;
    d.binding_bytes[i] = c->bindings[i].range;
  }
  if (c->indirect) {
    memcpy(d.workgroups, c->indirect->bytes + c->indirect_offset, sizeof d.workgroups);
    /* As vkCmdDispatchIndirect: a zero count dispatches nothing. */
    if (!d.workgroups[0] || !d.workgroups[1] || !d.workgroups[2]) return;
  } else {
    memcpy(d.workgroups, c->workgroups, sizeof d.workgroups);
  }
  memcpy(d.local_size, c->kernel->local_size, sizeof d.local_size);
  if (c->kernel->twin) {
    c->kernel->twin(&d);
  } else {
    c->kernel->code.run(&d);
  }
}

/* Fills in |e| what the log says of command |c| at |position|. */
static void hg_cmd_describe(const hg_cmd_t *c, uint32_t position, host_gpu_event_t *e) {
  e->position = position;
  e->node = c->id;
  switch (c->kind) {
    case HG_CMD_BARRIER:
      e->kind = HOST_GPU_BARRIER;
      e->src_work = c->src_work;
      e->dst_work = c->dst_work;
      break;
    case HG_CMD_FILL:
      e->kind = HOST_GPU_FILL;
      e->memory = c->dst->bytes;
      e->offset = c->dst_offset;
      e->length = c->length;
      e->pattern = c->pattern;
      break;
    case HG_CMD_COPY:
      e->kind = HOST_GPU_COPY;
      e->memory = c->dst->bytes;
      e->offset = c->dst_offset;
      e->src_memory = c->src->bytes;
      e->src_offset = c->src_offset;
      e->length = c->length;
      break;
    case HG_CMD_DISPATCH:
      e->kind = HOST_GPU_DISPATCH;
      e->binding_count = c->binding_count;
      if (c->binding_count) {
        e->memory = ((const hg_buffer_t *)c->bindings[0].buffer)->bytes;
        e->offset = c->bindings[0].offset;
        e->length = c->bindings[0].range;
      }
      e->indirect = c->indirect != NULL;
      break;
  }
}

static void hg_run_job(host_gpu_t *g, hg_job_t *job) {
  hg_program_t *p = job->program;
  uint32_t at = job->slot * p->region_count + job->region;
  const hg_region_t *rec = &p->regions[at];
  p->times[2 * at] = hg_now();
  for (uint32_t i = 0; i < rec->count; i++) {
    const hg_cmd_t *c = &rec->cmds[i];
    host_gpu_event_t e = {.program = p->id,
                          .slot = job->slot,
                          .region = job->region,
                          .lane = job->lane,
                          .value = job->signal};
    hg_cmd_describe(c, i, &e);
    /* A barrier is logged with the command it precedes (the last command
     * of a region is never a barrier: core records one only before one). */
    if (c->kind == HG_CMD_BARRIER) {
      assert(i + 1 < rec->count && rec->cmds[i + 1].kind != HG_CMD_BARRIER);
      e.node = rec->cmds[i + 1].id;
    }
    switch (c->kind) {
      case HG_CMD_BARRIER: break; /* one thread runs a region in order */
      case HG_CMD_FILL: hg_fill(c); break;
      case HG_CMD_COPY: hg_copy(c); break;
      case HG_CMD_DISPATCH: hg_dispatch(c); break;
    }
    hg_log(g, &e);
  }
  p->times[2 * at + 1] = hg_now();
}

/* Whether |job| may start now. Needs the mutex. */
static bool hg_ready_locked(const host_gpu_t *g, const hg_job_t *job) {
  if (g->allow[job->lane] == 0) return false;
  for (int l = 0; l < TANDEM__MAX_LANES; l++)
    if (g->timeline[l] < job->waits[l]) return false;
  return true;
}

static void *hg_queue_main(void *arg) {
  hg_queue_t *q = arg;
  host_gpu_t *g = q->gpu;
  pthread_mutex_lock(&g->mutex);
  for (;;) {
    while (!(q->head && hg_ready_locked(g, q->head)) && !(g->stop && !q->head))
      pthread_cond_wait(&g->changed, &g->mutex);
    if (!q->head) break; /* stopping, nothing left */
    hg_job_t *job = q->head;
    q->head = job->next;
    if (!q->head) q->tail = NULL;
    job->next = NULL;
    assert(job->state == HG_JOB_QUEUED); /* H2 */
    job->state = HG_JOB_RUNNING;
    q->running = true;
    if (g->allow[job->lane] != UINT64_MAX) g->allow[job->lane]--;
    for (int l = 0; l < TANDEM__MAX_LANES; l++) {
      assert(g->timeline[l] >= job->waits[l]); /* H3 */
      hg_join_known_locked(g, (tandem_lane_t)l, job->waits[l], job->known);
    }
    const hg_program_t *p = job->program;
    hg_check_locked(g, job, &p->regions[job->slot * p->region_count + job->region]);
    host_gpu_event_t e = {.kind = HOST_GPU_START,
                          .program = p->id,
                          .slot = job->slot,
                          .region = job->region,
                          .lane = job->lane,
                          .value = job->signal};
    hg_log_locked(g, &e);
    pthread_mutex_unlock(&g->mutex);

    pthread_mutex_lock(&q->exec);
    hg_run_job(g, job);
    pthread_mutex_unlock(&q->exec);

    pthread_mutex_lock(&g->mutex);
    assert(job->signal > g->timeline[job->lane]); /* H1 */
    g->timeline[job->lane] = job->signal;
    hg_set_known_locked(g, job->lane, job->signal, job->known);
    e.kind = HOST_GPU_END;
    hg_log_locked(g, &e);
    job->state = HG_JOB_IDLE;
    q->running = false;
    pthread_cond_broadcast(&g->changed);
  }
  pthread_mutex_unlock(&g->mutex);
  return NULL;
}

static hg_queue_t *hg_queue_of(host_gpu_t *g, tandem_lane_t lane) {
  assert(lane >= 0 && lane < TANDEM_LANE_COUNT_GPU);
  return &g->queues[g->base.lane_queue[lane]];
}

/*--------------------------------------------------------------------------
 * The vtable
 *--------------------------------------------------------------------------*/

static void hg_stop_queues(host_gpu_t *g) {
  pthread_mutex_lock(&g->mutex);
  g->stop = true;
  for (int l = 0; l < TANDEM__MAX_LANES; l++) g->allow[l] = UINT64_MAX;
  pthread_cond_broadcast(&g->changed);
  pthread_mutex_unlock(&g->mutex);
  for (uint32_t k = 0; k < g->queue_count; k++)
    if (g->queues[k].started) pthread_join(g->queues[k].thread, NULL);
}

static void hg_destroy(tandem__gpu_t *base) {
  host_gpu_t *g = hg_cast(base);
  hg_stop_queues(g);
  for (uint32_t k = 0; k < g->queue_count; k++) {
    assert(!g->queues[k].head);
    pthread_mutex_destroy(&g->queues[k].exec);
  }
  pthread_cond_destroy(&g->changed);
  pthread_mutex_destroy(&g->mutex);
  free(g->log);
  free(g);
}

static void hg_idle(tandem__gpu_t *base) {
  host_gpu_t *g = hg_cast(base);
  pthread_mutex_lock(&g->mutex);
  for (;;) {
    bool busy = false;
    for (uint32_t k = 0; k < g->queue_count; k++) busy |= g->queues[k].head || g->queues[k].running;
    if (!busy) break;
    pthread_cond_wait(&g->changed, &g->mutex);
  }
  pthread_mutex_unlock(&g->mutex);
}

static tandem_status_t hg_buffer_new(uint64_t size, uint8_t *bytes, bool owned, void **out_native) {
  hg_buffer_t *b = calloc(1, sizeof *b);
  if (!b) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "host GPU: a buffer object");
  b->bytes = bytes;
  b->size = size;
  b->owned = owned;
  *out_native = b;
  return TANDEM_OK;
}

static tandem_status_t hg_buffer_create(tandem__gpu_t *base, uint64_t size,
                                        tandem_placement_t placement, uint32_t export_types,
                                        void **out_native, void **out_host) {
  assert(export_types == 0); /* only bits in external_memory_types (none) */
  (void)export_types;
  *out_native = NULL;
  *out_host = NULL;
  /* One allocation never exceeds the heap the device reports, as on a real
   * GPU: without this, whether 1 TiB "fits" would depend on the host's
   * overcommit policy (calloc of 1 TiB succeeds on a 128 GiB machine that
   * overcommits), and the suite's out-of-memory cases would pass on one
   * machine and fail on another. */
  if (size > base->info.device_local_bytes)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                       "host GPU: %llu bytes exceed its %llu-byte memory heap",
                       (unsigned long long)size, (unsigned long long)base->info.device_local_bytes);
  uint8_t *bytes = calloc(1, (size_t)size); /* zero-filled, as the vtable asks */
  if (!bytes)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "host GPU: %llu bytes of memory",
                       (unsigned long long)size);
  tandem_status_t s = hg_buffer_new(size, bytes, true, out_native);
  if (s != TANDEM_OK) {
    free(bytes);
    return s;
  }
  if (placement == TANDEM_PLACEMENT_HOST_VISIBLE) *out_host = bytes;
  return TANDEM_OK;
}

static void hg_buffer_destroy(tandem__gpu_t *base, void *native) {
  (void)base;
  hg_buffer_t *b = native;
  if (!b) return;
  if (b->owned) free(b->bytes);
  free(b);
}

/* One memory type in one heap, device-local and host-visible, as lavapipe's. */
static void hg_buffer_memory(tandem__gpu_t *base, void *native, tandem_buffer_memory_t *out) {
  (void)native;
  *out = (tandem_buffer_memory_t){.memory_type = 0,
                                  .properties =
                                      TANDEM_MEMORY_DEVICE_LOCAL | TANDEM_MEMORY_HOST_VISIBLE |
                                      TANDEM_MEMORY_HOST_COHERENT | TANDEM_MEMORY_HOST_CACHED,
                                  .heap = 0,
                                  .heap_bytes = base->info.device_local_bytes,
                                  .heap_device_local = true};
}

/* No Vulkan object stands behind a host GPU buffer. */
static void *hg_buffer_vulkan(tandem__gpu_t *base, void *native) {
  (void)base;
  (void)native;
  return NULL;
}

/* Interop: external_memory_types, timelines_exportable and
 * can_import_timelines are all off, so core refuses these before they are
 * called; each still answers, as the vtable asks of every slot. */
static tandem_status_t hg_buffer_export(tandem__gpu_t *base, void *native,
                                        tandem_external_memory_type_t type,
                                        tandem_external_memory_t *out) {
  (void)base;
  (void)native;
  (void)type;
  out->fd = -1;
  return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the host GPU exports no memory");
}

static tandem_status_t hg_buffer_import(tandem__gpu_t *base, const tandem_external_memory_t *memory,
                                        uint64_t size, tandem_placement_t placement,
                                        void **out_native, void **out_host) {
  (void)base;
  (void)memory;
  (void)size;
  (void)placement;
  *out_native = NULL;
  *out_host = NULL;
  return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the host GPU imports no external memory");
}

/* Adoption takes Vulkan objects, which the host GPU has none of. */
static tandem_status_t hg_buffer_adopt(tandem__gpu_t *base, const tandem_vulkan_buffer_t *desc,
                                       void **out_native, void **out_host, bool *out_indirect) {
  (void)base;
  (void)desc;
  *out_native = NULL;
  *out_host = NULL;
  *out_indirect = false;
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                     "the buffer belongs to another VkDevice: the host GPU has no VkDevice");
}

static tandem_status_t hg_kernel_adopt(tandem__gpu_t *base, tandem__kernel_build_t *build,
                                       const char *name, const tandem_vulkan_kernel_t *desc,
                                       void **out_native) {
  (void)base;
  (void)build;
  (void)desc;
  *out_native = NULL;
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': the pipeline belongs to another VkDevice: the host GPU has "
                     "no VkDevice",
                     name);
}

static tandem_status_t hg_timeline_export(tandem__gpu_t *base, tandem_lane_t lane, int *out_fd) {
  (void)base;
  (void)lane;
  *out_fd = -1;
  return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the host GPU's timelines are not exportable");
}

static tandem_status_t hg_timeline_import(tandem__gpu_t *base, int fd, void **out_native) {
  (void)base;
  (void)fd;
  *out_native = NULL;
  return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the host GPU imports no timeline");
}

static tandem_status_t hg_timeline_wait(tandem__gpu_t *base, void *native, uint64_t value,
                                        uint64_t timeout_ns) {
  (void)base;
  (void)native;
  (void)value;
  (void)timeout_ns;
  return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the host GPU imports no timeline");
}

static void hg_timeline_destroy(tandem__gpu_t *base, void *native) {
  (void)base;
  assert(!native); /* none was ever made */
  (void)native;
}

static tandem_status_t hg_buffer_import_host(tandem__gpu_t *base, void *host, uint64_t size,
                                             void **out_native) {
  *out_native = NULL;
  if ((uintptr_t)host % base->host_import_alignment || size % base->host_import_alignment)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "host GPU: imported memory must be aligned to %llu bytes",
                       (unsigned long long)base->host_import_alignment);
  return hg_buffer_new(size, host, false, out_native);
}

static tandem_status_t hg_buffer_import_dmabuf(tandem__gpu_t *base, int fd, uint64_t size,
                                               void **out_native) {
  (void)base;
  (void)fd;
  (void)size;
  *out_native = NULL;
  return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the host GPU imports no dma-buf");
}

static tandem_status_t hg_buffer_create_dmabuf(tandem__gpu_t *base, uint64_t size,
                                               void **out_native, int *out_fd) {
  (void)base;
  (void)size;
  *out_native = NULL;
  *out_fd = -1;
  return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the host GPU exports no dma-buf");
}

/*--------------------------------------------------------------------------
 * Twins: the C function that runs in place of a SPIR-V module
 * (tandem_testing.h), found by the module's bytes and entry point.
 *--------------------------------------------------------------------------*/

#define HG_TWINS_MAX 128
typedef struct hg_twin {
  uint64_t hash; /* FNV-1a of the bytes, then the entry point */
  size_t size;
  tandem_test_host_kernel_fn fn;
} hg_twin_t;
/* [hg_twin_mutex] Append only. */
static pthread_mutex_t hg_twin_mutex = PTHREAD_MUTEX_INITIALIZER;
static hg_twin_t hg_twins[HG_TWINS_MAX];
static uint32_t hg_twin_count;

static bool hg_is_spirv(const void *code, size_t bytes) {
  uint32_t magic = 0;
  if (!code || bytes < 20 || bytes % 4) return false;
  memcpy(&magic, code, 4);
  return magic == 0x07230203u;
}

static uint64_t hg_twin_hash(const void *code, size_t bytes, const char *entry_point) {
  uint64_t h = 0xcbf29ce484222325ull;
  const uint8_t *p = code;
  for (size_t i = 0; i < bytes; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  h = (h ^ 0xFF) * 0x100000001b3ull; /* between bytes and name */
  for (const char *c = entry_point ? entry_point : "main"; *c; c++)
    h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
  return h;
}

static tandem_test_host_kernel_fn hg_twin_find(const void *code, size_t bytes,
                                               const char *entry_point) {
  uint64_t h = hg_twin_hash(code, bytes, entry_point);
  tandem_test_host_kernel_fn fn = NULL;
  pthread_mutex_lock(&hg_twin_mutex);
  for (uint32_t i = 0; i < hg_twin_count && !fn; i++)
    if (hg_twins[i].hash == h && hg_twins[i].size == bytes) fn = hg_twins[i].fn;
  pthread_mutex_unlock(&hg_twin_mutex);
  return fn;
}

tandem_status_t tandem_test_host_kernel_register(const void *spirv, size_t spirv_size,
                                                 const char *entry_point,
                                                 tandem_test_host_kernel_fn fn) {
#ifdef TANDEM_UNTESTABLE
  (void)spirv, (void)spirv_size, (void)entry_point, (void)fn;
  return TANDEM_FAIL(TANDEM_ERROR_UNIMPLEMENTED, "built with TANDEM_UNTESTABLE");
#else
  if (!fn || !hg_is_spirv(spirv, spirv_size))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "registering a host twin: %s",
                       fn ? "the code is not SPIR-V" : "fn is NULL");
  uint64_t h = hg_twin_hash(spirv, spirv_size, entry_point);
  tandem_status_t s = TANDEM_OK;
  pthread_mutex_lock(&hg_twin_mutex);
  bool known = false;
  for (uint32_t i = 0; i < hg_twin_count; i++)
    known |= hg_twins[i].hash == h && hg_twins[i].size == spirv_size;
  if (!known && hg_twin_count == HG_TWINS_MAX)
    s = TANDEM_FAIL(TANDEM_ERROR_BUSY, "registering a host twin: %d are registered, the most",
                    HG_TWINS_MAX);
  else if (!known) hg_twins[hg_twin_count++] = (hg_twin_t){.hash = h, .size = spirv_size, .fn = fn};
  pthread_mutex_unlock(&hg_twin_mutex);
  return s;
#endif
}

static tandem_status_t hg_kernel_reflect(tandem__gpu_t *base, const void *code, size_t code_bytes,
                                         const char *entry_point, const char *name,
                                         tandem__kernel_interface_t *out) {
  (void)base;
  if (hg_is_spirv(code, code_bytes)) {
    /* Checked and reflected as the Vulkan backend does, so contracts are
     * compared with the same interface and answer the same errors; it needs
     * a twin to run (kernel_create). */
    return tandem_spirv_reflect(code, code_bytes, entry_point, name, out);
  }
  host_gpu_kernel_code_t c;
  if (!code || code_bytes != sizeof c)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': the host GPU (a test device) runs host kernels "
                       "(host_gpu_kernel_code_t, %zu bytes), not %zu bytes of SPIR-V",
                       name, sizeof c, code_bytes);
  memcpy(&c, code, sizeof c);
  if (c.magic != HOST_GPU_KERNEL_MAGIC || !c.run || c.binding_count > TANDEM_MAX_BINDINGS)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': not a host kernel (magic, run or binding count)", name);
  memset(out, 0, sizeof *out);
  out->binding_count = c.binding_count;
  for (uint32_t i = 0; i < c.binding_count; i++)
    out->bindings[i] = (tandem__reflected_binding_t){.set = 0,
                                                     .binding = i,
                                                     .is_storage_buffer = true,
                                                     .writable = c.writes[i],
                                                     .readable = c.reads[i]};
  out->push_constant_bytes = c.push_constant_bytes;
  for (int d = 0; d < 3; d++) {
    out->local_size[d] = c.local_size[d] ? c.local_size[d] : 1;
    out->local_size_spec[d] = -1;
  }
  return TANDEM_OK;
}

static tandem_status_t hg_kernel_create(tandem__gpu_t *base, tandem__kernel_build_t *build,
                                        const char *name, void **out_native) {
  (void)base;
  *out_native = NULL;
  if (hg_is_spirv(build->spirv, build->spirv_size) &&
      !hg_twin_find(build->spirv, build->spirv_size, build->entry_point))
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "kernel '%s': the host GPU (a test device) runs no SPIR-V, only the C "
                       "twin registered for it (tandem_test_host_kernel_register), and this "
                       "module (entry point '%s') has none",
                       name, build->entry_point ? build->entry_point : "main");
  hg_kernel_t *k = calloc(1, sizeof *k);
  if (!k) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "host GPU: kernel '%s'", name);
  if (hg_is_spirv(build->spirv, build->spirv_size)) {
    k->twin = hg_twin_find(build->spirv, build->spirv_size, build->entry_point);
    assert(k->twin); /* found just above; twins are never removed */
    for (int d = 0; d < 3; d++) k->local_size[d] = build->local_size[d] ? build->local_size[d] : 1;
  } else {
    assert(build->spirv_size == sizeof k->code); /* reflected just before */
    memcpy(&k->code, build->spirv, sizeof k->code);
    for (int d = 0; d < 3; d++)
      k->local_size[d] = k->code.local_size[d] ? k->code.local_size[d] : 1;
  }
  build->shared_memory_bytes = 0;
  *out_native = k;
  return TANDEM_OK;
}

static void hg_kernel_destroy(tandem__gpu_t *base, void *native) {
  (void)base;
  free(native);
}

static void hg_program_destroy(tandem__gpu_t *base, void *native) {
  (void)base;
  hg_program_t *p = native;
  if (!p) return;
#ifndef NDEBUG
  for (uint32_t s = 0; p->recording && s < p->slot_count * p->max_pieces; s++)
    assert(!p->recording[s].region); /* core pairs record_begin with record_end */
  for (uint32_t i = 0; p->jobs && i < p->slot_count * p->region_count; i++)
    assert(p->jobs[i].state == HG_JOB_IDLE); /* the vtable: nothing in flight */
#endif
  free(p->regions);
  free(p->jobs);
  free(p->times);
  free(p->cmd_store);
  free(p->binding_store);
  free(p->binding_at);
  free(p->binding_count);
  free(p->recording);
  free(p->piece_store);
  free(p->fresh_store);
  free(p->recording_owner);
  free(p);
}

static tandem_status_t hg_program_create(tandem__gpu_t *base, const tandem__program_desc_t *desc,
                                         void **out_native) {
  host_gpu_t *g = hg_cast(base);
  *out_native = NULL;
  hg_program_t *p = calloc(1, sizeof *p);
  if (!p) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "host GPU: a program");
  uint32_t rc = desc->region_count, slots = desc->slot_count;
  size_t entries = (size_t)slots * rc, cmds = 0;
  for (uint32_t r = 0; r < rc; r++) cmds += 2 * (size_t)desc->region_commands[r];
  p->slot_count = slots;
  p->region_count = rc;
  p->command_count = desc->command_count;
  p->regions = calloc(entries ? entries : 1, sizeof *p->regions);
  p->jobs = calloc(entries ? entries : 1, sizeof *p->jobs);
  p->times = calloc(2 * (entries ? entries : 1), sizeof *p->times);
  size_t cmd_total = slots * cmds, binding_total;
  p->cmd_store = calloc(cmd_total ? cmd_total : 1, sizeof *p->cmd_store);
  p->binding_at = calloc(desc->command_count ? desc->command_count : 1, sizeof *p->binding_at);
  p->binding_count =
      calloc(desc->command_count ? desc->command_count : 1, sizeof *p->binding_count);
  if (p->binding_at && p->binding_count) {
    for (uint32_t i = 0; i < desc->command_count; i++) {
      p->binding_at[i] = p->binding_total;
      p->binding_count[i] = desc->commands[i].kernel ? desc->commands[i].binding_count : 0;
      p->binding_total += p->binding_count[i];
    }
  }
  binding_total = (size_t)slots * p->binding_total;
  p->binding_store = calloc(binding_total ? binding_total : 1, sizeof *p->binding_store);
  size_t piece_total = 0;
  p->max_pieces = 1;
  for (uint32_t r = 0; r < rc; r++) {
    assert(desc->region_pieces[r] >= 1);
    piece_total += desc->region_pieces[r];
    if (desc->region_pieces[r] > p->max_pieces) p->max_pieces = desc->region_pieces[r];
  }
  size_t recordings = (size_t)slots * p->max_pieces;
  p->recording = calloc(recordings ? recordings : 1, sizeof *p->recording);
  p->piece_store = calloc(2 * slots * piece_total + 1, sizeof *p->piece_store);
  p->fresh_store = calloc(slots * piece_total + 1, sizeof *p->fresh_store);
  p->recording_owner = calloc(recordings ? recordings : 1, sizeof *p->recording_owner);
  bool owners = p->recording_owner != NULL;
  if (!p->regions || !p->jobs || !p->times || !p->cmd_store || !p->binding_at ||
      !p->binding_count || !p->binding_store || !p->recording || !p->piece_store ||
      !p->fresh_store || !owners) {
    hg_program_destroy(base, p);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "host GPU: a program of %u regions", rc);
  }
  pthread_mutex_lock(&g->mutex);
  p->id = ++g->next_program;
  pthread_mutex_unlock(&g->mutex);
  size_t at = 0, piece_at = 0;
  for (uint32_t s = 0; s < slots; s++) {
    const uint32_t *piece_commands = desc->piece_commands;
    for (uint32_t r = 0; r < rc; r++) {
      hg_region_t *rec = &p->regions[s * rc + r];
      rec->lane = desc->region_lane[r];
      rec->capacity = 2 * desc->region_commands[r];
      rec->cmds = &p->cmd_store[at];
      at += rec->capacity;
      rec->pieces = desc->region_pieces[r];
      rec->piece_at = &p->piece_store[2 * piece_at];
      rec->piece_counts = &p->piece_store[2 * piece_at + rec->pieces];
      rec->fresh = &p->fresh_store[piece_at];
      piece_at += rec->pieces;
      uint32_t first = 0;
      for (uint32_t q = 0; q < rec->pieces; q++) {
        rec->piece_at[q] = 2 * first;
        first += piece_commands[q];
      }
      assert(first == desc->region_commands[r]); /* the pieces cover the region */
      piece_commands += rec->pieces;
      p->jobs[s * rc + r] = (hg_job_t){.program = p, .slot = s, .region = r, .lane = rec->lane};
    }
  }
  *out_native = p;
  return TANDEM_OK;
}

/* The recording in progress of (|slot|, |piece|), checked in Debug builds
 * to be open and this thread's. */
static hg_recording_t *hg_recording(hg_program_t *p, uint32_t slot, uint32_t piece) {
  assert(slot < p->slot_count && piece < p->max_pieces);
  size_t i = (size_t)slot * p->max_pieces + piece;
  assert(p->recording[i].region);
  assert(pthread_equal(p->recording_owner[i], pthread_self()));
  return &p->recording[i];
}

/* The next command of (|slot|, |piece|)'s recording in progress. */
static hg_cmd_t *hg_next_cmd(hg_program_t *p, uint32_t slot, uint32_t piece, hg_cmd_kind_t kind,
                             uint32_t id) {
  hg_recording_t *rec = hg_recording(p, slot, piece);
  assert(rec->count < rec->capacity); /* at most a barrier before each command */
  hg_cmd_t *c = &rec->cmds[rec->count++];
  memset(c, 0, offsetof(hg_cmd_t, push));
  c->kind = kind;
  c->id = id;
  return c;
}

static tandem_status_t hg_record_begin(tandem__gpu_t *base, void *native, uint32_t slot,
                                       uint32_t region, uint32_t piece) {
  (void)base;
  hg_program_t *p = native;
  assert(slot < p->slot_count && region < p->region_count && piece < p->max_pieces);
  size_t i = (size_t)slot * p->max_pieces + piece;
  assert(!p->recording[i].region);
  /* The vtable: only while that slot is not in flight. */
  assert(p->jobs[slot * p->region_count + region].state == HG_JOB_IDLE);
  hg_region_t *region_rec = &p->regions[slot * p->region_count + region];
  assert(region_rec->lane != TANDEM_LANE_NPU && piece < region_rec->pieces);
  uint32_t at = region_rec->piece_at[piece];
  uint32_t end =
      piece + 1 < region_rec->pieces ? region_rec->piece_at[piece + 1] : region_rec->capacity;
  p->recording[i] = (hg_recording_t){.region = region_rec,
                                     .piece = piece,
                                     .count = 0,
                                     .capacity = end - at,
                                     .cmds = &region_rec->cmds[at]};
  p->recording_owner[i] = pthread_self();
  return TANDEM_OK;
}

/* A dispatch's "descriptor set": the slot's copy of its bindings. */
static tandem__binding_t *hg_set_of(hg_program_t *p, uint32_t slot, uint32_t id) {
  assert(id < p->command_count);
  return &p->binding_store[(size_t)slot * p->binding_total + p->binding_at[id]];
}

static void hg_record_bindings(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                               const tandem__binding_batch_t *batch) {
  (void)base;
  hg_program_t *p = native;
  const hg_recording_t *rec = hg_recording(p, slot, piece);
  (void)rec;
  const tandem__binding_t *bindings = batch->bindings;
  for (uint32_t d = 0; d < batch->count; d++) {
    uint32_t id = batch->ids[d], count = batch->binding_counts[d];
    assert(count && count == p->binding_count[id]); /* the description's */
#ifndef NDEBUG
    /* None of these is recorded yet in this piece (its set is not bound). */
    for (uint32_t i = 0; i < rec->count; i++)
      assert(rec->cmds[i].kind != HG_CMD_DISPATCH || rec->cmds[i].id != id);
#endif
    memcpy(hg_set_of(p, slot, id), bindings, count * sizeof *bindings);
    bindings += count;
  }
}

static void hg_record_barrier(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                              uint32_t src_work, uint32_t dst_work) {
  (void)base;
  hg_program_t *p = native;
  assert(src_work && dst_work);
  assert(!(src_work & ~TANDEM__WORK_ALL) && !(dst_work & ~TANDEM__WORK_ALL));
  hg_cmd_t *c = hg_next_cmd(p, slot, piece, HG_CMD_BARRIER, UINT32_MAX);
  c->src_work = src_work;
  c->dst_work = dst_work;
}

static void hg_record_fill(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                           const tandem__cmd_fill_t *cmd) {
  (void)base;
  hg_cmd_t *c = hg_next_cmd(native, slot, piece, HG_CMD_FILL, cmd->id);
  c->dst = cmd->buffer;
  c->dst_offset = cmd->offset;
  c->length = cmd->length;
  c->pattern = cmd->pattern;
}

static void hg_record_copy(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                           const tandem__cmd_copy_t *cmd) {
  (void)base;
  hg_cmd_t *c = hg_next_cmd(native, slot, piece, HG_CMD_COPY, cmd->id);
  c->src = cmd->src;
  c->dst = cmd->dst;
  c->src_offset = cmd->src_offset;
  c->dst_offset = cmd->dst_offset;
  c->length = cmd->bytes;
}

/* Never called: a Vulkan commands node needs a VkDevice, and core refuses
 * it at add on this GPU (native_handles gives none). */
static tandem_status_t hg_record_user(tandem__gpu_t *base, void *native, uint32_t slot,
                                      uint32_t piece, const tandem__cmd_user_t *cmd) {
  (void)base, (void)native, (void)slot, (void)piece, (void)cmd;
  abort();
}

static void hg_record_dispatch(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                               const tandem__cmd_dispatch_t *cmd) {
  (void)base;
  hg_program_t *p = native;
  hg_cmd_t *c = hg_next_cmd(p, slot, piece, HG_CMD_DISPATCH, cmd->id);
  c->kernel = cmd->kernel;
  c->binding_count = cmd->binding_count;
  c->bindings = hg_set_of(p, slot, cmd->id);
  /* What the dispatch binds is what record_bindings wrote for it. */
  assert(cmd->binding_count == p->binding_count[cmd->id] &&
         !memcmp(c->bindings, cmd->bindings, cmd->binding_count * sizeof *cmd->bindings));
  assert(cmd->push_bytes <= sizeof c->push);
  c->push_bytes = cmd->push_bytes;
  if (cmd->push_bytes) memcpy(c->push, cmd->push, cmd->push_bytes);
  memcpy(c->workgroups, cmd->workgroups, sizeof c->workgroups);
  c->indirect = cmd->indirect;
  c->indirect_offset = cmd->indirect_offset;
}

/* Logs the piece recorded: its commands and barriers. */
static tandem_status_t hg_record_end(tandem__gpu_t *base, void *native, uint32_t slot,
                                     uint32_t piece) {
  host_gpu_t *g = hg_cast(base);
  hg_program_t *p = native;
  hg_recording_t *rec = hg_recording(p, slot, piece);
  uint32_t barriers = 0;
  for (uint32_t i = 0; i < rec->count; i++) barriers += rec->cmds[i].kind == HG_CMD_BARRIER;
  hg_region_t *region_rec = rec->region;
  uint32_t region = (uint32_t)(region_rec - &p->regions[slot * p->region_count]);
  host_gpu_event_t e = {.kind = HOST_GPU_RECORD,
                        .program = p->id,
                        .slot = slot,
                        .region = region,
                        .piece = piece,
                        .lane = region_rec->lane,
                        .node = rec->count - barriers,
                        .barriers = barriers};
  region_rec->piece_counts[piece] = rec->count;
  region_rec->fresh[piece] = true;
  rec->region = NULL;
  hg_log(g, &e);
  if (slot < 32 && (g->config.fail_record_slots >> slot & 1u))
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "host GPU: recording slot %u failed", slot);
  return TANDEM_OK;
}

/* A region recorded again: its pieces' lists closed up into one, in piece
 * order (each piece's stretch starts at or after where it lands). Only while
 * the slot is not in flight and nothing records it (the vtable). */
static void hg_region_close_up(hg_region_t *rec) {
  if (rec->lane == TANDEM_LANE_NPU || !rec->fresh[0]) return;
  uint32_t count = 0;
  for (uint32_t q = 0; q < rec->pieces; q++) {
    assert(rec->fresh[q]); /* core records every piece of a region again */
    assert(rec->piece_at[q] >= count);
    memmove(&rec->cmds[count], &rec->cmds[rec->piece_at[q]],
            rec->piece_counts[q] * sizeof *rec->cmds);
    count += rec->piece_counts[q];
    rec->fresh[q] = false;
  }
  rec->count = count;
}

static tandem_status_t hg_program_submit(tandem__gpu_t *base, void *native, uint32_t slot,
                                         tandem__region_submit_t *regions, uint32_t region_count) {
  host_gpu_t *g = hg_cast(base);
  hg_program_t *p = native;
  pthread_mutex_lock(&g->mutex);
  for (uint32_t k = 0; k < region_count; k++) {
    tandem__region_submit_t *rs = &regions[k];
    hg_job_t *job = &p->jobs[slot * p->region_count + rs->region];
    hg_region_close_up(&p->regions[slot * p->region_count + rs->region]);
    host_gpu_event_t e = {.kind = HOST_GPU_SUBMIT,
                          .program = p->id,
                          .slot = slot,
                          .region = rs->region,
                          .lane = job->lane,
                          .value = rs->signal_value};
    memcpy(e.wait_values, rs->wait_values, sizeof e.wait_values);
    hg_log_locked(g, &e);
    if (job->lane == TANDEM_LANE_NPU) continue; /* the NPU lane thread runs it */
    assert(job->state == HG_JOB_IDLE);          /* H2 */
    job->state = HG_JOB_QUEUED;
    memcpy(job->waits, rs->wait_values, sizeof job->waits);
    job->signal = rs->signal_value;
    memcpy(job->known, g->host_after, sizeof job->known);
    job->next = NULL;
    hg_queue_t *q = hg_queue_of(g, job->lane);
    if (q->tail) {
      q->tail->next = job;
    } else {
      q->head = job;
    }
    q->tail = job;
    rs->submitted = true;
  }
  pthread_cond_broadcast(&g->changed);
  pthread_mutex_unlock(&g->mutex);
  return TANDEM_OK;
}

static tandem_status_t hg_program_timestamps(tandem__gpu_t *base, void *native, uint32_t slot,
                                             uint64_t *out) {
  host_gpu_t *g = hg_cast(base);
  hg_program_t *p = native;
  uint32_t n = 2 * p->region_count;
  memset(out, 0, n * sizeof *out);
  if (!g->timestamps) return TANDEM_ERROR_UNSUPPORTED;
  for (uint32_t r = 0; r < p->region_count; r++) {
    if (p->regions[slot * p->region_count + r].lane == TANDEM_LANE_NPU) continue;
    out[2 * r] = p->times[2 * (slot * p->region_count + r)];
    out[2 * r + 1] = p->times[2 * (slot * p->region_count + r) + 1];
  }
  return TANDEM_OK;
}

static bool hg_reached_locked(const host_gpu_t *g, const uint64_t values[TANDEM__MAX_LANES]) {
  for (int l = 0; l < TANDEM__MAX_LANES; l++)
    if (g->timeline[l] < values[l]) return false;
  return true;
}

static tandem_status_t hg_wait(tandem__gpu_t *base, const uint64_t values[TANDEM__MAX_LANES],
                               uint64_t timeout_ns) {
  host_gpu_t *g = hg_cast(base);
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  if (timeout_ns != UINT64_MAX) {
    uint64_t ns = (uint64_t)deadline.tv_nsec + timeout_ns % 1000000000u;
    deadline.tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
    deadline.tv_nsec = (long)(ns % 1000000000u);
  }
  tandem_status_t s = TANDEM_OK;
  pthread_mutex_lock(&g->mutex);
  while (!hg_reached_locked(g, values)) {
    if (timeout_ns == UINT64_MAX) {
      pthread_cond_wait(&g->changed, &g->mutex);
    } else if (pthread_cond_timedwait(&g->changed, &g->mutex, &deadline) != 0 &&
               !hg_reached_locked(g, values)) {
      s = TANDEM_ERROR_TIMEOUT;
      break;
    }
  }
  if (s == TANDEM_OK) {
    if (hg_thread.gpu != g) {
      hg_thread.gpu = g;
      memset(hg_thread.after, 0, sizeof hg_thread.after);
    }
    for (int l = 0; l < TANDEM__MAX_LANES; l++) {
      hg_join_known_locked(g, (tandem_lane_t)l, values[l], hg_thread.after);
      hg_join_known_locked(g, (tandem_lane_t)l, values[l], g->host_after);
    }
  }
  pthread_mutex_unlock(&g->mutex);
  return s;
}

static tandem_status_t hg_signal(tandem__gpu_t *base, tandem_lane_t lane, uint64_t value) {
  host_gpu_t *g = hg_cast(base);
  uint64_t after[TANDEM__MAX_LANES] = {0};
  pthread_mutex_lock(&g->mutex);
  if (hg_thread.gpu == g) memcpy(after, hg_thread.after, sizeof after);
  assert(value > g->timeline[lane]); /* H1 */
  g->timeline[lane] = value;
  hg_set_known_locked(g, lane, value, after);
  host_gpu_event_t e = {.kind = HOST_GPU_SIGNAL, .lane = lane, .value = value};
  hg_log_locked(g, &e);
  pthread_cond_broadcast(&g->changed);
  pthread_mutex_unlock(&g->mutex);
  return TANDEM_OK;
}

static tandem_status_t hg_query(tandem__gpu_t *base, uint64_t out[TANDEM__MAX_LANES]) {
  host_gpu_t *g = hg_cast(base);
  pthread_mutex_lock(&g->mutex);
  memcpy(out, g->timeline, sizeof g->timeline);
  for (int l = 0; l < TANDEM__MAX_LANES; l++)
    hg_join_known_locked(g, (tandem_lane_t)l, g->timeline[l], g->host_after);
  pthread_mutex_unlock(&g->mutex);
  return TANDEM_OK;
}

static tandem_status_t hg_test_control(tandem__gpu_t *base, tandem_test_op_t op) {
  (void)base;
  return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                     "test operation %d: the host GPU has no validation layer", (int)op);
}

static void hg_native_handles(tandem__gpu_t *base, tandem_vulkan_handles_t *out) {
  (void)base;
  (void)out; /* no Vulkan objects behind it: the zeroed struct core passes says so */
}

static void *hg_lane_timeline(tandem__gpu_t *base, tandem_lane_t lane) {
  (void)base;
  (void)lane;
  return NULL; /* no Vulkan objects behind it */
}

static void hg_queue_lock(tandem__gpu_t *base, tandem_lane_t lane, bool lock) {
  hg_queue_t *q = hg_queue_of(hg_cast(base), lane);
  if (lock) {
    pthread_mutex_lock(&q->exec);
  } else {
    pthread_mutex_unlock(&q->exec);
  }
}

/* User lanes: the host GPU keeps a timeline for every lane id, so a
 * session's lane needs nothing made; it imports no timeline (can_import_timelines
 * is off, so core never offers one). */
static tandem_status_t hg_lane_bind(tandem__gpu_t *base, tandem_lane_t lane, void *imported) {
  (void)base;
  (void)lane;
  if (imported) return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the host GPU imports no timeline");
  return TANDEM_OK;
}

static void hg_lane_unbind(tandem__gpu_t *base, tandem_lane_t lane) {
  (void)base;
  (void)lane;
}

static const tandem__gpu_interop_ops_t hg_interop = {
    .native_handles = hg_native_handles,
    .lane_timeline = hg_lane_timeline,
    .queue_lock = hg_queue_lock,
    .buffer_vulkan = hg_buffer_vulkan,
    .buffer_export = hg_buffer_export,
    .buffer_import = hg_buffer_import,
    .timeline_export = hg_timeline_export,
    .timeline_import = hg_timeline_import,
    .timeline_wait = hg_timeline_wait,
    .timeline_destroy = hg_timeline_destroy,
    .buffer_adopt = hg_buffer_adopt,
    .kernel_adopt = hg_kernel_adopt,
};

static void hg_test_unordered(tandem__gpu_t *base, tandem_test_unordered_t *out) {
  host_gpu_t *g = hg_cast(base);
  pthread_mutex_lock(&g->mutex);
  out->count = g->unordered;
  snprintf(out->first, sizeof out->first, "%s", g->first_unordered);
  pthread_mutex_unlock(&g->mutex);
}

static const tandem__gpu_test_hooks_t hg_test_hooks = {.control = hg_test_control,
                                                       .unordered = hg_test_unordered};

static const tandem__gpu_vtable_t hg_vtable = {
    .device.destroy = hg_destroy,
    .device.idle = hg_idle,
    .buffer.create = hg_buffer_create,
    .buffer.destroy = hg_buffer_destroy,
    .buffer.memory = hg_buffer_memory,
    .buffer.import_host = hg_buffer_import_host,
    .buffer.import_dmabuf = hg_buffer_import_dmabuf,
    .buffer.create_dmabuf = hg_buffer_create_dmabuf,
    .kernel.reflect = hg_kernel_reflect,
    .kernel.create = hg_kernel_create,
    .kernel.destroy = hg_kernel_destroy,
    .program.create = hg_program_create,
    .program.destroy = hg_program_destroy,
    .program.submit = hg_program_submit,
    .program.timestamps = hg_program_timestamps,
    .record.begin = hg_record_begin,
    .record.bindings = hg_record_bindings,
    .record.barrier = hg_record_barrier,
    .record.fill = hg_record_fill,
    .record.copy = hg_record_copy,
    .record.dispatch = hg_record_dispatch,
    .record.user = hg_record_user,
    .record.end = hg_record_end,
    .lane.wait = hg_wait,
    .lane.signal = hg_signal,
    .lane.query = hg_query,
    .lane.bind = hg_lane_bind,
    .lane.unbind = hg_lane_unbind,
    .interop = &hg_interop,
};

/*--------------------------------------------------------------------------
 * The backend entry
 *--------------------------------------------------------------------------*/

/* [hg_config_mutex] The configuration the next open takes. */
static pthread_mutex_t hg_config_mutex = PTHREAD_MUTEX_INITIALIZER;
static host_gpu_config_t hg_next_config;

/* How many devices the host GPU backend offers: independent sets of host
 * threads, so that one runtime can hold several GPUs on any machine (the
 * runtime option gpus). */
#define HG_DEVICES 4u

static void hg_describe(const host_gpu_config_t *c, uint32_t index, tandem_device_info_t *info) {
  memset(info, 0, sizeof *info);
  info->index = index;
  snprintf(info->name, sizeof info->name, "tandem host GPU %u (a test device in host memory)",
           index);
  snprintf(info->driver_name, sizeof info->driver_name, "host");
  snprintf(info->driver_info, sizeof info->driver_info,
           "backends/host: a test and development device, not hardware");
  info->api_version = (1u << 22) | (3u << 12); /* what tandem needs: 1.3 */
  info->is_cpu = true;
  info->features =
      TANDEM_GPU_TIMELINE_SEMAPHORE | TANDEM_GPU_SYNCHRONIZATION2 | TANDEM_GPU_EXTERNAL_MEMORY_HOST;
  info->queue_family_count = 1;
  info->queue_families[0] =
      (tandem_queue_family_info_t){TANDEM_QUEUE_COMPUTE | TANDEM_QUEUE_TRANSFER |
                                       TANDEM_QUEUE_TIMESTAMPS,
                                   c->one_queue ? 1 : TANDEM_LANE_COUNT_GPU};
  info->device_local_bytes = 1ull << 32;
  info->timestamp_period_ns = 1.0;
  for (int d = 0; d < 3; d++) {
    info->max_local_size[d] = d < 2 ? 1024 : 64;
    info->max_workgroups[d] = 65535;
  }
  info->max_local_invocations = 1024;
  info->subgroup_size = info->min_subgroup_size = info->max_subgroup_size = 1;
  info->max_shared_memory_bytes = 32768;
}

static tandem_status_t hg_count(uint32_t *out_count) {
  *out_count = HG_DEVICES;
  return TANDEM_OK;
}

static tandem_status_t hg_info(uint32_t index, tandem_device_info_t *out_info) {
  if (index >= HG_DEVICES)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE, "GPU index %u: the host GPU has devices 0..%u",
                       index, HG_DEVICES - 1);
  pthread_mutex_lock(&hg_config_mutex);
  host_gpu_config_t c = hg_next_config;
  pthread_mutex_unlock(&hg_config_mutex);
  hg_describe(&c, index, out_info);
  return TANDEM_OK;
}

static tandem_status_t hg_open(const tandem_runtime_options_t *options,
                               atomic_uint_fast64_t *validation_counter, tandem__gpu_t **out_gpu) {
  (void)validation_counter; /* no validation layer: nothing to count */
  *out_gpu = NULL;
  if (options->gpu_index >= HG_DEVICES)
    return TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE,
                       "runtime option gpu_index is %u; the host GPU has devices 0..%u",
                       options->gpu_index, HG_DEVICES - 1);
  host_gpu_t *g = calloc(1, sizeof *g);
  if (!g) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating the host GPU");
  pthread_mutex_lock(&hg_config_mutex);
  g->config = hg_next_config;
  pthread_mutex_unlock(&hg_config_mutex);
  if (!g->config.log_capacity) g->config.log_capacity = 4096;
  g->log = calloc(g->config.log_capacity, sizeof *g->log);
  if (!g->log) {
    free(g);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating the host GPU's log");
  }
  g->base.vtable = &hg_vtable;
  g->base.test_hooks = &hg_test_hooks;
  hg_describe(&g->config, options->gpu_index, &g->base.info);
  g->base.storage_alignment = 16;
  for (int d = 0; d < 3; d++) g->base.max_workgroups[d] = g->base.info.max_workgroups[d];
  g->base.max_workgroup_subgroups = 1024;
  g->base.max_storage_range = UINT64_MAX; /* host memory: any binding the buffer holds */
  g->base.can_import_host = true;
  g->base.can_import_dmabuf = false;
  g->base.host_import_alignment = 4096;
  g->base.external_memory_types = 0;
  g->base.timelines_exportable = false;
  g->base.can_import_timelines = false;
  g->timestamps = options->gpu_timestamps;
  g->base.timestamps = g->timestamps;
  g->queue_count = g->config.one_queue ? 1 : TANDEM_LANE_COUNT_GPU;
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++)
    g->base.lane_queue[l] = (uint8_t)(g->config.one_queue ? 0 : l);
  for (int l = 0; l < TANDEM__MAX_LANES; l++)
    g->allow[l] = g->config.held && l != TANDEM_LANE_NPU ? 0 : UINT64_MAX;
  pthread_mutex_init(&g->mutex, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&g->changed, &attr);
  pthread_condattr_destroy(&attr);
  for (uint32_t k = 0; k < g->queue_count; k++) {
    hg_queue_t *q = &g->queues[k];
    q->gpu = g;
    pthread_mutex_init(&q->exec, NULL);
    if (pthread_create(&q->thread, NULL, hg_queue_main, q) != 0) {
      g->queue_count = k + 1;
      hg_destroy(&g->base);
      return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "starting a host GPU queue thread");
    }
    q->started = true;
  }
  *out_gpu = &g->base;
  return TANDEM_OK;
}

const tandem__gpu_backend_t tandem_host_gpu_backend = {
    .name = HOST_GPU_BACKEND,
    .count = hg_count,
    .info = hg_info,
    .open = hg_open,
};

/*--------------------------------------------------------------------------
 * host_gpu.h
 *--------------------------------------------------------------------------*/

void host_gpu_configure(const host_gpu_config_t *config) {
  pthread_mutex_lock(&hg_config_mutex);
  hg_next_config = config ? *config : (host_gpu_config_t){0};
  pthread_mutex_unlock(&hg_config_mutex);
}

host_gpu_t *host_gpu_from(tandem__gpu_t *gpu) {
  return gpu && gpu->vtable == &hg_vtable ? hg_cast(gpu) : NULL;
}

void host_gpu_hold(host_gpu_t *g, tandem_lane_t lane) {
  assert(lane >= 0 && lane < TANDEM_LANE_COUNT_GPU);
  pthread_mutex_lock(&g->mutex);
  g->allow[lane] = 0;
  pthread_mutex_unlock(&g->mutex);
}

void host_gpu_release(host_gpu_t *g, tandem_lane_t lane, uint32_t regions) {
  assert(lane >= 0 && lane < TANDEM_LANE_COUNT_GPU);
  pthread_mutex_lock(&g->mutex);
  if (g->allow[lane] != UINT64_MAX) g->allow[lane] += regions;
  pthread_cond_broadcast(&g->changed);
  pthread_mutex_unlock(&g->mutex);
}

void host_gpu_run(host_gpu_t *g, tandem_lane_t lane) {
  assert(lane >= 0 && lane < TANDEM_LANE_COUNT_GPU);
  pthread_mutex_lock(&g->mutex);
  g->allow[lane] = UINT64_MAX;
  pthread_cond_broadcast(&g->changed);
  pthread_mutex_unlock(&g->mutex);
}

bool host_gpu_wait_value(host_gpu_t *g, tandem_lane_t lane, uint64_t value, uint32_t timeout_ms) {
  uint64_t values[TANDEM__MAX_LANES] = {0};
  values[lane] = value;
  return hg_wait(&g->base, values, (uint64_t)timeout_ms * 1000000u) == TANDEM_OK;
}

uint64_t host_gpu_value(host_gpu_t *g, tandem_lane_t lane) {
  pthread_mutex_lock(&g->mutex);
  uint64_t v = g->timeline[lane];
  pthread_mutex_unlock(&g->mutex);
  return v;
}

uint32_t host_gpu_queued(host_gpu_t *g, tandem_lane_t lane) {
  uint32_t n = 0;
  pthread_mutex_lock(&g->mutex);
  for (uint32_t k = 0; k < g->queue_count; k++)
    for (const hg_job_t *j = g->queues[k].head; j; j = j->next) n += j->lane == lane;
  pthread_mutex_unlock(&g->mutex);
  return n;
}

uint32_t host_gpu_events(host_gpu_t *g, host_gpu_event_t *out, uint32_t capacity,
                         uint64_t *dropped) {
  pthread_mutex_lock(&g->mutex);
  uint32_t n = g->log_count;
  memcpy(out, g->log, (n < capacity ? n : capacity) * sizeof *out);
  if (dropped) *dropped = g->log_dropped;
  pthread_mutex_unlock(&g->mutex);
  return n;
}

void host_gpu_clear_events(host_gpu_t *g) {
  pthread_mutex_lock(&g->mutex);
  g->log_count = 0;
  g->log_dropped = 0;
  pthread_mutex_unlock(&g->mutex);
}

uint64_t host_gpu_unordered(host_gpu_t *g) {
  pthread_mutex_lock(&g->mutex);
  uint64_t n = g->unordered;
  pthread_mutex_unlock(&g->mutex);
  return n;
}

uint32_t host_gpu_program_id(const void *native) {
  return native ? ((const hg_program_t *)native)->id : 0;
}

uint8_t *host_gpu_buffer_bytes(const void *native) {
  return native ? ((const hg_buffer_t *)native)->bytes : NULL;
}
