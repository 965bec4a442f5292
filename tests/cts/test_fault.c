/* SPDX-License-Identifier: MIT */
/*
 * test_fault.c — numbered fault injection over representative scenarios
 * (SQLite's malloc_common.tcl loop): for N = 1, 2, ... the Nth counted
 * native call fails (tandem_test_fault_set, tandem_testing.h), transient and
 * then persistent, until a run of the scenario reaches no call N. Each run
 * must end with every call answering OK or exactly the code the
 * documentation names for a site that failed (site_code), with a message;
 * FAILED_DEPENDENCY only where a call reads or waits for failed work;
 * dependents failed rather than wrong, no hang (every wait is bounded, and an
 * alarm names N if anything blocks), live bytes 0 and no validation message
 * at teardown, and afterwards the runtime lost exactly when a failed site
 * lost the device (new submissions answer DEVICE_LOST, for good), otherwise
 * still usable. Leaks show under LeakSanitizer (ASan build).
 * Scenarios, in groups (k_groups):
 *   gpu      a budget + open + a trace + buffers + a kernel read from a file
 *            + prepare (a graph with a Vulkan commands node among its nodes)
 *            + submit twice + a blocking map that waits for them + the
 *            profile's timestamps + map, with an exported and re-imported
 *            buffer and an exported timeline imported back and waited on,
 *            where the device can;
 *   sets     the same on descriptor sets (a kept pool reset), its kernel from
 *            misaligned memory, a spec-constant kernel and a kernel whose
 *            literal LocalSize is rewritten;
 *   npu      the same with an NPU run on the emulated NPU (XRT bridge);
 *   plain    the same in the emulator's PLAIN mode (XRT's C API);
 *   own      a runtime on the test's own VkDevice (runtime option
 *            vulkan_device) running an adopted pipeline on an adopted buffer,
 *            where a failure anywhere must leave the device as the test made
 *            it (one device serves every run; any object tandem left on it is
 *            reported when it is destroyed at the end), and the teardown;
 *   session  a native session's stages around a submission on its lane;
 *   watchdog an NPU run past npu_timeout_ms on XRT's C path, run twice.
 * test_fault [KIND [GROUP [SITES_FILE]]] runs one kind ("alloc", "vulkan",
 * "xrt"; default all) and one group (default all, then the coverage check
 * too); CTest runs one entry per kind and group, each writing the sites it
 * reached, then "test_fault coverage FILE..." (test_fault_coverage) checks
 * that every site in the sources was reached. Label "vulkan".
 */
#include "harness.h"
#include "tandem/tandem_vulkan.h"

#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tandem_test_shaders.h"

#define WAIT_NS (30ull * 1000000000ull)
#define N 1024u /* uints per buffer */

static uint32_t g_kinds = TANDEM_TEST_FAULT_ALL;
/* What an open without faults finds: an open that succeeds under a fault must
 * find the same (issue 11 item 4: a failed allocation used to drop the
 * device's extensions silently; sharing must not fall back silently either). */
static uint32_t g_features;
static tandem_sharing_t g_sharing;
/* The own-device scenario's device, raw buffer and pipeline (made once, by
 * the harness's own Vulkan calls, which injection never reaches), and the
 * features a runtime on that device reports without faults. */
static th_vk_device_t *g_own;
static th_vk_buffer_t g_own_buffer;
static th_vk_pipeline_t g_own_pipeline;
static uint32_t g_own_features;
static volatile sig_atomic_t g_at; /* the N of the run in progress, for the alarm */
static bool g_persistent;          /* the mode of the run in progress */
/* add_one_u32's SPIR-V in a file: the GPU scenario loads its kernel from it. */
static char g_spv_path[64];
/* The descriptor-sets variant of the GPU scenario (TANDEM_VK_PUSH_DESCRIPTORS=0
 * while it runs: prepare fills a descriptor pool, and a second prepare
 * resets it): its kernel comes from memory instead, at an address that is
 * not 4-byte aligned (tandem copies it to aligned words), and a kernel with
 * a specialization constant is made too. */
static bool g_sets;
static uint8_t *g_misaligned_spv; /* add_one_u32's words, one byte past an aligned address */
/* How the NPU opened without faults, per emulator mode (TANDEM_EMU_MODE:
 * XDNA through the emulated bridge, PLAIN through XRT's C API). */
static tandem_sharing_t g_sharing_xdna, g_sharing_plain;

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_fault: a run did not finish within 120 s (hang); N = ";
  char num[24];
  int len = 0;
  uint64_t v = (uint64_t)g_at;
  char rev[24];
  do rev[len++] = (char)('0' + v % 10);
  while ((v /= 10) && len < 23);
  for (int i = 0; i < len; i++) num[i] = rev[len - 1 - i];
  num[len] = '\n';
  (void)!write(2, msg, sizeof msg - 1);
  (void)!write(2, num, (size_t)len + 1);
  _exit(1);
}

/* One run's bookkeeping: which calls failed, and the first unexpected answer. */
typedef struct run {
  uint32_t failures;
  char unexpected[1536];
  bool lost; /* some call answered DEVICE_LOST */
} run_t;

/* The code the documentation names for an injected failure of |site|, the
 * one a call that meets it must answer (tandem.h's Errors lines, the fault
 * kinds of tandem_testing.h):
 *   - an allocation ("file:line"): OUT_OF_MEMORY;
 *   - a Vulkan call: what tandem maps the injected VkResult to
 *     (vk_device.c): VK_ERROR_DEVICE_LOST for submits, waits, signals,
 *     counter reads and timestamp readback, which lose the runtime for good;
 *     VK_ERROR_OUT_OF_HOST_MEMORY (OUT_OF_MEMORY) for every other call;
 *   - an XRT call: NO_DEVICE for opening the device (open_npu), OUT_OF_MEMORY
 *     for a buffer object that could not be made or mapped (buffer_create,
 *     the sharing probes of open_npu), IO for a failed xrtBOSync (everywhere,
 *     issue 19 item 7) and for an xclbin, kernel or hardware context that
 *     could not be loaded (npu_program_create: "xclbin unreadable"),
 *     INTERNAL for a run that could not be opened (prepare: "a Vulkan or XRT
 *     call, named") or that failed to start, be waited for or report its
 *     state (completion_wait: "INTERNAL when an NPU run failed"). A run that
 *     outlived the watchdog is waited for with xrtRunWaitFor (bounded)
 *     before it is reused or closed, so that site covers that wait too;
 *     tandem no longer calls the unbounded xrtRunWait. */
static tandem_status_t site_code(const char *site) {
  if (strchr(site, ':')) return TANDEM_ERROR_OUT_OF_MEMORY;
  static const char *const k_lost[] = {"vkQueueSubmit2",
                                       "vkGetQueryPoolResults",
                                       "vkWaitSemaphores",
                                       "vkSignalSemaphore",
                                       "vkGetSemaphoreCounterValue",
                                       "vkWaitForFences",
                                       "vkQueueWaitIdle",
                                       "vkDeviceWaitIdle"};
  for (size_t i = 0; i < sizeof k_lost / sizeof k_lost[0]; i++)
    if (strcmp(site, k_lost[i]) == 0) return TANDEM_ERROR_DEVICE_LOST;
  if (strncmp(site, "vk", 2) == 0) return TANDEM_ERROR_OUT_OF_MEMORY;
  static const struct {
    const char *site;
    tandem_status_t code;
  } k_xrt[] = {
      {"xrtDeviceOpen", TANDEM_ERROR_NO_DEVICE},
      {"xrtBOAlloc", TANDEM_ERROR_OUT_OF_MEMORY},
      {"xrtBOMap", TANDEM_ERROR_OUT_OF_MEMORY},
      /* Not reached here (the dma-buf paths): xrt_npu.c answers UNSUPPORTED. */
      {"xrtBOImport", TANDEM_ERROR_UNSUPPORTED},
      {"xrtBOExport", TANDEM_ERROR_UNSUPPORTED},
      {"xrtBOSync", TANDEM_ERROR_IO},
      {"xrtXclbinAllocFilename", TANDEM_ERROR_IO},
      {"xrtXclbinGetUUID", TANDEM_ERROR_IO},
      {"xrtDeviceLoadXclbinHandle", TANDEM_ERROR_IO},
      {"xrtPLKernelOpen", TANDEM_ERROR_IO},
      {"tandemBridgeContextOpen", TANDEM_ERROR_IO},
      {"tandemBridgeKernelOpen", TANDEM_ERROR_IO},
      {"xrtRunOpen", TANDEM_ERROR_INTERNAL},
      {"tandemBridgeRunOpen", TANDEM_ERROR_INTERNAL},
      {"xrtRunStart", TANDEM_ERROR_INTERNAL},
      {"tandemBridgeRunStart", TANDEM_ERROR_INTERNAL},
      {"xrtRunWaitFor", TANDEM_ERROR_INTERNAL},
      {"tandemBridgeRunWait", TANDEM_ERROR_INTERNAL},
      {"xrtRunState", TANDEM_ERROR_INTERNAL},
  };
  for (size_t i = 0; i < sizeof k_xrt / sizeof k_xrt[0]; i++)
    if (strcmp(site, k_xrt[i].site) == 0) return k_xrt[i].code;
  fail_msg("test_fault: no documented code for the injected failure of %s: add it to site_code",
           site);
  return TANDEM_ERROR_INTERNAL;
}

/* Codes as a bit set: bit -code (TANDEM_OK is bit 0). */
#define CODE_BIT(s) (1u << (unsigned)(-(int)(s)))

/* The codes of every site made to fail so far in this run
 * (tandem_test_fault_failed_sites: one site when transient, every site
 * counted after N when persistent), and the names for a message. */
