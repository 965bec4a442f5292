/* SPDX-License-Identifier: MIT */
/*
 * tandem_bench.c — tandem against raw Vulkan doing the same work, in the same
 * process, alternated (tandem, direct, tandem, direct, ...), median of many runs.
 *
 * Three benchmarks, each a prepared graph on the tandem side and a command
 * buffer recorded once on the direct side (its own VkInstance and VkDevice on
 * the same physical device and queue family):
 *   dispatch        1 dispatch of a tiny kernel (1 workgroup of 64 threads)
 *   independent100  100 dispatches on disjoint ranges: no barriers
 *   chain100        100 read-modify-write dispatches on one range: a barrier
 *                   between each
 * One timed iteration is submit + wait (tandem: tandem_exec_submit +
 * tandem_completion_wait + tandem_completion_release; direct: vkQueueSubmit2
 * signalling a timeline value + vkWaitSemaphores), on CLOCK_MONOTONIC.
 * After timing, every benchmark reads its results back on both sides and
 * checks them. See bench/README.md.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tandem/tandem.h"
#include "tandem_bench_shaders.h"
#include "volk.h"

#define BENCH_EXIT_SKIP 77
#define RANGE_BYTES 256u /* one dispatch's range: 64 uints; a multiple of any
                            minStorageBufferOffsetAlignment (at most 256) */
#define RANGE_WORDS (RANGE_BYTES / 4u)
#define MAX_NODES 100u
#define WRITE_VALUE(node) (1u + (uint32_t)(node) * 1000u)

/*--------------------------------------------------------------------------
 * Failure handling
 *--------------------------------------------------------------------------*/

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tandem_bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

#define TCHECK(expr)                                                                    \
  do {                                                                                  \
    tandem_status_t s_ = (expr);                                                        \
    if (s_ != TANDEM_OK)                                                                \
      die("%s:%d: %s failed: %s: %s", __FILE__, __LINE__, #expr, tandem_status_name(s_), \
          tandem_error_message());                                                      \
  } while (0)

#define VKCHECK(expr)                                                                      \
  do {                                                                                     \
    VkResult r_ = (expr);                                                                  \
    if (r_ != VK_SUCCESS) die("%s:%d: %s failed: VkResult %d", __FILE__, __LINE__, #expr, \
                              (int)r_);                                                    \
  } while (0)

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/*--------------------------------------------------------------------------
 * Options
 *--------------------------------------------------------------------------*/

typedef struct options {
  uint32_t iterations;
  uint32_t warmup;
  uint32_t gpu_index;
  bool validate;
  bool direct_first; /* BABA... instead of ABAB...: to see order bias */
  const char *json_path;
  const char *only;
} options_t;

static void usage(FILE *f) {
  fputs(
      "usage: tandem_bench [options]\n"
      "\n"
      "Measures tandem against raw Vulkan doing the same work in the same process.\n"
      "Each benchmark alternates one tandem run and one direct run per iteration and\n"
      "times submit + wait of each with CLOCK_MONOTONIC; the ratio is tandem/direct\n"
      "(1.00 = no overhead). Results are verified by reading them back.\n"
      "\n"
      "benchmarks:\n"
      "  dispatch         one dispatch of a 64-thread kernel\n"
      "  independent100   100 dispatches on disjoint ranges (no barriers)\n"
      "  chain100         100 dependent dispatches on one range (barrier between each)\n"
      "\n"
      "options:\n"
      "  --iterations N   timed iterations per benchmark (default 2000)\n"
      "  --warmup N       untimed iterations first (default 200)\n"
      "  --quick          200 iterations, 20 warm-up (later options still apply)\n"
      "  --gpu N          Vulkan physical device index for both sides (default 0)\n"
      "  --only NAME      run only the named benchmark\n"
      "  --direct-first   run direct before tandem in each pair (order-bias check)\n"
      "  --validate       Khronos validation (with synchronization validation) on both\n"
      "                   devices; any warning or error makes the exit status non-zero.\n"
      "                   Timings are meaningless with it.\n"
      "  --json PATH      also write every number as JSON to PATH\n"
      "  --help           this text\n"
      "\n"
      "exit status: 0 ok, 1 failure (message on stderr), 77 no Vulkan device.\n",
      f);
}

static uint32_t parse_u32(const char *flag, const char *text, uint32_t min) {
  if (!text) die("%s needs a value (see --help)", flag);
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || !end || *end || text[0] == '-' || v < min || v > UINT32_MAX)
    die("%s: '%s' is not a whole number >= %u", flag, text, min);
  return (uint32_t)v;
}

