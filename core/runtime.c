/* SPDX-License-Identifier: MIT */
/*
 * runtime.c — the runtime: options, lazy GPU open, lifetime, statistics.
 *
 * The runtime is reference-counted: the user's handle is one reference and
 * every buffer, kernel, graph and executable made from it holds another, so
 * tandem_runtime_destroy never pulls a device out from under live objects.
 * Each GPU is opened at most once, under open_mutex, and never replaced, by
 * the backend the registry (core/registry.h) gave for it at creation (the
 * option gpus, or gpu_backend for a runtime of one GPU); the NPU likewise by
 * the backend of the option npu_backend. When a second GPU opens, each open pair of
 * GPUs gets proxy timelines of the other's lanes (relay.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/lane.h"
#include "core/npu_lane.h"
#include "core/registry.h"
#include "core/relay.h"
#include "core/runtime.h"
#include "core/runtime_int.h"
#include "core/struct_size.h"
#include "core/test_hooks.h"

/* The validation callback TANDEM_VALIDATION=1 installs when the program set
 * none: the one place the library prints. */
static void tandem__validation_to_stderr(void *user, tandem_validation_severity_t severity,
                                         const char *message) {
  (void)user;
  fprintf(stderr, "tandem: validation %s: %s\n",
          severity == TANDEM_VALIDATION_ERROR ? "error" : "warning", message);
}

static tandem_status_t tandem__options_check(const tandem_runtime_options_t *o) {
  if (o->max_submissions < 1 || o->max_submissions > 65536)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "runtime option max_submissions is %u, must be 1..65536",
                       o->max_submissions);
  if (o->npu_backend && o->npu_backend[0] && (o->npu_timeout_ms < 1 || o->npu_timeout_ms > 3600000))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "runtime option npu_timeout_ms is %u, must be 1..3600000",
                       o->npu_timeout_ms);
  if (o->sharing < TANDEM_SHARING_AUTO || o->sharing > TANDEM_SHARING_STAGED)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "runtime option sharing is %d, not a tandem_sharing_t", (int)o->sharing);
  if (o->graph_slots < 1 || o->graph_slots > 1024)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "runtime option graph_slots is %u, must be 1..1024", o->graph_slots);
  if (o->wait_spin_us > 100000)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "runtime option wait_spin_us is %u, must be 0..100000", o->wait_spin_us);
  if (o->gpu_count > TANDEM_MAX_GPUS)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "runtime option gpu_count is %u; a runtime has at most %d GPUs "
                       "(TANDEM_MAX_GPUS)",
                       o->gpu_count, TANDEM_MAX_GPUS);
  if (o->gpu_count && (o->gpu_backend || o->gpu_index))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "runtime options gpu_backend/gpu_index and gpus both choose GPU 0; with "
                       "gpu_count set, leave gpu_backend NULL and gpu_index 0 and name GPU 0 as "
                       "gpus[0]");
  if (o->gpu_count > 1 && o->vulkan_device)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "runtime option vulkan_device runs a runtime of one GPU, the "
                       "application's; gpu_count is %u",
                       o->gpu_count);
  return TANDEM_OK;
}

