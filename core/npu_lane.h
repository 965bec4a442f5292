/* SPDX-License-Identifier: MIT */
/*
 * npu_lane.h — what core may call of npu_lane.c: the NPU lane thread's
 * start and stop, its queue of NPU regions, and its signalled value.
 */
#ifndef TANDEM_CORE_NPU_LANE_H_
#define TANDEM_CORE_NPU_LANE_H_

#include "core/types.h"

/* npu_lane.c: starts the lane thread (the NPU just opened, under open_mutex). */
tandem_status_t tandem__npu_lane_start(tandem_runtime_t *runtime);
void tandem__npu_lane_push(tandem_runtime_t *runtime, tandem__npu_job_t *job);
void tandem__npu_lane_stop(tandem_runtime_t *runtime);
/* Waits until the NPU lane signalled |value| (TIMEOUT after |timeout_ns|). */
tandem_status_t tandem__npu_lane_wait(tandem_runtime_t *runtime, uint64_t value,
                                      uint64_t timeout_ns);
/* The NPU lane's last signalled value (0 without an NPU). */
uint64_t tandem__npu_lane_done(tandem_runtime_t *runtime);

#endif /* TANDEM_CORE_NPU_LANE_H_ */
