/* SPDX-License-Identifier: MIT */
/*
 * vk_submit.c — prepared programs: command buffers recorded once per slot and
 * region, submitted with timeline waits and signals; waiting and polling.
 *
 * Recording is core's command interface (core/backend.h): core/record.c
 * walks the plan and calls record_begin / record_bindings / record_barrier /
 * record_fill / record_copy / record_dispatch / record_end with every
 * decision made (order, barriers and their scopes); this file only turns
 * each call into Vulkan commands and descriptor writes. It never sees core's
 * plan or node layouts.
 *
 * Everything a submission needs (VkSubmitInfo2, semaphore and command-buffer
 * infos, descriptor sets) is allocated at program creation, one set per slot;
 * submit only writes values into them, so replay allocates nothing. A region
 * whose nodes' parameters changed (tandem_exec_set_*) is re-recorded into the
 * submitting slot's own command buffers and descriptor sets, which no running
 * work uses. Consecutive regions
 * that land on one VkQueue go to the driver in one vkQueueSubmit2 call.
 *
 * A long region is recorded in pieces (core/backend.h, "Pieces"), one
 * command buffer each, and submitted as one VkSubmitInfo2 listing the
 * pieces' buffers in order. That keeps the barrier at the start of a piece
 * ordering the previous pieces' work: the order of pCommandBufferInfos in
 * one batch is submission order ("Implicit Synchronization Guarantees",
 * Vulkan spec chapter 7, Synchronization and Cache Control:
 * https://registry.khronos.org/vulkan/specs/1.3/html/chap7.html), and
 * vkCmdPipelineBarrier2 "defines memory dependencies between commands that
 * were submitted to the same queue before it, and those submitted to the
 * same queue after it", its first scope applied to "operations that
 * occurred earlier in submission order"
 * (https://registry.khronos.org/vulkan/specs/1.3-extensions/man/html/vkCmdPipelineBarrier2.html),
 * not only to those of its own command buffer. The waits and signals of the
 * batch are the region's, as before.
 * Pipeline, descriptor set and push constants do not carry over from one
 * command buffer to the next, so each piece binds its own.
 *
 * Command pools are externally synchronised, including while recording into
 * their command buffers: piece q of slot s's buffers come from its lane's pool
 * (q * slot_count + s) % TANDEM_VK_SLOT_POOLS, and recording holds that pool's
 * mutex, so the slots and pieces of one program can record on up to four
 * threads at once (core/record.c), and two recordings that land on one pool
 * (another program's prepare, a third thread) only wait for each other.
 * Descriptor sets need no more: updating a set is synchronised on the set
 * (each slot has its own), the descriptor pool only on allocating and
 * freeing, which happen at program creation and destruction.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "backends/vulkan/vk_internal.h"

/* Descriptor writes go to the driver in batches of up to this many (one call
 * per node cost a driver entry per dispatch at prepare). */
enum { TANDEM_VK_WRITE_BATCH = 128 };
_Static_assert(TANDEM_VK_WRITE_BATCH >= TANDEM_MAX_BINDINGS, "a dispatch's writes fit one batch");
_Static_assert(TANDEM_VK_WRITE_BATCH == TANDEM__BINDING_BATCH,
               "one record_bindings batch is one vkUpdateDescriptorSets");

/* The recording in progress of one piece of one region of one slot
 * (core/backend.h: a (slot, piece) records one region at a time, between
 * record_begin and record_end, on one thread; different slots and pieces may
 * record at once on different threads). One per slot and piece index in the
 * program, so recording allocates nothing. |cb| is
 * non-NULL exactly while recording, and |pool_mutex| (the piece's pool's) is
 * held for that whole time (pools are externally synchronised while their
 * buffers record). Only the thread holding |pool_mutex| touches the
 * recording; Debug builds check that each call comes from it (|owner|). */
typedef struct tandem_vk_recording {
  VkCommandBuffer cb;
  tandem_vk_lane_t *lane;
  pthread_mutex_t *pool_mutex;
#ifndef NDEBUG
  pthread_t owner; /* the thread between record_begin and record_end */
#endif
  uint32_t at;           /* slot * region_count + region: its timestamp queries */
  bool first, last;      /* the region's first piece (start timestamp), last (end) */
  VkDescriptorSet *sets; /* the slot's sets, by command id */
  /* State carried from command to command: the compute pipeline bound so
   * far (state persists across barriers, fills and copies, so a run of
   * dispatches of one kernel binds it once, as hand-written Vulkan would),
   * and the kernel and bindings of the descriptor set bound. */
  VkPipeline bound;
  const tandem_vk_kernel_t *set_kernel; /* NULL: no set bound yet */
  uint32_t set_binding_count;
  tandem__binding_t set_bindings[TANDEM_MAX_BINDINGS];
  /* Descriptor writes not yet handed to the driver (record_bindings). */
  uint32_t pending;
  VkDescriptorBufferInfo infos[TANDEM_VK_WRITE_BATCH];
  VkWriteDescriptorSet writes[TANDEM_VK_WRITE_BATCH];
} tandem_vk_recording_t;

