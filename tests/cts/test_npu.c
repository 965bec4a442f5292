/* SPDX-License-Identifier: MIT */
/*
 * test_npu.c — the NPU lane end to end on the emulated NPU: a GPU → NPU → GPU
 * pipeline (every element checked against the CPU, replayed with alternating
 * random inputs, zero copied bytes and no growth of allocations or imports),
 * the staged-copy fallback, NPU failure / watchdog timeout / cancel
 * propagation, "no NPU" answers, and NPU contract mismatches. The emulated
 * device keeps a separate "device side" per buffer object, so a missing
 * xrtBOSync shows up here as wrong data.
 */
#include <math.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "npu_helpers.h"

enum { M = 48, N = 40, K = 32 };

typedef struct pipeline {
  tandem_buffer_t *host_a, *host_b, *zeros, *shared_a, *shared_b, *shared_c, *out;
  tandem_kernel_t *scale;
  tandem_npu_program_t *matmul;
  tandem_exec_t *exec;
} pipeline_t;

/* host A, B → (GPU) SHARED 2A, B → (NPU) C = 2A·B → (GPU) out = C / 2, with
 * no copy node anywhere: every byte crosses engines through sharing. */
static pipeline_t make_pipeline(tandem_runtime_t *rt) {
  pipeline_t p;
  uint32_t big = M * N > M * K ? M * N : M * K;
  if ((uint32_t)(K * N) > big) big = K * N;
  p.host_a = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  p.host_b = th_buffer(rt, K * N * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  p.zeros = th_buffer(rt, big * 4u, TANDEM_PLACEMENT_GPU_LOCAL);
  p.shared_a = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_SHARED);
  p.shared_b = th_buffer(rt, K * N * 4u, TANDEM_PLACEMENT_SHARED);
  p.shared_c = th_buffer(rt, M * N * 4u, TANDEM_PLACEMENT_SHARED);
  p.out = th_buffer(rt, M * N * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  p.scale = th_scale_add_kernel(rt, big);
  p.matmul = th_matmul_program(rt, M, N, K);
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  tandem_kernel_t *ka = th_scale_add_kernel(rt, M * K), *kb = th_scale_add_kernel(rt, K * N),
                  *kc = th_scale_add_kernel(rt, M * N);
  th_add_scale_add(g, ka, p.host_a, p.zeros, p.shared_a, 2.0f, M * K);
  th_add_scale_add(g, kb, p.host_b, p.zeros, p.shared_b, 1.0f, K * N);
  tandem_view_t nv[3] = {tandem_buffer_whole(p.shared_a), tandem_buffer_whole(p.shared_b),
                         tandem_buffer_whole(p.shared_c)};
  uint32_t dims[3] = {M, N, K};
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, p.matmul, nv, 3, dims, 3));
  th_add_scale_add(g, kc, p.shared_c, p.zeros, p.out, 0.5f, M * N);
  TH_ASSERT_OK(tandem_graph_prepare(g, &p.exec));
  tandem_graph_release(g);
  tandem_kernel_release(ka);
  tandem_kernel_release(kb);
  tandem_kernel_release(kc);
  return p;
}

static void free_pipeline(pipeline_t *p) {
  tandem_exec_release(p->exec);
  tandem_npu_program_release(p->matmul);
  tandem_kernel_release(p->scale);
  tandem_buffer_t *all[] = {p->host_a,   p->host_b,   p->zeros, p->shared_a,
                            p->shared_b, p->shared_c, p->out};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tandem_buffer_release(all[i]);
}

