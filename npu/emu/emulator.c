/* SPDX-License-Identifier: MIT */
/*
 * emulator.c — tandem's emulated NPU device: a test and development device
 * that implements the XRT C API subset tandem uses (backends/xrt/xrt_api.h) on
 * the CPU. It never pretends to be hardware. A device is one worker thread
 * that executes started runs asynchronously, in submission order; kernels
 * come from the native library named by an emulated xclbin (emu_xclbin.c)
 * and see the device side of buffer objects (emu_bo.c). The state machine of
 * a run is NEW -> QUEUED -> RUNNING -> COMPLETED | ERROR, restartable once
 * final (the XDNA mode reports a run in flight as NEW, as amdxdna does). TANDEM_EMU_DELAY_US adds a delay to every run (README.md), which an
 * abort ends early. The XDNA mode also implements the bridge's tiers 0 and 1
 * (internal/xrt_bridge_abi.h): hardware contexts per xclbin, counted against
 * the firmware's limit (TANDEM_EMU_NPU), with kernels and runs through them.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_internal.h"
#include "internal/xrt_bridge_abi.h"

/* ---- device (its reference count is emu_device.c's) ------------------ */

/* Releases an in-flight execution's hold on its BOs (device lock held);
 * BOs whose last reference this was are chained onto *dead. */
static void release_exec_locked(emu_run_t *run, emu_bo_t **dead) {
  for (uint32_t i = 0; i < run->nargs; i++) {
    emu_bo_t *bo = run->exec_bos[i];
    if (bo == NULL) continue;
    run->exec_bos[i] = NULL;
    bo->busy--;
    if (emu_bo_put_locked(bo)) {
      bo->next_dead = *dead;
      *dead = bo;
    }
  }
}

/* TANDEM_EMU_MODE: unset or empty = "xdna"; "xdna" or "plain". Anything
 * else makes xrtDeviceOpen fail (EINVAL). */
static bool read_mode(emu_mode_t *out) {
  const char *s = getenv("TANDEM_EMU_MODE");
  *out = EMU_MODE_XDNA;
  if (s == NULL || s[0] == '\0' || strcmp(s, "xdna") == 0) return true;
  if (strcmp(s, "plain") == 0) {
    *out = EMU_MODE_PLAIN;
    return true;
  }
  return false;
}

/* TANDEM_EMU_TDR_MS: unset or empty = 2000 (amdxdna's default); 0 turns
 * it off; at most 600000. Anything else fails xrtDeviceOpen. */
static bool read_tdr(uint64_t *out) {
  const char *s = getenv("TANDEM_EMU_TDR_MS");
  *out = 2000;
  if (s == NULL || s[0] == '\0') return true;
  char *end = NULL;
  errno = 0;
  const unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || s[0] == '-' || v > 600000ull) return false;
  *out = v;
  return true;
}

/* How many hardware contexts the NPU holds at once, device-wide: the
 * firmware's limit, hwctx_limit, 6 on npu1 (Phoenix, Hawk Point) and 16 on
 * npu4/5/6 (Strix and later) (amd/xdna-driver@856409ca
 * drivers/accel/amdxdna/npu1_regs.c:105, npu4_regs.c:174, npu5_regs.c:74,
 * npu6_regs.c:74). TANDEM_EMU_NPU=npu1|npu4 picks one (unset or empty:
 * npu1, the smaller and the commonest part); TANDEM_EMU_MAX_CONTEXTS=1..64
 * overrides it (tests of sharing). Anything else fails xrtDeviceOpen. */
static bool read_max_contexts(uint32_t *out) {
  const char *npu = getenv("TANDEM_EMU_NPU");
  *out = 6;
  if (npu != NULL && strcmp(npu, "npu4") == 0) *out = 16;
  else if (npu != NULL && npu[0] != '\0' && strcmp(npu, "npu1") != 0) return false;
  const char *s = getenv("TANDEM_EMU_MAX_CONTEXTS");
  if (s == NULL || s[0] == '\0') return true;
  char *end = NULL;
  errno = 0;
  const unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || *end != '\0' || s[0] == '-' || v < 1 || v > 64) return false;
  *out = (uint32_t)v;
  return true;
}

static void *worker_main(void *arg) {
  emu_device_t *dev = arg;
  pthread_mutex_lock(&dev->mu);
  for (;;) {
    while (dev->head == NULL && !dev->closing) pthread_cond_wait(&dev->work_cv, &dev->mu);
    emu_run_t *run = dev->head;
    if (run == NULL) break; /* closing and drained */
    dev->head = run->next;
    if (dev->head == NULL) dev->tail = NULL;
    run->next = NULL;
    run->state = ERT_CMD_STATE_RUNNING;
    const uint64_t delay_us = dev->delay_us;
    const tandem_emu_kernel_t *desc = run->kernel->desc;
    /* A context the driver reset (or an aborted run) does not run again. */
    const bool skip = run->kernel->reset || run->abort_requested;
    pthread_mutex_unlock(&dev->mu);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* The delay stands for a kernel still running on the NPU: an abort
     * (tandemEmuRunAbort in the PLAIN mode) ends it early, and so does the
     * driver's hang detection in the XDNA mode (a delay longer than
     * TANDEM_EMU_TDR_MS ends at that deadline in TIMEOUT, below). */
    bool aborted = false;
    const uint64_t tdr_us = dev->mode == EMU_MODE_XDNA ? dev->tdr_ms * 1000u : 0;
    const bool tdr_cut = tdr_us > 0 && delay_us > tdr_us;
    bool tdr_fired = false;
    if (delay_us > 0 && !skip) {
      const uint64_t wait_us = tdr_cut ? tdr_us : delay_us;
      struct timespec until = t0;
      until.tv_sec += (time_t)(wait_us / 1000000u);
      until.tv_nsec += (long)(wait_us % 1000000u) * 1000L;
      if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
      }
      pthread_mutex_lock(&dev->mu);
      while (!run->abort_requested &&
             pthread_cond_timedwait(&dev->work_cv, &dev->mu, &until) != ETIMEDOUT) {
      }
      aborted = run->abort_requested;
      tdr_fired = tdr_cut && !aborted;
      pthread_mutex_unlock(&dev->mu);
    }
    const int rc = skip || aborted || tdr_fired ? 0 : desc->run(run->exec, run->nargs);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const uint64_t ms = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000u +
                        (uint64_t)((t1.tv_nsec - t0.tv_nsec) / 1000000L);

    pthread_mutex_lock(&dev->mu);
    emu_bo_t *dead = NULL;
    release_exec_locked(run, &dead);
    if (skip || aborted) {
      run->state = ERT_CMD_STATE_ABORT;
    } else if (tdr_fired || (dev->mode == EMU_MODE_XDNA && dev->tdr_ms > 0 && ms > dev->tdr_ms)) {
      /* amdxdna's hang detection: past its deadline the driver resets the
       * context, the run ends in a final TIMEOUT and later runs of that
       * context in ABORT (a delay ends at the deadline; a kernel function,
       * which the CPU cannot preempt, is reported when it returns). */
      run->state = ERT_CMD_STATE_TIMEOUT;
      run->kernel->reset = true;
    } else if (run->abort_requested) {
      run->state = ERT_CMD_STATE_ABORT;
    } else {
      run->state = rc == 0 ? ERT_CMD_STATE_COMPLETED : ERT_CMD_STATE_ERROR;
    }
    pthread_cond_broadcast(&dev->done_cv);
    if (dead != NULL) {
      pthread_mutex_unlock(&dev->mu);
      while (dead != NULL) {
        emu_bo_t *next = dead->next_dead;
        emu_bo_destroy(dead);
        dead = next;
      }
      pthread_mutex_lock(&dev->mu);
    }
  }
  pthread_mutex_unlock(&dev->mu);
  return NULL;
}

