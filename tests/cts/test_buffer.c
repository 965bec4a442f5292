/* SPDX-License-Identifier: MIT */
/*
 * test_buffer.c — buffers, views, host maps, statistics and budgets.
 * Host maps against in-flight device work are tested in test_run.c (they need
 * kernels and submissions).
 */
#include "harness.h"

#include <inttypes.h>
#include <stdlib.h>

#define SENTINEL_BUFFER ((tandem_buffer_t *)(uintptr_t)0x5A5A5A5A)

static tandem_statistics_t stats(tandem_runtime_t *rt) {
  tandem_statistics_t s;
  memset(&s, 0xEE, sizeof s);
  s.struct_size = sizeof s; /* after the poison */
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &s));
  return s;
}

#define expect_create_fails(rt, size, p, code) \
  expect_create_fails_at((rt), (size), (p), (code), __FILE__, __LINE__)
static void expect_create_fails_at(tandem_runtime_t *rt, uint64_t size, tandem_placement_t p,
                                   tandem_status_t code, const char *file, int line) {
  tandem_buffer_t *b = SENTINEL_BUFFER;
  tandem_status_t s = tandem_buffer_create(rt, size, p, &b);
  th__check_status(s, code, "tandem_buffer_create", file, line);
  assert_null(b);
}

/*---------------------------------------------------------------------------*/

static void test_create_sizes(void **state) {
  tandem_runtime_t *rt = *state;
  const uint64_t sizes[] = {1, 4096, 1u << 20};
  const tandem_placement_t placements[] = {TANDEM_PLACEMENT_GPU_LOCAL,
                                           TANDEM_PLACEMENT_HOST_VISIBLE};
  for (size_t p = 0; p < 2; ++p) {
    for (size_t i = 0; i < 3; ++i) {
      tandem_buffer_t *b = th_buffer(rt, sizes[i], placements[p]);
      TH_ASSERT_U64_EQ(tandem_buffer_size(b), sizes[i]);
      assert_int_equal(tandem_buffer_placement(b), placements[p]);
      tandem_view_t w = tandem_buffer_whole(b);
      assert_ptr_equal(w.buffer, b);
      TH_ASSERT_U64_EQ(w.offset, 0);
      TH_ASSERT_U64_EQ(w.length, sizes[i]);
      tandem_buffer_release(b);
    }
  }
}

static void test_create_bad_sizes(void **state) {
  tandem_runtime_t *rt = *state;
  const uint64_t bad[] = {0, (uint64_t)(SIZE_MAX / 2) + 1, UINT64_MAX};
  for (size_t i = 0; i < 3; ++i) {
    expect_create_fails(rt, bad[i], TANDEM_PLACEMENT_GPU_LOCAL, TANDEM_ERROR_OUT_OF_RANGE);
    expect_create_fails(rt, bad[i], TANDEM_PLACEMENT_HOST_VISIBLE, TANDEM_ERROR_OUT_OF_RANGE);
  }
  /* In range but far beyond any device: OUT_OF_MEMORY, nothing counted. */
  const uint64_t huge[] = {(uint64_t)(SIZE_MAX / 2), 1ull << 40};
  for (size_t i = 0; i < 2; ++i) {
    expect_create_fails(rt, huge[i], TANDEM_PLACEMENT_GPU_LOCAL, TANDEM_ERROR_OUT_OF_MEMORY);
    expect_create_fails(rt, huge[i], TANDEM_PLACEMENT_HOST_VISIBLE, TANDEM_ERROR_OUT_OF_MEMORY);
  }
  tandem_statistics_t s = stats(rt);
  TH_ASSERT_U64_EQ(s.allocations, 0);
  TH_ASSERT_U64_EQ(s.live_bytes, 0);
  TH_ASSERT_U64_EQ(s.peak_bytes, 0);
}

