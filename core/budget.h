/* SPDX-License-Identifier: MIT */
/*
 * budget.h — what core may call of budget.c: charging a runtime's budget
 * for a buffer's bytes.
 */
#ifndef TANDEM_CORE_BUDGET_H_
#define TANDEM_CORE_BUDGET_H_

#include <stdint.h>

#include "tandem/tandem.h"

tandem_status_t tandem__budget_reserve(tandem_budget_t *budget, uint64_t bytes);
void tandem__budget_unreserve(tandem_budget_t *budget, uint64_t bytes);

#endif /* TANDEM_CORE_BUDGET_H_ */
