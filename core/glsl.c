/* SPDX-License-Identifier: MIT */
/*
 * glsl.c — GLSL at kernel creation: compiles a compute shader's source to
 * SPIR-V with glslang's C interface (Debian glslang-dev, linked statically and
 * hidden inside libtandem), and recognises GLSL text handed over as SPIR-V so
 * that the error says what it is and how to compile it.
 *
 * Not a shader toolchain: one compute stage, Vulkan 1.2 / SPIR-V 1.5 rules,
 * glslang's default resource limits, no includes, no optimisation. Errors
 * carry glslang's log (file:line: message) and name the kernel.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

#include "core/glsl.h"
#include "core/status.h"

#define TANDEM__SPIRV_MAGIC 0x07230203u

/* The first line of glslang's log that says something, for the message. */
static void tandem__glsl_log_excerpt(const char *log, char *out, size_t n) {
  out[0] = '\0';
  if (!log) return;
  const char *line = log;
  while (*line) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len && (strstr(line, "ERROR") == line || strstr(line, "error") == line || !out[0])) {
      snprintf(out, n, "%.*s", (int)len, line);
      if (strncmp(line, "ERROR", 5) == 0) return; /* the first real error wins */
    }
    if (!end) break;
    line = end + 1;
  }
}

tandem_status_t tandem__glsl_compile(const char *source, const char *name, void **out_spirv,
                                     size_t *out_bytes) {
  *out_spirv = NULL;
  *out_bytes = 0;
  if (!glslang_initialize_process())
    return TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "kernel '%s': glslang could not initialise", name);
  glslang_input_t input = {
      .language = GLSLANG_SOURCE_GLSL,
      .stage = GLSLANG_STAGE_COMPUTE,
      .client = GLSLANG_CLIENT_VULKAN,
      .client_version = GLSLANG_TARGET_VULKAN_1_2,
      .target_language = GLSLANG_TARGET_SPV,
      .target_language_version = GLSLANG_TARGET_SPV_1_5,
      .code = source,
      .default_version = 450,
      .default_profile = GLSLANG_NO_PROFILE,
      .force_default_version_and_profile = false,
      .forward_compatible = false,
      .messages =
          GLSLANG_MSG_DEFAULT_BIT | GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT,
      .resource = glslang_default_resource(),
  };
  tandem_status_t s = TANDEM_OK;
  char excerpt[512];
  glslang_shader_t *shader = glslang_shader_create(&input);
  glslang_program_t *program = NULL;
  if (!shader) {
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "kernel '%s': making a glslang shader", name);
    goto out;
  }
  if (!glslang_shader_preprocess(shader, &input) || !glslang_shader_parse(shader, &input)) {
    tandem__glsl_log_excerpt(glslang_shader_get_info_log(shader), excerpt, sizeof excerpt);
    s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                    "kernel '%s': the GLSL source does not compile as a compute shader: %s", name,
                    excerpt[0] ? excerpt : "(glslang gave no message)");
    goto out;
  }
  program = glslang_program_create();
  if (!program) {
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "kernel '%s': making a glslang program", name);
    goto out;
  }
  glslang_program_add_shader(program, shader);
  if (!glslang_program_link(program, GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
    tandem__glsl_log_excerpt(glslang_program_get_info_log(program), excerpt, sizeof excerpt);
    s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL, "kernel '%s': the GLSL source does not link: %s",
                    name, excerpt[0] ? excerpt : "(glslang gave no message)");
    goto out;
  }
  glslang_program_SPIRV_generate(program, GLSLANG_STAGE_COMPUTE);
  size_t words = glslang_program_SPIRV_get_size(program);
  if (words == 0) {
    s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL, "kernel '%s': glslang produced no SPIR-V", name);
    goto out;
  }
  *out_spirv = malloc(words * 4);
  if (!*out_spirv) {
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "kernel '%s': %zu words of SPIR-V", name, words);
    goto out;
  }
  glslang_program_SPIRV_get(program, *out_spirv);
  *out_bytes = words * 4;
out:
  glslang_program_delete(program);
  glslang_shader_delete(shader);
  glslang_finalize_process();
  return s;
}

tandem_status_t tandem__glsl_refuse_as_spirv(const void *code, size_t bytes, const char *path,
                                             const char *name) {
  const unsigned char *c = code;
  if (!c || bytes < 4) return TANDEM_OK;
  uint32_t magic;
  memcpy(&magic, c, 4);
  if (magic == TANDEM__SPIRV_MAGIC || magic == __builtin_bswap32(TANDEM__SPIRV_MAGIC))
    return TANDEM_OK;
  /* Text that reads like GLSL: printable, and a #version, layout or void main. */
  size_t n = bytes < 4096 ? bytes : 4096;
  for (size_t i = 0; i < n; i++)
    if (c[i] < 0x80 && !isprint(c[i]) && !isspace(c[i])) return TANDEM_OK;
  char head[4097];
  memcpy(head, c, n);
  head[n] = '\0';
  if (!strstr(head, "#version") && !strstr(head, "layout") && !strstr(head, "void main"))
    return TANDEM_OK;
  const char *file = path ? path : "shader.comp";
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                     "kernel '%s': %s%s%s is GLSL source, not SPIR-V: pass the text as "
                     "glsl_source to compile it at creation, or compile it first with "
                     "'glslangValidator -V --target-env vulkan1.2 -o kernel.spv %s' "
                     "(Debian package glslang-tools)",
                     name, path ? "'" : "", path ? path : "the code", path ? "'" : "", file);
}
