/* SPDX-License-Identifier: MIT */
/*
 * test_peer_kernels.c — kernels exactly as other runtimes (ncnn, llama.cpp)
 * pass them, each in a small shader of its own shape: a module that declares
 * no local size run at 256 through TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE (wrong at
 * 1x1x1, right at 256); a module whose unused constant an optimiser stripped,
 * given every value anyway, with a bool set as a 4-byte 0/1 (VkBool32); one
 * output bound twice (scalar and vec4 views) with aliased_bindings; full
 * subgroups required; buffer robustness off. Reflection of every constant is
 * checked, and every run against a CPU reference.
 */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "tandem_test_shaders.h"

static tandem_device_info_t device_info(tandem_runtime_t *rt) {
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  return info;
}

static tandem_kernel_info_t kernel_info(const tandem_kernel_t *k) {
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  return info;
}

static void set_size(tandem_kernel_desc_t *d, uint32_t x) {
  d->local_size[0] = x, d->local_size[1] = 1, d->local_size[2] = 1;
}

/*---------------------------------------------------------------------------
 * A literal LocalSize, overridden
 *---------------------------------------------------------------------------*/

enum { BLOCK = 256, BLOCKS = 8, NLS = BLOCK * BLOCKS, SENTINEL = 0xdeadbeefu };

static const tandem_binding_contract_t nls_bindings[2] = {{NLS * 4, 4, TANDEM_ACCESS_READ},
                                                          {NLS * 4, 4, TANDEM_ACCESS_WRITE}};

static tandem_kernel_desc_t nls_desc(void) {
  return th_kernel_desc("no_local_size", tandem_spv_no_local_size, tandem_spv_no_local_size_size,
                        nls_bindings, 2, 0);
}

/* Runs no_local_size over NLS uints (output pre-filled with SENTINEL) into |y|. */
static void run_reverse(tandem_runtime_t *rt, tandem_kernel_t *k, const uint32_t *x, uint32_t *y) {
  tandem_buffer_t *in = th_buffer(rt, NLS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out = th_buffer(rt, NLS * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(in, 0, x, NLS * 4);
  for (uint32_t i = 0; i < NLS; i++) y[i] = SENTINEL;
  th_write(out, 0, y, NLS * 4);
  tandem_view_t v[2] = {tandem_buffer_whole(in), tandem_buffer_whole(out)};
  th_run_dispatch(rt, k, v, 2, NULL, 0, BLOCKS, 1);
  th_read(out, 0, y, NLS * 4);
  tandem_buffer_release(in);
  tandem_buffer_release(out);
}

static void test_literal_local_size_override(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  uint32_t *x = malloc(NLS * 4), *y = malloc(NLS * 4), *want = malloc(NLS * 4);
  th_rng_t rng = th_rng(21);
  for (uint32_t i = 0; i < NLS; i++) x[i] = th_rand_u32(&rng) % 1000000;
  for (uint32_t i = 0; i < NLS; i++) want[i] = x[(i / BLOCK) * BLOCK + (BLOCK - 1 - i % BLOCK)];

  /* As compiled: glslang wrote LocalSize 1 1 1, and that is what runs. Only
   * invocation 0 of each block exists, so the rest of every block is never
   * written: the silent wrong result ncnn's shaders give at 1x1x1. */
  tandem_kernel_desc_t d = nls_desc();
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info = kernel_info(k);
  TH_ASSERT_U64_EQ(info.local_size[0] * info.local_size[1] * info.local_size[2], 1);
  assert_false(info.local_size_overridden);
  run_reverse(rt, k, x, y);
  uint32_t untouched = 0;
  for (uint32_t i = 0; i < NLS; i++) untouched += i % BLOCK != 0 && y[i] == SENTINEL;
  TH_ASSERT_U64_EQ(untouched, NLS - BLOCKS);
  tandem_kernel_release(k);

  /* A different size without the flag: refused, naming the flag. */
  set_size(&d, BLOCK);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT,
                       "fixes local_size_x = 1");
  TH_ASSERT_MESSAGE_HAS("TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE");
  /* The flag without a size. */
  d = nls_desc();
  d.flags = TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "needs local_size");
  /* The flag past the device's limit: checked like any size. */
  set_size(&d, dev.max_local_size[0] + 1);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "maxComputeWorkGroupSize");
  assert_null(k);

  /* The flag with 256: the module is rewritten, the size reported, right. */
  set_size(&d, BLOCK);
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  info = kernel_info(k);
  TH_ASSERT_U64_EQ(info.local_size[0], BLOCK);
  TH_ASSERT_U64_EQ(info.local_size[1], 1);
  TH_ASSERT_U64_EQ(info.local_size[2], 1);
  assert_true(info.local_size_overridden);
  assert_false(info.local_size_specialized);
  TH_ASSERT_U64_EQ(info.flags, TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE);
  TH_ASSERT_U64_EQ(info.shared_memory_bytes, BLOCK * 4);
  run_reverse(rt, k, x, y);
  TH_ASSERT_U32_ARRAY(y, want, NLS, "no_local_size rewritten to 256");
  tandem_kernel_release(k);

  /* The flag with the module's own size: nothing to rewrite. */
  set_size(&d, 1);
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  assert_false(kernel_info(k).local_size_overridden);
  tandem_kernel_release(k);
  free(x), free(y), free(want);
}