tandem_status_t tandem_runtime_create(const tandem_runtime_options_t *options,
                                      tandem_runtime_t **out_runtime) {
  if (!out_runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_runtime is NULL");
  *out_runtime = NULL;
  tandem_runtime_options_t opts;
  tandem_runtime_options_init(&opts);
  if (options)
    TANDEM_RETURN_IF_ERROR(tandem__struct_in(
        options, &opts, sizeof opts, TANDEM__OLDEST_RUNTIME_OPTIONS, "tandem_runtime_options_t"));
  /* TANDEM_NPU names the NPU backend ("none": no NPU); unset or empty leaves
   * the option as the program set it. */
  const char *npu_env = getenv("TANDEM_NPU");
  bool npu_from_env = npu_env && npu_env[0];
  if (npu_from_env) opts.npu_backend = strcmp(npu_env, "none") == 0 ? NULL : npu_env;
  const char *spin_env = getenv("TANDEM_WAIT_SPIN_US");
  if (spin_env && *spin_env) {
    char *end = NULL;
    unsigned long v = strtoul(spin_env, &end, 10);
    if (*end != '\0' || v > 100000)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "TANDEM_WAIT_SPIN_US is '%s'; it must be a number of microseconds, "
                         "0..100000",
                         spin_env);
    opts.wait_spin_us = (uint32_t)v;
  }
  /* The application's device description, read into this library's layout;
   * it lives until the end of this call, as the caller's does. */
  tandem_vulkan_device_t vulkan_device;
  if (opts.vulkan_device) {
    tandem_vulkan_device_init(&vulkan_device);
    TANDEM_RETURN_IF_ERROR(tandem__struct_in(opts.vulkan_device, &vulkan_device,
                                             sizeof vulkan_device, TANDEM__OLDEST_VULKAN_DEVICE,
                                             "tandem_vulkan_device_t"));
    opts.vulkan_device = &vulkan_device;
  }
  TANDEM_RETURN_IF_ERROR(tandem__options_check(&opts));
  /* The GPUs: the option gpus, or one from gpu_backend and gpu_index. */
  tandem_gpu_choice_t choices[TANDEM_MAX_GPUS];
  uint32_t gpu_count = opts.gpu_count ? opts.gpu_count : 1;
  if (opts.gpu_count) {
    memcpy(choices, opts.gpus, sizeof choices);
  } else {
    choices[0] = (tandem_gpu_choice_t){opts.gpu_backend, opts.gpu_index};
  }
  const tandem__gpu_backend_t *backends[TANDEM_MAX_GPUS];
  for (uint32_t g = 0; g < gpu_count; g++) {
    tandem_status_t found = tandem__gpu_backend_find(choices[g].backend, &backends[g]);
    if (found != TANDEM_OK) return tandem__annotate(found, "GPU %u (runtime option gpus)", g);
    for (uint32_t h = 0; h < g; h++)
      if (backends[h] == backends[g] && choices[h].index == choices[g].index)
        return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                           "runtime option gpus: GPUs %u and %u are both device %u of backend "
                           "'%s'; a device is one GPU of a runtime",
                           h, g, choices[g].index, backends[g]->name);
  }
  const tandem__gpu_backend_t *gpu_backend = backends[0];
  if (opts.vulkan_device && !gpu_backend->opens_vulkan_device)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "runtime option vulkan_device: GPU backend '%s' cannot run on an "
                       "application's VkDevice; use gpu_backend \"vulkan\" (or NULL)",
                       gpu_backend->name);
  /* The caller's strings need not outlive the call: keep the entries' own. */
  opts.gpu_backend = gpu_backend->name;
  opts.gpu_index = choices[0].index;
  for (uint32_t g = 0; g < gpu_count; g++) opts.gpus[g].backend = backends[g]->name;
  const tandem__npu_backend_t *npu_backend = NULL;
  if (opts.npu_backend && opts.npu_backend[0]) {
    tandem_status_t found = tandem__npu_backend_find(opts.npu_backend, &npu_backend);
    if (found != TANDEM_OK)
      return tandem__annotate(found, npu_from_env ? "TANDEM_NPU" : "runtime option npu_backend");
  }
  /* As for the GPU: keep the entry's own string, never the caller's. */
  opts.npu_backend = npu_backend ? npu_backend->name : NULL;
  /* The extensions chained from next are the NPU backend's (GPU backends
   * read none): it reads them now into a state of its own, kept for its open
   * (npu_options_free at the end); the caller's chain is not kept. */
  void *npu_options = NULL;
  if (npu_backend) {
    TANDEM_RETURN_IF_ERROR(npu_backend->options_in(&opts, &npu_options));
  } else if (opts.next) {
    const tandem_chain_t *c = opts.next;
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "runtime option next: an extension of type 0x%08x is chained, but the "
                       "runtime has no NPU backend to read it (set npu_backend, or next to NULL)",
                       c->type);
  }
  opts.next = NULL;
  const char *env = getenv("TANDEM_VALIDATION");
  if (env && strcmp(env, "1") == 0 && !opts.vulkan_device) {
    /* The variable turns validation on in a program that did not ask for it
     * and so installed no callback: its messages would be counted and seen
     * by nobody. Print them. */
    if (!opts.validation && !opts.validation_callback)
      opts.validation_callback = tandem__validation_to_stderr;
    opts.validation = true;
  }
  env = getenv("TANDEM_GPU_TIMESTAMPS");
  if (env && strcmp(env, "1") == 0) opts.gpu_timestamps = true;

  tandem_runtime_t *rt = calloc(1, sizeof *rt);
  if (!rt) {
    if (npu_backend) npu_backend->options_free(npu_options);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a runtime");
  }
  atomic_init(&rt->refs, 1);
  rt->options = opts;
  rt->gpu_count = gpu_count;
  for (uint32_t g = 0; g < gpu_count; g++) {
    rt->gpus[g].backend = backends[g];
    rt->gpus[g].index = choices[g].index;
  }
  for (uint32_t g = 0; g < TANDEM_MAX_GPUS; g++) atomic_init(&rt->gpus[g].gpu, NULL);
  rt->npu_backend = npu_backend;
  rt->npu_options = npu_options;
  tandem_budget_retain(opts.budget);
  pthread_mutex_init(&rt->open_mutex, NULL);
  pthread_mutex_init(&rt->mutex, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&rt->host_lane_signalled, &attr);
  pthread_condattr_destroy(&attr);
  tandem__lanes_init(rt);
  tandem__relay_init(rt);
  atomic_init(&rt->npu, NULL);
  if (opts.vulkan_device) {
    /* The application's device: opened now, while the description it points
     * to is valid (the pointer is not kept), so a device created without
     * what tandem needs is refused here. */
    tandem__gpu_t *gpu;
    tandem_status_t s = tandem__runtime_gpu(rt, &gpu);
    rt->options.vulkan_device = NULL;
    if (s != TANDEM_OK) {
      tandem__runtime_release(rt);
      return s;
    }
    rt->options.gpu_index = gpu->info.index;
    rt->gpus[0].index = gpu->info.index;
  }
  *out_runtime = rt;
  return TANDEM_OK;
}