static void parse_options(int argc, char **argv, options_t *o) {
  *o = (options_t){.iterations = 2000, .warmup = 200};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(0);
    } else if (!strcmp(a, "--iterations")) {
      o->iterations = parse_u32(a, next, 1), i++;
    } else if (!strcmp(a, "--warmup")) {
      o->warmup = parse_u32(a, next, 0), i++;
    } else if (!strcmp(a, "--gpu")) {
      o->gpu_index = parse_u32(a, next, 0), i++;
    } else if (!strcmp(a, "--quick")) {
      o->iterations = 200;
      o->warmup = 20;
    } else if (!strcmp(a, "--direct-first")) {
      o->direct_first = true;
    } else if (!strcmp(a, "--validate")) {
      o->validate = true;
    } else if (!strcmp(a, "--json")) {
      if (!next) die("--json needs a path (see --help)");
      o->json_path = next, i++;
    } else if (!strcmp(a, "--only")) {
      if (!next) die("--only needs a benchmark name (see --help)");
      o->only = next, i++;
    } else {
      fprintf(stderr, "tandem_bench: unknown option '%s'\n\n", a);
      usage(stderr);
      exit(1);
    }
  }
}

/*--------------------------------------------------------------------------
 * The direct side: raw Vulkan through volk
 *--------------------------------------------------------------------------*/

typedef struct raw_kernel {
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t push_bytes;
} raw_kernel_t;

typedef struct raw_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped;
  VkDeviceSize size;
} raw_buffer_t;

typedef struct raw {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice physical;
  VkPhysicalDeviceMemoryProperties memory;
  VkDevice device;
  struct VolkDeviceTable vk;
  uint32_t family;
  VkQueue queue;
  VkCommandPool pool;
  VkDescriptorPool descriptor_pool;
  VkSemaphore timeline;
  uint64_t value; /* last value signalled on timeline */
  raw_kernel_t write, increment;
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
} raw_t;

static atomic_uint_fast64_t raw_validation_messages;

static VKAPI_ATTR VkBool32 VKAPI_CALL raw_messenger(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  if (!(severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)))
    return VK_FALSE;
  atomic_fetch_add(&raw_validation_messages, 1);
  fprintf(stderr, "tandem_bench: direct-side validation %s: %s\n",
          (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning",
          data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

static void tandem_messenger(void *user, tandem_validation_severity_t severity,
                             const char *message) {
  fprintf(stderr, "tandem_bench: tandem-side validation %s: %s\n",
          severity == TANDEM_VALIDATION_ERROR ? "error" : "warning", message);
}

static bool raw_has_layer(const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return false;
  VkLayerProperties *props = calloc(n, sizeof *props);
  if (!props) die("out of memory");
  bool found = false;
  if (vkEnumerateInstanceLayerProperties(&n, props) >= 0)
    for (uint32_t i = 0; i < n && !found; i++) found = !strcmp(props[i].layerName, name);
  free(props);
  return found;
}

static void raw_kernel_create(raw_t *raw, const uint32_t *code, size_t code_bytes,
                              uint32_t push_bytes, raw_kernel_t *k) {
  *k = (raw_kernel_t){.push_bytes = push_bytes};
  VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = code_bytes,
                                   .pCode = code};
  VKCHECK(raw->vk.vkCreateShaderModule(raw->device, &smci, NULL, &k->module));
  VkDescriptorSetLayoutBinding binding = {.binding = 0,
                                          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .descriptorCount = 1,
                                          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dci = {.sType =
                                             VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = 1,
                                         .pBindings = &binding};
  VKCHECK(raw->vk.vkCreateDescriptorSetLayout(raw->device, &dci, NULL, &k->set_layout));
  VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = push_bytes};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .setLayoutCount = 1,
                                    .pSetLayouts = &k->set_layout,
                                    .pushConstantRangeCount = push_bytes ? 1 : 0,
                                    .pPushConstantRanges = &range};
  VKCHECK(raw->vk.vkCreatePipelineLayout(raw->device, &lci, NULL, &k->layout));
  VkComputePipelineCreateInfo pci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = k->module,
                .pName = "main"},
      .layout = k->layout};
  VKCHECK(raw->vk.vkCreateComputePipelines(raw->device, VK_NULL_HANDLE, 1, &pci, NULL,
                                           &k->pipeline));
}

static void raw_kernel_destroy(raw_t *raw, raw_kernel_t *k) {
  raw->vk.vkDestroyPipeline(raw->device, k->pipeline, NULL);
  raw->vk.vkDestroyPipelineLayout(raw->device, k->layout, NULL);
  raw->vk.vkDestroyDescriptorSetLayout(raw->device, k->set_layout, NULL);
  raw->vk.vkDestroyShaderModule(raw->device, k->module, NULL);
}

