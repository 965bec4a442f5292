/* SPDX-License-Identifier: MIT */
/*
 * test_stress.c — 8 threads submitting into one runtime with BUSY
 * back-pressure, every result checked.
 *
 * The runtime allows 8 submissions in flight (max_submissions) and 4 per
 * executable (graph_slots). Each thread owns an executable of 3 chained
 * add-one dispatches over one quarter of a shared buffer; two threads share
 * each quarter, so their submissions conflict and must be ordered by the
 * tracker across threads and executables. A thread submits until the runtime
 * answers BUSY, then waits for its own oldest completion (or yields when it
 * has none in flight: the other threads hold the budget). At the end every
 * element of a quarter must equal 3 × the submissions its two threads made.
 * Short by default; TANDEM_STRESS_SECONDS=N runs N seconds instead
 * (scripts/stress.sh). Label "vulkan".
 */
#include "harness.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 8
#define QUARTERS 4
#define CHAIN 3
#define PER_THREAD_SLOTS 4

typedef struct worker {
  tandem_exec_t *exec;
  uint64_t target;      /* submissions to make (0: until the deadline) */
  uint64_t deadline_ns; /* CLOCK_MONOTONIC, with target 0 */
  uint64_t submitted, busy, waits;
  tandem_status_t failure; /* first unexpected status, OK if none */
  char message[256];
} worker_t;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void worker_fail(worker_t *w, tandem_status_t s, const char *what) {
  if (w->failure != TANDEM_OK) return;
  w->failure = s;
  snprintf(w->message, sizeof w->message, "%s: %s: %s", what, tandem_status_name(s),
           tandem_error_message());
}

/* No cmocka assertions here (not thread-safe): failures are recorded. */
static void *worker_main(void *arg) {
  worker_t *w = arg;
  tandem_completion_t *ring[PER_THREAD_SLOTS];
  uint32_t head = 0, count = 0;
  for (;;) {
    bool more = w->target ? w->submitted < w->target : now_ns() < w->deadline_ns;
    if (!more && count == 0) break;
    if (more) {
      tandem_completion_t *c = NULL;
      tandem_status_t s = tandem_exec_submit(w->exec, &c);
      if (s == TANDEM_OK) {
        ring[(head + count++) % PER_THREAD_SLOTS] = c;
        w->submitted++;
        continue;
      }
      if (s != TANDEM_ERROR_BUSY) {
        worker_fail(w, s, "submit");
        more = false;
      } else {
        w->busy++;
        if (count == 0) { /* the others hold every submission: let them run */
          sched_yield();
          continue;
        }
      }
    }
    /* Back-pressure (or draining): wait for the oldest own completion. */
    tandem_completion_t *c = ring[head];
    head = (head + 1) % PER_THREAD_SLOTS;
    count--;
    tandem_status_t s = tandem_completion_wait(c);
    if (s != TANDEM_OK) worker_fail(w, s, "wait");
    tandem_completion_release(c);
    w->waits++;
    if (w->failure != TANDEM_OK && count == 0) break;
  }
  return NULL;
}

static void test_eight_threads_busy_backpressure(void **state) {
  (void)state;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.max_submissions = 8;
  o.graph_slots = PER_THREAD_SLOTS;
  th_validation_reset();
  tandem_runtime_t *rt = th_runtime_create(&o);
  const uint32_t n = th_small() ? 1024 : 16384; /* uints per quarter */
  tandem_buffer_t *buf = th_buffer(rt, (uint64_t)n * 4 * QUARTERS, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = th_add_one_kernel(rt, n);

  const char *env = getenv("TANDEM_STRESS_SECONDS");
  uint64_t seconds = env ? strtoull(env, NULL, 10) : 0;
  worker_t w[THREADS] = {0};
  for (int t = 0; t < THREADS; t++) {
    tandem_graph_t *g = th_graph(rt);
    tandem_view_t v = th_view(buf, (uint64_t)(t % QUARTERS) * n * 4, (uint64_t)n * 4);
    for (int c = 0; c < CHAIN; c++) TH_ASSERT_OK(th_add_add_one(g, k, v, n));
    TH_ASSERT_OK(tandem_graph_prepare(g, &w[t].exec));
    tandem_graph_release(g);
    w[t].target = seconds ? 0 : (th_small() ? 60 : 200);
    w[t].deadline_ns = now_ns() + seconds * 1000000000u;
  }
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++)
    assert_int_equal(pthread_create(&threads[t], NULL, worker_main, &w[t]), 0);
  for (int t = 0; t < THREADS; t++) assert_int_equal(pthread_join(threads[t], NULL), 0);

  uint64_t total = 0, busy = 0;
  for (int t = 0; t < THREADS; t++) {
    if (w[t].failure != TANDEM_OK) fail_msg("thread %d: %s", t, w[t].message);
    assert_int_equal(w[t].waits, w[t].submitted); /* every completion waited for */
    total += w[t].submitted;
    busy += w[t].busy;
  }
  /* Data: each quarter got CHAIN adds per submission of its two threads. */
  uint32_t *data = malloc((size_t)n * 4 * QUARTERS);
  assert_non_null(data);
  th_read(buf, 0, data, (uint64_t)n * 4 * QUARTERS);
  for (int q = 0; q < QUARTERS; q++) {
    uint64_t expect = CHAIN * (w[q].submitted + w[q + QUARTERS].submitted);
    char what[64];
    snprintf(what, sizeof what, "quarter %d", q);
    TH_ASSERT_U32_FILL(data + (size_t)q * n, (uint32_t)expect, n, what);
  }
  free(data);
  tandem_statistics_t st = th_stats(rt);
  TH_ASSERT_U64_EQ(st.submissions, total);
  fprintf(stderr, "stress: %llu submissions, %llu BUSY answers, 8 threads, %llu s\n",
          (unsigned long long)total, (unsigned long long)busy, (unsigned long long)seconds);
  for (int t = 0; t < THREADS; t++) tandem_exec_release(w[t].exec);
  tandem_kernel_release(k);
  tandem_buffer_release(buf);
  th_runtime_destroy(rt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eight_threads_busy_backpressure),
  };
  return TH_RUN_GROUP(tests);
}
