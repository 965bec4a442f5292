/* SPDX-License-Identifier: MIT */
/*
 * npu.c — the NPU side of a runtime: opening the device, negotiating how GPU
 * and NPU share memory, NPU buffers and NPU programs.
 *
 * Sharing is negotiated once per runtime (device pair), best path first, each
 * proven by a probe allocation rather than assumed (docs/npu.md):
 *   1. dma-buf into the GPU  — the NPU exports a real dma-buf, Vulkan imports it
 *      (the host keeps using the NPU's mapping: the Vulkan side of imported
 *      NPU memory is never mapped, it faults on amdxdna);
 *   2. host pointer          — the NPU buffer's mapping imported into Vulkan;
 *   3. staged                — two allocations, copies counted in copied_bytes.
 *   Only when forced: dma-buf into the NPU — Vulkan memory exported as a
 *       dma-buf and imported with xrtBOImport (unverified; reported to fault).
 *
 * Opening the NPU starts its lane (npu_lane.c), which runs NPU regions.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/npu.h"
#include "core/buffer_int.h"
#include "core/npu_emulated.h"
#include "core/npu_int.h"
#include "core/npu_lane.h"
#include "core/runtime.h"
#include "core/runtime_int.h"
#include "core/struct_size.h"

const char *tandem_sharing_name(tandem_sharing_t sharing) {
  switch (sharing) {
    case TANDEM_SHARING_AUTO: return "auto";
    case TANDEM_SHARING_DMABUF_TO_GPU: return "dma-buf into GPU";
    case TANDEM_SHARING_DMABUF_TO_NPU: return "dma-buf into NPU";
    case TANDEM_SHARING_HOST_POINTER: return "host pointer into GPU";
    case TANDEM_SHARING_STAGED: return "staged copies";
  }
  return "unknown";
}

static uint64_t tandem__round_up(uint64_t v, uint64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

/* Makes the GPU side of a SHARED buffer whose BO exists, using |path|. */
static tandem_status_t tandem__share(tandem_runtime_t *rt, tandem__gpu_t *gpu, tandem__npu_t *npu,
                                     tandem_sharing_t path, tandem_buffer_t *b) {
  switch (path) {
    case TANDEM_SHARING_DMABUF_TO_GPU: {
      if (!gpu->can_import_dmabuf)
        return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                           "the GPU cannot import dma-bufs (no VK_EXT_external_memory_dma_buf)");
      int fd;
      bool is_dmabuf;
      TANDEM_RETURN_IF_ERROR(npu->vtable->bo_export(npu, b->npu_bo, &fd, &is_dmabuf));
      tandem_status_t s = TANDEM_OK;
      if (!is_dmabuf)
        s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                        "the NPU's exported buffer is not a dma-buf (the emulated NPU exports a "
                        "memfd)");
      if (s == TANDEM_OK) s = gpu->vtable->buffer.import_dmabuf(gpu, fd, b->npu_size, &b->native);
      close(fd);
      return s;
    }
    case TANDEM_SHARING_DMABUF_TO_NPU: {
      if (!gpu->can_import_dmabuf)
        return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                           "the GPU cannot export dma-bufs (no VK_EXT_external_memory_dma_buf)");
      int fd;
      TANDEM_RETURN_IF_ERROR(gpu->vtable->buffer.create_dmabuf(gpu, b->npu_size, &b->native, &fd));
      tandem_status_t s = npu->vtable->bo_import(npu, fd, &b->npu_bo, &b->npu_host);
      close(fd);
      if (s != TANDEM_OK) {
        gpu->vtable->buffer.destroy(gpu, b->native);
        b->native = NULL;
      }
      return s;
    }
    case TANDEM_SHARING_HOST_POINTER:
      if (!gpu->can_import_host)
        return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                           "the GPU cannot import host memory (no VK_EXT_external_memory_host)");
      return gpu->vtable->buffer.import_host(gpu, b->npu_host, b->npu_size, &b->native);
    case TANDEM_SHARING_STAGED:
      return gpu->vtable->buffer.create(gpu, b->size, TANDEM_PLACEMENT_HOST_VISIBLE, 0, &b->native,
                                        &b->host);
    default:
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "sharing path '%s' is not available",
                         tandem_sharing_name(path));
  }
  (void)rt;
}