static uint32_t failed_codes(char *names, size_t cap) {
  const char *sites[64];
  uint32_t n = 0;
  TH_ASSERT_OK(tandem_test_fault_failed_sites(sites, 64, &n));
  uint32_t codes = 0;
  size_t len = 0;
  if (names && cap) names[0] = '\0';
  for (uint32_t i = 0; i < n && i < 64; i++) {
    codes |= CODE_BIT(site_code(sites[i]));
    if (names && len + 1 < cap)
      len += (size_t)snprintf(names + len, cap - len, "%s%s %s", i ? ", " : "", sites[i],
                              tandem_status_name(site_code(sites[i])));
  }
  return codes;
}

/* Did the sites failed so far lose the device? */
static bool failed_lost(void) { return failed_codes(NULL, 0) & CODE_BIT(TANDEM_ERROR_DEVICE_LOST); }

/* Did a call that GPU timestamps need for calibration fail? Then traces and
 * profiles are UNSUPPORTED (naming the reason), the documented answer. */
static bool calibration_failed(void) {
  const char *sites[64];
  uint32_t n = 0;
  TH_ASSERT_OK(tandem_test_fault_failed_sites(sites, 64, &n));
  bool calibration = false;
  for (uint32_t i = 0; i < n && i < 64; i++)
    calibration |= strcmp(sites[i], "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT") == 0 ||
                   strcmp(sites[i], "vkGetCalibratedTimestampsEXT") == 0;
  return calibration;
}

/* Checks one call's answer: OK, or exactly a code of a site that failed (and
 * FAILED_DEPENDENCY too where the call may read or wait for the result of
 * failed work: |dependent|), with a message. */
static bool step_as(run_t *r, tandem_status_t s, const char *what, bool dependent) {
  if (s == TANDEM_OK) return true;
  r->failures++;
  if (s == TANDEM_ERROR_DEVICE_LOST) r->lost = true;
  char m[512];
  snprintf(m, sizeof m, "%s", tandem_error_message());
  char names[400];
  uint32_t codes = failed_codes(names, sizeof names);
  if (dependent) codes |= CODE_BIT(TANDEM_ERROR_FAILED_DEPENDENCY);
  codes &= ~CODE_BIT(TANDEM_OK);
  if (getenv("TANDEM_FAULT_LOG"))
    fprintf(stderr, "FLOG %d %llu [%s] | %s | %s | %s\n", (int)g_persistent,
            (unsigned long long)g_at, names, what, tandem_status_name(s), m);
  if ((!(codes & CODE_BIT(s)) || !m[0]) && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected,
             "%.300s answered %s with message '%.500s'; the failed sites [%.400s] name %s", what,
             tandem_status_name(s), m, names[0] ? names : "none",
             dependent ? "those codes or FAILED_DEPENDENCY" : "those codes");
  return false;
}
static bool step(run_t *r, tandem_status_t s, const char *what) {
  return step_as(r, s, what, false);
}
#define STEP(r, expr) step_as((r), (expr), #expr, false)
/* A call that reads bytes or waits for work that a failure may have reached. */
#define DEP_STEP(r, expr) step_as((r), (expr), #expr, true)

/* The scenarios' kernel: add_one_u32 over N words (one binding, |contract|,
 * push constant n) on the runtime's GPU |gpu|. */
static tandem_kernel_desc_t add_one_desc(const tandem_binding_contract_t *contract, uint32_t gpu) {
  return (tandem_kernel_desc_t){.struct_size = sizeof(tandem_kernel_desc_t),
                                .name = "add_one_u32",
                                .spirv = tandem_spv_add_one_u32,
                                .spirv_size = tandem_spv_add_one_u32_size,
                                .workgroups = {N / 256, 1, 1},
                                .bindings = contract,
                                .binding_count = 1,
                                .push_constant_bytes = 4,
                                .gpu = gpu};
}

static tandem_status_t wait_bounded(tandem_completion_t *c, run_t *r) {
  tandem_status_t s = tandem_completion_wait_timeout(c, WAIT_NS);
  if (s == TANDEM_ERROR_TIMEOUT && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected, "a completion did not finish within 30 s");
  return s;
}

/* After the fault run, with injection off: the runtime is lost exactly when
 * a failed site lost the device (design.md Device loss: every path that
 * sees DEVICE_LOST makes the runtime lost, for good: new submissions answer
 * DEVICE_LOST, again and again); otherwise it is still usable: new work
 * runs and writes its bytes. tandem has no separate "is lost" query: a
 * submission is the query. |lost_sites| is what failed_lost() said before
 * injection was turned off. */
static void lost_exactly_when_due(tandem_runtime_t *rt, run_t *r, bool npu, uint32_t features,
                                  const tandem_test_fault_report_t *rep, bool lost_sites) {
  bool must_be_lost = lost_sites;
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  TH_ASSERT_OK(tandem_runtime_gpu_info(rt, 0, &info));
  if (info.features != features && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected,
             "the GPU opened with features 0x%x, without faults 0x%x", info.features, features);
  if (npu) {
    tandem_npu_info_t ni;
    tandem_npu_info_init(&ni);
    TH_ASSERT_OK(tandem_runtime_npu_info(rt, &ni));
    if (ni.sharing != g_sharing && !r->unexpected[0])
      snprintf(r->unexpected, sizeof r->unexpected,
               "the NPU opened sharing by '%s', without "
               "faults by '%s'",
               tandem_sharing_name(ni.sharing), tandem_sharing_name(g_sharing));
  }
  tandem_buffer_t *b = NULL;
  tandem_graph_t *g = NULL;
  tandem_exec_t *e = NULL;
  tandem_completion_t *c = NULL;
  tandem_status_t s = tandem_buffer_create(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE, &b);
  if (s == TANDEM_OK) s = tandem_graph_create(rt, &g);
  if (s == TANDEM_OK) s = tandem_graph_add_fill(g, tandem_buffer_whole(b), 7u, TANDEM_LANE_AUTO);
  if (s == TANDEM_OK) s = tandem_graph_prepare(g, &e);
  if (s == TANDEM_OK) s = tandem_exec_submit(e, &c);
  if (s == TANDEM_OK) {
    s = tandem_completion_wait_timeout(c, WAIT_NS);
    tandem_completion_release(c);
  }
  if (s == TANDEM_OK) {
    tandem_map_t m;
    s = tandem_map_read(tandem_buffer_whole(b), &m);
    if (s == TANDEM_OK) {
      if (((const uint32_t *)m.data)[1023] != 7u && !r->unexpected[0])
        snprintf(r->unexpected, sizeof r->unexpected, "after the fault: the fill wrote %u",
                 ((const uint32_t *)m.data)[1023]);
      tandem_unmap(&m);
    }
  }
  if (must_be_lost && s != TANDEM_ERROR_DEVICE_LOST && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected,
             "%s answered DEVICE_LOST%s, yet afterwards the runtime answered %s to new work "
             "instead of DEVICE_LOST (lost is for good)",
             rep->first_site, r->lost ? " (and a call passed it on)" : "", tandem_status_name(s));
  if (!must_be_lost && s != TANDEM_OK && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected,
             "no failed site lost the device, yet afterwards new work answered %s (%s): the "
             "runtime must still be usable",
             tandem_status_name(s), tandem_error_message());
  if (s == TANDEM_ERROR_DEVICE_LOST && e) {
    /* Lost is for good: the next submission fails fast the same way. */
    tandem_status_t again = tandem_exec_submit(e, &c);
    if (again != TANDEM_ERROR_DEVICE_LOST && !r->unexpected[0])
      snprintf(r->unexpected, sizeof r->unexpected,
               "after DEVICE_LOST the next submission answered %s", tandem_status_name(again));
    if (again == TANDEM_OK) tandem_completion_release(c);
  }
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(b);
}

/* Interop inside the GPU scenario, where the device has the extensions: the
 * device buffer was made exportable; export it and import it back into the
 * same runtime (another VkBuffer over the same memory), and export the
 * compute lane's timeline. The fd of a failed import must still be the
 * caller's, that of a successful one must be gone. */
static bool fd_is(int fd, const struct stat *was) {
  struct stat now;
  return fstat(fd, &now) == 0 && now.st_dev == was->st_dev && now.st_ino == was->st_ino;
}

static bool interop_steps(run_t *r, tandem_runtime_t *rt, tandem_buffer_t *dev) {
  tandem_external_memory_t m;
  tandem_external_memory_init(&m);
  if (!STEP(r, tandem_buffer_export_fd(dev, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &m))) return false;
  struct stat was;
  fstat(m.fd, &was);
  tandem_buffer_t *imported = NULL;
  bool ok = STEP(r, tandem_buffer_import_fd(rt, &m, N * 4, TANDEM_PLACEMENT_GPU_LOCAL, &imported));
  if (ok == fd_is(m.fd, &was) && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected, "import %s but the fd %s",
             ok ? "succeeded" : "failed", ok ? "is still open" : "was closed");
  if (!ok) close(m.fd);
  tandem_buffer_release(imported);
  if (ok && (g_features & TANDEM_GPU_EXTERNAL_SEMAPHORE_FD)) {
    int fd = -1;
    ok = STEP(r, tandem_runtime_export_timeline_fd(rt, TANDEM_LANE_COMPUTE, &fd));
    /* Imported back and waited on (value 0, reached): an interop wait. */
    tandem_external_timeline_t *tl = NULL;
    if (ok && !(ok = STEP(r, tandem_runtime_import_timeline_fd(rt, fd, &tl))))
      close(fd); /* still the caller's after a failed import */
    if (ok) ok = STEP(r, tandem_external_timeline_wait(tl, 0, WAIT_NS));
    tandem_external_timeline_destroy(tl);
  }
  return ok;
}

