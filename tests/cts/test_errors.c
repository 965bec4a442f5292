/* SPDX-License-Identifier: MIT */
/*
 * test_errors.c — the "Errors:" lines of the public headers (tandem.h,
 * tandem_vulkan.h, tandem_xrt.h), checked.
 *
 * One table row per (function, documented code) that a real call can provoke
 * on lavapipe: each row makes the call, and the test asserts the exact status,
 * a non-empty tandem_error_message() and a distinctive substring of it (the
 * thing the message must name). Rows use bad arguments, limits, a runtime
 * whose GPU index does not exist, an emulated NPU run that is still running,
 * test hooks, and numbered fault injection (tandem_testing.h) for
 * OUT_OF_MEMORY, DEVICE_LOST and the NPU's IO and INTERNAL answers: a
 * fault-injected row names the native call that must be the one that failed.
 * Every runtime runs with the validation layer; a row fails on any validation
 * message. The completion functions have their own tests (test_run.c).
 * TANDEM_TEST_VERBOSE=1 prints each row's message.
 *
 * Documented codes no real call here can provoke, and why:
 *   - INTERNAL from Vulkan (open_gpu, gpu_count, gpu_info, buffer_create,
 *     kernel_create, prepare, submit): fault injection answers Vulkan calls
 *     with OUT_OF_HOST_MEMORY or DEVICE_LOST only; INTERNAL is the driver's
 *     unclassified answer, or glslang failing to start.
 *   - DEVICE_LOST from open_gpu (vkCreateDevice is injected as OOM).
 *   - NO_DEVICE for a missing Vulkan loader (it is loaded once per process),
 *     and UNSUPPORTED for a device without a memory type for a placement.
 *   - CONTRACT and INTERNAL from prepare for an NPU run whose argument XRT
 *     refuses (xrtRunSetArg is not injected: its failure is an answer).
 *   - open_npu: UNSUPPORTED for an XRT library without a function tandem
 *     calls, and DEVICE_LOST from a sharing probe.
 *   - IO from npu_program_create's instruction sync (the row for INTERNAL
 *     passes it on the way).
 *   - runtime_create on the application's device (vulkan_device):
 *     NO_DEVICE (no loader: loaded once per process), DEVICE_LOST and
 *     INTERNAL (the driver's answers while tandem creates its semaphores and
 *     pools on the device; injection answers OUT_OF_MEMORY); UNSUPPORTED for
 *     another loader's get_instance_proc_addr and Vulkan 1.2 are in
 *     test_user_vulkan.c. buffer_adopt_vulkan: INTERNAL (vkMapMemory
 *     refused) is the driver's answer only; the HOST_VISIBLE refusal of
 *     memory that is not host-visible needs a device with such memory.
 *     kernel_adopt_vulkan: INTERNAL as kernel_create's.
 *   - Interop on lavapipe: it has no dma-buf and no external semaphores, so
 *     every timeline export and import stops at UNSUPPORTED (their TIMEOUT,
 *     DEVICE_LOST, OUT_OF_MEMORY and INTERNAL need a device that has them;
 *     tests/cts/test_interop.c runs the working paths where they exist), and
 *     OVER_BUDGET and NO_DEVICE of import_fd take the same path as
 *     buffer_create's rows. The same holds for GPU waits on imported
 *     timelines: tandem_external_timeline_lane's BUSY needs imported
 *     timelines (tests/cts/test_lanes.c fills the lane table with sessions).
 *   - INTERNAL from tandem_session_create (its vkCreateSemaphore is injected
 *     as OOM: that row is there).
 * Label "vulkan".
 */
#include "harness.h"
#include "tandem/tandem_vulkan.h"
#include "tandem/tandem_xrt.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tandem_test_shaders.h"

#define ARMED_FOREVER UINT64_MAX /* armed, never failing: wraps devices made now */

/* What every row shares. |rt| and |npu| were opened with injection armed, so
 * their devices' Vulkan and XRT calls can be made to fail later. */
static struct fixture {
  tandem_runtime_t *rt;                /* GPU only */
  tandem_runtime_t *npu;               /* GPU + emulated NPU: also "another runtime" for rt */
  tandem_buffer_t *host, *host2, *gpu; /* rt: 4096 bytes each */
  tandem_buffer_t *shared, *npu_local, *other;          /* npu: 4096 bytes each */
  tandem_kernel_t *add_one, *no_default, *other_kernel; /* add_one_u32 over 256 uints */
  tandem_npu_program_t *sleep;                          /* sleep_ms: one BO, one scalar */
} F;

static char g_msg[1024]; /* the message of the call a row provokes */

/* Keeps the message of the call that just returned |s|. */
static tandem_status_t keep(tandem_status_t s) {
  snprintf(g_msg, sizeof g_msg, "%s", tandem_error_message());
  return s;
}

/* A row whose condition this device cannot produce (a limit or a missing
 * extension of lavapipe's that a real GPU does not share) answers this, with
 * the reason in g_msg; the row is reported skipped, never passed. */
#define ROW_NOT_HERE ((tandem_status_t)1)
static tandem_status_t not_here(const char *why) {
  snprintf(g_msg, sizeof g_msg, "%s", why);
  return ROW_NOT_HERE;
}
static tandem_device_info_t device_info(void);

/*---------------------------------------------------------------------------
 * Fault injection and small helpers
 *---------------------------------------------------------------------------*/

static void arm(uint32_t kinds, uint64_t at) {
  tandem_test_fault_t f = {.fail_at = at, .persistent = false, .kinds = kinds};
  TH_ASSERT_OK(tandem_test_fault_set(&f));
}

static tandem_test_fault_report_t disarm(void) {
  tandem_test_fault_report_t r;
  TH_ASSERT_OK(tandem_test_fault_report(&r));
  TH_ASSERT_OK(tandem_test_fault_set(NULL));
  return r;
}

/* Runs |call| with counted call N of |kinds| failing, N = 1, 2, ..., until
 * it answers |code| after failing a call whose site contains |site|; returns
 * that answer. |call| must leave nothing behind, whatever it answers. */
static tandem_status_t fail_until(uint32_t kinds, const char *site, tandem_status_t code,
                                  tandem_status_t (*call)(void)) {
  for (uint64_t n = 1; n <= 200; n++) {
    arm(kinds, n);
    g_msg[0] = '\0';
    tandem_status_t s = call();
    tandem_test_fault_report_t r = disarm();
    if (r.failed == 0)
      fail_msg("no counted call %llu: '%s' was never made to answer %s", (unsigned long long)n,
               site, tandem_status_name(code));
    if (s == code && strstr(r.first_site, site)) return s;
  }
  fail_msg("200 counted calls and '%s' never answered %s", site, tandem_status_name(code));
  return TANDEM_OK;
}

/* Fails call 1 of |kinds| during |call| and checks that it was |site|. */
static tandem_status_t fail_first(uint32_t kinds, const char *site, tandem_status_t (*call)(void)) {
  arm(kinds, 1);
  g_msg[0] = '\0';
  tandem_status_t s = call();
  tandem_test_fault_report_t r = disarm();
  if (r.failed != 1 || !strstr(r.first_site, site))
    fail_msg("the call made to fail was '%s', not '%s' (%llu failed)", r.first_site, site,
             (unsigned long long)r.failed);
  return s;
}

/* A runtime whose GPU index does not exist (its GPU never opens). */
static tandem_runtime_t *absent_gpu_runtime(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.gpu_index = 99;
  return th_runtime_create_closed(&o);
}

/* A GPU runtime opened with injection armed (its device calls can fail). */
static tandem_runtime_t *armed_runtime(const tandem_runtime_options_t *o) {
  arm(TANDEM_TEST_FAULT_ALL, ARMED_FOREVER);
  tandem_runtime_t *rt = th_runtime_create(o);
  disarm();
  return rt;
}

static tandem_runtime_options_t npu_options(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "emulated";
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  return o;
}

/* An executable on |rt| of: node 0 fill |a| [0, 1024), node 1 add_one on |b|
 * [0, 1024) with kernel |k| (of rt). */
static tandem_exec_t *two_node_exec(tandem_runtime_t *rt, tandem_buffer_t *a, tandem_buffer_t *b,
                                    tandem_kernel_t *k) {
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(a, 0, 1024), 7u, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(th_add_add_one(g, k, th_view(b, 0, 1024), 256));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  return e;
}

/* An executable on |rt| filling all of |b|. */
static tandem_exec_t *one_fill_exec(tandem_runtime_t *rt, tandem_buffer_t *b) {
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(b), 7u, TANDEM_LANE_AUTO));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  return e;
}

static void wait_release(tandem_completion_t *c) {
  (void)tandem_completion_wait(c);
  tandem_completion_release(c);
}

/* Sets (or with NULL restores to what the process started with) the Vulkan
 * loader's driver and explicit-layer search paths, read by the loader at
 * every instance creation. The originals matter where the layer or driver is
 * found through them (the GPU machine sets VK_LAYER_PATH). */
static void loader_env(const char *drivers, const char *layers) {
  static const char *const vars[] = {"VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_LAYER_PATH"};
  static char *original[3];
  static bool saved;
  if (!saved) {
    for (int i = 0; i < 3; i++) {
      const char *v = getenv(vars[i]);
      original[i] = v ? strdup(v) : NULL;
    }
    saved = true;
  }
  for (int i = 0; i < 3; i++) {
    const char *want = i < 2 ? drivers : layers;
    if (!want) want = original[i];
    if (want) setenv(vars[i], want, 1);
    else unsetenv(vars[i]);
  }
}

/*---------------------------------------------------------------------------
 * The calls, one per row
 *---------------------------------------------------------------------------*/

/* budget */
static tandem_status_t budget_null(void) { return keep(tandem_budget_create(1, NULL)); }
static tandem_status_t budget_zero(void) {
  tandem_budget_t *b = NULL;
  return keep(tandem_budget_create(0, &b));
}
static tandem_status_t budget_alloc(void) {
  tandem_budget_t *b = NULL;
  tandem_status_t s = keep(tandem_budget_create(4096, &b));
  tandem_budget_release(b);
  return s;
}
static tandem_status_t budget_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/budget.c", budget_alloc);
}

/* runtime */
static tandem_status_t runtime_limit(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.max_submissions = 0;
  tandem_runtime_t *rt = NULL;
  return keep(tandem_runtime_create(&o, &rt));
}
static tandem_status_t runtime_enum(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.sharing = (tandem_sharing_t)9;
  tandem_runtime_t *rt = NULL;
  return keep(tandem_runtime_create(&o, &rt));
}
static tandem_status_t runtime_backend(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.gpu_backend = "metal";
  tandem_runtime_t *rt = NULL;
  return keep(tandem_runtime_create(&o, &rt));
}
static tandem_status_t runtime_npu_backend(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "tpu";
  tandem_runtime_t *rt = NULL;
  return keep(tandem_runtime_create(&o, &rt));
}
static tandem_status_t runtime_size_zero(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.struct_size = 0;
  tandem_runtime_t *rt = NULL;
  return keep(tandem_runtime_create(&o, &rt));
}
static tandem_status_t runtime_size_newer(void) {
  struct {
    tandem_runtime_options_t o;
    uint32_t unknown_option; /* what a newer header might add */
  } newer;
  tandem_runtime_options_init(&newer.o);
  newer.o.struct_size = sizeof newer;
  newer.unknown_option = 1;
  tandem_runtime_t *rt = NULL;
  return keep(tandem_runtime_create(&newer.o, &rt));
}
static tandem_status_t runtime_alloc(void) {
  tandem_runtime_t *rt = NULL;
  tandem_status_t s = keep(tandem_runtime_create(NULL, &rt));
  tandem_runtime_destroy(rt);
  return s;
}
static tandem_status_t runtime_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/runtime.c", runtime_alloc);
}

/* GPU enumeration */
static tandem_status_t trim_null(void) { return keep(tandem_runtime_trim(NULL)); }
static tandem_status_t gpu_count_null(void) { return keep(tandem_runtime_gpu_count(F.rt, NULL)); }
static tandem_status_t gpu_count_call(void) {
  uint32_t n = 0;
  return keep(tandem_runtime_gpu_count(F.rt, &n));
}
static tandem_status_t gpu_count_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "backends/vulkan/vk_instance.c", gpu_count_call);
}
static tandem_status_t gpu_count_no_driver(void) {
  loader_env("/nonexistent/tandem_icd.json", NULL);
  tandem_status_t s = gpu_count_call();
  loader_env(NULL, NULL);
  return s;
}
static tandem_status_t gpu_info_null(void) { return keep(tandem_runtime_gpu_info(F.rt, 0, NULL)); }
static tandem_status_t gpu_info_size(void) {
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  info.struct_size = 8;
  return keep(tandem_runtime_gpu_info(F.rt, 0, &info));
}
static tandem_status_t gpu_info_index(void) {
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  return keep(tandem_runtime_gpu_info(F.rt, 99, &info));
}
static tandem_status_t gpu_info_other(void) {
  tandem_device_info_t info; /* not the open device: enumerates again */
  tandem_device_info_init(&info);
  return keep(tandem_runtime_gpu_info(F.rt, 5, &info));
}
static tandem_status_t gpu_info_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "backends/vulkan/vk_instance.c", gpu_info_other);
}
static tandem_status_t gpu_info_no_driver(void) {
  loader_env("/nonexistent/tandem_icd.json", NULL);
  tandem_status_t s = gpu_info_other();
  loader_env(NULL, NULL);
  return s;
}

