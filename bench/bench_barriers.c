/* SPDX-License-Identifier: MIT */
/*
 * bench_barriers.c — `tandem-bench --only barriers`: what one dependency
 * between two dispatches costs the GPU, by every means Vulkan offers, on
 * tandem's own device and compute queue (raw Vulkan only; a survey, not a
 * tandem-vs-raw row).
 *
 * Issue 10 asks for a dependent chain at ≤ 1.0 µs per node and suggests
 * narrower barriers, split barriers (events) and fewer barriers. This survey
 * measures each on 1 000 dispatches of the chain kernel (bench_increment: 64
 * threads read-modify-write one 256-byte range), GPU timestamps around the
 * whole command buffer, median of the runs:
 *   independent         1 000 dispatches on 1 000 ranges, no dependency: the
 *                       cost of a dispatch alone
 *   chain-memory        one range, a VkMemoryBarrier2 compute→compute between
 *                       each pair (what tandem records)
 *   chain-buffer        the same with a VkBufferMemoryBarrier2 over the 256
 *                       bytes (the narrowest barrier Vulkan has)
 *   chain-event         vkCmdSetEvent2 after each dispatch and
 *                       vkCmdWaitEvents2 before the next (a split barrier with
 *                       nothing between its halves)
 *   two-chains-memory   two independent chains interleaved, one memory
 *                       barrier per pair of dispatches (2 000 dispatches)
 *   two-chains-event    the same ordered by events, so each chain's wait
 *                       sits behind the other chain's dispatch: a split
 *                       barrier with work between its halves
 * Each chain variant is checked once: from zero, every word ends at the
 * number of dispatches that incremented it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_barriers.h"

enum { CHAIN_NODES = 1000, RANGE = 256 };

typedef enum variant {
  V_INDEPENDENT,
  V_CHAIN_MEMORY,
  V_CHAIN_BUFFER,
  V_CHAIN_EVENT,
  V_TWO_MEMORY,
  V_TWO_EVENT,
  V_COUNT
} variant_t;

static const char *const variant_names[V_COUNT] = {"independent",       "chain-memory",
                                                   "chain-buffer",      "chain-event",
                                                   "two-chains-memory", "two-chains-event"};

typedef struct barriers {
  raw_t *raw;
  const raw_kernel_t *k;
  raw_buffer_t data;                 /* CHAIN_NODES ranges of RANGE bytes */
  VkDescriptorSet sets[CHAIN_NODES]; /* set i binds range i */
  VkEvent events[2 * CHAIN_NODES];
  VkQueryPool queries;
  double period_ns;
} barriers_t;

static const VkMemoryBarrier2 compute_to_compute = {
    .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
    .srcStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
    .srcAccessMask = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
    .dstStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
    .dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT};

static void dispatch(barriers_t *b, VkCommandBuffer cb, uint32_t range) {
  b->raw->vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, b->k->layout, 0, 1,
                                     &b->sets[range], 0, NULL);
  b->raw->vk.vkCmdDispatch(cb, 1, 1, 1);
}

static void memory_barrier(barriers_t *b, VkCommandBuffer cb) {
  VkDependencyInfo dep = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                          .memoryBarrierCount = 1,
                          .pMemoryBarriers = &compute_to_compute};
  b->raw->vk.vkCmdPipelineBarrier2(cb, &dep);
}

static void buffer_barrier(barriers_t *b, VkCommandBuffer cb, uint32_t range) {
  VkBufferMemoryBarrier2 bb = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2,
                               .srcStageMask = compute_to_compute.srcStageMask,
                               .srcAccessMask = compute_to_compute.srcAccessMask,
                               .dstStageMask = compute_to_compute.dstStageMask,
                               .dstAccessMask = compute_to_compute.dstAccessMask,
                               .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                               .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                               .buffer = b->data.buffer,
                               .offset = (VkDeviceSize)range * RANGE,
                               .size = RANGE};
  VkDependencyInfo dep = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                          .bufferMemoryBarrierCount = 1,
                          .pBufferMemoryBarriers = &bb};
  b->raw->vk.vkCmdPipelineBarrier2(cb, &dep);
}

/* The dependency an event carries: the same scopes as the memory barrier. */
static VkDependencyInfo event_dependency(void) {
  VkDependencyInfo dep = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                          .memoryBarrierCount = 1,
                          .pMemoryBarriers = &compute_to_compute};
  return dep;
}

static void set_event(barriers_t *b, VkCommandBuffer cb, uint32_t e) {
  VkDependencyInfo dep = event_dependency();
  b->raw->vk.vkCmdSetEvent2(cb, b->events[e], &dep);
}

