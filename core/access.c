/* SPDX-License-Identifier: MIT */
/*
 * access.c — accesses: the byte ranges a node touches, and when two conflict.
 *
 * One definition for everyone who orders work by what it touches: the
 * planner (plan.c), the tracker and host maps (tracker.c, map.c, submit.c),
 * the checks of tandem_exec_set_* (exec_params.c) and the NPU lane, which
 * syncs exactly these ranges (npu_lane.c). Pure functions of a node and its
 * contract: no lock, no allocation, no call out of this file.
 */
#include <assert.h>

#include "core/access.h"
#include "core/buffer_int.h"
#include "core/graph_int.h"
#include "core/kernel_int.h"
#include "core/node_kind.h"
#include "core/npu_int.h"

bool tandem__ranges_overlap(uint64_t a_off, uint64_t a_len, uint64_t b_off, uint64_t b_len) {
  return a_off < b_off + b_len && b_off < a_off + a_len;
}

bool tandem__accesses_conflict(tandem_access_t a, tandem_access_t b) {
  return (a & TANDEM_ACCESS_WRITE) || (b & TANDEM_ACCESS_WRITE);
}

/* The buffer whose records stand for |b|'s bytes (buffer_int.h, tracked_as). */
static tandem_buffer_t *tandem__tracked(tandem_buffer_t *b) {
  return b->tracked_as ? b->tracked_as : b;
}

uint32_t tandem__node_accesses(const tandem__node_t *node, tandem__access_t *out) {
  const tandem__node_kind_info_t *kind = tandem__node_info(node);
  assert(node->view_count <= TANDEM_MAX_BINDINGS);
  /* A cross-GPU copy's staging is tracked as one memory (tracked_as); no
   * other node can name staging memory (tandem_exec_set_view refuses it). */
  for (uint32_t i = 0; i < node->view_count; i++)
    out[i] =
        (tandem__access_t){tandem__tracked(node->views[i].buffer), node->views[i].offset,
                           kind->view_bytes(node, i, node->views[i]), kind->view_access(node, i)};
  if (node->indirect.buffer) { /* a dispatch's counts, read on the GPU */
    out[node->view_count] =
        (tandem__access_t){node->indirect.buffer, node->indirect.offset, 12, TANDEM_ACCESS_READ};
    return node->view_count + 1;
  }
  return node->view_count;
}
