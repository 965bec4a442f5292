/* SPDX-License-Identifier: MIT */
/*
 * test_external_sync.c — coherence between GPU regions and the NPU over
 * SHARED memory (docs/interop.md, "Coherence with the NPU"): a GPU region
 * that writes SHARED bytes an NPU run later uses hands them over at its end,
 * and a GPU region that uses bytes the NPU wrote (or writes bytes it read)
 * takes them back at its start. Counted by the statistic coherence_barriers
 * (buffer barriers submitted), which must be exactly the crossings: none on
 * a GPU-only graph, none for a SHARED buffer no NPU run touches, none where
 * both sides only read. Every run is checked against a CPU reference, under
 * the validation layer with synchronization validation (any message fails).
 *
 * Here (lavapipe + the emulated NPU) the sharing paths are host-pointer
 * import (the default) and staged copies, both host memory: the barriers
 * are the host-domain form. The dma-buf form (an ownership transfer to
 * VK_QUEUE_FAMILY_EXTERNAL) needs a GPU that imports dma-bufs and an NPU
 * that exports them (RADV + amdxdna); the dmabuf-to-gpu / dmabuf-to-npu
 * cases run it where that exists and skip (77) with the reason elsewhere.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npu_helpers.h"

enum { M = 24, N = 20, K = 16 };

static uint64_t coherence_barriers(tandem_runtime_t *rt) { return th_stats(rt).coherence_barriers; }

/* The crossing pipeline, on |rt|'s sharing path:
 *   GPU   shared_b = host_b, shared_x = 3 host_a, tmp = 2 host_a,
 *         shared_a = tmp (a barrier before it: a piece may start there)
 *   NPU   shared_c = shared_a · shared_b            (matmul)
 *   GPU   out = 0.5 shared_c, out_a = shared_a, shared_b = 3 host_b
 * Crossings per run: shared_a and shared_b released after their writer (2),
 * shared_c taken back before its reader (1), shared_b taken back before it
 * is written again after the NPU read it (1): 4. Not crossings: shared_x (no
 * NPU run touches it) and the second read of shared_a (both sides read).
 * Runs |runs| times with fresh inputs, every output checked. */
