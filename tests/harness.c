/* SPDX-License-Identifier: MIT */
/*
 * harness.c — shared test helpers (see harness.h): validation-counting
 * runtimes, assertion helpers that print the library's message, seeded random
 * data. The validation counter is process-global because the layer may call
 * back on any thread and after the test body's runtime handle is gone (device
 * teardown reports leaked Vulkan objects from vkDestroyDevice).
 */
#include "harness.h"
#include "tandem_test_shaders.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TH_SANITIZED 1
#endif
#endif
#ifndef TH_SANITIZED
#define TH_SANITIZED 0
#endif

static atomic_uint_fast64_t th__validation_count;
static atomic_bool th__validation_expected;
static _Thread_local char th__message[2048];

/*---------------------------------------------------------------------------*/

void th_init(void) {
  /* Keep the layer mapped until exit so LeakSanitizer can symbolise the
   * layer's own (known, suppressed) leaks; see tests/lsan.supp. */
  void *layer = dlopen("libVkLayer_khronos_validation.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (layer == NULL) {
    fprintf(stderr,
            "FATAL: the Khronos validation layer is required by this suite and could not be "
            "loaded: %s\n(install vulkan-validationlayers, or on the GPU machine source "
            ".device/on-device.sh)\n",
            dlerror());
    exit(1);
  }
  /* lavapipe keeps small allocations (128 bytes per device) reachable only
   * from its own globals; when the loader unloads the ICD at vkDestroyInstance
   * those become "leaks" in <unknown module>, and TSan's called_from_lib
   * suppressions need the module mapped. Keeping the ICD mapped fixes both.
   * Sanitizer builds only (they are the ones that need it, and run on
   * lavapipe): elsewhere a resident lavapipe only takes static TLS that the
   * real driver may need. */
  if (TH_SANITIZED) (void)dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  (void)th_seed();
}

int th_small(void) {
  const char *env = getenv("TANDEM_TEST_SMALL");
  if (env != NULL && env[0] != '\0') return atoi(env) != 0;
  return TH_SANITIZED;
}

/*---------------------------------------------------------------------------*/

static const char *th__severity_name(tandem_validation_severity_t s) {
  switch (s) {
    case TANDEM_VALIDATION_INFO: return "info";
    case TANDEM_VALIDATION_WARNING: return "warning";
    case TANDEM_VALIDATION_ERROR: return "error";
  }
  return "?";
}

static void th__validation_callback(void *user_data, tandem_validation_severity_t severity,
                                    const char *message) {
  (void)user_data;
  uint64_t n = atomic_fetch_add(&th__validation_count, 1) + 1;
  fprintf(stderr, "[validation #%" PRIu64 " %s] %s\n", n, th__severity_name(severity),
          message ? message : "(null)");
}

void th__validation_note(tandem_validation_severity_t severity, const char *message) {
  th__validation_callback(NULL, severity, message);
}

uint64_t th_validation_count(void) { return atomic_load(&th__validation_count); }

void th_validation_reset(void) {
  atomic_store(&th__validation_count, 0);
  atomic_store(&th__validation_expected, false);
}

void th_expect_validation_messages(void) { atomic_store(&th__validation_expected, true); }

void th_options_validated(tandem_runtime_options_t *o) {
  o->validation = true;
  o->validation_callback = th__validation_callback;
  o->validation_user_data = NULL;
}

int th_host(void) {
  const char *env = getenv("TANDEM_TEST_BACKEND");
  return env != NULL && strcmp(env, "host") == 0;
}

int th_own_device(void) {
  const char *env = getenv("TANDEM_TEST_OWN_DEVICE");
  return env != NULL && strcmp(env, "1") == 0;
}

/* Own-device mode: which device each live runtime runs on (destroyed with
 * it by th_runtime_destroy). Test threads create runtimes one at a time. */
#define TH_OWN_MAX 16
static struct {
  tandem_runtime_t *runtime;
  th_vk_device_t *device;
} th__own[TH_OWN_MAX];

