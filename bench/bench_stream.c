/* SPDX-License-Identifier: MIT */
/*
 * bench_stream.c — `tandem-bench`'s stream benchmarks, each tandem vs raw
 * Vulkan, alternated:
 *   transfer  one copy of N bytes HOST_VISIBLE → GPU_LOCAL (upload lane) and
 *             back (download lane); GB/s from the median submit+wait.
 *   overlap   K chunks, each upload → compute (bench_work.comp) → download,
 *             in one graph (tandem) or as 3·K submissions on three queues
 *             chained by timeline semaphores (direct). The ideal is the
 *             busiest lane's time when that lane's work runs alone; the
 *             result is achieved time as a percentage of that ideal (100% =
 *             perfect overlap).
 * Both sides run the same stream shape: a lane's first submission waits for
 * everything of the previous run, chunk i of a later lane waits for chunk i
 * of the lane before it.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_stream.h"
#include "tandem_bench_shaders.h"

enum { UP = TANDEM_LANE_UPLOAD, COMP = TANDEM_LANE_COMPUTE, DOWN = TANDEM_LANE_DOWNLOAD };

typedef struct stream_shape {
  uint32_t chunks;
  uint64_t chunk_bytes;
  uint32_t rounds;
  bool compute; /* false: download copies dev_in back (transfer) */
} stream_shape_t;

/*--------------------------------------------------------------------------
 * tandem side
 *--------------------------------------------------------------------------*/

typedef struct tstream {
  tandem_runtime_t *rt;
  tandem_buffer_t *host_in, *dev_in, *dev_out, *host_out;
  tandem_kernel_t *work;
} tstream_t;

