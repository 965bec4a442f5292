/* SPDX-License-Identifier: MIT */
/*
 * harness.h — what every tandem test shares: runtimes with the validation
 * layer on and every message counted, assertion macros that print both values
 * and the library's error message, and seeded random data.
 *
 * Rules the harness enforces (tests/README-style, see tests/CMakeLists.txt):
 *   - GPU runtimes always run with the Khronos validation layer; a missing
 *     layer fails the test, a missing device skips it (exit code 77).
 *   - th_runtime_destroy() fails the test when any validation message arrived
 *     or when buffers are still alive (statistics live_bytes != 0).
 * Tests use only the public headers plus this one (and harness_vk.h, its
 * typed Vulkan side, for tests that record raw Vulkan commands).
 */
#ifndef TANDEM_TESTS_HARNESS_H_
#define TANDEM_TESTS_HARNESS_H_

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tandem/tandem.h"
#include "tandem/tandem_vulkan.h"
#include "tandem/tandem_testing.h"

#define TH_EXIT_SKIP 77

/*---------------------------------------------------------------------------
 * Process set-up
 *---------------------------------------------------------------------------*/

/* Call first in main(): keeps the validation layer loaded for the whole
 * process (RTLD_NODELETE) so LeakSanitizer can name its frames, and exits with
 * a failure when the layer is not installed (validation is mandatory). */
void th_init(void);

/* True in ASan/TSan builds or when TANDEM_TEST_SMALL=1: tests shrink sizes. */
int th_small(void);

/*---------------------------------------------------------------------------
 * Runtimes
 *---------------------------------------------------------------------------*/

/* Makes a runtime from |options| (NULL: defaults) with validation forced on
 * and the harness's counting callback installed, then opens the GPU. Exits
 * with 77 (skip) when open_gpu returns NO_DEVICE; fails the test on any other
 * error. */
tandem_runtime_t *th_runtime_create(const tandem_runtime_options_t *options);
/* Sets |o|'s validation fields as th_runtime_create does (layer on, every
 * message counted), for tests that create the runtime themselves. */
void th_options_validated(tandem_runtime_options_t *o);
/* As above without opening the GPU (for tests that want the error). */
tandem_runtime_t *th_runtime_create_closed(const tandem_runtime_options_t *options);

/* Fails the test unless live_bytes is 0 and no validation message arrived
 * (unless th_expect_validation_messages() was called), then destroys. In
 * "own device" mode (below) it then destroys the runtime's device too: the
 * test must have released everything made from the runtime. */
void th_runtime_destroy(tandem_runtime_t *runtime);

/* "Own device" mode, TANDEM_TEST_OWN_DEVICE=1: th_runtime_create and
 * th_runtime_create_closed put every runtime on a VkDevice the harness
 * creates with plain Vulkan (th_vk_device_create, runtime option
 * vulkan_device), so a suite's assertions run on an application's device
 * (the GPU is then open at once, and gpu_index is not used). */
int th_own_device(void);

/* Host mode, TANDEM_TEST_BACKEND=host: th_runtime_create and
 * th_runtime_create_closed put every runtime whose options name no
 * gpu_backend on the host GPU (a test device on host threads, three queues;
 * the test shaders run as their C twins, tests/harness_host.c), and
 * th_runtime_destroy fails the test when its ordering check found
 * conflicting accesses no wait ordered. Cases that need Vulkan itself are
 * skipped there by TH_RUN_GROUP, with their reasons, from one table
 * (tests/backends_unsupported.c). */
int th_host(void);
/* Registers the test shaders' host twins (tests/harness_host.c); once. */
void th__host_twins_register(void);

/* Validation messages the harness callback has counted since the last reset. */
uint64_t th_validation_count(void);
/* Resets the counter and the "messages expected" flag (each test's setup). */
void th_validation_reset(void);
/* The current test deliberately provokes validation messages: the zero check in
 * th_runtime_destroy is skipped until the next th_validation_reset(). */
void th_expect_validation_messages(void);

/* cmocka fixtures: *state becomes a GPU runtime with default options. */
int th_setup_gpu(void **state);
int th_teardown_gpu(void **state);

/*---------------------------------------------------------------------------
 * Assertions
 *---------------------------------------------------------------------------*/

/* A copy of the error message taken by the last TH_ASSERT_STATUS* (the
 * library's text lives only until the next tandem call). */
const char *th_last_message(void);

void th__check_ok(tandem_status_t status, const char *expr, const char *file, int line);
void th__check_status(tandem_status_t status, tandem_status_t expected, const char *expr,
                      const char *file, int line);
void th__check_message_has(const char *needle, const char *file, int line);

/* |expr| must return TANDEM_OK; otherwise prints the code and the message. */
#define TH_ASSERT_OK(expr) th__check_ok((expr), #expr, __FILE__, __LINE__)
/* |expr| must return |code| with a non-empty error message (saved for
 * TH_ASSERT_MESSAGE_HAS). */
