/* SPDX-License-Identifier: MIT */
/*
 * test_run.c — real work through graph → prepare → submit → completion_wait,
 * with every result checked element by element: saxpy on 1M random floats,
 * fills, copies between placements, replay; record-time contract checks; host
 * maps against in-flight device work.
 */
#include "harness.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "tandem_test_shaders.h"

#define SENTINEL_COMPLETION ((tandem_completion_t *)(uintptr_t)0x5A5A5A5A)

/*---------------------------------------------------------------------------
 * Kernels
 *---------------------------------------------------------------------------*/

/* saxpy over |n| floats (n a multiple of 256): y = a*x + y. */
static tandem_kernel_t *saxpy_kernel(tandem_runtime_t *rt, uint32_t n, uint64_t alignment) {
  const tandem_binding_contract_t b[2] = {{(uint64_t)n * 4, alignment, TANDEM_ACCESS_READ},
                                          {(uint64_t)n * 4, alignment, TANDEM_ACCESS_READ_WRITE}};
  return th_kernel_load(rt, "saxpy", tandem_spv_saxpy, tandem_spv_saxpy_size, n / 256, b, 2, 8);
}

typedef struct saxpy_push {
  float a;
  uint32_t n;
} saxpy_push_t;

static tandem_status_t add_saxpy(tandem_graph_t *g, tandem_kernel_t *k, tandem_view_t x,
                                 tandem_view_t y, float a, uint32_t n) {
  const tandem_view_t views[2] = {x, y};
  saxpy_push_t pc = {a, n};
  return tandem_graph_add_dispatch(g, k, views, 2, &pc, sizeof pc);
}

/* One of two statuses (the API documents both for the case). */
#define expect_either(s, a, b, what) expect_either_at((s), (a), (b), (what), __FILE__, __LINE__)
static void expect_either_at(tandem_status_t s, tandem_status_t a, tandem_status_t b,
                             const char *what, const char *file, int line) {
  if (s != a && s != b) {
    fail_msg("%s:%d: %s: returned %s, expected %s or %s; message: %s", file, line, what,
             tandem_status_name(s), tandem_status_name(a), tandem_status_name(b),
             s ? tandem_error_message() : "(none)");
  }
  if (tandem_error_message()[0] == '\0')
    fail_msg("%s:%d: %s: empty error message", file, line, what);
}

/*---------------------------------------------------------------------------
 * saxpy
 *---------------------------------------------------------------------------*/

/* The GPU may contract a*x+y into a fused multiply-add (glslang emits no
 * NoContraction decoration, and SPIR-V lets the driver fuse), so each element
 * must equal either the separately rounded CPU result or the fused one
 * (fmaf): both exact, no tolerance. */
static void check_saxpy(const float *x, const float *y0, const float *got, float a, size_t n) {
  size_t fused = 0, bad = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    volatile float p = a * x[i]; /* volatile: keep the host from fusing */
    float separate = p + y0[i];
    if (memcmp(&got[i], &separate, 4) == 0) continue;
    float f = fmaf(a, x[i], y0[i]);
    if (memcmp(&got[i], &f, 4) == 0) {
      ++fused;
      continue;
    }
    if (bad++ == 0) first = i;
  }
  if (fused) fprintf(stderr, "saxpy: %zu of %zu elements match the fused result\n", fused, n);
  if (bad) {
    volatile float p = a * x[first];
    fail_msg("saxpy: %zu of %zu elements wrong; first [%zu]: a=%.9g x=%.9g y=%.9g got %.9g, "
             "expected %.9g (or fused %.9g)",
             bad, n, first, (double)a, (double)x[first], (double)y0[first], (double)got[first],
             (double)(p + y0[first]), (double)fmaf(a, x[first], y0[first]));
  }
}

