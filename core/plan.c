/* SPDX-License-Identifier: MIT */
/*
 * plan.c — turning a recorded graph into a plan: regions per lane, the waits
 * between them and the barriers inside them (the rules are in graph.c's
 * opening comment and docs/design.md).
 *
 * Every node must learn, per lane, the latest earlier region whose nodes
 * conflict with it (RAW, WAR, WAW over overlapping bytes) and, for its lane,
 * the latest conflicting node. Comparing every pair is O(n²) (5.5 s at 32 k
 * nodes); instead each buffer keeps an index of byte segments, and each
 * segment the latest reader and writer per lane (region and node). A node
 * queries the segments its ranges overlap, then records itself in them. Two
 * facts make "latest" enough: regions of one lane are created in record order,
 * and a lane's open region holds every node of that lane recorded since it
 * opened. Cost: O(log s + k) per access for s segments of its buffer and k of
 * them overlapped. In Debug builds the definition is checked pair by pair on
 * graphs of up to 2048 nodes: every conflicting pair must be ordered.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "core/access.h"
#include "core/buffer_int.h"
#include "core/graph.h"
#include "core/graph_int.h"
#include "core/plan.h"
#include "core/plan_int.h"
#include "core/runtime_int.h"

/* One byte range of a buffer and who touched it last, per lane (-1: nobody). */
typedef struct tandem__seg {
  uint64_t start, end;
  int32_t wr_region[TANDEM__MAX_LANES], wr_node[TANDEM__MAX_LANES];
  int32_t rd_region[TANDEM__MAX_LANES], rd_node[TANDEM__MAX_LANES];
} tandem__seg_t;

/* The segments of one buffer, sorted by start, disjoint. */
typedef struct tandem__buf_index {
  const tandem_buffer_t *buffer; /* NULL: empty hash slot */
  tandem__seg_t *segs;
  uint32_t count, cap;
} tandem__buf_index_t;

typedef struct tandem__index {
  tandem__buf_index_t *slots; /* open addressing, power-of-two capacity */
  uint32_t cap, used;
} tandem__index_t;

static uint32_t tandem__ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (uint32_t)x;
}

static void tandem__index_free(tandem__index_t *ix) {
  for (uint32_t i = 0; i < ix->cap; i++) free(ix->slots[i].segs);
  free(ix->slots);
}

/* The index of |buffer|, made on first use; NULL when out of memory. */
static tandem__buf_index_t *tandem__index_get(tandem__index_t *ix, const tandem_buffer_t *buffer) {
  if (2 * (ix->used + 1) > ix->cap) {
    uint32_t cap = ix->cap ? ix->cap * 2 : 64;
    tandem__buf_index_t *slots = calloc(cap, sizeof *slots);
    if (!slots) return NULL;
    for (uint32_t i = 0; i < ix->cap; i++) {
      if (!ix->slots[i].buffer) continue;
      uint32_t h = tandem__ptr_hash(ix->slots[i].buffer) & (cap - 1);
      while (slots[h].buffer) h = (h + 1) & (cap - 1);
      slots[h] = ix->slots[i];
    }
    free(ix->slots);
    ix->slots = slots;
    ix->cap = cap;
  }
  uint32_t h = tandem__ptr_hash(buffer) & (ix->cap - 1);
  while (ix->slots[h].buffer && ix->slots[h].buffer != buffer) h = (h + 1) & (ix->cap - 1);
  if (!ix->slots[h].buffer) {
    ix->slots[h].buffer = buffer;
    ix->used++;
  }
  return &ix->slots[h];
}