/* open_gpu */
static tandem_status_t open_gpu_null(void) { return keep(tandem_runtime_open_gpu(NULL)); }
static tandem_status_t open_gpu_absent(void) {
  tandem_runtime_t *rt = absent_gpu_runtime();
  tandem_status_t s = keep(tandem_runtime_open_gpu(rt));
  th_runtime_destroy(rt);
  return s;
}
static tandem_runtime_t *g_closed; /* for the injected open */
static tandem_status_t open_gpu_call(void) { return keep(tandem_runtime_open_gpu(g_closed)); }
static tandem_status_t open_gpu_oom(void) {
  g_closed = th_runtime_create_closed(NULL);
  tandem_status_t s =
      fail_first(TANDEM_TEST_FAULT_ALLOC, "backends/vulkan/vk_device.c", open_gpu_call);
  th_runtime_destroy(g_closed);
  return s;
}
static tandem_status_t open_gpu_no_layer(void) {
  tandem_runtime_t *rt = th_runtime_create_closed(NULL); /* validation on */
  loader_env(NULL, "/nonexistent/tandem_layers");
  tandem_status_t s = keep(tandem_runtime_open_gpu(rt));
  loader_env(NULL, NULL);
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t handles_null(void) {
  return keep(tandem_runtime_vulkan_handles(F.rt, NULL));
}
static tandem_status_t handles_absent(void) {
  tandem_runtime_t *rt = absent_gpu_runtime();
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  tandem_status_t s = keep(tandem_runtime_vulkan_handles(rt, &h));
  th_runtime_destroy(rt);
  return s;
}

/* Several GPUs, on the one-GPU fixture: GPU numbers past it, NULLs. */
static tandem_status_t open_gpu_at_range(void) { return keep(tandem_runtime_open_gpu_at(F.rt, 4)); }
static tandem_status_t describe_null(void) {
  return keep(tandem_runtime_gpu_describe(F.rt, 0, NULL));
}
static tandem_status_t describe_range(void) {
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  return keep(tandem_runtime_gpu_describe(F.rt, 2, &info));
}
static tandem_status_t pair_null(void) { return keep(tandem_runtime_gpu_pair(F.rt, 0, 1, NULL)); }
static tandem_status_t pair_size(void) {
  tandem_gpu_pair_info_t info;
  tandem_gpu_pair_info_init(&info);
  info.struct_size = 8;
  return keep(tandem_runtime_gpu_pair(F.rt, 0, 1, &info));
}
static tandem_status_t pair_self(void) {
  tandem_gpu_pair_info_t info;
  tandem_gpu_pair_info_init(&info);
  return keep(tandem_runtime_gpu_pair(F.rt, 0, 0, &info));
}
static tandem_status_t pair_range(void) {
  tandem_gpu_pair_info_t info;
  tandem_gpu_pair_info_init(&info);
  return keep(tandem_runtime_gpu_pair(F.rt, 0, 1, &info));
}
static tandem_status_t handles_at_range(void) {
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  return keep(tandem_runtime_vulkan_handles_at(F.rt, 3, &h));
}
static tandem_status_t create_on_range(void) {
  tandem_buffer_t *b = NULL;
  tandem_status_t s = keep(tandem_buffer_create_on(F.rt, 2, 64, TANDEM_PLACEMENT_GPU_LOCAL, &b));
  tandem_buffer_release(b);
  return s;
}

/* buffer_create */
static tandem_buffer_t *g_made; /* released by the calls that make it */
static tandem_status_t create_on(tandem_runtime_t *rt, uint64_t size, tandem_placement_t p) {
  g_made = NULL;
  tandem_status_t s = keep(tandem_buffer_create(rt, size, p, &g_made));
  tandem_buffer_release(g_made);
  return s;
}
static tandem_status_t buffer_size(void) { return create_on(F.rt, 0, TANDEM_PLACEMENT_GPU_LOCAL); }
static tandem_status_t buffer_placement(void) { return create_on(F.rt, 64, (tandem_placement_t)9); }
static tandem_status_t buffer_no_npu(void) { return create_on(F.rt, 64, TANDEM_PLACEMENT_SHARED); }
static tandem_status_t buffer_budget(void) {
  tandem_budget_t *budget = NULL;
  TH_ASSERT_OK(tandem_budget_create(4096, &budget));
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.budget = budget;
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_status_t s = create_on(rt, 8192, TANDEM_PLACEMENT_GPU_LOCAL);
  th_runtime_destroy(rt);
  tandem_budget_release(budget);
  return s;
}
static tandem_status_t buffer_too_big(void) {
  /* Over maxMemoryAllocationSize (2 GiB on lavapipe): refused before any memory. */
  if (!device_info().is_cpu) return not_here("3 GiB fits one allocation on this device");
  return create_on(F.rt, 3ull << 30, TANDEM_PLACEMENT_GPU_LOCAL);
}
static tandem_status_t buffer_over_max_size(void) {
  /* Over maxBufferSize (4 GiB - 1 on lavapipe): refused before vkCreateBuffer. */
  return create_on(F.rt, 64ull << 30, TANDEM_PLACEMENT_HOST_VISIBLE);
}
static tandem_status_t buffer_gpu_local(void) {
  return create_on(F.rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
}
static tandem_status_t buffer_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/buffer.c", buffer_gpu_local);
}
/* The zero-fill's queue submission loses the device: on a runtime of its
 * own, which must be lost afterwards (design.md Device loss: any path). */
static tandem_runtime_t *g_lost_rt;
static tandem_status_t buffer_gpu_local_lost_rt(void) {
  return create_on(g_lost_rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
}
static tandem_status_t buffer_lost(void) {
  g_lost_rt = armed_runtime(NULL);
  tandem_status_t s = fail_until(TANDEM_TEST_FAULT_VULKAN, "vkQueueSubmit2",
                                 TANDEM_ERROR_DEVICE_LOST, buffer_gpu_local_lost_rt);
  tandem_buffer_t *b = th_buffer(g_lost_rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_exec_t *e = one_fill_exec(g_lost_rt, b);
  tandem_completion_t *c = NULL;
  TH_ASSERT_STATUS(tandem_exec_submit(e, &c), TANDEM_ERROR_DEVICE_LOST);
  tandem_exec_release(e);
  tandem_buffer_release(b);
  th_runtime_destroy(g_lost_rt);
  return s;
}
static tandem_status_t buffer_absent(void) {
  tandem_runtime_t *rt = absent_gpu_runtime();
  tandem_status_t s = create_on(rt, 64, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t buffer_shared(void) {
  return create_on(F.npu, 4096, TANDEM_PLACEMENT_SHARED);
}
static tandem_status_t buffer_npu_sync(void) {
  return fail_until(TANDEM_TEST_FAULT_XRT, "xrtBOSync", TANDEM_ERROR_IO, buffer_shared);
}
static tandem_status_t memory_null(void) { return keep(tandem_buffer_memory(F.host, NULL)); }
static tandem_status_t memory_npu_local(void) {
  tandem_buffer_memory_t m;
  return keep(tandem_buffer_memory(F.npu_local, &m));
}
static tandem_status_t view_null(void) { return keep(tandem_buffer_view(F.host, 0, 4, NULL)); }
static tandem_status_t view_past_end(void) {
  tandem_view_t v;
  return keep(tandem_buffer_view(F.host, 4000, 200, &v));
}

/* maps */
static tandem_status_t map_no_buffer(void) {
  tandem_map_t m;
  return keep(tandem_map_read((tandem_view_t){0}, &m));
}
static tandem_status_t map_outside(void) {
  tandem_map_t m;
  return keep(tandem_map_read((tandem_view_t){F.host, 4096, 4}, &m));
}
static tandem_status_t map_gpu_local(void) {
  tandem_map_t m;
  return keep(tandem_map_write(tandem_buffer_whole(F.gpu), &m));
}
/* One-shot helpers (their errors are the calls they make). */
static tandem_status_t staged_create_null(void) {
  tandem_buffer_t *b = NULL;
  return keep(tandem_buffer_create_staged(F.rt, NULL, 64, TANDEM_PLACEMENT_GPU_LOCAL, &b));
}
static tandem_status_t staged_create_size(void) {
  tandem_buffer_t *b = NULL;
  uint32_t word = 0;
  return keep(tandem_buffer_create_staged(F.rt, &word, 0, TANDEM_PLACEMENT_GPU_LOCAL, &b));
}
static tandem_status_t staged_write_null(void) {
  return keep(tandem_buffer_write_staged(th_view(F.gpu, 0, 64), NULL));
}
static tandem_status_t staged_write_outside(void) {
  uint32_t words[4] = {0};
  return keep(tandem_buffer_write_staged((tandem_view_t){F.gpu, 4096, 16}, words));
}
static tandem_status_t staged_read_null(void) {
  return keep(tandem_buffer_read_staged(th_view(F.gpu, 0, 64), NULL));
}
static tandem_status_t staged_read_busy(void) {
  tandem_map_t w;
  uint32_t words[16];
  TH_ASSERT_OK(tandem_map_write(th_view(F.host, 0, 64), &w));
  tandem_status_t s = keep(tandem_buffer_read_staged(th_view(F.host, 0, 64), words));
  tandem_unmap(&w);
  return s;
}
static tandem_status_t graph_run_null(void) { return keep(tandem_graph_run(NULL)); }
static tandem_status_t graph_run_empty(void) {
  tandem_graph_t *g = th_graph(F.rt);
  tandem_status_t s = keep(tandem_graph_run(g));
  tandem_graph_release(g);
  return s;
}
static tandem_status_t map_conflict(void) {
  tandem_map_t r, w;
  TH_ASSERT_OK(tandem_map_read(th_view(F.host, 0, 64), &r));
  tandem_status_t s = keep(tandem_map_write(th_view(F.host, 32, 64), &w));
  tandem_unmap(&r);
  return s;
}
static tandem_status_t try_map_in_flight(void) {
  /* The emulated NPU's sleep_ms writes the buffer 300 ms from now. */
  tandem_graph_t *g = th_graph(F.npu);
  uint32_t ms = 300;
  tandem_view_t v = tandem_buffer_whole(F.shared);
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, F.sleep, &v, 1, &ms, 1));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  tandem_map_t m;
  tandem_status_t s = keep(tandem_try_map_read(th_view(F.shared, 0, 4), &m));
  bool done = tandem_completion_is_complete(c);
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
  tandem_exec_release(e);
  tandem_graph_release(g);
  assert_false(done); /* the row proves nothing if the run had ended */
  return s;
}
static tandem_status_t map_poisoned(void) {
  tandem_buffer_t *b = th_buffer(F.rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_exec_t *e = one_fill_exec(F.rt, b);
  TH_ASSERT_OK(tandem_test_control(F.rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION));
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  TH_ASSERT_STATUS(tandem_completion_wait(c), TANDEM_ERROR_INTERNAL);
  tandem_completion_release(c);
  tandem_map_t m;
  tandem_status_t s = keep(tandem_map_read(th_view(b, 0, 64), &m));
  tandem_exec_release(e);
  tandem_buffer_release(b);
  return s;
}
static tandem_status_t map_lost(void) {
  tandem_runtime_t *rt = armed_runtime(NULL);
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_exec_t *e = one_fill_exec(rt, b);
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  /* The map looks at the lanes first: that query answers DEVICE_LOST. */
  arm(TANDEM_TEST_FAULT_VULKAN, 1);
  tandem_map_t m;
  tandem_status_t s = keep(tandem_map_read(tandem_buffer_whole(b), &m));
  tandem_test_fault_report_t r = disarm();
  assert_non_null(strstr(r.first_site, "vkGetSemaphoreCounterValue"));
  TH_ASSERT_STATUS(tandem_completion_wait(c), TANDEM_ERROR_DEVICE_LOST);
  tandem_completion_release(c);
  tandem_exec_release(e);
  tandem_buffer_release(b);
  th_runtime_destroy(rt);
  return s;
}
static tandem_buffer_t *g_fresh;
static tandem_status_t map_fresh(void) {
  tandem_map_t m;
  tandem_status_t s = keep(tandem_map_write(tandem_buffer_whole(g_fresh), &m));
  tandem_unmap(&m);
  return s;
}
static tandem_status_t map_oom(void) {
  g_fresh = th_buffer(F.rt, 64, TANDEM_PLACEMENT_HOST_VISIBLE); /* no map list yet */
  tandem_status_t s = fail_first(TANDEM_TEST_FAULT_ALLOC, "core/map.c", map_fresh);
  tandem_buffer_release(g_fresh);
  return s;
}

/* kernel_create */
static tandem_status_t kernel_with(tandem_runtime_t *rt, const tandem_kernel_desc_t *d) {
  tandem_kernel_t *k = NULL;
  tandem_status_t s = keep(tandem_kernel_create(rt, d, &k));
  tandem_kernel_release(k);
  return s;
}
static const tandem_binding_contract_t k_binding[1] = {{1024, 4, TANDEM_ACCESS_READ_WRITE}};
static tandem_kernel_desc_t add_one_desc(void) {
  tandem_kernel_desc_t d = th_kernel_desc("errors_add_one", tandem_spv_add_one_u32,
                                          tandem_spv_add_one_u32_size, k_binding, 1, 4);
  d.workgroups[0] = d.workgroups[1] = d.workgroups[2] = 1;
  return d;
}
static tandem_status_t kernel_no_code(void) {
  tandem_kernel_desc_t d = add_one_desc();
  d.spirv = NULL;
  return kernel_with(F.rt, &d);
}
static tandem_status_t kernel_struct_size(void) {
  tandem_kernel_desc_t d = add_one_desc();
  d.struct_size = 4;
  return kernel_with(F.rt, &d);
}
static tandem_status_t kernel_local_size(void) {
  /* ids_only sizes its workgroup with spec constants: any size reaches the
   * device check. */
  const tandem_binding_contract_t b[2] = {{1024, 4, TANDEM_ACCESS_READ},
                                          {1024, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d =
      th_kernel_desc("errors_ids_only", tandem_spv_ids_only, tandem_spv_ids_only_size, b, 2, 4);
  d.local_size[0] = 1u << 20;
  d.local_size[1] = d.local_size[2] = 1;
  return kernel_with(F.rt, &d);
}
static tandem_status_t kernel_io(void) {
  tandem_kernel_desc_t d = add_one_desc();
  d.spirv = NULL;
  d.spirv_path = "/nonexistent/errors_kernel.spv";
  return kernel_with(F.rt, &d);
}
static tandem_status_t kernel_malformed(void) {
  static const uint32_t words[8] = {0x12345678u};
  tandem_kernel_desc_t d = add_one_desc();
  d.spirv = words;
  d.spirv_size = sizeof words;
  return kernel_with(F.rt, &d);
}
static tandem_status_t kernel_glsl(void) {
  tandem_kernel_desc_t d = add_one_desc();
  d.spirv = NULL;
  d.glsl_source = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { nonsense(); }\n";
  return kernel_with(F.rt, &d);
}
static tandem_status_t kernel_contract(void) {
  tandem_kernel_desc_t d = add_one_desc();
  d.push_constant_bytes = 8;
  return kernel_with(F.rt, &d);
}
static tandem_status_t kernel_subgroup(void) {
  tandem_kernel_desc_t d = add_one_desc();
  d.required_subgroup_size = 1024;
  return kernel_with(F.rt, &d);
}
static tandem_status_t kernel_alloc(void) {
  tandem_kernel_desc_t d = add_one_desc();
  return kernel_with(F.rt, &d);
}
static tandem_status_t kernel_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/kernel.c", kernel_alloc);
}
static tandem_status_t kernel_absent(void) {
  tandem_runtime_t *rt = absent_gpu_runtime();
  tandem_kernel_desc_t d = add_one_desc();
  tandem_status_t s = kernel_with(rt, &d);
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t kernel_info_null(void) { return keep(tandem_kernel_info(F.add_one, NULL)); }
static tandem_status_t kernel_info_size(void) {
  tandem_kernel_info_t info = {0}; /* struct_size not set */
  return keep(tandem_kernel_info(F.add_one, &info));
}

/* The application's device, buffers and pipelines (harness_vk.c makes them
 * with plain Vulkan): one buffer and one pipeline on F.rt's device, made on
 * first use and destroyed by the fixture's teardown. */
static th_vk_buffer_t g_raw_buffer;
static th_vk_pipeline_t g_raw_pipeline;
#define RAW_HOST_FLAGS (TANDEM_MEMORY_HOST_VISIBLE | TANDEM_MEMORY_HOST_COHERENT)

static tandem_vulkan_handles_t handles_of(tandem_runtime_t *rt) {
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  return h;
}
static tandem_vulkan_buffer_t raw_buffer_desc(uint64_t size) {
  if (!g_raw_buffer.buffer) {
    tandem_vulkan_handles_t h = handles_of(F.rt);
    g_raw_buffer = th_vk_buffer_create(&h, 4096, RAW_HOST_FLAGS);
  }
  return th_vk_buffer_desc(&g_raw_buffer, size, TANDEM_PLACEMENT_HOST_VISIBLE);
}
/* What the raw pipeline was built from (the tests run on one thread). */
static tandem_kernel_desc_t g_raw_kernel;
static tandem_vulkan_kernel_t raw_kernel_desc(void) {
  g_raw_kernel = add_one_desc();
  if (!g_raw_pipeline.pipeline) {
    tandem_vulkan_handles_t h = handles_of(F.rt);
    g_raw_pipeline =
        th_vk_pipeline_create(&h, tandem_spv_add_one_u32, tandem_spv_add_one_u32_size, 1, 4);
  }
  tandem_vulkan_kernel_t d = {.struct_size = sizeof(tandem_vulkan_kernel_t),
                              .device = g_raw_pipeline.device,
                              .pipeline = g_raw_pipeline.pipeline,
                              .pipeline_layout = g_raw_pipeline.layout,
                              .set_layout = g_raw_pipeline.set_layout,
                              .kernel = &g_raw_kernel};
  return d;
}
static void raw_release(void) {
  tandem_vulkan_handles_t h = handles_of(F.rt);
  if (g_raw_buffer.buffer) th_vk_buffer_destroy(&h, &g_raw_buffer);
  if (g_raw_pipeline.pipeline) th_vk_pipeline_destroy(&h, &g_raw_pipeline);
}
static tandem_status_t runtime_on_own(const char *drop, uint32_t bad_family) {
  th_vk_device_t *dev = th_vk_device_create(drop);
  tandem_vulkan_device_t d = *th_vk_device_desc(dev);
  if (bad_family) d.lanes[TANDEM_LANE_DOWNLOAD].queue_family = bad_family;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.vulkan_device = &d;
  tandem_runtime_t *rt = NULL;
  tandem_status_t s = keep(tandem_runtime_create(&o, &rt));
  tandem_runtime_destroy(rt);
  th_vk_device_destroy(dev);
  return s;
}
static tandem_status_t runtime_own_missing(void) { return runtime_on_own("synchronization2", 0); }
static tandem_status_t runtime_own_queue(void) { return runtime_on_own(NULL, 99); }
static tandem_status_t adopt_buffer_on(tandem_runtime_t *rt, const tandem_vulkan_buffer_t *d) {
  tandem_buffer_t *b = NULL;
  tandem_status_t s = keep(tandem_buffer_adopt_vulkan(rt, d, &b));
  tandem_buffer_release(b);
  return s;
}
static tandem_status_t adopt_buffer_other(void) {
  tandem_vulkan_handles_t h = handles_of(F.npu); /* another runtime: another VkDevice */
  th_vk_buffer_t vb = th_vk_buffer_create(&h, 4096, RAW_HOST_FLAGS);
  tandem_vulkan_buffer_t d = th_vk_buffer_desc(&vb, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_status_t s = adopt_buffer_on(F.rt, &d);
  th_vk_buffer_destroy(&h, &vb);
  return s;
}
static tandem_status_t adopt_buffer_size(void) {
  tandem_vulkan_buffer_t d = raw_buffer_desc(8192);
  return adopt_buffer_on(F.rt, &d);
}
static tandem_status_t adopt_buffer_type(void) {
  tandem_vulkan_buffer_t d = raw_buffer_desc(4096);
  d.memory_type = 99;
  return adopt_buffer_on(F.rt, &d);
}
static tandem_status_t adopt_buffer_budget(void) {
  tandem_budget_t *budget = NULL;
  TH_ASSERT_OK(tandem_budget_create(1024, &budget));
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.budget = budget;
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_vulkan_handles_t h = handles_of(rt);
  th_vk_buffer_t vb = th_vk_buffer_create(&h, 4096, RAW_HOST_FLAGS);
  tandem_vulkan_buffer_t d = th_vk_buffer_desc(&vb, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_status_t s = adopt_buffer_on(rt, &d);
  th_vk_buffer_destroy(&h, &vb);
  th_runtime_destroy(rt);
  tandem_budget_release(budget);
  return s;
}
static tandem_status_t adopt_buffer_alloc(void) {
  tandem_vulkan_buffer_t d = raw_buffer_desc(4096);
  return adopt_buffer_on(F.rt, &d);
}
static tandem_status_t adopt_buffer_oom(void) {
  (void)raw_buffer_desc(4096); /* made before injection is armed */
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/buffer.c", adopt_buffer_alloc);
}
static tandem_status_t adopt_buffer_absent(void) {
  tandem_runtime_t *rt = absent_gpu_runtime();
  tandem_vulkan_buffer_t d = raw_buffer_desc(4096);
  tandem_status_t s = adopt_buffer_on(rt, &d);
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t adopt_kernel_on(tandem_runtime_t *rt, const tandem_vulkan_kernel_t *d) {
  tandem_kernel_t *k = NULL;
  tandem_status_t s = keep(tandem_kernel_adopt_vulkan(rt, d, &k));
  tandem_kernel_release(k);
  return s;
}
static tandem_status_t adopt_kernel_null(void) {
  tandem_vulkan_kernel_t d = raw_kernel_desc();
  d.set_layout = NULL;
  return adopt_kernel_on(F.rt, &d);
}
static tandem_status_t adopt_kernel_other(void) {
  tandem_vulkan_handles_t h = handles_of(F.npu);
  th_vk_pipeline_t p =
      th_vk_pipeline_create(&h, tandem_spv_add_one_u32, tandem_spv_add_one_u32_size, 1, 4);
  g_raw_kernel = add_one_desc();
  tandem_vulkan_kernel_t d = {.struct_size = sizeof(tandem_vulkan_kernel_t),
                              .device = p.device,
                              .pipeline = p.pipeline,
                              .pipeline_layout = p.layout,
                              .set_layout = p.set_layout,
                              .kernel = &g_raw_kernel};
  tandem_status_t s = adopt_kernel_on(F.rt, &d);
  th_vk_pipeline_destroy(&h, &p);
  return s;
}
static tandem_status_t adopt_kernel_io(void) {
  tandem_vulkan_kernel_t d = raw_kernel_desc();
  tandem_kernel_desc_t kd = *d.kernel;
  d.kernel = &kd;
  kd.spirv = NULL;
  kd.spirv_path = "/nonexistent/errors_adopted.spv";
  return adopt_kernel_on(F.rt, &d);
}
static tandem_status_t adopt_kernel_malformed(void) {
  static const uint32_t words[8] = {0x12345678u};
  tandem_vulkan_kernel_t d = raw_kernel_desc();
  tandem_kernel_desc_t kd = *d.kernel;
  d.kernel = &kd;
  kd.spirv = words;
  kd.spirv_size = sizeof words;
  return adopt_kernel_on(F.rt, &d);
}
static tandem_status_t adopt_kernel_contract(void) {
  const tandem_binding_contract_t two[2] = {k_binding[0], k_binding[0]};
  tandem_vulkan_kernel_t d = raw_kernel_desc();
  tandem_kernel_desc_t kd = *d.kernel;
  d.kernel = &kd;
  kd.bindings = two;
  kd.binding_count = 2;
  return adopt_kernel_on(F.rt, &d);
}
static tandem_status_t adopt_kernel_subgroup(void) {
  tandem_vulkan_kernel_t d = raw_kernel_desc();
  tandem_kernel_desc_t kd = *d.kernel;
  d.kernel = &kd;
  kd.required_subgroup_size = 1024;
  return adopt_kernel_on(F.rt, &d);
}
static tandem_status_t adopt_kernel_alloc(void) {
  tandem_vulkan_kernel_t d = raw_kernel_desc();
  return adopt_kernel_on(F.rt, &d);
}
static tandem_status_t adopt_kernel_oom(void) {
  (void)raw_kernel_desc(); /* made before injection is armed */
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/kernel.c", adopt_kernel_alloc);
}
static tandem_status_t adopt_kernel_absent(void) {
  tandem_runtime_t *rt = absent_gpu_runtime();
  tandem_vulkan_kernel_t d = raw_kernel_desc();
  tandem_status_t s = adopt_kernel_on(rt, &d);
  th_runtime_destroy(rt);
  return s;
}

/* NPU device and programs */
static tandem_status_t open_npu_null(void) { return keep(tandem_runtime_open_npu(NULL)); }
static tandem_status_t open_npu_none(void) { return keep(tandem_runtime_open_npu(F.rt)); }
static tandem_status_t open_npu_library(void) {
  tandem_runtime_options_t o = npu_options();
  o.npu_library = "/nonexistent/libtandem_npu_emu.so.0";
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_status_t s = keep(tandem_runtime_open_npu(rt));
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t open_npu_forced(void) {
  tandem_runtime_options_t o = npu_options();
  o.sharing = TANDEM_SHARING_DMABUF_TO_GPU; /* lavapipe imports no dma-buf */
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_status_t s = keep(tandem_runtime_open_npu(rt));
  th_runtime_destroy(rt);
  return s;
}
static tandem_runtime_t *g_npu_closed;
static tandem_status_t open_npu_call(void) { return keep(tandem_runtime_open_npu(g_npu_closed)); }
static tandem_status_t open_npu_injected(uint32_t kinds, const char *site, tandem_status_t code) {
  tandem_runtime_options_t o = npu_options();
  g_npu_closed = th_runtime_create(&o); /* the GPU is open, the NPU not yet */
  tandem_status_t s = code == TANDEM_ERROR_OUT_OF_MEMORY
                          ? fail_first(kinds, site, open_npu_call)
                          : fail_until(kinds, site, code, open_npu_call);
  th_runtime_destroy(g_npu_closed);
  return s;
}
static tandem_status_t open_npu_oom(void) {
  return open_npu_injected(TANDEM_TEST_FAULT_ALLOC, "backends/xrt/xrt_npu.c",
                           TANDEM_ERROR_OUT_OF_MEMORY);
}
static tandem_status_t open_npu_probe_io(void) {
  return open_npu_injected(TANDEM_TEST_FAULT_XRT, "xrtBOSync", TANDEM_ERROR_IO);
}
static tandem_status_t npu_info_null(void) { return keep(tandem_runtime_npu_info(F.npu, NULL)); }
static tandem_status_t npu_info_size(void) {
  tandem_npu_info_t info = {0}; /* struct_size not set */
  return keep(tandem_runtime_npu_info(F.npu, &info));
}
static tandem_status_t npu_info_none(void) {
  tandem_npu_info_t info;
  tandem_npu_info_init(&info);
  return keep(tandem_runtime_npu_info(F.rt, &info));
}

static const tandem_binding_contract_t sleep_binding[1] = {{4, 4, TANDEM_ACCESS_WRITE}};
static tandem_npu_program_desc_t sleep_desc(void) {
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .name = "errors_sleep",
                                 .program_path = TANDEM_TEST_EMU_XCLBIN,
                                 .kernel_name = "sleep_ms",
                                 .bindings = sleep_binding,
                                 .binding_count = 1,
                                 .scalar_count = 1};
  return d;
}
static tandem_status_t program_with(tandem_runtime_t *rt, const tandem_npu_program_desc_t *d) {
  tandem_npu_program_t *p = NULL;
  tandem_status_t s = keep(tandem_npu_program_create(rt, d, &p));
  tandem_npu_program_release(p);
  return s;
}
static tandem_status_t program_no_xclbin(void) {
  tandem_npu_program_desc_t d = sleep_desc();
  d.program_path = NULL;
  return program_with(F.npu, &d);
}
static tandem_status_t program_io(void) {
  tandem_npu_program_desc_t d = sleep_desc();
  d.program_path = "/nonexistent/errors.xclbin";
  return program_with(F.npu, &d);
}
/* "@emulated" where TANDEM_EMU_XCLBIN names a file that is not there. */
static tandem_status_t program_emulated_io(void) {
  tandem_npu_program_desc_t d = sleep_desc();
  d.program_path = TANDEM_NPU_EMULATED_XCLBIN;
  setenv("TANDEM_EMU_XCLBIN", "/nonexistent/emulated-errors.xclbin", 1);
  tandem_status_t s = program_with(F.npu, &d);
  unsetenv("TANDEM_EMU_XCLBIN");
  return s;
}
static tandem_status_t program_kernel(void) {
  tandem_npu_program_desc_t d = sleep_desc();
  d.kernel_name = "errors_no_such_kernel";
  return program_with(F.npu, &d);
}
static tandem_status_t program_contract(void) {
  tandem_npu_program_desc_t d = sleep_desc();
  d.scalar_count = 0; /* sleep_ms takes one */
  return program_with(F.npu, &d);
}
static tandem_status_t program_alloc(void) {
  tandem_npu_program_desc_t d = sleep_desc();
  return program_with(F.npu, &d);
}
static tandem_status_t program_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/npu.c", program_alloc);
}
static tandem_status_t program_none(void) {
  tandem_npu_program_desc_t d = sleep_desc();
  return program_with(F.rt, &d);
}
static tandem_status_t program_instructions(void) {
  /* dpu_vector takes (opcode, instr, ninstr, bo0..bo4): the DPU ABI with one
   * binding fits it (bo1..bo4 stay unset). */
  static const uint32_t instructions[4] = {1, 2, 3, 4};
  tandem_binding_contract_t b = {64, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_xrt_program_desc_t x = {.struct_size = sizeof(tandem_xrt_program_desc_t),
                                 .type = TANDEM_STRUCT_XRT_PROGRAM_DESC,
                                 .abi = TANDEM_NPU_ABI_DPU,
                                 .instructions = instructions,
                                 .instruction_bytes = sizeof instructions};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .next = &x,
                                 .name = "errors_instructions",
                                 .program_path = TANDEM_TEST_EMU_XCLBIN,
                                 .kernel_name = "dpu_vector",
                                 .bindings = &b,
                                 .binding_count = 1};
  return program_with(F.npu, &d);
}
static tandem_status_t program_sync(void) {
  return fail_until(TANDEM_TEST_FAULT_XRT, "xrtBOSync", TANDEM_ERROR_IO, program_instructions);
}
/* An NPU run whose buffer sync fails ends with IO, as at zero-fill and at
 * program load (one failed xrtBOSync, one code). */
static tandem_exec_t *g_run_exec;
static tandem_status_t run_call(void) {
  tandem_completion_t *c = NULL;
  tandem_status_t s = keep(tandem_exec_submit(g_run_exec, &c));
  if (s == TANDEM_OK) {
    s = keep(tandem_completion_wait(c));
    tandem_completion_release(c);
  }
  return s;
}
static tandem_status_t run_sync(void) {
  tandem_npu_program_desc_t d = sleep_desc();
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_OK(tandem_npu_program_create(F.npu, &d, &p));
  tandem_buffer_t *b = th_buffer(F.npu, 4096, TANDEM_PLACEMENT_SHARED);
  tandem_graph_t *g = NULL;
  TH_ASSERT_OK(tandem_graph_create(F.npu, &g));
  uint32_t ms = 0;
  tandem_view_t v = th_view(b, 0, 4);
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, p, &v, 1, &ms, 1));
  TH_ASSERT_OK(tandem_graph_prepare(g, &g_run_exec));
  tandem_graph_release(g);
  tandem_status_t s = fail_until(TANDEM_TEST_FAULT_XRT, "xrtBOSync", TANDEM_ERROR_IO, run_call);
  tandem_exec_release(g_run_exec);
  tandem_buffer_release(b);
  tandem_npu_program_release(p);
  return s;
}

/* graphs */
static tandem_graph_t *G; /* a fresh graph of F.rt per row (set up by run_row) */

static tandem_status_t graph_null(void) { return keep(tandem_graph_create(F.rt, NULL)); }
static tandem_status_t graph_alloc(void) {
  tandem_graph_t *g = NULL;
  tandem_status_t s = keep(tandem_graph_create(F.rt, &g));
  tandem_graph_release(g);
  return s;
}
static tandem_status_t graph_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/graph.c", graph_alloc);
}

static tandem_status_t fill_lane(void) {
  return keep(tandem_graph_add_fill(G, th_view(F.host, 0, 64), 0, (tandem_lane_t)7));
}
static tandem_status_t fill_npu_lane(void) {
  return keep(tandem_graph_add_fill(G, th_view(F.host, 0, 64), 0, TANDEM_LANE_NPU));
}
static tandem_status_t fill_foreign(void) {
  return keep(tandem_graph_add_fill(G, th_view(F.other, 0, 64), 0, TANDEM_LANE_AUTO));
}
static tandem_status_t fill_align(void) {
  return keep(tandem_graph_add_fill(G, th_view(F.host, 2, 64), 0, TANDEM_LANE_AUTO));
}
static tandem_status_t fill_outside(void) {
  return keep(tandem_graph_add_fill(G, (tandem_view_t){F.host, 0, 8192}, 0, TANDEM_LANE_AUTO));
}
static tandem_status_t fill_npu_local(void) {
  tandem_graph_t *g = th_graph(F.npu);
  tandem_status_t s =
      keep(tandem_graph_add_fill(g, tandem_buffer_whole(F.npu_local), 0, TANDEM_LANE_AUTO));
  tandem_graph_release(g);
  return s;
}
static tandem_status_t fill_one(void) {
  return keep(tandem_graph_add_fill(G, th_view(F.host, 0, 64), 0, TANDEM_LANE_AUTO));
}
static tandem_status_t fill_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/graph.c", fill_one);
}
static tandem_status_t fill_full(void) {
  /* TANDEM_MAX_GRAPH_NODES fills fit (a few hundred ms in Release), the
   * next one does not, and the refused add leaves the graph as it was. */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint32_t i = 0; i < TANDEM_MAX_GRAPH_NODES; i++)
    if (tandem_graph_add_fill(G, th_view(F.host, (i % 64) * 64u, 64), i, TANDEM_LANE_AUTO) !=
        TANDEM_OK)
      fail_msg("fill %u of %u: %s", i, TANDEM_MAX_GRAPH_NODES, tandem_error_message());
  clock_gettime(CLOCK_MONOTONIC, &t1);
  fprintf(stderr, "added %u fills in %.0f ms\n", TANDEM_MAX_GRAPH_NODES,
          (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
  tandem_status_t s = fill_one();
  TH_ASSERT_U64_EQ(tandem_graph_node_count(G), TANDEM_MAX_GRAPH_NODES);
  /* Every kind of node is refused the same way. */
  TH_ASSERT_STATUS_MSG(tandem_graph_add_copy(G, th_view(F.host, 0, 64), th_view(F.host2, 0, 64),
                                             TANDEM_LANE_AUTO),
                       TANDEM_ERROR_OUT_OF_RANGE, "copy: the graph already holds 131072 nodes");
  TH_ASSERT_STATUS_MSG(th_add_add_one(G, F.add_one, th_view(F.host2, 0, 1024), 256),
                       TANDEM_ERROR_OUT_OF_RANGE, "dispatch of 'add_one_u32'");
  TH_ASSERT_U64_EQ(tandem_graph_node_count(G), TANDEM_MAX_GRAPH_NODES);
  return s;
}

static tandem_status_t copy_lane(void) {
  return keep(
      tandem_graph_add_copy(G, th_view(F.host, 0, 64), th_view(F.gpu, 0, 64), (tandem_lane_t)-5));
}
static tandem_status_t copy_lengths(void) {
  return keep(
      tandem_graph_add_copy(G, th_view(F.host, 0, 64), th_view(F.gpu, 0, 128), TANDEM_LANE_AUTO));
}
static tandem_status_t copy_overlap(void) {
  return keep(
      tandem_graph_add_copy(G, th_view(F.host, 0, 64), th_view(F.host, 32, 64), TANDEM_LANE_AUTO));
}
static tandem_status_t copy_npu_local(void) {
  tandem_graph_t *g = th_graph(F.npu);
  tandem_status_t s = keep(tandem_graph_add_copy(g, tandem_buffer_whole(F.npu_local),
                                                 tandem_buffer_whole(F.shared), TANDEM_LANE_AUTO));
  tandem_graph_release(g);
  return s;
}
static tandem_status_t copy_one(void) {
  return keep(
      tandem_graph_add_copy(G, th_view(F.host, 0, 64), th_view(F.gpu, 0, 64), TANDEM_LANE_AUTO));
}
static tandem_status_t copy_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/graph.c", copy_one);
}

static uint32_t g_n = 256;
static tandem_status_t dispatch_with(tandem_kernel_t *k, tandem_view_t v) {
  return keep(tandem_graph_add_dispatch(G, k, &v, 1, &g_n, sizeof g_n));
}
static tandem_status_t dispatch_null(void) {
  return keep(tandem_graph_add_dispatch(G, NULL, NULL, 0, NULL, 0));
}
static tandem_status_t dispatch_foreign_kernel(void) {
  return dispatch_with(F.other_kernel, th_view(F.host, 0, 1024));
}
static tandem_status_t dispatch_foreign_view(void) {
  return dispatch_with(F.add_one, th_view(F.other, 0, 1024));
}
static tandem_status_t dispatch_no_default(void) {
  return dispatch_with(F.no_default, th_view(F.host, 0, 1024));
}
static tandem_status_t dispatch_view_count(void) {
  tandem_view_t v[2] = {th_view(F.host, 0, 1024), th_view(F.host2, 0, 1024)};
  return keep(tandem_graph_add_dispatch(G, F.add_one, v, 2, &g_n, sizeof g_n));
}
static tandem_status_t dispatch_short(void) {
  return dispatch_with(F.add_one, th_view(F.host, 0, 512));
}
static tandem_status_t dispatch_push(void) {
  tandem_view_t v = th_view(F.host, 0, 1024);
  uint32_t push[2] = {256, 0};
  return keep(tandem_graph_add_dispatch(G, F.add_one, &v, 1, push, sizeof push));
}
static tandem_status_t dispatch_outside(void) {
  return dispatch_with(F.add_one, (tandem_view_t){F.host, 4096, 1024});
}
static tandem_status_t dispatch_npu_local(void) {
  tandem_graph_t *g = th_graph(F.npu);
  tandem_view_t v = tandem_buffer_whole(F.npu_local);
  tandem_status_t s = keep(tandem_graph_add_dispatch(g, F.other_kernel, &v, 1, &g_n, sizeof g_n));
  tandem_graph_release(g);
  return s;
}
static tandem_status_t dispatch_one(void) {
  return dispatch_with(F.add_one, th_view(F.host, 0, 1024));
}
static tandem_status_t dispatch_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/graph.c", dispatch_one);
}
static tandem_status_t node_with(tandem_dispatch_desc_t d) {
  tandem_view_t v = th_view(F.host, 0, 1024);
  d.kernel = F.add_one;
  d.views = &v;
  d.view_count = 1;
  d.push_constants = &g_n;
  d.push_constant_bytes = sizeof g_n;
  return keep(tandem_graph_add_dispatch_node(G, &d, NULL));
}
static tandem_status_t node_workgroups(void) {
  return node_with((tandem_dispatch_desc_t){.struct_size = sizeof(tandem_dispatch_desc_t),
                                            .workgroups = {0, 1, 1}});
}
static tandem_status_t node_too_many(void) {
  return node_with((tandem_dispatch_desc_t){.struct_size = sizeof(tandem_dispatch_desc_t),
                                            .workgroups = {UINT32_MAX, 1, 1}});
}
static tandem_status_t node_both(void) {
  return node_with((tandem_dispatch_desc_t){.struct_size = sizeof(tandem_dispatch_desc_t),
                                            .workgroups = {1, 1, 1},
                                            .indirect = th_view(F.host2, 0, 12)});
}
static tandem_status_t node_indirect(void) {
  return node_with((tandem_dispatch_desc_t){.struct_size = sizeof(tandem_dispatch_desc_t),
                                            .indirect = th_view(F.host2, 2, 12)});
}

static uint32_t g_ms = 1;
static tandem_graph_t *g_npu_graph;
static tandem_status_t npu_run_with(const tandem_view_t *v, uint32_t count, const uint32_t *sc,
                                    uint32_t sc_count) {
  g_npu_graph = th_graph(F.npu);
  tandem_status_t s = keep(tandem_graph_add_npu_run(g_npu_graph, F.sleep, v, count, sc, sc_count));
  tandem_graph_release(g_npu_graph);
  return s;
}
static tandem_status_t npu_run_null_views(void) { return npu_run_with(NULL, 1, &g_ms, 1); }
static tandem_status_t npu_run_foreign(void) {
  tandem_view_t v = th_view(F.host, 0, 64); /* F.rt's */
  return npu_run_with(&v, 1, &g_ms, 1);
}
static tandem_status_t npu_run_count(void) {
  tandem_view_t v = tandem_buffer_whole(F.shared);
  return npu_run_with(&v, 1, &g_ms, 0);
}
static tandem_status_t npu_run_no_npu_side(void) {
  tandem_view_t v = tandem_buffer_whole(F.other); /* HOST_VISIBLE */
  return npu_run_with(&v, 1, &g_ms, 1);
}
static tandem_status_t npu_run_offset(void) {
  tandem_view_t v = th_view(F.shared, 64, 64);
  return npu_run_with(&v, 1, &g_ms, 1);
}
static tandem_status_t npu_run_outside(void) {
  tandem_view_t v = {F.shared, 0, 8192};
  return npu_run_with(&v, 1, &g_ms, 1);
}
static tandem_status_t npu_run_one(void) {
  tandem_view_t v = tandem_buffer_whole(F.shared);
  return keep(tandem_graph_add_npu_run(g_npu_graph, F.sleep, &v, 1, &g_ms, 1));
}
static tandem_status_t npu_run_oom(void) {
  g_npu_graph = th_graph(F.npu);
  tandem_status_t s = fail_first(TANDEM_TEST_FAULT_ALLOC, "core/graph.c", npu_run_one);
  tandem_graph_release(g_npu_graph);
  return s;
}

/* prepare */
static tandem_status_t prepare_on(tandem_graph_t *g) {
  tandem_exec_t *e = NULL;
  tandem_status_t s = keep(tandem_graph_prepare(g, &e));
  tandem_exec_release(e);
  return s;
}
static tandem_status_t prepare_empty(void) { return prepare_on(G); }
static tandem_status_t prepare_one(void) { return prepare_on(G); }
static tandem_status_t prepare_oom(void) {
  TH_ASSERT_OK(tandem_graph_add_fill(G, th_view(F.host, 0, 64), 0, TANDEM_LANE_AUTO));
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/prepare.c", prepare_one);
}
static tandem_status_t prepare_range(void) {
  /* A binding 4 bytes over lavapipe's maxStorageBufferRange (128 MiB). */
  if (!device_info().is_cpu)
    return not_here("this device's maxStorageBufferRange is not lavapipe's 128 MiB");
  const uint64_t bytes = (128ull << 20) + 4;
  tandem_binding_contract_t b = {bytes, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_t *k = th_kernel_load(F.rt, "errors_wide", tandem_spv_add_one_u32,
                                      tandem_spv_add_one_u32_size, 1, &b, 1, 4);
  tandem_buffer_t *big = th_buffer(F.rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  TH_ASSERT_OK(th_add_add_one(G, k, tandem_buffer_whole(big), 256));
  tandem_status_t s = prepare_on(G);
  tandem_graph_release(G); /* the row's graph holds the buffer: free it now */
  G = th_graph(F.rt);
  tandem_buffer_release(big);
  tandem_kernel_release(k);
  return s;
}
static tandem_status_t prepare_absent(void) {
  tandem_runtime_t *rt = absent_gpu_runtime();
  tandem_graph_t *g = th_graph(rt);
  tandem_status_t s = prepare_on(g);
  tandem_graph_release(g);
  th_runtime_destroy(rt);
  return s;
}

/* executable parameters: node 0 fill F.host [0, 1024), node 1 add_one F.host2 */
static tandem_status_t with_exec(tandem_status_t (*call)(tandem_exec_t *)) {
  tandem_exec_t *e = two_node_exec(F.rt, F.host, F.host2, F.add_one);
  tandem_status_t s = call(e);
  tandem_exec_release(e);
  return s;
}
static tandem_status_t push_node(tandem_exec_t *e) {
  return keep(tandem_exec_set_push_constants(e, 9, &g_n, sizeof g_n));
}
static tandem_status_t push_kind(tandem_exec_t *e) {
  return keep(tandem_exec_set_push_constants(e, 0, &g_n, sizeof g_n));
}
static tandem_status_t push_bytes(tandem_exec_t *e) {
  return keep(tandem_exec_set_push_constants(e, 1, &g_n, 2));
}
static tandem_status_t wg_zero(tandem_exec_t *e) {
  const uint32_t wg[3] = {1, 0, 1};
  return keep(tandem_exec_set_workgroups(e, 1, wg));
}
static tandem_status_t view_binding(tandem_exec_t *e) {
  return keep(tandem_exec_set_view(e, 1, 3, th_view(F.host2, 0, 1024)));
}
static tandem_status_t view_none(tandem_exec_t *e) {
  return keep(tandem_exec_set_view(e, 1, 0, (tandem_view_t){0}));
}
static tandem_status_t view_short(tandem_exec_t *e) {
  return keep(tandem_exec_set_view(e, 1, 0, th_view(F.host2, 0, 512)));
}
static tandem_status_t view_placement(tandem_exec_t *e) {
  return keep(tandem_exec_set_view(e, 1, 0, th_view(F.gpu, 0, 1024)));
}
static tandem_status_t view_outside(tandem_exec_t *e) {
  return keep(tandem_exec_set_view(e, 1, 0, (tandem_view_t){F.host2, 3584, 1024}));
}
static tandem_status_t view_fill_align(tandem_exec_t *e) {
  return keep(tandem_exec_set_view(e, 0, 0, th_view(F.host, 2, 1024)));
}
static tandem_status_t view_order(tandem_exec_t *e) {
  /* The fill (node 0) and the dispatch (node 1) were independent at prepare. */
  return keep(tandem_exec_set_view(e, 1, 0, th_view(F.host, 0, 1024)));
}
static tandem_status_t set_push_node(void) { return with_exec(push_node); }
static tandem_status_t set_push_kind(void) { return with_exec(push_kind); }
static tandem_status_t set_push_bytes(void) { return with_exec(push_bytes); }
static tandem_status_t set_wg_zero(void) { return with_exec(wg_zero); }
static tandem_status_t set_view_binding(void) { return with_exec(view_binding); }
static tandem_status_t set_view_none(void) { return with_exec(view_none); }
static tandem_status_t set_view_short(void) { return with_exec(view_short); }
static tandem_status_t set_view_placement(void) { return with_exec(view_placement); }
static tandem_status_t set_view_outside(void) { return with_exec(view_outside); }
static tandem_status_t set_view_fill_align(void) { return with_exec(view_fill_align); }
static tandem_status_t set_view_order(void) { return with_exec(view_order); }

/* submit */
static tandem_status_t submit_null(void) {
  tandem_exec_t *e = one_fill_exec(F.rt, F.host);
  tandem_status_t s = keep(tandem_exec_submit(e, NULL));
  tandem_exec_release(e);
  return s;
}
static tandem_status_t submit_slots(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.graph_slots = 1;
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_exec_t *e = one_fill_exec(rt, b);
  tandem_completion_t *c1 = NULL, *c2 = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c1));
  TH_ASSERT_OK(tandem_completion_wait(c1)); /* finished, but still held */
  tandem_status_t s = keep(tandem_exec_submit(e, &c2));
  tandem_completion_release(c1);
  tandem_exec_release(e);
  tandem_buffer_release(b);
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t submit_max(void) {
  tandem_runtime_options_t o = npu_options();
  o.max_submissions = 1;
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_npu_program_desc_t d = sleep_desc();
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_OK(tandem_npu_program_create(rt, &d, &p));
  tandem_buffer_t *shared = th_buffer(rt, 64, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_graph_t *g = th_graph(rt);
  uint32_t ms = 300;
  tandem_view_t v = tandem_buffer_whole(shared);
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, p, &v, 1, &ms, 1));
  tandem_exec_t *slow = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &slow));
  tandem_exec_t *e = one_fill_exec(rt, b);
  tandem_completion_t *c1 = NULL, *c2 = NULL;
  TH_ASSERT_OK(tandem_exec_submit(slow, &c1));
  tandem_status_t s = keep(tandem_exec_submit(e, &c2));
  bool done = tandem_completion_is_complete(c1);
  wait_release(c1);
  assert_false(done); /* the row proves nothing if the run had ended */
  tandem_exec_release(e);
  tandem_exec_release(slow);
  tandem_graph_release(g);
  tandem_buffer_release(b);
  tandem_buffer_release(shared);
  tandem_npu_program_release(p);
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t submit_mapped(void) {
  tandem_exec_t *e = one_fill_exec(F.rt, F.host);
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_write(th_view(F.host, 128, 64), &m));
  tandem_completion_t *c = NULL;
  tandem_status_t s = keep(tandem_exec_submit(e, &c));
  tandem_unmap(&m);
  tandem_exec_release(e);
  return s;
}
static tandem_status_t submit_poisoned(void) {
  tandem_buffer_t *a = th_buffer(F.rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_exec_t *fill = one_fill_exec(F.rt, a);
  TH_ASSERT_OK(tandem_test_control(F.rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION));
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(fill, &c));
  wait_release(c);
  tandem_graph_t *g = th_graph(F.rt);
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, th_view(a, 0, 64), th_view(F.gpu, 0, 64), TANDEM_LANE_AUTO));
  tandem_exec_t *copy = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &copy));
  tandem_status_t s = keep(tandem_exec_submit(copy, &c));
  tandem_exec_release(copy);
  tandem_graph_release(g);
  tandem_exec_release(fill);
  tandem_buffer_release(a);
  return s;
}
static tandem_exec_t *g_exec;
static tandem_status_t submit_call(void) {
  tandem_completion_t *c = NULL;
  tandem_status_t s = keep(tandem_exec_submit(g_exec, &c));
  if (s == TANDEM_OK) wait_release(c);
  return s;
}
static tandem_status_t submit_record_oom(void) {
  g_exec = two_node_exec(F.rt, F.host, F.host2, F.add_one);
  uint32_t n = 128;
  TH_ASSERT_OK(tandem_exec_set_push_constants(g_exec, 1, &n, sizeof n)); /* re-record */
  tandem_status_t s = fail_first(TANDEM_TEST_FAULT_VULKAN, "vkBeginCommandBuffer", submit_call);
  /* Nothing was started, and the next submission records and runs. */
  TH_ASSERT_OK(submit_call());
  tandem_exec_release(g_exec);
  return s;
}
static tandem_status_t submit_lost(bool again) {
  tandem_runtime_t *rt = armed_runtime(NULL);
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  g_exec = one_fill_exec(rt, b);
  tandem_status_t s = fail_first(TANDEM_TEST_FAULT_VULKAN, "vkQueueSubmit2", submit_call);
  if (again) s = submit_call(); /* lost for good */
  tandem_exec_release(g_exec);
  tandem_buffer_release(b);
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t submit_lost_now(void) { return submit_lost(false); }
static tandem_status_t submit_lost_earlier(void) { return submit_lost(true); }

/* traces */
static tandem_status_t trace_null(void) { return keep(tandem_runtime_trace_start(NULL, 16)); }
static tandem_status_t trace_capacity(void) { return keep(tandem_runtime_trace_start(F.rt, 0)); }
static tandem_status_t trace_twice(void) {
  TH_ASSERT_OK(tandem_runtime_trace_start(F.rt, 16));
  tandem_status_t s = keep(tandem_runtime_trace_start(F.rt, 16));
  tandem_trace_t *t = NULL;
  TH_ASSERT_OK(tandem_runtime_trace_stop(F.rt, &t));
  tandem_trace_release(t);
  return s;
}
/* A runtime whose GPU opened without timestamps cannot trace. */
static tandem_status_t trace_untimed(void) {
  tandem_runtime_t *rt = th_runtime_create(NULL);
  tandem_status_t s = keep(tandem_runtime_trace_start(rt, 16));
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t trace_start_stop(void) {
  tandem_status_t s = keep(tandem_runtime_trace_start(F.rt, 16));
  tandem_trace_t *t = NULL;
  if (s == TANDEM_OK) TH_ASSERT_OK(tandem_runtime_trace_stop(F.rt, &t));
  tandem_trace_release(t);
  return s;
}
static tandem_status_t trace_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/trace.c", trace_start_stop);
}
static tandem_status_t trace_not_running(void) {
  tandem_trace_t *t = NULL;
  return keep(tandem_runtime_trace_stop(F.rt, &t));
}
static tandem_status_t trace_json_null(void) { return keep(tandem_trace_write_json(NULL, "x")); }
static tandem_status_t trace_json_io(void) {
  TH_ASSERT_OK(tandem_runtime_trace_start(F.rt, 16));
  tandem_trace_t *t = NULL;
  TH_ASSERT_OK(tandem_runtime_trace_stop(F.rt, &t));
  tandem_status_t s = keep(tandem_trace_write_json(t, "/nonexistent/dir/errors_trace.json"));
  tandem_trace_release(t);
  return s;
}

/* interop */
static tandem_status_t vulkan_view_null(void) {
  return keep(tandem_view_vulkan_buffer(th_view(F.host, 0, 64), NULL));
}
static tandem_status_t vulkan_view_outside(void) {
  tandem_vulkan_view_t v;
  return keep(tandem_view_vulkan_buffer((tandem_view_t){F.host, 4000, 200}, &v));
}
static tandem_status_t vulkan_view_npu_local(void) {
  tandem_vulkan_view_t v;
  return keep(tandem_view_vulkan_buffer(tandem_buffer_whole(F.npu_local), &v));
}
static tandem_status_t xrt_bo_null(void) { return keep(tandem_buffer_xrt_bo(F.shared, NULL)); }
static tandem_status_t xrt_bo_no_npu(void) {
  void *bo;
  return keep(tandem_buffer_xrt_bo(F.host, &bo));
}
static tandem_status_t xrt_bo_host(void) {
  void *bo;
  return keep(tandem_buffer_xrt_bo(F.other, &bo));
}
static tandem_status_t exportable_with(uint64_t size, tandem_placement_t p, uint32_t types) {
  tandem_buffer_t *b = NULL;
  tandem_status_t s = keep(tandem_buffer_create_exportable(F.rt, size, p, types, &b));
  tandem_buffer_release(b);
  return s;
}
static tandem_status_t exportable_types(void) {
  return exportable_with(4096, TANDEM_PLACEMENT_GPU_LOCAL, 0);
}
static tandem_status_t exportable_size(void) {
  return exportable_with(0, TANDEM_PLACEMENT_GPU_LOCAL, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD);
}
static tandem_status_t exportable_shared(void) {
  return exportable_with(4096, TANDEM_PLACEMENT_SHARED, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD);
}
static tandem_status_t exportable_dma_buf(void) {
  /* lavapipe has no VK_EXT_external_memory_dma_buf */
  return exportable_with(4096, TANDEM_PLACEMENT_GPU_LOCAL, TANDEM_EXTERNAL_MEMORY_DMA_BUF);
}
static tandem_status_t export_type(void) {
  tandem_external_memory_t m;
  tandem_external_memory_init(&m);
  return keep(tandem_buffer_export_fd(F.host, (tandem_external_memory_type_t)3, &m));
}
static tandem_status_t export_ordinary(void) {
  tandem_external_memory_t m;
  tandem_external_memory_init(&m);
  return keep(tandem_buffer_export_fd(F.host, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &m));
}
static tandem_buffer_t *g_exportable;
static tandem_status_t export_call(void) {
  tandem_external_memory_t m;
  tandem_external_memory_init(&m);
  tandem_status_t s =
      keep(tandem_buffer_export_fd(g_exportable, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &m));
  if (s == TANDEM_OK) close(m.fd);
  return s;
}
static tandem_status_t export_oom(void) {
  TH_ASSERT_OK(tandem_buffer_create_exportable(F.rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL,
                                               TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &g_exportable));
  tandem_status_t s = fail_first(TANDEM_TEST_FAULT_VULKAN, "vkGetMemoryFdKHR", export_call);
  tandem_buffer_release(g_exportable);
  return s;
}
static tandem_external_memory_t g_memory;
static uint64_t g_import_size;
static tandem_status_t import_call(void) {
  tandem_buffer_t *b = NULL;
  tandem_status_t s =
      keep(tandem_buffer_import_fd(F.rt, &g_memory, g_import_size, TANDEM_PLACEMENT_GPU_LOCAL, &b));
  if (s == TANDEM_OK) {
    g_memory.fd = -1; /* tandem's now */
    tandem_buffer_release(b);
  }
  return s;
}
/* Exports a fresh 4096-byte buffer as an opaque fd into g_memory, runs
 * |call| with import size |size| (or |call| itself counts faults), then
 * closes whatever fd is still the caller's. */
static tandem_status_t with_export(uint64_t size, tandem_status_t (*call)(void)) {
  tandem_buffer_t *b = NULL;
  TH_ASSERT_OK(tandem_buffer_create_exportable(F.rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL,
                                               TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &b));
  tandem_external_memory_init(&g_memory);
  TH_ASSERT_OK(tandem_buffer_export_fd(b, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &g_memory));
  g_import_size = size;
  tandem_status_t s = call();
  if (g_memory.fd >= 0) close(g_memory.fd); /* after a failed import it is still ours */
  tandem_buffer_release(b);
  return s;
}
static tandem_status_t import_bad_fd(void) {
  tandem_external_memory_t m = {.struct_size = sizeof(tandem_external_memory_t),
                                .fd = -1,
                                .type = TANDEM_EXTERNAL_MEMORY_OPAQUE_FD,
                                .allocation_size = 4096};
  tandem_buffer_t *b = NULL;
  return keep(tandem_buffer_import_fd(F.rt, &m, 64, TANDEM_PLACEMENT_GPU_LOCAL, &b));
}
/* An fd of the wrong kind, refused by fstat before the driver reads it
 * (lavapipe used to block in read() on a pipe or FIFO for ever). */
static tandem_status_t import_kind(int fd) {
  tandem_external_memory_t m = {.struct_size = sizeof(tandem_external_memory_t),
                                .fd = fd,
                                .type = TANDEM_EXTERNAL_MEMORY_OPAQUE_FD,
                                .allocation_size = 4096};
  tandem_buffer_t *b = NULL;
  alarm(10); /* a hang fails the test instead of the CI job */
  tandem_status_t s = keep(tandem_buffer_import_fd(F.rt, &m, 64, TANDEM_PLACEMENT_GPU_LOCAL, &b));
  alarm(0);
  if (s == TANDEM_OK) tandem_buffer_release(b);
  return s;
}
static tandem_status_t import_pipe(void) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  tandem_status_t s = import_kind(p[0]);
  close(p[0]);
  close(p[1]);
  return s;
}
static tandem_status_t import_fifo(void) {
  char path[] = "/tmp/tandem-fifo-XXXXXX";
  assert_non_null(mkdtemp(path));
  char fifo[64];
  snprintf(fifo, sizeof fifo, "%s/f", path);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  int fd = open(fifo, O_RDWR); /* RDWR: opening does not wait for a writer */
  assert_true(fd >= 0);
  tandem_status_t s = import_kind(fd);
  close(fd);
  unlink(fifo);
  rmdir(path);
  return s;
}
static tandem_status_t import_socket(void) {
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  tandem_status_t s = import_kind(sv[0]);
  close(sv[0]);
  close(sv[1]);
  return s;
}
static tandem_status_t import_directory(void) {
  int fd = open("/tmp", O_RDONLY | O_DIRECTORY);
  assert_true(fd >= 0);
  tandem_status_t s = import_kind(fd);
  close(fd);
  return s;
}
static tandem_status_t import_regular_file(void) {
  char path[] = "/tmp/tandem-import-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  assert_int_equal(ftruncate(fd, 4096), 0);
  tandem_status_t s = import_kind(fd);
  close(fd);
  return s;
}
static tandem_status_t import_too_big(void) { return with_export(1u << 20, import_call); }
static tandem_status_t import_dma_buf_call(void) {
  g_memory.type = TANDEM_EXTERNAL_MEMORY_DMA_BUF;
  return import_call();
}
static tandem_status_t import_dma_buf(void) { return with_export(4096, import_dma_buf_call); }
static tandem_status_t import_fault(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/buffer.c", import_call);
}
static tandem_status_t import_oom(void) { return with_export(4096, import_fault); }
static tandem_status_t timeline_export_lane(void) {
  int fd;
  return keep(tandem_runtime_export_timeline_fd(F.rt, (tandem_lane_t)9, &fd));
}
static tandem_status_t timeline_export_off(void) {
  int fd; /* lavapipe has no VK_KHR_external_semaphore_fd */
  if (device_info().features & TANDEM_GPU_EXTERNAL_SEMAPHORE_FD)
    return not_here("this device has VK_KHR_external_semaphore_fd");
  return keep(tandem_runtime_export_timeline_fd(F.rt, TANDEM_LANE_COMPUTE, &fd));
}
static tandem_status_t lane_values_null(void) {
  tandem_exec_t *e = one_fill_exec(F.rt, F.gpu);
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  tandem_status_t s = keep(tandem_completion_lane_values(c, NULL));
  wait_release(c);
  tandem_exec_release(e);
  return s;
}
static tandem_status_t timeline_import_negative(void) {
  tandem_external_timeline_t *t = NULL;
  return keep(tandem_runtime_import_timeline_fd(F.rt, -3, &t));
}
static tandem_status_t timeline_import_unsupported(void) {
  /* lavapipe has no VK_KHR_external_semaphore_fd: refused before the fd is used */
  if (device_info().features & TANDEM_GPU_EXTERNAL_SEMAPHORE_FD)
    return not_here("this device has VK_KHR_external_semaphore_fd");
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  tandem_external_timeline_t *t = NULL;
  tandem_status_t s = keep(tandem_runtime_import_timeline_fd(F.rt, fd, &t));
  close(fd); /* still ours after a failure */
  return s;
}
static tandem_status_t timeline_wait_null(void) {
  return keep(tandem_external_timeline_wait(NULL, 1, 0));
}

