/* SPDX-License-Identifier: MIT */
/*
 * consumer_vk.c — an application that uses Vulkan itself (linked against the
 * system's libvulkan) and tandem side by side, the way a renderer or an ML
 * runtime embeds a library. tests/install links it with the static and the
 * shared tandem: libtandem must keep its own Vulkan loader (volk) to itself, so
 * the application's vk* calls reach libvulkan, not tandem's function pointers.
 *
 * It makes its own instance with the validation layer and a messenger that
 * counts messages, enumerates devices, runs a fill graph through tandem (with
 * validation) and checks the bytes, asks tandem for its VkDevice and the
 * buffer's VkBuffer through the installed <tandem/tandem_vulkan.h>, then
 * calls Vulkan again. Exit 0 on
 * success, 77 when there is no device, 1 on any failure or validation message.
 */
#include <stdio.h>
#include <string.h>

#include <vulkan/vulkan.h>
#include <tandem/tandem_vulkan.h>

static unsigned app_messages;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                 void *user) {
  (void)type, (void)user;
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    fprintf(stderr, "consumer_vk: validation: %s\n", data->pMessage);
    app_messages++;
  }
  return VK_FALSE;
}

/* The application's own Vulkan: an instance with validation, its devices. */
static int app_vulkan(const char *when, uint32_t *out_devices) {
  uint32_t version = 0;
  if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS) {
    fprintf(stderr, "consumer_vk: %s: vkEnumerateInstanceVersion failed\n", when);
    return 1;
  }
  VkDebugUtilsMessengerCreateInfoEXT messenger = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
      .pfnUserCallback = on_message};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "consumer_vk",
                           .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pNext = &messenger,
                             .pApplicationInfo = &app,
                             .enabledLayerCount = 1,
                             .ppEnabledLayerNames = layers,
                             .enabledExtensionCount = 1,
                             .ppEnabledExtensionNames = extensions};
  VkInstance instance;
  VkResult r = vkCreateInstance(&ci, NULL, &instance);
  if (r != VK_SUCCESS) {
    fprintf(stderr, "consumer_vk: %s: vkCreateInstance with the validation layer: %d\n", when, r);
    return 1;
  }
  uint32_t count = 0;
  r = vkEnumeratePhysicalDevices(instance, &count, NULL);
  vkDestroyInstance(instance, NULL);
  if (r != VK_SUCCESS) {
    fprintf(stderr, "consumer_vk: %s: vkEnumeratePhysicalDevices: %d\n", when, r);
    return 1;
  }
  printf("consumer_vk: %s: Vulkan %u.%u, %u device(s)\n", when, VK_API_VERSION_MAJOR(version),
         VK_API_VERSION_MINOR(version), count);
  *out_devices = count;
  return 0;
}

/* tandem on the same process: fill a buffer on the GPU, read it back; its
 * native handles (tandem_vulkan.h) name a device and the buffer. */
static int tandem_fill(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.validation = true;
  tandem_runtime_t *rt = NULL;
  tandem_buffer_t *buf = NULL;
  tandem_graph_t *g = NULL;
  tandem_exec_t *e = NULL;
  tandem_completion_t *c = NULL;
  tandem_map_t m;
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  tandem_vulkan_view_t vv = {0};
  int rc = 1;
  tandem_status_t s = tandem_runtime_create(&o, &rt);
  if (s == TANDEM_OK) s = tandem_buffer_create(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE, &buf);
  if (s == TANDEM_OK) s = tandem_graph_create(rt, &g);
  if (s == TANDEM_OK)
    s = tandem_graph_add_fill(g, tandem_buffer_whole(buf), 0x5a5a1234u, TANDEM_LANE_AUTO);
  if (s == TANDEM_OK) s = tandem_graph_prepare(g, &e);
  if (s == TANDEM_OK) s = tandem_exec_submit(e, &c);
  if (s == TANDEM_OK) s = tandem_completion_wait(c);
  if (s == TANDEM_OK) s = tandem_runtime_vulkan_handles(rt, &h);
  if (s == TANDEM_OK) s = tandem_view_vulkan_buffer(tandem_buffer_whole(buf), &vv);
  if (s == TANDEM_OK) s = tandem_map_read(tandem_buffer_whole(buf), &m);
  if (s == TANDEM_OK) {
    const uint32_t *w = m.data;
    rc = 0;
    if (!h.device || !h.lanes[TANDEM_LANE_COMPUTE].queue || !vv.buffer || vv.range != 4096) {
      fprintf(
          stderr,
          "consumer_vk: tandem_vulkan.h: device %p, compute queue %p, VkBuffer %p of %llu bytes\n",
          h.device, h.lanes[TANDEM_LANE_COMPUTE].queue, vv.buffer, (unsigned long long)vv.range);
      rc = 1;
    }
    for (uint32_t i = 0; i < 1024; i++)
      if (w[i] != 0x5a5a1234u) {
        fprintf(stderr, "consumer_vk: word %u is 0x%08x, filled with 0x5a5a1234\n", i, w[i]);
        rc = 1;
        break;
      }
    tandem_unmap(&m);
  } else {
    fprintf(stderr, "consumer_vk: tandem: %s: %s\n", tandem_status_name(s), tandem_error_message());
    if (s == TANDEM_ERROR_NO_DEVICE) rc = 77;
  }
  tandem_completion_release(c);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(buf);
  if (rt && tandem_runtime_validation_messages(rt)) {
    fprintf(stderr, "consumer_vk: tandem saw %llu validation message(s)\n",
            (unsigned long long)tandem_runtime_validation_messages(rt));
    rc = 1;
  }
  tandem_runtime_destroy(rt);
  if (rc == 0) printf("consumer_vk: tandem filled 4096 bytes on the GPU\n");
  return rc;
}

int main(void) {
  uint32_t devices = 0;
  int rc = app_vulkan("before tandem", &devices);
  if (rc) return rc;
  if (devices == 0) return 77;
  rc = tandem_fill();
  if (rc) return rc;
  rc = app_vulkan("after tandem", &devices);
  if (rc) return rc;
  if (app_messages) {
    fprintf(stderr, "consumer_vk: %u validation message(s) on the application's instance\n",
            app_messages);
    return 1;
  }
  return 0;
}