static void raw_open(raw_t *raw, uint32_t gpu_index, bool validate) {
  memset(raw, 0, sizeof *raw);
  if (volkInitialize() != VK_SUCCESS) die("direct side: the Vulkan loader could not be loaded");
  if (volkGetInstanceVersion() < VK_API_VERSION_1_3)
    die("direct side: the Vulkan loader is older than 1.3");
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "tandem_bench (direct)",
                           .apiVersion = VK_API_VERSION_1_3};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                              VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkDebugUtilsMessengerCreateInfoEXT mci = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = raw_messenger};
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .pNext = &mci,
                                      .enabledValidationFeatureCount = 1,
                                      .pEnabledValidationFeatures = enables};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app};
  if (validate) {
    if (!raw_has_layer(layers[0]))
      die("direct side: --validate needs VK_LAYER_KHRONOS_validation, which is not installed");
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = layers;
    ici.enabledExtensionCount = 2;
    ici.ppEnabledExtensionNames = extensions;
    ici.pNext = &features;
  }
  VKCHECK(vkCreateInstance(&ici, NULL, &raw->instance));
  volkLoadInstanceOnly(raw->instance);
  if (validate)
    VKCHECK(vkCreateDebugUtilsMessengerEXT(raw->instance, &mci, NULL, &raw->messenger));

  uint32_t n = 0;
  VKCHECK(vkEnumeratePhysicalDevices(raw->instance, &n, NULL));
  if (gpu_index >= n) die("direct side: GPU %u requested, the loader reports %u", gpu_index, n);
  VkPhysicalDevice *pds = calloc(n, sizeof *pds);
  if (!pds) die("out of memory");
  VKCHECK(vkEnumeratePhysicalDevices(raw->instance, &n, pds));
  raw->physical = pds[gpu_index];
  free(pds);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(raw->physical, &props);
  snprintf(raw->name, sizeof raw->name, "%s", props.deviceName);
  if (props.limits.minStorageBufferOffsetAlignment > RANGE_BYTES)
    die("direct side: minStorageBufferOffsetAlignment %llu exceeds %u",
        (unsigned long long)props.limits.minStorageBufferOffsetAlignment, RANGE_BYTES);
  vkGetPhysicalDeviceMemoryProperties(raw->physical, &raw->memory);

  /* The same family tandem uses for its compute lane: the first with COMPUTE. */
  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(raw->physical, &qn, NULL);
  VkQueueFamilyProperties *q = calloc(qn ? qn : 1, sizeof *q);
  if (!q) die("out of memory");
  vkGetPhysicalDeviceQueueFamilyProperties(raw->physical, &qn, q);
  raw->family = UINT32_MAX;
  for (uint32_t i = 0; i < qn && raw->family == UINT32_MAX; i++)
    if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) raw->family = i;
  free(q);
  if (raw->family == UINT32_MAX) die("direct side: '%s' has no compute queue family", raw->name);

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = raw->family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
  VkPhysicalDeviceVulkan13Features f13 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, .synchronization2 = VK_TRUE};
  VkPhysicalDeviceVulkan12Features f12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .pNext = &f13,
      .timelineSemaphore = VK_TRUE};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f12,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci};
  VKCHECK(vkCreateDevice(raw->physical, &dci, NULL, &raw->device));
  volkLoadDeviceTable(&raw->vk, raw->device);
  raw->vk.vkGetDeviceQueue(raw->device, raw->family, 0, &raw->queue);

  VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .queueFamilyIndex = raw->family};
  VKCHECK(raw->vk.vkCreateCommandPool(raw->device, &cpci, NULL, &raw->pool));
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4 * MAX_NODES};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = 4 * MAX_NODES,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
  VKCHECK(raw->vk.vkCreateDescriptorPool(raw->device, &dpci, NULL, &raw->descriptor_pool));
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  VKCHECK(raw->vk.vkCreateSemaphore(raw->device, &sci, NULL, &raw->timeline));

  raw_kernel_create(raw, tandem_spv_bench_write, tandem_spv_bench_write_size, 4, &raw->write);
  raw_kernel_create(raw, tandem_spv_bench_increment, tandem_spv_bench_increment_size, 0,
                    &raw->increment);
}

static void raw_close(raw_t *raw) {
  if (raw->device) {
    VKCHECK(raw->vk.vkDeviceWaitIdle(raw->device));
    raw_kernel_destroy(raw, &raw->write);
    raw_kernel_destroy(raw, &raw->increment);
    raw->vk.vkDestroySemaphore(raw->device, raw->timeline, NULL);
    raw->vk.vkDestroyDescriptorPool(raw->device, raw->descriptor_pool, NULL);
    raw->vk.vkDestroyCommandPool(raw->device, raw->pool, NULL);
    raw->vk.vkDestroyDevice(raw->device, NULL);
  }
  if (raw->messenger) vkDestroyDebugUtilsMessengerEXT(raw->instance, raw->messenger, NULL);
  if (raw->instance) vkDestroyInstance(raw->instance, NULL);
  memset(raw, 0, sizeof *raw);
}

static uint32_t raw_memory_type(const raw_t *raw, uint32_t bits, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < raw->memory.memoryTypeCount; i++)
    if ((bits & (1u << i)) && (raw->memory.memoryTypes[i].propertyFlags & want) == want) return i;
  return UINT32_MAX;
}

