/* SPDX-License-Identifier: MIT */
/*
 * kernel.c — loading GPU kernels and checking their contracts.
 *
 * The contract is the user's promise about memory; the code's reflection is
 * the compiler's. They must agree before any pipeline is built (so a bad
 * shader never reaches the driver): binding count and numbering (set 0,
 * bindings 0..n-1, storage buffers only), exact push-constant size, no READ
 * binding the shader may write and no WRITE binding it may read. Each
 * mismatch names the binding. Then specialization: the desc's constants and
 * local size are fitted to the reflected constants (types, SpecIds, the
 * two-defaults-one-SpecId trap), and the effective workgroup size and the
 * shader features the module needs are checked against the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/glsl.h"
#include "core/kernel.h"
#include "core/kernel_int.h"
#include "core/lost.h"
#include "core/runtime.h"
#include "core/runtime_int.h"
#include "core/struct_size.h"

/* A reflected specialization constant and the value the pipeline got. */
typedef struct tandem__kernel_spec {
  tandem__reflected_spec_t reflected;
  bool given;    /* the desc set its SpecId */
  uint64_t bits; /* given or default */
} tandem__kernel_spec_t;

static tandem_status_t tandem__read_file(const char *path, const char *name, void **out_data,
                                         size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  /* O_NONBLOCK: opening a FIFO must not wait for a writer (issue 11); only
   * regular files are read. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    return TANDEM_FAIL(TANDEM_ERROR_IO, "kernel '%s': cannot open SPIR-V file '%s': %s", name, path,
                       strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return TANDEM_FAIL(TANDEM_ERROR_IO,
                       "kernel '%s': SPIR-V path '%s' is not a regular file (a directory, FIFO "
                       "or device cannot hold a kernel)",
                       name, path);
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "kernel '%s': reading '%s'", name, path);
  }
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

/* True when all three are 0 ("not given"). */
static bool tandem__zero3(const uint32_t v[3]) { return !v[0] && !v[1] && !v[2]; }

static tandem_status_t tandem__desc_check(const tandem_kernel_desc_t *d, const char *name) {
  if (!tandem__zero3(d->workgroups))
    for (int i = 0; i < 3; i++)
      if (d->workgroups[i] == 0)
        return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                           "kernel '%s': workgroups[%d] is 0; give each dimension ≥ 1, or all "
                           "three 0 for no default (each dispatch then gives its own)",
                           name, i);
  if (!tandem__zero3(d->local_size))
    for (int i = 0; i < 3; i++)
      if (d->local_size[i] == 0)
        return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                           "kernel '%s': local_size[%d] is 0; give each dimension ≥ 1, or all "
                           "three 0 for the shader's own size",
                           name, i);
  if (d->spec_constant_count > TANDEM_MAX_SPEC_CONSTANTS)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': %u specialization constants, at most %u", name,
                       d->spec_constant_count, TANDEM_MAX_SPEC_CONSTANTS);
  if (d->spec_constant_count && !d->spec_constants)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': spec_constant_count is %u but spec_constants is NULL", name,
                       d->spec_constant_count);
  for (uint32_t i = 0; i < d->spec_constant_count; i++) {
    const tandem_spec_constant_t *c = &d->spec_constants[i];
    if (c->type < TANDEM_SCALAR_BOOL || c->type > TANDEM_SCALAR_FLOAT64)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': spec_constants[%u] (id %u) has type %d, not a "
                         "tandem_scalar_type_t",
                         name, i, c->id, (int)c->type);
    for (uint32_t j = 0; j < i; j++)
      if (d->spec_constants[j].id == c->id)
        return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                           "kernel '%s': specialization constant id %u is given twice "
                           "(spec_constants[%u] and [%u])",
                           name, c->id, j, i);
  }
  const uint32_t known_flags = TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE | TANDEM_KERNEL_STRICT_SPEC_IDS |
                               TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS |
                               TANDEM_KERNEL_DISABLE_ROBUSTNESS |
                               TANDEM_KERNEL_CONTRACT_FROM_SHADER;
  if (d->flags & ~known_flags)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': flags 0x%x has bits 0x%x that are not "
                       "tandem_kernel_flag_t values",
                       name, d->flags, d->flags & ~known_flags);
  if ((d->flags & TANDEM_KERNEL_CONTRACT_FROM_SHADER) &&
      (d->bindings || d->binding_count || d->aliased_bindings))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': TANDEM_KERNEL_CONTRACT_FROM_SHADER takes the bindings from "
                       "the shader; leave bindings NULL, binding_count and aliased_bindings 0 "
                       "(or drop the flag and declare the contract)",
                       name);
  if ((d->flags & TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE) && tandem__zero3(d->local_size))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE needs local_size (the "
                       "size to write into the module)",
                       name);
  if (d->aliased_bindings) {
    uint32_t m = d->aliased_bindings;
    if (d->binding_count < 32 && (m >> d->binding_count))
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': aliased_bindings 0x%x names a binding past the %u the "
                         "contract has",
                         name, m, d->binding_count);
    if (!(m & (m - 1)))
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': aliased_bindings 0x%x names one binding; name at least "
                         "two that may overlap each other",
                         name, m);
  }
  if (d->required_subgroup_size & (d->required_subgroup_size - 1))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': required_subgroup_size %u is not a power of two", name,
                       d->required_subgroup_size);
  if (d->binding_count > TANDEM_MAX_BINDINGS)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "kernel '%s': %u bindings, at most %u", name,
                       d->binding_count, TANDEM_MAX_BINDINGS);
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
    if (b->bytes > TANDEM__MAX_BYTES)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "binding %u of '%s': contract bytes %llu outside 1..%llu (or "
                         "TANDEM_BYTES_VIEW, 0: the bound view's length)",
                         i, name, (unsigned long long)b->bytes,
                         (unsigned long long)TANDEM__MAX_BYTES);
    if (b->alignment == 0 || (b->alignment & (b->alignment - 1)))
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "binding %u of '%s': alignment %llu is not a power of two", i, name,
                         (unsigned long long)b->alignment);
    if (b->access != TANDEM_ACCESS_READ && b->access != TANDEM_ACCESS_WRITE &&
        b->access != TANDEM_ACCESS_READ_WRITE)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "binding %u of '%s': access %d is not READ, WRITE or READ_WRITE", i, name,
                         (int)b->access);
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
    /* WRITE promises every declared byte is overwritten and none is read
     * (the NPU lane and poisoning rely on it): the shader must say so. */
    if (d->bindings[i].access == TANDEM_ACCESS_WRITE && r->readable)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "binding %u of '%s': the contract says WRITE but the shader may read "
                         "it (declare the buffer writeonly, or the binding READ_WRITE)",
                         i, name);
  }
  if (iface->push_constant_bytes != d->push_constant_bytes)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "kernel '%s': the shader's push constants are %u bytes, the contract "
                       "says %u",
                       name, iface->push_constant_bytes, d->push_constant_bytes);
  return TANDEM_OK;
}

