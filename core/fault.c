/* SPDX-License-Identifier: MIT */
/*
 * fault.c — the numbered fault-injection switch behind tandem__fault() and
 * tandem_test_fault_set / tandem_test_fault_report (tandem_testing.h), and the
 * allocation wrappers of core/fault_alloc.h.
 *
 * One process-wide counter: when armed with N, each counted call (of the
 * armed kinds) takes the next number; call N fails, and with |persistent|
 * every later one too. The first failing site is kept for the report, so a
 * test can say which call it failed. Not for applications (tandem_testing.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fault.h"
#include "core/status.h"
#include "tandem/tandem_testing.h"

/* This file implements the wrappers: use the real functions here. */
#undef malloc
#undef calloc
#undef realloc
#undef strdup

#ifndef TANDEM_UNTESTABLE
static atomic_uint_fast64_t tandem__fault_at; /* 0: off */
static atomic_uint tandem__fault_kinds;
static atomic_bool tandem__fault_persistent;
static atomic_uint_fast64_t tandem__fault_count; /* counted calls since armed */
static atomic_uint_fast64_t tandem__fault_hits;  /* calls made to fail */
static pthread_mutex_t tandem__fault_mutex = PTHREAD_MUTEX_INITIALIZER;
static char tandem__fault_first_site[128]; /* [tandem__fault_mutex] */
/* Every distinct site counted while armed, since the process started (the
 * sweep's coverage, tandem_test_fault_sites): the sites are string literals,
 * kept by pointer. */
#define TANDEM__FAULT_MAX_SITES 512
static struct {
  const char *site;
  tandem__fault_kind_t kind;
} tandem__fault_sites[TANDEM__FAULT_MAX_SITES]; /* [tandem__fault_mutex] */
static uint32_t tandem__fault_site_count;       /* [tandem__fault_mutex] */
/* The distinct sites made to fail since the last tandem_test_fault_set
 * (tandem_test_fault_failed_sites): the acceptance of a persistent run
 * depends on every site that failed, not only the first. */
#define TANDEM__FAULT_MAX_FAILED 64
static const char *tandem__fault_failed[TANDEM__FAULT_MAX_FAILED]; /* [tandem__fault_mutex] */
static tandem__fault_kind_t tandem__fault_failed_kind[TANDEM__FAULT_MAX_FAILED];
static uint32_t tandem__fault_failed_count; /* [tandem__fault_mutex] */

static void tandem__fault_note_site(tandem__fault_kind_t kind, const char *site) {
  pthread_mutex_lock(&tandem__fault_mutex);
  bool seen = false;
  for (uint32_t i = 0; i < tandem__fault_site_count && !seen; i++)
    seen = tandem__fault_sites[i].kind == kind && strcmp(tandem__fault_sites[i].site, site) == 0;
  if (!seen && tandem__fault_site_count < TANDEM__FAULT_MAX_SITES) {
    tandem__fault_sites[tandem__fault_site_count].site = site;
    tandem__fault_sites[tandem__fault_site_count].kind = kind;
    tandem__fault_site_count++;
  }
  pthread_mutex_unlock(&tandem__fault_mutex);
}

bool tandem__fault_armed(void) { return atomic_load(&tandem__fault_at) != 0; }

bool tandem__fault(tandem__fault_kind_t kind, const char *site) {
  uint64_t at = atomic_load_explicit(&tandem__fault_at, memory_order_relaxed);
  if (at == 0 || !(atomic_load(&tandem__fault_kinds) & (unsigned)kind)) return false;
  uint64_t n = atomic_fetch_add(&tandem__fault_count, 1) + 1;
  tandem__fault_note_site(kind, site);
  if (n < at || (n > at && !atomic_load(&tandem__fault_persistent))) return false;
  bool first = atomic_fetch_add(&tandem__fault_hits, 1) == 0;
  pthread_mutex_lock(&tandem__fault_mutex);
  if (first) snprintf(tandem__fault_first_site, sizeof tandem__fault_first_site, "%s", site);
  bool seen = false;
  for (uint32_t i = 0; i < tandem__fault_failed_count && !seen; i++)
    seen = tandem__fault_failed_kind[i] == kind && strcmp(tandem__fault_failed[i], site) == 0;
  if (!seen && tandem__fault_failed_count < TANDEM__FAULT_MAX_FAILED) {
    tandem__fault_failed[tandem__fault_failed_count] = site;
    tandem__fault_failed_kind[tandem__fault_failed_count] = kind;
    tandem__fault_failed_count++;
  }
  pthread_mutex_unlock(&tandem__fault_mutex);
  if (first) {
    if (getenv("TANDEM_FAULT_VERBOSE"))
      fprintf(stderr, "tandem: injected fault %llu: %s\n", (unsigned long long)n, site);
  }
  return true;
}

void *tandem__fault_malloc(size_t size, const char *site) {
  if (tandem__fault(TANDEM__FAULT_ALLOC, site)) {
    errno = ENOMEM;
    return NULL;
  }
  return malloc(size);
}

