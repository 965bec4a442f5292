/* SPDX-License-Identifier: MIT */
/*
 * xrt_npu.c — the NPU backend over XRT's C API (core/npu_backend.h).
 *
 * One code path serves the system's XRT and tandem's emulated NPU: only the
 * library behind tandem_xrt_api_t differs (xrt_api.c). Buffer objects are
 * allocated in memory group 0 with normal flags; kernels open through
 * xrtPLKernelOpen (the XRT 2.13 seam, see xrt_api.h). A run that outlives the
 * watchdog is remembered and waited for before its handle (and, through core,
 * its buffers) can go: nothing is freed under a running kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "backends/xrt/xrt_api.h"
#include "core/npu_backend.h"

#define TANDEM_DMA_BUF_MAGIC 0x444d4142 /* "DMAB", from linux/magic.h */

typedef struct tandem_xrt_npu {
  tandem__npu_t base;
  tandem_xrt_api_t api;
  xrtDeviceHandle device;
} tandem_xrt_npu_t;

typedef struct tandem_xrt_program {
  xrtXclbinHandle xclbin;
  xrtKernelHandle kernel;
  xrtBufferHandle instructions; /* or NULL */
  uint32_t instruction_words;
  uint32_t binding_count, scalar_count;
  char name[128];
} tandem_xrt_program_t;

typedef struct tandem_xrt_run {
  xrtRunHandle run;
  tandem_xrt_program_t *program;
  bool still_running; /* the watchdog fired: wait before closing */
} tandem_xrt_run_t;

static tandem_xrt_npu_t *tandem_xrt_cast(tandem__npu_t *base) { return (tandem_xrt_npu_t *)base; }

/* Why an XRT C call failed, in words. XRT's C functions return a negative
 * errno (or the errno value) where they return an int; handle-returning ones
 * only set errno, and only for XRT's own errors (any other exception is just
 * printed). So: the return code when there is one, else errno — which every
 * caller clears right before the call, so it is never a stale one — else the
 * plain fact that XRT gave no reason here. |rc| is 0 for handle calls. */
static const char *tandem_xrt_why(int rc, int err, char *buf, size_t size) {
  int e = rc < -1 ? -rc : rc > 0 ? rc : err;
  if (e == 0) return "XRT gave no reason; its own message, if any, is on stderr";
  snprintf(buf, size, "%s", strerror(e));
  return buf;
}
#define TANDEM_XRT_WHY(rc) tandem_xrt_why((rc), errno, (char[96]){0}, 96)

/* xrt_fault.c: numbered fault injection over the API table (core/fault.h). */
void tandem_xrt_fault_wrap(tandem_xrt_api_t *api);
void tandem_xrt_fault_forget(tandem_xrt_api_t *api);
/* xrt_nodes.c (the backend's one user of libdrm). */
void tandem_xrt_device_nodes(tandem__npu_t *npu, tandem_npu_info_t *info);

static void tandem_xrt_destroy(tandem__npu_t *base) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  if (n->device) n->api.xrtDeviceClose(n->device);
  tandem_xrt_fault_forget(&n->api);
  tandem_xrt_api_unload(&n->api);
  free(n);
}

static tandem_status_t tandem_xrt_bo_create(tandem__npu_t *base, uint64_t size, void **out_bo,
                                            void **out_host) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  *out_bo = *out_host = NULL;
  errno = 0;
  xrtBufferHandle bo = n->api.xrtBOAlloc(n->device, size, 0, 0);
  if (!bo)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "xrtBOAlloc of %llu bytes failed: %s",
                       (unsigned long long)size, TANDEM_XRT_WHY(0));
  errno = 0;
  void *host = n->api.xrtBOMap(bo);
  if (!host) {
    const char *why = TANDEM_XRT_WHY(0);
    char text[96];
    snprintf(text, sizeof text, "%s", why);
    n->api.xrtBOFree(bo);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "xrtBOMap of a new %llu-byte buffer failed: %s",
                       (unsigned long long)size, text);
  }
  memset(host, 0, size);
  int rc = n->api.xrtBOSync(bo, XCL_BO_SYNC_BO_TO_DEVICE, size, 0);
  if (rc != 0) {
    n->api.xrtBOFree(bo);
    return TANDEM_FAIL(TANDEM_ERROR_IO, "xrtBOSync (zero fill of a new buffer) failed: %d", rc);
  }
  *out_bo = bo;
  *out_host = host;
  return TANDEM_OK;
}