void tandem__runtime_retain(tandem_runtime_t *runtime) { atomic_fetch_add(&runtime->refs, 1); }

void tandem__runtime_release(tandem_runtime_t *runtime) {
  if (atomic_fetch_sub(&runtime->refs, 1) != 1) return;
  tandem__npu_t *npu = atomic_load(&runtime->npu);
  /* Every completion holds its exec, which holds the runtime: nothing is in
   * flight, so the NPU lane and the relay are idle and can stop. */
  tandem__npu_lane_stop(runtime);
  tandem__relay_stop(runtime);
  if (npu) npu->vtable->destroy(npu);
  for (uint32_t g = 0; g < runtime->gpu_count; g++) {
    tandem__gpu_t *gpu = tandem__gpu_at(runtime, g);
    if (gpu) gpu->vtable->device.destroy(gpu);
  }
  if (runtime->trace) {
    free(runtime->trace->events);
    free(runtime->trace);
  }
  if (runtime->npu_backend) runtime->npu_backend->options_free(runtime->npu_options);
  tandem_budget_release(runtime->options.budget);
  pthread_mutex_destroy(&runtime->open_mutex);
  pthread_mutex_destroy(&runtime->mutex);
  pthread_cond_destroy(&runtime->host_lane_signalled);
  free(runtime);
}

void tandem_runtime_destroy(tandem_runtime_t *runtime) {
  if (runtime) tandem__runtime_release(runtime);
}

uint64_t tandem_runtime_validation_messages(const tandem_runtime_t *runtime) {
  return runtime ? atomic_load(&((tandem_runtime_t *)runtime)->validation_messages) : 0;
}

