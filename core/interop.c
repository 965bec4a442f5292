/* SPDX-License-Identifier: MIT */
/*
 * interop.c — the public interop calls: native accessors of views and
 * buffers (tandem_vulkan.h, tandem_xrt.h), and (tandem.h, "Sharing")
 * exportable and imported buffers, exported lane timelines and imported ones
 * a host can wait on.
 *
 * Everything device-specific goes through the backend vtable (core/backend.h);
 * this file checks arguments, capabilities (the bits the backend set at open)
 * and ownership. Nothing here enters the tracker: what crosses this boundary
 * is ordered by the user (docs/interop.md). I2 (runtime_int.h) is why an
 * exported timeline is documented as wait-only.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buffer.h"
#include "core/buffer_int.h"
#include "core/exec_int.h"
#include "core/handle.h"
#include "core/lane.h"
#include "core/lost.h"
#include "core/runtime.h"
#include "core/runtime_int.h"
#include "core/struct_size.h"
#include "tandem/tandem_vulkan.h"
#include "tandem/tandem_xrt.h"

struct tandem_external_timeline {
  tandem_runtime_t *runtime; /* a reference: the device outlives the semaphore */
  void *native;
  /* The user lane it became (tandem_external_timeline_lane), or -1. Set once
   * under runtime->mutex; read by its one owner. */
  int lane;
};

/*-------------------------------------------------------- native handles --*/

tandem_status_t tandem_view_vulkan_buffer(tandem_view_t view, tandem_vulkan_view_t *out) {
  if (!out) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  if (!view.buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "view has no buffer");
  TANDEM_RETURN_IF_ERROR(tandem__view_check(view.buffer->runtime, view, "view"));
  if (!view.buffer->native)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "a %s buffer has no VkBuffer (only the NPU sees it); use a SHARED buffer",
                       tandem_placement_name(view.buffer->placement));
  if (view.buffer->gpu != 0)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "the buffer is on GPU %u; interop (tandem_vulkan.h) is GPU 0's",
                       view.buffer->gpu);
  tandem__gpu_t *gpu = tandem__gpu_at(view.buffer->runtime, 0);
  if (!gpu->vtable->interop)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the runtime's GPU backend '%s' has no VkBuffers",
                       view.buffer->runtime->gpus[0].backend->name);
  out->buffer = gpu->vtable->interop->buffer_vulkan(gpu, view.buffer->native);
  out->offset = view.offset;
  out->range = view.length;
  return TANDEM_OK;
}

tandem_status_t tandem_buffer_xrt_bo(tandem_buffer_t *buffer, void **out_bo) {
  if (!out_bo) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_bo is NULL");
  *out_bo = NULL;
  if (!buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "buffer is NULL");
  if (!atomic_load(&buffer->runtime->npu))
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "the buffer's runtime has no NPU open, so no buffer has an XRT buffer "
                       "object (runtime option npu, then a SHARED or NPU_LOCAL buffer)");
  if (!buffer->npu_bo)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "a %s buffer has no XRT buffer object; SHARED and NPU_LOCAL buffers do",
                       tandem_placement_name(buffer->placement));
  *out_bo = buffer->npu_bo;
  return TANDEM_OK;
}

/*------------------------------------------------------ external memory --*/

static const char *tandem__memory_type_name(uint32_t type) {
  switch (type) {
    case TANDEM_EXTERNAL_MEMORY_OPAQUE_FD: return "opaque fd";
    case TANDEM_EXTERNAL_MEMORY_DMA_BUF: return "dma-buf";
  }
  return "unknown";
}

/* UNSUPPORTED naming the extension when |gpu| cannot share memory as |type|
 * (a single bit). */
static tandem_status_t tandem__memory_type_check(const tandem__gpu_t *gpu, uint32_t type) {
  if (gpu->external_memory_types & type) return TANDEM_OK;
  if (type == TANDEM_EXTERNAL_MEMORY_OPAQUE_FD)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "GPU '%s' cannot share memory as opaque fds: it lacks "
                       "VK_KHR_external_memory_fd",
                       gpu->info.name);
  return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                     "GPU '%s' cannot share memory as dma-bufs: it lacks "
                     "VK_EXT_external_memory_dma_buf%s",
                     gpu->info.name,
                     (gpu->external_memory_types & TANDEM_EXTERNAL_MEMORY_OPAQUE_FD)
                         ? " (opaque fds work: TANDEM_EXTERNAL_MEMORY_OPAQUE_FD)"
                         : "");
}