/* host: HOST_VISIBLE | HOST_COHERENT and mapped; otherwise DEVICE_LOCAL. */
static void raw_buffer_create(raw_t *raw, VkDeviceSize size, bool host, raw_buffer_t *b) {
  *b = (raw_buffer_t){.size = size};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = size,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VKCHECK(raw->vk.vkCreateBuffer(raw->device, &bci, NULL, &b->buffer));
  VkMemoryRequirements req;
  raw->vk.vkGetBufferMemoryRequirements(raw->device, b->buffer, &req);
  VkMemoryPropertyFlags want = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                    : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t type = raw_memory_type(raw, req.memoryTypeBits, want);
  if (type == UINT32_MAX) die("direct side: no memory type with flags 0x%x", (unsigned)want);
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = type};
  VKCHECK(raw->vk.vkAllocateMemory(raw->device, &mai, NULL, &b->memory));
  VKCHECK(raw->vk.vkBindBufferMemory(raw->device, b->buffer, b->memory, 0));
  if (host) VKCHECK(raw->vk.vkMapMemory(raw->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped));
}

static void raw_buffer_destroy(raw_t *raw, raw_buffer_t *b) {
  if (b->mapped) raw->vk.vkUnmapMemory(raw->device, b->memory);
  raw->vk.vkDestroyBuffer(raw->device, b->buffer, NULL);
  raw->vk.vkFreeMemory(raw->device, b->memory, NULL);
  memset(b, 0, sizeof *b);
}

static void raw_barrier(raw_t *raw, VkCommandBuffer cb, VkPipelineStageFlags2 src_stage,
                        VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                        VkAccessFlags2 dst_access) {
  VkMemoryBarrier2 mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                         .srcStageMask = src_stage,
                         .srcAccessMask = src_access,
                         .dstStageMask = dst_stage,
                         .dstAccessMask = dst_access};
  VkDependencyInfo dep = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                          .memoryBarrierCount = 1,
                          .pMemoryBarriers = &mb};
  raw->vk.vkCmdPipelineBarrier2(cb, &dep);
}

static VkCommandBuffer raw_begin(raw_t *raw) {
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = raw->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkCommandBuffer cb;
  VKCHECK(raw->vk.vkAllocateCommandBuffers(raw->device, &ai, &cb));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKCHECK(raw->vk.vkBeginCommandBuffer(cb, &bi));
  return cb;
}

/* Submits |count| command buffers in one vkQueueSubmit2 that signals the next
 * timeline value, and waits for it on the host. */
static void raw_run(raw_t *raw, const VkCommandBuffer *cbs, uint32_t count) {
  VkCommandBufferSubmitInfo infos[4];
  if (count > 4) die("internal: raw_run of %u command buffers", count);
  for (uint32_t i = 0; i < count; i++)
    infos[i] = (VkCommandBufferSubmitInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                           .commandBuffer = cbs[i]};
  VkSemaphoreSubmitInfo signal = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                  .semaphore = raw->timeline,
                                  .value = ++raw->value,
                                  .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkSubmitInfo2 si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                      .commandBufferInfoCount = count,
                      .pCommandBufferInfos = infos,
                      .signalSemaphoreInfoCount = 1,
                      .pSignalSemaphoreInfos = &signal};
  VKCHECK(raw->vk.vkQueueSubmit2(raw->queue, 1, &si, VK_NULL_HANDLE));
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &raw->timeline,
                            .pValues = &raw->value};
  VKCHECK(raw->vk.vkWaitSemaphores(raw->device, &wi, UINT64_MAX));
}

/*--------------------------------------------------------------------------
 * Statistics
 *--------------------------------------------------------------------------*/

