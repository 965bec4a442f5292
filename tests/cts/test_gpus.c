/* SPDX-License-Identifier: MIT */
/*
 * test_gpus.c — several GPUs in one runtime (the runtime option gpus).
 *
 * Each case runs on two pairs: two host GPUs (always; their ordering checker
 * on, so a dependency that crosses GPUs without a wait shows up as an
 * unordered access), and lavapipe (or whatever Vulkan device 0 is) beside a
 * host GPU, two GPUs of different drivers whose lanes meet only through the
 * relay (core/relay.c), with validation on; and where the loader reports two
 * Vulkan devices (the H200 beside lavapipe, or lavapipe named by two ICD
 * files: CTest's test_gpus-lavapipe-twice), Vulkan devices 0 and 1. A pair
 * whose devices are absent is skipped, not failed. Every byte that crosses is compared with what the
 * host wrote.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "tandem/tandem_vulkan.h"
#include "tandem/tandem_testing.h"

#define WORDS 4096u
#define BYTES (WORDS * 4u)

typedef struct pair {
  const char *name;
  tandem_gpu_choice_t gpus[2];
} pair_t;

static const pair_t k_host_host = {"host + host", {{"host", 0}, {"host", 1}}};
static const pair_t k_vulkan_host = {"vulkan + host", {{"vulkan", 0}, {"host", 0}}};
/* The host GPU producing for a Vulkan device: the relay host-signals the
 * Vulkan device's proxy timelines. */
static const pair_t k_host_vulkan = {"host + vulkan", {{"host", 0}, {"vulkan", 0}}};
/* Two Vulkan devices (the H200 beside lavapipe, or two GPUs): run where the
 * loader reports at least two, skipped elsewhere. */
static const pair_t k_vulkan_vulkan = {"vulkan + vulkan", {{"vulkan", 0}, {"vulkan", 1}}};

/* Whether the Vulkan loader reports at least |n| devices. */
static bool vulkan_devices(uint32_t n) {
  tandem_runtime_t *rt = NULL;
  uint32_t count = 0;
  if (tandem_runtime_create(NULL, &rt) != TANDEM_OK) return false;
  if (tandem_runtime_gpu_count(rt, &count) != TANDEM_OK) count = 0;
  tandem_runtime_destroy(rt);
  return count >= n;
}

/* A runtime of |p|'s two GPUs, both opened; NULL (and a skip) when the
 * Vulkan one is absent. */
static tandem_runtime_t *pair_runtime(const pair_t *p) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  th_options_validated(&o);
  o.gpu_count = 2;
  memcpy(o.gpus, p->gpus, sizeof p->gpus);
  tandem_runtime_t *rt = NULL;
  TH_ASSERT_OK(tandem_runtime_create(&o, &rt));
  tandem_status_t s = tandem_runtime_open_gpu_at(rt, 0);
  if (s == TANDEM_ERROR_NO_DEVICE) {
    tandem_runtime_destroy(rt);
    return NULL;
  }
  TH_ASSERT_OK(s);
  TH_ASSERT_OK(tandem_runtime_open_gpu_at(rt, 1));
  return rt;
}

static void fill_words(tandem_buffer_t *b, uint32_t seed) {
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_write(tandem_buffer_whole(b), &m));
  uint32_t *w = m.data;
  for (uint32_t i = 0; i < WORDS; i++) w[i] = seed * 2654435761u + i;
  tandem_unmap(&m);
}

static void check_words(tandem_buffer_t *b, uint32_t seed, const char *what) {
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_read(tandem_buffer_whole(b), &m));
  const uint32_t *w = m.data;
  for (uint32_t i = 0; i < WORDS; i++)
    if (w[i] != seed * 2654435761u + i)
      fail_msg("%s: word %u is %08x, the host wrote %08x", what, i, w[i], seed * 2654435761u + i);
  tandem_unmap(&m);
}

/* host-visible A (GPU 0) -> device A (GPU 0) -> device B (GPU 1) ->
 * host-visible B (GPU 1), replayed with new bytes each time, and twice in
 * flight at once with the same bytes. */