/*--------------------------------------------------------------------------
 * Specialization: the user's (SpecId, value) pairs and local size against the
 * reflected constants. The result is one entry per SpecId that gets a value,
 * plus the effective workgroup size.
 *--------------------------------------------------------------------------*/

const char *tandem_scalar_type_name(tandem_scalar_type_t type) {
  switch (type) {
    case TANDEM_SCALAR_BOOL: return "bool";
    case TANDEM_SCALAR_INT32: return "int32";
    case TANDEM_SCALAR_UINT32: return "uint32";
    case TANDEM_SCALAR_FLOAT32: return "float32";
    case TANDEM_SCALAR_INT64: return "int64";
    case TANDEM_SCALAR_UINT64: return "uint64";
    case TANDEM_SCALAR_FLOAT64: return "float64";
  }
  return "unknown";
}

/* "uint32 'BLOCK_SIZE'" style description of a reflected constant. */
static void tandem__spec_describe(const tandem__reflected_spec_t *r, char *out, size_t cap) {
  const char *kind = r->kind == TANDEM__SPEC_BOOL    ? "bool"
                     : r->kind == TANDEM__SPEC_FLOAT ? "float"
                     : r->is_signed                  ? "int"
                                                     : "uint";
  if (r->kind == TANDEM__SPEC_BOOL)
    snprintf(out, cap, "bool%s%s%s", r->name[0] ? " '" : "", r->name, r->name[0] ? "'" : "");
  else
    snprintf(out, cap, "%s%u%s%s%s", kind, r->width, r->name[0] ? " '" : "", r->name,
             r->name[0] ? "'" : "");
}

/* The default value of |r| as text. */
static void tandem__spec_default(const tandem__reflected_spec_t *r, char *out, size_t cap) {
  uint64_t b = r->default_bits;
  if (r->kind == TANDEM__SPEC_BOOL) {
    snprintf(out, cap, "%s", b ? "true" : "false");
  } else if (r->kind == TANDEM__SPEC_FLOAT && r->width == 32) {
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, sizeof f);
    snprintf(out, cap, "%g", (double)f);
  } else if (r->kind == TANDEM__SPEC_FLOAT && r->width == 64) {
    double f;
    memcpy(&f, &b, sizeof f);
    snprintf(out, cap, "%g", f);
  } else if (r->kind == TANDEM__SPEC_INT && r->is_signed && r->width <= 64) {
    int64_t v = r->width == 64 ? (int64_t)b : (int64_t)(b << (64 - r->width)) >> (64 - r->width);
    snprintf(out, cap, "%lld", (long long)v);
  } else {
    snprintf(out, cap, "%llu (0x%llx)", (unsigned long long)b, (unsigned long long)b);
  }
}

/* The value of |c| as text. */
static void tandem__given_text(const tandem_spec_constant_t *c, char *out, size_t cap) {
  switch (c->type) {
    case TANDEM_SCALAR_BOOL: snprintf(out, cap, "%s", c->value.b ? "true" : "false"); break;
    case TANDEM_SCALAR_INT32: snprintf(out, cap, "%d", c->value.i32); break;
    case TANDEM_SCALAR_UINT32: snprintf(out, cap, "%u", c->value.u32); break;
    case TANDEM_SCALAR_FLOAT32: snprintf(out, cap, "%g", (double)c->value.f32); break;
    case TANDEM_SCALAR_INT64: snprintf(out, cap, "%lld", (long long)c->value.i64); break;
    case TANDEM_SCALAR_UINT64: snprintf(out, cap, "%llu", (unsigned long long)c->value.u64); break;
    case TANDEM_SCALAR_FLOAT64: snprintf(out, cap, "%g", c->value.f64); break;
  }
}

/* Converts the given |c| to the bits reflected constant |r| takes, or fails
 * with CONTRACT naming both types. */
