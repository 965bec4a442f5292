/* SPDX-License-Identifier: MIT */
/*
 * test_kernel.c — loading kernels: contracts checked against the SPIR-V
 * (binding count and numbering, descriptor types, push-constant size,
 * writability of READ bindings), malformed SPIR-V and descriptor fields,
 * loading from a file, and GLSL: compiled at creation from glsl_source (and
 * run, to prove the SPIR-V is the shader's), refused with the compile command
 * when handed over as SPIR-V. Running kernels otherwise is test_run.c's job.
 */
#include "harness.h"

#include <stdlib.h>
#include <unistd.h>

#include "tandem_test_shaders.h"

#define N_ELEMS 1024u
#define N_BYTES (N_ELEMS * 4u)
#define SENTINEL_KERNEL ((tandem_kernel_t *)(uintptr_t)0x5A5A5A5A)

static const tandem_binding_contract_t k_saxpy_bindings[3] = {
    {N_BYTES, 4, TANDEM_ACCESS_READ},
    {N_BYTES, 4, TANDEM_ACCESS_READ_WRITE},
    {N_BYTES, 4, TANDEM_ACCESS_READ_WRITE},
};

static tandem_kernel_desc_t saxpy_desc(void) {
  tandem_kernel_desc_t d;
  tandem_kernel_desc_init(&d);
  d.name = "saxpy";
  d.spirv = tandem_spv_saxpy;
  d.spirv_size = tandem_spv_saxpy_size;
  d.entry_point = "main";
  d.workgroups[0] = N_ELEMS / 256;
  d.workgroups[1] = 1;
  d.workgroups[2] = 1;
  d.bindings = k_saxpy_bindings;
  d.binding_count = 2;
  d.push_constant_bytes = 8;
  return d;
}

static tandem_kernel_desc_t shader_desc(const char *name, const uint32_t *spirv, size_t size,
                                        const tandem_binding_contract_t *bindings, uint32_t count,
                                        uint32_t push) {
  tandem_kernel_desc_t d = th_kernel_desc(name, spirv, size, bindings, count, push);
  d.workgroups[0] = d.workgroups[1] = d.workgroups[2] = 1;
  return d;
}

#define expect_ok(rt, d) expect_ok_at((rt), (d), __FILE__, __LINE__)
#define expect_fail(rt, d, code) expect_fail_at((rt), (d), (code), __FILE__, __LINE__)
#define expect_malformed(rt, d, what) expect_malformed_at((rt), (d), (what), __FILE__, __LINE__)

static void expect_ok_at(tandem_runtime_t *rt, const tandem_kernel_desc_t *d, const char *file,
                         int line) {
  tandem_kernel_t *k = NULL;
  th__check_ok(tandem_kernel_create(rt, d, &k), "tandem_kernel_create", file, line);
  assert_non_null(k);
  tandem_kernel_release(k);
}

static void expect_fail_at(tandem_runtime_t *rt, const tandem_kernel_desc_t *d,
                           tandem_status_t code, const char *file, int line) {
  tandem_kernel_t *k = SENTINEL_KERNEL;
  tandem_status_t s = tandem_kernel_create(rt, d, &k);
  th__check_status(s, code, "tandem_kernel_create", file, line);
  if (s == TANDEM_OK) tandem_kernel_release(k);
  assert_null(k);
}

/* Malformed input may be reported as INVALID_ARGUMENT (a descriptor field) or
 * INVALID_KERNEL (the code); anything else, or a crash, fails. */
static void expect_malformed_at(tandem_runtime_t *rt, const tandem_kernel_desc_t *d,
                                const char *what, const char *file, int line) {
  tandem_kernel_t *k = SENTINEL_KERNEL;
  tandem_status_t s = tandem_kernel_create(rt, d, &k);
  if (s != TANDEM_ERROR_INVALID_KERNEL && s != TANDEM_ERROR_INVALID_ARGUMENT) {
    if (s == TANDEM_OK) tandem_kernel_release(k);
    fail_msg("%s:%d: %s: tandem_kernel_create returned %s, expected INVALID_KERNEL or "
             "INVALID_ARGUMENT; message: %s",
             file, line, what, tandem_status_name(s), s ? tandem_error_message() : "(none)");
  }
  if (tandem_error_message()[0] == '\0') fail_msg("%s: empty error message", what);
  assert_null(k);
}

