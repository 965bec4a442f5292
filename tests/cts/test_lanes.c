/* SPDX-License-Identifier: MIT */
/*
 * test_lanes.c — lanes as objects and native sessions (tandem.h, "Lanes" and
 * "Native sessions"): the lane table (built-in lanes, user lane ids taken and
 * given back, per-lane counters checked against the bytes a graph copies),
 * and sessions whose client writes tandem's buffers with its own Vulkan
 * submissions on tandem's device: earlier conflicting work drains before a
 * stage begins, a dispatch submitted during the stage waits for it on the GPU
 * and reads the client's bytes (checked against a CPU reference), host maps
 * and other sessions wait for it, and a failed stage quarantines the session,
 * poisons what it wrote and fails the work that waited for it. Every runtime
 * runs with the validation layer; any message fails the test. GPU-side waits
 * on imported timelines need VK_KHR_external_semaphore_fd (not on lavapipe):
 * test_interop's two-process timeline case runs them.
 */
#include <stdlib.h>
#include <string.h>

#include "harness_vk.h"
#include "tandem/tandem_vulkan.h"

#define WORDS 4096u /* 16 KiB buffers */

/* The client's own Vulkan: a command pool on the compute queue's family and
 * the harness's entry-point table, through tandem's loader. */
typedef struct client {
  tandem_runtime_t *rt;
  th_vk_fns_t vk;
  VkQueue queue;
  VkCommandPool pool;
} client_t;

static client_t client_open(tandem_runtime_t *rt) {
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  client_t c = {.rt = rt,
                .vk = th_vk_fns(&h),
                .queue = (VkQueue)h.lanes[TANDEM_LANE_COMPUTE].queue};
  c.pool = th_vk_command_pool(&c.vk, h.lanes[TANDEM_LANE_COMPUTE].queue_family);
  return c;
}

static void client_close(client_t *c) { c->vk.DestroyCommandPool(c->vk.device, c->pool, NULL); }

/* The client's synchronous work: fills |view| with |pattern| on the compute
 * queue (under tandem's queue lock) and waits for it with a fence. */
static void client_fill(client_t *c, tandem_view_t view, uint32_t pattern) {
  tandem_vulkan_view_t vv;
  TH_ASSERT_OK(tandem_view_vulkan_buffer(view, &vv));
  VkCommandBuffer cb = th_vk_begin(&c->vk, c->pool);
  c->vk.CmdFillBuffer(cb, (VkBuffer)vv.buffer, vv.offset, vv.range, pattern);
  th_vk_submit_wait(&c->vk, c->rt, TANDEM_LANE_COMPUTE, c->queue, cb);
  c->vk.FreeCommandBuffers(c->vk.device, c->pool, 1, &cb);
}

static tandem_lane_info_t lane_info(tandem_runtime_t *rt, int lane) {
  tandem_lane_info_t info;
  memset(&info, 0xEE, sizeof info);
  info.struct_size = sizeof info;
  TH_ASSERT_OK(tandem_runtime_lane_info(rt, lane, &info));
  return info;
}

/* add_one over |x| then a copy of |x| to |host|: what a later graph does
 * with the bytes a session stage wrote. */
static tandem_exec_t *add_one_then_copy(tandem_runtime_t *rt, tandem_kernel_t *k,
                                        tandem_buffer_t *x, tandem_buffer_t *host) {
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(x), WORDS));
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(x), tandem_buffer_whole(host),
                                     TANDEM_LANE_AUTO));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  return e;
}

/*-------------------------------------------------------------- the table --*/

/* Built-in lanes are lanes 0..3 with fixed kinds and names; per-lane copied
 * bytes and submissions follow what a graph does; a session takes the first
 * user id and gives it back. */
