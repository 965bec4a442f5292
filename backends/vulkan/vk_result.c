/* SPDX-License-Identifier: MIT */
/*
 * vk_result.c — VkResult names and the one conversion of a failed Vulkan call
 * into a tandem status (TANDEM_VK_RETURN_IF_ERROR, vk_internal.h). At the
 * bottom of the Vulkan backend: every other file of it may call these, and
 * they call nothing of the backend.
 */
#include <string.h>

#include "backends/vulkan/vk_internal.h"

const char *tandem_vk_result_name(VkResult r) {
  switch (r) {
    /* clang-format off */
#define C(x) case x: return #x;
    C(VK_SUCCESS) C(VK_NOT_READY) C(VK_TIMEOUT) C(VK_INCOMPLETE)
    C(VK_ERROR_OUT_OF_HOST_MEMORY) C(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    C(VK_ERROR_INITIALIZATION_FAILED) C(VK_ERROR_DEVICE_LOST) C(VK_ERROR_MEMORY_MAP_FAILED)
    C(VK_ERROR_LAYER_NOT_PRESENT) C(VK_ERROR_EXTENSION_NOT_PRESENT)
    C(VK_ERROR_FEATURE_NOT_PRESENT) C(VK_ERROR_INCOMPATIBLE_DRIVER) C(VK_ERROR_TOO_MANY_OBJECTS)
    C(VK_ERROR_FORMAT_NOT_SUPPORTED) C(VK_ERROR_FRAGMENTED_POOL) C(VK_ERROR_UNKNOWN)
    C(VK_ERROR_OUT_OF_POOL_MEMORY) C(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    C(VK_ERROR_INVALID_SHADER_NV)
    /* clang-format on */
#undef C
                                    default : return "VkResult(?)";
  }
}

tandem_status_t tandem_vk_fail(VkResult r, const char *call, const char *file, int line) {
  tandem_status_t code;
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_TOO_MANY_OBJECTS:
    case VK_ERROR_FRAGMENTED_POOL: code = TANDEM_ERROR_OUT_OF_MEMORY; break;
    case VK_ERROR_DEVICE_LOST: code = TANDEM_ERROR_DEVICE_LOST; break;
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED: code = TANDEM_ERROR_NO_DEVICE; break;
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT: code = TANDEM_ERROR_UNSUPPORTED; break;
    case VK_TIMEOUT: code = TANDEM_ERROR_TIMEOUT; break;
    default: code = TANDEM_ERROR_INTERNAL; break;
  }
  const char *paren = strchr(call, '(');
  int name_len = paren ? (int)(paren - call) : (int)strlen(call);
  /* "vk.vkQueueSubmit2" → "vkQueueSubmit2" for table calls */
  const char *dot = memchr(call, '.', (size_t)name_len);
  if (dot) {
    name_len -= (int)(dot + 1 - call);
    call = dot + 1;
  }
  return tandem__fail(code, file, line, "%.*s failed: %s", name_len, call,
                      tandem_vk_result_name(r));
}
