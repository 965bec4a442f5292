/* SPDX-License-Identifier: MIT */
/*
 * test_plan_table.c — the planner and the cross-submission tracker, table by
 * table, on the host GPU (host_gpu.h): no Vulkan device, no validation layer
 * (label "core").
 *
 * Each row is a small graph (or a sequence of submissions) and what the rules
 * of core/graph.c's opening comment and docs/design.md say must come of it:
 * the regions, the lane of each, which region waits on which, and the exact
 * commands the host GPU was handed through core's command interface
 * (core/backend.h): at each position of a region, the node's command with
 * its operands or a barrier with its scope (kinds of work before and after);
 * for submissions in sequence, each region's wait and signal values, the
 * results, the retirement order and what stays poisoned. The expectations are
 * worked out from those rules (each row names the rule it pins), not copied
 * from output. Every row also runs its work for real and compares every
 * buffer with a reference interpreter that applies the nodes in record and
 * submission order, and ends with the host GPU's ordering check clean.
 *
 * Where the code disagrees with the documents, the row holds the documents'
 * expectation and, beside it, what the code does and why (|disagreement|):
 * the row then checks the code's behaviour, so that it stays pinned and is
 * reported, and fails the day the code changes, which is when the row must
 * be turned over to the documents' expectation.
 *
 * The NPU rows use the emulated NPU (a CPU device), which shares memory with
 * the host GPU through host pointers.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buffer_int.h"
#include "core/exec_int.h"
#include "core/record.h"
#include "core/runtime_int.h"
#include "tandem/tandem_vulkan.h"
#include "tandem/tandem_testing.h"
#include "host_gpu_probe.h"

/*---------------------------------------------------------------------------
 * The world every row runs in: one runtime, ten buffers of 256 bytes.
 *---------------------------------------------------------------------------*/

enum { H0, H1, D0, D1, D2, D3, PR, S0, S1, S2, NBUF };
enum { BUF_BYTES = 256, NPU_WORDS = 16, CONTRACT_BYTES = 64, NO = -1 };

static const char *const k_buf_name[NBUF] = {"H0", "H1", "D0", "D1", "D2",
                                             "D3", "PR", "S0", "S1", "S2"};

static tandem_placement_t buf_placement(int b) {
  return b <= H1   ? TANDEM_PLACEMENT_HOST_VISIBLE
         : b >= S0 ? TANDEM_PLACEMENT_SHARED
                   : TANDEM_PLACEMENT_GPU_LOCAL;
}

typedef enum op {
  OP_FILL = 1,  /* v0 = pattern words */
  OP_COPY,      /* v1 = v0 */
  OP_ADD1,      /* kernel: v1[i] = v0[i] + 1 over the contract's 64 bytes; v0 READ, v1 WRITE */
  OP_INC,       /* kernel: v0[i] += 1 over 64 bytes; READ_WRITE */
  OP_NPU_ADD,   /* NPU add_i32: v2 = v0 + v1 over 16 words; READ, READ, WRITE */
  OP_NPU_FAIL,  /* NPU fail: a run that fails; WRITE v0 */
  OP_ADD1_IND,  /* ADD1 dispatched indirectly: workgroup counts READ from v2's 12 bytes */
  OP_NPU_SLEEP, /* NPU sleep_ms: sleeps |pattern| ms, then v0's first word = 1; WRITE v0 */
  OP_ADD1V,     /* ADD1 with view-sized bindings (TANDEM_BYTES_VIEW): over the views' bytes */
} op_t;

typedef struct vs {
  int buf;
  uint32_t off, len;
} vs_t;

/* lane: 0 = TANDEM_LANE_AUTO, else LANE(l). */
#define LANE(l) ((int)(l) + 1)

typedef struct node_spec {
  op_t op;
  vs_t v[3];
  uint32_t pattern;
  int lane;
} node_spec_t;

/* clang-format off */
#define FILL(b, o, l, p) {.op = OP_FILL, .v = {{b, o, l}}, .pattern = (p)}
#define COPY(sb, so, db, dof, l) {.op = OP_COPY, .v = {{sb, so, l}, {db, dof, l}}}
#define ADD1(ib, io, il, ob, oo, ol) {.op = OP_ADD1, .v = {{ib, io, il}, {ob, oo, ol}}}
#define ADD1V(ib, io, il, ob, oo, ol) {.op = OP_ADD1V, .v = {{ib, io, il}, {ob, oo, ol}}}
#define INC(b, o) {.op = OP_INC, .v = {{b, o, CONTRACT_BYTES}}}
#define ADD1_IND(ib, io, ob, oo, cb, co) \
  {.op = OP_ADD1_IND, .v = {{ib, io, CONTRACT_BYTES}, {ob, oo, CONTRACT_BYTES}, {cb, co, 12}}}
#define NPU_ADD(a, b, c) \
  {.op = OP_NPU_ADD, .v = {{a, 0, BUF_BYTES}, {b, 0, BUF_BYTES}, {c, 0, BUF_BYTES}}}
#define NPU_FAIL(b) {.op = OP_NPU_FAIL, .v = {{b, 0, BUF_BYTES}}}
#define NPU_SLEEP(b, ms) {.op = OP_NPU_SLEEP, .v = {{b, 0, BUF_BYTES}}, .pattern = (ms)}
/* clang-format on */

static bool node_uses_npu(const node_spec_t *n) {
  for (int i = 0; i < 3; i++)
    if (n->v[i].len && n->v[i].buf >= S0) return true;
  return n->op == OP_NPU_ADD || n->op == OP_NPU_FAIL || n->op == OP_NPU_SLEEP;
}

/*---------------------------------------------------------------------------
 * Host kernels and the reference interpreter
 *---------------------------------------------------------------------------*/

static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* Host kernels run on the host GPU's queue threads: no cmocka assertion
 * (it would jump across threads); the contract guarantees the bindings. */
static void k_add1(const host_gpu_dispatch_t *d) {
  if (d->binding_count != 2) abort();
  for (uint64_t i = 0; i < d->binding_bytes[1] / 4; i++)
    wr32(d->bindings[1] + 4 * i, rd32(d->bindings[0] + 4 * i) + 1);
}

static void k_inc(const host_gpu_dispatch_t *d) {
  if (d->binding_count != 1) abort();
  for (uint64_t i = 0; i < d->binding_bytes[0] / 4; i++)
    wr32(d->bindings[0] + 4 * i, rd32(d->bindings[0] + 4 * i) + 1);
}

/* What every node does to the bytes, applied in record order: conflicting
 * nodes are ordered whatever the plan, so this is what any correct run of
 * the plan leaves behind. */
static void ref_apply(uint8_t ref[NBUF][BUF_BYTES], const node_spec_t *n) {
  switch (n->op) {
    case OP_FILL:
      for (uint32_t i = 0; i < n->v[0].len; i += 4)
        wr32(&ref[n->v[0].buf][n->v[0].off + i], n->pattern);
      break;
    case OP_COPY:
      memmove(&ref[n->v[1].buf][n->v[1].off], &ref[n->v[0].buf][n->v[0].off], n->v[0].len);
      break;
    case OP_ADD1_IND: /* as vkCmdDispatchIndirect: a zero count dispatches nothing */
      for (uint32_t i = 0; i < 12; i += 4)
        if (!rd32(&ref[n->v[2].buf][n->v[2].off + i])) return;
      /* fall through */
    case OP_ADD1:
      for (uint32_t i = 0; i < CONTRACT_BYTES; i += 4)
        wr32(&ref[n->v[1].buf][n->v[1].off + i], rd32(&ref[n->v[0].buf][n->v[0].off + i]) + 1);
      break;
    case OP_ADD1V:
      for (uint32_t i = 0; i < n->v[1].len; i += 4)
        wr32(&ref[n->v[1].buf][n->v[1].off + i], rd32(&ref[n->v[0].buf][n->v[0].off + i]) + 1);
      break;
    case OP_INC:
      for (uint32_t i = 0; i < CONTRACT_BYTES; i += 4)
        wr32(&ref[n->v[0].buf][n->v[0].off + i], rd32(&ref[n->v[0].buf][n->v[0].off + i]) + 1);
      break;
    case OP_NPU_ADD:
      for (uint32_t i = 0; i < 4 * NPU_WORDS; i += 4)
        wr32(&ref[n->v[2].buf][i], rd32(&ref[n->v[0].buf][i]) + rd32(&ref[n->v[1].buf][i]));
      break;
    case OP_NPU_FAIL: break; /* fails: what it leaves is not compared */
    case OP_NPU_SLEEP: wr32(&ref[n->v[0].buf][0], 1); break;
  }
}

/*---------------------------------------------------------------------------
 * Runtimes
 *---------------------------------------------------------------------------*/

typedef struct world {
  tandem_runtime_t *rt;
  host_gpu_t *gpu;
  bool npu;
  tandem_buffer_t *buf[NBUF];
  tandem_kernel_t *add1, *add1v, *inc;
  tandem_npu_program_t *npu_add, *npu_fail, *npu_sleep;
  uint8_t ref[NBUF][BUF_BYTES];
} world_t;

static tandem_kernel_t *kernel_make(tandem_runtime_t *rt, const char *name, host_gpu_kernel_fn fn,
                                    uint32_t bindings, const tandem_access_t *access,
                                    uint64_t bytes) {
  host_gpu_kernel_code_t code = {.magic = HOST_GPU_KERNEL_MAGIC,
                                 .binding_count = bindings,
                                 .run = fn};
  tandem_binding_contract_t contract[2];
  for (uint32_t i = 0; i < bindings; i++) {
    code.reads[i] = access[i] & TANDEM_ACCESS_READ;
    code.writes[i] = access[i] & TANDEM_ACCESS_WRITE;
    contract[i] = (tandem_binding_contract_t){bytes, 16, access[i]};
  }
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = name,
                            .spirv = &code,
                            .spirv_size = sizeof code,
                            .workgroups = {1, 1, 1},
                            .bindings = contract,
                            .binding_count = bindings};
  tandem_kernel_t *k = NULL;
  tandem_status_t s = tandem_kernel_create(rt, &d, &k);
  if (s != TANDEM_OK)
    fail_msg("kernel %s: %s: %s", name, tandem_status_name(s), tandem_error_message());
  return k;
}

static tandem_npu_program_t *npu_program(tandem_runtime_t *rt, const char *kernel,
                                         uint32_t bindings, const tandem_access_t *access,
                                         uint32_t scalars) {
  tandem_binding_contract_t contract[3];
  for (uint32_t i = 0; i < bindings; i++)
    contract[i] = (tandem_binding_contract_t){CONTRACT_BYTES, 4, access[i]};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .program_path = TANDEM_TEST_EMU_XCLBIN,
                                 .kernel_name = kernel,
                                 .bindings = contract,
                                 .binding_count = bindings,
                                 .scalar_count = scalars};
  tandem_npu_program_t *p = NULL;
  tandem_status_t s = tandem_npu_program_create(rt, &d, &p);
  if (s != TANDEM_OK)
    fail_msg("NPU program %s: %s: %s", kernel, tandem_status_name(s), tandem_error_message());
  return p;
}

/* A fresh runtime on a host GPU shaped by |config|, its buffers filled with
 * distinct words (the reference starts equal). */
static void world_open(world_t *w, bool npu, const host_gpu_config_t *config) {
  memset(w, 0, sizeof *w);
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.graph_slots = 4;
  o.wait_spin_us = 0;
  o.gpu_timestamps = true; /* the sequence rows trace */
  w->npu = npu;
  if (npu) {
    o.npu_backend = "emulated";
    o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  }
  host_gpu_configure(config);
  o.gpu_backend = HOST_GPU_BACKEND;
  assert_int_equal(tandem_runtime_create(&o, &w->rt), TANDEM_OK);
  w->gpu = host_gpu_of(w->rt);
  assert_non_null(w->gpu);
  if (npu) {
    tandem_npu_info_t info;
    tandem_npu_info_init(&info);
    tandem_status_t s = tandem_runtime_npu_info(w->rt, &info);
    if (s != TANDEM_OK)
      fail_msg("emulated NPU: %s: %s", tandem_status_name(s), tandem_error_message());
    /* The host GPU imports host memory and nothing else: the path is proven. */
    assert_int_equal(info.sharing, TANDEM_SHARING_HOST_POINTER);
  }
  for (int b = 0; b < NBUF; b++) {
    if (b >= S0 && !npu) continue;
    assert_int_equal(tandem_buffer_create(w->rt, BUF_BYTES, buf_placement(b), &w->buf[b]),
                     TANDEM_OK);
    uint8_t *m = host_gpu_memory(w->buf[b]);
    assert_non_null(m);
    for (uint32_t i = 0; i < BUF_BYTES / 4; i++) wr32(&m[4 * i], (uint32_t)(b + 1) * 1000u + i);
    memcpy(w->ref[b], m, BUF_BYTES);
  }
  const tandem_access_t add1[2] = {TANDEM_ACCESS_READ, TANDEM_ACCESS_WRITE};
  const tandem_access_t inc[1] = {TANDEM_ACCESS_READ_WRITE};
  w->add1 = kernel_make(w->rt, "add1", k_add1, 2, add1, CONTRACT_BYTES);
  w->add1v = kernel_make(w->rt, "add1v", k_add1, 2, add1, TANDEM_BYTES_VIEW);
  w->inc = kernel_make(w->rt, "inc", k_inc, 1, inc, CONTRACT_BYTES);
  if (npu) {
    const tandem_access_t add[3] = {TANDEM_ACCESS_READ, TANDEM_ACCESS_READ, TANDEM_ACCESS_WRITE};
    const tandem_access_t fail[1] = {TANDEM_ACCESS_WRITE};
    w->npu_add = npu_program(w->rt, "add_i32", 3, add, 1);
    w->npu_fail = npu_program(w->rt, "fail", 1, fail, 0);
    w->npu_sleep = npu_program(w->rt, "sleep_ms", 1, fail, 1);
  }
}

/* Releases everything; the ordering check must have found nothing and no
 * byte may stay alive. */
static void world_close(world_t *w, const char *row) {
  uint64_t unordered = host_gpu_unordered(w->gpu);
  if (unordered)
    fail_msg("%s: the host GPU ran %llu unordered conflicting access pairs", row,
             (unsigned long long)unordered);
  tandem_kernel_release(w->add1);
  tandem_kernel_release(w->add1v);
  tandem_kernel_release(w->inc);
  tandem_npu_program_release(w->npu_add);
  tandem_npu_program_release(w->npu_fail);
  tandem_npu_program_release(w->npu_sleep);
  for (int b = 0; b < NBUF; b++) tandem_buffer_release(w->buf[b]);
  tandem_statistics_t st;
  tandem_statistics_init(&st);
  assert_int_equal(tandem_runtime_statistics(w->rt, &st), TANDEM_OK);
  assert_int_equal(st.live_bytes, 0);
  tandem_runtime_destroy(w->rt);
}

static tandem_view_t view_of(world_t *w, vs_t v) {
  return (tandem_view_t){w->buf[v.buf], v.off, v.len};
}

