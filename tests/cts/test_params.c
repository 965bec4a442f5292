/* SPDX-License-Identifier: MIT */
/*
 * test_params.c — shapes that change per dispatch and per submission:
 * workgroup counts on the node, indirect dispatch from a GPU-written view,
 * and tandem_exec_set_push_constants / set_workgroups / set_view between
 * submissions of one prepared executable. Every result is checked element by
 * element against a CPU model; updates made while earlier submissions are in
 * flight must not change those submissions' results, and a moved range must
 * be ordered against in-flight work that touches it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "harness.h"
#include "tandem_test_shaders.h"

/* add_one_u32 without a default workgroup count (binding 0 read-write). */
static tandem_kernel_t *add_one_nodefault(tandem_runtime_t *rt, uint32_t n) {
  const tandem_binding_contract_t b[1] = {{(uint64_t)n * 4, 4, TANDEM_ACCESS_READ_WRITE}};
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = "add_one_u32",
                            .spirv = tandem_spv_add_one_u32,
                            .spirv_size = tandem_spv_add_one_u32_size,
                            .bindings = b,
                            .binding_count = 1,
                            .push_constant_bytes = 4};
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  return k;
}

/* push16: v[i] = y + z*i + w for i < x; 256 per workgroup, no default count. */
static tandem_kernel_t *push16_kernel(tandem_runtime_t *rt, uint32_t n) {
  const tandem_binding_contract_t b[1] = {{(uint64_t)n * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = "push16",
                            .spirv = tandem_spv_push16,
                            .spirv_size = tandem_spv_push16_size,
                            .bindings = b,
                            .binding_count = 1,
                            .push_constant_bytes = 16};
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  return k;
}

/* One prepared push16 dispatch over |v| with push constants |p| (x = count)
 * and enough 256-wide workgroups for x. */
static tandem_exec_t *push16_exec(tandem_runtime_t *rt, tandem_kernel_t *k, tandem_view_t v,
                                  const uint32_t p[4]) {
  tandem_graph_t *g = th_graph(rt);
  tandem_dispatch_desc_t d = {.struct_size = sizeof(tandem_dispatch_desc_t),
                              .kernel = k,
                              .views = &v,
                              .view_count = 1,
                              .push_constants = p,
                              .push_constant_bytes = 16,
                              .workgroups = {(p[0] + 255) / 256, 1, 1}};
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &d, NULL));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  return e;
}

static tandem_kernel_t *copy_kernel(tandem_runtime_t *rt, uint32_t n) {
  const tandem_binding_contract_t b[2] = {{(uint64_t)n * 4, 4, TANDEM_ACCESS_READ},
                                          {(uint64_t)n * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = "copy_u32",
                            .spirv = tandem_spv_copy_u32,
                            .spirv_size = tandem_spv_copy_u32_size,
                            .workgroups = {(n + 255) / 256, 1, 1},
                            .bindings = b,
                            .binding_count = 2,
                            .push_constant_bytes = 4};
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  return k;
}

static void test_workgroups_on_the_node(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 1024 };
  tandem_kernel_t *k = add_one_nodefault(rt, N);
  tandem_buffer_t *buf = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t v = tandem_buffer_whole(buf);
  uint32_t n = N;
  /* No default on the kernel: the plain add_dispatch says what to do. */
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch(g, k, &v, 1, &n, 4), TANDEM_ERROR_INVALID_ARGUMENT,
                       "no default workgroup count");
  tandem_dispatch_desc_t d = {.struct_size = sizeof(tandem_dispatch_desc_t),
                              .kernel = k,
                              .views = &v,
                              .view_count = 1,
                              .push_constants = &n,
                              .push_constant_bytes = 4,
                              .workgroups = {2, 1, 1}};
  uint32_t node = 77;
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &d, &node));
  TH_ASSERT_U64_EQ(node, 0);
  d.workgroups[0] = 3;
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &d, &node));
  TH_ASSERT_U64_EQ(node, 1);
  /* Bad counts. */
  d.workgroups[0] = 0;
  d.workgroups[1] = 2;
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch_node(g, &d, &node), TANDEM_ERROR_INVALID_ARGUMENT,
                       "workgroups[0] is 0");
  TH_ASSERT_U64_EQ(node, UINT32_MAX);
  d.workgroups[0] = UINT32_MAX, d.workgroups[1] = 1;
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch_node(g, &d, &node), TANDEM_ERROR_INVALID_ARGUMENT,
                       "maxComputeWorkGroupCount");
  TH_ASSERT_U64_EQ(tandem_graph_node_count(g), 2);
  th_run_graph(g, 1);
  uint32_t got[N], want[N];
  th_read(buf, 0, got, sizeof got);
  for (uint32_t i = 0; i < N; i++) want[i] = (i < 512 ? 1 : 0) + (i < 768 ? 1 : 0);
  TH_ASSERT_U32_ARRAY(got, want, N, "2 then 3 workgroups of 256");
  tandem_graph_release(g);
  tandem_buffer_release(buf);
  tandem_kernel_release(k);
}