/* The GPU scenario: upload, add one twice (two submissions, the second after
 * the first), download, check. With the extensions, the device buffer is
 * exportable and interop_steps run on it. */
/* A Vulkan commands node that reads |dev| and records nothing but asks for
 * its view: the handoff's recording path under every failure. */
static tandem_status_t record_view_only(void *user, const tandem_vulkan_scope_t *scope) {
  (void)user;
  tandem_vulkan_view_t v;
  return tandem_vulkan_scope_view(scope, 0, &v);
}

static void scenario_gpu(run_t *r, bool npu, tandem_test_fault_report_t *rep) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  th_options_validated(&o);
  bool interop = !npu && (g_features & TANDEM_GPU_EXTERNAL_MEMORY_FD);
  o.export_timelines = interop;
  o.gpu_timestamps = true; /* the profile's readback is one more call to fail */
  if (npu) {
    o.npu_backend = "emulated";
    o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  }
  tandem_runtime_t *rt = NULL;
  tandem_buffer_t *hv = NULL, *dev = NULL;
  tandem_kernel_t *k = NULL;
  tandem_npu_program_t *p = NULL;
  tandem_graph_t *g = NULL;
  tandem_exec_t *e = NULL;
  tandem_completion_t *c1 = NULL, *c2 = NULL;
  tandem_budget_t *budget = NULL; /* every buffer charged to a shared budget */
  bool ok = STEP(r, tandem_budget_create(64u << 20, &budget));
  o.budget = budget;
  ok = ok && STEP(r, tandem_runtime_create(&o, &rt));
  bool opened = ok && STEP(r, npu ? tandem_runtime_open_npu(rt) : tandem_runtime_open_gpu(rt));
  ok = opened;
  /* A trace records every retirement (and its timestamps). A trace needs
   * calibrated GPU timestamps; a failed calibrateable-domains query while
   * the device opened leaves it without them, and trace_start then answers
   * UNSUPPORTED (naming the fix), which is the documented answer there. */
  bool tracing = false;
  if (ok) {
    tandem_status_t ts = tandem_runtime_trace_start(rt, 64);
    tracing = ts == TANDEM_OK;
    if (!(ts == TANDEM_ERROR_UNSUPPORTED && calibration_failed()))
      step(r, ts, "tandem_runtime_trace_start(rt, 64)");
  }
  ok = ok && STEP(r, tandem_buffer_create(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &hv));
  if (interop) {
    ok = ok && STEP(r, tandem_buffer_create_exportable(rt, N * 4, TANDEM_PLACEMENT_GPU_LOCAL,
                                                       TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &dev));
    ok = ok && interop_steps(r, rt, dev);
  } else {
    ok = ok &&
         STEP(r, tandem_buffer_create(
                     rt, N * 4, npu ? TANDEM_PLACEMENT_SHARED : TANDEM_PLACEMENT_GPU_LOCAL, &dev));
  }
  if (ok) {
    tandem_map_t m;
    ok = STEP(r, tandem_map_write(tandem_buffer_whole(hv), &m));
    if (ok) {
      for (uint32_t i = 0; i < N; i++) ((uint32_t *)m.data)[i] = i;
      tandem_unmap(&m);
    }
  }
  if (ok) {
    tandem_binding_contract_t b = {N * 4, 4, TANDEM_ACCESS_READ_WRITE};
    tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                              .name = "add_one_u32",
                              .spirv_path = g_spv_path, /* read from a file */
                              .workgroups = {N / 256, 1, 1},
                              .bindings = &b,
                              .binding_count = 1,
                              .push_constant_bytes = 4};
    if (g_sets) {
      d.spirv = g_misaligned_spv;
      d.spirv_size = tandem_spv_add_one_u32_size;
      d.spirv_path = NULL;
    }
    ok = STEP(r, tandem_kernel_create(rt, &d, &k));
    if (ok && g_sets) {
      /* A kernel with a specialization constant set (its reflection is
       * kept for tandem_kernel_spec_constant_info), made and released. */
      tandem_binding_contract_t sb = {40, 4, TANDEM_ACCESS_WRITE};
      tandem_spec_constant_t sc = {.id = 11, .type = TANDEM_SCALAR_UINT32, .value.u32 = 9};
      tandem_kernel_desc_t sd = {.struct_size = sizeof(tandem_kernel_desc_t),
                                 .name = "spec_types",
                                 .spirv = tandem_spv_spec_types,
                                 .spirv_size = tandem_spv_spec_types_size,
                                 .workgroups = {1, 1, 1},
                                 .bindings = &sb,
                                 .binding_count = 1,
                                 .spec_constants = &sc,
                                 .spec_constant_count = 1};
      tandem_kernel_t *spec = NULL;
      ok = STEP(r, tandem_kernel_create(rt, &sd, &spec));
      tandem_kernel_release(spec);
      /* A kernel whose literal LocalSize (1,1,1: it declares none) is
       * rewritten to 256 in a copy of its module
       * (TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE), made and released. */
      tandem_binding_contract_t lb[2] = {{N * 4, 4, TANDEM_ACCESS_READ},
                                         {N * 4, 4, TANDEM_ACCESS_WRITE}};
      tandem_kernel_desc_t ld = {.struct_size = sizeof(tandem_kernel_desc_t),
                                 .name = "no_local_size",
                                 .spirv = tandem_spv_no_local_size,
                                 .spirv_size = tandem_spv_no_local_size_size,
                                 .workgroups = {N / 256, 1, 1},
                                 .local_size = {256, 1, 1},
                                 .flags = TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE,
                                 .bindings = lb,
                                 .binding_count = 2};
      tandem_kernel_t *rewritten = NULL;
      ok = ok && STEP(r, tandem_kernel_create(rt, &ld, &rewritten));
      tandem_kernel_release(rewritten);
    }
  }
  if (ok && npu) {
    /* sleep_ms(buffer, 0 ms) of the emulated kernels: an NPU region between
     * the two dispatches that reads and writes |dev| (its bytes unchanged). */
    tandem_binding_contract_t b = {N * 4, 4, TANDEM_ACCESS_READ_WRITE};
    tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                   .program_path = TANDEM_TEST_EMU_XCLBIN,
                                   .kernel_name = "sleep_ms",
                                   .bindings = &b,
                                   .binding_count = 1,
                                   .scalar_count = 1};
    ok = STEP(r, tandem_npu_program_create(rt, &d, &p));
  }
  ok = ok && STEP(r, tandem_graph_create(rt, &g));
  uint32_t n = N, zero = 0;
  tandem_view_t vd = tandem_buffer_whole(dev);
  ok = ok && STEP(r, tandem_graph_add_copy(g, tandem_buffer_whole(hv), vd, TANDEM_LANE_AUTO));
  ok = ok && STEP(r, tandem_graph_add_dispatch(g, k, &vd, 1, &n, sizeof n));
  tandem_access_decl_t handoff = {vd, TANDEM_ACCESS_READ};
  ok = ok && STEP(r, tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, &handoff, 1,
                                                      record_view_only, NULL));
  if (npu) ok = ok && STEP(r, tandem_graph_add_npu_run(g, p, &vd, 1, &zero, 1));
  ok = ok && STEP(r, tandem_graph_add_dispatch(g, k, &vd, 1, &n, sizeof n));
  ok = ok && STEP(r, tandem_graph_add_copy(g, vd, tandem_buffer_whole(hv), TANDEM_LANE_AUTO));
  if (ok && g_sets) {
    /* Prepared once and released: its descriptor pool is kept, and the
     * prepare below takes it and resets it (vkResetDescriptorPool). */
    ok = STEP(r, tandem_graph_prepare(g, &e));
    tandem_exec_release(e);
    e = NULL;
  }
  ok = ok && STEP(r, tandem_graph_prepare(g, &e));
  bool s1 = ok && STEP(r, tandem_exec_submit(e, &c1));
  /* Refused with FAILED_DEPENDENCY when the first already failed. */
  bool s2 = s1 && DEP_STEP(r, tandem_exec_submit_after(e, &c1, 1, &c2));
  if (s2) {
    /* A blocking map of what both write: it waits for them (a map wait),
     * and fails with FAILED_DEPENDENCY if either did. */
    tandem_map_t m;
    if (DEP_STEP(r, tandem_map_read(tandem_buffer_whole(hv), &m))) tandem_unmap(&m);
  }
  bool w1 = s1 && STEP(r, wait_bounded(c1, r));
  /* Its own failure, or FAILED_DEPENDENCY when the first failed. */
  bool w2 = s2 && DEP_STEP(r, wait_bounded(c2, r));
  if (s1 && !w1 && w2 && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected,
             "the first submission failed but the one ordered after it succeeded");
  if (w1) {
    /* Timestamps read back: missing only with a reason the profile names. */
    tandem_completion_profile_t prof;
    tandem_completion_profile_init(&prof);
    if (STEP(r, tandem_completion_profile(c1, &prof, NULL, 0))) {
      if (prof.gpu_times_status == TANDEM_ERROR_DEVICE_LOST) r->lost = true;
      /* Exactly: DEVICE_LOST only when a failed site lost the device,
       * OUT_OF_MEMORY only when one ran out of memory, UNSUPPORTED only
       * when the calibration the times need failed to be made. */
      uint32_t codes = failed_codes(NULL, 0);
      bool calibration = calibration_failed();
      bool documented = prof.gpu_times_status == TANDEM_OK ||
                        (prof.gpu_times_status == TANDEM_ERROR_UNSUPPORTED && calibration) ||
                        (prof.gpu_times_status != TANDEM_ERROR_UNSUPPORTED &&
                         (codes & CODE_BIT(prof.gpu_times_status)));
      if ((!documented || prof.gpu_times_valid != (prof.gpu_times_status == TANDEM_OK)) &&
          !r->unexpected[0])
        snprintf(r->unexpected, sizeof r->unexpected,
                 "the profile says gpu_times_valid %d with gpu_times_status %s",
                 prof.gpu_times_valid, tandem_status_name(prof.gpu_times_status));
    }
  }
  if (w1 && w2) {
    /* Both ran: each run copies hv in, adds one twice, copies back: +4. */
    tandem_map_t m;
    if (STEP(r, tandem_map_read(tandem_buffer_whole(hv), &m))) {
      for (uint32_t i = 0; i < N && !r->unexpected[0]; i++) {
        /* sleep_ms sets element 0 to 1 between the two adds of each run. */
        uint32_t expect = npu && i == 0 ? 2 : i + 4;
        if (((const uint32_t *)m.data)[i] != expect)
          snprintf(r->unexpected, sizeof r->unexpected,
                   "all calls succeeded but element %u is %u, expected %u", i,
                   ((const uint32_t *)m.data)[i], expect);
      }
      tandem_unmap(&m);
    }
  }
  if (c1) tandem_completion_release(c1);
  if (c2) tandem_completion_release(c2);
  if (tracing) {
    tandem_trace_t *t = NULL;
    if (STEP(r, tandem_runtime_trace_stop(rt, &t))) {
      uint32_t count = 0;
      tandem_trace_events(t, &count);
      uint32_t want = (w1 ? 1u : 0u) + (w2 ? 1u : 0u);
      if (count < want && !r->unexpected[0])
        snprintf(r->unexpected, sizeof r->unexpected,
                 "the trace holds %u events, but %u submissions succeeded", count, want);
      tandem_trace_release(t);
    }
  }
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_npu_program_release(p);
  tandem_kernel_release(k);
  tandem_buffer_release(dev);
  tandem_buffer_release(hv);
  TH_ASSERT_OK(tandem_test_fault_report(rep));
  bool lost_sites = failed_lost();
  tandem_test_fault_set(NULL); /* what follows is the check, not the scenario */
  if (opened) lost_exactly_when_due(rt, r, npu, g_features, rep, lost_sites);
  if (rt) th_runtime_destroy(rt);
  if (budget && tandem_budget_used(budget) != 0 && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected,
             "the budget still holds %llu bytes after every buffer was released",
             (unsigned long long)tandem_budget_used(budget));
  tandem_budget_release(budget);
}

