/* SPDX-License-Identifier: MIT */
/*
 * xrt_npu.c — the NPU backend over XRT's C API (core/npu_backend.h).
 *
 * One code path serves the system's XRT and tandem's emulated NPU: only the
 * library behind tandem_xrt_api_t differs (xrt_api.c). The device profile
 * (tandem_npu_profile_t) decides the buffer flags: PLAIN allocates with no
 * flags, XDNA data buffers HOST_ONLY and the instruction buffer CACHEABLE, as
 * amdxdna's XRT plugin requires. Data buffers live in bank
 * TANDEM_XRT_DATA_BANK (created before any kernel is known), so every
 * binding's kernel argument must be connected there. Under XDNA with a
 * bridge that has tier 1 (internal/xrt_bridge_abi.h), programs run through it: one
 * hardware context per xclbin shared by its programs, kernels opened through
 * it, the bridge's timed wait and abort; otherwise kernels open through
 * xrtPLKernelOpen (the XRT 2.13 seam, see xrt_api.h). A run that outlives the
 * watchdog is remembered; abort is best effort (amdxdna refuses it), and an
 * XRT run is never destroyed while in flight (XRT calls std::abort() then):
 * it is waited for, bounded by the driver's own reset, and if still running
 * kept alive ("parked") until the device goes (see tandem_xrt_run_destroy).
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

#include <pthread.h>

#include "backends/xrt/xrt_api.h"
#include "core/fault.h"
#include "core/npu_backend.h"
#include "tandem/tandem_xrt.h"

#define TANDEM_DMA_BUF_MAGIC 0x444d4142 /* "DMAB", from linux/magic.h */
/* The bank every data buffer is allocated in: aiecc's HOST bank (0). */
#define TANDEM_XRT_DATA_BANK 0

/* A kernel argument's group id, as XRT answers it (kernel.group_id,
 * xrtKernelArgGroupId), is an encoded xcl_bo_flags: bits 0-15 the memory
 * bank, bits 16-23 the "slot" (XRT@963c58ee
 * src/runtime_src/core/common/api/xrt_kernel.cpp:2143-2161,
 * src/runtime_src/core/include/xrt/detail/xrt_mem.h:34-56). On amdxdna the
 * slot is the hardware context's handle, which starts at 1
 * (amd/xdna-driver@856409ca src/shim/hwctx.cpp:175, 289;
 * drivers/accel/amdxdna/amdxdna_ctx.c:232-269), so a bank-0 argument reads
 * 0x10000 there. Only the bank is compared; the whole value goes back to
 * xrtBOAlloc, which puts bank and slot into the buffer's flags
 * (src/runtime_src/core/common/api/xrt_bo.cpp:1083-1120). A scalar has no
 * memory: its bank field is (uint16_t)-1 (no_memidx, xrt_kernel.cpp:648,
 * 696-711) with the slot above it, so its group id is not negative; XRT
 * 2.13 and PLAIN devices answer -1. */
#define TANDEM_XRT_BANK(group) ((unsigned)(group)&0xffffu)
#define TANDEM_XRT_SLOT(group) (((unsigned)(group) >> 16) & 0xffu)
#define TANDEM_XRT_NO_BANK 0xffffu
static bool tandem_xrt_group_is_buffer(int group) {
  return group >= 0 && TANDEM_XRT_BANK(group) != TANDEM_XRT_NO_BANK;
}

/* A kernel opened once and shared by every program of that xclbin and name:
 * on XDNA each xrtPLKernelOpen makes a hardware context, and an NPU has only
 * a few. */
typedef struct tandem_xrt_shared_kernel {
  xuid_t uuid;
  char name[128];
  xrtKernelHandle kernel;
  uint32_t refs;
  struct tandem_xrt_shared_kernel *next;
} tandem_xrt_shared_kernel_t;

/* A bridge hardware context (tier 1), one per xclbin (by UUID) or ELF (by
 * real path), shared by every program of it: an NPU has very few. */
typedef struct tandem_xrt_shared_context {
  char key[4128]; /* "uuid:<hex>" or "elf:<real path>" */
  void *context;
  uint32_t refs;
  struct tandem_xrt_shared_context *next;
} tandem_xrt_shared_context_t;

typedef struct tandem_xrt_run tandem_xrt_run_t;

typedef struct tandem_xrt_npu {
  tandem__npu_t base;
  tandem_xrt_api_t api;
  xrtDeviceHandle device;
  /* The bridge's tier 1 runs this NPU's programs (XDNA profile and a bridge
   * that has it): contexts, kernels and runs go through it, buffers stay on
   * the C API. Otherwise everything is the C API (PLAIN, XRT 2.13). */
  bool tier1;
  tandem_npu_profile_t profile;  /* PLAIN or XDNA, never AUTO once open */
  pthread_mutex_t kernels_mutex; /* guards kernels, contexts and parked */
  tandem_xrt_shared_kernel_t *kernels;
  tandem_xrt_shared_context_t *contexts;
  /* Runs still in flight when core released them, after the bounded wait
   * for the driver's reset: kept, never closed in flight (XRT would stop the
   * process), and looked at again when the device goes. */
  tandem_xrt_run_t *parked;
  /* The first NPU fault (a run the driver ended in TIMEOUT or ABORT), in
   * words; set once, by the lane thread, read by it: later runs fail with it. */
  char fault[320];
} tandem_xrt_npu_t;

typedef struct tandem_xrt_program {
  xrtXclbinHandle xclbin;       /* NULL for a full-ELF program */
  xrtKernelHandle kernel;       /* the C API's, or NULL under tier 1 */
  void *context;                /* tier 1: the shared bridge context */
  void *bkernel;                /* tier 1: the bridge's kernel, opened through it */
  xrtBufferHandle instructions; /* or NULL */
  uint32_t instruction_words;
  uint32_t binding_count, scalar_count;
  tandem_npu_abi_t abi;
  int instr_arg;  /* the instruction buffer's argument (PLAIN 0, DPU 1) */
  int data_first; /* the first binding's argument */
  tandem_npu_scalar_type_t scalar_types[TANDEM_MAX_NPU_SCALARS];
  char name[128];
} tandem_xrt_program_t;

struct tandem_xrt_run {
  xrtRunHandle run; /* the C API's, or NULL under tier 1 */
  void *brun;       /* tier 1: the bridge's run */
  tandem_xrt_program_t *program;
  bool still_running; /* the watchdog fired: settle (tandem_xrt_run_settle) before reuse or close */
  bool abort_asked;   /* tandem's abort was accepted: a final ABORT is its own, no NPU fault */
  tandem_xrt_run_t *next_parked;
};

/* How long a run left in flight by the watchdog is waited for before it is
 * reused or released: amdxdna's hang detection resets a context whose job
 * runs past tdr_timeout_ms = 2000 (amd/xdna-driver@856409ca
 * drivers/accel/amdxdna/aie2_ctx.c:30), ending the run in TIMEOUT, so 2 s
 * plus a margin for the reset itself. With the reset turned off, or on a
 * device without one, the run is parked instead. */
#define TANDEM_XRT_RESET_WAIT_MS 3000u

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
bool tandem_xrt_has_amdxdna(void);

static bool tandem_xrt_run_settle(tandem_xrt_npu_t *n, tandem_xrt_run_t *r, unsigned bound_ms);
static void tandem_xrt_run_close(tandem_xrt_npu_t *n, tandem_xrt_run_t *r);