static void crossing_pipeline(tandem_runtime_t *rt, int runs) {
  tandem_buffer_t *host_a = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *host_b = th_buffer(rt, K * N * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *zeros = th_buffer(rt, M * N * 4u, TANDEM_PLACEMENT_GPU_LOCAL); /* the largest */
  tandem_buffer_t *tmp = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *shared_a = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_b = th_buffer(rt, K * N * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_c = th_buffer(rt, M * N * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_x = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *out = th_buffer(rt, M * N * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out_a = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *ka = th_scale_add_kernel(rt, M * K), *kb = th_scale_add_kernel(rt, K * N),
                  *kc = th_scale_add_kernel(rt, M * N);
  tandem_npu_program_t *matmul = th_matmul_program(rt, M, N, K);
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  th_add_scale_add(g, kb, host_b, zeros, shared_b, 1.0f, K * N);
  th_add_scale_add(g, ka, host_a, zeros, shared_x, 3.0f, M * K);
  th_add_scale_add(g, ka, host_a, zeros, tmp, 2.0f, M * K);
  th_add_scale_add(g, ka, tmp, zeros, shared_a, 1.0f, M * K);
  tandem_view_t nv[3] = {tandem_buffer_whole(shared_a), tandem_buffer_whole(shared_b),
                         tandem_buffer_whole(shared_c)};
  uint32_t dims[3] = {M, N, K};
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, matmul, nv, 3, dims, 3));
  th_add_scale_add(g, kc, shared_c, zeros, out, 0.5f, M * N);
  th_add_scale_add(g, ka, shared_a, zeros, out_a, 1.0f, M * K);
  th_add_scale_add(g, kb, host_b, zeros, shared_b, 3.0f, K * N);
  tandem_exec_t *exec;
  TH_ASSERT_OK(tandem_graph_prepare(g, &exec));
  tandem_graph_release(g);

  th_rng_t rng = th_rng(31);
  static float a[M * K], b[K * N], got[M * N], got_a[M * K], got_b[K * N], got_x[M * K];
  uint64_t before = coherence_barriers(rt);
  for (int run = 0; run < runs; run++) {
    th_fill_random_float(&rng, a, M * K);
    th_fill_random_float(&rng, b, K * N);
    th_write(host_a, 0, a, sizeof a);
    th_write(host_b, 0, b, sizeof b);
    tandem_completion_t *c;
    TH_ASSERT_OK(tandem_exec_submit(exec, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    th_read(out, 0, got, sizeof got);
    th_read(out_a, 0, got_a, sizeof got_a);
    th_read(shared_b, 0, got_b, sizeof got_b);
    th_read(shared_x, 0, got_x, sizeof got_x);
    for (int i = 0; i < M; i++) {
      for (int j = 0; j < N; j++) {
        double ref = 0;
        for (int k = 0; k < K; k++) ref += 2.0 * (double)a[i * K + k] * (double)b[k * N + j];
        ref *= 0.5;
        double err = fabs((double)got[i * N + j] - ref);
        if (err > 1e-4 * (1.0 + fabs(ref)))
          fail_msg("run %d: out[%d][%d] = %.7g, CPU reference %.7g", run, i, j,
                   (double)got[i * N + j], ref);
      }
    }
    for (int i = 0; i < M * K; i++) {
      if (got_a[i] != 2.0f * a[i])
        fail_msg("run %d: out_a[%d] = %.7g, CPU reference %.7g", run, i, (double)got_a[i],
                 (double)(2.0f * a[i]));
      if (got_x[i] != 3.0f * a[i])
        fail_msg("run %d: shared_x[%d] = %.7g, CPU reference %.7g", run, i, (double)got_x[i],
                 (double)(3.0f * a[i]));
    }
    for (int i = 0; i < K * N; i++)
      if (got_b[i] != 3.0f * b[i])
        fail_msg("run %d: shared_b[%d] = %.7g, CPU reference %.7g", run, i, (double)got_b[i],
                 (double)(3.0f * b[i]));
    /* Counted as submitted: 4 per run, whatever slot it ran in. */
    TH_ASSERT_U64_EQ(coherence_barriers(rt) - before, 4ull * (uint64_t)(run + 1));
  }
  tandem_exec_release(exec);
  tandem_npu_program_release(matmul);
  tandem_kernel_release(ka);
  tandem_kernel_release(kb);
  tandem_kernel_release(kc);
  tandem_buffer_t *all[] = {host_a,   host_b,   zeros,    tmp, shared_a,
                            shared_b, shared_c, shared_x, out, out_a};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tandem_buffer_release(all[i]);
}

/* tandem_exec_set_view cannot move a GPU view onto, or off, SHARED bytes an
 * NPU node of the graph uses: the crossing barriers were placed at prepare
 * (exec_params.c). Views elsewhere still move, and the graph still runs. */
static void test_set_view_at_crossing_refused(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_AUTO, 0, NULL);
  tandem_buffer_t *host_a = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *host_a2 = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *zeros = th_buffer(rt, M * N * 4u, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *shared_a = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_a2 = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_b = th_buffer(rt, K * N * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_c = th_buffer(rt, M * N * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_x = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_x2 = th_buffer(rt, M * K * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_kernel_t *ka = th_scale_add_kernel(rt, M * K);
  tandem_npu_program_t *matmul = th_matmul_program(rt, M, N, K);
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  th_add_scale_add(g, ka, host_a, zeros, shared_a, 1.0f,
                   M * K); /* node 0: hands shared_a to the NPU */
  tandem_view_t nv[3] = {tandem_buffer_whole(shared_a), tandem_buffer_whole(shared_b),
                         tandem_buffer_whole(shared_c)};
  uint32_t dims[3] = {M, N, K};
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, matmul, nv, 3, dims, 3)); /* node 1 */
  th_add_scale_add(g, ka, host_a, zeros, shared_x, 2.0f,
                   M * K); /* node 2: no NPU node touches it */
  tandem_exec_t *exec;
  TH_ASSERT_OK(tandem_graph_prepare(g, &exec));
  tandem_graph_release(g);
  /* Off the crossing, and onto another graph's SHARED bytes the NPU uses. */
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(exec, 0, 2, tandem_buffer_whole(shared_a2)),
                       TANDEM_ERROR_CONTRACT, "prepare the graph again");
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(exec, 2, 2, th_view(shared_c, 0, M * K * 4u)),
                       TANDEM_ERROR_CONTRACT, "NPU node 1");
  /* Views that cross nothing still move. */
  TH_ASSERT_OK(tandem_exec_set_view(exec, 0, 0, tandem_buffer_whole(host_a2)));
  TH_ASSERT_OK(tandem_exec_set_view(exec, 2, 2, tandem_buffer_whole(shared_x2)));
  static float a[M * K], got[M * K];
  for (int i = 0; i < M * K; i++) a[i] = (float)(i % 7) - 3.0f;
  th_write(host_a, 0, a, sizeof a);  /* node 2 reads it */
  th_write(host_a2, 0, a, sizeof a); /* node 0 now reads it */
  tandem_completion_t *c;
  TH_ASSERT_OK(tandem_exec_submit(exec, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  th_read(shared_x2, 0, got, sizeof got);
  for (int i = 0; i < M * K; i++)
    if (got[i] != 2.0f * a[i])
      fail_msg("shared_x2[%d] = %.7g after the moved views, CPU reference %.7g", i, (double)got[i],
               (double)(2.0f * a[i]));
  tandem_exec_release(exec);
  tandem_npu_program_release(matmul);
  tandem_kernel_release(ka);
  tandem_buffer_t *all[] = {host_a,   host_a2,  zeros,    shared_a, shared_a2,
                            shared_b, shared_c, shared_x, shared_x2};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tandem_buffer_release(all[i]);
  th_runtime_destroy(rt);
}

/* The default path here: host-pointer import (host-domain barriers). */
static void test_crossings_host_pointer(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_AUTO, 0, NULL);
  tandem_npu_info_t info;
  tandem_npu_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_npu_info(rt, &info));
  fprintf(stderr, "sharing path: %s\n", tandem_sharing_name(info.sharing));
  crossing_pipeline(rt, 5);
  th_runtime_destroy(rt);
}

/* The same with every region recorded in pieces of one command where it
 * can be (core/record.c, "Pieces"): the writer region of shared_a and
 * shared_b is two pieces, and their release must be in the last. */
static void test_crossings_in_pieces(void **state) {
  (void)state;
  setenv("TANDEM_RECORD_PIECE_MIN", "1", 1);
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_AUTO, 0, NULL);
  crossing_pipeline(rt, 3);
  th_runtime_destroy(rt);
  unsetenv("TANDEM_RECORD_PIECE_MIN");
}

/* Staged copies: the GPU side is a HOST_VISIBLE buffer the NPU lane copies
 * to and from with the host, so the same host-domain barriers. */
static void test_crossings_staged(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_STAGED, 0, NULL);
  crossing_pipeline(rt, 3);
  th_runtime_destroy(rt);
}

/* No crossing, no barrier: a GPU-only graph over SHARED, HOST_VISIBLE and
 * GPU_LOCAL buffers (on a runtime with an NPU open), and a graph whose NPU
 * run shares only bytes that both sides read. */
static void test_no_crossing_no_barrier(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_npu_runtime(TANDEM_SHARING_AUTO, 0, NULL);
  uint32_t n = M * K;
  tandem_buffer_t *host = th_buffer(rt, n * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *local = th_buffer(rt, n * 4u, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *shared = th_buffer(rt, n * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_b = th_buffer(rt, K * N * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *shared_c = th_buffer(rt, M * N * 4u, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *out = th_buffer(rt, n * 4u, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = th_scale_add_kernel(rt, n);
  static float a[M * K], b[K * N], got[M * K];
  th_rng_t rng = th_rng(32);
  th_fill_random_float(&rng, a, n);
  th_fill_random_float(&rng, b, K * N);
  th_write(host, 0, a, sizeof a);
  uint64_t before = coherence_barriers(rt);

  /* GPU only: host → shared (2a + 0) → out (2 shared + 0 = 4a); |local| is
   * zeros. */
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  th_add_scale_add(g, k, host, local, shared, 2.0f, n);
  th_add_scale_add(g, k, shared, local, out, 2.0f, n);
  th_run_graph(g, 3);
  tandem_graph_release(g);
  th_read(out, 0, got, sizeof got);
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != 4.0f * a[i])
      fail_msg("out[%u] = %.7g, CPU reference %.7g", i, (double)got[i], (double)(4.0f * a[i]));
  TH_ASSERT_U64_EQ(coherence_barriers(rt) - before, 0);

  /* Both read: the host writes shared and shared_b, the NPU reads them, and
   * the GPU reads shared too; the NPU's output crosses to nobody. */
  th_write(shared, 0, a, sizeof a);
  th_write(shared_b, 0, b, sizeof b);
  tandem_npu_program_t *matmul = th_matmul_program(rt, M, N, K);
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  tandem_view_t nv[3] = {tandem_buffer_whole(shared), tandem_buffer_whole(shared_b),
                         tandem_buffer_whole(shared_c)};
  uint32_t dims[3] = {M, N, K};
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, matmul, nv, 3, dims, 3));
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(local), 0, TANDEM_LANE_AUTO));
  th_add_scale_add(g, k, shared, local, out, 1.0f, n);
  th_run_graph(g, 2);
  tandem_graph_release(g);
  th_read(out, 0, got, sizeof got);
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != a[i])
      fail_msg("out[%u] = %.7g, CPU reference %.7g", i, (double)got[i], (double)a[i]);
  static float c[M * N];
  th_read(shared_c, 0, c, sizeof c);
  for (int i = 0; i < M; i++) {
    for (int j = 0; j < N; j++) {
      double ref = 0;
      for (int x = 0; x < K; x++) ref += (double)a[i * K + x] * (double)b[x * N + j];
      if (fabs((double)c[i * N + j] - ref) > 1e-4 * (1.0 + fabs(ref)))
        fail_msg("C[%d][%d] = %.7g, CPU reference %.7g", i, j, (double)c[i * N + j], ref);
    }
  }
  TH_ASSERT_U64_EQ(coherence_barriers(rt) - before, 0);

  tandem_npu_program_release(matmul);
  tandem_kernel_release(k);
  tandem_buffer_t *all[] = {host, local, shared, shared_b, shared_c, out};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tandem_buffer_release(all[i]);
  th_runtime_destroy(rt);
}

/* The dma-buf paths, forced: the ownership-transfer form. */
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
  crossing_pipeline(rt, 3);
  th_runtime_destroy(rt);
  fprintf(stderr, "sharing path '%s': crossings handed over, data correct\n",
          tandem_sharing_name(path));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "dmabuf-to-gpu") == 0)
    return run_dmabuf_path(TANDEM_SHARING_DMABUF_TO_GPU);
  if (argc == 2 && strcmp(argv[1], "dmabuf-to-npu") == 0)
    return run_dmabuf_path(TANDEM_SHARING_DMABUF_TO_NPU);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_crossings_host_pointer),
      cmocka_unit_test(test_crossings_in_pieces),
      cmocka_unit_test(test_crossings_staged),
      cmocka_unit_test(test_no_crossing_no_barrier),
      cmocka_unit_test(test_set_view_at_crossing_refused),
  };
  return TH_RUN_GROUP(tests);
}