#define TH_ASSERT_STATUS(expr, code) th__check_status((expr), (code), #expr, __FILE__, __LINE__)
/* The message saved by the last TH_ASSERT_STATUS contains |needle|. */
#define TH_ASSERT_MESSAGE_HAS(needle) th__check_message_has((needle), __FILE__, __LINE__)
/* Both at once. */
#define TH_ASSERT_STATUS_MSG(expr, code, needle) \
  do {                                           \
    TH_ASSERT_STATUS(expr, code);                \
    TH_ASSERT_MESSAGE_HAS(needle);               \
  } while (0)

/* Integer equality that prints both values (in decimal and hex). */
void th__check_u64_eq(uint64_t actual, uint64_t expected, const char *a, const char *e,
                      const char *file, int line);
#define TH_ASSERT_U64_EQ(actual, expected) \
  th__check_u64_eq((uint64_t)(actual), (uint64_t)(expected), #actual, #expected, __FILE__, __LINE__)

/* Element-by-element comparison; on mismatch prints the first bad index and
 * both values, and how many differ. */
void th__check_u32_array(const uint32_t *actual, const uint32_t *expected, size_t count,
                         const char *what, const char *file, int line);
#define TH_ASSERT_U32_ARRAY(actual, expected, count, what) \
  th__check_u32_array((actual), (expected), (count), (what), __FILE__, __LINE__)
/* Every element of |actual| equals |value|. */
void th__check_u32_fill(const uint32_t *actual, uint32_t value, size_t count, const char *what,
                        const char *file, int line);
#define TH_ASSERT_U32_FILL(actual, value, count, what) \
  th__check_u32_fill((actual), (value), (count), (what), __FILE__, __LINE__)

/*---------------------------------------------------------------------------
 * Random data
 *---------------------------------------------------------------------------*/

typedef struct th_rng {
  uint64_t state;
} th_rng_t;

/* The process seed: TANDEM_TEST_SEED if set, else from the clock. Printed to
 * stderr once, so a failing run can be repeated. */
uint64_t th_seed(void);
/* A generator seeded from th_seed() mixed with |stream| (one per test). */
th_rng_t th_rng(uint64_t stream);
uint32_t th_rand_u32(th_rng_t *rng);
/* Uniform in [-1, 1). */
float th_rand_float(th_rng_t *rng);
void th_fill_random_u32(th_rng_t *rng, uint32_t *data, size_t count);
void th_fill_random_float(th_rng_t *rng, float *data, size_t count);

/*---------------------------------------------------------------------------
 * Small helpers on top of the public API (each asserts success)
 *---------------------------------------------------------------------------*/

tandem_buffer_t *th_buffer(tandem_runtime_t *runtime, uint64_t size, tandem_placement_t placement);
tandem_view_t th_view(tandem_buffer_t *buffer, uint64_t offset, uint64_t length);
/* Copies |bytes| from |data| into a HOST_VISIBLE buffer (write map). */
void th_write(tandem_buffer_t *buffer, uint64_t offset, const void *data, uint64_t bytes);
/* Copies |bytes| out of a HOST_VISIBLE buffer (read map, blocking). */
void th_read(tandem_buffer_t *buffer, uint64_t offset, void *data, uint64_t bytes);
/* prepare + submit + wait (must be OK) + release, |times| times on one exec. */
void th_run_graph(tandem_graph_t *graph, int times);
/* One dispatch of |k| over |views| (|count|) with |push_bytes| of |push|
 * and |gx| x |gy| x 1 workgroups, in a graph of its own, run once. */
void th_run_dispatch(tandem_runtime_t *runtime, tandem_kernel_t *k, const tandem_view_t *views,
                     uint32_t count, const void *push, uint32_t push_bytes, uint32_t gx,
                     uint32_t gy);

/* Test entry point boilerplate: th_init(), then the group, less what
 * tests/backends_unsupported.c lists for this program on this backend (each
 * such test skipped with its reason; a program listed whole exits 77). */
int th__run_group(const struct CMUnitTest *tests, size_t count, const char *file);
#define TH_RUN_GROUP(tests) th__run_group((tests), sizeof(tests) / sizeof((tests)[0]), __FILE__)

/* A zeroed kernel desc for |spirv| (|size| bytes) with the given contract and
 * push-constant bytes, and no default workgroup count. */
tandem_kernel_desc_t th_kernel_desc(const char *name, const uint32_t *spirv, size_t size,
                                    const tandem_binding_contract_t *bindings, uint32_t count,
                                    uint32_t push);

/* Loads a kernel with |groups| x 1 x 1 workgroups and the given contract,
 * asserting success. */
tandem_kernel_t *th_kernel_load(tandem_runtime_t *rt, const char *name, const uint32_t *spirv,
                                size_t size, uint32_t groups, const tandem_binding_contract_t *b,
                                uint32_t count, uint32_t push);

/* Statistics snapshot (poisoned first, so a field the library misses shows). */
tandem_statistics_t th_stats(tandem_runtime_t *runtime);
/* Bytes copied so far on |lane| (tandem_runtime_lane_info; asserts it answers). */
uint64_t th_lane_copied(tandem_runtime_t *runtime, int lane);
/* An empty graph (asserts creation and 0 nodes). */
tandem_graph_t *th_graph(tandem_runtime_t *runtime);
/* add_one_u32 over |n| uints (binding 0 read-write, push {uint n}). */
tandem_kernel_t *th_add_one_kernel(tandem_runtime_t *runtime, uint32_t n);
tandem_status_t th_add_add_one(tandem_graph_t *graph, tandem_kernel_t *kernel, tandem_view_t view,
                               uint32_t n);
/* A submission of |exec| made and waited for on a thread of its own, for
 * tests that hold a queue lock meanwhile: |submitted| is set once
 * tandem_exec_submit returned, |finished| once the wait did; join returns
 * the submit's status, or the wait's when the submit succeeded. */
typedef struct th_bg_submit {
  tandem_exec_t *exec;
  atomic_int submitted, finished; /* set by the thread */
  tandem_status_t status;
  pthread_t thread;
} th_bg_submit_t;
void th_bg_submit_start(th_bg_submit_t *b, tandem_exec_t *exec);
tandem_status_t th_bg_submit_join(th_bg_submit_t *b);

/*---------------------------------------------------------------------------
 * Plain Vulkan (harness_vk.c): what an application makes without tandem.
 * Handles are void * as in tandem.h; failures fail the test. The table of
 * entry points and the command/submission steps are in harness_vk.h.
 *---------------------------------------------------------------------------*/

/* Counts a validation message as the harness's callback does (for
 * messengers the tests create themselves). */
void th__validation_note(tandem_validation_severity_t severity, const char *message);

typedef struct th_vk_device th_vk_device_t;
/* A VkInstance of the system loader with the validation layer and
 * synchronization validation (messages counted by the harness), and a
 * VkDevice on physical device 0 with the features and extensions tandem uses
 * that it has and queues as tandem would pick them; |drop| leaves one off:
 * "synchronization2", "timelineSemaphore", "16bit" (16-bit storage),
 * "shaderDeviceClock" (VK_KHR_shader_clock with shaderSubgroupClock only),
 * "shaderClock" (no VK_KHR_shader_clock), "maintenance4", or NULL. Exits 77 (skip) without
 * a Vulkan 1.3 device. */
th_vk_device_t *th_vk_device_create(const char *drop);
/* The description for runtime option vulkan_device (valid while |d| lives). */
const tandem_vulkan_device_t *th_vk_device_desc(th_vk_device_t *d);
/* |d|'s handles as tandem_runtime_vulkan_handles reports them (no queues or
 * timelines), for the helpers below. */
tandem_vulkan_handles_t th_vk_device_handles(th_vk_device_t *d);
/* Waits for the device and destroys device, messenger and instance. */
void th_vk_device_destroy(th_vk_device_t *d);
/* A runtime on the application's device |desc| (a th_vk_device_desc; its
 * messenger counts the validation messages: vulkan_device leaves validation
 * to the application), with |budget| (NULL: none). Fails the test if it
 * cannot be made; th_runtime_destroy ends it. */
tandem_runtime_t *th_runtime_on_device(const tandem_vulkan_device_t *desc, tandem_budget_t *budget);

typedef struct th_vk_buffer {
  void *device, *buffer, *memory;
  uint32_t memory_type, memory_flags, usage;
  uint64_t memory_size;
  bool concurrent;
} th_vk_buffer_t;
/* A VkBuffer of |size| bytes with tandem's usage flags (CONCURRENT over the
 * lanes' families when more than one), bound at offset 0 to its own memory
 * of the first type with every flag of |want_flags| (VkMemoryPropertyFlags). */
th_vk_buffer_t th_vk_buffer_create(const tandem_vulkan_handles_t *h, uint64_t size,
                                   uint32_t want_flags);
/* The adoption description of |b| for |size| bytes and |placement|. */
tandem_vulkan_buffer_t th_vk_buffer_desc(const th_vk_buffer_t *b, uint64_t size,
                                         tandem_placement_t placement);
/* Maps |b|'s (host-visible) memory, copies |write| in then / or the first
 * |bytes| out to |read|, and unmaps. */
void th_vk_buffer_access(const tandem_vulkan_handles_t *h, const th_vk_buffer_t *b, void *read,
                         const void *write, uint64_t bytes);
void th_vk_buffer_destroy(const tandem_vulkan_handles_t *h, th_vk_buffer_t *b);

typedef struct th_vk_pipeline {
  void *device, *module, *set_layout, *layout, *pipeline;
} th_vk_pipeline_t;
/* A compute pipeline of |spirv| ("main", no specialization) with the
 * layouts tandem would make: set 0 of |binding_count| storage buffers, one
 * push-constant range of |push_bytes|. */
th_vk_pipeline_t th_vk_pipeline_create(const tandem_vulkan_handles_t *h, const uint32_t *spirv,
                                       size_t spirv_size, uint32_t binding_count,
                                       uint32_t push_bytes);
void th_vk_pipeline_destroy(const tandem_vulkan_handles_t *h, th_vk_pipeline_t *p);

#endif /* TANDEM_TESTS_HARNESS_H_ */
