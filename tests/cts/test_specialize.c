/* SPDX-License-Identifier: MIT */
/*
 * test_specialize.c — kernels written the way real projects write them:
 * workgroup sizes and tiles from specialization constants (including the
 * two-constants-one-SpecId pattern glslang emits), a shader that declares no
 * size at all, constants of every type, 16-bit storage, subgroup reductions,
 * a tiled matrix multiply; and what tandem must refuse (undeclared ids, type
 * mismatches, literal sizes, limits, features the device lacks, device
 * addresses, WRITE bindings the shader reads). Every run is checked against a
 * CPU reference, not only a status code.
 */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "tandem_test_shaders.h"

/* A desc for a test shader with no default workgroup count. */
#define desc_of th_kernel_desc

static tandem_spec_constant_t spec_u32(uint32_t id, uint32_t v) {
  tandem_spec_constant_t c = {.id = id, .type = TANDEM_SCALAR_UINT32};
  c.value.u32 = v;
  return c;
}

static tandem_spec_constant_t spec_f32(uint32_t id, float v) {
  tandem_spec_constant_t c = {.id = id, .type = TANDEM_SCALAR_FLOAT32};
  c.value.f32 = v;
  return c;
}

static tandem_device_info_t device_info(tandem_runtime_t *rt) {
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  return info;
}

/*---------------------------------------------------------------------------
 * spec_block: workgroup size and BLOCK_SIZE share SpecId 0
 *---------------------------------------------------------------------------*/

static const tandem_binding_contract_t block_bindings[2] = {{4096 * 4, 4, TANDEM_ACCESS_READ},
                                                            {4096 * 4, 4, TANDEM_ACCESS_WRITE}};

static tandem_kernel_desc_t block_desc(void) {
  return desc_of("spec_block", tandem_spv_spec_block, tandem_spv_spec_block_size, block_bindings, 2,
                 0);
}

/* Runs spec_block over 4096 floats and checks the block reversal with block
 * size |block| and scale |scale|. */
static void check_block_kernel(tandem_runtime_t *rt, tandem_kernel_t *k, uint32_t block,
                               float scale) {
  enum { N = 4096 };
  tandem_buffer_t *in = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  float *x = malloc(N * 4), *y = malloc(N * 4);
  th_rng_t rng = th_rng(block);
  th_fill_random_float(&rng, x, N);
  th_write(in, 0, x, N * 4);
  tandem_view_t v[2] = {tandem_buffer_whole(in), tandem_buffer_whole(out)};
  th_run_dispatch(rt, k, v, 2, NULL, 0, N / block, 1);
  th_read(out, 0, y, N * 4);
  for (uint32_t i = 0; i < N; i++) {
    uint32_t b = i / block, l = i % block;
    float want = x[b * block + (block - 1 - l)] * scale;
    if (y[i] != want)
      fail_msg("block %u: y[%u] = %g, expected %g (x[%u] * %g)", block, i, (double)y[i],
               (double)want, b * block + (block - 1 - l), (double)scale);
  }
  free(x), free(y);
  tandem_buffer_release(in);
  tandem_buffer_release(out);
}

static void test_two_constants_one_specid_refused(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_kernel_desc_t d = block_desc();
  tandem_kernel_t *k = NULL;
  /* SpecId 0 names the workgroup size (default 1) and BLOCK_SIZE (32). */
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "SpecId 0");
  TH_ASSERT_MESSAGE_HAS("= 1 ");
  TH_ASSERT_MESSAGE_HAS("= 32");
  TH_ASSERT_MESSAGE_HAS("BLOCK_SIZE");
  assert_null(k);
  /* Giving only SCALE does not resolve it. */
  tandem_spec_constant_t scale = spec_f32(1, 2.0f);
  d.spec_constants = &scale;
  d.spec_constant_count = 1;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "SpecId 0");
}

