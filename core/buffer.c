/* SPDX-License-Identifier: MIT */
/*
 * buffer.c — tracked buffers and bounds-checked views.
 *
 * Creation order is budget → device memory → counters, and a failure at any
 * step undoes the earlier ones, so a failed create leaves no trace (live bytes,
 * budget and allocations unchanged). Destruction happens at refcount 0, which
 * by I1 (runtime_int.h) means no graph, exec or in-flight work still uses it.
 */
#include <assert.h>
#include <stdlib.h>

#include "core/budget.h"
#include "core/buffer.h"
#include "core/buffer_int.h"
#include "core/check.h"
#include "core/lost.h"
#include "core/npu.h"
#include "core/runtime.h"
#include "core/runtime_int.h"

const char *tandem_placement_name(tandem_placement_t placement) {
  switch (placement) {
    case TANDEM_PLACEMENT_GPU_LOCAL: return "GPU_LOCAL";
    case TANDEM_PLACEMENT_HOST_VISIBLE: return "HOST_VISIBLE";
    case TANDEM_PLACEMENT_SHARED: return "SHARED";
    case TANDEM_PLACEMENT_NPU_LOCAL: return "NPU_LOCAL";
  }
  return "UNKNOWN";
}

tandem_status_t tandem_buffer_create(tandem_runtime_t *runtime, uint64_t size,
                                     tandem_placement_t placement, tandem_buffer_t **out_buffer) {
  return tandem_buffer_create_on(runtime, 0, size, placement, out_buffer);
}

uint32_t tandem_buffer_gpu(const tandem_buffer_t *buffer) { return buffer ? buffer->gpu : 0; }

/* One half of a staging pair: |host| imported into GPU |g|. */
static tandem_status_t tandem__staging_half(tandem_runtime_t *rt, uint32_t g, void *host,
                                            uint64_t size, tandem_buffer_t **out) {
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_at(rt, g, &gpu));
  if (!gpu->can_import_host)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "GPU %u ('%s') cannot import host memory (no VK_EXT_external_memory_host), "
                       "which a copy between GPUs is staged through",
                       g, gpu->info.name);
  tandem_buffer_t *b = calloc(1, sizeof *b);
  if (!b) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a buffer object");
  tandem_status_t s = gpu->vtable->buffer.import_host(gpu, host, size, &b->native);
  if (s != TANDEM_OK) {
    free(b);
    return tandem__annotate(s, "importing a copy's %llu staging bytes into GPU %u",
                            (unsigned long long)size, g);
  }
  atomic_init(&b->refs, 1);
  b->runtime = rt;
  b->size = size;
  b->placement = TANDEM_PLACEMENT_HOST_VISIBLE;
  b->gpu = g;
  b->host = host;
  tandem__runtime_retain(rt);
  atomic_fetch_add(&rt->stats.live_bytes, size);
  *out = b;
  return TANDEM_OK;
}

tandem_status_t tandem__buffer_staging_pair(tandem_runtime_t *rt, uint32_t from, uint32_t to,
                                            uint64_t bytes, tandem_buffer_t **out_from,
                                            tandem_buffer_t **out_to) {
  *out_from = *out_to = NULL;
  tandem__gpu_t *a, *b;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_at(rt, from, &a));
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_at(rt, to, &b));
  uint64_t align = a->host_import_alignment > b->host_import_alignment ? a->host_import_alignment
                                                                       : b->host_import_alignment;
  if (align < 64) align = 64;
  uint64_t size = (bytes + align - 1) / align * align;
  TANDEM_RETURN_IF_ERROR(tandem__budget_reserve(rt->options.budget, size));
  void *host = NULL;
  if (posix_memalign(&host, (size_t)align, (size_t)size) != 0) {
    tandem__budget_unreserve(rt->options.budget, size);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                       "allocating %llu staging bytes for a copy "
                       "between GPUs",
                       (unsigned long long)size);
  }
  tandem_buffer_t *first = NULL, *second = NULL;
  tandem_status_t s = tandem__staging_half(rt, from, host, size, &first);
  if (s == TANDEM_OK) s = tandem__staging_half(rt, to, host, size, &second);
  if (s != TANDEM_OK) {
    if (first) {
      first->host_owned = host;
      first->charged = size;
      tandem_buffer_release(first);
    } else {
      free(host);
      tandem__budget_unreserve(rt->options.budget, size);
    }
    return s;
  }
  first->host_owned = host; /* freed with the first, which the second keeps alive */
  first->charged = size;
  second->tracked_as = first;
  tandem_buffer_retain(first);
  *out_from = first;
  *out_to = second;
  return TANDEM_OK;
}