void *tandem__fault_calloc(size_t count, size_t size, const char *site) {
  if (tandem__fault(TANDEM__FAULT_ALLOC, site)) {
    errno = ENOMEM;
    return NULL;
  }
  return calloc(count, size);
}

void *tandem__fault_realloc(void *ptr, size_t size, const char *site) {
  if (tandem__fault(TANDEM__FAULT_ALLOC, site)) {
    errno = ENOMEM;
    return NULL;
  }
  return realloc(ptr, size);
}

char *tandem__fault_strdup(const char *s, const char *site) {
  if (tandem__fault(TANDEM__FAULT_ALLOC, site)) {
    errno = ENOMEM;
    return NULL;
  }
  return strdup(s);
}
#endif

tandem_status_t tandem_test_fault_set(const tandem_test_fault_t *fault) {
#ifdef TANDEM_UNTESTABLE
  (void)fault;
  return TANDEM_FAIL(TANDEM_ERROR_UNIMPLEMENTED, "built with TANDEM_UNTESTABLE");
#else
  if (fault && (fault->kinds & ~(uint32_t)TANDEM_TEST_FAULT_ALL))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "fault kinds 0x%x: unknown bits",
                       fault->kinds);
  atomic_store(&tandem__fault_at, 0); /* off while the rest changes */
  atomic_store(&tandem__fault_count, 0);
  atomic_store(&tandem__fault_hits, 0);
  pthread_mutex_lock(&tandem__fault_mutex);
  tandem__fault_first_site[0] = '\0';
  tandem__fault_failed_count = 0;
  pthread_mutex_unlock(&tandem__fault_mutex);
  if (!fault || fault->fail_at == 0) return TANDEM_OK;
  atomic_store(&tandem__fault_kinds, fault->kinds ? fault->kinds : TANDEM_TEST_FAULT_ALL);
  atomic_store(&tandem__fault_persistent, fault->persistent);
  atomic_store(&tandem__fault_at, fault->fail_at);
  return TANDEM_OK;
#endif
}

tandem_status_t tandem_test_fault_sites(uint32_t kinds, const char **out_sites, uint32_t capacity,
                                        uint32_t *out_count) {
  if (!out_count) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_count is NULL");
  *out_count = 0;
  if (capacity && !out_sites)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_sites is NULL with capacity %u",
                       capacity);
  if (kinds & ~(uint32_t)TANDEM_TEST_FAULT_ALL)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "fault kinds 0x%x: unknown bits", kinds);
#ifdef TANDEM_UNTESTABLE
  (void)out_sites;
  return TANDEM_FAIL(TANDEM_ERROR_UNIMPLEMENTED, "built with TANDEM_UNTESTABLE");
#else
  if (kinds == 0) kinds = TANDEM_TEST_FAULT_ALL;
  uint32_t n = 0;
  pthread_mutex_lock(&tandem__fault_mutex);
  for (uint32_t i = 0; i < tandem__fault_site_count; i++) {
    if (!((uint32_t)tandem__fault_sites[i].kind & kinds)) continue;
    if (n < capacity) out_sites[n] = tandem__fault_sites[i].site;
    n++;
  }
  pthread_mutex_unlock(&tandem__fault_mutex);
  *out_count = n;
  return TANDEM_OK;
#endif
}

tandem_status_t tandem_test_fault_failed_sites(const char **out_sites, uint32_t capacity,
                                               uint32_t *out_count) {
  if (!out_count) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_count is NULL");
  *out_count = 0;
  if (capacity && !out_sites)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_sites is NULL with capacity %u",
                       capacity);
#ifdef TANDEM_UNTESTABLE
  return TANDEM_FAIL(TANDEM_ERROR_UNIMPLEMENTED, "built with TANDEM_UNTESTABLE");
#else
  pthread_mutex_lock(&tandem__fault_mutex);
  uint32_t n = tandem__fault_failed_count;
  for (uint32_t i = 0; i < n && i < capacity; i++) out_sites[i] = tandem__fault_failed[i];
  pthread_mutex_unlock(&tandem__fault_mutex);
  *out_count = n;
  return TANDEM_OK;
#endif
}

tandem_status_t tandem_test_fault_report(tandem_test_fault_report_t *out) {
  if (!out) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_report is NULL");
  memset(out, 0, sizeof *out);
#ifdef TANDEM_UNTESTABLE
  return TANDEM_FAIL(TANDEM_ERROR_UNIMPLEMENTED, "built with TANDEM_UNTESTABLE");
#else
  out->counted = atomic_load(&tandem__fault_count);
  out->failed = atomic_load(&tandem__fault_hits);
  pthread_mutex_lock(&tandem__fault_mutex);
  snprintf(out->first_site, sizeof out->first_site, "%s", tandem__fault_first_site);
  pthread_mutex_unlock(&tandem__fault_mutex);
  return TANDEM_OK;
#endif
}