static void tstream_open(tstream_t *t, tandem_runtime_t *rt, const stream_shape_t *s) {
  memset(t, 0, sizeof *t);
  t->rt = rt;
  uint64_t total = (uint64_t)s->chunks * s->chunk_bytes;
  TCHECK(tandem_buffer_create(rt, total, TANDEM_PLACEMENT_HOST_VISIBLE, &t->host_in));
  TCHECK(tandem_buffer_create(rt, total, TANDEM_PLACEMENT_GPU_LOCAL, &t->dev_in));
  TCHECK(tandem_buffer_create(rt, total, TANDEM_PLACEMENT_HOST_VISIBLE, &t->host_out));
  tandem_map_t m;
  TCHECK(tandem_map_write(tandem_buffer_whole(t->host_in), &m));
  uint32_t *w = m.data;
  for (uint64_t i = 0; i < total / 4; i++) w[i] = (uint32_t)(i * 2654435761u);
  tandem_unmap(&m);
  if (!s->compute) return;
  TCHECK(tandem_buffer_create(rt, total, TANDEM_PLACEMENT_GPU_LOCAL, &t->dev_out));
  tandem_binding_contract_t b[2] = {{s->chunk_bytes, 4, TANDEM_ACCESS_READ},
                                    {s->chunk_bytes, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = "bench_work",
                            .spirv = tandem_spv_bench_work,
                            .spirv_size = tandem_spv_bench_work_size,
                            .workgroups = {(uint32_t)((s->chunk_bytes / 4 + 255) / 256), 1, 1},
                            .bindings = b,
                            .binding_count = 2,
                            .push_constant_bytes = 8};
  TCHECK(tandem_kernel_create(rt, &d, &t->work));
}

static void tstream_close(tstream_t *t) {
  tandem_kernel_release(t->work);
  tandem_buffer_release(t->host_in);
  tandem_buffer_release(t->dev_in);
  tandem_buffer_release(t->dev_out);
  tandem_buffer_release(t->host_out);
}

/* A graph with the lanes in |lanes| (bit per lane). */
static tandem_exec_t *tstream_graph(tstream_t *t, const stream_shape_t *s, unsigned lanes) {
  tandem_graph_t *g;
  TCHECK(tandem_graph_create(t->rt, &g));
  for (uint32_t i = 0; i < s->chunks; i++) {
    uint64_t off = (uint64_t)i * s->chunk_bytes;
    tandem_view_t hin, din, dout, hout;
    TCHECK(tandem_buffer_view(t->host_in, off, s->chunk_bytes, &hin));
    TCHECK(tandem_buffer_view(t->dev_in, off, s->chunk_bytes, &din));
    TCHECK(tandem_buffer_view(t->host_out, off, s->chunk_bytes, &hout));
    if (s->compute) TCHECK(tandem_buffer_view(t->dev_out, off, s->chunk_bytes, &dout));
    else dout = din;
    if (lanes & (1u << UP)) TCHECK(tandem_graph_add_copy(g, hin, din, TANDEM_LANE_AUTO));
    if (s->compute && (lanes & (1u << COMP))) {
      uint32_t push[2] = {(uint32_t)(s->chunk_bytes / 4), s->rounds};
      tandem_view_t v[2] = {din, dout};
      TCHECK(tandem_graph_add_dispatch(g, t->work, v, 2, push, sizeof push));
    }
    if (lanes & (1u << DOWN)) TCHECK(tandem_graph_add_copy(g, dout, hout, TANDEM_LANE_AUTO));
  }
  tandem_exec_t *e;
  TCHECK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  return e;
}

/*--------------------------------------------------------------------------
 * direct side
 *--------------------------------------------------------------------------*/

typedef struct rstream {
  raw_t *raw;
  stream_shape_t shape;
  raw_buffer_t host_in, dev_in, dev_out, host_out;
  raw_kernel_t work;
  VkCommandBuffer *cb[RAW_LANES]; /* per chunk */
  unsigned lanes;                 /* which lanes the current job runs */
  VkSubmitInfo2 *si;
  VkCommandBufferSubmitInfo *cbi;
  VkSemaphoreSubmitInfo *wait, *signal; /* wait: RAW_LANES+1 per submit */
} rstream_t;

static void rstream_open(rstream_t *r, raw_t *raw, const stream_shape_t *s) {
  memset(r, 0, sizeof *r);
  r->raw = raw;
  r->shape = *s;
  uint64_t total = (uint64_t)s->chunks * s->chunk_bytes;
  raw_buffer_create(raw, total, true, &r->host_in);
  raw_buffer_create(raw, total, false, &r->dev_in);
  raw_buffer_create(raw, total, true, &r->host_out);
  uint32_t *w = r->host_in.mapped;
  for (uint64_t i = 0; i < total / 4; i++) w[i] = (uint32_t)(i * 2654435761u);
  const raw_buffer_t *dout = &r->dev_in;
  if (s->compute) {
    raw_buffer_create(raw, total, false, &r->dev_out);
    raw_kernel_create(raw, tandem_spv_bench_work, tandem_spv_bench_work_size, 2, 8, &r->work);
    dout = &r->dev_out;
  }
  uint32_t k = s->chunks;
  for (int l = 0; l < RAW_LANES; l++) {
    r->cb[l] = calloc(k, sizeof *r->cb[l]);
    if (!r->cb[l]) bench_die("out of memory");
  }
  r->si = calloc(k, sizeof *r->si);
  r->cbi = calloc(k, sizeof *r->cbi);
  r->wait = calloc((size_t)k * (RAW_LANES + 1), sizeof *r->wait);
  r->signal = calloc(k, sizeof *r->signal);
  if (!r->si || !r->cbi || !r->wait || !r->signal) bench_die("out of memory");
  for (uint32_t i = 0; i < k; i++) {
    VkDeviceSize off = (VkDeviceSize)i * s->chunk_bytes;
    VkBufferCopy region = {off, off, s->chunk_bytes};
    VkCommandBuffer cb = raw_begin(raw, UP);
    raw->vk.vkCmdCopyBuffer(cb, r->host_in.buffer, r->dev_in.buffer, 1, &region);
    VKCHECK(raw->vk.vkEndCommandBuffer(cb));
    r->cb[UP][i] = cb;
    cb = raw_begin(raw, DOWN);
    raw->vk.vkCmdCopyBuffer(cb, dout->buffer, r->host_out.buffer, 1, &region);
    raw_barrier(raw, cb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    VKCHECK(raw->vk.vkEndCommandBuffer(cb));
    r->cb[DOWN][i] = cb;
    if (s->compute) {
      VkBuffer bufs[2] = {r->dev_in.buffer, r->dev_out.buffer};
      VkDeviceSize offs[2] = {off, off}, ranges[2] = {s->chunk_bytes, s->chunk_bytes};
      VkDescriptorSet set = raw_descriptor_set(raw, &r->work, bufs, offs, ranges);
      cb = raw_begin(raw, COMP);
      raw->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->work.pipeline);
      raw->vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->work.layout, 0, 1,
                                      &set, 0, NULL);
      uint32_t push[2] = {(uint32_t)(s->chunk_bytes / 4), s->rounds};
      raw->vk.vkCmdPushConstants(cb, r->work.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push,
                                 push);
      raw->vk.vkCmdDispatch(cb, (uint32_t)((s->chunk_bytes / 4 + 255) / 256), 1, 1);
      VKCHECK(raw->vk.vkEndCommandBuffer(cb));
      r->cb[COMP][i] = cb;
    }
  }
}

