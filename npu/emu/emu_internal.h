/* SPDX-License-Identifier: MIT */
/*
 * emu_internal.h — internal objects of tandem's emulated NPU device (a test
 * and development device that implements tandem's XRT C API subset on the
 * CPU; it never pretends to be hardware). One mutex per device guards every
 * mutable field of the device and of its buffer objects, kernels and runs.
 * Objects are reference counted so nothing is freed under running work:
 * a run holds its kernel and the buffer objects set as its arguments; a
 * buffer object, kernel or loaded image holds its device.
 */
#ifndef TANDEM_NPU_EMU_EMU_INTERNAL_H_
#define TANDEM_NPU_EMU_EMU_INTERNAL_H_

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tandem_emu_kernel.h"
#include "internal/xrt_headers.h"

#define EMU_EXPORT __attribute__((visibility("default")))

/* Handle tags: catch a handle of the wrong kind (or a freed one) early. */
enum {
  EMU_MAGIC_DEVICE = 0x7e4d4456u,
  EMU_MAGIC_XCLBIN = 0x7e4d5842u,
  EMU_MAGIC_BO = 0x7e4d424fu,
  EMU_MAGIC_KERNEL = 0x7e4d4b4eu,
  EMU_MAGIC_RUN = 0x7e4d524eu,
  EMU_MAGIC_CONTEXT = 0x7e4d4358u,
  EMU_MAGIC_DEAD = 0xdeadu,
};

typedef struct emu_run emu_run_t;

/* The largest hardware-context handle amdxdna hands out: MAX_HWCTX_ID
 * (amd/xdna-driver@856409ca drivers/accel/amdxdna/amdxdna_ctx.h:18). */
#define EMU_MAX_SLOT 1024

/* What a BO is, as amdxdna's XRT plugin reads xrtBOAlloc's flags (XDNA mode;
 * in PLAIN mode every BO is PLAIN). */
typedef enum emu_bo_type {
  EMU_BO_PLAIN = 0, /* PLAIN mode: flags ignored */
  EMU_BO_SHARE = 1, /* HOST_ONLY: shmem pages, mappable, exportable */
  EMU_BO_DEV = 2,   /* CACHEABLE: the device heap; not exportable */
  EMU_BO_IMPORTED = 3,
} emu_bo_type_t;

/* Which XRT the device behaves like (TANDEM_EMU_MODE, read by xrtDeviceOpen). */
typedef enum emu_mode {
  EMU_MODE_XDNA = 0,  /* default: amdxdna's XRT plugin (flags, banks, unset arguments) */
  EMU_MODE_PLAIN = 1, /* FPGA-style XRT 2.13: flags ignored, every argument must be set */
} emu_mode_t;

typedef struct emu_device {
  uint32_t magic;
  emu_mode_t mode;
  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* worker: queue not empty or closing */
  pthread_cond_t done_cv; /* waiters: some run reached a final state */
  pthread_t worker;
  bool worker_started;
  bool closing;          /* xrtDeviceClose called: no new runs */
  uint32_t refs;         /* user handle + each BO, kernel */
  uint32_t live_kernels; /* kernels alive (user or run references) */
  emu_run_t *head, *tail;
  uint64_t delay_us;     /* TANDEM_EMU_DELAY_US */
  uint32_t contexts;     /* XDNA mode: hardware contexts in use (one per xrtPLKernelOpen
                            kernel, one per bridge context) */
  uint32_t max_contexts; /* TANDEM_EMU_MAX_CONTEXTS, default 4 */
  /* XDNA mode: hardware-context handles, which XRT's plugin uses as the
   * "slot" of every group id (see emu_slot_alloc_locked in emulator.c):
   * device-wide, allocated cyclically from 1 as the driver does. */
  uint32_t next_slot;
  uint8_t slot_used[EMU_MAX_SLOT + 1];
  uint64_t tdr_ms; /* XDNA mode: the driver's hang deadline (TANDEM_EMU_TDR_MS), 0 off */
  /* The loaded image (xrtDeviceLoadXclbinHandle). */
  void *lib;
  const tandem_emu_kernel_t *kernels;
  uint32_t kernel_count;
  xuid_t uuid;
} emu_device_t;

typedef struct emu_xclbin {
  uint32_t magic;
  char *library; /* resolved path of the kernels library */
  xuid_t uuid;
} emu_xclbin_t;

