/* SPDX-License-Identifier: MIT */
/*
 * bench.c — `tandem-bench`: tandem against raw Vulkan doing the same work in
 * one process, alternated (tandem, direct, tandem, direct, ...), median of
 * many runs. This file holds the options, the dispatch benchmarks, the
 * calls of the others and the report (table and --json); the timing loop
 * and the statistics they all use are bench_lab.c's:
 *   dispatch        1 dispatch of a tiny kernel (1 workgroup of 64 threads)
 *   independent100  100 dispatches on disjoint ranges: no barriers
 *   chain100        100 read-modify-write dispatches on one range
 *   transfer        upload and download bandwidth (bench_stream.c)
 *   overlap         chunked upload → compute → download vs its ideal
 *   barriers        the GPU cost of one dependency: memory, buffer and event
 *                   barriers over 1000-dispatch chains (bench_barriers.c)
 *   copies          raw copies in every host-visible memory type, on each
 *                   queue and split over queues, beside tandem's copies
 *                   (bench_copies.c)
 * One timed iteration is submit + wait on CLOCK_MONOTONIC; every benchmark
 * reads its results back on both sides and checks them.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_barriers.h"
#include "bench_copies.h"
#include "bench_lab.h"
#include "bench_npu_edge.h"
#include "bench_stream.h"
#include "cmdline/cmdline.h"
#include "internal/json_string.h"
#include "tandem_bench_shaders.h"

#define RANGE_BYTES 256u
#define RANGE_WORDS (RANGE_BYTES / 4u)
#define MAX_NODES 1000u
#define WRITE_VALUE(node) (1u + (uint32_t)(node)*1000u)

static const char *const bench_names[] = {"dispatch",        "independent100", "chain100",
                                          "independent1000", "chain1000",      "transfer",
                                          "overlap",         "npu-edge",       "copies",
                                          "barriers"};
#define BENCH_NAME_COUNT (sizeof bench_names / sizeof bench_names[0])

static void usage(FILE *f) {
  fputs("usage: tandem-bench [options]\n"
        "\n"
        "Measures tandem against raw Vulkan doing the same work in the same process.\n"
        "Each benchmark alternates one tandem run and one direct run per iteration and\n"
        "times submit + wait of each; the ratio is tandem/direct (1.00 = no overhead).\n"
        "Results are verified by reading them back. Progress goes to stderr.\n"
        "\n"
        "benchmarks:\n"
        "  dispatch         one dispatch of a 64-thread kernel\n"
        "  independent100   100 dispatches on disjoint ranges (no barriers)\n"
        "  chain100         100 dependent dispatches on one range (barrier between each)\n"
        "  independent1000, chain1000\n"
        "                   the same with 1000 nodes (per-node cost of long graphs)\n"
        "  transfer         upload and download of 64 MiB (copy nodes vs vkCmdCopyBuffer\n"
        "                   on the transfer queues), GB/s\n"
        "  overlap          K chunks of upload -> compute -> download in one graph vs\n"
        "                   the same on three raw queues; achieved time against the\n"
        "                   ideal (the busiest lane's time alone), as % of ideal\n"
        "  npu-edge         GPU -> NPU -> GPU through one graph on SHARED buffers vs\n"
        "                   raw Vulkan + direct XRT calls on the emulated NPU, each\n"
        "                   step waited for (needs the emulated NPU and host-memory import)\n"
        "  copies           vkCmdCopyBuffer up and down in every HOST_VISIBLE memory type\n"
        "                   on each of tandem's queues, both directions at once, split\n"
        "                   over queues and regions (GPU timestamps and wall time),\n"
        "                   host memcpy through each mapping, and tandem's copies and\n"
        "                   memory types beside them; --transfer-mib sets the size\n"
        "  barriers         what one dependency between dispatches costs the GPU: memory,\n"
        "                   buffer and event (split) barriers over 1000-dispatch chains,\n"
        "                   raw Vulkan, GPU timestamps (bench_barriers.c)\n"
        "\n"
        "options:\n"
        "  --only NAME      run only the named benchmark\n"
        "  --quick          fewer iterations and smaller transfers (smoke test)\n"
        "  --iterations N   timed iterations of the dispatch benchmarks (default 2000)\n"
        "  --warmup N       untimed iterations first (default 200)\n"
        "  --stream-iterations N  timed iterations of transfer/overlap (default 30)\n"
        "  --transfer-mib N transfer size in MiB (default 64, at most 1/8 of device memory)\n"
        "  --chunks K       overlap chunks (default 16)\n"
        "  --chunk-kib N    overlap chunk size in KiB (default 4096)\n"
        "  --rounds N       overlap compute work per element (default 64)\n"
        "                   The defaults suit a discrete GPU; on a software device\n"
        "                   (lavapipe) or with --quick, those not given shrink to\n"
        "                   300/30/10 iterations, 16 MiB, 8 x 512 KiB, 16 rounds\n"
        "                   (--quick: 100/10/2, 4 MiB, 8 x 128 KiB, 8 rounds).\n"
        "  --gpu N          Vulkan physical device index for both sides (default:\n"
        "                   the environment variable TANDEM_GPU, else 0)\n"
        "  --direct-first   run direct before tandem in each pair (order-bias check)\n"
        "  --spin           dispatch rows: both sides poll for completion\n"
        "  --direct-spin    dispatch rows: the direct side polls (the floor), tandem\n"
        "                   waits its default way (a bounded spin, then block)\n"
        "                   (tandem_completion_is_complete / vkGetSemaphoreCounterValue)\n"
        "                   instead of blocking waits: separates wake-up from overhead\n"
        "  --validate       validation layer on both sides; any message fails the run.\n"
        "                   Timings are meaningless with it.\n"
        "  --json PATH      also write every number as JSON to PATH\n"
        "\n"
        "exit status: 0 ok, 1 failure, 2 usage, 77 no Vulkan device.\n",
        f);
}

/*--------------------------------------------------------------------------
 * Dispatch benchmarks
 *--------------------------------------------------------------------------*/

