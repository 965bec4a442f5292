/* SPDX-License-Identifier: MIT */
/*
 * trace.c — the opt-in execution trace and its Chrome/Perfetto JSON export.
 *
 * The ring is allocated once at start and written at retirement under
 * runtime->mutex (one event per region); stop hands the ring to the caller.
 * Nothing is allocated while tracing, so a trace does not disturb the
 * allocation-free replay path. GPU times come from the backend's calibrated
 * timestamps; without calibration they are 0 and the JSON uses host times.
 * Each event names its nodes (kernel / program names and record-order ids)
 * and the regions of its submission it waited for; the JSON draws those
 * waits as Perfetto flow events (arrows between slices).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "internal/json_string.h"

uint64_t tandem__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

tandem_status_t tandem_runtime_trace_start(tandem_runtime_t *runtime, uint32_t capacity) {
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  if (capacity == 0 || capacity > (1u << 24))
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE, "trace capacity %u is outside 1..%u", capacity,
                       1u << 24);
  /* A trace without GPU times is a row of empty slices at the submit time
   * with arrows going backwards: a GPU not open yet opens with timestamps
   * on; one already open without them cannot get them (hostQueryReset and
   * the query pools are decided at open and prepare), so say how. */
  pthread_mutex_lock(&runtime->open_mutex);
  bool was_open = atomic_load(&runtime->gpu) != NULL;
  if (!was_open) runtime->options.gpu_timestamps = true;
  pthread_mutex_unlock(&runtime->open_mutex);
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(runtime, &gpu));
  if (!gpu->timestamps) {
    if (was_open && !runtime->options.gpu_timestamps)
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "tracing needs GPU timestamps, and this runtime's GPU was opened "
                         "without them: create the runtime with gpu_timestamps = true (or "
                         "TANDEM_GPU_TIMESTAMPS=1), or start the trace before the first call "
                         "that opens the GPU");
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "tracing needs GPU timestamps on the host clock, and device '%s' has "
                       "none (no timestamp counter on a lane's queue family, no "
                       "hostQueryReset, or no VK_EXT_calibrated_timestamps)",
                       gpu->info.name);
  }
  tandem_trace_t *trace = calloc(1, sizeof *trace);
  tandem_trace_event_t *events = calloc(capacity, sizeof *events);
  if (!trace || !events) {
    free(trace);
    free(events);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a trace of %u events", capacity);
  }
  trace->events = events;
  trace->capacity = capacity;
  pthread_mutex_lock(&runtime->mutex);
  bool busy = runtime->trace != NULL;
  if (!busy) runtime->trace = trace;
  pthread_mutex_unlock(&runtime->mutex);
  if (busy) {
    free(events);
    free(trace);
    return TANDEM_FAIL(TANDEM_ERROR_BUSY, "a trace is already running on this runtime");
  }
  return TANDEM_OK;
}

/* Reverses events [from, to). */
static void tandem__events_reverse(tandem_trace_event_t *e, uint32_t from, uint32_t to) {
  while (from + 1 < to) {
    tandem_trace_event_t t = e[from];
    e[from++] = e[--to];
    e[to] = t;
  }
}

tandem_status_t tandem_runtime_trace_stop(tandem_runtime_t *runtime, tandem_trace_t **out_trace) {
  if (!out_trace) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_trace is NULL");
  *out_trace = NULL;
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  pthread_mutex_lock(&runtime->mutex);
  if (atomic_load(&runtime->gpu)) tandem__tracker_poll_locked(runtime);
  tandem_trace_t *trace = runtime->trace;
  runtime->trace = NULL;
  pthread_mutex_unlock(&runtime->mutex);
  if (!trace) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "no trace is running");
  /* Rotate the ring in place so the events read oldest first: three
   * reversals, no allocation (a failed one used to leave them unordered). */
  if (trace->written > trace->capacity) {
    uint32_t start = (uint32_t)(trace->written % trace->capacity);
    tandem__events_reverse(trace->events, 0, start);
    tandem__events_reverse(trace->events, start, trace->capacity);
    tandem__events_reverse(trace->events, 0, trace->capacity);
  }
  *out_trace = trace;
  return TANDEM_OK;
}

