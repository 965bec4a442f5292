/* SPDX-License-Identifier: MIT */
/*
 * bench_copies.c — `tandem-bench`'s copies survey: how fast raw
 * vkCmdCopyBuffer moves bytes between the host and the GPU in each memory
 * type the device offers, on each of tandem's queues, and what tandem's own
 * copy nodes get beside it.
 *
 * For every HOST_VISIBLE memory type (index, property flags, heap index and
 * size printed) it allocates two host buffers of that type (one the upload
 * source, one the download target) and times, against two GPU_LOCAL buffers:
 *   - up / down on each distinct VkQueue of tandem's lanes;
 *   - both directions at once, up on one queue and down on another;
 *   - one direction split into one chunk per queue, over every set of two or
 *     more queues (one copy engine per queue may not fill the link);
 *   - one copy of four regions on the lane's own queue;
 *   - both directions at once, each split over all queues.
 * Each run is timed on the host (first submit until the wait returns) and,
 * where the queues have timestamps, on the GPU (first copy's start to last
 * copy's end, one device clock). All rows of a memory type, and tandem's
 * upload, download and both-at-once graphs on its HOST_VISIBLE type, run in
 * rotation: median of many alternated runs. It also times the host's memcpy
 * into and out of each mapping, which is what decides where a read-back
 * buffer may live: reading the BAR window runs at about 20 MB/s on the H200.
 *
 * The raw side runs on tandem's own VkDevice and queues (bench_raw.c) and
 * holds tandem_runtime_queue_lock around every submission. Results are
 * verified by reading samples of the destination back.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_copies.h"
#include "internal/json_string.h"
#include "tandem/tandem_vulkan.h"

enum { UP = 0, DOWN = 1 };

#define COPY_MAX_PARTS 8
#define SAMPLES 4096u /* words checked per verification */

static uint32_t pattern_word(uint64_t i) { return (uint32_t)(i * 2654435761u) ^ 0x5A5A5A5Au; }

typedef struct copy_part {
  int dir;
  int queue;
  uint64_t offset, bytes;
  uint32_t regions;
} copy_part_t;

typedef struct copy_config {
  copy_row_t *row;
  uint32_t part_count;
  copy_part_t parts[COPY_MAX_PARTS];
  VkCommandBuffer *cbs; /* [run * part_count + part] */
  VkQueryPool queries;  /* 2 per part per run, or VK_NULL_HANDLE */
  double *wall, *gpu;   /* per timed run */
} copy_config_t;

typedef struct copies {
  const bench_options_t *o;
  tandem_runtime_t *rt;
  raw_t *raw;
  bench_copies_report_t *rep;
  uint64_t bytes;
  uint32_t runs, warmup;
  uint32_t *pattern; /* bytes/4 words */
  bool coherent;     /* the memory type being measured is HOST_COHERENT */
  raw_buffer_t dev_up, dev_down, host_up, host_down;
  /* tandem side */
  tandem_buffer_t *t_host_up, *t_dev_up, *t_dev_down, *t_host_down;
  tandem_exec_t *t_exec[3];
  double *t_wall[3];
} copies_t;

static const char *lane_label(int lane) {
  return lane == TANDEM_LANE_UPLOAD    ? "upload"
         : lane == TANDEM_LANE_COMPUTE ? "compute"
                                       : "download";
}