static void wait_event(barriers_t *b, VkCommandBuffer cb, uint32_t e) {
  VkDependencyInfo dep = event_dependency();
  b->raw->vk.vkCmdWaitEvents2(cb, 1, &b->events[e], &dep);
}

/* Records |v| between two timestamps. Events are used once per run: the host
 * resets them between runs (untimed), so no reset sits in the GPU's path. */
static VkCommandBuffer record(barriers_t *b, variant_t v) {
  raw_t *raw = b->raw;
  VkCommandBuffer cb = raw_begin(raw, TANDEM_LANE_COMPUTE);
  raw->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, b->k->pipeline);
  raw->vk.vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, b->queries, 2 * v);
  for (uint32_t i = 0; i < CHAIN_NODES; i++) {
    switch (v) {
      case V_INDEPENDENT: dispatch(b, cb, i); break;
      case V_CHAIN_MEMORY:
        if (i) memory_barrier(b, cb);
        dispatch(b, cb, 0);
        break;
      case V_CHAIN_BUFFER:
        if (i) buffer_barrier(b, cb, 0);
        dispatch(b, cb, 0);
        break;
      case V_CHAIN_EVENT:
        if (i) wait_event(b, cb, i - 1);
        dispatch(b, cb, 0);
        if (i + 1 < CHAIN_NODES) set_event(b, cb, i);
        break;
      case V_TWO_MEMORY:
        if (i) memory_barrier(b, cb);
        dispatch(b, cb, 0);
        dispatch(b, cb, 1);
        break;
      case V_TWO_EVENT:
        /* Chain A on range 0 uses events 2i, chain B on range 1 events 2i+1:
         * A's wait for its own previous dispatch has B's dispatch before it. */
        if (i) wait_event(b, cb, 2 * (i - 1));
        dispatch(b, cb, 0);
        if (i + 1 < CHAIN_NODES) set_event(b, cb, 2 * i);
        if (i) wait_event(b, cb, 2 * (i - 1) + 1);
        dispatch(b, cb, 1);
        if (i + 1 < CHAIN_NODES) set_event(b, cb, 2 * i + 1);
        break;
      case V_COUNT: break;
    }
  }
  raw->vk.vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, b->queries, 2 * v + 1);
  VKCHECK(raw->vk.vkEndCommandBuffer(cb));
  return cb;
}

static uint32_t dispatches_of(variant_t v) {
  return v == V_TWO_MEMORY || v == V_TWO_EVENT ? 2 * CHAIN_NODES : CHAIN_NODES;
}

static void reset_events(barriers_t *b) {
  for (uint32_t e = 0; e < 2 * CHAIN_NODES; e++)
    VKCHECK(b->raw->vk.vkResetEvent(b->raw->device, b->events[e]));
}

/* Zeroes the data, runs |cb| once (after |reset|, the query reset), and
 * checks each range's words. */