typedef struct emu_bo {
  uint32_t magic;
  emu_device_t *dev;
  uint32_t refs;   /* user (until xrtBOFree) + run argument slots + in-flight runs */
  uint32_t busy;   /* queued or running runs using it */
  bool user_freed; /* xrtBOFree succeeded */
  size_t size;
  int fd;       /* memfd: the BO's own, and what xrtBOExport returns */
  ino_t fd_ino; /* fd's identity, checked when the BO is destroyed */
  dev_t fd_dev;
  int flags_type;    /* emu_bo_type_t: how the flags were read (XDNA mode) */
  int32_t group;     /* the bank (group id & 0xffff) it was allocated in; -1 imported */
  void *host;        /* MAP_SHARED mapping of fd: the host side */
  void *device_side; /* private anonymous mapping: the device side */
  /* XDNA mode: the CPU cache model (emu_bo.c, xrtBOSync). The host side
   * as it was when each 64-byte line was last made clean by a sync: a line
   * whose host bytes differ from it is dirty. NULL in PLAIN mode. */
  void *clean;
  struct emu_bo *next_dead;
} emu_bo_t;

/* A hardware context of the bridge's tier 1 (tandemBridgeContextOpen, XDNA
 * mode): its own image of one xclbin, counted in emu_device_t.contexts. */
typedef struct emu_context {
  uint32_t magic;
  emu_device_t *dev;
  uint32_t refs; /* user (until tandemBridgeContextClose) + kernels opened through it */
  bool user_closed;
  uint32_t slot; /* its handle, from 1 (XDNA mode) */
  void *lib;
  const tandem_emu_kernel_t *kernels;
  uint32_t kernel_count;
} emu_context_t;

typedef struct emu_kernel {
  uint32_t magic;
  emu_device_t *dev;
  emu_context_t *ctx; /* opened through a bridge context (holds it), or NULL: xrtPLKernelOpen */
  uint32_t refs;      /* user (until xrtKernelClose) + runs */
  bool user_closed;
  const tandem_emu_kernel_t *desc;
  uint32_t nargs;
  bool reset; /* XDNA mode: a run passed the driver's deadline; its context was reset */
  /* XDNA mode: the handle of the hardware context the kernel runs in (its
   * context's, or its own for xrtPLKernelOpen); 0 in PLAIN mode. */
  uint32_t slot;
} emu_kernel_t;

typedef struct emu_run_arg {
  bool set;
  emu_bo_t *bo; /* BO args: holds a reference */
  uint64_t value;
} emu_run_arg_t;

struct emu_run {
  uint32_t magic;
  emu_kernel_t *kernel;
  enum ert_cmd_state state;
  uint32_t nargs;
  emu_run_arg_t *args;    /* set by xrtRunSetArg */
  tandem_emu_arg_t *exec; /* snapshot taken by xrtRunStart, read by the worker */
  emu_bo_t **exec_bos;    /* BOs the in-flight execution holds (busy + ref) */
  bool abort_requested;   /* tandemEmuRunAbort: end in ABORT */
  emu_run_t *next;        /* device queue */
};

/* Returns -err and sets errno = err (the int-returning functions' convention). */
static inline int emu_fail(int err) {
  errno = err;
  return -err;
}

/* Device reference counting (emu_device.c, below emu_bo.c and emulator.c). emu_device_put_locked returns true
 * when the caller must call emu_device_destroy after unlocking. */
void emu_device_get_locked(emu_device_t *dev);
bool emu_device_put_locked(emu_device_t *dev);
void emu_device_destroy(emu_device_t *dev);
emu_device_t *emu_device_from(xrtDeviceHandle h);

/* BO reference counting (emu_bo.c). Drop with the device lock held; when it
 * returns true the BO is unlinked and must be released with emu_bo_destroy
 * after unlocking. */
bool emu_bo_put_locked(emu_bo_t *bo);
void emu_bo_destroy(emu_bo_t *bo);
emu_bo_t *emu_bo_from(xrtBufferHandle h);

/* Parses an emulated xclbin (emu_xclbin.c). */
emu_xclbin_t *emu_xclbin_from(xrtXclbinHandle h);

#endif /* TANDEM_NPU_EMU_EMU_INTERNAL_H_ */
