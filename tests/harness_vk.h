/* SPDX-License-Identifier: MIT */
/*
 * harness_vk.h — the typed side of harness_vk.c, for tests that record and
 * submit raw Vulkan on tandem's device (or the harness's): one table of the
 * entry points every such test uses, loaded through the handles' own loader
 * (tandem_vulkan_handles_t.get_instance_proc_addr, then vkGetDeviceProcAddr),
 * and the small steps they share (a command pool, a one-time command buffer,
 * a fenced submission under tandem's queue lock, timeline semaphores).
 * harness.h's "Plain Vulkan" section keeps handles as void *; this header
 * brings in <vulkan/vulkan.h> (without prototypes: everything goes through
 * the table). Failures fail the test.
 */
#ifndef TANDEM_TESTS_HARNESS_VK_H_
#define TANDEM_TESTS_HARNESS_VK_H_

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include "harness.h"

/* Entry points of |h|'s physical device and device. */
typedef struct th_vk_fns {
  VkPhysicalDevice physical_device;
  VkDevice device;
  /* instance level */
  PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
  /* buffers and memory */
  PFN_vkCreateBuffer CreateBuffer;
  PFN_vkDestroyBuffer DestroyBuffer;
  PFN_vkGetBufferMemoryRequirements GetBufferMemoryRequirements;
  PFN_vkAllocateMemory AllocateMemory;
  PFN_vkFreeMemory FreeMemory;
  PFN_vkBindBufferMemory BindBufferMemory;
  PFN_vkMapMemory MapMemory;
  PFN_vkUnmapMemory UnmapMemory;
  /* pipelines and descriptors */
  PFN_vkCreateShaderModule CreateShaderModule;
  PFN_vkDestroyShaderModule DestroyShaderModule;
  PFN_vkCreateDescriptorSetLayout CreateDescriptorSetLayout;
  PFN_vkDestroyDescriptorSetLayout DestroyDescriptorSetLayout;
  PFN_vkCreatePipelineLayout CreatePipelineLayout;
  PFN_vkDestroyPipelineLayout DestroyPipelineLayout;
  PFN_vkCreateComputePipelines CreateComputePipelines;
  PFN_vkDestroyPipeline DestroyPipeline;
  PFN_vkCreateDescriptorPool CreateDescriptorPool;
  PFN_vkDestroyDescriptorPool DestroyDescriptorPool;
  PFN_vkAllocateDescriptorSets AllocateDescriptorSets;
  PFN_vkUpdateDescriptorSets UpdateDescriptorSets;
  /* command buffers and commands */
  PFN_vkCreateCommandPool CreateCommandPool;
  PFN_vkDestroyCommandPool DestroyCommandPool;
  PFN_vkAllocateCommandBuffers AllocateCommandBuffers;
  PFN_vkFreeCommandBuffers FreeCommandBuffers;
  PFN_vkBeginCommandBuffer BeginCommandBuffer;
  PFN_vkEndCommandBuffer EndCommandBuffer;
  PFN_vkCmdCopyBuffer CmdCopyBuffer;
  PFN_vkCmdFillBuffer CmdFillBuffer;
  PFN_vkCmdUpdateBuffer CmdUpdateBuffer;
  PFN_vkCmdPipelineBarrier2 CmdPipelineBarrier2;
  PFN_vkCmdBindPipeline CmdBindPipeline;
  PFN_vkCmdBindDescriptorSets CmdBindDescriptorSets;
  PFN_vkCmdPushConstants CmdPushConstants;
  PFN_vkCmdDispatch CmdDispatch;
  /* submission and synchronization */
  PFN_vkQueueSubmit QueueSubmit;
  PFN_vkQueueSubmit2 QueueSubmit2;
  PFN_vkCreateFence CreateFence;
  PFN_vkDestroyFence DestroyFence;
  PFN_vkWaitForFences WaitForFences;
  PFN_vkCreateSemaphore CreateSemaphore;
  PFN_vkDestroySemaphore DestroySemaphore;
  PFN_vkWaitSemaphores WaitSemaphores;
  PFN_vkSignalSemaphore SignalSemaphore;
  PFN_vkGetSemaphoreCounterValue GetSemaphoreCounterValue;
} th_vk_fns_t;

/* Loads every entry point of the table for |h| (each must be there). */
th_vk_fns_t th_vk_fns(const tandem_vulkan_handles_t *h);

/* A command pool on |queue_family|. */
VkCommandPool th_vk_command_pool(const th_vk_fns_t *f, uint32_t queue_family);
/* A primary command buffer from |pool|, begun for one submission. */
VkCommandBuffer th_vk_begin(const th_vk_fns_t *f, VkCommandPool pool);
/* Ends |cb|, submits it to |queue| (|lane|'s, under |runtime|'s queue lock)
 * with a fence, waits for the fence and destroys it. */
void th_vk_submit_wait(const th_vk_fns_t *f, tandem_runtime_t *runtime, tandem_lane_t lane,
                       VkQueue queue, VkCommandBuffer cb);
/* A timeline semaphore at 0. */
VkSemaphore th_vk_timeline(const th_vk_fns_t *f);
/* Signals |timeline| to |value| from the host. */
void th_vk_timeline_signal(const th_vk_fns_t *f, VkSemaphore timeline, uint64_t value);

#endif /* TANDEM_TESTS_HARNESS_VK_H_ */