static void test_create_bad_placements(void **state) {
  tandem_runtime_t *rt = *state;
  expect_create_fails(rt, 4096, TANDEM_PLACEMENT_SHARED, TANDEM_ERROR_UNSUPPORTED);
  TH_ASSERT_MESSAGE_HAS("SHARED");
  expect_create_fails(rt, 4096, TANDEM_PLACEMENT_NPU_LOCAL, TANDEM_ERROR_UNSUPPORTED);
  TH_ASSERT_MESSAGE_HAS("NPU_LOCAL");
  expect_create_fails(rt, 4096, (tandem_placement_t)42, TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_MESSAGE_HAS("42");
  expect_create_fails(rt, 4096, (tandem_placement_t)-1, TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_U64_EQ(stats(rt).allocations, 0);
}

static void expect_zero(tandem_buffer_t *b) {
  uint64_t size = tandem_buffer_size(b);
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_read(tandem_buffer_whole(b), &m));
  assert_non_null(m.data);
  TH_ASSERT_U64_EQ(m.length, size);
  const unsigned char *p = m.data;
  uint64_t bad = 0, first = 0;
  for (uint64_t i = 0; i < size; ++i) {
    if (p[i] != 0) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad != 0) {
    fail_msg("%" PRIu64 " of %" PRIu64 " bytes of a new buffer are not zero; first at %" PRIu64
             ": 0x%02x",
             bad, size, first, p[first]);
  }
  tandem_unmap(&m);
}

static void test_host_visible_starts_zero(void **state) {
  tandem_runtime_t *rt = *state;
  const uint64_t sizes[] = {1, 4099, 1u << 20};
  for (size_t i = 0; i < 3; ++i) {
    /* Dirty a buffer, release it, and make another of the same size: memory
     * that may be recycled must still come back zeroed. */
    tandem_buffer_t *dirty = th_buffer(rt, sizes[i], TANDEM_PLACEMENT_HOST_VISIBLE);
    tandem_map_t m;
    TH_ASSERT_OK(tandem_map_write(tandem_buffer_whole(dirty), &m));
    memset(m.data, 0xA7, (size_t)sizes[i]);
    tandem_unmap(&m);
    assert_null(m.data); /* unmap zeroes the map */
    tandem_buffer_release(dirty);

    tandem_buffer_t *b = th_buffer(rt, sizes[i], TANDEM_PLACEMENT_HOST_VISIBLE);
    expect_zero(b);
    tandem_buffer_release(b);
  }
}

/* tandem_buffer_memory: HOST_VISIBLE lands in coherent host-visible memory,
 * GPU_LOCAL in device-local memory, and the heap numbers are the device's.
 * (The choice among types is tested on memory tables in test_memory_type.) */
static void test_memory_types(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *host = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *dev = th_buffer(rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_memory_t hm, dm;
  TH_ASSERT_OK(tandem_buffer_memory(host, &hm));
  TH_ASSERT_OK(tandem_buffer_memory(dev, &dm));
  const uint32_t hv = TANDEM_MEMORY_HOST_VISIBLE | TANDEM_MEMORY_HOST_COHERENT;
  TH_ASSERT_U64_EQ(hm.properties & hv, hv);
  TH_ASSERT_U64_EQ(dm.properties & TANDEM_MEMORY_DEVICE_LOCAL, TANDEM_MEMORY_DEVICE_LOCAL);
  assert_true(hm.memory_type < 32 && dm.memory_type < 32);
  assert_true(hm.heap < 16 && dm.heap < 16);
  assert_true(hm.heap_bytes >= 4096 && dm.heap_bytes >= 4096);
  assert_true(dm.heap_device_local); /* device-local memory lives in a device-local heap */
  /* The same placement always gets the same type. */
  tandem_buffer_t *host2 = th_buffer(rt, 1u << 20, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_memory_t hm2;
  TH_ASSERT_OK(tandem_buffer_memory(host2, &hm2));
  TH_ASSERT_U64_EQ(hm2.memory_type, hm.memory_type);
  TH_ASSERT_STATUS(tandem_buffer_memory(NULL, &hm2), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_U64_EQ(hm2.memory_type, UINT32_MAX);
  TH_ASSERT_STATUS(tandem_buffer_memory(host, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_buffer_release(host2);
  tandem_buffer_release(dev);
  tandem_buffer_release(host);
}

static void test_gpu_local_starts_zero(void **state) {
  tandem_runtime_t *rt = *state;
  const uint64_t size = 1u << 16;
  tandem_buffer_t *dirty = th_buffer(rt, size, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_graph_t *g = NULL;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(dirty), 0xDEADBEEFu, TANDEM_LANE_AUTO));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  tandem_buffer_release(dirty);

  tandem_buffer_t *dev = th_buffer(rt, size, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *host = th_buffer(rt, size, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_write(tandem_buffer_whole(host), &m));
  memset(m.data, 0xFF, (size_t)size); /* so a copy that does nothing shows */
  tandem_unmap(&m);
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(dev), tandem_buffer_whole(host),
                                     TANDEM_LANE_AUTO));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  expect_zero(host);
  tandem_buffer_release(dev);
  tandem_buffer_release(host);
}

/*---------------------------------------------------------------------------*/

#define expect_bad_view(b, offset, length) \
  expect_bad_view_at((b), (offset), (length), __FILE__, __LINE__)
static void expect_bad_view_at(tandem_buffer_t *b, uint64_t offset, uint64_t length,
                               const char *file, int line) {
  tandem_view_t v;
  memset(&v, 0x77, sizeof v);
  th__check_status(tandem_buffer_view(b, offset, length, &v), TANDEM_ERROR_OUT_OF_RANGE,
                   "tandem_buffer_view", file, line);
  assert_null(v.buffer); /* out_ zeroed on failure */
  TH_ASSERT_U64_EQ(v.offset, 0);
  TH_ASSERT_U64_EQ(v.length, 0);
}

static void test_views(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);

  tandem_view_t v = th_view(b, 0, 4096);
  assert_ptr_equal(v.buffer, b);
  TH_ASSERT_U64_EQ(v.offset, 0);
  TH_ASSERT_U64_EQ(v.length, 4096);
  v = th_view(b, 4095, 1);
  TH_ASSERT_U64_EQ(v.offset, 4095);
  TH_ASSERT_U64_EQ(v.length, 1);
  v = th_view(b, 100, 200);
  TH_ASSERT_U64_EQ(v.offset, 100);
  TH_ASSERT_U64_EQ(v.length, 200);

  expect_bad_view(b, 4096, 1); /* offset at the end */
  TH_ASSERT_MESSAGE_HAS("4096");
  expect_bad_view(b, 5000, 1); /* offset past the end */
  TH_ASSERT_MESSAGE_HAS("5000");
  expect_bad_view(b, 0, 4097); /* length past the end */
  TH_ASSERT_MESSAGE_HAS("4097");
  expect_bad_view(b, 4000, 97); /* end past the end */
  TH_ASSERT_MESSAGE_HAS("97");
  expect_bad_view(b, 0, 0);          /* empty */
  expect_bad_view(b, 8, UINT64_MAX); /* offset + length overflows */
  expect_bad_view(b, UINT64_MAX, 1);
  expect_bad_view(b, UINT64_MAX, UINT64_MAX);
  expect_bad_view(b, 1, UINT64_MAX - 0); /* wraps to 0 */

  tandem_buffer_release(b);
}

/*---------------------------------------------------------------------------*/

static void test_statistics_and_refcount(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_statistics_t s0 = stats(rt);
  TH_ASSERT_U64_EQ(s0.allocations, 0);
  TH_ASSERT_U64_EQ(s0.live_bytes, 0);
  TH_ASSERT_U64_EQ(s0.peak_bytes, 0);

  tandem_buffer_t *a = th_buffer(rt, 8192, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_statistics_t s = stats(rt);
  TH_ASSERT_U64_EQ(s.allocations, 1);
  TH_ASSERT_U64_EQ(s.live_bytes, 8192);
  TH_ASSERT_U64_EQ(s.peak_bytes, 8192);

  tandem_buffer_t *b = th_buffer(rt, 100, TANDEM_PLACEMENT_GPU_LOCAL);
  s = stats(rt);
  TH_ASSERT_U64_EQ(s.allocations, 2);
  TH_ASSERT_U64_EQ(s.live_bytes, 8292);
  TH_ASSERT_U64_EQ(s.peak_bytes, 8292);

  /* An extra reference keeps the buffer (and its bytes) alive. */
  tandem_buffer_retain(a);
  tandem_buffer_release(a);
  s = stats(rt);
  TH_ASSERT_U64_EQ(s.live_bytes, 8292);
  TH_ASSERT_U64_EQ(tandem_buffer_size(a), 8192);
  const uint32_t marker = 0x12345678u;
  th_write(a, 64, &marker, sizeof marker); /* still usable */
  uint32_t back = 0;
  th_read(a, 64, &back, sizeof back);
  TH_ASSERT_U64_EQ(back, marker);
  tandem_buffer_release(a); /* the last reference */
  s = stats(rt);
  TH_ASSERT_U64_EQ(s.allocations, 2); /* a count of creations, never decreases */
  TH_ASSERT_U64_EQ(s.live_bytes, 100);
  TH_ASSERT_U64_EQ(s.peak_bytes, 8292); /* peak stays */

  tandem_buffer_t *c = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  s = stats(rt);
  TH_ASSERT_U64_EQ(s.allocations, 3);
  TH_ASSERT_U64_EQ(s.live_bytes, 4196);
  TH_ASSERT_U64_EQ(s.peak_bytes, 8292);
  tandem_buffer_release(b);
  tandem_buffer_release(c);
  s = stats(rt);
  TH_ASSERT_U64_EQ(s.live_bytes, 0);
  TH_ASSERT_U64_EQ(s.peak_bytes, 8292);
  TH_ASSERT_U64_EQ(s.submissions, 0);
  TH_ASSERT_U64_EQ(s.copied_bytes, 0);

  /* Failed creations count nothing. */
  expect_create_fails(rt, 0, TANDEM_PLACEMENT_HOST_VISIBLE, TANDEM_ERROR_OUT_OF_RANGE);
  TH_ASSERT_U64_EQ(stats(rt).allocations, 3);
}

/*---------------------------------------------------------------------------*/

static tandem_runtime_t *runtime_with_budget(tandem_budget_t *budget) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.budget = budget;
  return th_runtime_create(&o);
}

static void test_budget_limits_allocations(void **state) {
  (void)state;
  th_validation_reset();
  tandem_budget_t *budget = NULL;
  TH_ASSERT_OK(tandem_budget_create(1u << 20, &budget));
  tandem_runtime_t *rt = runtime_with_budget(budget);

  tandem_buffer_t *first = th_buffer(rt, 768u << 10, TANDEM_PLACEMENT_GPU_LOCAL);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 768u << 10);

  tandem_buffer_t *second = SENTINEL_BUFFER;
  TH_ASSERT_STATUS(tandem_buffer_create(rt, 512u << 10, TANDEM_PLACEMENT_HOST_VISIBLE, &second),
                   TANDEM_ERROR_OVER_BUDGET);
  assert_null(second);
  TH_ASSERT_MESSAGE_HAS("524288");                          /* requested */
  TH_ASSERT_MESSAGE_HAS("1048576");                         /* limit */
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 768u << 10); /* nothing reserved */
  tandem_statistics_t s = stats(rt);
  TH_ASSERT_U64_EQ(s.allocations, 1);
  TH_ASSERT_U64_EQ(s.live_bytes, 768u << 10);

  /* Exactly up to the limit is fine. */
  tandem_buffer_t *rest = th_buffer(rt, 256u << 10, TANDEM_PLACEMENT_HOST_VISIBLE);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 1u << 20);
  tandem_buffer_t *one_more = SENTINEL_BUFFER;
  TH_ASSERT_STATUS(tandem_buffer_create(rt, 1, TANDEM_PLACEMENT_HOST_VISIBLE, &one_more),
                   TANDEM_ERROR_OVER_BUDGET);
  assert_null(one_more);
  tandem_buffer_release(rest);

  tandem_buffer_release(first);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 0);
  second = th_buffer(rt, 512u << 10, TANDEM_PLACEMENT_HOST_VISIBLE);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 512u << 10);
  expect_zero(second);
  tandem_buffer_release(second);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 0);

  /* A reservation whose device allocation fails is given back. */
  tandem_buffer_t *huge = SENTINEL_BUFFER;
  tandem_budget_t *big = NULL;
  TH_ASSERT_OK(tandem_budget_create(1ull << 62, &big));
  tandem_runtime_t *rt_big = runtime_with_budget(big);
  TH_ASSERT_STATUS(tandem_buffer_create(rt_big, 1ull << 40, TANDEM_PLACEMENT_GPU_LOCAL, &huge),
                   TANDEM_ERROR_OUT_OF_MEMORY);
  assert_null(huge);
  TH_ASSERT_U64_EQ(tandem_budget_used(big), 0);
  th_runtime_destroy(rt_big);
  tandem_budget_release(big);

  th_runtime_destroy(rt);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 0);
  tandem_budget_release(budget);
}

