/* SPDX-License-Identifier: MIT */
/*
 * spirv_reflect.c — validation and reflection of SPIR-V compute kernels.
 *
 * Untrusted bytes go through three gates in order: cheap header checks (size,
 * magic), then the SPIRV-Tools validator for the Vulkan environment, and only
 * then tandem's own scan (spirv_scan.c: capabilities, specialization constants,
 * workgroup size), then SPIRV-Cross, which assumes a valid module and reports
 * the entry point's descriptor bindings (with NonWritable / NonReadable as the
 * shader declares them) and its push-constant block size.
 * Nothing is printed: diagnostics of both libraries end up in the error message.
 */
#include "backends/spirv/spirv_reflect.h"

#include <spirv-tools/libspirv.h>
#include <spirv_cross_c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/spirv/spirv_scan.h"
#include "core/status.h"

#define TANDEM__SPIRV_MAGIC 0x07230203u
#define TANDEM__SPIRV_MAGIC_SWAPPED 0x03022307u
#define TANDEM__SPIRV_HEADER_BYTES 20u
#define TANDEM__BINDING_CAPACITY                         \
  (sizeof(((tandem__kernel_interface_t *)0)->bindings) / \
   sizeof(((tandem__kernel_interface_t *)0)->bindings[0]))
#define TANDEM__NOTE_BYTES 320

/* Copies the first line of |src| (at most cap-1 bytes) into |dst|. */
static void tandem__first_line(char *dst, size_t cap, const char *src) {
  size_t n = 0;
  if (src != NULL) {
    while (src[n] != '\0' && src[n] != '\n' && src[n] != '\r' && n + 1 < cap) n++;
    memcpy(dst, src, n);
  }
  dst[n] = '\0';
}

/* SPIRV-Cross error callback: keeps the first message (the root cause). */
static void tandem__vk_cross_error(void *userdata, const char *error) {
  char *note = userdata;
  if (note[0] == '\0') tandem__first_line(note, TANDEM__NOTE_BYTES, error ? error : "?");
}

static const char *tandem__model_name(SpvExecutionModel model) {
  switch (model) {
    case SpvExecutionModelVertex: return "Vertex";
    case SpvExecutionModelTessellationControl: return "TessellationControl";
    case SpvExecutionModelTessellationEvaluation: return "TessellationEvaluation";
    case SpvExecutionModelGeometry: return "Geometry";
    case SpvExecutionModelFragment: return "Fragment";
    case SpvExecutionModelGLCompute: return "GLCompute";
    case SpvExecutionModelKernel: return "Kernel";
    case SpvExecutionModelTaskNV: return "TaskNV";
    case SpvExecutionModelMeshNV: return "MeshNV";
    default: return "non-compute";
  }
}

/* Runs the SPIRV-Tools validator. Vulkan 1.2 rules, or Vulkan 1.3 for SPIR-V
 * 1.6 modules (which Vulkan 1.2 does not accept at all). */
static tandem_status_t tandem__vk_validate(const uint32_t *words, size_t word_count,
                                           const char *name) {
  uint32_t version = words[1];
  spv_target_env env = version > 0x00010500u ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2;
  const char *env_name = env == SPV_ENV_VULKAN_1_3 ? "Vulkan 1.3" : "Vulkan 1.2";
  spv_context context = spvContextCreate(env);
  if (context == NULL) {
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                       "kernel '%s': could not create a SPIRV-Tools context", name);
  }
  spv_diagnostic diagnostic = NULL;
  spv_result_t result = spvValidateBinary(context, words, word_count, &diagnostic);
  tandem_status_t status = TANDEM_OK;
  if (result != SPV_SUCCESS) {
    char line[TANDEM__NOTE_BYTES];
    tandem__first_line(line, sizeof line,
                       diagnostic && diagnostic->error ? diagnostic->error : "no diagnostic given");
    status =
        TANDEM_FAIL(result == SPV_ERROR_OUT_OF_MEMORY ? TANDEM_ERROR_OUT_OF_MEMORY
                                                      : TANDEM_ERROR_INVALID_KERNEL,
                    "kernel '%s': SPIR-V %u.%u module (%zu words, %zu bytes) fails %s validation "
                    "(spirv-val result %d, position %zu): %s",
                    name, (unsigned)((version >> 16) & 0xFFu), (unsigned)((version >> 8) & 0xFFu),
                    word_count, word_count * 4, env_name, (int)result,
                    diagnostic ? diagnostic->position.index : (size_t)0, line);
  }
  if (diagnostic != NULL) spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return status;
}

tandem_status_t tandem_spirv_validate(const uint32_t *words, size_t word_count,
                                      const char *kernel_name) {
  return tandem__vk_validate(words, word_count, kernel_name);
}