static void tandem_xrt_destroy(tandem__npu_t *base) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  pthread_mutex_destroy(&n->kernels_mutex); /* programs hold the runtime: none is left */
  if (n->device) n->api.xrtDeviceClose(n->device);
  /* Parked runs (tandem_xrt_run_destroy): one that ended meanwhile is
   * closed. One still in flight is left to the process's exit, deliberately:
   * closing it would make XRT stop the process. XRT's run object keeps its
   * kernel, context and buffers; the leak is reported on stderr. */
  unsigned leaked = 0;
  while (n->parked) {
    tandem_xrt_run_t *r = n->parked;
    n->parked = r->next_parked;
    if (tandem_xrt_run_settle(n, r, 0)) {
      tandem_xrt_run_close(n, r);
    } else {
      leaked++;
      free(r); /* tandem's record only; XRT's run handle stays open */
    }
  }
  if (leaked)
    fprintf(stderr,
            "tandem: %u NPU run%s still in flight when the NPU was closed %s left open: "
            "XRT stops the process when a run in flight is destroyed, and the NPU refused to "
            "abort %s (see docs/npu.md, the watchdog)\n",
            leaked, leaked == 1 ? "" : "s", leaked == 1 ? "is" : "are",
            leaked == 1 ? "it" : "them");
  tandem_xrt_fault_forget(&n->api);
  tandem_xrt_api_unload(&n->api);
  free(n);
}

/* A zero-filled BO of |size| bytes with |flags| in group |group| (an
 * encoded group id: bank and slot), mapped. */
static tandem_status_t tandem_xrt_bo_alloc(tandem_xrt_npu_t *n, uint64_t size, xrtBufferFlags flags,
                                           int group, void **out_bo, void **out_host) {
  *out_bo = *out_host = NULL;
  errno = 0;
  xrtBufferHandle bo = n->api.xrtBOAlloc(n->device, size, flags, (xrtMemoryGroup)group);
  if (!bo) {
    int e = errno;
    return TANDEM_FAIL(
        TANDEM_ERROR_OUT_OF_MEMORY,
        "xrtBOAlloc of %llu bytes (flags 0x%x, bank %u, hardware context slot %u) failed: %s%s",
        (unsigned long long)size, (unsigned)flags, TANDEM_XRT_BANK(group), TANDEM_XRT_SLOT(group),
        tandem_xrt_why(0, e, (char[96]){0}, 96),
        e == ENOTSUP && n->profile == TANDEM_NPU_PROFILE_PLAIN
            ? " (the NPU profile is plain; an XDNA NPU refuses buffers without flags: use "
              "the xdna profile, TANDEM_NPU_PROFILE=xdna)"
            : "");
  }
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

/* Data buffers: HOST_ONLY on XDNA (SHARE buffers: mappable, exportable),
 * no flags on PLAIN; always in TANDEM_XRT_DATA_BANK. */
static tandem_status_t tandem_xrt_bo_create(tandem__npu_t *base, uint64_t size, void **out_bo,
                                            void **out_host) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  xrtBufferFlags flags =
      n->profile == TANDEM_NPU_PROFILE_XDNA ? XCL_BO_FLAGS_HOST_ONLY : XCL_BO_FLAGS_NONE;
  return tandem_xrt_bo_alloc(n, size, flags, TANDEM_XRT_DATA_BANK, out_bo, out_host);
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
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "xrtBOMap of an imported buffer failed: %s", text);
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

/* The shared kernel |name| of xclbin |uuid|, opened on first use. NULL with
 * errno from xrtPLKernelOpen. */
static xrtKernelHandle tandem_xrt_kernel_get(tandem_xrt_npu_t *n, const xuid_t uuid,
                                             const char *name) {
  pthread_mutex_lock(&n->kernels_mutex);
  tandem_xrt_shared_kernel_t *e = n->kernels;
  while (e && (memcmp(e->uuid, uuid, sizeof(xuid_t)) || strcmp(e->name, name))) e = e->next;
  xrtKernelHandle k = NULL;
  if (e) {
    e->refs++;
    k = e->kernel;
  } else if ((e = calloc(1, sizeof *e))) {
    errno = 0;
    k = n->api.xrtPLKernelOpen(n->device, uuid, name);
    if (k) {
      memcpy(e->uuid, uuid, sizeof(xuid_t));
      snprintf(e->name, sizeof e->name, "%s", name);
      e->kernel = k;
      e->refs = 1;
      e->next = n->kernels;
      n->kernels = e;
    } else {
      int err = errno;
      free(e);
      errno = err;
    }
  } else {
    errno = ENOMEM;
  }
  pthread_mutex_unlock(&n->kernels_mutex);
  return k;
}

static void tandem_xrt_kernel_put(tandem_xrt_npu_t *n, xrtKernelHandle k) {
  pthread_mutex_lock(&n->kernels_mutex);
  for (tandem_xrt_shared_kernel_t **at = &n->kernels; *at; at = &(*at)->next) {
    tandem_xrt_shared_kernel_t *e = *at;
    if (e->kernel != k) continue;
    if (--e->refs == 0) {
      *at = e->next;
      n->api.xrtKernelClose(k);
      free(e);
    }
    break;
  }
  pthread_mutex_unlock(&n->kernels_mutex);
}

/* The shared bridge context for |key|, made on first use from |path| (an
 * xclbin, or a full ELF when |elf|). 0, or the bridge's negative errno with
 * its reason in |why|. */
static int tandem_xrt_context_get(tandem_xrt_npu_t *n, const char *key, const char *path, bool elf,
                                  void **out, char *why, size_t cap) {
  pthread_mutex_lock(&n->kernels_mutex);
  tandem_xrt_shared_context_t *e = n->contexts;
  while (e && strcmp(e->key, key)) e = e->next;
  int rc = 0;
  if (e) {
    e->refs++;
  } else if ((e = calloc(1, sizeof *e))) {
    rc = elf ? n->api.tandemBridgeContextOpenElf(n->device, path, &e->context, why, cap)
             : n->api.tandemBridgeContextOpen(n->device, path, &e->context, why, cap);
    if (rc == 0) {
      snprintf(e->key, sizeof e->key, "%s", key);
      e->refs = 1;
      e->next = n->contexts;
      n->contexts = e;
    } else {
      free(e);
      e = NULL;
    }
  } else {
    rc = -ENOMEM;
  }
  *out = e ? e->context : NULL;
  pthread_mutex_unlock(&n->kernels_mutex);
  return rc;
}

static void tandem_xrt_context_put(tandem_xrt_npu_t *n, void *context) {
  pthread_mutex_lock(&n->kernels_mutex);
  for (tandem_xrt_shared_context_t **at = &n->contexts; *at; at = &(*at)->next) {
    tandem_xrt_shared_context_t *e = *at;
    if (e->context != context) continue;
    if (--e->refs == 0) {
      *at = e->next;
      n->api.tandemBridgeContextClose(context);
      free(e);
    }
    break;
  }
  pthread_mutex_unlock(&n->kernels_mutex);
}

/* The group id of argument |argno| of |p|'s kernel as XRT answers it
 * (TANDEM_XRT_BANK / TANDEM_XRT_SLOT decode it; tandem_xrt_group_is_buffer
 * says whether it names memory), or negative. */
static int tandem_xrt_group(tandem_xrt_npu_t *n, const tandem_xrt_program_t *p, int argno) {
  return p->bkernel ? n->api.tandemBridgeKernelGroup(p->bkernel, argno)
                    : n->api.xrtKernelArgGroupId(p->kernel, argno);
}

static void tandem_xrt_program_destroy(tandem__npu_t *base, void *native) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  tandem_xrt_program_t *p = native;
  if (!p) return;
  if (p->instructions) n->api.xrtBOFree(p->instructions);
  if (p->kernel) tandem_xrt_kernel_put(n, p->kernel);
  if (p->bkernel) n->api.tandemBridgeKernelClose(p->bkernel);
  if (p->context) tandem_xrt_context_put(n, p->context);
  if (p->xclbin) n->api.xrtXclbinFreeHandle(p->xclbin);
  free(p);
}

/* Whether a hardware context's creation failed because the NPU has none
 * free: amdxdna answers ENODEV (its column solver, amd/xdna-driver@856409ca
 * drivers/accel/amdxdna/aie2_solver.c:208-209, 264-265; the firmware holds
 * 6 contexts on npu1, 16 on npu4+, npu1_regs.c:105, npu4_regs.c:174), other
 * drivers EBUSY. |rc| is a negative errno. */
static bool tandem_xrt_no_context(int rc) { return rc == -ENODEV || rc == -EBUSY; }

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

