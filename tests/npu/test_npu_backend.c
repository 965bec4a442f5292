/* SPDX-License-Identifier: MIT */
/*
 * test_npu_backend.c — the XRT backend (backends/xrt/xrt_npu.c) through the
 * vtable core/ drives it by (core/npu_backend.h), on the emulated NPU, with no
 * GPU: the promises each slot makes that the public API cannot show on
 * lavapipe (no dma-buf import, so core never exports there). Links the
 * library's objects (the backends are internal), like test_registry.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/npu_backend.h"
#include "tandem/tandem_xrt.h"
#include "internal/emu_dpu.h"

/* Opens the emulated NPU as a runtime would: its options (the profile,
 * an XRT extension) read by options_in, then open. */
static tandem__npu_t *open_profile(tandem_npu_profile_t profile) {
  tandem_xrt_runtime_options_t xo;
  tandem_xrt_runtime_options_init(&xo);
  xo.profile = profile;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.next = &xo;
  o.npu_backend = "emulated";
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  void *state = NULL;
  tandem_status_t s = tandem_emu_npu_backend.options_in(&o, &state);
  if (s != TANDEM_OK) fail_msg("reading the NPU options: %s", tandem_error_message());
  tandem__npu_t *npu = NULL;
  s = tandem_emu_npu_backend.open(&o, state, &npu);
  tandem_emu_npu_backend.options_free(state);
  if (s != TANDEM_OK) fail_msg("opening the emulated NPU: %s", tandem_error_message());
  return npu;
}

/* The profile in use, as tandem_runtime_npu_info's XRT extension says. */
static tandem_npu_profile_t profile_of(tandem__npu_t *npu) {
  tandem_xrt_npu_info_t xi;
  tandem_xrt_npu_info_init(&xi);
  assert_int_equal(npu->vtable->info_extensions(npu, &xi), TANDEM_OK);
  return xi.profile;
}

static tandem__npu_t *open_emulated(void) { return open_profile(TANDEM_NPU_PROFILE_AUTO); }

/* TANDEM_EMU_MODE=plain runs this suite against the emulator's FPGA-style mode. */
static bool emu_plain(void) {
  const char *m = getenv("TANDEM_EMU_MODE");
  return m && !strcmp(m, "plain");
}

static const tandem_binding_contract_t k_rw[4] = {
    {.bytes = 64, .alignment = 4, .access = TANDEM_ACCESS_READ},
    {.bytes = 64, .alignment = 4, .access = TANDEM_ACCESS_READ},
    {.bytes = 64, .alignment = 4, .access = TANDEM_ACCESS_WRITE},
};

/* add_i32 through the vtable: C = A + B over 16 ints, checked on the CPU. */
static void run_add(tandem__npu_t *npu, const char *kernel) {
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.program_path = TANDEM_TEST_EMU_XCLBIN;
  d.kernel_name = kernel;
  d.bindings = k_rw;
  d.binding_count = 3;
  d.scalar_count = 1;
  void *prog = NULL;
  assert_int_equal(npu->vtable->program_create(npu, &d, kernel, &prog), TANDEM_OK);
  void *bo[3];
  int32_t *h[3];
  for (int i = 0; i < 3; i++)
    assert_int_equal(npu->vtable->bo_create(npu, 4096, &bo[i], (void **)&h[i]), TANDEM_OK);
  for (int i = 0; i < 16; i++) {
    h[0][i] = i * 7 - 3;
    h[1][i] = 1000 - i;
  }
  assert_int_equal(npu->vtable->bo_sync(npu, bo[0], true, 0, 64), TANDEM_OK);
  assert_int_equal(npu->vtable->bo_sync(npu, bo[1], true, 0, 64), TANDEM_OK);
  uint32_t n = 16;
  void *run = NULL;
  assert_int_equal(npu->vtable->run_create(npu, prog, bo, 3, &n, 1, &run), TANDEM_OK);
  assert_int_equal(npu->vtable->run_execute(npu, run, 10000), TANDEM_OK);
  assert_int_equal(npu->vtable->bo_sync(npu, bo[2], false, 0, 64), TANDEM_OK);
  for (int i = 0; i < 16; i++) assert_int_equal(h[2][i], (i * 7 - 3) + (1000 - i));
  npu->vtable->run_destroy(npu, run);
  for (int i = 0; i < 3; i++) npu->vtable->bo_destroy(npu, bo[i]);
  npu->vtable->program_destroy(npu, prog);
}

/* The profile follows the device: XDNA on the emulator's XDNA mode (HOST_ONLY
 * data buffers, which its plugin rules accept), PLAIN on its PLAIN mode. */