static void add_node(world_t *w, tandem_graph_t *g, const node_spec_t *n, const char *row) {
  tandem_lane_t lane = n->lane ? (tandem_lane_t)(n->lane - 1) : TANDEM_LANE_AUTO;
  tandem_status_t s = TANDEM_ERROR_INTERNAL;
  tandem_view_t v[3] = {view_of(w, n->v[0]), view_of(w, n->v[1]), view_of(w, n->v[2])};
  switch (n->op) {
    case OP_FILL: s = tandem_graph_add_fill(g, v[0], n->pattern, lane); break;
    case OP_COPY: s = tandem_graph_add_copy(g, v[0], v[1], lane); break;
    case OP_ADD1: s = tandem_graph_add_dispatch(g, w->add1, v, 2, NULL, 0); break;
    case OP_ADD1V: s = tandem_graph_add_dispatch(g, w->add1v, v, 2, NULL, 0); break;
    case OP_INC: s = tandem_graph_add_dispatch(g, w->inc, v, 1, NULL, 0); break;
    case OP_ADD1_IND: {
      tandem_dispatch_desc_t d = {.struct_size = sizeof(tandem_dispatch_desc_t),
                                  .kernel = w->add1,
                                  .views = v,
                                  .view_count = 2,
                                  .indirect = v[2]};
      s = tandem_graph_add_dispatch_node(g, &d, NULL);
      break;
    }
    case OP_NPU_ADD: {
      const uint32_t words = NPU_WORDS;
      s = tandem_graph_add_npu_run(g, w->npu_add, v, 3, &words, 1);
      break;
    }
    case OP_NPU_FAIL: s = tandem_graph_add_npu_run(g, w->npu_fail, v, 1, NULL, 0); break;
    case OP_NPU_SLEEP: {
      const uint32_t ms = n->pattern;
      s = tandem_graph_add_npu_run(g, w->npu_sleep, v, 1, &ms, 1);
      break;
    }
  }
  if (s != TANDEM_OK)
    fail_msg("%s: adding a node: %s: %s", row, tandem_status_name(s), tandem_error_message());
}

static tandem_exec_t *prepare(world_t *w, const node_spec_t *nodes, int count, const char *row) {
  tandem_graph_t *g = NULL;
  assert_int_equal(tandem_graph_create(w->rt, &g), TANDEM_OK);
  for (int i = 0; i < count; i++) add_node(w, g, &nodes[i], row);
  tandem_exec_t *e = NULL;
  tandem_status_t s = tandem_graph_prepare(g, &e);
  if (s != TANDEM_OK)
    fail_msg("%s: prepare: %s: %s", row, tandem_status_name(s), tandem_error_message());
  tandem_graph_release(g);
  return e;
}

static void check_memory(world_t *w, const char *row) {
  for (int b = 0; b < NBUF; b++) {
    if (!w->buf[b]) continue;
    const uint8_t *m = host_gpu_memory(w->buf[b]);
    for (uint32_t i = 0; i < BUF_BYTES; i += 4)
      if (rd32(&m[i]) != rd32(&w->ref[b][i]))
        fail_msg("%s: %s word %u is %u, the reference says %u", row, k_buf_name[b], i / 4,
                 rd32(&m[i]), rd32(&w->ref[b][i]));
  }
}

/* The SUBMIT events of the log, in order, into |out| (at most |cap|). */
static uint32_t submit_events(host_gpu_t *gpu, host_gpu_event_t *out, uint32_t cap) {
  static host_gpu_event_t all[4096];
  uint64_t dropped = 0;
  uint32_t n = host_gpu_events(gpu, all, 4096, &dropped);
  assert_int_equal(dropped, 0);
  uint32_t k = 0;
  for (uint32_t i = 0; i < n && i < 4096; i++)
    if (all[i].kind == HOST_GPU_SUBMIT && k < cap) out[k++] = all[i];
  return k;
}

static const char *config_name(const host_gpu_config_t *c) {
  return c->one_queue ? "one queue" : "a queue per lane";
}

/*===========================================================================
 * Plan rows: one graph, one submission
 *===========================================================================*/

typedef struct region_spec {
  tandem_lane_t lane;
  int nodes[8];
  int n;
  int waits[TANDEM_LANE_COUNT]; /* per lane, the region waited for, or NO */
} region_spec_t;

#define UP TANDEM_LANE_UPLOAD
#define COMP TANDEM_LANE_COMPUTE
#define DOWN TANDEM_LANE_DOWNLOAD
#define NPU TANDEM_LANE_NPU
/* clang-format off */
#define NOWAIT {NO, NO, NO, NO}
/* clang-format on */

typedef struct plan_row {
  const char *name;
  const char *rule; /* what the documents say that decides this row */
  node_spec_t nodes[8];
  int node_count;
  region_spec_t regions[8];
  int region_count;
  int barriers[8]; /* nodes with a barrier before them */
  int barrier_count;
  /* Each barrier's scope, source and destination (TANDEM__WORK_* sets):
   * the kinds of work since the previous barrier and until the next. */
  uint32_t scopes[8][2];
} plan_row_t;

/* Barrier scopes: compute (dispatches), transfer (fills, copies), indirect
 * (an indirect dispatch reading its counts). */
#define W_C TANDEM__WORK_COMPUTE
#define W_T TANDEM__WORK_TRANSFER
#define W_I TANDEM__WORK_INDIRECT

/* Two-node rows of the hazard matrix below. ROW_SAME: both nodes on the
 * compute lane, one region, with a barrier before node 1 (BARRIER(source,
 * destination)) or none (NONE). ROW_CROSS: node 0 on lane |l0|, node 1 on
 * |l1|, two regions; the second waits for the first (WAIT_ON(l0)) or not. */
/* clang-format off */
#define NONE 0, {{0, 0}}
#define BARRIER(src, dst) 1, {{(src), (dst)}}
#define ROW_SAME(name, a, b, barrier)                                                          \
  {name, "design.md Regions 1: only overlapping bytes with a write on either side conflict; " \
         "graph.c: a conflict in one region gets a barrier (record.c: scope = the two kinds)", \
   {a, b}, 2, {{COMP, {0, 1}, 2, NOWAIT}}, 1, {1}, barrier}
#define WAIT_ON(l) {(l) == UP ? 0 : NO, (l) == COMP ? 0 : NO, (l) == DOWN ? 0 : NO, NO}
#define ROW_CROSS(name, a, b, l0, l1, waits)                                                   \
  {name, "design.md Regions 1: only overlapping bytes with a write on either side conflict; " \
         "a conflict across lanes is a wait on the earlier region, never a barrier",          \
   {a, b}, 2, {{l0, {0}, 1, NOWAIT}, {l1, {1}, 1, waits}}, 2, {0}, 0, {{0, 0}}}
/* clang-format on */

static const plan_row_t k_plan_rows[] = {
    {"independent dispatches",
     "design.md Regions: 100 independent dispatches become one region with no barrier",
     {ADD1(D0, 0, 64, D1, 0, 64), ADD1(D0, 64, 64, D1, 64, 64), ADD1(D0, 128, 64, D1, 128, 64)},
     3,
     {{COMP, {0, 1, 2}, 3, NOWAIT}},
     1,
     {0},
     0,
     {{0, 0}}},
    {"dependent chain",
     "design.md Regions: a dependent chain becomes one region with a barrier between each pair",
     {INC(D0, 0), INC(D0, 0), INC(D0, 0)},
     3,
     {{COMP, {0, 1, 2}, 3, NOWAIT}},
     1,
     {1, 2},
     2,
     {{W_C, W_C}, {W_C, W_C}}},
    {"chunked stream, chunk by chunk",
     "design.md Regions: a chunked upload -> compute -> download stream becomes one region per "
     "node (the open region is waited on, or lacks the node's wait)",
     {COPY(H0, 0, D0, 0, 64), ADD1(D0, 0, 64, D1, 0, 64), COPY(D1, 0, H1, 0, 64),
      COPY(H0, 64, D0, 64, 64), ADD1(D0, 64, 64, D1, 64, 64), COPY(D1, 64, H1, 64, 64)},
     6,
     {{UP, {0}, 1, NOWAIT},
      {COMP, {1}, 1, {0, NO, NO, NO}},
      {DOWN, {2}, 1, {NO, 1, NO, NO}},
      {UP, {3}, 1, NOWAIT},
      {COMP, {4}, 1, {3, NO, NO, NO}},
      {DOWN, {5}, 1, {NO, 4, NO, NO}}},
     6,
     {0},
     0,
     {{0, 0}}},
    {"chunked stream, lane by lane",
     "graph.c: a node joins its lane's open region when nobody waits on it yet and it already "
     "waits for everything the node needs",
     {COPY(H0, 0, D0, 0, 64), COPY(H0, 64, D0, 64, 64), ADD1(D0, 0, 64, D1, 0, 64),
      ADD1(D0, 64, 64, D1, 64, 64), COPY(D1, 0, H1, 0, 64), COPY(D1, 64, H1, 64, 64)},
     6,
     {{UP, {0, 1}, 2, NOWAIT},
      {COMP, {2, 3}, 2, {0, NO, NO, NO}},
      {DOWN, {4, 5}, 2, {NO, 1, NO, NO}}},
     3,
     {0},
     0,
     {{0, 0}}},
    {"view-sized bytes, exactly the view",
     "design.md Regions 1: a view-sized binding's access is exactly its view: a fill of the "
     "bytes right after it conflicts with nothing",
     {ADD1V(D0, 0, 64, D1, 0, 64), FILL(D1, 64, 64, 7)},
     2,
     {{COMP, {0, 1}, 2, NOWAIT}},
     1,
     {0},
     0,
     {{0, 0}}},
    {"view-sized bytes, the whole view",
     "design.md Regions 1: a view-sized binding's access is its whole view (128 bytes here, "
     "twice the fixed kernels' contract): a fill of its second half is WAW",
     {ADD1V(D0, 0, 128, D1, 0, 128), FILL(D1, 64, 64, 7)},
     2,
     {{COMP, {0, 1}, 2, NOWAIT}},
     1,
     {1},
     1,
     {{W_C, W_T}}},
    {"contract bytes, a fill past the view",
     "design.md Regions 1: a dispatch's access for binding i is (view.offset, contract.bytes[i]), "
     "the view being exactly that long: a fill of the bytes after it conflicts with nothing",
     {ADD1(D0, 0, 64, D1, 0, 64), FILL(D1, 64, 64, 7)},
     2,
     {{COMP, {0, 1}, 2, NOWAIT}},
     1,
     {0},
     0,
     {{0, 0}}},
    {"contract bytes overlapped",
     "graph.c: a barrier goes before a node that conflicts with a node since the last barrier "
     "(WAW on D1 bytes 32..64 of the contract)",
     {ADD1(D0, 0, 64, D1, 0, 64), FILL(D1, 32, 64, 7)},
     2,
     {{COMP, {0, 1}, 2, NOWAIT}},
     1,
     {1},
     1,
     {{W_C, W_T}}},
    {"read/read never orders",
     "design.md Regions 1: read/read never orders, in one lane or across lanes",
     {COPY(D0, 0, D1, 0, 64), COPY(D0, 0, D2, 0, 64), COPY(D0, 0, H0, 0, 64)},
     3,
     {{COMP, {0, 1}, 2, NOWAIT}, {DOWN, {2}, 1, NOWAIT}},
     2,
     {0},
     0,
     {{0, 0}}},
    {"write after read across lanes",
     "design.md Regions 1 (WAR): the fill of D0 waits for the download that reads it",
     {COPY(D0, 0, H0, 0, 64), FILL(D0, 0, 64, 9)},
     2,
     {{DOWN, {0}, 1, NOWAIT}, {COMP, {1}, 1, {NO, NO, 0, NO}}},
     2,
     {0},
     0,
     {{0, 0}}},
    {"write after write across lanes",
     "design.md Regions 1 (WAW): overlapping bytes 32..64 order the fill after the upload",
     {COPY(H0, 0, D0, 0, 64), FILL(D0, 32, 64, 9)},
     2,
     {{UP, {0}, 1, NOWAIT}, {COMP, {1}, 1, {0, NO, NO, NO}}},
     2,
     {0},
     0,
     {{0, 0}}},
    {"no join into a region another waits on",
     "graph.c: a node joins the open region only if no other region waits on it yet",
     {FILL(D0, 0, 64, 1), COPY(D0, 0, H0, 0, 64), FILL(D1, 0, 64, 2)},
     3,
     {{COMP, {0}, 1, NOWAIT}, {DOWN, {1}, 1, {NO, 0, NO, NO}}, {COMP, {2}, 1, NOWAIT}},
     3,
     {0},
     0,
     {{0, 0}}},
    {"no join without the node's wait",
     "graph.c: a node joins only if the region already waits for everything it needs; the new "
     "region waits for the upload only, not for the independent compute region",
     {COPY(H0, 0, D0, 0, 64), FILL(D1, 0, 64, 1), ADD1(D0, 0, 64, D2, 0, 64)},
     3,
     {{UP, {0}, 1, NOWAIT}, {COMP, {1}, 1, NOWAIT}, {COMP, {2}, 1, {0, NO, NO, NO}}},
     3,
     {0},
     0,
     {{0, 0}}},
    {"join when the wait is there",
     "graph.c: the second reader of the upload joins the region that already waits for it, "
     "with no barrier (it conflicts with nothing in the region)",
     {COPY(H0, 0, D0, 0, 64), ADD1(D0, 0, 64, D1, 0, 64), ADD1(D0, 0, 64, D2, 0, 64)},
     3,
     {{UP, {0}, 1, NOWAIT}, {COMP, {1, 2}, 2, {0, NO, NO, NO}}},
     2,
     {0},
     0,
     {{0, 0}}},
    {"barrier only after a conflict since the last one",
     "graph.c: the barrier before node 2 already orders node 1 before node 3",
     {FILL(D0, 0, 64, 1), FILL(D1, 0, 64, 2), ADD1(D0, 0, 64, D2, 0, 64),
      ADD1(D1, 0, 64, D3, 0, 64)},
     4,
     {{COMP, {0, 1, 2, 3}, 4, NOWAIT}},
     1,
     {2},
     1,
     {{W_T, W_C}}},
    {"lane choice",
     "design.md Lanes: host-visible to device memory is an upload, the reverse a download, "
     "everything else (device to device, host to host, fills) compute",
     {COPY(H0, 0, D0, 0, 64), COPY(D1, 0, H1, 0, 64), COPY(D2, 0, D3, 0, 64),
      COPY(H0, 64, H1, 64, 64), FILL(D3, 64, 64, 5)},
     5,
     {{UP, {0}, 1, NOWAIT}, {DOWN, {1}, 1, NOWAIT}, {COMP, {2, 3, 4}, 3, NOWAIT}},
     3,
     {0},
     0,
     {{0, 0}}},
    {"a lane named explicitly",
     "design.md Lanes: each add call can name a lane; the copy on compute joins the dispatch "
     "that reads it, behind a barrier",
     {{.op = OP_COPY, .v = {{H0, 0, 64}, {D0, 0, 64}}, .lane = LANE(COMP)}, INC(D0, 0)},
     2,
     {{COMP, {0, 1}, 2, NOWAIT}},
     1,
     {1},
     1,
     {{W_T, W_C}}},
    {"GPU -> NPU -> GPU through shared memory",
     "design.md / npu.md: NPU runs are regions of the NPU lane; the NPU region waits for the "
     "uploads, the download for the NPU region (SHARED is device memory for lane choice)",
     {COPY(H0, 0, S0, 0, 64), COPY(H1, 0, S1, 0, 64), NPU_ADD(S0, S1, S2), COPY(S2, 0, H0, 64, 64)},
     4,
     {{UP, {0, 1}, 2, NOWAIT}, {NPU, {2}, 1, {0, NO, NO, NO}}, {DOWN, {3}, 1, {NO, NO, NO, 1}}},
     3,
     {0},
     0,
     {{0, 0}}},
    {"NPU and compute overlap",
     "graph.c: the compute work independent of the NPU run does not wait for it; the copy "
     "that reads the NPU's output opens its own region waiting for it",
     {NPU_ADD(S0, S1, S2), INC(D0, 0), COPY(S2, 0, D1, 0, 64)},
     3,
     {{NPU, {0}, 1, NOWAIT}, {COMP, {1}, 1, NOWAIT}, {COMP, {2}, 1, {NO, NO, NO, 0}}},
     3,
     {0},
     0,
     {{0, 0}}},

    /* Barrier scopes beyond two nodes. */
    {"a barrier's destination is everything up to the next one",
     "record.c: the destination scope is the kinds of work from the barrier to the next (the "
     "copy of D1 after the dispatch is ordered after the fill of D1 by the same barrier)",
     {FILL(D0, 0, 64, 1), FILL(D1, 0, 64, 2), ADD1(D0, 0, 64, D2, 0, 64), COPY(D1, 0, D3, 0, 64)},
     4,
     {{COMP, {0, 1, 2, 3}, 4, NOWAIT}},
     1,
     {2},
     1,
     {{W_T, W_C | W_T}}},
    {"a chain of barriers",
     "record.c: each barrier's source is the kinds of work since the previous one, so a chain "
     "fill -> dispatch -> copy gets transfer->compute, then compute->transfer",
     {FILL(D0, 0, 64, 1), ADD1(D0, 0, 64, D1, 0, 64), COPY(D1, 0, D2, 0, 64)},
     3,
     {{COMP, {0, 1, 2}, 3, NOWAIT}},
     1,
     {1, 2},
     2,
     {{W_T, W_C}, {W_C, W_T}}},
    {"an indirect dispatch past the barrier's first command",
     "record.c: the destination names INDIRECT when any indirect dispatch is in it, not only "
     "the first command after the barrier: the counts in D2 written before the barrier are "
     "read by the second dispatch behind it",
     {FILL(D2, 0, 16, 1), FILL(D0, 0, 64, 5), ADD1(D0, 0, 64, D1, 0, 64),
      ADD1_IND(D0, 0, D3, 0, D2, 0)},
     4,
     {{COMP, {0, 1, 2, 3}, 4, NOWAIT}},
     1,
     {2},
     1,
     {{W_T, W_C | W_I}}},
    {"an indirect dispatch right after its counts",
     "record.c: a barrier before an indirect dispatch whose counts a fill wrote names INDIRECT; "
     "a dispatch-only chain after it does not",
     {FILL(D2, 0, 16, 1), ADD1_IND(D0, 0, D1, 0, D2, 0), INC(D1, 0)},
     3,
     {{COMP, {0, 1, 2}, 3, NOWAIT}},
     1,
     {1, 2},
     2,
     {{W_T, W_C | W_I}, {W_C, W_C}}},

    /* Hazards x lanes x range shapes: the first node touches range X of D0,
     * the second range Y. Disjoint: Y past X; touching: Y starts where X
     * ends; nested: one inside the other; partial: they overlap in part.
     * Only nested and partial overlap, and only a write on either side
     * conflicts (design.md Regions 1): then one lane gets a barrier whose
     * scope is the two kinds of work, two lanes a wait. */
    ROW_SAME("RAW, one lane, disjoint", FILL(D0, 0, 64, 7), ADD1(D0, 128, 64, D1, 0, 64), NONE),
    ROW_SAME("RAW, one lane, touching", FILL(D0, 0, 64, 7), ADD1(D0, 64, 64, D1, 0, 64), NONE),
    ROW_SAME("RAW, one lane, nested", FILL(D0, 0, 128, 7), ADD1(D0, 32, 64, D1, 0, 64),
             BARRIER(W_T, W_C)),
    ROW_SAME("RAW, one lane, partial", FILL(D0, 0, 64, 7), ADD1(D0, 32, 64, D1, 0, 64),
             BARRIER(W_T, W_C)),
    ROW_SAME("WAR, one lane, disjoint", ADD1(D0, 0, 64, D1, 0, 64), FILL(D0, 128, 64, 9), NONE),
    ROW_SAME("WAR, one lane, touching", ADD1(D0, 0, 64, D1, 0, 64), FILL(D0, 64, 64, 9), NONE),
    ROW_SAME("WAR, one lane, nested", ADD1(D0, 0, 64, D1, 0, 64), FILL(D0, 16, 32, 9),
             BARRIER(W_C, W_T)),
    ROW_SAME("WAR, one lane, partial", ADD1(D0, 0, 64, D1, 0, 64), FILL(D0, 32, 64, 9),
             BARRIER(W_C, W_T)),
    ROW_SAME("WAW, one lane, disjoint", FILL(D0, 0, 64, 3), FILL(D0, 128, 64, 4), NONE),
    ROW_SAME("WAW, one lane, touching", FILL(D0, 0, 64, 3), FILL(D0, 64, 64, 4), NONE),
    ROW_SAME("WAW, one lane, nested", FILL(D0, 0, 128, 3), FILL(D0, 32, 32, 4), BARRIER(W_T, W_T)),
    ROW_SAME("WAW, one lane, partial", ADD1(D1, 0, 64, D0, 0, 64), FILL(D0, 32, 64, 4),
             BARRIER(W_C, W_T)),
    ROW_SAME("read-read, one lane, disjoint", ADD1(D0, 0, 64, D1, 0, 64), COPY(D0, 128, D2, 0, 64),
             NONE),
    ROW_SAME("read-read, one lane, touching", ADD1(D0, 0, 64, D1, 0, 64), COPY(D0, 64, D2, 0, 64),
             NONE),
    ROW_SAME("read-read, one lane, nested", ADD1(D0, 0, 64, D1, 0, 64), COPY(D0, 16, D2, 0, 32),
             NONE),
    ROW_SAME("read-read, one lane, partial", ADD1(D0, 0, 64, D1, 0, 64), COPY(D0, 32, D2, 0, 64),
             NONE),
    ROW_CROSS("RAW, two lanes, disjoint", FILL(D0, 0, 64, 7), COPY(D0, 128, H0, 0, 64), COMP, DOWN,
              NOWAIT),
    ROW_CROSS("RAW, two lanes, touching", FILL(D0, 0, 64, 7), COPY(D0, 64, H0, 0, 64), COMP, DOWN,
              NOWAIT),
    ROW_CROSS("RAW, two lanes, nested", FILL(D0, 0, 128, 7), COPY(D0, 32, H0, 0, 64), COMP, DOWN,
              WAIT_ON(COMP)),
    ROW_CROSS("RAW, two lanes, partial", FILL(D0, 0, 64, 7), COPY(D0, 32, H0, 0, 64), COMP, DOWN,
              WAIT_ON(COMP)),
    ROW_CROSS("WAR, two lanes, disjoint", COPY(D0, 0, H0, 0, 64), FILL(D0, 128, 64, 9), DOWN, COMP,
              NOWAIT),
    ROW_CROSS("WAR, two lanes, touching", COPY(D0, 0, H0, 0, 64), FILL(D0, 64, 64, 9), DOWN, COMP,
              NOWAIT),
    ROW_CROSS("WAR, two lanes, nested", COPY(D0, 0, H0, 0, 128), FILL(D0, 32, 32, 9), DOWN, COMP,
              WAIT_ON(DOWN)),
    ROW_CROSS("WAR, two lanes, partial", COPY(D0, 0, H0, 0, 64), FILL(D0, 32, 64, 9), DOWN, COMP,
              WAIT_ON(DOWN)),
    ROW_CROSS("WAW, two lanes, disjoint", COPY(H0, 0, D0, 0, 64), FILL(D0, 128, 64, 4), UP, COMP,
              NOWAIT),
    ROW_CROSS("WAW, two lanes, touching", COPY(H0, 0, D0, 0, 64), FILL(D0, 64, 64, 4), UP, COMP,
              NOWAIT),
    ROW_CROSS("WAW, two lanes, nested", COPY(H0, 0, D0, 0, 128), FILL(D0, 32, 32, 4), UP, COMP,
              WAIT_ON(UP)),
    ROW_CROSS("WAW, two lanes, partial", COPY(H0, 0, D0, 0, 64), FILL(D0, 32, 64, 4), UP, COMP,
              WAIT_ON(UP)),
    ROW_CROSS("read-read, two lanes, disjoint", COPY(D0, 0, H0, 0, 64), COPY(D0, 128, D1, 0, 64),
              DOWN, COMP, NOWAIT),
    ROW_CROSS("read-read, two lanes, touching", COPY(D0, 0, H0, 0, 64), COPY(D0, 64, D1, 0, 64),
              DOWN, COMP, NOWAIT),
    ROW_CROSS("read-read, two lanes, nested", COPY(D0, 0, H0, 0, 128), COPY(D0, 32, D1, 0, 32),
              DOWN, COMP, NOWAIT),
    ROW_CROSS("read-read, two lanes, partial", COPY(D0, 0, H0, 0, 64), COPY(D0, 32, D1, 0, 64),
              DOWN, COMP, NOWAIT),
};