static void test_indirect_dispatch(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 1024 };
  tandem_kernel_t *add = add_one_nodefault(rt, N);
  const tandem_binding_contract_t cb[2] = {{4, 4, TANDEM_ACCESS_READ},
                                           {12, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t kd = {.struct_size = sizeof(tandem_kernel_desc_t),
                             .name = "write_counts",
                             .spirv = tandem_spv_write_counts,
                             .spirv_size = tandem_spv_write_counts_size,
                             .workgroups = {1, 1, 1},
                             .bindings = cb,
                             .binding_count = 2};
  tandem_kernel_t *counts = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &kd, &counts));
  tandem_buffer_t *nbuf = th_buffer(rt, 256, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *args = th_buffer(rt, 256, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *data = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t cv[2] = {th_view(nbuf, 0, 4), th_view(args, 16, 12)};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, counts, cv, 2, NULL, 0));
  tandem_view_t dv = tandem_buffer_whole(data);
  uint32_t n = N;
  tandem_dispatch_desc_t d = {.struct_size = sizeof(tandem_dispatch_desc_t),
                              .kernel = add,
                              .views = &dv,
                              .view_count = 1,
                              .push_constants = &n,
                              .push_constant_bytes = 4,
                              .indirect = th_view(args, 16, 12)};
  uint32_t node = 0;
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &d, &node));
  TH_ASSERT_U64_EQ(node, 1);
  /* Mistakes: both kinds of count, a misaligned or short indirect view. */
  tandem_dispatch_desc_t bad = d;
  bad.workgroups[0] = bad.workgroups[1] = bad.workgroups[2] = 1;
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch_node(g, &bad, NULL), TANDEM_ERROR_INVALID_ARGUMENT,
                       "not both");
  bad = d;
  bad.indirect = th_view(args, 18, 12);
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch_node(g, &bad, NULL), TANDEM_ERROR_OUT_OF_RANGE,
                       "multiple of 4");
  bad.indirect = th_view(args, 16, 8);
  TH_ASSERT_STATUS(tandem_graph_add_dispatch_node(g, &bad, NULL), TANDEM_ERROR_OUT_OF_RANGE);

  tandem_exec_t *exec = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &exec));
  const uint32_t wg[3] = {1, 1, 1};
  TH_ASSERT_STATUS_MSG(tandem_exec_set_workgroups(exec, 1, wg), TANDEM_ERROR_INVALID_ARGUMENT,
                       "indirect");
  /* The count follows n, written by the host before each submission. */
  const uint32_t ns[4] = {700, 256, 1, 1024};
  uint32_t model[N];
  memset(model, 0, sizeof model);
  for (int r = 0; r < 4; r++) {
    th_write(nbuf, 0, &ns[r], 4);
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(exec, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    uint32_t groups = (ns[r] + 255) / 256;
    for (uint32_t i = 0; i < groups * 256 && i < N; i++) model[i]++;
    uint32_t got[N];
    th_read(data, 0, got, sizeof got);
    TH_ASSERT_U32_ARRAY(got, model, N, "after indirect dispatches");
  }
  tandem_exec_release(exec);
  tandem_graph_release(g);
  tandem_buffer_release(nbuf);
  tandem_buffer_release(args);
  tandem_buffer_release(data);
  tandem_kernel_release(add);
  tandem_kernel_release(counts);
}

/* An indirect dispatch that is not the first command after the barrier that
 * orders it after its counts: fill data2, write the counts, [barrier] add one
 * to data2 (which needs the barrier), then the indirect dispatch over data,
 * whose counts were written before that barrier and which needs no barrier
 * of its own. The barrier must name the indirect-read stage for it
 * (core/record.c); synchronization validation reports the counts' read as a
 * hazard otherwise, and the harness fails on any validation message. */