static void run_crossing(const pair_t *p) {
  tandem_runtime_t *rt = pair_runtime(p);
  if (!rt) {
    fprintf(stderr, "test_gpus: %s: no Vulkan device, skipped\n", p->name);
    return;
  }
  assert_int_equal(tandem_runtime_gpus(rt), 2);
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_describe(rt, 1, &info));
  assert_string_equal(tandem_runtime_gpu_backend(rt, 1), p->gpus[1].backend);
  if (!strcmp(p->gpus[1].backend, "host")) assert_non_null(strstr(info.name, "host GPU"));
  fprintf(stderr, "test_gpus: %s: GPU 1 is %s\n", p->name, info.name);

  tandem_buffer_t *ha, *da, *db, *hb;
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 0, BYTES, TANDEM_PLACEMENT_HOST_VISIBLE, &ha));
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 0, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &da));
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 1, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &db));
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 1, BYTES, TANDEM_PLACEMENT_HOST_VISIBLE, &hb));
  assert_int_equal(tandem_buffer_gpu(db), 1);
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(ha), tandem_buffer_whole(da), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(da), tandem_buffer_whole(db), TANDEM_LANE_AUTO));
  assert_int_equal(tandem_graph_node_count(g), 3); /* the crossing takes two nodes */
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(db), tandem_buffer_whole(hb), TANDEM_LANE_AUTO));
  tandem_exec_t *e;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  for (uint32_t round = 1; round <= 8; round++) {
    fill_words(ha, round);
    tandem_completion_t *c;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    check_words(hb, round, p->name);
  }
  /* Two in flight: the second's download into the staging waits for the
   * first's upload from it (write after read across GPUs). */
  fill_words(ha, 99);
  tandem_completion_t *c1, *c2;
  TH_ASSERT_OK(tandem_exec_submit(e, &c1));
  TH_ASSERT_OK(tandem_exec_submit(e, &c2));
  TH_ASSERT_OK(tandem_completion_wait(c2));
  TH_ASSERT_OK(tandem_completion_wait(c1));
  tandem_completion_release(c1);
  tandem_completion_release(c2);
  check_words(hb, 99, p->name);

  /* The lanes of GPU 1 are lanes of the runtime. */
  tandem_lane_info_t li;
  tandem_lane_info_init(&li);
  TH_ASSERT_OK(tandem_runtime_lane_info(rt, tandem_gpu_lane(1, TANDEM_LANE_UPLOAD), &li));
  assert_int_equal(li.kind, TANDEM_LANE_KIND_GPU_QUEUE);
  assert_string_equal(li.name, "gpu1.upload");
  assert_true(li.submissions >= 10);
  assert_true(li.copied_bytes >= 10u * BYTES);
  assert_int_equal(tandem_runtime_lane_count(rt),
                   (uint32_t)tandem_gpu_lane(1, TANDEM_LANE_DOWNLOAD) + 1);

  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(ha);
  tandem_buffer_release(da);
  tandem_buffer_release(db);
  tandem_buffer_release(hb);
  th_runtime_destroy(rt);
}

/* Several crossings in one graph, each chunk host-visible (GPU 0) -> GPU 0
 * -> GPU 1 -> host-visible (GPU 1): GPU 1's uploads wait on one proxy
 * timeline for four values at once, and the relay signals it as GPU 0's
 * downloads advance, often past several at a time. Debian 12's validation
 * layer reported such a jump as a pending host signal on the next one
 * (relay.c); with the layer on, 0 messages are allowed. */
static void run_split(const pair_t *p) {
  enum { CHUNKS = 4 };
  tandem_runtime_t *rt = pair_runtime(p);
  if (!rt) return;
  tandem_buffer_t *in[CHUNKS], *a[CHUNKS], *b[CHUNKS], *out[CHUNKS];
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  for (int k = 0; k < CHUNKS; k++) {
    TH_ASSERT_OK(tandem_buffer_create_on(rt, 0, BYTES, TANDEM_PLACEMENT_HOST_VISIBLE, &in[k]));
    TH_ASSERT_OK(tandem_buffer_create_on(rt, 0, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &a[k]));
    TH_ASSERT_OK(tandem_buffer_create_on(rt, 1, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &b[k]));
    TH_ASSERT_OK(tandem_buffer_create_on(rt, 1, BYTES, TANDEM_PLACEMENT_HOST_VISIBLE, &out[k]));
    TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(in[k]), tandem_buffer_whole(a[k]),
                                       TANDEM_LANE_AUTO));
    TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(a[k]), tandem_buffer_whole(b[k]),
                                       TANDEM_LANE_AUTO));
    TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(b[k]), tandem_buffer_whole(out[k]),
                                       TANDEM_LANE_AUTO));
  }
  tandem_exec_t *e;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  for (uint32_t round = 1; round <= 16; round++) {
    for (int k = 0; k < CHUNKS; k++) fill_words(in[k], 100 * round + (uint32_t)k);
    tandem_completion_t *c;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    for (int k = 0; k < CHUNKS; k++) check_words(out[k], 100 * round + (uint32_t)k, p->name);
  }
  tandem_exec_release(e);
  tandem_graph_release(g);
  for (int k = 0; k < CHUNKS; k++) {
    tandem_buffer_release(in[k]);
    tandem_buffer_release(a[k]);
    tandem_buffer_release(b[k]);
    tandem_buffer_release(out[k]);
  }
  th_runtime_destroy(rt);
}

