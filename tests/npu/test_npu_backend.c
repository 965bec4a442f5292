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

static tandem__npu_t *open_emulated(void) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu = TANDEM_NPU_EMULATED;
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  tandem__npu_t *npu = NULL;
  tandem_status_t s = tandem_emu_npu_backend.open(&o, &npu);
  if (s != TANDEM_OK) fail_msg("opening the emulated NPU: %s", tandem_error_message());
  return npu;
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
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
