/* SPDX-License-Identifier: MIT */
/*
 * _cuda.c — tandem memory and timelines in CUDA, for DLPack's kDLCUDA.
 *
 * A GPU_LOCAL buffer created exportable leaves tandem as an opaque fd
 * (tandem_buffer_export_fd) and enters CUDA with cuImportExternalMemory; the
 * consumer's stream then waits, on the GPU, for tandem's exported lane
 * timelines (cuWaitExternalSemaphoresAsync on the values every submission
 * made from Python reaches: no host wait, no copy). The other direction,
 * CUDA work that tandem must wait for, goes through a timeline semaphore
 * this file creates on tandem's VkDevice and exports twice: CUDA imports
 * one fd and signals it on the producer's stream (cuSignalExternal-
 * SemaphoresAsync), tandem imports the other as an EXTERNAL lane
 * (tandem_runtime_import_timeline_fd, tandem_external_timeline_lane) that a
 * submission waits on (tandem_exec_submit_waiting). tandem itself never
 * signals that semaphore, and CUDA never signals tandem's own timelines
 * (tandem's invariant I2).
 *
 * The CUDA driver (libcuda.so.1) is loaded at run time with dlopen: it is
 * neither a build nor an install dependency. Its structs are declared here
 * as the driver API's ABI (cuda.h, CUDA 11.2 and later); the driver API is
 * the one both PyTorch's and CuPy's streams are handles of.
 */
#include "_cuda.h"
#include "_errors.h"
#include "tandem/tandem_vulkan.h"

#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* --- the CUDA driver API's ABI, as cuda.h declares it ------------------- */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUextMemory_st *CUexternalMemory;
typedef struct CUextSemaphore_st *CUexternalSemaphore;
typedef unsigned long long CUdeviceptr;
typedef struct {
  char bytes[16];
} CUuuid;

enum { TPY_CU_EXT_MEM_OPAQUE_FD = 1, TPY_CU_EXT_SEM_TIMELINE_FD = 9, TPY_CU_EXT_MEM_DEDICATED = 1 };

typedef struct {
  int type;
  union {
    int fd;
    struct {
      void *handle;
      const void *name;
    } win32;
    const void *nvSciBufObject;
  } handle;
  unsigned long long size;
  unsigned int flags;
  unsigned int reserved[16];
} tpy_cu_ext_mem_desc_t;

typedef struct {
  unsigned long long offset;
  unsigned long long size;
  unsigned int flags;
  unsigned int reserved[16];
} tpy_cu_ext_mem_buffer_desc_t;

typedef struct {
  int type;
  union {
    int fd;
    struct {
      void *handle;
      const void *name;
    } win32;
    const void *nvSciSyncObj;
  } handle;
  unsigned int flags;
  unsigned int reserved[16];
} tpy_cu_ext_sem_desc_t;

typedef struct {
  struct {
    struct {
      unsigned long long value;
    } fence;
    union {
      void *fence;
      unsigned long long reserved;
    } nvSciSync;
    struct {
      unsigned long long key;
      unsigned int timeoutMs;
    } keyedMutex;
    unsigned int reserved[10];
  } params;
  unsigned int flags;
  unsigned int reserved[16];
} tpy_cu_sem_wait_params_t;

typedef struct {
  struct {
    struct {
      unsigned long long value;
    } fence;
    union {
      void *fence;
      unsigned long long reserved;
    } nvSciSync;
    struct {
      unsigned long long key;
    } keyedMutex;
    unsigned int reserved[12];
  } params;
  unsigned int flags;
  unsigned int reserved[16];
} tpy_cu_sem_signal_params_t;

_Static_assert(sizeof(tpy_cu_sem_wait_params_t) == 144,
               "CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS layout");
_Static_assert(sizeof(tpy_cu_sem_signal_params_t) == 144,
               "CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS layout");
_Static_assert(sizeof(tpy_cu_ext_mem_desc_t) == 104, "CUDA_EXTERNAL_MEMORY_HANDLE_DESC layout");