static void rstream_close(rstream_t *r) {
  raw_t *raw = r->raw;
  VKCHECK(raw->vk.vkDeviceWaitIdle(raw->device));
  for (int l = 0; l < RAW_LANES; l++) {
    for (uint32_t i = 0; i < r->shape.chunks; i++)
      if (r->cb[l][i]) raw->vk.vkFreeCommandBuffers(raw->device, raw->pool[l], 1, &r->cb[l][i]);
    free(r->cb[l]);
  }
  if (r->shape.compute) raw_kernel_destroy(raw, &r->work);
  VKCHECK(raw->vk.vkResetDescriptorPool(raw->device, raw->descriptor_pool, 0));
  raw_buffer_destroy(raw, &r->host_in);
  raw_buffer_destroy(raw, &r->dev_in);
  raw_buffer_destroy(raw, &r->dev_out);
  raw_buffer_destroy(raw, &r->host_out);
  free(r->si);
  free(r->cbi);
  free(r->wait);
  free(r->signal);
}

/* One run of the lanes in r->lanes: submit per lane, then wait for all. */
static void rstream_job(raw_t *unused, void *ctx) {
  (void)unused;
  rstream_t *r = ctx;
  raw_t *raw = r->raw;
  uint32_t k = r->shape.chunks;
  uint64_t prev[RAW_LANES];
  memcpy(prev, raw->value, sizeof prev);
  const int order[RAW_LANES] = {UP, COMP, DOWN};
  for (int o = 0; o < RAW_LANES; o++) {
    int lane = order[o];
    if (!(r->lanes & (1u << lane)) || !r->cb[lane][0]) continue;
    /* the lane this one consumes from, if it runs in this job */
    int from = -1;
    if (lane == COMP && (r->lanes & (1u << UP))) from = UP;
    if (lane == DOWN && r->shape.compute && (r->lanes & (1u << COMP))) from = COMP;
    if (lane == DOWN && !r->shape.compute && (r->lanes & (1u << UP))) from = UP;
    for (uint32_t i = 0; i < k; i++) {
      VkSemaphoreSubmitInfo *w = &r->wait[(size_t)i * (RAW_LANES + 1)];
      uint32_t wn = 0;
      if (i == 0)
        for (int l = 0; l < RAW_LANES; l++)
          w[wn++] = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                            .semaphore = raw->timeline[l],
                                            .value = prev[l],
                                            .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
      if (from >= 0)
        w[wn++] = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                          .semaphore = raw->timeline[from],
                                          .value = prev[from] + i + 1,
                                          .stageMask = lane == COMP
                                                           ? VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT
                                                           : VK_PIPELINE_STAGE_2_COPY_BIT};
      r->signal[i] = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                             .semaphore = raw->timeline[lane],
                                             .value = prev[lane] + i + 1,
                                             .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
      r->cbi[i] = (VkCommandBufferSubmitInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                              .commandBuffer = r->cb[lane][i]};
      r->si[i] = (VkSubmitInfo2){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                                 .waitSemaphoreInfoCount = wn,
                                 .pWaitSemaphoreInfos = w,
                                 .commandBufferInfoCount = 1,
                                 .pCommandBufferInfos = &r->cbi[i],
                                 .signalSemaphoreInfoCount = 1,
                                 .pSignalSemaphoreInfos = &r->signal[i]};
    }
    VKCHECK(raw->vk.vkQueueSubmit2(raw->queue[lane], k, r->si, VK_NULL_HANDLE));
    raw->value[lane] = prev[lane] + k;
  }
  VkSemaphore sems[RAW_LANES];
  uint64_t vals[RAW_LANES];
  uint32_t n = 0;
  for (int l = 0; l < RAW_LANES; l++)
    if ((r->lanes & (1u << l)) && r->cb[l][0]) {
      sems[n] = raw->timeline[l];
      vals[n++] = raw->value[l];
    }
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = n,
                            .pSemaphores = sems,
                            .pValues = vals};
  VKCHECK(raw->vk.vkWaitSemaphores(raw->device, &wi, UINT64_MAX));
}

/*--------------------------------------------------------------------------
 * verification and the two benchmarks
 *--------------------------------------------------------------------------*/

static void verify_stream(const char *name, const char *side, const stream_shape_t *s,
                          const uint32_t *in, const uint32_t *out) {
  uint64_t words = (uint64_t)s->chunks * s->chunk_bytes / 4;
  uint64_t step = s->compute ? 61 : 1;
  for (uint64_t i = 0; i < words; i += step) {
    uint32_t want = in[i];
    if (s->compute)
      for (uint32_t r = 0; r < s->rounds; r++) want = want * 1664525u + 1013904223u;
    if (out[i] != want)
      bench_die("%s: %s result is wrong: word %llu is %u, expected %u", name, side,
                (unsigned long long)i, out[i], want);
  }
}

