/* SPDX-License-Identifier: MIT */
/*
 * test_interop.c — tandem beside other code and other processes
 * (tandem_vulkan.h, tandem_xrt.h, and tandem.h "Sharing"): a view's VkBuffer used by raw Vulkan on tandem's queue, the XRT
 * buffer object of NPU buffers (emulated NPU), exportable buffers imported by
 * a second runtime, lane timeline values, exported timelines, and
 * tandem_version().
 *
 * With an argument it runs one two-process case instead (its own CTest):
 * `two-process memory` — process A exports a HOST_VISIBLE buffer's memory fd
 * over a Unix socket (SCM_RIGHTS) to process B (this program again, started
 * with fork+exec so it owns a fresh Vulkan loader and driver), which imports
 * it into its own runtime; A fills it on the GPU, tells B when it is done, B
 * reads and checks the bytes, then fills it with its own pattern for A to
 * read back. `two-process timeline` does the same but B learns that A's work
 * ended only by waiting on A's exported compute timeline. Whatever the device
 * lacks (VK_KHR_external_memory_fd, VK_KHR_external_semaphore_fd) makes the
 * case exit 77 (skip) naming the extension. Both processes run with
 * validation; any message fails the case.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness_vk.h"
#include "tandem/tandem_vulkan.h"
#include "tandem/tandem_xrt.h"

/*------------------------------------------------------------- version --*/

static void test_version(void **state) {
  (void)state;
  char expected[32];
  snprintf(expected, sizeof expected, "%d.%d.%d", TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR,
           TANDEM_VERSION_PATCH);
  assert_string_equal(tandem_version(), expected);
  /* The CMake project version the suite was configured with. */
  assert_string_equal(tandem_version(), TANDEM_TEST_PROJECT_VERSION);
}

/*------------------------------------------------------ native accessors --*/

/* A view's (VkBuffer, offset, range) is exactly what the view names: raw
 * Vulkan fills it on tandem's compute queue (under the queue lock), and
 * tandem's map sees the pattern inside the view and zeros around it. */
