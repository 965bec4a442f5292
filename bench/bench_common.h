/* SPDX-License-Identifier: MIT */
/*
 * bench_common.h — what the stand-alone measurements in bench/ share: a
 * status check that exits (77, CTest's skip code, when there is no device),
 * a monotonic clock, the process's minor page faults, a sort order for
 * medians, a validation callback for the smoke runs and the runtime's
 * teardown that fails on any validation message. Each program defines
 * BENCH_NAME before including it.
 */
#ifndef TANDEM_BENCH_COMMON_H_
#define TANDEM_BENCH_COMMON_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "tandem/tandem.h"

#define CHECK(expr)                                                            \
  do {                                                                         \
    tandem_status_t s_ = (expr);                                               \
    if (s_ != TANDEM_OK) {                                                     \
      fprintf(stderr, BENCH_NAME ": %s: %s\n", #expr, tandem_error_message()); \
      exit(s_ == TANDEM_ERROR_NO_DEVICE ? 77 : 1);                             \
    }                                                                          \
  } while (0)

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Minor page faults of this process so far: first touches of fresh memory,
 * which cost a trip into the kernel (and, in a virtual machine, possibly
 * into the host) each. */
static inline long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static inline int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Prints every validation message (smoke runs turn the layer on). */
static inline void on_validation(void *user, tandem_validation_severity_t severity,
                                 const char *msg) {
  (void)user;
  (void)severity;
  fprintf(stderr, BENCH_NAME ": validation: %s\n", msg);
}

/* Destroys |rt|; 1 (printed) when it saw any validation message, else 0. */
static inline int bench_runtime_destroy(tandem_runtime_t *rt) {
  uint64_t messages = tandem_runtime_validation_messages(rt);
  tandem_runtime_destroy(rt);
  if (!messages) return 0;
  fprintf(stderr, BENCH_NAME ": %llu validation message(s)\n", (unsigned long long)messages);
  return 1;
}

#endif /* TANDEM_BENCH_COMMON_H_ */