static void run_and_check(pipeline_t *p, th_rng_t *rng) {
  static float a[M * K], b[K * N], got[M * N];
  th_fill_random_float(rng, a, M * K);
  th_fill_random_float(rng, b, K * N);
  th_write(p->host_a, 0, a, sizeof a);
  th_write(p->host_b, 0, b, sizeof b);
  tandem_completion_t *c;
  TH_ASSERT_OK(tandem_exec_submit(p->exec, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  th_read(p->out, 0, got, sizeof got);
  for (int i = 0; i < M; i++) {
    for (int j = 0; j < N; j++) {
      double ref = 0;
      for (int k = 0; k < K; k++) ref += (double)a[i * K + k] * (double)b[k * N + j];
      double err = fabs((double)got[i * N + j] - ref);
      if (err > 1e-4 * (1.0 + fabs(ref)))
        fail_msg("C[%d][%d] = %.7g, CPU reference %.7g", i, j, (double)got[i * N + j], ref);
    }
  }
}

static void zero_copy_pipeline(tandem_runtime_t *rt) {
  pipeline_t p = make_pipeline(rt);
  th_rng_t rng = th_rng(41);
  run_and_check(&p, &rng); /* warm-up run, then the counters must stand still */
  tandem_statistics_t before, after;
  tandem_statistics_init(&before);
  tandem_statistics_init(&after);
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &before));
  for (int i = 0; i < 6; i++) run_and_check(&p, &rng);
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &after));
  TH_ASSERT_U64_EQ(after.copied_bytes, 0);
  TH_ASSERT_U64_EQ(after.allocations, before.allocations);
  TH_ASSERT_U64_EQ(after.imports, before.imports);
  TH_ASSERT_U64_EQ(after.imports, 3); /* the three SHARED buffers */
  TH_ASSERT_U64_EQ(after.npu_runs - before.npu_runs, 6);
  /* Every range to the device (the output too, made clean) and the output
   * back, once per run. */
  TH_ASSERT_U64_EQ(after.cache_maintenance_bytes - before.cache_maintenance_bytes,
                   6ull * 4 * (M * K + K * N + 2 * M * N));
  free_pipeline(&p);
}

static void test_gpu_npu_gpu_zero_copy(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_AUTO, 0, NULL);
  tandem_npu_info_t info;
  tandem_npu_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_npu_info(rt, &info));
  assert_true(info.emulated);
  assert_non_null(strstr(info.name, "emulated"));
  /* lavapipe and the H200 both import host memory; neither has dma-bufs. */
  assert_int_equal(info.sharing, TANDEM_SHARING_HOST_POINTER);
  zero_copy_pipeline(rt);
  th_runtime_destroy(rt);
}

/* The dma-buf paths, forced: they run the same pipeline where the GPU driver
 * and the NPU's exporter allow it, and skip (77) with the reason elsewhere. */
static int run_dmabuf_path(tandem_sharing_t path) {
  th_init();
  tandem_status_t s;
  tandem_runtime_t *rt = th_npu_runtime(path, 0, &s);
  if (s == TANDEM_ERROR_UNSUPPORTED) {
    fprintf(stderr, "SKIP: sharing path '%s' is not available here: %s\n",
            tandem_sharing_name(path), tandem_error_message());
    th_runtime_destroy(rt);
    return TH_EXIT_SKIP;
  }
  TH_ASSERT_OK(s);
  zero_copy_pipeline(rt);
  th_runtime_destroy(rt);
  fprintf(stderr, "sharing path '%s': pipeline correct with 0 copied bytes\n",
          tandem_sharing_name(path));
  return 0;
}

static void test_staged_fallback(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_STAGED, 0, NULL);
  tandem_npu_info_t info;
  tandem_npu_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_npu_info(rt, &info));
  assert_int_equal(info.sharing, TANDEM_SHARING_STAGED);
  pipeline_t p = make_pipeline(rt);
  th_rng_t rng = th_rng(42);
  tandem_statistics_t before, after;
  tandem_statistics_init(&before);
  tandem_statistics_init(&after);
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &before));
  uint64_t npu_before = th_lane_copied(rt, TANDEM_LANE_NPU);
  for (int i = 0; i < 3; i++) run_and_check(&p, &rng);
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &after));
  TH_ASSERT_U64_EQ(after.copied_bytes - before.copied_bytes, 3ull * 4 * (M * K + K * N + M * N));
  TH_ASSERT_U64_EQ(th_lane_copied(rt, TANDEM_LANE_NPU) - npu_before,
                   3ull * 4 * (M * K + K * N + M * N));
  TH_ASSERT_U64_EQ(after.imports, 0);
  free_pipeline(&p);
  th_runtime_destroy(rt);
}

/* A one-binding program of the emulated kernels (fail, sleep_ms). */
static tandem_npu_program_t *one_buffer_program(tandem_runtime_t *rt, const char *kernel,
                                                uint32_t scalars) {
  tandem_binding_contract_t b = {4096, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .program_path = TANDEM_TEST_EMU_XCLBIN,
                                 .kernel_name = kernel,
                                 .bindings = &b,
                                 .binding_count = 1,
                                 .scalar_count = scalars};
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_OK(tandem_npu_program_create(rt, &d, &p));
  return p;
}

