/* SPDX-License-Identifier: MIT */
/*
 * access.h — what core may call of access.c: the byte ranges a node touches
 * and when two accesses conflict.
 */
#ifndef TANDEM_CORE_ACCESS_H_
#define TANDEM_CORE_ACCESS_H_

#include <stdbool.h>
#include <stdint.h>

#include "core/types.h"

/* Accesses of a node, derived from its views and (for dispatches) contract;
 * the indirect argument, when there is one, comes last. */
uint32_t tandem__node_accesses(const tandem__node_t *node, tandem__access_t *out);
bool tandem__ranges_overlap(uint64_t a_off, uint64_t a_len, uint64_t b_off, uint64_t b_len);
bool tandem__accesses_conflict(tandem_access_t a, tandem_access_t b);

#endif /* TANDEM_CORE_ACCESS_H_ */