static void test_profile_follows_device(void **state) {
  (void)state;
  tandem__npu_t *npu = open_emulated();
  assert_int_equal(profile_of(npu),
                   emu_plain() ? TANDEM_NPU_PROFILE_PLAIN : TANDEM_NPU_PROFILE_XDNA);
  run_add(npu, "add_i32");
  npu->vtable->destroy(npu);
}

/* An XDNA device refuses buffers without flags (amdxdna: "none flag"); the
 * PLAIN profile forced onto one fails with a message naming the fix. */
static void test_plain_profile_on_xdna(void **state) {
  (void)state;
  if (emu_plain()) skip();
  tandem__npu_t *npu = open_profile(TANDEM_NPU_PROFILE_PLAIN);
  assert_int_equal(profile_of(npu), TANDEM_NPU_PROFILE_PLAIN);
  void *bo = NULL, *host = NULL;
  assert_int_equal(npu->vtable->bo_create(npu, 4096, &bo, &host), TANDEM_ERROR_OUT_OF_MEMORY);
  assert_non_null(strstr(tandem_error_message(), "TANDEM_NPU_PROFILE=xdna"));
  npu->vtable->destroy(npu);
  npu = open_profile(TANDEM_NPU_PROFILE_XDNA); /* the override works both ways */
  assert_int_equal(profile_of(npu), TANDEM_NPU_PROFILE_XDNA);
  run_add(npu, "add_i32");
  npu->vtable->destroy(npu);
}

/* A binding whose kernel argument is in another bank than tandem's data
 * buffers is CONTRACT at program creation, naming the argument and both
 * banks (XRT would silently clone the buffer into the other bank). */
static void test_bank_mismatch(void **state) {
  (void)state;
  tandem__npu_t *npu = open_emulated();
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.program_path = TANDEM_TEST_EMU_XCLBIN;
  d.kernel_name = "add_i32_c_bank2";
  d.bindings = k_rw;
  d.binding_count = 3;
  d.scalar_count = 1;
  void *prog = NULL;
  assert_int_equal(npu->vtable->program_create(npu, &d, "banks", &prog), TANDEM_ERROR_CONTRACT);
  const char *m = tandem_error_message();
  assert_non_null(strstr(m, "binding 2"));
  assert_non_null(strstr(m, "kernel argument 2, which is connected to bank 2"));
  /* XRT's group id carries the hardware context's slot (the first context
   * of a fresh device has handle 1 on XDNA); the message names both. */
  assert_non_null(strstr(m, emu_plain() ? "(group id 0x2: hardware context slot 0, bank 2)"
                                        : "(group id 0x10002: hardware context slot 1, bank 2)"));
  assert_non_null(strstr(m, "in bank 0"));
  assert_null(prog);
  npu->vtable->destroy(npu);
}

/* bo_export's fd is the caller's to close (core closes it after the Vulkan
 * import); XRT's own exported fd belongs to the buffer. Closing what the
 * backend returned and then freeing the buffer must leave the buffer's fd
 * alone: the emulator stops the process when a buffer's fd was closed by
 * someone else (a double close with real XRT). */
static void test_export_fd_is_a_duplicate(void **state) {
  (void)state;
  tandem__npu_t *npu = open_emulated();
  void *bo = NULL, *host = NULL;
  assert_int_equal(npu->vtable->bo_create(npu, 4096, &bo, &host), TANDEM_OK);
  for (int i = 0; i < 3; i++) { /* each export a new fd the caller owns */
    int fd = -1;
    bool is_dmabuf = true;
    assert_int_equal(npu->vtable->bo_export(npu, bo, &fd, &is_dmabuf), TANDEM_OK);
    assert_true(fd >= 0);
    assert_false(is_dmabuf); /* the emulated NPU exports a memfd */
    assert_int_equal(close(fd), 0);
  }
  npu->vtable->bo_destroy(npu, bo); /* the emulator checks its own fd here */
  npu->vtable->destroy(npu);
}

/* Runs |kernel| with |abi| over |nbo| 4096-byte buffers (inputs: bo0[i] =
 * 3i - 50, bo1[i] = 7 - 2i, the rest zero) and |scalars|; the buffers'
 * host sides come back in |h| after a sync from the device. */
