/* SPDX-License-Identifier: MIT */
/*
 * test_emu.c — tests of tandem's emulated NPU device (a test and development
 * device, not hardware) through its XRT C API, exactly as tandem's XRT backend
 * uses it: the emulator library is dlopen'ed by path and every function is
 * resolved by name into a pointer typed from Debian's XRT headers.
 * Usage: test_emu <path of libtandem_npu_emu.so> <path of tandem_emu_kernels.xclbin>
 * Exit 0 when every check passes, 1 otherwise. TANDEM_TEST_SEED=<n> repeats a
 * random run.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal/xrt_headers.h"
#include "internal/emu_dpu.h"
#include "internal/xrt_bridge_abi.h"

/* clang-format off */
#define EMU_FUNCS(X)                                                                            \
  X(xrtDeviceOpen) X(xrtDeviceClose) X(xrtDeviceLoadXclbinHandle) X(xrtXclbinAllocFilename)     \
  X(xrtXclbinGetUUID) X(xrtXclbinFreeHandle) X(xrtPLKernelOpen) X(xrtKernelClose)               \
  X(xrtKernelArgGroupId) X(xrtBOAlloc) X(xrtBOImport) X(xrtBOExport) X(xrtBOFree) X(xrtBOSize) \
  X(xrtBOMap) X(xrtBOSync) X(xrtRunOpen) X(xrtRunSetArg) X(xrtRunStart) X(xrtRunWaitFor)        \
  X(xrtRunWait) X(xrtRunState) X(xrtRunClose)
/* clang-format on */

static struct {
#define MEMBER(f) __typeof__(&f) f;
  EMU_FUNCS(MEMBER)
#undef MEMBER
} api;

/* The bridge's registration (internal/xrt_bridge_abi.h), resolved by its C name. */
static __typeof__(&tandemBridgeRegisterXclbin) bridge_register;
/* The emulator's run abort (not in XRT's C API). */
static int (*run_abort)(xrtRunHandle);
/* The bridge's tier 1, as the emulator implements it (XDNA mode). */
static struct {
  __typeof__(&tandemBridgeContextOpen) context_open;
  __typeof__(&tandemBridgeContextClose) context_close;
  __typeof__(&tandemBridgeKernelOpen) kernel_open;
  __typeof__(&tandemBridgeKernelClose) kernel_close;
  __typeof__(&tandemBridgeKernelGroup) kernel_group;
  __typeof__(&tandemBridgeRunOpen) run_open;
  __typeof__(&tandemBridgeRunSetBuffer) run_set_buffer;
  __typeof__(&tandemBridgeRunSetU32) run_set_u32;
  __typeof__(&tandemBridgeRunStart) run_start;
  __typeof__(&tandemBridgeRunWait) run_wait;
  __typeof__(&tandemBridgeRunAbort) run_abort;
  __typeof__(&tandemBridgeRunClose) run_close;
} bridge;

static int failures;
static const char *xclbin_path;
static xrtDeviceHandle dev;
static xuid_t uuid;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)
#define CHECK_EQ(a, b)                                                                           \
  do {                                                                                           \
    const long long va_ = (long long)(a), vb_ = (long long)(b);                                  \
    if (va_ != vb_) {                                                                            \
      fprintf(stderr, "%s:%d: %s == %s failed: %lld vs %lld\n", __FILE__, __LINE__, #a, #b, va_, \
              vb_);                                                                              \
      failures++;                                                                                \
    }                                                                                            \
  } while (0)

/* The emulator's count of runs closed in flight (tandemEmuInflightCloses). */
static unsigned (*inflight_closes)(void);

static struct timespec now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t;
}
static double ms_since(struct timespec t0) {
  const struct timespec t = now();
  return (double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6;
}

static uint64_t rng_state;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

/* TANDEM_EMU_MODE=plain: the FPGA-style mode (every argument must be set). */
static bool plain_mode;

/* Makes |x| (at xclbin_path) the device's image: PLAIN loads it; XDNA
 * refuses loading, as amdxdna's plugin does, and registers it through the
 * bridge. Returns 0 or the failing call's result. */
static int load(xrtDeviceHandle d, xrtXclbinHandle x) {
  if (plain_mode) return api.xrtDeviceLoadXclbinHandle(d, x);
  CHECK_EQ(api.xrtDeviceLoadXclbinHandle(d, x), -ENOTSUP);
  char msg[128];
  return bridge_register(d, xclbin_path, msg, sizeof msg);
}

/* HOST_ONLY: the data-buffer flags both modes accept. */
static xrtBufferHandle bo_alloc(size_t size) {
  xrtBufferHandle bo = api.xrtBOAlloc(dev, size, XCL_BO_FLAGS_HOST_ONLY, 0);
  CHECK(bo != NULL);
  return bo;
}

static void to_device(xrtBufferHandle bo) {
  CHECK_EQ(api.xrtBOSync(bo, XCL_BO_SYNC_BO_TO_DEVICE, api.xrtBOSize(bo), 0), 0);
}
static void from_device(xrtBufferHandle bo) {
  CHECK_EQ(api.xrtBOSync(bo, XCL_BO_SYNC_BO_FROM_DEVICE, api.xrtBOSize(bo), 0), 0);
}

static xrtKernelHandle kernel(const char *name) {
  xrtKernelHandle k = api.xrtPLKernelOpen(dev, uuid, name);
  CHECK(k != NULL);
  return k;
}

/* Runs add_i32 C = A + B over n ints and waits; returns the final state. */
static enum ert_cmd_state run_add(xrtKernelHandle k, xrtBufferHandle a, xrtBufferHandle b,
                                  xrtBufferHandle c, unsigned n) {
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK(r != NULL);
  CHECK_EQ(api.xrtRunSetArg(r, 0, a), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, b), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 2, c), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 3, n), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  const enum ert_cmd_state s = api.xrtRunWait(r);
  CHECK_EQ(api.xrtRunClose(r), 0);
  return s;
}

