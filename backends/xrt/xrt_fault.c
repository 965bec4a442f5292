/* SPDX-License-Identifier: MIT */
/*
 * xrt_fault.c — numbered fault injection (core/fault.h) for the XRT calls
 * tandem makes through the loaded API table (xrt_api.h).
 *
 * When injection is armed as an NPU opens, the table's fallible entries are
 * swapped for wrappers that ask tandem__fault() and otherwise call the
 * original. XRT handles carry no context, so the originals are kept once per
 * process: a second table from a different library, opened while the first
 * is still loaded, stays unwrapped (tests load one). A failure answers as XRT
 * does: NULL handles and -EIO with errno EIO; a run wait is made and then
 * answers ERT_CMD_STATE_ERROR (the run ended; nothing may be freed under it:
 * a timed wait that ran out, or a failed xrtRunState, waits for the run's
 * end first, as ERROR is final).
 * The bridge's tier-1 calls that make or run something are wrapped too,
 * where the bridge has them (a failure: -EIO and the text "injected fault");
 * its set-argument calls are not, for the reason xrtRunSetArg is not.
 * Not wrapped, with reasons: releases (xrt*Close, xrt*Free: tandem ignores
 * their answer and the object would only leak), xrtBOSize (cannot fail),
 * xrtKernelArgGroupId and xrtRunSetArg (their failure is the answer "not a
 * buffer" / "no such argument", which tandem reports as CONTRACT).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backends/xrt/xrt_api.h"
#include "core/fault.h"

void tandem_xrt_fault_wrap(tandem_xrt_api_t *api);
void tandem_xrt_fault_forget(tandem_xrt_api_t *api);

#ifndef TANDEM_UNTESTABLE

static pthread_mutex_t tandem_xrtf_mutex = PTHREAD_MUTEX_INITIALIZER;
static tandem_xrt_api_t tandem_xrtf_real; /* [mutex] the wrapped table's originals */
static unsigned tandem_xrtf_users;        /* [mutex] wrapped tables alive */

#define F(name) tandem__fault(TANDEM__FAULT_XRT, #name)
#define FAIL_INT() (errno = EIO, -EIO)

static xrtDeviceHandle tandem_xrtf_xrtDeviceOpen(unsigned int index) {
  if (F(xrtDeviceOpen)) return errno = EIO, NULL;
  return tandem_xrtf_real.xrtDeviceOpen(index);
}
static int tandem_xrtf_xrtDeviceLoadXclbinHandle(xrtDeviceHandle d, xrtXclbinHandle x) {
  if (F(xrtDeviceLoadXclbinHandle)) return FAIL_INT();
  return tandem_xrtf_real.xrtDeviceLoadXclbinHandle(d, x);
}
static xrtXclbinHandle tandem_xrtf_xrtXclbinAllocFilename(const char *path) {
  if (F(xrtXclbinAllocFilename)) return errno = EIO, NULL;
  return tandem_xrtf_real.xrtXclbinAllocFilename(path);
}
static int tandem_xrtf_xrtXclbinGetUUID(xrtXclbinHandle x, xuid_t out) {
  if (F(xrtXclbinGetUUID)) return FAIL_INT();
  return tandem_xrtf_real.xrtXclbinGetUUID(x, out);
}
static xrtKernelHandle tandem_xrtf_xrtPLKernelOpen(xrtDeviceHandle d, const xuid_t id,
                                                   const char *name) {
  if (F(xrtPLKernelOpen)) return errno = EIO, NULL;
  return tandem_xrtf_real.xrtPLKernelOpen(d, id, name);
}
static xrtBufferHandle tandem_xrtf_xrtBOAlloc(xrtDeviceHandle d, size_t size, xrtBufferFlags fl,
                                              xrtMemoryGroup grp) {
  if (F(xrtBOAlloc)) return errno = EIO, NULL;
  return tandem_xrtf_real.xrtBOAlloc(d, size, fl, grp);
}
static xrtBufferHandle tandem_xrtf_xrtBOImport(xrtDeviceHandle d, xclBufferExportHandle e) {
  if (F(xrtBOImport)) return errno = EIO, NULL;
  return tandem_xrtf_real.xrtBOImport(d, e);
}
static xclBufferExportHandle tandem_xrtf_xrtBOExport(xrtBufferHandle b) {
  if (F(xrtBOExport)) return errno = EIO, XRT_NULL_BO_EXPORT;
  return tandem_xrtf_real.xrtBOExport(b);
}
static void *tandem_xrtf_xrtBOMap(xrtBufferHandle b) {
  if (F(xrtBOMap)) return errno = EIO, NULL;
  return tandem_xrtf_real.xrtBOMap(b);
}
static int tandem_xrtf_xrtBOSync(xrtBufferHandle b, enum xclBOSyncDirection dir, size_t size,
                                 size_t offset) {
  if (F(xrtBOSync)) return FAIL_INT();
  return tandem_xrtf_real.xrtBOSync(b, dir, size, offset);
}
static xrtRunHandle tandem_xrtf_xrtRunOpen(xrtKernelHandle k) {
  if (F(xrtRunOpen)) return errno = EIO, NULL;
  return tandem_xrtf_real.xrtRunOpen(k);
}
static int tandem_xrtf_xrtRunStart(xrtRunHandle r) {
  if (F(xrtRunStart)) return FAIL_INT();
  return tandem_xrtf_real.xrtRunStart(r);
}
/* ERROR is a final state: when an injected one is answered, the run must
 * really be over (XRT says so only of a run that ended), so a wait that ran
 * out (the watchdog's short wait, or xrtRunState on a run still going) is
 * made whole first; otherwise tandem would reuse or free a run still in
 * flight on the word of the injection alone. */