static tandem_status_t run_abi(tandem__npu_t *npu, const char *kernel, tandem_npu_abi_t abi,
                               const uint32_t *instr, size_t instr_words,
                               const tandem_npu_scalar_type_t *types, uint32_t scalar_count,
                               const uint32_t *scalars, uint32_t words, uint32_t nbo,
                               int32_t *h[5]) {
  static const tandem_binding_contract_t rw[5] = {
      {.bytes = 64, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE},
      {.bytes = 64, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE},
      {.bytes = 64, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE},
      {.bytes = 64, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE},
      {.bytes = 64, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE},
  };
  tandem_xrt_program_desc_t x;
  tandem_xrt_program_desc_init(&x);
  x.abi = abi;
  x.instructions = instr;
  x.instruction_bytes = instr_words * 4;
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.next = &x;
  d.program_path = TANDEM_TEST_EMU_XCLBIN;
  d.kernel_name = kernel;
  d.bindings = rw;
  d.binding_count = nbo;
  d.scalar_count = scalar_count;
  d.scalar_types = types;
  void *prog = NULL;
  tandem_status_t s = npu->vtable->program_create(npu, &d, kernel, &prog);
  if (s != TANDEM_OK) return s;
  void *bo[5] = {0};
  for (uint32_t i = 0; i < nbo; i++) {
    assert_int_equal(npu->vtable->bo_create(npu, 4096, &bo[i], (void **)&h[i]), TANDEM_OK);
    for (int k = 0; k < 1024; k++) h[i][k] = i == 0 ? 3 * k - 50 : i == 1 ? 7 - 2 * k : 0;
    assert_int_equal(npu->vtable->bo_sync(npu, bo[i], true, 0, 4096), TANDEM_OK);
  }
  void *run = NULL;
  assert_int_equal(npu->vtable->run_create(npu, prog, bo, nbo, scalars, words, &run), TANDEM_OK);
  s = npu->vtable->run_execute(npu, run, 10000);
  for (uint32_t i = 0; i < nbo; i++)
    assert_int_equal(npu->vtable->bo_sync(npu, bo[i], false, 0, 4096), TANDEM_OK);
  npu->vtable->run_destroy(npu, run);
  /* The host sides stay readable: the test frees them with free_bos. */
  for (uint32_t i = 0; i < nbo; i++) {
    int32_t *copy = malloc(4096);
    memcpy(copy, h[i], 4096);
    npu->vtable->bo_destroy(npu, bo[i]);
    h[i] = copy;
  }
  npu->vtable->program_destroy(npu, prog);
  return s;
}

static void free_bos(int32_t *h[5], uint32_t n) {
  for (uint32_t i = 0; i < n; i++) free(h[i]);
}

/* The DPU ABI (mlir-aie / IRON): opcode 3, the instruction buffer (CACHEABLE,
 * in the instruction argument's bank 1), its word count, data from argument 3;
 * bo4 stays unset. The emulated kernel executes the stream, so the result
 * shows the stream arrived whole and synced. */
static void test_abi_dpu(void **state) {
  (void)state;
  if (emu_plain()) skip(); /* FPGA-style XRT sets every argument */
  tandem__npu_t *npu = open_emulated();
  const uint32_t instr[12] = {TANDEM_EMU_DPU_MAGIC,
                              2,
                              TANDEM_EMU_DPU_ADD_I32,
                              2,
                              0,
                              1,
                              1000,
                              TANDEM_EMU_DPU_ADDI_I32,
                              3,
                              2,
                              (uint32_t)-9,
                              1000};
  int32_t *h[5];
  assert_int_equal(
      run_abi(npu, "dpu_vector", TANDEM_NPU_ABI_DPU, instr, 12, NULL, 0, NULL, 0, 4, h), TANDEM_OK);
  for (int k = 0; k < 1024; k++) {
    int32_t sum = k < 1000 ? (3 * k - 50) + (7 - 2 * k) : 0;
    assert_int_equal(h[2][k], sum);
    assert_int_equal(h[3][k], k < 1000 ? sum - 9 : 0);
  }
  free_bos(h, 4);
  /* The same kernel under the PLAIN ABI: argument 0 is the opcode, not the
   * instruction buffer; and a DPU program against a PLAIN kernel. */
  assert_int_equal(run_abi(npu, "dpu_vector", TANDEM_NPU_ABI_PLAIN, instr, 12, NULL, 0, NULL, 0, 4,
                           h),
                   TANDEM_ERROR_CONTRACT);
  assert_non_null(strstr(tandem_error_message(),
                         "kernel argument 0 of 'dpu_vector' should be the instruction buffer, a "
                         "buffer, but it is a 64-bit scalar"));
  assert_int_equal(run_abi(npu, "add_i32", TANDEM_NPU_ABI_DPU, instr, 12, NULL, 0, NULL, 0, 3, h),
                   TANDEM_ERROR_CONTRACT);
  assert_non_null(
      strstr(tandem_error_message(), "kernel argument 0 of 'add_i32' should be the opcode"));
  npu->vtable->destroy(npu);
}

