/* SPDX-License-Identifier: MIT */
/*
 * round_trip_floor.c — where a tiny submission's round trip goes, and what
 * pre-arming a replay could save, all on tandem's own VkDevice and compute
 * queue (tandem_runtime_vulkan_handles; never a second device).
 *
 * The work is one 256-byte vkCmdFillBuffer on the compute lane. Five ways to
 * run it, alternated round by round, median (and 10th/90th percentile) of
 * the host time from "start" to "the host saw it finished", polling:
 *   tandem       tandem_exec_submit + tandem_completion_is_complete loop
 *   tandem-wait  tandem_exec_submit + tandem_completion_wait (spin, then block)
 *   raw          vkQueueSubmit2 of a recorded command buffer + counter poll
 *   raw-empty    vkQueueSubmit2 of a batch with no command buffer (signal only)
 *   armed        the batch submitted ahead, waiting on a host-signalled
 *                timeline value; the timed part is vkSignalSemaphore + poll.
 *                This is the floor of the "pre-armed replay" idea: what
 *                tandem_exec_submit would cost if it became a host signal.
 * It also prints the host cost of the vkQueueSubmit2 call alone (raw) and of
 * vkSignalSemaphore alone (armed), and the GPU time of the fill (timestamps).
 * No validation layer in measurements: it would be what is measured.
 *
 *   build/bench/tandem_bench_round_trip [rounds]      (default 2000)
 *   build/bench/tandem_bench_round_trip --smoke       (CTest: 20 rounds with the
 *        validation layer on; any validation message fails it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "round_trip"
#include "bench_common.h"
#include "tandem/tandem_vulkan.h"
#include "bench_vk.h"

enum { WAY_TANDEM, WAY_TANDEM_WAIT, WAY_RAW, WAY_RAW_EMPTY, WAY_ARMED, WAY_COUNT };
static const char *const way_names[WAY_COUNT] = {"tandem", "tandem-wait", "raw", "raw-empty",
                                                 "armed"};

typedef struct raw_floor {
  struct VolkDeviceTable vk;
  VkDevice device;
  VkQueue queue;
  VkCommandPool pool;
  VkCommandBuffer cb;    /* the fill alone: what every way runs */
  VkCommandBuffer cb_ts; /* the fill between timestamps: run once, for the GPU time */
  VkSemaphore done, gate;
  uint64_t done_value, gate_value;
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkQueryPool queries;
  double period_ns;
} raw_floor_t;

static void raw_floor_wait_done(raw_floor_t *r) {
  uint64_t v = 0;
  do VKCHECK(r->vk.vkGetSemaphoreCounterValue(r->device, r->done, &v));
  while (v < r->done_value);
}

static void raw_floor_submit(raw_floor_t *r, VkCommandBuffer cb, bool gated, uint64_t *submit_ns) {
  bool with_cb = cb != VK_NULL_HANDLE;
  VkCommandBufferSubmitInfo cbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                   .commandBuffer = cb};
  VkSemaphoreSubmitInfo signal = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                  .semaphore = r->done,
                                  .value = ++r->done_value,
                                  .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkSemaphoreSubmitInfo wait = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                .semaphore = r->gate,
                                .value = r->gate_value + 1,
                                .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkSubmitInfo2 si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                      .waitSemaphoreInfoCount = gated ? 1 : 0,
                      .pWaitSemaphoreInfos = &wait,
                      .commandBufferInfoCount = with_cb ? 1 : 0,
                      .pCommandBufferInfos = &cbi,
                      .signalSemaphoreInfoCount = 1,
                      .pSignalSemaphoreInfos = &signal};
  uint64_t t0 = now_ns();
  VKCHECK(r->vk.vkQueueSubmit2(r->queue, 1, &si, VK_NULL_HANDLE));
  if (submit_ns) *submit_ns = now_ns() - t0;
}