static void test_split_host_vulkan(void **state) {
  (void)state;
  run_split(&k_host_vulkan);
}

static void test_split_vulkan_host(void **state) {
  (void)state;
  run_split(&k_vulkan_host);
}

/* A graph on GPU 1 that reads what another graph's crossing wrote waits for
 * it (the tracker across submissions, through the relay), and fails with it. */
static void run_dependent(const pair_t *p) {
  tandem_runtime_t *rt = pair_runtime(p);
  if (!rt) return;
  tandem_buffer_t *ha, *db, *hb;
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 0, BYTES, TANDEM_PLACEMENT_HOST_VISIBLE, &ha));
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 1, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &db));
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 1, BYTES, TANDEM_PLACEMENT_HOST_VISIBLE, &hb));
  tandem_graph_t *g1, *g2;
  TH_ASSERT_OK(tandem_graph_create(rt, &g1));
  TH_ASSERT_OK(tandem_graph_add_copy(g1, tandem_buffer_whole(ha), tandem_buffer_whole(db),
                                     TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_create(rt, &g2));
  TH_ASSERT_OK(tandem_graph_add_copy(g2, tandem_buffer_whole(db), tandem_buffer_whole(hb),
                                     TANDEM_LANE_AUTO));
  tandem_exec_t *e1, *e2;
  TH_ASSERT_OK(tandem_graph_prepare(g1, &e1));
  TH_ASSERT_OK(tandem_graph_prepare(g2, &e2));
  for (uint32_t round = 1; round <= 4; round++) {
    fill_words(ha, 40 + round);
    tandem_completion_t *c1, *c2;
    TH_ASSERT_OK(tandem_exec_submit(e1, &c1));
    TH_ASSERT_OK(tandem_exec_submit(e2, &c2)); /* no host wait between them */
    TH_ASSERT_OK(tandem_completion_wait(c2));
    tandem_completion_release(c2);
    tandem_completion_release(c1);
    check_words(hb, 40 + round, p->name);
  }
  /* A failed writer on GPU 0's side fails the reader on GPU 1. */
  TH_ASSERT_OK(tandem_test_control(rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION));
  tandem_completion_t *c1, *c2;
  TH_ASSERT_OK(tandem_exec_submit(e1, &c1));
  TH_ASSERT_OK(tandem_exec_submit(e2, &c2));
  TH_ASSERT_STATUS(tandem_completion_wait(c2), TANDEM_ERROR_FAILED_DEPENDENCY);
  TH_ASSERT_STATUS(tandem_completion_wait(c1), TANDEM_ERROR_INTERNAL);
  tandem_completion_release(c1);
  tandem_completion_release(c2);
  tandem_exec_release(e1);
  tandem_exec_release(e2);
  tandem_graph_release(g1);
  tandem_graph_release(g2);
  tandem_buffer_release(ha);
  tandem_buffer_release(db);
  tandem_buffer_release(hb);
  th_runtime_destroy(rt);
}

/* How work crosses the pair, as tandem_runtime_gpu_pair reports it: the
 * same either way round, the staged copy and the relay named, and the reason
 * that fits the pair (the host GPU, two drivers, or two devices of one). */
static void check_pair_info(tandem_runtime_t *rt, const pair_t *p) {
  tandem_gpu_pair_info_t fwd, back;
  tandem_gpu_pair_info_init(&fwd);
  tandem_gpu_pair_info_init(&back);
  TH_ASSERT_OK(tandem_runtime_gpu_pair(rt, 0, 1, &fwd));
  TH_ASSERT_OK(tandem_runtime_gpu_pair(rt, 1, 0, &back));
  fprintf(stderr, "test_gpus: %s: %s\n", p->name, fwd.reason);
  assert_true(fwd.can_copy);
  assert_int_equal(fwd.copy, TANDEM_SHARING_STAGED);
  assert_false(fwd.waits_on_gpu);
  assert_int_equal(back.copy, fwd.copy);
  assert_non_null(strstr(fwd.reason, "staged through host memory both import"));
  assert_non_null(strstr(fwd.reason, "waits relayed by the host"));
  tandem_device_info_t i0, i1;
  tandem_device_info_init(&i0);
  tandem_device_info_init(&i1);
  TH_ASSERT_OK(tandem_runtime_gpu_describe(rt, 0, &i0));
  TH_ASSERT_OK(tandem_runtime_gpu_describe(rt, 1, &i1));
  assert_non_null(strstr(fwd.reason, i0.name));
  assert_non_null(strstr(fwd.reason, i1.name));
  if (!strcmp(p->gpus[0].backend, "host")) {
    assert_non_null(strstr(fwd.reason, "both are host GPUs"));
  } else if (!strcmp(p->gpus[1].backend, "host")) {
    assert_non_null(strstr(fwd.reason, "GPU 1 is the host GPU"));
  } else if (memcmp(i0.driver_uuid, i1.driver_uuid, 16) != 0) {
    assert_non_null(strstr(fwd.reason, "two drivers"));
  } else if (memcmp(i0.device_uuid, i1.device_uuid, 16) != 0) {
    assert_non_null(strstr(fwd.reason, "two devices of one driver"));
  } else { /* lavapipe listed by two ICD files: one device twice */
    assert_non_null(strstr(fwd.reason, "one device twice"));
  }
}

