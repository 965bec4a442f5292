/* SPDX-License-Identifier: MIT */
/*
 * test_hostile.c — regression tests for hostile or odd inputs that once
 * crashed, hung or were misreported (issue 11, and fuzz findings): each test
 * names the input and the exact answer the header promises. Label "vulkan".
 */
#include "harness.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads a whole file into a malloc'ed buffer. */
static void *read_all(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  assert_true(n > 0);
  rewind(f);
  void *data = malloc((size_t)n);
  assert_non_null(data);
  assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *out_size = (size_t)n;
  return data;
}

/* tandem_kernel_create on a fuzz_kernel input at |path| (its SPIR-V, after
 * the 16-byte header; no contract) named |name|: expects |status| with
 * |message| in the error, and no kernel. */
static void expect_refused(tandem_runtime_t *rt, const char *path, const char *name,
                           tandem_status_t status, const char *message) {
  size_t size;
  uint8_t *input = read_all(path, &size);
  assert_true(size > 16);
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = name,
                            .spirv = input + 16,
                            .spirv_size = size - 16};
  tandem_kernel_t *k = (tandem_kernel_t *)1;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), status, message);
  assert_null(k);
  free(input);
}

/* Issue 11, item 1: a module whose LocalSizeId x operand is an
 * OpSpecConstantOp passes spirv-val (vulkan1.3) but made SPIRV-Cross throw
 * "Bad cast" from C code that cannot catch it: SIGABRT. It must be refused
 * with INVALID_KERNEL naming the operand. The module is the fuzz seed
 * (fuzz/seeds/local_size_id_spec_op.spvasm), after its 16-byte header. */
static void test_local_size_id_spec_op_refused(void **state) {
  expect_refused(*state, TANDEM_TEST_FUZZ_CORPUS "/fuzz_kernel/local_size_id_spec_op", "lsid",
                 TANDEM_ERROR_INVALID_KERNEL, "LocalSizeId x");
}

/* A fuzz_kernel finding (fuzz/regressions/fuzz_kernel/
 * spec_constant_op_void_type): `OpSpecConstantOp %void IAdd %4 %uint_1`
 * passes Debian 12's spirv-val (vulkan1.3), and lavapipe dereferenced the
 * void type's NULL (SIGSEGV) while creating the pipeline. A constant's
 * result type must be a scalar, vector or composite type: refused with
 * INVALID_KERNEL naming the instruction. */
static void test_spec_constant_op_void_type_refused(void **state) {
  expect_refused(*state, TANDEM_TEST_FUZZ_REGRESSIONS "/fuzz_kernel/spec_constant_op_void_type",
                 "void_op", TANDEM_ERROR_INVALID_KERNEL, "OpSpecConstantOp %18");
}

/* Issue 11, item 2: a FIFO as spirv_path blocked forever in fopen (waiting
 * for a writer). It must be refused at once with IO, as a directory is. */
static void test_spirv_path_fifo_and_directory(void **state) {
  tandem_runtime_t *rt = *state;
  char dir[] = "/tmp/tandem_hostile_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fifo[64];
  snprintf(fifo, sizeof fifo, "%s/kernel.spv", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = "fifo",
                            .spirv_path = fifo};
  tandem_kernel_t *k = NULL;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_IO, "not a regular file");
  d.spirv_path = dir;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k), TANDEM_ERROR_IO, "not a regular file");
  assert_null(k);
  unlink(fifo);
  rmdir(dir);
}

/*------------------------------------------------------- the emulated NPU --*/

static tandem_runtime_t *npu_runtime(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "emulated";
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  tandem_runtime_t *rt = th_runtime_create(&o);
  TH_ASSERT_OK(tandem_runtime_open_npu(rt));
  return rt;
}