static void test_two_constants_given(void **state) {
  tandem_runtime_t *rt = *state;
  /* By the constant: both take 32. */
  tandem_spec_constant_t c[2] = {spec_u32(0, 32), spec_f32(1, 2.5f)};
  tandem_kernel_desc_t d = block_desc();
  d.spec_constants = c;
  d.spec_constant_count = 2;
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.local_size[0], 32);
  TH_ASSERT_U64_EQ(info.local_size[1], 1);
  assert_true(info.local_size_specialized);
  TH_ASSERT_U64_EQ(info.spec_constant_count, 3); /* size x, BLOCK_SIZE, SCALE */
  TH_ASSERT_U64_EQ(info.workgroups[0], 0);
  check_block_kernel(rt, k, 32, 2.5f);
  tandem_kernel_release(k);

  /* By local_size: SpecId 0 becomes 64 for both. */
  d = block_desc();
  d.local_size[0] = 64, d.local_size[1] = 1, d.local_size[2] = 1;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.local_size[0], 64);
  check_block_kernel(rt, k, 64, 1.0f);
  tandem_kernel_release(k);

  /* Both, agreeing. */
  d.spec_constants = c;
  d.spec_constant_count = 1;
  c[0] = spec_u32(0, 64);
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_release(k);
  /* Both, disagreeing. */
  c[0] = spec_u32(0, 32);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "local_size");
  assert_null(k);
}

static void test_spec_constant_errors(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_kernel_desc_t d = block_desc();
  tandem_kernel_t *k = NULL;
  tandem_spec_constant_t c[2] = {spec_u32(0, 32), spec_u32(7, 1)};
  d.spec_constants = c;
  d.spec_constant_count = 2;
  /* An id the shader does not declare: ignored, as Vulkan does; refused,
   * with the ids it does declare, in strict mode. */
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_release(k);
  d.flags = TANDEM_KERNEL_STRICT_SPEC_IDS;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT,
                       "declares no constant with that SpecId");
  TH_ASSERT_MESSAGE_HAS("it declares 0, 1");
  d.flags = 0;
  /* A float constant given as an integer, and the reverse. */
  c[1] = spec_u32(1, 3);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "float32");
  TH_ASSERT_MESSAGE_HAS("SCALE");
  c[0] = spec_f32(0, 32.0f);
  c[1] = spec_f32(1, 3.0f);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "uint32");
  /* A negative value for an unsigned constant. */
  c[0] = (tandem_spec_constant_t){.id = 0, .type = TANDEM_SCALAR_INT32, .value.i32 = -32};
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "cannot hold");
  /* A representable signed value is accepted for an unsigned constant. */
  c[0] = (tandem_spec_constant_t){.id = 0, .type = TANDEM_SCALAR_INT32, .value.i32 = 32};
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_release(k);
  /* Desc-level mistakes. */
  c[1] = spec_u32(0, 32);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "given twice");
  c[1] = (tandem_spec_constant_t){.id = 1, .type = (tandem_scalar_type_t)42};
  TH_ASSERT_STATUS(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT);
  d.spec_constants = NULL;
  TH_ASSERT_STATUS(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT);
  d.spec_constant_count = TANDEM_MAX_SPEC_CONSTANTS + 1;
  TH_ASSERT_STATUS(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT);
  d = block_desc();
  d.local_size[0] = 32; /* y and z left 0 */
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "local_size[1]");
  assert_null(k);
}

/*---------------------------------------------------------------------------
 * ids_only: no declared size, set at creation
 *---------------------------------------------------------------------------*/