/* "DEVICE_LOCAL|HOST_VISIBLE|..." for Vulkan memory property flags. */
static void flags_text(uint32_t f, char *out, size_t n) {
  static const struct {
    uint32_t bit;
    const char *name;
  } names[] = {{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL"},
               {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE"},
               {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT"},
               {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED"},
               {VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "LAZILY_ALLOCATED"},
               {VK_MEMORY_PROPERTY_PROTECTED_BIT, "PROTECTED"},
               {VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD, "DEVICE_COHERENT_AMD"},
               {VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD, "DEVICE_UNCACHED_AMD"},
               {VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV, "RDMA_CAPABLE_NV"}};
  size_t at = 0;
  out[0] = 0;
  uint32_t known = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    known |= names[i].bit;
    if (f & names[i].bit)
      at += (size_t)snprintf(out + at, at < n ? n - at : 0, "%s%s", at ? "|" : "", names[i].name);
  }
  if (f & ~known)
    at += (size_t)snprintf(out + at, at < n ? n - at : 0, "%s0x%x", at ? "|" : "", f & ~known);
  if (!f) snprintf(out, n, "(none)");
}

static void size_text(uint64_t bytes, char *out, size_t n) {
  if (bytes >= (1ull << 30)) snprintf(out, n, "%.1f GiB", (double)bytes / (double)(1ull << 30));
  else snprintf(out, n, "%.1f MiB", (double)bytes / (double)(1ull << 20));
}

/*--------------------------------------------------------------------------
 * Queues and configurations
 *--------------------------------------------------------------------------*/

static void find_queues(copies_t *c) {
  raw_t *raw = c->raw;
  bench_copies_report_t *r = c->rep;
  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(raw->physical, &qn, NULL);
  VkQueueFamilyProperties *qp = calloc(qn ? qn : 1, sizeof *qp);
  if (!qp) bench_die("out of memory");
  vkGetPhysicalDeviceQueueFamilyProperties(raw->physical, &qn, qp);
  /* Lanes in the order upload, download, compute: the transfer queues first. */
  const int order[RAW_LANES] = {TANDEM_LANE_UPLOAD, TANDEM_LANE_DOWNLOAD, TANDEM_LANE_COMPUTE};
  for (int k = 0; k < RAW_LANES; k++) {
    int lane = order[k];
    uint32_t q = 0;
    while (q < r->queue_count && raw->queue[r->queues[q].lane] != raw->queue[lane]) q++;
    if (q == r->queue_count) {
      copy_queue_t *cq = &r->queues[r->queue_count++];
      cq->lane = lane;
      cq->family = raw->family[lane];
      cq->index = raw->index[lane];
      cq->family_flags = cq->family < qn ? qp[cq->family].queueFlags : 0;
      cq->timestamp_bits = cq->family < qn ? qp[cq->family].timestampValidBits : 0;
      snprintf(cq->name, sizeof cq->name, "%s", lane_label(lane));
    } else {
      size_t len = strlen(r->queues[q].name);
      snprintf(r->queues[q].name + len, sizeof r->queues[q].name - len, "+%s", lane_label(lane));
    }
    r->lane_queue[lane] = (int)q;
  }
  if (r->queue_count == 1) snprintf(r->queues[0].name, sizeof r->queues[0].name, "all-lanes");
  free(qp);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(raw->physical, &props);
  r->timestamp_period_ns = props.limits.timestampPeriod;
}

static void add_part(copy_config_t *cfg, int dir, int queue, uint64_t offset, uint64_t bytes,
                     uint32_t regions) {
  if (cfg->part_count == COPY_MAX_PARTS) bench_die("internal: too many parts");
  cfg->parts[cfg->part_count++] = (copy_part_t){dir, queue, offset, bytes, regions};
  if (dir == UP) cfg->row->up_parts++;
  else cfg->row->down_parts++;
  cfg->row->bytes += bytes;
}

/* |dir| split into one chunk per queue in |mask| (256-byte multiples, the
 * last chunk takes the rest). */
static void add_split(copies_t *c, copy_config_t *cfg, int dir, uint32_t mask) {
  uint32_t k = (uint32_t)__builtin_popcount(mask), i = 0;
  uint64_t chunk = c->bytes / k / 256 * 256;
  for (uint32_t q = 0; q < c->rep->queue_count; q++) {
    if (!(mask & (1u << q))) continue;
    uint64_t off = (uint64_t)i * chunk;
    add_part(cfg, dir, (int)q, off, i + 1 == k ? c->bytes - off : chunk, 1);
    i++;
  }
}

static void queue_set_name(const bench_copies_report_t *r, uint32_t mask, char *out, size_t n) {
  size_t at = 0;
  out[0] = 0;
  for (uint32_t q = 0; q < r->queue_count; q++)
    if (mask & (1u << q))
      at +=
          (size_t)snprintf(out + at, at < n ? n - at : 0, "%s%s", at ? "," : "", r->queues[q].name);
}

/* The rows of one memory type, in |cfg| (COPY_MAX_ROWS). Returns the count. */
static uint32_t make_configs(copies_t *c, copy_type_report_t *t, copy_config_t *cfg) {
  const bench_copies_report_t *r = c->rep;
  uint32_t n = 0, qn = r->queue_count;
  int qu = r->lane_queue[TANDEM_LANE_UPLOAD], qd = r->lane_queue[TANDEM_LANE_DOWNLOAD];
  char set[96];
#define NEW_ROW(...)                                                           \
  (cfg[n] = (copy_config_t){.row = &t->rows[n]}, t->rows[n] = (copy_row_t){0}, \
   t->rows[n].tandem = COPY_TANDEM_NONE,                                       \
   snprintf(t->rows[n].name, sizeof t->rows[n].name, __VA_ARGS__), &cfg[n++])
  for (uint32_t q = 0; q < qn; q++) {
    copy_config_t *x = NEW_ROW("up   @%s", r->queues[q].name);
    add_part(x, UP, (int)q, 0, c->bytes, 1);
    if ((int)q == qu) x->row->tandem = COPY_TANDEM_UP;
    x = NEW_ROW("down @%s", r->queues[q].name);
    add_part(x, DOWN, (int)q, 0, c->bytes, 1);
    if ((int)q == qd) x->row->tandem = COPY_TANDEM_DOWN;
  }
  /* Both at once: up on a, down on b; the same queue only for tandem's own
   * pair (lanes that share one) or when there is just one queue. */
  for (uint32_t a = 0; a < qn; a++)
    for (uint32_t b = 0; b < qn; b++) {
      if (a == b && qn > 1 && !((int)a == qu && (int)b == qd)) continue;
      copy_config_t *x = NEW_ROW("both up@%s down@%s", r->queues[a].name, r->queues[b].name);
      add_part(x, UP, (int)a, 0, c->bytes, 1);
      add_part(x, DOWN, (int)b, 0, c->bytes, 1);
      if ((int)a == qu && (int)b == qd) x->row->tandem = COPY_TANDEM_BOTH;
    }
  /* One direction split over two or more queues. */
  for (int dir = UP; dir <= DOWN; dir++)
    for (uint32_t mask = 1; mask < (1u << qn); mask++) {
      if (__builtin_popcount(mask) < 2) continue;
      queue_set_name(r, mask, set, sizeof set);
      copy_config_t *x = NEW_ROW("%s split over %s", dir == UP ? "up  " : "down", set);
      add_split(c, x, dir, mask);
    }
  /* Four regions in one copy on the lane's own queue. */
  copy_config_t *x = NEW_ROW("up   4 regions @%s", r->queues[qu].name);
  add_part(x, UP, qu, 0, c->bytes, 4);
  x = NEW_ROW("down 4 regions @%s", r->queues[qd].name);
  add_part(x, DOWN, qd, 0, c->bytes, 4);
  /* Both at once, each split over every queue. */
  if (qn > 1) {
    queue_set_name(r, (1u << qn) - 1, set, sizeof set);
    x = NEW_ROW("both split over %s", set);
    add_split(c, x, UP, (1u << qn) - 1);
    add_split(c, x, DOWN, (1u << qn) - 1);
  }
#undef NEW_ROW
  if (n > COPY_MAX_ROWS) bench_die("internal: %u copy rows", n);
  return n;
}

/*--------------------------------------------------------------------------
 * Recording and running
 *--------------------------------------------------------------------------*/

static bool config_has_timestamps(const copies_t *c, const copy_config_t *cfg) {
  for (uint32_t p = 0; p < cfg->part_count; p++)
    if (!c->rep->queues[cfg->parts[p].queue].timestamp_bits) return false;
  return c->rep->timestamp_period_ns > 0;
}

static void record_config(copies_t *c, copy_config_t *cfg) {
  raw_t *raw = c->raw;
  uint32_t total = c->warmup + c->runs, parts = cfg->part_count;
  cfg->cbs = calloc((size_t)total * parts, sizeof *cfg->cbs);
  cfg->wall = calloc(c->runs, sizeof *cfg->wall);
  cfg->gpu = calloc(c->runs, sizeof *cfg->gpu);
  if (!cfg->cbs || !cfg->wall || !cfg->gpu) bench_die("out of memory");
  if (config_has_timestamps(c, cfg)) {
    VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = 2 * total * parts};
    VKCHECK(raw->vk.vkCreateQueryPool(raw->device, &qci, NULL, &cfg->queries));
    cfg->row->has_gpu = true;
  }
  for (uint32_t run = 0; run < total; run++)
    for (uint32_t p = 0; p < parts; p++) {
      const copy_part_t *part = &cfg->parts[p];
      VkCommandBuffer cb = raw_begin(raw, c->rep->queues[part->queue].lane);
      uint32_t q = 2 * (run * parts + p);
      if (cfg->queries)
        raw->vk.vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, cfg->queries, q);
      VkBufferCopy regions[4];
      uint64_t step = part->bytes / part->regions / 256 * 256;
      for (uint32_t k = 0; k < part->regions; k++) {
        uint64_t off = part->offset + k * step;
        uint64_t len = k + 1 == part->regions ? part->offset + part->bytes - off : step;
        regions[k] = (VkBufferCopy){off, off, len};
      }
      if (part->dir == UP) {
        raw->vk.vkCmdCopyBuffer(cb, c->host_up.buffer, c->dev_up.buffer, part->regions, regions);
      } else {
        raw->vk.vkCmdCopyBuffer(cb, c->dev_down.buffer, c->host_down.buffer, part->regions,
                                regions);
        raw_barrier(raw, cb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                    VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
      }
      if (cfg->queries)
        raw->vk.vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, cfg->queries, q + 1);
      VKCHECK(raw->vk.vkEndCommandBuffer(cb));
      cfg->cbs[run * parts + p] = cb;
    }
}

static void free_config(copies_t *c, copy_config_t *cfg) {
  raw_t *raw = c->raw;
  uint32_t total = c->warmup + c->runs;
  for (uint32_t i = 0; i < total * cfg->part_count; i++)
    raw->vk.vkFreeCommandBuffers(
        raw->device, raw->pool[c->rep->queues[cfg->parts[i % cfg->part_count].queue].lane], 1,
        &cfg->cbs[i]);
  if (cfg->queries) raw->vk.vkDestroyQueryPool(raw->device, cfg->queries, NULL);
  free(cfg->cbs);
  free(cfg->wall);
  free(cfg->gpu);
}

/* Resets every configuration's queries with one command buffer on the
 * compute lane (transfer-only queues cannot reset queries, and the device
 * may not have host query reset), waited for before the timed runs. */
static void reset_queries(copies_t *c, copy_config_t *cfg, uint32_t n) {
  raw_t *raw = c->raw;
  VkCommandBuffer cb = raw_begin(raw, TANDEM_LANE_COMPUTE);
  uint32_t total = c->warmup + c->runs;
  for (uint32_t i = 0; i < n; i++)
    if (cfg[i].queries)
      raw->vk.vkCmdResetQueryPool(cb, cfg[i].queries, 0, 2 * total * cfg[i].part_count);
  VKCHECK(raw->vk.vkEndCommandBuffer(cb));
  tandem_runtime_queue_lock(c->rt, TANDEM_LANE_COMPUTE);
  raw_run(raw, TANDEM_LANE_COMPUTE, &cb, 1);
  tandem_runtime_queue_unlock(c->rt, TANDEM_LANE_COMPUTE);
  raw->vk.vkFreeCommandBuffers(raw->device, raw->pool[TANDEM_LANE_COMPUTE], 1, &cb);
}

/* One run: one submission per queue holding that queue's parts, each waiting
 * for everything the raw side submitted before (already finished: it orders
 * this run after the last for the validation layer, and costs no time), then
 * a wait for all of them. Returns host microseconds. */
static double run_config(copies_t *c, const copy_config_t *cfg, uint32_t run) {
  raw_t *raw = c->raw;
  const bench_copies_report_t *r = c->rep;
  uint64_t prev[RAW_LANES];
  memcpy(prev, raw->value, sizeof prev);
  VkSemaphoreSubmitInfo waits[RAW_LANES];
  for (int l = 0; l < RAW_LANES; l++)
    waits[l] = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                       .semaphore = raw->timeline[l],
                                       .value = prev[l],
                                       .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkCommandBufferSubmitInfo cbi[COPY_MAX_PARTS];
  VkSemaphore sems[COPY_MAX_QUEUES];
  uint64_t vals[COPY_MAX_QUEUES];
  uint32_t used = 0;
  double t0 = bench_now_us();
  for (uint32_t q = 0; q < r->queue_count; q++) {
    uint32_t k = 0;
    for (uint32_t p = 0; p < cfg->part_count; p++)
      if (cfg->parts[p].queue == (int)q)
        cbi[k++] =
            (VkCommandBufferSubmitInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                        .commandBuffer = cfg->cbs[run * cfg->part_count + p]};
    if (!k) continue;
    int lane = r->queues[q].lane;
    VkSemaphoreSubmitInfo signal = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                    .semaphore = raw->timeline[lane],
                                    .value = prev[lane] + 1,
                                    .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
    VkSubmitInfo2 si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                        .waitSemaphoreInfoCount = RAW_LANES,
                        .pWaitSemaphoreInfos = waits,
                        .commandBufferInfoCount = k,
                        .pCommandBufferInfos = cbi,
                        .signalSemaphoreInfoCount = 1,
                        .pSignalSemaphoreInfos = &signal};
    tandem_runtime_queue_lock(c->rt, lane);
    VkResult res = raw->vk.vkQueueSubmit2(raw->queue[lane], 1, &si, VK_NULL_HANDLE);
    tandem_runtime_queue_unlock(c->rt, lane);
    VKCHECK(res);
    raw->value[lane] = prev[lane] + 1;
    sems[used] = raw->timeline[lane];
    vals[used++] = raw->value[lane];
  }
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = used,
                            .pSemaphores = sems,
                            .pValues = vals};
  VKCHECK(raw->vk.vkWaitSemaphores(raw->device, &wi, UINT64_MAX));
  return bench_now_us() - t0;
}