static tandem_status_t tandem_xrt_bo_export(tandem__npu_t *base, void *bo, int *out_fd,
                                            bool *out_is_dmabuf) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  *out_fd = -1;
  *out_is_dmabuf = false;
  errno = 0;
  xclBufferExportHandle owned = n->api.xrtBOExport(bo);
  if (owned == XRT_NULL_BO_EXPORT || owned < 0)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "xrtBOExport failed: %s", TANDEM_XRT_WHY(0));
  /* XRT caches the exported fd in the buffer and closes it when the buffer
   * is freed (xrt_bo.h: "disposed of when the exporting buffer is
   * destructed"), so the caller gets a duplicate of its own to close. */
  int fd = fcntl(owned, F_DUPFD_CLOEXEC, 0);
  if (fd < 0)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "duplicating the fd XRT exported: %s",
                       strerror(errno));
  struct statfs fs;
  *out_is_dmabuf = fstatfs(fd, &fs) == 0 && (uint64_t)fs.f_type == TANDEM_DMA_BUF_MAGIC;
  *out_fd = fd;
  return TANDEM_OK;
}

static tandem_status_t tandem_xrt_bo_import(tandem__npu_t *base, int fd, void **out_bo,
                                            void **out_host) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  *out_bo = *out_host = NULL;
  errno = 0;
  xrtBufferHandle bo = n->api.xrtBOImport(n->device, fd);
  if (!bo)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "xrtBOImport of fd %d failed: %s", fd,
                       TANDEM_XRT_WHY(0));
  errno = 0;
  void *host = n->api.xrtBOMap(bo);
  if (!host) {
    char text[96];
    snprintf(text, sizeof text, "%s", TANDEM_XRT_WHY(0));
    n->api.xrtBOFree(bo);
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "xrtBOMap of an imported buffer failed: %s",
                       text);
  }
  *out_bo = bo;
  *out_host = host;
  return TANDEM_OK;
}

static void tandem_xrt_bo_destroy(tandem__npu_t *base, void *bo) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  if (bo) n->api.xrtBOFree(bo);
}

static tandem_status_t tandem_xrt_bo_sync(tandem__npu_t *base, void *bo, bool to_device,
                                          uint64_t offset, uint64_t size) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  int rc = n->api.xrtBOSync(bo, to_device ? XCL_BO_SYNC_BO_TO_DEVICE : XCL_BO_SYNC_BO_FROM_DEVICE,
                            size, offset);
  /* IO, as the zero-fill's sync: one failed xrtBOSync, one code. */
  if (rc != 0)
    return TANDEM_FAIL(TANDEM_ERROR_IO, "xrtBOSync %s of bytes %llu..%llu failed: %d",
                       to_device ? "to device" : "from device", (unsigned long long)offset,
                       (unsigned long long)(offset + size), rc);
  return TANDEM_OK;
}

static void tandem_xrt_program_destroy(tandem__npu_t *base, void *native) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  tandem_xrt_program_t *p = native;
  if (!p) return;
  if (p->instructions) n->api.xrtBOFree(p->instructions);
  if (p->kernel) n->api.xrtKernelClose(p->kernel);
  if (p->xclbin) n->api.xrtXclbinFreeHandle(p->xclbin);
  free(p);
}

/* What an XRT call that returned no handle (or an error) meant, by errno:
 * the input is refused (INVALID_KERNEL), memory ran out, or I/O failed. */
static tandem_status_t tandem_xrt_errno_code(int e) {
  switch (e) {
    case EINVAL:
    case ENOENT:
    case EACCES:
    case EBUSY: return TANDEM_ERROR_INVALID_KERNEL;
    case ENOMEM: return TANDEM_ERROR_OUT_OF_MEMORY;
    default: return TANDEM_ERROR_IO;
  }
}

