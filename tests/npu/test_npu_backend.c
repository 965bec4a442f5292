/* SPDX-License-Identifier: MIT */
/*
 * test_npu_backend.c — the XRT backend (backends/xrt/xrt_npu.c) through the
 * vtable core/ drives it by (core/npu_backend.h), on the emulated NPU, with no
 * GPU: the promises each slot makes that the public API cannot show on
 * lavapipe (no dma-buf import, so core never exports there). Links the
 * library's objects (the backends are internal), like test_registry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/npu_backend.h"

static tandem__npu_t *open_profile(tandem_npu_profile_t profile) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu = TANDEM_NPU_EMULATED;
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  o.npu_profile = profile;
  tandem__npu_t *npu = NULL;
  tandem_status_t s = tandem_emu_npu_backend.open(&o, &npu);
  if (s != TANDEM_OK) fail_msg("opening the emulated NPU: %s", tandem_error_message());
  return npu;
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
  d.xclbin_path = TANDEM_TEST_EMU_XCLBIN;
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
  assert_int_equal(npu->profile, emu_plain() ? TANDEM_NPU_PROFILE_PLAIN : TANDEM_NPU_PROFILE_XDNA);
  run_add(npu, "add_i32");
  npu->vtable->destroy(npu);
}

/* An XDNA device refuses buffers without flags (amdxdna: "none flag"); the
 * PLAIN profile forced onto one fails with a message naming the fix. */
static void test_plain_profile_on_xdna(void **state) {
  (void)state;
  if (emu_plain()) skip();
  tandem__npu_t *npu = open_profile(TANDEM_NPU_PROFILE_PLAIN);
  assert_int_equal(npu->profile, TANDEM_NPU_PROFILE_PLAIN);
  void *bo = NULL, *host = NULL;
  assert_int_equal(npu->vtable->bo_create(npu, 4096, &bo, &host), TANDEM_ERROR_OUT_OF_MEMORY);
  assert_non_null(strstr(tandem_error_message(), "TANDEM_NPU_PROFILE=xdna"));
  npu->vtable->destroy(npu);
  npu = open_profile(TANDEM_NPU_PROFILE_XDNA); /* the override works both ways */
  assert_int_equal(npu->profile, TANDEM_NPU_PROFILE_XDNA);
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
  d.xclbin_path = TANDEM_TEST_EMU_XCLBIN;
  d.kernel_name = "add_i32_c_bank2";
  d.bindings = k_rw;
  d.binding_count = 3;
  d.scalar_count = 1;
  void *prog = NULL;
  assert_int_equal(npu->vtable->program_create(npu, &d, "banks", &prog), TANDEM_ERROR_CONTRACT);
  const char *m = tandem_error_message();
  assert_non_null(strstr(m, "binding 2"));
  assert_non_null(strstr(m, "kernel argument 2 is connected to bank 2"));
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_export_fd_is_a_duplicate),
      cmocka_unit_test(test_profile_follows_device),
      cmocka_unit_test(test_plain_profile_on_xdna),
      cmocka_unit_test(test_bank_mismatch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