/* The own-device scenario: a runtime on g_own, the raw buffer adopted
 * HOST_VISIBLE (tandem maps it) and the raw add_one pipeline adopted; write,
 * add one twice, read, check. */
static void scenario_own(run_t *r, bool npu, tandem_test_fault_report_t *rep) {
  (void)npu;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.vulkan_device = th_vk_device_desc(g_own);
  tandem_runtime_t *rt = NULL;
  tandem_buffer_t *b = NULL;
  tandem_kernel_t *k = NULL;
  tandem_graph_t *g = NULL;
  tandem_exec_t *e = NULL;
  tandem_completion_t *c = NULL;
  bool opened = STEP(r, tandem_runtime_create(&o, &rt));
  bool ok = opened;
  tandem_vulkan_buffer_t bd =
      th_vk_buffer_desc(&g_own_buffer, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  ok = ok && STEP(r, tandem_buffer_adopt_vulkan(rt, &bd, &b));
  tandem_binding_contract_t contract = {N * 4, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_vulkan_kernel_t kd = {
      .struct_size = sizeof(tandem_vulkan_kernel_t),
      .device = g_own_pipeline.device,
      .pipeline = g_own_pipeline.pipeline,
      .pipeline_layout = g_own_pipeline.layout,
      .set_layout = g_own_pipeline.set_layout,
      .kernel = &(tandem_kernel_desc_t){.struct_size = sizeof(tandem_kernel_desc_t),
                                        .name = "adopted_add_one",
                                        .spirv = tandem_spv_add_one_u32,
                                        .spirv_size = tandem_spv_add_one_u32_size,
                                        .workgroups = {N / 256, 1, 1},
                                        .bindings = &contract,
                                        .binding_count = 1,
                                        .push_constant_bytes = 4}};
  ok = ok && STEP(r, tandem_kernel_adopt_vulkan(rt, &kd, &k));
  if (ok) {
    tandem_map_t m;
    ok = STEP(r, tandem_map_write(tandem_buffer_whole(b), &m));
    if (ok) {
      for (uint32_t i = 0; i < N; i++) ((uint32_t *)m.data)[i] = i;
      tandem_unmap(&m);
    }
  }
  uint32_t n = N;
  tandem_view_t v = tandem_buffer_whole(b);
  ok = ok && STEP(r, tandem_graph_create(rt, &g));
  ok = ok && STEP(r, tandem_graph_add_dispatch(g, k, &v, 1, &n, sizeof n));
  ok = ok && STEP(r, tandem_graph_add_dispatch(g, k, &v, 1, &n, sizeof n));
  ok = ok && STEP(r, tandem_graph_prepare(g, &e));
  ok = ok && STEP(r, tandem_exec_submit(e, &c));
  ok = ok && STEP(r, wait_bounded(c, r));
  if (ok) {
    tandem_map_t m;
    if (STEP(r, tandem_map_read(tandem_buffer_whole(b), &m))) {
      for (uint32_t i = 0; i < N && !r->unexpected[0]; i++)
        if (((const uint32_t *)m.data)[i] != i + 2)
          snprintf(r->unexpected, sizeof r->unexpected,
                   "all calls succeeded but element %u of the adopted buffer is %u, expected %u", i,
                   ((const uint32_t *)m.data)[i], i + 2);
      tandem_unmap(&m);
    }
  }
  if (c) tandem_completion_release(c);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
  TH_ASSERT_OK(tandem_test_fault_report(rep));
  bool lost_sites = failed_lost();
  tandem_test_fault_set(NULL);
  if (opened) lost_exactly_when_due(rt, r, false, g_own_features, rep, lost_sites);
  if (rt) th_runtime_destroy(rt);
}

/* The session scenario (tandem.h, "Native sessions"): a session on its own
 * lane; a stage writes |b| (the client's own work would), a graph that adds
 * one to |b| is submitted while a second stage over both halves of |b| is
 * open (so it waits on the GPU for the session's value), the stage ends and
 * the submission runs; a third stage reads |b| and ends failed, which
 * quarantines the session: its next begin is FAILED_DEPENDENCY whatever
 * was injected. Every call answers OK or the code of a failed site. */
static void scenario_session(run_t *r, bool npu, tandem_test_fault_report_t *rep) {
  (void)npu;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  th_options_validated(&o);
  tandem_runtime_t *rt = NULL;
  tandem_buffer_t *b = NULL;
  tandem_kernel_t *k = NULL;
  tandem_graph_t *g = NULL;
  tandem_exec_t *e = NULL;
  tandem_completion_t *c = NULL;
  tandem_session_t *sess = NULL;
  bool ok = STEP(r, tandem_runtime_create(&o, &rt));
  bool opened = ok && STEP(r, tandem_runtime_open_gpu(rt));
  ok = opened;
  ok = ok && STEP(r, tandem_buffer_create(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &b));
  tandem_binding_contract_t contract = {N * 4, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t d = add_one_desc(&contract, 0);
  ok = ok && STEP(r, tandem_kernel_create(rt, &d, &k));
  uint32_t n = N;
  tandem_view_t v = ok ? tandem_buffer_whole(b) : (tandem_view_t){0};
  ok = ok && STEP(r, tandem_graph_create(rt, &g));
  ok = ok && STEP(r, tandem_graph_add_dispatch(g, k, &v, 1, &n, sizeof n));
  ok = ok && STEP(r, tandem_graph_prepare(g, &e));
  ok = ok && STEP(r, tandem_session_create(rt, "fault", &sess));
  bool wrote = false;
  if (ok) {
    tandem_session_access_t w = {v, TANDEM_ACCESS_WRITE};
    ok = STEP(r, tandem_session_begin(sess, &w, 1, WAIT_NS));
    ok = ok && STEP(r, tandem_session_end(sess, TANDEM_OK));
    wrote = ok;
  }
  bool submitted = false, ran = false;
  if (ok) {
    /* Two accesses: the session's records grow. */
    tandem_session_access_t rw[2] = {
        {{b, 0, N * 2}, TANDEM_ACCESS_READ_WRITE},
        {{b, N * 2, N * 2}, TANDEM_ACCESS_READ_WRITE},
    };
    ok = STEP(r, tandem_session_begin(sess, rw, 2, WAIT_NS));
    if (ok) {
      submitted = STEP(r, tandem_exec_submit(e, &c)); /* waits for the stage on the GPU */
      ok = STEP(r, tandem_session_end(sess, TANDEM_OK));
    }
    if (submitted) ran = DEP_STEP(r, wait_bounded(c, r));
    ok = ok && ran;
  }
  if (ok) {
    tandem_session_access_t rd = {v, TANDEM_ACCESS_READ};
    ok = STEP(r, tandem_session_begin(sess, &rd, 1, WAIT_NS));
    ok = ok && STEP(r, tandem_session_end(sess, TANDEM_ERROR_INTERNAL));
    if (ok) {
      tandem_status_t q = tandem_session_begin(sess, &rd, 1, WAIT_NS);
      if (q != TANDEM_ERROR_FAILED_DEPENDENCY && !r->unexpected[0])
        snprintf(r->unexpected, sizeof r->unexpected,
                 "a quarantined session's begin answered %s, not FAILED_DEPENDENCY (%s)",
                 tandem_status_name(q), tandem_error_message());
      if (q == TANDEM_OK) tandem_session_end(sess, TANDEM_OK);
    }
  }
  if (wrote && ran && ok) {
    /* The stage wrote nothing over the zero-fill; the graph added one. */
    tandem_map_t m;
    if (STEP(r, tandem_map_read(v, &m))) {
      for (uint32_t i = 0; i < N && !r->unexpected[0]; i++)
        if (((const uint32_t *)m.data)[i] != 1u)
          snprintf(r->unexpected, sizeof r->unexpected,
                   "all calls succeeded but element %u is %u, expected 1", i,
                   ((const uint32_t *)m.data)[i]);
      tandem_unmap(&m);
    }
  }
  if (c) tandem_completion_release(c);
  tandem_session_destroy(sess);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
  TH_ASSERT_OK(tandem_test_fault_report(rep));
  bool lost_sites = failed_lost();
  tandem_test_fault_set(NULL);
  if (opened) lost_exactly_when_due(rt, r, false, g_features, rep, lost_sites);
  if (rt) th_runtime_destroy(rt);
}

/* The two-GPU scenario (issue 25): two host GPUs in one runtime, a copy
 * from a HOST_VISIBLE buffer of GPU 0 to one of GPU 1 (staged through host
 * memory both import, the upload waiting for the download through the
 * relay), prepared, submitted and checked. Every call answers OK or the code
 * of a failed site; a run that succeeded carries the bytes. */
static void scenario_gpus(run_t *r, bool npu, tandem_test_fault_report_t *rep) {
  (void)npu;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  th_options_validated(&o);
  o.gpu_count = 2;
  o.gpus[0] = (tandem_gpu_choice_t){"host", 0};
  o.gpus[1] = (tandem_gpu_choice_t){"host", 1};
  th__host_twins_register();
  tandem_runtime_t *rt = NULL;
  tandem_buffer_t *a = NULL, *b = NULL;
  tandem_kernel_t *k = NULL;
  tandem_graph_t *g = NULL;
  tandem_exec_t *e = NULL;
  tandem_completion_t *c = NULL;
  bool ok = STEP(r, tandem_runtime_create(&o, &rt));
  ok = ok && STEP(r, tandem_buffer_create_on(rt, 0, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &a));
  ok = ok && STEP(r, tandem_buffer_create_on(rt, 1, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE, &b));
  tandem_map_t m;
  ok = ok && STEP(r, tandem_map_write(tandem_buffer_whole(a), &m));
  if (ok) {
    for (uint32_t i = 0; i < N; i++) ((uint32_t *)m.data)[i] = i * 7u + 1u;
    tandem_unmap(&m);
  }
  ok = ok && STEP(r, tandem_graph_create(rt, &g));
  ok = ok && STEP(r, tandem_graph_add_copy(g, tandem_buffer_whole(a), tandem_buffer_whole(b),
                                           TANDEM_LANE_AUTO));
  /* Then one added to every word on GPU 1 (the test shader's host twin). */
  tandem_binding_contract_t contract = {N * 4, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t d = add_one_desc(&contract, 1);
  ok = ok && STEP(r, tandem_kernel_create(rt, &d, &k));
  uint32_t n = N;
  tandem_view_t v = ok ? tandem_buffer_whole(b) : (tandem_view_t){0};
  ok = ok && STEP(r, tandem_graph_add_dispatch(g, k, &v, 1, &n, sizeof n));
  ok = ok && STEP(r, tandem_graph_prepare(g, &e));
  ok = ok && STEP(r, tandem_exec_submit(e, &c));
  ok = ok && DEP_STEP(r, wait_bounded(c, r));
  if (ok && STEP(r, tandem_map_read(tandem_buffer_whole(b), &m))) {
    for (uint32_t i = 0; i < N && !r->unexpected[0]; i++)
      if (((const uint32_t *)m.data)[i] != i * 7u + 2u)
        snprintf(r->unexpected, sizeof r->unexpected,
                 "all calls succeeded but word %u on GPU 1 is %u, expected %u (GPU 0's %u "
                 "plus one)",
                 i, ((const uint32_t *)m.data)[i], i * 7u + 2u, i * 7u + 1u);
    tandem_unmap(&m);
  }
  if (c) tandem_completion_release(c);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(a);
  tandem_buffer_release(b);
  TH_ASSERT_OK(tandem_test_fault_report(rep));
  tandem_test_fault_set(NULL);
  if (rt) th_runtime_destroy(rt);
}

/* The watchdog scenario, on XRT's C path (the emulator in PLAIN mode, each
 * run delayed 100 ms, abortably: TANDEM_EMU_DELAY_US): an NPU run with a
 * 10 ms npu_timeout_ms is submitted twice on one graph slot. The first
 * wait (xrtRunWaitFor) times out, xrtRunState says the run is still going,
 * tandem aborts it and the completion is TIMEOUT; the second submission
 * reuses the run, so a bounded xrtRunWaitFor waits for the aborted one first. A watchdog
 * expiry is not a loss: the runtime stays usable. */
static void scenario_watchdog(run_t *r, bool npu, tandem_test_fault_report_t *rep) {
  (void)npu;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  th_options_validated(&o);
  o.npu_backend = "emulated";
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  o.npu_timeout_ms = 10;
  o.graph_slots = 1;
  tandem_runtime_t *rt = NULL;
  tandem_buffer_t *x = NULL;
  tandem_npu_program_t *p = NULL;
  tandem_graph_t *g = NULL;
  tandem_exec_t *e = NULL;
  bool ok = STEP(r, tandem_runtime_create(&o, &rt));
  bool opened = ok && STEP(r, tandem_runtime_open_npu(rt));
  ok = opened;
  ok = ok && STEP(r, tandem_buffer_create(rt, 4096, TANDEM_PLACEMENT_SHARED, &x));
  /* WRITE: a later run is ordered after a timed-out one but does not read
   * its poisoned bytes, so it is not refused. */
  tandem_binding_contract_t b = {4096, 4, TANDEM_ACCESS_WRITE};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .program_path = TANDEM_TEST_EMU_XCLBIN,
                                 .kernel_name = "sleep_ms",
                                 .bindings = &b,
                                 .binding_count = 1,
                                 .scalar_count = 1};
  ok = ok && STEP(r, tandem_npu_program_create(rt, &d, &p));
  ok = ok && STEP(r, tandem_graph_create(rt, &g));
  tandem_view_t xv = ok ? tandem_buffer_whole(x) : (tandem_view_t){0};
  uint32_t zero = 0;
  ok = ok && STEP(r, tandem_graph_add_npu_run(g, p, &xv, 1, &zero, 1));
  ok = ok && STEP(r, tandem_graph_prepare(g, &e));
  for (int round = 0; round < 2 && ok; round++) {
    tandem_completion_t *c = NULL;
    ok = STEP(r, tandem_exec_submit(e, &c));
    if (!ok) break;
    /* Unbounded (the alarm catches a hang): TIMEOUT is the run's result. */
    tandem_status_t s = tandem_completion_wait(c);
    tandem_completion_release(c);
    if (s == TANDEM_OK && !r->unexpected[0])
      snprintf(r->unexpected, sizeof r->unexpected,
               "an NPU run delayed 100 ms succeeded under a 10 ms watchdog");
    else if (s != TANDEM_ERROR_TIMEOUT)
      ok = step(r, s, "tandem_completion_wait(c) of a run past the watchdog");
  }
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_npu_program_release(p);
  tandem_buffer_release(x);
  TH_ASSERT_OK(tandem_test_fault_report(rep));
  bool lost_sites = failed_lost();
  tandem_test_fault_set(NULL);
  if (opened) lost_exactly_when_due(rt, r, true, g_features, rep, lost_sites);
  if (rt) th_runtime_destroy(rt);
}

/* The teardown scenario: numbered faults in the runtime's destruction only.
 * Injection is armed from the start (so the device's calls are wrapped) but
 * fails nothing until the work is done; then it is armed again, counting from
 * 1, for tandem_runtime_destroy alone, whose calls are then numbered the same
 * in every run (the work's semaphore polls vary in number, so counted from
 * the start the destruction's calls would move and be skipped). The
 * destruction waits for the queues (vkDeviceWaitIdle, then vkQueueWaitIdle of
 * each queue when that fails; on the application's device, the run with
 * |own|, vkQueueWaitIdle of tandem's queues only): a failed wait must still tear down with no
 * validation message (the layer reports any object destroyed while in use,
 * and any left behind) and nothing leaked (ASan). */
static void scenario_teardown(run_t *r, bool own, tandem_test_fault_report_t *rep) {
  tandem_test_fault_t quiet = {.fail_at = UINT64_MAX, .kinds = g_kinds};
  TH_ASSERT_OK(tandem_test_fault_set(&quiet));
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  th_options_validated(&o);
  if (own) o.vulkan_device = th_vk_device_desc(g_own); /* waits queue by queue */
  tandem_runtime_t *rt = NULL;
  tandem_buffer_t *b = NULL;
  tandem_kernel_t *k = NULL;
  tandem_graph_t *g = NULL;
  tandem_exec_t *e = NULL;
  tandem_completion_t *c = NULL;
  bool ok = STEP(r, tandem_runtime_create(&o, &rt));
  ok = ok && STEP(r, tandem_runtime_open_gpu(rt));
  ok = ok && STEP(r, tandem_buffer_create(rt, N * 4, TANDEM_PLACEMENT_GPU_LOCAL, &b));
  tandem_binding_contract_t contract = {N * 4, 4, TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t d = add_one_desc(&contract, 0);
  ok = ok && STEP(r, tandem_kernel_create(rt, &d, &k));
  uint32_t n = N;
  tandem_view_t v = ok ? tandem_buffer_whole(b) : (tandem_view_t){0};
  ok = ok && STEP(r, tandem_graph_create(rt, &g));
  ok = ok && STEP(r, tandem_graph_add_dispatch(g, k, &v, 1, &n, sizeof n));
  for (int round = 0; round < 2 && ok; round++) {
    ok = STEP(r, tandem_graph_prepare(g, &e));
    ok = ok && STEP(r, tandem_exec_submit(e, &c));
    ok = ok && STEP(r, wait_bounded(c, r));
    if (c) tandem_completion_release(c);
    c = NULL;
    tandem_exec_release(e);
    e = NULL;
  }
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
  if (!ok && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected,
             "the work before the destruction failed with no fault armed: %s",
             tandem_error_message());
  tandem_test_fault_t f = {.fail_at = (uint64_t)g_at, .persistent = g_persistent, .kinds = g_kinds};
  TH_ASSERT_OK(tandem_test_fault_set(&f));
  tandem_runtime_destroy(rt); /* its queue waits are the counted calls */
  TH_ASSERT_OK(tandem_test_fault_report(rep));
  tandem_test_fault_set(NULL);
  if (th_validation_count() != 0 && !r->unexpected[0])
    snprintf(r->unexpected, sizeof r->unexpected,
             "%llu validation messages by the end of the runtime's destruction",
             (unsigned long long)th_validation_count());
}

typedef void (*scenario_t)(run_t *r, bool npu, tandem_test_fault_report_t *rep);

/* Runs |scenario| for N = 1, 2, ... until no call N was reached. */
static void loop(const char *name, scenario_t scenario, bool npu, bool persistent) {
  uint64_t reached = 0;
  for (uint64_t at = 1;; at++) {
    th_validation_reset();
    g_at = (sig_atomic_t)at;
    alarm(120);
    g_persistent = persistent;
    tandem_test_fault_t f = {.fail_at = at, .persistent = persistent, .kinds = g_kinds};
    TH_ASSERT_OK(tandem_test_fault_set(&f));
    run_t r = {0};
    tandem_test_fault_report_t rep;
    scenario(&r, npu, &rep);
    alarm(0);
    if (getenv("TANDEM_FAULT_VERBOSE"))
      fprintf(stderr, "test_fault: %s N = %llu failed %s (%llu calls counted)\n", name,
              (unsigned long long)at, rep.first_site, (unsigned long long)rep.counted);
    if (r.unexpected[0])
      fail_msg("%s, %s, N = %llu (failed call: %s): %s", name,
               persistent ? "persistent" : "transient", (unsigned long long)at, rep.first_site,
               r.unexpected);
    if (rep.failed == 0) break; /* N is past the scenario's last counted call */
    reached = at;
    if (at > 5000) fail_msg("%s: more than 5000 counted calls; the loop does not end", name);
  }
  fprintf(stderr, "test_fault: %s, %s: %llu native calls failed in turn, each handled\n", name,
          persistent ? "persistent" : "transient", (unsigned long long)reached);
}

static void test_gpu_transient(void **state) {
  (void)state;
  loop("gpu", scenario_gpu, false, false);
}

static void test_gpu_persistent(void **state) {
  (void)state;
  loop("gpu", scenario_gpu, false, true);
}

/* The GPU scenario on descriptor sets, its kernel from misaligned memory. */
static void loop_sets(bool persistent) {
  setenv("TANDEM_VK_PUSH_DESCRIPTORS", "0", 1);
  g_sets = true;
  loop("gpu, descriptor sets", scenario_gpu, false, persistent);
  g_sets = false;
  unsetenv("TANDEM_VK_PUSH_DESCRIPTORS");
}

static void test_sets_transient(void **state) {
  (void)state;
  loop_sets(false);
}

static void test_sets_persistent(void **state) {
  (void)state;
  loop_sets(true);
}

/* The NPU scenario with the emulator in PLAIN mode: XRT's C API (xclbin
 * loaded, kernel opened, runs opened, started and waited for) instead of the
 * emulated bridge. */
static void loop_plain(bool persistent) {
  setenv("TANDEM_EMU_MODE", "plain", 1);
  g_sharing = g_sharing_plain;
  loop("npu, PLAIN", scenario_gpu, true, persistent);
  g_sharing = g_sharing_xdna;
  unsetenv("TANDEM_EMU_MODE");
}

static void test_npu_plain_transient(void **state) {
  (void)state;
  loop_plain(false);
}

static void test_npu_plain_persistent(void **state) {
  (void)state;
  loop_plain(true);
}

static void test_npu_transient(void **state) {
  (void)state;
  loop("npu", scenario_gpu, true, false);
}

static void test_npu_persistent(void **state) {
  (void)state;
  loop("npu", scenario_gpu, true, true);
}

static void test_own_transient(void **state) {
  (void)state;
  loop("own device", scenario_own, false, false);
}

static void test_own_persistent(void **state) {
  (void)state;
  loop("own device", scenario_own, false, true);
}

static void test_gpus_transient(void **state) {
  (void)state;
  loop("two GPUs", scenario_gpus, false, false);
}

static void test_gpus_persistent(void **state) {
  (void)state;
  loop("two GPUs", scenario_gpus, false, true);
}

static void test_session_transient(void **state) {
  (void)state;
  loop("session", scenario_session, false, false);
}

static void test_session_persistent(void **state) {
  (void)state;
  loop("session", scenario_session, false, true);
}

/* The watchdog scenario's emulator: PLAIN, every run delayed 100 ms. */
static void loop_watchdog(bool persistent) {
  setenv("TANDEM_EMU_MODE", "plain", 1);
  setenv("TANDEM_EMU_DELAY_US", "100000", 1);
  g_sharing = g_sharing_plain;
  loop("watchdog, PLAIN", scenario_watchdog, true, persistent);
  g_sharing = g_sharing_xdna;
  unsetenv("TANDEM_EMU_DELAY_US");
  unsetenv("TANDEM_EMU_MODE");
}

static void test_watchdog_transient(void **state) {
  (void)state;
  loop_watchdog(false);
}

static void test_watchdog_persistent(void **state) {
  (void)state;
  loop_watchdog(true);
}

static void test_teardown_transient(void **state) {
  (void)state;
  loop("teardown", scenario_teardown, false, false);
}

static void test_teardown_persistent(void **state) {
  (void)state;
  loop("teardown", scenario_teardown, false, true);
}

static void test_teardown_own(void **state) {
  (void)state;
  loop("teardown, own device", scenario_teardown, true, false);
  loop("teardown, own device", scenario_teardown, true, true);
}

/*------------------------------------------------------------- coverage --*/
/* Every site the sweep can fail must be reached by some scenario (issue 19
 * item 10): after the loops, the sites counted while armed
 * (tandem_test_fault_sites) are compared with every site the sources hold —
 * the allocation calls of the library's sources (core/fault_alloc.h turns
 * each into a site "file:line"), the Vulkan calls vk_fault.c wraps (its
 * TANDEM_VKF_SWAP and TANDEM_VKF_TABLE lines) and the XRT calls xrt_fault.c
 * wraps (its tandem_xrtf_* wrappers). A site not reached fails the test,
 * named, unless this list gives the reason it cannot be reached here. */
typedef struct unreachable {
  /* A call name, or for an allocation "file:" followed by text of its source
   * line (matched against the line, so that edits above it do not move it). */
  const char *site;
  const char *why;
  /* 0: never reached here; else excused only while the GPU (without
   * faults) lacks this tandem_gpu_feature_t bit. */
  uint32_t unless_feature;
} unreachable_t;
static const unreachable_t k_unreachable[] = {
    /* dma-buf sharing between the NPU and the GPU (docs/npu.md, Sharing
     * paths): the emulated NPU exports no dma-buf, and lavapipe has no
     * VK_EXT_external_memory_dma_buf. */
    {"xrtBOExport", "dma-buf into GPU: no dma-buf exporter and no dma-buf import on lavapipe", 0},
    {"xrtBOImport", "dma-buf into NPU: lavapipe exports no dma-buf", 0},
    {"vkGetMemoryFdPropertiesKHR",
     "dma-buf import: lavapipe has no "
     "VK_EXT_external_memory_dma_buf",
     0},
    /* Timeline export and import (interop_steps) need external semaphore
     * fds, which lavapipe does not offer for timelines. */
    {"vkGetSemaphoreFdKHR", "timeline export: the GPU has no external semaphore fds",
     TANDEM_GPU_EXTERNAL_SEMAPHORE_FD},
    {"vkImportSemaphoreFdKHR", "timeline import: the GPU has no external semaphore fds",
     TANDEM_GPU_EXTERNAL_SEMAPHORE_FD},
    {"core/interop.c:tandem_external_timeline_t *t = calloc",
     "timeline import: the GPU has no external semaphore fds", TANDEM_GPU_EXTERNAL_SEMAPHORE_FD},
};

#define MAX_SITES 512
typedef struct site_list {
  char *site[MAX_SITES];
  char *text[MAX_SITES]; /* an allocation's source line, else NULL */
  uint32_t count;
} site_list_t;

static void site_add_text(site_list_t *l, const char *site, const char *text) {
  for (uint32_t i = 0; i < l->count; i++)
    if (strcmp(l->site[i], site) == 0) return;
  if (l->count == MAX_SITES) fail_msg("more than %u fault sites in the sources", MAX_SITES);
  l->text[l->count] = text ? strdup(text) : NULL;
  l->site[l->count++] = strdup(site);
}

static void site_add(site_list_t *l, const char *site) { site_add_text(l, site, NULL); }

static void site_list_free(site_list_t *l) {
  for (uint32_t i = 0; i < l->count; i++) {
    free(l->site[i]);
    free(l->text[i]);
  }
  l->count = 0;
}

/* The identifier that follows |prefix| at |p| (NULL if none). */
static bool ident_after(const char *p, const char *prefix, char *out, size_t cap) {
  if (strncmp(p, prefix, strlen(prefix)) != 0) return false;
  p += strlen(prefix);
  size_t n = 0;
  while ((isalnum((unsigned char)p[n]) || p[n] == '_') && n + 1 < cap) n++;
  memcpy(out, p, n);
  out[n] = '\0';
  return n > 0;
}

/* Calls each line of |rel| (relative to the source tree) with its number. */
static void for_lines(const char *rel,
                      void (*fn)(const char *rel, unsigned line, const char *text, site_list_t *l),
                      site_list_t *l) {
  char path[1024];
  int n = snprintf(path, sizeof path, "%s/%s", TANDEM_TEST_SOURCE_DIR, rel);
  if (n < 0 || (size_t)n >= sizeof path) fail_msg("coverage: path of %s is too long", rel);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("coverage: cannot read %s", path);
  char text[1024];
  unsigned line = 0;
  while (fgets(text, sizeof text, f)) fn(rel, ++line, text, l);
  fclose(f);
}

/* An allocation call (malloc, calloc, realloc, strdup) outside a comment
 * line: the sites fault_alloc.h makes. */
static void alloc_line(const char *rel, unsigned line, const char *text, site_list_t *l) {
  const char *t = text;
  while (*t == ' ') t++;
  if (t[0] == '*' || (t[0] == '/' && (t[1] == '*' || t[1] == '/'))) return;
  static const char *const k_calls[] = {"malloc(", "calloc(", "realloc(", "strdup("};
  for (size_t i = 0; i < sizeof k_calls / sizeof k_calls[0]; i++) {
    for (const char *p = strstr(text, k_calls[i]); p; p = strstr(p + 1, k_calls[i])) {
      if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
      char site[600];
      snprintf(site, sizeof site, "%s:%u", rel, line);
      site_add_text(l, site, text);
    }
  }
}

static void vulkan_line(const char *rel, unsigned line, const char *text, site_list_t *l) {
  (void)rel;
  (void)line;
  const char *t = text;
  while (*t == ' ') t++;
  char name[128];
  if (ident_after(t, "TANDEM_VKF_SWAP(", name, sizeof name) ||
      ident_after(t, "TANDEM_VKF_TABLE(", name, sizeof name))
    if (strcmp(name, "name") != 0) site_add(l, name);
}

static void xrt_line(const char *rel, unsigned line, const char *text, site_list_t *l) {
  (void)rel;
  (void)line;
  if (strncmp(text, "static ", 7) != 0) return;
  const char *p = strstr(text, " tandem_xrtf_");
  if (!p) p = strstr(text, "*tandem_xrtf_");
  char name[128];
  if (p && ident_after(p + 1, "tandem_xrtf_", name, sizeof name) && strchr(text, '(') &&
      strcmp(name, "real") != 0 && strcmp(name, "mutex") != 0 && strcmp(name, "users") != 0)
    site_add(l, name);
}

static void alloc_sources(site_list_t *l) {
  static const char *const k_dirs[] = {"core", "backends/vulkan", "backends/spirv", "backends/xrt",
                                       "backends/host"};
  for (size_t d = 0; d < sizeof k_dirs / sizeof k_dirs[0]; d++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TANDEM_TEST_SOURCE_DIR, k_dirs[d]);
    DIR *dir = opendir(path);
    if (!dir) fail_msg("coverage: cannot list %s", path);
    struct dirent *de;
    char *names[256];
    size_t n = 0;
    while ((de = readdir(dir)) && n < 256) {
      size_t len = strlen(de->d_name);
      if (len > 2 && strcmp(de->d_name + len - 2, ".c") == 0) names[n++] = strdup(de->d_name);
    }
    closedir(dir);
    for (size_t i = 0; i < n; i++) {
      char rel[512];
      snprintf(rel, sizeof rel, "%s/%s", k_dirs[d], names[i]);
      /* fault.c implements the wrappers with the real functions. */
      if (strcmp(rel, "core/fault.c") != 0) for_lines(rel, alloc_line, l);
      free(names[i]);
    }
  }
}

/* Why |site| (with its source line |text|, for an allocation) cannot be
 * reached here, or NULL. */
static const char *unreachable_why(const char *site, const char *text) {
  for (size_t i = 0; i < sizeof k_unreachable / sizeof k_unreachable[0]; i++) {
    const unreachable_t *u = &k_unreachable[i];
    if (g_features & u->unless_feature) continue;
    const char *colon = strchr(u->site, ':');
    bool match;
    if (colon) {
      size_t file_len = (size_t)(colon - u->site);
      match = text && strncmp(site, u->site, file_len) == 0 && site[file_len] == ':' &&
              strstr(text, colon + 1) != NULL;
    } else {
      match = strcmp(u->site, site) == 0;
    }
    if (match) return u->why;
  }
  return NULL;
}

/* Compares the sites of |kind| the sources hold with those reached; prints
 * the counts; fails naming every unreached site the list does not excuse,
 * and every excused one that was reached after all (the list must not go
 * stale). Returns the number of problems. */
/* The sites the sweep reached, per kind: this process's
 * (tandem_test_fault_sites), or, for "test_fault coverage FILE...", those
 * that the sweep processes wrote (write_sites), one "KIND SITE" a line. */
static char *g_reached[3][MAX_SITES];
static uint32_t g_reached_count[3];
static bool g_from_files;

static int kind_index(uint32_t kind) {
  return kind == TANDEM_TEST_FAULT_ALLOC ? 0 : kind == TANDEM_TEST_FAULT_VULKAN ? 1 : 2;
}

static void reached_add(uint32_t kind, const char *site) {
  int k = kind_index(kind);
  for (uint32_t i = 0; i < g_reached_count[k]; i++)
    if (strcmp(g_reached[k][i], site) == 0) return;
  if (g_reached_count[k] == MAX_SITES) fail_msg("more than %u reached sites", MAX_SITES);
  g_reached[k][g_reached_count[k]++] = strdup(site);
}

/* Writes what this process reached to |path|, for the coverage check. */
static int write_sites(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "test_fault: cannot write %s\n", path);
    return 1;
  }
  static const uint32_t k_kinds[] = {TANDEM_TEST_FAULT_ALLOC, TANDEM_TEST_FAULT_VULKAN,
                                     TANDEM_TEST_FAULT_XRT};
  for (size_t k = 0; k < 3; k++) {
    const char *sites[MAX_SITES];
    uint32_t n = 0;
    if (tandem_test_fault_sites(k_kinds[k], sites, MAX_SITES, &n) != TANDEM_OK) return 1;
    for (uint32_t i = 0; i < n && i < MAX_SITES; i++) fprintf(f, "%u %s\n", k_kinds[k], sites[i]);
  }
  return fclose(f) == 0 ? 0 : 1;
}

static int read_sites(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "test_fault: cannot read %s (did its sweep run?)\n", path);
    return 1;
  }
  char line[700];
  while (fgets(line, sizeof line, f)) {
    unsigned kind = 0;
    char site[600];
    if (sscanf(line, "%u %599s", &kind, site) == 2 &&
        (kind == TANDEM_TEST_FAULT_ALLOC || kind == TANDEM_TEST_FAULT_VULKAN ||
         kind == TANDEM_TEST_FAULT_XRT))
      reached_add(kind, site);
  }
  fclose(f);
  unlink(path); /* read once: a later check must see a fresh sweep's */
  return 0;
}