static bool row_uses_npu(const node_spec_t *nodes, int count) {
  for (int i = 0; i < count; i++)
    if (node_uses_npu(&nodes[i])) return true;
  return false;
}

static void check_plan(const plan_row_t *row, const tandem_exec_t *e, const char *ctx) {
  const tandem__plan_t *plan = &e->plan;
  if ((int)plan->region_count != row->region_count)
    fail_msg("%s: %u regions, expected %d", ctx, plan->region_count, row->region_count);
  for (int r = 0; r < row->region_count; r++) {
    const region_spec_t *x = &row->regions[r];
    const tandem__region_t *got = &plan->regions[r];
    if (got->lane != x->lane || (int)got->count != x->n)
      fail_msg("%s: region %d is %u nodes on %s, expected %d on %s", ctx, r, got->count,
               tandem_lane_name(got->lane), x->n, tandem_lane_name(x->lane));
    for (int k = 0; k < x->n; k++)
      if ((int)plan->order[got->first + k] != x->nodes[k])
        fail_msg("%s: region %d holds node %u at %d, expected node %d", ctx, r,
                 plan->order[got->first + k], k, x->nodes[k]);
    for (int l = 0; l < TANDEM_LANE_COUNT; l++)
      if (got->wait_region[l] != x->waits[l])
        fail_msg("%s: region %d waits for region %d on %s, expected %d", ctx, r,
                 got->wait_region[l], tandem_lane_name((tandem_lane_t)l), x->waits[l]);
  }
  for (int i = 0; i < row->node_count; i++) {
    bool expected = false;
    for (int b = 0; b < row->barrier_count; b++) expected |= row->barriers[b] == i;
    if (plan->nodes[i].barrier_before != expected)
      fail_msg("%s: node %d %s a barrier before it, expected %s", ctx, i,
               plan->nodes[i].barrier_before ? "has" : "has no", expected ? "one" : "none");
  }
}

/* The command the host GPU must log for |spec| (plan node |node|): its
 * operands as the node gives them; a dispatch's binding 0 with the
 * contract's bytes. */
static host_gpu_event_t expected_command(world_t *w, const node_spec_t *spec, uint32_t node) {
  host_gpu_event_t e = {.node = node};
  switch (spec->op) {
    case OP_FILL:
      e.kind = HOST_GPU_FILL;
      e.memory = host_gpu_memory(w->buf[spec->v[0].buf]);
      e.offset = spec->v[0].off;
      e.length = spec->v[0].len;
      e.pattern = spec->pattern;
      break;
    case OP_COPY:
      e.kind = HOST_GPU_COPY;
      e.memory = host_gpu_memory(w->buf[spec->v[1].buf]);
      e.offset = spec->v[1].off;
      e.src_memory = host_gpu_memory(w->buf[spec->v[0].buf]);
      e.src_offset = spec->v[0].off;
      e.length = spec->v[0].len;
      break;
    case OP_ADD1:
    case OP_ADD1V:
    case OP_INC:
    case OP_ADD1_IND:
      e.kind = HOST_GPU_DISPATCH;
      e.binding_count = spec->op == OP_INC ? 1 : 2;
      e.memory = host_gpu_memory(w->buf[spec->v[0].buf]);
      e.offset = spec->v[0].off;
      e.length = spec->op == OP_ADD1V ? spec->v[0].len : CONTRACT_BYTES;
      e.indirect = spec->op == OP_ADD1_IND;
      break;
    case OP_NPU_ADD:
    case OP_NPU_FAIL:
    case OP_NPU_SLEEP: fail_msg("node %u: an NPU run has no GPU command", node);
  }
  return e;
}

/* What the host GPU was asked to do must be the plan: the regions recorded
 * for every slot, the submission's values (each lane counts its regions from
 * 1 in a fresh runtime; a wait names the value of the region waited for),
 * and the commands each GPU region ran, barriers included. */
static void check_log(const plan_row_t *row, world_t *w, const tandem_exec_t *e, const char *ctx) {
  static host_gpu_event_t ev[4096];
  uint64_t dropped = 0;
  uint32_t n = host_gpu_events(w->gpu, ev, 4096, &dropped);
  assert_int_equal(dropped, 0);
  uint32_t program = host_gpu_program_of(e);
  uint64_t signal[8], counter[TANDEM_LANE_COUNT] = {0};
  for (int r = 0; r < row->region_count; r++) signal[r] = ++counter[row->regions[r].lane];
  uint32_t records = 0, submits = 0;
  for (uint32_t i = 0; i < n; i++) {
    const host_gpu_event_t *x = &ev[i];
    if (x->program != program) continue;
    if (x->kind == HOST_GPU_RECORD) {
      const region_spec_t *want = &row->regions[x->region];
      if (want->lane == NPU) fail_msg("%s: NPU region %u was recorded on the GPU", ctx, x->region);
      int barriers = 0;
      for (int k = 0; k < want->n; k++)
        for (int b = 0; b < row->barrier_count; b++) barriers += row->barriers[b] == want->nodes[k];
      if (x->lane != want->lane || (int)x->node != want->n || (int)x->barriers != barriers)
        fail_msg("%s: recorded region %u (slot %u): %u nodes, %u barriers on %s; expected %d, "
                 "%d on %s",
                 ctx, x->region, x->slot, x->node, x->barriers, tandem_lane_name(x->lane), want->n,
                 barriers, tandem_lane_name(want->lane));
      records++;
    } else if (x->kind == HOST_GPU_SUBMIT) {
      const region_spec_t *want = &row->regions[x->region];
      if (x->region != submits || x->value != signal[x->region])
        fail_msg("%s: submit %u: region %u signals %llu; expected region %u, value %llu", ctx,
                 submits, x->region, (unsigned long long)x->value, submits,
                 (unsigned long long)signal[submits]);
      for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
        uint64_t v = want->waits[l] == NO ? 0 : signal[want->waits[l]];
        if (x->wait_values[l] != v)
          fail_msg("%s: region %u waits for %s value %llu, expected %llu", ctx, x->region,
                   tandem_lane_name((tandem_lane_t)l), (unsigned long long)x->wait_values[l],
                   (unsigned long long)v);
      }
      submits++;
    }
  }
  /* Core records GPU regions only: the NPU lane thread runs the others. */
  int gpu_regions = 0;
  for (int r = 0; r < row->region_count; r++) gpu_regions += row->regions[r].lane != NPU;
  if (records != (uint32_t)gpu_regions * e->slot_count || submits != (uint32_t)row->region_count)
    fail_msg("%s: %u regions recorded and %u submitted; expected %d x %u slots and %d", ctx,
             records, submits, gpu_regions, e->slot_count, row->region_count);
  /* The commands of each GPU region, exactly: at each position of the
   * region's recorded list, the barrier with its scope or the node's
   * command with its operands (what a device would be handed). */
  for (int r = 0; r < row->region_count; r++) {
    const region_spec_t *want = &row->regions[r];
    if (want->lane == TANDEM_LANE_NPU) continue;
    host_gpu_event_t expect[16];
    int m = 0;
    for (int k = 0; k < want->n; k++) {
      int node = want->nodes[k];
      for (int b = 0; b < row->barrier_count; b++) {
        if (row->barriers[b] != node) continue;
        expect[m++] = (host_gpu_event_t){.kind = HOST_GPU_BARRIER,
                                         .node = (uint32_t)node,
                                         .src_work = row->scopes[b][0],
                                         .dst_work = row->scopes[b][1]};
      }
      expect[m++] = expected_command(w, &row->nodes[node], (uint32_t)node);
    }
    int got = 0;
    for (uint32_t i = 0; i < n; i++) {
      const host_gpu_event_t *x = &ev[i];
      if (x->program != program || (int)x->region != r || x->slot != 0) continue;
      if (x->kind != HOST_GPU_BARRIER && x->kind != HOST_GPU_FILL && x->kind != HOST_GPU_COPY &&
          x->kind != HOST_GPU_DISPATCH)
        continue;
      if (got >= m || (int)x->position != got)
        fail_msg("%s: region %d ran a command at position %u; expected %d commands", ctx, r,
                 x->position, m);
      const host_gpu_event_t *y = &expect[got++];
      if (x->kind != y->kind || x->node != y->node)
        fail_msg("%s: region %d position %u is event %d for node %u; expected event %d for "
                 "node %u",
                 ctx, r, x->position, x->kind, x->node, y->kind, y->node);
      if (x->kind == HOST_GPU_BARRIER && (x->src_work != y->src_work || x->dst_work != y->dst_work))
        fail_msg("%s: region %d: the barrier before node %u has scope %#x -> %#x; expected "
                 "%#x -> %#x",
                 ctx, r, x->node, x->src_work, x->dst_work, y->src_work, y->dst_work);
      if (x->memory != y->memory || x->offset != y->offset || x->length != y->length ||
          x->src_memory != y->src_memory || x->src_offset != y->src_offset ||
          x->pattern != y->pattern || x->binding_count != y->binding_count ||
          x->indirect != y->indirect)
        fail_msg("%s: region %d: node %u's command ran with other operands than the node's "
                 "(offset %llu length %llu src offset %llu pattern %u bindings %u; expected "
                 "%llu %llu %llu %u %u)",
                 ctx, r, x->node, (unsigned long long)x->offset, (unsigned long long)x->length,
                 (unsigned long long)x->src_offset, x->pattern, x->binding_count,
                 (unsigned long long)y->offset, (unsigned long long)y->length,
                 (unsigned long long)y->src_offset, y->pattern, y->binding_count);
    }
    if (got != m)
      fail_msg("%s: region %d ran %d commands and barriers, expected %d", ctx, r, got, m);
  }
}