static void test_saxpy_1m(void **state) {
  tandem_runtime_t *rt = *state;
  const uint32_t n = 1u << 20;
  const uint64_t bytes = (uint64_t)n * 4;
  th_rng_t rng = th_rng(__LINE__);
  float *x = malloc(bytes), *y = malloc(bytes), *got = malloc(bytes);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(got);
  th_fill_random_float(&rng, x, n);
  th_fill_random_float(&rng, y, n);
  const float a = th_rand_float(&rng) * 4.0f;

  tandem_buffer_t *hx = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *hy = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *ho = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *dx = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *dy = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  th_write(hx, 0, x, bytes);
  th_write(hy, 0, y, bytes);
  tandem_kernel_t *k = saxpy_kernel(rt, n, 4);

  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(hx), tandem_buffer_whole(dx), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(hy), tandem_buffer_whole(dy), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(add_saxpy(g, k, tandem_buffer_whole(dx), tandem_buffer_whole(dy), a, n));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(dy), tandem_buffer_whole(ho), TANDEM_LANE_AUTO));
  TH_ASSERT_U64_EQ(tandem_graph_node_count(g), 4);
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g); /* the executable keeps what it needs */
  tandem_kernel_release(k);
  tandem_buffer_release(dx); /* released early: in use by the exec, safe */
  tandem_buffer_release(dy);

  for (int run = 0; run < 3; ++run) {
    /* Scribble over the output so each run must rewrite it. */
    tandem_map_t m;
    TH_ASSERT_OK(tandem_map_write(tandem_buffer_whole(ho), &m));
    memset(m.data, 0x7F, (size_t)bytes);
    tandem_unmap(&m);

    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    assert_non_null(c);
    TH_ASSERT_OK(tandem_completion_wait(c));
    assert_true(tandem_completion_is_complete(c));
    TH_ASSERT_OK(tandem_completion_wait(c)); /* waiting again returns the result again */
    tandem_completion_release(c);
    th_read(ho, 0, got, bytes);
    check_saxpy(x, y, got, a, n);
    /* The inputs are untouched (y was copied to the GPU, not computed in place). */
    th_read(hy, 0, got, bytes);
    TH_ASSERT_U32_ARRAY((const uint32_t *)got, (const uint32_t *)y, n, "hy unchanged");
  }
  tandem_statistics_t s = th_stats(rt);
  TH_ASSERT_U64_EQ(s.submissions, 3);
  TH_ASSERT_U64_EQ(s.completions, 3);
  TH_ASSERT_U64_EQ(s.copied_bytes, 3 * 3 * bytes);
  TH_ASSERT_U64_EQ(th_lane_copied(rt, TANDEM_LANE_UPLOAD), 3 * 2 * bytes);
  TH_ASSERT_U64_EQ(th_lane_copied(rt, TANDEM_LANE_DOWNLOAD), 3 * bytes);
  TH_ASSERT_U64_EQ(th_lane_copied(rt, TANDEM_LANE_COMPUTE), 0);

  tandem_exec_release(e);
  tandem_buffer_release(hx);
  tandem_buffer_release(hy);
  tandem_buffer_release(ho);
  free(x);
  free(y);
  free(got);
}

/* saxpy in place on HOST_VISIBLE memory, at a non-zero aligned offset. */
static void test_saxpy_host_visible_offset(void **state) {
  tandem_runtime_t *rt = *state;
  const uint32_t n = 4096;
  const uint64_t off = 1024;
  th_rng_t rng = th_rng(__LINE__);
  float x[4096], y[4096], got[4096];
  th_fill_random_float(&rng, x, n);
  th_fill_random_float(&rng, y, n);
  const float a = -1.75f;
  tandem_buffer_t *b = th_buffer(rt, off + 2u * n * 4 + 64, TANDEM_PLACEMENT_HOST_VISIBLE);
  const uint32_t guard = 0xDEADBEEFu;
  uint32_t guards[16];
  for (int i = 0; i < 16; ++i) guards[i] = guard;
  th_write(b, off, x, sizeof x);
  th_write(b, off + sizeof x, y, sizeof y);
  th_write(b, off + 2 * sizeof x, guards, sizeof guards);
  tandem_kernel_t *k = saxpy_kernel(rt, n, 256);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(
      add_saxpy(g, k, th_view(b, off, sizeof x), th_view(b, off + sizeof x, sizeof y), a, n));
  th_run_graph(g, 1);
  th_read(b, off + sizeof x, got, sizeof got);
  check_saxpy(x, y, got, a, n);
  uint32_t after[16];
  th_read(b, off + 2 * sizeof x, after, sizeof after);
  TH_ASSERT_U32_FILL(after, guard, 16, "bytes after y");
  th_read(b, off, got, sizeof got);
  TH_ASSERT_U32_ARRAY((const uint32_t *)got, (const uint32_t *)x, n, "x unchanged");
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
}

/*---------------------------------------------------------------------------
 * Fill and copy
 *---------------------------------------------------------------------------*/

static void test_fill(void **state) {
  tandem_runtime_t *rt = *state;
  const size_t n = 16384; /* 64 KiB */
  th_rng_t rng = th_rng(__LINE__);
  uint32_t *data = malloc(n * 4), *got = malloc(n * 4);
  assert_non_null(data);
  assert_non_null(got);
  th_fill_random_u32(&rng, data, n);

  /* HOST_VISIBLE: a range in the middle and the last word. */
  tandem_buffer_t *h = th_buffer(rt, n * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(h, 0, data, n * 4);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(h, 4096, 8192), 0xA5A5A5A5u, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(h, n * 4 - 4, 4), 0x01020304u, TANDEM_LANE_AUTO));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  for (size_t i = 1024; i < 1024 + 2048; ++i) data[i] = 0xA5A5A5A5u;
  data[n - 1] = 0x01020304u;
  th_read(h, 0, got, n * 4);
  TH_ASSERT_U32_ARRAY(got, data, n, "host-visible fill");

  /* GPU_LOCAL: fill all, fill a part with another pattern, copy back. */
  tandem_buffer_t *d = th_buffer(rt, n * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(d), 0x11111111u, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(d, 400, 800), 0xCAFEF00Du, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(d), tandem_buffer_whole(h), TANDEM_LANE_AUTO));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  for (size_t i = 0; i < n; ++i) data[i] = (i >= 100 && i < 300) ? 0xCAFEF00Du : 0x11111111u;
  th_read(h, 0, got, n * 4);
  TH_ASSERT_U32_ARRAY(got, data, n, "gpu-local fills, in recording order");

  tandem_buffer_release(h);
  tandem_buffer_release(d);
  free(data);
  free(got);
}