static void test_indirect_dispatch_behind_a_direct_one(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 1024 };
  tandem_kernel_t *add = add_one_nodefault(rt, N);
  const tandem_binding_contract_t cb[2] = {{4, 4, TANDEM_ACCESS_READ},
                                           {12, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t kd = {.struct_size = sizeof(tandem_kernel_desc_t),
                             .name = "write_counts",
                             .spirv = tandem_spv_write_counts,
                             .spirv_size = tandem_spv_write_counts_size,
                             .workgroups = {1, 1, 1},
                             .bindings = cb,
                             .binding_count = 2};
  tandem_kernel_t *counts = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &kd, &counts));
  tandem_buffer_t *nbuf = th_buffer(rt, 256, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *args = th_buffer(rt, 256, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *data = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *data2 = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  const uint32_t n = 700; /* 3 workgroups of 256 */
  th_write(nbuf, 0, &n, 4);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(data2), 5, TANDEM_LANE_COMPUTE));
  tandem_view_t cv[2] = {th_view(nbuf, 0, 4), th_view(args, 16, 12)};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, counts, cv, 2, NULL, 0));
  tandem_view_t v2 = tandem_buffer_whole(data2);
  uint32_t all = N;
  tandem_dispatch_desc_t direct = {.struct_size = sizeof(tandem_dispatch_desc_t),
                                   .kernel = add,
                                   .views = &v2,
                                   .view_count = 1,
                                   .push_constants = &all,
                                   .push_constant_bytes = 4,
                                   .workgroups = {N / 256, 1, 1}};
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &direct, NULL));
  tandem_view_t dv = tandem_buffer_whole(data);
  tandem_dispatch_desc_t ind = {.struct_size = sizeof(tandem_dispatch_desc_t),
                                .kernel = add,
                                .views = &dv,
                                .view_count = 1,
                                .push_constants = &all,
                                .push_constant_bytes = 4,
                                .indirect = th_view(args, 16, 12)};
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &ind, NULL));
  th_run_graph(g, 1);
  uint32_t got[N], want[N];
  th_read(data2, 0, got, sizeof got);
  for (uint32_t i = 0; i < N; i++) want[i] = 6;
  TH_ASSERT_U32_ARRAY(got, want, N, "data2: filled with 5, then one added");
  th_read(data, 0, got, sizeof got);
  for (uint32_t i = 0; i < N; i++) want[i] = i < 768 ? 1 : 0;
  TH_ASSERT_U32_ARRAY(got, want, N, "data: one added by 3 indirect workgroups of 256");
  tandem_graph_release(g);
  tandem_buffer_release(nbuf);
  tandem_buffer_release(args);
  tandem_buffer_release(data);
  tandem_buffer_release(data2);
  tandem_kernel_release(add);
  tandem_kernel_release(counts);
}

/* 256 submissions of one executable, each with its own push constants,
 * workgroup count and output range, up to three in flight while the next one
 * is set: every element of every output checked against a CPU mirror. */