/* First segment whose end is past |offset|. */
static uint32_t tandem__seg_first(const tandem__buf_index_t *b, uint64_t offset) {
  uint32_t lo = 0, hi = b->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (b->segs[mid].end <= offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Inserts a segment [start, end) with nobody's accesses at position |at|. */
static bool tandem__seg_insert(tandem__buf_index_t *b, uint32_t at, uint64_t start, uint64_t end) {
  if (b->count == b->cap) {
    uint32_t cap = b->cap ? b->cap * 2 : 8;
    tandem__seg_t *segs = realloc(b->segs, cap * sizeof *segs);
    if (!segs) return false;
    b->segs = segs;
    b->cap = cap;
  }
  memmove(&b->segs[at + 1], &b->segs[at], (b->count - at) * sizeof *b->segs);
  tandem__seg_t *s = &b->segs[at];
  s->start = start;
  s->end = end;
  for (int l = 0; l < TANDEM__MAX_LANES; l++)
    s->wr_region[l] = s->wr_node[l] = s->rd_region[l] = s->rd_node[l] = -1;
  b->count++;
  return true;
}

/* Splits the segment containing |x| (strictly inside it) in two. */
static bool tandem__seg_split(tandem__buf_index_t *b, uint64_t x) {
  uint32_t k = tandem__seg_first(b, x);
  if (k == b->count || b->segs[k].start >= x) return true; /* a boundary already */
  tandem__seg_t copy = b->segs[k];
  if (!tandem__seg_insert(b, k + 1, x, copy.end)) return false;
  tandem__seg_t *right = &b->segs[k + 1];
  memcpy(right->wr_region, copy.wr_region, sizeof copy.wr_region);
  memcpy(right->wr_node, copy.wr_node, sizeof copy.wr_node);
  memcpy(right->rd_region, copy.rd_region, sizeof copy.rd_region);
  memcpy(right->rd_node, copy.rd_node, sizeof copy.rd_node);
  b->segs[k].end = x;
  return true;
}

/* Latest conflicting region and node per lane (below |lanes|: no node of the
 * plan is on a lane past it) over |a|'s bytes, into need_region / need_node
 * (kept when already larger). */
static void tandem__index_query(const tandem__buf_index_t *b, const tandem__access_t *a, int lanes,
                                int32_t need_region[TANDEM__MAX_LANES],
                                int32_t need_node[TANDEM__MAX_LANES]) {
  uint64_t end = a->offset + a->length;
  bool writes = a->access & TANDEM_ACCESS_WRITE;
  for (uint32_t k = tandem__seg_first(b, a->offset); k < b->count && b->segs[k].start < end; k++) {
    const tandem__seg_t *s = &b->segs[k];
    for (int l = 0; l < lanes; l++) {
      /* Every access conflicts with earlier writes; a write also with reads. */
      if (s->wr_region[l] > need_region[l]) need_region[l] = s->wr_region[l];
      if (s->wr_node[l] > need_node[l]) need_node[l] = s->wr_node[l];
      if (!writes) continue;
      if (s->rd_region[l] > need_region[l]) need_region[l] = s->rd_region[l];
      if (s->rd_node[l] > need_node[l]) need_node[l] = s->rd_node[l];
    }
  }
}

/* Records node |node| of region |region| on |lane| as accessing |a|. */
static bool tandem__index_record(tandem__buf_index_t *b, const tandem__access_t *a,
                                 tandem_lane_t lane, int32_t region, int32_t node) {
  uint64_t start = a->offset, end = a->offset + a->length;
  if (!tandem__seg_split(b, start) || !tandem__seg_split(b, end)) return false;
  /* Walk [start, end), filling gaps with new segments. */
  uint64_t at = start;
  uint32_t k = tandem__seg_first(b, start);
  while (at < end) {
    if (k == b->count || b->segs[k].start > at) {
      uint64_t gap_end = k == b->count || b->segs[k].start > end ? end : b->segs[k].start;
      if (!tandem__seg_insert(b, k, at, gap_end)) return false;
    }
    tandem__seg_t *s = &b->segs[k];
    assert(s->start == at && s->end <= end);
    if (a->access & TANDEM_ACCESS_WRITE) s->wr_region[lane] = region, s->wr_node[lane] = node;
    if (a->access & TANDEM_ACCESS_READ) s->rd_region[lane] = region, s->rd_node[lane] = node;
    at = s->end;
    k++;
  }
  return true;
}

/*--------------------------------------------------------------------------
 * Handoffs: coherence between GPU regions and the NPU over SHARED bytes
 * (core/backend.h, tandem__handoff_t; docs/interop.md, "Coherence with the
 * NPU"). Found with the same segments, before a node records itself in
 * them, only in a plan with an NPU node (GPU-only plans do no work here):
 *  - an NPU access releases, at the end of each GPU lane's latest conflicting
 *    region on those bytes, what that lane has not handed over yet: its
 *    latest write newer than every NPU access, or (when the NPU writes) its
 *    latest read newer than every NPU write;
 *  - a GPU access acquires, at the start of its own region, bytes the NPU
 *    wrote since the lane last touched them, or (when it writes) bytes the
 *    NPU read since the lane last wrote them.
 * So each crossing is handed over once per lane, where the semaphore wait
 * between the two regions already is. Bytes both sides only read get none.
 *--------------------------------------------------------------------------*/

typedef struct tandem__handoff_list {
  tandem__handoff_t *items;
  uint32_t count, cap;
} tandem__handoff_list_t;

static bool tandem__handoff_push(tandem__handoff_list_t *list, uint32_t region, bool release,
                                 const tandem_buffer_t *buffer, uint64_t start, uint64_t end) {
  if (list->count == list->cap) {
    uint32_t cap = list->cap ? list->cap * 2 : 16;
    tandem__handoff_t *items = realloc(list->items, cap * sizeof *items);
    if (!items) return false;
    list->items = items;
    list->cap = cap;
  }
  bool external = buffer->sharing == TANDEM_SHARING_DMABUF_TO_GPU ||
                  buffer->sharing == TANDEM_SHARING_DMABUF_TO_NPU;
  list->items[list->count++] = (tandem__handoff_t){.region = region,
                                                   .release = release,
                                                   .external = external,
                                                   .buffer = buffer->native,
                                                   .offset = start,
                                                   .length = end - start};
  return true;
}

/* The handoffs of node |node| (region |region|, lane |lane|) accessing |a|
 * on a SHARED buffer, from the segments as they stand before it records. */
static bool tandem__handoffs_note(const tandem__buf_index_t *b, const tandem__access_t *a,
                                  tandem_lane_t lane, int lanes, uint32_t region,
                                  tandem__handoff_list_t *list) {
  const int npu = TANDEM_LANE_NPU;
  uint64_t end = a->offset + a->length;
  bool writes = a->access & TANDEM_ACCESS_WRITE;
  for (uint32_t k = tandem__seg_first(b, a->offset); k < b->count && b->segs[k].start < end; k++) {
    const tandem__seg_t *s = &b->segs[k];
    uint64_t lo = s->start > a->offset ? s->start : a->offset, hi = s->end < end ? s->end : end;
    int32_t npu_any = s->wr_node[npu] > s->rd_node[npu] ? s->wr_node[npu] : s->rd_node[npu];
    if (lane == TANDEM_LANE_NPU) {
      for (int l = 0; l < lanes; l++) {
        if (tandem__lane_gpu(l) < 0) continue;
        int32_t node = -1, at = -1;
        if (s->wr_node[l] >= 0 && s->wr_node[l] > npu_any)
          node = s->wr_node[l], at = s->wr_region[l];
        if (writes && s->rd_node[l] > s->wr_node[npu] && s->rd_node[l] > node)
          node = s->rd_node[l], at = s->rd_region[l];
        if (node >= 0 && !tandem__handoff_push(list, (uint32_t)at, true, b->buffer, lo, hi))
          return false;
      }
    } else {
      int32_t mine = s->wr_node[lane] > s->rd_node[lane] ? s->wr_node[lane] : s->rd_node[lane];
      bool after_write = s->wr_node[npu] >= 0 && s->wr_node[npu] > mine;
      bool after_read = writes && s->rd_node[npu] >= 0 && s->rd_node[npu] > s->wr_node[lane];
      if ((after_write || after_read) &&
          !tandem__handoff_push(list, region, false, b->buffer, lo, hi))
        return false;
    }
  }
  return true;
}

static int tandem__handoff_order(const void *x, const void *y) {
  const tandem__handoff_t *a = x, *b = y;
  if (a->region != b->region) return a->region < b->region ? -1 : 1;
  if (a->release != b->release) return a->release ? 1 : -1;
  if (a->buffer != b->buffer) return (uintptr_t)a->buffer < (uintptr_t)b->buffer ? -1 : 1;
  if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
  return 0;
}

/* Sorts |list| (region, acquires first, buffer, offset) and merges the
 * ranges of one region, direction and buffer that touch or overlap. */
static void tandem__handoffs_merge(tandem__handoff_list_t *list) {
  if (list->count < 2) return;
  qsort(list->items, list->count, sizeof *list->items, tandem__handoff_order);
  uint32_t out = 0;
  for (uint32_t i = 1; i < list->count; i++) {
    tandem__handoff_t *last = &list->items[out];
    const tandem__handoff_t *h = &list->items[i];
    if (h->region == last->region && h->release == last->release && h->buffer == last->buffer &&
        h->offset <= last->offset + last->length) {
      uint64_t end = h->offset + h->length;
      if (end > last->offset + last->length) last->length = end - last->offset;
    } else {
      list->items[++out] = *h;
    }
  }
  list->count = out + 1;
}

/*--------------------------------------------------------------------------*/

void tandem__plan_free(tandem__plan_t *plan) {
  for (uint32_t i = 0; i < plan->node_count; i++) tandem__node_release(&plan->nodes[i]);
  free(plan->nodes);
  free(plan->views);
  free(plan->order);
  free(plan->regions);
  free(plan->node_region);
  free(plan->node_pos);
  free(plan->barrier_prefix);
  free(plan->handoffs);
  memset(plan, 0, sizeof *plan);
}

#ifndef NDEBUG
static bool tandem__nodes_conflict(const tandem__node_t *x, const tandem__node_t *y) {
  tandem__access_t a[TANDEM__MAX_NODE_ACCESSES], b[TANDEM__MAX_NODE_ACCESSES];
  uint32_t na = tandem__node_accesses(x, a), nb = tandem__node_accesses(y, b);
  for (uint32_t i = 0; i < na; i++)
    for (uint32_t j = 0; j < nb; j++)
      if (a[i].buffer == b[j].buffer && tandem__accesses_conflict(a[i].access, b[j].access) &&
          tandem__ranges_overlap(a[i].offset, a[i].length, b[j].offset, b[j].length))
        return true;
  return false;
}

/* The definition, pair by pair: the plan must be what it describes. Debug
 * builds only, graphs up to 2048 nodes. */
static bool tandem__plan_matches_definition(const tandem__plan_t *plan) {
  uint32_t n = plan->node_count;
  for (uint32_t i = 0; i < n; i++) {
    const tandem__node_t *node = &plan->nodes[i];
    uint32_t r = plan->node_region[i];
    const tandem__region_t *reg = &plan->regions[r];
    if (reg->lane != node->lane) return false;
    int32_t need[TANDEM__MAX_LANES];
    for (int l = 0; l < TANDEM__MAX_LANES; l++) need[l] = -1;
    bool barrier_needed = false;
    uint32_t last_barrier = plan->regions[r].first; /* order position of the last barrier */
    for (uint32_t p = reg->first; p < plan->node_pos[i]; p++)
      if (plan->nodes[plan->order[p]].barrier_before) last_barrier = p;
    for (uint32_t j = 0; j < i; j++) {
      if (!tandem__nodes_conflict(node, &plan->nodes[j])) continue;
      uint32_t rj = plan->node_region[j];
      tandem_lane_t l = plan->regions[rj].lane;
      if ((int32_t)rj > need[l]) need[l] = (int32_t)rj;
      if (rj == r && plan->node_pos[j] >= last_barrier) barrier_needed = true;
    }
    /* Every conflicting earlier node is ordered: same region and behind a
     * barrier, or its region is waited for (directly or through its lane). */
    for (int l = 0; l < TANDEM__MAX_LANES; l++) {
      if (need[l] < 0 || need[l] == (int32_t)r) continue;
      if (reg->wait_region[l] < need[l]) return false;
    }
    if (barrier_needed && !node->barrier_before) return false;
  }
  return true;
}
#endif

/* Builds |plan| from |graph| (see graph.c's opening comment for the rules). */
tandem_status_t tandem__plan_build(const tandem_graph_t *graph, tandem__plan_t *plan) {
  memset(plan, 0, sizeof *plan);
  uint32_t n = graph->node_count;
  if (n == 0)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "the graph has no nodes; add a fill, copy or dispatch before preparing");
  plan->nodes = malloc(n * sizeof *plan->nodes);
  plan->views = malloc((graph->view_total ? graph->view_total : 1) * sizeof *plan->views);
  plan->order = malloc(n * sizeof *plan->order);
  plan->regions = malloc(n * sizeof *plan->regions);
  plan->node_region = malloc(n * sizeof *plan->node_region);
  plan->node_pos = malloc(n * sizeof *plan->node_pos);
  plan->barrier_prefix = malloc(n * sizeof *plan->barrier_prefix);
  uint32_t *barrier_from = malloc(n * sizeof *barrier_from); /* per region: node index */
  bool *depended = calloc(n, sizeof *depended);
  tandem__index_t ix = {0};
  tandem__handoff_list_t handoffs = {0};
  bool ok = plan->nodes && plan->views && plan->order && plan->regions && plan->node_region &&
            plan->node_pos && plan->barrier_prefix && barrier_from && depended;
  if (!ok) goto oom;
  memcpy(plan->nodes, graph->nodes, n * sizeof *plan->nodes);
  /* The plan's own copy of the views (set_view rewrites them). */
  uint64_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    tandem__node_t *node = &plan->nodes[i];
    if (node->view_count)
      memcpy(&plan->views[at], node->views, node->view_count * sizeof *plan->views);
    node->views = &plan->views[at];
    at += node->view_count;
  }
  assert(at == graph->view_total);
  for (uint32_t i = 0; i < n; i++) tandem__node_retain(&plan->nodes[i]);
  plan->node_count = n;
  tandem__region_t *regions = plan->regions;
  uint32_t *region_of = plan->node_region;

  /* One past the highest lane id a node is on: TANDEM_LANE_COUNT unless a
   * node runs on a second GPU, so a one-GPU plan loops over four lanes. */
  int lanes = TANDEM_LANE_COUNT;
  bool npu_nodes = false; /* handoffs are looked for only with an NPU node */
  for (uint32_t i = 0; i < n; i++) {
    if ((int)plan->nodes[i].lane >= lanes) lanes = (int)plan->nodes[i].lane + 1;
    npu_nodes |= plan->nodes[i].kind == TANDEM__NODE_NPU_RUN;
  }
  int32_t open[TANDEM__MAX_LANES];
  for (int l = 0; l < TANDEM__MAX_LANES; l++) open[l] = -1;
  uint32_t region_count = 0;
  for (uint32_t i = 0; i < n; i++) {
    tandem__node_t *node = &plan->nodes[i];
    node->barrier_before = false;
    tandem__access_t acc[TANDEM__MAX_NODE_ACCESSES];
    tandem__buf_index_t *bix[TANDEM__MAX_NODE_ACCESSES];
    uint32_t m = tandem__node_accesses(node, acc);
    int32_t need[TANDEM__MAX_LANES];      /* latest dep region per lane */
    int32_t need_node[TANDEM__MAX_LANES]; /* latest dep node per lane */
    for (int l = 0; l < lanes; l++) need[l] = need_node[l] = -1;
    for (uint32_t a = 0; a < m; a++) {
      bix[a] = tandem__index_get(&ix, acc[a].buffer);
      if (!bix[a]) goto oom;
      tandem__index_query(bix[a], &acc[a], lanes, need, need_node);
    }
    int32_t o = open[node->lane];
    bool join = o >= 0 && !depended[o];
    for (int l = 0; join && l < lanes; l++)
      if (need[l] >= 0 && need[l] != o && need[l] > regions[o].wait_region[l]) join = false;
    uint32_t r;
    if (join) {
      r = (uint32_t)o;
      /* Barrier when it conflicts with a node since the region's last
       * barrier: every node of this lane since then is in r (r is open). */
      if (need_node[node->lane] >= (int32_t)barrier_from[r]) {
        node->barrier_before = true;
        barrier_from[r] = i;
      }
    } else {
      r = region_count++;
      regions[r].lane = node->lane;
      regions[r].count = 0;
      for (int l = 0; l < TANDEM__MAX_LANES; l++)
        regions[r].wait_region[l] = l < lanes ? need[l] : -1;
      barrier_from[r] = i;
      open[node->lane] = (int32_t)r;
    }
    for (int l = 0; l < lanes; l++)
      if (need[l] >= 0 && need[l] != (int32_t)r) depended[need[l]] = true;
    region_of[i] = r;
    regions[r].count++;
    for (uint32_t a = 0; npu_nodes && a < m; a++)
      if (acc[a].buffer->placement == TANDEM_PLACEMENT_SHARED &&
          !tandem__handoffs_note(bix[a], &acc[a], node->lane, lanes, r, &handoffs))
        goto oom;
    for (uint32_t a = 0; a < m; a++)
      if (!tandem__index_record(bix[a], &acc[a], node->lane, (int32_t)r, (int32_t)i)) goto oom;
  }
  /* Lay the nodes out region by region (counting sort), record order inside. */
  uint32_t pos = 0;
  for (uint32_t r = 0; r < region_count; r++) {
    regions[r].first = pos;
    pos += regions[r].count;
    regions[r].count = 0;
  }
  for (uint32_t i = 0; i < n; i++) {
    tandem__region_t *reg = &regions[region_of[i]];
    plan->order[reg->first + reg->count++] = i;
  }
  plan->region_count = region_count;
  /* What tandem__plan_orders needs to answer later questions. */
  uint32_t barriers = 0;
  for (uint32_t p = 0; p < n; p++) {
    plan->node_pos[plan->order[p]] = p;
    barriers += plan->nodes[plan->order[p]].barrier_before;
    plan->barrier_prefix[p] = barriers;
  }
  tandem__handoffs_merge(&handoffs);
  plan->handoffs = handoffs.items;
  plan->handoff_count = handoffs.count;
  free(barrier_from);
  free(depended);
  tandem__index_free(&ix);
#ifndef NDEBUG
  assert(n > 2048 || tandem__plan_matches_definition(plan));
#endif
  return TANDEM_OK;

oom:
  free(handoffs.items);
  free(barrier_from);
  free(depended);
  tandem__index_free(&ix);
  if (plan->node_count) {
    tandem__plan_free(plan);
  } else {
    free(plan->nodes), free(plan->views), free(plan->order), free(plan->regions);
    free(plan->node_region), free(plan->node_pos), free(plan->barrier_prefix);
    memset(plan, 0, sizeof *plan);
  }
  return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "planning a graph of %u nodes", n);
}