/* TANDEM_EMU_DELAY_US: unset or empty = 0; otherwise a decimal number of
 * microseconds up to 10 s. Anything else makes xrtDeviceOpen fail (EINVAL). */
static bool read_delay(uint64_t *out) {
  const char *s = getenv("TANDEM_EMU_DELAY_US");
  *out = 0;
  if (s == NULL || s[0] == '\0') return true;
  char *end = NULL;
  errno = 0;
  const unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || s[0] == '-' || v > 10000000ull) return false;
  *out = v;
  return true;
}

EMU_EXPORT xrtDeviceHandle xrtDeviceOpen(unsigned int index) {
  if (index != 0) {
    errno = ENOENT;
    return NULL;
  }
  uint64_t delay_us = 0;
  emu_mode_t mode = EMU_MODE_XDNA;
  uint32_t max_contexts = 6;
  uint64_t tdr_ms = 2000;
  if (!read_delay(&delay_us) || !read_mode(&mode) || !read_max_contexts(&max_contexts) ||
      !read_tdr(&tdr_ms)) {
    errno = EINVAL;
    return NULL;
  }
  emu_device_t *dev = calloc(1, sizeof *dev);
  if (dev == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&dev->mu, NULL);
  pthread_cond_init(&dev->work_cv, &ca); /* monotonic: the worker's delay waits on it */
  pthread_cond_init(&dev->done_cv, &ca);
  pthread_condattr_destroy(&ca);
  dev->magic = EMU_MAGIC_DEVICE;
  dev->mode = mode;
  dev->max_contexts = max_contexts;
  dev->tdr_ms = tdr_ms;
  dev->refs = 1;
  dev->delay_us = delay_us;
  const int rc = pthread_create(&dev->worker, NULL, worker_main, dev);
  if (rc != 0) {
    emu_device_destroy(dev);
    errno = rc;
    return NULL;
  }
  dev->worker_started = true;
  return dev;
}

/* Not XRT: tells tandem which XRT this device behaves like, so its NPU
 * profile follows the device (TANDEM_EMU_MODE). NULL for a bad handle. */
EMU_EXPORT const char *tandemEmuDeviceFamily(xrtDeviceHandle dhdl) {
  emu_device_t *dev = emu_device_from(dhdl);
  if (dev == NULL) {
    errno = EINVAL;
    return NULL;
  }
  return dev->mode == EMU_MODE_XDNA ? "xdna" : "plain";
}

EMU_EXPORT int xrtDeviceClose(xrtDeviceHandle dhdl) {
  emu_device_t *dev = emu_device_from(dhdl);
  if (dev == NULL) return emu_fail(EINVAL);
  pthread_mutex_lock(&dev->mu);
  if (dev->closing) {
    pthread_mutex_unlock(&dev->mu);
    return emu_fail(EINVAL);
  }
  dev->closing = true; /* the worker drains the queue, then exits */
  pthread_cond_broadcast(&dev->work_cv);
  pthread_mutex_unlock(&dev->mu);
  pthread_join(dev->worker, NULL);
  pthread_mutex_lock(&dev->mu);
  dev->worker_started = false;
  const bool last = emu_device_put_locked(dev);
  pthread_mutex_unlock(&dev->mu);
  if (last) emu_device_destroy(dev);
  return 0;
}

/* An emulated xclbin is a text file naming a library to dlopen, so loading
 * whatever it names would let a pipeline file run arbitrary code (issue 11).
 * Only the kernels library shipped with this emulator
 * (libtandem_emu_kernels.so in the emulator's tandem/ folder, where the build
 * and the install put it, or beside it) and libraries the caller lists in
 * TANDEM_EMU_KERNELS (colon-separated paths) load.
 * Returns 0, or ENOENT (no such file) / EACCES (not allowed). */
static int emu_library_allowed(const char *library) {
  char want[PATH_MAX], have[PATH_MAX], own[PATH_MAX];
  if (realpath(library, want) == NULL) return ENOENT;
  Dl_info info;
  if (dladdr((void *)emu_library_allowed, &info) != 0 && info.dli_fname != NULL) {
    snprintf(own, sizeof own, "%s", info.dli_fname);
    char *slash = strrchr(own, '/');
    size_t dir = slash != NULL ? (size_t)(slash - own) + 1 : 0;
    static const char *const where[2] = {"tandem/libtandem_emu_kernels.so",
                                         "libtandem_emu_kernels.so"};
    for (int i = 0; i < 2; i++) {
      snprintf(own + dir, sizeof own - dir, "%s", where[i]);
      if (realpath(own, have) != NULL && strcmp(have, want) == 0) return 0;
    }
  }
  const char *list = getenv("TANDEM_EMU_KERNELS");
  while (list != NULL && *list != '\0') {
    const char *end = strchr(list, ':');
    size_t len = end != NULL ? (size_t)(end - list) : strlen(list);
    if (len > 0 && len < sizeof own) {
      memcpy(own, list, len);
      own[len] = '\0';
      if (realpath(own, have) != NULL && strcmp(have, want) == 0) return 0;
    }
    list = end != NULL ? end + 1 : NULL;
  }
  return EACCES;
}

/* Opens |x|'s kernels library (if allowed) and its kernel table: 0, or
 * -EACCES / -ENOENT / -EINVAL with errno set. */