typedef struct tandem_vk_program {
  uint32_t slot_count, region_count, command_count;
  tandem_vk_descriptor_pool_t descriptors; /* taken from and given back to the device's kept
                                             pools (vk_descriptors.c) */
  VkDescriptorSet *sets; /* [slot * command_count + id]; NULL for a command other than a
                            dispatch with bindings, and for a kernel that pushes them */
  VkQueryPool queries;   /* 2 per region per slot, or NULL without timestamps */
  /* Pieces (core/backend.h): region r's are piece_base[r] .. +region_pieces[r]-1
   * of piece_total per slot; max_pieces the most of one region. */
  uint32_t piece_total, max_pieces;
  uint32_t *piece_base, *region_pieces; /* [region] */
  VkCommandBuffer *cbs;                 /* [slot * piece_total + piece_base[region] + piece] */
  tandem_lane_t *region_lane;           /* [region] */
  VkSubmitInfo2 *submits;               /* [slot * region_count + region] */
  VkSemaphoreSubmitInfo *waits;   /* [(slot * region_count + region) * (TANDEM__MAX_LANES + 1)]:
                                          each lane's timeline, and an external one */
  VkSemaphoreSubmitInfo *signals; /* [2 * (slot * region_count + region)]: timeline, mirror */
  VkCommandBufferSubmitInfo *cb_infos; /* as cbs: a region's pieces' are contiguous */
  tandem_vk_recording_t *recs;         /* [slot * max_pieces + piece]: each recording */
  /* Handoffs to and from the NPU (core/backend.h), copied from the
   * description: region r's are handoffs[handoff_first[r] ..
   * handoff_first[r + 1]). NULL (and the two arrays with it) when the
   * program has none, so a GPU-only program records and submits as before.
   * coherence[2 * (slot * region_count + region)]: the buffer barriers the
   * slot's last recording of the region holds at its start, [.. + 1] at its
   * end (apart: the first and last pieces may record on two threads at
   * prepare), added up at submit. */
  tandem__handoff_t *handoffs;
  uint32_t *handoff_first;
  uint32_t *coherence;
} tandem_vk_program_t;

/* The pool index of piece |piece| of slot |slot| on every lane
 * (vk_internal.h): the pool of the thread core records it on. */
static inline uint32_t tandem_vk_slot_pool(const tandem_vk_program_t *p, uint32_t slot,
                                           uint32_t piece) {
  return (uint32_t)(((uint64_t)piece * p->slot_count + slot) % TANDEM_VK_SLOT_POOLS);
}

/* The recording of (|slot|, |piece|), checked in Debug builds to be open and
 * to be this thread's. */
static inline tandem_vk_recording_t *tandem_vk_recording(void *native, uint32_t slot,
                                                         uint32_t piece) {
  tandem_vk_program_t *p = native;
  assert(slot < p->slot_count && piece < p->max_pieces);
  tandem_vk_recording_t *rec = &p->recs[(size_t)slot * p->max_pieces + piece];
  assert(rec->cb && pthread_equal(rec->owner, pthread_self()));
  return rec;
}

void tandem_vk_program_destroy(tandem__gpu_t *base, void *native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_program_t *p = native;
  if (!p) return;
  for (uint32_t s = 0; p->recs && s < p->slot_count * p->max_pieces; s++)
    assert(!p->recs[s].cb); /* no recording left open (core pairs begin and end) */
  if (p->cbs && p->piece_base) {
    for (uint32_t s = 0; s < p->slot_count; s++) {
      for (uint32_t r = 0; r < p->region_count; r++) {
        for (uint32_t q = 0; q < p->region_pieces[r]; q++) {
          VkCommandBuffer cb = p->cbs[(size_t)s * p->piece_total + p->piece_base[r] + q];
          if (!cb) continue;
          uint32_t i = tandem_vk_slot_pool(p, s, q);
          tandem_vk_lane_t *lane = &g->lanes[p->region_lane[r]];
          pthread_mutex_lock(&lane->pool_mutex[i]);
          g->vk.vkFreeCommandBuffers(g->device, lane->pools[i], 1, &cb);
          pthread_mutex_unlock(&lane->pool_mutex[i]);
        }
      }
    }
  }
  tandem_vk_descriptor_pool_give(g, p->descriptors);
  if (p->queries) g->vk.vkDestroyQueryPool(g->device, p->queries, NULL);
  free(p->cbs);
  free(p->sets);
  free(p->region_lane);
  free(p->submits);
  free(p->waits);
  free(p->signals);
  free(p->cb_infos);
  free(p->recs);
  free(p->piece_base);
  free(p->region_pieces);
  free(p->handoffs);
  free(p->handoff_first);
  free(p->coherence);
  free(p);
}

/* Whether command |c| draws a descriptor set: a dispatch with bindings whose
 * kernel does not push them. */
static bool tandem_vk_command_has_set(const tandem__program_command_t *c) {
  return c->kernel && c->binding_count > 0 && !((const tandem_vk_kernel_t *)c->kernel)->push;
}

/* Fills |info| and |write| with |count| bindings for |set| (VK_NULL_HANDLE
 * for a push): each exactly the contract's bytes, so the kernel sees no more. */
static void tandem_vk_binding_writes(VkDescriptorSet set, const tandem__binding_t *bindings,
                                     uint32_t count, VkDescriptorBufferInfo *info,
                                     VkWriteDescriptorSet *write) {
  for (uint32_t b = 0; b < count; b++) {
    info[b] = (VkDescriptorBufferInfo){tandem_vk_buffer_handle(bindings[b].buffer),
                                       bindings[b].offset, bindings[b].range};
    write[b] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                      .dstSet = set,
                                      .dstBinding = b,
                                      .descriptorCount = 1,
                                      .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = &info[b]};
  }
}

/* Hands the pending descriptor writes to the driver. Every command calls it
 * first: a set must be written before a command binds it. */
static void tandem_vk_flush_writes(tandem_vk_gpu_t *g, tandem_vk_recording_t *rec) {
  if (!rec->pending) return;
  g->vk.vkUpdateDescriptorSets(g->device, rec->pending, rec->writes, 0, NULL);
  rec->pending = 0;
}

