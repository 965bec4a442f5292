/* SPDX-License-Identifier: MIT */
/*
 * vk_kernel.c — compute pipelines for kernels whose contracts were checked.
 *
 * Layout: descriptor set 0 holds binding_count storage buffers (bindings
 * 0..n-1, compute stage); one push-constant range of the contract's exact size.
 * Specialization constants (already fitted to the module by core/kernel.c),
 * a required subgroup size and the pipeline flags (full subgroups, buffer
 * robustness off) go into the pipeline's shader stage. A literal LocalSize
 * override is applied to a copy of the module, which is validated again
 * before the driver sees it. The reflection that core/kernel.c checks lives
 * in backends/spirv/spirv_reflect.c.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/vulkan/vk_internal.h"
#include "backends/spirv/spirv_reflect.h"
#include "backends/spirv/spirv_scan.h"

void tandem_vk_kernel_destroy(tandem__gpu_t *base, void *native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_kernel_t *k = native;
  if (!k) return;
  if (k->adopted) { /* the application's objects: only the record is tandem's */
    free(k);
    return;
  }
  if (k->pipeline) g->vk.vkDestroyPipeline(g->device, k->pipeline, NULL);
  if (k->layout) g->vk.vkDestroyPipelineLayout(g->device, k->layout, NULL);
  if (k->set_layout) g->vk.vkDestroyDescriptorSetLayout(g->device, k->set_layout, NULL);
  if (k->module) g->vk.vkDestroyShaderModule(g->device, k->module, NULL);
  free(k);
}

/* Sets build->shared_memory_bytes; INVALID_ARGUMENT when over the device's
 * limit. */
static tandem_status_t tandem_vk_kernel_shared_check(tandem__gpu_t *base,
                                                     tandem__kernel_build_t *build,
                                                     const char *name) {
  /* Workgroup memory is known only now (array sizes are often spec
   * constants): over the device's limit, the pipeline would fail to build or
   * run out of bounds. Reflection's scan left it as terms of the
   * specialization, so the module is not walked again. They hold for the
   * LocalSize rewrite too: it changes only that instruction's literal
   * operands, which no constant refers to (and there is no WorkgroupSize
   * built-in when it happens, spirv_scan.c). */
  uint64_t shared = 0;
  bool known =
      tandem_spirv_workgroup_bytes(&build->workgroup, build->specs, build->spec_count, &shared);
  build->shared_memory_bytes = known ? shared : 0;
  if (known && shared > base->info.max_shared_memory_bytes)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': its workgroup (shared) memory is %llu bytes with these "
                       "specialization constants; GPU '%s' allows %u "
                       "(maxComputeSharedMemorySize)",
                       name, (unsigned long long)shared, base->info.name,
                       base->info.max_shared_memory_bytes);
  return TANDEM_OK;
}

tandem_status_t tandem_vk_kernel_adopt(tandem__gpu_t *base, tandem__kernel_build_t *build,
                                       const char *name, const tandem_vulkan_kernel_t *pipeline,
                                       void **out_native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  assert((VkDevice)pipeline->device == g->device); /* core/adopt.c checked it */
  (void)g;
  TANDEM_RETURN_IF_ERROR(tandem_vk_kernel_shared_check(base, build, name));
  tandem_vk_kernel_t *k = calloc(1, sizeof *k);
  if (!k) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating kernel '%s'", name);
  k->adopted = true;
  k->pipeline = (VkPipeline)pipeline->pipeline;
  k->layout = (VkPipelineLayout)pipeline->pipeline_layout;
  k->set_layout = (VkDescriptorSetLayout)pipeline->set_layout;
  k->binding_count = build->binding_count;
  k->push_constant_bytes = build->push_constant_bytes;
  *out_native = k;
  return TANDEM_OK;
}

/* A copy of the module with the entry point's LocalSize operands set to the
 * effective size (what ncnn does at pipeline creation), validated again;
 * the caller frees *out_words. */
static tandem_status_t tandem_vk_kernel_rewrite_size(const tandem__kernel_build_t *build,
                                                     const char *name, uint32_t **out_words) {
  *out_words = NULL;
  size_t n = build->spirv_size / 4;
  uint32_t at = build->local_size_mode_at;
  uint32_t *w = malloc(build->spirv_size);
  if (!w) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "kernel '%s': copying its SPIR-V", name);
  memcpy(w, build->spirv, build->spirv_size);
  /* OpExecutionMode %entry LocalSize x y z: 6 words (spirv_scan.c found it). */
  assert(at + 6 <= n && (w[at] & 0xFFFFu) == 16 && w[at + 2] == 17);
  for (int d = 0; d < 3; d++) w[at + 3 + d] = build->local_size[d];
  tandem_status_t s = tandem_spirv_validate(w, n, name);
  if (s != TANDEM_OK) {
    free(w);
    return tandem__annotate(s, "kernel '%s': after rewriting LocalSize to %ux%ux%u", name,
                            build->local_size[0], build->local_size[1], build->local_size[2]);
  }
  *out_words = w;
  return TANDEM_OK;
}