/* DPU_MODULE: opcode 3, arguments 1 and 2 left zero, data from 3. */
static void test_abi_dpu_module(void **state) {
  (void)state;
  if (emu_plain()) skip();
  tandem__npu_t *npu = open_emulated();
  int32_t *h[5];
  assert_int_equal(run_abi(npu, "dpu_module_add_i32", TANDEM_NPU_ABI_DPU_MODULE, NULL, 0, NULL, 0,
                           NULL, 0, 3, h),
                   TANDEM_OK);
  for (int k = 0; k < 1024; k++) assert_int_equal(h[2][k], (3 * k - 50) + (7 - 2 * k));
  free_bos(h, 3);
  /* ELF kernels have no opcode: the DPU_MODULE layout does not fit. */
  assert_int_equal(run_abi(npu, "elf_add_i32", TANDEM_NPU_ABI_DPU_MODULE, NULL, 0, NULL, 0, NULL, 0,
                           3, h),
                   TANDEM_ERROR_CONTRACT);
  assert_non_null(
      strstr(tandem_error_message(), "kernel argument 0 of 'elf_add_i32' should be the opcode"));
  npu->vtable->destroy(npu);
}

/* DPU_MODULE on real XRT is refused as UNSUPPORTED (the bridge has no
 * xrt::ext::kernel(ctx, module, name), so the run would carry no
 * instruction stream), before XRT is asked anything; the emulated NPU, a
 * test device, runs it (test_abi_dpu_module). Real XRT here is Debian's
 * 2.13 with its noop shim (skipped where it is not installed). */
static void test_dpu_module_refused_on_real_xrt(void **state) {
  (void)state;
  setenv("XCL_EMULATION_MODE", "noop", 1);
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "xrt";
  tandem__npu_t *npu = NULL;
  tandem_xrt_runtime_options_t xo; /* the defaults: AUTO */
  tandem_xrt_runtime_options_init(&xo);
  tandem_status_t s = tandem_xrt_npu_backend.open(&o, &xo, &npu);
  unsetenv("XCL_EMULATION_MODE");
  if (s == TANDEM_ERROR_NO_DEVICE) {
    fprintf(stderr, "SKIP: no real XRT with the noop shim: %s\n", tandem_error_message());
    skip();
  }
  assert_int_equal(s, TANDEM_OK);
  assert_false(npu->emulated);
  tandem_xrt_program_desc_t x;
  tandem_xrt_program_desc_init(&x);
  x.abi = TANDEM_NPU_ABI_DPU_MODULE;
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.next = &x;
  d.program_path = TANDEM_TEST_EMU_XCLBIN; /* refused before it is read */
  d.kernel_name = "dpu_module_add_i32";
  d.bindings = k_rw;
  d.binding_count = 3;
  void *prog = NULL;
  assert_int_equal(npu->vtable->program_create(npu, &d, "module", &prog), TANDEM_ERROR_UNSUPPORTED);
  const char *m = tandem_error_message();
  assert_non_null(strstr(m, "xrt::ext::kernel(context, module, name)"));
  assert_non_null(strstr(m, "no instruction stream"));
  assert_non_null(strstr(m, "Use the DPU ABI"));
  assert_null(prog);
  npu->vtable->destroy(npu);
}

/* ELF: data from argument 0; the kernel declares five buffers, three bound. */
static void test_abi_elf(void **state) {
  (void)state;
  if (emu_plain()) skip();
  tandem__npu_t *npu = open_emulated();
  int32_t *h[5];
  assert_int_equal(run_abi(npu, "elf_add_i32", TANDEM_NPU_ABI_ELF, NULL, 0, NULL, 0, NULL, 0, 3, h),
                   TANDEM_OK);
  for (int k = 0; k < 1024; k++) assert_int_equal(h[2][k], (3 * k - 50) + (7 - 2 * k));
  free_bos(h, 3);
  /* Only trailing buffers may stay unset: PLAIN wants all five. */
  assert_int_equal(run_abi(npu, "elf_add_i32", TANDEM_NPU_ABI_PLAIN, NULL, 0, NULL, 0, NULL, 0, 3,
                           h),
                   TANDEM_ERROR_CONTRACT);
  assert_non_null(strstr(tandem_error_message(), "argument 3 is a buffer"));
  npu->vtable->destroy(npu);
}

/* Typed scalars: a u64 takes two words (low first) and reaches the kernel
 * whole; declaring it u32 is CONTRACT, naming the argument. */
