/* SPDX-License-Identifier: MIT */
/*
 * adopt.c — the application's own Vulkan buffers and pipelines as tandem
 * buffers and kernels (tandem_vulkan.h, "Adoption").
 *
 * Core checks what needs no Vulkan: the arguments, the placement and size,
 * and that the objects belong to the runtime's VkDevice (compared as the
 * opaque handles tandem_runtime_vulkan_handles reports); then the ordinary
 * paths run with the backend adopting instead of creating:
 * tandem__buffer_make_on (budget, counters) and tandem__kernel_load (the
 * contract, specialization and device checks of tandem_kernel_create, the
 * same code and messages). The backend checks the rest against the device.
 * Ownership stays the application's: the backend's native objects borrow
 * its handles (backend.h, buffer_adopt / kernel_adopt).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/buffer.h"
#include "core/kernel.h"
#include "core/runtime.h"
#include "core/runtime_int.h"
#include "core/struct_size.h"
#include "tandem/tandem_vulkan.h"

/* INVALID_ARGUMENT unless |device| is the runtime's VkDevice. */
static tandem_status_t tandem__adopt_device(tandem_runtime_t *runtime, const void *device,
                                            const char *what) {
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(runtime, &gpu));
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  tandem__gpu_native_handles(gpu, &h);
  if (!h.device)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "%s: the runtime's GPU backend '%s' has no VkDevice to adopt objects of",
                       what, runtime->gpus[0].backend->name);
  if (device != h.device)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s belongs to another VkDevice (%p) than the runtime's (%p): adopt only "
                       "objects created on the device tandem_runtime_vulkan_handles names",
                       what, device, h.device);
  return TANDEM_OK;
}

tandem_status_t tandem_buffer_adopt_vulkan(tandem_runtime_t *runtime,
                                           const tandem_vulkan_buffer_t *user_desc,
                                           tandem_buffer_t **out_buffer) {
  if (!out_buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_buffer is NULL");
  *out_buffer = NULL;
  if (!runtime || !user_desc)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or desc is NULL");
  TANDEM__STRUCT_IN(tandem_vulkan_buffer, user_desc, known, TANDEM__OLDEST_VULKAN_BUFFER);
  const tandem_vulkan_buffer_t *desc = &known;
  if (!desc->device || !desc->buffer || !desc->memory)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "adopting a buffer: desc->%s is NULL; give the VkDevice, the VkBuffer "
                       "and the VkDeviceMemory it is bound to",
                       !desc->device   ? "device"
                       : !desc->buffer ? "buffer"
                                       : "memory");
  if (desc->placement != TANDEM_PLACEMENT_GPU_LOCAL &&
      desc->placement != TANDEM_PLACEMENT_HOST_VISIBLE)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "adopting a buffer: placement %s (%d) cannot be adopted; a Vulkan buffer "
                       "is GPU_LOCAL or HOST_VISIBLE",
                       tandem_placement_name(desc->placement), (int)desc->placement);
  if (desc->size == 0 || desc->size > TANDEM__MAX_BYTES)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "adopting a buffer: size %llu is outside 1..%llu bytes",
                       (unsigned long long)desc->size, (unsigned long long)TANDEM__MAX_BYTES);
  TANDEM_RETURN_IF_ERROR(tandem__adopt_device(runtime, desc->device, "the buffer"));
  return tandem__buffer_make_on(runtime, 0, desc->size, desc->placement, 0, NULL, desc, out_buffer);
}

tandem_status_t tandem_kernel_adopt_vulkan(tandem_runtime_t *runtime,
                                           const tandem_vulkan_kernel_t *user_desc,
                                           tandem_kernel_t **out_kernel) {
  if (!out_kernel) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_kernel is NULL");
  *out_kernel = NULL;
  if (!runtime || !user_desc)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or desc is NULL");
  TANDEM__STRUCT_IN(tandem_vulkan_kernel, user_desc, known, TANDEM__OLDEST_VULKAN_KERNEL);
  const tandem_vulkan_kernel_t *desc = &known;
  if (!desc->kernel)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "adopting a kernel: desc->kernel is NULL; describe what the pipeline was "
                       "built from (a tandem_kernel_desc_t with the contract)");
  const char *name = desc->kernel->name          ? desc->kernel->name
                     : desc->kernel->entry_point ? desc->kernel->entry_point
                                                 : "main";
  if (!desc->device || !desc->pipeline || !desc->pipeline_layout || !desc->set_layout)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "adopting kernel '%s': desc->%s is NULL; give the VkDevice, the VkPipeline, "
                       "its VkPipelineLayout and set 0's VkDescriptorSetLayout",
                       name,
                       !desc->device            ? "device"
                       : !desc->pipeline        ? "pipeline"
                       : !desc->pipeline_layout ? "pipeline_layout"
                                                : "set_layout");
  char what[160];
  snprintf(what, sizeof what, "the pipeline of kernel '%s'", name);
  TANDEM_RETURN_IF_ERROR(tandem__adopt_device(runtime, desc->device, what));
  return tandem__kernel_load(runtime, desc->kernel, desc, out_kernel);
}
