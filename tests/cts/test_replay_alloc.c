/* SPDX-License-Identifier: MIT */
/*
 * test_replay_alloc.c — replay performs no heap allocation inside libtandem.
 *
 * The executable interposes malloc, calloc, realloc, aligned_alloc,
 * posix_memalign and free (the real ones are found with dlsym(RTLD_NEXT); the
 * calloc that dlsym itself may make is served from a small static buffer).
 * While counting is on, a call whose immediate caller lies inside libtandem
 * (dladdr of __builtin_return_address(0) names a file containing "libtandem")
 * is counted. A prepared graph is warmed up, then 100 x (submit + wait +
 * release) run with counting on: the count must be 0. As a control, the same
 * counter must see tandem_graph_create's allocation, so the test can fail.
 *
 * Skipped (77) under ASan/TSan: their runtimes own malloc.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RA_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define RA_SANITIZED 1
#endif
#endif
#ifndef RA_SANITIZED
#define RA_SANITIZED 0
#endif

#include "harness.h"
#include "tandem/tandem_vulkan.h"
#include "tandem_test_shaders.h"

#if !RA_SANITIZED

/*---------------------------------------------------------------------------
 * Interposition
 *---------------------------------------------------------------------------*/

/* The build hides symbols by default: the hooks must be exported to
 * interpose. */
#define HOOK __attribute__((visibility("default")))

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void (*real_free)(void *);

/* dlsym may calloc before real_calloc is known. */
static _Alignas(16) unsigned char boot_buf[8192];
static size_t boot_used;
static _Thread_local int in_hook; /* no counting inside our own bookkeeping */

static atomic_bool counting;
/* tandem_allocs: called by libtandem directly; tandem_indirect: called by libc
 * (strdup, asprintf, fopen ...) on behalf of libtandem. */
static atomic_uint_fast64_t tandem_allocs, tandem_indirect, tandem_frees, other_allocs;
static atomic_uintptr_t last_caller;

static bool in_boot(const void *p) {
  return (const unsigned char *)p >= boot_buf &&
         (const unsigned char *)p < boot_buf + sizeof boot_buf;
}

static void *boot_alloc(size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (boot_used + size > sizeof boot_buf) return NULL;
  void *p = boot_buf + boot_used;
  boot_used += size;
  memset(p, 0, size);
  return p;
}

static void resolve(void) {
  static _Thread_local int resolving;
  if (real_malloc || resolving) return;
  resolving = 1;
  real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
  real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
  real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  resolving = 0;
}

static bool caller_is_tandem(const void *ra) {
  Dl_info info;
  if (!dladdr(ra, &info) || !info.dli_fname) return false;
  return strstr(info.dli_fname, "libtandem") != NULL;
}

static bool caller_is_libc(const void *ra) {
  Dl_info info;
  if (!dladdr(ra, &info) || !info.dli_fname) return false;
  return strstr(info.dli_fname, "libc.so") != NULL;
}

/* Walks the stack past this executable's and libc's frames: true when the
 * first other frame is in libtandem. */
static bool libc_on_behalf_of_tandem(void) {
  void *frames[24];
  int count = backtrace(frames, 24);
  Dl_info self;
  if (!dladdr((void *)&caller_is_tandem, &self)) return false;
  for (int i = 0; i < count; ++i) {
    Dl_info info;
    if (!dladdr(frames[i], &info) || !info.dli_fname) return false;
    if (info.dli_fbase == self.dli_fbase) continue;
    if (strstr(info.dli_fname, "libc.so")) continue;
    return strstr(info.dli_fname, "libtandem") != NULL;
  }
  return false;
}

static void note(const void *ra, bool is_free) {
  if (!atomic_load_explicit(&counting, memory_order_relaxed) || in_hook) return;
  in_hook = 1;
  if (!is_free && caller_is_libc(ra) && libc_on_behalf_of_tandem()) {
    atomic_fetch_add(&tandem_indirect, 1);
  } else if (caller_is_tandem(ra)) {
    if (is_free) {
      atomic_fetch_add(&tandem_frees, 1);
    } else {
      atomic_fetch_add(&tandem_allocs, 1);
      atomic_store(&last_caller, (uintptr_t)ra);
    }
  } else if (!is_free) {
    atomic_fetch_add(&other_allocs, 1);
  }
  in_hook = 0;
}

HOOK void *malloc(size_t size) {
  resolve();
  if (!real_malloc) return boot_alloc(size);
  note(__builtin_return_address(0), false);
  return real_malloc(size);
}