tandem_status_t tandem_runtime_trim(tandem_runtime_t *runtime) {
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  for (uint32_t g = 0; g < runtime->gpu_count; g++) {
    tandem__gpu_t *gpu = tandem__gpu_at(runtime, g);
    if (gpu && gpu->vtable->device.trim) gpu->vtable->device.trim(gpu);
  }
  return TANDEM_OK;
}

/* Opens GPU |g| of |runtime| (its entry's backend, with the runtime's options
 * but that GPU's enumeration index) and binds the proxies between it and
 * every GPU open before it. Under open_mutex. */
static tandem_status_t tandem__gpu_open_locked(tandem_runtime_t *runtime, uint32_t g,
                                               tandem__gpu_t **out_gpu) {
  tandem_runtime_options_t opts = runtime->options;
  opts.gpu_backend = runtime->gpus[g].backend->name;
  opts.gpu_index = runtime->gpus[g].index;
  if (g > 0) opts.vulkan_device = NULL;
  tandem__gpu_t *gpu = NULL;
  TANDEM_RETURN_IF_ERROR(
      runtime->gpus[g].backend->open(&opts, &runtime->validation_messages, &gpu));
  tandem_status_t s = tandem__relay_bind_proxies(runtime, g, gpu);
  if (s != TANDEM_OK) {
    gpu->vtable->device.destroy(gpu);
    return tandem__annotate(s, "GPU %u: binding the timelines that carry the other GPUs' values",
                            g);
  }
  *out_gpu = gpu;
  return TANDEM_OK;
}

tandem_status_t tandem__runtime_gpu_check(const tandem_runtime_t *runtime, uint32_t g) {
  if (g < runtime->gpu_count) return TANDEM_OK;
  return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                     "GPU %u: the runtime has %u GPU%s (runtime option gpus)", g,
                     runtime->gpu_count, runtime->gpu_count == 1 ? "" : "s");
}

tandem_status_t tandem__runtime_gpu_at(tandem_runtime_t *runtime, uint32_t g,
                                       tandem__gpu_t **out_gpu) {
  *out_gpu = NULL;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_check(runtime, g));
  tandem__gpu_t *gpu = tandem__gpu_at(runtime, g);
  if (!gpu) {
    pthread_mutex_lock(&runtime->open_mutex);
    gpu = tandem__gpu_at(runtime, g);
    tandem_status_t s = TANDEM_OK;
    if (!gpu) {
      s = tandem__gpu_open_locked(runtime, g, &gpu);
      if (s == TANDEM_OK) atomic_store_explicit(&runtime->gpus[g].gpu, gpu, memory_order_release);
    }
    pthread_mutex_unlock(&runtime->open_mutex);
    if (s != TANDEM_OK) return s;
  }
  *out_gpu = gpu;
  return TANDEM_OK;
}

tandem_status_t tandem__runtime_gpu(tandem_runtime_t *runtime, tandem__gpu_t **out_gpu) {
  return tandem__runtime_gpu_at(runtime, 0, out_gpu);
}

tandem_status_t tandem_runtime_open_gpu(tandem_runtime_t *runtime) {
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  tandem__gpu_t *gpu;
  return tandem__runtime_gpu(runtime, &gpu);
}

uint32_t tandem_runtime_gpus(const tandem_runtime_t *runtime) {
  return runtime ? runtime->gpu_count : 0;
}

tandem_status_t tandem_runtime_open_gpu_at(tandem_runtime_t *runtime, uint32_t gpu) {
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  tandem__gpu_t *opened;
  return tandem__runtime_gpu_at(runtime, gpu, &opened);
}

const char *tandem_runtime_gpu_backend(const tandem_runtime_t *runtime, uint32_t gpu) {
  if (!runtime || gpu >= runtime->gpu_count) return NULL;
  return runtime->gpus[gpu].backend->name;
}

static tandem_status_t tandem__describe(tandem_runtime_t *runtime, uint32_t g, uint32_t index,
                                        tandem_device_info_t *out_info);