static tandem_status_t tandem__spec_fit(const tandem_spec_constant_t *c,
                                        const tandem__reflected_spec_t *r, const char *name,
                                        const char *origin, uint64_t *out_bits,
                                        uint32_t *out_size) {
  char decl[96], given[64];
  tandem__spec_describe(r, decl, sizeof decl);
  tandem__given_text(c, given, sizeof given);
  bool is_int = c->type == TANDEM_SCALAR_INT32 || c->type == TANDEM_SCALAR_UINT32 ||
                c->type == TANDEM_SCALAR_INT64 || c->type == TANDEM_SCALAR_UINT64;
  bool is_float = c->type == TANDEM_SCALAR_FLOAT32 || c->type == TANDEM_SCALAR_FLOAT64;
  uint32_t width = c->type == TANDEM_SCALAR_BOOL ? 1
                   : (c->type == TANDEM_SCALAR_INT64 || c->type == TANDEM_SCALAR_UINT64 ||
                      c->type == TANDEM_SCALAR_FLOAT64)
                       ? 64
                       : 32;
  bool kind_ok = (r->kind == TANDEM__SPEC_BOOL && c->type == TANDEM_SCALAR_BOOL) ||
                 (r->kind == TANDEM__SPEC_INT && is_int) ||
                 (r->kind == TANDEM__SPEC_FLOAT && is_float);
  /* VkBool32: a bool constant also takes a 4-byte 0 or 1 (runtimes such as
   * llama.cpp build every specialization list as uint32). */
  if (r->kind == TANDEM__SPEC_BOOL &&
      (c->type == TANDEM_SCALAR_UINT32 || c->type == TANDEM_SCALAR_INT32)) {
    if (c->value.u32 > 1)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "specialization constant %u of '%s' (%s): %s gives %s %s; a bool "
                         "constant takes true/false or a 4-byte 0 or 1 (VkBool32)",
                         c->id, name, decl, origin, tandem_scalar_type_name(c->type), given);
    *out_bits = c->value.u32;
    *out_size = 4;
    return TANDEM_OK;
  }
  if (r->kind != TANDEM__SPEC_BOOL && r->width != 32 && r->width != 64)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "specialization constant %u of '%s' is %s; tandem sets only bool and "
                       "32- or 64-bit constants (%s gives %s %s)",
                       c->id, name, decl, origin, tandem_scalar_type_name(c->type), given);
  if (!kind_ok || width != r->width)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "specialization constant %u of '%s': %s gives %s %s, but the shader "
                       "declares it %s",
                       c->id, name, origin, tandem_scalar_type_name(c->type), given, decl);
  uint64_t bits = 0;
  bool fits = true;
  switch (c->type) {
    case TANDEM_SCALAR_BOOL: bits = c->value.b ? 1 : 0; break;
    case TANDEM_SCALAR_INT32:
      bits = (uint32_t)c->value.i32;
      fits = r->is_signed || c->value.i32 >= 0;
      break;
    case TANDEM_SCALAR_UINT32:
      bits = c->value.u32;
      fits = !r->is_signed || c->value.u32 <= INT32_MAX;
      break;
    case TANDEM_SCALAR_FLOAT32: {
      uint32_t u;
      memcpy(&u, &c->value.f32, sizeof u);
      bits = u;
      break;
    }
    case TANDEM_SCALAR_INT64:
      bits = (uint64_t)c->value.i64;
      fits = r->is_signed || c->value.i64 >= 0;
      break;
    case TANDEM_SCALAR_UINT64:
      bits = c->value.u64;
      fits = !r->is_signed || c->value.u64 <= INT64_MAX;
      break;
    case TANDEM_SCALAR_FLOAT64: memcpy(&bits, &c->value.f64, sizeof bits); break;
  }
  if (!fits)
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "specialization constant %u of '%s': %s gives %s %s, which %s %s cannot "
                       "hold",
                       c->id, name, origin, tandem_scalar_type_name(c->type), given,
                       r->is_signed ? "the signed" : "the unsigned", decl);
  *out_bits = bits;
  *out_size = width == 64 ? 8 : 4; /* bool is a VkBool32 */
  return TANDEM_OK;
}

/* Adds (or checks against) the value for |c->id| in |b|, fitting it to every
 * reflected constant with that SpecId. */
