/* SPDX-License-Identifier: MIT */
/*
 * driver_memory.c — which of the driver's objects a large prepare touches
 * fresh memory for, in raw Vulkan on tandem's own VkDevice and compute queue
 * (tandem_runtime_vulkan_handles; never a second device).
 *
 * Question (bench/NOTES.md, "prepare: 100 000 nodes and fresh memory"): on the
 * H200, a prepare of 20 000 or more dispatches takes 0.43 minor page faults
 * per node every time, one of 10 000 none after the first; the faults are the
 * driver's (glibc keeping freed memory does not remove them). A prepare makes
 * per slot one descriptor set per dispatch, from a descriptor pool created
 * for the program, and records one bind + dispatch per node into command
 * buffers of pools that live as long as the runtime. This program does each
 * part alone, N times over, three rounds, and counts the page faults and time
 * of each:
 *
 *   sets     vkCreateDescriptorPool for N sets, vkAllocateDescriptorSets,
 *            vkUpdateDescriptorSets of all N; the pool destroyed at the end
 *            of the round (as tandem_exec_release does)
 *   record   one command buffer from a long-lived pool: the pipeline bound
 *            once, then N × (vkCmdBindDescriptorSets + vkCmdDispatch); freed
 *            at the end of the round (as tandem_exec_release does)
 *   reset    as sets, but a pool kept from the previous round and reset
 *            (vkResetDescriptorPool) instead of created: what a runtime-wide
 *            cache of descriptor pools would give
 *   cbs      N command buffers of one vkCmdFillBuffer each, from a pool made
 *            as tandem makes its lanes' (RESET_COMMAND_BUFFER), freed at the
 *            end of the round: what a graph of many small regions (a
 *            chunked stream) costs; faults and time are per command buffer
 *   cbs-tr   the same from a pool made TRANSIENT too (a hint that buffers
 *            are short-lived, which a driver may answer with smaller chunks)
 *   rerec    the N command buffers of the first round kept and recorded
 *            again (begin resets them) in the later rounds: what keeping a
 *            freed executable's command buffers for the next would give
 *
 *   build/bench/tandem_bench_driver_memory [N ...]     (default 10000 20000 100000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "driver_memory"
#include "bench_common.h"
#include "tandem/tandem_vulkan.h"
#include "tandem_bench_shaders.h"
#include "bench_vk.h"

typedef struct raw_memory {
  struct VolkDeviceTable vk;
  VkDevice device;
  VkCommandPool cmd_pool;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout pipeline_layout;
  VkPipeline pipeline;
  VkBuffer buffer;                         /* the one the sets point at */
  VkCommandPool lane_pool, transient_pool; /* the cbs and cbs-tr parts' */
} raw_memory_t;

typedef struct part {
  double ms;
  long faults;
} part_t;

/* Allocates and writes |n| sets from |*pool| (created when VK_NULL_HANDLE,
 * else reset); the sets land in |sets|. */
static part_t make_sets(raw_memory_t *r, VkDescriptorPool *pool, uint32_t n, VkDescriptorSet *sets,
                        VkDescriptorSetLayout *layouts, VkWriteDescriptorSet *writes) {
  long f0 = minor_faults();
  uint64_t t0 = now_ns();
  if (*pool == VK_NULL_HANDLE) {
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, n};
    VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = n,
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &size};
    VKCHECK(r->vk.vkCreateDescriptorPool(r->device, &dpci, NULL, pool));
  } else {
    VKCHECK(r->vk.vkResetDescriptorPool(r->device, *pool, 0));
  }
  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = *pool,
                                    .descriptorSetCount = n,
                                    .pSetLayouts = layouts};
  VKCHECK(r->vk.vkAllocateDescriptorSets(r->device, &ai, sets));
  VkDescriptorBufferInfo info = {r->buffer, 0, 256};
  for (uint32_t i = 0; i < n; i++)
    writes[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                       .dstSet = sets[i],
                                       .descriptorCount = 1,
                                       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                       .pBufferInfo = &info};
  r->vk.vkUpdateDescriptorSets(r->device, n, writes, 0, NULL);
  return (part_t){(double)(now_ns() - t0) / 1e6, minor_faults() - f0};
}