static void test_256_submissions_alternating(void **state) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.graph_slots = 4;
  tandem_runtime_t *rt = th_runtime_create(&o);
  (void)state;
  enum { MAXN = 2048, REGIONS = 4, SUBMITS = 256, LAG = 3 };
  tandem_kernel_t *k = push16_kernel(rt, MAXN);
  tandem_buffer_t *out = th_buffer(rt, (uint64_t)MAXN * 4 * REGIONS, TANDEM_PLACEMENT_HOST_VISIBLE);
  const uint32_t push[4] = {MAXN, 0, 0, 0};
  tandem_exec_t *exec = push16_exec(rt, k, th_view(out, 0, MAXN * 4), push);

  uint32_t *mirror = calloc((size_t)MAXN * REGIONS, 4);
  uint32_t *got = malloc((size_t)MAXN * 4);
  tandem_completion_t *inflight[SUBMITS];
  uint32_t params[SUBMITS][5]; /* region, x, y, z, w */
  th_rng_t rng = th_rng(256);
  int saw_in_flight = 0;
  for (int i = 0; i < SUBMITS + LAG; i++) {
    if (i < SUBMITS) {
      uint32_t region = (uint32_t)i % REGIONS;
      uint32_t x = 1 + th_rand_u32(&rng) % MAXN;
      uint32_t p[4] = {x, th_rand_u32(&rng), th_rand_u32(&rng) % 97, th_rand_u32(&rng) % 13};
      /* Alternate between the smallest count that covers x and the most. */
      uint32_t wg[3] = {(i & 1) ? MAXN / 256 : (x + 255) / 256, 1, 1};
      if (i >= LAG && !tandem_completion_is_complete(inflight[i - LAG])) saw_in_flight++;
      TH_ASSERT_OK(
          tandem_exec_set_view(exec, 0, 0, th_view(out, (uint64_t)region * MAXN * 4, MAXN * 4)));
      TH_ASSERT_OK(tandem_exec_set_push_constants(exec, 0, p, sizeof p));
      TH_ASSERT_OK(tandem_exec_set_workgroups(exec, 0, wg));
      params[i][0] = region;
      memcpy(&params[i][1], p, sizeof p);
      TH_ASSERT_OK(tandem_exec_submit(exec, &inflight[i]));
    }
    int j = i - LAG;
    if (j < 0) continue;
    TH_ASSERT_OK(tandem_completion_wait(inflight[j]));
    tandem_completion_release(inflight[j]);
    /* Apply submission j to the mirror of its region and compare all of it. */
    uint32_t region = params[j][0], x = params[j][1];
    uint32_t *m = &mirror[(size_t)region * MAXN];
    for (uint32_t e = 0; e < x; e++) m[e] = params[j][2] + params[j][3] * e + params[j][4];
    th_read(out, (uint64_t)region * MAXN * 4, got, MAXN * 4);
    char what[96];
    snprintf(what, sizeof what, "submission %d (region %u, x %u)", j, region, x);
    TH_ASSERT_U32_ARRAY(got, m, MAXN, what);
  }
  print_message("updates made while an earlier submission was still running: %d of %d\n",
                saw_in_flight, SUBMITS - LAG);
  free(mirror);
  free(got);
  tandem_exec_release(exec);
  tandem_buffer_release(out);
  tandem_kernel_release(k);
  th_runtime_destroy(rt);
}

/* Each kind of change alone reaches the GPU: push constants only, then the
 * workgroup count only, on one view. */
static void test_each_parameter_alone(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 2048 };
  tandem_kernel_t *k = push16_kernel(rt, N);
  tandem_buffer_t *out = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t push[4] = {N, 0, 0, 0};
  tandem_exec_t *e = push16_exec(rt, k, tandem_buffer_whole(out), push);
  uint32_t model[N], got[N];
  memset(model, 0, sizeof model);
  for (int r = 0; r < 8; r++) {
    uint32_t groups = N / 256;
    if (r % 2 == 0) {
      push[1] = 1000u * (uint32_t)r + 1, push[2] = (uint32_t)r, push[3] = 7;
      TH_ASSERT_OK(tandem_exec_set_push_constants(e, 0, push, sizeof push));
    } else {
      groups = (uint32_t)r; /* 1, 3, 5, 7 workgroups of 256 */
      const uint32_t wg[3] = {groups, 1, 1};
      TH_ASSERT_OK(tandem_exec_set_workgroups(e, 0, wg));
    }
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    for (uint32_t i = 0; i < groups * 256 && i < N; i++) model[i] = push[1] + push[2] * i + push[3];
    th_read(out, 0, got, sizeof got);
    char what[64];
    snprintf(what, sizeof what, "round %d (%s)", r, r % 2 ? "workgroups" : "push constants");
    TH_ASSERT_U32_ARRAY(got, model, N, what);
    if (r % 2 == 1) { /* back to the full grid for the next push round */
      const uint32_t wg[3] = {N / 256, 1, 1};
      TH_ASSERT_OK(tandem_exec_set_workgroups(e, 0, wg));
    }
  }
  tandem_exec_release(e);
  tandem_buffer_release(out);
  tandem_kernel_release(k);
}

/* Sets racing submits from another thread: every submission sees one whole
 * set of push constants (v[i] = t*(i+2) for a single t), never half of two. */
typedef struct racer {
  tandem_exec_t *exec;
  atomic_bool stop;
  atomic_uint sets;
  tandem_status_t status;
} racer_t;

static void *race_sets(void *arg) {
  racer_t *r = arg;
  for (uint32_t t = 1; !atomic_load(&r->stop); t++) {
    uint32_t p[4] = {1024, t, t, t};
    tandem_status_t s = tandem_exec_set_push_constants(r->exec, 0, p, sizeof p);
    if (s != TANDEM_OK) {
      r->status = s;
      break;
    }
    atomic_fetch_add(&r->sets, 1);
  }
  return NULL;
}