static void run_plan_row(const plan_row_t *row, const host_gpu_config_t *config) {
  char ctx[256];
  snprintf(ctx, sizeof ctx, "plan row '%s' (%s) [%s]", row->name, config_name(config), row->rule);
  world_t w;
  world_open(&w, row_uses_npu(row->nodes, row->node_count), config);
  tandem_exec_t *e = prepare(&w, row->nodes, row->node_count, ctx);
  check_plan(row, e, ctx);
  tandem_completion_t *c = NULL;
  tandem_status_t s = tandem_exec_submit(e, &c);
  if (s != TANDEM_OK)
    fail_msg("%s: submit: %s: %s", ctx, tandem_status_name(s), tandem_error_message());
  s = tandem_completion_wait(c);
  if (s != TANDEM_OK)
    fail_msg("%s: wait: %s: %s", ctx, tandem_status_name(s), tandem_error_message());
  tandem_completion_release(c);
  for (int i = 0; i < row->node_count; i++) ref_apply(w.ref, &row->nodes[i]);
  check_log(row, &w, e, ctx);
  check_memory(&w, ctx);
  tandem_exec_release(e);
  world_close(&w, ctx);
}

static const host_gpu_config_t k_configs[] = {{.one_queue = false}, {.one_queue = true}};

static void test_plan_rows(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof k_configs / sizeof k_configs[0]; c++)
    for (size_t i = 0; i < sizeof k_plan_rows / sizeof k_plan_rows[0]; i++)
      run_plan_row(&k_plan_rows[i], &k_configs[c]);
}

/*===========================================================================
 * Tracker rows: submissions in sequence, no wait between them
 *
 * Nothing polls between the submissions (a submission only polls when a
 * limit is in its way), so every earlier submission is still in the tracker
 * whatever the host GPU ran meanwhile: the waits are exactly what the rules
 * say, run after run.
 *===========================================================================*/

typedef struct graph_spec {
  node_spec_t nodes[4];
  int n;
} graph_spec_t;

typedef struct region_values {
  tandem_lane_t lane;
  uint64_t signal;
  uint64_t waits[TANDEM_LANE_COUNT];
} region_values_t;

typedef struct submission_spec {
  int graph;
  int after; /* submit_after this earlier submission, or NO */
  region_values_t regions[4];
  int n;
} submission_spec_t;

typedef struct tracker_row {
  const char *name;
  const char *rule;
  graph_spec_t graphs[3];
  int graph_count;
  submission_spec_t subs[4];
  int sub_count;
} tracker_row_t;

/* clang-format off */
#define G1(a) {{a}, 1}
#define G2(a, b) {{a, b}, 2}
#define SUB(g, ...) {(g), NO, {__VA_ARGS__}, (int)(sizeof((region_values_t[]){__VA_ARGS__}) / sizeof(region_values_t))}
#define SUB_AFTER(g, a, ...) {(g), (a), {__VA_ARGS__}, (int)(sizeof((region_values_t[]){__VA_ARGS__}) / sizeof(region_values_t))}
#define RV(lane, signal, up, comp, down, npu) {lane, signal, {up, comp, down, npu}}
/* clang-format on */

static const tracker_row_t k_tracker_rows[] = {
    {"write, then an overlapping read",
     "design.md The tracker: a submission waits, per lane, for the largest value of the in-flight "
     "records that overlap it with a conflicting access (bytes 32..64 of D0)",
     {G1(FILL(D0, 0, 64, 3)), G1(COPY(D0, 32, H0, 0, 64))},
     2,
     {SUB(0, RV(COMP, 1, 0, 0, 0, 0)), SUB(1, RV(DOWN, 1, 0, 1, 0, 0))},
     2},
    {"write, then a disjoint read",
     "design.md The tracker: two submissions touching disjoint ranges of one buffer do not wait "
     "for each other",
     {G1(FILL(D0, 0, 64, 3)), G1(COPY(D0, 64, H0, 0, 64))},
     2,
     {SUB(0, RV(COMP, 1, 0, 0, 0, 0)), SUB(1, RV(DOWN, 1, 0, 0, 0, 0))},
     2},
    {"read, then read",
     "design.md Regions 1 / The tracker: read/read never orders",
     {G1(COPY(D0, 0, H0, 0, 64)), G1(COPY(D0, 0, D1, 0, 64))},
     2,
     {SUB(0, RV(DOWN, 1, 0, 0, 0, 0)), SUB(1, RV(COMP, 1, 0, 0, 0, 0))},
     2},
    {"read, then write",
     "design.md: write-after-read orders the writer after the reader's region",
     {G1(COPY(D0, 0, H0, 0, 64)), G1(FILL(D0, 16, 16, 3))},
     2,
     {SUB(0, RV(DOWN, 1, 0, 0, 0, 0)), SUB(1, RV(COMP, 1, 0, 0, 1, 0))},
     2},
    {"write, then write",
     "design.md: write-after-write orders the second writer",
     {G1(FILL(D0, 0, 64, 3)), G1(COPY(H1, 0, D0, 0, 64))},
     2,
     {SUB(0, RV(COMP, 1, 0, 0, 0, 0)), SUB(1, RV(UP, 1, 0, 1, 0, 0))},
     2},
    {"one graph submitted three times",
     "submit.c: each submission takes a free slot and new values; a replay waits for the latest "
     "in-flight value of the lane (waiting on it covers the earlier ones)",
     {G1(INC(D0, 0))},
     1,
     {SUB(0, RV(COMP, 1, 0, 0, 0, 0)), SUB(0, RV(COMP, 2, 0, 1, 0, 0)),
      SUB(0, RV(COMP, 3, 0, 2, 0, 0))},
     3},
    {"a chain across three lanes",
     "design.md The tracker: each submission waits only for the records it conflicts with: the "
     "download waits for the compute (D1), not for the upload (D0)",
     {G1(COPY(H0, 0, D0, 0, 64)), G1(ADD1(D0, 0, 64, D1, 0, 64)), G1(COPY(D1, 0, H1, 0, 64))},
     3,
     {SUB(0, RV(UP, 1, 0, 0, 0, 0)), SUB(1, RV(COMP, 1, 1, 0, 0, 0)),
      SUB(2, RV(DOWN, 1, 0, 1, 0, 0))},
     3},
    {"waits go to the region that conflicts",
     "submit.c: a record's wait is added to the region of the access that conflicts; the "
     "independent upload region of the same submission waits for nothing",
     {G1(FILL(D0, 0, 64, 3)), G2(COPY(H0, 0, D1, 0, 64), COPY(D0, 0, H1, 0, 64))},
     2,
     {SUB(0, RV(COMP, 1, 0, 0, 0, 0)), SUB(1, RV(UP, 1, 0, 0, 0, 0), RV(DOWN, 1, 0, 1, 0, 0))},
     2},
    {"the largest value per lane",
     "design.md The tracker: two writers of disjoint halves do not wait for each other; the "
     "reader of both waits once per lane, for the larger value",
     {G1(FILL(D0, 0, 64, 3)), G1(FILL(D0, 64, 64, 4)), G1(COPY(D0, 0, H0, 0, 128))},
     3,
     {SUB(0, RV(COMP, 1, 0, 0, 0, 0)), SUB(1, RV(COMP, 2, 0, 0, 0, 0)),
      SUB(2, RV(DOWN, 1, 0, 2, 0, 0))},
     3},
    {"submit_after without a conflict",
     "submit.c: submit_after makes every region wait for every lane value of the completion",
     {G1(FILL(D0, 0, 64, 3)), G1(COPY(H0, 0, D1, 0, 64))},
     2,
     {SUB(0, RV(COMP, 1, 0, 0, 0, 0)), SUB_AFTER(1, 0, RV(UP, 1, 0, 1, 0, 0))},
     2},
    {"NPU, then a GPU reader",
     "design.md The NPU lane: GPU regions that depend on the NPU wait on its timeline",
     {G1(NPU_ADD(S0, S1, S2)), G1(COPY(S2, 0, H0, 0, 64))},
     2,
     {SUB(0, RV(NPU, 1, 0, 0, 0, 0)), SUB(1, RV(DOWN, 1, 0, 0, 0, 1))},
     2},
    {"GPU, then an NPU reader",
     "npu.md: the NPU region waits for the GPU values it depends on",
     {G1(COPY(H0, 0, S0, 0, 64)), G1(NPU_ADD(S0, S1, S2))},
     2,
     {SUB(0, RV(UP, 1, 0, 0, 0, 0)), SUB(1, RV(NPU, 1, 1, 0, 0, 0))},
     2},
    {"NPU and GPU reading one buffer",
     "read/read never orders, across the NPU lane too",
     {G1(NPU_ADD(S0, S1, S2)), G1(COPY(S0, 0, H0, 0, 64))},
     2,
     {SUB(0, RV(NPU, 1, 0, 0, 0, 0)), SUB(1, RV(DOWN, 1, 0, 0, 0, 0))},
     2},
};

static bool graphs_use_npu(const graph_spec_t *graphs, int count) {
  for (int i = 0; i < count; i++)
    if (row_uses_npu(graphs[i].nodes, graphs[i].n)) return true;
  return false;
}

static void run_tracker_row(const tracker_row_t *row, const host_gpu_config_t *config) {
  char ctx[320];
  snprintf(ctx, sizeof ctx, "tracker row '%s' (%s) [%s]", row->name, config_name(config),
           row->rule);
  world_t w;
  world_open(&w, graphs_use_npu(row->graphs, row->graph_count), config);
  tandem_exec_t *e[3] = {NULL, NULL, NULL};
  for (int g = 0; g < row->graph_count; g++)
    e[g] = prepare(&w, row->graphs[g].nodes, row->graphs[g].n, ctx);
  host_gpu_clear_events(w.gpu);
  tandem_completion_t *c[4] = {NULL, NULL, NULL, NULL};
  for (int k = 0; k < row->sub_count; k++) {
    const submission_spec_t *sub = &row->subs[k];
    tandem_status_t s = sub->after == NO
                            ? tandem_exec_submit(e[sub->graph], &c[k])
                            : tandem_exec_submit_after(e[sub->graph], &c[sub->after], 1, &c[k]);
    if (s != TANDEM_OK)
      fail_msg("%s: submission %d: %s: %s", ctx, k, tandem_status_name(s), tandem_error_message());
  }
  for (int k = 0; k < row->sub_count; k++) {
    tandem_status_t s = tandem_completion_wait(c[k]);
    if (s != TANDEM_OK)
      fail_msg("%s: wait %d: %s: %s", ctx, k, tandem_status_name(s), tandem_error_message());
  }
  host_gpu_event_t ev[16];
  uint32_t n = submit_events(w.gpu, ev, 16);
  uint32_t at = 0;
  uint32_t uses[3] = {0, 0, 0};
  for (int k = 0; k < row->sub_count; k++) {
    const submission_spec_t *sub = &row->subs[k];
    for (int r = 0; r < sub->n; r++, at++) {
      const region_values_t *want = &sub->regions[r];
      if (at >= n) fail_msg("%s: submission %d region %d was never submitted", ctx, k, r);
      const host_gpu_event_t *x = &ev[at];
      /* A replay takes the next free slot: slots 0, 1, 2 in turn. */
      if (x->program != host_gpu_program_of(e[sub->graph]) || x->slot != uses[sub->graph] ||
          (int)x->region != r)
        fail_msg("%s: submit event %u is program %u slot %u region %u; expected submission %d "
                 "region %d",
                 ctx, at, x->program, x->slot, x->region, k, r);
      if (x->lane != want->lane || x->value != want->signal)
        fail_msg("%s: submission %d region %d signals %s %llu, expected %s %llu", ctx, k, r,
                 tandem_lane_name(x->lane), (unsigned long long)x->value,
                 tandem_lane_name(want->lane), (unsigned long long)want->signal);
      for (int l = 0; l < TANDEM_LANE_COUNT; l++)
        if (x->wait_values[l] != want->waits[l])
          fail_msg("%s: submission %d region %d waits for %s %llu, expected %llu", ctx, k, r,
                   tandem_lane_name((tandem_lane_t)l), (unsigned long long)x->wait_values[l],
                   (unsigned long long)want->waits[l]);
    }
    uses[sub->graph]++;
  }
  if (at != n) fail_msg("%s: %u regions submitted, expected %u", ctx, n, at);
  for (int k = 0; k < row->sub_count; k++) {
    const graph_spec_t *g = &row->graphs[row->subs[k].graph];
    for (int i = 0; i < g->n; i++) ref_apply(w.ref, &g->nodes[i]);
    tandem_completion_release(c[k]);
  }
  check_memory(&w, ctx);
  for (int g = 0; g < row->graph_count; g++) tandem_exec_release(e[g]);
  world_close(&w, ctx);
}

static void test_tracker_rows(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof k_configs / sizeof k_configs[0]; c++)
    for (size_t i = 0; i < sizeof k_tracker_rows / sizeof k_tracker_rows[0]; i++)
      run_tracker_row(&k_tracker_rows[i], &k_configs[c]);
}

/*===========================================================================
 * Sequence rows: results, retirement order and poison
 *
 * Submissions made back to back, then waited for in a chosen order. The
 * first submission may fail: injected (TANDEM_TEST_FAIL_NEXT_SUBMISSION),
 * cancelled before any of it ran (its lanes held), or an NPU run that fails.
 * Retirement order comes from the trace (written at retirement). Afterwards
 * every buffer the row names poisoned must refuse reads of its first 16
 * bytes (which the failing work wrote) and, poison being per byte range
 * (tandem.h, Completions: "Bytes a failed submission never wrote stay
 * readable, by maps and by copies"), accept reads of its last 16 bytes
 * unless failed work wrote those too; buffers named clean stay readable;
 * and a whole rewrite, submitted with a reader right behind it, must make a
 * poisoned buffer readable again.
 *===========================================================================*/

typedef enum failure { FAILS_NOT, FAILS_INJECTED, FAILS_CANCELLED, FAILS_NPU } failure_t;

typedef struct expectation {
  tandem_status_t results[3];
  uint64_t retire_order[3]; /* submission numbers (from 1) in the order they retired */
  int poisoned[4];
  int poisoned_count;
} expectation_t;