typedef struct summary {
  double median, p10, p90, min, mean;
} summary_t;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts |v| in place. Quantiles by linear interpolation between ranks. */
static double quantile_sorted(const double *v, uint32_t n, double q) {
  double pos = q * (double)(n - 1);
  uint32_t lo = (uint32_t)pos;
  if (lo + 1 >= n) return v[n - 1];
  double frac = pos - (double)lo;
  return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

static summary_t summarize(double *v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  double sum = 0;
  for (uint32_t i = 0; i < n; i++) sum += v[i];
  return (summary_t){.median = quantile_sorted(v, n, 0.5),
                     .p10 = quantile_sorted(v, n, 0.1),
                     .p90 = quantile_sorted(v, n, 0.9),
                     .min = v[0],
                     .mean = sum / (double)n};
}

/*--------------------------------------------------------------------------
 * Benchmarks
 *--------------------------------------------------------------------------*/

typedef struct bench_spec {
  const char *name;
  uint32_t nodes;
  bool chain; /* every node read-modify-writes range 0; else node i writes range i */
} bench_spec_t;

static const bench_spec_t specs[] = {
    {"dispatch", 1, false},
    {"independent100", 100, false},
    {"chain100", 100, true},
};
#define BENCH_COUNT (sizeof specs / sizeof specs[0])

typedef struct bench_result {
  const bench_spec_t *spec;
  bool ran;
  summary_t tandem, direct, pair_ratio;
  double ratio; /* median tandem / median direct */
} bench_result_t;

typedef struct tandem_side {
  tandem_runtime_t *rt;
  tandem_kernel_t *write, *increment;
} tandem_side_t;

static uint64_t bench_bytes(const bench_spec_t *spec) {
  return spec->chain ? RANGE_BYTES : (uint64_t)spec->nodes * RANGE_BYTES;
}

/* Checks |words| of the benchmark's buffer; |side| names it in messages. */
static void verify(const bench_spec_t *spec, const char *side, const uint32_t *words) {
  uint32_t ranges = spec->chain ? 1 : spec->nodes;
  for (uint32_t r = 0; r < ranges; r++) {
    for (uint32_t j = 0; j < RANGE_WORDS; j++) {
      uint32_t want = spec->chain ? spec->nodes : WRITE_VALUE(r) + j;
      uint32_t got = words[r * RANGE_WORDS + j];
      if (got != want)
        die("%s: %s result is wrong: element %u of range %u is %u, expected %u", spec->name,
            side, j, r, got, want);
    }
  }
}

/* Copies |src| to a fresh HOST_VISIBLE buffer through a prepared graph and
 * verifies it. |before| (may be NULL) is submitted first, then |exec|. */
static void tandem_verify(tandem_side_t *t, const bench_spec_t *spec, tandem_buffer_t *src,
                          tandem_exec_t *before, tandem_exec_t *exec) {
  tandem_buffer_t *host;
  TCHECK(tandem_buffer_create(t->rt, tandem_buffer_size(src), TANDEM_PLACEMENT_HOST_VISIBLE,
                              &host));
  tandem_graph_t *g;
  TCHECK(tandem_graph_create(t->rt, &g));
  TCHECK(tandem_graph_add_copy(g, tandem_buffer_whole(src), tandem_buffer_whole(host),
                               TANDEM_LANE_AUTO));
  tandem_exec_t *readback;
  TCHECK(tandem_graph_prepare(g, &readback));
  tandem_graph_release(g);
  tandem_exec_t *order[3] = {before, exec, readback};
  for (int i = 0; i < 3; i++) {
    if (!order[i]) continue;
    tandem_completion_t *c;
    TCHECK(tandem_exec_submit(order[i], &c));
    TCHECK(tandem_completion_wait(c));
    tandem_completion_release(c);
  }
  tandem_map_t map;
  TCHECK(tandem_map_read(tandem_buffer_whole(host), &map));
  verify(spec, "tandem", map.data);
  tandem_unmap(&map);
  tandem_exec_release(readback);
  tandem_buffer_release(host);
}

static void run_bench(const options_t *o, tandem_side_t *t, raw_t *raw, const bench_spec_t *spec,
                      bench_result_t *res, uint32_t index) {
  const uint64_t bytes = bench_bytes(spec);

  /* tandem: the graph. */
  tandem_buffer_t *tbuf;
  TCHECK(tandem_buffer_create(t->rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &tbuf));
  tandem_graph_t *graph;
  TCHECK(tandem_graph_create(t->rt, &graph));
  for (uint32_t i = 0; i < spec->nodes; i++) {
    tandem_view_t view;
    TCHECK(tandem_buffer_view(tbuf, spec->chain ? 0 : (uint64_t)i * RANGE_BYTES, RANGE_BYTES,
                              &view));
    if (spec->chain) {
      TCHECK(tandem_graph_add_dispatch(graph, t->increment, &view, 1, NULL, 0));
    } else {
      uint32_t value = WRITE_VALUE(i);
      TCHECK(tandem_graph_add_dispatch(graph, t->write, &view, 1, &value, sizeof value));
    }
  }
  tandem_exec_t *exec;
  TCHECK(tandem_graph_prepare(graph, &exec));
  tandem_graph_release(graph);

  /* direct: the same dispatches in one command buffer, recorded once. The
   * pipeline is bound once; a descriptor set per distinct range. */
  raw_buffer_t rbuf;
  raw_buffer_create(raw, bytes, false, &rbuf);
  const raw_kernel_t *k = spec->chain ? &raw->increment : &raw->write;
  uint32_t set_count = spec->chain ? 1 : spec->nodes;
  VkDescriptorSet sets[MAX_NODES];
  for (uint32_t i = 0; i < set_count; i++) {
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = raw->descriptor_pool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &k->set_layout};
    VKCHECK(raw->vk.vkAllocateDescriptorSets(raw->device, &ai, &sets[i]));
    VkDescriptorBufferInfo info = {rbuf.buffer, (VkDeviceSize)i * RANGE_BYTES, RANGE_BYTES};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                              .dstSet = sets[i],
                              .dstBinding = 0,
                              .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &info};
    raw->vk.vkUpdateDescriptorSets(raw->device, 1, &w, 0, NULL);
  }
  VkCommandBuffer cb = raw_begin(raw);
  raw->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  for (uint32_t i = 0; i < spec->nodes; i++) {
    if (spec->chain && i > 0)
      raw_barrier(raw, cb, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                  VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                  VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    if (i < set_count)
      raw->vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1,
                                      &sets[i], 0, NULL);
    if (k->push_bytes) {
      uint32_t value = WRITE_VALUE(i);
      raw->vk.vkCmdPushConstants(cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof value,
                                 &value);
    }
    raw->vk.vkCmdDispatch(cb, 1, 1, 1);
  }
  VKCHECK(raw->vk.vkEndCommandBuffer(cb));

  /* The timed submission's infos, built once like tandem's. */
  VkCommandBufferSubmitInfo cb_info = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                       .commandBuffer = cb};
  VkSemaphoreSubmitInfo signal = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                  .semaphore = raw->timeline,
                                  .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkSubmitInfo2 submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                          .commandBufferInfoCount = 1,
                          .pCommandBufferInfos = &cb_info,
                          .signalSemaphoreInfoCount = 1,
                          .pSignalSemaphoreInfos = &signal};
  VkSemaphoreWaitInfo wait = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                              .semaphoreCount = 1,
                              .pSemaphores = &raw->timeline,
                              .pValues = &signal.value};

  double *tt = malloc(o->iterations * sizeof *tt);
  double *dt = malloc(o->iterations * sizeof *dt);
  double *pr = malloc(o->iterations * sizeof *pr);
  if (!tt || !dt || !pr) die("out of memory for %u samples", o->iterations);

  fprintf(stderr, "[%u/%zu] %-15s %u warm-up + %u timed iterations ...", index + 1,
          (size_t)BENCH_COUNT, spec->name, o->warmup, o->iterations);
  fflush(stderr);
  double started = now_us();
  uint32_t total = o->warmup + o->iterations;
  for (uint32_t it = 0; it < total; it++) {
    double t0 = 0, t1 = 0, d0 = 0, d1 = 0;
    for (int half = 0; half < 2; half++) {
      if ((half == 0) != o->direct_first) {
        /* tandem: submit + wait + release */
        tandem_completion_t *c;
        t0 = now_us();
        tandem_status_t s = tandem_exec_submit(exec, &c);
        if (s == TANDEM_OK) {
          s = tandem_completion_wait(c);
          tandem_completion_release(c);
        }
        t1 = now_us();
        if (s != TANDEM_OK)
          die("%s: tandem iteration %u failed: %s: %s", spec->name, it, tandem_status_name(s),
              tandem_error_message());
      } else {
        /* direct: vkQueueSubmit2 signalling the next timeline value + wait */
        signal.value = ++raw->value;
        d0 = now_us();
        VkResult r = raw->vk.vkQueueSubmit2(raw->queue, 1, &submit, VK_NULL_HANDLE);
        if (r == VK_SUCCESS) r = raw->vk.vkWaitSemaphores(raw->device, &wait, UINT64_MAX);
        d1 = now_us();
        if (r != VK_SUCCESS)
          die("%s: direct iteration %u failed: VkResult %d", spec->name, it, (int)r);
      }
    }
    if (it >= o->warmup) {
      uint32_t at = it - o->warmup;
      tt[at] = t1 - t0;
      dt[at] = d1 - d0;
      pr[at] = tt[at] / dt[at];
    }
  }
  fprintf(stderr, " %.1f s\n", (now_us() - started) / 1e6);

  res->spec = spec;
  res->ran = true;
  res->tandem = summarize(tt, o->iterations);
  res->direct = summarize(dt, o->iterations);
  res->pair_ratio = summarize(pr, o->iterations);
  res->ratio = res->tandem.median / res->direct.median;
  free(tt);
  free(dt);
  free(pr);

  /* Verification. chain: from a fresh fill to 0, one run must give exactly
   * `nodes` everywhere; otherwise the timed runs' own writes are checked. */
  tandem_exec_t *fill = NULL;
  if (spec->chain) {
    tandem_graph_t *fg;
    TCHECK(tandem_graph_create(t->rt, &fg));
    TCHECK(tandem_graph_add_fill(fg, tandem_buffer_whole(tbuf), 0, TANDEM_LANE_AUTO));
    TCHECK(tandem_graph_prepare(fg, &fill));
    tandem_graph_release(fg);
  }
  tandem_verify(t, spec, tbuf, fill, spec->chain ? exec : NULL);
  tandem_exec_release(fill);

  raw_buffer_t host;
  raw_buffer_create(raw, bytes, true, &host);
  VkCommandBuffer fill_cb = VK_NULL_HANDLE;
  if (spec->chain) {
    fill_cb = raw_begin(raw);
    raw->vk.vkCmdFillBuffer(fill_cb, rbuf.buffer, 0, bytes, 0);
    raw_barrier(raw, fill_cb, VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    VKCHECK(raw->vk.vkEndCommandBuffer(fill_cb));
  }
  VkCommandBuffer copy_cb = raw_begin(raw);
  raw_barrier(raw, copy_cb, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
              VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
              VK_ACCESS_2_TRANSFER_READ_BIT);
  VkBufferCopy region = {.size = bytes};
  raw->vk.vkCmdCopyBuffer(copy_cb, rbuf.buffer, host.buffer, 1, &region);
  raw_barrier(raw, copy_cb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
  VKCHECK(raw->vk.vkEndCommandBuffer(copy_cb));
  if (spec->chain) {
    VkCommandBuffer seq[3] = {fill_cb, cb, copy_cb};
    raw_run(raw, seq, 3);
  } else {
    raw_run(raw, &copy_cb, 1);
  }
  verify(spec, "direct", host.mapped);

  VkCommandBuffer cbs[3] = {cb, copy_cb, fill_cb};
  raw->vk.vkFreeCommandBuffers(raw->device, raw->pool, fill_cb ? 3 : 2, cbs);
  VKCHECK(raw->vk.vkResetDescriptorPool(raw->device, raw->descriptor_pool, 0));
  raw_buffer_destroy(raw, &host);
  raw_buffer_destroy(raw, &rbuf);
  tandem_exec_release(exec);
  tandem_buffer_release(tbuf);
}

/*--------------------------------------------------------------------------
 * Reporting
 *--------------------------------------------------------------------------*/

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void json_summary(FILE *f, const char *key, const summary_t *s, const char *tail) {
  fprintf(f,
          "      \"%s\": {\"median\": %.4f, \"p10\": %.4f, \"p90\": %.4f, \"min\": %.4f, "
          "\"mean\": %.4f}%s\n",
          key, s->median, s->p10, s->p90, s->min, s->mean, tail);
}

static void write_json(const char *path, const options_t *o, const tandem_device_info_t *info,
                       const bench_result_t *results, uint64_t tandem_msgs, uint64_t raw_msgs) {
  FILE *f = fopen(path, "w");
  if (!f) die("--json %s: %s", path, strerror(errno));
  char date[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(f, "{\n  \"tool\": \"tandem_bench\",\n  \"date\": \"%s\",\n", date);
  fprintf(f, "  \"tandem_version\": \"%d.%d.%d\",\n", TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR,
          TANDEM_VERSION_PATCH);
  fprintf(f, "  \"device\": {\"index\": %u, \"name\": ", info->index);
  json_string(f, info->name);
  fputs(", \"driver\": ", f);
  json_string(f, info->driver_name);
  fputs(", \"driver_info\": ", f);
  json_string(f, info->driver_info);
  fprintf(f, ", \"vulkan\": \"%u.%u.%u\", \"is_cpu\": %s},\n",
          TANDEM_VERSION_MAJOR_OF(info->api_version), TANDEM_VERSION_MINOR_OF(info->api_version),
          TANDEM_VERSION_PATCH_OF(info->api_version), info->is_cpu ? "true" : "false");
  fprintf(f, "  \"iterations\": %u,\n  \"warmup\": %u,\n  \"validation\": %s,\n", o->iterations,
          o->warmup, o->validate ? "true" : "false");
  fprintf(f, "  \"order\": \"%s\",\n", o->direct_first ? "direct,tandem" : "tandem,direct");
  fprintf(f,
          "  \"validation_messages\": {\"tandem\": %llu, \"direct\": %llu},\n"
          "  \"units\": \"microseconds per submit+wait\",\n  \"benchmarks\": [\n",
          (unsigned long long)tandem_msgs, (unsigned long long)raw_msgs);
  bool first = true;
  for (size_t i = 0; i < BENCH_COUNT; i++) {
    const bench_result_t *r = &results[i];
    if (!r->ran) continue;
    fprintf(f, "%s    {\n      \"name\": \"%s\",\n      \"nodes\": %u,\n", first ? "" : ",\n",
            r->spec->name, r->spec->nodes);
    first = false;
    json_summary(f, "tandem_us", &r->tandem, ",");
    json_summary(f, "direct_us", &r->direct, ",");
    json_summary(f, "pair_ratio", &r->pair_ratio, ",");
    fprintf(f,
            "      \"ratio_of_medians\": %.5f,\n      \"tandem_us_per_node\": %.5f,\n"
            "      \"direct_us_per_node\": %.5f,\n      \"verified\": true\n    }",
            r->ratio, r->tandem.median / r->spec->nodes, r->direct.median / r->spec->nodes);
  }
  fputs("\n  ]\n}\n", f);
  if (fclose(f) != 0) die("--json %s: %s", path, strerror(errno));
}

static void print_table(const options_t *o, const tandem_device_info_t *info,
                        const bench_result_t *results) {
  printf("\ndevice: %s (driver %s, %s), GPU %u%s\n", info->name, info->driver_name,
         info->driver_info, info->index, info->is_cpu ? ", software" : "");
  printf("%u timed iterations after %u warm-up, alternated %s%s\n\n", o->iterations,
         o->warmup, o->direct_first ? "direct/tandem" : "tandem/direct", o->validate ? ", VALIDATION ON (timings not meaningful)" : "");
  printf("%-15s %12s %12s %8s %10s %12s %12s\n", "benchmark", "tandem us", "direct us", "ratio",
         "pair ratio", "tandem us/n", "direct us/n");
  for (size_t i = 0; i < BENCH_COUNT; i++) {
    const bench_result_t *r = &results[i];
    if (!r->ran) continue;
    printf("%-15s %12.2f %12.2f %8.3f %10.3f %12.3f %12.3f\n", r->spec->name, r->tandem.median,
           r->direct.median, r->ratio, r->pair_ratio.median, r->tandem.median / r->spec->nodes,
           r->direct.median / r->spec->nodes);
  }
  printf("\nus: median per submit+wait; ratio: median tandem / median direct; pair ratio:\n"
         "median of per-iteration tandem/direct; us/n: median / nodes. All results verified.\n");
}

/*--------------------------------------------------------------------------*/

int main(int argc, char **argv) {
  options_t o;
  parse_options(argc, argv, &o);
  if (o.only) {
    bool known = false;
    for (size_t i = 0; i < BENCH_COUNT; i++) known |= !strcmp(o.only, specs[i].name);
    if (!known) die("--only %s: no such benchmark (see --help)", o.only);
  }

  tandem_side_t t = {0};
  tandem_runtime_options_t ro;
  tandem_runtime_options_init(&ro);
  ro.gpu_index = o.gpu_index;
  ro.validation = o.validate;
  ro.validation_callback = tandem_messenger;
  TCHECK(tandem_runtime_create(&ro, &t.rt));
  tandem_status_t s = tandem_runtime_open_gpu(t.rt);
  if (s == TANDEM_ERROR_NO_DEVICE) {
    fprintf(stderr, "tandem_bench: skipped, no usable Vulkan device: %s\n",
            tandem_error_message());
    tandem_runtime_destroy(t.rt);
    return BENCH_EXIT_SKIP;
  }
  if (s != TANDEM_OK)
    die("tandem_runtime_open_gpu: %s: %s", tandem_status_name(s), tandem_error_message());
  tandem_device_info_t info;
  TCHECK(tandem_runtime_gpu_info(t.rt, o.gpu_index, &info));

  raw_t raw;
  raw_open(&raw, o.gpu_index, o.validate);
  if (strcmp(raw.name, info.name) != 0)
    die("GPU %u is '%s' for tandem but '%s' for the direct side", o.gpu_index, info.name,
        raw.name);

  tandem_binding_contract_t write_binding = {
      .bytes = RANGE_BYTES, .alignment = RANGE_BYTES, .access = TANDEM_ACCESS_WRITE};
  tandem_kernel_desc_t wd = {.name = "bench_write",
                             .spirv = tandem_spv_bench_write,
                             .spirv_size = tandem_spv_bench_write_size,
                             .workgroups = {1, 1, 1},
                             .bindings = &write_binding,
                             .binding_count = 1,
                             .push_constant_bytes = 4};
  TCHECK(tandem_kernel_create(t.rt, &wd, &t.write));
  tandem_binding_contract_t incr_binding = {
      .bytes = RANGE_BYTES, .alignment = RANGE_BYTES, .access = TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t id = {.name = "bench_increment",
                             .spirv = tandem_spv_bench_increment,
                             .spirv_size = tandem_spv_bench_increment_size,
                             .workgroups = {1, 1, 1},
                             .bindings = &incr_binding,
                             .binding_count = 1};
  TCHECK(tandem_kernel_create(t.rt, &id, &t.increment));

  fprintf(stderr, "tandem_bench: %s (%s %s), GPU %u, validation %s\n", info.name,
          info.driver_name, info.driver_info, o.gpu_index, o.validate ? "on" : "off");
  bench_result_t results[BENCH_COUNT];
  memset(results, 0, sizeof results);
  for (uint32_t i = 0; i < BENCH_COUNT; i++)
    if (!o.only || !strcmp(o.only, specs[i].name)) run_bench(&o, &t, &raw, &specs[i], &results[i], i);

  tandem_kernel_release(t.write);
  tandem_kernel_release(t.increment);
  raw_close(&raw);
  uint64_t tandem_msgs = tandem_runtime_validation_messages(t.rt);
  tandem_runtime_destroy(t.rt);
  uint64_t raw_msgs = atomic_load(&raw_validation_messages);

  print_table(&o, &info, results);
  if (o.json_path) write_json(o.json_path, &o, &info, results, tandem_msgs, raw_msgs);
  if (o.validate) {
    printf("validation messages: tandem %llu, direct %llu\n", (unsigned long long)tandem_msgs,
           (unsigned long long)raw_msgs);
    if (tandem_msgs || raw_msgs)
      die("validation reported %llu tandem-side and %llu direct-side warnings or errors",
          (unsigned long long)tandem_msgs, (unsigned long long)raw_msgs);
  }
  return 0;
}