/*---------------------------------------------------------------------------
 * A stripped constant, and VkBool32
 *---------------------------------------------------------------------------*/

static const tandem_binding_contract_t stripped_bindings[1] = {{16, 4, TANDEM_ACCESS_WRITE}};

static tandem_kernel_desc_t stripped_desc(const tandem_spec_constant_t *c, uint32_t n) {
  tandem_kernel_desc_t d = th_kernel_desc("spec_stripped", tandem_spv_spec_stripped,
                                          tandem_spv_spec_stripped_size, stripped_bindings, 1, 0);
  d.workgroups[0] = d.workgroups[1] = d.workgroups[2] = 1;
  d.spec_constants = c;
  d.spec_constant_count = n;
  return d;
}

static tandem_spec_constant_t spec_u32(uint32_t id, uint32_t v) {
  tandem_spec_constant_t c = {.id = id, .type = TANDEM_SCALAR_UINT32};
  c.value.u32 = v;
  return c;
}

/* Runs spec_stripped and checks o = {a, b, flag, bits of f}. */
static void check_stripped(tandem_runtime_t *rt, tandem_kernel_t *k, uint32_t a, uint32_t b,
                           uint32_t flag, float f) {
  tandem_buffer_t *out = th_buffer(rt, 16, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_view_t v = tandem_buffer_whole(out);
  th_run_dispatch(rt, k, &v, 1, NULL, 0, 1, 1);
  uint32_t o[4], want[4] = {a, b, flag, 0};
  memcpy(&want[3], &f, 4);
  th_read(out, 0, o, sizeof o);
  TH_ASSERT_U32_ARRAY(o, want, 4, "spec_stripped read back");
  tandem_buffer_release(out);
}

static tandem_spec_constant_info_t spec_info(const tandem_kernel_t *k, uint32_t index) {
  tandem_spec_constant_info_t info;
  tandem_spec_constant_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_spec_constant_info(k, index, &info));
  return info;
}