static tandem_status_t tandem_xrt_program_create(tandem__npu_t *base,
                                                 const tandem_npu_program_desc_t *d,
                                                 const char *name, void **out) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  *out = NULL;
  struct stat st;
  if (stat(d->xclbin_path, &st) != 0 || access(d->xclbin_path, R_OK) != 0)
    return TANDEM_FAIL(TANDEM_ERROR_IO, "NPU program '%s': cannot read xclbin '%s': %s", name,
                       d->xclbin_path, strerror(errno));
  /* A directory is no xclbin, and a FIFO would block the open (issue 11). */
  if (!S_ISREG(st.st_mode))
    return TANDEM_FAIL(TANDEM_ERROR_IO, "NPU program '%s': xclbin '%s' is not a regular file",
                       name, d->xclbin_path);
  tandem_xrt_program_t *p = calloc(1, sizeof *p);
  if (!p) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating an NPU program");
  snprintf(p->name, sizeof p->name, "%s", name);
  p->binding_count = d->binding_count;
  p->scalar_count = d->scalar_count;
  tandem_status_t s = TANDEM_OK;
  xuid_t uuid;
  p->xclbin = n->api.xrtXclbinAllocFilename(d->xclbin_path);
  /* NULL with EINVAL: not an xclbin; anything else: reading it failed. */
  if (!p->xclbin)
    s = TANDEM_FAIL(errno == EINVAL   ? TANDEM_ERROR_INVALID_KERNEL
                    : errno == ENOMEM ? TANDEM_ERROR_OUT_OF_MEMORY
                                      : TANDEM_ERROR_IO,
                    "NPU program '%s': '%s' %s (%s)", name, d->xclbin_path,
                    errno == EINVAL ? "is not an xclbin this NPU accepts" : "could not be read",
                    strerror(errno));
  if (s == TANDEM_OK && n->api.xrtDeviceLoadXclbinHandle(n->device, p->xclbin) != 0)
    s = TANDEM_FAIL(tandem_xrt_errno_code(errno), "NPU program '%s': loading '%s' failed (%s)%s",
                    name, d->xclbin_path, strerror(errno),
                    errno == EACCES && base->emulated
                        ? "; the emulated NPU loads only its own kernels library and those "
                          "listed in TANDEM_EMU_KERNELS"
                        : "");
  if (s == TANDEM_OK && n->api.xrtXclbinGetUUID(p->xclbin, uuid) != 0)
    s = TANDEM_FAIL(tandem_xrt_errno_code(errno), "NPU program '%s': the xclbin's UUID: %s", name,
                    strerror(errno));
  if (s == TANDEM_OK) {
    p->kernel = n->api.xrtPLKernelOpen(n->device, uuid, d->kernel_name);
    if (!p->kernel)
      s = TANDEM_FAIL(tandem_xrt_errno_code(errno),
                      "NPU program '%s': kernel '%s' could not be opened from '%s' (%s)", name,
                      d->kernel_name, d->xclbin_path, strerror(errno));
  }
  /* Arguments: [instructions, words], buffers, scalars (tandem.h). */
  int first = d->instructions ? 2 : 0;
  for (uint32_t i = 0; s == TANDEM_OK && i < d->binding_count; i++) {
    int arg = first + (int)i;
    if (n->api.xrtKernelArgGroupId(p->kernel, arg) < 0)
      s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                      "binding %u of NPU program '%s': kernel argument %d is not a buffer (or "
                      "does not exist)",
                      i, name, arg);
  }
  for (uint32_t i = 0; s == TANDEM_OK && i < d->scalar_count; i++) {
    int arg = first + (int)d->binding_count + (int)i;
    if (n->api.xrtKernelArgGroupId(p->kernel, arg) >= 0)
      s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                      "scalar %u of NPU program '%s': kernel argument %d is a buffer, the "
                      "contract says scalar",
                      i, name, arg);
  }
  /* The scalar count (issue 11): XRT's C API cannot list a kernel's
   * arguments, so a probe run must accept every declared scalar and refuse the
   * argument after the last one; otherwise too many scalars surfaced only at
   * prepare, and too few as a bare failure of the run. */
  if (s == TANDEM_OK) {
    int next = first + (int)d->binding_count + (int)d->scalar_count;
    xrtRunHandle probe = n->api.xrtRunOpen(p->kernel);
    if (!probe)
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "NPU program '%s': xrtRunOpen failed (%s)",
                      name, strerror(errno));
    for (uint32_t i = 0; s == TANDEM_OK && i < d->scalar_count; i++)
      if (n->api.xrtRunSetArg(probe, first + (int)d->binding_count + (int)i, 0u) != 0)
        s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                        "NPU program '%s': the contract has %u scalars but kernel '%s' has no "
                        "argument %d for scalar %u (it takes fewer)",
                        name, d->scalar_count, d->kernel_name,
                        first + (int)d->binding_count + (int)i, i);
    if (s == TANDEM_OK && (n->api.xrtKernelArgGroupId(p->kernel, next) >= 0 ||
                           n->api.xrtRunSetArg(probe, next, 0u) == 0))
      s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                      "NPU program '%s': kernel '%s' takes more arguments than the contract's "
                      "%u bindings and %u scalars (argument %d exists)",
                      name, d->kernel_name, d->binding_count, d->scalar_count, next);
    if (probe) n->api.xrtRunClose(probe);
  }
  if (s == TANDEM_OK && d->instructions) {
    void *host;
    s = tandem_xrt_bo_create(base, d->instruction_bytes, (void **)&p->instructions, &host);
    if (s == TANDEM_OK) {
      memcpy(host, d->instructions, d->instruction_bytes);
      s = tandem_xrt_bo_sync(base, p->instructions, true, 0, d->instruction_bytes);
      p->instruction_words = (uint32_t)(d->instruction_bytes / 4);
    }
    if (s != TANDEM_OK)
      s = tandem__annotate(s, "NPU program '%s': its %zu-byte instruction stream", name,
                           d->instruction_bytes);
  }
  if (s != TANDEM_OK) {
    tandem_xrt_program_destroy(base, p);
    return s;
  }
  *out = p;
  return TANDEM_OK;
}