/* NPU run on |x|, then a GPU fill of |y| ordered after it via |x| (reads x). */
static void failure_case(const char *kernel, uint32_t scalars, const uint32_t *scalar_values,
                         uint32_t timeout_ms, tandem_status_t expected, bool cancel) {
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_AUTO, timeout_ms, NULL);
  tandem_npu_program_t *prog = one_buffer_program(rt, kernel, scalars);
  tandem_buffer_t *x = th_buffer(rt, 4096, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *y = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g1, *g2;
  TH_ASSERT_OK(tandem_graph_create(rt, &g1));
  tandem_view_t xv = tandem_buffer_whole(x);
  TH_ASSERT_OK(tandem_graph_add_npu_run(g1, prog, &xv, 1, scalar_values, scalars));
  TH_ASSERT_OK(tandem_graph_create(rt, &g2));
  TH_ASSERT_OK(tandem_graph_add_copy(g2, xv, tandem_buffer_whole(y), TANDEM_LANE_AUTO));
  tandem_exec_t *e1, *e2;
  TH_ASSERT_OK(tandem_graph_prepare(g1, &e1));
  TH_ASSERT_OK(tandem_graph_prepare(g2, &e2));
  tandem_completion_t *c1, *c2;
  TH_ASSERT_OK(tandem_exec_submit(e1, &c1));
  if (cancel) TH_ASSERT_OK(tandem_completion_cancel(c1));
  TH_ASSERT_OK(tandem_exec_submit(e2, &c2)); /* queued behind the NPU lane */
  TH_ASSERT_STATUS(tandem_completion_wait(c1), expected);
  TH_ASSERT_STATUS(tandem_completion_wait(c2), TANDEM_ERROR_FAILED_DEPENDENCY);
  tandem_completion_release(c1);
  tandem_completion_release(c2);
  /* x is poisoned: reading it again is refused at submit. */
  tandem_completion_t *c3 = NULL;
  TH_ASSERT_STATUS(tandem_exec_submit(e2, &c3), TANDEM_ERROR_FAILED_DEPENDENCY);
  assert_null(c3);
  tandem_exec_release(e1);
  tandem_exec_release(e2);
  tandem_graph_release(g1);
  tandem_graph_release(g2);
  tandem_buffer_release(x);
  tandem_buffer_release(y);
  tandem_npu_program_release(prog);
  th_runtime_destroy(rt);
}

/* An output the host wrote through a map and the NPU then only writes: on
 * XDNA the host's bytes sit in dirty CPU cache lines, and the sync after the
 * run (a clflush, whatever its direction) would write them back over the
 * NPU's result unless tandem made the range clean before the run. The
 * emulator's XDNA mode models that cache. Checked on the CPU, twice (the
 * second run after the host rewrote the output again). */
static void test_host_written_output(void **state) {
  (void)state;
  enum { WORDS = 1000 };
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_AUTO, 0, NULL);
  tandem_binding_contract_t b[3] = {{WORDS * 4u, 4, TANDEM_ACCESS_READ},
                                    {WORDS * 4u, 4, TANDEM_ACCESS_READ},
                                    {WORDS * 4u, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .program_path = TANDEM_TEST_EMU_XCLBIN,
                                 .kernel_name = "add_i32",
                                 .bindings = b,
                                 .binding_count = 3,
                                 .scalar_count = 1};
  tandem_npu_program_t *prog = NULL;
  TH_ASSERT_OK(tandem_npu_program_create(rt, &d, &prog));
  tandem_buffer_t *buf[3];
  for (int i = 0; i < 3; i++) buf[i] = th_buffer(rt, WORDS * 4u, TANDEM_PLACEMENT_SHARED);
  static int32_t x[WORDS], y[WORDS], junk[WORDS], got[WORDS];
  for (int i = 0; i < WORDS; i++) {
    x[i] = 3 * i - 500;
    y[i] = 77 - i;
    junk[i] = (int32_t)0xdeadbeef;
  }
  th_write(buf[0], 0, x, sizeof x);
  th_write(buf[1], 0, y, sizeof y);
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  tandem_view_t v[3] = {tandem_buffer_whole(buf[0]), tandem_buffer_whole(buf[1]),
                        tandem_buffer_whole(buf[2])};
  const uint32_t n = WORDS;
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, prog, v, 3, &n, 1));
  tandem_exec_t *e;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  for (int round = 0; round < 2; round++) {
    th_write(buf[2], 0, junk, sizeof junk); /* the host writes the output first */
    tandem_completion_t *c;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    th_read(buf[2], 0, got, sizeof got);
    for (int i = 0; i < WORDS; i++)
      if (got[i] != x[i] + y[i])
        fail_msg("round %d, word %d: %d, expected %d (0x%x: the host's stale bytes)", round, i,
                 got[i], x[i] + y[i], (unsigned)got[i]);
  }
  tandem_exec_release(e);
  tandem_graph_release(g);
  for (int i = 0; i < 3; i++) tandem_buffer_release(buf[i]);
  tandem_npu_program_release(prog);
  th_runtime_destroy(rt);
}