/* GPU span of each timed run: latest end minus earliest start over the parts. */
static void read_gpu_times(copies_t *c, copy_config_t *cfg) {
  if (!cfg->queries) return;
  raw_t *raw = c->raw;
  uint32_t total = c->warmup + c->runs, parts = cfg->part_count, n = 2 * total * parts;
  uint64_t *ts = calloc(n, sizeof *ts);
  if (!ts) bench_die("out of memory");
  VKCHECK(raw->vk.vkGetQueryPoolResults(raw->device, cfg->queries, 0, n, n * sizeof *ts, ts,
                                        sizeof *ts,
                                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  for (uint32_t run = c->warmup; run < total; run++) {
    uint64_t first = UINT64_MAX, last = 0;
    for (uint32_t p = 0; p < parts; p++) {
      uint32_t bits = c->rep->queues[cfg->parts[p].queue].timestamp_bits;
      uint64_t mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
      uint64_t s = ts[2 * (run * parts + p)] & mask, e = ts[2 * (run * parts + p) + 1] & mask;
      if (s < first) first = s;
      if (e > last) last = e;
    }
    cfg->gpu[run - c->warmup] =
        last > first ? (double)(last - first) * c->rep->timestamp_period_ns / 1e3 : 0;
  }
  free(ts);
}

static double run_tandem(tandem_exec_t *e) {
  tandem_completion_t *done = NULL;
  double t0 = bench_now_us();
  TCHECK(tandem_exec_submit(e, &done));
  tandem_status_t s = tandem_completion_wait(done);
  double t = bench_now_us() - t0;
  tandem_completion_release(done);
  TCHECK(s);
  return t;
}

/*--------------------------------------------------------------------------
 * Verification and host access
 *--------------------------------------------------------------------------*/

static uint64_t sample_index(uint64_t words, uint32_t k) {
  return k == SAMPLES - 1 ? words - 1 : (uint64_t)k * (words / SAMPLES);
}

static void check_samples(const char *what, const volatile uint32_t *words, uint64_t count) {
  for (uint32_t k = 0; k < SAMPLES; k++) {
    uint64_t i = sample_index(count, k);
    if (words[i] != pattern_word(i))
      bench_die("copies: %s: word %llu is 0x%08x, expected 0x%08x", what, (unsigned long long)i,
                words[i], pattern_word(i));
  }
}

static void clear_samples(volatile uint32_t *words, uint64_t count) {
  for (uint32_t k = 0; k < SAMPLES; k++) words[sample_index(count, k)] = 0;
}

/* Host writes to a mapping of a type that is not HOST_COHERENT need a flush
 * before the GPU reads them, and GPU writes an invalidate before the host
 * reads them; coherent memory needs neither. */
static void host_flush(copies_t *c, const raw_buffer_t *b) {
  if (c->coherent) return;
  VkMappedMemoryRange range = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
                               .memory = b->memory,
                               .size = VK_WHOLE_SIZE};
  VKCHECK(c->raw->vk.vkFlushMappedMemoryRanges(c->raw->device, 1, &range));
}

static void host_invalidate(copies_t *c, const raw_buffer_t *b) {
  if (c->coherent) return;
  VkMappedMemoryRange range = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
                               .memory = b->memory,
                               .size = VK_WHOLE_SIZE};
  VKCHECK(c->raw->vk.vkInvalidateMappedMemoryRanges(c->raw->device, 1, &range));
}