static tandem_status_t tandem__spec_set(tandem__kernel_build_t *b,
                                        const tandem__kernel_interface_t *iface,
                                        const tandem_spec_constant_t *c, const char *name,
                                        const char *origin) {
  uint64_t bits = 0;
  uint32_t size = 0;
  bool declared = false;
  for (uint32_t k = 0; k < iface->spec_count; k++) {
    if (iface->specs[k].spec_id != c->id) continue;
    uint64_t kb = 0;
    uint32_t ks = 0;
    TANDEM_RETURN_IF_ERROR(tandem__spec_fit(c, &iface->specs[k], name, origin, &kb, &ks));
    if (declared && (kb != bits || ks != size))
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "specialization constant %u of '%s': its constants have different "
                         "types, so one value cannot set them all",
                         c->id, name);
    bits = kb, size = ks, declared = true;
  }
  /* Vulkan ignores a map entry for an id the module does not declare
   * (optimised builds strip unused constants while runtimes still pass
   * them): so does tandem, and reports it, unless the desc asks for
   * strictness. */
  if (!declared && !(b->flags & TANDEM_KERNEL_STRICT_SPEC_IDS)) {
    for (uint32_t k = 0; k < b->ignored_count; k++)
      if (b->ignored_ids[k] == c->id) return TANDEM_OK;
    b->ignored_ids[b->ignored_count++] = c->id; /* ≤ TANDEM_MAX_SPEC_CONSTANTS ids */
    return TANDEM_OK;
  }
  if (!declared) {
    char ids[256];
    size_t used = 0;
    ids[0] = '\0';
    /* The declared ids, ascending and once each. */
    int64_t last = -1;
    for (;;) {
      int64_t next = -1;
      for (uint32_t k = 0; k < iface->spec_count; k++) {
        int64_t id = iface->specs[k].spec_id;
        if (id > last && (next < 0 || id < next)) next = id;
      }
      if (next < 0 || used >= sizeof ids) break;
      int w = snprintf(ids + used, sizeof ids - used, "%s%lld", used ? ", " : "", (long long)next);
      if (w < 0) break;
      used += (size_t)w;
      last = next;
    }
    return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                       "specialization constant %u of '%s' (%s): the shader declares no constant "
                       "with that SpecId; it declares %s (refused by "
                       "TANDEM_KERNEL_STRICT_SPEC_IDS)",
                       c->id, name, origin, iface->spec_count ? ids : "none");
  }
  for (uint32_t k = 0; k < b->spec_count; k++) {
    if (b->specs[k].spec_id != c->id) continue;
    if (b->specs[k].bits != bits)
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "specialization constant %u of '%s': %s disagrees with a value given "
                         "for the same SpecId elsewhere in the desc (local_size and "
                         "spec_constants must agree)",
                         c->id, name, origin);
    return TANDEM_OK;
  }
  b->specs[b->spec_count++] = (tandem__spec_entry_t){c->id, size, bits};
  return TANDEM_OK;
}

/* Resolves specialization and the workgroup size of the kernel |d| against
 * |iface|; fills |b|'s spec entries and |local_size|. */
static tandem_status_t tandem__specialize(const tandem_kernel_desc_t *d, const char *name,
                                          const tandem__kernel_interface_t *iface,
                                          tandem__kernel_build_t *b, uint32_t local_size[3],
                                          bool *out_specialized) {
  static const char axis[3] = {'x', 'y', 'z'};
  b->spec_count = 0;
  *out_specialized = false;
  for (uint32_t i = 0; i < d->spec_constant_count; i++) {
    char origin[48];
    snprintf(origin, sizeof origin, "spec_constants[%u]", i);
    TANDEM_RETURN_IF_ERROR(tandem__spec_set(b, iface, &d->spec_constants[i], name, origin));
  }
  bool given = !tandem__zero3(d->local_size);
  bool override = d->flags & TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE;
  b->rewrite_local_size = false;
  for (int k = 0; k < 3; k++) {
    int64_t id = iface->local_size_spec[k];
    if (id < 0) {
      if (!given || d->local_size[k] == iface->local_size[k]) continue;
      if (!override)
        return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                           "kernel '%s': local_size[%d] is %u but the shader fixes local_size_%c "
                           "= %u; declare `layout(local_size_%c_id = N) in;` to let the runtime "
                           "set it, or set TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE to rewrite the "
                           "literal (if the code is correct at that size)",
                           name, k, d->local_size[k], axis[k], iface->local_size[k], axis[k]);
      /* Only a LocalSize execution mode is rewritten: a WorkgroupSize
       * built-in or LocalSizeId made of plain constants may share those
       * constants with other code. */
      if (!iface->local_size_mode_at)
        return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                           "kernel '%s': TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE: local_size_%c = %u "
                           "comes from a WorkgroupSize built-in or LocalSizeId of plain "
                           "constants, not a LocalSize execution mode, so it cannot be "
                           "rewritten; declare `layout(local_size_%c_id = N) in;` instead",
                           name, axis[k], iface->local_size[k], axis[k]);
      b->rewrite_local_size = true;
      continue;
    }
    *out_specialized = true;
    if (!given) continue;
    tandem_spec_constant_t c = {.id = (uint32_t)id, .type = TANDEM_SCALAR_UINT32};
    c.value.u32 = d->local_size[k];
    char origin[32];
    snprintf(origin, sizeof origin, "local_size[%d]", k);
    TANDEM_RETURN_IF_ERROR(tandem__spec_set(b, iface, &c, name, origin));
  }
  /* A SpecId nobody set, whose constants disagree on the default: whichever
   * default the driver applies, some code sees a value it was not written
   * for (the silent wrong result this check exists for). */
  for (uint32_t k = 0; k < iface->spec_count; k++) {
    const tandem__reflected_spec_t *r = &iface->specs[k];
    bool set = false;
    for (uint32_t j = 0; j < b->spec_count; j++) set |= b->specs[j].spec_id == r->spec_id;
    if (set) continue;
    for (uint32_t j = k + 1; j < iface->spec_count; j++) {
      const tandem__reflected_spec_t *o = &iface->specs[j];
      if (o->spec_id != r->spec_id) continue;
      if (o->default_bits == r->default_bits && o->kind == r->kind && o->width == r->width)
        continue;
      char d1[64], d2[64], t1[96], t2[96];
      tandem__spec_default(r, d1, sizeof d1);
      tandem__spec_default(o, d2, sizeof d2);
      tandem__spec_describe(r, t1, sizeof t1);
      tandem__spec_describe(o, t2, sizeof t2);
      const char *hint = "";
      for (int a = 0; a < 3; a++)
        if (iface->local_size_spec[a] == r->spec_id)
          hint = " (one of them sets the workgroup size: give local_size or the constant)";
      return TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                         "kernel '%s': SpecId %u names two constants with different defaults, "
                         "%s = %s and %s = %s, and no value is given for it; the kernel would "
                         "run with one default while code assumes the other%s",
                         name, r->spec_id, t1, d1, t2, d2, hint);
    }
  }
  /* The effective size. */
  for (int k = 0; k < 3; k++) {
    local_size[k] = iface->local_size[k];
    int64_t id = iface->local_size_spec[k];
    if (id < 0) {
      if (b->rewrite_local_size) local_size[k] = d->local_size[k];
      continue;
    }
    for (uint32_t j = 0; j < b->spec_count; j++)
      if (b->specs[j].spec_id == (uint64_t)id) local_size[k] = (uint32_t)b->specs[j].bits;
  }
  return TANDEM_OK;
}