HOOK void *calloc(size_t n, size_t size) {
  resolve();
  if (!real_calloc) {
    if (size && n > SIZE_MAX / size) return NULL;
    return boot_alloc(n * size);
  }
  note(__builtin_return_address(0), false);
  return real_calloc(n, size);
}

HOOK void *realloc(void *p, size_t size) {
  resolve();
  if (in_boot(p)) { /* move a bootstrap block to the real heap */
    void *q = real_malloc ? real_malloc(size) : boot_alloc(size);
    size_t avail = (size_t)(boot_buf + sizeof boot_buf - (unsigned char *)p);
    if (q) memcpy(q, p, size < avail ? size : avail);
    return q;
  }
  if (!real_realloc) return boot_alloc(size);
  note(__builtin_return_address(0), false);
  return real_realloc(p, size);
}

HOOK void *aligned_alloc(size_t alignment, size_t size) {
  resolve();
  note(__builtin_return_address(0), false);
  return real_aligned_alloc(alignment, size);
}

HOOK int posix_memalign(void **out, size_t alignment, size_t size) {
  resolve();
  note(__builtin_return_address(0), false);
  return real_posix_memalign(out, alignment, size);
}

HOOK void free(void *p) {
  if (p == NULL || in_boot(p)) return;
  resolve();
  note(__builtin_return_address(0), true);
  real_free(p);
}

static void counting_on(void) {
  atomic_store(&tandem_allocs, 0);
  atomic_store(&tandem_indirect, 0);
  atomic_store(&tandem_frees, 0);
  atomic_store(&other_allocs, 0);
  atomic_store(&last_caller, 0);
  atomic_store(&counting, true);
}

static void counting_off(void) { atomic_store(&counting, false); }

static void report(const char *what) {
  Dl_info info;
  uintptr_t ra = atomic_load(&last_caller);
  const char *sym = "?";
  if (ra && dladdr((void *)ra, &info) && info.dli_sname) sym = info.dli_sname;
  fprintf(stderr,
          "%s: %llu allocation(s) and %llu free(s) called from libtandem (last from %s, %p), "
          "%llu made by libc for libtandem; %llu allocation(s) from elsewhere (driver, libc, "
          "loader)\n",
          what, (unsigned long long)atomic_load(&tandem_allocs),
          (unsigned long long)atomic_load(&tandem_frees), sym, (void *)ra,
          (unsigned long long)atomic_load(&tandem_indirect),
          (unsigned long long)atomic_load(&other_allocs));
}

/*---------------------------------------------------------------------------
 * Tests
 *---------------------------------------------------------------------------*/

static tandem_kernel_t *add_one_kernel(tandem_runtime_t *rt, uint32_t n) {
  const tandem_binding_contract_t b[1] = {{(uint64_t)n * 4, 4, TANDEM_ACCESS_READ_WRITE}};
  tandem_kernel_desc_t d;
  tandem_kernel_desc_init(&d);
  d.name = "add_one_u32";
  d.spirv = tandem_spv_add_one_u32;
  d.spirv_size = tandem_spv_add_one_u32_size;
  d.workgroups[0] = (n + 255) / 256;
  d.workgroups[1] = 1;
  d.workgroups[2] = 1;
  d.bindings = b;
  d.binding_count = 1;
  d.push_constant_bytes = 4;
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  return k;
}

/* A Vulkan commands node's callback: its commands are recorded at prepare,
 * so replay never calls it (it records nothing here; its barriers do). */
static int g_record_calls;
static tandem_status_t record_nothing(void *user, const tandem_vulkan_scope_t *scope) {
  (void)user;
  (void)scope;
  g_record_calls++;
  return TANDEM_OK;
}