/* Maps a failed SPIRV-Cross call to a status, with its message. */
static tandem_status_t tandem__vk_cross_fail(spvc_result result, const char *name, const char *what,
                                             const char *note) {
  if (result == SPVC_ERROR_OUT_OF_MEMORY) {
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "kernel '%s': out of memory while %s", name,
                       what);
  }
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                     "kernel '%s': SPIRV-Cross failed while %s (result %d): %s", name, what,
                     (int)result, note[0] ? note : "no message");
}

static bool tandem__has_decoration(const SpvDecoration *list, size_t count,
                                   SpvDecoration decoration) {
  for (size_t i = 0; i < count; i++) {
    if (list[i] == decoration) return true;
  }
  return false;
}

/* True when the block variable |res| is decorated |decoration| as a whole:
 * on the variable, or on every member of its block type. */
static bool tandem__block_has(spvc_compiler compiler, const spvc_reflected_resource *res,
                              const SpvDecoration *block_decorations, size_t block_count,
                              SpvDecoration decoration) {
  if (spvc_compiler_has_decoration(compiler, res->id, decoration)) return true;
  if (tandem__has_decoration(block_decorations, block_count, decoration)) return true;
  spvc_type type = spvc_compiler_get_type_handle(compiler, res->base_type_id);
  if (type == NULL || spvc_type_get_basetype(type) != SPVC_BASETYPE_STRUCT) return false;
  unsigned members = spvc_type_get_num_member_types(type);
  if (members == 0) return false;
  for (unsigned m = 0; m < members; m++) {
    if (!spvc_compiler_has_member_decoration(compiler, res->base_type_id, m, decoration)) {
      return false;
    }
  }
  return true;
}

/* Adds one descriptor binding, merging aliases of one (set, binding). */
static tandem_status_t tandem__add_binding(tandem__kernel_interface_t *out, const char *name,
                                           size_t total, tandem__reflected_binding_t b) {
  for (uint32_t i = 0; i < out->binding_count; i++) {
    tandem__reflected_binding_t *have = &out->bindings[i];
    if (have->set == b.set && have->binding == b.binding) {
      have->is_storage_buffer = have->is_storage_buffer && b.is_storage_buffer;
      have->writable = have->writable || b.writable;
      have->readable = have->readable || b.readable;
      return TANDEM_OK;
    }
  }
  if (out->binding_count >= TANDEM__BINDING_CAPACITY) {
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': declares %zu descriptor resources, more than the %zu "
                       "bindings tandem can reflect (contracts allow at most %d)",
                       name, total, (size_t)TANDEM__BINDING_CAPACITY, TANDEM_MAX_BINDINGS);
  }
  out->bindings[out->binding_count++] = b;
  return TANDEM_OK;
}

static void tandem__sort_bindings(tandem__kernel_interface_t *out) {
  for (uint32_t i = 1; i < out->binding_count; i++) {
    tandem__reflected_binding_t key = out->bindings[i];
    uint32_t j = i;
    while (j > 0 &&
           (out->bindings[j - 1].set > key.set ||
            (out->bindings[j - 1].set == key.set && out->bindings[j - 1].binding > key.binding))) {
      out->bindings[j] = out->bindings[j - 1];
      j--;
    }
    out->bindings[j] = key;
  }
}

static const spvc_resource_type tandem__descriptor_types[] = {
    SPVC_RESOURCE_TYPE_STORAGE_BUFFER, SPVC_RESOURCE_TYPE_UNIFORM_BUFFER,
    SPVC_RESOURCE_TYPE_STORAGE_IMAGE,  SPVC_RESOURCE_TYPE_SAMPLED_IMAGE,
    SPVC_RESOURCE_TYPE_SEPARATE_IMAGE, SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS,
    SPVC_RESOURCE_TYPE_SUBPASS_INPUT,  SPVC_RESOURCE_TYPE_ACCELERATION_STRUCTURE,
    SPVC_RESOURCE_TYPE_ATOMIC_COUNTER,
};
#define TANDEM__DESCRIPTOR_TYPE_COUNT \
  (sizeof tandem__descriptor_types / sizeof tandem__descriptor_types[0])

