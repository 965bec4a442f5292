/* SPDX-License-Identifier: MIT */
/*
 * test_bridge_xrt_real.c — tandem's XRT bridge (backends/xrt/xrt_bridge.cpp,
 * built against the headers of the XRT it runs with) against real XRT >= 2.17
 * code: libxrt_coreutil and the noop shim built from source by
 * scripts/build-xrt-noop.sh (issue 31). noop computes nothing but runs XRT's
 * own xclbin parsing, hardware contexts (slots numbered from 1, as amdxdna's
 * context handles are), kernels, group ids, buffers, argument packing and run
 * states. The xclbin is DPU-shaped, as mlir-aie's aiecc makes it
 * (xclbin_builder.h): opcode u64, instr in bank 1 (SRAM), ninstr u32,
 * bo0..bo4 in bank 0 (HOST).
 *  1. libtandem: the path as an application takes it: the XDNA profile,
 *     tandem_npu_program_create with the DPU ABI (register, hardware
 *     context, kernel, group ids, argument check), a GPU -> NPU -> GPU graph
 *     (buffers in the kernel's groups, arguments, start, wait), three
 *     submits, program release (run, kernel, context closed).
 *  2. bridge: the bridge's C entry points one by one, each step asserted,
 *     printing the group ids XRT answers (slot << 16 | bank).
 * argv[1]: the XRT prefix (TANDEM_XRT_NOOP_PREFIX, holding lib/ and
 * include/), argv[2]: libtandem_xrt_bridge.so ("" when CMake did not build
 * it). Exit 77 (skipped) with the reason when either is missing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal/xrt_bridge_abi.h"
#include "harness.h"
#include "internal/xrt_headers.h"
#include "tandem/tandem_xrt.h"
#include "xclbin_builder.h"

enum { kDataBuffers = 3, kWords = 1024, kInstrWords = 16 };
enum { kArgOpcode = 0, kArgInstr = 1, kArgNinstr = 2, kArgBo0 = 3, kArgCount = 8 };

static char g_prefix[1024], g_bridge[1024], g_xclbin[256];
static unsigned char g_uuid[16];

/* The XRT C API and the bridge, resolved by hand here (not through tandem's
 * loader) so that case 2 checks the bridge alone. */
typedef void *(*device_open_fn)(unsigned);
typedef int (*device_close_fn)(void *);
typedef void *(*bo_alloc_fn)(void *, size_t, unsigned, unsigned);
typedef int (*bo_free_fn)(void *);
typedef void *(*bo_map_fn)(void *);
typedef int (*bo_sync_fn)(void *, int, size_t, size_t);

static void *need(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (!f) fail_msg("%s is missing: %s", name, dlerror());
  return f;
}

/* Case 2: register -> hardware context -> kernel -> group ids -> buffers ->
 * arguments -> run -> wait -> close, through the bridge's C entry points. */
static void test_bridge_steps(void **state) {
  (void)state;
  char path[1200], msg[512] = "";
  /* XRT's own load order (xrt_api.c): the noop shim, then coreutil, both
   * global; then the bridge, whose XRT symbols resolve to them. */
  snprintf(path, sizeof path, "%s/lib/libxrt_noop.so.2", g_prefix);
  void *noop = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!noop) fail_msg("dlopen %s: %s", path, dlerror());
  snprintf(path, sizeof path, "%s/lib/libxrt_coreutil.so.2", g_prefix);
  void *core = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!core) fail_msg("dlopen %s: %s", path, dlerror());
  void *bridge = dlopen(g_bridge, RTLD_NOW | RTLD_LOCAL);
  if (!bridge) fail_msg("dlopen %s: %s", g_bridge, dlerror());

  device_open_fn device_open = (device_open_fn)need(core, "xrtDeviceOpen");
  device_close_fn device_close = (device_close_fn)need(core, "xrtDeviceClose");
  bo_alloc_fn bo_alloc = (bo_alloc_fn)need(core, "xrtBOAlloc");
  bo_free_fn bo_free = (bo_free_fn)need(core, "xrtBOFree");
  bo_map_fn bo_map = (bo_map_fn)need(core, "xrtBOMap");
  bo_sync_fn bo_sync = (bo_sync_fn)need(core, "xrtBOSync");