tandem_runtime_t *th_runtime_create_closed(const tandem_runtime_options_t *options) {
  tandem_runtime_options_t o;
  if (options != NULL) {
    o = *options;
  } else {
    tandem_runtime_options_init(&o);
  }
  o.validation = true;
  o.validation_callback = th__validation_callback;
  o.validation_user_data = NULL;
  if (th_host() && !o.gpu_backend) {
    static pthread_once_t twins = PTHREAD_ONCE_INIT;
    pthread_once(&twins, th__host_twins_register);
    o.gpu_backend = "host";
  }
  th_vk_device_t *own = NULL;
  if (th_own_device()) {
    own = th_vk_device_create(NULL);
    o.vulkan_device = th_vk_device_desc(own);
  }
  tandem_runtime_t *rt = NULL;
  TH_ASSERT_OK(tandem_runtime_create(&o, &rt));
  assert_non_null(rt);
  if (own) {
    /* The runtime must run on that device, not on one of its own. */
    tandem_vulkan_handles_t h;
    tandem_vulkan_handles_init(&h);
    TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
    assert_ptr_equal(h.device, th_vk_device_desc(own)->device);
    size_t i = 0;
    while (i < TH_OWN_MAX && th__own[i].runtime) i++;
    if (i == TH_OWN_MAX) fail_msg("more than %d runtimes on own devices at once", TH_OWN_MAX);
    th__own[i].runtime = rt;
    th__own[i].device = own;
  }
  return rt;
}

tandem_runtime_t *th_runtime_create(const tandem_runtime_options_t *options) {
  tandem_runtime_t *rt = th_runtime_create_closed(options);
  tandem_status_t s = tandem_runtime_open_gpu(rt);
  if (s == TANDEM_ERROR_NO_DEVICE) {
    fprintf(stderr, "SKIP: no usable Vulkan device: %s\n", tandem_error_message());
    tandem_runtime_destroy(rt);
    exit(TH_EXIT_SKIP);
  }
  TH_ASSERT_OK(s);
  return rt;
}

void th_runtime_destroy(tandem_runtime_t *runtime) {
  if (runtime == NULL) return;
  tandem_statistics_t st;
  memset(&st, 0xCD, sizeof st);
  st.struct_size = sizeof st; /* after the poison */
  TH_ASSERT_OK(tandem_runtime_statistics(runtime, &st));
  uint64_t counted_by_runtime = tandem_runtime_validation_messages(runtime);
  tandem_test_unordered_t unordered = {0};
  bool checked = th_host() && tandem_test_unordered(runtime, &unordered) == TANDEM_OK;
  tandem_runtime_destroy(runtime);
  for (size_t i = 0; i < TH_OWN_MAX; i++)
    if (th__own[i].runtime == runtime) {
      /* After the runtime: the device must outlive everything tandem made. */
      th_vk_device_destroy(th__own[i].device);
      th__own[i].runtime = NULL;
      th__own[i].device = NULL;
    }
  if (checked && unordered.count != 0)
    fail_msg("teardown: the host GPU found %" PRIu64 " conflicting access pair(s) that no wait "
             "or barrier ordered; the first: %s",
             unordered.count, unordered.first);
  if (st.live_bytes != 0) {
    fail_msg("teardown: %" PRIu64 " live bytes remain (a buffer was not released)", st.live_bytes);
  }
  if (!atomic_load(&th__validation_expected)) {
    uint64_t counted = th_validation_count();
    if (counted != 0 || counted_by_runtime != 0) {
      fail_msg("teardown: %" PRIu64 " validation message(s) reached the callback, runtime "
               "counted %" PRIu64 "; every validation message fails the test (see stderr)",
               counted, counted_by_runtime);
    }
  }
}

int th_setup_gpu(void **state) {
  th_validation_reset();
  *state = th_runtime_create(NULL);
  return 0;
}

int th_teardown_gpu(void **state) {
  th_runtime_destroy((tandem_runtime_t *)*state);
  *state = NULL;
  return 0;
}

/*---------------------------------------------------------------------------*/

const char *th_last_message(void) { return th__message; }

void th__check_ok(tandem_status_t status, const char *expr, const char *file, int line) {
  if (status != TANDEM_OK) {
    print_error("%s:%d: %s\n  returned %s (%d), expected OK\n  message: %s\n", file, line, expr,
                tandem_status_name(status), (int)status, tandem_error_message());
    _fail(file, line);
  }
}

void th__check_status(tandem_status_t status, tandem_status_t expected, const char *expr,
                      const char *file, int line) {
  const char *msg = tandem_error_message();
  snprintf(th__message, sizeof th__message, "%s", msg ? msg : "");
  if (status != expected) {
    print_error("%s:%d: %s\n  returned %s (%d), expected %s (%d)\n  message: %s\n", file, line,
                expr, tandem_status_name(status), (int)status, tandem_status_name(expected),
                (int)expected, status == TANDEM_OK ? "(none: the call succeeded)" : th__message);
    _fail(file, line);
  }
  if (expected != TANDEM_OK && th__message[0] == '\0') {
    print_error("%s:%d: %s\n  returned %s as expected but the error message is empty\n", file, line,
                expr, tandem_status_name(status));
    _fail(file, line);
  }
}