static tandem_status_t tandem__reflect_bindings(spvc_compiler compiler, spvc_resources resources,
                                                const char *name, const char *note,
                                                tandem__kernel_interface_t *out) {
  const spvc_reflected_resource *lists[TANDEM__DESCRIPTOR_TYPE_COUNT];
  size_t counts[TANDEM__DESCRIPTOR_TYPE_COUNT];
  size_t total = 0;
  for (size_t t = 0; t < TANDEM__DESCRIPTOR_TYPE_COUNT; t++) {
    spvc_result r =
        spvc_resources_get_resource_list_for_type(resources, tandem__descriptor_types[t], &lists[t],
                                                  &counts[t]);
    if (r != SPVC_SUCCESS) return tandem__vk_cross_fail(r, name, "listing resources", note);
    total += counts[t];
  }

  for (size_t t = 0; t < TANDEM__DESCRIPTOR_TYPE_COUNT; t++) {
    spvc_resource_type type = tandem__descriptor_types[t];
    for (size_t i = 0; i < counts[t]; i++) {
      const spvc_reflected_resource *res = &lists[t][i];
      tandem__reflected_binding_t b;
      memset(&b, 0, sizeof b);
      b.set = spvc_compiler_get_decoration(compiler, res->id, SpvDecorationDescriptorSet);
      b.binding = spvc_compiler_get_decoration(compiler, res->id, SpvDecorationBinding);
      b.is_storage_buffer = type == SPVC_RESOURCE_TYPE_STORAGE_BUFFER;
      b.readable = true;
      b.writable = false;
      if (type == SPVC_RESOURCE_TYPE_STORAGE_BUFFER) {
        const SpvDecoration *block = NULL;
        size_t block_count = 0;
        if (spvc_compiler_get_buffer_block_decorations(compiler, res->id, &block, &block_count) !=
            SPVC_SUCCESS) {
          block = NULL;
          block_count = 0;
        }
        b.writable =
            !tandem__block_has(compiler, res, block, block_count, SpvDecorationNonWritable);
        b.readable =
            !tandem__block_has(compiler, res, block, block_count, SpvDecorationNonReadable);
      } else if (type == SPVC_RESOURCE_TYPE_STORAGE_IMAGE) {
        b.writable = !spvc_compiler_has_decoration(compiler, res->id, SpvDecorationNonWritable);
        b.readable = !spvc_compiler_has_decoration(compiler, res->id, SpvDecorationNonReadable);
      }
      TANDEM_RETURN_IF_ERROR(tandem__add_binding(out, name, total, b));
    }
  }
  tandem__sort_bindings(out);
  return TANDEM_OK;
}

static tandem_status_t tandem__reflect_push_constants(spvc_compiler compiler,
                                                      spvc_resources resources, const char *name,
                                                      const char *note,
                                                      tandem__kernel_interface_t *out) {
  const spvc_reflected_resource *list = NULL;
  size_t count = 0;
  spvc_result r =
      spvc_resources_get_resource_list_for_type(resources, SPVC_RESOURCE_TYPE_PUSH_CONSTANT, &list,
                                                &count);
  if (r != SPVC_SUCCESS) return tandem__vk_cross_fail(r, name, "listing push constants", note);
  size_t bytes = 0;
  for (size_t i = 0; i < count; i++) {
    spvc_type type = spvc_compiler_get_type_handle(compiler, list[i].base_type_id);
    size_t size = 0;
    r = spvc_compiler_get_declared_struct_size(compiler, type, &size);
    if (r != SPVC_SUCCESS) {
      return tandem__vk_cross_fail(r, name, "sizing the push-constant block", note);
    }
    if (size > bytes) bytes = size;
  }
  if (bytes > UINT32_MAX) {
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': push-constant block of %zu bytes is too large", name, bytes);
  }
  out->push_constant_bytes = (uint32_t)bytes;
  return TANDEM_OK;
}

/* Selects the GLCompute entry point |entry|, or explains what exists. */
static tandem_status_t tandem__select_entry(spvc_compiler compiler, const char *entry,
                                            const char *name, const char *note) {
  const spvc_entry_point *points = NULL;
  size_t count = 0;
  spvc_result r = spvc_compiler_get_entry_points(compiler, &points, &count);
  if (r != SPVC_SUCCESS) return tandem__vk_cross_fail(r, name, "listing entry points", note);

  const char *other_model = NULL;
  for (size_t i = 0; i < count; i++) {
    if (strcmp(points[i].name, entry) != 0) continue;
    if (points[i].execution_model == SpvExecutionModelGLCompute) {
      r = spvc_compiler_set_entry_point(compiler, entry, SpvExecutionModelGLCompute);
      if (r != SPVC_SUCCESS)
        return tandem__vk_cross_fail(r, name, "selecting the entry point", note);
      return TANDEM_OK;
    }
    other_model = tandem__model_name(points[i].execution_model);
  }

  char listing[512];
  size_t used = 0;
  listing[0] = '\0';
  for (size_t i = 0; i < count && used < sizeof listing; i++) {
    int n = snprintf(listing + used, sizeof listing - used, "%s'%s' (%s)", i ? ", " : "",
                     points[i].name, tandem__model_name(points[i].execution_model));
    if (n < 0) break;
    used += (size_t)n;
  }
  if (other_model != NULL) {
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': entry point '%s' is a %s shader, not a GLCompute "
                       "kernel; the module has %s",
                       name, entry, other_model, listing);
  }
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                     "kernel '%s': no entry point '%s'; the module has %s", name, entry,
                     count ? listing : "no entry points");
}