/* Device limits and features for a kernel whose size and needs are known. */
/* The names of the tandem_shader_feature_t bits in |mask|, comma separated,
 * into |list| (|cap| bytes; cut short when full). */
static void tandem__feature_list(uint32_t mask, char *list, size_t cap) {
  size_t used = 0;
  list[0] = '\0';
  for (int bit = 0; bit < 32 && used < cap; bit++) {
    if (!(mask & (1u << bit))) continue;
    int w = snprintf(list + used, cap - used, "%s%s", used ? ", " : "",
                     tandem_shader_feature_name((tandem_shader_feature_t)(1u << bit)));
    if (w < 0) break;
    used += (size_t)w;
  }
}

static tandem_status_t tandem__device_check(const tandem__gpu_t *gpu, const char *name,
                                            const uint32_t local_size[3], uint32_t needs,
                                            uint32_t subgroup_size) {
  const tandem_device_info_t *info = &gpu->info;
  static const char axis[3] = {'x', 'y', 'z'};
  uint64_t invocations = 1;
  for (int k = 0; k < 3; k++) {
    if (local_size[k] == 0 || local_size[k] > info->max_local_size[k])
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': workgroup size %c is %u; the device allows 1..%u "
                         "(maxComputeWorkGroupSize)",
                         name, axis[k], local_size[k], info->max_local_size[k]);
    invocations *= local_size[k];
  }
  if (invocations > info->max_local_invocations)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "kernel '%s': workgroup size %ux%ux%u is %llu invocations; the device "
                       "allows %u (maxComputeWorkGroupInvocations)",
                       name, local_size[0], local_size[1], local_size[2],
                       (unsigned long long)invocations, info->max_local_invocations);
  uint32_t missing = needs & ~info->shader_features;
  if (missing & gpu->shader_features_not_enabled) {
    char list[512];
    tandem__feature_list(missing & gpu->shader_features_not_enabled, list, sizeof list);
    /* The clocks' struct and extension are outside the core chain. */
    bool clock = missing & gpu->shader_features_not_enabled &
                 (TANDEM_SHADER_SUBGROUP_CLOCK | TANDEM_SHADER_DEVICE_CLOCK);
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "kernel '%s' needs %s, which GPU '%s' has but the application's "
                       "VkDevice was created without: enable it in the feature chain given to "
                       "vkCreateDevice and pass the same chain as tandem_vulkan_device_t.features"
                       "%s",
                       name, list, info->name,
                       clock ? " (a clock: in VkPhysicalDeviceShaderClockFeaturesKHR, with "
                               "VK_KHR_shader_clock among the extensions enabled and named in "
                               "tandem_vulkan_device_t.extensions)"
                             : "");
  }
  if (missing) {
    char list[512];
    tandem__feature_list(missing, list, sizeof list);
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "kernel '%s' needs %s, which GPU '%s' does not support; use a variant "
                       "of the kernel without it (tandem_device_info_t.shader_features lists "
                       "what the device has)",
                       name, list, info->name);
  }
  if (subgroup_size) {
    if (!(info->shader_features & TANDEM_SHADER_SUBGROUP_SIZE_CONTROL))
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "kernel '%s': required_subgroup_size %u needs subgroupSizeControl for "
                         "compute shaders, which GPU '%s' does not support",
                         name, subgroup_size, info->name);
    if (subgroup_size < info->min_subgroup_size || subgroup_size > info->max_subgroup_size)
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "kernel '%s': required_subgroup_size %u is outside the device's "
                         "%u..%u",
                         name, subgroup_size, info->min_subgroup_size, info->max_subgroup_size);
    if (invocations > (uint64_t)subgroup_size * gpu->max_workgroup_subgroups)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': %llu invocations need more than the device's %u "
                         "subgroups of %u (maxComputeWorkgroupSubgroups)",
                         name, (unsigned long long)invocations, gpu->max_workgroup_subgroups,
                         subgroup_size);
  }
  return TANDEM_OK;
}