static void test_copy_between_placements(void **state) {
  tandem_runtime_t *rt = *state;
  const size_t n = th_small() ? (1u << 16) : (1u << 20);
  const uint64_t bytes = n * 4;
  th_rng_t rng = th_rng(__LINE__);
  uint32_t *data = malloc(bytes), *got = malloc(bytes);
  assert_non_null(data);
  assert_non_null(got);
  th_fill_random_u32(&rng, data, n);

  tandem_buffer_t *h1 = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *g1 = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *g2 = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *h2 = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(h1, 0, data, bytes);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(h1), tandem_buffer_whole(g1), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(g1), tandem_buffer_whole(g2), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(g2), tandem_buffer_whole(h2), TANDEM_LANE_AUTO));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  th_read(h2, 0, got, bytes);
  TH_ASSERT_U32_ARRAY(got, data, n, "HOST_VISIBLE->GPU_LOCAL->GPU_LOCAL->HOST_VISIBLE");

  /* Partial copies at odd offsets and lengths (copies have no alignment
   * rule), on explicit lanes, and between disjoint ranges of one buffer. */
  g = th_graph(rt);
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, th_view(h1, 3, 1001), th_view(g1, 17, 1001), TANDEM_LANE_UPLOAD));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, th_view(g1, 17, 1001), th_view(h2, 5, 1001), TANDEM_LANE_DOWNLOAD));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, th_view(h2, 0, 4096), th_view(h2, 8192, 4096), TANDEM_LANE_COMPUTE));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  unsigned char *expect = (unsigned char *)data; /* h2 held data before */
  unsigned char *src = malloc(bytes);
  assert_non_null(src);
  memcpy(src, data, bytes);
  memcpy(expect + 5, src + 3, 1001);
  memcpy(expect + 8192, expect, 4096);
  th_read(h2, 0, got, bytes);
  TH_ASSERT_U32_ARRAY(got, data, n, "partial copies");
  free(src);

  tandem_buffer_release(h1);
  tandem_buffer_release(g1);
  tandem_buffer_release(g2);
  tandem_buffer_release(h2);
  free(data);
  free(got);
}

/*---------------------------------------------------------------------------
 * Record-time errors
 *---------------------------------------------------------------------------*/