static void verify(barriers_t *b, variant_t v, VkCommandBuffer reset, VkCommandBuffer cb) {
  raw_t *raw = b->raw;
  raw_buffer_t host;
  raw_buffer_create(raw, 2 * RANGE, true, &host);
  VkCommandBuffer zero = raw_begin(raw, TANDEM_LANE_COMPUTE);
  raw->vk.vkCmdFillBuffer(zero, b->data.buffer, 0, b->data.size, 0);
  raw_barrier(raw, zero, VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
              VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
  VKCHECK(raw->vk.vkEndCommandBuffer(zero));
  VkCommandBuffer out = raw_begin(raw, TANDEM_LANE_COMPUTE);
  raw_barrier(raw, out, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
              VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
              VK_ACCESS_2_TRANSFER_READ_BIT);
  VkBufferCopy region = {.size = 2 * RANGE};
  raw->vk.vkCmdCopyBuffer(out, b->data.buffer, host.buffer, 1, &region);
  raw_barrier(raw, out, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
  VKCHECK(raw->vk.vkEndCommandBuffer(out));
  reset_events(b);
  VkCommandBuffer seq[4] = {reset, zero, cb, out};
  raw_run(raw, TANDEM_LANE_COMPUTE, seq, 4);
  const uint32_t *w = host.mapped;
  uint32_t want0 = v == V_INDEPENDENT ? 1 : CHAIN_NODES;
  uint32_t want1 = v == V_TWO_MEMORY || v == V_TWO_EVENT || v == V_INDEPENDENT ? want0 : 0;
  for (uint32_t i = 0; i < RANGE / 4; i++)
    if (w[i] != want0 || w[RANGE / 4 + i] != want1)
      bench_die("barriers: %s left word %u at %u / %u, expected %u / %u", variant_names[v], i, w[i],
                w[RANGE / 4 + i], want0, want1);
  VkCommandBuffer cbs[2] = {zero, out};
  raw->vk.vkFreeCommandBuffers(raw->device, raw->pool[TANDEM_LANE_COMPUTE], 2, cbs);
  raw_buffer_destroy(raw, &host);
}

void bench_barriers(const bench_options_t *o, raw_t *raw, const raw_kernel_t *increment) {
  barriers_t *b = calloc(1, sizeof *b);
  if (!b) bench_die("out of memory");
  b->raw = raw;
  b->k = increment;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(raw->physical, &props);
  b->period_ns = props.limits.timestampPeriod;
  if (b->period_ns <= 0 || props.limits.timestampComputeAndGraphics == VK_FALSE) {
    fprintf(stderr, "tandem-bench: barriers skipped: the device has no compute timestamps\n");
    free(b);
    return;
  }
  raw_buffer_create(raw, (VkDeviceSize)CHAIN_NODES * RANGE, false, &b->data);
  for (uint32_t i = 0; i < CHAIN_NODES; i++) {
    VkDeviceSize off = (VkDeviceSize)i * RANGE, range = RANGE;
    b->sets[i] = raw_descriptor_set(raw, increment, &b->data.buffer, &off, &range);
  }
  VkEventCreateInfo eci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
  for (uint32_t e = 0; e < 2 * CHAIN_NODES; e++)
    VKCHECK(raw->vk.vkCreateEvent(raw->device, &eci, NULL, &b->events[e]));
  VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                               .queryType = VK_QUERY_TYPE_TIMESTAMP,
                               .queryCount = 2 * V_COUNT};
  VKCHECK(raw->vk.vkCreateQueryPool(raw->device, &qci, NULL, &b->queries));
  VkCommandBuffer cbs[V_COUNT];
  for (int v = 0; v < V_COUNT; v++) cbs[v] = record(b, (variant_t)v);
  /* Every run resets the queries first (the compute queue can). */
  VkCommandBuffer reset = raw_begin(raw, TANDEM_LANE_COMPUTE);
  raw->vk.vkCmdResetQueryPool(reset, b->queries, 0, 2 * V_COUNT);
  VKCHECK(raw->vk.vkEndCommandBuffer(reset));
  for (int v = 0; v < V_COUNT; v++) verify(b, (variant_t)v, reset, cbs[v]);

  uint32_t runs = o->quick ? 5 : 31;
  double *gpu[V_COUNT];
  for (int v = 0; v < V_COUNT; v++) {
    gpu[v] = calloc(runs, sizeof *gpu[v]);
    if (!gpu[v]) bench_die("out of memory");
  }
  /* Rotating order. */
  for (uint32_t r = 0; r < runs; r++) {
    for (int k = 0; k < V_COUNT; k++) {
      int v = (int)((r + (uint32_t)k) % V_COUNT);
      reset_events(b);
      VkCommandBuffer seq[2] = {reset, cbs[v]};
      raw_run(raw, TANDEM_LANE_COMPUTE, seq, 2);
      uint64_t ts[2];
      VKCHECK(raw->vk.vkGetQueryPoolResults(raw->device, b->queries, 2 * (uint32_t)v, 2, sizeof ts,
                                            ts, sizeof ts[0],
                                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
      gpu[v][r] = (double)(ts[1] - ts[0]) * b->period_ns / 1e3;
    }
  }
  printf("\nbarriers: %u dispatches of a 64-thread read-modify-write per chain, GPU timestamps, "
         "median of %u runs (raw Vulkan on tandem's compute queue)\n",
         CHAIN_NODES, runs);
  printf("  %-20s %12s %14s\n", "variant", "gpu us", "us/dispatch");
  for (int v = 0; v < V_COUNT; v++) {
    summary_t s = bench_summarize(gpu[v], runs);
    printf("  %-20s %12.1f %14.3f\n", variant_names[v], s.median,
           s.median / dispatches_of((variant_t)v));
    free(gpu[v]);
  }
  raw->vk.vkFreeCommandBuffers(raw->device, raw->pool[TANDEM_LANE_COMPUTE], 1, &reset);
  raw->vk.vkFreeCommandBuffers(raw->device, raw->pool[TANDEM_LANE_COMPUTE], V_COUNT, cbs);
  raw->vk.vkDestroyQueryPool(raw->device, b->queries, NULL);
  for (uint32_t e = 0; e < 2 * CHAIN_NODES; e++)
    raw->vk.vkDestroyEvent(raw->device, b->events[e], NULL);
  VKCHECK(raw->vk.vkResetDescriptorPool(raw->device, raw->descriptor_pool, 0));
  raw_buffer_destroy(raw, &b->data);
  free(b);
}