tandem_status_t tandem_runtime_gpu_describe(tandem_runtime_t *runtime, uint32_t gpu,
                                            tandem_device_info_t *out_info) {
  if (!runtime || !out_info)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or out_info is NULL");
  TANDEM_RETURN_IF_ERROR(
      tandem__struct_out_check(out_info, TANDEM__OLDEST_DEVICE_INFO, "tandem_device_info_t"));
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_check(runtime, gpu));
  return tandem__describe(runtime, gpu, runtime->gpus[gpu].index, out_info);
}

/* One GPU of a pair in words: "GPU 1 (llvmpipe (LLVM 15.0.6, 256 bits), llvmpipe)". */
#define TANDEM__GPU_WORDS 128 /* "GPU %u (" 18, a name of 72, ", " 2, a driver of 24, ")" */
static void tandem__gpu_words(const tandem__gpu_t *gpu, uint32_t g, char out[TANDEM__GPU_WORDS]) {
  snprintf(out, TANDEM__GPU_WORDS, "GPU %u (%.72s, %.24s)", g, gpu->info.name,
           gpu->info.driver_name);
}

tandem_status_t tandem_runtime_gpu_pair(tandem_runtime_t *runtime, uint32_t from, uint32_t to,
                                        tandem_gpu_pair_info_t *out_info) {
  if (!runtime || !out_info)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or out_info is NULL");
  TANDEM_RETURN_IF_ERROR(
      tandem__struct_out_check(out_info, TANDEM__OLDEST_GPU_PAIR_INFO, "tandem_gpu_pair_info_t"));
  tandem__struct_clear(out_info);
  if (from == to && from < runtime->gpu_count)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "GPU %u paired with itself: a copy within one GPU is an ordinary copy "
                       "node; name two GPUs",
                       from);
  tandem__gpu_t *a, *b;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_at(runtime, from, &a));
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_at(runtime, to, &b));
  tandem_gpu_pair_info_t known;
  tandem_gpu_pair_info_init(&known);
  char wa[TANDEM__GPU_WORDS], wb[TANDEM__GPU_WORDS], why[200];
  tandem__gpu_words(a, from, wa);
  tandem__gpu_words(b, to, wb);
  /* Why no peer path: what Vulkan would need of the pair. */
  const tandem_device_info_t *ia = &a->info, *ib = &b->info;
  bool host_a = strcmp(runtime->gpus[from].backend->name, "host") == 0,
       host_b = strcmp(runtime->gpus[to].backend->name, "host") == 0;
  if (host_a && host_b)
    snprintf(why, sizeof why, "both are host GPUs, test devices with no memory to share");
  else if (host_a || host_b)
    snprintf(why, sizeof why, "GPU %u is the host GPU, a test device with no memory to share",
             host_a ? from : to);
  else if (memcmp(ia->driver_uuid, ib->driver_uuid, 16) != 0)
    snprintf(why, sizeof why,
             "two drivers: neither can import the other's memory or timelines (Vulkan "
             "imports opaque fds only into the device that made them)");
  else if (memcmp(ia->device_uuid, ib->device_uuid, 16) != 0)
    snprintf(why, sizeof why,
             "two devices of one driver: Vulkan imports opaque-fd memory and timelines only "
             "into the device that made them (deviceUUID), and tandem builds no dma-buf or "
             "device-group peer path");
  else
    snprintf(why, sizeof why,
             "one device twice (equal deviceUUID and driverUUID, two drivers' instances of it): "
             "they could share opaque-fd memory and timelines, which tandem does not build");
  known.waits_on_gpu = false;
  known.can_copy = a->can_import_host && b->can_import_host;
  /* Sized to fit: two GPUs' words, the reason and the verdict (the names
   * are cut short above). */
  _Static_assert(sizeof known.reason >= 3 * TANDEM__GPU_WORDS + 200 + 120, "room for the words");
  if (known.can_copy) {
    known.copy = TANDEM_SHARING_STAGED;
    snprintf(known.reason, sizeof known.reason,
             "%s and %s: %s; copies are staged through host memory both import, waits relayed "
             "by the host",
             wa, wb, why);
  } else {
    known.copy = TANDEM_SHARING_AUTO;
    snprintf(known.reason, sizeof known.reason,
             "%s and %s: %s; no copy path: %s cannot import host memory (no "
             "VK_EXT_external_memory_host)",
             wa, wb, why, a->can_import_host ? wb : wa);
  }
  tandem__struct_out(out_info, &known, sizeof known);
  return TANDEM_OK;
}