/* One kernel argument as tandem sees it: 'b' a buffer (its encoded group
 * id in |group|), 'u' / 'U' a 32- / 64-bit scalar, '?' a scalar of unknown
 * width, 0 none. */
typedef struct tandem_xrt_arg {
  char kind;
  int group;
} tandem_xrt_arg_t;

/* The kernel's arguments: from the xclbin's metadata where the bridge can
 * list them (XRT's C API cannot), else probed: a group id means a
 * buffer, a run that accepts a value there a scalar (width unknown), and the
 * first index that is neither ends the list. Returns the count. */
static int tandem_xrt_kernel_args(tandem_xrt_npu_t *n, const tandem_xrt_program_t *p,
                                  const tandem_npu_program_desc_t *d, tandem_xrt_arg_t *out,
                                  int cap) {
  int count = 0;
  /* A full-ELF program has no xclbin to read, and the bridge does not read
   * an ELF's argument metadata yet: -1, unknown (XRT checks each set_arg). */
  if (!p->xclbin) return -1;
  if (n->api.tandemBridgeKernelArgs) {
    char kinds[64];
    count = n->api.tandemBridgeKernelArgs(n->device, d->program_path, d->kernel_name, kinds,
                                          sizeof kinds, NULL, 0);
    if (count > cap) count = cap;
    for (int i = 0; i < count; i++) {
      out[i].kind = kinds[i];
      out[i].group = kinds[i] == 'b' ? tandem_xrt_group(n, p, i) : -1;
    }
    if (count >= 0) return count;
    count = 0; /* no metadata: probe */
  }
  if (!p->kernel) return -1; /* probing needs the C API's run */
  xrtKernelHandle k = p->kernel;
  xrtRunHandle probe = n->api.xrtRunOpen(k);
  if (!probe) return 0;
  for (; count < cap; count++) {
    /* A scalar's group id is -1 on XRT 2.13 but slot << 16 | 0xffff on
     * XRT >= 2.17: only a real bank makes a buffer. */
    int group = n->api.xrtKernelArgGroupId(k, count);
    if (tandem_xrt_group_is_buffer(group)) {
      out[count] = (tandem_xrt_arg_t){'b', group};
    } else if (n->api.xrtRunSetArg(probe, count, 0u) == 0) {
      out[count] = (tandem_xrt_arg_t){'?', -1};
    } else {
      break;
    }
  }
  n->api.xrtRunClose(probe);
  return count;
}

static const char *tandem_xrt_kind_name(char kind) {
  switch (kind) {
    case 'b': return "a buffer";
    case 'u': return "a 32-bit scalar";
    case 'U': return "a 64-bit scalar";
    case '?': return "a scalar";
    default: return "missing";
  }
}

/* Checks the kernel's arguments against the program's ABI and contract
 * (tandem.h, tandem_npu_abi_t): CONTRACT naming the first argument that
 * disagrees. */
static tandem_status_t tandem_xrt_check_args(tandem_xrt_npu_t *n, const tandem_xrt_program_t *p,
                                             const tandem_npu_program_desc_t *d,
                                             const tandem_xrt_program_desc_t *x, const char *name) {
  enum { cap = 64 };
  tandem_xrt_arg_t args[cap];
  int count = tandem_xrt_kernel_args(n, p, d, args, cap);
  if (count < 0) return TANDEM_OK; /* no metadata to check against (a full-ELF program) */
  /* What each argument must be: kinds, and for each a role in words. */
  char want[cap];
  const char *role[cap];
  char roles[cap][48];
  int used = 0;
  if (p->abi == TANDEM_NPU_ABI_DPU || p->abi == TANDEM_NPU_ABI_DPU_MODULE) {
    want[0] = 'U', role[0] = "the opcode";
    want[1] = 'b', role[1] = "the instruction buffer";
    want[2] = 'u', role[2] = "the instruction word count";
    used = 3;
  } else if (p->abi == TANDEM_NPU_ABI_PLAIN && x->instructions) {
    want[0] = 'b', role[0] = "the instruction buffer";
    want[1] = 'u', role[1] = "the instruction word count";
    used = 2;
  }
  for (uint32_t i = 0; i < d->binding_count && used < cap; i++, used++) {
    want[used] = 'b';
    snprintf(roles[used], sizeof roles[used], "binding %u", i);
    role[used] = roles[used];
  }
  for (uint32_t i = 0; i < d->scalar_count && used < cap; i++, used++) {
    want[used] = p->scalar_types[i] == TANDEM_NPU_SCALAR_U64 ? 'U' : 'u';
    snprintf(roles[used], sizeof roles[used], "scalar %u (%s)", i,
             p->scalar_types[i] == TANDEM_NPU_SCALAR_U64 ? "u64" : "u32");
    role[used] = roles[used];
  }
  for (int a = 0; a < used; a++) {
    char have = a < count ? args[a].kind : 0;
    bool scalar_ok = (want[a] == 'u' || want[a] == 'U') && (have == want[a] || have == '?');
    if (have == 0)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "NPU program '%s' (ABI %s): kernel '%s' takes fewer arguments than the "
                         "contract: argument %d, %s, does not exist",
                         name, tandem_npu_abi_name(p->abi), d->kernel_name, a, role[a]);
    if (have != want[a] && !scalar_ok)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "NPU program '%s' (ABI %s): kernel argument %d of '%s' should be %s, "
                         "%s, but it is %s",
                         name, tandem_npu_abi_name(p->abi), a, d->kernel_name, role[a],
                         tandem_xrt_kind_name(want[a]), tandem_xrt_kind_name(have));
    /* XRT would clone a data buffer of another bank into the connected one
     * behind our back (a copy per run, and results written to the clone). */
    if (want[a] == 'b' && a >= p->data_first &&
        (!tandem_xrt_group_is_buffer(args[a].group) ||
         TANDEM_XRT_BANK(args[a].group) != TANDEM_XRT_DATA_BANK))
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "NPU program '%s': %s is kernel argument %d, which is connected to "
                         "bank %u (group id 0x%x: hardware context slot %u, bank %u), but "
                         "tandem's data buffers are in bank %d; rebuild the xclbin with the "
                         "argument in bank %d",
                         name, role[a], a, TANDEM_XRT_BANK(args[a].group), (unsigned)args[a].group,
                         TANDEM_XRT_SLOT(args[a].group), TANDEM_XRT_BANK(args[a].group),
                         TANDEM_XRT_DATA_BANK, TANDEM_XRT_DATA_BANK);
  }
  for (int a = used; a < count; a++) {
    /* PLAIN kernels take exactly the contract's arguments; the others may
     * leave trailing buffers unset (aiecc declares five), never scalars. */
    if (p->abi == TANDEM_NPU_ABI_PLAIN || args[a].kind != 'b')
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "NPU program '%s' (ABI %s): kernel '%s' takes more arguments than the "
                         "contract's %u bindings and %u scalars: argument %d is %s%s",
                         name, tandem_npu_abi_name(p->abi), d->kernel_name, d->binding_count,
                         d->scalar_count, a, tandem_xrt_kind_name(args[a].kind),
                         p->abi == TANDEM_NPU_ABI_PLAIN
                             ? ""
                             : " (only trailing buffers may stay unset)");
  }
  return TANDEM_OK;
}

const char *tandem_npu_abi_name(tandem_npu_abi_t abi) {
  switch (abi) {
    case TANDEM_NPU_ABI_PLAIN: return "plain";
    case TANDEM_NPU_ABI_DPU: return "dpu";
    case TANDEM_NPU_ABI_DPU_MODULE: return "dpu_module";
    case TANDEM_NPU_ABI_ELF: return "elf";
  }
  return "unknown";
}

/* Reads the XRT extension chained from |d| (tandem_xrt.h) into |*x|:
 * tandem_xrt_program_desc_init's defaults (PLAIN, no instructions) when
 * there is none. Checks the whole chain (tandem.h, "Extension chains") and
 * the extension's fields: INVALID_ARGUMENT naming program |name|, the tag
 * and the fix. The library's own layout is read: a struct_size below it is
 * refused (no release has shipped an older one), a larger one only with
 * zero bytes past it. */