static struct {
  bool tried;
  void *lib;
  char why[256];
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuImportExternalMemory)(CUexternalMemory *, const tpy_cu_ext_mem_desc_t *);
  CUresult (*cuExternalMemoryGetMappedBuffer)(CUdeviceptr *, CUexternalMemory,
                                              const tpy_cu_ext_mem_buffer_desc_t *);
  CUresult (*cuDestroyExternalMemory)(CUexternalMemory);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuImportExternalSemaphore)(CUexternalSemaphore *, const tpy_cu_ext_sem_desc_t *);
  CUresult (*cuWaitExternalSemaphoresAsync)(const CUexternalSemaphore *,
                                            const tpy_cu_sem_wait_params_t *, unsigned, CUstream);
  CUresult (*cuSignalExternalSemaphoresAsync)(const CUexternalSemaphore *,
                                              const tpy_cu_sem_signal_params_t *, unsigned,
                                              CUstream);
  CUresult (*cuDestroyExternalSemaphore)(CUexternalSemaphore);
} cu;

/* Loads libcuda.so.1 once; false with cu.why set when it cannot be used. */
static bool tpy_cuda_load(void) {
  if (cu.tried) return cu.lib != NULL;
  cu.tried = true;
  cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cu.lib) {
    snprintf(cu.why, sizeof cu.why, "no CUDA driver: dlopen(libcuda.so.1) failed: %s", dlerror());
    return false;
  }
  /* Versioned names first: the unversioned ones are older ABIs. */
#define TPY_CU_SYM(field, ...)                                                 \
  do {                                                                         \
    const char *names_[] = {__VA_ARGS__, NULL};                                \
    for (int i_ = 0; names_[i_] && !cu.field; i_++)                            \
      *(void **)&cu.field = dlsym(cu.lib, names_[i_]);                         \
    if (!cu.field) {                                                           \
      snprintf(cu.why, sizeof cu.why, "the CUDA driver has no %s", names_[0]); \
      dlclose(cu.lib);                                                         \
      cu.lib = NULL;                                                           \
      return false;                                                            \
    }                                                                          \
  } while (0)
  TPY_CU_SYM(cuInit, "cuInit");
  TPY_CU_SYM(cuGetErrorString, "cuGetErrorString");
  TPY_CU_SYM(cuDeviceGetCount, "cuDeviceGetCount");
  TPY_CU_SYM(cuDeviceGet, "cuDeviceGet");
  TPY_CU_SYM(cuDeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid");
  TPY_CU_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  TPY_CU_SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
             "cuDevicePrimaryCtxRelease");
  TPY_CU_SYM(cuCtxPushCurrent, "cuCtxPushCurrent_v2", "cuCtxPushCurrent");
  TPY_CU_SYM(cuCtxPopCurrent, "cuCtxPopCurrent_v2", "cuCtxPopCurrent");
  TPY_CU_SYM(cuImportExternalMemory, "cuImportExternalMemory");
  TPY_CU_SYM(cuExternalMemoryGetMappedBuffer, "cuExternalMemoryGetMappedBuffer");
  TPY_CU_SYM(cuDestroyExternalMemory, "cuDestroyExternalMemory");
  TPY_CU_SYM(cuMemFree, "cuMemFree_v2", "cuMemFree");
  TPY_CU_SYM(cuImportExternalSemaphore, "cuImportExternalSemaphore");
  TPY_CU_SYM(cuWaitExternalSemaphoresAsync, "cuWaitExternalSemaphoresAsync");
  TPY_CU_SYM(cuSignalExternalSemaphoresAsync, "cuSignalExternalSemaphoresAsync");
  TPY_CU_SYM(cuDestroyExternalSemaphore, "cuDestroyExternalSemaphore");
#undef TPY_CU_SYM
  CUresult r = cu.cuInit(0);
  if (r != 0) {
    const char *s = NULL;
    cu.cuGetErrorString(r, &s);
    snprintf(cu.why, sizeof cu.why, "cuInit failed: %s (%d)", s ? s : "?", r);
    dlclose(cu.lib);
    cu.lib = NULL;
    return false;
  }
  return true;
}

PyObject *tpy_cuda_unavailable_reason(void) {
  if (tpy_cuda_load()) Py_RETURN_NONE;
  return PyUnicode_FromString(cu.why);
}

