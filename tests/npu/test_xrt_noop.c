/* SPDX-License-Identifier: MIT */
/*
 * test_xrt_noop.c — tandem's XRT loader (backends/xrt/xrt_api.c, flavor
 * TANDEM_XRT_REAL) against the real XRT 2.13 libraries:
 *
 *  1. no device:  XCL_EMULATION_MODE unset, the hardware shim loaded;
 *                 xrtDeviceOpen(0) must return NULL with errno ENOENT and the
 *                 process must exit cleanly (no abort).
 *  2. noop flow:  XCL_EMULATION_MODE=noop (set here with setenv, before the
 *                 load); a hand-made xclbin (xclbin_builder.c); device open,
 *                 xclbin alloc + load, xrtPLKernelOpen, argument group ids,
 *                 3 BOs (alloc, size, map, sync both ways), run open, set args,
 *                 start, wait, states, close everything.
 *  3. noop errors: what XRT rejects (bad file, wrong uuid, unknown kernel,
 *                 each required xclbin section missing).
 *
 * Each case runs in its own forked child with an alarm, so an XRT abort, crash
 * or hang is a reported failure rather than the end of the test, and so the
 * two XRT shims (hardware, noop) are never loaded into one process. The noop
 * shim computes nothing: only the plumbing is checked (README-noop.md).
 * Exit: 0 pass, 1 fail, 77 skip (XRT libraries not installed).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/xrt/xrt_api.h"
#include "tests/npu/xclbin_builder.h"
#include "xclbin.h"

enum { kPass = 0, kFail = 1, kSkip = 77, kChildSeconds = 60 };
enum { kBoBytes = 4096, kArgs = 4, kBuffers = 3 };

static const char *const kArgNames[kArgs] = {"a", "b", "c", "n"};
static const int kArgIsBuffer[kArgs] = {1, 1, 1, 0};

static char g_dir[256]; /* private temp dir for the xclbin files */

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
      ok = 0;                                                         \
      goto done;                                                      \
    }                                                                 \
  } while (0)

static int load_real(tandem_xrt_api_t *api) {
  tandem_status_t s = tandem_xrt_api_load(TANDEM_XRT_REAL, NULL, api);
  if (s == TANDEM_OK) return kPass;
  fprintf(stderr, "tandem_xrt_api_load(REAL): %s: %s\n", tandem_status_name(s),
          tandem_error_message());
  return s == TANDEM_ERROR_NO_DEVICE ? kSkip : kFail;
}

/* Case 1: the hardware shim with no device. */
static int case_no_device(void) {
  int ok = 1;
  unsetenv("XCL_EMULATION_MODE");
  tandem_xrt_api_t api;
  int rc = load_real(&api);
  if (rc != kPass) return rc;
  printf("no-device: loaded %s\n", api.description);
  errno = 0;
  xrtDeviceHandle dev = api.xrtDeviceOpen(0);
  int err = errno;
  if (dev) {
    printf("no-device: an XRT device 0 exists here; the no-device check does not apply\n");
    CHECK(api.xrtDeviceClose(dev) == 0, "xrtDeviceClose");
  } else {
    CHECK(err == ENOENT, "errno %d (%s), expected ENOENT", err, strerror(err));
    printf("no-device: xrtDeviceOpen(0) = NULL, errno ENOENT\n");
  }
done:
  tandem_xrt_api_unload(&api);
  return ok ? kPass : kFail;
}

static int write_xclbin(const char *name, unsigned char uuid[16], char *path, size_t cap) {
  snprintf(path, cap, "%s/%s", g_dir, name);
  return tandem_test_xclbin_write(path, "vadd", kArgNames, kArgIsBuffer, kArgs, uuid);
}