static void raw_floor_open(raw_floor_t *r, tandem_runtime_t *rt) {
  memset(r, 0, sizeof *r);
  tandem_vulkan_handles_t h;
  bench_vk_load(rt, &h, &r->vk);
  r->device = h.device;
  r->queue = h.lanes[TANDEM_LANE_COMPUTE].queue;
  uint32_t family = h.lanes[TANDEM_LANE_COMPUTE].queue_family;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(h.physical_device, &props);
  r->period_ns = props.limits.timestampPeriod;
  VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .queueFamilyIndex = family};
  VKCHECK(r->vk.vkCreateCommandPool(r->device, &cpci, NULL, &r->pool));
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = r->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 2};
  VkCommandBuffer cbs[2];
  VKCHECK(r->vk.vkAllocateCommandBuffers(r->device, &ai, cbs));
  r->cb = cbs[0];
  r->cb_ts = cbs[1];
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  VKCHECK(r->vk.vkCreateSemaphore(r->device, &sci, NULL, &r->done));
  VKCHECK(r->vk.vkCreateSemaphore(r->device, &sci, NULL, &r->gate));
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = 256,
                            .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  VKCHECK(r->vk.vkCreateBuffer(r->device, &bci, NULL, &r->buffer));
  VkMemoryRequirements req;
  r->vk.vkGetBufferMemoryRequirements(r->device, r->buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(h.physical_device, &mp);
  uint32_t type_index = UINT32_MAX;
  for (uint32_t i = 0; i < mp.memoryTypeCount && type_index == UINT32_MAX; i++)
    if ((req.memoryTypeBits & (1u << i)) &&
        (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      type_index = i;
  for (uint32_t i = 0; i < mp.memoryTypeCount && type_index == UINT32_MAX; i++)
    if (req.memoryTypeBits & (1u << i)) type_index = i;
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = type_index};
  VKCHECK(r->vk.vkAllocateMemory(r->device, &mai, NULL, &r->memory));
  VKCHECK(r->vk.vkBindBufferMemory(r->device, r->buffer, r->memory, 0));
  VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                               .queryType = VK_QUERY_TYPE_TIMESTAMP,
                               .queryCount = 2};
  VKCHECK(r->vk.vkCreateQueryPool(r->device, &qci, NULL, &r->queries));
  /* Each run finishes before the next is submitted or armed. */
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKCHECK(r->vk.vkBeginCommandBuffer(r->cb, &bi));
  r->vk.vkCmdFillBuffer(r->cb, r->buffer, 0, 256, 7u);
  VKCHECK(r->vk.vkEndCommandBuffer(r->cb));
  VKCHECK(r->vk.vkBeginCommandBuffer(r->cb_ts, &bi));
  r->vk.vkCmdResetQueryPool(r->cb_ts, r->queries, 0, 2); /* hostQueryReset may be off */
  r->vk.vkCmdWriteTimestamp2(r->cb_ts, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, r->queries, 0);
  r->vk.vkCmdFillBuffer(r->cb_ts, r->buffer, 0, 256, 7u);
  r->vk.vkCmdWriteTimestamp2(r->cb_ts, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, r->queries, 1);
  VKCHECK(r->vk.vkEndCommandBuffer(r->cb_ts));
}

static void raw_floor_close(raw_floor_t *r) {
  r->vk.vkDeviceWaitIdle(r->device);
  r->vk.vkDestroyQueryPool(r->device, r->queries, NULL);
  r->vk.vkDestroyBuffer(r->device, r->buffer, NULL);
  r->vk.vkFreeMemory(r->device, r->memory, NULL);
  r->vk.vkDestroySemaphore(r->device, r->done, NULL);
  r->vk.vkDestroySemaphore(r->device, r->gate, NULL);
  r->vk.vkDestroyCommandPool(r->device, r->pool, NULL);
}

