/* SPDX-License-Identifier: MIT */
/*
 * test_device.c — device enumeration and description, and selecting a device
 * that does not exist.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "tandem/tandem_vulkan.h"

/* Must run first in the process: counting devices makes tandem's first
 * instance, without validation; opening a GPU with validation afterwards must
 * still find the debug-utils entry points (it called a NULL pointer once). */
static void test_count_before_validated_open(void **state) {
  (void)state;
  th_validation_reset();
  tandem_runtime_t *rt = th_runtime_create_closed(NULL);
  uint32_t count = 0;
  TH_ASSERT_OK(tandem_runtime_gpu_count(rt, &count));
  assert_true(count >= 1);
  TH_ASSERT_OK(tandem_runtime_open_gpu(rt));
  th_runtime_destroy(rt);
}

static void test_gpu_count_and_info(void **state) {
  tandem_runtime_t *rt = *state;
  uint32_t count = 0;
  TH_ASSERT_OK(tandem_runtime_gpu_count(rt, &count));
  fprintf(stderr, "gpu count: %u\n", count);
  assert_true(count >= 1);

  for (uint32_t i = 0; i < count; ++i) {
    tandem_device_info_t info;
    memset(&info, 0xCC, sizeof info);
    info.struct_size = sizeof info; /* after the poison */
    TH_ASSERT_OK(tandem_runtime_gpu_info(rt, i, &info));
    TH_ASSERT_U64_EQ(info.index, i);
    /* NUL-terminated, non-empty strings. */
    assert_non_null(memchr(info.name, '\0', sizeof info.name));
    assert_non_null(memchr(info.driver_name, '\0', sizeof info.driver_name));
    assert_non_null(memchr(info.driver_info, '\0', sizeof info.driver_info));
    assert_true(strlen(info.name) > 0);
    fprintf(stderr,
            "gpu %u: %s, driver %s (%s), Vulkan %u.%u.%u, vendor 0x%04x device 0x%04x%s, "
            "features 0x%x, %u queue families, %llu device-local bytes, timestamp %.3f ns\n",
            i, info.name, info.driver_name, info.driver_info,
            TANDEM_VERSION_MAJOR_OF(info.api_version), TANDEM_VERSION_MINOR_OF(info.api_version),
            TANDEM_VERSION_PATCH_OF(info.api_version), info.vendor_id, info.device_id,
            info.is_cpu ? " (CPU)" : "", info.features, info.queue_family_count,
            (unsigned long long)info.device_local_bytes, info.timestamp_period_ns);
    if (i != 0) continue;

    /* The runtime's device (index 0) must be able to run tandem at all. */
    uint32_t major = TANDEM_VERSION_MAJOR_OF(info.api_version);
    uint32_t minor = TANDEM_VERSION_MINOR_OF(info.api_version);
    assert_true(major > 1 || (major == 1 && minor >= 2));
    assert_true((info.features & TANDEM_GPU_TIMELINE_SEMAPHORE) != 0);
    assert_true(info.queue_family_count >= 1);
    assert_true(info.queue_family_count <= TANDEM_MAX_QUEUE_FAMILIES);
    uint32_t compute_families = 0;
    for (uint32_t f = 0; f < info.queue_family_count; ++f) {
      assert_true(info.queue_families[f].queue_count >= 1);
      /* Only the documented capability bits. */
      assert_int_equal(info.queue_families[f].caps & ~0xFu, 0);
      if (info.queue_families[f].caps & TANDEM_QUEUE_COMPUTE) ++compute_families;
    }
    assert_true(compute_families >= 1);
    assert_true(info.device_local_bytes > 0);
    assert_true(info.timestamp_period_ns >= 0.0);
    /* Only the documented feature bits. */
    assert_int_equal(info.features & ~0x3FFu, 0); /* up to TANDEM_GPU_PIPELINE_ROBUSTNESS */
    if (strstr(info.driver_name, "llvmpipe") != NULL || strstr(info.name, "llvmpipe") != NULL) {
      assert_true(info.is_cpu); /* lavapipe is a software implementation */
    }
  }
}

static void test_gpu_info_out_of_range(void **state) {
  tandem_runtime_t *rt = *state;
  uint32_t count = 0;
  TH_ASSERT_OK(tandem_runtime_gpu_count(rt, &count));
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_STATUS(tandem_runtime_gpu_info(rt, count, &info), TANDEM_ERROR_OUT_OF_RANGE);
  char number[32];
  snprintf(number, sizeof number, "%u", count);
  TH_ASSERT_MESSAGE_HAS(number); /* the index, or the count, appears */
  TH_ASSERT_STATUS(tandem_runtime_gpu_info(rt, UINT32_MAX, &info), TANDEM_ERROR_OUT_OF_RANGE);
}

static void test_missing_gpu_index(void **state) {
  (void)state;
  th_validation_reset();
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.gpu_index = 99;
  tandem_runtime_t *rt = th_runtime_create_closed(&o);
  uint32_t count = 0;
  TH_ASSERT_OK(tandem_runtime_gpu_count(rt, &count));
  if (count > 99) {
    th_runtime_destroy(rt);
    skip(); /* a machine with 100 GPUs: index 99 exists */
  }
  TH_ASSERT_STATUS_MSG(tandem_runtime_open_gpu(rt), TANDEM_ERROR_NO_DEVICE, "99");
  /* Calls that need the GPU report the same, and create nothing. */
  tandem_buffer_t *b = (tandem_buffer_t *)(uintptr_t)0x1;
  TH_ASSERT_STATUS(tandem_buffer_create(rt, 64, TANDEM_PLACEMENT_HOST_VISIBLE, &b),
                   TANDEM_ERROR_NO_DEVICE);
  assert_null(b);
  /* Enumeration still works without the runtime's own device. */
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  th_runtime_destroy(rt);
}