/*---------------------------------------------------------------------------*/

static void test_saxpy_loads(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_kernel_desc_t d = saxpy_desc();
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  assert_non_null(k);
  assert_string_equal(tandem_kernel_name(k), "saxpy");
  tandem_kernel_retain(k);
  tandem_kernel_release(k);
  assert_string_equal(tandem_kernel_name(k), "saxpy");
  tandem_kernel_release(k);

  /* Name defaults to the entry point; entry point defaults to "main". */
  d.name = NULL;
  d.entry_point = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  assert_string_equal(tandem_kernel_name(k), "main");
  tandem_kernel_release(k);

  /* Declaring READ_WRITE for a readonly binding is allowed (conservative). */
  tandem_binding_contract_t b[2] = {{N_BYTES, 4, TANDEM_ACCESS_READ_WRITE},
                                    {N_BYTES, 16, TANDEM_ACCESS_READ_WRITE}};
  d = saxpy_desc();
  d.bindings = b;
  expect_ok(rt, &d);
}

static void test_other_good_shaders_load(void **state) {
  tandem_runtime_t *rt = *state;
  const tandem_binding_contract_t three[3] = {{N_BYTES, 4, TANDEM_ACCESS_READ},
                                              {N_BYTES, 4, TANDEM_ACCESS_READ},
                                              {N_BYTES, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t d = shader_desc("three_bindings", tandem_spv_three_bindings,
                                       tandem_spv_three_bindings_size, three, 3, 0);
  expect_ok(rt, &d);
  const tandem_binding_contract_t one[1] = {{N_BYTES, 4, TANDEM_ACCESS_READ_WRITE}};
  d = shader_desc("push16", tandem_spv_push16, tandem_spv_push16_size, one, 1, 16);
  expect_ok(rt, &d);
  d = shader_desc("add_one_u32", tandem_spv_add_one_u32, tandem_spv_add_one_u32_size, one, 1, 4);
  expect_ok(rt, &d);
  const tandem_binding_contract_t copy[2] = {{N_BYTES, 4, TANDEM_ACCESS_READ},
                                             {N_BYTES, 4, TANDEM_ACCESS_WRITE}};
  d = shader_desc("copy_u32", tandem_spv_copy_u32, tandem_spv_copy_u32_size, copy, 2, 4);
  expect_ok(rt, &d);
  const tandem_binding_contract_t wb0[2] = {{N_BYTES, 4, TANDEM_ACCESS_WRITE},
                                            {N_BYTES, 4, TANDEM_ACCESS_READ}};
  d = shader_desc("writes_binding0", tandem_spv_writes_binding0, tandem_spv_writes_binding0_size,
                  wb0, 2, 4);
  expect_ok(rt, &d);
}

static void test_binding_count_mismatch(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_kernel_desc_t d = saxpy_desc();
  d.binding_count = 1;
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("saxpy");
  TH_ASSERT_MESSAGE_HAS("2"); /* the shader's count */
  d.binding_count = 3;
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("saxpy");
  TH_ASSERT_MESSAGE_HAS("3");
  d.binding_count = 0;
  d.bindings = NULL;
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("saxpy");
}

static void test_push_constant_mismatch(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_kernel_desc_t d = saxpy_desc();
  d.push_constant_bytes = 4;
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("4");
  TH_ASSERT_MESSAGE_HAS("8");
  TH_ASSERT_MESSAGE_HAS("saxpy");
  d.push_constant_bytes = 0;
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("8");
  d.push_constant_bytes = 16;
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("16");

  const tandem_binding_contract_t one[1] = {{N_BYTES, 4, TANDEM_ACCESS_READ_WRITE}};
  d = shader_desc("push16", tandem_spv_push16, tandem_spv_push16_size, one, 1, 12);
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("12");
  TH_ASSERT_MESSAGE_HAS("16");
  /* A kernel without push constants declared with some. */
  const tandem_binding_contract_t three[3] = {{N_BYTES, 4, TANDEM_ACCESS_READ},
                                              {N_BYTES, 4, TANDEM_ACCESS_READ},
                                              {N_BYTES, 4, TANDEM_ACCESS_WRITE}};
  d = shader_desc("three_bindings", tandem_spv_three_bindings, tandem_spv_three_bindings_size,
                  three, 3, 4);
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
}

static void test_writable_binding_declared_read(void **state) {
  tandem_runtime_t *rt = *state;
  const tandem_binding_contract_t wb0[2] = {{N_BYTES, 4, TANDEM_ACCESS_READ},
                                            {N_BYTES, 4, TANDEM_ACCESS_READ}};
  tandem_kernel_desc_t d = shader_desc("writes_binding0", tandem_spv_writes_binding0,
                                       tandem_spv_writes_binding0_size, wb0, 2, 4);
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("binding 0");
  TH_ASSERT_MESSAGE_HAS("writes_binding0");

  /* saxpy's y (binding 1) is writable too. */
  const tandem_binding_contract_t sx[2] = {{N_BYTES, 4, TANDEM_ACCESS_READ},
                                           {N_BYTES, 4, TANDEM_ACCESS_READ}};
  d = saxpy_desc();
  d.bindings = sx;
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("binding 1");
}

static void test_unusable_layouts(void **state) {
  tandem_runtime_t *rt = *state;
  const tandem_binding_contract_t b[3] = {{N_BYTES, 4, TANDEM_ACCESS_READ_WRITE},
                                          {N_BYTES, 4, TANDEM_ACCESS_READ_WRITE},
                                          {N_BYTES, 4, TANDEM_ACCESS_READ_WRITE}};
  /* Bindings 0 and 2: numbering must be 0..n-1. */
  tandem_kernel_desc_t d =
      shader_desc("gap_binding", tandem_spv_gap_binding, tandem_spv_gap_binding_size, b, 2, 0);
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("binding");
  d.binding_count = 3;
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("binding");
  /* A uniform buffer where a storage buffer must be. */
  d = shader_desc("uniform_binding", tandem_spv_uniform_binding, tandem_spv_uniform_binding_size, b,
                  2, 0);
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("binding 0");
  /* Descriptor set 1. */
  d = shader_desc("set1", tandem_spv_set1, tandem_spv_set1_size, b, 1, 0);
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  TH_ASSERT_MESSAGE_HAS("set");
}

/*---------------------------------------------------------------------------*/

static void test_corrupt_spirv(void **state) {
  tandem_runtime_t *rt = *state;
  const size_t size = tandem_spv_saxpy_size;
  uint32_t *copy = malloc(size > 1024 ? size : 1024); /* random trials use up to 205 words */
  assert_non_null(copy);
  tandem_kernel_desc_t d = saxpy_desc();
  d.spirv = copy;

  /* Truncated at several points (whole words). */
  const size_t cuts[] = {4, 20, (size / 8) * 4, (size / 4 - 1) * 4};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
    memcpy(copy, tandem_spv_saxpy, size);
    d.spirv_size = cuts[i];
    expect_malformed(rt, &d, "truncated");
  }
  /* Flipped magic, both byte orders of damage. */
  memcpy(copy, tandem_spv_saxpy, size);
  d.spirv_size = size;
  copy[0] ^= 0x00000100u;
  expect_malformed(rt, &d, "magic");
  copy[0] = 0x03022307u; /* byte-swapped magic */
  expect_malformed(rt, &d, "swapped magic");
  /* Size not a multiple of 4. */
  memcpy(copy, tandem_spv_saxpy, size);
  d.spirv_size = size - 1;
  expect_malformed(rt, &d, "size-1");
  d.spirv_size = size + 0 - 2;
  expect_malformed(rt, &d, "size-2");
  d.spirv_size = 3;
  expect_malformed(rt, &d, "size 3");
  d.spirv_size = 0;
  expect_malformed(rt, &d, "size 0");
  /* NULL code and no path. */
  d.spirv = NULL;
  d.spirv_size = size;
  d.spirv_path = NULL;
  TH_ASSERT_STATUS(tandem_kernel_create(rt, &d, &(tandem_kernel_t *){NULL}),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  d.spirv = copy;

  /* Random bytes, and a valid header followed by random words. */
  th_rng_t rng = th_rng(__LINE__);
  for (int trial = 0; trial < 16; ++trial) {
    size_t words = 5 + th_rand_u32(&rng) % 200;
    th_fill_random_u32(&rng, copy, words);
    d.spirv_size = words * 4;
    expect_malformed(rt, &d, "random bytes");
    memcpy(copy, tandem_spv_saxpy, 20); /* magic, version, generator, bound, schema */
    d.spirv_size = words * 4;
    expect_malformed(rt, &d, "valid header, random body");
  }
  /* The bound (word 3) made too small for the ids used. */
  memcpy(copy, tandem_spv_saxpy, size);
  copy[3] = 2;
  d.spirv_size = size;
  expect_malformed(rt, &d, "id bound");
  free(copy);
}

static void test_spirv_from_file(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_kernel_desc_t d = saxpy_desc();
  d.spirv = NULL;
  d.spirv_size = 0;
  d.spirv_path = "/nonexistent/tandem-test/saxpy.spv";
  expect_fail(rt, &d, TANDEM_ERROR_IO);
  TH_ASSERT_MESSAGE_HAS("/nonexistent/tandem-test/saxpy.spv");

  char path[] = "/tmp/tandem-test-saxpy-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, tandem_spv_saxpy, tandem_spv_saxpy_size),
                   (ssize_t)tandem_spv_saxpy_size);
  assert_int_equal(close(fd), 0);
  d.spirv_path = path;
  tandem_kernel_t *k = NULL;
  tandem_status_t s = tandem_kernel_create(rt, &d, &k);
  /* A corrupt file is INVALID_KERNEL, not IO. */
  char bad_path[] = "/tmp/tandem-test-bad-XXXXXX";
  int bad_fd = mkstemp(bad_path);
  assert_true(bad_fd >= 0);
  assert_int_equal(write(bad_fd, "not spirv at all", 16), 16);
  assert_int_equal(close(bad_fd), 0);
  tandem_kernel_desc_t bad = d;
  bad.spirv_path = bad_path;
  tandem_kernel_t *kb = SENTINEL_KERNEL;
  tandem_status_t sb = tandem_kernel_create(rt, &bad, &kb);
  char bad_msg[1024];
  snprintf(bad_msg, sizeof bad_msg, "%s", tandem_error_message());
  unlink(path);
  unlink(bad_path);
  TH_ASSERT_OK(s);
  assert_non_null(k);
  assert_string_equal(tandem_kernel_name(k), "saxpy");
  tandem_kernel_release(k);
  if (sb != TANDEM_ERROR_INVALID_KERNEL) {
    fail_msg("corrupt file: got %s, expected INVALID_KERNEL: %s", tandem_status_name(sb), bad_msg);
  }
  assert_null(kb);

  /* A directory is not a readable file. */
  d.spirv_path = "/tmp";
  expect_fail(rt, &d, TANDEM_ERROR_IO);
}

/* y[i] = y[i] * 3 + push.add, in GLSL: compiled at creation. */
static const char k_glsl_triple_add[] = "#version 450\n"
                                        "layout(local_size_x = 64) in;\n"
                                        "layout(set = 0, binding = 0) buffer Y { uint y[]; };\n"
                                        "layout(push_constant) uniform P { uint add; uint n; } p;\n"
                                        "void main() {\n"
                                        "  uint i = gl_GlobalInvocationID.x;\n"
                                        "  if (i < p.n) y[i] = y[i] * 3u + p.add;\n"
                                        "}\n";

static void test_glsl_source(void **state) {
  tandem_runtime_t *rt = *state;
  const tandem_binding_contract_t b[1] = {{N_BYTES, 4, TANDEM_ACCESS_READ_WRITE}};
  tandem_kernel_desc_t d = shader_desc("triple_add", NULL, 0, b, 1, 8);
  d.glsl_source = k_glsl_triple_add;
  d.workgroups[0] = N_ELEMS / 64;
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  assert_string_equal(tandem_kernel_name(k), "triple_add");
  tandem_buffer_t *buf = th_buffer(rt, N_BYTES, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t in[N_ELEMS], want[N_ELEMS], got[N_ELEMS];
  for (uint32_t i = 0; i < N_ELEMS; i++) in[i] = i * 7u + 1u, want[i] = in[i] * 3u + 5u;
  th_write(buf, 0, in, N_BYTES);
  tandem_graph_t *g = th_graph(rt);
  const uint32_t push[2] = {5u, N_ELEMS};
  tandem_view_t v = tandem_buffer_whole(buf);
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, &v, 1, push, sizeof push));
  th_run_graph(g, 1);
  th_read(buf, 0, got, N_BYTES);
  TH_ASSERT_U32_ARRAY(got, want, N_ELEMS, "GLSL kernel compiled at creation");
  tandem_graph_release(g);
  tandem_buffer_release(buf);
  tandem_kernel_release(k);

  /* The contract is still checked against what glslang made. */
  d.push_constant_bytes = 4;
  expect_fail(rt, &d, TANDEM_ERROR_CONTRACT);
  d.push_constant_bytes = 8;

  /* A compile error names the kernel and carries glslang's message. */
  d.glsl_source = "#version 450\nlayout(local_size_x = 64) in;\nvoid main() { undeclared = 1; }\n";
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_KERNEL);
  TH_ASSERT_MESSAGE_HAS("kernel 'triple_add': the GLSL source does not compile");
  TH_ASSERT_MESSAGE_HAS("undeclared");

  /* Exactly one source. */
  d.glsl_source = k_glsl_triple_add;
  d.spirv = tandem_spv_saxpy;
  d.spirv_size = tandem_spv_saxpy_size;
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_MESSAGE_HAS("glsl_source and spirv are both set");
}