static void test_device_and_xclbin(void) {
  errno = 0;
  CHECK(api.xrtDeviceOpen(1) == NULL);
  CHECK_EQ(errno, ENOENT);

  /* A real-looking xclbin (binary bytes behind the real magic) is refused. */
  char path[] = "/tmp/tandem_emu_fake_XXXXXX";
  const int fd = mkstemp(path);
  CHECK(fd >= 0);
  unsigned char bytes[4096];
  memcpy(bytes, "xclbin2", 8);
  for (size_t i = 8; i < sizeof bytes; i++) bytes[i] = (unsigned char)rnd();
  CHECK_EQ(write(fd, bytes, sizeof bytes), (long long)sizeof bytes);
  close(fd);
  errno = 0;
  CHECK(api.xrtXclbinAllocFilename(path) == NULL);
  CHECK_EQ(errno, EINVAL);
  /* So is a text file with a wrong header or an unknown key. */
  FILE *f = fopen(path, "w");
  fputs("tandem-emulated-xclbin 1\nlibrary /nonexistent.so\nbogus 1\n", f);
  fclose(f);
  errno = 0;
  CHECK(api.xrtXclbinAllocFilename(path) == NULL);
  CHECK_EQ(errno, EINVAL);
  /* An explicit uuid is returned as given; a library that cannot load is refused. */
  f = fopen(path, "w");
  fputs("tandem-emulated-xclbin 1\nlibrary missing.so\nuuid 00112233445566778899aabbccddeeff\n", f);
  fclose(f);
  xrtXclbinHandle x = api.xrtXclbinAllocFilename(path);
  CHECK(x != NULL);
  if (x != NULL) {
    xuid_t id;
    CHECK_EQ(api.xrtXclbinGetUUID(x, id), 0);
    CHECK_EQ(id[0], 0x00);
    CHECK_EQ(id[5], 0x55);
    CHECK_EQ(id[15], 0xff);
    xrtDeviceHandle d = api.xrtDeviceOpen(0);
    CHECK(d != NULL);
    CHECK(api.xrtDeviceLoadXclbinHandle(d, x) < 0);
    CHECK(bridge_register(d, path, NULL, 0) < 0);
    CHECK_EQ(api.xrtDeviceClose(d), 0);
    CHECK_EQ(api.xrtXclbinFreeHandle(x), 0);
  }
  unlink(path);
  errno = 0;
  CHECK(api.xrtXclbinAllocFilename("/nonexistent/tandem.xclbin") == NULL);
  CHECK_EQ(errno, ENOENT);

  /* Unknown kernel name; uuid of another xclbin. */
  errno = 0;
  CHECK(api.xrtPLKernelOpen(dev, uuid, "no_such_kernel") == NULL);
  CHECK_EQ(errno, ENOENT);
  xuid_t other;
  memcpy(other, uuid, sizeof other);
  other[0] ^= 1;
  errno = 0;
  CHECK(api.xrtPLKernelOpen(dev, other, "add_i32") == NULL);
  CHECK_EQ(errno, EINVAL);

  /* Group ids. PLAIN: the bare bank of a buffer, -1 for a scalar. XDNA, as
   * XRT >= 2.17: slot << 16 | bank, the slot the kernel's hardware context
   * handle (from 1), a scalar's bank field 0xffff. */
  xrtKernelHandle k = kernel("add_i32");
  const int g0 = api.xrtKernelArgGroupId(k, 0);
  CHECK_EQ(g0 & 0xffff, 0);
  CHECK_EQ(api.xrtKernelArgGroupId(k, 2) & 0xffff, 0);
  if (plain_mode) {
    CHECK_EQ(g0, 0);
    errno = 0;
    CHECK_EQ(api.xrtKernelArgGroupId(k, 3), -1);
    CHECK_EQ(errno, EINVAL);
  } else {
    CHECK(g0 >> 16 >= 1); /* a context slot, never 0 */
    CHECK_EQ(api.xrtKernelArgGroupId(k, 3), (g0 & 0xff0000) | 0xffff);
  }
  CHECK_EQ(api.xrtKernelArgGroupId(k, 4), -1);
  CHECK_EQ(api.xrtKernelArgGroupId(k, -1), -1);
  CHECK_EQ(api.xrtKernelClose(k), 0);
}

static void test_matmul_f32(void) {
  enum { M = 64, N = 48, K = 32 };
  xrtBufferHandle a = bo_alloc(M * K * 4), b = bo_alloc(K * N * 4), c = bo_alloc(M * N * 4);
  float *ha = api.xrtBOMap(a), *hb = api.xrtBOMap(b), *hc = api.xrtBOMap(c);
  for (int i = 0; i < M * K; i++) ha[i] = (float)((int)(rnd() % 2001) - 1000) / 250.0f;
  for (int i = 0; i < K * N; i++) hb[i] = (float)((int)(rnd() % 2001) - 1000) / 250.0f;
  to_device(a);
  to_device(b);
  xrtKernelHandle k = kernel("matmul_f32");
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, a), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, b), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 2, c), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 3, (unsigned)M), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 4, (unsigned)N), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 5, (unsigned)K), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtRunState(r), ERT_CMD_STATE_COMPLETED);
  from_device(c);
  int bad = 0;
  for (int i = 0; i < M && bad < 5; i++) {
    for (int j = 0; j < N && bad < 5; j++) {
      double ref = 0.0;
      for (int p = 0; p < K; p++) ref += (double)ha[i * K + p] * (double)hb[p * N + j];
      const double got = hc[i * N + j], tol = 1e-4 * (1.0 + (ref < 0 ? -ref : ref));
      if (got - ref > tol || ref - got > tol) {
        fprintf(stderr, "matmul_f32 C[%d][%d]: got %.7g, expected %.7g\n", i, j, got, ref);
        bad++;
      }
    }
  }
  CHECK_EQ(bad, 0);
  /* Sizes larger than the BOs: the device faults the run. Restart allowed. */
  CHECK_EQ(api.xrtRunSetArg(r, 3, (unsigned)M + 1), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_ERROR);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(a), 0);
  CHECK_EQ(api.xrtBOFree(b), 0);
  CHECK_EQ(api.xrtBOFree(c), 0);
}

static void test_matmul_i8(void) {
  enum { M = 17, N = 23, K = 40 };
  xrtBufferHandle a = bo_alloc(M * K), b = bo_alloc(K * N), c = bo_alloc(M * N * 4);
  int8_t *ha = api.xrtBOMap(a), *hb = api.xrtBOMap(b);
  int32_t *hc = api.xrtBOMap(c);
  for (int i = 0; i < M * K; i++) ha[i] = (int8_t)(rnd() & 0xff);
  for (int i = 0; i < K * N; i++) hb[i] = (int8_t)(rnd() & 0xff);
  to_device(a);
  to_device(b);
  xrtKernelHandle k = kernel("matmul_i8");
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, a), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, b), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 2, c), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 3, (unsigned)M), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 4, (unsigned)N), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 5, (unsigned)K), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  from_device(c);
  int bad = 0;
  for (int i = 0; i < M; i++) {
    for (int j = 0; j < N; j++) {
      int32_t ref = 0;
      for (int p = 0; p < K; p++) ref += ha[i * K + p] * hb[p * N + j];
      if (hc[i * N + j] != ref && bad++ < 5)
        fprintf(stderr, "matmul_i8 C[%d][%d]: got %d, expected %d\n", i, j, hc[i * N + j], ref);
    }
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(a), 0);
  CHECK_EQ(api.xrtBOFree(b), 0);
  CHECK_EQ(api.xrtBOFree(c), 0);
}