tandem_status_t tandem_spirv_reflect(const void *words, size_t size_bytes, const char *entry_point,
                                     const char *kernel_name, tandem__kernel_interface_t *out) {
  const char *name = kernel_name ? kernel_name : "(unnamed)";
  const char *entry = entry_point ? entry_point : "main";
  if (out == NULL) {
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "kernel '%s': out is NULL", name);
  }
  memset(out, 0, sizeof *out);
  if (words == NULL && size_bytes != 0) {
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': SPIR-V pointer is NULL but size is %zu bytes", name,
                       size_bytes);
  }
  if (size_bytes % 4 != 0) {
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': SPIR-V size %zu bytes is not a multiple of 4 "
                       "(%zu whole words and %zu byte(s) over)",
                       name, size_bytes, size_bytes / 4, size_bytes % 4);
  }
  if (size_bytes < TANDEM__SPIRV_HEADER_BYTES) {
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': SPIR-V is %zu bytes (%zu words), shorter than the "
                       "%u-byte header",
                       name, size_bytes, size_bytes / 4, TANDEM__SPIRV_HEADER_BYTES);
  }

  /* The validator reads uint32_t words: give it aligned ones. */
  const size_t word_count = size_bytes / 4;
  const uint32_t *w = words;
  uint32_t *copy = NULL;
  if (((uintptr_t)words & 3u) != 0) {
    copy = malloc(size_bytes);
    if (copy == NULL) {
      return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                         "kernel '%s': no memory to align %zu bytes of SPIR-V", name, size_bytes);
    }
    memcpy(copy, words, size_bytes);
    w = copy;
  }

  tandem_status_t status = TANDEM_OK;
  if (w[0] != TANDEM__SPIRV_MAGIC) {
    if (w[0] == TANDEM__SPIRV_MAGIC_SWAPPED) {
      status = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                           "kernel '%s': SPIR-V (%zu words, %zu bytes) is byte-swapped "
                           "(big-endian); tandem needs host-endian words",
                           name, word_count, size_bytes);
    } else {
      status = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                           "kernel '%s': not SPIR-V: first word is 0x%08x, expected magic "
                           "0x%08x (%zu words, %zu bytes)",
                           name, (unsigned)w[0], TANDEM__SPIRV_MAGIC, word_count, size_bytes);
    }
    free(copy);
    return status;
  }

  status = tandem__vk_validate(w, word_count, name);
  if (status != TANDEM_OK) {
    free(copy);
    return status;
  }

  /* Capabilities, specialization constants and the workgroup size come from
   * tandem's own scan, before SPIRV-Cross sees the module: SPIRV-Cross throws
   * (and aborts the process through its C API) on shapes the validator
   * accepts, e.g. LocalSizeId with a non-constant operand. */
  status = tandem_spirv_scan(w, word_count, entry, name, out);
  if (status != TANDEM_OK) {
    free(copy);
    memset(out, 0, sizeof *out);
    return status;
  }

  char note[TANDEM__NOTE_BYTES];
  note[0] = '\0';
  spvc_context context = NULL;
  if (spvc_context_create(&context) != SPVC_SUCCESS || context == NULL) {
    free(copy);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                       "kernel '%s': could not create a SPIRV-Cross context", name);
  }
  spvc_context_set_error_callback(context, tandem__vk_cross_error, note);

  spvc_parsed_ir ir = NULL;
  spvc_compiler compiler = NULL;
  spvc_resources resources = NULL;
  spvc_result r = spvc_context_parse_spirv(context, w, word_count, &ir);
  if (r != SPVC_SUCCESS) {
    status = tandem__vk_cross_fail(r, name, "parsing the module", note);
    goto done;
  }
  r = spvc_context_create_compiler(context, SPVC_BACKEND_NONE, ir, SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                   &compiler);
  if (r != SPVC_SUCCESS) {
    status = tandem__vk_cross_fail(r, name, "loading the module", note);
    goto done;
  }
  status = tandem__select_entry(compiler, entry, name, note);
  if (status != TANDEM_OK) goto done;
  r = spvc_compiler_create_shader_resources(compiler, &resources);
  if (r != SPVC_SUCCESS) {
    status = tandem__vk_cross_fail(r, name, "collecting resources", note);
    goto done;
  }
  status = tandem__reflect_bindings(compiler, resources, name, note, out);
  if (status != TANDEM_OK) goto done;
  status = tandem__reflect_push_constants(compiler, resources, name, note, out);
  if (status != TANDEM_OK) goto done;

done:
  spvc_context_destroy(context);
  free(copy);
  if (status != TANDEM_OK) memset(out, 0, sizeof *out);
  return status;
}
