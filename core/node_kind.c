/* SPDX-License-Identifier: MIT */
/*
 * node_kind.c — one description per node kind: the table everything in core
 * reads instead of branching on a node's kind (names, GPU or NPU, settable
 * views, copied bytes, barrier work, accesses, labels). What differs in
 * behaviour stays in `switch`es without a default, so the compiler names
 * each one a new kind forgets: the recorder (record.c), the builder and GPU
 * checks (graph.c), tandem_exec_set_view's view checks (exec_params.c).
 * Pure data and pure functions of a node: no lock, no allocation, no call
 * out of this file.
 */
#include "core/node_kind.h"

#include <assert.h>

#include "core/graph_int.h"
#include "core/kernel_int.h"
#include "core/npu_int.h"

/* Fill: view 0 is the destination, every byte written. */
static tandem_access_t fill_access(const tandem__node_t *node, uint32_t i) {
  (void)node;
  (void)i;
  return TANDEM_ACCESS_WRITE;
}

/* Copy: view 0 is read, view 1 written; lengths are equal. */
static tandem_access_t copy_access(const tandem__node_t *node, uint32_t i) {
  (void)node;
  return i == 0 ? TANDEM_ACCESS_READ : TANDEM_ACCESS_WRITE;
}

/* Fills, copies and Vulkan commands touch their views whole. */
static uint64_t whole_view(const tandem__node_t *node, uint32_t i, tandem_view_t view) {
  (void)node;
  (void)i;
  return view.length;
}

/* A dispatch touches what its kernel's contract says of each binding. */
static tandem_access_t dispatch_access(const tandem__node_t *node, uint32_t i) {
  return node->kernel->bindings[i].access;
}

static uint64_t dispatch_bytes(const tandem__node_t *node, uint32_t i, tandem_view_t view) {
  return tandem__binding_bytes(&node->kernel->bindings[i], view);
}

/* An NPU run, as its program's contract says. */
static tandem_access_t npu_access(const tandem__node_t *node, uint32_t i) {
  return node->program->bindings[i].access;
}

static uint64_t npu_bytes(const tandem__node_t *node, uint32_t i, tandem_view_t view) {
  return tandem__binding_bytes(&node->program->bindings[i], view);
}

/* Vulkan commands: each view as its node declared it (handoff.c). */
static tandem_access_t user_access(const tandem__node_t *node, uint32_t i) {
  return tandem__node_decl_access(node, i);
}

static const char *fill_label(const tandem__node_t *node) {
  (void)node;
  return "fill";
}
static const char *copy_label(const tandem__node_t *node) {
  (void)node;
  return "copy";
}
static const char *dispatch_label(const tandem__node_t *node) { return node->kernel->name; }
static const char *npu_label(const tandem__node_t *node) { return node->program->name; }
static const char *user_label(const tandem__node_t *node) {
  (void)node;
  return "vulkan commands";
}

/* Sized by its entries: a kind added to tandem__node_kind_t without one
 * here fails the assertion below it. */
static const tandem__node_kind_info_t tandem__node_kinds[] = {
    [TANDEM__NODE_FILL] = {.name = "fill",
                           .gpu = true,
                           .views_settable = true,
                           .src_work = TANDEM__WORK_TRANSFER,
                           .dst_work = TANDEM__WORK_TRANSFER,
                           .view_access = fill_access,
                           .view_bytes = whole_view,
                           .label = fill_label},
    [TANDEM__NODE_COPY] = {.name = "copy",
                           .gpu = true,
                           .views_settable = true,
                           .copies = true,
                           .src_work = TANDEM__WORK_TRANSFER,
                           .dst_work = TANDEM__WORK_TRANSFER,
                           .view_access = copy_access,
                           .view_bytes = whole_view,
                           .label = copy_label},
    [TANDEM__NODE_DISPATCH] = {.name = "dispatch",
                               .gpu = true,
                               .views_settable = true,
                               .src_work = TANDEM__WORK_COMPUTE,
                               .dst_work = TANDEM__WORK_COMPUTE,
                               .view_access = dispatch_access,
                               .view_bytes = dispatch_bytes,
                               .label = dispatch_label},
    [TANDEM__NODE_NPU_RUN] = {.name = "NPU run",
                              .gpu = false,
                              .views_settable = false, /* its run handles bind the buffers */
                              .src_work = 0,           /* never in a GPU region */
                              .dst_work = 0,
                              .view_access = npu_access,
                              .view_bytes = npu_bytes,
                              .label = npu_label},
    [TANDEM__NODE_VULKAN_COMMANDS] = {.name = "Vulkan commands",
                                      .gpu = true,
                                      .views_settable = false, /* the callback holds them */
                                      .src_work = TANDEM__WORK_USER,
                                      .dst_work = TANDEM__WORK_USER,
                                      .view_access = user_access,
                                      .view_bytes = whole_view,
                                      .label = user_label},
};
_Static_assert(sizeof tandem__node_kinds / sizeof tandem__node_kinds[0] == TANDEM__NODE_KIND_COUNT,
               "one entry per node kind");

const tandem__node_kind_info_t *tandem__node_info(const tandem__node_t *node) {
  assert((unsigned)node->kind < TANDEM__NODE_KIND_COUNT && tandem__node_kinds[node->kind].name);
  return &tandem__node_kinds[node->kind];
}

uint32_t tandem__node_dst_work(const tandem__node_t *node) {
  return tandem__node_info(node)->dst_work |
         (node->indirect.buffer ? (uint32_t)TANDEM__WORK_INDIRECT : 0u);
}