static void test_lane_table(void **state) {
  tandem_runtime_t *rt = *state;
  TH_ASSERT_U64_EQ(tandem_runtime_lane_count(rt), TANDEM_LANE_COUNT);
  TH_ASSERT_U64_EQ(tandem_runtime_lane_count(NULL), 0);
  static const char *const names[] = {"upload", "compute", "download", "npu"};
  for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
    tandem_lane_info_t li = lane_info(rt, l);
    assert_int_equal(li.kind, l == TANDEM_LANE_NPU ? TANDEM_LANE_KIND_NPU_THREAD
                                                   : TANDEM_LANE_KIND_GPU_QUEUE);
    assert_string_equal(li.name, names[l]);
  }
  for (int l = TANDEM_LANE_COUNT; l < TANDEM_MAX_LANES; l++) {
    tandem_lane_info_t li = lane_info(rt, l);
    assert_int_equal(li.kind, TANDEM_LANE_KIND_UNUSED);
    TH_ASSERT_U64_EQ(li.submissions, 0);
  }
  tandem_lane_info_t li;
  tandem_lane_info_init(&li);
  TH_ASSERT_STATUS_MSG(tandem_runtime_lane_info(rt, TANDEM_MAX_LANE_IDS, &li),
                       TANDEM_ERROR_INVALID_ARGUMENT, "lane 17");
  /* A one-GPU runtime: the ids of other GPUs' lanes are UNUSED. */
  TH_ASSERT_STATUS(tandem_runtime_lane_info(rt, tandem_gpu_lane(1, TANDEM_LANE_COMPUTE), &li),
                   TANDEM_OK);
  assert_int_equal(li.kind, TANDEM_LANE_KIND_UNUSED);
  TH_ASSERT_STATUS(tandem_runtime_lane_info(rt, 0, NULL), TANDEM_ERROR_INVALID_ARGUMENT);

  /* Up on the upload lane, back on the download lane: both lanes count the
   * bytes and the submissions, the compute lane neither. */
  tandem_buffer_t *h = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *d = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *back = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(h), tandem_buffer_whole(d), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(d), tandem_buffer_whole(back),
                                     TANDEM_LANE_AUTO));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_lane_info_t up0 = lane_info(rt, TANDEM_LANE_UPLOAD);
  tandem_lane_info_t down0 = lane_info(rt, TANDEM_LANE_DOWNLOAD);
  tandem_lane_info_t comp0 = lane_info(rt, TANDEM_LANE_COMPUTE);
  for (int run = 0; run < 3; run++) {
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    uint64_t values[TANDEM_LANE_COUNT];
    TH_ASSERT_OK(tandem_completion_lane_values(c, values));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    /* A lane's value now covers the submission's value on it. */
    assert_true(lane_info(rt, TANDEM_LANE_UPLOAD).value >= values[TANDEM_LANE_UPLOAD]);
    assert_true(lane_info(rt, TANDEM_LANE_DOWNLOAD).value >= values[TANDEM_LANE_DOWNLOAD]);
  }
  tandem_lane_info_t up1 = lane_info(rt, TANDEM_LANE_UPLOAD);
  tandem_lane_info_t down1 = lane_info(rt, TANDEM_LANE_DOWNLOAD);
  tandem_lane_info_t comp1 = lane_info(rt, TANDEM_LANE_COMPUTE);
  TH_ASSERT_U64_EQ(up1.copied_bytes - up0.copied_bytes, 3ull * WORDS * 4);
  TH_ASSERT_U64_EQ(down1.copied_bytes - down0.copied_bytes, 3ull * WORDS * 4);
  TH_ASSERT_U64_EQ(comp1.copied_bytes - comp0.copied_bytes, 0);
  TH_ASSERT_U64_EQ(up1.submissions - up0.submissions, 3);
  TH_ASSERT_U64_EQ(down1.submissions - down0.submissions, 3);
  TH_ASSERT_U64_EQ(comp1.submissions - comp0.submissions, 0);
  TH_ASSERT_U64_EQ(th_stats(rt).copied_bytes, 6ull * WORDS * 4);
  tandem_exec_release(e);
  tandem_graph_release(g);

  /* User ids: sessions take 4, 5, ...; a given-back id is reused first. */
  tandem_session_t *s1 = NULL, *s2 = NULL;
  TH_ASSERT_OK(tandem_session_create(rt, "decoder", &s1));
  TH_ASSERT_OK(tandem_session_create(rt, NULL, &s2));
  assert_int_equal(tandem_session_lane(s1), TANDEM_LANE_COUNT);
  assert_int_equal(tandem_session_lane(s2), TANDEM_LANE_COUNT + 1);
  TH_ASSERT_U64_EQ(tandem_runtime_lane_count(rt), TANDEM_LANE_COUNT + 2);
  li = lane_info(rt, TANDEM_LANE_COUNT);
  assert_int_equal(li.kind, TANDEM_LANE_KIND_SESSION);
  assert_string_equal(li.name, "decoder");
  assert_string_equal(lane_info(rt, TANDEM_LANE_COUNT + 1).name, "session 5");
  tandem_session_destroy(s1);
  assert_int_equal(lane_info(rt, TANDEM_LANE_COUNT).kind, TANDEM_LANE_KIND_UNUSED);
  TH_ASSERT_U64_EQ(tandem_runtime_lane_count(rt), TANDEM_LANE_COUNT + 2);
  TH_ASSERT_OK(tandem_session_create(rt, "again", &s1));
  assert_int_equal(tandem_session_lane(s1), TANDEM_LANE_COUNT);
  tandem_session_destroy(s2);
  tandem_session_destroy(s1);
  TH_ASSERT_U64_EQ(tandem_runtime_lane_count(rt), TANDEM_LANE_COUNT);
  tandem_buffer_release(h);
  tandem_buffer_release(d);
  tandem_buffer_release(back);
}