static tandem_status_t tandem_xrt_program_ext(const tandem_npu_program_desc_t *d, const char *name,
                                              tandem_xrt_program_desc_t *x) {
  tandem_xrt_program_desc_init(x);
  bool seen = false;
  unsigned links = 0;
  /* Ends: every link is the one extension read here (a second is refused,
   * so a loop stops at its second visit) or refused as unknown. */
  for (const tandem_chain_t *c = d->next; c; c = c->next) {
    links++;
    if (c->type != TANDEM_STRUCT_XRT_PROGRAM_DESC)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "NPU program '%s': extension %u chained from next has type 0x%08x, which "
                         "the XRT NPU backends do not read; chain only "
                         "tandem_xrt_program_desc_t (TANDEM_STRUCT_XRT_PROGRAM_DESC, set by "
                         "tandem_xrt_program_desc_init)",
                         name, links, c->type);
    if (seen)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "NPU program '%s': TANDEM_STRUCT_XRT_PROGRAM_DESC (0x%08x) is chained "
                         "twice; chain one tandem_xrt_program_desc_t",
                         name, c->type);
    seen = true;
    if (c->struct_size < sizeof *x || c->struct_size > 65536)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "NPU program '%s': tandem_xrt_program_desc_t (0x%08x) has struct_size %u; "
                         "set struct_size = sizeof(tandem_xrt_program_desc_t) "
                         "(tandem_xrt_program_desc_init)",
                         name, c->type, c->struct_size);
    const unsigned char *bytes = (const unsigned char *)c;
    for (size_t i = sizeof *x; i < c->struct_size; i++)
      if (bytes[i])
        return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                           "NPU program '%s': tandem_xrt_program_desc_t (0x%08x) has struct_size "
                           "%u with byte %zu not zero: a field this library does not have",
                           name, c->type, c->struct_size, i);
    memcpy(x, c, sizeof *x);
  }
  if (x->instructions && (x->instruction_bytes == 0 || x->instruction_bytes % 4))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "NPU program '%s': instruction_bytes %zu must be a positive multiple of 4",
                       name, x->instruction_bytes);
  if (!x->instructions && x->instruction_bytes)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "NPU program '%s': instructions is NULL but instruction_bytes is %zu "
                       "(set both, or neither)",
                       name, x->instruction_bytes);
  if (x->abi < TANDEM_NPU_ABI_PLAIN || x->abi > TANDEM_NPU_ABI_ELF)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "NPU program '%s': abi is %d, not a tandem_npu_abi_t", name, (int)x->abi);
  if (x->abi == TANDEM_NPU_ABI_DPU && !x->instructions)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "NPU program '%s': the dpu ABI needs an instruction stream (instructions, "
                       "instruction_bytes)",
                       name);
  if ((x->abi == TANDEM_NPU_ABI_DPU_MODULE || x->abi == TANDEM_NPU_ABI_ELF) && x->instructions)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "NPU program '%s': the %s ABI takes its instruction stream from the "
                       "kernel's ELF; set instructions to NULL",
                       name, tandem_npu_abi_name(x->abi));
  return TANDEM_OK;
}

static tandem_status_t tandem_xrt_program_check(const tandem_npu_program_desc_t *d,
                                                const char *name) {
  tandem_xrt_program_desc_t x;
  return tandem_xrt_program_ext(d, name, &x);
}