/* GPU 1's own Vulkan handles and queue lock (tandem_vulkan.h): the lock
 * taken with GPU 1's lane id holds back GPU 1's work (on the host GPU, the
 * job's commands; on Vulkan, the submission). */
static void check_gpu1_handles(tandem_runtime_t *rt, const pair_t *p) {
  tandem_vulkan_handles_t h0, h0_at, h1;
  tandem_vulkan_handles_init(&h0);
  tandem_vulkan_handles_init(&h0_at);
  tandem_vulkan_handles_init(&h1);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h0));
  TH_ASSERT_OK(tandem_runtime_vulkan_handles_at(rt, 0, &h0_at));
  assert_ptr_equal(h0.device, h0_at.device);
  assert_ptr_equal(h0.lanes[TANDEM_LANE_COMPUTE].queue, h0_at.lanes[TANDEM_LANE_COMPUTE].queue);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles_at(rt, 1, &h1));
  if (strcmp(p->gpus[1].backend, "host") != 0) {
    assert_non_null(h1.device);
    assert_ptr_not_equal(h1.device, h0.device);
    for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) assert_non_null(h1.lanes[l].queue);
  } else {
    assert_null(h1.device); /* the host GPU has no Vulkan objects */
  }
  TH_ASSERT_STATUS_MSG(tandem_runtime_vulkan_handles_at(rt, 2, &h1), TANDEM_ERROR_OUT_OF_RANGE,
                       "GPU 2");

  tandem_buffer_t *b;
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 1, BYTES, TANDEM_PLACEMENT_HOST_VISIBLE, &b));
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(b), 0x5eed, TANDEM_LANE_COMPUTE));
  tandem_exec_t *e;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  int lane = tandem_gpu_lane(1, TANDEM_LANE_COMPUTE);
  tandem_runtime_queue_lock(rt, lane);
  th_bg_submit_t t;
  th_bg_submit_start(&t, e);
  struct timespec pause = {0, 100 * 1000 * 1000};
  nanosleep(&pause, NULL);
  assert_int_equal(atomic_load(&t.finished), 0); /* GPU 1's queue is held */
  tandem_runtime_queue_unlock(rt, lane);
  TH_ASSERT_OK(th_bg_submit_join(&t));
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_read(tandem_buffer_whole(b), &m));
  const uint32_t *w = m.data;
  for (uint32_t i = 0; i < WORDS; i++)
    if (w[i] != 0x5eed) fail_msg("%s: GPU 1's fill: word %u is %08x", p->name, i, w[i]);
  tandem_unmap(&m);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(b);
}

static void run_pair_info(const pair_t *p) {
  tandem_runtime_t *rt = pair_runtime(p);
  if (!rt) return;
  check_pair_info(rt, p);
  check_gpu1_handles(rt, p);
  th_runtime_destroy(rt);
}

static void test_pair_info_host(void **state) {
  (void)state;
  run_pair_info(&k_host_host);
}

static void test_pair_info_vulkan_host(void **state) {
  (void)state;
  run_pair_info(&k_vulkan_host);
}

static void test_crossing_host(void **state) {
  (void)state;
  run_crossing(&k_host_host);
}

static void test_crossing_vulkan_host(void **state) {
  (void)state;
  run_crossing(&k_vulkan_host);
}

static void test_dependent_host(void **state) {
  (void)state;
  run_dependent(&k_host_host);
}

static void test_dependent_vulkan_host(void **state) {
  (void)state;
  run_dependent(&k_vulkan_host);
}