/* Records region |region|'s handoffs of one direction (|release|: at its
 * end; else at its start) as buffer barriers, up to 16 per
 * vkCmdPipelineBarrier2, and returns how many (docs/interop.md, "Coherence
 * with the NPU", has the spec text behind each form):
 *  - dma-buf memory (|external|): the external-memory rule ("Resources shared
 *    with external APIs or instances using external memory must also
 *    explicitly manage ownership transfers between local and external queues
 *    (or equivalent constructs in external APIs) regardless of the
 *    VkSharingMode specified when creating them", spec 12.x "External
 *    Resource Sharing"): a queue-family ownership transfer to
 *    VK_QUEUE_FAMILY_EXTERNAL after the region's last write, and back before
 *    its first access. The buffer's own side is its lane's family, or
 *    VK_QUEUE_FAMILY_IGNORED for a CONCURRENT buffer (VUID
 *    VkBufferMemoryBarrier2-buffer-04088). The far side of each transfer
 *    names no stage (NONE), as the spec's tutorial does: the region's
 *    timeline signal and waits (ALL_COMMANDS) order the transfer against
 *    the NPU, and no later work on the queue waits for the release.
 *    VK_QUEUE_FAMILY_FOREIGN_EXT would name a non-Vulkan NPU more exactly; it
 *    needs VK_EXT_queue_family_foreign, which the device does not enable.
 *  - host memory (a host-pointer import, a staged buffer): the NPU side
 *    reads and writes it from the host (the NPU lane's cache maintenance and
 *    copies), so the host domain's barriers: the region's writes made
 *    available to HOST_READ / HOST_WRITE at its end, and at its start the
 *    host's writes (HOST_WRITE in the source access scope performs the
 *    host-to-device domain operation) made visible to the lane. Submission
 *    alone does not do it: the region was submitted before the NPU lane
 *    wrote, and the implicit guarantee covers host writes made before
 *    vkQueueSubmit only. Ownership transfers may not name HOST (VUID
 *    VkBufferMemoryBarrier2-srcStageMask-03851), hence two forms. */
static uint32_t tandem_vk_record_handoffs(tandem_vk_gpu_t *g, const tandem_vk_program_t *p,
                                          const tandem_vk_recording_t *rec, uint32_t region,
                                          bool release) {
  const tandem_vk_lane_t *lane = rec->lane;
  uint32_t own = g->family_count > 1 ? VK_QUEUE_FAMILY_IGNORED : lane->queue->family;
  VkBufferMemoryBarrier2 barriers[16];
  uint32_t n = 0, total = 0;
  for (uint32_t i = p->handoff_first[region]; i <= p->handoff_first[region + 1]; i++) {
    if (n == sizeof barriers / sizeof barriers[0] || (i == p->handoff_first[region + 1] && n)) {
      VkDependencyInfo dep = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                              .bufferMemoryBarrierCount = n,
                              .pBufferMemoryBarriers = barriers};
      g->vk.vkCmdPipelineBarrier2(rec->cb, &dep);
      total += n;
      n = 0;
    }
    if (i == p->handoff_first[region + 1]) break;
    const tandem__handoff_t *h = &p->handoffs[i];
    if (h->release != release) continue;
    VkBufferMemoryBarrier2 *b = &barriers[n++];
    *b = (VkBufferMemoryBarrier2){.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2,
                                  .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                  .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                  .buffer = tandem_vk_buffer_handle(h->buffer),
                                  .offset = h->offset,
                                  .size = h->length};
    if (h->external && release) {
      b->srcStageMask = lane->stages;
      b->srcAccessMask = lane->src_access;
      b->dstStageMask = VK_PIPELINE_STAGE_2_NONE; /* the timeline signal orders the rest */
      b->srcQueueFamilyIndex = own;
      b->dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
    } else if (h->external) {
      b->srcStageMask = VK_PIPELINE_STAGE_2_NONE; /* the timeline wait orders what came before */
      b->dstStageMask = lane->stages;
      b->dstAccessMask = lane->dst_access;
      b->srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
      b->dstQueueFamilyIndex = own;
    } else if (release) {
      b->srcStageMask = lane->stages;
      b->srcAccessMask = lane->src_access;
      b->dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
      b->dstAccessMask = VK_ACCESS_2_HOST_READ_BIT | VK_ACCESS_2_HOST_WRITE_BIT;
    } else {
      b->srcStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
      b->srcAccessMask = VK_ACCESS_2_HOST_WRITE_BIT;
      b->dstStageMask = lane->stages;
      b->dstAccessMask = lane->dst_access;
    }
  }
  return total;
}

tandem_status_t tandem_vk_record_begin(tandem__gpu_t *base, void *native, uint32_t slot,
                                       uint32_t region, uint32_t piece) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_program_t *p = native;
  assert(slot < p->slot_count && region < p->region_count && piece < p->region_pieces[region]);
  tandem_vk_recording_t *rec = &p->recs[(size_t)slot * p->max_pieces + piece];
  assert(!rec->cb && p->region_lane[region] != TANDEM_LANE_NPU);
  tandem_vk_lane_t *lane = &g->lanes[p->region_lane[region]];
  uint32_t at = slot * p->region_count + region;
  VkCommandBuffer cb = p->cbs[(size_t)slot * p->piece_total + p->piece_base[region] + piece];
  pthread_mutex_t *pool_mutex = &lane->pool_mutex[tandem_vk_slot_pool(p, slot, piece)];
  pthread_mutex_lock(pool_mutex);
  /* The slot is not in flight (its last run retired), so neither its sets
   * nor its command buffers are in use. Begin resets a recorded buffer (the
   * pool has RESET_COMMAND_BUFFER). */
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkResult vr = g->vk.vkBeginCommandBuffer(cb, &bi);
  if (vr < 0) {
    pthread_mutex_unlock(pool_mutex);
    return tandem_vk_fail(vr, "recording a region's command buffer", __FILE__, __LINE__);
  }
  /* The region's start in its first piece, its end in its last. */
  rec->first = piece == 0;
  rec->last = piece + 1 == p->region_pieces[region];
  if (p->queries && rec->first)
    g->vk.vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, p->queries, 2 * at);
  rec->cb = cb;
  rec->lane = lane;
  rec->pool_mutex = pool_mutex;
#ifndef NDEBUG
  rec->owner = pthread_self();
#endif
  rec->at = at;
  rec->sets = &p->sets[(size_t)slot * p->command_count];
  rec->bound = VK_NULL_HANDLE;
  rec->set_kernel = NULL;
  rec->pending = 0;
  if (p->handoffs && rec->first)
    p->coherence[2 * at] = tandem_vk_record_handoffs(g, p, rec, region, false);
  return TANDEM_OK;
}