static tandem_status_t tandem_xrt_program_create(tandem__npu_t *base,
                                                 const tandem_npu_program_desc_t *d,
                                                 const char *name, void **out) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  *out = NULL;
  /* The XRT extension: checked before the NPU opened (program_check); read
   * again here, where it is used. */
  tandem_xrt_program_desc_t xd;
  TANDEM_RETURN_IF_ERROR(tandem_xrt_program_ext(d, name, &xd));
  const tandem_xrt_program_desc_t *x = &xd;
  struct stat st;
  if (stat(d->program_path, &st) != 0 || access(d->program_path, R_OK) != 0)
    return TANDEM_FAIL(TANDEM_ERROR_IO, "NPU program '%s': cannot read xclbin '%s': %s", name,
                       d->program_path, strerror(errno));
  /* A directory is no xclbin, and a FIFO would block the open (issue 11). */
  if (!S_ISREG(st.st_mode))
    return TANDEM_FAIL(TANDEM_ERROR_IO, "NPU program '%s': xclbin '%s' is not a regular file", name,
                       d->program_path);
  /* DPU_MODULE takes its instruction stream from an ELF module, which real
   * XRT attaches only through xrt::ext::kernel(context, module, name) (XRT
   * patches the module into each run's arguments, xrt_kernel.cpp:2873-2876
   * at XRT 963c58ee). tandem's bridge has no module yet, so on real XRT
   * such a run would carry no instructions at all: refused until it does.
   * The emulated NPU is a test device whose kernel needs no module. */
  if (x->abi == TANDEM_NPU_ABI_DPU_MODULE && !base->emulated)
    return TANDEM_FAIL(
        TANDEM_ERROR_UNSUPPORTED,
        "NPU program '%s': the DPU_MODULE ABI (an xclbin kernel whose instruction stream comes "
        "from an ELF module) needs xrt::ext::kernel(context, module, name), which tandem's XRT "
        "bridge does not have yet, so on real XRT the run would reach the NPU with no "
        "instruction stream. Use the DPU ABI with the instruction stream in the program's "
        "instructions (IRON's insts.bin), or the ELF ABI with a full ELF (XRT >= 2.19)",
        name);
  tandem_xrt_program_t *p = calloc(1, sizeof *p);
  if (!p) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating an NPU program");
  snprintf(p->name, sizeof p->name, "%s", name);
  p->binding_count = d->binding_count;
  p->scalar_count = d->scalar_count;
  p->abi = x->abi;
  p->instr_arg = x->abi == TANDEM_NPU_ABI_PLAIN ? 0 : 1;
  p->data_first = x->abi == TANDEM_NPU_ABI_PLAIN ? (x->instructions ? 2 : 0)
                  : x->abi == TANDEM_NPU_ABI_ELF ? 0
                                                 : 3;
  for (uint32_t i = 0; i < d->scalar_count; i++)
    p->scalar_types[i] = d->scalar_types ? d->scalar_types[i] : TANDEM_NPU_SCALAR_U32;
  tandem_status_t s = TANDEM_OK;
  xuid_t uuid;
  /* A full ELF (no xclbin, XRT >= 2.19) goes through the bridge's tier 2. */
  unsigned char magic[4] = {0};
  FILE *f = fopen(d->program_path, "rb");
  bool elf = f && fread(magic, 1, 4, f) == 4 && !memcmp(magic, "\177ELF", 4);
  if (f) fclose(f);
  if (elf) {
    unsigned v = n->api.tandemBridgeXrtVersion ? n->api.tandemBridgeXrtVersion() : 0;
    char real[4096];
    if (!n->tier1 || !n->api.bridge_tier2) {
      s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                      "NPU program '%s': '%s' is an ELF (the full-ELF flow, no xclbin), which "
                      "needs the XDNA profile and tandem's XRT bridge with tier 2: "
                      "libtandem_xrt_bridge.so built against XRT >= 2.19 headers and running on "
                      "XRT >= 2.19 (here: %s%s, XRT %u.%u%s)",
                      name, d->program_path, n->api.bridge_description[0] ? "bridge " : "no bridge",
                      n->api.bridge_description, v >> 16, v & 0xffffu,
                      n->tier1 ? "" : ", the profile or the bridge has no tier 1");
    } else if (!realpath(d->program_path, real)) {
      s = TANDEM_FAIL(TANDEM_ERROR_IO, "NPU program '%s': resolving '%s': %s", name,
                      d->program_path, strerror(errno));
    } else {
      char key[4128], why[256] = "";
      snprintf(key, sizeof key, "elf:%s", real);
      int rc = tandem_xrt_context_get(n, key, d->program_path, true, &p->context, why, sizeof why);
      if (rc != 0)
        s = TANDEM_FAIL(tandem_xrt_no_context(rc) ? TANDEM_ERROR_OUT_OF_MEMORY
                                                  : tandem_xrt_errno_code(-rc),
                        "NPU program '%s': a hardware context for the ELF '%s' (%s; %s)", name,
                        d->program_path, why[0] ? why : "no reason given", strerror(-rc));
    }
  }
  if (!elf) p->xclbin = n->api.xrtXclbinAllocFilename(d->program_path);
  /* NULL with EINVAL: not an xclbin; anything else: reading it failed. */
  if (s == TANDEM_OK && !elf && !p->xclbin)
    s = TANDEM_FAIL(errno == EINVAL   ? TANDEM_ERROR_INVALID_KERNEL
                    : errno == ENOMEM ? TANDEM_ERROR_OUT_OF_MEMORY
                                      : TANDEM_ERROR_IO,
                    "NPU program '%s': '%s' %s (%s)", name, d->program_path,
                    errno == EINVAL ? "is not an xclbin this NPU accepts" : "could not be read",
                    strerror(errno));
  /* XDNA registers the xclbin through the bridge (its plugin refuses
   * loading; xrtPLKernelOpen then makes the hardware context); PLAIN loads. */
  if (s == TANDEM_OK && (elf || n->tier1)) {
    /* Tier 1 registers the xclbin when it makes the context, below. */
  } else if (s == TANDEM_OK && n->profile == TANDEM_NPU_PROFILE_XDNA &&
             n->api.tandemBridgeRegisterXclbin) {
    char why[256] = "";
    int rc = n->api.tandemBridgeRegisterXclbin(n->device, d->program_path, why, sizeof why);
    if (rc != 0)
      s = TANDEM_FAIL(tandem_xrt_errno_code(-rc),
                      "NPU program '%s': registering '%s' with the NPU failed (%s; %s)%s", name,
                      d->program_path, why[0] ? why : "no reason given", strerror(-rc),
                      rc == -EACCES && base->emulated
                          ? "; the emulated NPU loads only its own kernels library and those "
                            "listed in TANDEM_EMU_KERNELS"
                          : "");
  } else if (s == TANDEM_OK && n->api.xrtDeviceLoadXclbinHandle(n->device, p->xclbin) != 0) {
    int err = errno;
    s = TANDEM_FAIL(tandem_xrt_errno_code(err), "NPU program '%s': loading '%s' failed (%s)%s",
                    name, d->program_path, strerror(err),
                    err == EACCES && base->emulated
                        ? "; the emulated NPU loads only its own kernels library and those "
                          "listed in TANDEM_EMU_KERNELS"
                    : err == ENOTSUP
                        ? "; this NPU (XDNA?) refuses to load xclbins: they must be registered, "
                          "which needs tandem's XRT bridge, libtandem_xrt_bridge.so, built "
                          "against XRT >= 2.17 (docs/npu.md), and the xdna profile"
                        : "");
  }
  if (s == TANDEM_OK && !elf && n->api.xrtXclbinGetUUID(p->xclbin, uuid) != 0)
    s = TANDEM_FAIL(tandem_xrt_errno_code(errno), "NPU program '%s': the xclbin's UUID: %s", name,
                    strerror(errno));
  if (s == TANDEM_OK && !elf && n->tier1) {
    /* One hardware context per xclbin, shared by all its programs. */
    char key[64], why[256] = "";
    int at = snprintf(key, sizeof key, "uuid:");
    for (size_t i = 0; i < sizeof(xuid_t); i++)
      at += snprintf(key + at, sizeof key - (size_t)at, "%02x", uuid[i]);
    int rc = tandem_xrt_context_get(n, key, d->program_path, false, &p->context, why, sizeof why);
    if (tandem_xrt_no_context(rc))
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                      "NPU program '%s': the NPU has no free hardware context for '%s' (%s). "
                      "tandem shares one context per xclbin, so each xclbin in use at once takes "
                      "one; release NPU programs of other xclbins, or close other applications "
                      "using the NPU",
                      name, d->program_path, why[0] ? why : "the bridge gave no reason");
    else if (rc != 0)
      s = TANDEM_FAIL(tandem_xrt_errno_code(-rc),
                      "NPU program '%s': registering '%s' and making its hardware context failed "
                      "(%s; %s)%s",
                      name, d->program_path, why[0] ? why : "no reason given", strerror(-rc),
                      rc == -EACCES && base->emulated
                          ? "; the emulated NPU loads only its own kernels library and those "
                            "listed in TANDEM_EMU_KERNELS"
                          : "");
  }
  if (s == TANDEM_OK && p->context) {
    char why[256] = "";
    int rc =
        n->api.tandemBridgeKernelOpen(p->context, d->kernel_name, &p->bkernel, why, sizeof why);
    if (rc != 0)
      s = TANDEM_FAIL(tandem_xrt_errno_code(-rc),
                      "NPU program '%s': kernel '%s' could not be opened from '%s' (%s; %s)", name,
                      d->kernel_name, d->program_path, why[0] ? why : "no reason given",
                      strerror(-rc));
  } else if (s == TANDEM_OK) {
    p->kernel = tandem_xrt_kernel_get(n, uuid, d->kernel_name);
    if (!p->kernel && tandem_xrt_no_context(-errno) && n->profile == TANDEM_NPU_PROFILE_XDNA)
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                      "NPU program '%s': kernel '%s' could not be opened: the NPU has no free "
                      "hardware context (each distinct kernel opened takes one, and an XDNA NPU "
                      "has few; tandem shares one per xclbin and kernel). Release other NPU "
                      "programs, or close other applications using the NPU",
                      name, d->kernel_name);
    else if (!p->kernel)
      s = TANDEM_FAIL(tandem_xrt_errno_code(errno),
                      "NPU program '%s': kernel '%s' could not be opened from '%s' (%s)", name,
                      d->kernel_name, d->program_path, strerror(errno));
  }
  if (s == TANDEM_OK) s = tandem_xrt_check_args(n, p, d, x, name);
  if (s == TANDEM_OK && x->instructions) {
    /* In the instruction argument's own bank (SRAM, bank 1 in aiecc
     * xclbins); CACHEABLE on XDNA, where it is a device-heap buffer. */
    void *host;
    int group = tandem_xrt_group(n, p, p->instr_arg); /* bank and slot, as XRT wants it back */
    xrtBufferFlags flags =
        n->profile == TANDEM_NPU_PROFILE_XDNA ? XCL_BO_FLAGS_CACHEABLE : XCL_BO_FLAGS_NONE;
    if (!tandem_xrt_group_is_buffer(group))
      s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                      "NPU program '%s': kernel argument %d (the instruction buffer) is not a "
                      "buffer",
                      name, p->instr_arg);
    else
      s = tandem_xrt_bo_alloc(n, x->instruction_bytes, flags, group, (void **)&p->instructions,
                              &host);
    if (s == TANDEM_OK) {
      memcpy(host, x->instructions, x->instruction_bytes);
      s = tandem_xrt_bo_sync(base, p->instructions, true, 0, x->instruction_bytes);
      p->instruction_words = (uint32_t)(x->instruction_bytes / 4);
    }
    if (s != TANDEM_OK)
      s = tandem__annotate(s, "NPU program '%s': its %zu-byte instruction stream", name,
                           x->instruction_bytes);
  }
  if (s != TANDEM_OK) {
    tandem_xrt_program_destroy(base, p);
    return s;
  }
  *out = p;
  return TANDEM_OK;
}

static bool tandem_xrt_state_in_flight(int state) {
  return state == ERT_CMD_STATE_NEW || state == ERT_CMD_STATE_QUEUED ||
         state == ERT_CMD_STATE_RUNNING || state == ERT_CMD_STATE_SUBMITTED;
}