tandem_status_t tandem__slot_times(tandem__slot_t *slot, uint64_t *out) {
  tandem_exec_t *exec = slot->exec;
  tandem__gpu_t *gpu = atomic_load(&exec->runtime->gpu);
  tandem_status_t valid = gpu->vtable->program.timestamps(gpu, exec->native, slot->index, out);
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
  const char *what = "node";
  switch (node->kind) {
    case TANDEM__NODE_FILL: what = "fill"; break;
    case TANDEM__NODE_COPY: what = "copy"; break;
    case TANDEM__NODE_DISPATCH: what = tandem_kernel_name(node->kernel); break;
    case TANDEM__NODE_NPU_RUN: what = tandem_npu_program_name(node->program); break;
    case TANDEM__NODE_VULKAN_COMMANDS: what = "vulkan commands"; break;
  }
  return snprintf(buf, n, "%s #%u", what, id);
}

/* The name, first node and bytes of region |r| (no allocation). */
static void tandem__trace_describe(const tandem__plan_t *plan, uint32_t r, tandem_trace_event_t *e) {
  const tandem__region_t *region = &plan->regions[r];
  size_t used = 0, cap = sizeof e->name;
  e->name[0] = '\0';
  e->first_node = region->count ? plan->order[region->first] : 0;
  e->bytes = 0;
  for (uint32_t k = 0; k < region->count; k++) {
    uint32_t id = plan->order[region->first + k];
    const tandem__node_t *node = &plan->nodes[id];
    if (node->kind == TANDEM__NODE_COPY) {
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
    for (int l = 0; l < TANDEM_LANE_COUNT; l++)
      e->waits_for[l] = l == (int)plan->regions[r].lane ? -1 : plan->regions[r].wait_region[l];
  }
}

const tandem_trace_event_t *tandem_trace_events(const tandem_trace_t *trace, uint32_t *out_count) {
  if (out_count) *out_count = 0;
  if (!trace) return NULL;
  uint64_t n = trace->written < trace->capacity ? trace->written : trace->capacity;
  if (out_count) *out_count = (uint32_t)n;
  return trace->events;
}

uint64_t tandem_trace_dropped(const tandem_trace_t *trace) {
  return trace && trace->written > trace->capacity ? trace->written - trace->capacity : 0;
}

void tandem_trace_release(tandem_trace_t *trace) {
  if (!trace) return;
  free(trace->events);
  free(trace);
}

/* An event's slice: GPU times when it has them, else its host submit time. */
static bool tandem__trace_span(const tandem_trace_event_t *e, uint64_t *start, uint64_t *dur) {
  bool gpu = e->gpu_start_ns && e->gpu_end_ns >= e->gpu_start_ns;
  *start = gpu ? e->gpu_start_ns : e->host_submit_ns;
  *dur = gpu ? e->gpu_end_ns - e->gpu_start_ns : 0;
  return gpu;
}

tandem_status_t tandem_trace_write_json(const tandem_trace_t *trace, const char *path) {
  if (!trace || !path) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "trace or path is NULL");
  /* A regular file (or a new one) is written under a temporary name in its
   * folder and renamed over |path| at the end, so a process killed while
   * writing leaves the old file or none, never a truncated one. Anything
   * else (/dev/stdout, a FIFO) is written in place. */
  struct stat st;
  bool in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
  char tmp_name[4096 + 32];
  const char *tmp = NULL;
  if (!in_place) {
    if (strlen(path) >= 4096)
      return TANDEM_FAIL(TANDEM_ERROR_IO, "cannot write trace: its path is %zu bytes long (at most "
                         "4095)", strlen(path));
    snprintf(tmp_name, sizeof tmp_name, "%s.tmp.%ld", path, (long)getpid());
    tmp = tmp_name;
  }
  FILE *f = fopen(in_place ? path : tmp, "w");
  if (!f)
    return TANDEM_FAIL(TANDEM_ERROR_IO, "cannot write trace '%s': %s", path, strerror(errno));
  uint32_t n;
  const tandem_trace_event_t *ev = tandem_trace_events(trace, &n);
  uint64_t origin = UINT64_MAX;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t t = ev[i].gpu_start_ns ? ev[i].gpu_start_ns : ev[i].host_submit_ns;
    if (ev[i].host_submit_ns < origin) origin = ev[i].host_submit_ns;
    if (t < origin) origin = t;
  }
  fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped\":%llu},\"traceEvents\":[\n",
          (unsigned long long)tandem_trace_dropped(trace));
  /* The lane names; the separator after the last one only when events follow
   * (an empty trace is valid JSON too). */
  for (int l = 0; l < TANDEM_LANE_COUNT; l++)
    fprintf(f,
            "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s "
            "lane\"}}%s\n",
            l + 1, tandem_lane_name((tandem_lane_t)l), l + 1 < TANDEM_LANE_COUNT || n ? "," : "");
  uint64_t flow = 0;
  for (uint32_t i = 0; i < n; i++) {
    const tandem_trace_event_t *e = &ev[i];
    uint64_t start, dur;
    bool gpu = tandem__trace_span(e, &start, &dur);
    fprintf(f, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":", (int)e->lane + 1);
    json_write_string(f, e->name);
    fprintf(f,
            ",\"ts\":%.3f,\"dur\":%.3f,"
            "\"args\":{\"submission\":%llu,\"region\":%u,\"nodes\":%u,\"first_node\":%u,"
            "\"bytes\":%llu,\"copied_bytes\":%llu,\"host_submit_us\":%.3f,\"result\":\"%s\","
            "\"gpu_clock\":%s}}",
            (double)(start - origin) / 1000.0, (double)dur / 1000.0,
            (unsigned long long)e->submission, e->region, e->node_count, e->first_node,
            (unsigned long long)e->bytes, (unsigned long long)e->copied_bytes,
            (double)(e->host_submit_ns - origin) / 1000.0, tandem_status_name(e->result),
            gpu ? "true" : "false");
    /* An arrow from each region it waited for: a flow starting in that slice
     * and ending at the start of this one (regions of one submission are
     * consecutive events). */
    for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
      if (e->waits_for[l] < 0) continue;
      const tandem_trace_event_t *src = NULL;
      for (uint32_t j = i; j-- > 0 && ev[j].submission == e->submission;)
        if (ev[j].region == (uint32_t)e->waits_for[l]) src = &ev[j];
      for (uint32_t j = i + 1; !src && j < n && ev[j].submission == e->submission; j++)
        if (ev[j].region == (uint32_t)e->waits_for[l]) src = &ev[j];
      if (!src) continue; /* dropped from the ring */
      uint64_t src_start, src_dur;
      tandem__trace_span(src, &src_start, &src_dur);
      flow++;
      fprintf(f,
              ",\n{\"ph\":\"s\",\"id\":%llu,\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"name\":\"waits for\","
              "\"cat\":\"dependency\"},\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"pid\":1,\"tid\":%d,"
              "\"ts\":%.3f,\"name\":\"waits for\",\"cat\":\"dependency\"}",
              (unsigned long long)flow, (int)src->lane + 1, (double)(src_start - origin) / 1000.0,
              (unsigned long long)flow, (int)e->lane + 1, (double)(start - origin) / 1000.0);
    }
    fputs(i + 1 < n ? ",\n" : "\n", f);
  }
  fprintf(f, "]}\n");
  bool failed = ferror(f);
  if (fclose(f) != 0) failed = true;
  int e = 0;
  if (!failed && tmp && rename(tmp, path) != 0) failed = true, e = errno;
  if (failed && tmp) unlink(tmp);
  if (failed)
    return TANDEM_FAIL(TANDEM_ERROR_IO, "error writing trace '%s'%s%s", path, e ? ": " : "",
                       e ? strerror(e) : "");
  return TANDEM_OK;
}
