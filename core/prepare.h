/* SPDX-License-Identifier: MIT */
/*
 * prepare.h — what core may call of prepare.c: preparing with a given number
 * of graph slots, and an executable's destruction.
 */
#ifndef TANDEM_CORE_PREPARE_H_
#define TANDEM_CORE_PREPARE_H_

#include <stdint.h>

#include "core/types.h"

/* prepare.c: prepare with |slot_count| graph slots (tandem_graph_prepare uses
 * the runtime option graph_slots). */
tandem_status_t tandem__graph_prepare_slots(tandem_graph_t *graph, uint32_t slot_count,
                                            tandem_exec_t **out_exec);
void tandem__exec_destroy(tandem_exec_t *exec);

#endif /* TANDEM_CORE_PREPARE_H_ */