/* The NPU buffer object behind a SHARED buffer: whole pages (dma-buf
 * exporters and importers work in pages, and amdxdna's SHARE buffers are
 * shmem pages), and for host-pointer import also the GPU's import alignment. */
static uint64_t tandem__bo_size(const tandem__gpu_t *gpu, tandem_sharing_t path, uint64_t size) {
  long page = sysconf(_SC_PAGESIZE);
  size = tandem__round_up(size, page > 0 ? (uint64_t)page : 4096u);
  return path == TANDEM_SHARING_HOST_POINTER ? tandem__round_up(size, gpu->host_import_alignment)
                                             : size;
}

/* Tries |path| with a one-page probe buffer. */
static tandem_status_t tandem__probe(tandem_runtime_t *rt, tandem__gpu_t *gpu, tandem__npu_t *npu,
                                     tandem_sharing_t path) {
  tandem_buffer_t probe = {.size = 4096, .placement = TANDEM_PLACEMENT_SHARED};
  probe.npu_size = tandem__bo_size(gpu, path, probe.size);
  if (path != TANDEM_SHARING_DMABUF_TO_NPU)
    TANDEM_RETURN_IF_ERROR(
        npu->vtable->bo_create(npu, probe.npu_size, &probe.npu_bo, &probe.npu_host));
  tandem_status_t s = tandem__share(rt, gpu, npu, path, &probe);
  if (probe.native) gpu->vtable->buffer.destroy(gpu, probe.native);
  if (probe.npu_bo) npu->vtable->bo_destroy(npu, probe.npu_bo);
  return s;
}

tandem_status_t tandem__runtime_npu(tandem_runtime_t *rt, tandem__npu_t **out_npu) {
  tandem__npu_t *npu = atomic_load_explicit(&rt->npu, memory_order_acquire);
  if (npu) {
    *out_npu = npu;
    return TANDEM_OK;
  }
  *out_npu = NULL;
  /* The registry gave the runtime an NPU backend at creation iff npu_backend
   * named one; the option then holds the entry's own name. */
  assert(rt->options.npu_backend == (rt->npu_backend ? rt->npu_backend->name : NULL));
  if (!rt->npu_backend)
    return TANDEM_FAIL(TANDEM_ERROR_NO_DEVICE,
                       "no NPU: the runtime was created without one (set the runtime option "
                       "npu_backend to \"xrt\" or \"emulated\", or TANDEM_NPU=xrt|emulated)");
  tandem__gpu_t *gpu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_gpu(rt, &gpu));
  pthread_mutex_lock(&rt->open_mutex);
  tandem_status_t s = TANDEM_OK;
  npu = atomic_load(&rt->npu);
  if (!npu) {
    s = rt->npu_backend->open(&rt->options, rt->npu_options, &npu);
    tandem_sharing_t chosen = TANDEM_SHARING_AUTO;
    if (s == TANDEM_OK) {
      if (rt->options.sharing != TANDEM_SHARING_AUTO) {
        s = tandem__probe(rt, gpu, npu, rt->options.sharing);
        if (s == TANDEM_OK) chosen = rt->options.sharing;
        else
          s = tandem__annotate(TANDEM_ERROR_UNSUPPORTED, "the forced sharing path '%s' failed",
                               tandem_sharing_name(rt->options.sharing));
      } else {
        /* "dma-buf into the NPU" is left out: GPU-owned memory imported into
         * amdxdna is reported to fault at run time although import and map
         * (all a probe does) succeed. It stays selectable (docs/npu.md). */
        const tandem_sharing_t order[] = {TANDEM_SHARING_DMABUF_TO_GPU, TANDEM_SHARING_HOST_POINTER,
                                          TANDEM_SHARING_STAGED};
        for (size_t i = 0; i < sizeof order / sizeof order[0] && chosen == TANDEM_SHARING_AUTO;
             i++) {
          tandem_status_t ps = tandem__probe(rt, gpu, npu, order[i]);
          if (ps == TANDEM_OK) chosen = order[i];
          /* Out of memory, an I/O failure or a lost device says nothing about
           * the path: picking a lesser one would degrade sharing silently. */
          if (ps == TANDEM_ERROR_OUT_OF_MEMORY || ps == TANDEM_ERROR_DEVICE_LOST ||
              ps == TANDEM_ERROR_IO) {
            s = tandem__annotate(ps, "negotiating GPU-NPU sharing (probing '%s')",
                                 tandem_sharing_name(order[i]));
            break;
          }
        }
        if (s == TANDEM_OK) tandem__clear_error(); /* failed probes are not the caller's failure */
        if (s == TANDEM_OK && chosen == TANDEM_SHARING_AUTO)
          s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                          "no sharing path works between this GPU and NPU");
      }
    }
    if (s == TANDEM_OK) {
      rt->sharing = chosen;
      s = tandem__npu_lane_start(rt);
    }
    if (s == TANDEM_OK) {
      atomic_store_explicit(&rt->npu, npu, memory_order_release);
    } else if (npu) {
      npu->vtable->destroy(npu);
      npu = NULL;
    }
  }
  pthread_mutex_unlock(&rt->open_mutex);
  *out_npu = npu;
  return s;
}