tandem_status_t tandem_vk_kernel_create(tandem__gpu_t *base, tandem__kernel_build_t *build,
                                        const char *name, void **out_native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  TANDEM_RETURN_IF_ERROR(tandem_vk_kernel_shared_check(base, build, name));
  uint32_t *rewritten = NULL;
  if (build->rewrite_local_size)
    TANDEM_RETURN_IF_ERROR(tandem_vk_kernel_rewrite_size(build, name, &rewritten));
  tandem_vk_kernel_t *k = calloc(1, sizeof *k);
  if (!k) {
    free(rewritten);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating kernel '%s'", name);
  }
  k->binding_count = build->binding_count;
  k->push_constant_bytes = build->push_constant_bytes;
  const char *step = "vkCreateShaderModule";
  VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = build->spirv_size,
                                   .pCode = rewritten ? rewritten : build->spirv};
  VkResult r = g->vk.vkCreateShaderModule(g->device, &smci, NULL, &k->module);
  free(rewritten); /* the driver keeps its own copy */
  if (r >= 0) {
    step = "vkCreateDescriptorSetLayout";
    VkDescriptorSetLayoutBinding bindings[TANDEM_MAX_BINDINGS];
    for (uint32_t i = 0; i < build->binding_count; i++)
      bindings[i] =
          (VkDescriptorSetLayoutBinding){.binding = i,
                                         .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                         .descriptorCount = 1,
                                         .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    k->push = g->push_descriptors && build->binding_count > 0;
    VkDescriptorSetLayoutCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .flags = k->push ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0,
        .bindingCount = build->binding_count,
        .pBindings = bindings};
    r = g->vk.vkCreateDescriptorSetLayout(g->device, &dci, NULL, &k->set_layout);
  }
  if (r >= 0) {
    step = "vkCreatePipelineLayout";
    VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
                                 .offset = 0,
                                 .size = build->push_constant_bytes};
    VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = 1,
                                      .pSetLayouts = &k->set_layout,
                                      .pushConstantRangeCount = build->push_constant_bytes ? 1 : 0,
                                      .pPushConstantRanges = &range};
    r = g->vk.vkCreatePipelineLayout(g->device, &lci, NULL, &k->layout);
  }
  if (r >= 0) {
    step = "vkCreateComputePipelines";
    /* Specialization: one map entry per SpecId core resolved, packed. */
    VkSpecializationMapEntry entries[TANDEM__MAX_REFLECTED_SPECS];
    uint8_t data[TANDEM__MAX_REFLECTED_SPECS * 8];
    uint32_t used = 0;
    for (uint32_t i = 0; i < build->spec_count; i++) {
      const tandem__spec_entry_t *e = &build->specs[i];
      entries[i] =
          (VkSpecializationMapEntry){.constantID = e->spec_id, .offset = used, .size = e->size};
      if (e->size == 8) {
        memcpy(data + used, &e->bits, 8);
      } else {
        uint32_t v = (uint32_t)e->bits;
        memcpy(data + used, &v, 4);
      }
      used += e->size;
    }
    VkSpecializationInfo spec = {.mapEntryCount = build->spec_count,
                                 .pMapEntries = entries,
                                 .dataSize = used,
                                 .pData = data};
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
        .requiredSubgroupSize = build->required_subgroup_size};
    /* core/kernel.c checked the device has pipelineRobustness enabled. */
    VkPipelineRobustnessCreateInfoEXT robustness = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_ROBUSTNESS_CREATE_INFO_EXT,
        .storageBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DISABLED_EXT,
        .uniformBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DISABLED_EXT,
        .vertexInputs = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DEVICE_DEFAULT_EXT,
        .images = VK_PIPELINE_ROBUSTNESS_IMAGE_BEHAVIOR_DEVICE_DEFAULT_EXT};
    bool robust_off = build->flags & TANDEM_KERNEL_DISABLE_ROBUSTNESS;
    VkComputePipelineCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .pNext = robust_off ? &robustness : NULL,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .pNext = build->required_subgroup_size ? &subgroup : NULL,
                  .flags = (build->flags & TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS)
                               ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT
                               : 0,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = k->module,
                  .pName = build->entry_point,
                  .pSpecializationInfo = build->spec_count ? &spec : NULL},
        .layout = k->layout};
    r = g->vk.vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &pci, NULL, &k->pipeline);
  }
  if (r < 0) {
    tandem_status_t s = tandem_vk_fail(r, step, __FILE__, __LINE__);
    tandem_vk_kernel_destroy(base, k);
    return tandem__annotate(s, "kernel '%s'", name);
  }
  *out_native = k;
  return TANDEM_OK;
}

tandem_status_t tandem_vk_kernel_reflect(tandem__gpu_t *gpu, const void *code, size_t code_bytes,
                                         const char *entry_point, const char *name,
                                         tandem__kernel_interface_t *out_iface) {
  (void)gpu;
  return tandem_spirv_reflect(code, code_bytes, entry_point, name, out_iface);
}