typedef struct sequence_row {
  const char *name;
  const char *rule;
  graph_spec_t graphs[3];
  int graph_count; /* submission k submits graph k */
  failure_t first;
  uint32_t held; /* lanes (bits) held from the start; run once submitted (and cancelled) */
  bool held_until_first_wait; /* ... or only once the first wait returned */
  int wait_order[3];
  expectation_t docs; /* what the documents say */
  int clean[4];       /* buffers that must stay readable */
  int clean_count;
  /* Non-NULL: the code does otherwise, for the reason given; |code| is what it
   * does, and what the row checks. */
  const char *disagreement;
  expectation_t code;
} sequence_row_t;

#define OK TANDEM_OK
#define FDEP TANDEM_ERROR_FAILED_DEPENDENCY
#define BIT(l) (1u << (l))

static const sequence_row_t k_sequence_rows[] = {
    {"retirement in submission order",
     "design.md Submission: whoever takes the tracker lock next retires, in submission order, "
     "every slot whose values were passed",
     {G1(COPY(H0, 0, D0, 0, 64)), G1(ADD1(D0, 0, 64, D1, 0, 64)), G1(COPY(D1, 0, H1, 0, 64))},
     3,
     FAILS_NOT,
     0,
     false,
     {0, 1, 2},
     {{OK, OK, OK}, {1, 2, 3}, {0}, 0},
     {H0, H1, D0, D1},
     4,
     NULL,
     {.poisoned_count = 0}},
    {"independent work retires when it is done",
     "design.md Submission: a slot retires once its values were passed; the upload held, the "
     "compute submission made after it retires first",
     {G1(COPY(H0, 0, D0, 0, 64)), G1(FILL(D1, 0, 64, 5))},
     2,
     FAILS_NOT,
     BIT(UP),
     true,
     {1, 0},
     {{OK, OK}, {2, 1}, {0}, 0},
     {H0, D0, D1},
     3,
     NULL,
     {.poisoned_count = 0}},
    {"a chain waited for from its end",
     "design.md Submission: retirement reads the timelines and retires, in submission order, "
     "every slot whose values were passed: when the download is seen done, so are the upload "
     "and compute it waited for",
     {G1(COPY(H0, 0, D0, 0, 64)), G1(ADD1(D0, 0, 64, D1, 0, 64)), G1(COPY(D1, 0, H1, 0, 64))},
     3,
     FAILS_NOT,
     0,
     false,
     {2, 0, 1},
     {{OK, OK, OK}, {1, 2, 3}, {0}, 0},
     {H0, H1, D0, D1},
     4,
     NULL,
     {.poisoned_count = 0}},
    {"injected failure, waited for first",
     "tandem_testing.h FAIL_NEXT_SUBMISSION: result INTERNAL, the bytes it writes poisoned, "
     "every submission ordered after it FAILED_DEPENDENCY; the unrelated upload is fine",
     {G1(FILL(D0, 0, 64, 3)), G1(COPY(D0, 0, H0, 0, 64)), G1(COPY(H1, 0, D1, 0, 64))},
     3,
     FAILS_INJECTED,
     0,
     false,
     {0, 1, 2},
     {{TANDEM_ERROR_INTERNAL, FDEP, OK}, {1, 2, 3}, {D0, H0}, 2},
     {H1, D1},
     2,
     NULL,
     {.poisoned_count = 0}},
    {"injected failure, the dependent waited for first",
     "tandem_testing.h FAIL_NEXT_SUBMISSION: every submission ordered after it fails with "
     "FAILED_DEPENDENCY; design.md Failure: it marks every later in-flight submission that "
     "recorded it as a dependency",
     {G1(FILL(D0, 0, 64, 3)), G1(COPY(D0, 0, H0, 0, 64))},
     2,
     FAILS_INJECTED,
     0,
     false,
     {1, 0},
     {{TANDEM_ERROR_INTERNAL, FDEP}, {1, 2}, {D0, H0}, 2},
     {H1},
     1,
     NULL,
     {.poisoned_count = 0}},
    {"a failure down a chain of three lanes",
     "design.md Failure: dependents fail with FAILED_DEPENDENCY in turn, and poison what they "
     "write",
     {G1(COPY(H1, 0, D0, 0, 64)), G1(ADD1(D0, 0, 64, D1, 0, 64)), G1(COPY(D1, 0, H0, 0, 64))},
     3,
     FAILS_INJECTED,
     0,
     false,
     {0, 1, 2},
     {{TANDEM_ERROR_INTERNAL, FDEP, FDEP}, {1, 2, 3}, {D0, D1, H0}, 3},
     {H1},
     1,
     NULL,
     {.poisoned_count = 0}},
    {"cancelled before it ran",
     "design.md Failure: cancelling discards its results: result CANCELLED, writes poisoned, "
     "dependents failed",
     {G1(FILL(D0, 0, 64, 3)), G1(COPY(D0, 0, H0, 0, 64))},
     2,
     FAILS_CANCELLED,
     BIT(UP) | BIT(COMP) | BIT(DOWN),
     false,
     {0, 1},
     {{TANDEM_ERROR_CANCELLED, FDEP}, {1, 2}, {D0, H0}, 2},
     {H1},
     1,
     NULL,
     {.poisoned_count = 0}},
    {"a failed NPU run",
     "design.md Failure / npu.md: a failed NPU run fails its submission, poisons what it writes "
     "and fails the GPU work ordered after it",
     {G1(NPU_FAIL(S2)), G1(COPY(S2, 0, H0, 0, 64))},
     2,
     FAILS_NPU,
     0,
     false,
     {0, 1},
     {{TANDEM_ERROR_INTERNAL, FDEP}, {1, 2}, {S2, H0}, 2},
     {H1, S0},
     2,
     NULL,
     {.poisoned_count = 0}},
    {"a failed NPU run, the GPU reader waited for first",
     "design.md Failure: every later in-flight submission that recorded it as a dependency fails",
     {G1(NPU_FAIL(S2)), G1(COPY(S2, 0, H0, 0, 64))},
     2,
     FAILS_NPU,
     0,
     false,
     {1, 0},
     {{TANDEM_ERROR_INTERNAL, FDEP}, {1, 2}, {S2, H0}, 2},
     {H1, S0},
     2,
     NULL,
     {.poisoned_count = 0}},
};

static bool row_needs_npu(const sequence_row_t *row) {
  return graphs_use_npu(row->graphs, row->graph_count) || row->first == FAILS_NPU;
}

static bool in_list(const int *list, int count, int b) {
  for (int i = 0; i < count; i++)
    if (list[i] == b) return true;
  return false;
}

/* The bytes node |n| writes: its written view, or for a kernel or an NPU
 * run the contract's bytes of it (what the tracker records). */
static vs_t node_written(const node_spec_t *n) {
  switch (n->op) {
    case OP_FILL: return n->v[0];
    case OP_COPY: return n->v[1];
    case OP_ADD1:
    case OP_ADD1_IND: return (vs_t){n->v[1].buf, n->v[1].off, CONTRACT_BYTES};
    case OP_NPU_ADD: return (vs_t){n->v[2].buf, n->v[2].off, CONTRACT_BYTES};
    default: return (vs_t){n->v[0].buf, n->v[0].off, CONTRACT_BYTES};
  }
}

/* PR holds what the reference says (the last probe's bytes). */
static void check_probe(world_t *w, const char *ctx) {
  if (memcmp(host_gpu_memory(w->buf[PR]), w->ref[PR], 16) != 0)
    fail_msg("%s: a copy of clean bytes carried wrong bytes", ctx);
}

/* Submits a copy of 16 bytes of |b| from |off| into PR; returns the
 * submission's status, waited for when OK. */
static tandem_status_t probe_read_at(world_t *w, int b, uint32_t off, const char *ctx) {
  node_spec_t n = COPY(b, off, PR, 0, 16);
  tandem_exec_t *e = prepare(w, &n, 1, ctx);
  tandem_completion_t *c = NULL;
  tandem_status_t s = tandem_exec_submit(e, &c);
  if (s == TANDEM_OK) {
    assert_int_equal(tandem_completion_wait(c), TANDEM_OK);
    tandem_completion_release(c);
    ref_apply(w->ref, &n);
  } else {
    assert_null(c);
  }
  tandem_exec_release(e);
  return s;
}

/* Its last 16 bytes, which no failing node of the sequence rows writes
 * unless it writes the whole buffer. */
static tandem_status_t probe_read(world_t *w, int b, const char *ctx) {
  return probe_read_at(w, b, BUF_BYTES - 16, ctx);
}

/* Makes poisoned |b| readable: a whole rewrite (a fill on the GPU, submitted
 * with the reader right behind it while the lanes are held: the reader is
 * ordered after the rewrite, tracker.c tandem__poison_exposed_locked), or,
 * for a host-visible buffer, a whole host write map. */
static void rewrite_whole(world_t *w, int b, const char *ctx) {
  if (buf_placement(b) == TANDEM_PLACEMENT_HOST_VISIBLE) {
    tandem_map_t m;
    assert_int_equal(tandem_map_write(tandem_buffer_whole(w->buf[b]), &m), TANDEM_OK);
    memset(m.data, 0x11, BUF_BYTES);
    memset(w->ref[b], 0x11, BUF_BYTES);
    tandem_unmap(&m);
    if (probe_read(w, b, ctx) != TANDEM_OK)
      fail_msg("%s: %s rewritten whole by the host still refuses reads", ctx, k_buf_name[b]);
    return;
  }
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) host_gpu_hold(w->gpu, (tandem_lane_t)l);
  node_spec_t fill = FILL(b, 0, BUF_BYTES, 0x22222222u);
  node_spec_t read = COPY(b, BUF_BYTES - 16, PR, 0, 16);
  tandem_exec_t *ef = prepare(w, &fill, 1, ctx), *er = prepare(w, &read, 1, ctx);
  tandem_completion_t *cf = NULL, *cr = NULL;
  assert_int_equal(tandem_exec_submit(ef, &cf), TANDEM_OK);
  tandem_status_t s = tandem_exec_submit(er, &cr);
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) host_gpu_run(w->gpu, (tandem_lane_t)l);
  assert_int_equal(tandem_completion_wait(cf), TANDEM_OK);
  if (s != TANDEM_OK)
    fail_msg("%s: a reader of %s right behind its whole rewrite was refused: %s", ctx,
             k_buf_name[b], tandem_error_message());
  assert_int_equal(tandem_completion_wait(cr), TANDEM_OK);
  tandem_completion_release(cf);
  tandem_completion_release(cr);
  ref_apply(w->ref, &fill);
  ref_apply(w->ref, &read);
  tandem_exec_release(ef);
  tandem_exec_release(er);
  if (probe_read(w, b, ctx) != TANDEM_OK)
    fail_msg("%s: %s rewritten whole still refuses reads", ctx, k_buf_name[b]);
}

static void run_sequence_row(const sequence_row_t *row) {
  char ctx[512];
  snprintf(ctx, sizeof ctx, "sequence row '%s' [%s]", row->name, row->rule);
  const expectation_t *want = row->disagreement ? &row->code : &row->docs;
  if (row->disagreement)
    print_message("[ NOTE     ] known disagreement with the documents, row '%s': %s\n", row->name,
                  row->disagreement);
  host_gpu_config_t config = {0};
  world_t w;
  world_open(&w, row_needs_npu(row), &config);
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++)
    if (row->held & BIT(l)) host_gpu_hold(w.gpu, (tandem_lane_t)l);
  tandem_exec_t *e[3] = {NULL, NULL, NULL};
  for (int g = 0; g < row->graph_count; g++)
    e[g] = prepare(&w, row->graphs[g].nodes, row->graphs[g].n, ctx);
  assert_int_equal(tandem_runtime_trace_start(w.rt, 64), TANDEM_OK);
  if (row->first == FAILS_INJECTED)
    assert_int_equal(tandem_test_control(w.rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION), TANDEM_OK);
  tandem_completion_t *c[3] = {NULL, NULL, NULL};
  for (int k = 0; k < row->graph_count; k++) {
    tandem_status_t s = tandem_exec_submit(e[k], &c[k]);
    if (s != TANDEM_OK)
      fail_msg("%s: submission %d: %s: %s", ctx, k, tandem_status_name(s), tandem_error_message());
  }
  if (row->first == FAILS_CANCELLED) {
    /* Held: nothing ran, so the cancel finds it in flight. */
    assert_int_equal(host_gpu_value(w.gpu, TANDEM_LANE_COMPUTE), 0);
    assert_int_equal(tandem_completion_cancel(c[0]), TANDEM_OK);
  }
  if (!row->held_until_first_wait)
    for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) host_gpu_run(w.gpu, (tandem_lane_t)l);
  for (int i = 0; i < row->graph_count; i++) {
    int k = row->wait_order[i];
    tandem_status_t s = tandem_completion_wait(c[k]);
    if (s != want->results[k])
      fail_msg("%s: submission %d ended with %s (%s), expected %s", ctx, k, tandem_status_name(s),
               tandem_error_message(), tandem_status_name(want->results[k]));
    if (i == 0 && row->held_until_first_wait)
      for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) host_gpu_run(w.gpu, (tandem_lane_t)l);
  }
  /* Retirement order: the trace's events in the order they were written,
   * one run of events per submission. */
  tandem_trace_t *t = NULL;
  assert_int_equal(tandem_runtime_trace_stop(w.rt, &t), TANDEM_OK);
  uint32_t count = 0;
  const tandem_trace_event_t *ev = tandem_trace_events(t, &count);
  uint64_t order[8];
  int seen = 0;
  for (uint32_t i = 0; i < count; i++)
    if ((seen == 0 || order[seen - 1] != ev[i].submission) && seen < 8)
      order[seen++] = ev[i].submission;
  if (seen != row->graph_count)
    fail_msg("%s: %d submissions retired, expected %d", ctx, seen, row->graph_count);
  for (int i = 0; i < seen; i++)
    if (order[i] != want->retire_order[i])
      fail_msg("%s: retirement %d was submission %llu, expected %llu", ctx, i,
               (unsigned long long)order[i], (unsigned long long)want->retire_order[i]);
  tandem_trace_release(t);
  for (int k = 0; k < row->graph_count; k++) {
    if (want->results[k] == TANDEM_OK) {
      const graph_spec_t *g = &row->graphs[k];
      for (int i = 0; i < g->n; i++) ref_apply(w.ref, &g->nodes[i]);
    }
    tandem_completion_release(c[k]);
  }
  /* Poison: refused reads, and the clean buffers still readable with the
   * right bytes (failed work's output is not compared). */
  for (int b = 0; b < NBUF; b++) {
    if (!w.buf[b] || b == PR) continue;
    bool poisoned = in_list(want->poisoned, want->poisoned_count, b);
    bool clean = in_list(row->clean, row->clean_count, b);
    if (!poisoned && !clean) continue;
    if (poisoned) {
      tandem_status_t s = probe_read_at(&w, b, 0, ctx);
      if (s != TANDEM_ERROR_FAILED_DEPENDENCY)
        fail_msg("%s: reading poisoned bytes 0..16 of %s: %s, expected FAILED_DEPENDENCY", ctx,
                 k_buf_name[b], tandem_status_name(s));
      /* Its tail: poisoned only if failed work wrote it. */
      bool tail_failed = false;
      for (int k = 0; k < row->graph_count; k++) {
        if (want->results[k] == TANDEM_OK) continue;
        for (int i = 0; i < row->graphs[k].n; i++) {
          vs_t v = node_written(&row->graphs[k].nodes[i]);
          if (v.buf == b && v.len && v.off + v.len > BUF_BYTES - 16) tail_failed = true;
        }
      }
      s = probe_read(&w, b, ctx);
      if (s != (tail_failed ? TANDEM_ERROR_FAILED_DEPENDENCY : TANDEM_OK))
        fail_msg("%s: reading the last 16 bytes of %s (failed work %s them): %s (%s)", ctx,
                 k_buf_name[b], tail_failed ? "wrote" : "never wrote", tandem_status_name(s),
                 tandem_error_message());
      continue;
    }
    tandem_status_t s = probe_read(&w, b, ctx);
    if (clean && s != TANDEM_OK)
      fail_msg("%s: reading %s: %s (%s), expected OK", ctx, k_buf_name[b], tandem_status_name(s),
               tandem_error_message());
    if (clean) {
      const uint8_t *m = host_gpu_memory(w.buf[b]);
      if (memcmp(m, w.ref[b], BUF_BYTES) != 0)
        fail_msg("%s: %s holds wrong bytes", ctx, k_buf_name[b]);
    }
  }
  for (int i = 0; i < want->poisoned_count; i++) rewrite_whole(&w, want->poisoned[i], ctx);
  for (int g = 0; g < row->graph_count; g++) tandem_exec_release(e[g]);
  world_close(&w, ctx);
}