static PyObject *tpy_cu_fail(CUresult r, const char *call) {
  const char *s = NULL;
  if (cu.cuGetErrorString) cu.cuGetErrorString(r, &s);
  return tpy_raise_msg(TANDEM_ERROR_INTERNAL, "%s failed: %s (CUresult %d)", call,
                       s ? s : "unknown", r);
}

/* --- per runtime: the CUDA device, tandem's timelines in CUDA, and the
 *     semaphore CUDA signals for tandem ------------------------------------ */
struct tpy_cuda_runtime {
  CUdevice device;
  int ordinal;
  CUcontext ctx;
  bool have_ctx;
  CUexternalSemaphore lanes[TANDEM_LANE_COUNT]; /* tandem's exported timelines, imported */
  /* CUDA → tandem */
  CUexternalSemaphore to_tandem;
  tandem_external_timeline_t *to_tandem_timeline;
  tandem_lane_t to_tandem_lane;
  uint64_t to_tandem_value;
};

struct tpy_cuda_buffer {
  CUexternalMemory memory;
  CUdeviceptr ptr;
};

static int tpy_cuda_runtime_get(tpy_runtime_t *r, const uint8_t uuid[16]) {
  if (r->cuda) return 0;
  if (!tpy_cuda_load()) {
    tpy_raise_msg(TANDEM_ERROR_UNSUPPORTED, "kDLCUDA: %s", cu.why);
    return -1;
  }
  int n = 0;
  CUresult cr = cu.cuDeviceGetCount(&n);
  if (cr) return tpy_cu_fail(cr, "cuDeviceGetCount"), -1;
  for (int i = 0; i < n; i++) {
    CUdevice d;
    CUuuid u;
    if (cu.cuDeviceGet(&d, i) || cu.cuDeviceGetUuid(&u, d)) continue;
    if (memcmp(u.bytes, uuid, 16) != 0) continue;
    struct tpy_cuda_runtime *c = PyMem_RawCalloc(1, sizeof *c);
    if (!c) return PyErr_NoMemory(), -1;
    c->device = d;
    c->ordinal = i;
    cr = cu.cuDevicePrimaryCtxRetain(&c->ctx, d);
    if (cr) {
      PyMem_RawFree(c);
      return tpy_cu_fail(cr, "cuDevicePrimaryCtxRetain"), -1;
    }
    c->have_ctx = true;
    r->cuda = c;
    return 0;
  }
  tpy_raise_msg(TANDEM_ERROR_UNSUPPORTED,
                "kDLCUDA: none of the %d CUDA devices is tandem's GPU (no device UUID matches the "
                "Vulkan device's); run tandem on the NVIDIA GPU (Runtime(gpu_index=...))",
                n);
  return -1;
}

void tpy_cuda_runtime_free(tpy_runtime_t *r) {
  struct tpy_cuda_runtime *c = r->cuda;
  if (!c) return;
  r->cuda = NULL;
  for (int i = 0; i < TANDEM_LANE_COUNT; i++)
    if (c->lanes[i]) cu.cuDestroyExternalSemaphore(c->lanes[i]);
  if (c->to_tandem) cu.cuDestroyExternalSemaphore(c->to_tandem);
  /* Waits for the submissions that wait on it (they can finish: CUDA
   * signalled every value handed out before its stream went on). */
  if (c->to_tandem_timeline) {
    tandem_external_timeline_t *t = c->to_tandem_timeline;
    Py_BEGIN_ALLOW_THREADS
    tandem_external_timeline_destroy(t);
    Py_END_ALLOW_THREADS
  }
  if (c->have_ctx) cu.cuDevicePrimaryCtxRelease(c->device);
  PyMem_RawFree(c);
}