static void test_replay_allocates_nothing(void **state) {
  tandem_runtime_t *rt = *state;
  const uint32_t n = 1u << 14;
  const uint64_t bytes = (uint64_t)n * 4;
  tandem_buffer_t *h = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *d = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *o = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = add_one_kernel(rt, n);

  /* backtrace() loads libgcc_s on first use: do that before counting. */
  void *warm[4];
  (void)backtrace(warm, 4);

  /* Control: the counter sees libtandem's own allocations. */
  tandem_graph_t *g = NULL;
  counting_on();
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  counting_off();
  report("tandem_graph_create (control)");
  if (atomic_load(&tandem_allocs) < 1)
    fail_msg("control failed: tandem_graph_create made no counted allocation, so the counter "
             "cannot see libtandem's calls (interposition broken?)");

  /* Control for allocations libc makes on libtandem's behalf: fopen in
   * tandem_trace_write_json. */
  tandem_trace_t *t = NULL;
  TH_ASSERT_OK(tandem_runtime_trace_start(rt, 4));
  TH_ASSERT_OK(tandem_runtime_trace_stop(rt, &t));
  char path[] = "/tmp/tandem_replay_alloc_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  counting_on();
  TH_ASSERT_OK(tandem_trace_write_json(t, path));
  counting_off();
  report("tandem_trace_write_json (control, libc on behalf of libtandem)");
  unlink(path);
  tandem_trace_release(t);
  if (atomic_load(&tandem_indirect) < 1)
    fail_msg("control failed: fopen inside tandem_trace_write_json was not attributed to "
             "libtandem");

  /* upload -> +1 x 3 -> download, plus a stateful +1 on a HOST_VISIBLE range:
   * three lanes, several regions, semaphore waits between them; and a
   * Vulkan commands node (scoped handoff) among the dispatches. */
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(h), tandem_buffer_whole(d), TANDEM_LANE_AUTO));
  for (int i = 0; i < 3; ++i) {
    tandem_view_t v = tandem_buffer_whole(d);
    TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, &v, 1, &n, sizeof n));
    if (i == 1) {
      tandem_access_decl_t a = {v, TANDEM_ACCESS_READ_WRITE};
      TH_ASSERT_OK(
          tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, &a, 1, record_nothing, NULL));
    }
  }
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(d), tandem_buffer_whole(o), TANDEM_LANE_AUTO));
  tandem_view_t hv = tandem_buffer_whole(h);
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, &hv, 1, &n, sizeof n));
  tandem_exec_t *e = NULL;
  counting_on();
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  counting_off();
  report("tandem_graph_prepare (control)");
  assert_true(atomic_load(&tandem_allocs) >= 1);
  tandem_graph_release(g);
  int record_calls = g_record_calls;
  assert_true(record_calls >= 1);

  /* Warm up: first submits may touch lazily made driver state. */
  for (int i = 0; i < 5; ++i) {
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
  }

  /* Counted replay. No tandem or cmocka assertion inside (they may format). */
  const int runs = 100;
  tandem_status_t first_bad = TANDEM_OK;
  int bad_at = -1;
  counting_on();
  for (int i = 0; i < runs; ++i) {
    tandem_completion_t *c = NULL;
    tandem_status_t s = tandem_exec_submit(e, &c);
    if (s == TANDEM_OK) s = tandem_completion_wait(c);
    if (s == TANDEM_OK && !tandem_completion_is_complete(c)) s = TANDEM_ERROR_INTERNAL;
    tandem_completion_release(c);
    if (s != TANDEM_OK && bad_at < 0) {
      first_bad = s;
      bad_at = i;
    }
  }
  counting_off();
  report("100 x (submit + wait + release)");
  if (bad_at >= 0)
    fail_msg("replay %d returned %s: %s", bad_at, tandem_status_name(first_bad),
             tandem_error_message());
  if (atomic_load(&tandem_allocs) != 0 || atomic_load(&tandem_indirect) != 0)
    fail_msg("replay allocated inside libtandem: %llu direct call(s), %llu through libc (see "
             "the line above)",
             (unsigned long long)atomic_load(&tandem_allocs),
             (unsigned long long)atomic_load(&tandem_indirect));

  /* Also with two in flight (graph_slots defaults to 2). */
  counting_on();
  for (int i = 0; i < runs / 2; ++i) {
    tandem_completion_t *c1 = NULL, *c2 = NULL;
    tandem_status_t s = tandem_exec_submit(e, &c1);
    if (s == TANDEM_OK) s = tandem_exec_submit(e, &c2);
    if (s == TANDEM_OK) s = tandem_completion_wait(c1);
    if (s == TANDEM_OK) s = tandem_completion_wait(c2);
    tandem_completion_release(c1);
    tandem_completion_release(c2);
    if (s != TANDEM_OK && bad_at < 0) {
      first_bad = s;
      bad_at = i;
    }
  }
  counting_off();
  report("50 x (2 submits in flight + waits + releases)");
  if (bad_at >= 0)
    fail_msg("pipelined replay %d returned %s: %s", bad_at, tandem_status_name(first_bad),
             tandem_error_message());
  TH_ASSERT_U64_EQ(atomic_load(&tandem_allocs), 0);
  TH_ASSERT_U64_EQ(atomic_load(&tandem_indirect), 0);
  assert_int_equal(g_record_calls, record_calls); /* replay called no callback */

  /* Per-submission parameters: changing a view, push constants and the
   * workgroup count before every submit re-records a region, and still
   * allocates nothing inside libtandem. */
  tandem_buffer_t *u = th_buffer(rt, 2 * bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *gu = NULL;
  TH_ASSERT_OK(tandem_graph_create(rt, &gu));
  tandem_view_t uv = th_view(u, 0, bytes);
  TH_ASSERT_OK(tandem_graph_add_dispatch(gu, k, &uv, 1, &n, sizeof n));
  tandem_exec_t *eu = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(gu, &eu));
  tandem_graph_release(gu);
  for (int i = 0; i < 4; ++i) { /* warm both slots through the re-record path */
    tandem_view_t w = th_view(u, (uint64_t)(i & 1) * bytes, bytes);
    TH_ASSERT_OK(tandem_exec_set_view(eu, 0, 0, w));
    tandem_completion_t *c = NULL;
    TH_ASSERT_OK(tandem_exec_submit(eu, &c));
    TH_ASSERT_OK(tandem_completion_wait(c));
    tandem_completion_release(c);
  }
  counting_on();
  for (int i = 0; i < runs; ++i) {
    tandem_view_t w = {u, (uint64_t)(i & 1) * bytes, bytes};
    uint32_t count = (i & 2) ? n / 2 : n;
    const uint32_t wg[3] = {(count + 255) / 256, 1, 1};
    tandem_completion_t *c = NULL;
    tandem_status_t s = tandem_exec_set_view(eu, 0, 0, w);
    if (s == TANDEM_OK) s = tandem_exec_set_push_constants(eu, 0, &count, sizeof count);
    if (s == TANDEM_OK) s = tandem_exec_set_workgroups(eu, 0, wg);
    if (s == TANDEM_OK) s = tandem_exec_submit(eu, &c);
    if (s == TANDEM_OK) s = tandem_completion_wait(c);
    tandem_completion_release(c);
    if (s != TANDEM_OK && bad_at < 0) {
      first_bad = s;
      bad_at = i;
    }
  }
  counting_off();
  report("100 x (set view + push constants + workgroups, submit + wait + release)");
  if (bad_at >= 0)
    fail_msg("updated replay %d returned %s: %s", bad_at, tandem_status_name(first_bad),
             tandem_error_message());
  TH_ASSERT_U64_EQ(atomic_load(&tandem_allocs), 0);
  TH_ASSERT_U64_EQ(atomic_load(&tandem_indirect), 0);
  {
    /* Half 0 ran at i = 0,2,4.. (full for i%4==0, first half for i%4==2),
     * half 1 likewise at odd i; plus 2 warm-up runs each. */
    uint32_t *gotu = malloc(2 * bytes);
    assert_non_null(gotu);
    th_read(u, 0, gotu, 2 * bytes);
    uint32_t *want = malloc(2 * bytes);
    for (uint32_t half = 0; half < 2; half++)
      for (uint32_t j = 0; j < n; j++) {
        uint32_t v = 2;
        for (int i = 0; i < runs; ++i) {
          if ((uint32_t)(i & 1) != half) continue;
          uint32_t count = (i & 2) ? n / 2 : n;
          if (j < count) v++;
        }
        want[half * n + j] = v;
      }
    TH_ASSERT_U32_ARRAY(gotu, want, 2 * (size_t)n, "u after updated replays");
    free(gotu);
    free(want);
  }
  tandem_exec_release(eu);
  tandem_buffer_release(u);

  /* The replays really ran: o = h_before + 3 each time; h got +1 per run. */
  const uint32_t total = 5 + runs + runs;
  uint32_t *got = malloc(bytes);
  assert_non_null(got);
  th_read(h, 0, got, bytes);
  TH_ASSERT_U32_FILL(got, total, n, "h: +1 per run");
  th_read(o, 0, got, bytes);
  TH_ASSERT_U32_FILL(got, total - 1 + 3, n, "o: h before the last run, +3");
  free(got);

  tandem_exec_release(e);
  tandem_kernel_release(k);
  tandem_buffer_release(h);
  tandem_buffer_release(d);
  tandem_buffer_release(o);
}

/* A GPU runtime with timestamps on: the test traces. */
static int setup_timed(void **state) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.gpu_timestamps = true;
  *state = th_runtime_create(&o);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_replay_allocates_nothing, setup_timed, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}

#else /* RA_SANITIZED */

int main(void) {
  fprintf(stderr, "SKIP: malloc interposition conflicts with the sanitizer runtime "
                  "(ASan/TSan build)\n");
  return TH_EXIT_SKIP;
}

#endif
