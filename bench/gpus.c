/* SPDX-License-Identifier: MIT */
/*
 * gpus.c — two GPUs of one runtime: a pipeline split across them, and what
 * one hand-over between them costs against raw Vulkan on the same devices.
 *
 * split      K chunks, each: upload into GPU 0, a kernel there (bench_work:
 *            every word through R0 steps of a linear congruential
 *            generator), a copy to GPU 1 (tandem_graph_add_copy across GPUs:
 *            the path tandem_runtime_gpu_pair reports), a kernel there (R1
 *            steps), a download on GPU 1. One prepared graph holds all K
 *            chunks, so while GPU 1 works on chunk k, GPU 0 can work on k+1.
 *            Every run gets new input and every output word is compared with
 *            the CPU's (the K·R steps folded into one affine map per word).
 *            From the GPU timestamps of every region (tandem_completion_profile,
 *            all on the host's CLOCK_MONOTONIC): each GPU's busy time (the
 *            union of its regions), the time both were busy at once (the
 *            overlap), the span, against the same chunks one at a time (one
 *            chunk's graph submitted and waited K times: no overlap).
 * hand-over  a 256-byte increment on GPU 0, the bytes copied to GPU 1, an
 *            increment there, read back: one tandem graph (the copy and the
 *            wait cross through the relay) against raw Vulkan on tandem's own
 *            two VkDevices and queues (tandem_runtime_vulkan_handles_at):
 *            GPU 0's commands submitted and waited, then GPU 1's, through one
 *            host allocation both import — the best a program can do without
 *            a GPU-side wait between two devices. Both sides wait the same way
 *            (poll for the runtime's wait_spin_us, then block); alternated,
 *            medians. Floors: each device's half alone. The relay's gap: GPU
 *            1's first start minus GPU 0's last end, by GPU timestamps.
 *
 *   build/bench/tandem_bench_gpus [--gpus B:I,B:I] [--chunks K] [--chunk-kib N]
 *        [--rounds0 R] [--rounds1 R] [--runs N] [--handovers N]
 *        [--trace PATH] [--json PATH]
 *        (vulkan:0,vulkan:1; 8 chunks of 4096 KiB; 1024 rounds each; 20 runs;
 *        200 hand-overs)
 *   build/bench/tandem_bench_gpus --smoke   (CTest: lavapipe beside a host
 *        GPU, small sizes, validation layer on; any message or wrong word fails)
 * Exit status 77 (CTest's skip) when a GPU is absent.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "gpus"
#include "bench_common.h"
#include "bench_vk.h"
#include "tandem/tandem_testing.h"
#include "tandem_bench_shaders.h"

#define LCG_A 1664525u
#define LCG_C 1013904223u
#define HANDOVER_BYTES 256u
#define HANDOVER_WORDS (HANDOVER_BYTES / 4u)
#define MAX_CHUNKS 64u

typedef struct options {
  tandem_gpu_choice_t gpus[2];
  char gpu_text[2][32];
  uint32_t chunks, chunk_kib, rounds[2], runs, handovers;
  const char *trace, *json;
  bool smoke;
} options_t;

/*--------------------------------------------------------------------------
 * Host twins (the host GPU runs these instead of the SPIR-V)
 *--------------------------------------------------------------------------*/

static void twin_work(const tandem_test_host_dispatch_t *d) {
  const uint32_t *in = (const uint32_t *)d->bindings[0];
  uint32_t *out = (uint32_t *)d->bindings[1];
  const uint32_t *push = d->push; /* n, rounds */
  uint64_t threads = (uint64_t)d->workgroups[0] * d->local_size[0];
  for (uint64_t i = 0; i < threads && i < push[0]; i++) {
    uint32_t x = in[i];
    for (uint32_t r = 0; r < push[1]; r++) x = x * LCG_A + LCG_C;
    out[i] = x;
  }
}

static void twin_increment(const tandem_test_host_dispatch_t *d) {
  uint32_t *data = (uint32_t *)d->bindings[0];
  uint32_t threads = d->local_size[0] * d->local_size[1] * d->local_size[2];
  for (uint32_t i = 0; i < threads; i++) data[i] += 1u;
}

/*--------------------------------------------------------------------------
 * Intervals: busy time and overlap from region timestamps
 *--------------------------------------------------------------------------*/

typedef struct span {
  uint64_t start, end;
} span_t;

static int cmp_span(const void *a, const void *b) {
  const span_t *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* Merges |v| in place into disjoint sorted spans; returns their count. */
static uint32_t merge_spans(span_t *v, uint32_t n) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, cmp_span);
  uint32_t m = 0;
  for (uint32_t i = 1; i < n; i++) {
    if (v[i].start <= v[m].end) {
      if (v[i].end > v[m].end) v[m].end = v[i].end;
    } else {
      v[++m] = v[i];
    }
  }
  return m + 1;
}

static uint64_t spans_length(const span_t *v, uint32_t n) {
  uint64_t t = 0;
  for (uint32_t i = 0; i < n; i++) t += v[i].end - v[i].start;
  return t;
}

/* The length of the intersection of two merged span lists. */
static uint64_t spans_overlap(const span_t *a, uint32_t na, const span_t *b, uint32_t nb) {
  uint64_t t = 0;
  uint32_t i = 0, j = 0;
  while (i < na && j < nb) {
    uint64_t lo = a[i].start > b[j].start ? a[i].start : b[j].start;
    uint64_t hi = a[i].end < b[j].end ? a[i].end : b[j].end;
    if (hi > lo) t += hi - lo;
    if (a[i].end < b[j].end) i++;
    else j++;
  }
  return t;
}

/* Which of the two GPUs a region's lane is on (-1: neither). */
static int lane_gpu(tandem_lane_t lane) {
  for (uint32_t g = 0; g < 2; g++)
    for (int l = TANDEM_LANE_UPLOAD; l <= TANDEM_LANE_DOWNLOAD; l++)
      if ((int)lane == tandem_gpu_lane(g, (tandem_lane_t)l)) return (int)g;
  return -1;
}

static double median_of(uint64_t *v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_u64);
  return n % 2 ? (double)v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
}

/*--------------------------------------------------------------------------
 * split: the pipeline across both GPUs
 *--------------------------------------------------------------------------*/