/* Case 2: the whole call sequence on the noop shim. */
static int case_noop_flow(void) {
  int ok = 1;
  setenv("XCL_EMULATION_MODE", "noop", 1);
  tandem_xrt_api_t api;
  int rc = load_real(&api);
  if (rc != kPass) return rc == kSkip ? kFail : rc; /* case 1 found XRT */
  printf("noop: loaded %s\n", api.description);

  xrtDeviceHandle dev = NULL;
  xrtXclbinHandle xclbin = NULL;
  xrtKernelHandle kernel = NULL;
  xrtBufferHandle bo[kBuffers] = {NULL, NULL, NULL};
  xrtRunHandle run = NULL;
  unsigned char uuid[16], got_uuid[16];
  char path[512];

  CHECK(strstr(api.description, "libxrt_noop") != NULL, "loader did not pick the noop shim");
  CHECK(write_xclbin("vadd.xclbin", uuid, path, sizeof path) == 0, "writing %s", path);

  dev = api.xrtDeviceOpen(0);
  CHECK(dev != NULL, "xrtDeviceOpen(0) on noop: errno %d", errno);
  xclbin = api.xrtXclbinAllocFilename(path);
  CHECK(xclbin != NULL, "xrtXclbinAllocFilename(%s)", path);
  CHECK(api.xrtXclbinGetUUID(xclbin, got_uuid) == 0, "xrtXclbinGetUUID");
  CHECK(memcmp(uuid, got_uuid, 16) == 0, "xclbin uuid differs from the one written");
  CHECK(api.xrtDeviceLoadXclbinHandle(dev, xclbin) == 0, "xrtDeviceLoadXclbinHandle");
  kernel = api.xrtPLKernelOpen(dev, uuid, "vadd");
  CHECK(kernel != NULL, "xrtPLKernelOpen(vadd)");

  int group[kBuffers];
  for (int i = 0; i < kBuffers; i++) {
    group[i] = api.xrtKernelArgGroupId(kernel, i);
    CHECK(group[i] == 0, "group id of buffer arg %d is %d, expected bank 0", i, group[i]);
  }
  /* The scalar has no memory connection: XRT reports an error (-1). */
  CHECK(api.xrtKernelArgGroupId(kernel, 3) < 0, "scalar arg 3 has a group id");
  CHECK(api.xrtKernelArgGroupId(kernel, 4) < 0, "arg 4 (out of range) has a group id");

  for (int i = 0; i < kBuffers; i++) {
    bo[i] = api.xrtBOAlloc(dev, kBoBytes, XRT_BO_FLAGS_NONE, (xrtMemoryGroup)group[i]);
    CHECK(bo[i] != NULL, "xrtBOAlloc %d", i);
    CHECK(api.xrtBOSize(bo[i]) == kBoBytes, "xrtBOSize %d = %zu", i, api.xrtBOSize(bo[i]));
    uint32_t *p = api.xrtBOMap(bo[i]);
    CHECK(p != NULL, "xrtBOMap %d", i);
    for (uint32_t j = 0; j < kBoBytes / 4; j++) p[j] = (uint32_t)i * 100000u + j;
    CHECK(api.xrtBOSync(bo[i], XCL_BO_SYNC_BO_TO_DEVICE, kBoBytes, 0) == 0, "sync to %d", i);
    CHECK(api.xrtBOSync(bo[i], XCL_BO_SYNC_BO_TO_DEVICE, 256, 1024) == 0, "range sync %d", i);
  }

  run = api.xrtRunOpen(kernel);
  CHECK(run != NULL, "xrtRunOpen");
  enum ert_cmd_state st = api.xrtRunState(run);
  CHECK(st == ERT_CMD_STATE_NEW, "state of a new run %d", (int)st);
  for (int i = 0; i < kBuffers; i++)
    CHECK(api.xrtRunSetArg(run, i, bo[i]) == 0, "xrtRunSetArg %d", i);
  CHECK(api.xrtRunSetArg(run, 3, (unsigned int)(kBoBytes / 4)) == 0, "xrtRunSetArg n");
  CHECK(api.xrtRunSetArg(run, 4, 0u) != 0, "xrtRunSetArg of a nonexistent arg 4 succeeded");

  for (int round = 0; round < 2; round++) {
    CHECK(api.xrtRunStart(run) == 0, "xrtRunStart (round %d)", round);
    st = api.xrtRunState(run);
    CHECK(st == ERT_CMD_STATE_NEW || st == ERT_CMD_STATE_QUEUED || st == ERT_CMD_STATE_SUBMITTED ||
              st == ERT_CMD_STATE_RUNNING || st == ERT_CMD_STATE_COMPLETED,
          "state after start %d", (int)st);
    st = round == 0 ? api.xrtRunWaitFor(run, 5000) : api.xrtRunWait(run);
    CHECK(st == ERT_CMD_STATE_COMPLETED, "wait returned %d", (int)st);
    CHECK(api.xrtRunState(run) == ERT_CMD_STATE_COMPLETED, "state after wait %d",
          (int)api.xrtRunState(run));
  }

  /* Noop computes nothing: the buffers keep what the host wrote. */
  for (int i = 0; i < kBuffers; i++) {
    CHECK(api.xrtBOSync(bo[i], XCL_BO_SYNC_BO_FROM_DEVICE, kBoBytes, 0) == 0, "sync from %d", i);
    const uint32_t *p = api.xrtBOMap(bo[i]);
    CHECK(p != NULL, "xrtBOMap %d again", i);
    for (uint32_t j = 0; j < kBoBytes / 4; j++)
      CHECK(p[j] == (uint32_t)i * 100000u + j, "bo %d word %u changed to %u", i, j, p[j]);
  }
  printf("noop: open, load, kernel, 3 BOs, 2 runs: all calls succeeded\n");

done:
  /* XRT 2.13 crashes or hangs at exit if handles are left open: close all. */
  if (run && api.xrtRunClose(run) != 0) ok = 0, fprintf(stderr, "FAIL xrtRunClose\n");
  for (int i = 0; i < kBuffers; i++)
    if (bo[i] && api.xrtBOFree(bo[i]) != 0) ok = 0, fprintf(stderr, "FAIL xrtBOFree %d\n", i);
  if (kernel && api.xrtKernelClose(kernel) != 0) ok = 0, fprintf(stderr, "FAIL xrtKernelClose\n");
  if (xclbin && api.xrtXclbinFreeHandle(xclbin) != 0)
    ok = 0, fprintf(stderr, "FAIL xrtXclbinFreeHandle\n");
  if (dev && api.xrtDeviceClose(dev) != 0) ok = 0, fprintf(stderr, "FAIL xrtDeviceClose\n");
  tandem_xrt_api_unload(&api);
  return ok ? kPass : kFail;
}