tandem_status_t tandem_buffer_create_on(tandem_runtime_t *runtime, uint32_t gpu, uint64_t size,
                                        tandem_placement_t placement,
                                        tandem_buffer_t **out_buffer) {
  if (!out_buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_buffer is NULL");
  *out_buffer = NULL;
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_check(runtime, gpu));
  if (gpu != 0 && (placement == TANDEM_PLACEMENT_SHARED || placement == TANDEM_PLACEMENT_NPU_LOCAL))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "placement %s on GPU %u: memory shared with the NPU lives on GPU 0, "
                       "beside the NPU; copy it to GPU %u with a copy node",
                       tandem_placement_name(placement), gpu, gpu);
  if (size == 0 || size > TANDEM__MAX_BYTES)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE, "buffer size %llu is outside 1..%llu bytes",
                       (unsigned long long)size, (unsigned long long)TANDEM__MAX_BYTES);
  switch (placement) {
    case TANDEM_PLACEMENT_GPU_LOCAL:
    case TANDEM_PLACEMENT_HOST_VISIBLE: break;
    case TANDEM_PLACEMENT_SHARED:
    case TANDEM_PLACEMENT_NPU_LOCAL:
      if (runtime->options.npu_backend == NULL)
        return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                           "placement %s needs an NPU, and this runtime has none (runtime "
                           "option npu_backend); use GPU_LOCAL or HOST_VISIBLE",
                           tandem_placement_name(placement));
      break;
    default:
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "placement %d is not a tandem_placement_t",
                         (int)placement);
  }
  return tandem__buffer_make_on(runtime, gpu, size, placement, 0, NULL, NULL, out_buffer);
}

tandem_status_t tandem__buffer_make(tandem_runtime_t *runtime, uint64_t size,
                                    tandem_placement_t placement, uint32_t export_types,
                                    const tandem_external_memory_t *import,
                                    tandem_buffer_t **out_buffer) {
  return tandem__buffer_make_on(runtime, 0, size, placement, export_types, import, NULL,
                                out_buffer);
}

tandem_status_t tandem__buffer_make_on(tandem_runtime_t *runtime, uint32_t gpu_number,
                                       uint64_t size, tandem_placement_t placement,
                                       uint32_t export_types,
                                       const tandem_external_memory_t *import,
                                       const tandem_vulkan_buffer_t *adopt,
                                       tandem_buffer_t **out_buffer) {
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu_at(runtime, gpu_number, &gpu));

  tandem_buffer_t *buffer = calloc(1, sizeof *buffer);
  if (!buffer) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a buffer object");
  /* An adopted buffer whose bytes the application already charged costs 0. */
  uint64_t charged = adopt && adopt->budget_charged ? 0 : size;
  tandem_status_t s = tandem__budget_reserve(runtime->options.budget, charged);
  if (s != TANDEM_OK) {
    free(buffer);
    return s;
  }
  buffer->size = size;
  buffer->charged = charged;
  buffer->placement = placement;
  buffer->gpu = gpu_number;
  if (adopt) {
    bool indirect = false;
    s = gpu->vtable->interop->buffer_adopt(gpu, adopt, &buffer->native, &buffer->host, &indirect);
    buffer->no_indirect = !indirect;
  } else if (import) {
    s = gpu->vtable->interop->buffer_import(gpu, import, size, placement, &buffer->native,
                                            &buffer->host);
  } else if (placement == TANDEM_PLACEMENT_SHARED || placement == TANDEM_PLACEMENT_NPU_LOCAL) {
    s = tandem__npu_buffer_create(runtime, buffer);
  } else {
    s = gpu->vtable->buffer.create(gpu, size, placement, export_types, &buffer->native,
                                   &buffer->host);
  }
  if (s != TANDEM_OK) {
    tandem__runtime_note_loss(runtime, s); /* e.g. the zero-fill's queue lost the device */
    tandem__budget_unreserve(runtime->options.budget, charged);
    free(buffer);
    return tandem__annotate(s, "%s a %s buffer of %llu bytes",
                            adopt    ? "adopting"
                            : import ? "importing"
                                     : "creating",
                            tandem_placement_name(placement), (unsigned long long)size);
  }
  atomic_init(&buffer->refs, 1);
  buffer->runtime = runtime;
  buffer->size = size;
  buffer->placement = placement;
  tandem__runtime_retain(runtime);

  atomic_fetch_add(&runtime->stats.allocations, 1);
  if (import) atomic_fetch_add(&runtime->stats.imports, 1);
  uint_fast64_t live = atomic_fetch_add(&runtime->stats.live_bytes, size) + size;
  uint_fast64_t peak = atomic_load(&runtime->stats.peak_bytes);
  while (live > peak && !atomic_compare_exchange_weak(&runtime->stats.peak_bytes, &peak, live)) {
  }
  *out_buffer = buffer;
  return TANDEM_OK;
}