typedef struct split {
  uint32_t words; /* per chunk */
  tandem_buffer_t *in[MAX_CHUNKS], *a[MAX_CHUNKS], *a2[MAX_CHUNKS];
  tandem_buffer_t *b[MAX_CHUNKS], *b2[MAX_CHUNKS], *out[MAX_CHUNKS];
  tandem_exec_t *all, *one;
  uint32_t map_a[2], map_c[2]; /* each GPU's rounds as one affine map */
} split_t;

typedef struct split_result {
  double wall_us, span_us, busy_us[2], overlap_us, serial_us, one_chunk_gpu_us[2];
  uint64_t copied_bytes;
} split_result_t;

static void affine_of(uint32_t rounds, uint32_t *a, uint32_t *c) {
  uint32_t ma = 1, mc = 0;
  for (uint32_t r = 0; r < rounds; r++) ma *= LCG_A, mc = mc * LCG_A + LCG_C;
  *a = ma, *c = mc;
}

/* |desc|'s kernel made on GPU 0 and on GPU 1, named "<stem>_on_gpuN". */
static void kernel_on_each_gpu(tandem_runtime_t *rt, tandem_kernel_desc_t *desc, const char *stem,
                               tandem_kernel_t *out[2]) {
  for (uint32_t g = 0; g < 2; g++) {
    char name[48];
    snprintf(name, sizeof name, "%s_on_gpu%u", stem, g);
    desc->name = name;
    desc->gpu = g;
    CHECK(tandem_kernel_create(rt, desc, &out[g]));
  }
  desc->name = NULL;
}

static void add_chunk(split_t *s, tandem_graph_t *g, tandem_kernel_t *work[2], uint32_t k,
                      const options_t *o) {
  CHECK(tandem_graph_add_copy(g, tandem_buffer_whole(s->in[k]), tandem_buffer_whole(s->a[k]),
                              TANDEM_LANE_AUTO));
  for (uint32_t gpu = 0; gpu < 2; gpu++) {
    tandem_view_t views[2] = {tandem_buffer_whole(gpu ? s->b[k] : s->a[k]),
                              tandem_buffer_whole(gpu ? s->b2[k] : s->a2[k])};
    uint32_t push[2] = {s->words, o->rounds[gpu]};
    tandem_dispatch_desc_t d;
    tandem_dispatch_desc_init(&d);
    d.kernel = work[gpu];
    d.views = views;
    d.view_count = 2;
    d.push_constants = push;
    d.push_constant_bytes = sizeof push;
    d.workgroups[0] = s->words / 256u, d.workgroups[1] = d.workgroups[2] = 1;
    CHECK(tandem_graph_add_dispatch_node(g, &d, NULL));
    if (gpu == 0) /* across: a download on GPU 0, an upload on GPU 1 */
      CHECK(tandem_graph_add_copy(g, tandem_buffer_whole(s->a2[k]), tandem_buffer_whole(s->b[k]),
                                  TANDEM_LANE_AUTO));
  }
  CHECK(tandem_graph_add_copy(g, tandem_buffer_whole(s->b2[k]), tandem_buffer_whole(s->out[k]),
                              TANDEM_LANE_AUTO));
}