tandem_status_t tandem_runtime_vulkan_handles_at(tandem_runtime_t *runtime, uint32_t g,
                                                 tandem_vulkan_handles_t *out) {
  if (!out) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out is NULL");
  TANDEM_RETURN_IF_ERROR(
      tandem__struct_out_check(out, TANDEM__OLDEST_VULKAN_HANDLES, "tandem_vulkan_handles_t"));
  tandem__struct_clear(out);
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_at(runtime, g, &gpu));
  if (!gpu->vtable->interop)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "GPU %u's backend '%s' has no Vulkan handles", g,
                       runtime->gpus[g].backend->name);
  tandem_vulkan_handles_t known;
  tandem_vulkan_handles_init(&known);
  tandem__gpu_native_handles(gpu, &known);
  tandem__struct_out(out, &known, sizeof known);
  return TANDEM_OK;
}

tandem_status_t tandem_runtime_vulkan_handles(tandem_runtime_t *runtime,
                                              tandem_vulkan_handles_t *out) {
  return tandem_runtime_vulkan_handles_at(runtime, 0, out);
}

/* The queue lock of lane id |lane| (GPU 0's 0..2, or GPU g's
 * tandem_gpu_lane(g, l)): taken or given back on the backend of the GPU the
 * lane belongs to, by that backend's own lane number. Anything else, or a
 * GPU not open, is ignored (as documented). */
static void tandem__queue_lock(tandem_runtime_t *runtime, int lane, bool lock) {
  if (!runtime || lane < 0 || lane >= TANDEM__MAX_LANES) return;
  int g = tandem__lane_gpu(lane);
  if (g < 0 || (uint32_t)g >= runtime->gpu_count) return;
  tandem__gpu_t *gpu = tandem__gpu_at(runtime, (uint32_t)g);
  if (gpu && gpu->vtable->interop)
    gpu->vtable->interop->queue_lock(gpu, tandem__lane_local(lane), lock);
}

void tandem_runtime_queue_lock(tandem_runtime_t *runtime, int lane) {
  tandem__queue_lock(runtime, lane, true);
}

void tandem_runtime_queue_unlock(tandem_runtime_t *runtime, int lane) {
  tandem__queue_lock(runtime, lane, false);
}

tandem_status_t tandem_runtime_gpu_count(tandem_runtime_t *runtime, uint32_t *out_count) {
  if (!runtime || !out_count)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or out_count is NULL");
  *out_count = 0;
  return runtime->gpus[0].backend->count(out_count);
}

/* Device |index| of GPU |g|'s backend into |out_info| (struct_size checked
 * by the caller): the open device's own description when it is that device,
 * else the backend's; zeroed on failure. */
static tandem_status_t tandem__describe(tandem_runtime_t *runtime, uint32_t g, uint32_t index,
                                        tandem_device_info_t *out_info) {
  tandem_device_info_t info;
  memset(&info, 0, sizeof info);
  tandem__gpu_t *open = tandem__gpu_at(runtime, g);
  tandem_status_t s = TANDEM_OK;
  if (open && index == runtime->gpus[g].index) {
    info = open->info;
  } else {
    s = runtime->gpus[g].backend->info(index, &info);
    if (s != TANDEM_OK) memset(&info, 0, sizeof info);
  }
  tandem__struct_out(out_info, &info, sizeof info);
  return s;
}

tandem_status_t tandem_runtime_gpu_info(tandem_runtime_t *runtime, uint32_t index,
                                        tandem_device_info_t *out_info) {
  if (!runtime || !out_info)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or out_info is NULL");
  TANDEM_RETURN_IF_ERROR(
      tandem__struct_out_check(out_info, TANDEM__OLDEST_DEVICE_INFO, "tandem_device_info_t"));
  return tandem__describe(runtime, 0, index, out_info);
}