static tandem_status_t program(tandem_runtime_t *rt, const char *xclbin, const char *kernel,
                               uint32_t bindings, uint32_t scalars, tandem_npu_program_t **out) {
  tandem_binding_contract_t b[3] = {{4096, 4, TANDEM_ACCESS_READ_WRITE},
                                    {4096, 4, TANDEM_ACCESS_READ},
                                    {4096, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .program_path = xclbin,
                                 .kernel_name = kernel,
                                 .bindings = b,
                                 .binding_count = bindings,
                                 .scalar_count = scalars};
  return tandem_npu_program_create(rt, &d, out);
}

/* Issue 11, item 5: a directory as xclbin is IO (was INVALID_KERNEL). */
static void test_xclbin_directory_is_io(void **state) {
  (void)state;
  tandem_runtime_t *rt = npu_runtime();
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_STATUS_MSG(program(rt, "/tmp", "fail", 1, 0, &p), TANDEM_ERROR_IO,
                       "not a regular file");
  assert_null(p);
  th_runtime_destroy(rt);
}

/* Issue 11, item 5: an emulated xclbin names a library to dlopen; naming any
 * library but the emulator's own kernels must be refused (else a pipeline
 * file runs arbitrary code), unless the caller lists it in TANDEM_EMU_KERNELS. */
static void test_emulated_xclbin_foreign_library_refused(void **state) {
  (void)state;
  char dir[] = "/tmp/tandem_hostile_XXXXXX";
  assert_non_null(mkdtemp(dir));
  /* A copy of the real kernels library: loadable, but not the emulator's own. */
  char lib[96], xclbin[96], cmd[512];
  snprintf(lib, sizeof lib, "%s/libforeign.so", dir);
  snprintf(xclbin, sizeof xclbin, "%s/foreign.xclbin", dir);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", TANDEM_TEST_EMU_KERNELS_LIBRARY, lib);
  assert_int_equal(system(cmd), 0);
  FILE *f = fopen(xclbin, "w");
  assert_non_null(f);
  fprintf(f, "tandem-emulated-xclbin 1\nlibrary %s\n", lib);
  fclose(f);
  tandem_runtime_t *rt = npu_runtime();
  tandem_npu_program_t *p = NULL;
  unsetenv("TANDEM_EMU_KERNELS");
  TH_ASSERT_STATUS_MSG(program(rt, xclbin, "fail", 1, 0, &p), TANDEM_ERROR_INVALID_KERNEL,
                       "TANDEM_EMU_KERNELS");
  assert_null(p);
  /* Named explicitly by the caller, the same library loads. */
  char list[200];
  snprintf(list, sizeof list, "/nonexistent.so:%s", lib);
  assert_int_equal(setenv("TANDEM_EMU_KERNELS", list, 1), 0);
  TH_ASSERT_OK(program(rt, xclbin, "fail", 1, 0, &p));
  unsetenv("TANDEM_EMU_KERNELS");
  tandem_npu_program_release(p);
  th_runtime_destroy(rt);
  unlink(xclbin);
  unlink(lib);
  rmdir(dir);
}

/* Issue 11, item 6: the scalar count is checked at create (CONTRACT), both
 * ways; before, fewer failed the run with a bare INTERNAL and more surfaced
 * at prepare. scale_add_f32 takes 2 buffers and 3 scalars. */
static void test_npu_scalar_count_checked_at_create(void **state) {
  (void)state;
  tandem_runtime_t *rt = npu_runtime();
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_STATUS_MSG(program(rt, TANDEM_TEST_EMU_XCLBIN, "scale_add_f32", 2, 2, &p),
                       TANDEM_ERROR_CONTRACT, "takes more arguments");
  TH_ASSERT_STATUS_MSG(program(rt, TANDEM_TEST_EMU_XCLBIN, "scale_add_f32", 2, 4, &p),
                       TANDEM_ERROR_CONTRACT, "takes fewer");
  assert_null(p);
  TH_ASSERT_OK(program(rt, TANDEM_TEST_EMU_XCLBIN, "scale_add_f32", 2, 3, &p));
  tandem_npu_program_release(p);
  th_runtime_destroy(rt);
}

/* Issue 11, item 6: a failed NPU run's completion carries the NPU's own
 * text; a later read names how the writer ended (INTERNAL), not
 * FAILED_DEPENDENCY; and releasing the completion and the executable keeps
 * the caller's message. */
static void test_npu_failure_text_and_messages_kept(void **state) {
  (void)state;
  tandem_runtime_t *rt = npu_runtime();
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_OK(program(rt, TANDEM_TEST_EMU_XCLBIN, "fail", 1, 0, &p));
  tandem_buffer_t *x = th_buffer(rt, 4096, TANDEM_PLACEMENT_SHARED);
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t v = th_view(x, 0, 4096);
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, p, &v, 1, NULL, 0));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c));
  TH_ASSERT_STATUS_MSG(tandem_completion_wait(c), TANDEM_ERROR_INTERNAL, "the NPU said:");
  char before[512];
  snprintf(before, sizeof before, "%s", tandem_error_message());
  tandem_completion_release(c);
  assert_string_equal(tandem_error_message(), before);
  /* The poisoned buffer: the message names the writer's own failure. */
  TH_ASSERT_STATUS_MSG(tandem_exec_submit(e, &c), TANDEM_ERROR_FAILED_DEPENDENCY, "ERROR_INTERNAL");
  snprintf(before, sizeof before, "%s", tandem_error_message());
  tandem_exec_release(e);
  assert_string_equal(tandem_error_message(), before);
  tandem_graph_release(g);
  tandem_buffer_release(x);
  tandem_npu_program_release(p);
  th_runtime_destroy(rt);
}