static int emu_open_library(emu_xclbin_t *x, void **out_lib,
                            const tandem_emu_kernel_t **out_kernels, uint32_t *out_count) {
  const int allowed = emu_library_allowed(x->library);
  if (allowed != 0) return emu_fail(allowed);
  void *lib = dlopen(x->library, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) return emu_fail(ENOENT);
  tandem_emu_kernels_fn get = (tandem_emu_kernels_fn)dlsym(lib, TANDEM_EMU_KERNELS_SYMBOL);
  uint32_t count = 0;
  const tandem_emu_kernel_t *kernels = get != NULL ? get(&count) : NULL;
  bool valid = kernels != NULL;
  for (uint32_t i = 0; valid && i < count; i++) {
    const tandem_emu_kernel_t *k = &kernels[i];
    valid = k->name != NULL && k->arg_kinds != NULL && k->run != NULL;
    for (const char *c = valid ? k->arg_kinds : ""; *c != '\0'; c++)
      if (*c != TANDEM_EMU_ARG_BO && *c != TANDEM_EMU_ARG_U32 && *c != TANDEM_EMU_ARG_U64)
        valid = false;
  }
  if (!valid) {
    dlclose(lib);
    return emu_fail(EINVAL);
  }
  *out_lib = lib;
  *out_kernels = kernels;
  *out_count = count;
  return 0;
}

/* Loads |x|'s kernels library as the device's image (load or register). */
static int emu_load(emu_device_t *dev, emu_xclbin_t *x) {
  pthread_mutex_lock(&dev->mu);
  const bool same = dev->lib != NULL && memcmp(dev->uuid, x->uuid, sizeof(xuid_t)) == 0;
  const bool closing = dev->closing;
  pthread_mutex_unlock(&dev->mu);
  if (closing) return emu_fail(ENODEV);
  if (same) return 0;

  void *lib = NULL;
  const tandem_emu_kernel_t *kernels = NULL;
  uint32_t count = 0;
  const int rc = emu_open_library(x, &lib, &kernels, &count);
  if (rc != 0) return rc;

  pthread_mutex_lock(&dev->mu);
  if (dev->live_kernels > 0) { /* kernels of the current image are still open */
    pthread_mutex_unlock(&dev->mu);
    dlclose(lib);
    return emu_fail(EBUSY);
  }
  void *old = dev->lib;
  dev->lib = lib;
  dev->kernels = kernels;
  dev->kernel_count = count;
  memcpy(dev->uuid, x->uuid, sizeof(xuid_t));
  pthread_mutex_unlock(&dev->mu);
  if (old != NULL) dlclose(old);
  return 0;
}

/* PLAIN mode loads xclbins; the XDNA mode refuses, as amdxdna's plugin does
 * (its load_axlf is "not supported"): xclbins are registered there. */
EMU_EXPORT int xrtDeviceLoadXclbinHandle(xrtDeviceHandle dhdl, xrtXclbinHandle xhdl) {
  emu_device_t *dev = emu_device_from(dhdl);
  emu_xclbin_t *x = emu_xclbin_from(xhdl);
  if (dev == NULL || x == NULL) return emu_fail(EINVAL);
  if (dev->mode == EMU_MODE_XDNA) return emu_fail(ENOTSUP);
  return emu_load(dev, x);
}

/* ---- the bridge (internal/xrt_bridge_abi.h), XDNA mode ---------------- */

static void emu_tell(char *msg, size_t cap, const char *text) {
  if (msg != NULL && cap > 0) snprintf(msg, cap, "%s", text);
}

EMU_EXPORT int tandemBridgeVersion(void) { return TANDEM_XRT_BRIDGE_VERSION; }

EMU_EXPORT int tandemBridgeRegisterXclbin(void *device, const char *xclbin_path, char *msg,
                                          size_t cap) {
  emu_device_t *dev = emu_device_from(device);
  if (dev == NULL || xclbin_path == NULL) {
    emu_tell(msg, cap, "invalid device handle or path");
    return emu_fail(EINVAL);
  }
  if (dev->mode != EMU_MODE_XDNA) {
    emu_tell(msg, cap,
             "the emulated NPU's PLAIN mode (FPGA-style XRT) loads xclbins; it has no bridge");
    return emu_fail(ENOTSUP);
  }
  xrtXclbinHandle xh = xrtXclbinAllocFilename(xclbin_path);
  if (xh == NULL) {
    const int err = errno;
    emu_tell(msg, cap, err == EINVAL ? "not an emulated xclbin" : strerror(err));
    return emu_fail(err);
  }
  const int rc = emu_load(dev, emu_xclbin_from(xh));
  xrtXclbinFreeHandle(xh);
  if (rc != 0)
    emu_tell(msg, cap,
             rc == -EACCES  ? "the kernels library it names is not one the emulated NPU may load"
             : rc == -EBUSY ? "kernels of another xclbin are still open"
                            : strerror(-rc));
  return rc;
}

EMU_EXPORT int tandemBridgeKernelArgs(void *device, const char *xclbin_path, const char *kernel,
                                      char *kinds, size_t capacity, char *msg, size_t cap) {
  /* As the real bridge: the xclbin file's own metadata (here, the table of
   * the kernels library it names), whether or not it is registered. */
  emu_device_t *dev = emu_device_from(device);
  if (dev == NULL || xclbin_path == NULL || kernel == NULL || kinds == NULL)
    return emu_fail(EINVAL);
  xrtXclbinHandle xh = xrtXclbinAllocFilename(xclbin_path);
  if (xh == NULL) {
    const int err = errno;
    emu_tell(msg, cap, err == EINVAL ? "not an emulated xclbin" : strerror(err));
    return emu_fail(err);
  }
  void *lib = NULL;
  const tandem_emu_kernel_t *table = NULL;
  uint32_t count = 0;
  int rc = emu_open_library(emu_xclbin_from(xh), &lib, &table, &count);
  xrtXclbinFreeHandle(xh);
  if (rc != 0) {
    emu_tell(msg, cap, "its kernels library could not be loaded");
    return rc;
  }
  rc = -ENOENT;
  for (uint32_t i = 0; i < count; i++) {
    if (strcmp(table[i].name, kernel) != 0) continue;
    const size_t n = strlen(table[i].arg_kinds);
    rc = n + 1 > capacity ? -ENOSPC : (int)n;
    if (rc >= 0) memcpy(kinds, table[i].arg_kinds, n + 1);
  }
  dlclose(lib);
  if (rc < 0) {
    emu_tell(msg, cap,
             rc == -ENOENT ? "no such kernel in the registered xclbin" : "too many arguments");
    return emu_fail(-rc);
  }
  return rc;
}