/* A whole-buffer copy src -> dst on |lane|, with the host barrier, waited for. */
static void raw_copy_once(copies_t *c, int lane, VkBuffer src, VkBuffer dst) {
  raw_t *raw = c->raw;
  VkCommandBuffer cb = raw_begin(raw, lane);
  VkBufferCopy region = {0, 0, c->bytes};
  raw->vk.vkCmdCopyBuffer(cb, src, dst, 1, &region);
  raw_barrier(raw, cb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_2_HOST_BIT | VK_PIPELINE_STAGE_2_COPY_BIT,
              VK_ACCESS_2_HOST_READ_BIT | VK_ACCESS_2_TRANSFER_READ_BIT);
  VKCHECK(raw->vk.vkEndCommandBuffer(cb));
  tandem_runtime_queue_lock(c->rt, lane);
  raw_run(raw, lane, &cb, 1);
  tandem_runtime_queue_unlock(c->rt, lane);
  raw->vk.vkFreeCommandBuffers(raw->device, raw->pool[lane], 1, &cb);
}

/* Host memcpy into the upload buffer's mapping (the pattern, so its contents
 * stay) and out of the download buffer's, each for at most |budget_s|. */
static void host_access(copies_t *c, copy_type_report_t *t, double budget_s) {
  uint64_t block = c->bytes < (1u << 20) ? c->bytes : (1u << 20);
  void *dst = malloc(block);
  if (!dst) bench_die("out of memory");
  memset(dst, 1, block);
  /* Touch every page of both mappings first (rewriting the pattern's own
   * words), so neither figure includes first-touch page faults. */
  uint32_t *up = c->host_up.mapped;
  const volatile uint32_t *down = c->host_down.mapped;
  uint32_t sink = 0;
  for (uint64_t i = 0; i < c->bytes / 4; i += 1024) {
    up[i] = c->pattern[i];
    sink += down[i];
  }
  ((uint8_t *)dst)[0] = (uint8_t)sink;
  host_invalidate(c, &c->host_down);
  double t0 = bench_now_us(), spent = 0;
  uint64_t written = 0;
  do {
    memcpy(c->host_up.mapped, c->pattern, c->bytes);
    written += c->bytes;
    spent = (bench_now_us() - t0) / 1e6;
  } while (spent < budget_s / 4 && written < 8 * c->bytes);
  t->host_write_gbps = (double)written / spent / 1e9;
  host_flush(c, &c->host_up);
  t0 = bench_now_us();
  uint64_t read = 0;
  const uint8_t *src = c->host_down.mapped;
  do {
    memcpy(dst, src + read % c->bytes, block);
    read += block;
    spent = (bench_now_us() - t0) / 1e6;
  } while (spent < budget_s && read < c->bytes);
  t->host_read_bytes = read;
  t->host_read_s = spent;
  t->host_read_gbps = (double)read / spent / 1e9;
  free(dst);
}