/* scoped handoff: callbacks that record nothing, and one that asks for an
 * access index it did not declare (its answer is the row's) */
static tandem_status_t rec_nothing(void *user, const tandem_vulkan_scope_t *scope) {
  (void)scope;
  return user ? *(const tandem_status_t *)user : TANDEM_OK;
}
static tandem_status_t g_scope_status;
static tandem_status_t rec_undeclared(void *user, const tandem_vulkan_scope_t *scope) {
  (void)user;
  tandem_vulkan_view_t v;
  g_scope_status = keep(tandem_vulkan_scope_view(scope, scope->access_count, &v));
  return TANDEM_OK;
}
static tandem_access_decl_t host_decl(tandem_access_t access) {
  return (tandem_access_decl_t){th_view(F.host, 0, 256), access};
}
static tandem_status_t vk_commands_lane(void) {
  tandem_access_decl_t a = host_decl(TANDEM_ACCESS_READ);
  return keep(tandem_graph_add_vulkan_commands(G, TANDEM_LANE_NPU, &a, 1, rec_nothing, NULL));
}
static tandem_status_t vk_commands_many(void) {
  tandem_access_decl_t a[TANDEM_MAX_BINDINGS + 1];
  for (uint32_t i = 0; i <= TANDEM_MAX_BINDINGS; i++) a[i] = host_decl(TANDEM_ACCESS_READ);
  return keep(tandem_graph_add_vulkan_commands(G, TANDEM_LANE_AUTO, a, TANDEM_MAX_BINDINGS + 1,
                                               rec_nothing, NULL));
}
static tandem_status_t vk_commands_npu_local(void) {
  tandem_graph_t *g = th_graph(F.npu);
  tandem_access_decl_t a = {tandem_buffer_whole(F.npu_local), TANDEM_ACCESS_WRITE};
  tandem_status_t s =
      keep(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, &a, 1, rec_nothing, NULL));
  tandem_graph_release(g);
  return s;
}
static tandem_status_t vk_commands_one(void) {
  tandem_access_decl_t a = host_decl(TANDEM_ACCESS_WRITE);
  return keep(tandem_graph_add_vulkan_commands(G, TANDEM_LANE_AUTO, &a, 1, rec_nothing, NULL));
}
static tandem_status_t vk_commands_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/graph.c", vk_commands_one);
}
static tandem_status_t scope_view_undeclared(void) {
  tandem_access_decl_t a = host_decl(TANDEM_ACCESS_READ);
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(G, TANDEM_LANE_AUTO, &a, 1, rec_undeclared, NULL));
  tandem_exec_t *e = NULL;
  g_scope_status = TANDEM_OK;
  TH_ASSERT_OK(tandem_graph_prepare(G, &e));
  tandem_exec_release(e);
  return g_scope_status;
}
static tandem_status_t prepare_callback(void) {
  static const tandem_status_t timeout = TANDEM_ERROR_TIMEOUT;
  tandem_access_decl_t a = host_decl(TANDEM_ACCESS_READ);
  TH_ASSERT_OK(
      tandem_graph_add_vulkan_commands(G, TANDEM_LANE_AUTO, &a, 1, rec_nothing, (void *)&timeout));
  return prepare_on(G);
}
static tandem_status_t run_commands_null(void) {
  tandem_access_decl_t a = host_decl(TANDEM_ACCESS_READ);
  return keep(
      tandem_runtime_run_vulkan_commands(F.rt, TANDEM_LANE_AUTO, &a, 1, rec_nothing, NULL, NULL));
}
static tandem_status_t run_commands_busy(void) {
  tandem_access_decl_t a = host_decl(TANDEM_ACCESS_WRITE);
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_read(th_view(F.host, 128, 64), &m));
  tandem_completion_t *c = NULL;
  tandem_status_t s = keep(
      tandem_runtime_run_vulkan_commands(F.rt, TANDEM_LANE_AUTO, &a, 1, rec_nothing, NULL, &c));
  tandem_unmap(&m);
  return s;
}
static tandem_status_t run_commands_callback(void) {
  static const tandem_status_t io = TANDEM_ERROR_IO;
  tandem_access_decl_t a = host_decl(TANDEM_ACCESS_READ);
  tandem_completion_t *c = NULL;
  return keep(tandem_runtime_run_vulkan_commands(F.rt, TANDEM_LANE_AUTO, &a, 1, rec_nothing,
                                                 (void *)&io, &c));
}
static tandem_status_t submit_code(void *user, const tandem_vulkan_scope_t *scope,
                                   tandem_vulkan_signal_t *out) {
  (void)scope;
  (void)out; /* submits nothing: OK without a semaphore, or the code in |user| */
  return user ? *(const tandem_status_t *)user : TANDEM_OK;
}
static tandem_status_t submit_vulkan_with(tandem_access_t access, const tandem_status_t *code) {
  tandem_access_decl_t a = host_decl(access);
  tandem_completion_t *c = NULL;
  tandem_status_t s = keep(
      tandem_runtime_submit_vulkan(F.rt, TANDEM_LANE_AUTO, &a, 1, submit_code, (void *)code, &c));
  assert_null(c);
  return s;
}
static tandem_status_t submit_vulkan_no_semaphore(void) {
  return submit_vulkan_with(TANDEM_ACCESS_READ, NULL);
}
static tandem_status_t submit_vulkan_code(void) {
  static const tandem_status_t cancelled = TANDEM_ERROR_CANCELLED;
  return submit_vulkan_with(TANDEM_ACCESS_READ, &cancelled);
}
static tandem_status_t submit_vulkan_busy(void) {
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_write(th_view(F.host, 0, 64), &m));
  tandem_status_t s = submit_vulkan_with(TANDEM_ACCESS_READ, NULL);
  tandem_unmap(&m);
  return s;
}
static tandem_status_t submit_vulkan_npu_local(void) {
  tandem_access_decl_t a = {tandem_buffer_whole(F.npu_local), TANDEM_ACCESS_READ};
  tandem_completion_t *c = NULL;
  return keep(tandem_runtime_submit_vulkan(F.npu, TANDEM_LANE_AUTO, &a, 1, submit_code, NULL, &c));
}
static tandem_status_t run_commands_outside(void) {
  tandem_access_decl_t a = {{F.host, 4000, 200}, TANDEM_ACCESS_READ};
  tandem_completion_t *c = NULL;
  return keep(
      tandem_runtime_run_vulkan_commands(F.rt, TANDEM_LANE_AUTO, &a, 1, rec_nothing, NULL, &c));
}