#define B(name) ((__typeof__(&name))need(bridge, #name))
  assert_int_equal(B(tandemBridgeVersion)(), TANDEM_XRT_BRIDGE_VERSION);
  unsigned version = B(tandemBridgeXrtVersion)();
  printf("bridge: XRT %u.%u at run time (xrtVersionCode)\n", version >> 16, version & 0xffffu);
  assert_true(version >= ((2u << 16) | 17u));

  void *dev = device_open(0);
  if (!dev) fail_msg("xrtDeviceOpen(0) on noop: %s", strerror(errno));

  /* Tier 0: the kernel's arguments from XRT's parse of the metadata. */
  char kinds[16] = "";
  int argc =
      B(tandemBridgeKernelArgs)(dev, g_xclbin, "MLIR_AIE", kinds, sizeof kinds, msg, sizeof msg);
  if (argc < 0) fail_msg("tandemBridgeKernelArgs: %d (%s)", argc, msg);
  printf("bridge: MLIR_AIE arguments '%s'\n", kinds);
  assert_string_equal(kinds, "Ububbbbb"); /* opcode u64, instr, ninstr u32, bo0..bo4 */

  /* register_xclbin + hw_context(device, uuid). */
  void *ctx = NULL, *kernel = NULL, *run = NULL;
  int rc = B(tandemBridgeContextOpen)(dev, g_xclbin, &ctx, msg, sizeof msg);
  if (rc != 0) fail_msg("tandemBridgeContextOpen: %d (%s)", rc, msg);
  rc = B(tandemBridgeKernelOpen)(ctx, "MLIR_AIE", &kernel, msg, sizeof msg);
  if (rc != 0) fail_msg("tandemBridgeKernelOpen(MLIR_AIE): %d (%s)", rc, msg);
  /* An unknown kernel is refused (xrt_bridge_abi.h promises -ENOENT; what XRT
   * 2.17 throws is printed, for the record). */
  rc = B(tandemBridgeKernelOpen)(ctx, "NOPE", &(void *){NULL}, msg, sizeof msg);
  printf("bridge: kernel NOPE refused: %d (%s)\n", rc, msg);
  assert_true(rc < 0);

  /* Group ids: XRT's xcl_bo_flags, slot << 16 | bank; noop's slots count
   * from 1 (core/pcie/noop/shim.cpp create_hw_context, ++m_slot_index). */
  int group[kArgCount];
  printf("bridge: group ids:");
  for (int i = 0; i < kArgCount; i++) {
    group[i] = B(tandemBridgeKernelGroup)(kernel, i);
    printf(" [%d] 0x%x", i, (unsigned)group[i]);
  }
  printf("\n");
  unsigned slot = (unsigned)group[kArgBo0] >> 16;
  assert_true(slot >= 1); /* the slot is in the group id: bank 0 does not read 0 */
  assert_int_equal(group[kArgInstr] & 0xffff, 1);
  assert_int_equal((unsigned)group[kArgInstr] >> 16, slot);
  for (int i = kArgBo0; i < kArgCount; i++) {
    assert_int_equal(group[i] & 0xffff, 0);
    assert_int_equal((unsigned)group[i] >> 16, slot);
  }
  /* Scalars have no bank: a negative errno (older XRT) or bank 0xffff. */
  assert_true(group[kArgOpcode] < 0 || (group[kArgOpcode] & 0xffff) == 0xffff);
  assert_true(group[kArgNinstr] < 0 || (group[kArgNinstr] & 0xffff) == 0xffff);

  /* Buffers in the groups XRT gave, with the flags the XDNA plugin wants. */
  void *instr = bo_alloc(dev, kInstrWords * 4, XCL_BO_FLAGS_CACHEABLE, (unsigned)group[kArgInstr]);
  if (!instr) fail_msg("xrtBOAlloc(instr, group 0x%x): %s", group[kArgInstr], strerror(errno));
  void *bo[kDataBuffers];
  for (int i = 0; i < kDataBuffers; i++) {
    bo[i] = bo_alloc(dev, kWords * 4, XCL_BO_FLAGS_HOST_ONLY, (unsigned)group[kArgBo0 + i]);
    if (!bo[i])
      fail_msg("xrtBOAlloc(bo%d, group 0x%x): %s", i, group[kArgBo0 + i], strerror(errno));
    uint32_t *p = bo_map(bo[i]);
    assert_non_null(p);
    for (uint32_t j = 0; j < kWords; j++) p[j] = (uint32_t)i * 100000u + j;
    assert_int_equal(bo_sync(bo[i], XCL_BO_SYNC_BO_TO_DEVICE, kWords * 4, 0), 0);
  }
  uint32_t *ip = bo_map(instr);
  assert_non_null(ip);
  for (uint32_t j = 0; j < kInstrWords; j++) ip[j] = 0x06030100u + j;
  assert_int_equal(bo_sync(instr, XCL_BO_SYNC_BO_TO_DEVICE, kInstrWords * 4, 0), 0);

  /* Arguments as mlir-aie's host code sets them (opcode 3, instr, count,
   * data from 3), then two runs; noop completes each at once. */
  rc = B(tandemBridgeRunOpen)(kernel, &run, msg, sizeof msg);
  if (rc != 0) fail_msg("tandemBridgeRunOpen: %d (%s)", rc, msg);
  rc = B(tandemBridgeRunSetU64)(run, kArgOpcode, 3, msg, sizeof msg);
  if (rc != 0) fail_msg("set opcode: %d (%s)", rc, msg);
  rc = B(tandemBridgeRunSetBuffer)(run, kArgInstr, instr, msg, sizeof msg);
  if (rc != 0) fail_msg("set instr: %d (%s)", rc, msg);
  rc = B(tandemBridgeRunSetU32)(run, kArgNinstr, kInstrWords, msg, sizeof msg);
  if (rc != 0) fail_msg("set ninstr: %d (%s)", rc, msg);
  for (int i = 0; i < kDataBuffers; i++) {
    rc = B(tandemBridgeRunSetBuffer)(run, kArgBo0 + i, bo[i], msg, sizeof msg);
    if (rc != 0) fail_msg("set bo%d: %d (%s)", i, rc, msg);
  }
  rc = B(tandemBridgeRunSetU32)(run, kArgCount, 0, msg, sizeof msg);
  assert_true(rc < 0); /* XRT refuses an argument past the end */
  printf("bridge: argument %d refused as XRT should: %s\n", kArgCount, msg);
  for (int round = 0; round < 2; round++) {
    rc = B(tandemBridgeRunStart)(run, msg, sizeof msg);
    if (rc != 0) fail_msg("tandemBridgeRunStart (round %d): %d (%s)", round, rc, msg);
    rc = B(tandemBridgeRunWait)(run, 5000, msg, sizeof msg);
    if (rc != ERT_CMD_STATE_COMPLETED)
      fail_msg("tandemBridgeRunWait (round %d): %d, expected COMPLETED (%s)", round, rc, msg);
  }
  /* noop computes nothing: the data is what the host wrote. */
  for (int i = 0; i < kDataBuffers; i++) {
    assert_int_equal(bo_sync(bo[i], XCL_BO_SYNC_BO_FROM_DEVICE, kWords * 4, 0), 0);
    const uint32_t *p = bo_map(bo[i]);
    for (uint32_t j = 0; j < kWords; j++) assert_int_equal(p[j], (uint32_t)i * 100000u + j);
  }
  printf("bridge: context (slot %u), kernel, %d buffers + instructions, 2 runs COMPLETED\n", slot,
         kDataBuffers);

  assert_int_equal(B(tandemBridgeRunClose)(run), 0);
  assert_int_equal(bo_free(instr), 0);
  for (int i = 0; i < kDataBuffers; i++) assert_int_equal(bo_free(bo[i]), 0);
  assert_int_equal(B(tandemBridgeKernelClose)(kernel), 0);
  assert_int_equal(B(tandemBridgeContextClose)(ctx), 0);
  assert_int_equal(device_close(dev), 0);