static void test_record_errors(void **state) {
  tandem_runtime_t *rt = *state;
  const uint32_t n = 1024; /* contract: 4096 bytes per binding */
  tandem_kernel_t *k = saxpy_kernel(rt, n, 4);
  tandem_buffer_t *b = th_buffer(rt, 64 * 1024, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *c = th_buffer(rt, 64 * 1024, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t x = th_view(b, 0, 4096);
  tandem_view_t y = th_view(c, 0, 4096);
  saxpy_push_t pc = {2.0f, n};

  /* View shorter than the contract's bytes. */
  TH_ASSERT_STATUS(add_saxpy(g, k, x, th_view(c, 0, 64), 1.0f, n), TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("binding 1");
  TH_ASSERT_MESSAGE_HAS("saxpy");
  TH_ASSERT_MESSAGE_HAS("64");
  TH_ASSERT_MESSAGE_HAS("4096");
  TH_ASSERT_STATUS(add_saxpy(g, k, th_view(b, 0, 4092), y, 1.0f, n), TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("binding 0");
  TH_ASSERT_MESSAGE_HAS("4092");

  /* Offset not a multiple of the contract's alignment (256, above any
   * device's storage-buffer offset alignment we know of). */
  tandem_kernel_t *k256 = saxpy_kernel(rt, n, 256);
  TH_ASSERT_STATUS(add_saxpy(g, k256, th_view(b, 128, 4096), y, 1.0f, n), TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("binding 0");
  TH_ASSERT_MESSAGE_HAS("128");
  TH_ASSERT_STATUS(add_saxpy(g, k256, x, th_view(c, 4, 4096), 1.0f, n), TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("binding 1");
  TH_ASSERT_OK(add_saxpy(g, k256, th_view(b, 256, 4096), th_view(c, 512, 4096), 1.0f, n));
  TH_ASSERT_U64_EQ(tandem_graph_node_count(g), 1);

  /* Wrong view count. */
  const tandem_view_t three[3] = {x, y, th_view(c, 8192, 4096)};
  expect_either(tandem_graph_add_dispatch(g, k, three, 1, &pc, sizeof pc), TANDEM_ERROR_CONTRACT,
                TANDEM_ERROR_INVALID_ARGUMENT, "1 view for 2 bindings");
  expect_either(tandem_graph_add_dispatch(g, k, three, 3, &pc, sizeof pc), TANDEM_ERROR_CONTRACT,
                TANDEM_ERROR_INVALID_ARGUMENT, "3 views for 2 bindings");
  expect_either(tandem_graph_add_dispatch(g, k, NULL, 2, &pc, sizeof pc), TANDEM_ERROR_CONTRACT,
                TANDEM_ERROR_INVALID_ARGUMENT, "NULL views");

  /* Push-constant size. */
  expect_either(tandem_graph_add_dispatch(g, k, three, 2, &pc, 4), TANDEM_ERROR_CONTRACT,
                TANDEM_ERROR_INVALID_ARGUMENT, "4 push bytes for 8");
  expect_either(tandem_graph_add_dispatch(g, k, three, 2, &pc, 16), TANDEM_ERROR_CONTRACT,
                TANDEM_ERROR_INVALID_ARGUMENT, "16 push bytes for 8");
  expect_either(tandem_graph_add_dispatch(g, k, three, 2, NULL, 8), TANDEM_ERROR_CONTRACT,
                TANDEM_ERROR_INVALID_ARGUMENT, "NULL push constants");

  /* Overlapping views in one buffer where a binding writes. */
  expect_either(add_saxpy(g, k, th_view(c, 0, 4096), th_view(c, 2048, 4096), 1.0f, n),
                TANDEM_ERROR_CONTRACT, TANDEM_ERROR_INVALID_ARGUMENT, "x overlaps written y");
  expect_either(add_saxpy(g, k, y, y, 1.0f, n), TANDEM_ERROR_CONTRACT,
                TANDEM_ERROR_INVALID_ARGUMENT, "x is y");
  /* Two reads may overlap. */
  const tandem_binding_contract_t tb[3] = {{4096, 4, TANDEM_ACCESS_READ},
                                           {4096, 4, TANDEM_ACCESS_READ},
                                           {4096, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_t *k3 = th_kernel_load(rt, "three_bindings", tandem_spv_three_bindings,
                                       tandem_spv_three_bindings_size, 4, tb, 3, 0);
  const tandem_view_t rr[3] = {th_view(c, 0, 4096), th_view(c, 1024, 4096), th_view(c, 8192, 4096)};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k3, rr, 3, NULL, 0));
  const tandem_view_t rw[3] = {th_view(c, 0, 4096), th_view(c, 16384, 4096),
                               th_view(c, 2048, 4096)};
  expect_either(tandem_graph_add_dispatch(g, k3, rw, 3, NULL, 0), TANDEM_ERROR_CONTRACT,
                TANDEM_ERROR_INVALID_ARGUMENT, "read overlaps write");
  TH_ASSERT_U64_EQ(tandem_graph_node_count(g), 2);

  /* Copies. */
  expect_either(tandem_graph_add_copy(g, th_view(b, 0, 100), th_view(c, 0, 104), TANDEM_LANE_AUTO),
                TANDEM_ERROR_INVALID_ARGUMENT, TANDEM_ERROR_OUT_OF_RANGE, "unequal copy");
  expect_either(tandem_graph_add_copy(g, th_view(b, 0, 100), th_view(b, 50, 100), TANDEM_LANE_AUTO),
                TANDEM_ERROR_INVALID_ARGUMENT, TANDEM_ERROR_OUT_OF_RANGE, "overlapping copy");
  expect_either(tandem_graph_add_copy(g, th_view(b, 0, 100), th_view(b, 0, 100), TANDEM_LANE_AUTO),
                TANDEM_ERROR_INVALID_ARGUMENT, TANDEM_ERROR_OUT_OF_RANGE, "copy onto itself");
  expect_either(tandem_graph_add_copy(g, x, y, (tandem_lane_t)7), TANDEM_ERROR_INVALID_ARGUMENT,
                TANDEM_ERROR_OUT_OF_RANGE, "bad lane");
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, th_view(b, 0, 100), th_view(b, 100, 100), TANDEM_LANE_AUTO));

  /* Fills: offset and length multiples of 4. */
  TH_ASSERT_STATUS(tandem_graph_add_fill(g, th_view(b, 2, 64), 0, TANDEM_LANE_AUTO),
                   TANDEM_ERROR_OUT_OF_RANGE);
  TH_ASSERT_MESSAGE_HAS("2");
  TH_ASSERT_STATUS(tandem_graph_add_fill(g, th_view(b, 0, 63), 0, TANDEM_LANE_AUTO),
                   TANDEM_ERROR_OUT_OF_RANGE);
  TH_ASSERT_MESSAGE_HAS("63");
  TH_ASSERT_U64_EQ(tandem_graph_node_count(g), 3); /* failed adds left nothing */

  /* Empty graph. */
  tandem_graph_t *empty = th_graph(rt);
  tandem_exec_t *e = (tandem_exec_t *)(uintptr_t)0x1;
  TH_ASSERT_STATUS(tandem_graph_prepare(empty, &e), TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(e);
  tandem_graph_release(empty);

  /* What was recorded still runs correctly: the copy b[0,100) -> b[100,200). */
  unsigned char pattern[200];
  for (int i = 0; i < 200; ++i) pattern[i] = (unsigned char)(i * 7 + 1);
  th_write(b, 0, pattern, 200);
  th_run_graph(g, 1);
  unsigned char back[200];
  th_read(b, 0, back, 200);
  memcpy(pattern + 100, pattern, 100);
  assert_memory_equal(back, pattern, 200);

  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_kernel_release(k256);
  tandem_kernel_release(k3);
  tandem_buffer_release(b);
  tandem_buffer_release(c);
}

/*---------------------------------------------------------------------------
 * Replay
 *---------------------------------------------------------------------------*/

static void test_replay(void **state) {
  tandem_runtime_t *rt = *state;
  const uint32_t n = 1u << 16;
  const uint64_t bytes = (uint64_t)n * 4;
  th_rng_t rng = th_rng(__LINE__);
  uint32_t *in = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
  assert_non_null(in);
  assert_non_null(got);
  assert_non_null(want);
  th_fill_random_u32(&rng, in, n);

  /* Stateless graph: upload, +1 three times, download. Same answer every run. */
  tandem_buffer_t *hin = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *hout = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *d = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  th_write(hin, 0, in, bytes);
  tandem_kernel_t *k = th_add_one_kernel(rt, n);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(hin), tandem_buffer_whole(d), TANDEM_LANE_AUTO));
  for (int i = 0; i < 3; ++i) TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(d), n));
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(d), tandem_buffer_whole(hout),
                                     TANDEM_LANE_AUTO));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  /* Changing the graph after prepare does not change the executable. */
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(d), n));
  for (uint32_t i = 0; i < n; ++i) want[i] = in[i] + 3u;
  for (int run = 0; run < 5; ++run) {
    tandem_map_t m;
    TH_ASSERT_OK(tandem_map_write(tandem_buffer_whole(hout), &m));
    memset(m.data, 0, (size_t)bytes);
    tandem_unmap(&m);
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    th_read(hout, 0, got, bytes);
    TH_ASSERT_U32_ARRAY(got, want, n, "stateless replay");
  }
  tandem_exec_release(e);
  tandem_graph_release(g);

  /* Stateful graph on HOST_VISIBLE memory: each replay adds 2, submitted back
   * to back without waiting in between (ordering across submissions). */
  g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(hin), n));
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(hin), n));
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  tandem_completion_t *cs[2] = {NULL, NULL};
  const int runs = 6;
  for (int run = 0; run < runs; ++run) {
    /* graph_slots defaults to 2: keep at most 2 of this exec in flight. */
    tandem_completion_t **slot = &cs[run % 2];
    if (*slot != NULL) {
      TH_ASSERT_OK(tandem_completion_wait(*slot));
      tandem_completion_release(*slot);
      *slot = NULL;
    }
    TH_ASSERT_OK(tandem_exec_submit(e, slot));
    assert_non_null(*slot);
  }
  for (int i = 0; i < 2; ++i) {
    TH_ASSERT_OK(tandem_completion_wait(cs[i]));
    tandem_completion_release(cs[i]);
  }
  for (uint32_t i = 0; i < n; ++i) want[i] = in[i] + 2u * (uint32_t)runs;
  th_read(hin, 0, got, bytes);
  TH_ASSERT_U32_ARRAY(got, want, n, "stateful replay");
  tandem_exec_release(e);

  tandem_kernel_release(k);
  tandem_buffer_release(hin);
  tandem_buffer_release(hout);
  tandem_buffer_release(d);
  free(in);
  free(got);
  free(want);
}