/* lanes and native sessions */
static tandem_status_t lane_info_range(void) {
  tandem_lane_info_t li;
  tandem_lane_info_init(&li);
  return keep(tandem_runtime_lane_info(F.rt, TANDEM_MAX_LANE_IDS, &li));
}
static tandem_status_t lane_info_null(void) {
  return keep(tandem_runtime_lane_info(F.rt, 0, NULL));
}
static tandem_status_t submit_waiting_with(tandem_lane_t lane, uint32_t count) {
  tandem_exec_t *e = one_fill_exec(F.rt, F.host);
  tandem_lane_wait_t w[TANDEM_MAX_LANES + 1];
  for (uint32_t i = 0; i < TANDEM_MAX_LANES + 1; i++) w[i] = (tandem_lane_wait_t){lane, 1};
  /* A stale value in |c|: every error must leave it NULL, as submit does. */
  tandem_completion_t *c = (tandem_completion_t *)(uintptr_t)0x5e5e;
  tandem_status_t s = keep(tandem_exec_submit_waiting(e, w, count, &c));
  if (s == TANDEM_OK) wait_release(c);
  else assert_null(c);
  tandem_exec_release(e);
  return s;
}
static tandem_status_t submit_waiting_builtin(void) {
  return submit_waiting_with(TANDEM_LANE_COMPUTE, 1);
}
static tandem_status_t submit_waiting_count(void) {
  return submit_waiting_with(TANDEM_LANE_COMPUTE, TANDEM_MAX_LANES + 1);
}
static tandem_status_t timeline_lane_null(void) {
  tandem_lane_t l;
  return keep(tandem_external_timeline_lane(NULL, &l));
}
static tandem_status_t session_null(void) { return keep(tandem_session_create(F.rt, NULL, NULL)); }
static tandem_status_t session_create_on(tandem_runtime_t *rt) {
  tandem_session_t *s = NULL;
  tandem_status_t st = keep(tandem_session_create(rt, "row", &s));
  tandem_session_destroy(s);
  return st;
}
static tandem_status_t session_create_call(void) { return session_create_on(F.rt); }
static tandem_status_t session_busy(void) {
  tandem_session_t *s[TANDEM_MAX_LANES - TANDEM_LANE_COUNT];
  for (int i = 0; i < TANDEM_MAX_LANES - TANDEM_LANE_COUNT; i++)
    TH_ASSERT_OK(tandem_session_create(F.rt, NULL, &s[i]));
  tandem_status_t st = session_create_call();
  for (int i = 0; i < TANDEM_MAX_LANES - TANDEM_LANE_COUNT; i++) tandem_session_destroy(s[i]);
  return st;
}
static tandem_status_t session_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_ALLOC, "core/session.c", session_create_call);
}
static tandem_status_t session_semaphore_oom(void) {
  return fail_first(TANDEM_TEST_FAULT_VULKAN, "vkCreateSemaphore", session_create_call);
}
static tandem_status_t session_absent(void) {
  tandem_runtime_t *rt = absent_gpu_runtime();
  tandem_status_t s = session_create_on(rt);
  th_runtime_destroy(rt);
  return s;
}
/* begin on a fresh session of F.rt over g_acc (1 ms for earlier work). */
static tandem_session_access_t g_acc;
static tandem_status_t begin_call(void) {
  tandem_session_t *s = NULL;
  TH_ASSERT_OK(tandem_session_create(F.rt, NULL, &s));
  tandem_status_t st = keep(tandem_session_begin(s, &g_acc, 1, 1000000));
  tandem_session_destroy(s);
  return st;
}
static tandem_status_t begin_with(tandem_view_t view, tandem_access_t access) {
  g_acc = (tandem_session_access_t){view, access};
  return begin_call();
}
static tandem_status_t begin_null(void) { return keep(tandem_session_begin(NULL, NULL, 0, 0)); }
static tandem_status_t begin_access(void) {
  return begin_with(tandem_buffer_whole(F.host), (tandem_access_t)0);
}
static tandem_status_t begin_range(void) {
  return begin_with((tandem_view_t){F.host, 4000, 200}, TANDEM_ACCESS_READ);
}
static tandem_status_t begin_open(void) {
  tandem_session_t *s = NULL;
  TH_ASSERT_OK(tandem_session_create(F.rt, NULL, &s));
  tandem_session_access_t a = {tandem_buffer_whole(F.host), TANDEM_ACCESS_READ};
  TH_ASSERT_OK(tandem_session_begin(s, &a, 1, 0));
  tandem_status_t st = keep(tandem_session_begin(s, &a, 1, 0));
  tandem_session_destroy(s);
  return st;
}
static tandem_status_t begin_mapped(void) {
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_write(tandem_buffer_whole(F.host), &m));
  tandem_status_t s = begin_with(tandem_buffer_whole(F.host), TANDEM_ACCESS_READ);
  tandem_unmap(&m);
  return s;
}
static tandem_status_t begin_quarantined(void) {
  tandem_session_t *s = NULL;
  TH_ASSERT_OK(tandem_session_create(F.rt, NULL, &s));
  tandem_session_access_t a = {tandem_buffer_whole(F.host2), TANDEM_ACCESS_READ};
  TH_ASSERT_OK(tandem_session_begin(s, &a, 1, 0));
  TH_ASSERT_OK(tandem_session_end(s, TANDEM_ERROR_INTERNAL));
  tandem_status_t st = keep(tandem_session_begin(s, &a, 1, 0));
  tandem_session_destroy(s);
  return st;
}
static tandem_status_t begin_timeout(void) {
  tandem_session_t *other = NULL;
  TH_ASSERT_OK(tandem_session_create(F.rt, NULL, &other));
  tandem_session_access_t a = {tandem_buffer_whole(F.host), TANDEM_ACCESS_WRITE};
  TH_ASSERT_OK(tandem_session_begin(other, &a, 1, 0));
  tandem_status_t s = begin_with(th_view(F.host, 0, 64), TANDEM_ACCESS_READ);
  TH_ASSERT_OK(tandem_session_end(other, TANDEM_OK));
  tandem_session_destroy(other);
  return s;
}
static tandem_status_t begin_oom(void) {
  tandem_session_t *s = NULL;
  TH_ASSERT_OK(tandem_session_create(F.rt, NULL, &s));
  g_acc = (tandem_session_access_t){tandem_buffer_whole(F.host), TANDEM_ACCESS_READ};
  arm(TANDEM_TEST_FAULT_ALLOC, 1);
  tandem_status_t st = keep(tandem_session_begin(s, &g_acc, 1, 0));
  tandem_test_fault_report_t r = disarm();
  if (r.failed != 1 || !strstr(r.first_site, "core/session.c"))
    fail_msg("the call made to fail was '%s', not core/session.c", r.first_site);
  tandem_session_destroy(s);
  return st;
}
/* A runtime lost by a failed submission; |then| is called with it. */
static tandem_status_t on_lost_runtime(tandem_status_t (*then)(tandem_runtime_t *rt)) {
  tandem_runtime_t *rt = armed_runtime(NULL);
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  g_exec = one_fill_exec(rt, b);
  TH_ASSERT_STATUS(fail_first(TANDEM_TEST_FAULT_VULKAN, "vkQueueSubmit2", submit_call),
                   TANDEM_ERROR_DEVICE_LOST);
  tandem_status_t s = then(rt);
  tandem_exec_release(g_exec);
  tandem_buffer_release(b);
  th_runtime_destroy(rt);
  return s;
}
static tandem_status_t begin_on(tandem_runtime_t *rt) {
  tandem_session_t *s = NULL;
  TH_ASSERT_OK(tandem_session_create(rt, NULL, &s));
  tandem_status_t st = keep(tandem_session_begin(s, NULL, 0, 0));
  tandem_session_destroy(s);
  return st;
}
static tandem_status_t begin_lost(void) { return on_lost_runtime(begin_on); }
static tandem_session_t *g_session;
static tandem_status_t end_call(void) { return keep(tandem_session_end(g_session, TANDEM_OK)); }
static tandem_status_t end_not_open(void) {
  TH_ASSERT_OK(tandem_session_create(F.rt, NULL, &g_session));
  tandem_status_t s = end_call();
  tandem_session_destroy(g_session);
  return s;
}
static tandem_status_t end_lost(void) {
  tandem_runtime_t *rt = armed_runtime(NULL);
  TH_ASSERT_OK(tandem_session_create(rt, NULL, &g_session));
  TH_ASSERT_OK(tandem_session_begin(g_session, NULL, 0, 0));
  tandem_status_t s = fail_first(TANDEM_TEST_FAULT_VULKAN, "vkSignalSemaphore", end_call);
  tandem_session_destroy(g_session);
  th_runtime_destroy(rt);
  return s;
}
/* statistics */
static tandem_status_t statistics_null(void) { return keep(tandem_runtime_statistics(F.rt, NULL)); }
static tandem_status_t statistics_size(void) {
  tandem_statistics_t st;
  tandem_statistics_init(&st);
  st.struct_size = 0;
  return keep(tandem_runtime_statistics(F.rt, &st));
}