/* GLSL where SPIR-V was expected (a .comp file as spirv_path, or its text as
 * spirv) is named as such, with the command that compiles it; it used to be
 * "SPIR-V size ... not a multiple of 4" or a bad magic number. */
static void test_glsl_given_as_spirv(void **state) {
  tandem_runtime_t *rt = *state;
  const tandem_binding_contract_t b[1] = {{N_BYTES, 4, TANDEM_ACCESS_READ_WRITE}};
  tandem_kernel_desc_t d = shader_desc("triple_add", NULL, 0, b, 1, 8);
  d.spirv = k_glsl_triple_add;
  d.spirv_size = sizeof k_glsl_triple_add - 1; /* not a multiple of 4 */
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_KERNEL);
  TH_ASSERT_MESSAGE_HAS("is GLSL source, not SPIR-V");
  TH_ASSERT_MESSAGE_HAS("glsl_source");
  TH_ASSERT_MESSAGE_HAS("glslangValidator -V");

  char path[] = "/tmp/tandem-test-glsl-XXXXXX.comp";
  int fd = mkstemps(path, 5);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, k_glsl_triple_add, sizeof k_glsl_triple_add - 1),
                   (ssize_t)(sizeof k_glsl_triple_add - 1));
  assert_int_equal(close(fd), 0);
  d.spirv = NULL;
  d.spirv_size = 0;
  d.spirv_path = path;
  tandem_kernel_t *k = SENTINEL_KERNEL;
  tandem_status_t s = tandem_kernel_create(rt, &d, &k);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tandem_error_message());
  unlink(path);
  TH_ASSERT_U64_EQ(s, TANDEM_ERROR_INVALID_KERNEL);
  assert_null(k);
  if (!strstr(msg, path) || !strstr(msg, "is GLSL source, not SPIR-V") ||
      !strstr(msg, "glslangValidator -V --target-env vulkan1.2 -o kernel.spv"))
    fail_msg("message does not name the file and the command: %s", msg);
}