static void test_sets_race_submits(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 1024, ROUNDS = 200 };
  tandem_kernel_t *k = push16_kernel(rt, N);
  tandem_buffer_t *out = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t push[4] = {N, 0, 0, 0};
  tandem_exec_t *e = push16_exec(rt, k, tandem_buffer_whole(out), push);
  racer_t r = {.exec = e, .status = TANDEM_OK};
  atomic_init(&r.stop, false);
  atomic_init(&r.sets, 0);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, race_sets, &r), 0);
  uint32_t got[N];
  int distinct = 0;
  uint32_t last_t = 0;
  for (int round = 0; round < ROUNDS; round++) {
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    th_read(out, 0, got, sizeof got);
    uint32_t t = got[0] / 2;
    for (uint32_t i = 0; i < N; i++)
      if (got[i] != t * (i + 2))
        fail_msg("round %d: v[%u] = %u but v[0] says t = %u (expected %u): a torn update", round, i,
                 got[i], t, t * (i + 2));
    if (t != last_t) distinct++, last_t = t;
  }
  atomic_store(&r.stop, true);
  pthread_join(th, NULL);
  TH_ASSERT_OK(r.status);
  print_message("%d distinct parameter sets seen in %d submissions, %u sets made\n", distinct,
                ROUNDS, atomic_load(&r.sets));
  tandem_exec_release(e);
  tandem_buffer_release(out);
  tandem_kernel_release(k);
}

/* A reader whose range moves onto bytes an in-flight submission writes is
 * ordered after it (the tracker sees the new range). */
static void test_moved_view_waits_for_in_flight_writer(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 4096, CHAIN = 24 };
  tandem_kernel_t *add = th_add_one_kernel(rt, N);
  tandem_kernel_t *copy = copy_kernel(rt, N);
  tandem_buffer_t *x = th_buffer(rt, N * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *y = th_buffer(rt, N * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *dst = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  /* Writer: CHAIN dependent add-ones on x. */
  tandem_graph_t *gw = th_graph(rt);
  for (int i = 0; i < CHAIN; i++) TH_ASSERT_OK(th_add_add_one(gw, add, tandem_buffer_whole(x), N));
  tandem_exec_t *writer = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(gw, &writer));
  /* Reader: copies y (never written) to dst, then is moved onto x. */
  tandem_graph_t *gr = th_graph(rt);
  tandem_view_t rv[2] = {tandem_buffer_whole(y), tandem_buffer_whole(dst)};
  uint32_t n = N;
  TH_ASSERT_OK(tandem_graph_add_dispatch(gr, copy, rv, 2, &n, 4));
  tandem_exec_t *reader = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(gr, &reader));
  uint32_t got[N];
  for (int round = 1; round <= 3; round++) {
    TH_ASSERT_OK(tandem_exec_set_view(reader, 0, 0, tandem_buffer_whole(y)));
    tandem_completion_t *cw = NULL, *cr = NULL;
    TH_ASSERT_OK(tandem_exec_submit(writer, &cw));
    TH_ASSERT_OK(tandem_exec_set_view(reader, 0, 0, tandem_buffer_whole(x)));
    TH_ASSERT_OK(tandem_exec_submit(reader, &cr));
    TH_ASSERT_OK(tandem_completion_wait(cr));
    TH_ASSERT_OK(tandem_completion_wait(cw));
    tandem_completion_release(cw);
    tandem_completion_release(cr);
    th_read(dst, 0, got, sizeof got);
    TH_ASSERT_U32_FILL(got, (uint32_t)(round * CHAIN), N, "reader moved onto x");
  }
  tandem_exec_release(writer);
  tandem_exec_release(reader);
  tandem_graph_release(gw);
  tandem_graph_release(gr);
  tandem_buffer_release(x);
  tandem_buffer_release(y);
  tandem_buffer_release(dst);
  tandem_kernel_release(add);
  tandem_kernel_release(copy);
}

/* Inside one graph the order was fixed at prepare: a move that needs an
 * order the plan lacks is refused; one the plan already has is fine. */