/* Placement and size rules shared by exportable and imported buffers. */
static tandem_status_t tandem__interop_placement_check(tandem_placement_t placement,
                                                       const char *what) {
  switch (placement) {
    case TANDEM_PLACEMENT_GPU_LOCAL:
    case TANDEM_PLACEMENT_HOST_VISIBLE: return TANDEM_OK;
    case TANDEM_PLACEMENT_SHARED:
    case TANDEM_PLACEMENT_NPU_LOCAL:
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "%s: placement %s is not supported (GPU_LOCAL or HOST_VISIBLE); SHARED "
                         "buffers share with the NPU through the runtime's sharing path",
                         what, tandem_placement_name(placement));
  }
  return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "%s: placement %d is not a tandem_placement_t",
                     what, (int)placement);
}

tandem_status_t tandem_buffer_create_exportable(tandem_runtime_t *runtime, uint64_t size,
                                                tandem_placement_t placement, uint32_t types,
                                                tandem_buffer_t **out_buffer) {
  if (!out_buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_buffer is NULL");
  *out_buffer = NULL;
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  const uint32_t known = TANDEM_EXTERNAL_MEMORY_OPAQUE_FD | TANDEM_EXTERNAL_MEMORY_DMA_BUF;
  if (types == 0 || (types & ~known))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "exportable buffer: types 0x%x must be a non-empty set of "
                       "tandem_external_memory_type_t bits (0x%x)",
                       types, known);
  if (size == 0 || size > TANDEM__MAX_BYTES)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE, "buffer size %llu is outside 1..%llu bytes",
                       (unsigned long long)size, (unsigned long long)TANDEM__MAX_BYTES);
  TANDEM_RETURN_IF_ERROR(tandem__interop_placement_check(placement, "exportable buffer"));
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(runtime, &gpu));
  for (uint32_t bit = 1; bit & known; bit <<= 1)
    if (types & bit) TANDEM_RETURN_IF_ERROR(tandem__memory_type_check(gpu, bit));
  return tandem__buffer_make(runtime, size, placement, types, NULL, out_buffer);
}

tandem_status_t tandem_buffer_export_fd(tandem_buffer_t *buffer, tandem_external_memory_type_t type,
                                        tandem_external_memory_t *user_out) {
  if (!user_out) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out is NULL");
  TANDEM_RETURN_IF_ERROR(tandem__struct_out_check(user_out, TANDEM__OLDEST_EXTERNAL_MEMORY,
                                                  "tandem_external_memory_t"));
  tandem_external_memory_t known;
  tandem_external_memory_init(&known);
  tandem__struct_out(user_out, &known, sizeof known); /* fd -1 on every failure */
  tandem_external_memory_t *out = &known;
  if (!buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "buffer is NULL");
  if (type != TANDEM_EXTERNAL_MEMORY_OPAQUE_FD && type != TANDEM_EXTERNAL_MEMORY_DMA_BUF)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "type %d is not one tandem_external_memory_type_t", (int)type);
  if (!buffer->native || buffer->npu_bo)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "a %s buffer cannot be exported; create it with "
                       "tandem_buffer_create_exportable (GPU_LOCAL or HOST_VISIBLE)",
                       tandem_placement_name(buffer->placement));
  tandem__gpu_t *gpu = tandem__gpu_at(buffer->runtime, 0);
  assert(gpu->vtable->interop); /* reached only with the capability it gives */
  tandem_status_t s = gpu->vtable->interop->buffer_export(gpu, buffer->native, type, out);
  tandem__runtime_note_loss(buffer->runtime, s);
  if (s != TANDEM_OK) {
    if (out->fd >= 0) close(out->fd); /* a backend that failed after making the fd */
    return tandem__annotate(s, "exporting a %llu-byte buffer as %s",
                            (unsigned long long)buffer->size, tandem__memory_type_name(type));
  }
  out->type = type;
  out->size = buffer->size;
  tandem__struct_out(user_out, out, sizeof *out);
  return TANDEM_OK;
}

/* Refuses fds that cannot be exported GPU memory before any driver sees
 * them (a driver may read() a pipe and block for ever): pipes, FIFOs,
 * sockets, directories, block devices, and regular files other than
 * shared memory (a memfd or tmpfs file answers F_GET_SEALS). Exported
 * memory is a memfd, a dma-buf or a driver's own fd (anonymous inodes and
 * character devices), which pass. */