/* Push constants reach the kernel: v[i] = y + z*i + w. */
static void test_push_constants_reach_kernel(void **state) {
  tandem_runtime_t *rt = *state;
  const uint32_t n = 1000;
  const tandem_binding_contract_t b[1] = {{n * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_t *k =
      th_kernel_load(rt, "push16", tandem_spv_push16, tandem_spv_push16_size, 4, b, 1, 16);
  tandem_buffer_t *h = th_buffer(rt, (n + 24) * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  const uint32_t p[4] = {n, 7u, 3u, 1000000u};
  tandem_view_t v = th_view(h, 0, n * 4);
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, &v, 1, p, sizeof p));
  th_run_graph(g, 1);
  uint32_t got[1024], want[1024];
  th_read(h, 0, got, (n + 24) * 4);
  for (uint32_t i = 0; i < n; ++i) want[i] = 7u + 3u * i + 1000000u;
  for (uint32_t i = n; i < n + 24; ++i) want[i] = 0;
  TH_ASSERT_U32_ARRAY(got, want, n + 24, "push16");
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(h);
}

/*---------------------------------------------------------------------------
 * Host maps vs in-flight device work
 *---------------------------------------------------------------------------*/

typedef struct chain {
  tandem_buffer_t *buf;
  tandem_kernel_t *k;
  tandem_exec_t *exec;
  uint32_t n, steps;
} chain_t;

/* A long chain of v[i] += 1 over a HOST_VISIBLE buffer, so that it runs for a
 * while on lavapipe. */
static chain_t make_chain(tandem_runtime_t *rt) {
  chain_t c;
  c.n = th_small() ? (1u << 20) : (4u << 20);
  c.steps = th_small() ? 32 : 64;
  c.buf = th_buffer(rt, (uint64_t)c.n * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  c.k = th_add_one_kernel(rt, c.n);
  tandem_graph_t *g = th_graph(rt);
  for (uint32_t i = 0; i < c.steps; ++i)
    TH_ASSERT_OK(th_add_add_one(g, c.k, tandem_buffer_whole(c.buf), c.n));
  TH_ASSERT_OK(tandem_graph_prepare(g, &c.exec));
  tandem_graph_release(g);
  return c;
}

static void free_chain(chain_t *c) {
  tandem_exec_release(c->exec);
  tandem_kernel_release(c->k);
  tandem_buffer_release(c->buf);
}

static void check_all(tandem_buffer_t *b, uint32_t n, uint32_t value, const char *what) {
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_read(th_view(b, 0, (uint64_t)n * 4), &m));
  TH_ASSERT_U32_FILL((const uint32_t *)m.data, value, n, what);
  tandem_unmap(&m);
}

static void test_maps_vs_inflight_work(void **state) {
  tandem_runtime_t *rt = *state;
  chain_t ch = make_chain(rt);
  tandem_buffer_t *other = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);

  /* try_map_read while the chain writes the buffer. */
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(ch.exec, &c));
  tandem_map_t m;
  memset(&m, 0, sizeof m);
  tandem_status_t s = tandem_try_map_read(th_view(ch.buf, 4096, 64), &m);
  bool done = tandem_completion_is_complete(c);
  fprintf(stderr, "try_map_read during the chain: %s (complete after: %d)\n", tandem_status_name(s),
          done);
  if (!done) {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_BUSY);
    assert_null(m.data);
  } else if (s == TANDEM_OK) {
    tandem_unmap(&m);
  } else {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_BUSY);
  }
  /* A buffer the work does not touch maps at once, even while it runs. */
  TH_ASSERT_OK(tandem_try_map_write(tandem_buffer_whole(other), &m));
  tandem_unmap(&m);
  /* The blocking form waits for exactly that work and sees its result. */
  TH_ASSERT_OK(tandem_map_read(tandem_buffer_whole(ch.buf), &m));
  assert_true(tandem_completion_is_complete(c));
  TH_ASSERT_U32_FILL((const uint32_t *)m.data, ch.steps, ch.n, "after the chain (read map)");
  tandem_unmap(&m);
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);

  /* try_map_write while it runs, then a blocking write map. */
  TH_ASSERT_OK(tandem_exec_submit(ch.exec, &c));
  s = tandem_try_map_write(th_view(ch.buf, 0, 4), &m);
  done = tandem_completion_is_complete(c);
  fprintf(stderr, "try_map_write during the chain: %s (complete after: %d)\n",
          tandem_status_name(s), done);
  if (!done) {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_BUSY);
  } else if (s == TANDEM_OK) {
    tandem_unmap(&m);
  } else {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_BUSY);
  }
  TH_ASSERT_OK(tandem_map_write(tandem_buffer_whole(ch.buf), &m));
  assert_true(tandem_completion_is_complete(c));
  TH_ASSERT_U32_FILL((const uint32_t *)m.data, 2 * ch.steps, ch.n, "after two chains (write map)");
  memset(m.data, 0, (size_t)ch.n * 4);
  tandem_unmap(&m);
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  check_all(ch.buf, ch.n, 0, "after host reset");

  tandem_buffer_release(other);
  free_chain(&ch);
}