/* The native handles name tandem's own device and lane queues, and the queue
 * lock is the one tandem's submissions take: a submit from another thread
 * waits until it is given back (th_bg_submit). */
static void test_native_handles(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_STATUS(tandem_runtime_vulkan_handles(rt, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  assert_non_null(h.instance);
  assert_non_null(h.physical_device);
  assert_non_null(h.device);
  assert_non_null(h.get_instance_proc_addr);
  assert_true(TANDEM_VERSION_MINOR_OF(h.api_version) >= 3);
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) {
    assert_non_null(h.lanes[l].queue);
    assert_non_null(h.lanes[l].timeline);
    assert_true(h.lanes[l].queue_family < info.queue_family_count);
    const tandem_queue_family_info_t *f = &info.queue_families[h.lanes[l].queue_family];
    assert_true(h.lanes[l].queue_index < f->queue_count);
    assert_true(f->caps &
                (l == TANDEM_LANE_COMPUTE ? TANDEM_QUEUE_COMPUTE : TANDEM_QUEUE_TRANSFER));
  }
  /* The lock holds tandem's own submissions back. */
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(b), 7, TANDEM_LANE_COMPUTE));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  th_bg_submit_t ls;
  tandem_runtime_queue_lock(rt, TANDEM_LANE_COMPUTE);
  th_bg_submit_start(&ls, e);
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  assert_int_equal(atomic_load(&ls.submitted), 0); /* still blocked in vkQueueSubmit2's lock */
  tandem_runtime_queue_unlock(rt, TANDEM_LANE_COMPUTE);
  TH_ASSERT_OK(th_bg_submit_join(&ls));
  uint32_t got[1024];
  th_read(b, 0, got, sizeof got);
  TH_ASSERT_U32_FILL(got, 7, 1024, "fill submitted after the lock was given back");
  /* Out-of-range lanes are ignored. */
  tandem_runtime_queue_lock(rt, 7);
  tandem_runtime_queue_unlock(rt, -1);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(b);
}

/* Issue 23: the documented rule ("hold the queue lock of each lane on the
 * queue") with lanes sharing one VkQueue used to lock one non-recursive
 * mutex twice and never return. The lock nests now: every lane on the
 * compute lane's queue, and the compute lane again, from one thread; a
 * submit on another thread waits until the last of them is given back. An
 * alarm turns a deadlock into a failure instead of a hung test. */
static void test_queue_lock_nests(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  int held[TANDEM_LANE_COUNT_GPU + 1], n = 0;
  held[n++] = TANDEM_LANE_COMPUTE;
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++)
    if (h.lanes[l].queue == h.lanes[TANDEM_LANE_COMPUTE].queue)
      held[n++] = l; /* compute again too */
  assert_true(n >= 2);
  alarm(20);
  for (int k = 0; k < n; k++) tandem_runtime_queue_lock(rt, held[k]);
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(b), 9, TANDEM_LANE_COMPUTE));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  th_bg_submit_t ls;
  th_bg_submit_start(&ls, e);
  struct timespec pause = {0, 50 * 1000 * 1000};
  for (int k = n; k-- > 0;) {
    nanosleep(&pause, NULL);
    assert_int_equal(atomic_load(&ls.submitted), 0); /* k + 1 locks still held */
    tandem_runtime_queue_unlock(rt, held[k]);
  }
  tandem_status_t joined = th_bg_submit_join(&ls);
  alarm(0);
  TH_ASSERT_OK(joined);
  uint32_t got[1024];
  th_read(b, 0, got, sizeof got);
  TH_ASSERT_U32_FILL(got, 9, 1024, "fill submitted after the last nested lock was given back");
  /* An unlock without a lock is ignored: the next submit does not hang. */
  tandem_runtime_queue_unlock(rt, TANDEM_LANE_COMPUTE);
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(b);
}

static void test_open_gpu_is_idempotent(void **state) {
  tandem_runtime_t *rt = *state;
  TH_ASSERT_OK(tandem_runtime_open_gpu(rt));
  TH_ASSERT_OK(tandem_runtime_open_gpu(rt));
  /* And it really works: a host round trip through a HOST_VISIBLE buffer. */
  tandem_buffer_t *b = th_buffer(rt, 16, TANDEM_PLACEMENT_HOST_VISIBLE);
  const uint32_t in[4] = {1, 2, 3, 0xFFFFFFFFu};
  uint32_t out[4] = {0};
  th_write(b, 0, in, sizeof in);
  th_read(b, 0, out, sizeof out);
  TH_ASSERT_U32_ARRAY(out, in, 4, "round trip");
  tandem_buffer_release(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_count_before_validated_open), /* first: see the test */
      cmocka_unit_test_setup_teardown(test_gpu_count_and_info, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_gpu_info_out_of_range, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test(test_missing_gpu_index),
      cmocka_unit_test_setup_teardown(test_open_gpu_is_idempotent, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_native_handles, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_queue_lock_nests, th_setup_gpu, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