static void test_bad_descriptor_fields(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_kernel_desc_t d;

  for (int axis = 0; axis < 3; ++axis) {
    d = saxpy_desc();
    d.workgroups[axis] = 0;
    expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
    TH_ASSERT_MESSAGE_HAS("workgroups");
  }

  d = saxpy_desc();
  d.entry_point = "no_such_entry";
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_KERNEL);
  TH_ASSERT_MESSAGE_HAS("no_such_entry");

  const uint64_t bad_alignments[] = {0, 3, 12, 4097};
  for (size_t i = 0; i < sizeof bad_alignments / sizeof bad_alignments[0]; ++i) {
    tandem_binding_contract_t b[2] = {{N_BYTES, 4, TANDEM_ACCESS_READ},
                                      {N_BYTES, bad_alignments[i], TANDEM_ACCESS_READ_WRITE}};
    d = saxpy_desc();
    d.bindings = b;
    expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
    TH_ASSERT_MESSAGE_HAS("alignment");
  }

  /* Bytes 0 is TANDEM_BYTES_VIEW (view-sized, test_first_hour.c); past the
   * largest buffer is refused. */
  tandem_binding_contract_t huge_bytes[2] = {{UINT64_MAX, 4, TANDEM_ACCESS_READ},
                                             {N_BYTES, 4, TANDEM_ACCESS_READ_WRITE}};
  d = saxpy_desc();
  d.bindings = huge_bytes;
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_MESSAGE_HAS("binding 0");
  TH_ASSERT_MESSAGE_HAS("TANDEM_BYTES_VIEW");

  const tandem_access_t bad_access[] = {(tandem_access_t)0, (tandem_access_t)4};
  for (size_t i = 0; i < 2; ++i) {
    tandem_binding_contract_t b[2] = {{N_BYTES, 4, TANDEM_ACCESS_READ},
                                      {N_BYTES, 4, bad_access[i]}};
    d = saxpy_desc();
    d.bindings = b;
    expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
    TH_ASSERT_MESSAGE_HAS("binding 1");
  }

  d = saxpy_desc();
  d.push_constant_bytes = TANDEM_MAX_PUSH_CONSTANT_BYTES + 1;
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_MESSAGE_HAS("129");
  d.push_constant_bytes = UINT32_MAX;
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);

  d = saxpy_desc();
  d.binding_count = TANDEM_MAX_BINDINGS + 1;
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
  d = saxpy_desc();
  d.bindings = NULL; /* count 2 */
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);

  TH_ASSERT_STATUS(tandem_kernel_create(NULL, &d, &(tandem_kernel_t *){NULL}),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  d = saxpy_desc();
  TH_ASSERT_STATUS(tandem_kernel_create(rt, &d, NULL), TANDEM_ERROR_INVALID_ARGUMENT);
}