#undef B
  dlclose(bridge); /* XRT's libraries stay loaded, as libtandem leaves them */
}

/* Case 1: the whole NPU lane through libtandem's public API. */
static void test_libtandem_dpu(void **state) {
  (void)state;
  tandem_xrt_runtime_options_t xo;
  tandem_xrt_runtime_options_init(&xo);
  xo.profile = TANDEM_NPU_PROFILE_XDNA; /* no amdxdna node here to detect */
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.next = &xo;
  o.npu_backend = "xrt";
  tandem_runtime_t *rt = th_runtime_create(&o);
  TH_ASSERT_OK(tandem_runtime_open_npu(rt));
  tandem_xrt_npu_info_t xi;
  tandem_xrt_npu_info_init(&xi);
  tandem_npu_info_t info;
  tandem_npu_info_init(&info);
  info.next = &xi;
  TH_ASSERT_OK(tandem_runtime_npu_info(rt, &info));
  printf("libtandem: NPU %s via %s, sharing %s, profile %s\n", info.name, info.backend,
         tandem_sharing_name(info.sharing), tandem_npu_profile_name(xi.profile));
  assert_false(info.emulated);
  assert_ptr_equal(info.next, &xi); /* the chain is the caller's, kept */
  assert_int_equal(xi.profile, TANDEM_NPU_PROFILE_XDNA);
  assert_non_null(strstr(info.backend, "libxrt_noop.so.2"));
  assert_non_null(strstr(info.backend, "tier 1")); /* the bridge runs the programs */

  const uint32_t bytes = kWords * 4;
  uint32_t instructions[kInstrWords];
  for (uint32_t j = 0; j < kInstrWords; j++) instructions[j] = 0x06030100u + j;
  tandem_binding_contract_t b[kDataBuffers] = {{bytes, 4, TANDEM_ACCESS_READ},
                                               {bytes, 4, TANDEM_ACCESS_READ},
                                               {bytes, 4, TANDEM_ACCESS_WRITE}};
  tandem_xrt_program_desc_t x;
  tandem_xrt_program_desc_init(&x);
  x.abi = TANDEM_NPU_ABI_DPU;
  x.instructions = instructions;
  x.instruction_bytes = sizeof instructions;
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.next = &x;
  d.program_path = g_xclbin;
  d.kernel_name = "MLIR_AIE";
  d.bindings = b;
  d.binding_count = kDataBuffers;
  tandem_npu_program_t *p = NULL;
  /* Registers the xclbin, opens the hardware context and the kernel, reads
   * the group ids and checks every argument against the DPU ABI. */
  TH_ASSERT_OK(tandem_npu_program_create(rt, &d, &p));
  printf("libtandem: program '%s' created (DPU ABI, %d data buffers)\n", tandem_npu_program_name(p),
         kDataBuffers);

  tandem_buffer_t *a = th_buffer(rt, bytes, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *bb = th_buffer(rt, bytes, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *c = th_buffer(rt, bytes, TANDEM_PLACEMENT_SHARED);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g;
  TH_ASSERT_OK(tandem_graph_create(rt, &g));
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(a), 0x11111111u, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(bb), 0x22222222u, TANDEM_LANE_AUTO));
  tandem_view_t v[kDataBuffers] = {tandem_buffer_whole(a), tandem_buffer_whole(bb),
                                   tandem_buffer_whole(c)};
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, p, v, kDataBuffers, NULL, 0));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(a), tandem_buffer_whole(out), TANDEM_LANE_AUTO));
  tandem_exec_t *e;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  /* Buffers in the kernel's groups, arguments, start, wait: per submit. */
  for (int i = 0; i < 3; i++) {
    tandem_completion_t *done;
    TH_ASSERT_OK(tandem_exec_submit(e, &done));
    TH_ASSERT_OK(tandem_completion_wait(done));
    tandem_completion_release(done);
  }
  uint32_t got[kWords];
  th_read(out, 0, got, bytes);
  TH_ASSERT_U32_FILL(got, 0x11111111u, kWords, "a after the NPU's syncs");
  tandem_statistics_t st;
  tandem_statistics_init(&st);
  TH_ASSERT_OK(tandem_runtime_statistics(rt, &st));
  TH_ASSERT_U64_EQ(st.npu_runs, 3);
  printf("libtandem: 3 submits, %llu NPU runs completed\n", (unsigned long long)st.npu_runs);
  tandem_exec_release(e);
  /* The run, kernel and hardware context close here. */
  tandem_npu_program_release(p);
  tandem_buffer_release(a);
  tandem_buffer_release(bb);
  tandem_buffer_release(c);
  tandem_buffer_release(out);
  th_runtime_destroy(rt);
  printf("libtandem: program and runtime closed\n");
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *prefix = argc > 1 ? argv[1] : "";
  const char *bridge = argc > 2 ? argv[2] : "";
  char probe[1200];
  if (!prefix[0]) {
    printf("SKIP: no XRT >= 2.17 with the noop shim: set TANDEM_XRT_NOOP_PREFIX (CMake or the "
           "environment) to the xrt/ folder scripts/build-xrt-noop.sh installs\n");
    return 77;
  }
  snprintf(probe, sizeof probe, "%s/lib/libxrt_noop.so.2", prefix);
  if (access(probe, R_OK) != 0) {
    printf("SKIP: %s: %s (TANDEM_XRT_NOOP_PREFIX=%s)\n", probe, strerror(errno), prefix);
    return 77;
  }
  if (!bridge[0]) {
    printf("SKIP: libtandem_xrt_bridge.so was not built: TANDEM_XRT_INCLUDE_DIR must name XRT "
           ">= 2.17 headers (%s/include)\n",
           prefix);
    return 77;
  }
  snprintf(g_prefix, sizeof g_prefix, "%s", prefix);
  snprintf(g_bridge, sizeof g_bridge, "%s", bridge);
  /* tandem's loader takes XRT from $XILINX_XRT/lib, the noop shim when
   * XCL_EMULATION_MODE=noop, and the bridge from TANDEM_XRT_BRIDGE. */
  setenv("XILINX_XRT", prefix, 1);
  setenv("XCL_EMULATION_MODE", "noop", 1);
  setenv("TANDEM_XRT_BRIDGE", bridge, 1);
  snprintf(g_xclbin, sizeof g_xclbin, "/tmp/tandem-dpu-%d.xclbin", (int)getpid());
  if (tandem_test_xclbin_write_dpu(g_xclbin, "MLIR_AIE", "MLIRAIE", 5, g_uuid) != 0) return 1;
  printf("xclbin: %s (DPU-shaped, MLIR_AIE:MLIRAIE, bo0..bo4)\n", g_xclbin);
  /* libtandem first: its hardware context gets noop's first slot, 1, as a
   * first context does on amdxdna, so bank 0 reads 0x10000 there. */
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_libtandem_dpu),
                                     cmocka_unit_test(test_bridge_steps)};
  int rc = TH_RUN_GROUP(tests);
  unlink(g_xclbin);
  return rc;
}