static void split_make(tandem_runtime_t *rt, split_t *s, const options_t *o) {
  memset(s, 0, sizeof *s);
  s->words = o->chunk_kib * 256u;
  uint64_t bytes = (uint64_t)s->words * 4u;
  for (uint32_t gpu = 0; gpu < 2; gpu++) affine_of(o->rounds[gpu], &s->map_a[gpu], &s->map_c[gpu]);
  tandem_kernel_t *work[2];
  tandem_binding_contract_t bc[2] = {{bytes, 4, TANDEM_ACCESS_READ},
                                     {bytes, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t kd;
  tandem_kernel_desc_init(&kd);
  kd.spirv = tandem_spv_bench_work;
  kd.spirv_size = tandem_spv_bench_work_size;
  kd.bindings = bc;
  kd.binding_count = 2;
  kd.push_constant_bytes = 8;
  kernel_on_each_gpu(rt, &kd, "work", work);
  for (uint32_t k = 0; k < o->chunks; k++) {
    CHECK(tandem_buffer_create_on(rt, 0, bytes, TANDEM_PLACEMENT_HOST_VISIBLE, &s->in[k]));
    CHECK(tandem_buffer_create_on(rt, 0, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &s->a[k]));
    CHECK(tandem_buffer_create_on(rt, 0, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &s->a2[k]));
    CHECK(tandem_buffer_create_on(rt, 1, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &s->b[k]));
    CHECK(tandem_buffer_create_on(rt, 1, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &s->b2[k]));
    CHECK(tandem_buffer_create_on(rt, 1, bytes, TANDEM_PLACEMENT_HOST_VISIBLE, &s->out[k]));
  }
  tandem_graph_t *g;
  CHECK(tandem_graph_create(rt, &g));
  for (uint32_t k = 0; k < o->chunks; k++) add_chunk(s, g, work, k, o);
  CHECK(tandem_graph_prepare(g, &s->all));
  tandem_graph_release(g);
  CHECK(tandem_graph_create(rt, &g));
  add_chunk(s, g, work, 0, o);
  CHECK(tandem_graph_prepare(g, &s->one));
  tandem_graph_release(g);
  tandem_kernel_release(work[0]);
  tandem_kernel_release(work[1]);
}

static uint32_t input_word(uint32_t run, uint32_t k, uint32_t i) {
  uint32_t x = (run * 0x9e3779b9u) ^ (k * 0x85ebca6bu) ^ (i * 0xc2b2ae35u);
  x ^= x >> 15;
  return x * 0x2c1b3c6du;
}

static void split_fill(split_t *s, uint32_t chunks, uint32_t run) {
  for (uint32_t k = 0; k < chunks; k++) {
    tandem_map_t m;
    CHECK(tandem_map_write(tandem_buffer_whole(s->in[k]), &m));
    uint32_t *w = m.data;
    for (uint32_t i = 0; i < s->words; i++) w[i] = input_word(run, k, i);
    tandem_unmap(&m);
  }
}

/* Every word of every chunk against the CPU; exits on the first wrong one. */
static void split_check(split_t *s, uint32_t chunks, uint32_t run) {
  for (uint32_t k = 0; k < chunks; k++) {
    tandem_map_t m;
    CHECK(tandem_map_read(tandem_buffer_whole(s->out[k]), &m));
    const uint32_t *w = m.data;
    for (uint32_t i = 0; i < s->words; i++) {
      uint32_t x = input_word(run, k, i);
      uint32_t want = s->map_a[1] * (s->map_a[0] * x + s->map_c[0]) + s->map_c[1];
      if (w[i] != want) {
        fprintf(stderr, "gpus: split run %u: chunk %u word %u is %08x, the CPU says %08x\n", run, k,
                i, w[i], want);
        exit(1);
      }
    }
    tandem_unmap(&m);
  }
}

/* Submits |e|, waits, and reads its regions' GPU times into the per-GPU
 * spans; returns the wall time in ns. */
static uint64_t run_profiled(tandem_exec_t *e, tandem_region_profile_t *regions, uint32_t capacity,
                             uint32_t *out_count) {
  tandem_completion_t *c;
  uint64_t t0 = now_ns();
  CHECK(tandem_exec_submit(e, &c));
  CHECK(tandem_completion_wait(c));
  uint64_t wall = now_ns() - t0;
  tandem_completion_profile_t p;
  tandem_completion_profile_init(&p);
  CHECK(tandem_completion_profile(c, &p, regions, capacity));
  tandem_completion_release(c);
  if (!p.gpu_times_valid) {
    fprintf(stderr, "gpus: no GPU timestamps: %s\n", tandem_status_name(p.gpu_times_status));
    exit(1);
  }
  if (p.region_count > capacity) {
    fprintf(stderr, "gpus: %u regions, room for %u\n", p.region_count, capacity);
    exit(1);
  }
  *out_count = p.region_count;
  return wall;
}

/* Busy time per GPU, their overlap and the span, from one run's regions. */
static void analyse(const tandem_region_profile_t *r, uint32_t n, span_t *scratch, double busy[2],
                    double *overlap, double *span) {
  span_t *per[2] = {scratch, scratch + n};
  uint32_t count[2] = {0, 0};
  uint64_t first = UINT64_MAX, last = 0;
  for (uint32_t i = 0; i < n; i++) {
    int g = lane_gpu(r[i].lane);
    if (g < 0) continue;
    per[g][count[g]++] = (span_t){r[i].gpu_start_ns, r[i].gpu_end_ns};
    if (r[i].gpu_start_ns < first) first = r[i].gpu_start_ns;
    if (r[i].gpu_end_ns > last) last = r[i].gpu_end_ns;
  }
  for (int g = 0; g < 2; g++) {
    count[g] = merge_spans(per[g], count[g]);
    busy[g] = (double)spans_length(per[g], count[g]) / 1e3;
  }
  *overlap = (double)spans_overlap(per[0], count[0], per[1], count[1]) / 1e3;
  *span = last > first ? (double)(last - first) / 1e3 : 0;
}

static void split_run(tandem_runtime_t *rt, split_t *s, const options_t *o, split_result_t *res,
                      tandem_region_profile_t *last_regions, uint32_t *last_count) {
  uint32_t cap = 16u * o->chunks + 16u;
  tandem_region_profile_t *regions = calloc(cap, sizeof *regions);
  span_t *scratch = calloc(2u * cap, sizeof *scratch);
  uint64_t *wall = calloc(o->runs, sizeof *wall), *serial = calloc(o->runs, sizeof *serial);
  double *spanv = calloc(o->runs, sizeof *spanv), *ov = calloc(o->runs, sizeof *ov);
  double *busy0 = calloc(o->runs, sizeof *busy0), *busy1 = calloc(o->runs, sizeof *busy1);
  uint64_t *one0 = calloc(o->runs, sizeof *one0), *one1 = calloc(o->runs, sizeof *one1);
  if (!regions || !scratch || !wall || !serial || !spanv || !ov || !busy0 || !busy1 || !one0 ||
      !one1) {
    fprintf(stderr, "gpus: out of memory\n");
    exit(1);
  }
  tandem_statistics_t st0, st1;
  tandem_statistics_init(&st0);
  tandem_statistics_init(&st1);
  /* A warm-up run of each, checked like the rest. */
  split_fill(s, o->chunks, 0);
  uint32_t n;
  run_profiled(s->all, regions, cap, &n);
  split_check(s, o->chunks, 0);
  run_profiled(s->one, regions, cap, &n);
  split_check(s, 1, 0);
  CHECK(tandem_runtime_statistics(rt, &st0));
  for (uint32_t run = 1; run <= o->runs; run++) {
    uint32_t i = run - 1;
    split_fill(s, o->chunks, run);
    wall[i] = run_profiled(s->all, regions, cap, &n);
    double busy[2], overlap, span;
    analyse(regions, n, scratch, busy, &overlap, &span);
    spanv[i] = span, ov[i] = overlap, busy0[i] = busy[0], busy1[i] = busy[1];
    split_check(s, o->chunks, run);
    if (run == o->runs) {
      memcpy(last_regions, regions, n * sizeof *regions);
      *last_count = n;
    }
    /* The same chunks one at a time: chunk 0's graph K times, each waited. */
    CHECK(tandem_runtime_statistics(rt, &st1));
    res->copied_bytes = st1.copied_bytes - st0.copied_bytes;
    uint64_t t = 0, g0 = 0, g1 = 0;
    for (uint32_t k = 0; k < o->chunks; k++) {
      t += run_profiled(s->one, regions, cap, &n);
      analyse(regions, n, scratch, busy, &overlap, &span);
      g0 += (uint64_t)(busy[0] * 1e3), g1 += (uint64_t)(busy[1] * 1e3);
    }
    serial[i] = t;
    one0[i] = g0 / o->chunks, one1[i] = g1 / o->chunks;
    split_check(s, 1, run);
    CHECK(tandem_runtime_statistics(rt, &st0));
  }
  res->wall_us = median_of(wall, o->runs) / 1e3;
  res->serial_us = median_of(serial, o->runs) / 1e3;
  res->one_chunk_gpu_us[0] = median_of(one0, o->runs) / 1e3;
  res->one_chunk_gpu_us[1] = median_of(one1, o->runs) / 1e3;
  /* Medians of the doubles, through integer nanoseconds. */
  uint64_t *tmp = calloc(o->runs, sizeof *tmp);
  double *src[4] = {spanv, ov, busy0, busy1};
  double *dst[4] = {&res->span_us, &res->overlap_us, &res->busy_us[0], &res->busy_us[1]};
  for (int q = 0; q < 4; q++) {
    for (uint32_t k = 0; k < o->runs; k++) tmp[k] = (uint64_t)(src[q][k] * 1e3);
    *dst[q] = median_of(tmp, o->runs) / 1e3;
  }
  free(tmp);
  free(regions), free(scratch), free(wall), free(serial), free(spanv), free(ov);
  free(busy0), free(busy1), free(one0), free(one1);
}

/*--------------------------------------------------------------------------
 * hand-over: tandem's relay against raw Vulkan on the same two devices
 *--------------------------------------------------------------------------*/

typedef struct raw_side {
  raw_t dev[2];
  raw_kernel_t inc[2];
  raw_buffer_t r0, stage[2], r1, readback;
  void *host;
  VkCommandBuffer cb[2];
  VkDescriptorSet set[2];
  uint64_t spin_ns;
} raw_side_t;

/* Submits |cb| on GPU |g|'s compute queue (under tandem's queue lock) and
 * waits as tandem waits: polls the timeline for spin_ns, then blocks. */
static void raw_submit_wait(tandem_runtime_t *rt, raw_side_t *r, uint32_t g) {
  raw_t *raw = &r->dev[g];
  const int lane = TANDEM_LANE_COMPUTE;
  uint64_t value = ++raw->value[lane];
  VKCHECK(bench_vk_submit_one(&raw->vk, rt, tandem_gpu_lane(g, TANDEM_LANE_COMPUTE),
                              raw->queue[lane], r->cb[g], raw->timeline[lane], value));
  uint64_t until = now_ns() + r->spin_ns, v = 0;
  while (v < value && now_ns() < until)
    VKCHECK(raw->vk.vkGetSemaphoreCounterValue(raw->device, raw->timeline[lane], &v));
  if (v < value) {
    VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                              .semaphoreCount = 1,
                              .pSemaphores = &raw->timeline[lane],
                              .pValues = &value};
    VKCHECK(raw->vk.vkWaitSemaphores(raw->device, &wi, UINT64_MAX));
  }
}

/* GPU |g|'s increment of its 256 bytes, one workgroup, into |cb|. */
static void record_increment(raw_side_t *r, uint32_t g, VkCommandBuffer cb) {
  raw_t *d = &r->dev[g];
  d->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->inc[g].pipeline);
  d->vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->inc[g].layout, 0, 1,
                                &r->set[g], 0, NULL);
  d->vk.vkCmdDispatch(cb, 1, 1, 1);
}

