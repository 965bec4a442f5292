/* SPDX-License-Identifier: MIT */
/*
 * trace.c — the opt-in execution trace and its Chrome/Perfetto JSON export.
 *
 * The ring is allocated once at start and written at retirement under
 * runtime->mutex (one event per region, trace_events.c); stop retires what
 * finished and hands the ring to the caller.
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

#include "core/runtime.h"
#include "core/runtime_int.h"
#include "core/tracker.h"
#include "internal/json_string.h"

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
  bool was_open = tandem__gpu_at(runtime, 0) != NULL;
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
  if (tandem__gpu_at(runtime, 0)) tandem__tracker_poll_locked(runtime);
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
      return TANDEM_FAIL(TANDEM_ERROR_IO,
                         "cannot write trace: its path is %zu bytes long (at most "
                         "4095)",
                         strlen(path));
    snprintf(tmp_name, sizeof tmp_name, "%s.tmp.%ld", path, (long)getpid());
    tmp = tmp_name;
  }
  FILE *f = fopen(in_place ? path : tmp, "w");
  if (!f) return TANDEM_FAIL(TANDEM_ERROR_IO, "cannot write trace '%s': %s", path, strerror(errno));
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
  bool named[TANDEM_MAX_LANE_IDS] = {false}; /* GPU 0's lanes and the NPU's always */
  for (int l = 0; l < TANDEM_LANE_COUNT; l++) named[l] = true;
  for (uint32_t i = 0; i < n; i++)
    if (ev[i].lane >= 0 && ev[i].lane < TANDEM_MAX_LANE_IDS) named[ev[i].lane] = true;
  int last = 0;
  for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++)
    if (named[l]) last = l;
  for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++) {
    if (!named[l]) continue;
    char name[32];
    if (l < TANDEM_LANE_COUNT) {
      snprintf(name, sizeof name, "%s", tandem_lane_name((tandem_lane_t)l));
    } else {
      int g = tandem__lane_gpu(l);
      snprintf(name, sizeof name, "gpu%d.%s", g, tandem_lane_name(tandem__lane_local(l)));
    }
    fprintf(f,
            "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s "
            "lane\"}}%s\n",
            l + 1, name, l < last || n ? "," : "");
  }
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
    for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++) {
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
      fprintf(
          f,
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