void tandem_buffer_retain(tandem_buffer_t *buffer) {
  if (buffer) atomic_fetch_add(&buffer->refs, 1);
}

void tandem_buffer_release(tandem_buffer_t *buffer) {
  if (!buffer || atomic_fetch_sub(&buffer->refs, 1) != 1) return;
  tandem_runtime_t *rt = buffer->runtime;
  tandem__gpu_t *gpu = tandem__gpu_at(rt, buffer->gpu);
  /* I1: refcount 0 means no graph, exec or in-flight slot refers to it. */
  assert(tandem__buffer_check_free(buffer));
  assert(buffer->charged == buffer->size || buffer->charged == 0); /* see buffer_int.h */
  if (buffer->npu_bo) {
    tandem__npu_buffer_destroy(rt, buffer);
  } else {
    gpu->vtable->buffer.destroy(gpu, buffer->native);
  }
  free(buffer->host_owned);                  /* a staging pair's memory, after its import */
  tandem_buffer_release(buffer->tracked_as); /* the pair's first half, after this one */
  tandem__budget_unreserve(rt->options.budget, buffer->charged);
  atomic_fetch_sub(&rt->stats.live_bytes, buffer->size);
  free(buffer->maps);
  free(buffer);
  tandem__runtime_release(rt);
}

uint64_t tandem_buffer_size(const tandem_buffer_t *buffer) { return buffer ? buffer->size : 0; }

tandem_placement_t tandem_buffer_placement(const tandem_buffer_t *buffer) {
  return buffer ? buffer->placement : (tandem_placement_t)-1;
}

tandem_status_t tandem_buffer_memory(const tandem_buffer_t *buffer, tandem_buffer_memory_t *out) {
  if (!out) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out is NULL");
  *out = (tandem_buffer_memory_t){.memory_type = UINT32_MAX, .heap = UINT32_MAX};
  if (!buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "buffer is NULL");
  if (!buffer->native)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "a %s buffer has no GPU memory (it is an NPU buffer object)",
                       tandem_placement_name(buffer->placement));
  /* Open: the buffer has GPU memory there. */
  tandem__gpu_t *gpu = tandem__gpu_at(buffer->runtime, buffer->gpu);
  gpu->vtable->buffer.memory(gpu, buffer->native, out);
  return TANDEM_OK;
}

tandem_status_t tandem_buffer_view(tandem_buffer_t *buffer, uint64_t offset, uint64_t length,
                                   tandem_view_t *out_view) {
  if (!out_view) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_view is NULL");
  *out_view = (tandem_view_t){0};
  if (!buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "buffer is NULL");
  if (length == 0)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "view length is 0; a view covers at least 1 byte");
  if (offset >= buffer->size || length > buffer->size - offset)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "view (offset %llu, length %llu) runs past the end of a %llu-byte buffer",
                       (unsigned long long)offset, (unsigned long long)length,
                       (unsigned long long)buffer->size);
  *out_view = (tandem_view_t){buffer, offset, length};
  return TANDEM_OK;
}

tandem_view_t tandem_buffer_whole(tandem_buffer_t *buffer) {
  return (tandem_view_t){buffer, 0, buffer ? buffer->size : 0};
}

tandem_status_t tandem__view_check(tandem_runtime_t *runtime, tandem_view_t view,
                                   const char *what) {
  if (!view.buffer)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "%s: view has no buffer", what);
  if (view.buffer->runtime != runtime)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "%s: the buffer belongs to another runtime",
                       what);
  if (view.length == 0 || view.offset >= view.buffer->size ||
      view.length > view.buffer->size - view.offset)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "%s: view (offset %llu, length %llu) is not inside its %llu-byte buffer",
                       what, (unsigned long long)view.offset, (unsigned long long)view.length,
                       (unsigned long long)view.buffer->size);
  return TANDEM_OK;
}