/* The pipeline flags against the device ("Pipeline flags" in tandem.h). */
static tandem_status_t tandem__flags_check(const tandem__gpu_t *gpu, const char *name,
                                           uint32_t flags, const uint32_t local_size[3],
                                           uint32_t subgroup_size, uint32_t spirv_version) {
  const tandem_device_info_t *info = &gpu->info;
  if (flags & TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS) {
    if (!(info->shader_features & TANDEM_SHADER_FULL_SUBGROUPS))
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "kernel '%s': TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS needs "
                         "computeFullSubgroups (VK_EXT_subgroup_size_control / Vulkan 1.3), "
                         "which GPU '%s' does not support",
                         name, info->name);
    /* Full subgroups tile the x dimension: which size must divide it
     * depends on whether the size may vary (SPIR-V 1.6 modules). */
    bool varying = !subgroup_size && spirv_version >= 0x00010600u;
    uint32_t unit = subgroup_size ? subgroup_size
                    : varying     ? info->max_subgroup_size
                                  : info->subgroup_size;
    if (unit && local_size[0] % unit)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS needs workgroup "
                         "size x (%u) to be a multiple of %s (%u)",
                         name, local_size[0],
                         subgroup_size ? "required_subgroup_size"
                         : varying     ? "the device's max_subgroup_size, as a SPIR-V 1.6 "
                                         "module's subgroup size may vary"
                                       : "the device's subgroup_size",
                         unit);
  }
  if ((flags & TANDEM_KERNEL_DISABLE_ROBUSTNESS) &&
      !(info->features & TANDEM_GPU_PIPELINE_ROBUSTNESS))
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "kernel '%s': TANDEM_KERNEL_DISABLE_ROBUSTNESS needs "
                       "VK_EXT_pipeline_robustness with its pipelineRobustness feature, which "
                       "GPU '%s' does not offer (or the application's device was not created "
                       "with); leave the flag off there",
                       name, info->name);
  return TANDEM_OK;
}

/* The effective value of reflected constant |r| under |b|, and whether the
 * desc gave it. */
static uint64_t tandem__spec_effective(const tandem__reflected_spec_t *r,
                                       const tandem__kernel_build_t *b, bool *out_given) {
  for (uint32_t j = 0; j < b->spec_count; j++)
    if (b->specs[j].spec_id == r->spec_id) {
      *out_given = true;
      return b->specs[j].bits;
    }
  *out_given = false;
  return r->default_bits;
}

tandem_status_t tandem_kernel_create(tandem_runtime_t *runtime, const tandem_kernel_desc_t *desc,
                                     tandem_kernel_t **out_kernel) {
  if (!out_kernel) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_kernel is NULL");
  *out_kernel = NULL;
  if (!runtime || !desc)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "runtime or desc is NULL");
  return tandem__kernel_load(runtime, desc, NULL, out_kernel);
}