static void test_sequence_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof k_sequence_rows / sizeof k_sequence_rows[0]; i++)
    run_sequence_row(&k_sequence_rows[i]);
}

/*===========================================================================
 * The host GPU itself
 *===========================================================================*/

static tandem_status_t record_nothing(void *user, const tandem_vulkan_scope_t *scope) {
  (void)user;
  (void)scope;
  return TANDEM_OK;
}

/* The backend entry serves the device questions too. */
static void test_host_gpu_is_the_device(void **state) {
  (void)state;
  world_t w;
  world_open(&w, false, NULL);
  uint32_t n = 0;
  assert_int_equal(tandem_runtime_gpu_count(w.rt, &n), TANDEM_OK);
  assert_int_equal(n, 4); /* four host devices, for runtimes of several GPUs */
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  assert_int_equal(tandem_runtime_gpu_info(w.rt, 0, &info), TANDEM_OK);
  assert_non_null(strstr(info.name, "host GPU"));
  assert_int_equal(tandem_runtime_gpu_info(w.rt, 4, &info), TANDEM_ERROR_OUT_OF_RANGE);
  /* SPIR-V is not a host kernel. */
  static const uint32_t spirv[5] = {0x07230203u, 0x00010500u, 0, 1, 0};
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = "spirv",
                            .spirv = spirv,
                            .spirv_size = sizeof spirv,
                            .workgroups = {1, 1, 1}};
  tandem_kernel_t *k = NULL;
  assert_int_equal(tandem_kernel_create(w.rt, &d, &k), TANDEM_ERROR_INVALID_KERNEL);
  /* Its memory: one device-local, host-visible type; nothing to share with
   * other APIs (core refuses before asking the backend). */
  tandem_buffer_memory_t mem;
  assert_int_equal(tandem_buffer_memory(w.buf[D0], &mem), TANDEM_OK);
  assert_true(mem.heap_device_local);
  assert_true(mem.properties & TANDEM_MEMORY_HOST_VISIBLE);
  tandem_buffer_t *exportable = NULL;
  assert_int_equal(tandem_buffer_create_exportable(w.rt, 64, TANDEM_PLACEMENT_GPU_LOCAL,
                                                   TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &exportable),
                   TANDEM_ERROR_UNSUPPORTED);
  assert_null(exportable);
  /* No VkDevice behind it: Vulkan commands nodes are refused at add (its
   * recording never meets one). */
  tandem_graph_t *g = NULL;
  assert_int_equal(tandem_graph_create(w.rt, &g), TANDEM_OK);
  tandem_access_decl_t decl = {tandem_buffer_whole(w.buf[D0]), TANDEM_ACCESS_WRITE};
  assert_int_equal(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, &decl, 1, record_nothing,
                                                    NULL),
                   TANDEM_ERROR_UNSUPPORTED);
  assert_non_null(strstr(tandem_error_message(), "has no VkDevice"));
  assert_int_equal(tandem_graph_node_count(g), 0);
  tandem_graph_release(g);
  /* A runtime made without the option is not a host GPU. */
  tandem_runtime_t *plain = NULL;
  assert_int_equal(tandem_runtime_create(NULL, &plain), TANDEM_OK);
  assert_ptr_equal(plain->gpus[0].backend, &tandem_vk_gpu_backend);
  tandem_runtime_destroy(plain);
  world_close(&w, "device");
}

/* The ordering check can fail: two regions that conflict, handed to the host
 * GPU straight through the vtable with no wait between them, are reported;
 * with the wait, they are not. So are two conflicting nodes of one region
 * with their barrier taken away, or with a barrier whose scope misses one
 * side (a fill, then a copy reading its bytes: a compute-to-transfer or a
 * transfer-to-compute barrier orders nothing between them; transfer to
 * transfer does). */
static void test_ordering_check_catches(void **state) {
  (void)state;
  static const uint32_t scope[6][2] = {{0, 0},
                                       {0, 0},
                                       {0, 0},
                                       {TANDEM__WORK_COMPUTE, TANDEM__WORK_TRANSFER},
                                       {TANDEM__WORK_TRANSFER, TANDEM__WORK_COMPUTE},
                                       {TANDEM__WORK_TRANSFER, TANDEM__WORK_TRANSFER}};
  for (int variant = 0; variant < 6; variant++) {
    world_t w;
    host_gpu_config_t config = {.held = true};
    world_open(&w, false, &config);
    node_spec_t fill = FILL(D0, 0, 64, 1), copy = COPY(D0, 0, D1, 0, 64);
    node_spec_t both[2] = {FILL(D0, 0, 64, 1), COPY(D0, 0, D1, 0, 64)};
    tandem__gpu_t *gpu = tandem__gpu_at(w.rt, 0);
    tandem_exec_t *a = NULL, *b = NULL;
    uint64_t expect_unordered;
    if (variant < 2) {
      a = prepare(&w, &fill, 1, "check");
      b = prepare(&w, &copy, 1, "check");
      tandem__region_submit_t ra = {.region = 0, .signal_value = 1};
      tandem__region_submit_t rb = {.region = 0, .signal_value = 2};
      if (variant == 1) rb.wait_values[TANDEM_LANE_COMPUTE] = 1;
      assert_int_equal(gpu->vtable->program.submit(gpu, a->natives[0], 0, &ra, 1), TANDEM_OK);
      assert_int_equal(gpu->vtable->program.submit(gpu, b->natives[0], 0, &rb, 1), TANDEM_OK);
      expect_unordered = variant == 1 ? 0 : 1;
    } else if (variant >= 3) {
      /* The same two commands recorded by hand, through the command
       * interface, with the barrier's scope of the variant. */
      a = prepare(&w, both, 2, "check");
      tandem__cmd_fill_t f = {.id = 0,
                              .buffer = w.buf[D0]->native,
                              .offset = 0,
                              .length = 64,
                              .pattern = 1};
      tandem__cmd_copy_t c = {.id = 1,
                              .src = w.buf[D0]->native,
                              .dst = w.buf[D1]->native,
                              .bytes = 64};
      pthread_mutex_lock(&w.rt->mutex);
      assert_int_equal(gpu->vtable->record.begin(gpu, a->natives[0], 0, 0, 0), TANDEM_OK);
      gpu->vtable->record.fill(gpu, a->natives[0], 0, 0, &f);
      gpu->vtable->record.barrier(gpu, a->natives[0], 0, 0, scope[variant][0], scope[variant][1]);
      gpu->vtable->record.copy(gpu, a->natives[0], 0, 0, &c);
      assert_int_equal(gpu->vtable->record.end(gpu, a->natives[0], 0, 0), TANDEM_OK);
      pthread_mutex_unlock(&w.rt->mutex);
      tandem__region_submit_t ra = {.region = 0, .signal_value = 2};
      assert_int_equal(gpu->vtable->program.submit(gpu, a->natives[0], 0, &ra, 1), TANDEM_OK);
      expect_unordered = variant == 5 ? 0 : 1;
    } else {
      a = prepare(&w, both, 2, "check");
      assert_true(a->plan.nodes[1].barrier_before); /* the plan orders them */
      pthread_mutex_lock(&w.rt->mutex);
      a->plan.nodes[1].barrier_before = false;
      assert_int_equal(tandem__record_region(gpu, a->natives[0], &a->plan, 0, 0), TANDEM_OK);
      a->plan.nodes[1].barrier_before = true;
      pthread_mutex_unlock(&w.rt->mutex);
      tandem__region_submit_t ra = {.region = 0, .signal_value = 2};
      assert_int_equal(gpu->vtable->program.submit(gpu, a->natives[0], 0, &ra, 1), TANDEM_OK);
      expect_unordered = 1;
    }
    host_gpu_run(w.gpu, TANDEM_LANE_COMPUTE);
    assert_true(host_gpu_wait_value(w.gpu, TANDEM_LANE_COMPUTE, 2, 10000));
    assert_int_equal(host_gpu_unordered(w.gpu), expect_unordered);
    host_gpu_event_t ev[64];
    uint32_t n = host_gpu_events(w.gpu, ev, 64, NULL);
    uint32_t reports = 0;
    for (uint32_t i = 0; i < n && i < 64; i++) {
      if (ev[i].kind != HOST_GPU_UNORDERED) continue;
      reports++;
      assert_int_equal(ev[i].offset, 0);
      assert_int_equal(ev[i].length, 64);
      assert_int_equal(ev[i].other_lane, TANDEM_LANE_COMPUTE);
      assert_int_equal(ev[i].other_value, variant >= 2 ? 2 : 1);
    }
    assert_int_equal(reports, expect_unordered);
    /* The data ran anyway: D1 holds the fill. */
    const uint8_t *m = host_gpu_memory(w.buf[D1]);
    assert_int_equal(rd32(m), 1);
    /* Not core's submissions: the lanes' counters in core never moved, so
     * nothing is in flight and the runtime can go (the check's count goes
     * with it). */
    tandem_exec_release(a);
    tandem_exec_release(b);
    tandem_kernel_release(w.add1);
    tandem_kernel_release(w.add1v);
    tandem_kernel_release(w.inc);
    for (int i = 0; i < NBUF; i++) tandem_buffer_release(w.buf[i]);
    tandem_runtime_destroy(w.rt);
  }
}

/* A region whose dispatches have more bindings than one batch (core/record.c
 * records it in chunks: bindings of up to TANDEM__BINDING_BATCH, then their
 * commands): 100 dependent two-binding dispatches, D0 -> D1 -> D0 ..., are
 * one region of 100 dispatches with a compute-to-compute barrier before
 * every one but the first, each dispatch bound to its own views, and the
 * result is the reference's. */
static void test_region_larger_than_a_batch(void **state) {
  (void)state;
  enum { N = 100 };
  _Static_assert(2 * N > TANDEM__BINDING_BATCH, "more bindings than one batch");
  world_t w;
  world_open(&w, false, NULL);
  static node_spec_t nodes[N];
  for (int i = 0; i < N; i++)
    nodes[i] = (node_spec_t)ADD1(i % 2 ? D1 : D0, 0, 64, i % 2 ? D0 : D1, 0, 64);
  tandem_exec_t *e = prepare(&w, nodes, N, "large region");
  assert_int_equal(e->plan.region_count, 1);
  tandem_completion_t *c = NULL;
  assert_int_equal(tandem_exec_submit(e, &c), TANDEM_OK);
  assert_int_equal(tandem_completion_wait(c), TANDEM_OK);
  tandem_completion_release(c);
  for (int i = 0; i < N; i++) ref_apply(w.ref, &nodes[i]);
  check_memory(&w, "large region");
  static host_gpu_event_t ev[4096];
  uint64_t dropped = 0;
  uint32_t n = host_gpu_events(w.gpu, ev, 4096, &dropped);
  assert_int_equal(dropped, 0);
  uint32_t position = 0, dispatches = 0;
  for (uint32_t i = 0; i < n; i++) {
    const host_gpu_event_t *x = &ev[i];
    if (x->slot != 0 || (x->kind != HOST_GPU_BARRIER && x->kind != HOST_GPU_DISPATCH)) continue;
    assert_int_equal(x->position, position++);
    if (x->kind == HOST_GPU_BARRIER) {
      assert_int_equal(x->src_work, TANDEM__WORK_COMPUTE);
      assert_int_equal(x->dst_work, TANDEM__WORK_COMPUTE);
      assert_int_equal(x->node, dispatches); /* before the next dispatch */
      assert_true(dispatches > 0);
      continue;
    }
    const host_gpu_event_t want = expected_command(&w, &nodes[dispatches], dispatches);
    assert_int_equal(x->node, want.node);
    assert_ptr_equal(x->memory, want.memory);
    assert_int_equal(x->binding_count, 2);
    dispatches++;
  }
  assert_int_equal(dispatches, N);
  assert_int_equal(position, 2 * N - 1);
  tandem_exec_release(e);
  world_close(&w, "large region");
}

/* A long region recorded in pieces (core/record.c, "Pieces"; the piece
 * minimum lowered to 16 commands through TANDEM_RECORD_PIECE_MIN) runs
 * exactly the commands and barriers, with the same scopes, at the same
 * positions, as the region recorded whole, in every slot, at prepare and
 * re-recorded at submit: a chain of dependent dispatches through D0 and D1
 * with fills and copies on the compute lane among them, so that pieces start
 * at barriers whose source includes transfers as well as dispatches. */
typedef struct piece_run {
  host_gpu_event_t cmds[5][512]; /* [run]: barriers and commands run, in order */
  uint32_t count[5];
  uint32_t records[4]; /* RECORD events (pieces) at prepare, per slot */
  uint32_t rerecords;  /* RECORD events after the first submission */
  uint32_t pieces;     /* the most pieces of one recording */
} piece_run_t;

static void run_pieces(const char *piece_min, const node_spec_t *nodes, int n, piece_run_t *out) {
  memset(out, 0, sizeof *out);
  assert_int_equal(setenv("TANDEM_RECORD_PIECE_MIN", piece_min, 1), 0);
  world_t w;
  host_gpu_config_t config = {.log_capacity = 16384};
  world_open(&w, false, &config);
  tandem_exec_t *e = prepare(&w, nodes, n, "pieces");
  assert_int_equal(unsetenv("TANDEM_RECORD_PIECE_MIN"), 0);
  assert_int_equal(e->plan.region_count, 1);
  /* Four runs, then a changed parameter re-records the next slot's region
   * at submit: the last dispatch writes elsewhere in its buffer. */
  for (int run = 0; run < 5; run++) {
    if (run == 4) {
      const node_spec_t *last = &nodes[n - 1];
      assert_int_equal(last->op, OP_ADD1);
      tandem_view_t moved = {w.buf[last->v[1].buf], 128, 64};
      assert_int_equal(tandem_exec_set_view(e, (uint32_t)n - 1, 1, moved), TANDEM_OK);
    }
    tandem_completion_t *c = NULL;
    assert_int_equal(tandem_exec_submit(e, &c), TANDEM_OK);
    assert_int_equal(tandem_completion_wait(c), TANDEM_OK);
    tandem_completion_release(c);
    for (int i = 0; i < n; i++) {
      node_spec_t x = nodes[i];
      if (run == 4 && i == n - 1) x.v[1].off = 128;
      ref_apply(w.ref, &x);
    }
  }
  check_memory(&w, "pieces");
  assert_int_equal(host_gpu_unordered(w.gpu), 0);
  static host_gpu_event_t ev[16384];
  uint64_t dropped = 0;
  uint32_t count = host_gpu_events(w.gpu, ev, 16384, &dropped);
  assert_int_equal(dropped, 0);
  uint32_t runs = 0;
  bool submitted = false;
  for (uint32_t i = 0; i < count; i++) {
    const host_gpu_event_t *x = &ev[i];
    if (x->kind == HOST_GPU_END) runs++;
    if (x->kind == HOST_GPU_SUBMIT) submitted = true;
    if (x->kind == HOST_GPU_RECORD) {
      if (submitted) out->rerecords++;
      else out->records[x->slot]++;
      if (x->piece + 1 > out->pieces) out->pieces = x->piece + 1;
    }
    if (x->kind != HOST_GPU_BARRIER && x->kind != HOST_GPU_FILL && x->kind != HOST_GPU_COPY &&
        x->kind != HOST_GPU_DISPATCH)
      continue;
    assert_true(runs < 5 && out->count[runs] < 512);
    out->cmds[runs][out->count[runs]++] = *x;
  }
  assert_int_equal(runs, 5);
  tandem_exec_release(e);
  world_close(&w, "pieces");
}