static void test_scale_add(void) {
  enum { n = 1000 };
  xrtBufferHandle x = bo_alloc(n * 4), y = bo_alloc(n * 4);
  float *hx = api.xrtBOMap(x), *hy = api.xrtBOMap(y);
  for (int i = 0; i < n; i++) hx[i] = (float)i * 0.5f;
  to_device(x);
  const float scale = 3.0f, bias = -2.0f;
  unsigned sbits, bbits;
  memcpy(&sbits, &scale, 4);
  memcpy(&bbits, &bias, 4);
  xrtKernelHandle k = kernel("scale_add_f32");
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, x), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, y), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 2, (unsigned)n), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 3, sbits), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 4, bbits), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  from_device(y);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += hy[i] != hx[i] * scale + bias;
  CHECK_EQ(bad, 0);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(x), 0);
  CHECK_EQ(api.xrtBOFree(y), 0);
}

/* The device is non-coherent: forgetting a sync gives stale data. */
static void test_sync_required(void) {
  enum { n = 256 };
  xrtBufferHandle a = bo_alloc(n * 4), b = bo_alloc(n * 4), c = bo_alloc(n * 4);
  int32_t *ha = api.xrtBOMap(a), *hb = api.xrtBOMap(b), *hc = api.xrtBOMap(c);
  for (int i = 0; i < n; i++) {
    ha[i] = i;
    hb[i] = 1000 * i;
    hc[i] = -7;
  }
  xrtKernelHandle k = kernel("add_i32");
  /* No TO_DEVICE: the kernel sees the zero-filled device side. */
  CHECK_EQ(run_add(k, a, b, c, n), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(hc[5], -7); /* no FROM_DEVICE yet: host side untouched */
  from_device(c);
  /* PLAIN: the device's zeros. XDNA: the host's -7s were never synced, so
   * they are dirty CPU lines, and the sync (a clflush) writes them back over
   * what the device wrote. */
  CHECK_EQ(hc[5], plain_mode ? 0 : -7);
  CHECK_EQ(hc[n - 1], plain_mode ? 0 : -7);
  /* Partial sync: only the first half of A reaches the device. */
  CHECK_EQ(api.xrtBOSync(a, XCL_BO_SYNC_BO_TO_DEVICE, n * 2, 0), 0);
  to_device(b);
  CHECK_EQ(run_add(k, a, b, c, n), ERT_CMD_STATE_COMPLETED);
  from_device(c);
  CHECK_EQ(hc[5], 5 + 5000);
  CHECK_EQ(hc[n - 1], 1000 * (n - 1));
  to_device(a);
  CHECK_EQ(run_add(k, a, b, c, n), ERT_CMD_STATE_COMPLETED);
  from_device(c);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += hc[i] != 1001 * i;
  CHECK_EQ(bad, 0);
  /* Range checks. */
  CHECK_EQ(api.xrtBOSync(a, XCL_BO_SYNC_BO_TO_DEVICE, n * 4, 4), -EINVAL);
  CHECK_EQ(api.xrtBOSync(a, XCL_BO_SYNC_BO_TO_DEVICE, 4, n * 4 + 4), -EINVAL);
  CHECK_EQ(api.xrtBOSync(a, XCL_BO_SYNC_BO_FROM_DEVICE, SIZE_MAX, 8), -EINVAL);
  CHECK_EQ(api.xrtBOSync(a, XCL_BO_SYNC_BO_TO_DEVICE, 0, n * 4), 0);
  /* In-order execution without host round trips: C = A + B, then C = C + B. */
  xrtRunHandle r1 = api.xrtRunOpen(k), r2 = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r1, 0, a), 0);
  CHECK_EQ(api.xrtRunSetArg(r1, 1, b), 0);
  CHECK_EQ(api.xrtRunSetArg(r1, 2, c), 0);
  CHECK_EQ(api.xrtRunSetArg(r1, 3, (unsigned)n), 0);
  CHECK_EQ(api.xrtRunSetArg(r2, 0, c), 0);
  CHECK_EQ(api.xrtRunSetArg(r2, 1, b), 0);
  CHECK_EQ(api.xrtRunSetArg(r2, 2, c), 0);
  CHECK_EQ(api.xrtRunSetArg(r2, 3, (unsigned)n), 0);
  CHECK_EQ(api.xrtRunStart(r1), 0);
  CHECK_EQ(api.xrtRunStart(r2), 0);
  CHECK_EQ(api.xrtRunWait(r2), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtRunWait(r1), ERT_CMD_STATE_COMPLETED);
  from_device(c);
  bad = 0;
  for (int i = 0; i < n; i++) bad += hc[i] != 2001 * i;
  CHECK_EQ(bad, 0);
  CHECK_EQ(api.xrtRunClose(r1), 0);
  CHECK_EQ(api.xrtRunClose(r2), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(a), 0);
  CHECK_EQ(api.xrtBOFree(b), 0);
  CHECK_EQ(api.xrtBOFree(c), 0);
}

/* XDNA mode: the write-back CPU cache of amdxdna's direction-blind sync
 * (clflush). Host writes stay dirty until a sync of their lines; a
 * FROM_DEVICE sync then writes them, whole 64-byte lines, over what the
 * device wrote. A TO_DEVICE sync of the output before the run (what tandem
 * does for every range a run writes) makes the device's result come back. */
static void test_dirty_lines(void) {
  enum { n = 64 }; /* 256 bytes: four lines */
  xrtBufferHandle a = bo_alloc(n * 4), b = bo_alloc(n * 4), c = bo_alloc(n * 4);
  int32_t *ha = api.xrtBOMap(a), *hb = api.xrtBOMap(b), *hc = api.xrtBOMap(c);
  for (int i = 0; i < n; i++) {
    ha[i] = i;
    hb[i] = 100;
    hc[i] = -1; /* the host initialises the output, as a user's map might */
  }
  to_device(a);
  to_device(b);
  xrtKernelHandle k = kernel("add_i32");
  CHECK_EQ(run_add(k, a, b, c, n), ERT_CMD_STATE_COMPLETED);
  from_device(c);
  CHECK_EQ(hc[0], -1); /* stale: the dirty lines won */
  CHECK_EQ(hc[n - 1], -1);
  CHECK_EQ(run_add(k, a, b, c, n), ERT_CMD_STATE_COMPLETED); /* c is clean now */
  from_device(c);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += hc[i] != i + 100;
  CHECK_EQ(bad, 0);
  /* Whole lines: one host byte in line 0, a sync of bytes 4..63 only, still
   * writes that line back, so the device's bytes 4..63 are lost too. */
  for (int i = 0; i < n; i++) hb[i] = 1000;
  to_device(b);
  ((volatile char *)hc)[0] = 0x11;
  CHECK_EQ(run_add(k, a, b, c, n), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtBOSync(c, XCL_BO_SYNC_BO_FROM_DEVICE, 60, 4), 0);
  CHECK_EQ(hc[1], 1 + 100);   /* line 0 written back: the old values stay */
  CHECK_EQ(hc[16], 16 + 100); /* line 1 untouched by the sync: stale, clean */
  from_device(c);             /* line 0 is clean now: its device bytes were overwritten */
  CHECK_EQ(hc[1], 1 + 100);
  CHECK_EQ(hc[16], 16 + 1000); /* line 1 refetched */
  /* Made clean before the run, the output comes back whole. */
  hc[0] = 0x7777;
  to_device(c);
  CHECK_EQ(run_add(k, a, b, c, n), ERT_CMD_STATE_COMPLETED);
  from_device(c);
  bad = 0;
  for (int i = 0; i < n; i++) bad += hc[i] != i + 1000;
  CHECK_EQ(bad, 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(a), 0);
  CHECK_EQ(api.xrtBOFree(b), 0);
  CHECK_EQ(api.xrtBOFree(c), 0);
}

