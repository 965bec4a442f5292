/* SPDX-License-Identifier: MIT */
/*
 * node_kind.h — what core may call of node_kind.c: one description per node
 * kind (fill, copy, dispatch, NPU run, Vulkan commands), the single place
 * core asks what a kind is called, where it runs, which work it is to a
 * barrier and how it touches each of its views. Adding a kind is an entry
 * in node_kind.c's table, its recorder (record.c's switch, or the NPU
 * lane's), its builder in graph.c and the switches without a default that
 * the compiler then names (docs/design.md, "Adding a node kind").
 */
#ifndef TANDEM_CORE_NODE_KIND_H_
#define TANDEM_CORE_NODE_KIND_H_

#include <stdbool.h>
#include <stdint.h>

#include "core/backend.h"
#include "core/types.h"

typedef struct tandem__node_kind_info {
  const char *name; /* in messages: "fill", "NPU run" */
  /* Recorded into a GPU lane's command buffers, binding slot views
   * (exec->node_view); false: the NPU lane runs it from its own handles. */
  bool gpu;
  /* tandem_exec_set_view may move its views (their length stays). */
  bool views_settable;
  /* Its view 0's bytes count as copied (statistics, the trace's bytes). */
  bool copies;
  /* What it is to a barrier (backend.h, TANDEM__WORK_*): as the source
   * (what must finish) and as the destination (what must wait; a node with
   * an indirect view adds TANDEM__WORK_INDIRECT). */
  uint32_t src_work, dst_work;
  /* How it touches view |i|: the access, and how many bytes of |view| (the
   * view it has, or the one tandem_exec_set_view would give it). */
  tandem_access_t (*view_access)(const tandem__node_t *node, uint32_t i);
  uint64_t (*view_bytes)(const tandem__node_t *node, uint32_t i, tandem_view_t view);
  /* Its label in traces and messages: the kind's name, or the name of what
   * it runs (a kernel's, a program's). */
  const char *(*label)(const tandem__node_t *node);
} tandem__node_kind_info_t;

/* The description of |node|'s kind. */
const tandem__node_kind_info_t *tandem__node_info(const tandem__node_t *node);
/* The barrier work of |node| as a destination: its kind's, plus the
 * indirect argument's read when it has one. */
uint32_t tandem__node_dst_work(const tandem__node_t *node);

#endif /* TANDEM_CORE_NODE_KIND_H_ */