static void test_npu_failure_propagates(void **state) {
  (void)state;
  failure_case("fail", 0, NULL, 0, TANDEM_ERROR_INTERNAL, false);
}

static void test_npu_watchdog(void **state) {
  (void)state;
  uint32_t ms = 400;
  failure_case("sleep_ms", 1, &ms, 50, TANDEM_ERROR_TIMEOUT, false);
}

/* The driver's hang detection (the emulator's XDNA mode, its deadline cut
 * to 50 ms) ends a 300 ms run in a final TIMEOUT well inside tandem's 10 s
 * watchdog: an NPU fault (DEVICE_LOST), not a watchdog expiry, and the GPU
 * copy behind it fails its dependency instead of hanging. */
static void test_npu_driver_timeout(void **state) {
  (void)state;
  const char *mode = getenv("TANDEM_EMU_MODE");
  if (mode && !strcmp(mode, "plain")) skip(); /* FPGA-style XRT has no such deadline here */
  setenv("TANDEM_EMU_TDR_MS", "50", 1);
  uint32_t ms = 300;
  failure_case("sleep_ms", 1, &ms, 0, TANDEM_ERROR_DEVICE_LOST, false);
  unsetenv("TANDEM_EMU_TDR_MS");
}

static void test_npu_cancel(void **state) {
  (void)state;
  uint32_t ms = 200;
  failure_case("sleep_ms", 1, &ms, 0, TANDEM_ERROR_CANCELLED, true);
}

/* The failure model on data (tandem.h, Completions): submission A is a GPU
 * fill of X, done at once, and a long NPU run (sleep_ms 300, then for an NPU
 * failure the "fail" kernel); A fails by an injected failure, a cancel
 * after B was submitted, or the NPU run. B is submitted once A's fill was
 * seen done on its timeline, while A is in flight. B copies X to Y: B fails
 * with FAILED_DEPENDENCY and Y is poisoned, never holding A's bytes as good
 * (it used to succeed). Or B rewrites all of X and is only polled: B
 * succeeds after A retired, and X holds B's bytes, readable (A's late
 * failure used to poison them). */
typedef enum { A_INJECTED, A_CANCELLED, A_NPU_FAILS } a_failure_t;