static void test_export_import(void) {
  xrtBufferHandle a = bo_alloc(12288);
  const int fd = api.xrtBOExport(a);
  CHECK(fd >= 0);
  xrtBufferHandle b = api.xrtBOImport(dev, fd);
  CHECK(b != NULL);
  /* As in XRT, the fd is the buffer's own (cached; closed when it is freed):
   * a second export returns it again, and the caller must not close it. */
  CHECK_EQ(api.xrtBOExport(a), fd);
  CHECK(fcntl(fd, F_GETFD) >= 0);
  CHECK_EQ(api.xrtBOSize(b), 12288);
  unsigned char *ha = api.xrtBOMap(a), *hb = api.xrtBOMap(b);
  CHECK(ha != hb);
  for (int i = 0; i < 12288; i++) ha[i] = (unsigned char)(i * 7);
  int bad = 0;
  for (int i = 0; i < 12288; i++) bad += hb[i] != (unsigned char)(i * 7);
  CHECK_EQ(bad, 0);
  hb[100] = 0x5a;
  CHECK_EQ(ha[100], 0x5a);
  /* The import's device side is its own: a kernel writing it and a
   * FROM_DEVICE sync make the result visible through the exporter's map. */
  xrtBufferHandle s = bo_alloc(4);
  xrtKernelHandle k = kernel("sleep_ms");
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, b), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, 0u), 0);
  memset(ha, 0xee, 4);
  /* The host wrote bytes the kernel will write: made clean first (XDNA:
   * unsynced host lines would be written back over the kernel's result). */
  CHECK_EQ(api.xrtBOSync(b, XCL_BO_SYNC_BO_TO_DEVICE, 4, 0), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtBOSync(b, XCL_BO_SYNC_BO_FROM_DEVICE, 4, 0), 0);
  uint32_t first;
  memcpy(&first, ha, 4);
  CHECK_EQ(first, 1);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(s), 0);
  CHECK_EQ(api.xrtBOFree(a), 0);
  CHECK_EQ(api.xrtBOFree(b), 0);
  errno = 0;
  CHECK(api.xrtBOImport(dev, -1) == NULL);
  CHECK(api.xrtBOAlloc(dev, 0, 0, 0) == NULL);
  CHECK(api.xrtBOAlloc(dev, 64, 0, (xrtMemoryGroup)-1) == NULL);
}

/* XDNA mode (the default): buffer flags as amdxdna's XRT plugin reads them,
 * and buffer arguments checked against their kernel argument's bank. */
static void test_xdna_flags(void) {
  errno = 0;
  CHECK(api.xrtBOAlloc(dev, 4096, XCL_BO_FLAGS_NONE, 0) == NULL); /* "none flag" */
  CHECK_EQ(errno, ENOTSUP);
  /* Exactly one buffer type: two, or another flag beside one, is "Bad BO type". */
  static const xrtBufferFlags bad[] = {XCL_BO_FLAGS_HOST_ONLY | XCL_BO_FLAGS_P2P,
                                       XCL_BO_FLAGS_HOST_ONLY | XCL_BO_FLAGS_CACHEABLE,
                                       XCL_BO_FLAGS_CACHEABLE | XCL_BO_FLAGS_KERNBUF,
                                       XCL_BO_FLAGS_DEV_ONLY, XCL_BO_FLAGS_SVM};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    errno = 0;
    CHECK(api.xrtBOAlloc(dev, 4096, bad[i], 0) == NULL);
    CHECK_EQ(errno, EINVAL);
  }
  static const xrtBufferFlags good[] = {XCL_BO_FLAGS_HOST_ONLY, XCL_BO_FLAGS_CACHEABLE,
                                        XCL_BO_FLAGS_EXECBUF, XCL_BO_FLAGS_KERNBUF};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    xrtBufferHandle ok = api.xrtBOAlloc(dev, 4096, good[i], 0);
    CHECK(ok != NULL);
    if (ok) CHECK_EQ(api.xrtBOFree(ok), 0);
  }
  xrtBufferHandle dev_heap = api.xrtBOAlloc(dev, 4096, XCL_BO_FLAGS_CACHEABLE, 1);
  CHECK(dev_heap != NULL);
  errno = 0;
  CHECK_EQ(api.xrtBOExport(dev_heap), -1); /* device-heap buffers do not export */
  CHECK_EQ(errno, EOPNOTSUPP);
  xrtBufferHandle share = bo_alloc(4096);
  const int fd = api.xrtBOExport(share);
  CHECK(fd >= 0);
  CHECK_EQ(api.xrtBOExport(share), fd); /* the buffer's own fd, every time */
  /* add_i32's buffers are in bank 0: one from bank 1 is refused. */
  xrtKernelHandle k = kernel("add_i32");
  const int g0 = api.xrtKernelArgGroupId(k, 0);
  CHECK_EQ(g0 & 0xffff, 0); /* bank 0, under the kernel's context slot */
  CHECK(g0 >> 16 >= 1);
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, dev_heap), -EXDEV);
  CHECK_EQ(api.xrtRunSetArg(r, 0, share), 0);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(dev_heap), 0);
  CHECK_EQ(api.xrtBOFree(share), 0);
}

/* dpu_vector runs the instruction stream from the instruction buffer's
 * device side: an unsynced stream fails the run, a stale one (rewritten on
 * the host, not synced) runs the old program, a wrong opcode fails. */