/* Imports |b|'s memory into CUDA once (the fd is CUDA's after success). */
static int tpy_cuda_buffer_import(tpy_buffer_t *b) {
  if (b->cuda) return 0;
  if (b->placement != TANDEM_PLACEMENT_GPU_LOCAL || !b->exportable) {
    tpy_raise_msg(TANDEM_ERROR_UNSUPPORTED, "kDLCUDA needs a GPU_LOCAL buffer created exportable: "
                                            "runtime.buffer(n, 'gpu_local', exportable=True)");
    return -1;
  }
  tandem_external_memory_t mem;
  tandem_external_memory_init(&mem);
  tandem_status_t s = tandem_buffer_export_fd(b->buffer, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &mem);
  if (s != TANDEM_OK) return tpy_raise(s), -1;
  if (tpy_cuda_runtime_get(b->runtime, mem.device_uuid) < 0) {
    close(mem.fd);
    return -1;
  }
  struct tpy_cuda_runtime *c = b->runtime->cuda;
  tpy_cu_ext_mem_desc_t d;
  memset(&d, 0, sizeof d);
  d.type = TPY_CU_EXT_MEM_OPAQUE_FD;
  d.handle.fd = mem.fd;
  d.size = mem.allocation_size;
  d.flags = mem.dedicated ? TPY_CU_EXT_MEM_DEDICATED : 0;
  CUexternalMemory em = NULL;
  cu.cuCtxPushCurrent(c->ctx);
  CUresult cr = cu.cuImportExternalMemory(&em, &d);
  if (cr) {
    CUcontext old;
    cu.cuCtxPopCurrent(&old);
    close(mem.fd); /* still ours after a failed import */
    return tpy_cu_fail(cr, "cuImportExternalMemory"), -1;
  }
  tpy_cu_ext_mem_buffer_desc_t bd;
  memset(&bd, 0, sizeof bd);
  bd.offset = 0;
  bd.size = b->size;
  CUdeviceptr ptr = 0;
  cr = cu.cuExternalMemoryGetMappedBuffer(&ptr, em, &bd);
  CUcontext old;
  cu.cuCtxPopCurrent(&old);
  if (cr) {
    cu.cuDestroyExternalMemory(em);
    return tpy_cu_fail(cr, "cuExternalMemoryGetMappedBuffer"), -1;
  }
  b->cuda = PyMem_RawCalloc(1, sizeof *b->cuda);
  if (!b->cuda) {
    cu.cuMemFree(ptr);
    cu.cuDestroyExternalMemory(em);
    PyErr_NoMemory();
    return -1;
  }
  b->cuda->memory = em;
  b->cuda->ptr = ptr;
  return 0;
}

void tpy_cuda_buffer_free(tpy_buffer_t *b) {
  if (!b->cuda) return;
  cu.cuMemFree(b->cuda->ptr);
  cu.cuDestroyExternalMemory(b->cuda->memory);
  PyMem_RawFree(b->cuda);
  b->cuda = NULL;
}

int tpy_cuda_buffer_device(tpy_buffer_t *b, int *out_device) {
  if (tpy_cuda_buffer_import(b) < 0) return -1;
  *out_device = b->runtime->cuda->ordinal;
  return 0;
}

/* DLPack's stream numbering: None/1 the legacy default stream, 2 the
 * per-thread default, -1 no synchronisation, else a CUstream (1 and 2 are
 * CUDA's own CU_STREAM_LEGACY / CU_STREAM_PER_THREAD). DLPack calls 0
 * ambiguous; a raw CUstream of 0 (what torch's `cuda_stream` gives for the
 * default stream) is the NULL stream, accepted where |zero_is_null|. */
static int tpy_stream(PyObject *o, bool zero_is_null, CUstream *out, bool *none) {
  *none = false;
  if (o == Py_None) {
    *out = (CUstream)(uintptr_t)1;
    return 0;
  }
  if (!PyLong_Check(o)) {
    PyErr_SetString(PyExc_TypeError,
                    "stream must be an int (a CUDA stream handle, DLPack numbering) or None");
    return -1;
  }
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    *out = (CUstream)PyLong_AsVoidPtr(o);
    return PyErr_Occurred() ? -1 : 0;
  }
  if (v == -1) {
    *none = true;
    return 0;
  }
  if (v == 0 && zero_is_null) {
    *out = NULL;
    return 0;
  }
  if (v == 0) {
    PyErr_SetString(PyExc_ValueError,
                    "stream 0 is ambiguous in DLPack: pass 1 (legacy default) or 2");
    return -1;
  }
  *out = (CUstream)(uintptr_t)v;
  return 0;
}