static void test_u64_scalar(void **state) {
  (void)state;
  tandem__npu_t *npu = open_emulated();
  const tandem_npu_scalar_type_t types[2] = {TANDEM_NPU_SCALAR_U64, TANDEM_NPU_SCALAR_U32};
  const uint32_t words[3] = {0x55667788u, 0x11223344u, 100};
  int32_t *h[5];
  assert_int_equal(
      run_abi(npu, "fill_u64", TANDEM_NPU_ABI_PLAIN, NULL, 0, types, 2, words, 3, 1, h), TANDEM_OK);
  const uint64_t *v = (const uint64_t *)h[0];
  for (int k = 0; k < 100; k++) assert_true(v[k] == 0x1122334455667788ull);
  assert_int_equal(h[0][200], 3 * 200 - 50); /* past n: untouched */
  free_bos(h, 1);
  assert_int_equal(run_abi(npu, "fill_u64", TANDEM_NPU_ABI_PLAIN, NULL, 0, NULL, 2, words, 2, 1, h),
                   TANDEM_ERROR_CONTRACT);
  assert_non_null(strstr(tandem_error_message(),
                         "kernel argument 1 of 'fill_u64' should be scalar 0 (u32), a 32-bit "
                         "scalar, but it is a 64-bit scalar"));
  npu->vtable->destroy(npu);
}

/* XDNA (the bridge's tier 1): one hardware context per xclbin, shared by
 * every program of it whatever its kernel. With a limit of one context,
 * five programs of five distinct kernels of one xclbin all open (the C
 * path, a context per kernel, fails the second), and they run. */
static void test_contexts_shared_and_limited(void **state) {
  (void)state;
  if (emu_plain()) skip();
  setenv("TANDEM_EMU_MAX_CONTEXTS", "1", 1);
  tandem__npu_t *npu = open_emulated();
  unsetenv("TANDEM_EMU_MAX_CONTEXTS");
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.program_path = TANDEM_TEST_EMU_XCLBIN;
  d.kernel_name = "add_i32";
  d.bindings = k_rw;
  d.binding_count = 3;
  d.scalar_count = 1;
  void *same[3];
  for (int i = 0; i < 3; i++)
    assert_int_equal(npu->vtable->program_create(npu, &d, "same", &same[i]), TANDEM_OK);
  static const tandem_binding_contract_t one = {.bytes = 4,
                                                .alignment = 4,
                                                .access = TANDEM_ACCESS_READ_WRITE};
  const char *other[3] = {"sleep_ms", "fail", "fill_u64"};
  const uint32_t scalars[3] = {1, 0, 2};
  void *progs[4] = {0};
  for (int i = 0; i < 3; i++) {
    tandem_npu_program_desc_t o = d;
    o.kernel_name = other[i];
    o.bindings = &one;
    o.binding_count = 1;
    o.scalar_count = scalars[i];
    static const tandem_npu_scalar_type_t u64_u32[2] = {TANDEM_NPU_SCALAR_U64,
                                                        TANDEM_NPU_SCALAR_U32};
    o.scalar_types = i == 2 ? u64_u32 : NULL;
    assert_int_equal(npu->vtable->program_create(npu, &o, other[i], &progs[i]), TANDEM_OK);
  }
  tandem_xrt_program_desc_t elf;
  tandem_xrt_program_desc_init(&elf);
  elf.abi = TANDEM_NPU_ABI_ELF;
  tandem_npu_program_desc_t m = d;
  m.next = &elf;
  m.kernel_name = "elf_add_i32";
  m.scalar_count = 0;
  assert_int_equal(npu->vtable->program_create(npu, &m, "fifth", &progs[3]), TANDEM_OK);
  run_add(npu, "add_i32"); /* one more program of the xclbin, run and checked */
  for (int i = 0; i < 3; i++) npu->vtable->program_destroy(npu, same[i]);
  for (int i = 0; i < 4; i++) npu->vtable->program_destroy(npu, progs[i]);
  npu->vtable->destroy(npu);
}

/* An emulated xclbin of the built-in kernels whose contents (so UUID)
 * differ by |copy|, at |path|. */
static void write_xclbin_copy(char *path, size_t size, int copy) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", TANDEM_TEST_EMU_XCLBIN);
  char *slash = strrchr(dir, '/');
  assert_non_null(slash);
  *slash = '\0';
  snprintf(path, size, "%s/tandem-test-copy-%d-%ld.xclbin", P_tmpdir, copy, (long)getpid());
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "tandem-emulated-xclbin 1\n# copy %d\nlibrary %s/libtandem_emu_kernels.so\n", copy,
          dir);
  fclose(f);
}

/* Each xclbin in use takes a context: with the firmware's limit of six
 * (npu1, the emulator's default), a seventh xclbin is OUT_OF_MEMORY saying
 * the NPU has no free hardware context (amdxdna answers ENODEV); releasing
 * an xclbin's programs frees its context for the next. */