static void test_dpu_instructions(void) {
  xrtKernelHandle k = kernel("dpu_vector");
  const int gi = api.xrtKernelArgGroupId(k, 1);
  CHECK_EQ(gi & 0xffff, 1); /* the instruction buffer: SRAM bank */
  CHECK_EQ(api.xrtKernelArgGroupId(k, 3) & 0xffff, 0);
  /* The whole group id goes back to the allocation, as XRT's users do. */
  xrtBufferHandle instr =
      api.xrtBOAlloc(dev, 4096, plain_mode ? 0 : XCL_BO_FLAGS_CACHEABLE, (xrtMemoryGroup)gi);
  xrtBufferHandle bo[5];
  for (int i = 0; i < 5; i++) bo[i] = bo_alloc(256);
  int32_t *a = api.xrtBOMap(bo[0]), *b = api.xrtBOMap(bo[1]), *c = api.xrtBOMap(bo[2]);
  for (int i = 0; i < 64; i++) {
    a[i] = i * 5 - 7;
    b[i] = 100 - i;
  }
  to_device(bo[0]);
  to_device(bo[1]);
  uint32_t *w = api.xrtBOMap(instr);
  const uint32_t add[7] = {TANDEM_EMU_DPU_MAGIC, 1, TANDEM_EMU_DPU_ADD_I32, 2, 0, 1, 64};
  memcpy(w, add, sizeof add);
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, (uint64_t)TANDEM_EMU_DPU_OPCODE), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, instr), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 2, 7u), 0);
  for (int i = 0; i < 5; i++) CHECK_EQ(api.xrtRunSetArg(r, 3 + i, bo[i]), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_ERROR); /* never synced: the device sees zeros */
  CHECK_EQ(api.xrtBOSync(instr, XCL_BO_SYNC_BO_TO_DEVICE, sizeof add, 0), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  from_device(bo[2]);
  for (int i = 0; i < 64; i++) CHECK_EQ(c[i], (i * 5 - 7) + (100 - i));
  w[2] = TANDEM_EMU_DPU_SUB_I32; /* rewritten on the host only: stale on the device */
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  from_device(bo[2]);
  for (int i = 0; i < 64; i++) CHECK_EQ(c[i], (i * 5 - 7) + (100 - i)); /* still the old add */
  CHECK_EQ(api.xrtBOSync(instr, XCL_BO_SYNC_BO_TO_DEVICE, sizeof add, 0), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  from_device(bo[2]);
  for (int i = 0; i < 64; i++) CHECK_EQ(c[i], (i * 5 - 7) - (100 - i));
  CHECK_EQ(api.xrtRunSetArg(r, 2, 8u), 0); /* a word count that disagrees with the stream */
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_ERROR);
  CHECK_EQ(api.xrtRunSetArg(r, 2, 7u), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 0, (uint64_t)2), 0); /* not the DPU opcode */
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_ERROR);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  for (int i = 0; i < 5; i++) CHECK_EQ(api.xrtBOFree(bo[i]), 0);
  CHECK_EQ(api.xrtBOFree(instr), 0);
}

/* XDNA mode: hardware-context handles, the slot of every group id, are
 * device-wide and cyclic from 1, as amdxdna allocates them: a closed
 * context's handle is not given out again at once; a bridge context's
 * kernels carry the context's slot. */
static void test_slots(xrtXclbinHandle x) {
  xrtDeviceHandle d = api.xrtDeviceOpen(0);
  CHECK(d != NULL);
  CHECK_EQ(load(d, x), 0);
  xrtKernelHandle k1 = api.xrtPLKernelOpen(d, uuid, "add_i32");
  xrtKernelHandle k2 = api.xrtPLKernelOpen(d, uuid, "add_i32");
  CHECK_EQ(api.xrtKernelArgGroupId(k1, 0), 1 << 16); /* the first handle is 1 */
  CHECK_EQ(api.xrtKernelArgGroupId(k2, 1), 2 << 16);
  CHECK_EQ(api.xrtKernelClose(k1), 0);
  xrtKernelHandle k3 = api.xrtPLKernelOpen(d, uuid, "add_i32");
  CHECK_EQ(api.xrtKernelArgGroupId(k3, 2), 3 << 16); /* 1 is free, but the cursor moved on */
  void *ctx = NULL, *bk = NULL;
  char msg[160] = "";
  CHECK_EQ(bridge.context_open(d, xclbin_path, &ctx, msg, sizeof msg), 0);
  CHECK_EQ(bridge.kernel_open(ctx, "dpu_vector", &bk, msg, sizeof msg), 0);
  CHECK_EQ(bridge.kernel_group(bk, 1), 4 << 16 | 1);
  CHECK_EQ(bridge.kernel_group(bk, 0), 4 << 16 | 0xffff); /* the opcode: a scalar */
  CHECK_EQ(bridge.kernel_group(bk, 8), -EINVAL);
  CHECK_EQ(bridge.kernel_close(bk), 0);
  CHECK_EQ(bridge.context_close(ctx), 0);
  CHECK_EQ(api.xrtKernelClose(k2), 0);
  CHECK_EQ(api.xrtKernelClose(k3), 0);
  CHECK_EQ(api.xrtDeviceClose(d), 0);
}

/* XDNA mode: each kernel opened takes a hardware context; the firmware
 * holds 6 on npu1 (the default) and 16 on npu4 (TANDEM_EMU_NPU); past them
 * ENODEV, as amdxdna answers, until one is closed. */
static void test_context_limit(xrtXclbinHandle x) {
  xrtKernelHandle k[7];
  for (int i = 0; i < 6; i++) k[i] = kernel("add_i32");
  errno = 0;
  CHECK(api.xrtPLKernelOpen(dev, uuid, "add_i32") == NULL);
  CHECK_EQ(errno, ENODEV);
  CHECK_EQ(api.xrtKernelClose(k[0]), 0);
  k[6] = kernel("add_i32");
  for (int i = 1; i < 7; i++) CHECK_EQ(api.xrtKernelClose(k[i]), 0);
  setenv("TANDEM_EMU_NPU", "npu4", 1);
  xrtDeviceHandle d = api.xrtDeviceOpen(0);
  setenv("TANDEM_EMU_NPU", "npu9", 1);
  errno = 0;
  CHECK(api.xrtDeviceOpen(0) == NULL); /* an unknown part is refused */
  CHECK_EQ(errno, EINVAL);
  unsetenv("TANDEM_EMU_NPU");
  CHECK(d != NULL);
  CHECK_EQ(load(d, x), 0);
  xrtKernelHandle many[16];
  for (int i = 0; i < 16; i++) CHECK((many[i] = api.xrtPLKernelOpen(d, uuid, "add_i32")) != NULL);
  errno = 0;
  CHECK(api.xrtPLKernelOpen(d, uuid, "add_i32") == NULL);
  CHECK_EQ(errno, ENODEV);
  for (int i = 0; i < 16; i++) CHECK_EQ(api.xrtKernelClose(many[i]), 0);
  CHECK_EQ(api.xrtDeviceClose(d), 0);
}

/* XDNA mode: a run past the driver's deadline (TANDEM_EMU_TDR_MS) ends in
 * a final TIMEOUT and resets its context: later runs of that kernel end in
 * ABORT; a fresh kernel (a new context) runs again. Abort ends a queued run
 * in ABORT without running it. */
