/* SPDX-License-Identifier: MIT */
/*
 * kernel.c — loading GPU kernels and checking their contracts.
 *
 * The contract is the user's promise about memory; the code's reflection is
 * the compiler's. They must agree before any pipeline is built (so a bad
 * shader never reaches the driver): binding count and numbering (set 0,
 * bindings 0..n-1, storage buffers only), exact push-constant size, and no
 * READ binding the shader may write. Each mismatch names the binding.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

static tandem_status_t tandem__read_file(const char *path, const char *name, void **out_data,
                                         size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return TANDEM_FAIL(TANDEM_ERROR_IO, "kernel '%s': cannot open SPIR-V file '%s': %s", name,
                       path, strerror(errno));
  uint8_t *data = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size == cap) {
      cap = cap ? cap * 2 : 65536;
      if (cap > (64u << 20)) {
        free(data);
        fclose(f);
        return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                           "kernel '%s': SPIR-V file '%s' is larger than 64 MiB", name, path);
      }
      uint8_t *grown = realloc(data, cap);
      if (!grown) {
        free(data);
        fclose(f);
        return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "reading '%s'", path);
      }
      data = grown;
    }
    size_t n = fread(data + size, 1, cap - size, f);
    size += n;
    if (n == 0) break;
  }
  bool failed = ferror(f);
  fclose(f);
  if (failed) {
    free(data);
    return TANDEM_FAIL(TANDEM_ERROR_IO, "kernel '%s': error reading '%s'", name, path);
  }
  *out_data = data;
  *out_size = size;
  return TANDEM_OK;
}

static tandem_status_t tandem__desc_check(const tandem_kernel_desc_t *d, const char *name) {
  for (int i = 0; i < 3; i++)
    if (d->workgroups[i] == 0)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': workgroups[%d] is 0; each dimension must be ≥ 1", name, i);
  if (d->binding_count > TANDEM_MAX_BINDINGS)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "kernel '%s': %u bindings, at most %u",
                       name, d->binding_count, TANDEM_MAX_BINDINGS);
  if (d->binding_count && !d->bindings)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': binding_count is %u but bindings is NULL", name,
                       d->binding_count);
  if (d->push_constant_bytes > TANDEM_MAX_PUSH_CONSTANT_BYTES || d->push_constant_bytes % 4)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': push_constant_bytes is %u, must be a multiple of 4 "
                       "up to %u",
                       name, d->push_constant_bytes, TANDEM_MAX_PUSH_CONSTANT_BYTES);
  for (uint32_t i = 0; i < d->binding_count; i++) {
    const tandem_binding_contract_t *b = &d->bindings[i];
    if (b->bytes == 0 || b->bytes > TANDEM__MAX_BYTES)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "binding %u of '%s': contract bytes %llu outside 1..%llu", i, name,
                         (unsigned long long)b->bytes, (unsigned long long)TANDEM__MAX_BYTES);
    if (b->alignment == 0 || (b->alignment & (b->alignment - 1)))
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "binding %u of '%s': alignment %llu is not a power of two", i, name,
                         (unsigned long long)b->alignment);
    if (b->access != TANDEM_ACCESS_READ && b->access != TANDEM_ACCESS_WRITE &&
        b->access != TANDEM_ACCESS_READ_WRITE)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "binding %u of '%s': access %d is not READ, WRITE or READ_WRITE", i,
                         name, (int)b->access);
  }
  return TANDEM_OK;
}

/* The contract check itself: reflection (|iface|) against the user's |d|. */
static tandem_status_t tandem__contract_check(const tandem_kernel_desc_t *d, const char *name,
                                              const tandem__kernel_interface_t *iface) {
  for (uint32_t i = 0; i < iface->binding_count; i++) {
    const tandem__reflected_binding_t *r = &iface->bindings[i];
    if (r->set != 0)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "kernel '%s': the shader uses descriptor set %u (binding %u); tandem "
                         "binds set 0 only",
                         name, r->set, r->binding);
    if (!r->is_storage_buffer)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "binding %u of '%s': the shader declares a descriptor that is not a "
                         "storage buffer; tandem binds storage buffers only",
                         r->binding, name);
  }
  if (iface->binding_count != d->binding_count)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "kernel '%s': the shader declares %u bindings, the contract has %u", name,
                       iface->binding_count, d->binding_count);
  for (uint32_t i = 0; i < iface->binding_count; i++) {
    const tandem__reflected_binding_t *r = &iface->bindings[i];
    if (r->binding != i)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "kernel '%s': the shader's bindings must be numbered 0..%u without "
                         "gaps; found binding %u where %u was expected",
                         name, iface->binding_count - 1, r->binding, i);
    if (d->bindings[i].access == TANDEM_ACCESS_READ && r->writable)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "binding %u of '%s': the contract says READ but the shader may write "
                         "it (declare the buffer readonly, or the binding READ_WRITE)",
                         i, name);
  }
  if (iface->push_constant_bytes != d->push_constant_bytes)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "kernel '%s': the shader's push constants are %u bytes, the contract "
                       "says %u",
                       name, iface->push_constant_bytes, d->push_constant_bytes);
  return TANDEM_OK;
}