/* Waits up to |bound_ms| (0: only looks) for a run the watchdog left in
 * flight. True when it is over (still_running cleared; its final state in
 * *out_state), false when it is still in flight or its state cannot be
 * read (then it must not be closed). A final TIMEOUT/ABORT/NORESPONSE means
 * the driver reset the NPU context: recorded as the NPU's fault. */
static bool tandem_xrt_run_settle(tandem_xrt_npu_t *n, tandem_xrt_run_t *r, unsigned bound_ms) {
  if (!r->still_running) return true;
  int state;
  if (r->brun) {
    /* The bridge's wait answers the run's own state; 0 would mean no limit. */
    state = n->api.tandemBridgeRunWait(r->brun, bound_ms ? bound_ms : 1, NULL, 0);
  } else {
    state = (int)n->api.xrtRunWaitFor(r->run, bound_ms ? bound_ms : 1);
    if (state == ERT_CMD_STATE_TIMEOUT) state = (int)n->api.xrtRunState(r->run);
  }
  if (state < 0 || tandem_xrt_state_in_flight(state)) return false;
  r->still_running = false;
  bool asked = r->abort_asked;
  r->abort_asked = false;
  if ((state == ERT_CMD_STATE_TIMEOUT || (state == ERT_CMD_STATE_ABORT && !asked) ||
       state == ERT_CMD_STATE_NORESPONSE) &&
      !n->fault[0])
    snprintf(n->fault, sizeof n->fault,
             "the driver ended run of '%.128s', which had outlived tandem's watchdog, in state "
             "%s",
             r->program->name,
             state == ERT_CMD_STATE_TIMEOUT ? "TIMEOUT (its hang detection reset the NPU)"
             : state == ERT_CMD_STATE_ABORT ? "ABORT (the NPU context was reset)"
                                            : "NORESPONSE");
  return true;
}

static void tandem_xrt_run_close(tandem_xrt_npu_t *n, tandem_xrt_run_t *r) {
  if (r->run) n->api.xrtRunClose(r->run);
  if (r->brun) n->api.tandemBridgeRunClose(r->brun);
  free(r);
}

/* A run is never closed while in flight: XRT's ~run_impl calls std::abort()
 * for that (XRT@963c58ee src/runtime_src/core/common/api/xrt_kernel.cpp:
 * 2744-2754). One the watchdog left running is waited for, bounded by the
 * driver's reset (TANDEM_XRT_RESET_WAIT_MS); if it is still in flight after
 * that (the reset is off, or the device has none), it is parked: kept alive,
 * with the buffers XRT's command holds, until the device goes. Core may free
 * its buffer handles meanwhile: XRT's run keeps the buffers themselves. */
static void tandem_xrt_run_destroy(tandem__npu_t *base, void *native) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  tandem_xrt_run_t *r = native;
  if (!r) return;
  if (!tandem_xrt_run_settle(n, r, TANDEM_XRT_RESET_WAIT_MS)) {
    pthread_mutex_lock(&n->kernels_mutex);
    r->next_parked = n->parked;
    n->parked = r;
    pthread_mutex_unlock(&n->kernels_mutex);
    return;
  }
  tandem_xrt_run_close(n, r);
}

/* A run through the bridge's tier 1, packed as the C path below packs it. */
static tandem_status_t tandem_xrt_bridge_run_create(tandem_xrt_npu_t *n, tandem_xrt_program_t *p,
                                                    tandem_xrt_run_t *r, void *const *bos,
                                                    uint32_t bo_count, const uint32_t *scalars,
                                                    uint32_t scalar_count) {
  char why[256] = "";
  int rc = n->api.tandemBridgeRunOpen(p->bkernel, &r->brun, why, sizeof why);
  if (rc != 0)
    return TANDEM_FAIL(rc == -ENOMEM ? TANDEM_ERROR_OUT_OF_MEMORY : TANDEM_ERROR_INTERNAL,
                       "opening a run of '%s' through the XRT bridge failed (%s; %s)", p->name,
                       why[0] ? why : "no reason given", strerror(-rc));
  if ((p->abi == TANDEM_NPU_ABI_DPU || p->abi == TANDEM_NPU_ABI_DPU_MODULE) &&
      (rc = n->api.tandemBridgeRunSetU64(r->brun, 0, 3, why, sizeof why)) != 0)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT, "the opcode argument (0) of '%s': %s", p->name, why);
  if (p->instructions &&
      ((rc = n->api.tandemBridgeRunSetBuffer(r->brun, p->instr_arg, p->instructions, why,
                                             sizeof why)) != 0 ||
       (rc = n->api.tandemBridgeRunSetU32(r->brun, p->instr_arg + 1, p->instruction_words, why,
                                          sizeof why)) != 0))
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT, "the instruction arguments (%d, %d) of '%s': %s",
                       p->instr_arg, p->instr_arg + 1, p->name, why);
  int arg = p->data_first;
  for (uint32_t i = 0; i < bo_count; i++, arg++)
    if ((rc = n->api.tandemBridgeRunSetBuffer(r->brun, arg, bos[i], why, sizeof why)) != 0)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT, "binding %u of '%s' (kernel argument %d): %s", i,
                         p->name, arg, why);
  uint32_t w = 0;
  for (uint32_t i = 0; i < p->scalar_count; i++, arg++) {
    bool wide = p->scalar_types[i] == TANDEM_NPU_SCALAR_U64;
    if (w + (wide ? 2 : 1) > scalar_count)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT, "scalar %u of '%s': %u words given", i, p->name,
                         scalar_count);
    rc = wide ? n->api.tandemBridgeRunSetU64(r->brun, arg,
                                             (uint64_t)scalars[w] | (uint64_t)scalars[w + 1] << 32,
                                             why, sizeof why)
              : n->api.tandemBridgeRunSetU32(r->brun, arg, scalars[w], why, sizeof why);
    w += wide ? 2 : 1;
    if (rc != 0)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT, "scalar %u of '%s' (kernel argument %d): %s", i,
                         p->name, arg, why);
  }
  return TANDEM_OK;
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
  if (p->bkernel) {
    tandem_status_t s = tandem_xrt_bridge_run_create(n, p, r, bos, bo_count, scalars, scalar_count);
    if (s != TANDEM_OK) {
      tandem_xrt_run_destroy(base, r);
      return s;
    }
    *out = r;
    return TANDEM_OK;
  }
  r->run = n->api.xrtRunOpen(p->kernel);
  tandem_status_t s = TANDEM_OK;
  if (!r->run)
    s = TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "xrtRunOpen of '%s' failed: %s", p->name,
                    strerror(errno));
  /* The ABI's leading arguments (tandem.h, tandem_npu_abi_t); DPU_MODULE's
   * arguments 1 and 2 stay unset, which XRT sends as zero. */
  if (s == TANDEM_OK && (p->abi == TANDEM_NPU_ABI_DPU || p->abi == TANDEM_NPU_ABI_DPU_MODULE) &&
      n->api.xrtRunSetArg(r->run, 0, (uint64_t)3) != 0)
    s = TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "setting the opcode argument of '%s'", p->name);
  if (s == TANDEM_OK && p->instructions) {
    if (n->api.xrtRunSetArg(r->run, p->instr_arg, p->instructions) != 0 ||
        n->api.xrtRunSetArg(r->run, p->instr_arg + 1, (unsigned int)p->instruction_words) != 0)
      s = TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "setting the instruction arguments of '%s'", p->name);
  }
  int arg = p->data_first;
  for (uint32_t i = 0; s == TANDEM_OK && i < bo_count; i++, arg++)
    if (n->api.xrtRunSetArg(r->run, arg, (xrtBufferHandle)bos[i]) != 0)
      s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT, "binding %u of '%s': xrtRunSetArg(%d) refused it", i,
                      p->name, arg);
  /* |scalars| are 32-bit words: one per U32 scalar, two (low first) per U64. */
  uint32_t w = 0;
  for (uint32_t i = 0; s == TANDEM_OK && i < p->scalar_count; i++, arg++) {
    int rc;
    if (p->scalar_types[i] == TANDEM_NPU_SCALAR_U64 && w + 1 < scalar_count) {
      rc = n->api.xrtRunSetArg(r->run, arg, (uint64_t)scalars[w] | (uint64_t)scalars[w + 1] << 32);
      w += 2;
    } else if (w < scalar_count) {
      rc = n->api.xrtRunSetArg(r->run, arg, (unsigned int)scalars[w]);
      w += 1;
    } else {
      rc = -EINVAL;
    }
    if (rc != 0)
      s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT, "scalar %u of '%s': xrtRunSetArg(%d) refused it", i,
                      p->name, arg);
  }
  if (s != TANDEM_OK) {
    tandem_xrt_run_destroy(base, r);
    return s;
  }
  *out = r;
  return TANDEM_OK;
}