typedef struct dispatch_spec {
  const char *name;
  uint32_t nodes;
  bool chain;
} dispatch_spec_t;

static const dispatch_spec_t dispatch_specs[] = {
    {"dispatch", 1, false},           {"independent100", 100, false}, {"chain100", 100, true},
    {"independent1000", 1000, false}, {"chain1000", 1000, true},
};

typedef struct dispatch_job {
  raw_t *raw;
  VkSubmitInfo2 submit;
  VkSemaphoreSubmitInfo signal;
  VkCommandBufferSubmitInfo cb_info;
  VkSemaphoreWaitInfo wait;
  bench_split_t *split; /* the loop's iteration index; where the submit time goes */
} dispatch_job_t;

static void dispatch_job_run(raw_t *unused, void *ctx) {
  (void)unused;
  dispatch_job_t *j = ctx;
  raw_t *raw = j->raw;
  j->signal.value = ++raw->value[TANDEM_LANE_COMPUTE];
  bench_split_t *split = j->split;
  double t0 = bench_now_us();
  VkResult r =
      raw->vk.vkQueueSubmit2(raw->queue[TANDEM_LANE_COMPUTE], 1, &j->submit, VK_NULL_HANDLE);
  if (split->direct_submit && split->index != UINT32_MAX)
    split->direct_submit[split->index] = bench_now_us() - t0;
  if (r == VK_SUCCESS && (split->spin || split->direct_spin)) {
    uint64_t v = 0;
    while (r == VK_SUCCESS && v < j->signal.value)
      r = raw->vk.vkGetSemaphoreCounterValue(raw->device, raw->timeline[TANDEM_LANE_COMPUTE], &v);
  }
  if (r == VK_SUCCESS) r = raw->vk.vkWaitSemaphores(raw->device, &j->wait, UINT64_MAX);
  if (r != VK_SUCCESS) bench_die("direct iteration failed: VkResult %d", (int)r);
}

static void verify_dispatch(const dispatch_spec_t *spec, const char *side, const uint32_t *words) {
  uint32_t ranges = spec->chain ? 1 : spec->nodes;
  for (uint32_t r = 0; r < ranges; r++)
    for (uint32_t j = 0; j < RANGE_WORDS; j++) {
      uint32_t want = spec->chain ? spec->nodes : WRITE_VALUE(r) + j;
      uint32_t got = words[r * RANGE_WORDS + j];
      if (got != want)
        bench_die("%s: %s result is wrong: element %u of range %u is %u, expected %u", spec->name,
                  side, j, r, got, want);
    }
}

typedef struct kernels {
  tandem_kernel_t *write, *increment;
  raw_kernel_t raw_write, raw_increment;
} kernels_t;

/* Runs |before| (may be NULL) and |exec| once each, then copies |src| to host memory. */
static uint32_t *tandem_readback(tandem_runtime_t *rt, tandem_buffer_t *src, tandem_exec_t *before,
                                 tandem_exec_t *exec) {
  tandem_buffer_t *host;
  TCHECK(tandem_buffer_create(rt, tandem_buffer_size(src), TANDEM_PLACEMENT_HOST_VISIBLE, &host));
  tandem_graph_t *g;
  TCHECK(tandem_graph_create(rt, &g));
  TCHECK(tandem_graph_add_copy(g, tandem_buffer_whole(src), tandem_buffer_whole(host),
                               TANDEM_LANE_AUTO));
  tandem_exec_t *readback;
  TCHECK(tandem_graph_prepare(g, &readback));
  tandem_graph_release(g);
  tandem_exec_t *order[3] = {before, exec, readback};
  for (int i = 0; i < 3; i++) {
    if (!order[i]) continue;
    tandem_completion_t *c;
    TCHECK(tandem_exec_submit(order[i], &c));
    TCHECK(tandem_completion_wait(c));
    tandem_completion_release(c);
  }
  tandem_map_t map;
  TCHECK(tandem_map_read(tandem_buffer_whole(host), &map));
  uint32_t *copy = malloc(map.length);
  if (!copy) bench_die("out of memory");
  memcpy(copy, map.data, map.length);
  tandem_unmap(&map);
  tandem_exec_release(readback);
  tandem_buffer_release(host);
  return copy;
}