void tandem_vk_record_bindings(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                               const tandem__binding_batch_t *batch) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_recording_t *rec = tandem_vk_recording(native, slot, piece);
  const tandem__binding_t *bindings = batch->bindings;
  for (uint32_t d = 0; d < batch->count; d++) {
    uint32_t count = batch->binding_counts[d];
    assert(count <= TANDEM_MAX_BINDINGS);
    VkDescriptorSet set = rec->sets[batch->ids[d]];
    if (!set) { /* its kernel pushes its bindings at the dispatch */
      bindings += count;
      continue;
    }
    if (rec->pending + count > TANDEM_VK_WRITE_BATCH) tandem_vk_flush_writes(g, rec);
    tandem_vk_binding_writes(set, bindings, count, &rec->infos[rec->pending],
                             &rec->writes[rec->pending]);
    rec->pending += count;
    bindings += count;
  }
}

/* Core computed the scopes (core/record.c): the kinds of work since the
 * previous barrier and until the next. Each kind maps to its stages and
 * accesses; DRAW_INDIRECT is named only when core says an indirect dispatch
 * follows, because a barrier that names it waits for the command front-end
 * too (bench/NOTES.md: chain100 on the H200). With no kind on the source
 * side the barrier is the lane's widest (core never asks for that). */
void tandem_vk_record_barrier(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                              uint32_t src_work, uint32_t dst_work) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_recording_t *rec = tandem_vk_recording(native, slot, piece);
  tandem_vk_flush_writes(g, rec);
  const tandem_vk_lane_t *lane = rec->lane;
  VkMemoryBarrier2 mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                         .srcStageMask = lane->stages,
                         .srcAccessMask = lane->src_access,
                         .dstStageMask = lane->stages,
                         .dstAccessMask = lane->dst_access};
  /* User commands (TANDEM__WORK_USER) name the compute stage only where the
   * lane's queue can compute: a transfer-only queue takes transfer only. */
  bool computes = lane->stages & VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
  if (src_work & (TANDEM__WORK_COMPUTE | TANDEM__WORK_TRANSFER | TANDEM__WORK_USER)) {
    mb.srcStageMask = mb.srcAccessMask = 0;
    if ((src_work & TANDEM__WORK_USER) && computes) {
      mb.srcStageMask |= VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
      mb.srcAccessMask |= VK_ACCESS_2_SHADER_WRITE_BIT;
    }
    if (src_work & TANDEM__WORK_USER) {
      mb.srcStageMask |= VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
      mb.srcAccessMask |= VK_ACCESS_2_TRANSFER_WRITE_BIT;
    }
    if (src_work & TANDEM__WORK_COMPUTE) {
      mb.srcStageMask |= VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
      mb.srcAccessMask |= VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
    }
    if (src_work & TANDEM__WORK_TRANSFER) {
      mb.srcStageMask |= VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
      mb.srcAccessMask |= VK_ACCESS_2_TRANSFER_WRITE_BIT;
    }
    mb.dstStageMask = mb.dstAccessMask = 0;
    if ((dst_work & TANDEM__WORK_USER) && computes) {
      mb.dstStageMask |= VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
      mb.dstAccessMask |= VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT;
    }
    if (dst_work & TANDEM__WORK_USER) {
      mb.dstStageMask |= VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
      mb.dstAccessMask |= VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT;
    }
    if (dst_work & TANDEM__WORK_COMPUTE) {
      mb.dstStageMask |= VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
      mb.dstAccessMask |=
          VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
    }
    if (dst_work & TANDEM__WORK_TRANSFER) {
      mb.dstStageMask |= VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
      mb.dstAccessMask |= VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT;
    }
  }
  if (dst_work & TANDEM__WORK_INDIRECT) {
    mb.dstStageMask |= VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT;
    mb.dstAccessMask |= VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT;
  }
  VkDependencyInfo dep = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                          .memoryBarrierCount = 1,
                          .pMemoryBarriers = &mb};
  g->vk.vkCmdPipelineBarrier2(rec->cb, &dep);
}

void tandem_vk_record_fill(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                           const tandem__cmd_fill_t *cmd) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_recording_t *rec = tandem_vk_recording(native, slot, piece);
  tandem_vk_flush_writes(g, rec);
  g->vk.vkCmdFillBuffer(rec->cb, tandem_vk_buffer_handle(cmd->buffer), cmd->offset, cmd->length,
                        cmd->pattern);
}

void tandem_vk_record_copy(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                           const tandem__cmd_copy_t *cmd) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_recording_t *rec = tandem_vk_recording(native, slot, piece);
  tandem_vk_flush_writes(g, rec);
  VkBufferCopy region = {.srcOffset = cmd->src_offset,
                         .dstOffset = cmd->dst_offset,
                         .size = cmd->bytes};
  g->vk.vkCmdCopyBuffer(rec->cb, tandem_vk_buffer_handle(cmd->src),
                        tandem_vk_buffer_handle(cmd->dst), 1, &region);
}

