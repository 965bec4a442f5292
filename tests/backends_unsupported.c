/* SPDX-License-Identifier: MIT */
/*
 * backends_unsupported.c — the one table of what the CTS does not run on a
 * backend, and why (as IREE's runtime/src/iree/hal/drivers/local_sync/cts/
 * backends.cc lists unsupported_tests per driver), and TH_RUN_GROUP, which
 * consults it. A row names a backend ("host": TANDEM_TEST_BACKEND=host,
 * tests/harness.h; "vulkan" otherwise), a program (the test's source file
 * without .c) and either one cmocka test or, with test NULL, the whole
 * program. TH_RUN_GROUP runs a listed test as a skip that prints the row's
 * reason, exits with CTest's skip code (77) for a listed program, and fails
 * on a row naming a test the program does not have, so the table cannot go
 * stale. tests/CMakeLists.txt runs on the host only the programs not listed
 * whole here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef struct th_unsupported {
  const char *backend;
  const char *program;
  const char *test; /* NULL: the whole program */
  const char *reason;
} th_unsupported_t;

#define TH_GLSL_AT_RUN_TIME "GLSL compiled at run time: no C twin on the host GPU"
#define TH_RAW_VULKAN_CLIENT "a client records raw Vulkan on tandem's queue: the host GPU has none"

static const th_unsupported_t th__unsupported[] = {
    /* One test of a program that otherwise runs on the host GPU. */
    {"host", "test_first_hour", "test_view_sized_descriptor_range", TH_GLSL_AT_RUN_TIME},
    {"host", "test_kernel", "test_glsl_source", TH_GLSL_AT_RUN_TIME},
    {"host", "test_graph", "test_descriptor_pools_kept",
     "Vulkan descriptor pools: the host GPU has none"},
    {"host", "test_lanes", "test_session_orders_later_work", TH_RAW_VULKAN_CLIENT},
    {"host", "test_lanes", "test_session_failure_quarantines", TH_RAW_VULKAN_CLIENT},
    /* Whole programs (not in tests/CMakeLists.txt's host list). */
    {"host", "test_replay_alloc", NULL, "its graph records raw Vulkan commands"},
    {"host", "test_user_vulkan", NULL, "it tests Vulkan devices an application brings"},
    {"host", "test_handoff", NULL, "it tests Vulkan objects handed to and from tandem"},
    {"host", "test_interop", NULL, "it tests Vulkan interop (adopted buffers, shared timelines)"},
    {"host", "test_validation_selftest", NULL, "it tests the Vulkan validation layer's counting"},
    {"host", "test_fault", NULL, "its sites are Vulkan calls with injected faults"},
    {"host", "test_peer_kernels", NULL,
     "its kernels need driver features (full subgroups, robustness off) the host GPU lacks"},
    {"host", "test_device", NULL, "it tests Vulkan devices and their features"},
    {"host", "test_external_sync", NULL,
     "it tests Vulkan's barriers for the NPU (external ownership transfers)"},
    {"host", "test_errors", NULL,
     "its rows are the Vulkan backend's error sites: no driver, layer missing, adoption, "
     "injected Vulkan faults"},
    {"host", "test_specialize", NULL,
     "its shaders need twins that honour specialization constants, subgroups, f16 and shared "
     "memory: not written yet"},
    {"host", "test_shader_clock", NULL,
     "it tests a Vulkan extension's shader features (VK_KHR_shader_clock) the host GPU lacks"},
    {"host", "test_gpus", NULL,
     "it chooses each case's backends itself (two host GPUs always, a host GPU beside Vulkan)"},
    {"host", "test_hostile", NULL,
     "its inputs were found on Vulkan (fuzz corpus, driver-facing SPIR-V); not yet run on the "
     "host GPU"},
};

/* The test source's name without directory and ".c". */
static void th__program(const char *file, char *out, size_t cap) {
  const char *slash = strrchr(file, '/');
  snprintf(out, cap, "%s", slash ? slash + 1 : file);
  char *dot = strrchr(out, '.');
  if (dot) *dot = '\0';
}

static void th__unsupported_test(void **state) {
  const th_unsupported_t *u = *state;
  fprintf(stderr, "SKIP: %s on the %s backend: %s\n", u->test, u->backend, u->reason);
  skip();
}

int th__run_group(const struct CMUnitTest *tests, size_t count, const char *file) {
  th_init();
  char program[128];
  th__program(file, program, sizeof program);
  const char *backend = th_host() ? "host" : "vulkan";
  struct CMUnitTest *run = malloc(count * sizeof *run);
  if (!run) {
    fprintf(stderr, "%s: no memory for %zu tests\n", program, count);
    return 1;
  }
  memcpy(run, tests, count * sizeof *run);
  int stale = 0;
  for (size_t i = 0; i < sizeof th__unsupported / sizeof th__unsupported[0]; i++) {
    const th_unsupported_t *u = &th__unsupported[i];
    if (strcmp(u->backend, backend) != 0 || strcmp(u->program, program) != 0) continue;
    if (!u->test) {
      fprintf(stderr, "SKIP: %s on the %s backend: %s (tests/backends_unsupported.c)\n", program,
              backend, u->reason);
      free(run);
      return TH_EXIT_SKIP;
    }
    size_t k = 0;
    while (k < count && strcmp(tests[k].name, u->test) != 0) k++;
    if (k == count) {
      fprintf(stderr,
              "tests/backends_unsupported.c names test '%s' of %s, which has no such test: "
              "remove or rename the row\n",
              u->test, program);
      stale++;
      continue;
    }
    run[k].test_func = th__unsupported_test;
    run[k].setup_func = NULL;
    run[k].teardown_func = NULL;
    run[k].initial_state = (void *)u;
  }
  int rc = stale ? 1 : _cmocka_run_group_tests("tests", run, count, NULL, NULL);
  free(run);
  return rc;
}
