/* SPDX-License-Identifier: MIT */
/*
 * glsl.h — what core may call of glsl.c: GLSL compute shaders to SPIR-V.
 */
#ifndef TANDEM_CORE_GLSL_H_
#define TANDEM_CORE_GLSL_H_

#include <stddef.h>

#include "tandem/tandem.h"

/* glsl.c: compiles a compute shader's GLSL |source| to SPIR-V (*out_spirv
 * malloc'ed, the caller frees); INVALID_KERNEL with glslang's first error. */
tandem_status_t tandem__glsl_compile(const char *source, const char *name, void **out_spirv,
                                     size_t *out_bytes);
/* INVALID_KERNEL, with the command that compiles it, when |code| (read from
 * |path|, or NULL) is GLSL text rather than SPIR-V; OK otherwise. */
tandem_status_t tandem__glsl_refuse_as_spirv(const void *code, size_t bytes, const char *path,
                                             const char *name);

#endif /* TANDEM_CORE_GLSL_H_ */