/* ---- kernels --------------------------------------------------------- */

/* The bank of buffer argument |i| (arg_banks, default 0). */
static int emu_arg_bank(const tandem_emu_kernel_t *desc, uint32_t i) {
  if (desc->arg_banks == NULL || i >= strlen(desc->arg_banks)) return 0;
  const char c = desc->arg_banks[i];
  return c >= '0' && c <= '9' ? c - '0' : 0;
}

/* A hardware-context handle for a new context (device lock held), or 0
 * when none is free. As amdxdna_hwctx_id_alloc (amd/xdna-driver@856409ca
 * drivers/accel/amdxdna/amdxdna_ctx.c:232-269): device-wide, from
 * AMDXDNA_INVALID_CTX_HANDLE + 1 = 1 up to MAX_HWCTX_ID, cyclic (the cursor
 * moves past the last one given; a freed handle is not reused at once). */
static uint32_t emu_slot_alloc_locked(emu_device_t *dev) {
  if (dev->next_slot < 1 || dev->next_slot > EMU_MAX_SLOT) dev->next_slot = 1;
  for (uint32_t tries = 0; tries < EMU_MAX_SLOT; tries++) {
    const uint32_t id = dev->next_slot;
    dev->next_slot = id >= EMU_MAX_SLOT ? 1 : id + 1;
    if (!dev->slot_used[id]) {
      dev->slot_used[id] = 1;
      return id;
    }
  }
  return 0;
}

static void emu_slot_free_locked(emu_device_t *dev, uint32_t slot) {
  if (slot >= 1 && slot <= EMU_MAX_SLOT) dev->slot_used[slot] = 0;
}

/* The group id XRT answers for argument |i| of |k| (XDNA mode): an encoded
 * xcl_bo_flags, slot << 16 | bank (XRT@963c58ee
 * src/runtime_src/core/common/api/xrt_kernel.cpp:2143-2161, the layout in
 * src/runtime_src/core/include/xrt/detail/xrt_mem.h:34-56), where the slot
 * is the hardware context's handle (amd/xdna-driver@856409ca
 * src/shim/hwctx.cpp:175 get_slotidx returns the ctx_handle the driver gave,
 * hwctx.cpp:289), truncated to xcl_bo_flags' 8-bit slot field. A scalar has
 * no memory connection: its bank field is (uint16_t)no_memidx = 0xffff
 * (xrt_kernel.cpp:648, 696-711), so its group id is positive too. */
static int emu_group_id(const emu_kernel_t *k, uint32_t i) {
  const uint32_t bank =
      k->desc->arg_kinds[i] == TANDEM_EMU_ARG_BO ? (uint32_t)emu_arg_bank(k->desc, i) : 0xffffu;
  return (int)((k->slot & 0xffu) << 16 | bank);
}

static emu_kernel_t *kernel_from(xrtKernelHandle h) {
  emu_kernel_t *k = h;
  if (k == NULL || k->magic != EMU_MAGIC_KERNEL) return NULL;
  return k;
}

/* Drops a context reference (device lock held). The last one frees its
 * hardware context and drops the device reference it held; true: destroy
 * the device after unlocking. */
static bool context_put_locked(emu_context_t *c) {
  if (--c->refs > 0) return false;
  emu_device_t *dev = c->dev;
  c->magic = EMU_MAGIC_DEAD;
  dev->contexts--;
  emu_slot_free_locked(dev, c->slot);
  dlclose(c->lib); /* the device's image (if any) holds its own reference */
  free(c);
  return emu_device_put_locked(dev);
}

/* Drops a kernel reference (device lock held); true: destroy the device after unlocking. */
static bool kernel_put_locked(emu_kernel_t *k) {
  if (--k->refs > 0) return false;
  emu_device_t *dev = k->dev;
  k->magic = EMU_MAGIC_DEAD;
  emu_context_t *ctx = k->ctx;
  const uint32_t slot = k->slot;
  free(k);
  if (ctx == NULL) {
    dev->live_kernels--;
    if (dev->mode == EMU_MODE_XDNA) { /* its hardware context goes */
      dev->contexts--;
      emu_slot_free_locked(dev, slot);
    }
  }
  /* The kernel's device reference first: a context still holds another. */
  bool last = emu_device_put_locked(dev);
  if (ctx != NULL) last = context_put_locked(ctx) || last;
  return last;
}