/*--------------------------------------------------------------------------
 * One memory type
 *--------------------------------------------------------------------------*/

static void measure_type(copies_t *c, copy_type_report_t *t, bool with_tandem) {
  raw_t *raw = c->raw;
  const char *why = NULL;
  if (!raw_buffer_create_in(raw, c->bytes, t->index, &c->host_up, &why) ||
      !raw_buffer_create_in(raw, c->bytes, t->index, &c->host_down, &why)) {
    raw_buffer_destroy(raw, &c->host_up);
    t->skipped = why;
    return;
  }
  c->coherent = t->properties & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  memcpy(c->host_up.mapped, c->pattern, c->bytes);
  host_flush(c, &c->host_up);
  /* The download source holds the pattern too. */
  raw_copy_once(c, TANDEM_LANE_UPLOAD, c->host_up.buffer, c->dev_down.buffer);

  copy_config_t cfg[COPY_MAX_ROWS];
  uint32_t n = make_configs(c, t, cfg);
  t->row_count = n;
  for (uint32_t i = 0; i < n; i++) record_config(c, &cfg[i]);
  reset_queries(c, cfg, n);

  char label[48];
  snprintf(label, sizeof label, "copies, memory type %u", t->index);
  bench_progress("  %-22s ...", label);
  double started = bench_now_us();
  uint32_t slots = n + (with_tandem ? 3 : 0), total = c->warmup + c->runs;
  for (uint32_t run = 0; run < total; run++)
    for (uint32_t k = 0; k < slots; k++) {
      uint32_t i = (k + run) % slots; /* rotate who goes first */
      double us;
      if (i < n) {
        us = run_config(c, &cfg[i], run);
        if (run >= c->warmup) cfg[i].wall[run - c->warmup] = us;
      } else {
        us = run_tandem(c->t_exec[i - n]);
        if (run >= c->warmup) c->t_wall[i - n][run - c->warmup] = us;
      }
    }
  bench_progress(" done in %.1f s\n", (bench_now_us() - started) / 1e6);
  for (uint32_t i = 0; i < n; i++) {
    read_gpu_times(c, &cfg[i]);
    cfg[i].row->wall = bench_summarize(cfg[i].wall, c->runs);
    if (cfg[i].queries) cfg[i].row->gpu = bench_summarize(cfg[i].gpu, c->runs);
    free_config(c, &cfg[i]);
  }
  if (with_tandem) {
    for (int k = 0; k < 3; k++) c->rep->tandem[k] = bench_summarize(c->t_wall[k], c->runs);
    c->rep->tandem_measured = true;
  }

  /* Downloads left the pattern in host_down; then the device side of the
   * uploads goes back through the same buffer. */
  uint64_t words = c->bytes / 4;
  host_invalidate(c, &c->host_down);
  check_samples("raw download", c->host_down.mapped, words);
  clear_samples(c->host_down.mapped, words);
  host_flush(c, &c->host_down);
  raw_copy_once(c, TANDEM_LANE_DOWNLOAD, c->dev_up.buffer, c->host_down.buffer);
  host_invalidate(c, &c->host_down);
  check_samples("raw upload", c->host_down.mapped, words);
  host_access(c, t, c->o->quick ? 0.05 : 0.3);
  raw_buffer_destroy(raw, &c->host_up);
  raw_buffer_destroy(raw, &c->host_down);
}

/*--------------------------------------------------------------------------
 * tandem side
 *--------------------------------------------------------------------------*/

static tandem_exec_t *tandem_copy_graph(copies_t *c, bool up, bool down) {
  tandem_graph_t *g;
  TCHECK(tandem_graph_create(c->rt, &g));
  if (up)
    TCHECK(tandem_graph_add_copy(g, tandem_buffer_whole(c->t_host_up),
                                 tandem_buffer_whole(c->t_dev_up), TANDEM_LANE_AUTO));
  if (down)
    TCHECK(tandem_graph_add_copy(g, tandem_buffer_whole(c->t_dev_down),
                                 tandem_buffer_whole(c->t_host_down), TANDEM_LANE_AUTO));
  tandem_exec_t *e;
  TCHECK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  return e;
}

