/* SPDX-License-Identifier: MIT */
/*
 * harness_host.c — the host twins of the test shaders: for each SPIR-V the
 * CTS dispatches on the host GPU (TANDEM_TEST_BACKEND=host, tests/harness.h),
 * a C function doing what the shader does for every invocation of the
 * dispatch, with the workgroup size and push constants it is given, so the
 * tests' CPU references hold on both backends. Registered with
 * tandem_test_host_kernel_register (tandem_testing.h) before the first
 * runtime; a shader without a twin here is refused by the host GPU
 * (UNSUPPORTED, naming the kernel).
 */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "tandem_test_shaders.h"

/* Calls |body| for every invocation's gl_GlobalInvocationID.x (the y and z
 * invocations repeat it, as on a GPU: these shaders only read x). */
#define TH_EACH_X(d, i)                                                                       \
  for (uint64_t th_z = 0; th_z < (uint64_t)(d)->workgroups[2] * (d)->local_size[2]; th_z++)   \
    for (uint64_t th_y = 0; th_y < (uint64_t)(d)->workgroups[1] * (d)->local_size[1]; th_y++) \
      for (uint32_t i = 0; i < (d)->workgroups[0] * (d)->local_size[0]; i++)

static uint32_t th__push_u32(const tandem_test_host_dispatch_t *d, uint32_t at) {
  uint32_t v = 0;
  if (d->push && at + 4 <= d->push_bytes) memcpy(&v, (const uint8_t *)d->push + at, 4);
  return v;
}

static float th__push_f32(const tandem_test_host_dispatch_t *d, uint32_t at) {
  float v = 0;
  if (d->push && at + 4 <= d->push_bytes) memcpy(&v, (const uint8_t *)d->push + at, 4);
  return v;
}

/* Words a binding holds (a runtime array's length()). */
static uint64_t th__words(const tandem_test_host_dispatch_t *d, uint32_t b) {
  return d->binding_bytes[b] / 4;
}

/* add_one_u32.comp: v[i] += 1 for i < n. */
static void th__add_one_u32(const tandem_test_host_dispatch_t *d) {
  uint32_t n = th__push_u32(d, 0), *v = (uint32_t *)d->bindings[0];
  TH_EACH_X(d, i) if (i < n && i < th__words(d, 0)) v[i] += 1u;
}

/* copy_u32.comp: dst[i] = src[i] for i < n. */
static void th__copy_u32(const tandem_test_host_dispatch_t *d) {
  uint32_t n = th__push_u32(d, 0);
  const uint32_t *src = (const uint32_t *)d->bindings[0];
  uint32_t *dst = (uint32_t *)d->bindings[1];
  TH_EACH_X(d, i) if (i < n && i < th__words(d, 0) && i < th__words(d, 1)) dst[i] = src[i];
}

/* writes_binding0.comp: a[i] = b[i] for i < n (binding 0 written). */
static void th__writes_binding0(const tandem_test_host_dispatch_t *d) {
  uint32_t n = th__push_u32(d, 0);
  uint32_t *a = (uint32_t *)d->bindings[0];
  const uint32_t *b = (const uint32_t *)d->bindings[1];
  TH_EACH_X(d, i) if (i < n && i < th__words(d, 0) && i < th__words(d, 1)) a[i] = b[i];
}

/* push16.comp: v[i] = p.y + p.z * i + p.w for i < p.x. */
static void th__push16(const tandem_test_host_dispatch_t *d) {
  uint32_t x = th__push_u32(d, 0), y = th__push_u32(d, 4), z = th__push_u32(d, 8),
           w = th__push_u32(d, 12);
  uint32_t *v = (uint32_t *)d->bindings[0];
  TH_EACH_X(d, i) if (i < x && i < th__words(d, 0)) v[i] = y + z * i + w;
}

/* three_bindings.comp: c[i] = a[i] + b[i] for i below every length. */
static void th__three_bindings(const tandem_test_host_dispatch_t *d) {
  const uint32_t *a = (const uint32_t *)d->bindings[0], *b = (const uint32_t *)d->bindings[1];
  uint32_t *c = (uint32_t *)d->bindings[2];
  uint64_t n = th__words(d, 2);
  if (th__words(d, 0) < n) n = th__words(d, 0);
  if (th__words(d, 1) < n) n = th__words(d, 1);
  TH_EACH_X(d, i) if (i < n) c[i] = a[i] + b[i];
}

/* saxpy.comp: y[i] = a * x[i] + y[i] for i < n. */
static void th__saxpy(const tandem_test_host_dispatch_t *d) {
  float a = th__push_f32(d, 0);
  uint32_t n = th__push_u32(d, 4);
  const float *x = (const float *)d->bindings[0];
  float *y = (float *)d->bindings[1];
  TH_EACH_X(d, i) if (i < n && i < th__words(d, 0) && i < th__words(d, 1)) y[i] = a * x[i] + y[i];
}

/* scale_add.comp: c[i] = a[i] * scale + b[i] for i < n. */
static void th__scale_add(const tandem_test_host_dispatch_t *d) {
  float scale = th__push_f32(d, 0);
  uint32_t n = th__push_u32(d, 4);
  const float *a = (const float *)d->bindings[0], *b = (const float *)d->bindings[1];
  float *c = (float *)d->bindings[2];
  TH_EACH_X(d, i)
  if (i < n && i < th__words(d, 0) && i < th__words(d, 1) && i < th__words(d, 2))
    c[i] = a[i] * scale + b[i];
}

/* write_counts.comp: xyz = ((n + 255) / 256, 1, 1). */
static void th__write_counts(const tandem_test_host_dispatch_t *d) {
  uint32_t n;
  memcpy(&n, d->bindings[0], 4);
  uint32_t xyz[3] = {(n + 255u) / 256u, 1u, 1u};
  TH_EACH_X(d, i) {
    (void)i;
    memcpy(d->bindings[1], xyz, sizeof xyz);
  }
}

void th__host_twins_register(void) {
  static const struct {
    const uint32_t *spirv;
    const size_t *size;
    tandem_test_host_kernel_fn fn;
  } twins[] = {
      {tandem_spv_add_one_u32, &tandem_spv_add_one_u32_size, th__add_one_u32},
      {tandem_spv_copy_u32, &tandem_spv_copy_u32_size, th__copy_u32},
      {tandem_spv_writes_binding0, &tandem_spv_writes_binding0_size, th__writes_binding0},
      {tandem_spv_push16, &tandem_spv_push16_size, th__push16},
      {tandem_spv_three_bindings, &tandem_spv_three_bindings_size, th__three_bindings},
      {tandem_spv_saxpy, &tandem_spv_saxpy_size, th__saxpy},
      {tandem_spv_scale_add, &tandem_spv_scale_add_size, th__scale_add},
      {tandem_spv_write_counts, &tandem_spv_write_counts_size, th__write_counts},
  };
  for (size_t i = 0; i < sizeof twins / sizeof twins[0]; i++)
    TH_ASSERT_OK(
        tandem_test_host_kernel_register(twins[i].spirv, *twins[i].size, "main", twins[i].fn));
}