int tpy_cuda_buffer_export(tpy_buffer_t *b, PyObject *stream, void **out_ptr, int *out_device) {
  CUstream st;
  bool no_sync;
  if (tpy_stream(stream, false, &st, &no_sync) < 0) return -1;
  if (tpy_cuda_buffer_import(b) < 0) return -1;
  struct tpy_cuda_runtime *c = b->runtime->cuda;
  tpy_runtime_t *r = b->runtime;
  if (!no_sync) {
    if (!r->track_lanes) {
      tpy_raise_msg(TANDEM_ERROR_UNSUPPORTED,
                    "kDLCUDA: the consumer's stream must wait for tandem's work on the GPU, which "
                    "needs Runtime(export_timelines=True)");
      return -1;
    }
    CUexternalSemaphore sems[TANDEM_LANE_COUNT];
    tpy_cu_sem_wait_params_t params[TANDEM_LANE_COUNT];
    unsigned n = 0;
    memset(params, 0, sizeof params);
    for (int lane = 0; lane < TANDEM_LANE_COUNT; lane++) {
      if (!r->submitted[lane]) continue;
      if (!c->lanes[lane]) {
        int fd = -1;
        tandem_status_t s = tandem_runtime_export_timeline_fd(r->keep, (tandem_lane_t)lane, &fd);
        if (s != TANDEM_OK) return tpy_raise(s), -1;
        tpy_cu_ext_sem_desc_t d;
        memset(&d, 0, sizeof d);
        d.type = TPY_CU_EXT_SEM_TIMELINE_FD;
        d.handle.fd = fd;
        cu.cuCtxPushCurrent(c->ctx);
        CUresult cr = cu.cuImportExternalSemaphore(&c->lanes[lane], &d);
        CUcontext old;
        cu.cuCtxPopCurrent(&old);
        if (cr) {
          close(fd);
          c->lanes[lane] = NULL;
          return tpy_cu_fail(cr, "cuImportExternalSemaphore (tandem's lane timeline)"), -1;
        }
      }
      sems[n] = c->lanes[lane];
      params[n].params.fence.value = r->submitted[lane];
      n++;
    }
    if (n) {
      cu.cuCtxPushCurrent(c->ctx);
      CUresult cr = cu.cuWaitExternalSemaphoresAsync(sems, params, n, st);
      CUcontext old;
      cu.cuCtxPopCurrent(&old);
      if (cr) return tpy_cu_fail(cr, "cuWaitExternalSemaphoresAsync"), -1;
    }
  }
  *out_ptr = (void *)(uintptr_t)b->cuda->ptr;
  *out_device = c->ordinal;
  return 0;
}

/* Makes the CUDA → tandem semaphore: a timeline on tandem's VkDevice,
 * exported twice (CUDA's fd, tandem's fd), then destroyed here (each import
 * holds the payload). */