/* Writes the builder's xclbin with section |kind| hidden (its header's kind
 * changed to VENDER_METADATA, which XRT ignores). */
static int write_without(enum axlf_section_kind kind, unsigned char uuid[16], char *path,
                         size_t cap) {
  void *data = NULL;
  size_t size = 0;
  if (tandem_test_xclbin_build("vadd", kArgNames, kArgIsBuffer, kArgs, &data, &size, uuid))
    return -1;
  struct axlf *top = data;
  int hidden = 0;
  for (uint32_t i = 0; i < top->m_header.m_numSections; i++)
    if (top->m_sections[i].m_sectionKind == (uint32_t)kind) {
      top->m_sections[i].m_sectionKind = VENDER_METADATA;
      hidden++;
    }
  snprintf(path, cap, "%s/without_%d.xclbin", g_dir, (int)kind);
  FILE *f = fopen(path, "wb");
  int bad = !f || hidden != 1 || fwrite(data, 1, size, f) != size;
  if (f && fclose(f) != 0) bad = 1;
  free(data);
  return bad ? -1 : 0;
}

/* Opens |path| on |dev|, loads it and opens kernel vadd. Returns the kernel
 * (or NULL); |*out_xclbin| is set for the caller to free. */
static xrtKernelHandle try_kernel(tandem_xrt_api_t *api, xrtDeviceHandle dev, const char *path,
                                  const unsigned char uuid[16], xrtXclbinHandle *out_xclbin) {
  *out_xclbin = api->xrtXclbinAllocFilename(path);
  if (!*out_xclbin) return NULL;
  if (api->xrtDeviceLoadXclbinHandle(dev, *out_xclbin) != 0) return NULL;
  return api->xrtPLKernelOpen(dev, uuid, "vadd");
}

