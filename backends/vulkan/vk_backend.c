/* SPDX-License-Identifier: MIT */
/*
 * vk_backend.c — the Vulkan backend as core sees it: the vtable
 * (core/backend.h) naming the entries every other file of the backend
 * implements, its interop table (tandem_vulkan.h), its test hooks, and the
 * registry's entry "vulkan". At the top of the backend: nothing in it calls
 * up here, the open included (vk_device.c takes the tables as arguments).
 * Requirements: Vulkan 1.3 (timeline semaphores and synchronization2 core).
 * volk loads the loader at run time; nothing links against libvulkan.
 */
#include "backends/vulkan/vk_internal.h"
#include "core/fault.h"
#include "core/test_hooks.h"

static tandem_status_t tandem_vk_test_control(tandem__gpu_t *base, tandem_test_op_t op) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  if (op != TANDEM_TEST_INJECT_VALIDATION_ERROR)
    return TANDEM_FAIL(TANDEM_ERROR_UNIMPLEMENTED, "test operation %d", (int)op);
  /* usage 0 violates VUID-VkBufferCreateInfo-usage-requiredbitmask. */
  VkBufferCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = 16,
                           .usage = 0,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkBuffer buffer = VK_NULL_HANDLE;
  VkResult r = g->vk.vkCreateBuffer(g->device, &ci, NULL, &buffer);
  if (r == VK_SUCCESS && buffer) g->vk.vkDestroyBuffer(g->device, buffer, NULL);
  return TANDEM_OK;
}

static void tandem_vk_native_handles(tandem__gpu_t *base, tandem_vulkan_handles_t *out) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  out->instance = g->instance;
  out->physical_device = g->physical;
  out->device = g->device;
  out->get_instance_proc_addr = (void *)vkGetInstanceProcAddr;
  out->api_version = VK_API_VERSION_1_3;
  for (int l = 0; l < TANDEM_LANE_COUNT_GPU; l++) {
    const tandem_vk_lane_t *lane = &g->lanes[l];
    out->lanes[l] = (tandem_vulkan_lane_t){.queue = lane->queue->queue,
                                           .queue_family = lane->queue->family,
                                           .queue_index = g->lane_queue_index[l],
                                           .timeline = lane->timeline};
  }
}

static void *tandem_vk_lane_timeline(tandem__gpu_t *base, tandem_lane_t lane) {
  return (void *)tandem_vk_gpu_cast(base)->lanes[lane].timeline;
}

static const tandem__gpu_interop_ops_t tandem_vk_interop = {
    .native_handles = tandem_vk_native_handles,
    .lane_timeline = tandem_vk_lane_timeline,
    .queue_lock = tandem_vk_queue_lock,
    .buffer_vulkan = tandem_vk_buffer_vulkan,
    .buffer_export = tandem_vk_buffer_export,
    .buffer_import = tandem_vk_buffer_import,
    .timeline_export = tandem_vk_timeline_export,
    .timeline_import = tandem_vk_timeline_import,
    .timeline_wait = tandem_vk_timeline_wait,
    .timeline_destroy = tandem_vk_timeline_destroy,
    .buffer_adopt = tandem_vk_buffer_adopt,
    .kernel_adopt = tandem_vk_kernel_adopt,
};

static const tandem__gpu_test_hooks_t tandem_vk_test_hooks = {.control = tandem_vk_test_control};

static const tandem__gpu_vtable_t tandem_vk_gpu_vtable = {
    .device.destroy = tandem_vk_gpu_destroy,
    .device.idle = tandem_vk_gpu_idle,
    .device.trim = tandem_vk_descriptor_pools_trim,
    .buffer.create = tandem_vk_buffer_create,
    .buffer.destroy = tandem_vk_buffer_destroy,
    .buffer.memory = tandem_vk_buffer_memory,
    .buffer.import_host = tandem_vk_buffer_import_host,
    .buffer.import_dmabuf = tandem_vk_buffer_import_dmabuf,
    .buffer.create_dmabuf = tandem_vk_buffer_create_dmabuf,
    .kernel.reflect = tandem_vk_kernel_reflect,
    .kernel.create = tandem_vk_kernel_create,
    .kernel.destroy = tandem_vk_kernel_destroy,
    .program.create = tandem_vk_program_create,
    .program.destroy = tandem_vk_program_destroy,
    .program.submit = tandem_vk_program_submit,
    .program.timestamps = tandem_vk_program_timestamps,
    .record.begin = tandem_vk_record_begin,
    .record.bindings = tandem_vk_record_bindings,
    .record.barrier = tandem_vk_record_barrier,
    .record.fill = tandem_vk_record_fill,
    .record.copy = tandem_vk_record_copy,
    .record.dispatch = tandem_vk_record_dispatch,
    .record.user = tandem_vk_record_user,
    .record.end = tandem_vk_record_end,
    .lane.wait = tandem_vk_wait,
    .lane.signal = tandem_vk_signal,
    .lane.query = tandem_vk_query,
    .lane.bind = tandem_vk_lane_bind,
    .lane.unbind = tandem_vk_lane_unbind,
    .interop = &tandem_vk_interop,
};

static tandem_status_t tandem_vk_gpu_open(const tandem_runtime_options_t *options,
                                          atomic_uint_fast64_t *validation_counter,
                                          tandem__gpu_t **out_gpu) {
  static const tandem_vk_tables_t tables = {.vtable = &tandem_vk_gpu_vtable,
                                            .test_hooks = &tandem_vk_test_hooks};
  return tandem_vk_device_open(&tables, options, validation_counter, out_gpu);
}

const tandem__gpu_backend_t tandem_vk_gpu_backend = {
    .name = "vulkan",
    .opens_vulkan_device = true,
    .fault_kind = TANDEM__FAULT_VULKAN, /* vk_fault.c wraps its function tables */
    .count = tandem_vk_gpu_count,
    .info = tandem_vk_gpu_info,
    .open = tandem_vk_gpu_open,
};