/* Issue 11, error model: a completion handle is checked, not trusted. Once
 * released, or once its slot carries a later submission, every call refuses
 * it with INVALID_ARGUMENT instead of acting on the newer submission; a second
 * release changes nothing (the executable's references stay right: the
 * teardown finds no live bytes). Bytes that never were a handle are refused
 * the same way. */
static void test_stale_completion_refused(void **state) {
  tandem_runtime_t *rt = NULL;
  {
    tandem_runtime_options_t o;
    tandem_runtime_options_init(&o);
    o.graph_slots = 1; /* the second submission reuses the first one's slot */
    rt = th_runtime_create(&o);
  }
  (void)state;
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(b), 5u, TANDEM_LANE_AUTO));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_completion_t *c1 = NULL, *c2 = NULL, *c3 = NULL;
  TH_ASSERT_OK(tandem_exec_submit(e, &c1));
  TH_ASSERT_OK(tandem_completion_wait(c1));
  tandem_completion_release(c1);

  /* Released, slot still free. */
  TH_ASSERT_STATUS_MSG(tandem_completion_wait(c1), TANDEM_ERROR_INVALID_ARGUMENT,
                       "not a live completion");
  assert_false(tandem_completion_is_complete(c1));
  TH_ASSERT_STATUS_MSG(tandem_completion_cancel(c1), TANDEM_ERROR_INVALID_ARGUMENT,
                       "released already");
  tandem_completion_profile_t prof;
  tandem_completion_profile_init(&prof);
  TH_ASSERT_STATUS(tandem_completion_profile(c1, &prof, NULL, 0), TANDEM_ERROR_INVALID_ARGUMENT);
  tandem_completion_release(c1); /* twice: refused, nothing changes */
  TH_ASSERT_MESSAGE_HAS("not a live completion");

  /* The slot carries a new submission: the old handle still names nothing. */
  TH_ASSERT_OK(tandem_exec_submit(e, &c2));
  assert_ptr_not_equal(c1, c2);
  TH_ASSERT_STATUS(tandem_completion_wait_timeout(c1, 0), TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS_MSG(tandem_exec_submit_after(e, &c1, 1, &c3), TANDEM_ERROR_INVALID_ARGUMENT,
                       "after[0]");
  assert_null(c3);
  tandem_completion_release(c1); /* must not release c2's slot */
  TH_ASSERT_OK(tandem_completion_wait(c2));
  TH_ASSERT_OK(tandem_completion_profile(c2, &prof, NULL, 0));
  tandem_completion_release(c2);

  /* Never handles: small integers, a stack address, all ones. */
  int local = 0;
  tandem_completion_t *junk[] = {(tandem_completion_t *)(uintptr_t)1,
                                 (tandem_completion_t *)(uintptr_t)0x1234,
                                 (tandem_completion_t *)(void *)&local,
                                 (tandem_completion_t *)(uintptr_t)UINTPTR_MAX};
  for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
    TH_ASSERT_STATUS_MSG(tandem_completion_wait(junk[i]), TANDEM_ERROR_INVALID_ARGUMENT,
                         "never came from tandem_exec_submit");
    tandem_completion_release(junk[i]);
  }
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(b);
  th_runtime_destroy(rt); /* fails on live bytes: the exec must be gone */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_local_size_id_spec_op_refused, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_spec_constant_op_void_type_refused, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_spirv_path_fifo_and_directory, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test(test_xclbin_directory_is_io),
      cmocka_unit_test(test_emulated_xclbin_foreign_library_refused),
      cmocka_unit_test(test_npu_scalar_count_checked_at_create),
      cmocka_unit_test(test_npu_failure_text_and_messages_kept),
      cmocka_unit_test(test_stale_completion_refused),
  };
  return TH_RUN_GROUP(tests);
}
