/* SPDX-License-Identifier: MIT */
/*
 * registry.c — the tables of backends a runtime can choose from (registry.h).
 *
 * The built-in entries are constant and listed here, the one place in core/
 * that names a backend: Vulkan and the host GPU (backends/host/, a test and
 * development device on host threads, never hardware) for the GPU; XRT and the emulated NPU (both
 * served by backends/xrt/) for the NPU. Entries added at run time (tests)
 * live in a small fixed table: added under tandem__registry_mutex, never
 * removed, so a pointer handed out stays valid for the life of the process.
 * Each entry also says which fault-injection kind counts its native calls
 * (tandem_test_fault_kind, tandem_testing.h).
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/registry.h"
#include "core/status.h"
#include "tandem/tandem_testing.h"

static const tandem__gpu_backend_t *const tandem__gpu_builtin[] = {&tandem_vk_gpu_backend,
                                                                   &tandem_host_gpu_backend};
static const tandem__npu_backend_t *const tandem__npu_builtin[] = {&tandem_xrt_npu_backend,
                                                                   &tandem_emu_npu_backend};
#define TANDEM__COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define TANDEM__GPU_ADDED_MAX 8
/* Guards tandem__gpu_added and tandem__gpu_added_count (append only). */
static pthread_mutex_t tandem__registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static const tandem__gpu_backend_t *tandem__gpu_added[TANDEM__GPU_ADDED_MAX];
static size_t tandem__gpu_added_count;

/* Every GPU backend's name, ", "-separated, into |buf|. Caller holds the mutex. */
static void tandem__gpu_names(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < TANDEM__COUNT(tandem__gpu_builtin) + tandem__gpu_added_count; i++) {
    size_t builtin = TANDEM__COUNT(tandem__gpu_builtin);
    const tandem__gpu_backend_t *b =
        i < builtin ? tandem__gpu_builtin[i] : tandem__gpu_added[i - builtin];
    int n = snprintf(buf + used, size - used, "%s'%s'", i ? ", " : "", b->name);
    if (n < 0 || (size_t)n >= size - used) break;
    used += (size_t)n;
  }
}

/* The entry named |name|, or NULL. Caller holds the mutex. */
static const tandem__gpu_backend_t *tandem__gpu_lookup(const char *name) {
  for (size_t i = 0; i < TANDEM__COUNT(tandem__gpu_builtin); i++)
    if (strcmp(tandem__gpu_builtin[i]->name, name) == 0) return tandem__gpu_builtin[i];
  for (size_t i = 0; i < tandem__gpu_added_count; i++)
    if (strcmp(tandem__gpu_added[i]->name, name) == 0) return tandem__gpu_added[i];
  return NULL;
}

tandem_status_t tandem__gpu_backend_find(const char *name, const tandem__gpu_backend_t **out) {
  if (!name) name = "vulkan";
  pthread_mutex_lock(&tandem__registry_mutex);
  *out = tandem__gpu_lookup(name);
  char names[256];
  if (!*out) tandem__gpu_names(names, sizeof names);
  pthread_mutex_unlock(&tandem__registry_mutex);
  if (*out) return TANDEM_OK;
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                     "runtime option gpu_backend is '%.64s', which is no GPU backend of this "
                     "library; the GPU backends are %s (NULL means 'vulkan')",
                     name, names);
}

/* Every NPU backend's name, ", "-separated, into |buf|. */
static void tandem__npu_names(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < TANDEM__COUNT(tandem__npu_builtin); i++) {
    int n =
        snprintf(buf + used, size - used, "%s'%s'", i ? ", " : "", tandem__npu_builtin[i]->name);
    if (n < 0 || (size_t)n >= size - used) break;
    used += (size_t)n;
  }
}

tandem_status_t tandem__npu_backend_find(const char *name, const tandem__npu_backend_t **out) {
  *out = NULL;
  for (size_t i = 0; name && i < TANDEM__COUNT(tandem__npu_builtin); i++)
    if (strcmp(tandem__npu_builtin[i]->name, name) == 0) *out = tandem__npu_builtin[i];
  if (*out) return TANDEM_OK;
  char names[128];
  tandem__npu_names(names, sizeof names);
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                     "'%.64s' is no NPU backend of this library; the NPU backends are %s (for "
                     "no NPU: NULL or \"\" in the option npu_backend, 'none' in TANDEM_NPU)",
                     name ? name : "(null)", names);
}

/* tandem_testing.h. Here, not in fault.c: each registry entry says which
 * kind its wrappers count (core/fault.h), and the registry stands above
 * fault.c in core's layers. */
tandem_status_t tandem_test_fault_kind(const char *name, uint32_t *out_kind) {
#ifdef TANDEM_UNTESTABLE
  (void)name;
  (void)out_kind;
  return TANDEM_FAIL(TANDEM_ERROR_UNIMPLEMENTED, "built with TANDEM_UNTESTABLE");
#else
  if (!out_kind) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_kind is NULL");
  *out_kind = 0;
  if (!name)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "the fault kind of a backend: its name is NULL; name a GPU or NPU backend");
  for (size_t i = 0; i < TANDEM__COUNT(tandem__npu_builtin); i++)
    if (strcmp(tandem__npu_builtin[i]->name, name) == 0) {
      *out_kind = tandem__npu_builtin[i]->fault_kind;
      return TANDEM_OK;
    }
  char gpu_names[256], npu_names[128];
  pthread_mutex_lock(&tandem__registry_mutex);
  const tandem__gpu_backend_t *gpu = tandem__gpu_lookup(name);
  if (!gpu) tandem__gpu_names(gpu_names, sizeof gpu_names);
  pthread_mutex_unlock(&tandem__registry_mutex);
  if (gpu && !gpu->fault_kind)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "GPU backend '%.64s' makes no native calls that fault injection counts; "
                       "its host allocations are TANDEM_TEST_FAULT_ALLOC's",
                       name);
  if (gpu) {
    *out_kind = gpu->fault_kind;
    return TANDEM_OK;
  }
  tandem__npu_names(npu_names, sizeof npu_names);
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                     "the fault kind of backend '%.64s': no backend has that name; the GPU "
                     "backends are %s, the NPU backends %s",
                     name, gpu_names, npu_names);
#endif
}

tandem_status_t tandem__gpu_backend_register(const tandem__gpu_backend_t *backend) {
  if (!backend || !backend->name || !backend->name[0])
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "registering a GPU backend without a name");
  tandem_status_t s = TANDEM_OK;
  pthread_mutex_lock(&tandem__registry_mutex);
  const tandem__gpu_backend_t *same = tandem__gpu_lookup(backend->name);
  if (same && same != backend) {
    s = TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                    "registering GPU backend '%.64s': another backend has that name; choose "
                    "another",
                    backend->name);
  } else if (!same && tandem__gpu_added_count == TANDEM__GPU_ADDED_MAX) {
    s = TANDEM_FAIL(TANDEM_ERROR_BUSY,
                    "registering GPU backend '%.64s': %d backends were added already, the most "
                    "this process can hold",
                    backend->name, TANDEM__GPU_ADDED_MAX);
  } else if (!same) {
    tandem__gpu_added[tandem__gpu_added_count++] = backend;
  }
  assert(tandem__gpu_added_count <= TANDEM__GPU_ADDED_MAX);
  pthread_mutex_unlock(&tandem__registry_mutex);
  return s;
}
