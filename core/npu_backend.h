/* SPDX-License-Identifier: MIT */
/*
 * npu_backend.h — the one interface through which core/ drives an NPU.
 *
 * core/npu.c owns the sharing negotiation and core/npu_lane.c the NPU lane
 * thread and the order of syncs and runs; a backend (backends/xrt/, serving
 * real XRT and the emulated NPU through one code path) turns them into
 * native calls, and
 * answers what core must not know how to find (device nodes: libdrm lives in
 * the backend). The vtable starts with destroy; every slot is filled.
 */
#ifndef TANDEM_CORE_NPU_BACKEND_H_
#define TANDEM_CORE_NPU_BACKEND_H_

#include <stdbool.h>
#include <stdint.h>

#include "tandem/tandem.h"

typedef struct tandem__npu tandem__npu_t;

typedef struct tandem__npu_vtable {
  void (*destroy)(tandem__npu_t *npu);
  /* A buffer object of |size| bytes, zero-filled on both sides, mapped at
   * |out_host| (page aligned). */
  tandem_status_t (*bo_create)(tandem__npu_t *npu, uint64_t size, void **out_bo, void **out_host);
  /* An fd for the BO's memory (the caller closes it); |out_is_dmabuf| says
   * whether it is a real dma-buf (only those may be imported into Vulkan). */
  tandem_status_t (*bo_export)(tandem__npu_t *npu, void *bo, int *out_fd, bool *out_is_dmabuf);
  /* A BO over memory another device exported as dma-buf |fd| (xrtBOImport);
   * the fd stays the caller's. */
  tandem_status_t (*bo_import)(tandem__npu_t *npu, int fd, void **out_bo, void **out_host);
  void (*bo_destroy)(tandem__npu_t *npu, void *bo);
  /* Cache maintenance of [offset, offset+size): host → device or back. */
  tandem_status_t (*bo_sync)(tandem__npu_t *npu, void *bo, bool to_device, uint64_t offset,
                             uint64_t size);
  /* Loads the program (desc->program_path; for XRT an xclbin or a full
   * ELF), opens the kernel and checks its arguments against the contract
   * (desc->bindings and scalar_count) and the backend's extension chained
   * from desc->next, which program_check (below) has checked. */
  tandem_status_t (*program_create)(tandem__npu_t *npu, const tandem_npu_program_desc_t *desc,
                                    const char *name, void **out_program);
  void (*program_destroy)(tandem__npu_t *npu, void *program);
  /* A run handle with every argument set: |bos| one per binding, |scalars|. */
  tandem_status_t (*run_create)(tandem__npu_t *npu, void *program, void *const *bos,
                                uint32_t bo_count, const uint32_t *scalars, uint32_t scalar_count,
                                void **out_run);
  /* Makes |run| ready for its buffers to be synced and the run started:
   * an earlier execution of it that outlived the watchdog is waited for
   * (bounded by the backend); TIMEOUT, naming why, when it is still on the
   * NPU. The NPU lane calls it before the syncs of each run, which a busy
   * buffer would refuse. */
  tandem_status_t (*run_ready)(tandem__npu_t *npu, void *run);
  /* Starts the run and waits at most |timeout_ms|: OK, TIMEOUT (the run goes
   * on; run_destroy waits for it), or INTERNAL with the state reached. */
  tandem_status_t (*run_execute)(tandem__npu_t *npu, void *run, uint32_t timeout_ms);
  /* Waits for a run still going (after a timeout), then frees it. */
  void (*run_destroy)(tandem__npu_t *npu, void *run);
  /* Appends the device nodes where NPUs and GPUs appear on this system
   * (/dev/accel, /dev/dri) to info->drm_nodes, at most 8 in all. Absence is
   * a normal, empty answer. */
  void (*device_nodes)(tandem__npu_t *npu, tandem_npu_info_t *info);
  /* Fills the extensions chained from a tandem_npu_info_t's next (tandem.h,
   * "Extension chains") that the backend knows; INVALID_ARGUMENT naming the
   * tag of any other, of one chained twice or of a bad struct_size. */
  tandem_status_t (*info_extensions)(tandem__npu_t *npu, void *next);
} tandem__npu_vtable_t;

struct tandem__npu {
  const tandem__npu_vtable_t *vtable;
  char name[128];
  char backend[192];
  bool emulated;
};

/* An NPU backend as core knows it: its name, which the runtime option
 * npu_backend gives, opening device |options->npu_index| for a runtime, and
 * checking a program's extensions before any device is open. A runtime
 * finds its entry in the registry (core/registry.h) by that name. */
typedef struct tandem__npu_backend {
  const char *name; /* "xrt", "emulated": the runtime option npu_backend */
  /* The fault-injection kind (core/fault.h, tandem__fault_kind_t) that
   * counts its native calls. */
  uint32_t fault_kind;
  /* Reads the extensions chained from options->next (tandem.h, "Extension
   * chains") and the backend's environment variables into a state of its
   * own in *out_state (NULL allowed), kept by the runtime for open and given
   * back to options_free; INVALID_ARGUMENT naming an extension's tag or the
   * variable. Called once, at tandem_runtime_create. */
  tandem_status_t (*options_in)(const tandem_runtime_options_t *options, void **out_state);
  void (*options_free)(void *state);
  tandem_status_t (*open)(const tandem_runtime_options_t *options, const void *state,
                          tandem__npu_t **out_npu);
  /* Walks the extensions chained from desc->next (tandem.h, "Extension
   * chains") and checks those the backend reads; INVALID_ARGUMENT naming
   * program |name| and the tag of one it does not read, of one chained
   * twice, or of a bad one (its struct_size, its fields). Core has checked
   * the shared fields. */
  tandem_status_t (*program_check)(const tandem_npu_program_desc_t *desc, const char *name);
} tandem__npu_backend_t;

/* backends/xrt/xrt_npu.c: the system's XRT ("xrt") and tandem's emulated NPU
 * ("emulated"), one code path. Only core/registry.c names them. */
extern const tandem__npu_backend_t tandem_xrt_npu_backend;
extern const tandem__npu_backend_t tandem_emu_npu_backend;

#endif /* TANDEM_CORE_NPU_BACKEND_H_ */