/* Case 3: what the real library rejects, and which sections it needs. */
static int case_noop_errors(void) {
  int ok = 1;
  setenv("XCL_EMULATION_MODE", "noop", 1);
  tandem_xrt_api_t api;
  int rc = load_real(&api);
  if (rc != kPass) return rc == kSkip ? kFail : rc;
  xrtDeviceHandle dev = NULL;
  xrtXclbinHandle x = NULL;
  xrtKernelHandle k = NULL;
  unsigned char uuid[16], wrong[16];
  char path[512];

  dev = api.xrtDeviceOpen(0);
  CHECK(dev != NULL, "xrtDeviceOpen(0) on noop");

  snprintf(path, sizeof path, "%s/garbage.xclbin", g_dir);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL, "create %s", path);
  fputs("this is not an xclbin, not even close to one", f);
  fclose(f);
  CHECK(api.xrtXclbinAllocFilename(path) == NULL, "garbage file accepted as an xclbin");
  snprintf(path, sizeof path, "%s/missing.xclbin", g_dir);
  CHECK(api.xrtXclbinAllocFilename(path) == NULL, "missing file accepted");

  /* Each section XRT needs, hidden in turn. The device load itself accepts
   * any well-formed xclbin on noop; the kernel open (or group id) fails. */
  const enum axlf_section_kind needed_for_open[] = {MEM_TOPOLOGY, IP_LAYOUT, EMBEDDED_METADATA};
  for (size_t i = 0; i < sizeof needed_for_open / sizeof needed_for_open[0]; i++) {
    CHECK(write_without(needed_for_open[i], uuid, path, sizeof path) == 0, "write %s", path);
    k = try_kernel(&api, dev, path, uuid, &x);
    CHECK(x != NULL, "xclbin without section %d not even allocated", (int)needed_for_open[i]);
    CHECK(k == NULL, "kernel opened without section %d", (int)needed_for_open[i]);
    CHECK(api.xrtXclbinFreeHandle(x) == 0, "xrtXclbinFreeHandle");
    x = NULL;
  }
  CHECK(write_without(CONNECTIVITY, uuid, path, sizeof path) == 0, "write %s", path);
  k = try_kernel(&api, dev, path, uuid, &x);
  CHECK(k != NULL, "kernel did not open without CONNECTIVITY");
  CHECK(api.xrtKernelArgGroupId(k, 0) < 0, "group id without CONNECTIVITY");
  CHECK(api.xrtKernelClose(k) == 0, "xrtKernelClose");
  k = NULL;
  CHECK(api.xrtXclbinFreeHandle(x) == 0, "xrtXclbinFreeHandle");
  x = NULL;

  /* The full xclbin, but a wrong uuid or kernel name. */
  CHECK(write_xclbin("full.xclbin", uuid, path, sizeof path) == 0, "write %s", path);
  memcpy(wrong, uuid, 16);
  wrong[15] ^= 0x5a;
  k = try_kernel(&api, dev, path, wrong, &x);
  CHECK(x != NULL && k == NULL, "kernel opened with a wrong xclbin uuid");
  CHECK(api.xrtPLKernelOpen(dev, uuid, "nope") == NULL, "unknown kernel opened");
  k = api.xrtPLKernelOpen(dev, uuid, "vadd");
  CHECK(k != NULL, "kernel vadd with the right uuid");
  printf("noop errors: bad file, missing sections, wrong uuid, unknown kernel rejected\n");

done:
  if (k && api.xrtKernelClose(k) != 0) ok = 0, fprintf(stderr, "FAIL xrtKernelClose\n");
  if (x && api.xrtXclbinFreeHandle(x) != 0) ok = 0, fprintf(stderr, "FAIL xrtXclbinFree\n");
  if (dev && api.xrtDeviceClose(dev) != 0) ok = 0, fprintf(stderr, "FAIL xrtDeviceClose\n");
  tandem_xrt_api_unload(&api);
  return ok ? kPass : kFail;
}