static void test_long_region_recorded_in_pieces(void **state) {
  (void)state;
  enum { N = 240 };
  static node_spec_t nodes[N];
  int cur = D0;
  for (int i = 0; i < N; i++) {
    int other = cur == D0 ? D1 : D0;
    if (i % 20 == 7 && i + 1 < N) {
      nodes[i] = (node_spec_t)COPY(cur, 0, D2, 0, 64);
    } else if (i % 20 == 13 && i + 1 < N) {
      nodes[i] = (node_spec_t)FILL(D2, 0, 64, (uint32_t)i);
    } else if (i % 20 == 17 && i + 1 < N) {
      nodes[i] = (node_spec_t)COPY(D2, 0, cur, 0, 64);
    } else {
      nodes[i] = (node_spec_t)ADD1(cur, 0, 64, other, 0, 64);
      cur = other;
    }
    if (nodes[i].op != OP_ADD1) nodes[i].lane = TANDEM_LANE_COMPUTE + 1;
  }
  static piece_run_t whole, split;
  run_pieces("1000000", nodes, N, &whole);
  run_pieces("16", nodes, N, &split);
  assert_int_equal(whole.pieces, 1);
  assert_int_equal(whole.rerecords, 1);
  /* 240 commands in pieces of at least 16: many pieces, each recorded once
   * per slot at prepare, and again for the changed parameter. */
  assert_true(split.pieces >= 8);
  assert_int_equal(split.rerecords, split.pieces);
  for (int s = 0; s < 4; s++) {
    assert_int_equal(whole.records[s], 1);
    assert_int_equal(split.records[s], split.pieces);
  }
  for (int r = 0; r < 5; r++) {
    assert_int_equal(split.count[r], whole.count[r]);
    uint32_t barriers = 0, transfer_sources = 0;
    for (uint32_t i = 0; i < whole.count[r]; i++) {
      const host_gpu_event_t *a = &whole.cmds[r][i], *b = &split.cmds[r][i];
      if (a->kind != b->kind || a->node != b->node || a->position != b->position ||
          a->src_work != b->src_work || a->dst_work != b->dst_work || a->offset != b->offset ||
          a->slot != b->slot)
        fail_msg("run %d, entry %u: split runs kind %d node %u position %u scope %u -> %u; "
                 "whole: kind %d node %u position %u scope %u -> %u",
                 r, i, b->kind, b->node, b->position, b->src_work, b->dst_work, a->kind, a->node,
                 a->position, a->src_work, a->dst_work);
      barriers += a->kind == HOST_GPU_BARRIER;
      transfer_sources += a->kind == HOST_GPU_BARRIER && (a->src_work & TANDEM__WORK_TRANSFER);
    }
    assert_true(barriers > 100 && transfer_sources > 0);
  }
}

/* Recording failures at prepare, in parallel and not: the first failure in
 * slot order wins, with its own message, whichever thread recorded it and
 * however the threads were timed (core/record.c, tandem__record_slots). The
 * world has four slots; 800 dispatches record 3 200 commands, enough for
 * prepare to record the slots on four threads (TANDEM__RECORD_PARALLEL_MIN),
 * one dispatch is not. */
static void test_record_failure_first_slot_wins(void **state) {
  (void)state;
  enum { N = 800 };
  _Static_assert(4 * N >= TANDEM__RECORD_PARALLEL_MIN, "records in parallel");
  static node_spec_t nodes[N];
  for (int i = 0; i < N; i++)
    nodes[i] = (node_spec_t)ADD1(i % 2 ? D1 : D0, 0, 64, i % 2 ? D0 : D1, 0, 64);
  static const struct {
    uint32_t fail, count, want_slot;
  } cases[] = {{0x2u | 0x8u, N, 1}, {0x8u, N, 3},        {0xFu, N, 0},
               {0x4u | 0x8u, N, 2}, {0x2u | 0x4u, 1, 1}, {0x1u, 1, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    host_gpu_config_t config = {.fail_record_slots = cases[c].fail};
    world_t w;
    world_open(&w, false, &config);
    char want[64];
    snprintf(want, sizeof want, "recording slot %u failed", cases[c].want_slot);
    for (int rep = 0; rep < 10; rep++) {
      tandem_graph_t *g = NULL;
      assert_int_equal(tandem_graph_create(w.rt, &g), TANDEM_OK);
      for (uint32_t i = 0; i < cases[c].count; i++) add_node(&w, g, &nodes[i], "record failure");
      tandem_exec_t *e = NULL;
      tandem_status_t s = tandem_graph_prepare(g, &e);
      tandem_graph_release(g);
      if (s != TANDEM_ERROR_OUT_OF_MEMORY || e || !strstr(tandem_error_message(), want))
        fail_msg("case %zu, prepare %d: %s, exec %p, message '%s'; expected ERROR_OUT_OF_MEMORY "
                 "and '%s'",
                 c, rep, tandem_status_name(s), (void *)e, tandem_error_message(), want);
    }
    world_close(&w, "record failure");
  }
}

/* A submission made never changes: changing a node's view after submitting
 * re-records the region for the next submission only, and the host GPU ran
 * what was recorded. Held lanes put both in flight at once. */
static void test_recorded_parameters_stay(void **state) {
  (void)state;
  world_t w;
  host_gpu_config_t config = {.held = true};
  world_open(&w, false, &config);
  node_spec_t fill = FILL(D0, 0, 64, 0x5Au);
  tandem_exec_t *e = prepare(&w, &fill, 1, "recorded");
  tandem_completion_t *c1 = NULL, *c2 = NULL;
  assert_int_equal(tandem_exec_submit(e, &c1), TANDEM_OK);
  assert_int_equal(tandem_exec_set_view(e, 0, 0, (tandem_view_t){w.buf[D1], 0, 64}), TANDEM_OK);
  assert_int_equal(tandem_exec_submit(e, &c2), TANDEM_OK);
  host_gpu_run(w.gpu, TANDEM_LANE_COMPUTE);
  assert_int_equal(tandem_completion_wait(c1), TANDEM_OK);
  assert_int_equal(tandem_completion_wait(c2), TANDEM_OK);
  tandem_completion_release(c1);
  tandem_completion_release(c2);
  ref_apply(w.ref, &fill);
  node_spec_t moved = FILL(D1, 0, 64, 0x5Au);
  ref_apply(w.ref, &moved);
  check_memory(&w, "recorded parameters");
  /* Slot 0 recorded at prepare, slot 1 again after the change. */
  host_gpu_event_t ev[64];
  uint32_t n = host_gpu_events(w.gpu, ev, 64, NULL), records[4] = {0};
  for (uint32_t i = 0; i < n && i < 64; i++)
    if (ev[i].kind == HOST_GPU_RECORD) records[ev[i].slot]++;
  assert_int_equal(records[0], 1);
  assert_int_equal(records[1], 2);
  tandem_exec_release(e);
  world_close(&w, "recorded parameters");
}

/* submit_after a completion that failed is refused at once with
 * FAILED_DEPENDENCY; after one that succeeded and retired, nothing is waited
 * for. (tandem.h says "finished ones are ignored" and "if one of them fails
 * ..., this submission fails with FAILED_DEPENDENCY"; the code reads the
 * second as applying to finished ones too, and refuses at submit, which the
 * Errors list of tandem_exec_submit_after does not name for this case.) */
static void test_submit_after_retired(void **state) {
  (void)state;
  world_t w;
  world_open(&w, false, NULL);
  node_spec_t fill = FILL(D0, 0, 64, 3), copy = COPY(H0, 0, D1, 0, 64);
  tandem_exec_t *ef = prepare(&w, &fill, 1, "after"), *ec = prepare(&w, &copy, 1, "after");
  assert_int_equal(tandem_test_control(w.rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION), TANDEM_OK);
  tandem_completion_t *bad = NULL, *good = NULL, *c = NULL;
  assert_int_equal(tandem_exec_submit(ef, &bad), TANDEM_OK);
  assert_int_equal(tandem_completion_wait(bad), TANDEM_ERROR_INTERNAL);
  assert_int_equal(tandem_exec_submit_after(ec, &bad, 1, &c), TANDEM_ERROR_FAILED_DEPENDENCY);
  assert_null(c);
  tandem_completion_release(bad);
  host_gpu_clear_events(w.gpu);
  assert_int_equal(tandem_exec_submit(ec, &good), TANDEM_OK);
  assert_int_equal(tandem_completion_wait(good), TANDEM_OK);
  assert_int_equal(tandem_exec_submit_after(ec, &good, 1, &c), TANDEM_OK);
  assert_int_equal(tandem_completion_wait(c), TANDEM_OK);
  host_gpu_event_t ev[4];
  assert_int_equal(submit_events(w.gpu, ev, 4), 2);
  for (int l = 0; l < TANDEM_LANE_COUNT; l++) assert_int_equal(ev[1].wait_values[l], 0);
  assert_int_equal(ev[1].value, 2);
  tandem_completion_release(good);
  tandem_completion_release(c);
  tandem_exec_release(ef);
  tandem_exec_release(ec);
  world_close(&w, "submit_after");
}

/* Host maps use the tracker's records (design.md The tracker, tandem.h maps):
 * a try_ map of bytes in-flight work writes is BUSY, of disjoint bytes it is
 * not; a live map makes a submission that writes its bytes BUSY, one that
 * only reads them is accepted; a blocking map waits for the writer. The
 * compute lane is held, so the fill is in flight throughout. */
static void test_host_maps_and_in_flight_work(void **state) {
  (void)state;
  world_t w;
  world_open(&w, false, NULL);
  host_gpu_hold(w.gpu, TANDEM_LANE_COMPUTE);
  node_spec_t fill = FILL(H0, 0, 64, 0xABu), write_mapped = FILL(H0, 96, 16, 1),
              read_mapped = COPY(H0, 64, D0, 0, 16);
  tandem_exec_t *ef = prepare(&w, &fill, 1, "maps"), *ew = prepare(&w, &write_mapped, 1, "maps"),
                *er = prepare(&w, &read_mapped, 1, "maps");
  tandem_completion_t *cf = NULL, *c = NULL;
  assert_int_equal(tandem_exec_submit(ef, &cf), TANDEM_OK);
  tandem_map_t m, live;
  assert_int_equal(tandem_try_map_read((tandem_view_t){w.buf[H0], 0, 64}, &m), TANDEM_ERROR_BUSY);
  assert_int_equal(tandem_try_map_read((tandem_view_t){w.buf[H0], 32, 16}, &m), TANDEM_ERROR_BUSY);
  assert_int_equal(tandem_try_map_read((tandem_view_t){w.buf[H0], 64, 64}, &live), TANDEM_OK);
  assert_int_equal(tandem_exec_submit(ew, &c), TANDEM_ERROR_BUSY);
  assert_null(c);
  assert_int_equal(tandem_exec_submit(er, &c), TANDEM_OK); /* upload: not held */
  assert_int_equal(tandem_completion_wait(c), TANDEM_OK);
  tandem_completion_release(c);
  assert_int_equal(host_gpu_value(w.gpu, TANDEM_LANE_COMPUTE), 0); /* the fill still waits */
  tandem_unmap(&live);
  host_gpu_run(w.gpu, TANDEM_LANE_COMPUTE);
  assert_int_equal(tandem_map_read((tandem_view_t){w.buf[H0], 0, 64}, &m), TANDEM_OK);
  for (uint32_t i = 0; i < 64; i += 4) assert_int_equal(rd32((const uint8_t *)m.data + i), 0xABu);
  tandem_unmap(&m);
  tandem_completion_release(cf);
  ref_apply(w.ref, &read_mapped);
  ref_apply(w.ref, &fill);
  check_memory(&w, "maps");
  tandem_exec_release(ef);
  tandem_exec_release(ew);
  tandem_exec_release(er);
  world_close(&w, "maps");
}

/* Poison is per byte range (tandem.h, Completions and Host maps: "Bytes a
 * failed submission never wrote stay readable, by maps and by copies.
 * Writing a poisoned range again, by work that succeeds or through a write
 * map, clears it."): after a failed fill of bytes 0..64 of D0 and of H0,
 * copies and maps of bytes 64.. succeed with the right bytes, of 0..64 fail;
 * a successful fill of 0..32 makes 0..32 readable and leaves 32..64
 * poisoned; a write map of H0's 0..64 clears those. */
static void test_poison_by_range(void **state) {
  (void)state;
  world_t w;
  world_open(&w, false, NULL);
  node_spec_t fills[2] = {FILL(D0, 0, 64, 3), FILL(H0, 0, 64, 3)};
  tandem_exec_t *e = prepare(&w, fills, 2, "poison");
  tandem_completion_t *c = NULL;
  assert_int_equal(tandem_test_control(w.rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION), TANDEM_OK);
  assert_int_equal(tandem_exec_submit(e, &c), TANDEM_OK);
  assert_int_equal(tandem_completion_wait(c), TANDEM_ERROR_INTERNAL);
  tandem_completion_release(c);
  for (int b = D0; b >= H0; b -= D0 - H0) {
    assert_int_equal(probe_read_at(&w, b, 0, "poison"), TANDEM_ERROR_FAILED_DEPENDENCY);
    assert_int_equal(probe_read_at(&w, b, 48, "poison"), TANDEM_ERROR_FAILED_DEPENDENCY);
    assert_int_equal(probe_read_at(&w, b, 64, "poison"), TANDEM_OK);
    assert_int_equal(probe_read_at(&w, b, 240, "poison"), TANDEM_OK);
    check_probe(&w, "poison: copies of clean bytes");
  }
  tandem_map_t m;
  assert_int_equal(tandem_map_read((tandem_view_t){w.buf[H0], 60, 8}, &m),
                   TANDEM_ERROR_FAILED_DEPENDENCY);
  assert_int_equal(tandem_try_map_read((tandem_view_t){w.buf[H0], 0, 4}, &m),
                   TANDEM_ERROR_FAILED_DEPENDENCY);
  assert_int_equal(tandem_map_read((tandem_view_t){w.buf[H0], 64, 192}, &m), TANDEM_OK);
  assert_memory_equal(m.data, &w.ref[H0][64], 192);
  tandem_unmap(&m);
  /* Bytes 0..32 written again by work that succeeds: those are clean. */
  node_spec_t head[2] = {FILL(D0, 0, 32, 9), FILL(H0, 0, 32, 9)};
  tandem_exec_t *eh = prepare(&w, head, 2, "poison");
  assert_int_equal(tandem_exec_submit(eh, &c), TANDEM_OK);
  assert_int_equal(tandem_completion_wait(c), TANDEM_OK);
  tandem_completion_release(c);
  ref_apply(w.ref, &head[0]);
  ref_apply(w.ref, &head[1]);
  for (int b = D0; b >= H0; b -= D0 - H0) {
    assert_int_equal(probe_read_at(&w, b, 16, "poison"), TANDEM_OK);
    check_probe(&w, "poison: the rewritten head");
    assert_int_equal(probe_read_at(&w, b, 32, "poison"), TANDEM_ERROR_FAILED_DEPENDENCY);
  }
  /* A write map clears the range it maps, and only that. */
  assert_int_equal(tandem_map_write((tandem_view_t){w.buf[H0], 32, 16}, &m), TANDEM_OK);
  memset(m.data, 0x5A, 16);
  memset(&w.ref[H0][32], 0x5A, 16);
  tandem_unmap(&m);
  assert_int_equal(probe_read_at(&w, H0, 32, "poison"), TANDEM_OK);
  check_probe(&w, "poison: after the write map");
  assert_int_equal(probe_read_at(&w, H0, 48, "poison"), TANDEM_ERROR_FAILED_DEPENDENCY);
  assert_int_equal(probe_read_at(&w, D0, 40, "poison"), TANDEM_ERROR_FAILED_DEPENDENCY);
  tandem_exec_release(eh);
  rewrite_whole(&w, D0, "poison");
  rewrite_whole(&w, H0, "poison");
  tandem_exec_release(e);
  world_close(&w, "poison");
}

/* More separate poisoned ranges than a buffer keeps apart (tandem.h: "A
 * buffer keeps up to 8 poisoned ranges apart; past that the two closest
 * merge"): ten failed 8-byte fills, 24 bytes apart, then the closest two
 * (the last two: 8 bytes apart) are merged; every failed byte stays
 * poisoned, and bytes after the last stay clean. */
static void test_poison_ranges_merge(void **state) {
  (void)state;
  world_t w;
  world_open(&w, false, NULL);
  enum { RANGES = 10 };
  for (int i = 0; i < RANGES; i++) {
    uint32_t off = i < RANGES - 1 ? (uint32_t)i * 24u : (uint32_t)(RANGES - 2) * 24u + 16u;
    node_spec_t f = FILL(D0, off, 8, 1);
    tandem_exec_t *e = prepare(&w, &f, 1, "merge");
    tandem_completion_t *c = NULL;
    assert_int_equal(tandem_test_control(w.rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION), TANDEM_OK);
    assert_int_equal(tandem_exec_submit(e, &c), TANDEM_OK);
    assert_int_equal(tandem_completion_wait(c), TANDEM_ERROR_INTERNAL);
    tandem_completion_release(c);
    tandem_exec_release(e);
  }
  pthread_mutex_lock(&w.rt->mutex);
  uint32_t kept = w.buf[D0]->poison_count;
  pthread_mutex_unlock(&w.rt->mutex);
  assert_int_equal(kept, TANDEM__POISON_RANGES);
  for (int i = 0; i < RANGES - 1; i++)
    assert_int_equal(probe_read_at(&w, D0, (uint32_t)i * 24u, "merge"),
                     TANDEM_ERROR_FAILED_DEPENDENCY);
  assert_int_equal(probe_read_at(&w, D0, (RANGES - 2) * 24 + 16, "merge"),
                   TANDEM_ERROR_FAILED_DEPENDENCY);
  assert_int_equal(probe_read_at(&w, D0, 240, "merge"), TANDEM_OK);
  check_probe(&w, "merge");
  rewrite_whole(&w, D0, "merge");
  world_close(&w, "merge");
}

/*===========================================================================
 * Passed writes of failing submissions
 *
 * Submission A has two independent regions: a GPU fill of X that finishes
 * at once and a long NPU run (sleep_ms 300). A fails (injected, cancelled
 * after B was submitted, or an NPU run that fails after the sleep). B is
 * submitted once the fill was seen done (a poll read the timelines) while A
 * is still in flight, and B's completion is waited for or only polled.
 * tandem.h, Completions: "Every submission that reads bytes a failed
 * submission wrote fails with FAILED_DEPENDENCY ... ending with it when the
 * failure comes later (a write is tracked until its submission retires, even
 * after its lane passed it)" and "a failure that retires late never poisons
 * bytes a later submission rewrote".
 *===========================================================================*/

typedef enum b_kind {
  B_COPIES,        /* copies X -> Y */
  B_REWRITES,      /* fills all of X */
  B_REWRITES_HEAD, /* fills X's bytes 0..32 */
  B_MAPS,          /* no submission: a blocking host read map of X */
} b_kind_t;

typedef struct passed_row {
  const char *name;
  failure_t fails;
  b_kind_t b;
  bool polled; /* B's completion only polled (tandem_completion_is_complete) */
  tandem_status_t a_result, b_result;
  bool x_head_poisoned, x_tail_poisoned, y_poisoned; /* X: 0..32, 32..64 */
} passed_row_t;

#define INTL TANDEM_ERROR_INTERNAL
#define CANC TANDEM_ERROR_CANCELLED
static const passed_row_t k_passed_rows[] = {
    {"injected, B copies", FAILS_INJECTED, B_COPIES, false, INTL, FDEP, true, true, true},
    {"injected, B copies, polled", FAILS_INJECTED, B_COPIES, true, INTL, FDEP, true, true, true},
    {"cancelled, B copies", FAILS_CANCELLED, B_COPIES, false, CANC, FDEP, true, true, true},
    {"NPU fails, B copies", FAILS_NPU, B_COPIES, false, INTL, FDEP, true, true, true},
    {"NPU fails, B copies, polled", FAILS_NPU, B_COPIES, true, INTL, FDEP, true, true, true},
    {"injected, B rewrites X, polled", FAILS_INJECTED, B_REWRITES, true, INTL, OK, false, false,
     false},
    {"cancelled, B rewrites X, polled", FAILS_CANCELLED, B_REWRITES, true, CANC, OK, false, false,
     false},
    {"NPU fails, B rewrites X, polled", FAILS_NPU, B_REWRITES, true, INTL, OK, false, false, false},
    {"NPU fails, B rewrites X, waited", FAILS_NPU, B_REWRITES, false, INTL, OK, false, false,
     false},
    {"injected, B rewrites X's head, polled", FAILS_INJECTED, B_REWRITES_HEAD, true, INTL, OK,
     false, true, false},
    {"NPU fails, B rewrites X's head, polled", FAILS_NPU, B_REWRITES_HEAD, true, INTL, OK, false,
     true, false},
    {"injected, the host maps X", FAILS_INJECTED, B_MAPS, false, INTL, FDEP, true, true, false},
    {"NPU fails, the host maps X", FAILS_NPU, B_MAPS, false, INTL, FDEP, true, true, false},
};

/* Every value handed out on the GPU lanes reached on the host GPU. */
static void wait_gpu_lanes(world_t *w) {
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++)
    assert_true(host_gpu_wait_value(w->gpu, (tandem_lane_t)l, w->rt->lane_next_value[l], 10000));
}