bool tandem__plan_orders(const tandem__plan_t *plan, uint32_t a, uint32_t b) {
  uint32_t ra = plan->node_region[a], rb = plan->node_region[b];
  if (ra == rb) {
    /* Record order is kept inside a region; a barrier at any position in
     * (pos a, pos b] orders everything before it against everything after. */
    uint32_t pa = plan->node_pos[a], pb = plan->node_pos[b];
    return pa < pb && plan->barrier_prefix[pb] > plan->barrier_prefix[pa];
  }
  if (rb < ra) return false; /* waits only name earlier regions */
  /* Depth-first over wait edges from rb; every edge goes to a smaller index,
   * so regions below ra are pruned. The stack and the visit count are
   * bounded: past them the answer is "not ordered", which refuses an update
   * rather than running it unordered. */
  uint32_t stack[64];
  uint32_t top = 0;
  stack[top++] = rb;
  uint32_t visits = 0;
  while (top) {
    uint32_t r = stack[--top];
    if (r == ra) return true;
    if (++visits > 4 * plan->region_count + 4) break;
    for (int l = 0; l < TANDEM__MAX_LANES; l++) {
      int32_t w = plan->regions[r].wait_region[l];
      if (w < 0 || (uint32_t)w < ra) continue;
      if (top == sizeof stack / sizeof stack[0]) return false;
      stack[top++] = (uint32_t)w;
    }
  }
  return false;
}