/* What is refused, each with the thing and the fix named. */
static void test_crossing_vulkan_vulkan(void **state) {
  (void)state;
  if (!vulkan_devices(2)) {
    /* CTest's test_gpus-lavapipe-twice lists lavapipe twice: two it must find. */
    if (getenv("TANDEM_TEST_GPUS_TWO"))
      fail_msg("TANDEM_TEST_GPUS_TWO is set but the loader reports fewer than two Vulkan "
               "devices (VK_DRIVER_FILES=%s)",
               getenv("VK_DRIVER_FILES") ? getenv("VK_DRIVER_FILES") : "unset");
    fprintf(stderr, "test_gpus: vulkan + vulkan: fewer than two Vulkan devices, skipped\n");
    return;
  }
  run_pair_info(&k_vulkan_vulkan);
  run_crossing(&k_vulkan_vulkan);
  run_dependent(&k_vulkan_vulkan);
  run_split(&k_vulkan_vulkan);
}

static void test_refusals(void **state) {
  (void)state;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  th_options_validated(&o);
  tandem_runtime_t *rt = NULL;
  o.gpu_count = TANDEM_MAX_GPUS + 1;
  TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT,
                       "at most 4 GPUs");
  o.gpu_count = 2;
  memcpy(o.gpus, k_host_host.gpus, sizeof k_host_host.gpus);
  o.gpu_backend = "host";
  TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT,
                       "both choose GPU 0");
  o.gpu_backend = NULL;
  o.gpus[1].index = 0;
  TH_ASSERT_STATUS_MSG(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT,
                       "GPUs 0 and 1 are both device 0");
  o.gpus[1].index = 1;
  TH_ASSERT_OK(tandem_runtime_create(&o, &rt));
  tandem_buffer_t *b = NULL;
  TH_ASSERT_STATUS_MSG(tandem_buffer_create_on(rt, 2, 64, TANDEM_PLACEMENT_GPU_LOCAL, &b),
                       TANDEM_ERROR_OUT_OF_RANGE, "GPU 2: the runtime has 2 GPUs");
  TH_ASSERT_STATUS_MSG(tandem_runtime_open_gpu_at(rt, 7), TANDEM_ERROR_OUT_OF_RANGE, "GPU 7");
  tandem_gpu_pair_info_t pi;
  tandem_gpu_pair_info_init(&pi);
  TH_ASSERT_STATUS_MSG(tandem_runtime_gpu_pair(rt, 1, 1, &pi), TANDEM_ERROR_INVALID_ARGUMENT,
                       "GPU 1 paired with itself");
  TH_ASSERT_STATUS_MSG(tandem_runtime_gpu_pair(rt, 0, 3, &pi), TANDEM_ERROR_OUT_OF_RANGE, "GPU 3");
  TH_ASSERT_STATUS_MSG(tandem_runtime_gpu_pair(rt, 0, 1, NULL), TANDEM_ERROR_INVALID_ARGUMENT,
                       "out_info is NULL");
  /* Two buffers of one GPU each, and a graph with a node on each. */
  tandem_buffer_t *a0, *a1, *b1;
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 0, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &a0));
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 1, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &a1));
  TH_ASSERT_OK(tandem_buffer_create_on(rt, 1, BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &b1));
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(a1), 7, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(a1), tandem_buffer_whole(b1), TANDEM_LANE_AUTO));
  tandem_exec_t *e;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  /* A copy on GPU 1 may not take a view of GPU 0. */
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 1, 1, tandem_buffer_whole(a0)),
                       TANDEM_ERROR_CONTRACT, "a view may change its buffer, not its GPU");
  tandem_completion_t *c;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  /* Imported timelines are GPU 0's. */
  tandem_lane_wait_t w = {TANDEM_LANE_COUNT, 1};
  TH_ASSERT_STATUS_MSG(tandem_exec_submit_waiting(e, &w, 1, &c), TANDEM_ERROR_UNSUPPORTED,
                       "imported timelines are GPU 0's");
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(a0);
  tandem_buffer_release(a1);
  tandem_buffer_release(b1);
  th_runtime_destroy(rt);
}

int main(void) {
  th_init();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_pair_info_host),
      cmocka_unit_test(test_pair_info_vulkan_host),
      cmocka_unit_test(test_crossing_host),
      cmocka_unit_test(test_dependent_host),
      cmocka_unit_test(test_crossing_vulkan_host),
      cmocka_unit_test(test_dependent_vulkan_host),
      cmocka_unit_test(test_split_host_vulkan),
      cmocka_unit_test(test_split_vulkan_host),
      cmocka_unit_test(test_crossing_vulkan_vulkan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