/*------------------------------------------------------------- sessions --*/

/* The whole contract on one buffer: an earlier tandem fill drains before the
 * stage begins; the client fills the buffer with its own submission; a
 * dispatch (add one) and copy submitted during the stage wait for it on the
 * GPU and finish only after end; the bytes are the client's plus one. */
static void test_session_orders_later_work(void **state) {
  tandem_runtime_t *rt = *state;
  client_t cl = client_open(rt);
  tandem_kernel_t *k = th_add_one_kernel(rt, WORDS);
  tandem_buffer_t *x = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_exec_t *later = add_one_then_copy(rt, k, x, out);
  tandem_session_t *s = NULL;
  TH_ASSERT_OK(tandem_session_create(rt, "client", &s));
  tandem_lane_t lane = tandem_session_lane(s);
  th_rng_t rng = th_rng(7);
  uint32_t *expect = malloc(WORDS * 4), *got = malloc(WORDS * 4);
  assert_non_null(expect);
  assert_non_null(got);

  for (uint32_t stage = 1; stage <= 3; stage++) {
    /* Earlier tandem work on the buffer, still in flight when begin is
     * called (the fill's pattern is overwritten by the client). */
    tandem_graph_t *g0 = th_graph(rt);
    TH_ASSERT_OK(tandem_graph_add_fill(g0, tandem_buffer_whole(x), 5, TANDEM_LANE_AUTO));
    tandem_exec_t *e0 = NULL;
    TH_ASSERT_OK(tandem_graph_prepare(g0, &e0));
    tandem_graph_release(g0);
    tandem_completion_t *c0 = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e0, &c0));
    tandem_session_access_t acc = {tandem_buffer_whole(x), TANDEM_ACCESS_WRITE};
    TH_ASSERT_OK(tandem_session_begin(s, &acc, 1, UINT64_MAX));
    assert_true(tandem_completion_is_complete(c0)); /* drained before the stage */
    TH_ASSERT_OK(tandem_completion_wait(c0));
    tandem_completion_release(c0);
    tandem_exec_release(e0);

    uint32_t pattern = th_rand_u32(&rng) & 0x7FFFFFFFu;
    client_fill(&cl, tandem_buffer_whole(x), pattern);
    /* Submitted during the stage: queued at once, waiting on the GPU for
     * the session's value, so it cannot overtake the stage. */
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(later, &c));
    assert_false(tandem_completion_is_complete(c));
    TH_ASSERT_STATUS(tandem_completion_wait_timeout(c, 20ull * 1000000u), TANDEM_ERROR_TIMEOUT);
    TH_ASSERT_U64_EQ(lane_info(rt, lane).value, stage - 1);
    TH_ASSERT_OK(tandem_session_end(s, TANDEM_OK));
    TH_ASSERT_U64_EQ(lane_info(rt, lane).value, stage);
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    for (uint32_t i = 0; i < WORDS; i++) expect[i] = pattern + 1;
    th_read(out, 0, got, WORDS * 4);
    TH_ASSERT_U32_ARRAY(got, expect, WORDS, "the client's bytes plus one");
  }
  tandem_lane_info_t li = lane_info(rt, lane);
  TH_ASSERT_U64_EQ(li.submissions, 3);
  TH_ASSERT_STATUS_MSG(tandem_session_end(s, TANDEM_OK), TANDEM_ERROR_INVALID_ARGUMENT,
                       "no stage open");
  free(expect);
  free(got);
  tandem_session_destroy(s);
  tandem_exec_release(later);
  tandem_buffer_release(x);
  tandem_buffer_release(out);
  tandem_kernel_release(k);
  client_close(&cl);
}