tandem_status_t tandem__kernel_load(tandem_runtime_t *runtime, const tandem_kernel_desc_t *desc,
                                    const tandem_vulkan_kernel_t *adopt,
                                    tandem_kernel_t **out_kernel) {
  tandem_kernel_desc_t d;
  tandem_kernel_desc_init(&d);
  TANDEM_RETURN_IF_ERROR(
      tandem__struct_in(desc, &d, sizeof d, TANDEM__OLDEST_KERNEL_DESC, "tandem_kernel_desc_t"));
  if (!d.entry_point) d.entry_point = "main";
  const char *name = d.name ? d.name : d.entry_point;
  TANDEM_RETURN_IF_ERROR(tandem__desc_check(&d, name));

  void *file_data = NULL; /* SPIR-V read from spirv_path or compiled from glsl_source */
  if (d.glsl_source) {
    if (d.spirv || d.spirv_path)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': glsl_source and %s are both set; give one", name,
                         d.spirv ? "spirv" : "spirv_path");
    TANDEM_RETURN_IF_ERROR(tandem__glsl_compile(d.glsl_source, name, &file_data, &d.spirv_size));
    d.spirv = file_data;
  } else if (!d.spirv) {
    if (!d.spirv_path)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                         "kernel '%s': none of spirv, spirv_path and glsl_source is set", name);
    size_t size;
    TANDEM_RETURN_IF_ERROR(tandem__read_file(d.spirv_path, name, &file_data, &size));
    d.spirv = file_data;
    d.spirv_size = size;
  }
  tandem__gpu_t *gpu = NULL;
  /* GLSL text where SPIR-V was expected: say so, and how to compile it. */
  tandem_status_t s = tandem__glsl_refuse_as_spirv(d.spirv, d.spirv_size, d.spirv_path, name);
  if (s == TANDEM_OK && adopt && d.gpu != 0)
    s = TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                    "kernel '%s': an adopted pipeline is on GPU 0 (interop is GPU 0's); its "
                    "description names GPU %u",
                    name, d.gpu);
  if (s == TANDEM_OK) s = tandem__runtime_gpu_at(runtime, d.gpu, &gpu);
  if (s != TANDEM_OK) s = tandem__annotate(s, "kernel '%s'", name);
  /* Both are large (a few KiB each): heap, not stack. */
  tandem__kernel_interface_t *iface = NULL;
  tandem__kernel_build_t *build = NULL;
  if (s == TANDEM_OK) {
    iface = calloc(1, sizeof *iface);
    build = calloc(1, sizeof *build);
    if (!iface || !build)
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                      "kernel '%s': allocating its reflection and build state (%zu bytes)", name,
                      sizeof *iface + sizeof *build);
  }
  for (int i = 0; s == TANDEM_OK && i < 3; i++)
    if (d.workgroups[i] > gpu->max_workgroups[i])
      s = TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                      "kernel '%s': workgroups[%d] is %u, the device allows at most %u "
                      "(maxComputeWorkGroupCount)",
                      name, i, d.workgroups[i], gpu->max_workgroups[i]);
  if (s == TANDEM_OK)
    s = gpu->vtable->kernel.reflect(gpu, d.spirv, d.spirv_size, d.entry_point, name, iface);
  /* The contract the shader states: every binding view-sized, READ where it
   * is readonly, else READ_WRITE (writeonly does not promise that every byte
   * of the view is written, which WRITE does); push constants as declared
   * unless the desc gives a size. Checked below like a written contract. */
  tandem_binding_contract_t from_shader[TANDEM_MAX_BINDINGS];
  if (s == TANDEM_OK && (d.flags & TANDEM_KERNEL_CONTRACT_FROM_SHADER)) {
    if (iface->binding_count > TANDEM_MAX_BINDINGS)
      s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                      "kernel '%s': the shader declares %u bindings, at "
                      "most %u",
                      name, iface->binding_count, TANDEM_MAX_BINDINGS);
    for (uint32_t i = 0; s == TANDEM_OK && i < iface->binding_count; i++)
      from_shader[i] =
          (tandem_binding_contract_t){TANDEM_BYTES_VIEW, 4,
                                      iface->bindings[i].writable ? TANDEM_ACCESS_READ_WRITE
                                                                  : TANDEM_ACCESS_READ};
    d.bindings = from_shader;
    d.binding_count = iface->binding_count;
    if (!d.push_constant_bytes) d.push_constant_bytes = iface->push_constant_bytes;
  }
  if (s == TANDEM_OK) s = tandem__contract_check(&d, name, iface);
  uint32_t local_size[3] = {0, 0, 0};
  bool specialized = false;
  if (build) build->flags = d.flags;
  if (s == TANDEM_OK) s = tandem__specialize(&d, name, iface, build, local_size, &specialized);
  if (s == TANDEM_OK)
    s = tandem__device_check(gpu, name, local_size, iface->shader_features,
                             d.required_subgroup_size);
  if (s == TANDEM_OK)
    s = tandem__flags_check(gpu, name, d.flags, local_size, d.required_subgroup_size,
                            iface->spirv_version);
  tandem_kernel_t *kernel = NULL;
  if (s == TANDEM_OK) {
    kernel = calloc(1, sizeof *kernel);
    if (!kernel) s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a kernel");
  }
  /* The reflected constants with the values they get, for
   * tandem_kernel_spec_constant_info. */
  if (s == TANDEM_OK && iface->spec_count) {
    kernel->specs = calloc(iface->spec_count, sizeof *kernel->specs);
    if (!kernel->specs)
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                      "kernel '%s': allocating %u constants' "
                      "reflection",
                      name, iface->spec_count);
    for (uint32_t k = 0; s == TANDEM_OK && k < iface->spec_count; k++) {
      kernel->specs[k].reflected = iface->specs[k];
      kernel->specs[k].bits =
          tandem__spec_effective(&iface->specs[k], build, &kernel->specs[k].given);
    }
  }
  if (s == TANDEM_OK) {
    memcpy(build->local_size, local_size, sizeof build->local_size);
    build->local_size_mode_at = iface->local_size_mode_at;
    build->spirv_version = iface->spirv_version;
    build->workgroup = iface->workgroup;
    build->spirv = d.spirv;
    build->spirv_size = d.spirv_size;
    build->entry_point = d.entry_point;
    build->binding_count = d.binding_count;
    build->push_constant_bytes = d.push_constant_bytes;
    build->required_subgroup_size = d.required_subgroup_size;
    s = adopt ? gpu->vtable->interop->kernel_adopt(gpu, build, name, adopt, &kernel->native)
              : gpu->vtable->kernel.create(gpu, build, name, &kernel->native);
    tandem__runtime_note_loss(runtime, s);
  }
  free(file_data);
  if (s != TANDEM_OK) {
    free(iface);
    free(build);
    if (kernel) free(kernel->specs);
    free(kernel);
    return s;
  }
  memcpy(kernel->local_size, local_size, sizeof kernel->local_size);
  kernel->gpu = d.gpu;
  kernel->flags = d.flags;
  kernel->local_size_overridden = build->rewrite_local_size;
  kernel->aliased_bindings = d.aliased_bindings;
  kernel->ignored_spec_count = build->ignored_count;
  memcpy(kernel->ignored_spec_ids, build->ignored_ids,
         build->ignored_count * sizeof *build->ignored_ids);
  kernel->local_size_specialized = specialized;
  kernel->shader_features = iface->shader_features;
  kernel->spec_constant_count = iface->spec_count;
  kernel->required_subgroup_size = d.required_subgroup_size;
  kernel->shared_memory_bytes = build->shared_memory_bytes;
  free(iface);
  free(build);
  atomic_init(&kernel->refs, 1);
  kernel->runtime = runtime;
  snprintf(kernel->name, sizeof kernel->name, "%s", name);
  memcpy(kernel->workgroups, d.workgroups, sizeof kernel->workgroups);
  kernel->binding_count = d.binding_count;
  if (d.binding_count) memcpy(kernel->bindings, d.bindings, d.binding_count * sizeof *d.bindings);
  /* Aliased bindings are tracked as READ_WRITE: the union of their ranges
   * may be read and written through any of them ("Aliased bindings"). */
  for (uint32_t i = 0; i < d.binding_count; i++)
    if (d.aliased_bindings & (1u << i)) kernel->bindings[i].access = TANDEM_ACCESS_READ_WRITE;
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
  tandem__gpu_t *gpu = tandem__gpu_at(rt, kernel->gpu);
  gpu->vtable->kernel.destroy(gpu, kernel->native);
  free(kernel->specs);
  free(kernel);
  tandem__runtime_release(rt);
}

const char *tandem_kernel_name(const tandem_kernel_t *kernel) { return kernel ? kernel->name : ""; }