static void run_passed_row(const passed_row_t *row) {
  char ctx[256];
  snprintf(ctx, sizeof ctx, "passed-write row '%s'", row->name);
  world_t w;
  world_open(&w, true, NULL);
  enum { X = H1, Y = D1 };
  node_spec_t a_nodes[3] = {FILL(X, 0, 64, 0xA0u), NPU_SLEEP(S0, 300), NPU_FAIL(S1)};
  tandem_exec_t *ea = prepare(&w, a_nodes, row->fails == FAILS_NPU ? 3 : 2, ctx);
  node_spec_t b_node = row->b == B_COPIES     ? (node_spec_t)COPY(X, 0, Y, 0, 64)
                       : row->b == B_REWRITES ? (node_spec_t)FILL(X, 0, 64, 0xB0u)
                                              : (node_spec_t)FILL(X, 0, 32, 0xB0u);
  tandem_exec_t *eb = row->b == B_MAPS ? NULL : prepare(&w, &b_node, 1, ctx);
  if (row->fails == FAILS_INJECTED)
    assert_int_equal(tandem_test_control(w.rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION), TANDEM_OK);
  tandem_completion_t *ca = NULL, *cb = NULL;
  assert_int_equal(tandem_exec_submit(ea, &ca), TANDEM_OK);
  wait_gpu_lanes(&w);                    /* the fill ran */
  if (tandem_completion_is_complete(ca)) /* a poll: the tracker saw the fill done */
    fail_msg("%s: A finished before B could be submitted; make its NPU run longer", ctx);
  pthread_mutex_lock(&w.rt->mutex);
  bool passed = w.rt->lane_done_value[TANDEM_LANE_COMPUTE] >= 1 ||
                w.rt->lane_done_value[TANDEM_LANE_UPLOAD] >= 1;
  pthread_mutex_unlock(&w.rt->mutex);
  if (!passed) fail_msg("%s: the poll did not see the fill done", ctx);
  tandem_status_t bs = TANDEM_OK;
  tandem_map_t m = {0};
  if (row->b == B_MAPS) {
    if (row->fails == FAILS_CANCELLED) assert_int_equal(tandem_completion_cancel(ca), TANDEM_OK);
    assert_int_equal(tandem_try_map_read((tandem_view_t){w.buf[X], 0, 64}, &m), TANDEM_ERROR_BUSY);
    bs = tandem_map_read((tandem_view_t){w.buf[X], 0, 64}, &m);
    if (bs == TANDEM_OK) tandem_unmap(&m);
    if (!tandem_completion_is_complete(ca)) fail_msg("%s: the map returned before A retired", ctx);
  } else {
    assert_int_equal(tandem_exec_submit(eb, &cb), TANDEM_OK);
    if (row->fails == FAILS_CANCELLED) assert_int_equal(tandem_completion_cancel(ca), TANDEM_OK);
    if (row->polled) {
      uint64_t start = tandem__now_ns();
      while (!tandem_completion_is_complete(cb)) {
        if (tandem__now_ns() - start > 10000000000ull) fail_msg("%s: B never completed", ctx);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
      }
      /* B retires after A (a write after A's write): A is done too. */
      assert_true(tandem_completion_is_complete(ca));
    }
    bs = tandem_completion_wait(cb);
  }
  if (bs != row->b_result)
    fail_msg("%s: B ended with %s (%s), expected %s", ctx, tandem_status_name(bs),
             tandem_error_message(), tandem_status_name(row->b_result));
  tandem_status_t as = tandem_completion_wait(ca);
  if (as != row->a_result)
    fail_msg("%s: A ended with %s, expected %s", ctx, tandem_status_name(as),
             tandem_status_name(row->a_result));
  tandem_completion_release(ca);
  tandem_completion_release(cb);
  if (bs == TANDEM_OK && eb) ref_apply(w.ref, &b_node);
  /* What stays poisoned, by range; what is clean holds the right bytes. */
  const struct {
    int buf;
    uint32_t off;
    bool poisoned;
  } probes[] = {{X, 0, row->x_head_poisoned},
                {X, 16, row->x_head_poisoned},
                {X, 32, row->x_tail_poisoned},
                {X, 48, row->x_tail_poisoned},
                {X, 64, false},
                {Y, 0, row->y_poisoned},
                {Y, 64, false},
                {S0, 0, true}};
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
    tandem_status_t s = probe_read_at(&w, probes[i].buf, probes[i].off, ctx);
    tandem_status_t want = probes[i].poisoned ? FDEP : OK;
    if (s != want)
      fail_msg("%s: reading %s bytes %u..%u: %s (%s), expected %s", ctx, k_buf_name[probes[i].buf],
               probes[i].off, probes[i].off + 16, tandem_status_name(s), tandem_error_message(),
               tandem_status_name(want));
    if (s == TANDEM_OK) {
      const uint8_t *got = host_gpu_memory(w.buf[PR]);
      if (memcmp(got, &w.ref[probes[i].buf][probes[i].off], 16) != 0)
        fail_msg("%s: %s bytes %u..%u hold wrong bytes", ctx, k_buf_name[probes[i].buf],
                 probes[i].off, probes[i].off + 16);
    }
  }
  if (row->b == B_MAPS) {
    /* The map of X's clean bytes goes through, with the right bytes. */
    assert_int_equal(tandem_map_read((tandem_view_t){w.buf[X], 64, 64}, &m), TANDEM_OK);
    assert_memory_equal(m.data, &w.ref[X][64], 64);
    tandem_unmap(&m);
  }
  rewrite_whole(&w, X, ctx);
  rewrite_whole(&w, S0, ctx);
  tandem_exec_release(ea);
  tandem_exec_release(eb);
  world_close(&w, ctx);
}

static void test_passed_writes(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof k_passed_rows / sizeof k_passed_rows[0]; i++)
    run_passed_row(&k_passed_rows[i]);
}

/* Lifetime under races (tandem.h: wait, cancel and release are thread-safe):
 * each round submits a fill, lets go of the executable (the completion holds
 * its last reference), then three threads at once wait for the completion,
 * cancel it and release it. Whatever order they run in, the waiter and the
 * canceller read nothing freed (ASan and TSan builds of this test run it)
 * and answer a documented code: the submission's result, or
 * INVALID_ARGUMENT for a completion already released. */
enum { RACE_ROUNDS = 3000 };

typedef struct race {
  world_t *w;
  pthread_barrier_t start, end;
  tandem_completion_t *_Atomic c;
  tandem_status_t waited, cancelled;
  bool stop;
} race_t;

static void *race_waiter(void *arg) {
  race_t *r = arg;
  for (;;) {
    pthread_barrier_wait(&r->start);
    if (r->stop) return NULL;
    r->waited = tandem_completion_wait(atomic_load(&r->c));
    pthread_barrier_wait(&r->end);
  }
}

static void *race_canceller(void *arg) {
  race_t *r = arg;
  for (;;) {
    pthread_barrier_wait(&r->start);
    if (r->stop) return NULL;
    r->cancelled = tandem_completion_cancel(atomic_load(&r->c));
    pthread_barrier_wait(&r->end);
  }
}

static void *race_releaser(void *arg) {
  race_t *r = arg;
  for (;;) {
    pthread_barrier_wait(&r->start);
    if (r->stop) return NULL;
    tandem_completion_release(atomic_load(&r->c));
    pthread_barrier_wait(&r->end);
  }
}

static void test_completion_wait_cancel_release_race(void **state) {
  (void)state;
  world_t w;
  world_open(&w, false, NULL);
  race_t r = {.w = &w};
  pthread_barrier_init(&r.start, NULL, 4);
  pthread_barrier_init(&r.end, NULL, 4);
  pthread_t t[3];
  void *(*const fn[3])(void *) = {race_waiter, race_canceller, race_releaser};
  for (int i = 0; i < 3; i++) assert_int_equal(pthread_create(&t[i], NULL, fn[i], &r), 0);
  node_spec_t fill = FILL(D0, 0, 64, 7);
  uint32_t ok = 0, cancelled = 0, released = 0;
  for (int round = 0; round < RACE_ROUNDS; round++) {
    tandem_exec_t *e = prepare(&w, &fill, 1, "race");
    tandem_completion_t *c = NULL;
    assert_int_equal(tandem_exec_submit(e, &c), TANDEM_OK);
    tandem_exec_release(e); /* the completion holds the last reference */
    atomic_store(&r.c, c);
    pthread_barrier_wait(&r.start);
    pthread_barrier_wait(&r.end);
    if (r.waited == TANDEM_OK) ok++;
    else if (r.waited == TANDEM_ERROR_CANCELLED) cancelled++;
    else if (r.waited == TANDEM_ERROR_INVALID_ARGUMENT) released++;
    else fail_msg("round %d: the wait answered %s", round, tandem_status_name(r.waited));
    if (r.cancelled != TANDEM_OK && r.cancelled != TANDEM_ERROR_INVALID_ARGUMENT)
      fail_msg("round %d: the cancel answered %s", round, tandem_status_name(r.cancelled));
    /* The fill's bytes are poisoned after a cancel: written again. */
    if (r.waited != TANDEM_OK) rewrite_whole(&w, D0, "race");
  }
  r.stop = true;
  pthread_barrier_wait(&r.start);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&r.start);
  pthread_barrier_destroy(&r.end);
  print_message("[ INFO     ] %d rounds: waits answered OK %u, CANCELLED %u, released %u\n",
                RACE_ROUNDS, ok, cancelled, released);
  world_close(&w, "race");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_host_gpu_is_the_device),
      cmocka_unit_test(test_ordering_check_catches),
      cmocka_unit_test(test_plan_rows),
      cmocka_unit_test(test_tracker_rows),
      cmocka_unit_test(test_sequence_rows),
      cmocka_unit_test(test_region_larger_than_a_batch),
      cmocka_unit_test(test_long_region_recorded_in_pieces),
      cmocka_unit_test(test_record_failure_first_slot_wins),
      cmocka_unit_test(test_recorded_parameters_stay),
      cmocka_unit_test(test_submit_after_retired),
      cmocka_unit_test(test_host_maps_and_in_flight_work),
      cmocka_unit_test(test_poison_by_range),
      cmocka_unit_test(test_poison_ranges_merge),
      cmocka_unit_test(test_passed_writes),
      cmocka_unit_test(test_completion_wait_cancel_release_race),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
