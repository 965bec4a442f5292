/* SPDX-License-Identifier: MIT */
/*
 * plan_int.h — a plan's layout (plan.c): the regions prepare computed and
 * the order it records them in. record.c walks it; backends never see it.
 */
#ifndef TANDEM_CORE_PLAN_INT_H_
#define TANDEM_CORE_PLAN_INT_H_

#include "core/graph_int.h"

typedef struct tandem__plan tandem__plan_t;

/* A prepared region: consecutive nodes of one lane (in order[]), the regions
 * of this graph it must wait for (latest per lane, -1 none). */
typedef struct tandem__region {
  tandem_lane_t lane;
  uint32_t first, count; /* into plan->order */
  int32_t wait_region[TANDEM__MAX_LANES];
} tandem__region_t;

/* What prepare computed; core/record.c walks it to record (backends never see
 * it). In an executable, the dispatch parameters of |nodes| (views, push
 * constants, workgroups) are the current ones, changed by tandem_exec_set_*
 * under runtime->mutex; recording reads them under the same lock. */
struct tandem__plan {
  tandem__node_t *nodes; /* copies, retaining buffers and kernels */
  uint32_t node_count;
  tandem_view_t *views; /* every node's views, nodes[i].views points in here */
  uint32_t *order;      /* node indices grouped by region */
  tandem__region_t *regions;
  uint32_t region_count;
  uint32_t *node_region;    /* region of each node */
  uint32_t *node_pos;       /* position of each node in order[] */
  uint32_t *barrier_prefix; /* per order[] position: barriers at or before it */
  /* The fewest commands a recorded piece of a GPU region holds (core/record.c,
   * tandem__region_piece_end); set once before the program is made, so the
   * pieces never change for the program's life. */
  uint32_t piece_min;
  /* GPU regions' handoffs of SHARED bytes to and from the NPU (core/backend.h,
   * tandem__handoff_t), sorted by region, acquires first, ranges merged; NULL
   * and 0 when no GPU node and NPU node conflict over SHARED bytes. Buffers
   * are natives of buffers an NPU node of the plan retains (its views never
   * change), so they outlive the plan. */
  tandem__handoff_t *handoffs;
  uint32_t handoff_count;
};

#endif /* TANDEM_CORE_PLAN_INT_H_ */