static void test_tdr_reset_abort(xrtXclbinHandle x) {
  setenv("TANDEM_EMU_TDR_MS", "40", 1);
  xrtDeviceHandle d = api.xrtDeviceOpen(0);
  unsetenv("TANDEM_EMU_TDR_MS");
  CHECK(d != NULL);
  CHECK_EQ(load(d, x), 0);
  xrtKernelHandle k = api.xrtPLKernelOpen(d, uuid, "sleep_ms");
  xrtBufferHandle bo = api.xrtBOAlloc(d, 4096, XCL_BO_FLAGS_HOST_ONLY, 0);
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, bo), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, 120u), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_TIMEOUT);
  CHECK_EQ(api.xrtRunState(r), ERT_CMD_STATE_TIMEOUT); /* final */
  CHECK_EQ(api.xrtRunSetArg(r, 1, 1u), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_ABORT); /* the context was reset */
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  /* A new context runs again. */
  xrtKernelHandle k1 = api.xrtPLKernelOpen(d, uuid, "sleep_ms");
  r = api.xrtRunOpen(k1);
  CHECK_EQ(api.xrtRunSetArg(r, 0, bo), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, 0u), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k1), 0);
  CHECK_EQ(api.xrtBOFree(bo), 0);
  CHECK_EQ(api.xrtDeviceClose(d), 0);
  /* Abort of a run queued behind a long one (no deadline on this device, so
   * a loaded machine cannot turn the long run into a TIMEOUT): amdxdna
   * refuses ERT_ABORT, so the emulator's abort of a run in flight is
   * EOPNOTSUPP and the run goes on to complete. */
  setenv("TANDEM_EMU_TDR_MS", "0", 1);
  d = api.xrtDeviceOpen(0);
  unsetenv("TANDEM_EMU_TDR_MS");
  CHECK_EQ(load(d, x), 0);
  bo = api.xrtBOAlloc(d, 4096, XCL_BO_FLAGS_HOST_ONLY, 0);
  xrtKernelHandle k2 = api.xrtPLKernelOpen(d, uuid, "sleep_ms");
  xrtRunHandle a = api.xrtRunOpen(k2), b = api.xrtRunOpen(k2);
  CHECK_EQ(api.xrtRunSetArg(a, 0, bo), 0);
  CHECK_EQ(api.xrtRunSetArg(a, 1, 300u), 0);
  CHECK_EQ(api.xrtRunSetArg(b, 0, bo), 0);
  CHECK_EQ(api.xrtRunSetArg(b, 1, 1u), 0);
  CHECK_EQ(api.xrtRunStart(a), 0);
  CHECK_EQ(api.xrtRunStart(b), 0);
  CHECK_EQ(run_abort(b), -EOPNOTSUPP); /* still queued behind a: refused */
  CHECK_EQ(api.xrtRunWait(a), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtRunWait(b), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(run_abort(b), 0);       /* a final run is left alone */
  CHECK_EQ(api.xrtRunStart(b), 0); /* and starts again */
  CHECK_EQ(api.xrtRunWait(b), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtRunClose(a), 0);
  CHECK_EQ(api.xrtRunClose(b), 0);
  CHECK_EQ(api.xrtKernelClose(k2), 0);
  CHECK_EQ(api.xrtBOFree(bo), 0);
  CHECK_EQ(api.xrtDeviceClose(d), 0);
}

/* XDNA mode, the bridge's run: xrt::run::abort is refused (-EOPNOTSUPP,
 * "Unsupported op") while the run is in flight, which reads NEW; the
 * driver's hang detection (TANDEM_EMU_TDR_MS, 100 ms here) ends a run stuck
 * in its 5 s delay at the deadline in a final TIMEOUT. Closing runs that are
 * not in flight is never counted as XRT's fatal close. */
static void test_bridge_abort_refused(xrtXclbinHandle x) {
  (void)x;
  setenv("TANDEM_EMU_TDR_MS", "100", 1);
  setenv("TANDEM_EMU_DELAY_US", "5000000", 1);
  xrtDeviceHandle d = api.xrtDeviceOpen(0);
  unsetenv("TANDEM_EMU_TDR_MS");
  unsetenv("TANDEM_EMU_DELAY_US");
  CHECK(d != NULL);
  const unsigned closes = inflight_closes();
  void *ctx = NULL, *k = NULL, *r = NULL;
  char msg[200] = "";
  CHECK_EQ(bridge.context_open(d, xclbin_path, &ctx, msg, sizeof msg), 0);
  CHECK_EQ(bridge.kernel_open(ctx, "sleep_ms", &k, msg, sizeof msg), 0);
  xrtBufferHandle bo = api.xrtBOAlloc(d, 4096, XCL_BO_FLAGS_HOST_ONLY, 0);
  CHECK_EQ(bridge.run_open(k, &r, msg, sizeof msg), 0);
  CHECK_EQ(bridge.run_set_buffer(r, 0, bo, msg, sizeof msg), 0);
  CHECK_EQ(bridge.run_set_u32(r, 1, 0u, msg, sizeof msg), 0);
  const struct timespec t0 = now();
  CHECK_EQ(bridge.run_start(r, msg, sizeof msg), 0);
  CHECK_EQ(bridge.run_wait(r, 10, msg, sizeof msg), ERT_CMD_STATE_NEW); /* still in flight */
  msg[0] = '\0';
  CHECK_EQ(bridge.run_abort(r, msg, sizeof msg), -EOPNOTSUPP);
  CHECK(strstr(msg, "Unsupported op") != NULL);
  CHECK_EQ(bridge.run_wait(r, 0, msg, sizeof msg), ERT_CMD_STATE_TIMEOUT); /* the driver's reset */
  const double took = ms_since(t0);
  CHECK(took >= 90 && took < 4000); /* the deadline, not the 5 s delay */
  CHECK_EQ(bridge.run_abort(r, msg, sizeof msg), ERT_CMD_STATE_TIMEOUT); /* final: as it is */
  CHECK_EQ(bridge.run_close(r), 0);
  CHECK_EQ(inflight_closes(), closes);
  CHECK_EQ(bridge.kernel_close(k), 0);
  CHECK_EQ(bridge.context_close(ctx), 0);
  CHECK_EQ(api.xrtBOFree(bo), 0);
  CHECK_EQ(api.xrtDeviceClose(d), 0);
}

/* PLAIN mode: flags are ignored, as with FPGA-style XRT. */
static void test_plain_flags(void) {
  xrtBufferHandle bo = api.xrtBOAlloc(dev, 4096, XCL_BO_FLAGS_NONE, 0);
  CHECK(bo != NULL);
  CHECK(api.xrtBOExport(bo) >= 0);
  CHECK_EQ(api.xrtBOFree(bo), 0);
}

/* A user closing the exported fd (a double close with real XRT) is caught
 * when the buffer is freed: the process stops with the reason. The child is
 * this program started afresh (argument --export-double-close), not a bare
 * fork: the emulator's threads make a forked child unsafe, and ThreadSanitizer
 * refuses one outright. */