static void test_stripped_constant_and_vkbool32(void **state) {
  tandem_runtime_t *rt = *state;
  /* What llama.cpp passes: every value as uint32, the bool as 1, and a
   * value for SpecId 2, which the optimiser removed from the module. */
  tandem_spec_constant_t c[5] = {spec_u32(0, 11),
                                 spec_u32(1, 22),
                                 spec_u32(2, 33),
                                 spec_u32(3, 1),
                                 {.id = 4, .type = TANDEM_SCALAR_FLOAT32, .value.f32 = 1.5f}};
  tandem_kernel_desc_t d = stripped_desc(c, 5);
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info = kernel_info(k);
  TH_ASSERT_U64_EQ(info.spec_constant_count, 4); /* UNUSED is gone from the module */
  TH_ASSERT_U64_EQ(info.ignored_spec_count, 1);
  TH_ASSERT_U64_EQ(info.ignored_spec_ids[0], 2);
  check_stripped(rt, k, 11, 22, 1, 1.5f);

  /* Reflection: id, name, type, default and value of every constant, in
   * declaration order. */
  static const char *const names[4] = {"A", "B", "FLAG", "F"};
  static const uint32_t ids[4] = {0, 1, 3, 4};
  for (uint32_t i = 0; i < 4; i++) {
    tandem_spec_constant_info_t s = spec_info(k, i);
    TH_ASSERT_U64_EQ(s.id, ids[i]);
    assert_string_equal(s.name, names[i]);
    assert_true(s.given);
  }
  tandem_spec_constant_info_t a = spec_info(k, 0);
  TH_ASSERT_U64_EQ(a.type, TANDEM_SCALAR_UINT32);
  TH_ASSERT_U64_EQ(a.width, 32);
  assert_false(a.is_signed);
  assert_false(a.is_float);
  TH_ASSERT_U64_EQ(a.default_value.value.u32, 1);
  TH_ASSERT_U64_EQ(a.value.value.u32, 11);
  tandem_spec_constant_info_t flag = spec_info(k, 2);
  TH_ASSERT_U64_EQ(flag.type, TANDEM_SCALAR_BOOL);
  TH_ASSERT_U64_EQ(flag.width, 1);
  assert_false(flag.default_value.value.b);
  assert_true(flag.value.value.b);
  tandem_spec_constant_info_t f = spec_info(k, 3);
  TH_ASSERT_U64_EQ(f.type, TANDEM_SCALAR_FLOAT32);
  assert_true(f.is_float);
  assert_true(f.default_value.value.f32 == 0.5f);
  assert_true(f.value.value.f32 == 1.5f);
  tandem_spec_constant_info_t s;
  tandem_spec_constant_info_init(&s);
  TH_ASSERT_STATUS_MSG(tandem_kernel_spec_constant_info(k, 4, &s), TANDEM_ERROR_OUT_OF_RANGE,
                       "declares 4");
  s.struct_size = 0;
  TH_ASSERT_STATUS_MSG(tandem_kernel_spec_constant_info(k, 0, &s), TANDEM_ERROR_INVALID_ARGUMENT,
                       "sizeof(tandem_spec_constant_info_t)");
  tandem_kernel_release(k);

  /* Defaults where nothing is given; the bool as a 4-byte 0 (INT32 too). */
  d = stripped_desc(NULL, 0);
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  assert_false(spec_info(k, 0).given);
  TH_ASSERT_U64_EQ(spec_info(k, 0).value.value.u32, 1);
  TH_ASSERT_U64_EQ(kernel_info(k).ignored_spec_count, 0);
  check_stripped(rt, k, 1, 2, 0, 0.5f);
  tandem_kernel_release(k);
  tandem_spec_constant_t one[1] = {{.id = 3, .type = TANDEM_SCALAR_INT32, .value.i32 = 1}};
  d = stripped_desc(one, 1);
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  check_stripped(rt, k, 1, 2, 1, 0.5f);
  tandem_kernel_release(k);
  one[0] = spec_u32(3, 0);
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  check_stripped(rt, k, 1, 2, 0, 0.5f);
  tandem_kernel_release(k);

  /* Any other 4-byte value for the bool is refused, naming it. */
  one[0] = spec_u32(3, 2);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "'FLAG'");
  TH_ASSERT_MESSAGE_HAS("VkBool32");
  one[0] = (tandem_spec_constant_t){.id = 3, .type = TANDEM_SCALAR_INT32, .value.i32 = -1};
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "'FLAG'");
  /* An 8-byte value stays a type mismatch. */
  one[0] = (tandem_spec_constant_t){.id = 3, .type = TANDEM_SCALAR_UINT64, .value.u64 = 1};
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT, "bool");

  /* Strict mode refuses the stripped id, naming it and what exists. */
  d = stripped_desc(c, 5);
  d.flags = TANDEM_KERNEL_STRICT_SPEC_IDS;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_CONTRACT,
                       "specialization constant 2 of 'spec_stripped'");
  TH_ASSERT_MESSAGE_HAS("it declares 0, 1, 3, 4");
  TH_ASSERT_MESSAGE_HAS("TANDEM_KERNEL_STRICT_SPEC_IDS");
  /* An unknown flag bit. */
  d.flags = 1u << 20;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "tandem_kernel_flag_t");
  assert_null(k);
}