tandem_status_t tandem_runtime_statistics(const tandem_runtime_t *runtime,
                                          tandem_statistics_t *out_statistics) {
  if (!runtime || !out_statistics)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or out_statistics is NULL");
  TANDEM_RETURN_IF_ERROR(
      tandem__struct_out_check(out_statistics, TANDEM__OLDEST_STATISTICS, "tandem_statistics_t"));
  tandem_statistics_t st;
  memset(&st, 0, sizeof st);
  tandem_statistics_t *out = &st;
  tandem_runtime_t *rt = (tandem_runtime_t *)runtime;
  out->allocations = atomic_load(&rt->stats.allocations);
  out->live_bytes = atomic_load(&rt->stats.live_bytes);
  out->peak_bytes = atomic_load(&rt->stats.peak_bytes);
  out->submissions = atomic_load(&rt->stats.submissions);
  out->completions = atomic_load(&rt->stats.completions);
  out->copied_bytes = atomic_load(&rt->stats.copied_bytes);
  out->imports = atomic_load(&rt->stats.imports);
  out->cache_maintenance_bytes = atomic_load(&rt->stats.cache_maintenance_bytes);
  out->npu_runs = atomic_load(&rt->stats.npu_runs);
  for (uint32_t g = 0; g < rt->gpu_count; g++) {
    const tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
    if (gpu) out->coherence_barriers += atomic_load(&gpu->coherence_barriers);
  }
  tandem__struct_out(out_statistics, &st, sizeof st);
  return TANDEM_OK;
}

tandem_status_t tandem_test_control(tandem_runtime_t *runtime, tandem_test_op_t op) {
#ifdef TANDEM_UNTESTABLE
  (void)runtime;
  (void)op;
  return TANDEM_FAIL(TANDEM_ERROR_UNIMPLEMENTED, "built with TANDEM_UNTESTABLE");
#else
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  switch (op) {
    case TANDEM_TEST_INJECT_VALIDATION_ERROR: {
      tandem__gpu_t *gpu;
      TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(runtime, &gpu));
      if (!gpu->test_hooks)
        return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the GPU backend '%s' has no test controls",
                           runtime->gpus[0].backend->name);
      return gpu->test_hooks->control(gpu, op);
    }
    case TANDEM_TEST_FAIL_NEXT_SUBMISSION:
      pthread_mutex_lock(&runtime->mutex);
      runtime->fail_next = true;
      pthread_mutex_unlock(&runtime->mutex);
      return TANDEM_OK;
  }
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "unknown test operation %d", (int)op);
#endif
}

tandem_status_t tandem_test_unordered(tandem_runtime_t *runtime, tandem_test_unordered_t *out) {
#ifdef TANDEM_UNTESTABLE
  (void)runtime;
  (void)out;
  return TANDEM_FAIL(TANDEM_ERROR_UNIMPLEMENTED, "built with TANDEM_UNTESTABLE");
#else
  if (!runtime || !out)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "%s is NULL", runtime ? "out" : "runtime");
  memset(out, 0, sizeof *out);
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(runtime, &gpu));
  if (!gpu->test_hooks || !gpu->test_hooks->unordered)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "the GPU backend '%s' has no ordering check (the host GPU has)",
                       runtime->gpus[0].backend->name);
  gpu->test_hooks->unordered(gpu, out);
  /* Several GPUs: the sum over every open one that checks, the first found. */
  for (uint32_t g = 1; g < runtime->gpu_count; g++) {
    tandem__gpu_t *other = tandem__gpu_at(runtime, g);
    if (!other || !other->test_hooks || !other->test_hooks->unordered) continue;
    tandem_test_unordered_t more;
    memset(&more, 0, sizeof more);
    other->test_hooks->unordered(other, &more);
    if (!out->count && more.count)
      snprintf(out->first, sizeof out->first, "GPU %u: %.200s", g, more.first);
    out->count += more.count;
  }
  return TANDEM_OK;
#endif
}
