/* SPDX-License-Identifier: MIT */
/*
 * test_npu_xrt_noop.c — the whole NPU backend (backends/xrt/xrt_npu.c and the
 * NPU lane) through the public API against real XRT 2.13 and its noop shim:
 * open, sharing negotiation with real XRT buffer objects, program load with
 * argument checks, a GPU → NPU → GPU graph with syncs and a run. The noop shim
 * computes nothing, so the data checked is what the GPU wrote around the NPU
 * node (it must survive the NPU's syncs untouched), plus statistics.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "xclbin_builder.h"

static char xclbin_path[64];

static void test_noop_pipeline(void **state) {
  (void)state;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "xrt";
  tandem_runtime_t *rt = th_runtime_create(&o);
  tandem_status_t s = tandem_runtime_open_npu(rt);
  if (s == TANDEM_ERROR_NO_DEVICE) {
    fprintf(stderr, "SKIP: XRT's noop shim is not available: %s\n", tandem_error_message());
    th_runtime_destroy(rt);
    skip();
  }
  TH_ASSERT_OK(s);
  tandem_npu_info_t info;
  tandem_npu_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_npu_info(rt, &info));
  assert_false(info.emulated);
  fprintf(stderr, "NPU: %s via %s, sharing: %s\n", info.name, info.backend,
          tandem_sharing_name(info.sharing));

  const uint32_t n = 1024, bytes = n * 4;
  tandem_binding_contract_t b[3] = {{bytes, 4, TANDEM_ACCESS_READ},
                                    {bytes, 4, TANDEM_ACCESS_READ},
                                    {bytes, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .program_path = xclbin_path,
                                 .kernel_name = "vadd",
                                 .bindings = b,
                                 .binding_count = 3,
                                 .scalar_count = 1};
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_OK(tandem_npu_program_create(rt, &d, &p));
  d.scalar_count = 0;
  d.binding_count = 3;
  tandem_binding_contract_t b4[4] = {b[0], b[1], b[2], b[2]};
  d.bindings = b4;
  d.binding_count = 4; /* argument 3 (n) is a scalar in the xclbin */
  tandem_npu_program_t *bad = NULL;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &bad), TANDEM_ERROR_CONTRACT,
                       "argument 3");

  tandem_buffer_t *a = th_buffer(rt, bytes, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *bb = th_buffer(rt, bytes, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *c = th_buffer(rt, bytes, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(a), 0x11111111u, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(bb), 0x22222222u, TANDEM_LANE_AUTO));
  tandem_view_t v[3] = {tandem_buffer_whole(a), tandem_buffer_whole(bb), tandem_buffer_whole(c)};
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, p, v, 3, &n, 1));
  /* Ordered after the NPU run (it reads a, which the run reads: no order;
   * so read c, which the run writes, into nothing, and copy a out after it). */
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(a), tandem_buffer_whole(out), TANDEM_LANE_AUTO));
  tandem_exec_t *e;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  for (int i = 0; i < 3; i++) {
    tandem_completion_t *done;
    TH_ASSERT_OK(tandem_exec_submit(e, &done));
    TH_ASSERT_OK(tandem_completion_wait(done));
    tandem_completion_release(done);
  }
  uint32_t got[1024];
  th_read(out, 0, got, bytes);
  TH_ASSERT_U32_FILL(got, 0x11111111u, n, "a after the NPU's syncs");
  tandem_statistics_t st;
  tandem_statistics_init(&st);
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &st));
  TH_ASSERT_U64_EQ(st.npu_runs, 3);
  /* Per run: the three ranges to the device (the output too, made clean
   * before the run) and the output back. */
  TH_ASSERT_U64_EQ(st.cache_maintenance_bytes, 3ull * 4 * bytes);
  tandem_exec_release(e);
  tandem_npu_program_release(p);
  tandem_buffer_release(a);
  tandem_buffer_release(bb);
  tandem_buffer_release(c);
  tandem_buffer_release(out);
  th_runtime_destroy(rt);
}

int main(void) {
  setenv("XCL_EMULATION_MODE", "noop", 1);
  snprintf(xclbin_path, sizeof xclbin_path, "/tmp/tandem-noop-%d.xclbin", (int)getpid());
  const char *names[4] = {"a", "b", "c", "n"};
  const int is_buffer[4] = {1, 1, 1, 0};
  unsigned char uuid[16];
  if (tandem_test_xclbin_write(xclbin_path, "vadd", names, is_buffer, 4, uuid) != 0) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_noop_pipeline)};
  int rc = TH_RUN_GROUP(tests);
  unlink(xclbin_path);
  return rc;
}