static void passed_write_case(a_failure_t how, bool b_rewrites) {
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_AUTO, 0, NULL);
  tandem_npu_program_t *sleep = one_buffer_program(rt, "sleep_ms", 1);
  tandem_npu_program_t *failing = one_buffer_program(rt, "fail", 0);
  enum { WORDS = 1024 };
  tandem_buffer_t *x = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *y = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *s0 = th_buffer(rt, 4096, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *s1 = th_buffer(rt, 4096, TANDEM_PLACEMENT_SHARED);
  uint32_t *words = malloc(WORDS * 4), *got = malloc(WORDS * 4);
  for (uint32_t i = 0; i < WORDS; i++) words[i] = 0xEE000000u + i;
  th_write(y, 0, words, WORDS * 4);
  for (uint32_t i = 0; i < WORDS; i++) words[i] = i * 7u;
  th_write(x, 0, words, WORDS * 4);
  tandem_graph_t *ga, *gb;
  TH_ASSERT_OK(tandem_graph_create(rt, &ga));
  TH_ASSERT_OK(tandem_graph_add_fill(ga, tandem_buffer_whole(x), 0xA0A0A0A0u, TANDEM_LANE_AUTO));
  uint32_t ms = 300;
  tandem_view_t v0 = tandem_buffer_whole(s0), v1 = tandem_buffer_whole(s1);
  TH_ASSERT_OK(tandem_graph_add_npu_run(ga, sleep, &v0, 1, &ms, 1));
  if (how == A_NPU_FAILS) TH_ASSERT_OK(tandem_graph_add_npu_run(ga, failing, &v1, 1, NULL, 0));
  TH_ASSERT_OK(tandem_graph_create(rt, &gb));
  if (b_rewrites)
    TH_ASSERT_OK(tandem_graph_add_fill(gb, tandem_buffer_whole(x), 0xB0B0B0B0u, TANDEM_LANE_AUTO));
  else
    TH_ASSERT_OK(tandem_graph_add_copy(gb, tandem_buffer_whole(x), tandem_buffer_whole(y),
                                       TANDEM_LANE_AUTO));
  tandem_exec_t *ea, *eb;
  TH_ASSERT_OK(tandem_graph_prepare(ga, &ea));
  TH_ASSERT_OK(tandem_graph_prepare(gb, &eb));
  if (how == A_INJECTED) TH_ASSERT_OK(tandem_test_control(rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION));
  tandem_completion_t *ca = NULL, *cb = NULL;
  TH_ASSERT_OK(tandem_exec_submit(ea, &ca));
  /* Until A's GPU fill is done on its timeline. */
  uint64_t values[TANDEM_LANE_COUNT];
  TH_ASSERT_OK(tandem_completion_lane_values(ca, values));
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) {
    for (int spins = 0; values[l]; spins++) {
      tandem_lane_info_t li;
      tandem_lane_info_init(&li);
      TH_ASSERT_OK(tandem_runtime_lane_info(rt, l, &li));
      if (li.value >= values[l]) break;
      if (spins > 20000) fail_msg("A's fill never finished on lane %d", l);
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
  }
  if (tandem_completion_is_complete(ca)) /* the poll also read the timelines */
    fail_msg("A finished before B could be submitted; make its NPU run longer");
  TH_ASSERT_OK(tandem_exec_submit(eb, &cb));
  if (how == A_CANCELLED) TH_ASSERT_OK(tandem_completion_cancel(ca));
  tandem_status_t want_a = how == A_CANCELLED ? TANDEM_ERROR_CANCELLED : TANDEM_ERROR_INTERNAL;
  if (b_rewrites) {
    for (int spins = 0; !tandem_completion_is_complete(cb); spins++) {
      if (spins > 100000) fail_msg("B never completed");
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
    assert_true(tandem_completion_is_complete(ca)); /* B retires after A */
    TH_ASSERT_OK(tandem_completion_wait(cb));
    TH_ASSERT_STATUS(tandem_completion_wait(ca), want_a);
    th_read(x, 0, got, WORDS * 4); /* a map: X is readable, with B's bytes */
    for (uint32_t i = 0; i < WORDS; i++)
      if (got[i] != 0xB0B0B0B0u) fail_msg("X word %u is 0x%08x, B wrote 0xB0B0B0B0", i, got[i]);
  } else {
    TH_ASSERT_STATUS(tandem_completion_wait(cb), TANDEM_ERROR_FAILED_DEPENDENCY);
    TH_ASSERT_STATUS(tandem_completion_wait(ca), want_a);
    tandem_map_t m;
    TH_ASSERT_STATUS(tandem_map_read(tandem_buffer_whole(y), &m), TANDEM_ERROR_FAILED_DEPENDENCY);
    TH_ASSERT_STATUS(tandem_map_read(tandem_buffer_whole(x), &m), TANDEM_ERROR_FAILED_DEPENDENCY);
    tandem_completion_t *c = NULL;
    TH_ASSERT_STATUS(tandem_exec_submit(eb, &c), TANDEM_ERROR_FAILED_DEPENDENCY);
    assert_null(c);
  }
  tandem_completion_release(ca);
  tandem_completion_release(cb);
  tandem_exec_release(ea);
  tandem_exec_release(eb);
  tandem_graph_release(ga);
  tandem_graph_release(gb);
  free(words);
  free(got);
  tandem_buffer_release(x);
  tandem_buffer_release(y);
  tandem_buffer_release(s0);
  tandem_buffer_release(s1);
  tandem_npu_program_release(sleep);
  tandem_npu_program_release(failing);
  th_runtime_destroy(rt);
}

static void test_failed_writer_in_flight(void **state) {
  (void)state;
  for (int how = A_INJECTED; how <= A_NPU_FAILS; how++) {
    passed_write_case((a_failure_t)how, false);
    passed_write_case((a_failure_t)how, true);
  }
}

static void test_no_npu(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_runtime_create(NULL);
  TH_ASSERT_STATUS_MSG(tandem_runtime_open_npu(rt), TANDEM_ERROR_NO_DEVICE, "no NPU");
  tandem_buffer_t *b = NULL;
  TH_ASSERT_STATUS(tandem_buffer_create(rt, 64, TANDEM_PLACEMENT_SHARED, &b),
                   TANDEM_ERROR_UNSUPPORTED);
  th_runtime_destroy(rt);
  /* Real XRT is installed here but no device: a clear "no NPU", never an abort. */
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "xrt";
  rt = th_runtime_create(&o);
  TH_ASSERT_STATUS_MSG(tandem_runtime_open_npu(rt), TANDEM_ERROR_NO_DEVICE, "no NPU");
  th_runtime_destroy(rt);
  o.npu_backend = "emulated";
  o.npu_library = "/nonexistent/libtandem_npu_emu.so";
  rt = th_runtime_create(&o);
  TH_ASSERT_STATUS_MSG(tandem_runtime_open_npu(rt), TANDEM_ERROR_NO_DEVICE, "no NPU");
  th_runtime_destroy(rt);
}

static void test_npu_contracts(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_AUTO, 0, NULL);
  tandem_binding_contract_t b[3] = {{64, 4, TANDEM_ACCESS_READ},
                                    {64, 4, TANDEM_ACCESS_READ},
                                    {64, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .program_path = TANDEM_TEST_EMU_XCLBIN,
                                 .kernel_name = "matmul_f32",
                                 .bindings = b,
                                 .binding_count = 2, /* argument 2 is a buffer */
                                 .scalar_count = 4};
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_CONTRACT, "argument 2");
  assert_null(p);
  d.binding_count = 4; /* argument 3 (M) is a scalar */
  tandem_binding_contract_t b4[4] = {b[0], b[1], b[2], b[2]};
  d.bindings = b4;
  d.scalar_count = 2;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_CONTRACT, "argument 3");
  d.bindings = b;
  d.binding_count = 3;
  d.scalar_count = 3;
  d.kernel_name = "no_such_kernel";
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_INVALID_KERNEL,
                       "no_such_kernel");
  d.kernel_name = "matmul_f32";
  /* A byte count without a stream is a caller's mistake, not "no stream". */
  tandem_xrt_program_desc_t x;
  tandem_xrt_program_desc_init(&x);
  x.instruction_bytes = 16;
  d.next = &x;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_INVALID_ARGUMENT,
                       "instructions is NULL but instruction_bytes is 16");
  assert_null(p);
  /* The chain is checked, nothing in it ignored: a tag the XRT backends do
   * not read, the XRT extension twice, a bad struct_size, a field this
   * library does not have, a loop. Each names the program and the tag. */
  x.instruction_bytes = 0;
  struct {
    tandem_chain_t head;
    uint32_t value;
  } other = {{sizeof other, 0x12345678u, NULL}, 1};
  x.next = &other;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_INVALID_ARGUMENT,
                       "extension 2 chained from next has type 0x12345678, which the XRT NPU "
                       "backends do not read");
  assert_null(p);
  tandem_xrt_program_desc_t x2;
  tandem_xrt_program_desc_init(&x2);
  x.next = &x2;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_INVALID_ARGUMENT,
                       "TANDEM_STRUCT_XRT_PROGRAM_DESC (0x58520001) is chained twice");
  x.next = NULL;
  x.struct_size = 8;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_INVALID_ARGUMENT,
                       "has struct_size 8; set struct_size = sizeof(tandem_xrt_program_desc_t)");
  struct {
    tandem_xrt_program_desc_t x;
    unsigned char tail[8];
  } newer = {.tail = {0, 0, 0, 1}};
  tandem_xrt_program_desc_init(&newer.x);
  newer.x.struct_size = sizeof newer;
  d.next = &newer;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_INVALID_ARGUMENT,
                       "not zero: a field this library does not have");
  tandem_xrt_program_desc_init(&x);
  x.next = &x; /* a loop ends at its second visit */
  d.next = &x;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_INVALID_ARGUMENT,
                       "is chained twice");
  assert_null(p);
  d.next = NULL;
  d.program_path = "/nonexistent.xclbin";
  TH_ASSERT_STATUS(tandem_npu_program_create(rt, &d, &p), TANDEM_ERROR_IO);
  d.program_path = TANDEM_TEST_EMU_XCLBIN;
  TH_ASSERT_OK(tandem_npu_program_create(rt, &d, &p));
  /* Record-time checks of NPU runs. */
  tandem_buffer_t *shared = th_buffer(rt, 256, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *small = th_buffer(rt, 32, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *gpu = th_buffer(rt, 256, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *npu_local = th_buffer(rt, 256, TANDEM_PLACEMENT_NPU_LOCAL);
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  uint32_t dims[3] = {4, 4, 4};
  tandem_view_t v[3] = {tandem_buffer_whole(shared), tandem_buffer_whole(npu_local),
                        tandem_buffer_whole(small)};
  TH_ASSERT_STATUS_MSG(tandem_graph_add_npu_run(g, p, v, 3, dims, 3), TANDEM_ERROR_CONTRACT,
                       "binding 2 of 'matmul_f32': view is 32 bytes, contract needs 64");
  v[2] = tandem_buffer_whole(gpu);
  TH_ASSERT_STATUS_MSG(tandem_graph_add_npu_run(g, p, v, 3, dims, 3), TANDEM_ERROR_CONTRACT,
                       "NPU side");
  v[2] = th_view(shared, 64, 64);
  TH_ASSERT_STATUS_MSG(tandem_graph_add_npu_run(g, p, v, 3, dims, 3), TANDEM_ERROR_CONTRACT,
                       "offset");
  TH_ASSERT_STATUS(tandem_graph_add_npu_run(g, p, v, 3, dims, 2), TANDEM_ERROR_CONTRACT);
  /* The GPU cannot use NPU_LOCAL memory. */
  TH_ASSERT_STATUS(tandem_graph_add_fill(g, tandem_buffer_whole(npu_local), 0, TANDEM_LANE_AUTO),
                   TANDEM_ERROR_UNSUPPORTED);
  assert_int_equal(tandem_graph_node_count(g), 0);
  /* NPU_LOCAL has no GPU memory to describe; SHARED has. */
  tandem_buffer_memory_t mem;
  TH_ASSERT_STATUS_MSG(tandem_buffer_memory(npu_local, &mem), TANDEM_ERROR_UNSUPPORTED,
                       "no GPU memory");
  TH_ASSERT_U64_EQ(mem.memory_type, UINT32_MAX);
  TH_ASSERT_OK(tandem_buffer_memory(shared, &mem));
  assert_true(mem.memory_type < 32);
  /* NPU_LOCAL is host-mapped and zero-initialised. */
  uint8_t bytes[256];
  th_read(npu_local, 0, bytes, sizeof bytes);
  for (size_t i = 0; i < sizeof bytes; i++) assert_int_equal(bytes[i], 0);
  tandem_graph_release(g);
  tandem_buffer_release(shared);
  tandem_buffer_release(small);
  tandem_buffer_release(gpu);
  tandem_buffer_release(npu_local);
  tandem_npu_program_release(p);
  th_runtime_destroy(rt);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "dmabuf-to-gpu") == 0)
    return run_dmabuf_path(TANDEM_SHARING_DMABUF_TO_GPU);
  if (argc == 2 && strcmp(argv[1], "dmabuf-to-npu") == 0)
    return run_dmabuf_path(TANDEM_SHARING_DMABUF_TO_NPU);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gpu_npu_gpu_zero_copy),   cmocka_unit_test(test_staged_fallback),
      cmocka_unit_test(test_npu_failure_propagates),  cmocka_unit_test(test_npu_watchdog),
      cmocka_unit_test(test_npu_driver_timeout),      cmocka_unit_test(test_npu_cancel),
      cmocka_unit_test(test_failed_writer_in_flight), cmocka_unit_test(test_no_npu),
      cmocka_unit_test(test_npu_contracts),           cmocka_unit_test(test_host_written_output),
  };
  return TH_RUN_GROUP(tests);
}