tandem_status_t tandem_kernel_info(const tandem_kernel_t *kernel, tandem_kernel_info_t *out_info) {
  if (!out_info) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_info is NULL");
  TANDEM_RETURN_IF_ERROR(
      tandem__struct_out_check(out_info, TANDEM__OLDEST_KERNEL_INFO, "tandem_kernel_info_t"));
  tandem_kernel_info_t info;
  memset(&info, 0, sizeof info);
  if (!kernel) {
    tandem__struct_out(out_info, &info, sizeof info);
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "kernel is NULL");
  }
  memcpy(info.local_size, kernel->local_size, sizeof info.local_size);
  info.local_size_specialized = kernel->local_size_specialized;
  memcpy(info.workgroups, kernel->workgroups, sizeof info.workgroups);
  info.binding_count = kernel->binding_count;
  info.push_constant_bytes = kernel->push_constant_bytes;
  info.spec_constant_count = kernel->spec_constant_count;
  info.shader_features = kernel->shader_features;
  info.required_subgroup_size = kernel->required_subgroup_size;
  info.shared_memory_bytes = kernel->shared_memory_bytes;
  info.flags = kernel->flags;
  info.local_size_overridden = kernel->local_size_overridden;
  info.aliased_bindings = kernel->aliased_bindings;
  info.ignored_spec_count = kernel->ignored_spec_count;
  memcpy(info.ignored_spec_ids, kernel->ignored_spec_ids, sizeof info.ignored_spec_ids);
  tandem__struct_out(out_info, &info, sizeof info);
  return TANDEM_OK;
}

/* |bits| of reflected constant |r| as a typed value (type 0 and raw bits for
 * widths tandem cannot set). */
static tandem_spec_constant_t tandem__spec_value(const tandem__reflected_spec_t *r,
                                                 tandem_scalar_type_t type, uint64_t bits) {
  tandem_spec_constant_t v;
  memset(&v, 0, sizeof v);
  v.id = r->spec_id;
  v.type = type;
  switch (type) {
    case TANDEM_SCALAR_BOOL: v.value.b = bits != 0; break;
    case TANDEM_SCALAR_INT32: v.value.i32 = (int32_t)(uint32_t)bits; break;
    case TANDEM_SCALAR_UINT32: v.value.u32 = (uint32_t)bits; break;
    case TANDEM_SCALAR_FLOAT32: {
      uint32_t u = (uint32_t)bits;
      memcpy(&v.value.f32, &u, sizeof u);
      break;
    }
    case TANDEM_SCALAR_INT64: v.value.i64 = (int64_t)bits; break;
    case TANDEM_SCALAR_FLOAT64: memcpy(&v.value.f64, &bits, sizeof bits); break;
    default: v.value.u64 = bits; break; /* UINT64, and 0 for 8/16-bit */
  }
  return v;
}

tandem_status_t tandem_kernel_spec_constant_info(const tandem_kernel_t *kernel, uint32_t index,
                                                 tandem_spec_constant_info_t *out_info) {
  if (!out_info) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_info is NULL");
  TANDEM_RETURN_IF_ERROR(tandem__struct_out_check(out_info, TANDEM__OLDEST_SPEC_CONSTANT_INFO,
                                                  "tandem_spec_constant_info_t"));
  tandem_spec_constant_info_t info;
  memset(&info, 0, sizeof info);
  tandem_status_t s = TANDEM_OK;
  if (!kernel) s = TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "kernel is NULL");
  else if (index >= kernel->spec_constant_count)
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                    "kernel '%s': specialization constant index %u; the module declares %u",
                    kernel->name, index, kernel->spec_constant_count);
  if (s != TANDEM_OK) {
    tandem__struct_out(out_info, &info, sizeof info);
    return s;
  }
  const tandem__kernel_spec_t *k = &kernel->specs[index];
  const tandem__reflected_spec_t *r = &k->reflected;
  info.id = r->spec_id;
  snprintf(info.name, sizeof info.name, "%s", r->name);
  info.width = r->width;
  info.is_signed = r->kind == TANDEM__SPEC_INT && r->is_signed;
  info.is_float = r->kind == TANDEM__SPEC_FLOAT;
  tandem_scalar_type_t type = (tandem_scalar_type_t)0;
  if (r->kind == TANDEM__SPEC_BOOL) type = TANDEM_SCALAR_BOOL;
  else if (r->kind == TANDEM__SPEC_FLOAT && r->width == 32) type = TANDEM_SCALAR_FLOAT32;
  else if (r->kind == TANDEM__SPEC_FLOAT && r->width == 64) type = TANDEM_SCALAR_FLOAT64;
  else if (r->kind == TANDEM__SPEC_INT && r->width == 32)
    type = r->is_signed ? TANDEM_SCALAR_INT32 : TANDEM_SCALAR_UINT32;
  else if (r->kind == TANDEM__SPEC_INT && r->width == 64)
    type = r->is_signed ? TANDEM_SCALAR_INT64 : TANDEM_SCALAR_UINT64;
  info.type = type;
  info.default_value = tandem__spec_value(r, type, r->default_bits);
  info.given = k->given;
  info.value = tandem__spec_value(r, type, k->bits);
  tandem__struct_out(out_info, &info, sizeof info);
  return TANDEM_OK;
}

const char *tandem_shader_feature_name(tandem_shader_feature_t feature) {
  switch (feature) {
#define TANDEM__SHADER_FEATURE_CASE(name, bit, text) \
  case TANDEM_SHADER_##name: return text;
    TANDEM_SHADER_FEATURE_LIST(TANDEM__SHADER_FEATURE_CASE)
#undef TANDEM__SHADER_FEATURE_CASE
  }
  return "unknown";
}