static int tpy_cuda_to_tandem(tpy_runtime_t *r) {
  struct tpy_cuda_runtime *c = r->cuda;
  if (c->to_tandem) return 0;
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  tandem_status_t s = tandem_runtime_vulkan_handles(r->keep, &h);
  if (s != TANDEM_OK) return tpy_raise(s), -1;
  PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)h.get_instance_proc_addr;
  VkInstance inst = (VkInstance)h.instance;
  VkDevice dev = (VkDevice)h.device;
  PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa(inst, "vkGetDeviceProcAddr");
  PFN_vkCreateSemaphore create =
      gdpa ? (PFN_vkCreateSemaphore)gdpa(dev, "vkCreateSemaphore") : NULL;
  PFN_vkDestroySemaphore destroy =
      gdpa ? (PFN_vkDestroySemaphore)gdpa(dev, "vkDestroySemaphore") : NULL;
  PFN_vkGetSemaphoreFdKHR get_fd =
      gdpa ? (PFN_vkGetSemaphoreFdKHR)gdpa(dev, "vkGetSemaphoreFdKHR") : NULL;
  if (!create || !destroy || !get_fd) {
    tpy_raise_msg(TANDEM_ERROR_UNSUPPORTED,
                  "CUDA → tandem ordering needs VK_KHR_external_semaphore_fd on tandem's device");
    return -1;
  }
  VkExportSemaphoreCreateInfo exp = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                     .handleTypes =
                                         VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .pNext = &exp,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
                                    .initialValue = 0};
  VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  VkSemaphore sem = VK_NULL_HANDLE;
  VkResult vr = create(dev, &ci, NULL, &sem);
  if (vr != VK_SUCCESS) {
    tpy_raise_msg(TANDEM_ERROR_INTERNAL,
                  "vkCreateSemaphore (exportable timeline) failed: VkResult %d", vr);
    return -1;
  }
  VkSemaphoreGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                .semaphore = sem,
                                .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  int fd_cuda = -1, fd_tandem = -1;
  vr = get_fd(dev, &gi, &fd_cuda);
  if (vr == VK_SUCCESS) vr = get_fd(dev, &gi, &fd_tandem);
  destroy(dev, sem, NULL);
  if (vr != VK_SUCCESS) {
    if (fd_cuda >= 0) close(fd_cuda);
    tpy_raise_msg(TANDEM_ERROR_INTERNAL, "vkGetSemaphoreFdKHR failed: VkResult %d", vr);
    return -1;
  }
  tpy_cu_ext_sem_desc_t d;
  memset(&d, 0, sizeof d);
  d.type = TPY_CU_EXT_SEM_TIMELINE_FD;
  d.handle.fd = fd_cuda;
  cu.cuCtxPushCurrent(c->ctx);
  CUresult cr = cu.cuImportExternalSemaphore(&c->to_tandem, &d);
  CUcontext old;
  cu.cuCtxPopCurrent(&old);
  if (cr) {
    close(fd_cuda);
    close(fd_tandem);
    c->to_tandem = NULL;
    return tpy_cu_fail(cr, "cuImportExternalSemaphore (CUDA → tandem timeline)"), -1;
  }
  s = tandem_runtime_import_timeline_fd(r->keep, fd_tandem, &c->to_tandem_timeline);
  if (s == TANDEM_OK) s = tandem_external_timeline_lane(c->to_tandem_timeline, &c->to_tandem_lane);
  if (s != TANDEM_OK) {
    if (!c->to_tandem_timeline) close(fd_tandem);
    tpy_raise(s);
    cu.cuDestroyExternalSemaphore(c->to_tandem);
    c->to_tandem = NULL;
    if (c->to_tandem_timeline) tandem_external_timeline_destroy(c->to_tandem_timeline);
    c->to_tandem_timeline = NULL;
    return -1;
  }
  return 0;
}

PyObject *tpy_cuda_signal(tpy_runtime_t *r, PyObject *stream) {
  CUstream st;
  bool no_sync;
  if (tpy_stream(stream, true, &st, &no_sync) < 0) return NULL;
  if (no_sync) {
    PyErr_SetString(PyExc_ValueError, "cuda_signal needs a stream to signal on, not -1");
    return NULL;
  }
  if (!r->cuda) {
    /* The device UUID travels with an exported memory: export a 4-byte
     * buffer once to learn it. */
    tandem_buffer_t *probe = NULL;
    tandem_status_t s = tandem_buffer_create_exportable(r->keep, 4, TANDEM_PLACEMENT_GPU_LOCAL,
                                                        TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &probe);
    if (s != TANDEM_OK) return tpy_raise(s);
    tandem_external_memory_t mem;
    tandem_external_memory_init(&mem);
    s = tandem_buffer_export_fd(probe, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &mem);
    tandem_buffer_release(probe);
    if (s != TANDEM_OK) return tpy_raise(s);
    close(mem.fd);
    if (tpy_cuda_runtime_get(r, mem.device_uuid) < 0) return NULL;
  }
  if (tpy_cuda_to_tandem(r) < 0) return NULL;
  struct tpy_cuda_runtime *c = r->cuda;
  tpy_cu_sem_signal_params_t p;
  memset(&p, 0, sizeof p);
  p.params.fence.value = c->to_tandem_value + 1;
  cu.cuCtxPushCurrent(c->ctx);
  CUresult cr = cu.cuSignalExternalSemaphoresAsync(&c->to_tandem, &p, 1, st);
  CUcontext old;
  cu.cuCtxPopCurrent(&old);
  if (cr) return tpy_cu_fail(cr, "cuSignalExternalSemaphoresAsync");
  c->to_tandem_value++;
  return Py_BuildValue("(iK)", (int)c->to_tandem_lane, (unsigned long long)c->to_tandem_value);
}