static void export_double_close_child(void) {
  xrtDeviceHandle d = api.xrtDeviceOpen(0);
  xrtBufferHandle a = d ? api.xrtBOAlloc(d, 4096, XCL_BO_FLAGS_HOST_ONLY, 0) : NULL;
  if (!a) _exit(3);
  close(api.xrtBOExport(a));
  api.xrtBOFree(a); /* aborts */
  _exit(0);
}

static void test_export_double_close(char **argv) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char *args[] = {argv[0], argv[1], argv[2], "--export-double-close", NULL};
    execv("/proc/self/exe", args);
    _exit(4);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

/* Closing a run in flight is fatal in XRT (std::abort); with
 * TANDEM_EMU_FATAL_CLOSE=1 the emulator stops the process the same way.
 * The child is this program started afresh (--fatal-close). */
static void fatal_close_child(void) {
  xrtDeviceHandle d = api.xrtDeviceOpen(0);
  xrtXclbinHandle x = d ? api.xrtXclbinAllocFilename(xclbin_path) : NULL;
  if (!x || api.xrtXclbinGetUUID(x, uuid) != 0 || load(d, x) != 0) _exit(3);
  xrtKernelHandle k = api.xrtPLKernelOpen(d, uuid, "sleep_ms");
  xrtBufferHandle bo = api.xrtBOAlloc(d, 4096, XCL_BO_FLAGS_HOST_ONLY, 0);
  xrtRunHandle r = k && bo ? api.xrtRunOpen(k) : NULL;
  if (!r || api.xrtRunSetArg(r, 0, bo) || api.xrtRunSetArg(r, 1, 2000u) || api.xrtRunStart(r))
    _exit(3);
  api.xrtRunClose(r); /* aborts */
  _exit(0);
}

static void test_fatal_close(char **argv) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("TANDEM_EMU_FATAL_CLOSE", "1", 1);
    char *args[] = {argv[0], argv[1], argv[2], "--fatal-close", NULL};
    execv("/proc/self/exe", args);
    _exit(4);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

static void test_args_and_busy(void) {
  xrtBufferHandle a = bo_alloc(64), b = bo_alloc(64), c = bo_alloc(64);
  xrtKernelHandle k = kernel("add_i32");
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunState(r), ERT_CMD_STATE_NEW);
  CHECK_EQ(api.xrtRunWaitFor(r, 5), ERT_CMD_STATE_NEW); /* never started */
  CHECK_EQ(api.xrtRunSetArg(r, 0, a), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, b), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 2, c), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 4, 1u), -EINVAL);
  CHECK_EQ(api.xrtRunSetArg(r, -1, 1u), -EINVAL);
  CHECK_EQ(api.xrtRunSetArg(r, 0, (xrtBufferHandle)NULL), -EINVAL);
  if (plain_mode) {
    CHECK_EQ(api.xrtRunStart(r), -EINVAL); /* argument 3 never set */
    CHECK_EQ(api.xrtRunState(r), ERT_CMD_STATE_NEW);
  } else { /* XDNA mode: unset n reads as 0, so C stays as it was */
    uint32_t *cm = api.xrtBOMap(c);
    for (int i = 0; i < 16; i++) cm[i] = 0x5a5a5a5au;
    to_device(c);
    CHECK_EQ(api.xrtRunStart(r), 0);
    CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
    from_device(c); /* clean lines: refetched from the device side */
    for (int i = 0; i < 16; i++) CHECK_EQ(cm[i], 0x5a5a5a5au);
  }
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);

  /* A long run: WaitFor times out in a non-final state; the BO it uses
   * cannot be freed or synced; the run cannot be restarted until it ends. */
  k = kernel("sleep_ms");
  r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, a), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, 300u), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWaitFor(r, 10), ERT_CMD_STATE_TIMEOUT); /* as XRT: the wait timed out */
  const enum ert_cmd_state s = api.xrtRunState(r);           /* the run goes on */
  if (plain_mode) CHECK(s == ERT_CMD_STATE_QUEUED || s == ERT_CMD_STATE_RUNNING);
  else CHECK_EQ(s, ERT_CMD_STATE_NEW); /* XDNA: amdxdna keeps a running command NEW */
  CHECK_EQ(api.xrtRunStart(r), -EBUSY);
  CHECK_EQ(api.xrtBOSync(a, XCL_BO_SYNC_BO_FROM_DEVICE, 4, 0), -EBUSY);
  CHECK_EQ(api.xrtBOSync(b, XCL_BO_SYNC_BO_TO_DEVICE, 4, 0), 0); /* other BOs are fine */
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  from_device(a);
  CHECK_EQ(*(uint32_t *)api.xrtBOMap(a), 1);
  /* Close while in flight: fatal in XRT (std::abort), so it is counted;
   * the emulator then waits for the run and frees it. */
  const unsigned closes = inflight_closes();
  CHECK_EQ(api.xrtRunSetArg(r, 1, 50u), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(inflight_closes(), closes + 1);
  CHECK_EQ(api.xrtBOFree(a), 0);
  /* A BO freed while a run uses it stays alive until the run ends, as
   * XRT's command holds the xrt::bo of each argument. */
  xrtBufferHandle tmp = bo_alloc(64);
  r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, tmp), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, 30u), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtBOFree(tmp), 0); /* the user's handle goes, the run keeps the BO */
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtRunClose(r), 0);
  /* A BO freed by the user while a run still names it stays alive for the run. */
  r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, b), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, 1u), 0);
  CHECK_EQ(api.xrtBOFree(b), 0);
  CHECK_EQ(api.xrtBOFree(b), -EINVAL); /* still alive (the run names it): double free refused */
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);

  /* The fail kernel ends in ERROR, and again when restarted. */
  k = kernel("fail");
  r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, c), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWait(r), ERT_CMD_STATE_ERROR);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtRunWaitFor(r, 10000), ERT_CMD_STATE_ERROR);
  CHECK_EQ(api.xrtRunState(r), ERT_CMD_STATE_ERROR);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(c), 0);
}

/* Several threads submit to one device at once (for ThreadSanitizer). */
static void *thread_main(void *arg) {
  const int id = (int)(intptr_t)arg;
  enum { n = 512 };
  xrtBufferHandle a = bo_alloc(n * 4), b = bo_alloc(n * 4), c = bo_alloc(n * 4);
  int32_t *ha = api.xrtBOMap(a), *hb = api.xrtBOMap(b), *hc = api.xrtBOMap(c);
  xrtKernelHandle k = kernel("add_i32");
  for (int iter = 0; iter < 20; iter++) {
    for (int i = 0; i < n; i++) {
      ha[i] = i + iter;
      hb[i] = id * 100000;
    }
    to_device(a);
    to_device(b);
    CHECK_EQ(run_add(k, a, b, c, n), ERT_CMD_STATE_COMPLETED);
    from_device(c);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += hc[i] != i + iter + id * 100000;
    CHECK_EQ(bad, 0);
  }
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(a), 0);
  CHECK_EQ(api.xrtBOFree(b), 0);
  CHECK_EQ(api.xrtBOFree(c), 0);
  return NULL;
}