void th__check_message_has(const char *needle, const char *file, int line) {
  if (strstr(th__message, needle) == NULL) {
    print_error("%s:%d: error message does not contain \"%s\"\n  message: %s\n", file, line, needle,
                th__message);
    _fail(file, line);
  }
}

void th__check_u64_eq(uint64_t actual, uint64_t expected, const char *a, const char *e,
                      const char *file, int line) {
  if (actual != expected) {
    print_error("%s:%d: %s == %s\n  actual   %" PRIu64 " (0x%" PRIx64 ")\n  expected %" PRIu64
                " (0x%" PRIx64 ")\n",
                file, line, a, e, actual, actual, expected, expected);
    _fail(file, line);
  }
}

void th__check_u32_array(const uint32_t *actual, const uint32_t *expected, size_t count,
                         const char *what, const char *file, int line) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < count; ++i) {
    if (actual[i] != expected[i]) {
      if (bad == 0) first = i;
      ++bad;
    }
  }
  if (bad != 0) {
    print_error("%s:%d: %s: %zu of %zu elements differ; first at [%zu]: actual 0x%08" PRIx32
                ", expected 0x%08" PRIx32 "\n",
                file, line, what, bad, count, first, actual[first], expected[first]);
    _fail(file, line);
  }
}

void th__check_u32_fill(const uint32_t *actual, uint32_t value, size_t count, const char *what,
                        const char *file, int line) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < count; ++i) {
    if (actual[i] != value) {
      if (bad == 0) first = i;
      ++bad;
    }
  }
  if (bad != 0) {
    print_error("%s:%d: %s: %zu of %zu elements differ; first at [%zu]: actual 0x%08" PRIx32
                ", expected 0x%08" PRIx32 "\n",
                file, line, what, bad, count, first, actual[first], value);
    _fail(file, line);
  }
}

/*---------------------------------------------------------------------------*/

static uint64_t th__splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t th_seed(void) {
  static uint64_t seed;
  static int have;
  if (!have) {
    const char *env = getenv("TANDEM_TEST_SEED");
    if (env != NULL && env[0] != '\0') {
      seed = strtoull(env, NULL, 0);
    } else {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec;
    }
    have = 1;
    fprintf(stderr, "random seed: TANDEM_TEST_SEED=%" PRIu64 "\n", seed);
  }
  return seed;
}

th_rng_t th_rng(uint64_t stream) {
  th_rng_t r;
  uint64_t x = th_seed() ^ (stream * 0xD1B54A32D192ED03ull);
  r.state = th__splitmix(&x);
  return r;
}

uint32_t th_rand_u32(th_rng_t *rng) { return (uint32_t)(th__splitmix(&rng->state) >> 32); }

float th_rand_float(th_rng_t *rng) {
  /* 24 random bits: exactly representable, uniform in [-1, 1). */
  uint32_t bits = th_rand_u32(rng) >> 8;
  return (float)bits / 8388608.0f - 1.0f;
}

void th_fill_random_u32(th_rng_t *rng, uint32_t *data, size_t count) {
  for (size_t i = 0; i < count; ++i) data[i] = th_rand_u32(rng);
}

void th_fill_random_float(th_rng_t *rng, float *data, size_t count) {
  for (size_t i = 0; i < count; ++i) data[i] = th_rand_float(rng);
}

/*---------------------------------------------------------------------------*/

tandem_buffer_t *th_buffer(tandem_runtime_t *runtime, uint64_t size, tandem_placement_t placement) {
  tandem_buffer_t *b = NULL;
  TH_ASSERT_OK(tandem_buffer_create(runtime, size, placement, &b));
  assert_non_null(b);
  return b;
}

tandem_view_t th_view(tandem_buffer_t *buffer, uint64_t offset, uint64_t length) {
  tandem_view_t v;
  TH_ASSERT_OK(tandem_buffer_view(buffer, offset, length, &v));
  return v;
}

void th_write(tandem_buffer_t *buffer, uint64_t offset, const void *data, uint64_t bytes) {
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_write(th_view(buffer, offset, bytes), &m));
  assert_non_null(m.data);
  TH_ASSERT_U64_EQ(m.length, bytes);
  memcpy(m.data, data, (size_t)bytes);
  tandem_unmap(&m);
}

void th_read(tandem_buffer_t *buffer, uint64_t offset, void *data, uint64_t bytes) {
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_read(th_view(buffer, offset, bytes), &m));
  assert_non_null(m.data);
  TH_ASSERT_U64_EQ(m.length, bytes);
  memcpy(data, m.data, (size_t)bytes);
  tandem_unmap(&m);
}