static void test_view_vulkan_buffer(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *other = th_buffer(rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_vulkan_view_t vv;
  TH_ASSERT_STATUS(tandem_view_vulkan_buffer(th_view(b, 0, 16), NULL),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_view_t none = {0};
  TH_ASSERT_STATUS(tandem_view_vulkan_buffer(none, &vv), TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(vv.buffer);
  tandem_view_t past = {b, 4000, 200};
  TH_ASSERT_STATUS_MSG(tandem_view_vulkan_buffer(past, &vv), TANDEM_ERROR_OUT_OF_RANGE, "4000");
  tandem_vulkan_view_t whole, gpu_local;
  TH_ASSERT_OK(tandem_view_vulkan_buffer(tandem_buffer_whole(b), &whole));
  TH_ASSERT_OK(tandem_view_vulkan_buffer(th_view(b, 1024, 2048), &vv));
  TH_ASSERT_OK(tandem_view_vulkan_buffer(tandem_buffer_whole(other), &gpu_local));
  assert_non_null(vv.buffer);
  assert_ptr_equal(vv.buffer, whole.buffer);
  assert_ptr_not_equal(vv.buffer, gpu_local.buffer);
  TH_ASSERT_U64_EQ(vv.offset, 1024);
  TH_ASSERT_U64_EQ(vv.range, 2048);

  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  th_vk_fns_t vk = th_vk_fns(&h);
  const tandem_vulkan_lane_t *lane = &h.lanes[TANDEM_LANE_COMPUTE];
  VkCommandPool pool = th_vk_command_pool(&vk, lane->queue_family);
  VkCommandBuffer cb = th_vk_begin(&vk, pool);
  vk.CmdFillBuffer(cb, (VkBuffer)vv.buffer, vv.offset, vv.range, 0xC0FFEE11u);
  th_vk_submit_wait(&vk, rt, TANDEM_LANE_COMPUTE, (VkQueue)lane->queue, cb);
  vk.DestroyCommandPool(vk.device, pool, NULL);

  uint32_t got[1024];
  th_read(b, 0, got, sizeof got);
  TH_ASSERT_U32_FILL(got, 0, 256, "bytes before the view");
  TH_ASSERT_U32_FILL(got + 256, 0xC0FFEE11u, 512, "the view, filled by raw Vulkan");
  TH_ASSERT_U32_FILL(got + 768, 0, 256, "bytes after the view");
  tandem_buffer_release(other);
  tandem_buffer_release(b);
}

static void test_xrt_bo_without_npu(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *b = th_buffer(rt, 64, TANDEM_PLACEMENT_HOST_VISIBLE);
  void *bo = (void *)(uintptr_t)1;
  TH_ASSERT_STATUS(tandem_buffer_xrt_bo(b, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_buffer_xrt_bo(NULL, &bo), TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(bo);
  TH_ASSERT_STATUS_MSG(tandem_buffer_xrt_bo(b, &bo), TANDEM_ERROR_UNSUPPORTED, "no NPU open");
  assert_null(bo);
  tandem_buffer_release(b);
}

/* SHARED and NPU_LOCAL buffers hand out the BO tandem's NPU backend uses:
 * the emulator's own xrtBOMap/xrtBOSize on it agree with tandem's map. */
static void test_xrt_bo_emulated(void **state) {
  (void)state;
  th_validation_reset();
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "emulated";
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  tandem_runtime_t *rt = th_runtime_create(&o);
  TH_ASSERT_OK(tandem_runtime_open_npu(rt));
  void *lib = dlopen(TANDEM_TEST_NPU_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(lib);
  void *(*bo_map)(void *) = (void *(*)(void *))dlsym(lib, "xrtBOMap");
  size_t (*bo_size)(void *) = (size_t(*)(void *))dlsym(lib, "xrtBOSize");
  assert_non_null(bo_map);
  assert_non_null(bo_size);
  const tandem_placement_t placements[2] = {TANDEM_PLACEMENT_SHARED, TANDEM_PLACEMENT_NPU_LOCAL};
  for (int i = 0; i < 2; i++) {
    tandem_buffer_t *b = th_buffer(rt, 4096, placements[i]);
    void *bo = NULL;
    TH_ASSERT_OK(tandem_buffer_xrt_bo(b, &bo));
    assert_non_null(bo);
    assert_true(bo_size(bo) >= 4096);
    tandem_map_t m;
    TH_ASSERT_OK(tandem_map_read(tandem_buffer_whole(b), &m));
    assert_ptr_equal(bo_map(bo), m.data);
    tandem_unmap(&m);
    tandem_vulkan_view_t vv;
    if (placements[i] == TANDEM_PLACEMENT_NPU_LOCAL) {
      TH_ASSERT_STATUS_MSG(tandem_view_vulkan_buffer(tandem_buffer_whole(b), &vv),
                           TANDEM_ERROR_UNSUPPORTED, "NPU_LOCAL");
    } else {
      TH_ASSERT_OK(tandem_view_vulkan_buffer(tandem_buffer_whole(b), &vv));
      assert_non_null(vv.buffer);
    }
    tandem_buffer_release(b);
  }
  tandem_buffer_t *h = th_buffer(rt, 64, TANDEM_PLACEMENT_HOST_VISIBLE);
  void *bo = NULL;
  TH_ASSERT_STATUS_MSG(tandem_buffer_xrt_bo(h, &bo), TANDEM_ERROR_UNSUPPORTED, "HOST_VISIBLE");
  tandem_buffer_release(h);
  dlclose(lib);
  th_runtime_destroy(rt);
}

/*------------------------------------------------------ exported memory --*/

static bool has_feature(tandem_runtime_t *rt, uint32_t bit) {
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  return (info.features & bit) != 0;
}

static bool fd_open(int fd) { return fcntl(fd, F_GETFD) >= 0; }

/* Whether |fd| still names the file |was| describes (a closed number may be
 * reused by any thread for another file at once). */
static bool fd_is(int fd, const struct stat *was) {
  struct stat now;
  return fstat(fd, &now) == 0 && now.st_dev == was->st_dev && now.st_ino == was->st_ino;
}

static void test_exportable_errors(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *b = (tandem_buffer_t *)(uintptr_t)1;
  TH_ASSERT_STATUS(tandem_buffer_create_exportable(rt, 64, TANDEM_PLACEMENT_GPU_LOCAL, 0, &b),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(b);
  TH_ASSERT_STATUS(tandem_buffer_create_exportable(rt, 64, TANDEM_PLACEMENT_GPU_LOCAL, 8, &b),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_buffer_create_exportable(rt, 0, TANDEM_PLACEMENT_GPU_LOCAL,
                                                   TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &b),
                   TANDEM_ERROR_OUT_OF_RANGE);
  TH_ASSERT_STATUS_MSG(tandem_buffer_create_exportable(rt, 64, TANDEM_PLACEMENT_SHARED,
                                                       TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &b),
                       TANDEM_ERROR_UNSUPPORTED, "SHARED");
  if (!has_feature(rt, TANDEM_GPU_EXTERNAL_MEMORY_DMA_BUF))
    TH_ASSERT_STATUS_MSG(tandem_buffer_create_exportable(rt, 64, TANDEM_PLACEMENT_GPU_LOCAL,
                                                         TANDEM_EXTERNAL_MEMORY_DMA_BUF, &b),
                         TANDEM_ERROR_UNSUPPORTED, "VK_EXT_external_memory_dma_buf");
  if (!has_feature(rt, TANDEM_GPU_EXTERNAL_MEMORY_FD))
    TH_ASSERT_STATUS_MSG(tandem_buffer_create_exportable(rt, 64, TANDEM_PLACEMENT_GPU_LOCAL,
                                                         TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &b),
                         TANDEM_ERROR_UNSUPPORTED, "VK_KHR_external_memory_fd");
  /* An ordinary buffer is not exportable. */
  tandem_buffer_t *plain = th_buffer(rt, 64, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_external_memory_t m;
  tandem_external_memory_init(&m);
  TH_ASSERT_STATUS(tandem_buffer_export_fd(plain, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, NULL),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_buffer_export_fd(plain, (tandem_external_memory_type_t)3, &m),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS_MSG(tandem_buffer_export_fd(plain, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &m),
                       TANDEM_ERROR_UNSUPPORTED, "tandem_buffer_create_exportable");
  assert_int_equal(m.fd, -1);
  tandem_buffer_release(plain);
}

/* One runtime exports, a second one (its own VkDevice) imports: the bytes
 * are shared both ways, by host maps and by GPU work on either side; the
 * import charges the budget and counts; every refusal leaves the fd alone. */
static void test_export_import_memory(void **state) {
  tandem_runtime_t *a = *state;
  if (!has_feature(a, TANDEM_GPU_EXTERNAL_MEMORY_FD)) {
    fprintf(stderr, "skipped: the GPU lacks VK_KHR_external_memory_fd\n");
    skip();
  }
  enum { N = 16384 };
  tandem_buffer_t *eb = NULL;
  TH_ASSERT_OK(tandem_buffer_create_exportable(a, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE,
                                               TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &eb));
  uint32_t *data = malloc(N * 4), *got = malloc(N * 4);
  assert_non_null(data);
  assert_non_null(got);
  th_read(eb, 0, got, N * 4);
  TH_ASSERT_U32_FILL(got, 0, N, "a new exportable buffer is zero-filled");
  th_rng_t rng = th_rng(9);
  th_fill_random_u32(&rng, data, N);
  th_write(eb, 0, data, N * 4);

  tandem_external_memory_t m, m2;
  tandem_external_memory_init(&m);
  tandem_external_memory_init(&m2);
  TH_ASSERT_OK(tandem_buffer_export_fd(eb, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &m));
  TH_ASSERT_OK(tandem_buffer_export_fd(eb, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &m2));
  assert_true(m.fd >= 0 && m2.fd >= 0 && m.fd != m2.fd); /* a new fd per call */
  close(m2.fd);
  assert_int_equal(m.type, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD);
  TH_ASSERT_U64_EQ(m.size, N * 4);
  assert_true(m.allocation_size >= N * 4);

  tandem_budget_t *budget = NULL;
  TH_ASSERT_OK(tandem_budget_create(N * 4 + 4096, &budget));
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.budget = budget;
  tandem_runtime_t *b = th_runtime_create(&o);
  tandem_buffer_t *ib = (tandem_buffer_t *)(uintptr_t)1;
  /* Refusals: each leaves m.fd open and the caller's. */
  tandem_external_memory_t bad = m;
  TH_ASSERT_STATUS(tandem_buffer_import_fd(b, &m, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, NULL),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS_MSG(tandem_buffer_import_fd(b, &m, m.allocation_size + 1,
                                               TANDEM_PLACEMENT_HOST_VISIBLE, &ib),
                       TANDEM_ERROR_OUT_OF_RANGE, "does not fit");
  assert_null(ib);
  TH_ASSERT_STATUS(tandem_buffer_import_fd(b, &m, 0, TANDEM_PLACEMENT_HOST_VISIBLE, &ib),
                   TANDEM_ERROR_OUT_OF_RANGE);
  TH_ASSERT_STATUS_MSG(tandem_buffer_import_fd(b, &m, N * 4, TANDEM_PLACEMENT_SHARED, &ib),
                       TANDEM_ERROR_UNSUPPORTED, "SHARED");
  bad.device_uuid[0] ^= 0xFF;
  TH_ASSERT_STATUS_MSG(tandem_buffer_import_fd(b, &bad, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &ib),
                       TANDEM_ERROR_UNSUPPORTED, "same device and driver");
  bad = m;
  bad.memory_type_index = 31;
  TH_ASSERT_STATUS_MSG(tandem_buffer_import_fd(b, &bad, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &ib),
                       TANDEM_ERROR_UNSUPPORTED, "type 31");
  bad = m;
  bad.fd = -1;
  TH_ASSERT_STATUS(tandem_buffer_import_fd(b, &bad, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &ib),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  bad.type = (tandem_external_memory_type_t)0;
  bad.fd = m.fd;
  TH_ASSERT_STATUS(tandem_buffer_import_fd(b, &bad, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &ib),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  /* Over budget: the budget holds N*4 + 4096 bytes; take some first. */
  tandem_buffer_t *filler = th_buffer(b, 8192, TANDEM_PLACEMENT_HOST_VISIBLE);
  TH_ASSERT_STATUS(tandem_buffer_import_fd(b, &m, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &ib),
                   TANDEM_ERROR_OVER_BUDGET);
  tandem_buffer_release(filler);
  struct stat was;
  assert_int_equal(fstat(m.fd, &was), 0);
  assert_true(fd_is(m.fd, &was)); /* every refusal left it alone */
  TH_ASSERT_U64_EQ(th_stats(b).imports, 0);

  /* The import: the fd is tandem's from now on. */
  TH_ASSERT_OK(tandem_buffer_import_fd(b, &m, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &ib));
  assert_false(fd_is(m.fd, &was)); /* closed: tandem's now */
  TH_ASSERT_U64_EQ(tandem_buffer_size(ib), N * 4);
  assert_int_equal(tandem_buffer_placement(ib), TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_statistics_t st = th_stats(b);
  TH_ASSERT_U64_EQ(st.imports, 1);
  TH_ASSERT_U64_EQ(st.allocations, 2); /* filler, import */
  TH_ASSERT_U64_EQ(st.live_bytes, N * 4);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), N * 4);
  th_read(ib, 0, got, N * 4);
  TH_ASSERT_U32_ARRAY(got, data, N, "A's bytes seen through B's import");
  /* B's GPU writes, A reads. */
  tandem_graph_t *g = th_graph(b);
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(ib, 4096, 8192), 0x5EED5EEDu, TANDEM_LANE_AUTO));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  th_read(eb, 0, got, N * 4);
  TH_ASSERT_U32_ARRAY(got, data, 1024, "A: bytes before B's fill");
  TH_ASSERT_U32_FILL(got + 1024, 0x5EED5EEDu, 2048, "A: B's GPU fill through the import");
  TH_ASSERT_U32_ARRAY(got + 3072, data + 3072, N - 3072, "A: bytes after B's fill");
  /* An imported buffer is not exportable again. */
  tandem_external_memory_t again;
  tandem_external_memory_init(&again);
  TH_ASSERT_STATUS(tandem_buffer_export_fd(ib, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &again),
                   TANDEM_ERROR_UNSUPPORTED);
  /* The memory outlives the exporter's buffer while B holds it. */
  tandem_buffer_release(eb);
  th_read(ib, 4096, got, 16);
  TH_ASSERT_U32_FILL(got, 0x5EED5EEDu, 4, "B after A released its buffer");
  tandem_buffer_release(ib);
  TH_ASSERT_U64_EQ(tandem_budget_used(budget), 0);
  th_runtime_destroy(b);
  tandem_budget_release(budget);
  free(data);
  free(got);
}

/* An exportable GPU_LOCAL buffer imports as GPU_LOCAL, and GPU work on
 * either side sees the other's. */
static void test_export_import_gpu_local(void **state) {
  tandem_runtime_t *a = *state;
  if (!has_feature(a, TANDEM_GPU_EXTERNAL_MEMORY_FD)) skip();
  tandem_buffer_t *eb = NULL;
  TH_ASSERT_OK(tandem_buffer_create_exportable(a, 4096, TANDEM_PLACEMENT_GPU_LOCAL,
                                               TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &eb));
  tandem_graph_t *g = th_graph(a);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(eb), 0xA11CE, TANDEM_LANE_AUTO));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  tandem_external_memory_t m;
  tandem_external_memory_init(&m);
  TH_ASSERT_OK(tandem_buffer_export_fd(eb, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &m));
  tandem_runtime_t *b = th_runtime_create(NULL);
  tandem_buffer_t *ib = NULL;
  TH_ASSERT_OK(tandem_buffer_import_fd(b, &m, 4096, TANDEM_PLACEMENT_GPU_LOCAL, &ib));
  tandem_buffer_t *out = th_buffer(b, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  g = th_graph(b);
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(ib), tandem_buffer_whole(out),
                                     TANDEM_LANE_AUTO));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  uint32_t got[1024];
  th_read(out, 0, got, sizeof got);
  TH_ASSERT_U32_FILL(got, 0xA11CE, 1024, "A's GPU fill, copied out by B");
  tandem_buffer_release(out);
  tandem_buffer_release(ib);
  th_runtime_destroy(b);
  tandem_buffer_release(eb);
}

/*------------------------------------------------------------ timelines --*/

/* A completion's lane values are what its lanes' timelines reach. */
static void test_completion_lane_values(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *buf = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(buf), 3, TANDEM_LANE_COMPUTE));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  uint64_t v1[TANDEM_LANE_COUNT], v2[TANDEM_LANE_COUNT];
  tandem_completion_t *c1 = NULL, *c2 = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c1));
  TH_ASSERT_STATUS(tandem_completion_lane_values(NULL, v1), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_completion_lane_values(c1, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_OK(tandem_completion_lane_values(c1, v1));
  TH_ASSERT_OK(tandem_completion_wait(c1));
  TH_ASSERT_OK(tandem_exec_submit(e, &c2));
  TH_ASSERT_OK(tandem_completion_wait(c2));
  TH_ASSERT_OK(tandem_completion_lane_values(c2, v2));
  for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
    if (l == TANDEM_LANE_COMPUTE) continue;
    TH_ASSERT_U64_EQ(v1[l], 0);
    TH_ASSERT_U64_EQ(v2[l], 0);
  }
  assert_true(v1[TANDEM_LANE_COMPUTE] > 0);
  assert_true(v2[TANDEM_LANE_COMPUTE] > v1[TANDEM_LANE_COMPUTE]);
  /* Stable after the wait, and reached on the lane's semaphore itself. */
  uint64_t again[TANDEM_LANE_COUNT];
  TH_ASSERT_OK(tandem_completion_lane_values(c1, again));
  TH_ASSERT_U64_EQ(again[TANDEM_LANE_COMPUTE], v1[TANDEM_LANE_COMPUTE]);
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  th_vk_fns_t vk = th_vk_fns(&h);
  uint64_t counter = 0;
  assert_int_equal(vk.GetSemaphoreCounterValue(
                       vk.device, (VkSemaphore)h.lanes[TANDEM_LANE_COMPUTE].timeline, &counter),
                   VK_SUCCESS);
  assert_true(counter >= v2[TANDEM_LANE_COMPUTE]);
  tandem_completion_release(c1);
  TH_ASSERT_STATUS_MSG(tandem_completion_lane_values(c1, again), TANDEM_ERROR_INVALID_ARGUMENT,
                       "not a live completion");
  tandem_completion_release(c2);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(buf);
}

static void test_timeline_errors(void **state) {
  tandem_runtime_t *rt = *state;
  int fd = 5;
  TH_ASSERT_STATUS(tandem_runtime_export_timeline_fd(rt, TANDEM_LANE_COMPUTE, NULL),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_runtime_export_timeline_fd(rt, (tandem_lane_t)4, &fd),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  assert_int_equal(fd, -1);
  TH_ASSERT_STATUS(tandem_runtime_export_timeline_fd(rt, TANDEM_LANE_AUTO, &fd),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_external_timeline_t *t = (tandem_external_timeline_t *)(uintptr_t)1;
  TH_ASSERT_STATUS(tandem_runtime_import_timeline_fd(rt, -1, &t), TANDEM_ERROR_INVALID_ARGUMENT);
  assert_null(t);
  TH_ASSERT_STATUS(tandem_external_timeline_wait(NULL, 1, 0), TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_external_timeline_destroy(NULL);
  if (!has_feature(rt, TANDEM_GPU_EXTERNAL_SEMAPHORE_FD)) {
    /* lavapipe: the extension is named. */
    TH_ASSERT_STATUS_MSG(tandem_runtime_export_timeline_fd(rt, TANDEM_LANE_COMPUTE, &fd),
                         TANDEM_ERROR_UNSUPPORTED, "VK_KHR_external_semaphore_fd");
    int memfd = memfd_create("not-a-semaphore", MFD_CLOEXEC);
    assert_true(memfd >= 0);
    TH_ASSERT_STATUS_MSG(tandem_runtime_import_timeline_fd(rt, memfd, &t), TANDEM_ERROR_UNSUPPORTED,
                         "VK_KHR_external_semaphore_fd");
    assert_true(fd_open(memfd)); /* refused: still the caller's */
    close(memfd);
    return;
  }
  /* The runtime was made without export_timelines. */
  TH_ASSERT_STATUS_MSG(tandem_runtime_export_timeline_fd(rt, TANDEM_LANE_COMPUTE, &fd),
                       TANDEM_ERROR_UNSUPPORTED, "export_timelines");
}

/* In one process: a lane's exported timeline, imported by a second runtime,
 * reaches the values the first runtime's completions report. */
static void test_timeline_export_import(void **state) {
  (void)state;
  th_validation_reset();
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.export_timelines = true;
  tandem_runtime_t *a = th_runtime_create(&o);
  int fd = -1;
  tandem_status_t s = tandem_runtime_export_timeline_fd(a, TANDEM_LANE_COMPUTE, &fd);
  if (s == TANDEM_ERROR_UNSUPPORTED) {
    fprintf(stderr, "skipped: %s\n", tandem_error_message());
    th_runtime_destroy(a);
    skip();
  }
  TH_ASSERT_OK(s);
  tandem_runtime_t *b = th_runtime_create(NULL);
  tandem_external_timeline_t *t = NULL;
  TH_ASSERT_OK(tandem_runtime_import_timeline_fd(b, fd, &t));
  tandem_buffer_t *buf = th_buffer(a, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(a);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(buf), 11, TANDEM_LANE_COMPUTE));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  uint64_t v[TANDEM_LANE_COUNT];
  TH_ASSERT_OK(tandem_completion_lane_values(c, v));
  TH_ASSERT_OK(tandem_external_timeline_wait(t, v[TANDEM_LANE_COMPUTE], 20ull * 1000000000u));
  TH_ASSERT_STATUS(tandem_external_timeline_wait(t, v[TANDEM_LANE_COMPUTE] + 1000, 1000000),
                   TANDEM_ERROR_TIMEOUT);
  TH_ASSERT_OK(tandem_completion_wait(c));
  uint32_t got[1024];
  th_read(buf, 0, got, sizeof got);
  TH_ASSERT_U32_FILL(got, 11, 1024, "the fill B waited for");
  tandem_completion_release(c);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(buf);
  tandem_external_timeline_destroy(t);
  th_runtime_destroy(b);
  th_runtime_destroy(a);
}

/*------------------------------------------------------- two processes --*/

enum { MSG_SETUP = 1, MSG_IMPORTED, MSG_GO, MSG_RESULT, MSG_DONE };

typedef struct ip_msg {
  uint32_t kind;
  uint32_t fd_count;               /* SETUP: memory fd, then the timeline fd; IMPORTED: B's
                                    timeline fd (timeline case) */
  tandem_external_memory_t memory; /* SETUP (fd replaced by the receiver) */
  uint64_t wait_value;             /* GO: A's compute lane value; RESULT: B's (timeline case) */
  uint32_t pattern;                /* GO: what A's fill wrote */
  uint32_t pattern_back;           /* GO: what B writes back */
  int32_t ok;                      /* RESULT: 1 when B saw the right bytes */
  char text[256];                  /* RESULT: what B saw */
} ip_msg_t;

#define IP_WORDS (1u << 20) /* 4 MiB */

static void ip_send(int sock, const ip_msg_t *msg, const int *fds, uint32_t fd_count) {
  struct iovec iov = {.iov_base = (void *)msg, .iov_len = sizeof *msg};
  union {
    char buf[CMSG_SPACE(2 * sizeof(int))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
  if (fd_count) {
    mh.msg_control = control.buf;
    mh.msg_controllen = CMSG_SPACE(fd_count * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fd_count * sizeof(int));
    memcpy(CMSG_DATA(c), fds, fd_count * sizeof(int));
  }
  ssize_t n = sendmsg(sock, &mh, 0);
  if (n != (ssize_t)sizeof *msg) {
    fprintf(stderr, "sendmsg: %s\n", strerror(errno));
    exit(1);
  }
}

/* Receives one message (and up to 2 fds); exits 1 when the peer is gone. */
static void ip_recv(int sock, ip_msg_t *msg, int *fds) {
  struct iovec iov = {.iov_base = msg, .iov_len = sizeof *msg};
  union {
    char buf[CMSG_SPACE(2 * sizeof(int))];
    struct cmsghdr align;
  } control;
  struct msghdr mh = {.msg_iov = &iov,
                      .msg_iovlen = 1,
                      .msg_control = control.buf,
                      .msg_controllen = sizeof control.buf};
  ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  if (n != (ssize_t)sizeof *msg) {
    fprintf(stderr, "recvmsg: %s\n", n < 0 ? strerror(errno) : "the other process is gone");
    exit(1);
  }
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy(fds, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
}

/* Process B: imports, waits (through the timeline or A's message), checks
 * A's bytes, writes its own with the GPU and reports. In the timeline case B
 * also exports its own compute lane's timeline to A and reports the value
 * its fill signals without waiting for it: A's graph waits for that value on
 * the GPU. */
static int ip_child(bool timeline, int sock) {
  th_init();
  th_validation_reset();
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.export_timelines = timeline;
  tandem_runtime_t *rt = th_runtime_create(&o);
  ip_msg_t msg;
  int fds[2] = {-1, -1};
  ip_recv(sock, &msg, fds);
  assert_int_equal(msg.kind, MSG_SETUP);
  msg.memory.fd = fds[0];
  tandem_buffer_t *buf = NULL;
  TH_ASSERT_OK(
      tandem_buffer_import_fd(rt, &msg.memory, IP_WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &buf));
  tandem_external_timeline_t *t = NULL;
  if (timeline) TH_ASSERT_OK(tandem_runtime_import_timeline_fd(rt, fds[1], &t));
  ip_msg_t reply = {.kind = MSG_IMPORTED};
  int own = -1; /* B's compute timeline, for A's GPU wait */
  if (timeline) {
    TH_ASSERT_OK(tandem_runtime_export_timeline_fd(rt, TANDEM_LANE_COMPUTE, &own));
    reply.fd_count = 1;
  }
  ip_send(sock, &reply, &own, reply.fd_count);
  if (own >= 0) close(own); /* A holds its own copy */

  ip_recv(sock, &msg, fds);
  assert_int_equal(msg.kind, MSG_GO);
  if (timeline) {
    tandem_status_t first = tandem_external_timeline_wait(t, msg.wait_value, 0);
    fprintf(stderr, "B: A's fill %s when B first looked\n",
            first == TANDEM_OK ? "had already finished" : "was still running");
    TH_ASSERT_OK(tandem_external_timeline_wait(t, msg.wait_value, 60ull * 1000000000u));
  }
  uint32_t *got = malloc(IP_WORDS * 4);
  assert_non_null(got);
  th_read(buf, 0, got, IP_WORDS * 4);
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < IP_WORDS; i++)
    if (got[i] != msg.pattern && bad++ == 0) first_bad = i;
  reply = (ip_msg_t){.kind = MSG_RESULT, .ok = bad == 0};
  snprintf(reply.text, sizeof reply.text,
           "%zu of %u words differ from 0x%08x; first [%zu] = 0x%08x", bad, IP_WORDS, msg.pattern,
           first_bad, got[first_bad]);
  free(got);
  /* B's own GPU work on the shared memory, for A to read back. */
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(
      tandem_graph_add_fill(g, tandem_buffer_whole(buf), msg.pattern_back, TANDEM_LANE_COMPUTE));
  if (timeline) {
    /* Reported while it may still run: A orders its read on the GPU. */
    tandem_exec_t *e = NULL;
    TH_ASSERT_OK(tandem_graph_prepare(g, &e));
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    uint64_t values[TANDEM_LANE_COUNT];
    TH_ASSERT_OK(tandem_completion_lane_values(c, values));
    reply.wait_value = values[TANDEM_LANE_COMPUTE];
    ip_send(sock, &reply, NULL, 0);
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    /* A asks for one more fill: the next compute value, which A's second
     * submission has been waiting for on the GPU. */
    ip_recv(sock, &msg, fds);
    assert_int_equal(msg.kind, MSG_GO);
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    TH_ASSERT_OK(tandem_completion_lane_values(c, values));
    assert_int_equal(values[TANDEM_LANE_COMPUTE], reply.wait_value + 1);
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
    tandem_exec_release(e);
    /* A has read what it waited for before B's timeline goes away. */
    ip_recv(sock, &msg, fds);
    assert_int_equal(msg.kind, MSG_DONE);
  } else {
    th_run_graph(g, 1);
    ip_send(sock, &reply, NULL, 0);
  }
  tandem_graph_release(g);
  tandem_external_timeline_destroy(t);
  tandem_buffer_release(buf);
  th_runtime_destroy(rt); /* fails (exit 255) on any validation message */
  close(sock);
  return reply.ok ? 0 : 1;
}

/* Process A. */
static int ip_parent(bool timeline, const char *argv0) {
  th_init();
  th_validation_reset();
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.export_timelines = timeline;
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  const char *missing = NULL;
  if (!(info.features & TANDEM_GPU_EXTERNAL_MEMORY_FD)) missing = "VK_KHR_external_memory_fd";
  if (timeline && !(info.features & TANDEM_GPU_EXTERNAL_SEMAPHORE_FD))
    missing = missing ? "VK_KHR_external_memory_fd and VK_KHR_external_semaphore_fd"
                      : "VK_KHR_external_semaphore_fd";
  if (missing) {
    fprintf(stderr, "SKIP: GPU '%s' (%s) lacks %s\n", info.name, info.driver_name, missing);
    th_runtime_destroy(rt);
    return TH_EXIT_SKIP;
  }
  tandem_buffer_t *buf = NULL;
  TH_ASSERT_OK(tandem_buffer_create_exportable(rt, IP_WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE,
                                               TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &buf));
  ip_msg_t msg = {.kind = MSG_SETUP, .fd_count = timeline ? 2 : 1};
  tandem_external_memory_init(&msg.memory);
  TH_ASSERT_OK(tandem_buffer_export_fd(buf, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &msg.memory));
  int fds[2] = {msg.memory.fd, -1};
  if (timeline) {
    tandem_status_t s = tandem_runtime_export_timeline_fd(rt, TANDEM_LANE_COMPUTE, &fds[1]);
    if (s == TANDEM_ERROR_UNSUPPORTED) {
      fprintf(stderr, "SKIP: %s\n", tandem_error_message());
      close(fds[0]);
      tandem_buffer_release(buf);
      th_runtime_destroy(rt);
      return TH_EXIT_SKIP;
    }
    TH_ASSERT_OK(s);
  }
  /* Several fills on one lane (in order): B checks the last one's pattern. */
  tandem_graph_t *g = th_graph(rt);
  const uint32_t pattern = 0x7A4D3E11u, pattern_back = 0x0B0B0B0Bu;
  for (uint32_t k = 0; k < 8; k++)
    TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(buf), k == 7 ? pattern : k,
                                       TANDEM_LANE_COMPUTE));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));

  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  int child_end = fcntl(sv[1], F_DUPFD, 3); /* without FD_CLOEXEC: crosses exec */
  assert_true(child_end >= 0);
  close(sv[1]);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char sock_arg[16];
    snprintf(sock_arg, sizeof sock_arg, "%d", child_end);
    execl("/proc/self/exe", argv0, "two-process-child", timeline ? "timeline" : "memory", sock_arg,
          (char *)NULL);
    _exit(127);
  }
  close(child_end);
  int sock = sv[0];
  ip_send(sock, &msg, fds, msg.fd_count);
  for (uint32_t i = 0; i < msg.fd_count; i++) close(fds[i]); /* B holds its own copies */
  ip_msg_t reply;
  int none[2] = {-1, -1};
  ip_recv(sock, &reply, none);
  assert_int_equal(reply.kind, MSG_IMPORTED);
  /* Timeline case: B's compute timeline becomes a lane of A's runtime, and
   * a graph that copies the shared buffer out waits on it on the GPU. */
  tandem_external_timeline_t *b_timeline = NULL;
  tandem_lane_t b_lane = TANDEM_LANE_AUTO;
  tandem_buffer_t *out = NULL;
  tandem_graph_t *read_g = NULL;
  tandem_exec_t *read_e = NULL;
  if (timeline) {
    assert_int_equal(reply.fd_count, 1);
    TH_ASSERT_OK(tandem_runtime_import_timeline_fd(rt, none[0], &b_timeline));
    TH_ASSERT_OK(tandem_external_timeline_lane(b_timeline, &b_lane));
    assert_true(b_lane >= TANDEM_LANE_COUNT && b_lane < TANDEM_MAX_LANES);
    tandem_lane_info_t li;
    tandem_lane_info_init(&li);
    TH_ASSERT_OK(tandem_runtime_lane_info(rt, b_lane, &li));
    assert_int_equal(li.kind, TANDEM_LANE_KIND_EXTERNAL);
    out = th_buffer(rt, IP_WORDS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
    read_g = th_graph(rt);
    TH_ASSERT_OK(tandem_graph_add_copy(read_g, tandem_buffer_whole(buf), tandem_buffer_whole(out),
                                       TANDEM_LANE_COMPUTE));
    TH_ASSERT_OK(tandem_graph_prepare(read_g, &read_e));
  }

  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  ip_msg_t go = {.kind = MSG_GO, .pattern = pattern, .pattern_back = pattern_back};
  uint64_t values[TANDEM_LANE_COUNT];
  TH_ASSERT_OK(tandem_completion_lane_values(c, values));
  go.wait_value = values[TANDEM_LANE_COMPUTE];
  /* Memory only: B learns that the fill ended from this message. */
  if (!timeline) TH_ASSERT_OK(tandem_completion_wait(c));
  ip_send(sock, &go, NULL, 0);
  TH_ASSERT_OK(tandem_completion_wait(c));
  ip_recv(sock, &reply, none);
  assert_int_equal(reply.kind, MSG_RESULT);
  fprintf(stderr, "B: %s\n", reply.text);
  if (timeline) {
    /* B's fill may still be running: the copy waits for its value on the
     * GPU (in the submission's wait list, not on this thread). A wait that
     * never came would end this wait with TIMEOUT rather than hang. */
    tandem_lane_wait_t w = {b_lane, reply.wait_value};
    tandem_completion_t *rc = NULL;
    TH_ASSERT_OK(tandem_exec_submit_waiting(read_e, &w, 1, &rc));
    TH_ASSERT_OK(tandem_completion_wait_timeout(rc, 60ull * 1000000000u));
    tandem_completion_release(rc);
    uint32_t *copied = malloc(IP_WORDS * 4);
    assert_non_null(copied);
    th_read(out, 0, copied, IP_WORDS * 4);
    TH_ASSERT_U32_FILL(copied, pattern_back, IP_WORDS, "A's copy, after its GPU wait on B");
    free(copied);
    tandem_lane_info_t li;
    tandem_lane_info_init(&li);
    TH_ASSERT_OK(tandem_runtime_lane_info(rt, b_lane, &li));
    assert_true(li.value >= reply.wait_value);
    TH_ASSERT_U64_EQ(li.submissions, 1);
    /* A value B has not signalled (its next fill's): the submission stays
     * queued on the GPU and a completion wait times out rather than hang;
     * once B runs that fill, the same submission finishes. */
    w.value = reply.wait_value + 1;
    TH_ASSERT_OK(tandem_exec_submit_waiting(read_e, &w, 1, &rc));
    TH_ASSERT_STATUS(tandem_completion_wait_timeout(rc, 200ull * 1000000u), TANDEM_ERROR_TIMEOUT);
    assert_false(tandem_completion_is_complete(rc));
    ip_msg_t more = {.kind = MSG_GO};
    ip_send(sock, &more, NULL, 0);
    TH_ASSERT_OK(tandem_completion_wait_timeout(rc, 60ull * 1000000000u));
    tandem_completion_release(rc);
    TH_ASSERT_OK(tandem_runtime_lane_info(rt, b_lane, &li));
    TH_ASSERT_U64_EQ(li.submissions, 2);
    ip_msg_t done = {.kind = MSG_DONE};
    ip_send(sock, &done, NULL, 0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  close(sock);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !reply.ok) {
    fprintf(stderr, "FAIL: process B %s %d; it saw: %s\n",
            WIFEXITED(status) ? "exited with" : "died of signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), reply.text);
    return 1;
  }
  /* B's GPU fill, read by A through its own mapping. */
  uint32_t *got = malloc(IP_WORDS * 4);
  assert_non_null(got);
  th_read(buf, 0, got, IP_WORDS * 4);
  TH_ASSERT_U32_FILL(got, pattern_back, IP_WORDS, "A reads B's GPU fill");
  free(got);
  tandem_completion_release(c);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_exec_release(read_e);
  tandem_graph_release(read_g);
  tandem_buffer_release(out);
  tandem_external_timeline_destroy(b_timeline);
  tandem_buffer_release(buf);
  th_runtime_destroy(rt);
  fprintf(stderr, "two processes (%s): B read A's fill, A read B's\n",
          timeline ? "B waited on A's exported compute timeline, A's copy waited on B's on "
                     "the GPU"
                   : "memory only");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "two-process") == 0 &&
      (strcmp(argv[2], "memory") == 0 || strcmp(argv[2], "timeline") == 0))
    return ip_parent(strcmp(argv[2], "timeline") == 0, argv[0]);
  if (argc == 4 && strcmp(argv[1], "two-process-child") == 0)
    return ip_child(strcmp(argv[2], "timeline") == 0, atoi(argv[3]));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_version),
      cmocka_unit_test_setup_teardown(test_view_vulkan_buffer, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_xrt_bo_without_npu, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test(test_xrt_bo_emulated),
      cmocka_unit_test_setup_teardown(test_exportable_errors, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_export_import_memory, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_export_import_gpu_local, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_completion_lane_values, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_timeline_errors, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test(test_timeline_export_import),
  };
  return TH_RUN_GROUP(tests);
}