/* The watchdog fired on an earlier use of |native|: that execution must end
 * before the lane syncs the run's buffers (a sync of a buffer a run still
 * holds is refused, EBUSY) and before this one starts (starting a run in
 * flight is refused by XRT). */
static tandem_status_t tandem_xrt_run_ready(tandem__npu_t *base, void *native) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  tandem_xrt_run_t *r = native;
  if (r->still_running && !tandem_xrt_run_settle(n, r, TANDEM_XRT_RESET_WAIT_MS))
    return TANDEM_FAIL(TANDEM_ERROR_TIMEOUT,
                       "NPU run of '%s' not started: its previous run outlived tandem's watchdog "
                       "and is still on the NPU %u ms later (the NPU cannot abort it, and its "
                       "driver did not reset it)",
                       r->program->name, TANDEM_XRT_RESET_WAIT_MS);
  return TANDEM_OK;
}

static tandem_status_t tandem_xrt_run_execute(tandem__npu_t *base, void *native,
                                              uint32_t timeout_ms) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  tandem_xrt_run_t *r = native;
  TANDEM_RETURN_IF_ERROR(tandem_xrt_run_ready(base, native)); /* settled already: at once */
  /* After an NPU fault the device was reset: later work fails clearly
   * instead of meeting ABORT run after run. */
  if (n->fault[0])
    return TANDEM_FAIL(TANDEM_ERROR_DEVICE_LOST,
                       "NPU run of '%s' not started: the NPU faulted earlier (%s); recreate the "
                       "runtime to use the NPU again",
                       r->program->name, n->fault);
  enum ert_cmd_state state;
  if (r->brun) {
    /* Tier 1: the bridge's wait answers the run's own state, final or
     * still in flight. */
    char why[256] = "";
    int rc = n->api.tandemBridgeRunStart(r->brun, why, sizeof why);
    if (rc != 0)
      return TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "starting NPU run of '%s' failed (%s; %s)",
                         r->program->name, why[0] ? why : "no reason given", strerror(-rc));
    rc = n->api.tandemBridgeRunWait(r->brun, timeout_ms, why, sizeof why);
    if (rc < 0) {
      r->still_running = true; /* unknown: settled before reuse or close */
      /* The run failed as far as tandem knows: INTERNAL, as on XRT's C path
       * (a run that ends in ERROR) and as tandem_completion_wait documents
       * for a failed NPU run; IO is only for a failed xrtBOSync. */
      return TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "waiting for NPU run of '%s' failed (%s; %s)",
                         r->program->name, why[0] ? why : "no reason given", strerror(-rc));
    }
    state = (enum ert_cmd_state)rc;
  } else {
    int rc = n->api.xrtRunStart(r->run);
    if (rc != 0)
      return TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "xrtRunStart of '%s' failed: %d", r->program->name,
                         rc);
    state = n->api.xrtRunWaitFor(r->run, timeout_ms);
    /* XRT answers TIMEOUT both when the wait ran out (the run goes on) and
     * when the driver's hang detection ended the run (final, after its ~2 s
     * deadline): the run's own state tells them apart. */
    if (state == ERT_CMD_STATE_TIMEOUT) state = n->api.xrtRunState(r->run);
  }
  if (state == ERT_CMD_STATE_COMPLETED) return TANDEM_OK;
  if (state == ERT_CMD_STATE_TIMEOUT || state == ERT_CMD_STATE_ABORT ||
      state == ERT_CMD_STATE_NORESPONSE) {
    char why[256];
    snprintf(why, sizeof why, "the driver ended run of '%.128s' in state %s%s", r->program->name,
             state == ERT_CMD_STATE_TIMEOUT ? "TIMEOUT (its hang detection reset the NPU)"
             : state == ERT_CMD_STATE_ABORT ? "ABORT (the NPU context was reset or aborted)"
                                            : "NORESPONSE (the NPU did not answer a reset)",
             "");
    if (!n->fault[0]) snprintf(n->fault, sizeof n->fault, "%s", why);
    return TANDEM_FAIL(TANDEM_ERROR_DEVICE_LOST,
                       "NPU fault: %s; this is the NPU's own verdict, not tandem's %u ms "
                       "watchdog. Later NPU runs of this runtime fail",
                       why, timeout_ms);
  }
  /* In flight: on XDNA a running run reads NEW (the driver rewrites the
   * command to NEW when the job starts, amd/xdna-driver@856409ca
   * drivers/accel/amdxdna/aie2_ctx.c:443). */
  if (tandem_xrt_state_in_flight((int)state)) {
    /* tandem's watchdog. Abort is best effort: xrt::run::abort sends
     * ERT_ABORT, which both amdxdna drivers refuse ("Unsupported op",
     * EOPNOTSUPP: drivers/accel/amdxdna/aie2_message.c:915-944). Whatever
     * happens the run is never closed in flight: it is settled (waited for,
     * bounded by the driver's reset) before reuse or close, and parked if
     * it still runs. The lane signals now either way: the GPU never waits
     * on it, and core fails the work that depends on this region. */
    bool aborted = false;
    char why[256] = "";
    if (r->brun) {
      int final = n->api.tandemBridgeRunAbort(r->brun, why, sizeof why);
      aborted = final >= 0 && !tandem_xrt_state_in_flight(final);
      if (!aborted && final >= 0)
        snprintf(why, sizeof why, "the run still reads state %d after it", final);
    } else if (n->api.tandemEmuRunAbort) {
      int rc = n->api.tandemEmuRunAbort(r->run); /* asynchronous: settled later */
      if (rc != 0) snprintf(why, sizeof why, "%s", strerror(-rc));
      r->abort_asked = rc == 0;
    } else {
      snprintf(why, sizeof why, "XRT's C API has no abort");
    }
    r->still_running = !aborted;
    if (aborted)
      return TANDEM_FAIL(TANDEM_ERROR_TIMEOUT,
                         "NPU run of '%s' did not finish within the %u ms watchdog (aborted)",
                         r->program->name, timeout_ms);
    return TANDEM_FAIL(TANDEM_ERROR_TIMEOUT,
                       "NPU run of '%s' did not finish within the %u ms watchdog (%s%s; it is "
                       "left to the driver's hang detection and waited for, at most %u ms, "
                       "before the run is reused or released, never destroyed while in flight)",
                       r->program->name, timeout_ms, why[0] ? "not aborted: " : "abort requested",
                       why, TANDEM_XRT_RESET_WAIT_MS);
  }
  return TANDEM_FAIL(TANDEM_ERROR_INTERNAL, "NPU run of '%s' ended in state %d (%s)",
                     r->program->name, (int)state,
                     state == ERT_CMD_STATE_ERROR ? "ERROR" : "not COMPLETED");
}

const char *tandem_npu_profile_name(tandem_npu_profile_t profile) {
  switch (profile) {
    case TANDEM_NPU_PROFILE_AUTO: return "auto";
    case TANDEM_NPU_PROFILE_PLAIN: return "plain";
    case TANDEM_NPU_PROFILE_XDNA: return "xdna";
  }
  return "unknown";
}

/* The head of extension |c| (tandem.h, "Extension chains") when it is a
 * |size|-byte struct of tag |type| that this backend reads and has not seen
 * yet (*seen): INVALID_ARGUMENT naming |what|, the tag and the fix
 * otherwise. |struct_name| is the struct's name for the message. */