static void run_dispatch(const bench_options_t *o, tandem_runtime_t *rt, raw_t *raw, kernels_t *k,
                         const dispatch_spec_t *spec, bench_row_t *row) {
  const uint64_t bytes = spec->chain ? RANGE_BYTES : (uint64_t)spec->nodes * RANGE_BYTES;
  tandem_buffer_t *tbuf;
  TCHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &tbuf));
  tandem_graph_t *graph;
  TCHECK(tandem_graph_create(rt, &graph));
  for (uint32_t i = 0; i < spec->nodes; i++) {
    tandem_view_t view;
    TCHECK(
        tandem_buffer_view(tbuf, spec->chain ? 0 : (uint64_t)i * RANGE_BYTES, RANGE_BYTES, &view));
    if (spec->chain) {
      TCHECK(tandem_graph_add_dispatch(graph, k->increment, &view, 1, NULL, 0));
    } else {
      uint32_t value = WRITE_VALUE(i);
      TCHECK(tandem_graph_add_dispatch(graph, k->write, &view, 1, &value, sizeof value));
    }
  }
  tandem_exec_t *exec;
  TCHECK(tandem_graph_prepare(graph, &exec));
  tandem_graph_release(graph);

  raw_buffer_t rbuf;
  raw_buffer_create(raw, bytes, false, &rbuf);
  const raw_kernel_t *rk = spec->chain ? &k->raw_increment : &k->raw_write;
  uint32_t set_count = spec->chain ? 1 : spec->nodes;
  VkDescriptorSet sets[MAX_NODES];
  for (uint32_t i = 0; i < set_count; i++) {
    VkDeviceSize off = (VkDeviceSize)i * RANGE_BYTES, range = RANGE_BYTES;
    sets[i] = raw_descriptor_set(raw, rk, &rbuf.buffer, &off, &range);
  }
  VkCommandBuffer cb = raw_begin(raw, TANDEM_LANE_COMPUTE);
  raw->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, rk->pipeline);
  for (uint32_t i = 0; i < spec->nodes; i++) {
    if (spec->chain && i > 0)
      raw_barrier(raw, cb, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                  VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                  VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    if (i < set_count)
      raw->vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, rk->layout, 0, 1,
                                      &sets[i], 0, NULL);
    if (rk->push_bytes) {
      uint32_t value = WRITE_VALUE(i);
      raw->vk.vkCmdPushConstants(cb, rk->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof value,
                                 &value);
    }
    raw->vk.vkCmdDispatch(cb, 1, 1, 1);
  }
  VKCHECK(raw->vk.vkEndCommandBuffer(cb));

  dispatch_job_t job = {.raw = raw};
  job.cb_info = (VkCommandBufferSubmitInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                            .commandBuffer = cb};
  job.signal = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                       .semaphore = raw->timeline[TANDEM_LANE_COMPUTE],
                                       .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  job.submit = (VkSubmitInfo2){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                               .commandBufferInfoCount = 1,
                               .pCommandBufferInfos = &job.cb_info,
                               .signalSemaphoreInfoCount = 1,
                               .pSignalSemaphoreInfos = &job.signal};
  job.wait = (VkSemaphoreWaitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                   .semaphoreCount = 1,
                                   .pSemaphores = &raw->timeline[TANDEM_LANE_COMPUTE],
                                   .pValues = &job.signal.value};

  double *tt = malloc(o->iterations * sizeof *tt), *dt = malloc(o->iterations * sizeof *dt);
  double *pr = malloc(o->iterations * sizeof *pr);
  if (!tt || !dt || !pr) bench_die("out of memory for %u samples", o->iterations);
  double *ts = calloc(o->iterations, sizeof *ts), *ds = calloc(o->iterations, sizeof *ds);
  if (!ts || !ds) bench_die("out of memory");
  bench_split_t split = {.tandem_submit = ts,
                         .direct_submit = ds,
                         .index = UINT32_MAX,
                         .spin = o->spin,
                         .direct_spin = o->direct_spin};
  job.split = &split;
  bench_time_pairs(o, spec->name, o->iterations, o->warmup, exec, dispatch_job_run, &job, &split,
                   tt, dt);
  for (uint32_t i = 0; i < o->iterations; i++) pr[i] = tt[i] / dt[i];
  row->tandem_submit = bench_summarize(ts, o->iterations);
  row->direct_submit = bench_summarize(ds, o->iterations);
  row->has_split = true;
  free(ts);
  free(ds);
  snprintf(row->name, sizeof row->name, "%s", spec->name);
  row->nodes = spec->nodes;
  row->tandem = bench_summarize(tt, o->iterations);
  row->direct = bench_summarize(dt, o->iterations);
  row->pair_ratio = bench_summarize(pr, o->iterations);
  row->ratio = row->tandem.median / row->direct.median;
  free(tt);
  free(dt);
  free(pr);

  /* Verification: chain from a fresh zero fill gives exactly `nodes`. */
  tandem_exec_t *fill = NULL;
  if (spec->chain) {
    tandem_graph_t *fg;
    TCHECK(tandem_graph_create(rt, &fg));
    TCHECK(tandem_graph_add_fill(fg, tandem_buffer_whole(tbuf), 0, TANDEM_LANE_AUTO));
    TCHECK(tandem_graph_prepare(fg, &fill));
    tandem_graph_release(fg);
  }
  uint32_t *words = tandem_readback(rt, tbuf, fill, spec->chain ? exec : NULL);
  verify_dispatch(spec, "tandem", words);
  free(words);
  tandem_exec_release(fill);

  raw_buffer_t host;
  raw_buffer_create(raw, bytes, true, &host);
  VkCommandBuffer fill_cb = VK_NULL_HANDLE;
  if (spec->chain) {
    fill_cb = raw_begin(raw, TANDEM_LANE_COMPUTE);
    raw->vk.vkCmdFillBuffer(fill_cb, rbuf.buffer, 0, bytes, 0);
    raw_barrier(raw, fill_cb, VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    VKCHECK(raw->vk.vkEndCommandBuffer(fill_cb));
  }
  VkCommandBuffer copy_cb = raw_begin(raw, TANDEM_LANE_COMPUTE);
  raw_barrier(raw, copy_cb, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
              VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
              VK_ACCESS_2_TRANSFER_READ_BIT);
  VkBufferCopy region = {.size = bytes};
  raw->vk.vkCmdCopyBuffer(copy_cb, rbuf.buffer, host.buffer, 1, &region);
  raw_barrier(raw, copy_cb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
  VKCHECK(raw->vk.vkEndCommandBuffer(copy_cb));
  if (spec->chain) {
    VkCommandBuffer seq[3] = {fill_cb, cb, copy_cb};
    raw_run(raw, TANDEM_LANE_COMPUTE, seq, 3);
  } else {
    raw_run(raw, TANDEM_LANE_COMPUTE, &copy_cb, 1);
  }
  verify_dispatch(spec, "direct", host.mapped);

  VkCommandBuffer cbs[3] = {cb, copy_cb, fill_cb};
  raw->vk.vkFreeCommandBuffers(raw->device, raw->pool[TANDEM_LANE_COMPUTE], fill_cb ? 3 : 2, cbs);
  VKCHECK(raw->vk.vkResetDescriptorPool(raw->device, raw->descriptor_pool, 0));
  raw_buffer_destroy(raw, &host);
  raw_buffer_destroy(raw, &rbuf);
  tandem_exec_release(exec);
  tandem_buffer_release(tbuf);
}

/*--------------------------------------------------------------------------
 * Reporting
 *--------------------------------------------------------------------------*/

static void json_summary(FILE *f, const char *key, const summary_t *s) {
  fprintf(f,
          "      \"%s\": {\"median\": %.4f, \"p10\": %.4f, \"p90\": %.4f, \"min\": %.4f, "
          "\"mean\": %.4f},\n",
          key, s->median, s->p10, s->p90, s->min, s->mean);
}

static void write_json(const char *path, const bench_options_t *o, const tandem_device_info_t *info,
                       const bench_row_t *rows, uint32_t count, const bench_copies_report_t *copies,
                       uint64_t tandem_msgs, uint64_t raw_msgs) {
  FILE *f = fopen(path, "w");
  if (!f) bench_die("--json %s: cannot write", path);
  char date[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(f, "{\n  \"tool\": \"tandem-bench\",\n  \"date\": \"%s\",\n", date);
  fprintf(f, "  \"tandem_version\": \"%s\",\n", tandem_version());
  fprintf(f, "  \"device\": {\"index\": %u, \"name\": ", info->index);
  json_write_string(f, info->name);
  fputs(", \"driver\": ", f);
  json_write_string(f, info->driver_name);
  fputs(", \"driver_info\": ", f);
  json_write_string(f, info->driver_info);
  fprintf(f, ", \"vulkan\": \"%u.%u.%u\", \"is_cpu\": %s},\n",
          TANDEM_VERSION_MAJOR_OF(info->api_version), TANDEM_VERSION_MINOR_OF(info->api_version),
          TANDEM_VERSION_PATCH_OF(info->api_version), info->is_cpu ? "true" : "false");
  fprintf(f,
          "  \"iterations\": %u,\n  \"warmup\": %u,\n  \"stream_iterations\": %u,\n"
          "  \"transfer_bytes\": %llu,\n  \"chunks\": %u,\n  \"chunk_bytes\": %llu,\n"
          "  \"rounds\": %u,\n  \"quick\": %s,\n  \"validation\": %s,\n",
          o->iterations, o->warmup, o->stream_iterations, (unsigned long long)o->transfer_bytes,
          o->chunks, (unsigned long long)o->chunk_bytes, o->rounds, o->quick ? "true" : "false",
          o->validate ? "true" : "false");
  fprintf(f, "  \"order\": \"%s\",\n", o->direct_first ? "direct,tandem" : "tandem,direct");
  fprintf(f,
          "  \"validation_messages\": {\"tandem\": %llu, \"direct\": %llu},\n"
          "  \"units\": \"microseconds per submit+wait\",\n  \"benchmarks\": [\n",
          (unsigned long long)tandem_msgs, (unsigned long long)raw_msgs);
  for (uint32_t i = 0; i < count; i++) {
    const bench_row_t *r = &rows[i];
    fprintf(f, "%s    {\n      \"name\": \"%s\",\n      \"nodes\": %u,\n", i ? ",\n" : "", r->name,
            r->nodes);
    json_summary(f, "tandem_us", &r->tandem);
    json_summary(f, "direct_us", &r->direct);
    json_summary(f, "pair_ratio", &r->pair_ratio);
    if (r->has_split) {
      json_summary(f, "tandem_submit_us", &r->tandem_submit);
      json_summary(f, "direct_submit_us", &r->direct_submit);
    }
    if (r->bytes && !r->is_overlap)
      fprintf(f,
              "      \"bytes\": %llu,\n      \"tandem_gb_per_s\": %.4f,\n"
              "      \"direct_gb_per_s\": %.4f,\n",
              (unsigned long long)r->bytes, (double)r->bytes / r->tandem.median / 1e3,
              (double)r->bytes / r->direct.median / 1e3);
    if (r->is_overlap) {
      fprintf(f, "      \"bytes\": %llu,\n", (unsigned long long)r->bytes);
      fprintf(
          f,
          "      \"tandem_lane_alone_us\": {\"upload\": %.3f, \"compute\": %.3f, \"download\": %.3f},\n",
          r->tandem_lane_us[0], r->tandem_lane_us[1], r->tandem_lane_us[2]);
      fprintf(
          f,
          "      \"direct_lane_alone_us\": {\"upload\": %.3f, \"compute\": %.3f, \"download\": %.3f},\n",
          r->direct_lane_us[0], r->direct_lane_us[1], r->direct_lane_us[2]);
      fprintf(f, "      \"tandem_ideal_us\": %.3f,\n      \"direct_ideal_us\": %.3f,\n",
              r->tandem_ideal_us, r->direct_ideal_us);
      fprintf(
          f, "      \"tandem_percent_of_ideal\": %.2f,\n      \"direct_percent_of_ideal\": %.2f,\n",
          100.0 * r->tandem_ideal_us / r->tandem.median,
          100.0 * r->direct_ideal_us / r->direct.median);
    }
    fprintf(f,
            "      \"ratio_of_medians\": %.5f,\n      \"tandem_us_per_node\": %.5f,\n"
            "      \"direct_us_per_node\": %.5f,\n      \"verified\": true\n    }",
            r->ratio, r->tandem.median / r->nodes, r->direct.median / r->nodes);
  }
  fputs("\n  ]", f);
  if (copies->ran) {
    fputs(",\n  \"copies\": ", f);
    bench_copies_json(copies, f);
  }
  fputs("\n}\n", f);
  if (fclose(f) != 0) bench_die("--json %s: error writing", path);
}

static void print_table(const bench_options_t *o, const tandem_device_info_t *info,
                        const bench_row_t *rows, uint32_t count,
                        const bench_copies_report_t *copies) {
  printf("\ndevice: %s (driver %s, %s), GPU %u%s\n", info->name, info->driver_name,
         info->driver_info, info->index, info->is_cpu ? ", software" : "");
  printf("alternated %s%s\n\n", o->direct_first ? "direct/tandem" : "tandem/direct",
         o->validate ? ", VALIDATION ON (timings not meaningful)" : "");
  if (count)
    printf("%-16s %12s %12s %8s %10s %12s %12s\n", "benchmark", "tandem us", "direct us", "ratio",
           "pair ratio", "tandem us/n", "direct us/n");
  for (uint32_t i = 0; i < count; i++) {
    const bench_row_t *r = &rows[i];
    printf("%-16s %12.2f %12.2f %8.3f %10.3f %12.3f %12.3f\n", r->name, r->tandem.median,
           r->direct.median, r->ratio, r->pair_ratio.median, r->tandem.median / r->nodes,
           r->direct.median / r->nodes);
  }
  bool split_header = false;
  for (uint32_t i = 0; i < count; i++) {
    const bench_row_t *r = &rows[i];
    if (!r->has_split) continue;
    if (!split_header)
      printf("\n%-16s %12s %12s %12s %12s\n", "split (median)", "tandem sub", "direct sub",
             "tandem rest", "direct rest");
    split_header = true;
    printf("%-16s %12.2f %12.2f %12.2f %12.2f\n", r->name, r->tandem_submit.median,
           r->direct_submit.median, r->tandem.median - r->tandem_submit.median,
           r->direct.median - r->direct_submit.median);
  }
  bool header = false;
  for (uint32_t i = 0; i < count; i++) {
    const bench_row_t *r = &rows[i];
    if (!r->bytes || r->is_overlap) continue;
    if (!header)
      printf("\n%-16s %12s %12s %14s %14s\n", "transfer", "MiB", "", "tandem GB/s", "direct GB/s");
    header = true;
    printf("%-16s %12.1f %12s %14.2f %14.2f\n", r->name, (double)r->bytes / (1 << 20), "",
           (double)r->bytes / r->tandem.median / 1e3, (double)r->bytes / r->direct.median / 1e3);
  }
  for (uint32_t i = 0; i < count; i++) {
    const bench_row_t *r = &rows[i];
    if (!r->is_overlap) continue;
    printf("\n%s: %u chunks, %.1f MiB per lane; time of each lane alone (us):\n", r->name,
           r->nodes / 3, (double)r->bytes / (1 << 20));
    printf("  %-8s upload %10.1f  compute %10.1f  download %10.1f  ideal %10.1f  achieved %10.1f  "
           "= %5.1f%% of ideal\n",
           "tandem", r->tandem_lane_us[0], r->tandem_lane_us[1], r->tandem_lane_us[2],
           r->tandem_ideal_us, r->tandem.median, 100.0 * r->tandem_ideal_us / r->tandem.median);
    printf("  %-8s upload %10.1f  compute %10.1f  download %10.1f  ideal %10.1f  achieved %10.1f  "
           "= %5.1f%% of ideal\n",
           "direct", r->direct_lane_us[0], r->direct_lane_us[1], r->direct_lane_us[2],
           r->direct_ideal_us, r->direct.median, 100.0 * r->direct_ideal_us / r->direct.median);
  }
  bench_copies_print(copies, stdout);
  if (count)
    printf("\nus: median per submit+wait; ratio: median tandem / median direct; pair ratio:\n"
           "median of per-iteration tandem/direct (each run against the direct run beside it:\n"
           "noise that slows both cancels; when the two ratios differ, the times are spread\n"
           "unevenly and the pair ratio is the better overhead estimate); us/n: median / nodes.\n"
           "All results verified.\n");
}

/*--------------------------------------------------------------------------*/

static bool parse_options(int argc, char **argv, bench_options_t *o, bool *help) {
  *o = (bench_options_t){.iterations = 2000,
                         .warmup = 200,
                         .stream_iterations = 30,
                         .transfer_bytes = 64ull << 20,
                         .chunks = 16,
                         .chunk_bytes = 4ull << 20,
                         .rounds = 64};
  if (!cli_gpu_choice(NULL, &o->gpu_index)) return false; /* TANDEM_GPU, until --gpu */
  uint32_t v32;
  for (int i = 1; i < argc; i++) {
    const char *v;
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      *help = true;
      return true;
    } else if (!strcmp(a, "--quick")) {
      o->quick = true;
      o->iterations = 200, o->warmup = 20, o->stream_iterations = 5;
      o->transfer_bytes = 16ull << 20, o->chunks = 8, o->chunk_bytes = 1ull << 20;
    } else if (!strcmp(a, "--validate")) {
      o->validate = true;
    } else if (!strcmp(a, "--direct-first")) {
      o->direct_first = true;
    } else if (!strcmp(a, "--spin")) {
      o->spin = true;
    } else if (!strcmp(a, "--direct-spin")) {
      o->direct_spin = true;
    } else if (cli_take_value(argc, argv, &i, "--iterations", &v)) {
      o->given |= BENCH_GIVEN_ITERATIONS;
      if (!cli_parse_u32("--iterations", v, 1, 100000000, &o->iterations)) return false;
    } else if (cli_take_value(argc, argv, &i, "--warmup", &v)) {
      o->given |= BENCH_GIVEN_WARMUP;
      if (!cli_parse_u32("--warmup", v, 0, 100000000, &o->warmup)) return false;
    } else if (cli_take_value(argc, argv, &i, "--stream-iterations", &v)) {
      o->given |= BENCH_GIVEN_STREAM_ITERATIONS;
      if (!cli_parse_u32("--stream-iterations", v, 1, 1000000, &o->stream_iterations)) return false;
    } else if (cli_take_value(argc, argv, &i, "--transfer-mib", &v)) {
      o->given |= BENCH_GIVEN_TRANSFER;
      if (!cli_parse_u32("--transfer-mib", v, 1, 16384, &v32)) return false;
      o->transfer_bytes = (uint64_t)v32 << 20;
    } else if (cli_take_value(argc, argv, &i, "--chunks", &v)) {
      o->given |= BENCH_GIVEN_CHUNKS;
      if (!cli_parse_u32("--chunks", v, 1, 256, &o->chunks)) return false;
    } else if (cli_take_value(argc, argv, &i, "--chunk-kib", &v)) {
      o->given |= BENCH_GIVEN_CHUNK_BYTES;
      if (!cli_parse_u32("--chunk-kib", v, 1, 1u << 20, &v32)) return false;
      o->chunk_bytes = (uint64_t)v32 << 10;
    } else if (cli_take_value(argc, argv, &i, "--rounds", &v)) {
      o->given |= BENCH_GIVEN_ROUNDS;
      if (!cli_parse_u32("--rounds", v, 0, 1u << 20, &o->rounds)) return false;
    } else if (cli_take_value(argc, argv, &i, "--gpu", &v)) {
      if (!cli_parse_u32("--gpu", v, 0, 1024, &o->gpu_index)) return false;
    } else if (cli_take_value(argc, argv, &i, "--json", &v)) {
      if (!(o->json_path = v)) return cli_error("--json needs a path"), false;
    } else if (cli_take_value(argc, argv, &i, "--only", &v)) {
      if (!(o->only = v)) return cli_error("--only needs a benchmark name"), false;
      bool known = false;
      for (size_t k = 0; k < BENCH_NAME_COUNT; k++) known |= !strcmp(v, bench_names[k]);
      if (!known)
        return cli_error(
                   "--only %s: no such benchmark (dispatch, independent100, chain100, "
                   "independent1000, chain1000, transfer, overlap, npu-edge, copies, barriers)",
                   v),
               false;
    } else {
      cli_error("unknown option '%s' (see tandem-bench --help)", a);
      return false;
    }
  }
  return true;
}

/* The defaults are sized for a discrete GPU (64 MiB transfers, 2 000
 * dispatches). A software device (lavapipe) or --quick gets smaller ones,
 * scaled so that each step takes seconds, not minutes; options the user
 * gave are kept. Transfers never exceed an eighth of device-local memory. */
static void scale_defaults(bench_options_t *o, const tandem_device_info_t *info) {
  bool small = o->quick || info->is_cpu;
  if (small) {
    if (!(o->given & BENCH_GIVEN_ITERATIONS)) o->iterations = o->quick ? 100 : 300;
    if (!(o->given & BENCH_GIVEN_WARMUP)) o->warmup = o->quick ? 10 : 30;
    if (!(o->given & BENCH_GIVEN_STREAM_ITERATIONS)) o->stream_iterations = o->quick ? 2 : 10;
    if (!(o->given & BENCH_GIVEN_TRANSFER)) o->transfer_bytes = (o->quick ? 4ull : 16ull) << 20;
    if (!(o->given & BENCH_GIVEN_CHUNKS)) o->chunks = 8;
    if (!(o->given & BENCH_GIVEN_CHUNK_BYTES)) o->chunk_bytes = (o->quick ? 128ull : 512ull) << 10;
    if (!(o->given & BENCH_GIVEN_ROUNDS)) o->rounds = o->quick ? 8 : 16;
  }
  uint64_t cap = info->device_local_bytes / 8;
  if (!(o->given & BENCH_GIVEN_TRANSFER) && cap >= (1u << 20) && o->transfer_bytes > cap)
    o->transfer_bytes = cap & ~((1ull << 20) - 1);
  fprintf(stderr,
          "tandem-bench: %s sizes%s: %u (+%u warm-up) dispatch iterations, %u stream iterations, "
          "%llu MiB transfers, %u x %llu KiB overlap chunks, %u rounds\n",
          small ? (o->quick ? "--quick" : "software-device") : "default",
          small ? " (options given are kept)" : "", o->iterations, o->warmup, o->stream_iterations,
          (unsigned long long)(o->transfer_bytes >> 20), o->chunks,
          (unsigned long long)(o->chunk_bytes >> 10), o->rounds);
}

static bool selected(const bench_options_t *o, const char *name) {
  return !o->only || !strcmp(o->only, name);
}

static void tandem_messenger(void *user, tandem_validation_severity_t severity,
                             const char *message) {
  (void)user;
  fprintf(stderr, "tandem-bench: tandem-side validation %s: %s\n",
          severity == TANDEM_VALIDATION_ERROR ? "error" : "warning", message);
}

int main(int argc, char **argv) {
  cli_program_name = "tandem-bench";
  bench_options_t o;
  bool help = false;
  if (!parse_options(argc, argv, &o, &help)) return CLI_EXIT_USAGE;
  if (help) {
    usage(stdout);
    return CLI_EXIT_OK;
  }
  tandem_runtime_options_t ro;
  tandem_runtime_options_init(&ro);
  ro.gpu_index = o.gpu_index;
  ro.validation = o.validate;
  ro.validation_callback = tandem_messenger;
  ro.graph_slots = 2;
  tandem_runtime_t *rt;
  TCHECK(tandem_runtime_create(&ro, &rt));
  tandem_status_t s = tandem_runtime_open_gpu(rt);
  if (s == TANDEM_ERROR_NO_DEVICE) {
    cli_tandem_error("skipped, no usable Vulkan device", s);
    tandem_runtime_destroy(rt);
    return CLI_EXIT_NO_DEVICE;
  }
  if (s != TANDEM_OK)
    bench_die("opening the GPU: %s: %s", tandem_status_name(s), tandem_error_message());
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TCHECK(tandem_runtime_gpu_info(rt, o.gpu_index, &info));
  scale_defaults(&o, &info);
  raw_t raw;
  raw_open(&raw, rt);

  kernels_t k = {0};
  tandem_binding_contract_t write_binding = {RANGE_BYTES, RANGE_BYTES, TANDEM_ACCESS_WRITE};
  tandem_kernel_desc_t wd = {.struct_size = sizeof(tandem_kernel_desc_t),
                             .name = "bench_write",
                             .spirv = tandem_spv_bench_write,
                             .spirv_size = tandem_spv_bench_write_size,
                             .workgroups = {1, 1, 1},
                             .bindings = &write_binding,
                             .binding_count = 1,
                             .push_constant_bytes = 4};
  TCHECK(tandem_kernel_create(rt, &wd, &k.write));
  tandem_binding_contract_t incr_binding = {RANGE_BYTES, RANGE_BYTES, TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t id = {.struct_size = sizeof(tandem_kernel_desc_t),
                             .name = "bench_increment",
                             .spirv = tandem_spv_bench_increment,
                             .spirv_size = tandem_spv_bench_increment_size,
                             .workgroups = {1, 1, 1},
                             .bindings = &incr_binding,
                             .binding_count = 1};
  TCHECK(tandem_kernel_create(rt, &id, &k.increment));
  raw_kernel_create(&raw, tandem_spv_bench_write, tandem_spv_bench_write_size, 1, 4, &k.raw_write);
  raw_kernel_create(&raw, tandem_spv_bench_increment, tandem_spv_bench_increment_size, 1, 0,
                    &k.raw_increment);

  fprintf(stderr, "tandem-bench: %s (%s %s), GPU %u, validation %s\n", info.name, info.driver_name,
          info.driver_info, o.gpu_index, o.validate ? "on" : "off");
  bench_row_t rows[16];
  memset(rows, 0, sizeof rows);
  uint32_t count = 0;
  for (size_t i = 0; i < sizeof dispatch_specs / sizeof dispatch_specs[0]; i++)
    if (selected(&o, dispatch_specs[i].name))
      run_dispatch(&o, rt, &raw, &k, &dispatch_specs[i], &rows[count++]);
  if (selected(&o, "transfer")) bench_transfer(&o, rt, &raw, rows, &count);
  if (selected(&o, "overlap")) bench_overlap(&o, rt, &raw, rows, &count);
  if (selected(&o, "npu-edge")) {
    const char *why = bench_npu_edge_unavailable(&raw);
    if (!why) {
      bench_npu_edge(&o, &raw, rows, &count);
    } else if (o.only) {
      bench_die("npu-edge: %s", why);
    } else {
      fprintf(stderr, "tandem-bench: npu-edge skipped: %s\n", why);
    }
  }
  bench_copies_report_t *copies = calloc(1, sizeof *copies);
  if (!copies) bench_die("out of memory");
  if (selected(&o, "copies")) bench_copies(&o, rt, &raw, copies);
  if (selected(&o, "barriers")) bench_barriers(&o, &raw, &k.raw_increment);

  tandem_kernel_release(k.write);
  tandem_kernel_release(k.increment);
  raw_kernel_destroy(&raw, &k.raw_write);
  raw_kernel_destroy(&raw, &k.raw_increment);
  raw_close(&raw);
  uint64_t tandem_msgs = tandem_runtime_validation_messages(rt);
  tandem_runtime_destroy(rt);
  /* One instance for both sides: the layer's messages are counted once. */
  uint64_t raw_msgs = 0;

  print_table(&o, &info, rows, count, copies);
  if (o.json_path) write_json(o.json_path, &o, &info, rows, count, copies, tandem_msgs, raw_msgs);
  free(copies);
  if (o.validate) {
    printf("validation messages (both sides, one instance): %llu\n",
           (unsigned long long)tandem_msgs);
    if (tandem_msgs) {
      cli_error("validation reported %llu messages", (unsigned long long)tandem_msgs);
      return CLI_EXIT_FAILURE;
    }
  }
  return CLI_EXIT_OK;
}