EMU_EXPORT xrtKernelHandle xrtPLKernelOpen(xrtDeviceHandle dhdl, const xuid_t xclbin_id,
                                           const char *name) {
  emu_device_t *dev = emu_device_from(dhdl);
  if (dev == NULL || xclbin_id == NULL || name == NULL) {
    errno = EINVAL;
    return NULL;
  }
  emu_kernel_t *k = calloc(1, sizeof *k);
  if (k == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  pthread_mutex_lock(&dev->mu);
  int err = 0;
  const tandem_emu_kernel_t *desc = NULL;
  if (dev->closing) {
    err = ENODEV;
  } else if (dev->lib == NULL || memcmp(dev->uuid, xclbin_id, sizeof(xuid_t)) != 0) {
    err = EINVAL; /* that xclbin is not the one loaded */
  } else {
    for (uint32_t i = 0; i < dev->kernel_count && desc == NULL; i++)
      if (strcmp(dev->kernels[i].name, name) == 0) desc = &dev->kernels[i];
    if (desc == NULL) err = ENOENT;
  }
  /* XDNA mode: like xrtPLKernelOpen on XRT >= 2.17, every kernel opened
   * makes its own hardware context, and the NPU has only a few; past them
   * ENODEV (emu_context_exhausted). */
  if (err == 0 && dev->mode == EMU_MODE_XDNA && dev->contexts >= dev->max_contexts) err = ENODEV;
  uint32_t slot = 0;
  if (err == 0 && dev->mode == EMU_MODE_XDNA && (slot = emu_slot_alloc_locked(dev)) == 0)
    err = ENODEV;
  if (err == 0 && dev->mode == EMU_MODE_XDNA) dev->contexts++;
  if (err != 0) {
    pthread_mutex_unlock(&dev->mu);
    free(k);
    errno = err;
    return NULL;
  }
  k->magic = EMU_MAGIC_KERNEL;
  k->dev = dev;
  k->refs = 1;
  k->desc = desc;
  k->nargs = (uint32_t)strlen(desc->arg_kinds);
  k->slot = slot;
  dev->live_kernels++;
  emu_device_get_locked(dev);
  pthread_mutex_unlock(&dev->mu);
  return k;
}

EMU_EXPORT int xrtKernelClose(xrtKernelHandle khdl) {
  emu_kernel_t *k = kernel_from(khdl);
  if (k == NULL) return emu_fail(EINVAL);
  emu_device_t *dev = k->dev;
  pthread_mutex_lock(&dev->mu);
  if (k->user_closed) {
    pthread_mutex_unlock(&dev->mu);
    return emu_fail(EINVAL);
  }
  k->user_closed = true;
  const bool last = kernel_put_locked(k);
  pthread_mutex_unlock(&dev->mu);
  if (last) emu_device_destroy(dev);
  return 0;
}

/* XDNA mode: XRT's encoded group id, slot << 16 | bank, scalars included
 * (emu_group_id). PLAIN mode: the bare bank of a buffer argument, -1 with
 * EINVAL for a scalar, as the tests of XRT 2.13's noop shim see. */
EMU_EXPORT int xrtKernelArgGroupId(xrtKernelHandle khdl, int argno) {
  emu_kernel_t *k = kernel_from(khdl);
  if (k == NULL || argno < 0 || (uint32_t)argno >= k->nargs) {
    errno = EINVAL;
    return -1;
  }
  if (k->dev->mode == EMU_MODE_XDNA) return emu_group_id(k, (uint32_t)argno);
  if (k->desc->arg_kinds[argno] != TANDEM_EMU_ARG_BO) {
    errno = EINVAL;
    return -1;
  }
  return emu_arg_bank(k->desc, (uint32_t)argno);
}

/* ---- runs ------------------------------------------------------------ */

static emu_run_t *run_from(xrtRunHandle h) {
  emu_run_t *r = h;
  if (r == NULL || r->magic != EMU_MAGIC_RUN) return NULL;
  return r;
}

static bool run_in_flight(const emu_run_t *r) {
  return r->state == ERT_CMD_STATE_QUEUED || r->state == ERT_CMD_STATE_RUNNING;
}

/* The state a caller reads (device lock held). Inside, a run goes QUEUED
 * then RUNNING; on XDNA the caller never sees either: XRT writes NEW into
 * the command packet when it starts a run (XRT@963c58ee
 * src/runtime_src/core/common/api/xrt_kernel.cpp:3030) and run.state()
 * reads the packet (xrt_kernel.cpp:3246-3249), and amdxdna rewrites the
 * packet to NEW again when the job reaches the NPU (amd/xdna-driver@856409ca
 * drivers/accel/amdxdna/aie2_ctx.c:443) until it ends. So an XDNA run in
 * flight reads NEW, like one never started. PLAIN mode shows the inside. */
static enum ert_cmd_state reported_state_locked(const emu_run_t *r) {
  if (r->kernel->dev->mode == EMU_MODE_XDNA && run_in_flight(r)) return ERT_CMD_STATE_NEW;
  return r->state;
}

EMU_EXPORT xrtRunHandle xrtRunOpen(xrtKernelHandle khdl) {
  emu_kernel_t *k = kernel_from(khdl);
  if (k == NULL) {
    errno = EINVAL;
    return NULL;
  }
  emu_run_t *r = calloc(1, sizeof *r);
  const size_t n = k->nargs > 0 ? k->nargs : 1;
  if (r != NULL) {
    r->args = calloc(n, sizeof *r->args);
    r->exec = calloc(n, sizeof *r->exec);
    r->exec_bos = calloc(n, sizeof *r->exec_bos);
  }
  if (r == NULL || r->args == NULL || r->exec == NULL || r->exec_bos == NULL) {
    if (r != NULL) {
      free(r->args);
      free(r->exec);
      free(r->exec_bos);
    }
    free(r);
    errno = ENOMEM;
    return NULL;
  }
  emu_device_t *dev = k->dev;
  pthread_mutex_lock(&dev->mu);
  if (k->user_closed) {
    pthread_mutex_unlock(&dev->mu);
    free(r->args);
    free(r->exec);
    free(r->exec_bos);
    free(r);
    errno = EINVAL;
    return NULL;
  }
  k->refs++;
  pthread_mutex_unlock(&dev->mu);
  r->magic = EMU_MAGIC_RUN;
  r->kernel = k;
  r->nargs = k->nargs;
  r->state = ERT_CMD_STATE_NEW;
  return r;
}

EMU_EXPORT int xrtRunSetArg(xrtRunHandle rhdl, int index, ...) {
  emu_run_t *r = run_from(rhdl);
  if (r == NULL || index < 0 || (uint32_t)index >= r->nargs) return emu_fail(EINVAL);
  emu_device_t *dev = r->kernel->dev;
  const char kind = r->kernel->desc->arg_kinds[index];
  emu_bo_t *bo = NULL;
  uint64_t value = 0;
  va_list ap;
  va_start(ap, index);
  if (kind == TANDEM_EMU_ARG_BO) bo = emu_bo_from(va_arg(ap, xrtBufferHandle));
  else if (kind == TANDEM_EMU_ARG_U32) value = va_arg(ap, unsigned int);
  else value = va_arg(ap, uint64_t);
  va_end(ap);
  if (kind == TANDEM_EMU_ARG_BO && (bo == NULL || bo->dev != dev)) return emu_fail(EINVAL);
  /* XDNA mode: a buffer allocated in another bank than the argument's is
   * refused (real XRT warns and clones it into the connected bank, a hidden
   * copy tandem must never cause). Imported buffers have no bank. */
  if (bo != NULL && dev->mode == EMU_MODE_XDNA && bo->flags_type != EMU_BO_IMPORTED &&
      bo->group != emu_arg_bank(r->kernel->desc, (uint32_t)index))
    return emu_fail(EXDEV);

  pthread_mutex_lock(&dev->mu);
  if (bo != NULL && bo->user_freed) {
    pthread_mutex_unlock(&dev->mu);
    return emu_fail(EINVAL);
  }
  emu_run_arg_t *slot = &r->args[index];
  emu_bo_t *old = slot->bo;
  if (bo != NULL) bo->refs++;
  slot->bo = bo;
  slot->value = value;
  slot->set = true;
  const bool dead = old != NULL && emu_bo_put_locked(old);
  pthread_mutex_unlock(&dev->mu);
  if (dead) emu_bo_destroy(old);
  return 0;
}

EMU_EXPORT int xrtRunStart(xrtRunHandle rhdl) {
  emu_run_t *r = run_from(rhdl);
  if (r == NULL) return emu_fail(EINVAL);
  emu_device_t *dev = r->kernel->dev;
  pthread_mutex_lock(&dev->mu);
  int err = 0;
  if (dev->closing) err = ENODEV;
  else if (run_in_flight(r)) err = EBUSY;
  /* PLAIN mode: every argument must be set. XDNA mode, as XRT: an unset
   * argument reads as zero (a scalar 0, a buffer NULL with size 0). */
  for (uint32_t i = 0; err == 0 && dev->mode == EMU_MODE_PLAIN && i < r->nargs; i++)
    if (!r->args[i].set) err = EINVAL;
  if (err != 0) {
    pthread_mutex_unlock(&dev->mu);
    return emu_fail(err);
  }
  for (uint32_t i = 0; i < r->nargs; i++) {
    emu_bo_t *bo = r->args[i].bo;
    r->exec_bos[i] = bo;
    if (bo != NULL) {
      bo->refs++;
      bo->busy++;
      r->exec[i] = (tandem_emu_arg_t){.ptr = bo->device_side, .size = bo->size, .value = 0};
    } else {
      r->exec[i] = (tandem_emu_arg_t){.ptr = NULL, .size = 0, .value = r->args[i].value};
    }
  }
  r->state = ERT_CMD_STATE_QUEUED;
  r->abort_requested = false;
  r->next = NULL;
  if (dev->tail != NULL) dev->tail->next = r;
  else dev->head = r;
  dev->tail = r;
  pthread_cond_signal(&dev->work_cv);
  pthread_mutex_unlock(&dev->mu);
  return 0;
}

/* Waits until |r| is final or |deadline| (NULL: forever) passes; lock held. */
static enum ert_cmd_state wait_locked(emu_run_t *r, const struct timespec *deadline) {
  emu_device_t *dev = r->kernel->dev;
  while (run_in_flight(r)) {
    if (deadline == NULL) pthread_cond_wait(&dev->done_cv, &dev->mu);
    else if (pthread_cond_timedwait(&dev->done_cv, &dev->mu, deadline) == ETIMEDOUT) break;
  }
  return r->state;
}

/* Like XRT: the final state, or ERT_CMD_STATE_TIMEOUT when |timeout_ms|
 * passes first (xrtRunState then tells a run still going from one the driver
 * ended in a final TIMEOUT). timeout_ms 0 waits without limit, as XRT does. A
 * run never started returns ERT_CMD_STATE_NEW at once. */
EMU_EXPORT enum ert_cmd_state xrtRunWaitFor(xrtRunHandle rhdl, unsigned int timeout_ms) {
  emu_run_t *r = run_from(rhdl);
  if (r == NULL) {
    errno = EINVAL;
    return ERT_CMD_STATE_ABORT;
  }
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += (time_t)(timeout_ms / 1000u);
  deadline.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  emu_device_t *dev = r->kernel->dev;
  pthread_mutex_lock(&dev->mu);
  enum ert_cmd_state s = wait_locked(r, timeout_ms == 0 ? NULL : &deadline);
  if (run_in_flight(r)) s = ERT_CMD_STATE_TIMEOUT;
  pthread_mutex_unlock(&dev->mu);
  return s;
}

/* xrt::run::abort sends an ERT_ABORT command through the run's queue
 * (XRT@963c58ee src/runtime_src/core/common/api/xrt_kernel.cpp:3100-3124),
 * which amdxdna's plugin hands to the driver unchanged (amd/xdna-driver@856409ca
 * src/shim/hwq.cpp:304-313) and both amdxdna drivers refuse: they execute
 * only ERT_START_CU and ERT_START_NPU (and chains, preemption), anything else
 * is "Unsupported op", -EOPNOTSUPP (drivers/accel/amdxdna/aie2_message.c:
 * 915-944, 960-982; out of tree src/driver/amdxdna/aie2_message.c). The
 * plugin's ioctl wrapper throws that errno (src/shim/host/platform_host.cpp:
 * 72-76). So in the XDNA mode an abort of a run in flight is refused. */
static bool abort_refused(const emu_run_t *r) {
  return r->kernel->dev->mode == EMU_MODE_XDNA && run_in_flight(r);
}

/* Not XRT's C API (xrt::run::abort is C++): asks a queued or running run to
 * end in ERT_CMD_STATE_ABORT. A queued one never runs; a running kernel
 * function cannot be stopped on the CPU, so it ends in ABORT when it returns.
 * 0, or -EINVAL for a bad handle; a run not in flight is left alone. The
 * XDNA mode refuses it for a run in flight (-EOPNOTSUPP, abort_refused). */
EMU_EXPORT int tandemEmuRunAbort(xrtRunHandle rhdl) {
  emu_run_t *r = run_from(rhdl);
  if (r == NULL) return emu_fail(EINVAL);
  emu_device_t *dev = r->kernel->dev;
  pthread_mutex_lock(&dev->mu);
  if (abort_refused(r)) {
    pthread_mutex_unlock(&dev->mu);
    return emu_fail(EOPNOTSUPP);
  }
  if (run_in_flight(r)) r->abort_requested = true;
  pthread_cond_broadcast(&dev->work_cv); /* a run in its delay ends now */
  pthread_mutex_unlock(&dev->mu);
  return 0;
}

EMU_EXPORT enum ert_cmd_state xrtRunWait(xrtRunHandle rhdl) { return xrtRunWaitFor(rhdl, 0); }

EMU_EXPORT enum ert_cmd_state xrtRunState(xrtRunHandle rhdl) {
  emu_run_t *r = run_from(rhdl);
  if (r == NULL) {
    errno = EINVAL;
    return ERT_CMD_STATE_ABORT;
  }
  emu_device_t *dev = r->kernel->dev;
  pthread_mutex_lock(&dev->mu);
  const enum ert_cmd_state s = reported_state_locked(r);
  pthread_mutex_unlock(&dev->mu);
  return s;
}

/* Runs closed while in flight, process-wide (tandemEmuInflightCloses). */
static _Atomic unsigned emu_inflight_closes;

/* Not XRT: how many runs were closed (xrtRunClose, tandemBridgeRunClose)
 * while still in flight since the emulator was loaded. XRT treats that as
 * fatal (below); a test reads this to assert tandem never does it. */
EMU_EXPORT unsigned tandemEmuInflightCloses(void) { return emu_inflight_closes; }

/* Destroying a run whose command is still in progress is fatal in XRT:
 * ~run_impl calls std::abort() ("xrt::run destructed while command is still
 * in progress", XRT@963c58ee src/runtime_src/core/common/api/xrt_kernel.cpp:
 * 2744-2754), and xrtRunClose destroys it. The emulator counts it
 * (tandemEmuInflightCloses), stops the process the same way when
 * TANDEM_EMU_FATAL_CLOSE=1, and otherwise waits for the run before freeing
 * it, so that nothing is freed under running work. */
EMU_EXPORT int xrtRunClose(xrtRunHandle rhdl) {
  emu_run_t *r = run_from(rhdl);
  if (r == NULL) return emu_fail(EINVAL);
  emu_device_t *dev = r->kernel->dev;
  pthread_mutex_lock(&dev->mu);
  if (run_in_flight(r)) {
    emu_inflight_closes++;
    const char *fatal = getenv("TANDEM_EMU_FATAL_CLOSE");
    if (fatal != NULL && strcmp(fatal, "1") == 0) {
      fprintf(stderr, "tandem emulated NPU: xrt::run destructed while command is still in "
                      "progress (XRT calls std::abort() here)\n");
      abort();
    }
  }
  wait_locked(r, NULL);
  r->magic = EMU_MAGIC_DEAD;
  emu_bo_t *dead = NULL;
  for (uint32_t i = 0; i < r->nargs; i++) {
    emu_bo_t *bo = r->args[i].bo;
    if (bo != NULL && emu_bo_put_locked(bo)) {
      bo->next_dead = dead;
      dead = bo;
    }
  }
  /* The BOs still hold the device, so only the kernel can be its last holder
   * when no BO died; otherwise the last BO destroyed releases it. */
  const bool last = kernel_put_locked(r->kernel);
  pthread_mutex_unlock(&dev->mu);
  while (dead != NULL) {
    emu_bo_t *next = dead->next_dead;
    emu_bo_destroy(dead);
    dead = next;
  }
  if (last) emu_device_destroy(dev);
  free(r->args);
  free(r->exec);
  free(r->exec_bos);
  free(r);
  return 0;
}

/* ---- the bridge's tier 1 (internal/xrt_bridge_abi.h), XDNA mode ------- */

static emu_context_t *context_from(void *h) {
  emu_context_t *c = h;
  if (c == NULL || c->magic != EMU_MAGIC_CONTEXT) return NULL;
  return c;
}

/* The XRT whose amdxdna plugin the XDNA mode follows: 2.17 (register,
 * hardware contexts; no full-ELF flow, so no tier 2). */
EMU_EXPORT unsigned tandemBridgeXrtVersion(void) { return (2u << 16) + 17u; }

EMU_EXPORT int tandemBridgeContextOpen(void *device, const char *xclbin_path, void **out_context,
                                       char *msg, size_t cap) {
  if (out_context != NULL) *out_context = NULL;
  emu_device_t *dev = emu_device_from(device);
  if (dev == NULL || xclbin_path == NULL || out_context == NULL) {
    emu_tell(msg, cap, "invalid device handle or path");
    return emu_fail(EINVAL);
  }
  if (dev->mode != EMU_MODE_XDNA) {
    emu_tell(msg, cap, "the emulated NPU's PLAIN mode (FPGA-style XRT) has no hardware contexts");
    return emu_fail(ENOTSUP);
  }
  xrtXclbinHandle xh = xrtXclbinAllocFilename(xclbin_path);
  if (xh == NULL) {
    const int err = errno;
    emu_tell(msg, cap, err == EINVAL ? "not an emulated xclbin" : strerror(err));
    return emu_fail(err);
  }
  emu_context_t *c = calloc(1, sizeof *c);
  int rc = c != NULL ? emu_open_library(emu_xclbin_from(xh), &c->lib, &c->kernels, &c->kernel_count)
                     : emu_fail(ENOMEM);
  xrtXclbinFreeHandle(xh);
  if (rc != 0) {
    emu_tell(msg, cap,
             rc == -EACCES ? "the kernels library it names is not one the emulated NPU may load"
                           : strerror(-rc));
    free(c);
    return rc;
  }
  pthread_mutex_lock(&dev->mu);
  if (dev->closing) {
    rc = -ENODEV;
    emu_tell(msg, cap, "the device is closing");
  } else if (dev->contexts >= dev->max_contexts) {
    /* The NPU is full: amdxdna fails the context's creation with ENODEV,
     * the column solver's answer when no partition can take it
     * (amd/xdna-driver@856409ca drivers/accel/amdxdna/aie2_solver.c:208-209,
     * 264-265), which the plugin throws (src/shim/host/platform_host.cpp:
     * 72-76). That the firmware's hwctx_limit is refused with the same errno
     * is this model's reading, not checked on hardware. */
    rc = -ENODEV;
    if (msg != NULL && cap > 0)
      snprintf(msg, cap,
               "all %u hardware contexts of the emulated NPU are in use (the firmware's limit; "
               "TANDEM_EMU_NPU, TANDEM_EMU_MAX_CONTEXTS)",
               dev->max_contexts);
  } else if ((c->slot = emu_slot_alloc_locked(dev)) == 0) {
    rc = -ENODEV;
    emu_tell(msg, cap, "no free hardware-context handle");
  } else {
    dev->contexts++;
    emu_device_get_locked(dev);
  }
  pthread_mutex_unlock(&dev->mu);
  if (rc != 0) {
    dlclose(c->lib);
    free(c);
    return emu_fail(-rc);
  }
  c->magic = EMU_MAGIC_CONTEXT;
  c->dev = dev;
  c->refs = 1;
  *out_context = c;
  return 0;
}

EMU_EXPORT int tandemBridgeContextClose(void *context) {
  emu_context_t *c = context_from(context);
  if (c == NULL) return emu_fail(EINVAL);
  emu_device_t *dev = c->dev;
  pthread_mutex_lock(&dev->mu);
  if (c->user_closed) {
    pthread_mutex_unlock(&dev->mu);
    return emu_fail(EINVAL);
  }
  c->user_closed = true;
  const bool last = context_put_locked(c);
  pthread_mutex_unlock(&dev->mu);
  if (last) emu_device_destroy(dev);
  return 0;
}

/* A kernel of the context's own image; it costs no context of its own. */
EMU_EXPORT int tandemBridgeKernelOpen(void *context, const char *name, void **out_kernel, char *msg,
                                      size_t cap) {
  if (out_kernel != NULL) *out_kernel = NULL;
  emu_context_t *c = context_from(context);
  if (c == NULL || name == NULL || out_kernel == NULL) {
    emu_tell(msg, cap, "invalid context handle or name");
    return emu_fail(EINVAL);
  }
  const tandem_emu_kernel_t *desc = NULL;
  for (uint32_t i = 0; i < c->kernel_count && desc == NULL; i++)
    if (strcmp(c->kernels[i].name, name) == 0) desc = &c->kernels[i];
  if (desc == NULL) {
    emu_tell(msg, cap, "no such kernel in the context's xclbin");
    return emu_fail(ENOENT);
  }
  emu_kernel_t *k = calloc(1, sizeof *k);
  if (k == NULL) {
    emu_tell(msg, cap, "out of memory");
    return emu_fail(ENOMEM);
  }
  emu_device_t *dev = c->dev;
  pthread_mutex_lock(&dev->mu);
  if (dev->closing || c->user_closed) {
    pthread_mutex_unlock(&dev->mu);
    free(k);
    emu_tell(msg, cap, "the device or the context is closing");
    return emu_fail(ENODEV);
  }
  k->magic = EMU_MAGIC_KERNEL;
  k->dev = dev;
  k->ctx = c;
  k->refs = 1;
  k->desc = desc;
  k->nargs = (uint32_t)strlen(desc->arg_kinds);
  k->slot = c->slot;
  c->refs++;
  emu_device_get_locked(dev);
  pthread_mutex_unlock(&dev->mu);
  *out_kernel = k;
  return 0;
}

EMU_EXPORT int tandemBridgeKernelClose(void *kernel) { return xrtKernelClose(kernel); }

/* As the real bridge: XRT's group id as it is (slot << 16 | bank; a
 * scalar's bank field 0xffff), a negative errno for a bad index. */
EMU_EXPORT int tandemBridgeKernelGroup(void *kernel, int argno) {
  const int g = xrtKernelArgGroupId(kernel, argno);
  return g >= 0 ? g : -EINVAL;
}

EMU_EXPORT int tandemBridgeRunOpen(void *kernel, void **out_run, char *msg, size_t cap) {
  if (out_run == NULL) return emu_fail(EINVAL);
  *out_run = xrtRunOpen(kernel);
  if (*out_run != NULL) return 0;
  const int err = errno != 0 ? errno : EINVAL;
  emu_tell(msg, cap, strerror(err));
  return emu_fail(err);
}

/* Argument |index| of |run| when it is of |kind|, else NULL with a reason. */
static emu_run_t *run_arg_of(void *run, int index, char kind, char *msg, size_t cap) {
  emu_run_t *r = run_from(run);
  if (r == NULL || index < 0 || (uint32_t)index >= r->nargs) {
    emu_tell(msg, cap, "invalid run handle or argument index");
    return NULL;
  }
  if (r->kernel->desc->arg_kinds[index] != kind) {
    emu_tell(msg, cap,
             kind == TANDEM_EMU_ARG_BO    ? "the argument is not a buffer"
             : kind == TANDEM_EMU_ARG_U32 ? "the argument is not a 32-bit scalar"
                                          : "the argument is not a 64-bit scalar");
    return NULL;
  }
  return r;
}

static int set_arg_result(int rc, char *msg, size_t cap) {
  if (rc != 0)
    emu_tell(msg, cap,
             rc == -EXDEV ? "the buffer is in another bank than the argument's" : strerror(-rc));
  return rc;
}

EMU_EXPORT int tandemBridgeRunSetBuffer(void *run, int index, void *bo, char *msg, size_t cap) {
  emu_run_t *r = run_arg_of(run, index, TANDEM_EMU_ARG_BO, msg, cap);
  if (r == NULL) return emu_fail(EINVAL);
  return set_arg_result(xrtRunSetArg(r, index, (xrtBufferHandle)bo), msg, cap);
}

EMU_EXPORT int tandemBridgeRunSetU32(void *run, int index, uint32_t value, char *msg, size_t cap) {
  emu_run_t *r = run_arg_of(run, index, TANDEM_EMU_ARG_U32, msg, cap);
  if (r == NULL) return emu_fail(EINVAL);
  return set_arg_result(xrtRunSetArg(r, index, (unsigned int)value), msg, cap);
}

EMU_EXPORT int tandemBridgeRunSetU64(void *run, int index, uint64_t value, char *msg, size_t cap) {
  emu_run_t *r = run_arg_of(run, index, TANDEM_EMU_ARG_U64, msg, cap);
  if (r == NULL) return emu_fail(EINVAL);
  return set_arg_result(xrtRunSetArg(r, index, value), msg, cap);
}

EMU_EXPORT int tandemBridgeRunStart(void *run, char *msg, size_t cap) {
  const int rc = xrtRunStart(run);
  if (rc != 0) emu_tell(msg, cap, rc == -EBUSY ? "the run is still in flight" : strerror(-rc));
  return rc;
}

EMU_EXPORT int tandemBridgeRunWait(void *run, unsigned timeout_ms, char *msg, size_t cap) {
  emu_run_t *r = run_from(run);
  if (r == NULL) {
    emu_tell(msg, cap, "invalid run handle");
    return emu_fail(EINVAL);
  }
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += (time_t)(timeout_ms / 1000u);
  deadline.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  emu_device_t *dev = r->kernel->dev;
  pthread_mutex_lock(&dev->mu);
  /* The run's own state: final, or the one it is still in (NEW on XDNA). */
  wait_locked(r, timeout_ms == 0 ? NULL : &deadline);
  const enum ert_cmd_state s = reported_state_locked(r);
  pthread_mutex_unlock(&dev->mu);
  return (int)s;
}

/* xrt::run::abort on amdxdna: a run in flight is refused with -EOPNOTSUPP
 * and "Unsupported op" (abort_refused says where that comes from); a run
 * not in flight answers its state. (Outside the XDNA mode, which has no
 * tier 1, it would abort synchronously.) */
EMU_EXPORT int tandemBridgeRunAbort(void *run, char *msg, size_t cap) {
  emu_run_t *r = run_from(run);
  if (r == NULL) {
    emu_tell(msg, cap, "invalid run handle");
    return emu_fail(EINVAL);
  }
  emu_device_t *dev = r->kernel->dev;
  pthread_mutex_lock(&dev->mu);
  if (abort_refused(r)) {
    pthread_mutex_unlock(&dev->mu);
    emu_tell(msg, cap,
             "Unsupported op 4 (ERT_ABORT): amdxdna executes only ERT_START_CU and ERT_START_NPU "
             "commands");
    return emu_fail(EOPNOTSUPP);
  }
  if (run_in_flight(r)) {
    r->abort_requested = true;
    pthread_cond_broadcast(&dev->work_cv);
  }
  wait_locked(r, NULL);
  const enum ert_cmd_state s = reported_state_locked(r);
  pthread_mutex_unlock(&dev->mu);
  return (int)s;
}

EMU_EXPORT int tandemBridgeRunClose(void *run) { return xrtRunClose(run); }