static void test_set_view_inside_the_graph(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 1024 };
  tandem_kernel_t *add = th_add_one_kernel(rt, N);
  tandem_kernel_t *copy = copy_kernel(rt, N);
  tandem_buffer_t *x = th_buffer(rt, 2 * N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *y = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *z = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *gl = th_buffer(rt, N * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  uint32_t n = N;
  /* Independent: node 0 writes x[0..N), node 1 copies y to z. */
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, add, th_view(x, 0, N * 4), N));
  tandem_view_t cv[2] = {tandem_buffer_whole(y), tandem_buffer_whole(z)};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, copy, cv, 2, &n, 4));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 1, 0, th_view(x, 0, N * 4)), TANDEM_ERROR_CONTRACT,
                       "does not order node 0 before node 1");
  /* Errors that name the argument. */
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 2, 0, tandem_buffer_whole(y)),
                       TANDEM_ERROR_INVALID_ARGUMENT, "out of range");
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 1, 2, tandem_buffer_whole(y)),
                       TANDEM_ERROR_INVALID_ARGUMENT, "binding 2");
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 1, 0, th_view(x, 0, N * 4)), TANDEM_ERROR_CONTRACT,
                       "node 0");
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 1, 1, tandem_buffer_whole(gl)),
                       TANDEM_ERROR_CONTRACT, "placement");
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 1, 0, th_view(y, 0, 64)), TANDEM_ERROR_CONTRACT,
                       "contract needs");
  TH_ASSERT_OK(tandem_exec_set_view(e, 1, 1, th_view(z, 0, N * 4))); /* unchanged: fine */
  uint32_t bad_push[2] = {1, 2};
  TH_ASSERT_STATUS_MSG(tandem_exec_set_push_constants(e, 1, bad_push, 8), TANDEM_ERROR_CONTRACT,
                       "needs 4");
  const uint32_t zero[3] = {0, 1, 1};
  TH_ASSERT_STATUS(tandem_exec_set_workgroups(e, 1, zero), TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_exec_release(e);
  tandem_graph_release(g);

  /* Ordered: node 1 reads x after node 0 writes it; moving the read inside x
   * keeps an order the plan has (a barrier), and the data shows it. */
  g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, add, th_view(x, 0, N * 4), N));
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(x, N * 4, N * 4), 5, TANDEM_LANE_AUTO));
  tandem_view_t rv[2] = {th_view(x, 0, N * 4), tandem_buffer_whole(z)};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, copy, rv, 2, &n, 4));
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  TH_ASSERT_OK(tandem_exec_set_view(e, 2, 0, th_view(x, N * 4, N * 4)));
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  uint32_t got[N];
  th_read(z, 0, got, sizeof got);
  TH_ASSERT_U32_FILL(got, 5, N, "copy of the filled half");
  tandem_exec_release(e);
  tandem_graph_release(g);

  /* Fill nodes take a new view, not push constants or workgroups. */
  g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(z, 0, 64), 1, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  TH_ASSERT_STATUS_MSG(tandem_exec_set_push_constants(e, 0, &n, 4), TANDEM_ERROR_INVALID_ARGUMENT,
                       "fill node");
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 0, 0, th_view(z, 0, 128)), TANDEM_ERROR_CONTRACT,
                       "keeps its length");
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 0, 0, th_view(z, 2, 64)), TANDEM_ERROR_OUT_OF_RANGE,
                       "multiples of 4");
  TH_ASSERT_OK(tandem_exec_set_view(e, 0, 0, th_view(z, 64, 64)));
  tandem_completion_t *cf = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &cf));
  TH_ASSERT_OK(tandem_completion_wait(cf));
  tandem_completion_release(cf);
  th_read(z, 0, got, 128);
  TH_ASSERT_U32_FILL(got, 5, 16, "bytes 0..64 keep the copy's 5s");
  TH_ASSERT_U32_FILL(got + 16, 1, 16, "bytes 64..128 filled by the moved fill");
  tandem_exec_release(e);
  tandem_graph_release(g);

  tandem_buffer_release(x);
  tandem_buffer_release(y);
  tandem_buffer_release(z);
  tandem_buffer_release(gl);
  tandem_kernel_release(add);
  tandem_kernel_release(copy);
}

/* A copy node's source and destination move per submission: one prepared
 * download of a different row each time, several in flight. */