static void test_live_map_blocks_conflicting_submit(void **state) {
  tandem_runtime_t *rt = *state;
  const uint32_t n = 1u << 16;
  const uint32_t half = n / 2;
  tandem_buffer_t *b = th_buffer(rt, (uint64_t)n * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *dst = th_buffer(rt, (uint64_t)half * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_kernel_t *k = th_add_one_kernel(rt, half);

  /* exec_lo writes the low half, exec_hi the high half, exec_read only reads
   * the low half (a copy to another buffer). */
  tandem_exec_t *lo = NULL, *hi = NULL, *rd = NULL;
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, k, th_view(b, 0, (uint64_t)half * 4), half));
  TH_ASSERT_OK(tandem_graph_prepare(g, &lo));
  tandem_graph_release(g);
  g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, k, th_view(b, (uint64_t)half * 4, (uint64_t)half * 4), half));
  TH_ASSERT_OK(tandem_graph_prepare(g, &hi));
  tandem_graph_release(g);
  g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_copy(g, th_view(b, 0, (uint64_t)half * 4), tandem_buffer_whole(dst),
                                     TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_prepare(g, &rd));
  tandem_graph_release(g);

  /* A live write map on [0, 64): conflicting submissions are BUSY and start
   * nothing; the other half runs. */
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_write(th_view(b, 0, 64), &m));
  ((uint32_t *)m.data)[0] = 100;
  uint64_t subs = th_stats(rt).submissions;
  tandem_completion_t *c = SENTINEL_COMPLETION;
  TH_ASSERT_STATUS(tandem_exec_submit(lo, &c), TANDEM_ERROR_BUSY);
  assert_null(c);
  c = SENTINEL_COMPLETION;
  TH_ASSERT_STATUS(tandem_exec_submit(rd, &c), TANDEM_ERROR_BUSY); /* reads under a write map */
  assert_null(c);
  TH_ASSERT_U64_EQ(th_stats(rt).submissions, subs);
  TH_ASSERT_OK(tandem_exec_submit(hi, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  tandem_unmap(&m);

  uint32_t *want = calloc(n, 4);
  uint32_t *got = malloc((size_t)n * 4);
  assert_non_null(want);
  assert_non_null(got);
  want[0] = 100;
  for (uint32_t i = half; i < n; ++i) want[i] = 1;
  th_read(b, 0, got, (uint64_t)n * 4);
  TH_ASSERT_U32_ARRAY(got, want, n, "BUSY submit changed nothing; other half ran");

  /* A live read map: a submit that writes the range is BUSY, one that only
   * reads it runs (read/read never conflicts). */
  TH_ASSERT_OK(tandem_map_read(th_view(b, 0, 64), &m));
  c = SENTINEL_COMPLETION;
  TH_ASSERT_STATUS(tandem_exec_submit(lo, &c), TANDEM_ERROR_BUSY);
  assert_null(c);
  TH_ASSERT_OK(tandem_exec_submit(rd, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  TH_ASSERT_U64_EQ(((const uint32_t *)m.data)[0], 100);
  tandem_unmap(&m);

  /* With the map gone, the low half runs. */
  TH_ASSERT_OK(tandem_exec_submit(lo, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  for (uint32_t i = 0; i < half; ++i) want[i] += 1;
  th_read(b, 0, got, (uint64_t)n * 4);
  TH_ASSERT_U32_ARRAY(got, want, n, "after unmapping");

  tandem_exec_release(lo);
  tandem_exec_release(hi);
  tandem_exec_release(rd);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
  tandem_buffer_release(dst);
  free(want);
  free(got);
}

/* Work submitted later that reads what earlier, still running work writes is
 * ordered after it, across graphs and lanes, without the host waiting. */
static void test_ordering_across_submissions(void **state) {
  tandem_runtime_t *rt = *state;
  chain_t ch = make_chain(rt); /* compute lane: buf += steps */
  const uint64_t bytes = (uint64_t)ch.n * 4;
  tandem_buffer_t *d = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  /* upload lane, then download lane */
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(ch.buf), tandem_buffer_whole(d),
                                     TANDEM_LANE_AUTO));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(d), tandem_buffer_whole(out), TANDEM_LANE_AUTO));
  tandem_exec_t *copy = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &copy));
  tandem_graph_release(g);

  tandem_completion_t *c1 = NULL, *c2 = NULL, *c3 = NULL;
  TH_ASSERT_OK(tandem_exec_submit(ch.exec, &c1));
  TH_ASSERT_OK(tandem_exec_submit(copy, &c2));    /* reads what c1 writes */
  TH_ASSERT_OK(tandem_exec_submit(ch.exec, &c3)); /* writes what c2 reads (WAR) */
  TH_ASSERT_OK(tandem_completion_wait(c2));
  check_all(out, ch.n, ch.steps, "copy ordered after the first chain, before the second");
  TH_ASSERT_OK(tandem_completion_wait(c3));
  TH_ASSERT_OK(tandem_completion_wait(c1));
  assert_true(tandem_completion_is_complete(c1));
  check_all(ch.buf, ch.n, 2 * ch.steps, "two chains");
  tandem_completion_release(c1);
  tandem_completion_release(c2);
  tandem_completion_release(c3);
  tandem_statistics_t st = th_stats(rt);
  TH_ASSERT_U64_EQ(st.submissions, 3);
  TH_ASSERT_U64_EQ(st.completions, 3);

  tandem_exec_release(copy);
  tandem_buffer_release(d);
  tandem_buffer_release(out);
  free_chain(&ch);
}

