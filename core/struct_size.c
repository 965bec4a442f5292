/* SPDX-License-Identifier: MIT */
/*
 * struct_size.c — moves versioned public structs across the API boundary
 * (struct_size.h): a caller's struct may be an older or newer layout than the
 * library's, and only the bytes both know are read or written.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "core/status.h"
#include "core/struct_size.h"
#include "tandem/tandem.h"
#include "tandem/tandem_vulkan.h"

/* Every versioned struct starts with uint32_t struct_size (tandem.h). */
_Static_assert(offsetof(tandem_runtime_options_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_kernel_desc_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_device_info_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_kernel_info_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_npu_info_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_statistics_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_dispatch_desc_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_npu_program_desc_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_vulkan_device_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_vulkan_buffer_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_vulkan_kernel_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_external_memory_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_lane_info_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_completion_profile_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_vulkan_handles_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_vulkan_scope_t, struct_size) == 0, "struct_size first");
_Static_assert(offsetof(tandem_gpu_pair_info_t, struct_size) == 0, "struct_size first");

/* No versioned struct will grow past this: a larger struct_size is an
 * uninitialised field (stack garbage), refused before the library writes
 * that many bytes. */
#define TANDEM__STRUCT_SIZE_CEILING 65536u

static uint32_t tandem__size_of(const void *user) {
  uint32_t size;
  memcpy(&size, user, sizeof size);
  return size;
}

tandem_status_t tandem__struct_out_check(const void *user, size_t oldest, const char *type) {
  uint32_t size = tandem__size_of(user);
  if (size == 0)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s.struct_size is 0; set struct_size = sizeof(%s) (its _init function "
                       "does)",
                       type, type);
  if (size > TANDEM__STRUCT_SIZE_CEILING)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s.struct_size is %u, more than any tandem struct will ever be: it was "
                       "not set; set struct_size = sizeof(%s) (its _init function does)",
                       type, size, type);
  if (size < oldest)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s.struct_size is %u, less than the %zu bytes of the oldest layout this "
                       "library reads; set struct_size = sizeof(%s) (its _init function does)",
                       type, size, oldest, type);
  return TANDEM_OK;
}

tandem_status_t tandem__struct_in(const void *user, void *known, size_t known_size, size_t oldest,
                                  const char *type) {
  assert(oldest <= known_size && oldest >= sizeof(uint32_t));
  TANDEM_RETURN_IF_ERROR(tandem__struct_out_check(user, oldest, type));
  uint32_t size = tandem__size_of(user);
  const unsigned char *bytes = user;
  for (size_t i = known_size; i < size; i++)
    if (bytes[i] != 0)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "%s.struct_size is %u, larger than the %zu bytes this library (%s) "
                         "knows, and byte %zu is not zero: the program sets a field this "
                         "library does not have; run it with the libtandem whose header it was "
                         "built against, or leave that field 0",
                         type, size, known_size, tandem_version(), i);
  memcpy(known, user, size < known_size ? size : known_size);
  uint32_t own = (uint32_t)known_size;
  memcpy(known, &own, sizeof own);
  return TANDEM_OK;
}

void tandem__struct_out(void *user, const void *known, size_t known_size) {
  uint32_t size = tandem__size_of(user);
  assert(size >= sizeof(uint32_t)); /* checked by tandem__struct_out_check */
  unsigned char *bytes = user;
  size_t common = size < known_size ? size : known_size;
  memcpy(bytes + sizeof size, (const unsigned char *)known + sizeof size, common - sizeof size);
  if (size > known_size) memset(bytes + known_size, 0, size - known_size);
}

void tandem__struct_clear(void *user) {
  uint32_t size = tandem__size_of(user);
  assert(size >= sizeof(uint32_t)); /* checked by tandem__struct_out_check */
  memset((unsigned char *)user + sizeof size, 0, size - sizeof size);
}