static part_t record(raw_memory_t *r, uint32_t n, const VkDescriptorSet *sets,
                     VkCommandBuffer *out) {
  long f0 = minor_faults();
  uint64_t t0 = now_ns();
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = r->cmd_pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VKCHECK(r->vk.vkAllocateCommandBuffers(r->device, &ai, out));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKCHECK(r->vk.vkBeginCommandBuffer(*out, &bi));
  r->vk.vkCmdBindPipeline(*out, VK_PIPELINE_BIND_POINT_COMPUTE, r->pipeline);
  for (uint32_t i = 0; i < n; i++) {
    r->vk.vkCmdBindDescriptorSets(*out, VK_PIPELINE_BIND_POINT_COMPUTE, r->pipeline_layout, 0, 1,
                                  &sets[i], 0, NULL);
    r->vk.vkCmdDispatch(*out, 1, 1, 1);
  }
  VKCHECK(r->vk.vkEndCommandBuffer(*out));
  return (part_t){(double)(now_ns() - t0) / 1e6, minor_faults() - f0};
}

/* |n| command buffers from |pool|, one fill each, then freed unless |keep|;
 * with |reuse|, |cbs| holds kept ones, recorded again instead of allocated. */
static part_t small_buffers(raw_memory_t *r, VkCommandPool pool, uint32_t n, VkCommandBuffer *cbs,
                            bool reuse, bool keep) {
  long f0 = minor_faults();
  uint64_t t0 = now_ns();
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = n};
  if (!reuse) VKCHECK(r->vk.vkAllocateCommandBuffers(r->device, &ai, cbs));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  for (uint32_t i = 0; i < n; i++) {
    VKCHECK(r->vk.vkBeginCommandBuffer(cbs[i], &bi));
    r->vk.vkCmdFillBuffer(cbs[i], r->buffer, 0, 256, i);
    VKCHECK(r->vk.vkEndCommandBuffer(cbs[i]));
  }
  part_t p = {(double)(now_ns() - t0) / 1e6, minor_faults() - f0};
  if (!keep) r->vk.vkFreeCommandBuffers(r->device, pool, n, cbs);
  return p;
}

static void raw_memory_open(raw_memory_t *r, tandem_runtime_t *rt, tandem_buffer_t *buffer) {
  memset(r, 0, sizeof *r);
  tandem_vulkan_handles_t h;
  bench_vk_load(rt, &h, &r->vk);
  r->device = h.device;
  tandem_vulkan_view_t vv;
  CHECK(tandem_view_vulkan_buffer(tandem_buffer_whole(buffer), &vv));
  r->buffer = (VkBuffer)vv.buffer;
  VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .queueFamilyIndex = h.lanes[TANDEM_LANE_COMPUTE].queue_family};
  VKCHECK(r->vk.vkCreateCommandPool(r->device, &cpci, NULL, &r->cmd_pool));
  cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  VKCHECK(r->vk.vkCreateCommandPool(r->device, &cpci, NULL, &r->lane_pool));
  cpci.flags |= VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  VKCHECK(r->vk.vkCreateCommandPool(r->device, &cpci, NULL, &r->transient_pool));
  VkDescriptorSetLayoutBinding binding = {.binding = 0,
                                          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .descriptorCount = 1,
                                          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dslci = {.sType =
                                               VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = 1,
                                           .pBindings = &binding};
  VKCHECK(r->vk.vkCreateDescriptorSetLayout(r->device, &dslci, NULL, &r->set_layout));
  VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &r->set_layout};
  VKCHECK(r->vk.vkCreatePipelineLayout(r->device, &plci, NULL, &r->pipeline_layout));
  VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = tandem_spv_bench_increment_size,
                                   .pCode = tandem_spv_bench_increment};
  VkShaderModule module;
  VKCHECK(r->vk.vkCreateShaderModule(r->device, &smci, NULL, &module));
  VkComputePipelineCreateInfo cpi = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module,
                .pName = "main"},
      .layout = r->pipeline_layout};
  VKCHECK(r->vk.vkCreateComputePipelines(r->device, VK_NULL_HANDLE, 1, &cpi, NULL, &r->pipeline));
  r->vk.vkDestroyShaderModule(r->device, module, NULL);
}

static void raw_memory_close(raw_memory_t *r) {
  r->vk.vkDestroyPipeline(r->device, r->pipeline, NULL);
  r->vk.vkDestroyPipelineLayout(r->device, r->pipeline_layout, NULL);
  r->vk.vkDestroyDescriptorSetLayout(r->device, r->set_layout, NULL);
  r->vk.vkDestroyCommandPool(r->device, r->cmd_pool, NULL);
  r->vk.vkDestroyCommandPool(r->device, r->lane_pool, NULL);
  r->vk.vkDestroyCommandPool(r->device, r->transient_pool, NULL);
}