/*---------------------------------------------------------------------------
 * The table
 *---------------------------------------------------------------------------*/

typedef struct row {
  const char *function;
  tandem_status_t code;
  const char *needle; /* what the message must name */
  tandem_status_t (*call)(void);
} row_t;

/* clang-format off */
#define R(fn, code, needle, call) {#fn, TANDEM_ERROR_##code, needle, call}
/* clang-format on */

static const row_t rows[] = {
    R(tandem_budget_create, INVALID_ARGUMENT, "out_budget", budget_null),
    R(tandem_budget_create, OUT_OF_RANGE, "budget limit 0", budget_zero),
    R(tandem_budget_create, OUT_OF_MEMORY, "allocating a budget", budget_oom),
    R(tandem_runtime_create, INVALID_ARGUMENT, "max_submissions is 0", runtime_limit),
    R(tandem_runtime_create, INVALID_ARGUMENT, "sharing is 9", runtime_enum),
    R(tandem_runtime_create, INVALID_ARGUMENT, "gpu_backend is 'metal'", runtime_backend),
    R(tandem_runtime_create, INVALID_ARGUMENT,
      "npu_backend: 'tpu' is no NPU backend of this library; the NPU backends are 'xrt', 'emulated'",
      runtime_npu_backend),
    R(tandem_runtime_create, INVALID_ARGUMENT, "sizeof(tandem_runtime_options_t)",
      runtime_size_zero),
    R(tandem_runtime_create, INVALID_ARGUMENT, "is not zero", runtime_size_newer),
    R(tandem_runtime_create, OUT_OF_MEMORY, "allocating a runtime", runtime_oom),
    R(tandem_runtime_trim, INVALID_ARGUMENT, "runtime is NULL", trim_null),
    R(tandem_runtime_gpu_count, INVALID_ARGUMENT, "out_count", gpu_count_null),
    R(tandem_runtime_gpu_count, NO_DEVICE, "no Vulkan driver", gpu_count_no_driver),
    R(tandem_runtime_gpu_count, OUT_OF_MEMORY, "listing physical devices", gpu_count_oom),
    R(tandem_runtime_gpu_info, INVALID_ARGUMENT, "out_info", gpu_info_null),
    R(tandem_runtime_gpu_info, INVALID_ARGUMENT, "sizeof(tandem_device_info_t)", gpu_info_size),
    R(tandem_runtime_gpu_info, OUT_OF_RANGE, "GPU index 99", gpu_info_index),
    R(tandem_runtime_gpu_info, NO_DEVICE, "no Vulkan driver", gpu_info_no_driver),
    R(tandem_runtime_gpu_info, OUT_OF_MEMORY, "listing physical devices", gpu_info_oom),
    R(tandem_runtime_open_gpu, INVALID_ARGUMENT, "runtime is NULL", open_gpu_null),
    R(tandem_runtime_open_gpu, NO_DEVICE, "gpu_index is 99", open_gpu_absent),
    R(tandem_runtime_open_gpu, UNSUPPORTED, "VK_LAYER_KHRONOS_validation", open_gpu_no_layer),
    R(tandem_runtime_open_gpu, OUT_OF_MEMORY, "allocating the Vulkan device", open_gpu_oom),
    R(tandem_runtime_vulkan_handles, INVALID_ARGUMENT, "out is NULL", handles_null),
    R(tandem_runtime_vulkan_handles, NO_DEVICE, "gpu_index is 99", handles_absent),
    R(tandem_runtime_open_gpu_at, OUT_OF_RANGE, "GPU 4: the runtime has 1 GPU", open_gpu_at_range),
    R(tandem_runtime_gpu_describe, INVALID_ARGUMENT, "out_info", describe_null),
    R(tandem_runtime_gpu_describe, OUT_OF_RANGE, "GPU 2: the runtime has 1 GPU", describe_range),
    R(tandem_runtime_gpu_pair, INVALID_ARGUMENT, "out_info is NULL", pair_null),
    R(tandem_runtime_gpu_pair, INVALID_ARGUMENT, "sizeof(tandem_gpu_pair_info_t)", pair_size),
    R(tandem_runtime_gpu_pair, INVALID_ARGUMENT, "GPU 0 paired with itself", pair_self),
    R(tandem_runtime_gpu_pair, OUT_OF_RANGE, "GPU 1: the runtime has 1 GPU", pair_range),
    R(tandem_runtime_vulkan_handles_at, OUT_OF_RANGE, "GPU 3: the runtime has 1 GPU",
      handles_at_range),
    R(tandem_buffer_create_on, OUT_OF_RANGE, "GPU 2: the runtime has 1 GPU", create_on_range),
    R(tandem_buffer_create, OUT_OF_RANGE, "buffer size 0", buffer_size),
    R(tandem_buffer_create, INVALID_ARGUMENT, "placement 9", buffer_placement),
    R(tandem_buffer_create, UNSUPPORTED, "placement SHARED needs an NPU", buffer_no_npu),
    R(tandem_buffer_create, OVER_BUDGET, "8192 bytes would exceed the memory budget",
      buffer_budget),
    R(tandem_buffer_create, OUT_OF_MEMORY, "3221225472 bytes do not fit", buffer_too_big),
    R(tandem_buffer_create, OUT_OF_MEMORY, "68719476736 bytes do not fit", buffer_over_max_size),
    R(tandem_buffer_create, OUT_OF_MEMORY, "allocating a buffer object", buffer_oom),
    R(tandem_buffer_create, DEVICE_LOST, "GPU_LOCAL buffer of 4096 bytes: vkQueueSubmit2",
      buffer_lost),
    R(tandem_buffer_create, IO, "SHARED buffer of 4096 bytes: xrtBOSync", buffer_npu_sync),
    R(tandem_buffer_create, NO_DEVICE, "gpu_index is 99", buffer_absent),
    R(tandem_buffer_memory, INVALID_ARGUMENT, "out is NULL", memory_null),
    R(tandem_buffer_memory, UNSUPPORTED, "a NPU_LOCAL buffer has no GPU memory", memory_npu_local),
    R(tandem_buffer_view, INVALID_ARGUMENT, "out_view", view_null),
    R(tandem_buffer_view, OUT_OF_RANGE, "(offset 4000, length 200)", view_past_end),
    R(tandem_map_read, INVALID_ARGUMENT, "view has no buffer", map_no_buffer),
    R(tandem_map_read, OUT_OF_RANGE, "(offset 4096, length 4)", map_outside),
    R(tandem_map_write, UNSUPPORTED, "a GPU_LOCAL buffer cannot be mapped", map_gpu_local),
    R(tandem_map_write, BUSY, "live read map", map_conflict),
    R(tandem_buffer_create_staged, INVALID_ARGUMENT, "data is NULL", staged_create_null),
    R(tandem_buffer_create_staged, OUT_OF_RANGE, "size 0", staged_create_size),
    R(tandem_buffer_write_staged, INVALID_ARGUMENT, "data is NULL", staged_write_null),
    R(tandem_buffer_write_staged, OUT_OF_RANGE, "(offset 4096, length 16)", staged_write_outside),
    R(tandem_buffer_read_staged, INVALID_ARGUMENT, "out_data is NULL", staged_read_null),
    R(tandem_buffer_read_staged, BUSY, "live write map", staged_read_busy),
    R(tandem_graph_run, INVALID_ARGUMENT, "graph is NULL", graph_run_null),
    R(tandem_graph_run, INVALID_ARGUMENT, "the graph has no nodes", graph_run_empty),
    R(tandem_try_map_read, BUSY, "in use by in-flight device work", try_map_in_flight),
    R(tandem_map_read, FAILED_DEPENDENCY,
      "bytes 0..64: bytes 0..4096 of the buffer were last "
      "written by work that failed (ERROR_INTERNAL)",
      map_poisoned),
    R(tandem_map_read, DEVICE_LOST, "work that failed (ERROR_DEVICE_LOST)", map_lost),
    R(tandem_map_write, OUT_OF_MEMORY, "mapping bytes 0..64: growing", map_oom),
    R(tandem_kernel_create, INVALID_ARGUMENT, "none of spirv, spirv_path and glsl_source",
      kernel_no_code),
    R(tandem_kernel_create, INVALID_ARGUMENT, "size x is 1048576", kernel_local_size),
    R(tandem_kernel_create, INVALID_ARGUMENT, "sizeof(tandem_kernel_desc_t)", kernel_struct_size),
    R(tandem_kernel_create, IO, "/nonexistent/errors_kernel.spv", kernel_io),
    R(tandem_kernel_create, INVALID_KERNEL, "first word is 0x12345678", kernel_malformed),
    R(tandem_kernel_create, INVALID_KERNEL, "nonsense", kernel_glsl),
    R(tandem_kernel_create, CONTRACT, "push constants are 4 bytes, the contract says 8",
      kernel_contract),
    R(tandem_kernel_create, UNSUPPORTED, "required_subgroup_size 1024", kernel_subgroup),
    R(tandem_kernel_create, OUT_OF_MEMORY, "kernel 'errors_add_one': allocating", kernel_oom),
    R(tandem_kernel_create, NO_DEVICE, "gpu_index is 99", kernel_absent),
    R(tandem_kernel_info, INVALID_ARGUMENT, "out_info", kernel_info_null),
    R(tandem_kernel_info, INVALID_ARGUMENT, "sizeof(tandem_kernel_info_t)", kernel_info_size),
    R(tandem_runtime_create, UNSUPPORTED, "not created with feature synchronization2",
      runtime_own_missing),
    R(tandem_runtime_create, INVALID_ARGUMENT, "the download lane's queue_family is 99",
      runtime_own_queue),
    R(tandem_buffer_adopt_vulkan, INVALID_ARGUMENT, "the buffer belongs to another VkDevice",
      adopt_buffer_other),
    R(tandem_buffer_adopt_vulkan, OUT_OF_RANGE, "size 8192 is more than the buffer holds",
      adopt_buffer_size),
    R(tandem_buffer_adopt_vulkan, UNSUPPORTED, "memory_type 99 is not a memory type",
      adopt_buffer_type),
    R(tandem_buffer_adopt_vulkan, OVER_BUDGET, "4096 bytes would exceed the memory budget",
      adopt_buffer_budget),
    R(tandem_buffer_adopt_vulkan, OUT_OF_MEMORY, "allocating a buffer object", adopt_buffer_oom),
    R(tandem_buffer_adopt_vulkan, NO_DEVICE, "gpu_index is 99", adopt_buffer_absent),
    R(tandem_kernel_adopt_vulkan, INVALID_ARGUMENT, "desc->set_layout is NULL", adopt_kernel_null),
    R(tandem_kernel_adopt_vulkan, INVALID_ARGUMENT,
      "the pipeline of kernel 'errors_add_one' belongs to another VkDevice", adopt_kernel_other),
    R(tandem_kernel_adopt_vulkan, IO, "/nonexistent/errors_adopted.spv", adopt_kernel_io),
    R(tandem_kernel_adopt_vulkan, INVALID_KERNEL, "first word is 0x12345678",
      adopt_kernel_malformed),
    R(tandem_kernel_adopt_vulkan, CONTRACT, "the shader declares 1 bindings, the contract has 2",
      adopt_kernel_contract),
    R(tandem_kernel_adopt_vulkan, UNSUPPORTED, "required_subgroup_size 1024",
      adopt_kernel_subgroup),
    R(tandem_kernel_adopt_vulkan, OUT_OF_MEMORY, "kernel 'errors_add_one': allocating",
      adopt_kernel_oom),
    R(tandem_kernel_adopt_vulkan, NO_DEVICE, "gpu_index is 99", adopt_kernel_absent),
    R(tandem_runtime_open_npu, INVALID_ARGUMENT, "runtime is NULL", open_npu_null),
    R(tandem_runtime_open_npu, NO_DEVICE, "created without one", open_npu_none),
    R(tandem_runtime_open_npu, NO_DEVICE, "/nonexistent/libtandem_npu_emu.so.0", open_npu_library),
    R(tandem_runtime_open_npu, UNSUPPORTED, "forced sharing path 'dma-buf into GPU'",
      open_npu_forced),
    R(tandem_runtime_open_npu, OUT_OF_MEMORY, "allocating the NPU device", open_npu_oom),
    R(tandem_runtime_open_npu, IO, "negotiating GPU-NPU sharing", open_npu_probe_io),
    R(tandem_runtime_npu_info, INVALID_ARGUMENT, "out_info", npu_info_null),
    R(tandem_runtime_npu_info, INVALID_ARGUMENT, "sizeof(tandem_npu_info_t)", npu_info_size),
    R(tandem_runtime_npu_info, NO_DEVICE, "created without one", npu_info_none),
    R(tandem_npu_program_create, INVALID_ARGUMENT, "program_path and kernel_name",
      program_no_xclbin),
    R(tandem_npu_program_create, IO, "/nonexistent/errors.xclbin", program_io),
    R(tandem_npu_program_create, IO, "/nonexistent/emulated-errors.xclbin", program_emulated_io),
    R(tandem_npu_program_create, INVALID_KERNEL, "errors_no_such_kernel", program_kernel),
    R(tandem_npu_program_create, CONTRACT, "more arguments than the contract's 1 bindings",
      program_contract),
    R(tandem_npu_program_create, OUT_OF_MEMORY, "allocating an NPU program", program_oom),
    R(tandem_npu_program_create, IO, "'errors_instructions': its 16-byte instruction",
      program_sync),
    R(tandem_completion_wait, IO, "xrtBOSync to device of bytes 0..4", run_sync),
    R(tandem_npu_program_create, NO_DEVICE, "created without one", program_none),
    R(tandem_graph_create, INVALID_ARGUMENT, "out_graph", graph_null),
    R(tandem_graph_create, OUT_OF_MEMORY, "allocating a graph", graph_oom),
    R(tandem_graph_add_fill, INVALID_ARGUMENT, "lane 7", fill_lane),
    R(tandem_graph_add_fill, INVALID_ARGUMENT, "fill: the NPU lane (3) runs only NPU programs",
      fill_npu_lane),
    R(tandem_graph_add_fill, INVALID_ARGUMENT, "another runtime", fill_foreign),
    R(tandem_graph_add_fill, OUT_OF_RANGE, "offset 2 and length 64", fill_align),
    R(tandem_graph_add_fill, OUT_OF_RANGE, "length 8192", fill_outside),
    R(tandem_graph_add_fill, OUT_OF_RANGE, "TANDEM_MAX_GRAPH_NODES", fill_full),
    R(tandem_graph_add_fill, UNSUPPORTED, "fill destination: an NPU_LOCAL buffer", fill_npu_local),
    R(tandem_graph_add_fill, OUT_OF_MEMORY, "fill: growing a graph of 0 nodes", fill_oom),
    R(tandem_graph_add_copy, INVALID_ARGUMENT, "lane -5", copy_lane),
    R(tandem_graph_add_copy, OUT_OF_RANGE, "source is 64 bytes, destination 128", copy_lengths),
    R(tandem_graph_add_copy, OUT_OF_RANGE, "destination bytes 32..96 overlap", copy_overlap),
    R(tandem_graph_add_copy, UNSUPPORTED, "copy source: an NPU_LOCAL buffer", copy_npu_local),
    R(tandem_graph_add_copy, OUT_OF_MEMORY, "copy: growing a graph", copy_oom),
    R(tandem_graph_add_dispatch, INVALID_ARGUMENT, "desc->kernel is NULL", dispatch_null),
    R(tandem_graph_add_dispatch, INVALID_ARGUMENT, "belongs to another runtime",
      dispatch_foreign_kernel),
    R(tandem_graph_add_dispatch, INVALID_ARGUMENT, "buffer belongs to another runtime",
      dispatch_foreign_view),
    R(tandem_graph_add_dispatch, INVALID_ARGUMENT, "no default workgroup count",
      dispatch_no_default),
    R(tandem_graph_add_dispatch, CONTRACT, "2 views given", dispatch_view_count),
    R(tandem_graph_add_dispatch, CONTRACT, "view is 512 bytes, contract needs 1024",
      dispatch_short),
    R(tandem_graph_add_dispatch, CONTRACT, "8 push-constant bytes given", dispatch_push),
    R(tandem_graph_add_dispatch, OUT_OF_RANGE, "(offset 4096, length 1024)", dispatch_outside),
    R(tandem_graph_add_dispatch, UNSUPPORTED, "dispatch view: an NPU_LOCAL buffer",
      dispatch_npu_local),
    R(tandem_graph_add_dispatch, OUT_OF_MEMORY, "dispatch of 'add_one_u32': growing", dispatch_oom),
    R(tandem_graph_add_dispatch_node, INVALID_ARGUMENT, "workgroups[0] is 0", node_workgroups),
    R(tandem_graph_add_dispatch_node, INVALID_ARGUMENT, "maxComputeWorkGroupCount", node_too_many),
    R(tandem_graph_add_dispatch_node, INVALID_ARGUMENT, "not both", node_both),
    R(tandem_graph_add_dispatch_node, OUT_OF_RANGE, "indirect view (offset 2", node_indirect),
    R(tandem_graph_add_npu_run, INVALID_ARGUMENT, "views is NULL", npu_run_null_views),
    R(tandem_graph_add_npu_run, INVALID_ARGUMENT, "another runtime", npu_run_foreign),
    R(tandem_graph_add_npu_run, CONTRACT, "0 scalars given", npu_run_count),
    R(tandem_graph_add_npu_run, CONTRACT, "HOST_VISIBLE buffer has no NPU side",
      npu_run_no_npu_side),
    R(tandem_graph_add_npu_run, CONTRACT, "view offset 64", npu_run_offset),
    R(tandem_graph_add_npu_run, OUT_OF_RANGE, "length 8192", npu_run_outside),
    R(tandem_graph_add_npu_run, OUT_OF_MEMORY, "NPU run of 'errors_sleep': growing", npu_run_oom),
    R(tandem_graph_prepare, INVALID_ARGUMENT, "the graph has no nodes", prepare_empty),
    R(tandem_graph_prepare, OUT_OF_MEMORY, "allocating an executable graph", prepare_oom),
    R(tandem_graph_prepare, UNSUPPORTED, "maxStorageBufferRange", prepare_range),
    R(tandem_graph_prepare, NO_DEVICE, "gpu_index is 99", prepare_absent),
    R(tandem_exec_set_push_constants, INVALID_ARGUMENT, "node 9 is out of range", set_push_node),
    R(tandem_exec_set_push_constants, INVALID_ARGUMENT, "node 0 is a fill node", set_push_kind),
    R(tandem_exec_set_push_constants, CONTRACT, "2 push-constant bytes given", set_push_bytes),
    R(tandem_exec_set_workgroups, INVALID_ARGUMENT, "workgroups[1] is 0", set_wg_zero),
    R(tandem_exec_set_view, INVALID_ARGUMENT, "binding 3 is out of range", set_view_binding),
    R(tandem_exec_set_view, INVALID_ARGUMENT, "view has no buffer", set_view_none),
    R(tandem_exec_set_view, CONTRACT, "view is 512 bytes, contract needs 1024", set_view_short),
    R(tandem_exec_set_view, CONTRACT, "GPU_LOCAL buffer", set_view_placement),
    R(tandem_exec_set_view, CONTRACT, "does not order node 0 before node 1", set_view_order),
    R(tandem_exec_set_view, OUT_OF_RANGE, "(offset 3584, length 1024)", set_view_outside),
    R(tandem_exec_set_view, OUT_OF_RANGE, "offset 2 and length 1024", set_view_fill_align),
    R(tandem_exec_submit, INVALID_ARGUMENT, "out_completion", submit_null),
    R(tandem_exec_submit, BUSY, "graph slots", submit_slots),
    R(tandem_exec_submit, BUSY, "max_submissions", submit_max),
    R(tandem_exec_submit, BUSY, "live host write map", submit_mapped),
    R(tandem_exec_submit, FAILED_DEPENDENCY, "written by work that failed", submit_poisoned),
    R(tandem_exec_submit, OUT_OF_MEMORY, "recording a region's command buffer", submit_record_oom),
    R(tandem_exec_submit, DEVICE_LOST, "vkQueueSubmit2", submit_lost_now),
    R(tandem_exec_submit, DEVICE_LOST, "failed earlier", submit_lost_earlier),
    R(tandem_runtime_trace_start, INVALID_ARGUMENT, "runtime is NULL", trace_null),
    R(tandem_runtime_trace_start, OUT_OF_RANGE, "trace capacity 0", trace_capacity),
    R(tandem_runtime_trace_start, BUSY, "already running", trace_twice),
    R(tandem_runtime_trace_start, UNSUPPORTED, "create the runtime with gpu_timestamps = true",
      trace_untimed),
    R(tandem_runtime_trace_start, OUT_OF_MEMORY, "allocating a trace of 16 events", trace_oom),
    R(tandem_runtime_trace_stop, INVALID_ARGUMENT, "no trace is running", trace_not_running),
    R(tandem_trace_write_json, INVALID_ARGUMENT, "trace or path is NULL", trace_json_null),
    R(tandem_trace_write_json, IO, "/nonexistent/dir/errors_trace.json", trace_json_io),
    R(tandem_runtime_statistics, INVALID_ARGUMENT, "out_statistics", statistics_null),
    R(tandem_runtime_statistics, INVALID_ARGUMENT, "sizeof(tandem_statistics_t)", statistics_size),
    R(tandem_view_vulkan_buffer, INVALID_ARGUMENT, "out is NULL", vulkan_view_null),
    R(tandem_view_vulkan_buffer, OUT_OF_RANGE, "(offset 4000, length 200)", vulkan_view_outside),
    R(tandem_view_vulkan_buffer, UNSUPPORTED, "NPU_LOCAL buffer has no VkBuffer",
      vulkan_view_npu_local),
    R(tandem_buffer_xrt_bo, INVALID_ARGUMENT, "out_bo is NULL", xrt_bo_null),
    R(tandem_buffer_xrt_bo, UNSUPPORTED, "no NPU open", xrt_bo_no_npu),
    R(tandem_buffer_xrt_bo, UNSUPPORTED, "HOST_VISIBLE buffer has no XRT buffer object",
      xrt_bo_host),
    R(tandem_buffer_create_exportable, INVALID_ARGUMENT, "types 0x0", exportable_types),
    R(tandem_buffer_create_exportable, OUT_OF_RANGE, "buffer size 0", exportable_size),
    R(tandem_buffer_create_exportable, UNSUPPORTED, "placement SHARED is not supported",
      exportable_shared),
    R(tandem_buffer_create_exportable, UNSUPPORTED, "VK_EXT_external_memory_dma_buf",
      exportable_dma_buf),
    R(tandem_buffer_export_fd, INVALID_ARGUMENT, "type 3", export_type),
    R(tandem_buffer_export_fd, UNSUPPORTED, "tandem_buffer_create_exportable", export_ordinary),
    R(tandem_buffer_export_fd, OUT_OF_MEMORY, "exporting a 4096-byte buffer as opaque fd",
      export_oom),
    R(tandem_buffer_import_fd, INVALID_ARGUMENT, "memory->fd -1", import_bad_fd),
    R(tandem_buffer_import_fd, INVALID_ARGUMENT, "is a pipe or FIFO", import_pipe),
    R(tandem_buffer_import_fd, INVALID_ARGUMENT, "is a pipe or FIFO", import_fifo),
    R(tandem_buffer_import_fd, INVALID_ARGUMENT, "is a socket", import_socket),
    R(tandem_buffer_import_fd, INVALID_ARGUMENT, "is a directory", import_directory),
    R(tandem_buffer_import_fd, INVALID_ARGUMENT, "is a regular file", import_regular_file),
    R(tandem_buffer_import_fd, OUT_OF_RANGE, "1048576-byte buffer does not fit", import_too_big),
    R(tandem_buffer_import_fd, UNSUPPORTED, "VK_EXT_external_memory_dma_buf", import_dma_buf),
    R(tandem_buffer_import_fd, OUT_OF_MEMORY, "allocating a buffer object", import_oom),
    R(tandem_runtime_export_timeline_fd, INVALID_ARGUMENT, "lane 9", timeline_export_lane),
    R(tandem_runtime_export_timeline_fd, UNSUPPORTED,
      "cannot export timelines: it lacks VK_KHR_external_semaphore_fd", timeline_export_off),
    R(tandem_completion_lane_values, INVALID_ARGUMENT, "out_values is NULL", lane_values_null),
    R(tandem_runtime_import_timeline_fd, INVALID_ARGUMENT, "fd -3 is negative",
      timeline_import_negative),
    R(tandem_runtime_import_timeline_fd, UNSUPPORTED, "VK_KHR_external_semaphore_fd",
      timeline_import_unsupported),
    R(tandem_external_timeline_wait, INVALID_ARGUMENT, "timeline is NULL", timeline_wait_null),
    R(tandem_graph_add_vulkan_commands, INVALID_ARGUMENT, "lane 3 is not a GPU lane",
      vk_commands_lane),
    R(tandem_graph_add_vulkan_commands, OUT_OF_RANGE, "33 accesses declared, at most 32",
      vk_commands_many),
    R(tandem_graph_add_vulkan_commands, UNSUPPORTED,
      "access 0 of Vulkan commands node 0: view: an NPU_LOCAL buffer", vk_commands_npu_local),
    R(tandem_graph_add_vulkan_commands, OUT_OF_MEMORY, "Vulkan commands node 0: growing a graph",
      vk_commands_oom),
    R(tandem_vulkan_scope_view, INVALID_ARGUMENT, "node 0: access 1 is not declared",
      scope_view_undeclared),
    R(tandem_graph_prepare, TIMEOUT, "its record callback returned ERROR_TIMEOUT",
      prepare_callback),
    R(tandem_runtime_run_vulkan_commands, INVALID_ARGUMENT, "out_completion is NULL",
      run_commands_null),
    R(tandem_runtime_run_vulkan_commands, OUT_OF_RANGE, "(offset 4000, length 200)",
      run_commands_outside),
    R(tandem_runtime_run_vulkan_commands, BUSY, "live host read map", run_commands_busy),
    R(tandem_runtime_run_vulkan_commands, IO, "its record callback returned ERROR_IO",
      run_commands_callback),
    R(tandem_runtime_submit_vulkan, INVALID_ARGUMENT, "returned TANDEM_OK with no semaphore",
      submit_vulkan_no_semaphore),
    R(tandem_runtime_submit_vulkan, CANCELLED, "its submit callback returned ERROR_CANCELLED",
      submit_vulkan_code),
    R(tandem_runtime_submit_vulkan, BUSY, "live host write map", submit_vulkan_busy),
    R(tandem_runtime_submit_vulkan, UNSUPPORTED, "an NPU_LOCAL buffer is not visible to the GPU",
      submit_vulkan_npu_local),
    R(tandem_runtime_lane_info, INVALID_ARGUMENT, "lane 17: lane ids are 0..16", lane_info_range),
    R(tandem_runtime_lane_info, INVALID_ARGUMENT, "out_info is NULL", lane_info_null),
    R(tandem_exec_submit_waiting, INVALID_ARGUMENT, "lane 1 is not an external lane",
      submit_waiting_builtin),
    R(tandem_exec_submit_waiting, INVALID_ARGUMENT, "at most 8 lanes", submit_waiting_count),
    R(tandem_external_timeline_lane, INVALID_ARGUMENT, "timeline is NULL", timeline_lane_null),
    R(tandem_session_create, INVALID_ARGUMENT, "out_session is NULL", session_null),
    R(tandem_session_create, BUSY, "all 4 user lanes of the runtime are taken", session_busy),
    R(tandem_session_create, OUT_OF_MEMORY, "allocating a session", session_oom),
    R(tandem_session_create, OUT_OF_MEMORY, "vkCreateSemaphore", session_semaphore_oom),
    R(tandem_session_create, NO_DEVICE, "gpu_index is 99", session_absent),
    R(tandem_session_begin, INVALID_ARGUMENT, "session is NULL", begin_null),
    R(tandem_session_begin, INVALID_ARGUMENT, "access 0 is not", begin_access),
    R(tandem_session_begin, INVALID_ARGUMENT, "already has a stage open", begin_open),
    R(tandem_session_begin, OUT_OF_RANGE, "not inside its 4096-byte buffer", begin_range),
    R(tandem_session_begin, BUSY, "live host write map", begin_mapped),
    R(tandem_session_begin, FAILED_DEPENDENCY, "quarantined", begin_quarantined),
    R(tandem_session_begin, TIMEOUT, "no stage was begun", begin_timeout),
    R(tandem_session_begin, OUT_OF_MEMORY, "records for 1 session accesses", begin_oom),
    R(tandem_session_begin, DEVICE_LOST, "no stage can begin", begin_lost),
    R(tandem_session_end, INVALID_ARGUMENT, "has no stage open", end_not_open),
    R(tandem_session_end, DEVICE_LOST, "vkSignalSemaphore", end_lost),
};

