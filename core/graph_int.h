/* SPDX-License-Identifier: MIT */
/*
 * graph_int.h — a node and a graph's layout (graph.c): what a node does, on
 * which lane, touching which byte ranges (tandem__access_t). Plans copy
 * nodes (plan_int.h); accesses are derived in access.c.
 */
#ifndef TANDEM_CORE_GRAPH_INT_H_
#define TANDEM_CORE_GRAPH_INT_H_

#include <assert.h>

#include "core/types.h"
#include "tandem/tandem_vulkan.h"

typedef enum tandem__node_kind {
  TANDEM__NODE_FILL,
  TANDEM__NODE_COPY,
  TANDEM__NODE_DISPATCH,
  TANDEM__NODE_NPU_RUN,
  TANDEM__NODE_VULKAN_COMMANDS, /* the user's own commands (handoff.c) */
  TANDEM__NODE_KIND_COUNT       /* a new kind goes above, with its node_kind.c entry */
} tandem__node_kind_t;

/* A byte range one node touches, and how. */
typedef struct tandem__access {
  tandem_buffer_t *buffer;
  uint64_t offset, length;
  tandem_access_t access;
} tandem__access_t;

typedef struct tandem__node {
  tandem__node_kind_t kind;
  tandem_lane_t lane;            /* resolved at record time */
  tandem_kernel_t *kernel;       /* DISPATCH: retained */
  tandem_npu_program_t *program; /* NPU_RUN: retained */
  uint32_t scalar_count;         /* NPU_RUN */
  uint32_t scalars[TANDEM_MAX_NPU_SCALARS];
  uint32_t view_count; /* FILL 1 (dst), COPY 2 (src, dst), DISPATCH n,
                                   VULKAN_COMMANDS its declared accesses */
  /* view_count views, buffers retained. They live outside the node so a node
   * stays small (prepare copies nodes, 100 000 of them at scale): in the
   * graph's chunked view storage (graph.c; addresses stable while the graph
   * lives) or in the plan's one array (plan.c). A node built on the stack
   * points at a local array until tandem__graph_append copies it in. */
  tandem_view_t *views;
  uint32_t pattern; /* FILL */
  uint32_t push_bytes;
  uint8_t push[TANDEM_MAX_PUSH_CONSTANT_BYTES];
  uint32_t workgroups[3]; /* DISPATCH, direct: counts (in an exec, [mutex]) */
  tandem_view_t indirect; /* DISPATCH: counts read on the GPU when .buffer set
                                   (retained) */
  bool barrier_before;    /* set by prepare: barrier ahead of it in its region */
  /* VULKAN_COMMANDS: the user's callback and its pointer, and the declared
   * access of each view, 2 bits (a tandem_access_t) per view from bit 0. */
  tandem_vulkan_record_fn record;
  void *record_user;
  uint64_t access_bits;
} tandem__node_t;

/* The bytes binding |b| covers when |view| is bound to it: the contract's
 * fixed bytes, or the whole view for a view-sized binding (TANDEM_BYTES_VIEW).
 * Checks, tracking and the descriptor's range all use this one number. */
static inline uint64_t tandem__binding_bytes(const tandem_binding_contract_t *b,
                                             tandem_view_t view) {
  return b->bytes == TANDEM_BYTES_VIEW ? view.length : b->bytes;
}

/* handoff.c: the declared access of view |i| of a VULKAN_COMMANDS node. */
static inline tandem_access_t tandem__node_decl_access(const tandem__node_t *node, uint32_t i) {
  assert(node->kind == TANDEM__NODE_VULKAN_COMMANDS && i < node->view_count);
  tandem_access_t a = (tandem_access_t)((node->access_bits >> (2 * i)) & 3u);
  assert(a != 0); /* every declared view has READ, WRITE or both (checked at add) */
  return a;
}

/* A node touches at most its bindings plus an indirect argument. */
#define TANDEM__MAX_NODE_ACCESSES (TANDEM_MAX_BINDINGS + 1)

struct tandem_graph {
  atomic_uint_fast64_t refs;
  tandem_runtime_t *runtime;
  tandem__node_t *nodes;
  uint32_t node_count, node_capacity;
  /* The nodes' views: chunks of TANDEM__VIEW_CHUNK, never moved. */
  tandem_view_t **view_chunks;
  uint32_t view_chunk_count, view_chunk_used; /* used: entries of the last chunk */
  uint64_t view_total;                        /* sum of the nodes' view_count */
};

#endif /* TANDEM_CORE_GRAPH_INT_H_ */