tandem_status_t tandem_runtime_open_npu(tandem_runtime_t *runtime) {
  if (!runtime) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime is NULL");
  tandem__npu_t *npu;
  return tandem__runtime_npu(runtime, &npu);
}

tandem_status_t tandem_runtime_npu_info(tandem_runtime_t *runtime, tandem_npu_info_t *out_info) {
  if (!runtime || !out_info)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or out_info is NULL");
  TANDEM_RETURN_IF_ERROR(
      tandem__struct_out_check(out_info, TANDEM__OLDEST_NPU_INFO, "tandem_npu_info_t"));
  tandem_npu_info_t info;
  memset(&info, 0, sizeof info);
  info.next = out_info->next; /* the caller's chain, kept */
  tandem__npu_t *npu;
  tandem_status_t s = tandem__runtime_npu(runtime, &npu);
  /* The backend fills the extensions it knows and refuses any other. */
  if (s == TANDEM_OK) s = npu->vtable->info_extensions(npu, out_info->next);
  if (s == TANDEM_OK) {
    snprintf(info.name, sizeof info.name, "%s", npu->name);
    snprintf(info.backend, sizeof info.backend, "%s", npu->backend);
    info.emulated = npu->emulated;
    info.sharing = runtime->sharing;
    npu->vtable->device_nodes(npu, &info);
  }
  tandem__struct_out(out_info, &info, sizeof info);
  return s;
}

/*---------------------------------------------------------------- buffers --*/

tandem_status_t tandem__npu_buffer_create(tandem_runtime_t *rt, tandem_buffer_t *b) {
  tandem__npu_t *npu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_npu(rt, &npu));
  tandem__gpu_t *gpu = tandem__gpu_at(rt, 0);
  bool shared = b->placement == TANDEM_PLACEMENT_SHARED;
  b->sharing = shared ? rt->sharing : TANDEM_SHARING_AUTO;
  b->npu_size = shared ? tandem__bo_size(gpu, rt->sharing, b->size) : b->size;
  bool npu_imports = shared && rt->sharing == TANDEM_SHARING_DMABUF_TO_NPU;
  if (!npu_imports)
    TANDEM_RETURN_IF_ERROR(npu->vtable->bo_create(npu, b->npu_size, &b->npu_bo, &b->npu_host));
  b->host = b->npu_host;
  if (!shared) return TANDEM_OK;
  tandem_status_t s = tandem__share(rt, gpu, npu, rt->sharing, b);
  if (s != TANDEM_OK) {
    if (b->npu_bo) npu->vtable->bo_destroy(npu, b->npu_bo);
    b->npu_bo = NULL;
    return s;
  }
  if (rt->sharing != TANDEM_SHARING_STAGED) b->host = b->npu_host;
  if (rt->sharing != TANDEM_SHARING_STAGED) atomic_fetch_add(&rt->stats.imports, 1);
  return TANDEM_OK;
}

void tandem__npu_buffer_destroy(tandem_runtime_t *rt, tandem_buffer_t *b) {
  tandem__npu_t *npu = atomic_load(&rt->npu);
  tandem__gpu_t *gpu = tandem__gpu_at(rt, 0);
  /* The GPU side first: an import must not outlive the memory it wraps. */
  if (b->native) gpu->vtable->buffer.destroy(gpu, b->native);
  b->native = NULL;
  if (b->npu_bo) npu->vtable->bo_destroy(npu, b->npu_bo);
}

/*--------------------------------------------------------------- programs --*/