static void print_part(const char *name, uint32_t n, const part_t *p, int rounds) {
  printf("  %-7s", name);
  for (int k = 0; k < rounds; k++)
    printf("  %8.2f ms %6.3f f/node", p[k].ms, (double)p[k].faults / n);
  printf("\n");
}

int main(int argc, char **argv) {
  uint32_t sizes[8] = {10000, 20000, 100000};
  int count = 0;
  for (int i = 1; i < argc && count < 8; i++) {
    sizes[count] = (uint32_t)strtoul(argv[i], NULL, 10);
    if (sizes[count] == 0 || sizes[count] > 1000000) {
      fprintf(stderr, "driver_memory: sizes are 1 to 1000000 nodes, got '%s'\n", argv[i]);
      return 2;
    }
    count++;
  }
  if (!count) count = 3;
  tandem_runtime_t *rt;
  CHECK(tandem_runtime_create(NULL, &rt));
  CHECK(tandem_runtime_open_gpu(rt));
  tandem_buffer_t *buffer;
  CHECK(tandem_buffer_create(rt, 256, TANDEM_PLACEMENT_GPU_LOCAL, &buffer));
  raw_memory_t r;
  raw_memory_open(&r, rt, buffer);
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  CHECK(tandem_runtime_gpu_info(rt, 0, &info));
  printf("device: %s (%s %s); per part and size, three rounds: ms and minor page faults per "
         "node\n",
         info.name, info.driver_name, info.driver_info);
  enum { ROUNDS = 3 };
  for (int k = 0; k < count; k++) {
    uint32_t n = sizes[k];
    VkDescriptorSet *sets = malloc(n * sizeof *sets);
    VkDescriptorSetLayout *layouts = malloc(n * sizeof *layouts);
    VkWriteDescriptorSet *writes = malloc(n * sizeof *writes);
    if (!sets || !layouts || !writes) return 1;
    for (uint32_t i = 0; i < n; i++) layouts[i] = r.set_layout;
    /* Touch the arrays once so that their own first touches are not counted. */
    memset(sets, 0, n * sizeof *sets);
    memset(writes, 0, n * sizeof *writes);
    part_t sets_part[ROUNDS], record_part[ROUNDS], reset_part[ROUNDS], cbs_part[ROUNDS],
        transient_part[ROUNDS], rerec_part[ROUNDS];
    VkCommandBuffer *cbs = malloc(n * sizeof *cbs);
    if (!cbs) return 1;
    memset(cbs, 0, n * sizeof *cbs);
    VkDescriptorPool kept = VK_NULL_HANDLE;
    for (int round = 0; round < ROUNDS; round++) {
      VkDescriptorPool pool = VK_NULL_HANDLE;
      sets_part[round] = make_sets(&r, &pool, n, sets, layouts, writes);
      VkCommandBuffer cb;
      record_part[round] = record(&r, n, sets, &cb);
      r.vk.vkFreeCommandBuffers(r.device, r.cmd_pool, 1, &cb);
      r.vk.vkDestroyDescriptorPool(r.device, pool, NULL);
      reset_part[round] = make_sets(&r, &kept, n, sets, layouts, writes);
    }
    for (int round = 0; round < ROUNDS; round++)
      cbs_part[round] = small_buffers(&r, r.lane_pool, n, cbs, false, false);
    for (int round = 0; round < ROUNDS; round++)
      transient_part[round] = small_buffers(&r, r.transient_pool, n, cbs, false, false);
    for (int round = 0; round < ROUNDS; round++)
      rerec_part[round] = small_buffers(&r, r.lane_pool, n, cbs, round > 0, round + 1 < ROUNDS);
    r.vk.vkDestroyDescriptorPool(r.device, kept, NULL);
    printf("%u nodes\n", n);
    print_part("sets", n, sets_part, ROUNDS);
    print_part("record", n, record_part, ROUNDS);
    print_part("reset", n, reset_part, ROUNDS);
    print_part("cbs", n, cbs_part, ROUNDS);
    print_part("cbs-tr", n, transient_part, ROUNDS);
    print_part("rerec", n, rerec_part, ROUNDS);
    free(cbs);
    free(sets);
    free(layouts);
    free(writes);
  }
  raw_memory_close(&r);
  tandem_buffer_release(buffer);
  tandem_runtime_destroy(rt);
  return 0;
}