#define ROW_COUNT (sizeof rows / sizeof rows[0])

/* Each row: a fresh graph of F.rt in G, no injection armed, and after the
 * call the exact code, a message, the needle in it, and no validation message. */
static int row_setup(void **state) {
  (void)state;
  (void)tandem_test_fault_set(NULL); /* a failed row may have left it armed */
  G = th_graph(F.rt);
  return 0;
}

static int row_teardown(void **state) {
  (void)state;
  (void)tandem_test_fault_set(NULL);
  tandem_graph_release(G);
  G = NULL;
  return 0;
}

static void run_row(void **state) {
  const row_t *r = *state;
  g_msg[0] = '\0';
  tandem_status_t s = r->call();
  if (s == ROW_NOT_HERE) {
    print_message("[ SKIP     ] %s %s: %s\n", r->function, tandem_status_name(r->code), g_msg);
    skip();
  }
  if (s != r->code)
    fail_msg("%s: expected %s, got %s: '%s'", r->function, tandem_status_name(r->code),
             tandem_status_name(s), g_msg);
  if (!g_msg[0])
    fail_msg("%s answered %s with an empty message", r->function, tandem_status_name(s));
  if (!strstr(g_msg, r->needle))
    fail_msg("%s answered %s, but the message does not name '%s': '%s'", r->function,
             tandem_status_name(s), r->needle, g_msg);
  if (th_validation_count() != 0)
    fail_msg("%s: %llu validation messages", r->function,
             (unsigned long long)th_validation_count());
  if (getenv("TANDEM_TEST_VERBOSE")) fprintf(stderr, "  %s\n", g_msg);
}