tandem_status_t tandem_npu_program_create(tandem_runtime_t *runtime,
                                          const tandem_npu_program_desc_t *user_desc,
                                          tandem_npu_program_t **out_program) {
  if (!out_program) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_program is NULL");
  *out_program = NULL;
  if (!runtime || !user_desc)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or desc is NULL");
  TANDEM__STRUCT_IN(tandem_npu_program_desc, user_desc, known, TANDEM__OLDEST_NPU_PROGRAM_DESC);
  const tandem_npu_program_desc_t *desc = &known;
  if (!desc->program_path || !desc->kernel_name)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "NPU program: program_path and kernel_name are required");
  const char *name = desc->name ? desc->name : desc->kernel_name;
  TANDEM_RETURN_IF_ERROR(tandem__npu_xclbin_resolve(desc->program_path, name, &known.program_path));
  if (desc->binding_count < 1 || desc->binding_count > TANDEM_MAX_BINDINGS || !desc->bindings)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "NPU program '%s': binding_count %u outside 1..%u (or bindings NULL)", name,
                       desc->binding_count, TANDEM_MAX_BINDINGS);
  if (desc->scalar_count > TANDEM_MAX_NPU_SCALARS)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "NPU program '%s': %u scalars, at most %u",
                       name, desc->scalar_count, TANDEM_MAX_NPU_SCALARS);
  uint32_t words = 0;
  for (uint32_t i = 0; i < desc->scalar_count; i++) {
    tandem_npu_scalar_type_t t = desc->scalar_types ? desc->scalar_types[i] : TANDEM_NPU_SCALAR_U32;
    if (t != TANDEM_NPU_SCALAR_U32 && t != TANDEM_NPU_SCALAR_U64)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "NPU program '%s': scalar_types[%u] is %d, not a tandem_npu_scalar_type_t",
                         name, i, (int)t);
    words += t == TANDEM_NPU_SCALAR_U64 ? 2 : 1;
  }
  if (words > TANDEM_MAX_NPU_SCALARS)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "NPU program '%s': its scalars take %u 32-bit words, at most %u (a 64-bit "
                       "scalar takes two)",
                       name, words, TANDEM_MAX_NPU_SCALARS);
  for (uint32_t i = 0; i < desc->binding_count; i++) {
    const tandem_binding_contract_t *b = &desc->bindings[i];
    if (b->bytes == 0 || b->alignment == 0 || (b->alignment & (b->alignment - 1)) ||
        b->access < TANDEM_ACCESS_READ || b->access > TANDEM_ACCESS_READ_WRITE)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "binding %u of NPU program '%s': bytes must be ≥ 1, alignment a power "
                         "of two, access READ, WRITE or READ_WRITE",
                         i, name);
  }
  /* The extensions chained from next are the backend's to read: checked
   * before the NPU opens, as the fields above are. */
  if (runtime->npu_backend) TANDEM_RETURN_IF_ERROR(runtime->npu_backend->program_check(desc, name));
  tandem__npu_t *npu;
  TANDEM_RETURN_IF_ERROR(tandem__runtime_npu(runtime, &npu));
  tandem_npu_program_t *p = calloc(1, sizeof *p);
  if (!p) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating an NPU program");
  tandem_status_t s = npu->vtable->program_create(npu, desc, name, &p->native);
  if (s != TANDEM_OK) {
    free(p);
    return s;
  }
  atomic_init(&p->refs, 1);
  p->runtime = runtime;
  snprintf(p->name, sizeof p->name, "%s", name);
  p->binding_count = desc->binding_count;
  p->scalar_count = words; /* what tandem_graph_add_npu_run passes */
  memcpy(p->bindings, desc->bindings, desc->binding_count * sizeof *desc->bindings);
  tandem__runtime_retain(runtime);
  *out_program = p;
  return TANDEM_OK;
}

void tandem__npu_program_retain(tandem_npu_program_t *program) {
  if (program) atomic_fetch_add(&program->refs, 1);
}

void tandem_npu_program_retain(tandem_npu_program_t *program) {
  tandem__npu_program_retain(program);
}

void tandem_npu_program_release(tandem_npu_program_t *program) {
  if (!program || atomic_fetch_sub(&program->refs, 1) != 1) return;
  tandem_runtime_t *rt = program->runtime;
  tandem__npu_t *npu = atomic_load(&rt->npu);
  npu->vtable->program_destroy(npu, program->native);
  free(program);
  tandem__runtime_release(rt);
}

const char *tandem_npu_program_name(const tandem_npu_program_t *program) {
  return program ? program->name : "";
}