void tandem_vk_record_dispatch(tandem__gpu_t *base, void *native, uint32_t slot, uint32_t piece,
                               const tandem__cmd_dispatch_t *cmd) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_recording_t *rec = tandem_vk_recording(native, slot, piece);
  assert(cmd->binding_count <= TANDEM_MAX_BINDINGS);
  tandem_vk_flush_writes(g, rec);
  const tandem_vk_kernel_t *k = cmd->kernel;
  if (rec->bound != k->pipeline) {
    g->vk.vkCmdBindPipeline(rec->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
    rec->bound = k->pipeline;
  }
  /* Binding a set costs the GPU front-end about as much as the barrier in a
   * dependent chain: skip it when the set bound already holds the same
   * bindings for the same kernel (equal contents, another set). */
  /* (Field by field: a dispatch has a binding or two, where a libc call
   * costs more than the comparison; prepare does this per dispatch.) */
  const tandem__binding_t *b = cmd->bindings;
  uint32_t n = cmd->binding_count;
  bool same = rec->set_kernel == k && rec->set_binding_count == n;
  for (uint32_t i = 0; same && i < n; i++)
    same = rec->set_bindings[i].buffer == b[i].buffer &&
           rec->set_bindings[i].offset == b[i].offset && rec->set_bindings[i].range == b[i].range;
  if (!same && k->push) {
    VkDescriptorBufferInfo info[TANDEM_MAX_BINDINGS];
    VkWriteDescriptorSet write[TANDEM_MAX_BINDINGS];
    tandem_vk_binding_writes(VK_NULL_HANDLE, b, n, info, write);
    g->vk.vkCmdPushDescriptorSetKHR(rec->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, n,
                                    write);
  }
  if (!same) {
    VkDescriptorSet set = rec->sets[cmd->id];
    assert(!set == (k->push || n == 0));
    if (set)
      g->vk.vkCmdBindDescriptorSets(rec->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set,
                                    0, NULL);
    /* any other kernel in between forces a bind */
    rec->set_kernel = k;
    rec->set_binding_count = n;
    for (uint32_t i = 0; i < n; i++) rec->set_bindings[i] = b[i];
  }
  if (cmd->push_bytes)
    g->vk.vkCmdPushConstants(rec->cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, cmd->push_bytes,
                             cmd->push);
  if (cmd->indirect)
    g->vk.vkCmdDispatchIndirect(rec->cb, tandem_vk_buffer_handle(cmd->indirect),
                                cmd->indirect_offset);
  else g->vk.vkCmdDispatch(rec->cb, cmd->workgroups[0], cmd->workgroups[1], cmd->workgroups[2]);
}

/* The user's commands (a Vulkan commands node). Whatever they bound is
 * theirs, so tandem binds its own pipeline and set again after them. */
tandem_status_t tandem_vk_record_user(tandem__gpu_t *base, void *native, uint32_t slot,
                                      uint32_t piece, const tandem__cmd_user_t *cmd) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_recording_t *rec = tandem_vk_recording(native, slot, piece);
  tandem_vk_flush_writes(g, rec);
  tandem_status_t s = cmd->record(cmd->context, (void *)rec->cb);
  rec->bound = VK_NULL_HANDLE;
  rec->set_kernel = NULL;
  return s;
}

tandem_status_t tandem_vk_record_end(tandem__gpu_t *base, void *native, uint32_t slot,
                                     uint32_t piece) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_program_t *p = native;
  tandem_vk_recording_t *rec = tandem_vk_recording(native, slot, piece);
  tandem_vk_flush_writes(g, rec);
  if (p->handoffs && rec->last)
    p->coherence[2 * rec->at + 1] =
        tandem_vk_record_handoffs(g, p, rec, rec->at % p->region_count, true);
  if (p->queries && rec->last)
    g->vk.vkCmdWriteTimestamp2(rec->cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, p->queries,
                               2 * rec->at + 1);
  VkResult vr = g->vk.vkEndCommandBuffer(rec->cb);
  rec->cb = VK_NULL_HANDLE;
  pthread_mutex_unlock(rec->pool_mutex);
  if (vr < 0) return tandem_vk_fail(vr, "recording a region's command buffer", __FILE__, __LINE__);
  return TANDEM_OK;
}