static void test_threads(void) {
  pthread_t t[3];
  for (int i = 0; i < 3; i++)
    CHECK_EQ(pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i), 0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
}

/* Closing a device drains its queue; objects outliving it stay usable to free. */
static void test_close_drains(xrtXclbinHandle x) {
  xrtDeviceHandle d = api.xrtDeviceOpen(0);
  CHECK(d != NULL);
  CHECK_EQ(load(d, x), 0);
  xrtKernelHandle k = api.xrtPLKernelOpen(d, uuid, "sleep_ms");
  CHECK(k != NULL);
  xrtBufferHandle bo = api.xrtBOAlloc(d, 4, XCL_BO_FLAGS_HOST_ONLY, 0);
  xrtRunHandle r = api.xrtRunOpen(k);
  CHECK_EQ(api.xrtRunSetArg(r, 0, bo), 0);
  CHECK_EQ(api.xrtRunSetArg(r, 1, 30u), 0);
  CHECK_EQ(api.xrtRunStart(r), 0);
  CHECK_EQ(api.xrtDeviceClose(d), 0);
  CHECK_EQ(api.xrtRunState(r), ERT_CMD_STATE_COMPLETED);
  CHECK_EQ(api.xrtRunStart(r), -ENODEV);
  CHECK_EQ(api.xrtRunClose(r), 0);
  CHECK_EQ(api.xrtKernelClose(k), 0);
  CHECK_EQ(api.xrtBOFree(bo), 0);
}

int main(int argc, char **argv) {
  bool double_close_child = argc == 4 && !strcmp(argv[3], "--export-double-close");
  bool fatal_child = argc == 4 && !strcmp(argv[3], "--fatal-close");
  if (argc != 3 && !double_close_child && !fatal_child) {
    fprintf(stderr, "usage: %s <libtandem_npu_emu.so> <tandem_emu_kernels.xclbin>\n", argv[0]);
    return 1;
  }
  xclbin_path = argv[2];
  const char *mode = getenv("TANDEM_EMU_MODE");
  plain_mode = mode && !strcmp(mode, "plain");
  const char *seed = getenv("TANDEM_TEST_SEED");
  rng_state = seed ? strtoull(seed, NULL, 0) : 0x9e3779b97f4a7c15ull;
  if (rng_state == 0) rng_state = 1;
  printf("test_emu: seed 0x%llx, %s mode\n", (unsigned long long)rng_state,
         plain_mode ? "PLAIN" : "XDNA");

  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    return 1;
  }
#define RESOLVE(f)                                           \
  api.f = (__typeof__(&f))dlsym(lib, #f);                    \
  if (api.f == NULL) {                                       \
    fprintf(stderr, "%s: missing symbol %s\n", argv[1], #f); \
    return 1;                                                \
  }
  EMU_FUNCS(RESOLVE)
#undef RESOLVE
  bridge_register =
      (__typeof__(&tandemBridgeRegisterXclbin))dlsym(lib, "tandemBridgeRegisterXclbin");
  run_abort = (int (*)(xrtRunHandle))dlsym(lib, "tandemEmuRunAbort");
  *(void **)&bridge.context_open = dlsym(lib, "tandemBridgeContextOpen");
  *(void **)&bridge.context_close = dlsym(lib, "tandemBridgeContextClose");
  *(void **)&bridge.kernel_open = dlsym(lib, "tandemBridgeKernelOpen");
  *(void **)&bridge.kernel_close = dlsym(lib, "tandemBridgeKernelClose");
  *(void **)&bridge.kernel_group = dlsym(lib, "tandemBridgeKernelGroup");
  *(void **)&bridge.run_open = dlsym(lib, "tandemBridgeRunOpen");
  *(void **)&bridge.run_set_buffer = dlsym(lib, "tandemBridgeRunSetBuffer");
  *(void **)&bridge.run_set_u32 = dlsym(lib, "tandemBridgeRunSetU32");
  *(void **)&bridge.run_start = dlsym(lib, "tandemBridgeRunStart");
  *(void **)&bridge.run_wait = dlsym(lib, "tandemBridgeRunWait");
  *(void **)&bridge.run_abort = dlsym(lib, "tandemBridgeRunAbort");
  *(void **)&bridge.run_close = dlsym(lib, "tandemBridgeRunClose");
  for (size_t i = 0; i < sizeof bridge / sizeof(void *); i++)
    if (((void **)&bridge)[i] == NULL) {
      fprintf(stderr, "%s: a tier-1 bridge symbol is missing\n", argv[1]);
      return 1;
    }
  if (!bridge_register || !run_abort) {
    fprintf(stderr, "%s: missing tandemBridgeRegisterXclbin or tandemEmuRunAbort\n", argv[1]);
    return 1;
  }
  *(void **)&inflight_closes = dlsym(lib, "tandemEmuInflightCloses");
  if (!inflight_closes) {
    fprintf(stderr, "%s: missing tandemEmuInflightCloses\n", argv[1]);
    return 1;
  }
  if (double_close_child) export_double_close_child();
  if (fatal_child) fatal_close_child();

  dev = api.xrtDeviceOpen(0);
  xrtXclbinHandle x = api.xrtXclbinAllocFilename(xclbin_path);
  if (dev == NULL || x == NULL) {
    fprintf(stderr, "cannot open the emulated device or %s: %s\n", xclbin_path, strerror(errno));
    return 1;
  }
  CHECK_EQ(api.xrtXclbinGetUUID(x, uuid), 0);
  CHECK_EQ(load(dev, x), 0);
  CHECK_EQ(load(dev, x), 0); /* same xclbin again: no-op */

  test_device_and_xclbin();
  test_matmul_f32();
  test_matmul_i8();
  test_scale_add();
  test_sync_required();
  test_export_import();
  test_export_double_close(argv);
  if (plain_mode) test_plain_flags();
  else {
    test_xdna_flags();
    test_dirty_lines();
    test_slots(x);
    test_context_limit(x);
    test_tdr_reset_abort(x);
    test_bridge_abort_refused(x);
  }
  test_fatal_close(argv);
  test_args_and_busy();
  test_dpu_instructions();
  test_threads();
  test_close_drains(x);

  CHECK_EQ(api.xrtXclbinFreeHandle(x), 0);
  CHECK_EQ(api.xrtDeviceClose(dev), 0);
  /* Exactly one run was closed in flight, on purpose (test_args_and_busy). */
  CHECK_EQ(inflight_closes(), 1);
  dlclose(lib);
  printf("test_emu: %s (%d failed checks)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