int main(int argc, char **argv) {
  bool smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
  uint32_t rounds = smoke ? 20 : argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 2000;
  if (rounds < 10) rounds = 10;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.validation = smoke;
  if (smoke) o.validation_callback = on_validation;
  tandem_runtime_t *rt = NULL;
  CHECK(tandem_runtime_create(&o, &rt));
  CHECK(tandem_runtime_open_gpu(rt));
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  CHECK(tandem_runtime_gpu_info(rt, 0, &info));

  tandem_buffer_t *b = NULL;
  CHECK(tandem_buffer_create(rt, 256, TANDEM_PLACEMENT_GPU_LOCAL, &b));
  tandem_graph_t *g = NULL;
  CHECK(tandem_graph_create(rt, &g));
  CHECK(tandem_graph_add_fill(g, tandem_buffer_whole(b), 7u, TANDEM_LANE_COMPUTE));
  tandem_exec_t *e = NULL;
  CHECK(tandem_graph_prepare(g, &e));

  raw_floor_t r;
  raw_floor_open(&r, rt);

  uint64_t *t[WAY_COUNT];
  uint64_t *submit_cost = calloc(rounds, sizeof *submit_cost);
  uint64_t *signal_cost = calloc(rounds, sizeof *signal_cost);
  for (int w = 0; w < WAY_COUNT; w++) t[w] = calloc(rounds, sizeof *t[w]);
  if (!submit_cost || !signal_cost) return 1;
  uint32_t warm = rounds / 10;
  for (uint32_t i = 0; i < rounds + warm; i++) {
    uint32_t at = i < warm ? 0 : i - warm;
    for (int w = 0; w < WAY_COUNT; w++) {
      uint64_t start = 0, end = 0, cost = 0;
      if (w == WAY_TANDEM || w == WAY_TANDEM_WAIT) {
        tandem_completion_t *c = NULL;
        start = now_ns();
        CHECK(tandem_exec_submit(e, &c));
        if (w == WAY_TANDEM) {
          while (!tandem_completion_is_complete(c)) {
          }
        } else {
          CHECK(tandem_completion_wait(c));
        }
        end = now_ns();
        CHECK(tandem_completion_wait(c)); /* its result */
        tandem_completion_release(c);
      } else if (w == WAY_ARMED) {
        /* Armed ahead (untimed), as a replay would be right after the
         * previous one; the timed part is the host signal and the poll. */
        tandem_runtime_queue_lock(rt, TANDEM_LANE_COMPUTE);
        raw_floor_submit(&r, r.cb, true, NULL);
        tandem_runtime_queue_unlock(rt, TANDEM_LANE_COMPUTE);
        VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                    .semaphore = r.gate,
                                    .value = ++r.gate_value};
        start = now_ns();
        VKCHECK(r.vk.vkSignalSemaphore(r.device, &si));
        cost = now_ns() - start;
        raw_floor_wait_done(&r);
        end = now_ns();
        signal_cost[at] = cost;
      } else {
        start = now_ns();
        tandem_runtime_queue_lock(rt, TANDEM_LANE_COMPUTE);
        raw_floor_submit(&r, w == WAY_RAW ? r.cb : VK_NULL_HANDLE, false, &cost);
        tandem_runtime_queue_unlock(rt, TANDEM_LANE_COMPUTE);
        raw_floor_wait_done(&r);
        end = now_ns();
        if (w == WAY_RAW) submit_cost[at] = cost;
      }
      t[w][at] = end - start;
    }
  }
  tandem_runtime_queue_lock(rt, TANDEM_LANE_COMPUTE);
  raw_floor_submit(&r, r.cb_ts, false, NULL);
  tandem_runtime_queue_unlock(rt, TANDEM_LANE_COMPUTE);
  raw_floor_wait_done(&r);
  uint64_t ts[2] = {0, 0};
  VKCHECK(r.vk.vkGetQueryPoolResults(r.device, r.queries, 0, 2, sizeof ts, ts, sizeof ts[0],
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  printf("round_trip_floor: %s, %u rounds, one 256-byte fill on the compute lane, polling\n",
         info.name, rounds);
  printf("%-12s %10s %10s %10s\n", "way", "p10 us", "median us", "p90 us");
  for (int w = 0; w < WAY_COUNT; w++) {
    qsort(t[w], rounds, sizeof *t[w], cmp_u64);
    printf("%-12s %10.2f %10.2f %10.2f\n", way_names[w], t[w][rounds / 10] / 1e3,
           t[w][rounds / 2] / 1e3, t[w][rounds * 9 / 10] / 1e3);
  }
  qsort(submit_cost, rounds, sizeof *submit_cost, cmp_u64);
  qsort(signal_cost, rounds, sizeof *signal_cost, cmp_u64);
  printf("host cost of vkQueueSubmit2 (raw): median %.2f us; of vkSignalSemaphore (armed): "
         "median %.2f us\n",
         submit_cost[rounds / 2] / 1e3, signal_cost[rounds / 2] / 1e3);
  printf("GPU time of the fill (one run between timestamps): %.2f us\n",
         (double)(ts[1] - ts[0]) * r.period_ns / 1e3);
  raw_floor_close(&r);
  for (int w = 0; w < WAY_COUNT; w++) free(t[w]);
  free(submit_cost);
  free(signal_cost);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(b);
  return bench_runtime_destroy(rt);
}