static tandem_status_t tandem_xrt_ext_head(const tandem_chain_t *c, uint32_t type, size_t size,
                                           const char *what, const char *struct_name, unsigned link,
                                           bool *seen) {
  if (c->type != type)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s: extension %u chained from next has type 0x%08x, which the XRT NPU "
                       "backends do not read there; chain only %s (0x%08x)",
                       what, link, c->type, struct_name, type);
  if (*seen)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "%s: %s (0x%08x) is chained twice; chain one",
                       what, struct_name, type);
  *seen = true;
  if (c->struct_size < size || c->struct_size > 65536)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s: %s (0x%08x) has struct_size %u; set struct_size = sizeof(%s)", what,
                       struct_name, type, c->struct_size, struct_name);
  return TANDEM_OK;
}

/* The runtime options' XRT extension and TANDEM_NPU_PROFILE, read at
 * tandem_runtime_create into a tandem_xrt_runtime_options_t of our own
 * (the caller's chain is not kept); the default is AUTO. */
static tandem_status_t tandem_xrt_options_in(const tandem_runtime_options_t *options,
                                             void **out_state) {
  *out_state = NULL;
  tandem_xrt_runtime_options_t xo;
  tandem_xrt_runtime_options_init(&xo);
  bool seen = false;
  unsigned link = 0;
  /* Ends: a second link of the one tag read here is refused, so a loop
   * stops at its second visit; any other tag is refused at once. */
  for (const tandem_chain_t *c = options->next; c; c = c->next) {
    TANDEM_RETURN_IF_ERROR(tandem_xrt_ext_head(c, TANDEM_STRUCT_XRT_RUNTIME_OPTIONS, sizeof xo,
                                               "runtime options", "tandem_xrt_runtime_options_t",
                                               ++link, &seen));
    const unsigned char *bytes = (const unsigned char *)c;
    for (size_t i = sizeof xo; i < c->struct_size; i++)
      if (bytes[i])
        return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                           "runtime options: tandem_xrt_runtime_options_t has struct_size %u "
                           "with byte %zu not zero: a field this library does not have",
                           c->struct_size, i);
    memcpy(&xo, c, sizeof xo);
  }
  if (xo.profile < TANDEM_NPU_PROFILE_AUTO || xo.profile > TANDEM_NPU_PROFILE_XDNA)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "tandem_xrt_runtime_options_t.profile is %d, not a tandem_npu_profile_t",
                       (int)xo.profile);
  const char *env = getenv("TANDEM_NPU_PROFILE");
  if (env && *env) {
    if (!strcmp(env, "auto")) xo.profile = TANDEM_NPU_PROFILE_AUTO;
    else if (!strcmp(env, "plain")) xo.profile = TANDEM_NPU_PROFILE_PLAIN;
    else if (!strcmp(env, "xdna")) xo.profile = TANDEM_NPU_PROFILE_XDNA;
    else
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "TANDEM_NPU_PROFILE is '%s'; it must be auto, plain or xdna", env);
  }
  tandem_xrt_runtime_options_t *copy = malloc(sizeof *copy);
  if (!copy) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating the XRT runtime options");
  *copy = xo;
  copy->next = NULL;
  *out_state = copy;
  return TANDEM_OK;
}

/* tandem_xrt_npu_info_t chained from a tandem_npu_info_t: the profile in
 * use; bytes past our size zeroed (a struct the library fills). */
static tandem_status_t tandem_xrt_info_extensions(tandem__npu_t *base, void *next) {
  tandem_xrt_npu_t *n = tandem_xrt_cast(base);
  bool seen = false;
  unsigned link = 0;
  for (tandem_chain_t *c = next; c; c = (tandem_chain_t *)c->next) {
    TANDEM_RETURN_IF_ERROR(tandem_xrt_ext_head(c, TANDEM_STRUCT_XRT_NPU_INFO,
                                               sizeof(tandem_xrt_npu_info_t), "NPU info",
                                               "tandem_xrt_npu_info_t", ++link, &seen));
  }
  for (tandem_chain_t *c = next; c; c = (tandem_chain_t *)c->next) {
    tandem_xrt_npu_info_t *info = (tandem_xrt_npu_info_t *)c;
    info->profile = n->profile;
    memset((unsigned char *)c + sizeof *info, 0, c->struct_size - sizeof *info);
  }
  return TANDEM_OK;
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
    .run_ready = tandem_xrt_run_ready,
    .run_execute = tandem_xrt_run_execute,
    .run_destroy = tandem_xrt_run_destroy,
    .device_nodes = tandem_xrt_device_nodes,
    .info_extensions = tandem_xrt_info_extensions,
};

/* Opens device options->npu_index through the real XRT or the emulated NPU,
 * with the profile |xo| asks for (tandem_xrt_options_in). */
static tandem_status_t tandem_xrt_npu_open(const tandem_runtime_options_t *options,
                                           const tandem_xrt_runtime_options_t *xo, bool emulated,
                                           tandem__npu_t **out_npu) {
  *out_npu = NULL;
  tandem_xrt_npu_t *n = calloc(1, sizeof *n);
  if (!n) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating the NPU device");
  n->base.vtable = &tandem_xrt_npu_vtable;
  pthread_mutex_init(&n->kernels_mutex, NULL);
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
  /* The profile: the option when set, else what the device reports (the
   * emulated NPU says which XRT it behaves like; a real system is XDNA when
   * an amdxdna accel device exists). */
  n->profile = xo->profile;
  if (n->profile == TANDEM_NPU_PROFILE_AUTO) {
    const char *family =
        n->api.tandemEmuDeviceFamily ? n->api.tandemEmuDeviceFamily(n->device) : NULL;
    bool xdna = family ? strcmp(family, "xdna") == 0 : !emulated && tandem_xrt_has_amdxdna();
    n->profile = xdna ? TANDEM_NPU_PROFILE_XDNA : TANDEM_NPU_PROFILE_PLAIN;
  }
  n->tier1 = n->profile == TANDEM_NPU_PROFILE_XDNA && n->api.bridge_tier1;
  snprintf(n->base.name, sizeof n->base.name, "%s %u",
           emulated ? "emulated NPU (CPU test device)" : "XRT device", options->npu_index);
  /* Which bridge tier runs the programs ("tandem devices" shows it). */
  if (n->api.bridge_description[0])
    snprintf(n->base.backend, sizeof n->base.backend, "%.100s; XRT bridge %s (%.50s)",
             n->api.description,
             !n->tier1             ? "tier 0"
             : n->api.bridge_tier2 ? "tiers 1 and 2"
                                   : "tier 1",
             n->api.bridge_description);
  else snprintf(n->base.backend, sizeof n->base.backend, "%s", n->api.description);
  *out_npu = &n->base;
  return TANDEM_OK;
}

static tandem_status_t tandem_xrt_open_real(const tandem_runtime_options_t *options,
                                            const void *state, tandem__npu_t **out_npu) {
  return tandem_xrt_npu_open(options, state, false, out_npu);
}

static tandem_status_t tandem_xrt_open_emulated(const tandem_runtime_options_t *options,
                                                const void *state, tandem__npu_t **out_npu) {
  return tandem_xrt_npu_open(options, state, true, out_npu);
}

const tandem__npu_backend_t tandem_xrt_npu_backend = {
    .name = "xrt",
    .fault_kind = TANDEM__FAULT_XRT, /* xrt_fault.c wraps the API table */
    .options_in = tandem_xrt_options_in,
    .options_free = free,
    .open = tandem_xrt_open_real,
    .program_check = tandem_xrt_program_check,
};

const tandem__npu_backend_t tandem_emu_npu_backend = {
    .name = "emulated",
    .fault_kind = TANDEM__FAULT_XRT, /* the same code path and API table */
    .options_in = tandem_xrt_options_in,
    .options_free = free,
    .open = tandem_xrt_open_emulated,
    .program_check = tandem_xrt_program_check,
};