static enum ert_cmd_state tandem_xrtf_xrtRunWaitFor(xrtRunHandle r, unsigned int ms) {
  bool fail = F(xrtRunWaitFor);
  enum ert_cmd_state s = tandem_xrtf_real.xrtRunWaitFor(r, ms);
  if (fail && ms != 0) (void)tandem_xrtf_real.xrtRunWait(r);
  return fail ? ERT_CMD_STATE_ERROR : s;
}
static enum ert_cmd_state tandem_xrtf_xrtRunState(xrtRunHandle r) {
  if (F(xrtRunState)) return (void)tandem_xrtf_real.xrtRunWait(r), ERT_CMD_STATE_ERROR;
  return tandem_xrtf_real.xrtRunState(r);
}

#define INJECTED(msg, cap) ((msg) && (cap) ? snprintf((msg), (cap), "injected fault") : 0, -EIO)

static int tandem_xrtf_tandemBridgeContextOpen(void *d, const char *path, void **out, char *msg,
                                               size_t cap) {
  if (F(tandemBridgeContextOpen)) return *out = NULL, INJECTED(msg, cap);
  return tandem_xrtf_real.tandemBridgeContextOpen(d, path, out, msg, cap);
}
static int tandem_xrtf_tandemBridgeKernelOpen(void *c, const char *name, void **out, char *msg,
                                              size_t cap) {
  if (F(tandemBridgeKernelOpen)) return *out = NULL, INJECTED(msg, cap);
  return tandem_xrtf_real.tandemBridgeKernelOpen(c, name, out, msg, cap);
}
static int tandem_xrtf_tandemBridgeRunOpen(void *k, void **out, char *msg, size_t cap) {
  if (F(tandemBridgeRunOpen)) return *out = NULL, INJECTED(msg, cap);
  return tandem_xrtf_real.tandemBridgeRunOpen(k, out, msg, cap);
}
static int tandem_xrtf_tandemBridgeRunStart(void *r, char *msg, size_t cap) {
  if (F(tandemBridgeRunStart)) return INJECTED(msg, cap);
  return tandem_xrtf_real.tandemBridgeRunStart(r, msg, cap);
}
/* As xrtRunWaitFor's: the wait is made, then fails. */
static int tandem_xrtf_tandemBridgeRunWait(void *r, unsigned ms, char *msg, size_t cap) {
  bool fail = F(tandemBridgeRunWait);
  int s = tandem_xrtf_real.tandemBridgeRunWait(r, ms, msg, cap);
  return fail ? INJECTED(msg, cap) : s;
}

/* clang-format off */
#define TANDEM_XRTF_BRIDGE(X)                                                         \
  X(tandemBridgeContextOpen) X(tandemBridgeKernelOpen) X(tandemBridgeRunOpen)          \
  X(tandemBridgeRunStart) X(tandemBridgeRunWait)

#define TANDEM_XRTF_FALLIBLE(X)                                                               \
  X(xrtDeviceOpen) X(xrtDeviceLoadXclbinHandle) X(xrtXclbinAllocFilename) X(xrtXclbinGetUUID) \
  X(xrtPLKernelOpen) X(xrtBOAlloc) X(xrtBOImport) X(xrtBOExport) X(xrtBOMap) X(xrtBOSync)     \
  X(xrtRunOpen) X(xrtRunStart) X(xrtRunWaitFor) X(xrtRunState)
/* clang-format on */

void tandem_xrt_fault_wrap(tandem_xrt_api_t *api) {
  if (!tandem__fault_armed()) return;
  pthread_mutex_lock(&tandem_xrtf_mutex);
#define SAME(name) &&(tandem_xrtf_users == 0 || tandem_xrtf_real.name == api->name)
  bool ok = true TANDEM_XRTF_FALLIBLE(SAME) TANDEM_XRTF_BRIDGE(SAME);
#undef SAME
  if (ok) {
    if (tandem_xrtf_users++ == 0) tandem_xrtf_real = *api;
#define SWAP(name) api->name = tandem_xrtf_##name;
    TANDEM_XRTF_FALLIBLE(SWAP)
#undef SWAP
    /* Only the bridge calls this library has: NULL stays NULL. */
#define SWAP_PRESENT(name) \
  if (api->name) api->name = tandem_xrtf_##name;
    TANDEM_XRTF_BRIDGE(SWAP_PRESENT)
#undef SWAP_PRESENT
  }
  pthread_mutex_unlock(&tandem_xrtf_mutex);
}

void tandem_xrt_fault_forget(tandem_xrt_api_t *api) {
  pthread_mutex_lock(&tandem_xrtf_mutex);
  if (api->xrtDeviceOpen == tandem_xrtf_xrtDeviceOpen && tandem_xrtf_users > 0) tandem_xrtf_users--;
  pthread_mutex_unlock(&tandem_xrtf_mutex);
}

#else /* TANDEM_UNTESTABLE */

void tandem_xrt_fault_wrap(tandem_xrt_api_t *api) { (void)api; }
void tandem_xrt_fault_forget(tandem_xrt_api_t *api) { (void)api; }

#endif