static int coverage(uint32_t kind, const char *what, site_list_t *all) {
  if (!g_from_files) {
    const char *sites[MAX_SITES];
    uint32_t n = 0;
    TH_ASSERT_OK(tandem_test_fault_sites(kind, sites, MAX_SITES, &n));
    for (uint32_t i = 0; i < n && i < MAX_SITES; i++) reached_add(kind, sites[i]);
  }
  char **reached = g_reached[kind_index(kind)];
  uint32_t count = g_reached_count[kind_index(kind)];
  int problems = 0;
  uint32_t hit = 0, excused = 0;
  for (uint32_t i = 0; i < all->count; i++) {
    bool found = false;
    for (uint32_t j = 0; j < count && !found; j++) found = strcmp(all->site[i], reached[j]) == 0;
    const char *why = unreachable_why(all->site[i], all->text[i]);
    if (found) hit++;
    if (found && why) {
      fprintf(stderr, "test_fault: %s site %s is reached, but the unreachable list says: %s\n",
              what, all->site[i], why);
      problems++;
    } else if (!found && why) {
      excused++;
    } else if (!found) {
      fprintf(stderr, "test_fault: %s site %s is never reached by the sweep\n", what, all->site[i]);
      problems++;
    }
  }
  /* A counted site the sources do not show: the scan is out of date. */
  for (uint32_t j = 0; j < count; j++) {
    bool known = false;
    for (uint32_t i = 0; i < all->count && !known; i++)
      known = strcmp(all->site[i], reached[j]) == 0;
    if (!known) {
      fprintf(stderr, "test_fault: %s site %s was counted but the source scan does not list it\n",
              what, reached[j]);
      problems++;
    }
  }
  fprintf(stderr,
          "test_fault: coverage of %s sites: %u of %u reached, %u unreachable here "
          "(listed with reasons)\n",
          what, hit, all->count, excused);
  return problems;
}