/* While a stage is open, host maps of its bytes and another session's
 * conflicting begin wait for it (try: BUSY; with a timeout: TIMEOUT), and a
 * disjoint range does not. */
static void test_session_blocks_host_and_sessions(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *b = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_session_t *s1 = NULL, *s2 = NULL;
  TH_ASSERT_OK(tandem_session_create(rt, "first", &s1));
  TH_ASSERT_OK(tandem_session_create(rt, "second", &s2));
  tandem_session_access_t half = {th_view(b, 0, WORDS * 2), TANDEM_ACCESS_READ_WRITE};
  TH_ASSERT_OK(tandem_session_begin(s1, &half, 1, 0));
  tandem_map_t m;
  TH_ASSERT_STATUS(tandem_try_map_read(th_view(b, 0, 16), &m), TANDEM_ERROR_BUSY);
  TH_ASSERT_OK(tandem_try_map_read(th_view(b, WORDS * 2, 16), &m)); /* the other half */
  tandem_unmap(&m);
  tandem_session_access_t read = {th_view(b, 64, 64), TANDEM_ACCESS_READ};
  TH_ASSERT_STATUS_MSG(tandem_session_begin(s2, &read, 1, 10ull * 1000000u), TANDEM_ERROR_TIMEOUT,
                       "no stage was begun");
  TH_ASSERT_STATUS_MSG(tandem_session_begin(s1, &half, 1, 0), TANDEM_ERROR_INVALID_ARGUMENT,
                       "already has a stage open");
  TH_ASSERT_OK(tandem_session_end(s1, TANDEM_OK));
  TH_ASSERT_OK(tandem_session_begin(s2, &read, 1, 0));
  TH_ASSERT_OK(tandem_try_map_read(th_view(b, 0, 16), &m)); /* two readers */
  tandem_unmap(&m);
  TH_ASSERT_OK(tandem_session_end(s2, TANDEM_OK));
  tandem_session_destroy(s1);
  tandem_session_destroy(s2);
  tandem_buffer_release(b);
}

/* A stage that ends with a failure: the submission that waited for it ends
 * with FAILED_DEPENDENCY, the session is quarantined, what it wrote is
 * poisoned until rewritten; a new session's stage that rewrites all of it
 * clears that. Destroying a session with a stage open cancels the stage. */