/*---------------------------------------------------------------------------
 * Fixture and table coverage
 *---------------------------------------------------------------------------*/

static tandem_device_info_t device_info(void) {
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(F.rt, 0, &info));
  return info;
}

static int fixture_setup(void **state) {
  (void)state;
  tandem_runtime_options_t timed;
  tandem_runtime_options_init(&timed);
  timed.gpu_timestamps = true; /* traces need GPU timestamps */
  F.rt = armed_runtime(&timed);
  tandem_runtime_options_t o = npu_options();
  arm(TANDEM_TEST_FAULT_ALL, ARMED_FOREVER);
  F.npu = th_runtime_create(&o);
  TH_ASSERT_OK(tandem_runtime_open_npu(F.npu));
  disarm();
  F.host = th_buffer(F.rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  F.host2 = th_buffer(F.rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  F.gpu = th_buffer(F.rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  F.shared = th_buffer(F.npu, 4096, TANDEM_PLACEMENT_SHARED);
  F.npu_local = th_buffer(F.npu, 4096, TANDEM_PLACEMENT_NPU_LOCAL);
  F.other = th_buffer(F.npu, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  F.add_one = th_add_one_kernel(F.rt, 256);
  F.other_kernel = th_add_one_kernel(F.npu, 256);
  tandem_kernel_desc_t d = th_kernel_desc("errors_no_default", tandem_spv_add_one_u32,
                                          tandem_spv_add_one_u32_size, k_binding, 1, 4);
  TH_ASSERT_OK(tandem_kernel_create(F.rt, &d, &F.no_default));
  tandem_npu_program_desc_t pd = sleep_desc();
  TH_ASSERT_OK(tandem_npu_program_create(F.npu, &pd, &F.sleep));
  return 0;
}

/* The last test: releases the fixture, and its runtimes must end clean. */
static void fixture_teardown_clean(void **state) {
  (void)state;
  tandem_buffer_t *buffers[] = {F.host, F.host2, F.gpu, F.shared, F.npu_local, F.other};
  for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++) tandem_buffer_release(buffers[i]);
  tandem_kernel_release(F.add_one);
  tandem_kernel_release(F.no_default);
  tandem_kernel_release(F.other_kernel);
  tandem_npu_program_release(F.sleep);
  raw_release();
  th_runtime_destroy(F.rt);
  th_runtime_destroy(F.npu);
  memset(&F, 0, sizeof F);
}

/* Every public function with an Errors line has rows (the completion
 * functions are tested in test_run.c). */
static void table_covers_the_header(void **state) {
  (void)state;
  static const char *const functions[] = {"tandem_budget_create",
                                          "tandem_runtime_create",
                                          "tandem_runtime_gpu_count",
                                          "tandem_runtime_gpu_info",
                                          "tandem_runtime_open_gpu",
                                          "tandem_runtime_vulkan_handles",
                                          "tandem_runtime_open_gpu_at",
                                          "tandem_runtime_gpu_describe",
                                          "tandem_runtime_gpu_pair",
                                          "tandem_runtime_vulkan_handles_at",
                                          "tandem_buffer_create_on",
                                          "tandem_buffer_create",
                                          "tandem_buffer_memory",
                                          "tandem_buffer_view",
                                          "tandem_map_read",
                                          "tandem_map_write",
                                          "tandem_try_map_read",
                                          "tandem_kernel_create",
                                          "tandem_kernel_info",
                                          "tandem_runtime_open_npu",
                                          "tandem_runtime_npu_info",
                                          "tandem_npu_program_create",
                                          "tandem_graph_create",
                                          "tandem_graph_add_fill",
                                          "tandem_graph_add_copy",
                                          "tandem_graph_add_dispatch",
                                          "tandem_graph_add_dispatch_node",
                                          "tandem_graph_add_npu_run",
                                          "tandem_graph_prepare",
                                          "tandem_exec_set_push_constants",
                                          "tandem_exec_set_workgroups",
                                          "tandem_exec_set_view",
                                          "tandem_exec_submit",
                                          "tandem_runtime_trace_start",
                                          "tandem_runtime_trace_stop",
                                          "tandem_trace_write_json",
                                          "tandem_runtime_statistics",
                                          "tandem_view_vulkan_buffer",
                                          "tandem_buffer_xrt_bo",
                                          "tandem_buffer_create_exportable",
                                          "tandem_buffer_export_fd",
                                          "tandem_buffer_import_fd",
                                          "tandem_runtime_export_timeline_fd",
                                          "tandem_completion_lane_values",
                                          "tandem_runtime_import_timeline_fd",
                                          "tandem_external_timeline_wait",
                                          "tandem_buffer_adopt_vulkan",
                                          "tandem_kernel_adopt_vulkan",
                                          "tandem_graph_add_vulkan_commands",
                                          "tandem_vulkan_scope_view",
                                          "tandem_runtime_run_vulkan_commands",
                                          "tandem_runtime_submit_vulkan",
                                          "tandem_runtime_lane_info",
                                          "tandem_exec_submit_waiting",
                                          "tandem_external_timeline_lane",
                                          "tandem_session_create",
                                          "tandem_session_begin",
                                          "tandem_session_end",
                                          "tandem_runtime_trim",
                                          "tandem_buffer_create_staged",
                                          "tandem_buffer_write_staged",
                                          "tandem_buffer_read_staged",
                                          "tandem_graph_run"};
  for (size_t f = 0; f < sizeof functions / sizeof functions[0]; f++) {
    bool found = false;
    for (size_t i = 0; i < ROW_COUNT && !found; i++)
      found = strcmp(rows[i].function, functions[f]) == 0;
    if (!found) fail_msg("no row for %s", functions[f]);
  }
}

int main(void) {
  static struct CMUnitTest tests[ROW_COUNT + 2];
  static char names[ROW_COUNT][160];
  for (size_t i = 0; i < ROW_COUNT; i++) {
    snprintf(names[i], sizeof names[i], "%s %s: %s", rows[i].function,
             tandem_status_name(rows[i].code), rows[i].needle);
    tests[i] = (struct CMUnitTest){.name = names[i],
                                   .test_func = run_row,
                                   .setup_func = row_setup,
                                   .teardown_func = row_teardown,
                                   .initial_state = (void *)&rows[i]};
  }
  tests[ROW_COUNT] =
      (struct CMUnitTest){.name = "table covers the header", .test_func = table_covers_the_header};
  tests[ROW_COUNT + 1] =
      (struct CMUnitTest){.name = "fixture ends clean", .test_func = fixture_teardown_clean};
  th_init();
  return _cmocka_run_group_tests("test_errors", tests, ROW_COUNT + 2, fixture_setup, NULL);
}