static void tandem_open(copies_t *c) {
  tandem_runtime_t *rt = c->rt;
  TCHECK(tandem_buffer_create(rt, c->bytes, TANDEM_PLACEMENT_HOST_VISIBLE, &c->t_host_up));
  TCHECK(tandem_buffer_create(rt, c->bytes, TANDEM_PLACEMENT_GPU_LOCAL, &c->t_dev_up));
  TCHECK(tandem_buffer_create(rt, c->bytes, TANDEM_PLACEMENT_GPU_LOCAL, &c->t_dev_down));
  TCHECK(tandem_buffer_create(rt, c->bytes, TANDEM_PLACEMENT_HOST_VISIBLE, &c->t_host_down));
  TCHECK(tandem_buffer_memory(c->t_host_up, &c->rep->tandem_host));
  TCHECK(tandem_buffer_memory(c->t_dev_up, &c->rep->tandem_gpu));
  tandem_map_t m;
  TCHECK(tandem_map_write(tandem_buffer_whole(c->t_host_up), &m));
  memcpy(m.data, c->pattern, c->bytes);
  tandem_unmap(&m);
  /* The download source holds the pattern. */
  tandem_graph_t *g;
  TCHECK(tandem_graph_create(rt, &g));
  TCHECK(tandem_graph_add_copy(g, tandem_buffer_whole(c->t_host_up),
                               tandem_buffer_whole(c->t_dev_down), TANDEM_LANE_AUTO));
  tandem_exec_t *e;
  TCHECK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  run_tandem(e);
  tandem_exec_release(e);
  c->t_exec[COPY_TANDEM_UP] = tandem_copy_graph(c, true, false);
  c->t_exec[COPY_TANDEM_DOWN] = tandem_copy_graph(c, false, true);
  c->t_exec[COPY_TANDEM_BOTH] = tandem_copy_graph(c, true, true);
  for (int k = 0; k < 3; k++)
    if (!(c->t_wall[k] = calloc(c->runs, sizeof *c->t_wall[k]))) bench_die("out of memory");
}

static void tandem_verify_close(copies_t *c) {
  uint64_t words = c->bytes / 4;
  tandem_map_t m;
  if (c->rep->tandem_measured) {
    TCHECK(tandem_map_write(tandem_buffer_whole(c->t_host_down), &m));
    check_samples("tandem download", m.data, words);
    clear_samples(m.data, words);
    tandem_unmap(&m);
    tandem_graph_t *g;
    TCHECK(tandem_graph_create(c->rt, &g));
    TCHECK(tandem_graph_add_copy(g, tandem_buffer_whole(c->t_dev_up),
                                 tandem_buffer_whole(c->t_host_down), TANDEM_LANE_AUTO));
    tandem_exec_t *e;
    TCHECK(tandem_graph_prepare(g, &e));
    tandem_graph_release(g);
    run_tandem(e);
    tandem_exec_release(e);
    TCHECK(tandem_map_read(tandem_buffer_whole(c->t_host_down), &m));
    check_samples("tandem upload", m.data, words);
    tandem_unmap(&m);
  }
  for (int k = 0; k < 3; k++) {
    tandem_exec_release(c->t_exec[k]);
    free(c->t_wall[k]);
  }
  tandem_buffer_release(c->t_host_up);
  tandem_buffer_release(c->t_dev_up);
  tandem_buffer_release(c->t_dev_down);
  tandem_buffer_release(c->t_host_down);
}

/*--------------------------------------------------------------------------*/