static tandem_status_t tandem__import_fd_kind_check(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "import: fstat of memory->fd %d failed: %s",
                       fd, strerror(errno));
  const char *kind = S_ISFIFO(st.st_mode)   ? "a pipe or FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISDIR(st.st_mode)  ? "a directory"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISLNK(st.st_mode)  ? "a symbolic link"
                                            : NULL;
  if (!kind && S_ISREG(st.st_mode) && fcntl(fd, F_GET_SEALS) < 0)
    kind = "a regular file (not shared memory)";
  if (kind)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "import: memory->fd %d is %s, not exported memory; pass the fd that "
                       "tandem_buffer_export_fd, vkGetMemoryFdKHR or a dma-buf exporter gave",
                       fd, kind);
  return TANDEM_OK;
}

tandem_status_t tandem_buffer_import_fd(tandem_runtime_t *runtime,
                                        const tandem_external_memory_t *user_memory, uint64_t size,
                                        tandem_placement_t placement,
                                        tandem_buffer_t **out_buffer) {
  if (!out_buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_buffer is NULL");
  *out_buffer = NULL;
  if (!runtime || !user_memory)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or memory is NULL");
  TANDEM__STRUCT_IN(tandem_external_memory, user_memory, known, TANDEM__OLDEST_EXTERNAL_MEMORY);
  const tandem_external_memory_t *memory = &known;
  if (memory->type != TANDEM_EXTERNAL_MEMORY_OPAQUE_FD &&
      memory->type != TANDEM_EXTERNAL_MEMORY_DMA_BUF)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "import: memory->type %d is not one tandem_external_memory_type_t",
                       (int)memory->type);
  if (memory->fd < 0 || fcntl(memory->fd, F_GETFD) < 0)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "import: memory->fd %d is not an open file descriptor", memory->fd);
  TANDEM_RETURN_IF_ERROR(tandem__import_fd_kind_check(memory->fd));
  if (size == 0 || size > TANDEM__MAX_BYTES)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "import: buffer size %llu is outside 1..%llu bytes",
                       (unsigned long long)size, (unsigned long long)TANDEM__MAX_BYTES);
  if (memory->type == TANDEM_EXTERNAL_MEMORY_OPAQUE_FD && size > memory->allocation_size)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "import: a %llu-byte buffer does not fit the %llu bytes of exported memory",
                       (unsigned long long)size, (unsigned long long)memory->allocation_size);
  TANDEM_RETURN_IF_ERROR(tandem__interop_placement_check(placement, "import"));
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(runtime, &gpu));
  TANDEM_RETURN_IF_ERROR(tandem__memory_type_check(gpu, memory->type));
  /* The backend imports a duplicate, so a failure anywhere leaves the
   * caller's fd as it was; success hands it to tandem, as Vulkan's import
   * would: the duplicate (now the driver's) is what stays. */
  TANDEM_RETURN_IF_ERROR(tandem__buffer_make(runtime, size, placement, 0, memory, out_buffer));
  close(memory->fd);
  return TANDEM_OK;
}

/*------------------------------------------------------------ timelines --*/

tandem_status_t tandem_runtime_export_timeline_fd(tandem_runtime_t *runtime, tandem_lane_t lane,
                                                  int *out_fd) {
  if (!out_fd) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_fd is NULL");
  *out_fd = -1;
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  if (lane < 0 || lane >= TANDEM_LANE_COUNT)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "lane %d: timelines exist for lanes 0..%d (tandem_lane_t)", (int)lane,
                       TANDEM_LANE_COUNT - 1);
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(runtime, &gpu));
  if (!(gpu->info.features & TANDEM_GPU_EXTERNAL_SEMAPHORE_FD))
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "GPU '%s' cannot export timelines: it lacks VK_KHR_external_semaphore_fd",
                       gpu->info.name);
  if (!runtime->options.export_timelines)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "the runtime's timelines are not exportable: create it with the runtime "
                       "option export_timelines");
  if (!gpu->timelines_exportable)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "GPU '%s' has VK_KHR_external_semaphore_fd but cannot export timeline "
                       "semaphores as opaque fds (vkGetPhysicalDeviceExternalSemaphoreProperties)",
                       gpu->info.name);
  assert(gpu->vtable->interop); /* reached only with the capability it gives */
  tandem_status_t s = gpu->vtable->interop->timeline_export(gpu, lane, out_fd);
  tandem__runtime_note_loss(runtime, s);
  return s;
}