static void test_copy_views_move(void **state) {
  tandem_runtime_t *rt = *state;
  enum { ROWS = 16, ROW = 256, N = ROWS * ROW };
  tandem_kernel_t *k = push16_kernel(rt, N);
  tandem_buffer_t *dev = th_buffer(rt, N * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *host = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t v = tandem_buffer_whole(dev);
  uint32_t push[4] = {N, 3, 2, 1}; /* v[i] = 3 + 2i + 1 */
  tandem_dispatch_desc_t d = {.struct_size = sizeof(tandem_dispatch_desc_t),
                              .kernel = k,
                              .views = &v,
                              .view_count = 1,
                              .push_constants = push,
                              .push_constant_bytes = 16,
                              .workgroups = {N / 256, 1, 1}};
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &d, NULL));
  TH_ASSERT_OK(tandem_graph_add_copy(g, th_view(dev, 0, ROW * 4), th_view(host, 0, ROW * 4),
                                     TANDEM_LANE_AUTO));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  /* Rows out of order into the matching host row; two in flight. */
  tandem_completion_t *c[ROWS];
  for (uint32_t i = 0; i < ROWS; i++) {
    uint32_t row = (i * 7) % ROWS;
    TH_ASSERT_OK(tandem_exec_set_view(e, 1, 0, th_view(dev, (uint64_t)row * ROW * 4, ROW * 4)));
    TH_ASSERT_OK(tandem_exec_set_view(e, 1, 1, th_view(host, (uint64_t)row * ROW * 4, ROW * 4)));
    TH_ASSERT_OK(tandem_exec_submit(e, &c[i]));
    if (i >= 1) {
      TH_ASSERT_OK(tandem_completion_wait(c[i - 1]));
      tandem_completion_release(c[i - 1]);
    }
  }
  TH_ASSERT_OK(tandem_completion_wait(c[ROWS - 1]));
  tandem_completion_release(c[ROWS - 1]);
  uint32_t *got = malloc(N * 4), *want = malloc(N * 4);
  th_read(host, 0, got, N * 4);
  for (uint32_t i = 0; i < N; i++) want[i] = 3 + 2 * i + 1;
  TH_ASSERT_U32_ARRAY(got, want, N, "every row downloaded by the moving copy");
  /* The copy keeps its length and may not overlap itself. */
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 1, 0, th_view(dev, 0, 2 * ROW * 4)),
                       TANDEM_ERROR_CONTRACT, "keeps its length");
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 1, 1, th_view(dev, 0, ROW * 4)),
                       TANDEM_ERROR_CONTRACT, "placement");
  free(got);
  free(want);
  tandem_exec_release(e);
  tandem_buffer_release(dev);
  tandem_buffer_release(host);
  tandem_kernel_release(k);
}

/* A buffer replaced by set_view stays alive while a slot still binds it; the
 * user may release it at once. */
static void test_replaced_buffer_lifetime(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 2048 };
  tandem_kernel_t *k = push16_kernel(rt, N);
  tandem_buffer_t *a = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t push[4] = {N, 1, 1, 1};
  tandem_exec_t *e = push16_exec(rt, k, tandem_buffer_whole(a), push);
  tandem_completion_t *c1 = NULL, *c2 = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c1)); /* writes a, maybe still running */
  for (int i = 0; i < 3; i++) {
    tandem_buffer_t *b = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
    TH_ASSERT_OK(tandem_exec_set_view(e, 0, 0, tandem_buffer_whole(b)));
    tandem_buffer_release(b); /* the executable keeps it */
  }
  tandem_buffer_release(a); /* slot 0 (c1) still binds it */
  TH_ASSERT_OK(tandem_completion_wait(c1));
  tandem_completion_release(c1);
  push[1] = 9;
  TH_ASSERT_OK(tandem_exec_set_push_constants(e, 0, push, 16));
  TH_ASSERT_OK(tandem_exec_submit(e, &c2));
  TH_ASSERT_OK(tandem_completion_wait(c2));
  tandem_completion_release(c2);
  tandem_exec_release(e); /* frees the replaced buffers: live bytes reach 0 */
  tandem_kernel_release(k);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_workgroups_on_the_node, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_indirect_dispatch, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_indirect_dispatch_behind_a_direct_one, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test(test_256_submissions_alternating),
      cmocka_unit_test_setup_teardown(test_each_parameter_alone, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_moved_view_waits_for_in_flight_writer, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_set_view_inside_the_graph, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_copy_views_move, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_sets_race_submits, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_replaced_buffer_lifetime, th_setup_gpu, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