tandem_status_t tandem_vk_program_create(tandem__gpu_t *base, const tandem__program_desc_t *desc,
                                         void **out_native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  tandem_vk_program_t *p = calloc(1, sizeof *p);
  if (!p) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a program");
  uint32_t slot_count = desc->slot_count, rc = desc->region_count, total = slot_count * rc;
  p->slot_count = slot_count;
  p->region_count = rc;
  p->piece_base = calloc(rc ? rc : 1, sizeof *p->piece_base);
  p->region_pieces = calloc(rc ? rc : 1, sizeof *p->region_pieces);
  if (!p->piece_base || !p->region_pieces) {
    tandem_vk_program_destroy(base, p);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a program of %u regions", rc);
  }
  for (uint32_t r = 0; r < rc; r++) {
    assert(desc->region_pieces[r] >= 1);
    p->piece_base[r] = p->piece_total;
    p->region_pieces[r] = desc->region_pieces[r];
    p->piece_total += desc->region_pieces[r];
    if (desc->region_pieces[r] > p->max_pieces) p->max_pieces = desc->region_pieces[r];
  }
  if (!p->max_pieces) p->max_pieces = 1;
  size_t cb_total = (size_t)slot_count * p->piece_total;
  p->cbs = calloc(cb_total ? cb_total : 1, sizeof *p->cbs);
  p->region_lane = calloc(rc, sizeof *p->region_lane);
  p->submits = calloc(total, sizeof *p->submits);
  p->waits = calloc((size_t)total * (TANDEM__MAX_LANES + 1), sizeof *p->waits);
  p->signals = calloc(2 * (size_t)total, sizeof *p->signals);
  p->cb_infos = calloc(cb_total ? cb_total : 1, sizeof *p->cb_infos);
  p->recs = calloc((size_t)slot_count * p->max_pieces, sizeof *p->recs);
  p->command_count = desc->command_count;
  p->sets = calloc((size_t)slot_count * desc->command_count, sizeof *p->sets);
  tandem_status_t s = TANDEM_OK;
  if (!p->cbs || !p->region_lane || !p->submits || !p->waits || !p->signals || !p->cb_infos ||
      !p->sets || !p->recs)
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a program of %u regions", rc);
  for (uint32_t r = 0; s == TANDEM_OK && r < rc; r++) p->region_lane[r] = desc->region_lane[r];
  /* Handoffs: this device's regions' only (another's region is NPU here). */
  uint32_t own_handoffs = 0;
  for (uint32_t i = 0; s == TANDEM_OK && i < desc->handoff_count; i++)
    own_handoffs += desc->region_lane[desc->handoffs[i].region] != TANDEM_LANE_NPU;
  if (own_handoffs) {
    p->handoffs = malloc(own_handoffs * sizeof *p->handoffs);
    p->handoff_first = calloc(rc + 1, sizeof *p->handoff_first);
    p->coherence = calloc(2 * (size_t)total, sizeof *p->coherence);
    if (!p->handoffs || !p->handoff_first || !p->coherence)
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating %u handoffs", own_handoffs);
    uint32_t k = 0;
    for (uint32_t i = 0; s == TANDEM_OK && i < desc->handoff_count; i++) {
      const tandem__handoff_t *h = &desc->handoffs[i];
      if (desc->region_lane[h->region] == TANDEM_LANE_NPU) continue;
      assert(!k || p->handoffs[k - 1].region <= h->region); /* sorted by region */
      p->handoffs[k++] = *h;
      p->handoff_first[h->region + 1] = k;
    }
    for (uint32_t r = 0; s == TANDEM_OK && r < rc; r++) /* regions without any */
      if (p->handoff_first[r + 1] < p->handoff_first[r])
        p->handoff_first[r + 1] = p->handoff_first[r];
  }

  /* Descriptor sets: one per dispatch with bindings and slot, so a slot's
   * sets can be rewritten (tandem_exec_set_view) while another slot's run is
   * in flight. A set is written only while its slot is not in flight. All
   * come from one pool, taken from the device's kept pools when one fits
   * (vk_descriptors.c). */
  uint32_t set_count = 0, descriptor_count = 0;
  for (uint32_t i = 0; s == TANDEM_OK && i < desc->command_count; i++) {
    if (!tandem_vk_command_has_set(&desc->commands[i])) continue;
    set_count++;
    descriptor_count += desc->commands[i].binding_count;
  }
  if (s == TANDEM_OK && set_count) {
    s = tandem_vk_descriptor_pool_take(g, set_count * slot_count, descriptor_count * slot_count,
                                       &p->descriptors);
    /* One allocation call per slot for all its sets (one per node cost a
     * driver entry per dispatch). */
    VkDescriptorSetLayout *layouts = s == TANDEM_OK ? malloc(set_count * sizeof *layouts) : NULL;
    VkDescriptorSet *got = s == TANDEM_OK ? malloc(set_count * sizeof *got) : NULL;
    if (s == TANDEM_OK && (!layouts || !got))
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating %u descriptor-set layouts",
                      set_count);
    uint32_t at = 0;
    for (uint32_t i = 0; s == TANDEM_OK && i < desc->command_count; i++) {
      if (!tandem_vk_command_has_set(&desc->commands[i])) continue;
      layouts[at++] = ((const tandem_vk_kernel_t *)desc->commands[i].kernel)->set_layout;
    }
    for (uint32_t sl = 0; s == TANDEM_OK && sl < slot_count; sl++) {
      VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                        .descriptorPool = p->descriptors.pool,
                                        .descriptorSetCount = set_count,
                                        .pSetLayouts = layouts};
      VkResult r = g->vk.vkAllocateDescriptorSets(g->device, &ai, got);
      if (r < 0) {
        s = tandem_vk_fail(r, "vkAllocateDescriptorSets", __FILE__, __LINE__);
        break;
      }
      at = 0;
      for (uint32_t i = 0; i < desc->command_count; i++) {
        if (!tandem_vk_command_has_set(&desc->commands[i])) continue;
        p->sets[(size_t)sl * p->command_count + i] = got[at++];
      }
    }
    free(layouts);
    free(got);
  }

  if (s == TANDEM_OK && g->timestamps) {
    VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = 2 * total};
    VkResult r = g->vk.vkCreateQueryPool(g->device, &qci, NULL, &p->queries);
    if (r < 0) {
      p->queries = VK_NULL_HANDLE;
      s = tandem_vk_fail(r, "vkCreateQueryPool", __FILE__, __LINE__);
    } else {
      g->vk.vkResetQueryPool(g->device, p->queries, 0, 2 * total);
    }
  }
  /* Command buffers: one allocation call per lane, slot and piece index for
   * all the lane's regions with that piece (one per region cost a driver
   * entry each), from that piece's pool. */
  VkCommandBuffer *got = s == TANDEM_OK ? malloc((size_t)(rc ? rc : 1) * sizeof *got) : NULL;
  if (s == TANDEM_OK && !got)
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating %u command-buffer handles", rc);
  for (int l = 0; s == TANDEM_OK && l < TANDEM_LANE_COUNT_GPU; l++) {
    tandem_vk_lane_t *lane = &g->lanes[l];
    for (uint32_t q = 0; s == TANDEM_OK && q < p->max_pieces; q++) {
      uint32_t count = 0;
      for (uint32_t r = 0; r < rc; r++)
        count += desc->region_lane[r] == (tandem_lane_t)l && q < p->region_pieces[r];
      if (!count) continue;
      for (uint32_t sl = 0; s == TANDEM_OK && sl < slot_count; sl++) {
        uint32_t i = tandem_vk_slot_pool(p, sl, q);
        VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                          .commandPool = lane->pools[i],
                                          .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                          .commandBufferCount = count};
        pthread_mutex_lock(&lane->pool_mutex[i]);
        VkResult vr = g->vk.vkAllocateCommandBuffers(g->device, &ai, got);
        pthread_mutex_unlock(&lane->pool_mutex[i]);
        if (vr < 0) {
          s = tandem_vk_fail(vr, "vkAllocateCommandBuffers", __FILE__, __LINE__);
          break;
        }
        uint32_t k = 0;
        for (uint32_t r = 0; r < rc; r++)
          if (desc->region_lane[r] == (tandem_lane_t)l && q < p->region_pieces[r])
            p->cbs[(size_t)sl * p->piece_total + p->piece_base[r] + q] = got[k++];
      }
    }
  }
  free(got);
  for (uint32_t sl = 0; s == TANDEM_OK && sl < slot_count; sl++) {
    for (uint32_t r = 0; s == TANDEM_OK && r < rc; r++) {
      if (desc->region_lane[r] == TANDEM_LANE_NPU) continue; /* run by the NPU lane thread */
      tandem_vk_lane_t *lane = &g->lanes[desc->region_lane[r]];
      uint32_t at = sl * rc + r;
      /* The submit infos that never change: the region's pieces' buffers,
       * in piece order (see the top: one batch keeps their order). */
      size_t first_cb = (size_t)sl * p->piece_total + p->piece_base[r];
      for (uint32_t q = 0; q < p->region_pieces[r]; q++)
        p->cb_infos[first_cb + q] =
            (VkCommandBufferSubmitInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                        .commandBuffer = p->cbs[first_cb + q]};
      /* Two signals per region: the lane's timeline and, when timelines are
       * exported, its mirror (vk_internal.h), with the same value. */
      p->signals[2 * at] =
          (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                  .semaphore = lane->timeline,
                                  .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
      p->signals[2 * at + 1] = p->signals[2 * at];
      p->signals[2 * at + 1].semaphore = lane->mirror;
      p->submits[at] =
          (VkSubmitInfo2){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                          .pWaitSemaphoreInfos = &p->waits[at * (TANDEM__MAX_LANES + 1)],
                          .commandBufferInfoCount = p->region_pieces[r],
                          .pCommandBufferInfos = &p->cb_infos[first_cb],
                          .signalSemaphoreInfoCount = lane->mirror ? 2 : 1,
                          .pSignalSemaphoreInfos = &p->signals[2 * at]};
    }
  }
  if (s != TANDEM_OK) {
    tandem_vk_program_destroy(base, p);
    return s;
  }
  *out_native = p;
  return TANDEM_OK;
}

