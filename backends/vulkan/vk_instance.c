/* SPDX-License-Identifier: MIT */
/*
 * vk_instance.c — the Vulkan loader and instances: loading libvulkan.so.1
 * through volk (once per process), creating an instance (with the validation
 * layer, synchronization validation and the messenger that counts their
 * messages when asked), and listing its physical devices. Knows nothing of
 * devices or queues: vk_physical.c describes what this lists, vk_device.c
 * opens one.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/vulkan/vk_internal.h"

static pthread_mutex_t tandem_vk_loader_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool tandem_vk_loader_ready;    /* [tandem_vk_loader_mutex] */
static bool tandem_vk_instance_loaded; /* [tandem_vk_loader_mutex] */

tandem_status_t tandem_vk_loader_init(void) {
  pthread_mutex_lock(&tandem_vk_loader_mutex);
  VkResult r = VK_SUCCESS;
  if (!tandem_vk_loader_ready) {
    r = volkInitialize();
    tandem_vk_loader_ready = r == VK_SUCCESS;
    if (tandem_vk_loader_ready) tandem_vk_fault_wrap_loader();
  }
  pthread_mutex_unlock(&tandem_vk_loader_mutex);
  if (r != VK_SUCCESS)
    return TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE,
                       "the Vulkan loader (libvulkan.so.1) could not be loaded: install "
                       "libvulkan1 and a Vulkan driver (mesa-vulkan-drivers for lavapipe)");
  return TANDEM_OK;
}

void tandem_vk_load_instance(VkInstance instance, bool debug_utils) {
  /* The loader's instance-level entry points are trampolines valid for every
   * instance, so they are loaded once per process. An extension's entry
   * points are only handed out by an instance that enabled it: when the
   * first instance had no validation (tandem_runtime_gpu_count before a
   * validated open), the debug-utils ones are fetched from the first that has. */
  pthread_mutex_lock(&tandem_vk_loader_mutex);
  if (!tandem_vk_instance_loaded) {
    volkLoadInstanceOnly(instance);
    tandem_vk_fault_wrap_instance();
    tandem_vk_instance_loaded = true;
  }
  if (debug_utils && !vkCreateDebugUtilsMessengerEXT) {
    vkCreateDebugUtilsMessengerEXT =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(instance,
                                                                  "vkCreateDebugUtilsMessengerEXT");
    vkDestroyDebugUtilsMessengerEXT = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
        instance, "vkDestroyDebugUtilsMessengerEXT");
  }
  pthread_mutex_unlock(&tandem_vk_loader_mutex);
}

/* Sets |found|; fails only when the layers could not be listed (a failed
 * allocation must not read as "not installed"). */
static tandem_status_t tandem_vk_has_layer(const char *name, bool *found) {
  *found = false;
  uint32_t n = 0;
  TANDEM_VK_RETURN_IF_ERROR(vkEnumerateInstanceLayerProperties(&n, NULL));
  if (n == 0) return TANDEM_OK;
  VkLayerProperties *props = calloc(n, sizeof *props);
  if (!props)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "listing the %u Vulkan instance layers", n);
  VkResult r = vkEnumerateInstanceLayerProperties(&n, props);
  for (uint32_t i = 0; r >= 0 && i < n && !*found; i++)
    *found = strcmp(props[i].layerName, name) == 0;
  free(props);
  if (r < 0) return tandem_vk_fail(r, "vkEnumerateInstanceLayerProperties", __FILE__, __LINE__);
  return TANDEM_OK;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL tandem_vk_messenger(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  tandem_vk_gpu_t *g = user;
  if (!(severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)))
    return VK_FALSE;
  atomic_fetch_add(g->validation_counter, 1);
  if (g->validation_callback)
    g->validation_callback(g->validation_user_data,
                           (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
                               ? TANDEM_VALIDATION_ERROR
                               : TANDEM_VALIDATION_WARNING,
                           data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

/* Creates an instance; with |g| non-NULL and validation asked, with the layer,
 * synchronization validation and the messenger. */
tandem_status_t tandem_vk_instance_create(bool validation, tandem_vk_gpu_t *g, VkInstance *out) {
  *out = VK_NULL_HANDLE;
  TANDEM_RETURN_IF_ERROR(tandem_vk_loader_init());
  if (volkGetInstanceVersion() < VK_API_VERSION_1_3)
    return TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE, "the Vulkan loader supports %u.%u; tandem needs 1.3",
                       VK_API_VERSION_MAJOR(volkGetInstanceVersion()),
                       VK_API_VERSION_MINOR(volkGetInstanceVersion()));
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "tandem",
                           .pEngineName = "tandem",
                           .engineVersion = VK_MAKE_API_VERSION(
                               0, TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR, TANDEM_VERSION_PATCH),
                           .apiVersion = VK_API_VERSION_1_3};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                              VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkDebugUtilsMessengerCreateInfoEXT messenger = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = tandem_vk_messenger,
      .pUserData = g};
  /* The messenger create-info must not carry VkValidationFeaturesEXT: chain
   * features → messenger, each with its own pNext. */
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .pNext = &messenger,
                                      .enabledValidationFeatureCount = 1,
                                      .pEnabledValidationFeatures = enables};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pApplicationInfo = &app};
  if (validation) {
    bool has_layer;
    TANDEM_RETURN_IF_ERROR(tandem_vk_has_layer(layers[0], &has_layer));
    if (!has_layer)
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "validation was requested but VK_LAYER_KHRONOS_validation is not "
                         "installed (Debian package vulkan-validationlayers)");
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = layers;
    ci.enabledExtensionCount = 2;
    ci.ppEnabledExtensionNames = extensions;
    ci.pNext = &features;
  }
  VkResult r = vkCreateInstance(&ci, NULL, out);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    return TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE, "no Vulkan driver is installed (vkCreateInstance: "
                                               "VK_ERROR_INCOMPATIBLE_DRIVER)");
  if (r < 0) return tandem_vk_fail(r, "vkCreateInstance", __FILE__, __LINE__);
  tandem_vk_load_instance(*out, validation);
  if (validation && g) {
    r = vkCreateDebugUtilsMessengerEXT(*out, &messenger, NULL, &g->messenger);
    if (r < 0) {
      vkDestroyInstance(*out, NULL);
      *out = VK_NULL_HANDLE;
      return tandem_vk_fail(r, "vkCreateDebugUtilsMessengerEXT", __FILE__, __LINE__);
    }
  }
  return TANDEM_OK;
}

/* Enumerates physical devices of |instance| into a malloc'd array. */
tandem_status_t tandem_vk_physical_devices(VkInstance instance, VkPhysicalDevice **out,
                                           uint32_t *out_count) {
  *out = NULL;
  *out_count = 0;
  uint32_t n = 0;
  TANDEM_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance, &n, NULL));
  if (n == 0) return TANDEM_OK;
  VkPhysicalDevice *pds = calloc(n, sizeof *pds);
  if (!pds) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "listing physical devices");
  VkResult r = vkEnumeratePhysicalDevices(instance, &n, pds);
  if (r < 0) {
    free(pds);
    return tandem_vk_fail(r, "vkEnumeratePhysicalDevices", __FILE__, __LINE__);
  }
  *out = pds;
  *out_count = n;
  return TANDEM_OK;
}