static void verify_tandem(const char *name, tstream_t *t, const stream_shape_t *s) {
  tandem_map_t mi, mo;
  TCHECK(tandem_map_read(tandem_buffer_whole(t->host_in), &mi));
  TCHECK(tandem_map_read(tandem_buffer_whole(t->host_out), &mo));
  verify_stream(name, "tandem", s, mi.data, mo.data);
  tandem_unmap(&mo);
  tandem_unmap(&mi);
}

/* Times |lanes| of both sides; medians into *t_us / *d_us; fills |row| when given. */
static void time_stream(const bench_options_t *o, const char *label, tstream_t *t, rstream_t *r,
                        const stream_shape_t *s, unsigned lanes, double *t_us, double *d_us,
                        bench_row_t *row) {
  tandem_exec_t *e = tstream_graph(t, s, lanes);
  r->lanes = lanes;
  uint32_t n = o->stream_iterations;
  double *tt = malloc(n * sizeof *tt), *dt = malloc(n * sizeof *dt), *pr = malloc(n * sizeof *pr);
  if (!tt || !dt || !pr) bench_die("out of memory");
  bench_time_pairs(o, label, n, o->quick ? 1 : 3, e, rstream_job, r, NULL, tt, dt);
  for (uint32_t i = 0; i < n; i++) pr[i] = tt[i] / dt[i];
  summary_t ts = bench_summarize(tt, n), ds = bench_summarize(dt, n), ps = bench_summarize(pr, n);
  *t_us = ts.median;
  *d_us = ds.median;
  if (row) {
    row->tandem = ts;
    row->direct = ds;
    row->pair_ratio = ps;
    row->ratio = ts.median / ds.median;
  }
  free(tt);
  free(dt);
  free(pr);
  tandem_exec_release(e);
}

void bench_transfer(const bench_options_t *o, tandem_runtime_t *rt, raw_t *raw, bench_row_t *rows,
                    uint32_t *count) {
  stream_shape_t s = {.chunks = 1, .chunk_bytes = o->transfer_bytes, .compute = false};
  tstream_t t;
  rstream_t r;
  tstream_open(&t, rt, &s);
  rstream_open(&r, raw, &s);
  double tu, du;
  bench_row_t *up = &rows[(*count)++], *down = &rows[(*count)++];
  snprintf(up->name, sizeof up->name, "transfer-upload");
  snprintf(down->name, sizeof down->name, "transfer-download");
  up->nodes = down->nodes = 1;
  up->bytes = down->bytes = s.chunk_bytes;
  time_stream(o, "transfer upload", &t, &r, &s, 1u << UP, &tu, &du, up);
  time_stream(o, "transfer download", &t, &r, &s, 1u << DOWN, &tu, &du, down);
  verify_tandem("transfer", &t, &s);
  verify_stream("transfer", "direct", &s, r.host_in.mapped, r.host_out.mapped);
  rstream_close(&r);
  tstream_close(&t);
}

void bench_overlap(const bench_options_t *o, tandem_runtime_t *rt, raw_t *raw, bench_row_t *rows,
                   uint32_t *count) {
  stream_shape_t s = {.chunks = o->chunks,
                      .chunk_bytes = (o->chunk_bytes + 1023) / 1024 * 1024,
                      .rounds = o->rounds,
                      .compute = true};
  tstream_t t;
  rstream_t r;
  tstream_open(&t, rt, &s);
  rstream_open(&r, raw, &s);
  bench_row_t *row = &rows[(*count)++];
  snprintf(row->name, sizeof row->name, "overlap");
  row->nodes = 3 * s.chunks;
  row->bytes = (uint64_t)s.chunks * s.chunk_bytes;
  row->is_overlap = true;
  const char *labels[RAW_LANES] = {"overlap upload alone", "overlap compute alone",
                                   "overlap download alone"};
  for (int l = 0; l < RAW_LANES; l++)
    time_stream(o, labels[l], &t, &r, &s, 1u << l, &row->tandem_lane_us[l], &row->direct_lane_us[l],
                NULL);
  double tu, du;
  time_stream(o, "overlap all lanes", &t, &r, &s, 7u, &tu, &du, row);
  for (int l = 0; l < RAW_LANES; l++) {
    if (row->tandem_lane_us[l] > row->tandem_ideal_us)
      row->tandem_ideal_us = row->tandem_lane_us[l];
    if (row->direct_lane_us[l] > row->direct_ideal_us)
      row->direct_ideal_us = row->direct_lane_us[l];
  }
  verify_tandem("overlap", &t, &s);
  verify_stream("overlap", "direct", &s, r.host_in.mapped, r.host_out.mapped);
  rstream_close(&r);
  tstream_close(&t);
}