/*---------------------------------------------------------------------------
 * One output at two bindings (scalar and vec4)
 *---------------------------------------------------------------------------*/

enum { NV = 1000 }; /* vec4s */

static const tandem_binding_contract_t alias_bindings[3] = {{NV * 16, 16, TANDEM_ACCESS_WRITE},
                                                            {NV * 16, 16, TANDEM_ACCESS_WRITE},
                                                            {NV * 16, 16, TANDEM_ACCESS_READ}};

static tandem_kernel_desc_t alias_desc(uint32_t mask) {
  tandem_kernel_desc_t d = th_kernel_desc("alias_vec4", tandem_spv_alias_vec4,
                                          tandem_spv_alias_vec4_size, alias_bindings, 3, 4);
  set_size(&d, 64);
  d.aliased_bindings = mask;
  return d;
}

static void test_aliased_bindings(void **state) {
  tandem_runtime_t *rt = *state;
  float *x = malloc(NV * 16), *y = malloc(NV * 16);
  th_rng_t rng = th_rng(4);
  th_fill_random_float(&rng, x, NV * 4);
  tandem_buffer_t *in = th_buffer(rt, NV * 16, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out = th_buffer(rt, NV * 16, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *host = th_buffer(rt, NV * 16, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(in, 0, x, NV * 16);
  tandem_view_t v[3] = {tandem_buffer_whole(out), tandem_buffer_whole(out),
                        tandem_buffer_whole(in)};
  uint32_t n = NV;
  tandem_dispatch_desc_t dd = {.struct_size = sizeof(tandem_dispatch_desc_t),
                               .views = v,
                               .view_count = 3,
                               .push_constants = &n,
                               .push_constant_bytes = 4,
                               .workgroups = {(NV + 63) / 64, 1, 1}};

  /* The default: refused at record time, with the way out. */
  tandem_kernel_desc_t d = alias_desc(0);
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_graph_t *g = th_graph(rt);
  dd.kernel = k;
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch_node(g, &dd, NULL), TANDEM_ERROR_CONTRACT,
                       "bindings 0 and 1 of 'alias_vec4' overlap");
  TH_ASSERT_MESSAGE_HAS("aliased_bindings");
  tandem_graph_release(g);
  tandem_kernel_release(k);

  /* Masks that name fewer than two bindings, or one past the contract. */
  d = alias_desc(1u << 1);
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "names one binding");
  d = alias_desc((1u << 0) | (1u << 3));
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                       "past the 3");

  /* Bindings 0 and 1 may alias: a fill, the dispatch writing through both
   * views, a download; ordered by the union tracked as READ_WRITE. */
  d = alias_desc((1u << 0) | (1u << 1));
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  TH_ASSERT_U64_EQ(kernel_info(k).aliased_bindings, 3);
  dd.kernel = k;
  g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(out), 0x7fc00000u, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &dd, NULL));
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(out), tandem_buffer_whole(host),
                                     TANDEM_LANE_AUTO));
  /* The input overlapping the aliased output is still refused (binding 2
   * is not in the mask). */
  tandem_view_t bad[3] = {tandem_buffer_whole(out), tandem_buffer_whole(out),
                          tandem_buffer_whole(out)};
  tandem_dispatch_desc_t bd = dd;
  bd.views = bad;
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch_node(g, &bd, NULL), TANDEM_ERROR_CONTRACT,
                       "bindings 0 and 2");
  th_run_graph(g, 2);
  th_read(host, 0, y, NV * 16);
  for (uint32_t i = 0; i < NV * 4; i++) {
    float want = x[i] * ((i / 4) % 2 == 0 ? 2.0f : 3.0f);
    if (y[i] != want)
      fail_msg("alias_vec4: y[%u] = %g, expected %g (vec4 %u via the %s view)", i, (double)y[i],
               (double)want, i / 4, (i / 4) % 2 == 0 ? "vec4" : "scalar");
  }
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(out);
  tandem_buffer_release(host);
  free(x), free(y);
}