static void test_local_size_given_at_creation(void **state) {
  tandem_runtime_t *rt = *state;
  enum { W = 32, H = 8, N = W * H };
  const tandem_binding_contract_t b[2] = {{N * 4, 4, TANDEM_ACCESS_READ},
                                          {N * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d =
      desc_of("ids_only", tandem_spv_ids_only, tandem_spv_ids_only_size, b, 2, 4);
  tandem_kernel_t *k = NULL;
  /* Not given: the defaults (1, 1, 1) are the size; nothing is ambiguous. */
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.local_size[0] * info.local_size[1] * info.local_size[2], 1);
  tandem_kernel_release(k);

  d.local_size[0] = 8, d.local_size[1] = 4, d.local_size[2] = 1;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.local_size[0], 8);
  TH_ASSERT_U64_EQ(info.local_size[1], 4);
  TH_ASSERT_U64_EQ(info.local_size[2], 1);

  tandem_buffer_t *in = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t x[N], y[N];
  th_rng_t rng = th_rng(3);
  for (uint32_t i = 0; i < N; i++) x[i] = th_rand_u32(&rng) % 100000;
  th_write(in, 0, x, sizeof x);
  tandem_view_t v[2] = {tandem_buffer_whole(in), tandem_buffer_whole(out)};
  uint32_t width = W;
  th_run_dispatch(rt, k, v, 2, &width, 4, W / 8, H / 4);
  th_read(out, 0, y, sizeof y);
  uint32_t want[N];
  for (uint32_t i = 0; i < N; i++) want[i] = x[i] * 2 + 8;
  TH_ASSERT_U32_ARRAY(y, want, N, "ids_only with local size 8x4");
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(out);
}

static void test_local_size_refused(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  tandem_kernel_t *k = NULL;
  /* saxpy fixes local_size_x = 256: a different size is CONTRACT, the same
   * size is fine. */
  const tandem_binding_contract_t sb[2] = {{4096, 4, TANDEM_ACCESS_READ},
                                           {4096, 4, TANDEM_ACCESS_READ_WRITE}};
  tandem_kernel_desc_t d = desc_of("saxpy", tandem_spv_saxpy, tandem_spv_saxpy_size, sb, 2, 8);
  d.local_size[0] = 128, d.local_size[1] = 1, d.local_size[2] = 1;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT,
                       "fixes local_size_x = 256");
  TH_ASSERT_MESSAGE_HAS("local_size_x_id");
  d.local_size[0] = 256;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_release(k);

  /* Device limits: one dimension, and the product. */
  const tandem_binding_contract_t b[2] = {{64, 4, TANDEM_ACCESS_READ},
                                          {64, 4, TANDEM_ACCESS_WRITE}};
  d = desc_of("ids_only", tandem_spv_ids_only, tandem_spv_ids_only_size, b, 2, 4);
  d.local_size[0] = dev.max_local_size[0] + 1, d.local_size[1] = 1, d.local_size[2] = 1;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "maxComputeWorkGroupSize");
  uint32_t side = 1;
  while ((uint64_t)side * side <= dev.max_local_invocations) side *= 2;
  if (side <= dev.max_local_size[0] && side <= dev.max_local_size[1]) {
    d.local_size[0] = side, d.local_size[1] = side;
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                         "maxComputeWorkGroupInvocations");
  }
  assert_null(k);
}

/*---------------------------------------------------------------------------
 * Every type tandem sets
 *---------------------------------------------------------------------------*/

