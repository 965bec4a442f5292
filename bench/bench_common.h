/* SPDX-License-Identifier: MIT */
/*
 * bench_common.h — what the stand-alone measurements in bench/ share: a
 * status check that exits (77, CTest's skip code, when there is no device),
 * a monotonic clock, a sort order for medians and a validation callback for
 * the smoke runs. Each program defines BENCH_NAME before including it.
 */
#ifndef TANDEM_BENCH_COMMON_H_
#define TANDEM_BENCH_COMMON_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tandem/tandem.h"

#define CHECK(expr)                                                                  \
  do {                                                                               \
    tandem_status_t s_ = (expr);                                                     \
    if (s_ != TANDEM_OK) {                                                           \
      fprintf(stderr, BENCH_NAME ": %s: %s\n", #expr, tandem_error_message());       \
      exit(s_ == TANDEM_ERROR_NO_DEVICE ? 77 : 1);                                   \
    }                                                                                \
  } while (0)

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

#endif /* TANDEM_BENCH_COMMON_H_ */