/* Runs |fn| in a child; returns its exit code, or kFail if it was killed. */
static int in_child(const char *name, int (*fn)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return kFail;
  }
  if (pid == 0) {
    alarm(kChildSeconds);
    int rc = fn();
    fflush(NULL);
    exit(rc); /* normal exit: XRT's static destructors run and are checked */
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      perror("waitpid");
      return kFail;
    }
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "FAIL %s: child killed by signal %d (%s)%s\n", name, WTERMSIG(status),
            strsignal(WTERMSIG(status)), WTERMSIG(status) == SIGALRM ? ": hung" : "");
    return kFail;
  }
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : kFail;
  printf("%s: %s\n", name, rc == kPass ? "pass" : rc == kSkip ? "skip" : "FAIL");
  return rc;
}

/* Case 4: XRT found through XILINX_XRT (AMD's installs are off the loader's
 * path): a folder holding links to the system's libraries is where both are
 * loaded from, and the description names it (tandem devices prints it). */
static int case_xilinx_xrt(void) {
  int ok = 1;
  setenv("XCL_EMULATION_MODE", "noop", 1);
  tandem_xrt_api_t api;
  memset(&api, 0, sizeof api);
  char lib[300], link[400], real[4096];
  snprintf(lib, sizeof lib, "%s/lib", g_dir);
  CHECK(mkdir(lib, 0700) == 0, "mkdir %s", lib);
  static const char *const names[2] = {"libxrt_noop.so.2", "libxrt_coreutil.so.2"};
  /* Found without loading them here (XRT's libraries never unload, and a
   * loaded one would be reused whatever the path). */
  static const char *const dirs[3] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                      "/usr/lib"};
  for (int i = 0; i < 2; i++) {
    real[0] = '\0';
    for (int d = 0; d < 3 && !real[0]; d++) {
      snprintf(real, sizeof real, "%s/%s", dirs[d], names[i]);
      if (access(real, R_OK) != 0) real[0] = '\0';
    }
    if (!real[0]) {
      printf("xilinx-xrt: %s not in a system folder; case skipped\n", names[i]);
      goto done;
    }
    snprintf(link, sizeof link, "%s/%s", lib, names[i]);
    CHECK(symlink(real, link) == 0, "symlink %s", link);
  }
  setenv("XILINX_XRT", g_dir, 1);
  CHECK(load_real(&api) == kPass, "loading through XILINX_XRT");
  printf("xilinx-xrt: loaded %s\n", api.description);
  CHECK(strstr(api.description, "tandem-noop-") != NULL, "the description names %s", lib);
done:
  tandem_xrt_api_unload(&api);
  return ok ? kPass : kFail;
}

static void remove_dir(void) {
  static const char *const files[] = {
      "vadd.xclbin",      "full.xclbin",          "garbage.xclbin",
      "without_2.xclbin", "without_6.xclbin",     "without_7.xclbin",
      "without_8.xclbin", "lib/libxrt_noop.so.2", "lib/libxrt_coreutil.so.2"};
  char path[512];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", g_dir, files[i]);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/lib", g_dir);
  rmdir(path);
  rmdir(g_dir);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int rc = in_child("no-device", case_no_device);
  if (rc == kSkip) {
    printf("SKIP: XRT 2.13 (libxrt_core.so.2 / libxrt_coreutil.so.2) is not installed\n");
    return kSkip;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/tandem-noop-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return kFail;
  }
  int fail = rc != kPass;
  fail |= in_child("noop-flow", case_noop_flow) != kPass;
  fail |= in_child("noop-errors", case_noop_errors) != kPass;
  fail |= in_child("xilinx-xrt", case_xilinx_xrt) != kPass;
  remove_dir();
  printf("%s\n", fail ? "FAIL" : "PASS");
  return fail ? kFail : kPass;
}