static void tandem_xrt_run_destroy(tandem__npu_t *base, void *native) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  tandem_xrt_run_t *r = native;
  if (!r) return;
  if (r->run) {
    if (r->still_running) n->api.xrtRunWait(r->run);
    n->api.xrtRunClose(r->run);
  }
  free(r);
}

static tandem_status_t tandem_xrt_run_create(tandem__npu_t *base, void *program, void *const *bos,
                                             uint32_t bo_count, const uint32_t *scalars,
                                             uint32_t scalar_count, void **out) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  tandem_xrt_program_t *p = program;
  *out = NULL;
  tandem_xrt_run_t *r = calloc(1, sizeof *r);
  if (!r) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating an NPU run");
  r->program = p;
  r->run = n->api.xrtRunOpen(p->kernel);
  tandem_status_t s = TANDEM_OK;
  if (!r->run)
    s = TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "xrtRunOpen of '%s' failed: %s", p->name,
                    strerror(errno));
  int arg = 0;
  if (s == TANDEM_OK && p->instructions) {
    if (n->api.xrtRunSetArg(r->run, arg++, p->instructions) != 0 ||
        n->api.xrtRunSetArg(r->run, arg++, (unsigned int)p->instruction_words) != 0)
      s = TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "setting the instruction arguments of '%s'",
                      p->name);
  }
  for (uint32_t i = 0; s == TANDEM_OK && i < bo_count; i++, arg++)
    if (n->api.xrtRunSetArg(r->run, arg, (xrtBufferHandle)bos[i]) != 0)
      s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT, "binding %u of '%s': xrtRunSetArg(%d) refused it",
                      i, p->name, arg);
  for (uint32_t i = 0; s == TANDEM_OK && i < scalar_count; i++, arg++)
    if (n->api.xrtRunSetArg(r->run, arg, (unsigned int)scalars[i]) != 0)
      s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT, "scalar %u of '%s': xrtRunSetArg(%d) refused it", i,
                      p->name, arg);
  if (s != TANDEM_OK) {
    tandem_xrt_run_destroy(base, r);
    return s;
  }
  *out = r;
  return TANDEM_OK;
}

