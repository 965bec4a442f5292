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
#include "core/access.h"
#include "core/buffer_int.h"
#include "core/graph_int.h"
#include "core/kernel_int.h"
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
  switch (node->kind) {
    case TANDEM__NODE_FILL:
      out[0] = (tandem__access_t){node->views[0].buffer, node->views[0].offset,
                                  node->views[0].length, TANDEM_ACCESS_WRITE};
      return 1;
    case TANDEM__NODE_COPY: /* a cross-GPU copy's staging is tracked as one memory */
      out[0] = (tandem__access_t){tandem__tracked(node->views[0].buffer), node->views[0].offset,
                                  node->views[0].length, TANDEM_ACCESS_READ};
      out[1] = (tandem__access_t){tandem__tracked(node->views[1].buffer), node->views[1].offset,
                                  node->views[1].length, TANDEM_ACCESS_WRITE};
      return 2;
    case TANDEM__NODE_DISPATCH:
      for (uint32_t i = 0; i < node->view_count; i++)
        out[i] =
            (tandem__access_t){node->views[i].buffer, node->views[i].offset,
                               tandem__binding_bytes(&node->kernel->bindings[i], node->views[i]),
                               node->kernel->bindings[i].access};
      if (node->indirect.buffer) {
        out[node->view_count] = (tandem__access_t){node->indirect.buffer, node->indirect.offset, 12,
                                                   TANDEM_ACCESS_READ};
        return node->view_count + 1;
      }
      return node->view_count;
    case TANDEM__NODE_NPU_RUN:
      for (uint32_t i = 0; i < node->view_count; i++)
        out[i] =
            (tandem__access_t){node->views[i].buffer, node->views[i].offset,
                               tandem__binding_bytes(&node->program->bindings[i], node->views[i]),
                               node->program->bindings[i].access};
      return node->view_count;
    case TANDEM__NODE_VULKAN_COMMANDS: /* the declared views, whole, as declared */
      for (uint32_t i = 0; i < node->view_count; i++)
        out[i] = (tandem__access_t){node->views[i].buffer, node->views[i].offset,
                                    node->views[i].length, tandem__node_decl_access(node, i)};
      return node->view_count;
  }
  return 0;
}