tandem_status_t tandem_completion_lane_values(tandem_completion_t *completion,
                                              uint64_t out_values[TANDEM_LANE_COUNT]) {
  if (!out_values) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_values is NULL");
  tandem__slot_t *slot;
  TANDEM_RETURN_IF_ERROR(tandem__completion_acquire(completion, "completion", &slot));
  tandem_exec_t *exec = slot->exec;
  tandem_runtime_t *rt = exec->runtime;
  /* Set at submit; the slot keeps them while the user holds the completion
   * (I4), which the handle check under the lock confirms. */
  pthread_mutex_lock(&rt->mutex);
  bool live = tandem__handle_slot(completion) == slot;
  /* GPU 0's lanes and the NPU's: the public array's TANDEM_LANE_COUNT. */
  if (live) memcpy(out_values, slot->lane_values, TANDEM_LANE_COUNT * sizeof out_values[0]);
  pthread_mutex_unlock(&rt->mutex);
  tandem_exec_release(exec);
  if (!live)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "completion was released while its lane values were being read");
  return TANDEM_OK;
}

tandem_status_t tandem_runtime_import_timeline_fd(tandem_runtime_t *runtime, int fd,
                                                  tandem_external_timeline_t **out_timeline) {
  if (!out_timeline) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_timeline is NULL");
  *out_timeline = NULL;
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  if (fd < 0) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "fd %d is negative", fd);
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(runtime, &gpu));
  if (!(gpu->info.features & TANDEM_GPU_EXTERNAL_SEMAPHORE_FD))
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "GPU '%s' cannot import timelines: it lacks VK_KHR_external_semaphore_fd",
                       gpu->info.name);
  if (!gpu->can_import_timelines)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "GPU '%s' has VK_KHR_external_semaphore_fd but cannot import timeline "
                       "semaphores as opaque fds (vkGetPhysicalDeviceExternalSemaphoreProperties)",
                       gpu->info.name);
  tandem_external_timeline_t *t = calloc(1, sizeof *t);
  if (!t) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating an imported timeline");
  assert(gpu->vtable->interop); /* reached only with the capability it gives */
  tandem_status_t s = gpu->vtable->interop->timeline_import(gpu, fd, &t->native);
  tandem__runtime_note_loss(runtime, s);
  if (s != TANDEM_OK) {
    free(t);
    return s;
  }
  t->runtime = runtime;
  t->lane = -1;
  tandem__runtime_retain(runtime);
  *out_timeline = t;
  return TANDEM_OK;
}

tandem_status_t tandem_external_timeline_wait(tandem_external_timeline_t *timeline, uint64_t value,
                                              uint64_t timeout_ns) {
  if (!timeline) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "timeline is NULL");
  tandem__gpu_t *gpu = tandem__gpu_at(timeline->runtime, 0);
  assert(gpu->vtable->interop); /* reached only with the capability it gives */
  tandem_status_t s = gpu->vtable->interop->timeline_wait(gpu, timeline->native, value, timeout_ns);
  tandem__runtime_note_loss(timeline->runtime, s);
  if (s == TANDEM_ERROR_TIMEOUT)
    return TANDEM_FAIL(s, "the imported timeline did not reach %llu within %llu ns",
                       (unsigned long long)value, (unsigned long long)timeout_ns);
  return s;
}

tandem_status_t tandem_external_timeline_lane(tandem_external_timeline_t *timeline,
                                              tandem_lane_t *out_lane) {
  if (!out_lane) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_lane is NULL");
  *out_lane = TANDEM_LANE_AUTO;
  if (!timeline) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "timeline is NULL");
  tandem_runtime_t *rt = timeline->runtime;
  tandem__gpu_t *gpu = tandem__gpu_at(rt, 0); /* open: the import needed it */
  tandem_status_t s = TANDEM_OK;
  pthread_mutex_lock(&rt->mutex);
  if (timeline->lane < 0) {
    tandem_lane_t lane;
    s = tandem__lane_take_locked(rt, gpu, TANDEM_LANE_KIND_EXTERNAL, NULL, timeline->native, &lane);
    if (s == TANDEM_OK) timeline->lane = lane;
  }
  if (s == TANDEM_OK) *out_lane = (tandem_lane_t)timeline->lane;
  pthread_mutex_unlock(&rt->mutex);
  return s;
}

void tandem_external_timeline_destroy(tandem_external_timeline_t *timeline) {
  if (!timeline) return;
  tandem_runtime_t *rt = timeline->runtime;
  /* Its lane first: that waits for every submission waiting on it. */
  if (timeline->lane >= 0) tandem__lane_give_back(rt, (tandem_lane_t)timeline->lane);
  tandem__gpu_t *gpu = tandem__gpu_at(rt, 0);
  assert(gpu->vtable->interop); /* reached only with the capability it gives */
  gpu->vtable->interop->timeline_destroy(gpu, timeline->native);
  free(timeline);
  tandem__runtime_release(rt);
}
