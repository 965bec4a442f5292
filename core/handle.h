/* SPDX-License-Identifier: MIT */
/*
 * handle.h — what core may call of handle.c: completion handles, one per
 * graph slot, and the slot behind a live one.
 */
#ifndef TANDEM_CORE_HANDLE_H_
#define TANDEM_CORE_HANDLE_H_

#include "core/types.h"

/* Completion handles (handle.c). take/give_back: once per slot, at prepare
 * and at executable destruction. issue: a fresh handle for the slot's new
 * submission (under runtime->mutex); revoke: the user released it (same).
 * acquire: the slot of a live handle with its executable retained (the
 * caller releases it with tandem_exec_release when done), or
 * INVALID_ARGUMENT naming |what|. */
tandem_status_t tandem__handle_take(tandem__slot_t *slot);
void tandem__handle_give_back(tandem__slot_t *slot);
tandem_completion_t *tandem__handle_issue(tandem__slot_t *slot);
void tandem__handle_revoke(tandem__slot_t *slot);
/* For checkers: 1 live, 0 not live, -1 the slot owns no entry. */
int tandem__handle_state(const tandem__slot_t *slot);
tandem__slot_t *tandem__handle_slot(const tandem_completion_t *completion);
tandem_status_t tandem__completion_acquire(const tandem_completion_t *completion, const char *what,
                                           tandem__slot_t **out_slot);

#endif /* TANDEM_CORE_HANDLE_H_ */