static void test_session_failure_quarantines(void **state) {
  tandem_runtime_t *rt = *state;
  client_t cl = client_open(rt);
  tandem_kernel_t *k = th_add_one_kernel(rt, WORDS);
  tandem_buffer_t *x = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out = th_buffer(rt, WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_exec_t *later = add_one_then_copy(rt, k, x, out);
  tandem_session_t *s = NULL;
  TH_ASSERT_OK(tandem_session_create(rt, "flaky", &s));
  tandem_session_access_t acc = {tandem_buffer_whole(x), TANDEM_ACCESS_WRITE};
  TH_ASSERT_OK(tandem_session_begin(s, &acc, 1, UINT64_MAX));
  client_fill(&cl, th_view(x, 0, 64), 1); /* half-done, then the client fails */
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(later, &c));
  TH_ASSERT_OK(tandem_session_end(s, TANDEM_ERROR_INTERNAL));
  TH_ASSERT_STATUS(tandem_completion_wait(c), TANDEM_ERROR_FAILED_DEPENDENCY);
  tandem_completion_release(c);
  TH_ASSERT_STATUS_MSG(tandem_session_begin(s, &acc, 1, 0), TANDEM_ERROR_FAILED_DEPENDENCY,
                       "quarantined");
  /* Poisoned (by the stage, then by the dependent that failed with it):
   * work that reads it is refused at once. */
  TH_ASSERT_STATUS_MSG(tandem_exec_submit(later, &c), TANDEM_ERROR_FAILED_DEPENDENCY,
                       "written by work that failed");
  tandem_session_destroy(s);

  /* A new session rewrites every byte: the buffer is good again. */
  TH_ASSERT_OK(tandem_session_create(rt, "fresh", &s));
  TH_ASSERT_OK(tandem_session_begin(s, &acc, 1, UINT64_MAX));
  client_fill(&cl, tandem_buffer_whole(x), 41);
  TH_ASSERT_OK(tandem_session_end(s, TANDEM_OK));
  TH_ASSERT_OK(tandem_exec_submit(later, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  uint32_t *got = malloc(WORDS * 4);
  assert_non_null(got);
  th_read(out, 0, got, WORDS * 4);
  TH_ASSERT_U32_FILL(got, 42, WORDS, "the new stage's bytes plus one");
  free(got);

  /* Destroyed with a stage open: the waiting submission fails, nothing hangs. */
  TH_ASSERT_OK(tandem_session_begin(s, &acc, 1, UINT64_MAX));
  TH_ASSERT_OK(tandem_exec_submit(later, &c));
  tandem_session_destroy(s);
  TH_ASSERT_STATUS(tandem_completion_wait(c), TANDEM_ERROR_FAILED_DEPENDENCY);
  tandem_completion_release(c);
  tandem_exec_release(later);
  tandem_buffer_release(x);
  tandem_buffer_release(out);
  tandem_kernel_release(k);
  client_close(&cl);
}

/* Every user id taken: the next session is refused with BUSY, naming the
 * limit; imported timelines are not on lavapipe, so submit_waiting refuses
 * any lane that is not an external one. */
static void test_user_lane_limits(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_session_t *s[TANDEM_MAX_LANES - TANDEM_LANE_COUNT];
  for (int i = 0; i < TANDEM_MAX_LANES - TANDEM_LANE_COUNT; i++)
    TH_ASSERT_OK(tandem_session_create(rt, NULL, &s[i]));
  tandem_session_t *more = NULL;
  TH_ASSERT_STATUS_MSG(tandem_session_create(rt, NULL, &more), TANDEM_ERROR_BUSY,
                       "all 4 user lanes");
  assert_null(more);
  TH_ASSERT_U64_EQ(tandem_runtime_lane_count(rt), TANDEM_MAX_LANES);

  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(b), 3, TANDEM_LANE_AUTO));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_completion_t *c = NULL;
  tandem_lane_wait_t w = {tandem_session_lane(s[0]), 1};
  TH_ASSERT_STATUS_MSG(tandem_exec_submit_waiting(e, &w, 1, &c), TANDEM_ERROR_INVALID_ARGUMENT,
                       "not an external lane");
  w.lane = TANDEM_LANE_COMPUTE;
  TH_ASSERT_STATUS_MSG(tandem_exec_submit_waiting(e, &w, 1, &c), TANDEM_ERROR_INVALID_ARGUMENT,
                       "lane 1");
  assert_null(c);
  /* No waits at all: a plain submission. */
  TH_ASSERT_OK(tandem_exec_submit_waiting(e, NULL, 0, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  uint32_t got[1024];
  th_read(b, 0, got, sizeof got);
  TH_ASSERT_U32_FILL(got, 3, 1024, "the fill submitted without waits");
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(b);
  for (int i = 0; i < TANDEM_MAX_LANES - TANDEM_LANE_COUNT; i++) tandem_session_destroy(s[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_lane_table, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_session_orders_later_work, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_session_blocks_host_and_sessions, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_session_failure_quarantines, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_user_lane_limits, th_setup_gpu, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