static void test_wait_timeout(void **state) {
  tandem_runtime_t *rt = *state;
  chain_t ch = make_chain(rt);
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(ch.exec, &c));
  tandem_status_t s = tandem_completion_wait_timeout(c, 0);
  bool done = tandem_completion_is_complete(c);
  fprintf(stderr, "wait_timeout(0) during the chain: %s (complete after: %d)\n",
          tandem_status_name(s), done);
  if (!done) {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_TIMEOUT);
  } else if (s != TANDEM_OK) {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_TIMEOUT);
  }
  /* A timeout does not cancel: the work still finishes, with its result. */
  TH_ASSERT_OK(tandem_completion_wait_timeout(c, 60ull * 1000000000ull));
  assert_true(tandem_completion_is_complete(c));
  TH_ASSERT_OK(tandem_completion_wait_timeout(c, 0));
  tandem_completion_release(c);
  check_all(ch.buf, ch.n, ch.steps, "after a timed-out wait");
  free_chain(&ch);
}

/* Fixed capacities: graph_slots per executable and max_submissions per
 * runtime; exhaustion is BUSY with nothing started, never growth. */
static void test_capacity_busy(void **state) {
  (void)state;
  th_validation_reset();
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.graph_slots = 1;
  o.max_submissions = 1;
  tandem_runtime_t *rt = th_runtime_create(&o);
  chain_t ch = make_chain(rt);
  tandem_buffer_t *other = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(other), 0x5EEDu, TANDEM_LANE_AUTO));
  tandem_exec_t *fill = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &fill));
  tandem_graph_release(g);

  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(ch.exec, &c));
  /* The same executable again: its only slot is in flight. */
  tandem_completion_t *c2 = SENTINEL_COMPLETION;
  tandem_status_t s = tandem_exec_submit(ch.exec, &c2);
  bool done = tandem_completion_is_complete(c);
  fprintf(stderr, "second submit with graph_slots=1: %s (first complete after: %d)\n",
          tandem_status_name(s), done);
  uint32_t expected_steps = ch.steps;
  if (!done) {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_BUSY);
    assert_null(c2);
  } else if (s == TANDEM_OK) {
    TH_ASSERT_OK(tandem_completion_wait(c2));
    tandem_completion_release(c2);
    expected_steps += ch.steps;
  } else {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_BUSY);
  }
  /* Another executable, unrelated buffer: max_submissions = 1 is reached. */
  tandem_completion_t *c3 = SENTINEL_COMPLETION;
  s = tandem_exec_submit(fill, &c3);
  done = tandem_completion_is_complete(c);
  fprintf(stderr, "other submit with max_submissions=1: %s (first complete after: %d)\n",
          tandem_status_name(s), done);
  bool filled = false;
  if (!done) {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_BUSY);
    assert_null(c3);
  } else if (s == TANDEM_OK) {
    TH_ASSERT_OK(tandem_completion_wait(c3));
    tandem_completion_release(c3);
    filled = true;
  } else {
    TH_ASSERT_STATUS(s, TANDEM_ERROR_BUSY);
  }
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  check_all(ch.buf, ch.n, expected_steps, "chain");
  if (!filled) check_all(other, 1024, 0, "BUSY fill started nothing");

  /* Capacity is back once the work is done and released. */
  TH_ASSERT_OK(tandem_exec_submit(fill, &c3));
  TH_ASSERT_OK(tandem_completion_wait(c3));
  tandem_completion_release(c3);
  check_all(other, 1024, 0x5EEDu, "fill after capacity returned");
  TH_ASSERT_OK(tandem_exec_submit(ch.exec, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  check_all(ch.buf, ch.n, expected_steps + ch.steps, "chain again");

  tandem_exec_release(fill);
  tandem_buffer_release(other);
  free_chain(&ch);
  th_runtime_destroy(rt);
}

int main(void) {
#define GPU_TEST(f) cmocka_unit_test_setup_teardown(f, th_setup_gpu, th_teardown_gpu)
  const struct CMUnitTest tests[] = {
      GPU_TEST(test_saxpy_1m),
      GPU_TEST(test_saxpy_host_visible_offset),
      GPU_TEST(test_fill),
      GPU_TEST(test_copy_between_placements),
      GPU_TEST(test_record_errors),
      GPU_TEST(test_replay),
      GPU_TEST(test_push_constants_reach_kernel),
      GPU_TEST(test_maps_vs_inflight_work),
      GPU_TEST(test_live_map_blocks_conflicting_submit),
      GPU_TEST(test_ordering_across_submissions),
      GPU_TEST(test_wait_timeout),
      cmocka_unit_test(test_capacity_busy),
  };
  return TH_RUN_GROUP(tests);
}