static void test_budget_shared_by_two_runtimes(void **state) {
  (void)state;
  th_validation_reset();
  tandem_budget_t *budget = NULL;
  TH_ASSERT_OK(tandem_budget_create(1u << 20, &budget));
  tandem_runtime_t *rt1 = runtime_with_budget(budget);
  tandem_runtime_t *rt2 = runtime_with_budget(budget);
  tandem_budget_release(budget); /* the runtimes hold it now */
  TH_ASSERT_U64_EQ(tandem_budget_limit(budget), 1u << 20);

  tandem_buffer_t *a = th_buffer(rt1, 768u << 10, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *b = SENTINEL_BUFFER;
  TH_ASSERT_STATUS(tandem_buffer_create(rt2, 512u << 10, TANDEM_PLACEMENT_GPU_LOCAL, &b),
                   TANDEM_ERROR_OVER_BUDGET);
  assert_null(b);
  b = th_buffer(rt2, 256u << 10, TANDEM_PLACEMENT_GPU_LOCAL);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 1u << 20);
  tandem_buffer_t *c = SENTINEL_BUFFER;
  TH_ASSERT_STATUS(tandem_buffer_create(rt1, 4096, TANDEM_PLACEMENT_HOST_VISIBLE, &c),
                   TANDEM_ERROR_OVER_BUDGET);
  assert_null(c);
  /* Each runtime's statistics count only its own buffers. */
  TH_ASSERT_U64_EQ(stats(rt1).live_bytes, 768u << 10);
  TH_ASSERT_U64_EQ(stats(rt2).live_bytes, 256u << 10);

  tandem_buffer_release(a);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 256u << 10);
  c = th_buffer(rt2, 512u << 10, TANDEM_PLACEMENT_HOST_VISIBLE);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 768u << 10);
  tandem_buffer_release(b);
  tandem_buffer_release(c);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 0);

  tandem_budget_retain(budget); /* keep it to look at after the runtimes go */
  th_runtime_destroy(rt1);
  th_runtime_destroy(rt2);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 0);
  tandem_budget_release(budget);
}