static void test_workgroups_over_device_limit(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_kernel_desc_t d;
  /* Beyond the device's maxComputeWorkGroupCount (65535 for y and z on every
   * device we know; x up to 2^31-1): a dispatch of it is invalid Vulkan, so
   * the load must refuse it rather than let vkCmdDispatch break the rules. */
  d = saxpy_desc();
  d.workgroups[1] = 70000;
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_MESSAGE_HAS("workgroups");
  TH_ASSERT_MESSAGE_HAS("70000");
  d = saxpy_desc();
  d.workgroups[2] = 65536;
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_MESSAGE_HAS("workgroups");
  d = saxpy_desc();
  d.workgroups[0] = UINT32_MAX;
  expect_fail(rt, &d, TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_MESSAGE_HAS("workgroups");
}

static void test_descriptor_is_copied(void **state) {
  tandem_runtime_t *rt = *state;
  /* Everything the descriptor points at lives on the heap and is destroyed
   * right after the call; the kernel must not care. */
  uint32_t *spirv = malloc(tandem_spv_saxpy_size);
  tandem_binding_contract_t *b = malloc(2 * sizeof *b);
  char *name = strdup("my_saxpy");
  char *entry = strdup("main");
  assert_non_null(spirv);
  assert_non_null(b);
  memcpy(spirv, tandem_spv_saxpy, tandem_spv_saxpy_size);
  memcpy(b, k_saxpy_bindings, 2 * sizeof *b);
  tandem_kernel_desc_t d = saxpy_desc();
  d.spirv = spirv;
  d.bindings = b;
  d.name = name;
  d.entry_point = entry;
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  memset(spirv, 0xFF, tandem_spv_saxpy_size);
  memset(b, 0xFF, 2 * sizeof *b);
  memset(name, 'X', strlen(name));
  free(spirv);
  free(b);
  free(name);
  free(entry);
  assert_string_equal(tandem_kernel_name(k), "my_saxpy");
  tandem_kernel_release(k);
}

int main(void) {
#define GPU_TEST(f) cmocka_unit_test_setup_teardown(f, th_setup_gpu, th_teardown_gpu)
  const struct CMUnitTest tests[] = {
      GPU_TEST(test_saxpy_loads),
      GPU_TEST(test_other_good_shaders_load),
      GPU_TEST(test_binding_count_mismatch),
      GPU_TEST(test_push_constant_mismatch),
      GPU_TEST(test_writable_binding_declared_read),
      GPU_TEST(test_unusable_layouts),
      GPU_TEST(test_corrupt_spirv),
      GPU_TEST(test_spirv_from_file),
      GPU_TEST(test_glsl_source),
      GPU_TEST(test_glsl_given_as_spirv),
      GPU_TEST(test_bad_descriptor_fields),
      GPU_TEST(test_workgroups_over_device_limit),
      GPU_TEST(test_descriptor_is_copied),
  };
  return TH_RUN_GROUP(tests);
}