/* False (with the reason printed) when the raw side cannot run here. */
static bool raw_side_open(tandem_runtime_t *rt, raw_side_t *r, uint32_t spin_us) {
  memset(r, 0, sizeof *r);
  for (uint32_t g = 0; g < 2; g++)
    if (strcmp(tandem_runtime_gpu_backend(rt, g), "vulkan") != 0) {
      printf("hand-over, raw: GPU %u is not a Vulkan device; raw side not run\n", g);
      return false;
    }
  r->spin_ns = (uint64_t)spin_us * 1000u;
  for (uint32_t g = 0; g < 2; g++) {
    raw_open_at(&r->dev[g], rt, g);
    if (!r->dev[g].host_import) {
      printf("hand-over, raw: GPU %u cannot import host memory; raw side not run\n", g);
      for (uint32_t h = 0; h <= g; h++) raw_close(&r->dev[h]);
      return false;
    }
    raw_kernel_create(&r->dev[g], tandem_spv_bench_increment, tandem_spv_bench_increment_size, 1, 0,
                      &r->inc[g]);
  }
  raw_t *d0 = &r->dev[0], *d1 = &r->dev[1];
  VkDeviceSize align = d0->host_import_alignment > d1->host_import_alignment
                           ? d0->host_import_alignment
                           : d1->host_import_alignment;
  if (align < HANDOVER_BYTES) align = HANDOVER_BYTES;
  if (posix_memalign(&r->host, (size_t)align, (size_t)align) != 0) bench_die("out of memory");
  memset(r->host, 0, (size_t)align);
  raw_buffer_create(d0, HANDOVER_BYTES, false, &r->r0);
  raw_buffer_import_host(d0, r->host, align, &r->stage[0]);
  raw_buffer_import_host(d1, r->host, align, &r->stage[1]);
  raw_buffer_create(d1, HANDOVER_BYTES, false, &r->r1);
  raw_buffer_create(d1, HANDOVER_BYTES, true, &r->readback);
  VkDeviceSize off = 0, range = HANDOVER_BYTES;
  r->set[0] = raw_descriptor_set(d0, &r->inc[0], &r->r0.buffer, &off, &range);
  r->set[1] = raw_descriptor_set(d1, &r->inc[1], &r->r1.buffer, &off, &range);
  VkBufferCopy region = {.size = HANDOVER_BYTES};
  /* GPU 0's zero fill, once. */
  VkCommandBuffer zero = raw_begin(d0, TANDEM_LANE_COMPUTE);
  d0->vk.vkCmdFillBuffer(zero, r->r0.buffer, 0, HANDOVER_BYTES, 0);
  VKCHECK(d0->vk.vkEndCommandBuffer(zero));
  raw_run(d0, TANDEM_LANE_COMPUTE, &zero, 1);
  d0->vk.vkFreeCommandBuffers(d0->device, d0->pool[TANDEM_LANE_COMPUTE], 1, &zero);
  /* GPU 0: increment, then into the host memory both import. */
  VkCommandBuffer cb = r->cb[0] = raw_begin(d0, TANDEM_LANE_COMPUTE);
  raw_barrier(d0, cb, VK_PIPELINE_STAGE_2_CLEAR_BIT | VK_PIPELINE_STAGE_2_COPY_BIT,
              VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_TRANSFER_READ_BIT,
              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
              VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
  record_increment(r, 0, cb);
  raw_barrier(d0, cb, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
  d0->vk.vkCmdCopyBuffer(cb, r->r0.buffer, r->stage[0].buffer, 1, &region);
  raw_barrier(d0, cb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
  VKCHECK(d0->vk.vkEndCommandBuffer(cb));
  /* GPU 1: from the host memory, increment, read back. */
  cb = r->cb[1] = raw_begin(d1, TANDEM_LANE_COMPUTE);
  raw_barrier(d1, cb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT,
              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
  d1->vk.vkCmdCopyBuffer(cb, r->stage[1].buffer, r->r1.buffer, 1, &region);
  raw_barrier(d1, cb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
              VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
  record_increment(r, 1, cb);
  raw_barrier(d1, cb, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
  d1->vk.vkCmdCopyBuffer(cb, r->r1.buffer, r->readback.buffer, 1, &region);
  raw_barrier(d1, cb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
  VKCHECK(d1->vk.vkEndCommandBuffer(cb));
  return true;
}

static void raw_side_close(raw_side_t *r) {
  for (uint32_t g = 0; g < 2; g++) {
    raw_t *d = &r->dev[g];
    d->vk.vkFreeCommandBuffers(d->device, d->pool[TANDEM_LANE_COMPUTE], 1, &r->cb[g]);
    raw_buffer_destroy(d, &r->stage[g]);
    raw_kernel_destroy(d, &r->inc[g]);
  }
  raw_buffer_destroy(&r->dev[0], &r->r0);
  raw_buffer_destroy(&r->dev[1], &r->r1);
  raw_buffer_destroy(&r->dev[1], &r->readback);
  raw_close(&r->dev[0]);
  raw_close(&r->dev[1]);
  free(r->host);
}

static void check_words(const uint32_t *w, uint32_t want, const char *side, uint32_t round) {
  for (uint32_t i = 0; i < HANDOVER_WORDS; i++)
    if (w[i] != want) {
      fprintf(stderr, "gpus: hand-over %u, %s: word %u is %u, expected %u\n", round, side, i, w[i],
              want);
      exit(1);
    }
}

/* One tandem hand-over graph: increment on GPU 0, across, increment on GPU
 * 1, read back. |one_lane|: every node on its GPU's compute lane (one
 * region per GPU, as the raw side records it); else the lanes tandem picks
 * (the copy across as a download on GPU 0 and an upload on GPU 1). */
typedef struct handover_graph {
  tandem_kernel_t *inc[2];
  tandem_buffer_t *a0, *b1, *hb1;
  tandem_exec_t *exec;
  uint32_t rounds; /* runs so far: the read-back holds rounds + 1 */
} handover_graph_t;

static void handover_make(tandem_runtime_t *rt, bool one_lane, handover_graph_t *h) {
  memset(h, 0, sizeof *h);
  tandem_binding_contract_t bc = {HANDOVER_BYTES, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t kd;
  tandem_kernel_desc_init(&kd);
  kd.spirv = tandem_spv_bench_increment;
  kd.spirv_size = tandem_spv_bench_increment_size;
  kd.bindings = &bc;
  kd.binding_count = 1;
  kd.workgroups[0] = kd.workgroups[1] = kd.workgroups[2] = 1;
  kernel_on_each_gpu(rt, &kd, "increment", h->inc);
  CHECK(tandem_buffer_create_on(rt, 0, HANDOVER_BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &h->a0));
  CHECK(tandem_buffer_create_on(rt, 1, HANDOVER_BYTES, TANDEM_PLACEMENT_GPU_LOCAL, &h->b1));
  CHECK(tandem_buffer_create_on(rt, 1, HANDOVER_BYTES, TANDEM_PLACEMENT_HOST_VISIBLE, &h->hb1));
  tandem_lane_t lane = one_lane ? TANDEM_LANE_COMPUTE : TANDEM_LANE_AUTO;
  tandem_graph_t *g;
  CHECK(tandem_graph_create(rt, &g));
  tandem_view_t va = tandem_buffer_whole(h->a0), vb = tandem_buffer_whole(h->b1);
  CHECK(tandem_graph_add_dispatch(g, h->inc[0], &va, 1, NULL, 0));
  CHECK(tandem_graph_add_copy(g, va, vb, lane));
  CHECK(tandem_graph_add_dispatch(g, h->inc[1], &vb, 1, NULL, 0));
  CHECK(tandem_graph_add_copy(g, vb, tandem_buffer_whole(h->hb1), lane));
  CHECK(tandem_graph_prepare(g, &h->exec));
  tandem_graph_release(g);
}

static void handover_free(handover_graph_t *h) {
  tandem_exec_release(h->exec);
  tandem_buffer_release(h->a0), tandem_buffer_release(h->b1), tandem_buffer_release(h->hb1);
  tandem_kernel_release(h->inc[0]), tandem_kernel_release(h->inc[1]);
}

/* One run, checked; its wall time, and with GPU timestamps (|gap| not NULL)
 * GPU 1's first start minus GPU 0's last end. */
static uint64_t handover_round(handover_graph_t *h, const char *side, uint64_t *gap) {
  tandem_completion_t *c;
  uint64_t t0 = now_ns();
  CHECK(tandem_exec_submit(h->exec, &c));
  CHECK(tandem_completion_wait(c));
  uint64_t wall = now_ns() - t0;
  h->rounds++;
  if (gap) {
    tandem_region_profile_t regions[16];
    tandem_completion_profile_t p;
    tandem_completion_profile_init(&p);
    CHECK(tandem_completion_profile(c, &p, regions, 16));
    uint64_t end0 = 0, start1 = UINT64_MAX;
    for (uint32_t k = 0; k < p.region_count && k < 16; k++) {
      int on = lane_gpu(regions[k].lane);
      if (on == 0 && regions[k].gpu_end_ns > end0) end0 = regions[k].gpu_end_ns;
      if (on == 1 && regions[k].gpu_start_ns < start1) start1 = regions[k].gpu_start_ns;
    }
    *gap = p.gpu_times_valid && start1 != UINT64_MAX && start1 >= end0 ? start1 - end0 : 0;
  }
  tandem_completion_release(c);
  tandem_map_t m;
  CHECK(tandem_map_read(tandem_buffer_whole(h->hb1), &m));
  check_words(m.data, h->rounds + 1, side, h->rounds);
  tandem_unmap(&m);
  return wall;
}

/* The relay's gap by GPU timestamps (a runtime with gpu_timestamps): median
 * over |n| runs of each graph, [0] tandem's lanes, [1] one lane per GPU. */
static void handover_gaps(tandem_runtime_t *rt, uint32_t n, double gap_us[2]) {
  uint64_t *v = calloc(n, sizeof *v);
  if (!v) bench_die("out of memory");
  for (int one = 0; one < 2; one++) {
    handover_graph_t h;
    handover_make(rt, one, &h);
    handover_round(&h, one ? "tandem, one lane" : "tandem", &v[0]); /* warm-up */
    for (uint32_t i = 0; i < n; i++) handover_round(&h, one ? "tandem, one lane" : "tandem", &v[i]);
    gap_us[one] = median_of(v, n) / 1e3;
    handover_free(&h);
  }
  free(v);
}

typedef struct handover_result {
  double tandem_us, one_lane_us, raw_us, floor_us[2], gap_us[2];
  bool raw;
} handover_result_t;

/* The timed rows, alternated round by round (the order rotating), on a
 * runtime without GPU timestamps (the raw side records none): tandem's
 * lanes, one lane per GPU, raw; then each raw half alone. */
static void handover(tandem_runtime_t *rt, const options_t *o, uint32_t spin_us,
                     handover_result_t *res) {
  handover_graph_t lanes, one;
  handover_make(rt, false, &lanes);
  handover_make(rt, true, &one);
  raw_side_t r;
  res->raw = raw_side_open(rt, &r, spin_us);
  uint32_t n = o->handovers, raw_rounds = 0;
  uint64_t *t = calloc(n, sizeof *t), *t1 = calloc(n, sizeof *t1), *w = calloc(n, sizeof *w),
           *f0 = calloc(n, sizeof *f0), *f1 = calloc(n, sizeof *f1);
  if (!t || !t1 || !w || !f0 || !f1) bench_die("out of memory");
  /* A warm-up round (0), then |n| timed. */
  for (uint32_t i = 0; i <= n; i++) {
    for (uint32_t k = 0; k < 3; k++) {
      uint32_t row = (i + k) % 3;
      uint64_t wall = 0;
      if (row == 0) {
        wall = handover_round(&lanes, "tandem", NULL);
      } else if (row == 1) {
        wall = handover_round(&one, "tandem, one lane", NULL);
      } else if (res->raw) {
        uint64_t t0 = now_ns();
        raw_submit_wait(rt, &r, 0);
        raw_submit_wait(rt, &r, 1);
        wall = now_ns() - t0;
        raw_rounds++;
        check_words(r.readback.mapped, raw_rounds + 1, "raw", i);
      }
      if (i) (row == 0 ? t : row == 1 ? t1 : w)[i - 1] = wall;
    }
  }
  res->tandem_us = median_of(t, n) / 1e3;
  res->one_lane_us = median_of(t1, n) / 1e3;
  if (res->raw) {
    res->raw_us = median_of(w, n) / 1e3;
    /* Each device's half alone: GPU 0's (its increments are not read back
     * here), then GPU 1's on what GPU 0 left in the host memory. */
    for (uint32_t i = 0; i < n; i++) {
      uint64_t t0 = now_ns();
      raw_submit_wait(rt, &r, 0);
      f0[i] = now_ns() - t0;
      t0 = now_ns();
      raw_submit_wait(rt, &r, 1);
      f1[i] = now_ns() - t0;
    }
    raw_rounds += n;
    check_words(r.readback.mapped, raw_rounds + 1, "raw", n + 1);
    res->floor_us[0] = median_of(f0, n) / 1e3;
    res->floor_us[1] = median_of(f1, n) / 1e3;
    raw_side_close(&r);
  }
  free(t), free(t1), free(w), free(f0), free(f1);
  handover_free(&lanes);
  handover_free(&one);
}

/*--------------------------------------------------------------------------
 * Clock drift: each Vulkan GPU's timestamp counter against CLOCK_MONOTONIC
 *--------------------------------------------------------------------------*/

/* A calibrated pair on tandem's device for GPU |g| (the runtime has GPU
 * timestamps, so VK_EXT_calibrated_timestamps is enabled where it exists);
 * false where it cannot be taken. */
typedef struct clock_probe {
  raw_t raw;
  bool ok;
  uint64_t tick, host;
  double period;
} clock_probe_t;

static bool clock_pair(clock_probe_t *c, uint64_t *tick, uint64_t *host) {
  if (!c->raw.vk.vkGetCalibratedTimestampsEXT) return false;
  VkCalibratedTimestampInfoEXT info[2] = {{.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                                           .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT},
                                          {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                                           .timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
  uint64_t values[2], deviation;
  if (c->raw.vk.vkGetCalibratedTimestampsEXT(c->raw.device, 2, info, values, &deviation) !=
      VK_SUCCESS)
    return false;
  *tick = values[0], *host = values[1];
  return true;
}

static void clock_start(tandem_runtime_t *rt, uint32_t g, clock_probe_t *c) {
  memset(c, 0, sizeof *c);
  if (strcmp(tandem_runtime_gpu_backend(rt, g), "vulkan") != 0) return;
  raw_open_at(&c->raw, rt, g);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(c->raw.physical, &props);
  c->period = props.limits.timestampPeriod;
  c->ok = clock_pair(c, &c->tick, &c->host);
}

/* The counter's rate against the host's clock since clock_start, in parts
 * per million off the device's nominal period; NAN when not measured. */
static double clock_drift_ppm(clock_probe_t *c, double *seconds) {
  double ppm = NAN;
  uint64_t tick, host;
  *seconds = 0;
  if (c->ok && clock_pair(c, &tick, &host) && tick > c->tick) {
    *seconds = (double)(host - c->host) / 1e9;
    ppm = ((double)(host - c->host) / ((double)(tick - c->tick) * c->period) - 1.0) * 1e6;
  }
  if (c->raw.device) raw_close(&c->raw);
  return ppm;
}

/*--------------------------------------------------------------------------
 * Options and the report
 *--------------------------------------------------------------------------*/

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--gpus B:I,B:I] [--chunks K] [--chunk-kib N] [--rounds0 R] [--rounds1 R]\n"
          "          [--runs N] [--handovers N] [--trace PATH] [--json PATH] | --smoke\n",
          argv0);
}

static bool parse_gpu(const char *text, tandem_gpu_choice_t *out, char *keep, size_t n) {
  const char *colon = strchr(text, ':');
  if (!colon || colon == text || (size_t)(colon - text) >= n) return false;
  char *end;
  unsigned long index = strtoul(colon + 1, &end, 10);
  if (*end || end == colon + 1) return false;
  memcpy(keep, text, (size_t)(colon - text));
  keep[colon - text] = 0;
  out->backend = keep;
  out->index = (uint32_t)index;
  return true;
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out) {
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (*end || end == s || v < lo || v > hi) return false;
  *out = (uint32_t)v;
  return true;
}

static int parse(int argc, char **argv, options_t *o) {
  memset(o, 0, sizeof *o);
  const char *gpus = "vulkan:0,vulkan:1";
  o->chunks = 8, o->chunk_kib = 4096, o->rounds[0] = o->rounds[1] = 1024;
  o->runs = 20, o->handovers = 200;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool ok = true;
    if (!strcmp(a, "--smoke")) {
      o->smoke = true;
      gpus = "vulkan:0,host:0";
      o->chunks = 4, o->chunk_kib = 64, o->rounds[0] = o->rounds[1] = 16;
      o->runs = 2, o->handovers = 5;
      continue;
    }
    if (!v) ok = false;
    else if (!strcmp(a, "--gpus")) gpus = v;
    else if (!strcmp(a, "--chunks")) ok = parse_u32(v, 1, MAX_CHUNKS, &o->chunks);
    else if (!strcmp(a, "--chunk-kib")) ok = parse_u32(v, 1, 65536, &o->chunk_kib);
    else if (!strcmp(a, "--rounds0")) ok = parse_u32(v, 0, 65535, &o->rounds[0]);
    else if (!strcmp(a, "--rounds1")) ok = parse_u32(v, 0, 65535, &o->rounds[1]);
    else if (!strcmp(a, "--runs")) ok = parse_u32(v, 1, 100000, &o->runs);
    else if (!strcmp(a, "--handovers")) ok = parse_u32(v, 1, 1000000, &o->handovers);
    else if (!strcmp(a, "--trace")) o->trace = v;
    else if (!strcmp(a, "--json")) o->json = v;
    else ok = false;
    if (!ok) {
      if (v) fprintf(stderr, "gpus: %s %s: not understood\n", a, v);
      usage(argv[0]);
      return 2;
    }
    i++;
  }
  const char *comma = strchr(gpus, ',');
  char first[64];
  if (!comma || (size_t)(comma - gpus) >= sizeof first) {
    fprintf(stderr, "gpus: --gpus %s: two GPUs, as backend:index,backend:index\n", gpus);
    return 2;
  }
  memcpy(first, gpus, (size_t)(comma - gpus));
  first[comma - gpus] = 0;
  if (!parse_gpu(first, &o->gpus[0], o->gpu_text[0], sizeof o->gpu_text[0]) ||
      !parse_gpu(comma + 1, &o->gpus[1], o->gpu_text[1], sizeof o->gpu_text[1])) {
    fprintf(stderr, "gpus: --gpus %s: each GPU as backend:index (vulkan:1, host:0)\n", gpus);
    return 2;
  }
  return 0;
}

int main(int argc, char **argv) {
  options_t o;
  int rc = parse(argc, argv, &o);
  if (rc) return rc;
  for (uint32_t g = 0; g < 2; g++)
    if (!strcmp(o.gpus[g].backend, "host")) {
      CHECK(tandem_test_host_kernel_register(tandem_spv_bench_work, tandem_spv_bench_work_size,
                                             "main", twin_work));
      CHECK(tandem_test_host_kernel_register(
          tandem_spv_bench_increment, tandem_spv_bench_increment_size, "main", twin_increment));
    }
  tandem_runtime_options_t ro;
  tandem_runtime_options_init(&ro);
  ro.gpu_count = 2;
  memcpy(ro.gpus, o.gpus, sizeof o.gpus);
  ro.gpu_timestamps = true;
  ro.validation = o.smoke;
  ro.validation_callback = on_validation;
  tandem_runtime_t *rt;
  CHECK(tandem_runtime_create(&ro, &rt));
  if (o.trace) CHECK(tandem_runtime_trace_start(rt, 1u << 16));
  CHECK(tandem_runtime_open_gpu_at(rt, 0));
  CHECK(tandem_runtime_open_gpu_at(rt, 1));
  tandem_device_info_t info[2];
  for (uint32_t g = 0; g < 2; g++) {
    tandem_device_info_init(&info[g]);
    CHECK(tandem_runtime_gpu_describe(rt, g, &info[g]));
    printf("GPU %u: %s (%s:%u; %s %s)\n", g, info[g].name, o.gpus[g].backend, o.gpus[g].index,
           info[g].driver_name, info[g].driver_info);
  }
  tandem_gpu_pair_info_t pair;
  tandem_gpu_pair_info_init(&pair);
  CHECK(tandem_runtime_gpu_pair(rt, 0, 1, &pair));
  printf("path: copy %s, waits %s\n  %s\n", pair.can_copy ? tandem_sharing_name(pair.copy) : "none",
         pair.waits_on_gpu ? "on the GPU" : "through the relay", pair.reason);
  if (!pair.can_copy) { /* nothing to measure: the pair has no copy path */
    bench_runtime_destroy(rt);
    return 77;
  }
  uint32_t spin_us = ro.wait_spin_us;
  clock_probe_t clocks[2];
  for (uint32_t g = 0; g < 2; g++) clock_start(rt, g, &clocks[g]);

  split_t s;
  split_make(rt, &s, &o);
  split_result_t sr;
  memset(&sr, 0, sizeof sr);
  tandem_region_profile_t *last = calloc(16u * o.chunks + 16u, sizeof *last);
  uint32_t last_count = 0;
  if (!last) bench_die("out of memory");
  split_run(rt, &s, &o, &sr, last, &last_count);
  double ideal = sr.busy_us[0] > sr.busy_us[1] ? sr.busy_us[0] : sr.busy_us[1];
  double lesser = sr.busy_us[0] < sr.busy_us[1] ? sr.busy_us[0] : sr.busy_us[1];
  printf("\nsplit: %u chunks of %u KiB, %u rounds on GPU 0 and %u on GPU 1, %u runs (medians); "
         "every word of every run checked against the CPU\n",
         o.chunks, o.chunk_kib, o.rounds[0], o.rounds[1], o.runs);
  printf("  one graph, all chunks:   wall %10.1f us, GPU span %10.1f us\n", sr.wall_us, sr.span_us);
  printf("  GPU 0 busy %10.1f us, GPU 1 busy %10.1f us, both at once %10.1f us (%.0f%% of the "
         "lesser)\n",
         sr.busy_us[0], sr.busy_us[1], sr.overlap_us,
         lesser > 0 ? 100.0 * sr.overlap_us / lesser : 0);
  printf("  ideal (the busier GPU alone) %10.1f us: span / ideal = %.2f\n", ideal,
         ideal > 0 ? sr.span_us / ideal : 0);
  printf("  one chunk at a time x%u:  wall %10.1f us (one chunk: GPU 0 %.1f us, GPU 1 %.1f us "
         "busy): the graph takes %.2f of it\n",
         o.chunks, sr.serial_us, sr.one_chunk_gpu_us[0], sr.one_chunk_gpu_us[1],
         sr.serial_us > 0 ? sr.wall_us / sr.serial_us : 0);
  printf("  copied bytes per run %llu (upload, across as download + upload, download)\n",
         (unsigned long long)sr.copied_bytes);
  printf("  last run's regions (GPU timestamps, us from the first start):\n");
  uint64_t t0 = UINT64_MAX;
  for (uint32_t i = 0; i < last_count; i++)
    if (last[i].gpu_start_ns < t0) t0 = last[i].gpu_start_ns;
  for (uint32_t i = 0; i < last_count && i < 48; i++) {
    tandem_lane_info_t li;
    tandem_lane_info_init(&li);
    CHECK(tandem_runtime_lane_info(rt, (int)last[i].lane, &li));
    printf("    %-14s %3u node(s) %10.1f .. %10.1f\n", li.name, last[i].node_count,
           (double)(last[i].gpu_start_ns - t0) / 1e3, (double)(last[i].gpu_end_ns - t0) / 1e3);
  }
  if (last_count > 48) printf("    (%u more)\n", last_count - 48);

  handover_result_t hr;
  memset(&hr, 0, sizeof hr);
  handover_gaps(rt, o.handovers < 40 ? o.handovers : 40, hr.gap_us);
  double drift[2], drift_s[2];
  printf("\nclocks: each GPU's timestamp counter against CLOCK_MONOTONIC (what tandem's "
         "calibration corrects)\n");
  for (uint32_t g = 0; g < 2; g++) {
    drift[g] = clock_drift_ppm(&clocks[g], &drift_s[g]);
    if (!isnan(drift[g]))
      printf("  GPU %u: %+.2f ppm off its nominal period over %.1f s (%.1f us per second)\n", g,
             drift[g], drift_s[g], drift[g]);
    else printf("  GPU %u: not measured (no Vulkan calibrated timestamps)\n", g);
  }
  free(last);
  for (uint32_t k = 0; k < o.chunks; k++) {
    tandem_buffer_release(s.in[k]), tandem_buffer_release(s.a[k]), tandem_buffer_release(s.a2[k]);
    tandem_buffer_release(s.b[k]), tandem_buffer_release(s.b2[k]), tandem_buffer_release(s.out[k]);
  }
  tandem_exec_release(s.all);
  tandem_exec_release(s.one);
  if (o.trace) {
    tandem_trace_t *trace;
    CHECK(tandem_runtime_trace_stop(rt, &trace));
    CHECK(tandem_trace_write_json(trace, o.trace));
    tandem_trace_release(trace);
  }
  rc = bench_runtime_destroy(rt);
  /* The timed hand-over on a runtime without GPU timestamps, as the raw side
   * has none (a timestamp query per region costs a software driver a lot);
   * made after the first is gone, so only one pair of devices exists. */
  ro.gpu_timestamps = false;
  CHECK(tandem_runtime_create(&ro, &rt));
  handover(rt, &o, spin_us, &hr);
  printf("\nhand-over: %u B, GPU 0 increment -> across -> GPU 1 increment -> read back; %u "
         "rounds, alternated, medians, no GPU timestamps; every round checked\n",
         HANDOVER_BYTES, o.handovers);
  printf("  tandem, its lanes (3 regions per GPU) %8.1f us\n", hr.tandem_us);
  printf("  tandem, one lane per GPU              %8.1f us\n", hr.one_lane_us);
  if (hr.raw) {
    printf("  raw Vulkan, same devices and queues   %8.1f us (GPU 0 submit+wait, GPU 1 "
           "submit+wait)\n",
           hr.raw_us);
    printf("  one lane / raw = %.2f, lanes / raw = %.2f; floor: GPU 0's half alone %.1f us + "
           "GPU 1's %.1f us = %.1f us\n",
           hr.raw_us > 0 ? hr.one_lane_us / hr.raw_us : 0,
           hr.raw_us > 0 ? hr.tandem_us / hr.raw_us : 0, hr.floor_us[0], hr.floor_us[1],
           hr.floor_us[0] + hr.floor_us[1]);
  }
  printf("  GPU 0's last end to GPU 1's first start (GPU timestamps, the first runtime): %.1f us "
         "with tandem's lanes, %.1f us with one lane\n",
         hr.gap_us[0], hr.gap_us[1]);
  if (o.json) {
    FILE *f = fopen(o.json, "w");
    if (!f) bench_die("cannot write %s", o.json);
    fprintf(f, "{\"tool\": \"tandem_bench_gpus\", \"gpus\": [\"%s:%u\", \"%s:%u\"],\n",
            o.gpus[0].backend, o.gpus[0].index, o.gpus[1].backend, o.gpus[1].index);
    fprintf(f, " \"copy_path\": \"%s\", \"waits_on_gpu\": %s,\n", tandem_sharing_name(pair.copy),
            pair.waits_on_gpu ? "true" : "false");
    fprintf(f, " \"clock_drift_ppm\": [");
    for (uint32_t g = 0; g < 2; g++) {
      if (!isnan(drift[g])) fprintf(f, "%s%.3f", g ? ", " : "", drift[g]);
      else fprintf(f, "%snull", g ? ", " : "");
    }
    fprintf(f, "],\n");
    fprintf(f,
            " \"split\": {\"chunks\": %u, \"chunk_kib\": %u, \"rounds\": [%u, %u], \"runs\": %u, "
            "\"wall_us\": %.1f, \"span_us\": %.1f, \"busy_us\": [%.1f, %.1f], \"overlap_us\": "
            "%.1f, \"serial_us\": %.1f, \"copied_bytes\": %llu},\n",
            o.chunks, o.chunk_kib, o.rounds[0], o.rounds[1], o.runs, sr.wall_us, sr.span_us,
            sr.busy_us[0], sr.busy_us[1], sr.overlap_us, sr.serial_us,
            (unsigned long long)sr.copied_bytes);
    fprintf(f,
            " \"handover\": {\"rounds\": %u, \"tandem_us\": %.1f, \"one_lane_us\": %.1f, "
            "\"gap_us\": [%.1f, %.1f]",
            o.handovers, hr.tandem_us, hr.one_lane_us, hr.gap_us[0], hr.gap_us[1]);
    if (hr.raw)
      fprintf(f, ", \"raw_us\": %.1f, \"floor_us\": [%.1f, %.1f]", hr.raw_us, hr.floor_us[0],
              hr.floor_us[1]);
    fprintf(f, "}}\n");
    fclose(f);
  }
  return bench_runtime_destroy(rt) | rc;
}