static void test_spec_constant_types(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  const tandem_binding_contract_t b[1] = {{40, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d =
      desc_of("spec_types", tandem_spv_spec_types, tandem_spv_spec_types_size, b, 1, 0);
  d.workgroups[0] = d.workgroups[1] = d.workgroups[2] = 1;
  tandem_kernel_t *k = NULL;
  if ((dev.shader_features & (TANDEM_SHADER_INT64 | TANDEM_SHADER_FLOAT64)) !=
      (TANDEM_SHADER_INT64 | TANDEM_SHADER_FLOAT64)) {
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED, "64");
    skip(); /* the device has no 64-bit shader types: refusing was the test */
  }
  tandem_spec_constant_t c[7] = {
      {.id = 10, .type = TANDEM_SCALAR_INT32, .value.i32 = -123456},
      {.id = 11, .type = TANDEM_SCALAR_UINT32, .value.u32 = 4000000000u},
      {.id = 12, .type = TANDEM_SCALAR_FLOAT32, .value.f32 = -3.25f},
      {.id = 13, .type = TANDEM_SCALAR_BOOL, .value.b = true},
      {.id = 14, .type = TANDEM_SCALAR_INT64, .value.i64 = -5000000000ll},
      {.id = 15, .type = TANDEM_SCALAR_UINT64, .value.u64 = 0x123456789abcdef0ull},
      {.id = 16, .type = TANDEM_SCALAR_FLOAT64, .value.f64 = 1.0 / 3.0},
  };
  d.spec_constants = c;
  d.spec_constant_count = 7;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.spec_constant_count, 7);
  assert_true(info.shader_features & TANDEM_SHADER_INT64);
  assert_true(info.shader_features & TANDEM_SHADER_FLOAT64);
  tandem_buffer_t *out = th_buffer(rt, 40, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_view_t v = tandem_buffer_whole(out);
  th_run_dispatch(rt, k, &v, 1, NULL, 0, 1, 1);
  uint32_t o[10];
  th_read(out, 0, o, sizeof o);
  uint32_t want[10];
  want[0] = (uint32_t)c[0].value.i32;
  want[1] = c[1].value.u32;
  memcpy(&want[2], &c[2].value.f32, 4);
  want[3] = 1;
  uint64_t i64 = (uint64_t)c[4].value.i64, f64;
  want[4] = (uint32_t)i64, want[5] = (uint32_t)(i64 >> 32);
  want[6] = (uint32_t)c[5].value.u64, want[7] = (uint32_t)(c[5].value.u64 >> 32);
  memcpy(&f64, &c[6].value.f64, 8);
  want[8] = (uint32_t)f64, want[9] = (uint32_t)(f64 >> 32);
  TH_ASSERT_U32_ARRAY(o, want, 10, "spec constants read back");
  tandem_kernel_release(k);
  tandem_buffer_release(out);

  /* Width mismatches: a 32-bit value for a 64-bit constant, and the reverse. */
  tandem_spec_constant_t bad = {.id = 14, .type = TANDEM_SCALAR_INT32, .value.i32 = 1};
  d.spec_constants = &bad;
  d.spec_constant_count = 1;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "int64");
  bad = (tandem_spec_constant_t){.id = 10, .type = TANDEM_SCALAR_INT64, .value.i64 = 1};
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "int32");
  bad = (tandem_spec_constant_t){.id = 13, .type = TANDEM_SCALAR_UINT32, .value.u32 = 2};
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "VkBool32");
  bad = (tandem_spec_constant_t){.id = 10, .type = TANDEM_SCALAR_UINT32, .value.u32 = 0x80000000u};
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "cannot hold");
  assert_null(k);
}

/*---------------------------------------------------------------------------
 * 16-bit storage
 *---------------------------------------------------------------------------*/

static uint16_t f32_to_f16_exact(float f) {
  /* Only for values exactly representable as normal halves (or zero). */
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  if ((u & 0x7fffffffu) == 0) return (uint16_t)sign;
  int32_t exp = (int32_t)((u >> 23) & 0xff) - 127 + 15;
  return (uint16_t)(sign | ((uint32_t)exp << 10) | ((u >> 13) & 0x3ffu));
}

