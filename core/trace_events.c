/* SPDX-License-Identifier: MIT */
/*
 * trace_events.c — what a retired submission writes into the running trace
 * (one event per region, at retirement, under runtime->mutex: the tracker
 * calls tandem__trace_slot_locked), and the times those events carry
 * (tandem__slot_times, also behind tandem_completion_profile). Nothing
 * here allocates: the ring was made at tandem_runtime_trace_start (trace.c)
 * and the timestamp scratch at prepare.
 */
#include <stdio.h>
#include <string.h>

#include "core/exec_int.h"
#include "core/graph_int.h"
#include "core/lost.h"
#include "core/node_kind.h"
#include "core/plan_int.h"
#include "core/runtime_int.h"
#include "core/trace_events.h"

tandem_status_t tandem__slot_times(tandem__slot_t *slot, uint64_t *out) {
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  tandem_status_t valid = TANDEM_OK;
  bool first = true;
  /* Each GPU answers for its own regions (zeros for the rest): the first
   * into |out|, the others through the exec's scratch (several GPUs). */
  for (uint32_t g = 0; g < rt->gpu_count; g++) {
    if (!(exec->gpu_mask & (1u << g))) continue;
    tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
    uint64_t *into = first ? out : exec->times_scratch;
    tandem_status_t s = gpu->vtable->program.timestamps(gpu, exec->natives[g], slot->index, into);
    if (valid == TANDEM_OK) valid = s;
    if (!first)
      for (uint32_t r = 0; r < exec->plan.region_count; r++)
        if (tandem__lane_gpu(exec->plan.regions[r].lane) == (int)g) {
          out[2 * r] = into[2 * r];
          out[2 * r + 1] = into[2 * r + 1];
        }
    first = false;
  }
  /* A readback the device answered with DEVICE_LOST: lost, as anywhere. */
  tandem__runtime_set_lost_locked(exec->runtime,
                                  valid == TANDEM_ERROR_DEVICE_LOST ? valid : TANDEM_OK);
  for (uint32_t r = 0; r < exec->plan.region_count; r++) {
    if (exec->plan.regions[r].lane != TANDEM_LANE_NPU) continue;
    out[2 * r] = slot->npu_times[2 * r];
    out[2 * r + 1] = slot->npu_times[2 * r + 1];
  }
  return valid;
}

/* One node's label: "saxpy #2", "copy #0". */
static int tandem__trace_node_label(const tandem__plan_t *plan, uint32_t id, char *buf, size_t n) {
  const tandem__node_t *node = &plan->nodes[id];
  return snprintf(buf, n, "%s #%u", tandem__node_info(node)->label(node), id);
}

/* The name, first node and bytes of region |r| (no allocation). */
static void tandem__trace_describe(const tandem__plan_t *plan, uint32_t r,
                                   tandem_trace_event_t *e) {
  const tandem__region_t *region = &plan->regions[r];
  size_t used = 0, cap = sizeof e->name;
  e->name[0] = '\0';
  e->first_node = region->count ? plan->order[region->first] : 0;
  e->bytes = 0;
  for (uint32_t k = 0; k < region->count; k++) {
    uint32_t id = plan->order[region->first + k];
    const tandem__node_t *node = &plan->nodes[id];
    if (tandem__node_info(node)->copies) {
      e->bytes += node->views[0].length;
    } else {
      for (uint32_t v = 0; v < node->view_count; v++) e->bytes += node->views[v].length;
    }
    char label[64];
    int len = tandem__trace_node_label(plan, id, label, sizeof label);
    /* Room for this label, and for ", +N more" should more follow. */
    size_t more = k + 1 < region->count ? 14 : 0;
    if (k == 0 && len > 0 && (size_t)len + more >= cap) { /* a very long name: cut it */
      snprintf(e->name, cap - more, "%s", label);
      used = strlen(e->name);
    } else if (len > 0 && used + (k ? 2 : 0) + (size_t)len + more < cap) {
      used += (size_t)snprintf(e->name + used, cap - used, "%s%s", k ? ", " : "", label);
    } else {
      snprintf(e->name + used, cap - used, ", +%u more", region->count - k);
      break;
    }
  }
}

void tandem__trace_slot_locked(tandem_runtime_t *rt, tandem__slot_t *slot) {
  tandem_trace_t *trace = rt->trace;
  tandem_exec_t *exec = slot->exec;
  const tandem__plan_t *plan = &exec->plan;
  uint64_t *ts = slot->timestamps; /* scratch made at prepare: no allocation */
  tandem__slot_times(slot, ts);
  for (uint32_t r = 0; r < plan->region_count; r++) {
    tandem_trace_event_t *e = &trace->events[trace->written++ % trace->capacity];
    *e = (tandem_trace_event_t){.lane = plan->regions[r].lane,
                                .region = r,
                                .submission = slot->submission,
                                .node_count = plan->regions[r].count,
                                .copied_bytes = exec->region_copied[r],
                                .host_submit_ns = slot->host_submit_ns,
                                .gpu_start_ns = ts[2 * r],
                                .gpu_end_ns = ts[2 * r + 1],
                                .result = slot->result};
    tandem__trace_describe(plan, r, e);
    for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++)
      e->waits_for[l] = l == (int)plan->regions[r].lane ? -1 : plan->regions[r].wait_region[l];
  }
}