static void test_coverage(void **state) {
  (void)state;
  int problems = 0;
  site_list_t l = {0};
  if (g_kinds & TANDEM_TEST_FAULT_ALLOC) {
    alloc_sources(&l);
    problems += coverage(TANDEM_TEST_FAULT_ALLOC, "allocation", &l);
    site_list_free(&l);
  }
  if (g_kinds & TANDEM_TEST_FAULT_VULKAN) {
    for_lines("backends/vulkan/vk_fault.c", vulkan_line, &l);
    problems += coverage(TANDEM_TEST_FAULT_VULKAN, "Vulkan", &l);
    site_list_free(&l);
  }
  if (g_kinds & TANDEM_TEST_FAULT_XRT) {
    for_lines("backends/xrt/xrt_fault.c", xrt_line, &l);
    problems += coverage(TANDEM_TEST_FAULT_XRT, "XRT", &l);
    site_list_free(&l);
  }
  if (problems) fail_msg("%d fault sites unreached or listed wrongly (above)", problems);
}

/* The groups of loops; each CTest entry runs one group for one kind
 * (tests/CMakeLists.txt), so that they run in parallel. */
typedef struct group {
  const char *name;
  struct CMUnitTest tests[5];
  size_t count;
} group_t;

static const group_t k_groups[] = {
    {"gpu", {cmocka_unit_test(test_gpu_transient), cmocka_unit_test(test_gpu_persistent)}, 2},
    {"sets", {cmocka_unit_test(test_sets_transient), cmocka_unit_test(test_sets_persistent)}, 2},
    {"npu", {cmocka_unit_test(test_npu_transient), cmocka_unit_test(test_npu_persistent)}, 2},
    {"plain",
     {cmocka_unit_test(test_npu_plain_transient), cmocka_unit_test(test_npu_plain_persistent)},
     2},
    {"own",
     {cmocka_unit_test(test_own_transient), cmocka_unit_test(test_own_persistent),
      cmocka_unit_test(test_teardown_transient), cmocka_unit_test(test_teardown_persistent),
      cmocka_unit_test(test_teardown_own)},
     5},
    {"session",
     {cmocka_unit_test(test_session_transient), cmocka_unit_test(test_session_persistent),
      cmocka_unit_test(test_gpus_transient), cmocka_unit_test(test_gpus_persistent)},
     4},
    {"watchdog",
     {cmocka_unit_test(test_watchdog_transient), cmocka_unit_test(test_watchdog_persistent)},
     2},
};