tandem_status_t tandem_vk_program_submit(tandem__gpu_t *base, void *native, uint32_t slot,
                                         tandem__region_submit_t *regions, uint32_t region_count) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_program_t *p = native;
  /* The slot's last run finished (it was FREE): its queries can be reset. */
  if (p->queries)
    g->vk.vkResetQueryPool(g->device, p->queries, 2 * slot * p->region_count, 2 * p->region_count);
  uint32_t first = 0;
  while (first < region_count) {
    if (p->region_lane[regions[first].region] == TANDEM_LANE_NPU) { /* the NPU lane's */
      first++;
      continue;
    }
    /* Gather the run of GPU regions that share one VkQueue. */
    tandem_vk_queue_t *queue = g->lanes[p->region_lane[regions[first].region]].queue;
    uint32_t end = first;
    while (end < region_count && p->region_lane[regions[end].region] != TANDEM_LANE_NPU &&
           g->lanes[p->region_lane[regions[end].region]].queue == queue) {
      const tandem__region_submit_t *rs = &regions[end];
      uint32_t at = slot * p->region_count + rs->region;
      VkSemaphoreSubmitInfo *w = &p->waits[at * (TANDEM__MAX_LANES + 1)];
      uint32_t wc = 0;
      /* Built-in lanes and user lanes alike: an imported timeline (another
       * process's work) or a native session's, each waited on the GPU. */
      for (int l = 0; l < TANDEM__MAX_LANES; l++) {
        if (!rs->wait_values[l]) continue;
        assert(g->lanes[l].timeline); /* core waits only on bound lanes */
        w[wc++] = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                          .semaphore = g->lanes[l].timeline,
                                          .value = rs->wait_values[l],
                                          .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
      }
      if (rs->external_wait) /* the user's own submission's end */
        w[wc++] = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                          .semaphore = (VkSemaphore)rs->external_wait,
                                          .value = rs->external_value,
                                          .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
      p->submits[at].waitSemaphoreInfoCount = wc;
      p->signals[2 * at].value = p->signals[2 * at + 1].value = rs->signal_value;
      end++;
    }
    /* The infos of one slot's regions are contiguous only when the regions
     * are; they always are, because core submits them in region order. */
    uint32_t at = slot * p->region_count + regions[first].region;
    pthread_mutex_lock(&queue->mutex);
    VkResult r = g->vk.vkQueueSubmit2(queue->queue, end - first, &p->submits[at], VK_NULL_HANDLE);
    pthread_mutex_unlock(&queue->mutex);
    if (r < 0) return tandem_vk_fail(r, "vkQueueSubmit2", __FILE__, __LINE__);
    if (p->handoffs) {
      uint64_t barriers = 0;
      for (uint32_t k = first; k < end; k++) {
        uint32_t at_k = slot * p->region_count + regions[k].region;
        barriers += p->coherence[2 * at_k] + p->coherence[2 * at_k + 1];
      }
      atomic_fetch_add(&g->base.coherence_barriers, barriers);
    }
    for (uint32_t k = first; k < end; k++) regions[k].submitted = true;
    first = end;
  }
  return TANDEM_OK;
}

#define TANDEM_VK_CLOCK_REFRESH_NS 100000000ull /* a new pair when the last is older */
#define TANDEM_VK_CLOCK_RATE_NS 1000000000ull   /* pairs this far apart measure the rate */

/* Freshens |g|'s tick-to-host mapping if its newest pair is stale and returns
 * the mapping to use now (anchor pair and rate), under clock_mutex. A failed
 * calibration keeps the mapping it had: times stay reported, a little less
 * exact. */
static void tandem_vk_clock_map(tandem_vk_gpu_t *g, uint64_t *tick, uint64_t *host, double *rate) {
  pthread_mutex_lock(&g->clock_mutex);
  uint64_t now = tandem__now_ns();
  uint64_t t, h;
  if (now - g->host_anchor >= TANDEM_VK_CLOCK_REFRESH_NS && tandem_vk_clock_pair(g, &t, &h)) {
    uint64_t ticks = (t - g->tick_first) & g->timestamp_mask;
    /* The rate from the first pair to this one: each pair is off by at most
     * the driver's deviation (microseconds), a part in a million over a
     * second; the device's nominal period is off by the drift itself. */
    if (h - g->host_first >= TANDEM_VK_CLOCK_RATE_NS && ticks)
      g->clock_rate = (double)(h - g->host_first) / (double)ticks;
    g->tick_anchor = t;
    g->host_anchor = h;
  }
  *tick = g->tick_anchor;
  *host = g->host_anchor;
  *rate = g->clock_rate;
  pthread_mutex_unlock(&g->clock_mutex);
}