static void test_context_limit_per_xclbin(void **state) {
  (void)state;
  if (emu_plain()) skip();
  enum { LIMIT = 6 };
  tandem__npu_t *npu = open_emulated();
  char path[LIMIT + 1][4200];
  void *prog[LIMIT + 1] = {0}, *again = NULL;
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.kernel_name = "add_i32";
  d.bindings = k_rw;
  d.binding_count = 3;
  d.scalar_count = 1;
  for (int i = 0; i <= LIMIT; i++) {
    write_xclbin_copy(path[i], sizeof path[i], i);
    d.program_path = path[i];
    tandem_status_t s = npu->vtable->program_create(npu, &d, "copy", &prog[i]);
    assert_int_equal(s, i < LIMIT ? TANDEM_OK : TANDEM_ERROR_OUT_OF_MEMORY);
  }
  const char *m = tandem_error_message();
  assert_non_null(strstr(m, "no free hardware context"));
  assert_non_null(strstr(m, "all 6 hardware contexts of the emulated NPU are in use"));
  assert_non_null(strstr(m, "one context per xclbin"));
  /* A second program of an xclbin in use still opens: it shares. */
  d.program_path = path[1];
  assert_int_equal(npu->vtable->program_create(npu, &d, "again", &again), TANDEM_OK);
  npu->vtable->program_destroy(npu, prog[0]);
  d.program_path = path[LIMIT];
  assert_int_equal(npu->vtable->program_create(npu, &d, "last", &prog[LIMIT]), TANDEM_OK);
  npu->vtable->program_destroy(npu, again);
  for (int i = 1; i <= LIMIT; i++) npu->vtable->program_destroy(npu, prog[i]);
  npu->vtable->destroy(npu);
  for (int i = 0; i <= LIMIT; i++) unlink(path[i]);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The emulator's count of runs closed while in flight (fatal in XRT),
 * process-wide. The test keeps the emulator loaded (the backend dlopens the
 * same file, so the same copy) so that the count outlives each device. */
static unsigned inflight_closes(void) {
  static void *lib;
  if (!lib) lib = dlopen(TANDEM_TEST_NPU_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(lib);
  unsigned (*count)(void) = (unsigned (*)(void))dlsym(lib, "tandemEmuInflightCloses");
  assert_non_null(count);
  return count();
}

/* An add_i32 program, its three buffers and a run, on a device opened
 * with TANDEM_EMU_TDR_MS=|tdr| and every run delayed |delay_us|. */
typedef struct stuck {
  tandem__npu_t *npu;
  void *prog, *bo[3], *run;
} stuck_t;

static void stuck_open(stuck_t *t, const char *tdr, const char *delay_us) {
  setenv("TANDEM_EMU_TDR_MS", tdr, 1);
  setenv("TANDEM_EMU_DELAY_US", delay_us, 1);
  t->npu = open_emulated();
  unsetenv("TANDEM_EMU_TDR_MS");
  unsetenv("TANDEM_EMU_DELAY_US");
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.program_path = TANDEM_TEST_EMU_XCLBIN;
  d.kernel_name = "add_i32";
  d.bindings = k_rw;
  d.binding_count = 3;
  d.scalar_count = 1;
  void *host;
  assert_int_equal(t->npu->vtable->program_create(t->npu, &d, "stuck", &t->prog), TANDEM_OK);
  for (int i = 0; i < 3; i++)
    assert_int_equal(t->npu->vtable->bo_create(t->npu, 4096, &t->bo[i], &host), TANDEM_OK);
  uint32_t n = 16;
  assert_int_equal(t->npu->vtable->run_create(t->npu, t->prog, t->bo, 3, &n, 1, &t->run),
                   TANDEM_OK);
}

static void stuck_close(stuck_t *t) {
  for (int i = 0; i < 3; i++) t->npu->vtable->bo_destroy(t->npu, t->bo[i]);
  t->npu->vtable->program_destroy(t->npu, t->prog);
  t->npu->vtable->destroy(t->npu);
}

/* amdxdna refuses xrt::run::abort (ERT_ABORT is "Unsupported op"), and XRT
 * stops the process when a run in flight is destroyed: tandem's watchdog
 * expiry on a stuck run (5 s) is TIMEOUT saying the abort was refused, and
 * the run's teardown waits for the driver's own reset (300 ms here) instead
 * of closing it in flight (TANDEM_EMU_FATAL_CLOSE=1 would stop this test;
 * the emulator's count says none happened). Reusing the run after the
 * reset fails clearly, as after any driver reset. */
static void test_watchdog_waits_for_driver_reset(void **state) {
  (void)state;
  if (emu_plain()) skip(); /* FPGA-style XRT: the emulator's abort works, no reset */
  setenv("TANDEM_EMU_FATAL_CLOSE", "1", 1);
  const unsigned closes = inflight_closes();
  stuck_t t;
  stuck_open(&t, "300", "5000000");
  const double t0 = now_ms();
  assert_int_equal(t.npu->vtable->run_execute(t.npu, t.run, 100), TANDEM_ERROR_TIMEOUT);
  const char *m = tandem_error_message();
  assert_non_null(strstr(m, "did not finish within the 100 ms watchdog (not aborted: "));
  assert_non_null(strstr(m, "Unsupported op"));
  assert_non_null(strstr(m, "never destroyed while in flight"));
  /* Reused: the previous run is waited for (the reset ends it in TIMEOUT),
   * then the NPU's fault fails this one without starting it. */
  assert_int_equal(t.npu->vtable->run_execute(t.npu, t.run, 100), TANDEM_ERROR_DEVICE_LOST);
  assert_non_null(strstr(tandem_error_message(), "outlived tandem's watchdog, in state TIMEOUT"));
  t.npu->vtable->run_destroy(t.npu, t.run);
  const double took = now_ms() - t0;
  assert_true(took >= 250.0 && took < 2500.0); /* the reset, not the 5 s run */
  stuck_close(&t);
  assert_int_equal(inflight_closes(), closes);
  unsetenv("TANDEM_EMU_FATAL_CLOSE");
}

/* With the driver's reset off the stuck run (3.5 s) outlives the bounded
 * wait (3 s): its teardown parks it rather than destroy it in flight, core
 * frees its buffers (XRT's run keeps them), and the device's close closes
 * it once it has ended. No run is ever closed in flight. */
static void test_watchdog_parks_run_without_reset(void **state) {
  (void)state;
  if (emu_plain()) skip();
  setenv("TANDEM_EMU_FATAL_CLOSE", "1", 1);
  const unsigned closes = inflight_closes();
  stuck_t t;
  stuck_open(&t, "0", "3500000");
  assert_int_equal(t.npu->vtable->run_execute(t.npu, t.run, 100), TANDEM_ERROR_TIMEOUT);
  const double t0 = now_ms();
  t.npu->vtable->run_destroy(t.npu, t.run); /* waits 3 s, then parks */
  const double took = now_ms() - t0;
  assert_true(took >= 2900.0 && took < 3400.0);
  stuck_close(&t);
  assert_int_equal(inflight_closes(), closes);
  unsetenv("TANDEM_EMU_FATAL_CLOSE");
}

/* On XDNA a run still on the NPU reads NEW, not QUEUED or RUNNING (amdxdna
 * rewrites the command to NEW when the job starts): a wait that runs out on
 * a NEW run is tandem's watchdog (TIMEOUT), never "ended in state NEW"
 * (INTERNAL), and the run's teardown waits for the run rather than closing
 * it in flight. Both profiles: PLAIN reads RUNNING. */
static void test_in_flight_new_is_running(void **state) {
  (void)state;
  setenv("TANDEM_EMU_DELAY_US", "300000", 1);
  tandem__npu_t *npu = open_emulated();
  unsetenv("TANDEM_EMU_DELAY_US");
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.program_path = TANDEM_TEST_EMU_XCLBIN;
  d.kernel_name = "add_i32";
  d.bindings = k_rw;
  d.binding_count = 3;
  d.scalar_count = 1;
  void *prog = NULL, *bo[3], *run = NULL;
  int32_t *h[3];
  assert_int_equal(npu->vtable->program_create(npu, &d, "slow", &prog), TANDEM_OK);
  for (int i = 0; i < 3; i++)
    assert_int_equal(npu->vtable->bo_create(npu, 4096, &bo[i], (void **)&h[i]), TANDEM_OK);
  uint32_t n = 16;
  assert_int_equal(npu->vtable->run_create(npu, prog, bo, 3, &n, 1, &run), TANDEM_OK);
  assert_int_equal(npu->vtable->run_execute(npu, run, 50), TANDEM_ERROR_TIMEOUT);
  assert_non_null(strstr(tandem_error_message(), "did not finish within the 50 ms watchdog"));
  npu->vtable->run_destroy(npu, run);
  for (int i = 0; i < 3; i++) npu->vtable->bo_destroy(npu, bo[i]);
  npu->vtable->program_destroy(npu, prog);
  npu->vtable->destroy(npu);
}

/* A full ELF (no xclbin) needs the bridge's tier 2, XRT >= 2.19; the
 * emulated NPU follows XRT 2.17's plugin, so the program is refused naming
 * both versions, not misread as a broken xclbin. */
static void test_elf_needs_tier2(void **state) {
  (void)state;
  char path[4200];
  snprintf(path, sizeof path, "%s/tandem-test-%ld.elf", P_tmpdir, (long)getpid());
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  static const unsigned char elf_header[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  fwrite(elf_header, 1, sizeof elf_header, f);
  fclose(f);
  tandem__npu_t *npu = open_emulated();
  tandem_xrt_program_desc_t x;
  tandem_xrt_program_desc_init(&x);
  x.abi = TANDEM_NPU_ABI_ELF;
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.next = &x;
  d.program_path = path;
  d.kernel_name = "DPU:dpu";
  d.bindings = k_rw;
  d.binding_count = 3;
  void *prog = NULL;
  assert_int_equal(npu->vtable->program_create(npu, &d, "elf", &prog), TANDEM_ERROR_UNSUPPORTED);
  const char *m = tandem_error_message();
  assert_non_null(strstr(m, "is an ELF (the full-ELF flow, no xclbin)"));
  assert_non_null(strstr(m, "XRT >= 2.19"));
  assert_non_null(strstr(m, emu_plain() ? "no tier 1" : "XRT 2.17"));
  assert_null(prog);
  npu->vtable->destroy(npu);
  unlink(path);
}

/* The driver's deadline (TANDEM_EMU_TDR_MS, 50 ms here) ends a 200 ms run
 * in a final TIMEOUT: DEVICE_LOST naming the driver's verdict, not the
 * watchdog; every later run fails clearly without reaching the NPU. */
static void test_driver_timeout_and_reset(void **state) {
  (void)state;
  if (emu_plain()) skip();
  setenv("TANDEM_EMU_TDR_MS", "50", 1);
  tandem__npu_t *npu = open_emulated();
  unsetenv("TANDEM_EMU_TDR_MS");
  static const tandem_binding_contract_t one = {.bytes = 4,
                                                .alignment = 4,
                                                .access = TANDEM_ACCESS_READ_WRITE};
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.program_path = TANDEM_TEST_EMU_XCLBIN;
  d.kernel_name = "sleep_ms";
  d.bindings = &one;
  d.binding_count = 1;
  d.scalar_count = 1;
  void *prog = NULL, *bo = NULL, *host = NULL, *run = NULL;
  assert_int_equal(npu->vtable->program_create(npu, &d, "sleepy", &prog), TANDEM_OK);
  assert_int_equal(npu->vtable->bo_create(npu, 4096, &bo, &host), TANDEM_OK);
  uint32_t ms = 200;
  assert_int_equal(npu->vtable->run_create(npu, prog, &bo, 1, &ms, 1, &run), TANDEM_OK);
  assert_int_equal(npu->vtable->run_execute(npu, run, 10000), TANDEM_ERROR_DEVICE_LOST);
  const char *m = tandem_error_message();
  assert_non_null(strstr(m, "NPU fault: the driver ended run of 'sleepy' in state TIMEOUT"));
  assert_non_null(strstr(m, "not tandem's 10000 ms watchdog"));
  ms = 1; /* a short run after the reset still fails, and says why */
  void *run2 = NULL;
  assert_int_equal(npu->vtable->run_create(npu, prog, &bo, 1, &ms, 1, &run2), TANDEM_OK);
  assert_int_equal(npu->vtable->run_execute(npu, run2, 10000), TANDEM_ERROR_DEVICE_LOST);
  assert_non_null(strstr(tandem_error_message(), "the NPU faulted earlier"));
  npu->vtable->run_destroy(npu, run2);
  npu->vtable->run_destroy(npu, run);
  npu->vtable->bo_destroy(npu, bo);
  npu->vtable->program_destroy(npu, prog);
  npu->vtable->destroy(npu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_export_fd_is_a_duplicate),
      cmocka_unit_test(test_profile_follows_device),
      cmocka_unit_test(test_plain_profile_on_xdna),
      cmocka_unit_test(test_bank_mismatch),
      cmocka_unit_test(test_abi_dpu),
      cmocka_unit_test(test_abi_dpu_module),
      cmocka_unit_test(test_dpu_module_refused_on_real_xrt),
      cmocka_unit_test(test_abi_elf),
      cmocka_unit_test(test_u64_scalar),
      cmocka_unit_test(test_contexts_shared_and_limited),
      cmocka_unit_test(test_context_limit_per_xclbin),
      cmocka_unit_test(test_watchdog_waits_for_driver_reset),
      cmocka_unit_test(test_watchdog_parks_run_without_reset),
      cmocka_unit_test(test_in_flight_new_is_running),
      cmocka_unit_test(test_elf_needs_tier2),
      cmocka_unit_test(test_driver_timeout_and_reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