/*---------------------------------------------------------------------------*/

static void test_map_gpu_local_unsupported(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_map_t m;
  memset(&m, 0x55, sizeof m);
  TH_ASSERT_STATUS_MSG(tandem_map_read(tandem_buffer_whole(b), &m), TANDEM_ERROR_UNSUPPORTED,
                       "HOST_VISIBLE");
  assert_null(m.data);
  TH_ASSERT_STATUS_MSG(tandem_map_write(tandem_buffer_whole(b), &m), TANDEM_ERROR_UNSUPPORTED,
                       "HOST_VISIBLE");
  assert_null(m.data);
  TH_ASSERT_STATUS_MSG(tandem_try_map_read(th_view(b, 0, 16), &m), TANDEM_ERROR_UNSUPPORTED,
                       "HOST_VISIBLE");
  TH_ASSERT_STATUS_MSG(tandem_try_map_write(th_view(b, 16, 16), &m), TANDEM_ERROR_UNSUPPORTED,
                       "HOST_VISIBLE");
  assert_null(m.data);
  tandem_buffer_release(b);
}

static void test_map_read_shared_write_exclusive(void **state) {
  tandem_runtime_t *rt = *state;
  const size_t n = 1024;
  tandem_buffer_t *b = th_buffer(rt, n * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_rng_t rng = th_rng(__LINE__);
  uint32_t *data = malloc(n * 4);
  assert_non_null(data);
  th_fill_random_u32(&rng, data, n);
  th_write(b, 0, data, n * 4);

  /* Two read maps of overlapping ranges at once; both see the data at their
   * offset. */
  tandem_map_t r1, r2, w;
  TH_ASSERT_OK(tandem_try_map_read(th_view(b, 0, n * 4), &r1));
  TH_ASSERT_OK(tandem_map_read(th_view(b, 256, 512), &r2));
  TH_ASSERT_U64_EQ(r1.length, n * 4);
  TH_ASSERT_U64_EQ(r2.length, 512);
  TH_ASSERT_U32_ARRAY((const uint32_t *)r1.data, data, n, "read map 1");
  TH_ASSERT_U32_ARRAY((const uint32_t *)r2.data, data + 64, 128, "read map 2 at offset 256");

  /* Writes conflict with the live read maps: BUSY, blocking form included
   * (waiting for a host map could deadlock). */
  memset(&w, 0x55, sizeof w);
  TH_ASSERT_STATUS(tandem_try_map_write(th_view(b, 0, 4), &w), TANDEM_ERROR_BUSY);
  assert_null(w.data);
  TH_ASSERT_STATUS(tandem_map_write(th_view(b, 300, 4), &w), TANDEM_ERROR_BUSY);
  assert_null(w.data);
  tandem_unmap(&r1);
  assert_null(r1.data);
  /* r2 still covers [256, 768): a write there is BUSY, outside it is fine. */
  TH_ASSERT_STATUS(tandem_try_map_write(th_view(b, 764, 8), &w), TANDEM_ERROR_BUSY);
  TH_ASSERT_OK(tandem_try_map_write(th_view(b, 768, 256), &w));
  tandem_unmap(&w);
  TH_ASSERT_OK(tandem_try_map_write(th_view(b, 0, 256), &w));
  tandem_unmap(&w);
  tandem_unmap(&r2);

  /* Now a write map of everything is allowed, and it is exclusive. */
  TH_ASSERT_OK(tandem_try_map_write(tandem_buffer_whole(b), &w));
  TH_ASSERT_U64_EQ(w.length, n * 4);
  tandem_map_t other;
  TH_ASSERT_STATUS(tandem_try_map_read(th_view(b, 4, 4), &other), TANDEM_ERROR_BUSY);
  TH_ASSERT_STATUS(tandem_map_read(th_view(b, 4, 4), &other), TANDEM_ERROR_BUSY);
  TH_ASSERT_STATUS(tandem_try_map_write(th_view(b, 8, 4), &other), TANDEM_ERROR_BUSY);
  TH_ASSERT_STATUS(tandem_map_write(th_view(b, 8, 4), &other), TANDEM_ERROR_BUSY);
  for (size_t i = 0; i < n; ++i) ((uint32_t *)w.data)[i] = data[i] ^ 0xFFFFFFFFu;
  tandem_unmap(&w);
  tandem_unmap(&w); /* a zeroed map: nothing happens */

  /* Two write maps of disjoint ranges coexist. */
  tandem_map_t w1, w2;
  TH_ASSERT_OK(tandem_try_map_write(th_view(b, 0, 2048), &w1));
  TH_ASSERT_OK(tandem_try_map_write(th_view(b, 2048, 2048), &w2));
  ((uint32_t *)w2.data)[0] = 0xC0FFEE00u; /* element 512 */
  tandem_unmap(&w1);
  tandem_unmap(&w2);

  uint32_t *back = malloc(n * 4);
  assert_non_null(back);
  th_read(b, 0, back, n * 4);
  for (size_t i = 0; i < n; ++i) data[i] ^= 0xFFFFFFFFu;
  data[512] = 0xC0FFEE00u;
  TH_ASSERT_U32_ARRAY(back, data, n, "after write maps");
  free(back);
  free(data);
  tandem_buffer_release(b);
}

int main(void) {
#define GPU_TEST(f) cmocka_unit_test_setup_teardown(f, th_setup_gpu, th_teardown_gpu)
  const struct CMUnitTest tests[] = {
      GPU_TEST(test_create_sizes),
      GPU_TEST(test_create_bad_sizes),
      GPU_TEST(test_create_bad_placements),
      GPU_TEST(test_host_visible_starts_zero),
      GPU_TEST(test_gpu_local_starts_zero),
      GPU_TEST(test_memory_types),
      GPU_TEST(test_views),
      GPU_TEST(test_statistics_and_refcount),
      cmocka_unit_test(test_budget_limits_allocations),
      cmocka_unit_test(test_budget_shared_by_two_runtimes),
      GPU_TEST(test_map_gpu_local_unsupported),
      GPU_TEST(test_map_read_shared_write_exclusive),
  };
  return TH_RUN_GROUP(tests);
}