void bench_copies(const bench_options_t *o, tandem_runtime_t *rt, raw_t *raw,
                  bench_copies_report_t *report) {
  memset(report, 0, sizeof *report);
  copies_t c = {.o = o, .rt = rt, .raw = raw, .rep = report};
  c.bytes = o->transfer_bytes / 1024 * 1024;
  c.runs = o->stream_iterations;
  c.warmup = o->quick ? 1 : 3;
  report->bytes = c.bytes;
  report->runs = c.runs;
  report->warmup = c.warmup;
  report->memory = raw->memory;
  find_queues(&c);
  c.pattern = malloc(c.bytes);
  if (!c.pattern) bench_die("out of memory");
  for (uint64_t i = 0; i < c.bytes / 4; i++) c.pattern[i] = pattern_word(i);
  raw_buffer_create(raw, c.bytes, false, &c.dev_up);
  raw_buffer_create(raw, c.bytes, false, &c.dev_down);
  tandem_open(&c);

  const VkPhysicalDeviceMemoryProperties *mem = &raw->memory;
  for (uint32_t i = 0; i < mem->memoryTypeCount; i++) {
    const VkMemoryType *mt = &mem->memoryTypes[i];
    if (!(mt->propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) continue;
    copy_type_report_t *t = &report->types[report->type_count++];
    t->index = i;
    t->properties = mt->propertyFlags;
    t->heap = mt->heapIndex;
    t->heap_bytes = mem->memoryHeaps[mt->heapIndex].size;
    t->heap_device_local = mem->memoryHeaps[mt->heapIndex].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    measure_type(&c, t, i == report->tandem_host.memory_type);
    if (t->skipped) bench_progress("  copies, memory type %u skipped: %s\n", i, t->skipped);
  }
  tandem_verify_close(&c);
  raw_buffer_destroy(raw, &c.dev_up);
  raw_buffer_destroy(raw, &c.dev_down);
  free(c.pattern);
  report->ran = true;
}

/*--------------------------------------------------------------------------
 * Report
 *--------------------------------------------------------------------------*/

static double gbps(uint64_t bytes, double us) { return us > 0 ? (double)bytes / us / 1e3 : 0; }

static void print_memory(FILE *f, const char *what, const tandem_buffer_memory_t *m) {
  char flags[160];
  flags_text(m->properties, flags, sizeof flags);
  fprintf(f, "%s -> memory type %u (%s, heap %u)", what, m->memory_type, flags, m->heap);
}

void bench_copies_print(const bench_copies_report_t *r, FILE *f) {
  if (!r->ran) return;
  char sz[32], flags[160];
  size_text(r->bytes, sz, sizeof sz);
  fprintf(f,
          "\ncopies: %s each way; median of %u runs (after %u warm-up), all rows of a memory\n"
          "type and tandem's graphs alternated. GB/s = bytes moved / median time / 1e3\n"
          "(bytes, microseconds; 1 GB = 1e9 bytes); \"both\" rows count both directions\n"
          "(2 x %s). wall: first submit until the wait returns. GPU: earliest copy start\n"
          "to latest copy end (timestamps, one device clock). tandem: its graph doing the\n"
          "same copy between its HOST_VISIBLE and GPU_LOCAL buffers (wall).\n",
          sz, r->runs, r->warmup, sz);
  fprintf(f, "queues (tandem's lanes; the raw copies use these VkQueues):\n");
  for (uint32_t q = 0; q < r->queue_count; q++) {
    const copy_queue_t *cq = &r->queues[q];
    fprintf(f, "  %-24s family %u queue %u (%s%s%s)%s\n", cq->name, cq->family, cq->index,
            cq->family_flags & VK_QUEUE_GRAPHICS_BIT ? "graphics " : "",
            cq->family_flags & VK_QUEUE_COMPUTE_BIT ? "compute " : "",
            cq->family_flags & VK_QUEUE_TRANSFER_BIT ? "transfer" : "",
            cq->timestamp_bits ? "" : ", no timestamps");
  }
  fprintf(f, "memory heaps:");
  for (uint32_t h = 0; h < r->memory.memoryHeapCount; h++) {
    size_text(r->memory.memoryHeaps[h].size, sz, sizeof sz);
    fprintf(f, "%s %u: %s%s", h ? ";" : "", h, sz,
            r->memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? " device-local"
                                                                             : "");
  }
  fprintf(f, "\ntandem: ");
  print_memory(f, "HOST_VISIBLE", &r->tandem_host);
  fprintf(f, ";\n        ");
  print_memory(f, "GPU_LOCAL", &r->tandem_gpu);
  fprintf(f, "\n  why: HOST_VISIBLE needs HOST_VISIBLE|HOST_COHERENT, then prefers a type that is\n"
             "  not DEVICE_LOCAL (a DEVICE_LOCAL|HOST_VISIBLE type is the BAR window: host reads\n"
             "  there are uncached, and GPU copies into it stay in VRAM), then HOST_CACHED (host\n"
             "  reads at memory speed); see tandem.h, tandem_buffer_memory.\n");
  if (r->tandem_host.properties & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
    fprintf(f, "  (every coherent host-visible type here is device-local: this device's\n"
               "  device-local memory is system memory, as on integrated GPUs and lavapipe)\n");
  for (uint32_t i = 0; i < r->type_count; i++) {
    const copy_type_report_t *t = &r->types[i];
    flags_text(t->properties, flags, sizeof flags);
    size_text(t->heap_bytes, sz, sizeof sz);
    bool is_tandem = t->index == r->tandem_host.memory_type;
    fprintf(f, "\nmemory type %u: %s, heap %u (%s%s)%s\n", t->index, flags, t->heap, sz,
            t->heap_device_local ? ", device-local" : "",
            is_tandem ? "  <- tandem's HOST_VISIBLE" : "");
    if (t->skipped) {
      fprintf(f, "  skipped: %s\n", t->skipped);
      continue;
    }
    bool dl = t->properties & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    if (dl && !(r->tandem_host.properties & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      fprintf(f, "  device-local: these copies do not cross the link (VRAM to VRAM)\n");
    size_text(t->host_read_bytes, sz, sizeof sz);
    fprintf(f, "  host memcpy: into the mapping %.2f GB/s, out of it %.3f GB/s (%s in %.2f s)\n",
            t->host_write_gbps, t->host_read_gbps, sz, t->host_read_s);
    fprintf(f, "  %-44s %10s %10s %10s %10s %10s %11s\n", "copy", "wall us", "GPU us", "wall GB/s",
            "GPU GB/s", "tandem us", "tandem GB/s");
    for (uint32_t k = 0; k < t->row_count; k++) {
      const copy_row_t *row = &t->rows[k];
      fprintf(f, "  %-44s %10.1f ", row->name, row->wall.median);
      if (row->has_gpu) fprintf(f, "%10.1f ", row->gpu.median);
      else fprintf(f, "%10s ", "-");
      fprintf(f, "%10.2f ", gbps(row->bytes, row->wall.median));
      if (row->has_gpu) fprintf(f, "%10.2f", gbps(row->bytes, row->gpu.median));
      else fprintf(f, "%10s", "-");
      if (is_tandem && r->tandem_measured && row->tandem != COPY_TANDEM_NONE)
        fprintf(f, " %10.1f %11.2f", r->tandem[row->tandem].median,
                gbps(row->bytes, r->tandem[row->tandem].median));
      fputc('\n', f);
    }
  }
  /* The best of each kind over host memory outside VRAM (or any host memory
   * when there is none), by GPU time where measured. */
  static const char *const kinds[3] = {"up (one direction)", "down (one direction)",
                                       "both directions at once"};
  bool any_outside = false;
  for (uint32_t i = 0; i < r->type_count; i++)
    any_outside |=
        !r->types[i].skipped && !(r->types[i].properties & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  fprintf(f, "\nbest per kind%s (by %s time):\n",
          any_outside ? " over host memory outside VRAM" : "", "median wall");
  for (int kind = 0; kind < 3; kind++) {
    const copy_row_t *best = NULL;
    uint32_t best_type = 0;
    for (uint32_t i = 0; i < r->type_count; i++) {
      const copy_type_report_t *t = &r->types[i];
      if (t->skipped || (any_outside && (t->properties & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)))
        continue;
      for (uint32_t k = 0; k < t->row_count; k++) {
        const copy_row_t *row = &t->rows[k];
        int rk = row->up_parts && row->down_parts ? 2 : row->up_parts ? 0 : 1;
        if (rk != kind) continue;
        if (!best || gbps(row->bytes, row->wall.median) > gbps(best->bytes, best->wall.median)) {
          best = row;
          best_type = t->index;
        }
      }
    }
    if (!best) continue;
    fprintf(f, "  %-24s %7.2f GB/s wall", kinds[kind], gbps(best->bytes, best->wall.median));
    if (best->has_gpu) fprintf(f, ", %7.2f GB/s GPU", gbps(best->bytes, best->gpu.median));
    fprintf(f, "  (%s, memory type %u)\n", best->name, best_type);
  }
  if (r->tandem_measured) {
    fprintf(f, "  %-24s up %.2f, down %.2f, both %.2f GB/s wall (memory type %u)\n", "tandem",
            gbps(r->bytes, r->tandem[COPY_TANDEM_UP].median),
            gbps(r->bytes, r->tandem[COPY_TANDEM_DOWN].median),
            gbps(2 * r->bytes, r->tandem[COPY_TANDEM_BOTH].median), r->tandem_host.memory_type);
  }
}

static void json_summary(FILE *f, const char *key, const summary_t *s) {
  fprintf(f,
          "\"%s\": {\"median\": %.4f, \"p10\": %.4f, \"p90\": %.4f, \"min\": %.4f, \"mean\": %.4f}",
          key, s->median, s->p10, s->p90, s->min, s->mean);
}

static void json_memory(FILE *f, const tandem_buffer_memory_t *m) {
  char flags[160];
  flags_text(m->properties, flags, sizeof flags);
  fprintf(f, "{\"memory_type\": %u, \"flags\": \"%s\", \"flags_value\": %u, \"heap\": %u}",
          m->memory_type, flags, m->properties, m->heap);
}

void bench_copies_json(const bench_copies_report_t *r, FILE *f) {
  char flags[160];
  fprintf(f, "{\n    \"bytes_per_direction\": %llu,\n    \"runs\": %u,\n    \"warmup\": %u,\n",
          (unsigned long long)r->bytes, r->runs, r->warmup);
  fputs("    \"queues\": [", f);
  for (uint32_t q = 0; q < r->queue_count; q++) {
    const copy_queue_t *cq = &r->queues[q];
    fprintf(f,
            "%s{\"name\": \"%s\", \"family\": %u, \"index\": %u, \"family_flags\": %u, "
            "\"timestamp_bits\": %u}",
            q ? ", " : "", cq->name, cq->family, cq->index, cq->family_flags, cq->timestamp_bits);
  }
  fputs("],\n    \"heaps\": [", f);
  for (uint32_t h = 0; h < r->memory.memoryHeapCount; h++)
    fprintf(f, "%s{\"index\": %u, \"bytes\": %llu, \"device_local\": %s}", h ? ", " : "", h,
            (unsigned long long)r->memory.memoryHeaps[h].size,
            r->memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? "true" : "false");
  fputs("],\n    \"tandem\": {\"host_visible\": ", f);
  json_memory(f, &r->tandem_host);
  fputs(", \"gpu_local\": ", f);
  json_memory(f, &r->tandem_gpu);
  if (r->tandem_measured) {
    static const char *const keys[3] = {"upload_us", "download_us", "both_us"};
    for (int k = 0; k < 3; k++) {
      fputs(", ", f);
      json_summary(f, keys[k], &r->tandem[k]);
    }
    fprintf(f, ", \"upload_gb_per_s\": %.4f, \"download_gb_per_s\": %.4f, \"both_gb_per_s\": %.4f",
            gbps(r->bytes, r->tandem[0].median), gbps(r->bytes, r->tandem[1].median),
            gbps(2 * r->bytes, r->tandem[2].median));
  }
  fputs("},\n    \"memory_types\": [", f);
  for (uint32_t i = 0; i < r->type_count; i++) {
    const copy_type_report_t *t = &r->types[i];
    flags_text(t->properties, flags, sizeof flags);
    fprintf(f,
            "%s\n      {\"index\": %u, \"flags\": \"%s\", \"flags_value\": %u, \"heap\": %u, "
            "\"heap_bytes\": %llu, \"heap_device_local\": %s, \"tandem_host_visible\": %s",
            i ? "," : "", t->index, flags, t->properties, t->heap,
            (unsigned long long)t->heap_bytes, t->heap_device_local ? "true" : "false",
            t->index == r->tandem_host.memory_type ? "true" : "false");
    if (t->skipped) {
      fputs(", \"skipped\": ", f);
      json_write_string(f, t->skipped);
      fputs("}", f);
      continue;
    }
    fprintf(f, ", \"host_write_gb_per_s\": %.4f, \"host_read_gb_per_s\": %.5f, \"copies\": [",
            t->host_write_gbps, t->host_read_gbps);
    for (uint32_t k = 0; k < t->row_count; k++) {
      const copy_row_t *row = &t->rows[k];
      fprintf(f,
              "%s\n        {\"name\": \"%s\", \"bytes\": %llu, \"up_parts\": %u, "
              "\"down_parts\": %u, ",
              k ? "," : "", row->name, (unsigned long long)row->bytes, row->up_parts,
              row->down_parts);
      json_summary(f, "wall_us", &row->wall);
      fprintf(f, ", \"wall_gb_per_s\": %.4f", gbps(row->bytes, row->wall.median));
      if (row->has_gpu) {
        fputs(", ", f);
        json_summary(f, "gpu_us", &row->gpu);
        fprintf(f, ", \"gpu_gb_per_s\": %.4f", gbps(row->bytes, row->gpu.median));
      }
      static const char *const tk[3] = {"upload", "download", "both"};
      if (row->tandem != COPY_TANDEM_NONE)
        fprintf(f, ", \"same_as_tandem\": \"%s\"", tk[row->tandem]);
      fputs("}", f);
    }
    fputs("]}", f);
  }
  fputs("\n    ]\n  }", f);
}