/* test_fault [KIND [GROUP [SITES_FILE]]]: KIND alloc, vulkan, xrt or all
 * (default all); GROUP one of k_groups or all (default all: then the
 * coverage check runs last, in this process). With SITES_FILE, the sites
 * reached are written there. test_fault coverage FILE...: the coverage
 * check over the sites the sweep processes wrote. */
int main(int argc, char **argv) {
  const char *group = argc > 2 ? argv[2] : "all";
  const char *sites_file = NULL;
  if (argc > 1 && strcmp(argv[1], "coverage") == 0) {
    g_from_files = true; /* read after th_init: with no device, this skips too */
    group = "coverage";
  }
  if (argc > 1 && !g_from_files) {
    sites_file = argc > 3 ? argv[3] : NULL;
    if (sites_file) unlink(sites_file); /* written again only by a sweep that passes */
    /* "alloc", "all", or a backend by the name the runtime options use
     * ("vulkan", "xrt"): its kind is the library's to say. */
    g_kinds = strcmp(argv[1], "alloc") == 0 ? TANDEM_TEST_FAULT_ALLOC
              : strcmp(argv[1], "all") == 0 ? TANDEM_TEST_FAULT_ALL
                                            : 0;
    if (!g_kinds && tandem_test_fault_kind(argv[1], &g_kinds) != TANDEM_OK) {
      fprintf(stderr, "test_fault: unknown kind '%s': %s\n", argv[1], tandem_error_message());
      return 2;
    }
  }
  bool all_groups = strcmp(group, "all") == 0;
  if (!all_groups && !g_from_files) {
    bool known = false;
    for (size_t i = 0; i < sizeof k_groups / sizeof k_groups[0]; i++)
      known |= strcmp(k_groups[i].name, group) == 0;
    if (!known) {
      fprintf(stderr, "test_fault: unknown group '%s'\n", group);
      return 2;
    }
  }
  signal(SIGALRM, on_alarm);
  th_init();
  for (int i = 2; g_from_files && i < argc; i++)
    if (read_sites(argv[i])) return 1;
  {
    snprintf(g_spv_path, sizeof g_spv_path, "/tmp/tandem-fault-XXXXXX");
    int fd = mkstemp(g_spv_path);
    if (fd < 0 || write(fd, tandem_spv_add_one_u32, tandem_spv_add_one_u32_size) !=
                      (ssize_t)tandem_spv_add_one_u32_size) {
      fprintf(stderr, "test_fault: writing the kernel's SPIR-V file failed\n");
      return 1;
    }
    close(fd);
  }
  g_misaligned_spv = malloc(tandem_spv_add_one_u32_size + 4);
  memcpy(g_misaligned_spv + 1, tandem_spv_add_one_u32, tandem_spv_add_one_u32_size);
  g_misaligned_spv += 1;
  for (int mode = 0; mode < 2; mode++) {
    /* The emulator reads its mode when a device opens. */
    if (mode == 1) setenv("TANDEM_EMU_MODE", "plain", 1);
    else unsetenv("TANDEM_EMU_MODE");
    tandem_runtime_options_t o;
    tandem_runtime_options_init(&o);
    o.npu_backend = "emulated";
    o.npu_library = TANDEM_TEST_NPU_LIBRARY;
    tandem_runtime_t *rt = th_runtime_create(&o);
    tandem_device_info_t info;
    tandem_device_info_init(&info);
    tandem_npu_info_t ni;
    tandem_npu_info_init(&ni);
    if (tandem_runtime_gpu_info(rt, 0, &info) != TANDEM_OK || tandem_runtime_open_npu(rt) ||
        tandem_runtime_npu_info(rt, &ni) != TANDEM_OK) {
      fprintf(stderr, "test_fault: the baseline open failed: %s\n", tandem_error_message());
      return 1;
    }
    g_features = info.features;
    *(mode == 1 ? &g_sharing_plain : &g_sharing_xdna) = ni.sharing;
    tandem_runtime_destroy(rt);
  }
  unsetenv("TANDEM_EMU_MODE");
  g_sharing = g_sharing_xdna;
  /* One runtime with its GPU open for the whole loop keeps the Vulkan driver
   * loaded. Otherwise every scenario run unloads and reloads it, and on the
   * H200 hundreds of reloads of the NVIDIA driver exhaust glibc's static TLS
   * ("libnvidia-tls.so: cannot allocate memory in static TLS block"; the
   * loop passed with glibc.rtld.optional_static_tls raised). */
  tandem_runtime_t *keeper = th_runtime_create(NULL);
  g_own = th_vk_device_create(NULL);
  tandem_vulkan_handles_t h = th_vk_device_handles(g_own);
  g_own_buffer =
      th_vk_buffer_create(&h, N * 4, TANDEM_MEMORY_HOST_VISIBLE | TANDEM_MEMORY_HOST_COHERENT);
  g_own_pipeline =
      th_vk_pipeline_create(&h, tandem_spv_add_one_u32, tandem_spv_add_one_u32_size, 1, 4);
  {
    tandem_runtime_options_t o;
    tandem_runtime_options_init(&o);
    o.vulkan_device = th_vk_device_desc(g_own);
    tandem_runtime_t *rt = NULL;
    tandem_device_info_t info;
    tandem_device_info_init(&info);
    if (tandem_runtime_create(&o, &rt) != TANDEM_OK ||
        tandem_runtime_gpu_info(rt, 0, &info) != TANDEM_OK) {
      fprintf(stderr, "test_fault: the baseline own-device open failed: %s\n",
              tandem_error_message());
      return 1;
    }
    g_own_features = info.features;
    tandem_runtime_destroy(rt);
  }
  struct CMUnitTest tests[40];
  size_t count = 0;
  for (size_t i = 0; i < sizeof k_groups / sizeof k_groups[0] && !g_from_files; i++)
    if (all_groups || strcmp(k_groups[i].name, group) == 0)
      for (size_t t = 0; t < k_groups[i].count; t++) tests[count++] = k_groups[i].tests[t];
  /* The coverage check comes last: what every loop above (or every sweep
   * process) reached. */
  if (all_groups || g_from_files)
    tests[count++] = (struct CMUnitTest)cmocka_unit_test(test_coverage);
  int rc = _cmocka_run_group_tests("test_fault", tests, count, NULL, NULL);
  if (rc == 0 && sites_file) rc = write_sites(sites_file);
  unlink(g_spv_path);
  free(g_misaligned_spv - 1);
  th_runtime_destroy(keeper);
  /* Whatever tandem left on the shared device shows now (the layer reports
   * objects a device still holds at vkDestroyDevice). */
  th_validation_reset();
  th_vk_pipeline_destroy(&h, &g_own_pipeline);
  th_vk_buffer_destroy(&h, &g_own_buffer);
  th_vk_device_destroy(g_own);
  if (th_validation_count() != 0) {
    fprintf(stderr,
            "test_fault: %llu validation messages destroying the own device: tandem "
            "left objects on it\n",
            (unsigned long long)th_validation_count());
    return 1;
  }
  return rc;
}