tandem_status_t tandem_vk_program_timestamps(tandem__gpu_t *base, void *native, uint32_t slot,
                                             uint64_t *out) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_program_t *p = native;
  uint32_t n = 2 * p->region_count;
  memset(out, 0, n * sizeof *out);
  if (!p->queries || !g->calibrated) return TANDEM_ERROR_UNSUPPORTED;
  uint64_t tick0, host0;
  double rate;
  tandem_vk_clock_map(g, &tick0, &host0, &rate);
  /* Region by region: NPU regions have no command buffer and no queries. */
  for (uint32_t r = 0; r < p->region_count; r++) {
    if (p->region_lane[r] == TANDEM_LANE_NPU) continue;
    uint64_t *pair = &out[2 * r];
    VkResult vr =
        g->vk.vkGetQueryPoolResults(g->device, p->queries, 2 * (slot * p->region_count + r), 2,
                                    2 * sizeof *pair, pair, sizeof *pair, VK_QUERY_RESULT_64_BIT);
    if (vr != VK_SUCCESS) {
      memset(out, 0, n * sizeof *out);
      /* VK_NOT_READY cannot happen for a finished run; treat it as none. */
      return vr < 0 ? tandem_vk_fail(vr, "vkGetQueryPoolResults", __FILE__, __LINE__)
                    : TANDEM_ERROR_UNSUPPORTED;
    }
    for (int i = 0; i < 2; i++) {
      /* Signed ticks from the anchor: a region may precede the newest pair. */
      uint64_t d = ((pair[i] & g->timestamp_mask) - tick0) & g->timestamp_mask;
      int64_t ticks =
          d > g->timestamp_mask / 2 ? -(int64_t)((g->timestamp_mask - d) + 1) : (int64_t)d;
      pair[i] = (uint64_t)((int64_t)host0 + (int64_t)((double)ticks * rate));
    }
  }
  return TANDEM_OK;
}

tandem_status_t tandem_vk_wait(tandem__gpu_t *base, const uint64_t values[TANDEM__MAX_LANES],
                               uint64_t timeout_ns) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  VkSemaphore sems[TANDEM__MAX_LANES];
  uint64_t vals[TANDEM__MAX_LANES];
  uint32_t n = 0;
  for (int l = 0; l < TANDEM__MAX_LANES; l++) {
    if (!values[l]) continue;
    assert(g->lanes[l].timeline); /* core waits only on bound lanes */
    sems[n] = g->lanes[l].timeline;
    vals[n++] = values[l];
  }
  if (n == 0) return TANDEM_OK;
  /* A bounded spin first: work that ends within it is seen at once instead
   * of after the driver's wake-up (runtime option wait_spin_us). */
  if (g->wait_spin_ns && timeout_ns) {
    uint64_t spin = g->wait_spin_ns < timeout_ns ? g->wait_spin_ns : timeout_ns;
    uint64_t start = tandem__now_ns(), elapsed = 0;
    for (;;) {
      uint32_t reached = 0;
      for (uint32_t i = 0; i < n; i++) {
        uint64_t v = 0;
        pthread_mutex_lock(&g->signal_mutex);
        VkResult qr = g->vk.vkGetSemaphoreCounterValue(g->device, sems[i], &v);
        pthread_mutex_unlock(&g->signal_mutex);
        if (qr < 0) return tandem_vk_fail(qr, "vkGetSemaphoreCounterValue", __FILE__, __LINE__);
        reached += v >= vals[i];
      }
      if (reached == n) return TANDEM_OK;
      elapsed = tandem__now_ns() - start;
      if (elapsed >= spin) break;
    }
    if (timeout_ns != UINT64_MAX) timeout_ns = timeout_ns > elapsed ? timeout_ns - elapsed : 0;
  }
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = n,
                            .pSemaphores = sems,
                            .pValues = vals};
  VkResult r = g->vk.vkWaitSemaphores(g->device, &wi, timeout_ns);
  if (r == VK_TIMEOUT) return TANDEM_ERROR_TIMEOUT;
  if (r < 0) return tandem_vk_fail(r, "vkWaitSemaphores", __FILE__, __LINE__);
  return TANDEM_OK;
}

tandem_status_t tandem_vk_signal(tandem__gpu_t *base, tandem_lane_t lane, uint64_t value) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                              .semaphore = g->lanes[lane].timeline,
                              .value = value};
  pthread_mutex_lock(&g->signal_mutex);
  VkResult r = g->vk.vkSignalSemaphore(g->device, &si);
  if (r >= 0 && g->lanes[lane].mirror) { /* the exported copy follows (vk_internal.h) */
    si.semaphore = g->lanes[lane].mirror;
    r = g->vk.vkSignalSemaphore(g->device, &si);
  }
  pthread_mutex_unlock(&g->signal_mutex);
  if (r < 0) return tandem_vk_fail(r, "vkSignalSemaphore", __FILE__, __LINE__);
  return TANDEM_OK;
}

tandem_status_t tandem_vk_query(tandem__gpu_t *base, uint64_t out[TANDEM__MAX_LANES]) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  VkResult r = VK_SUCCESS;
  pthread_mutex_lock(&g->signal_mutex);
  for (int l = 0; l < TANDEM__MAX_LANES && r >= 0; l++) {
    out[l] = 0;
    if (g->lanes[l].timeline)
      r = g->vk.vkGetSemaphoreCounterValue(g->device, g->lanes[l].timeline, &out[l]);
  }
  pthread_mutex_unlock(&g->signal_mutex);
  if (r < 0) return tandem_vk_fail(r, "vkGetSemaphoreCounterValue", __FILE__, __LINE__);
  return TANDEM_OK;
}