tandem_status_t tandem_kernel_create(tandem_runtime_t *runtime, const tandem_kernel_desc_t *desc,
                                     tandem_kernel_t **out_kernel) {
  if (!out_kernel) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_kernel is NULL");
  *out_kernel = NULL;
  if (!runtime || !desc)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or desc is NULL");
  tandem_kernel_desc_t d = *desc;
  if (!d.entry_point) d.entry_point = "main";
  const char *name = d.name ? d.name : d.entry_point;
  TANDEM_RETURN_IF_ERROR(tandem__desc_check(&d, name));

  void *file_data = NULL;
  if (!d.spirv) {
    if (!d.spirv_path)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': neither spirv nor spirv_path is set", name);
    size_t size;
    TANDEM_RETURN_IF_ERROR(tandem__read_file(d.spirv_path, name, &file_data, &size));
    d.spirv = file_data;
    d.spirv_size = size;
  }
  tandem__gpu_t *gpu;
  tandem_status_t s = tandem__runtime_gpu(runtime, &gpu);
  tandem__kernel_interface_t iface;
  for (int i = 0; s == TANDEM_OK && i < 3; i++)
    if (d.workgroups[i] > gpu->max_workgroups[i])
      s = TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                      "kernel '%s': workgroups[%d] is %u, the device allows at most %u "
                      "(maxComputeWorkGroupCount)",
                      name, i, d.workgroups[i], gpu->max_workgroups[i]);
  if (s == TANDEM_OK)
    s = gpu->vtable->kernel_reflect(gpu, d.spirv, d.spirv_size, d.entry_point, name, &iface);
  if (s == TANDEM_OK) s = tandem__contract_check(&d, name, &iface);
  tandem_kernel_t *kernel = NULL;
  if (s == TANDEM_OK) {
    kernel = calloc(1, sizeof *kernel);
    if (!kernel) s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a kernel");
  }
  if (s == TANDEM_OK) s = gpu->vtable->kernel_create(gpu, &d, name, &kernel->native);
  free(file_data);
  if (s != TANDEM_OK) {
    free(kernel);
    return s;
  }
  atomic_init(&kernel->refs, 1);
  kernel->runtime = runtime;
  snprintf(kernel->name, sizeof kernel->name, "%s", name);
  memcpy(kernel->workgroups, d.workgroups, sizeof kernel->workgroups);
  kernel->binding_count = d.binding_count;
  if (d.binding_count)
    memcpy(kernel->bindings, d.bindings, d.binding_count * sizeof *d.bindings);
  kernel->push_constant_bytes = d.push_constant_bytes;
  tandem__runtime_retain(runtime);
  *out_kernel = kernel;
  return TANDEM_OK;
}

void tandem_kernel_retain(tandem_kernel_t *kernel) {
  if (kernel) atomic_fetch_add(&kernel->refs, 1);
}

void tandem_kernel_release(tandem_kernel_t *kernel) {
  if (!kernel || atomic_fetch_sub(&kernel->refs, 1) != 1) return;
  tandem_runtime_t *rt = kernel->runtime;
  tandem__gpu_t *gpu = atomic_load(&rt->gpu);
  gpu->vtable->kernel_destroy(gpu, kernel->native);
  free(kernel);
  tandem__runtime_release(rt);
}

const char *tandem_kernel_name(const tandem_kernel_t *kernel) {
  return kernel ? kernel->name : "";
}
