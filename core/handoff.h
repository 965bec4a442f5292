/* SPDX-License-Identifier: MIT */
/*
 * handoff.h — what core may call of handoff.c: the scope a user's Vulkan
 * callback sees, for recording (record.c) and for an external submit
 * (submit.c).
 */
#ifndef TANDEM_CORE_HANDOFF_H_
#define TANDEM_CORE_HANDOFF_H_

#include <stdint.h>

#include "core/types.h"
#include "tandem/tandem_vulkan.h"

/* handoff.c: records node |node_index| of |plan|, a VULKAN_COMMANDS node on a
 * GPU lane, into |command_buffer| (a VkCommandBuffer the backend is
 * recording) by calling the user's callback with a scope. A failure carries
 * the callback's code and a message naming the node. Called by the backend
 * while it records the node's region. */
tandem_status_t tandem__vulkan_commands_record(tandem__gpu_t *gpu, const tandem__plan_t *plan,
                                               uint32_t node_index, void *command_buffer);
/* handoff.c: calls |submit| (tandem_runtime_submit_vulkan) for |plan|'s one
 * node, a VULKAN_COMMANDS node that records nothing, with the timeline values
 * |waits| its region waits for, and sets |region|'s external wait to what it
 * signals. Needs runtime->mutex (the slot's values are being committed). */
tandem_status_t tandem__vulkan_submit_call(tandem__gpu_t *gpu, const tandem__plan_t *plan,
                                           tandem_vulkan_submit_fn submit, void *user,
                                           tandem__region_submit_t *region);

#endif /* TANDEM_CORE_HANDOFF_H_ */