static tandem_status_t tandem_xrt_run_execute(tandem__npu_t *base, void *native,
                                              uint32_t timeout_ms) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  tandem_xrt_run_t *r = native;
  if (r->still_running) {
    /* The watchdog fired on an earlier use; that run must end first. */
    n->api.xrtRunWait(r->run);
    r->still_running = false;
  }
  int rc = n->api.xrtRunStart(r->run);
  if (rc != 0)
    return TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "xrtRunStart of '%s' failed: %d", r->program->name,
                       rc);
  enum ert_cmd_state state = n->api.xrtRunWaitFor(r->run, timeout_ms);
  if (state == ERT_CMD_STATE_COMPLETED) return TANDEM_OK;
  if (state == ERT_CMD_STATE_NEW || state == ERT_CMD_STATE_QUEUED ||
      state == ERT_CMD_STATE_RUNNING || state == ERT_CMD_STATE_SUBMITTED ||
      state == ERT_CMD_STATE_TIMEOUT) {
    r->still_running = true;
    return TANDEM_FAIL(TANDEM_ERROR_TIMEOUT,
                       "NPU run of '%s' did not finish within the %u ms watchdog", r->program->name,
                       timeout_ms);
  }
  return TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "NPU run of '%s' ended in state %d (%s)",
                     r->program->name, (int)state,
                     state == ERT_CMD_STATE_ERROR ? "ERROR" : "not COMPLETED");
}

static const tandem__npu_vtable_t tandem_xrt_npu_vtable = {
    .destroy = tandem_xrt_destroy,
    .bo_create = tandem_xrt_bo_create,
    .bo_export = tandem_xrt_bo_export,
    .bo_import = tandem_xrt_bo_import,
    .bo_destroy = tandem_xrt_bo_destroy,
    .bo_sync = tandem_xrt_bo_sync,
    .program_create = tandem_xrt_program_create,
    .program_destroy = tandem_xrt_program_destroy,
    .run_create = tandem_xrt_run_create,
    .run_execute = tandem_xrt_run_execute,
    .run_destroy = tandem_xrt_run_destroy,
    .device_nodes = tandem_xrt_device_nodes,
};

/* Opens device options->npu_index through the real XRT or the emulated NPU. */
static tandem_status_t tandem_xrt_npu_open(const tandem_runtime_options_t *options, bool emulated,
                                           tandem__npu_t **out_npu) {
  *out_npu = NULL;
  tandem_xrt_npu_t *n = calloc(1, sizeof *n);
  if (!n) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating the NPU device");
  n->base.vtable = &tandem_xrt_npu_vtable;
  const char *library = options->npu_library;
  if (emulated && !library) library = getenv("TANDEM_NPU_LIBRARY");
  tandem_status_t s =
      tandem_xrt_api_load(emulated ? TANDEM_XRT_EMULATED : TANDEM_XRT_REAL, library, &n->api);
  if (s != TANDEM_OK) {
    free(n);
    return s;
  }
  tandem_xrt_fault_wrap(&n->api);
  n->device = n->api.xrtDeviceOpen(options->npu_index);
  if (!n->device) {
    int err = errno;
    tandem_xrt_fault_forget(&n->api);
    tandem_xrt_api_unload(&n->api);
    free(n);
    return TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE, "no NPU: %s has no device %u (%s)",
                       emulated ? "the emulated NPU" : "XRT", options->npu_index, strerror(err));
  }
  n->base.emulated = emulated;
  snprintf(n->base.name, sizeof n->base.name, "%s %u",
           emulated ? "emulated NPU (CPU test device)" : "XRT device", options->npu_index);
  snprintf(n->base.backend, sizeof n->base.backend, "%s", n->api.description);
  *out_npu = &n->base;
  return TANDEM_OK;
}

static tandem_status_t tandem_xrt_open_real(const tandem_runtime_options_t *options,
                                            tandem__npu_t **out_npu) {
  return tandem_xrt_npu_open(options, false, out_npu);
}

static tandem_status_t tandem_xrt_open_emulated(const tandem_runtime_options_t *options,
                                                tandem__npu_t **out_npu) {
  return tandem_xrt_npu_open(options, true, out_npu);
}

const tandem__npu_backend_t tandem_xrt_npu_backend = {
    .name = "xrt",
    .kind = TANDEM_NPU_XRT,
    .open = tandem_xrt_open_real,
};

const tandem__npu_backend_t tandem_emu_npu_backend = {
    .name = "emulated",
    .kind = TANDEM_NPU_EMULATED,
    .open = tandem_xrt_open_emulated,
};