static void test_f16_storage(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  enum { N = 3000 };
  const tandem_binding_contract_t b[4] = {{N * 2, 4, TANDEM_ACCESS_READ},
                                          {N * 4, 4, TANDEM_ACCESS_READ},
                                          {4, 4, TANDEM_ACCESS_READ},
                                          {N * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d =
      desc_of("f16_storage", tandem_spv_f16_storage, tandem_spv_f16_storage_size, b, 4, 4);
  d.local_size[0] = 64, d.local_size[1] = 1, d.local_size[2] = 1;
  tandem_kernel_t *k = NULL;
  uint32_t need = TANDEM_SHADER_STORAGE_BUFFER_16BIT | TANDEM_SHADER_FLOAT16;
  if ((dev.shader_features & need) != need) {
    TH_ASSERT_STATUS(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED);
    TH_ASSERT_MESSAGE_HAS((dev.shader_features & TANDEM_SHADER_STORAGE_BUFFER_16BIT)
                              ? "float16"
                              : "storageBuffer16BitAccess");
    skip(); /* the device lacks 16-bit storage or float16: refusing was the test */
  }
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  assert_true(info.shader_features & TANDEM_SHADER_STORAGE_BUFFER_16BIT);
  TH_ASSERT_U64_EQ(info.local_size[0], 64);

  uint16_t *w16 = malloc(N * 2);
  float *w = malloc(N * 4), *x = malloc(N * 4), *y = malloc(N * 4);
  th_rng_t rng = th_rng(16);
  for (uint32_t i = 0; i < N; i++) {
    w[i] = (float)((int)(th_rand_u32(&rng) % 2048) - 1024) / 512.0f; /* exact in f16 */
    w16[i] = f32_to_f16_exact(w[i]);
    x[i] = th_rand_float(&rng);
  }
  float bias[2] = {0.5f, -1.25f};
  uint16_t b16[2] = {f32_to_f16_exact(bias[0]), f32_to_f16_exact(bias[1])};
  tandem_buffer_t *bw = th_buffer(rt, N * 2, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *bx = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *bb = th_buffer(rt, 256, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *by = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(bw, 0, w16, N * 2);
  th_write(bx, 0, x, N * 4);
  th_write(bb, 0, b16, 4);
  tandem_view_t v[4] = {tandem_buffer_whole(bw), tandem_buffer_whole(bx), th_view(bb, 0, 4),
                        tandem_buffer_whole(by)};
  uint32_t n = N;
  th_run_dispatch(rt, k, v, 4, &n, 4, (N + 63) / 64, 1);
  th_read(by, 0, y, N * 4);
  for (uint32_t i = 0; i < N; i++) {
    float want = w[i] * x[i] + bias[i % 2];
    if (fabsf(y[i] - want) > 1e-6f * (1.0f + fabsf(want)))
      fail_msg("f16 storage: y[%u] = %.9g, expected %.9g", i, (double)y[i], (double)want);
  }
  free(w16), free(w), free(x), free(y);
  tandem_buffer_release(bw);
  tandem_buffer_release(bx);
  tandem_buffer_release(bb);
  tandem_buffer_release(by);
  tandem_kernel_release(k);
}

/*---------------------------------------------------------------------------
 * Subgroups
 *---------------------------------------------------------------------------*/

static void test_subgroup_reduction(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  enum { BLOCK = 128, GROUPS = 40, N = BLOCK * GROUPS };
  const tandem_binding_contract_t b[2] = {{N * 4, 4, TANDEM_ACCESS_READ},
                                          {GROUPS * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d =
      desc_of("subgroup_sum", tandem_spv_subgroup_sum, tandem_spv_subgroup_sum_size, b, 2, 0);
  d.local_size[0] = BLOCK, d.local_size[1] = 1, d.local_size[2] = 1;
  tandem_kernel_t *k = NULL;
  uint32_t need = TANDEM_SHADER_SUBGROUP_BASIC | TANDEM_SHADER_SUBGROUP_ARITHMETIC;
  if ((dev.shader_features & need) != need) {
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED, "subgroup");
    skip();
  }
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  assert_true(info.shader_features & TANDEM_SHADER_SUBGROUP_ARITHMETIC);
  tandem_buffer_t *in = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out = th_buffer(rt, GROUPS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t *x = malloc(N * 4), sums[GROUPS], want[GROUPS];
  th_rng_t rng = th_rng(5);
  for (uint32_t i = 0; i < N; i++) x[i] = th_rand_u32(&rng) % 1000000;
  memset(want, 0, sizeof want);
  for (uint32_t i = 0; i < N; i++) want[i / BLOCK] += x[i];
  th_write(in, 0, x, N * 4);
  tandem_view_t v[2] = {tandem_buffer_whole(in), tandem_buffer_whole(out)};
  th_run_dispatch(rt, k, v, 2, NULL, 0, GROUPS, 1);
  th_read(out, 0, sums, sizeof sums);
  TH_ASSERT_U32_ARRAY(sums, want, GROUPS, "subgroup block sums");
  tandem_kernel_release(k);

  /* A required subgroup size: the smallest the device allows works; a size
   * outside its range or not a power of two is refused. */
  if (dev.shader_features & TANDEM_SHADER_SUBGROUP_SIZE_CONTROL) {
    d.required_subgroup_size = dev.min_subgroup_size;
    TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
    TH_ASSERT_OK(tandem_kernel_info(k, &info));
    TH_ASSERT_U64_EQ(info.required_subgroup_size, dev.min_subgroup_size);
    memset(sums, 0, sizeof sums);
    th_write(out, 0, sums, sizeof sums);
    th_run_dispatch(rt, k, v, 2, NULL, 0, GROUPS, 1);
    th_read(out, 0, sums, sizeof sums);
    TH_ASSERT_U32_ARRAY(sums, want, GROUPS, "subgroup block sums, required subgroup size");
    tandem_kernel_release(k);
    d.required_subgroup_size = dev.max_subgroup_size * 2;
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED, "outside");
  }
  d.required_subgroup_size = 3;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "power of two");
  free(x);
  tandem_buffer_release(in);
  tandem_buffer_release(out);
}

static void test_feature_the_device_lacks(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  enum { N = 256 };
  const tandem_binding_contract_t b[2] = {{N * 4, 4, TANDEM_ACCESS_READ},
                                          {N * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d = desc_of("subgroup_clustered", tandem_spv_subgroup_clustered,
                                   tandem_spv_subgroup_clustered_size, b, 2, 0);
  d.workgroups[0] = N / 64, d.workgroups[1] = 1, d.workgroups[2] = 1;
  tandem_kernel_t *k = NULL;
  if (!(dev.shader_features & TANDEM_SHADER_SUBGROUP_CLUSTERED)) {
    /* lavapipe: the feature is named, with where to look. */
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED,
                         "subgroup clustered");
    TH_ASSERT_MESSAGE_HAS("shader_features");
    assert_null(k);
    return;
  }
  /* A device that has it runs it correctly (clusters of 4 fit in any
   * subgroup size Vulkan allows). */
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_buffer_t *in = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t x[N], y[N], want[N];
  th_rng_t rng = th_rng(6);
  for (uint32_t i = 0; i < N; i++) x[i] = th_rand_u32(&rng) % 1000;
  for (uint32_t i = 0; i < N; i++) {
    uint32_t c = i & ~3u;
    want[i] = x[c] + x[c + 1] + x[c + 2] + x[c + 3];
  }
  th_write(in, 0, x, sizeof x);
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t v[2] = {tandem_buffer_whole(in), tandem_buffer_whole(out)};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, v, 2, NULL, 0));
  th_run_graph(g, 1);
  th_read(out, 0, y, sizeof y);
  TH_ASSERT_U32_ARRAY(y, want, N, "clustered sums");
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(out);
}

/*---------------------------------------------------------------------------
 * Tiled matrix multiply, tile from a spec constant
 *---------------------------------------------------------------------------*/

static void check_matmul(tandem_runtime_t *rt, tandem_kernel_t *k, uint32_t tile) {
  enum { M = 37, N = 29, K = 45 };
  float a[M * K], bm[K * N], c[M * N];
  th_rng_t rng = th_rng(tile);
  th_fill_random_float(&rng, a, M * K);
  th_fill_random_float(&rng, bm, K * N);
  tandem_buffer_t *ba = th_buffer(rt, sizeof a, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *bb = th_buffer(rt, sizeof bm, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *bc = th_buffer(rt, sizeof c, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(ba, 0, a, sizeof a);
  th_write(bb, 0, bm, sizeof bm);
  tandem_view_t v[3] = {tandem_buffer_whole(ba), tandem_buffer_whole(bb), tandem_buffer_whole(bc)};
  uint32_t push[3] = {M, N, K};
  th_run_dispatch(rt, k, v, 3, push, sizeof push, (N + tile - 1) / tile, (M + tile - 1) / tile);
  th_read(bc, 0, c, sizeof c);
  for (uint32_t i = 0; i < M; i++)
    for (uint32_t j = 0; j < N; j++) {
      double want = 0;
      for (uint32_t p = 0; p < K; p++) want += (double)a[i * K + p] * bm[p * N + j];
      if (fabs(c[i * N + j] - want) > 1e-4 * (1.0 + fabs(want)))
        fail_msg("tile %u: C[%u][%u] = %.7g, expected %.7g", tile, i, j, (double)c[i * N + j],
                 want);
    }
  tandem_buffer_release(ba);
  tandem_buffer_release(bb);
  tandem_buffer_release(bc);
}

static void test_tiled_matmul(void **state) {
  tandem_runtime_t *rt = *state;
  const tandem_binding_contract_t b[3] = {{37 * 45 * 4, 4, TANDEM_ACCESS_READ},
                                          {45 * 29 * 4, 4, TANDEM_ACCESS_READ},
                                          {37 * 29 * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d =
      desc_of("tiled_matmul", tandem_spv_tiled_matmul, tandem_spv_tiled_matmul_size, b, 3, 12);
  tandem_kernel_t *k = NULL;
  /* x, y and TILE share SpecId 0 (defaults 1, 1, 16): refused until given. */
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "TILE");
  /* The tile through the constant: both workgroup dimensions follow. */
  tandem_spec_constant_t tile = spec_u32(0, 16);
  d.spec_constants = &tile;
  d.spec_constant_count = 1;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.local_size[0], 16);
  TH_ASSERT_U64_EQ(info.local_size[1], 16);
  check_matmul(rt, k, 16);
  tandem_kernel_release(k);
  /* The tile through local_size. */
  d.spec_constants = NULL;
  d.spec_constant_count = 0;
  d.local_size[0] = 8, d.local_size[1] = 8, d.local_size[2] = 1;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  check_matmul(rt, k, 8);
  tandem_kernel_release(k);
  /* x and y name one SpecId: they cannot differ. */
  d.local_size[1] = 4;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "agree");
  assert_null(k);
}

/*---------------------------------------------------------------------------
 * What the contract cannot see, and the WRITE promise
 *---------------------------------------------------------------------------*/

static void test_refused_modules(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_kernel_t *k = NULL;
  const tandem_binding_contract_t b1[1] = {{64, 8, TANDEM_ACCESS_READ}};
  tandem_kernel_desc_t d = desc_of("device_address", tandem_spv_device_address,
                                   tandem_spv_device_address_size, b1, 1, 0);
  d.workgroups[0] = d.workgroups[1] = d.workgroups[2] = 1;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT,
                       "PhysicalStorageBufferAddresses");

  /* add_one_u32 reads and writes binding 0: WRITE is refused with the fix. */
  const tandem_binding_contract_t w[1] = {{1024, 4, TANDEM_ACCESS_WRITE}};
  d = desc_of("add_one_u32", tandem_spv_add_one_u32, tandem_spv_add_one_u32_size, w, 1, 4);
  d.workgroups[0] = d.workgroups[1] = d.workgroups[2] = 1;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT,
                       "contract says WRITE but the shader may read");
  TH_ASSERT_MESSAGE_HAS("writeonly");
  TH_ASSERT_MESSAGE_HAS("READ_WRITE");
  assert_null(k);
}

/* Workgroup memory sized by a spec-constant expression: reported exactly,
 * refused over the device's limit, and the kernel computes right. */
static void test_shared_memory_after_specialization(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  enum { ROWS = 4, GROUPS = 8, N = GROUPS * ROWS * 64 };
  const tandem_binding_contract_t b[2] = {{N * 4, 4, TANDEM_ACCESS_READ},
                                          {GROUPS * ROWS * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d =
      desc_of("shared_rows", tandem_spv_shared_rows, tandem_spv_shared_rows_size, b, 2, 0);
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k)); /* default ROWS = 4 */
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.shared_memory_bytes, 4 * 64 * 4);
  tandem_kernel_release(k);
  tandem_spec_constant_t rows = spec_u32(0, 16);
  d.spec_constants = &rows;
  d.spec_constant_count = 1;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.shared_memory_bytes, 16 * 64 * 4);
  tandem_kernel_release(k);
  /* One row over the limit. */
  rows.value.u32 = dev.max_shared_memory_bytes / 256 + 1;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "maxComputeSharedMemorySize");
  assert_null(k);
  /* Twice the limit (64 KiB on a 32 KiB device), with each host allocation
   * of the load failed in turn: never loaded. A failed allocation in the
   * workgroup-memory scan used to read as "size unknown" and skip the
   * limit check, so the kernel loaded. */
  rows.value.u32 = 2 * dev.max_shared_memory_bytes / 256;
  uint64_t allocations = 0;
  for (uint64_t at = 1;; at++) {
    tandem_test_fault_t f = {.fail_at = at, .kinds = TANDEM_TEST_FAULT_ALLOC};
    TH_ASSERT_OK(tandem_test_fault_set(&f));
    tandem_status_t s = tandem_kernel_create(rt, &d, &k);
    tandem_test_fault_report_t rep;
    TH_ASSERT_OK(tandem_test_fault_report(&rep));
    tandem_test_fault_set(NULL);
    if (s == TANDEM_OK) {
      tandem_kernel_release(k);
      fail_msg("a kernel with %u bytes of workgroup memory loaded on a %u-byte device with "
               "allocation %llu (%s) failed",
               rows.value.u32 * 256, dev.max_shared_memory_bytes, (unsigned long long)at,
               rep.first_site);
    }
    assert_null(k);
    if (rep.failed == 0) { /* past the last allocation: the limit refuses it */
      TH_ASSERT_STATUS_MSG(s, TANDEM_ERROR_INVALID_ARGUMENT, "maxComputeSharedMemorySize");
      break;
    }
    if (s != TANDEM_ERROR_OUT_OF_MEMORY && s != TANDEM_ERROR_INVALID_ARGUMENT)
      fail_msg("allocation %llu (%s) failed: kernel_create answered %s", (unsigned long long)at,
               rep.first_site, tandem_status_name(s));
    allocations = at;
  }
  assert_true(allocations > 0);
  /* And it computes what it says with ROWS = 4. */
  rows.value.u32 = ROWS;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  float *x = malloc(N * 4), out[GROUPS * ROWS];
  th_rng_t rng = th_rng(9);
  th_fill_random_float(&rng, x, N);
  tandem_buffer_t *in = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *ob = th_buffer(rt, sizeof out, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(in, 0, x, N * 4);
  tandem_view_t v[2] = {tandem_buffer_whole(in), tandem_buffer_whole(ob)};
  th_run_dispatch(rt, k, v, 2, NULL, 0, GROUPS, 1);
  th_read(ob, 0, out, sizeof out);
  for (uint32_t r = 0; r < GROUPS * ROWS; r++) {
    float want = 0;
    for (uint32_t i = 0; i < 64; i++) want += x[r * 64 + i];
    if (fabsf(out[r] - want) > 1e-4f * (1.0f + fabsf(want)))
      fail_msg("row %u: sum %.7g, expected %.7g", r, (double)out[r], (double)want);
  }
  free(x);
  tandem_buffer_release(in);
  tandem_buffer_release(ob);
  tandem_kernel_release(k);
}

static void test_device_reports_features(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  /* Vulkan's minimums, so the limits were read at all. */
  assert_true(dev.max_local_invocations >= 128);
  assert_true(dev.max_local_size[0] >= 128 && dev.max_local_size[2] >= 64);
  assert_true(dev.max_workgroups[0] >= 65535);
  assert_true(dev.max_shared_memory_bytes >= 16384);
  assert_true(dev.subgroup_size >= 1);
  assert_string_equal(tandem_shader_feature_name(TANDEM_SHADER_STORAGE_BUFFER_16BIT),
                      "storageBuffer16BitAccess");
  assert_string_equal(tandem_shader_feature_name((tandem_shader_feature_t)(1u << 31)), "unknown");
  assert_string_equal(tandem_scalar_type_name(TANDEM_SCALAR_FLOAT64), "float64");
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_STATUS(tandem_kernel_info(NULL, &info), TANDEM_ERROR_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_two_constants_one_specid_refused, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_two_constants_given, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_spec_constant_errors, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_local_size_given_at_creation, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_local_size_refused, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_spec_constant_types, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_f16_storage, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_subgroup_reduction, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_feature_the_device_lacks, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_tiled_matmul, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_refused_modules, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_shared_memory_after_specialization, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_device_reports_features, th_setup_gpu, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