/*---------------------------------------------------------------------------
 * Pipeline flags
 *---------------------------------------------------------------------------*/

static void test_full_subgroups(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  uint32_t sg = dev.subgroup_size;
  uint32_t local = sg * 4 <= dev.max_local_invocations ? sg * 4 : sg;
  enum { GROUPS = 4 };
  uint32_t n = local * GROUPS;
  const tandem_binding_contract_t b[1] = {{(uint64_t)n * 8, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d = th_kernel_desc("full_subgroups", tandem_spv_full_subgroups,
                                          tandem_spv_full_subgroups_size, b, 1, 0);
  set_size(&d, local);
  d.flags = TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS;
  tandem_kernel_t *k = NULL;
  uint32_t need = TANDEM_SHADER_SUBGROUP_BASIC | TANDEM_SHADER_SUBGROUP_ARITHMETIC;
  if ((dev.shader_features & need) != need) skip(); /* the shader itself cannot run */
  if (!(dev.shader_features & TANDEM_SHADER_FULL_SUBGROUPS)) {
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED,
                         "computeFullSubgroups");
    skip(); /* the device lacks the feature: refusing was the test */
  }
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  TH_ASSERT_U64_EQ(kernel_info(k).flags, TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS);
  tandem_buffer_t *out = th_buffer(rt, (uint64_t)n * 8, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_view_t v = tandem_buffer_whole(out);
  th_run_dispatch(rt, k, &v, 1, NULL, 0, GROUPS, 1);
  uint32_t *o = malloc((size_t)n * 8), *want = malloc((size_t)n * 8);
  th_read(out, 0, o, (uint64_t)n * 8);
  /* A SPIR-V 1.5 module without a required size runs at subgroupSize, and
   * every subgroup is full. */
  for (uint32_t i = 0; i < n; i++) want[2 * i] = want[2 * i + 1] = sg;
  TH_ASSERT_U32_ARRAY(o, want, 2 * n, "active invocations and size of each subgroup");
  tandem_kernel_release(k);
  /* With a required size too. */
  if (dev.shader_features & TANDEM_SHADER_SUBGROUP_SIZE_CONTROL) {
    d.required_subgroup_size = dev.min_subgroup_size;
    set_size(&d, dev.min_subgroup_size * 2);
    TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
    th_run_dispatch(rt, k, &v, 1, NULL, 0, 1, 1);
    th_read(out, 0, o, (uint64_t)dev.min_subgroup_size * 2 * 8);
    for (uint32_t i = 0; i < dev.min_subgroup_size * 2; i++)
      want[2 * i] = want[2 * i + 1] = dev.min_subgroup_size;
    TH_ASSERT_U32_ARRAY(o, want, dev.min_subgroup_size * 4, "full subgroups of the required size");
    tandem_kernel_release(k);
    d.required_subgroup_size = 0;
  }
  /* A workgroup that full subgroups cannot tile. */
  if (sg > 1) {
    set_size(&d, sg + sg / 2);
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                         "multiple of the device's subgroup_size");
    assert_null(k);
  }
  free(o), free(want);
  tandem_buffer_release(out);
}

static void test_disable_robustness(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_device_info_t dev = device_info(rt);
  tandem_kernel_desc_t d = stripped_desc(NULL, 0);
  d.flags = TANDEM_KERNEL_DISABLE_ROBUSTNESS;
  tandem_kernel_t *k = NULL;
  if (!(dev.features & TANDEM_GPU_PIPELINE_ROBUSTNESS)) {
    /* lavapipe 22.3: no VK_EXT_pipeline_robustness; named in the refusal. */
    TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_UNSUPPORTED,
                         "VK_EXT_pipeline_robustness");
    assert_null(k);
    skip();
  }
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  TH_ASSERT_U64_EQ(kernel_info(k).flags, TANDEM_KERNEL_DISABLE_ROBUSTNESS);
  check_stripped(rt, k, 1, 2, 0, 0.5f);
  tandem_kernel_release(k);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_literal_local_size_override, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_stripped_constant_and_vkbool32, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_aliased_bindings, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_full_subgroups, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_disable_robustness, th_setup_gpu, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
