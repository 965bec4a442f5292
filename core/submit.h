/* SPDX-License-Identifier: MIT */
/*
 * submit.h — what core may call of submit.c beyond tandem_exec_submit: the
 * external-submit form of the scoped handoff.
 */
#ifndef TANDEM_CORE_SUBMIT_H_
#define TANDEM_CORE_SUBMIT_H_

#include "core/types.h"
#include "tandem/tandem_vulkan.h"

/* submit.c: tandem_exec_submit of a one-region executable whose region also
 * waits for the work |submit| submits (called once the waits are known). */
tandem_status_t tandem__exec_submit_external(tandem_exec_t *exec, tandem_vulkan_submit_fn submit,
                                             void *user, tandem_completion_t **out_completion);

#endif /* TANDEM_CORE_SUBMIT_H_ */
