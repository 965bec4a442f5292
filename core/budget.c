/* SPDX-License-Identifier: MIT */
/*
 * budget.c — a byte ceiling shared by runtimes.
 *
 * Reservation is a compare-and-swap loop on |used|, so concurrent allocations
 * from several runtimes and threads can never overshoot the limit together,
 * and no lock is needed. A reservation is given back exactly once, by the
 * buffer that made it, when the buffer is destroyed.
 */
#include <stdlib.h>

#include "core/budget.h"
#include "core/runtime_int.h"

struct tandem_budget {
  atomic_uint_fast64_t refs;
  uint64_t limit;
  atomic_uint_fast64_t used;
};

tandem_status_t tandem_budget_create(uint64_t limit_bytes, tandem_budget_t **out_budget) {
  if (!out_budget) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_budget is NULL");
  *out_budget = NULL;
  if (limit_bytes == 0 || limit_bytes > TANDEM__MAX_BYTES)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE, "budget limit %llu bytes is outside 1..%llu",
                       (unsigned long long)limit_bytes, (unsigned long long)TANDEM__MAX_BYTES);
  tandem_budget_t *budget = calloc(1, sizeof *budget);
  if (!budget) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a budget");
  atomic_init(&budget->refs, 1);
  budget->limit = limit_bytes;
  atomic_init(&budget->used, 0);
  *out_budget = budget;
  return TANDEM_OK;
}

void tandem_budget_retain(tandem_budget_t *budget) {
  if (budget) atomic_fetch_add(&budget->refs, 1);
}

void tandem_budget_release(tandem_budget_t *budget) {
  if (budget && atomic_fetch_sub(&budget->refs, 1) == 1) free(budget);
}

uint64_t tandem_budget_limit(const tandem_budget_t *budget) { return budget ? budget->limit : 0; }

uint64_t tandem_budget_used(const tandem_budget_t *budget) {
  return budget ? atomic_load(&((tandem_budget_t *)budget)->used) : 0;
}

tandem_status_t tandem__budget_reserve(tandem_budget_t *budget, uint64_t bytes) {
  if (!budget) return TANDEM_OK;
  uint_fast64_t used = atomic_load(&budget->used);
  for (;;) {
    if (bytes > budget->limit - used)
      return TANDEM_FAIL(TANDEM_ERROR_OVER_BUDGET,
                         "allocating %llu bytes would exceed the memory budget: "
                         "%llu of %llu bytes already reserved",
                         (unsigned long long)bytes, (unsigned long long)used,
                         (unsigned long long)budget->limit);
    if (atomic_compare_exchange_weak(&budget->used, &used, used + bytes)) return TANDEM_OK;
  }
}

void tandem__budget_unreserve(tandem_budget_t *budget, uint64_t bytes) {
  if (budget) atomic_fetch_sub(&budget->used, bytes);
}