void th_run_graph(tandem_graph_t *graph, int times) {
  tandem_exec_t *exec = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(graph, &exec));
  assert_non_null(exec);
  for (int i = 0; i < times; ++i) {
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(exec, &c));
    assert_non_null(c);
    TH_ASSERT_OK(tandem_completion_wait(c));
    assert_true(tandem_completion_is_complete(c));
    tandem_completion_release(c);
  }
  tandem_exec_release(exec);
}

void th_run_dispatch(tandem_runtime_t *runtime, tandem_kernel_t *k, const tandem_view_t *views,
                     uint32_t count, const void *push, uint32_t push_bytes, uint32_t gx,
                     uint32_t gy) {
  tandem_graph_t *g = th_graph(runtime);
  tandem_dispatch_desc_t dd = {.struct_size = sizeof(tandem_dispatch_desc_t),
                               .kernel = k,
                               .views = views,
                               .view_count = count,
                               .push_constants = push,
                               .push_constant_bytes = push_bytes,
                               .workgroups = {gx, gy, 1}};
  uint32_t node = 99;
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &dd, &node));
  TH_ASSERT_U64_EQ(node, 0);
  th_run_graph(g, 1);
  tandem_graph_release(g);
}

tandem_kernel_desc_t th_kernel_desc(const char *name, const uint32_t *spirv, size_t size,
                                    const tandem_binding_contract_t *bindings, uint32_t count,
                                    uint32_t push) {
  tandem_kernel_desc_t d;
  tandem_kernel_desc_init(&d);
  d.name = name;
  d.spirv = spirv;
  d.spirv_size = size;
  d.bindings = bindings;
  d.binding_count = count;
  d.push_constant_bytes = push;
  return d;
}

tandem_kernel_t *th_kernel_load(tandem_runtime_t *rt, const char *name, const uint32_t *spirv,
                                size_t size, uint32_t groups, const tandem_binding_contract_t *b,
                                uint32_t count, uint32_t push) {
  tandem_kernel_desc_t d = th_kernel_desc(name, spirv, size, b, count, push);
  d.workgroups[0] = groups;
  d.workgroups[1] = 1;
  d.workgroups[2] = 1;
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  assert_non_null(k);
  return k;
}

tandem_statistics_t th_stats(tandem_runtime_t *rt) {
  tandem_statistics_t s;
  memset(&s, 0xEE, sizeof s);
  s.struct_size = sizeof s; /* after the poison */
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &s));
  return s;
}

uint64_t th_lane_copied(tandem_runtime_t *rt, int lane) {
  tandem_lane_info_t info;
  tandem_lane_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_lane_info(rt, lane, &info));
  return info.copied_bytes;
}

/* v[i] += 1 over |n| uints. */
tandem_kernel_t *th_add_one_kernel(tandem_runtime_t *rt, uint32_t n) {
  const tandem_binding_contract_t b[1] = {{(uint64_t)n * 4, 4, TANDEM_ACCESS_READ_WRITE}};
  return th_kernel_load(rt, "add_one_u32", tandem_spv_add_one_u32, tandem_spv_add_one_u32_size,
                        (n + 255) / 256, b, 1, 4);
}

tandem_status_t th_add_add_one(tandem_graph_t *g, tandem_kernel_t *k, tandem_view_t v, uint32_t n) {
  return tandem_graph_add_dispatch(g, k, &v, 1, &n, sizeof n);
}

tandem_graph_t *th_graph(tandem_runtime_t *rt) {
  tandem_graph_t *g = NULL;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  assert_non_null(g);
  TH_ASSERT_U64_EQ(tandem_graph_node_count(g), 0);
  return g;
}

static void *th__bg_submit_main(void *arg) {
  th_bg_submit_t *b = arg;
  tandem_completion_t *c = NULL;
  b->status = tandem_exec_submit(b->exec, &c);
  atomic_store(&b->submitted, 1);
  if (b->status == TANDEM_OK) b->status = tandem_completion_wait(c);
  tandem_completion_release(c);
  atomic_store(&b->finished, 1);
  return NULL;
}

void th_bg_submit_start(th_bg_submit_t *b, tandem_exec_t *exec) {
  b->exec = exec;
  b->status = TANDEM_OK;
  atomic_init(&b->submitted, 0);
  atomic_init(&b->finished, 0);
  assert_int_equal(pthread_create(&b->thread, NULL, th__bg_submit_main, b), 0);
}

tandem_status_t th_bg_submit_join(th_bg_submit_t *b) {
  pthread_join(b->thread, NULL);
  return b->status;
}
