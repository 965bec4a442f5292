/* SPDX-License-Identifier: MIT */
/*
 * struct_size.h — the versioned public structs: checking a caller's
 * struct_size and copying only the bytes both sides know (tandem.h,
 * Conventions, "Versioned structs").
 *
 * The library always works on a whole struct of its own layout; these helpers
 * move it across the boundary. TANDEM__OLDEST_* is the smallest struct_size
 * each struct accepts: its size in the first release that shipped struct_size.
 * No release has yet (SONAME 0), so it is the current size; once one ships it
 * is frozen at that number and fields are only appended, with 0 as default.
 */
#ifndef TANDEM_CORE_STRUCT_SIZE_H_
#define TANDEM_CORE_STRUCT_SIZE_H_

#include <stddef.h>

#include "core/status.h"
#include "tandem/tandem.h"
#include "tandem/tandem_vulkan.h"

#define TANDEM__OLDEST_RUNTIME_OPTIONS sizeof(tandem_runtime_options_t)
#define TANDEM__OLDEST_KERNEL_DESC sizeof(tandem_kernel_desc_t)
#define TANDEM__OLDEST_DEVICE_INFO sizeof(tandem_device_info_t)
#define TANDEM__OLDEST_KERNEL_INFO sizeof(tandem_kernel_info_t)
#define TANDEM__OLDEST_SPEC_CONSTANT_INFO sizeof(tandem_spec_constant_info_t)
#define TANDEM__OLDEST_NPU_INFO sizeof(tandem_npu_info_t)
#define TANDEM__OLDEST_STATISTICS sizeof(tandem_statistics_t)
#define TANDEM__OLDEST_DISPATCH_DESC sizeof(tandem_dispatch_desc_t)
#define TANDEM__OLDEST_NPU_PROGRAM_DESC sizeof(tandem_npu_program_desc_t)
#define TANDEM__OLDEST_VULKAN_DEVICE sizeof(tandem_vulkan_device_t)
#define TANDEM__OLDEST_VULKAN_BUFFER sizeof(tandem_vulkan_buffer_t)
#define TANDEM__OLDEST_VULKAN_KERNEL sizeof(tandem_vulkan_kernel_t)
#define TANDEM__OLDEST_EXTERNAL_MEMORY sizeof(tandem_external_memory_t)
#define TANDEM__OLDEST_LANE_INFO sizeof(tandem_lane_info_t)
#define TANDEM__OLDEST_COMPLETION_PROFILE sizeof(tandem_completion_profile_t)
#define TANDEM__OLDEST_VULKAN_HANDLES sizeof(tandem_vulkan_handles_t)
#define TANDEM__OLDEST_GPU_PAIR_INFO sizeof(tandem_gpu_pair_info_t)

/* A struct the caller passes in: |known| (|known_size| bytes, this library's
 * layout) must hold the defaults on entry; on success it holds the caller's
 * first min(struct_size, known_size) bytes over them, with struct_size set to
 * known_size. Errors: INVALID_ARGUMENT, naming |type|, for a struct_size of
 * 0, below |oldest|, or above known_size with a non-zero byte past it. */
tandem_status_t tandem__struct_in(const void *user, void *known, size_t known_size, size_t oldest,
                                  const char *type);

/* Declares |known|, a struct of this library's layout for the public type
 * |base|_t holding its defaults (|base|_init), reads the caller's |user|
 * into it (tandem__struct_in, |oldest| its TANDEM__OLDEST_* size), and
 * returns the error from the enclosing function on a bad struct_size. */
#define TANDEM__STRUCT_IN(base, user, known, oldest) \
  base##_t known;                                    \
  base##_init(&known);                               \
  TANDEM_RETURN_IF_ERROR(tandem__struct_in((user), &known, sizeof known, (oldest), #base "_t"))

/* A struct the library fills: checks the caller's struct_size (as
 * tandem__struct_in, without the tail check). Writes nothing. */
tandem_status_t tandem__struct_out_check(const void *user, size_t oldest, const char *type);

/* Writes |known| (|known_size| bytes, this library's layout) to |user|, which
 * passed tandem__struct_out_check: the first min(struct_size, known_size)
 * bytes, zero past known_size up to struct_size, and user's struct_size kept. */
void tandem__struct_out(void *user, const void *known, size_t known_size);

/* Zeroes every byte of |user| after struct_size, up to struct_size: a failed
 * call's output (Conventions, "Outputs"). |user| passed
 * tandem__struct_out_check. */
void tandem__struct_clear(void *user);

#endif /* TANDEM_CORE_STRUCT_SIZE_H_ */
