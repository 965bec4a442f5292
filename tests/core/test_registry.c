/* SPDX-License-Identifier: MIT */
/*
 * test_registry.c — the boundary between core and its backends, and the
 * versioned public structs, without a Vulkan device (label "core").
 *
 * The registry (core/registry.h): a runtime finds its GPU backend by the
 * option gpu_backend (NULL: "vulkan") and its NPU backend by the option npu;
 * unknown names are INVALID_ARGUMENT naming the known ones; the host GPU
 * (backends/host/host_gpu.c) is built in; tests may add backends by
 * registering them.
 *
 * struct_size (tandem.h, Conventions): for each versioned struct, 0 and too
 * small are INVALID_ARGUMENT naming the struct and the fix, with nothing
 * written; the exact size is read or filled; a larger struct (a newer
 * header) is filled with its tail zeroed, or, passed in, accepted only when
 * its tail is zero. Filled structs are compared with what the host GPU and
 * the runtime must report, not only their status.
 *
 * Like test_plan_table it links the library's objects: the registry's
 * functions are internal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/runtime_int.h"
#include "tandem/tandem_testing.h"
#include "tandem/tandem_xrt.h"
#include "tandem/tandem_vulkan.h"
#include "core/registry.h"
#include "host_gpu_probe.h"

#define POISON 0xA5
#define EXTRA 64 /* bytes a "newer header" adds to a struct */

static void expect_status(tandem_status_t got, tandem_status_t want, const char *what) {
  if (got != want)
    fail_msg("%s: expected %s, got %s: '%s'", what, tandem_status_name(want),
             tandem_status_name(got), tandem_error_message());
}

static void expect_message_has(const char *needle) {
  if (!strstr(tandem_error_message(), needle))
    fail_msg("the message does not name '%s': '%s'", needle, tandem_error_message());
}

/* |n| bytes at |p| all equal |byte|. */
static bool all_bytes(const void *p, size_t n, unsigned char byte) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i] != byte) return false;
  return true;
}

/* A runtime on the host GPU (registered here), optionally with the emulated NPU. */
static tandem_runtime_t *host_runtime(bool npu) {
  host_gpu_configure(NULL);
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.gpu_backend = HOST_GPU_BACKEND;
  o.wait_spin_us = 0;
  if (npu) {
    o.npu_backend = "emulated";
    o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  }
  tandem_runtime_t *rt = NULL;
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_OK, "a host GPU runtime");
  assert_non_null(host_gpu_of(rt));
  return rt;
}

/*---------------------------------------------------------------------------
 * The registry
 *---------------------------------------------------------------------------*/

static void test_gpu_lookup(void **state) {
  (void)state;
  const tandem__gpu_backend_t *b = NULL, *v = NULL;
  expect_status(tandem__gpu_backend_find(NULL, &b), TANDEM_OK, "NULL name");
  assert_string_equal(b->name, "vulkan");
  expect_status(tandem__gpu_backend_find("vulkan", &v), TANDEM_OK, "'vulkan'");
  assert_ptr_equal(b, v);
  expect_status(tandem__gpu_backend_find("metal", &b), TANDEM_ERROR_INVALID_ARGUMENT, "'metal'");
  assert_null(b);
  expect_message_has("gpu_backend is 'metal'");
  expect_message_has("'vulkan'");
}

static void test_npu_lookup(void **state) {
  (void)state;
  const tandem__npu_backend_t *b = NULL;
  expect_status(tandem__npu_backend_find("xrt", &b), TANDEM_OK, "'xrt'");
  assert_string_equal(b->name, "xrt");
  expect_status(tandem__npu_backend_find("emulated", &b), TANDEM_OK, "'emulated'");
  assert_string_equal(b->name, "emulated");
  expect_status(tandem__npu_backend_find("tpu", &b), TANDEM_ERROR_INVALID_ARGUMENT, "'tpu'");
  assert_null(b);
  expect_message_has("'tpu'");
  expect_message_has("'xrt', 'emulated'");
  expect_status(tandem__npu_backend_find(NULL, &b), TANDEM_ERROR_INVALID_ARGUMENT, "NULL");
}

/* Fault kinds by backend name: each entry says which kind counts its
 * native calls; the host GPU makes none. */
static void test_fault_kind(void **state) {
  (void)state;
  uint32_t kind = 99;
  expect_status(tandem_test_fault_kind("vulkan", &kind), TANDEM_OK, "'vulkan'");
  assert_int_equal(kind, TANDEM_TEST_FAULT_VULKAN);
  expect_status(tandem_test_fault_kind("xrt", &kind), TANDEM_OK, "'xrt'");
  assert_int_equal(kind, TANDEM_TEST_FAULT_XRT);
  expect_status(tandem_test_fault_kind("emulated", &kind), TANDEM_OK, "'emulated'");
  assert_int_equal(kind, TANDEM_TEST_FAULT_XRT);
  expect_status(tandem_test_fault_kind(HOST_GPU_BACKEND, &kind), TANDEM_ERROR_UNSUPPORTED,
                "the host GPU");
  assert_int_equal(kind, 0);
  expect_message_has("makes no native calls");
  expect_status(tandem_test_fault_kind("tpu", &kind), TANDEM_ERROR_INVALID_ARGUMENT, "'tpu'");
  expect_message_has("'tpu'");
  expect_message_has("'vulkan'");
  expect_message_has("'xrt', 'emulated'");
  expect_status(tandem_test_fault_kind(NULL, &kind), TANDEM_ERROR_INVALID_ARGUMENT, "NULL");
  expect_status(tandem_test_fault_kind("xrt", NULL), TANDEM_ERROR_INVALID_ARGUMENT, "NULL out");
}

static tandem_status_t no_count(uint32_t *out_count) {
  *out_count = 0;
  return TANDEM_OK;
}

/* Registration: the host GPU once and again, a clash, a nameless entry, and
 * the table's end. Runs after every test that needs free slots. */
static void test_register(void **state) {
  (void)state;
  host_gpu_configure(NULL); /* "host" is built in: nothing to register */
  host_gpu_configure(NULL);
  const tandem__gpu_backend_t *host = NULL;
  expect_status(tandem__gpu_backend_find(HOST_GPU_BACKEND, &host), TANDEM_OK, "'host'");
  assert_string_equal(host->name, HOST_GPU_BACKEND);
  /* The unknown-name message lists registered backends too. */
  const tandem__gpu_backend_t *b;
  expect_status(tandem__gpu_backend_find("cuda", &b), TANDEM_ERROR_INVALID_ARGUMENT, "'cuda'");
  expect_message_has("'vulkan', 'host'");

  static const tandem__gpu_backend_t clash = {.name = "vulkan", .count = no_count};
  expect_status(tandem__gpu_backend_register(&clash), TANDEM_ERROR_INVALID_ARGUMENT, "a clash");
  expect_message_has("'vulkan'");
  expect_status(tandem__gpu_backend_find("vulkan", &b), TANDEM_OK, "'vulkan' after a clash");
  assert_ptr_not_equal(b, &clash);
  static const tandem__gpu_backend_t nameless = {.name = "", .count = no_count};
  expect_status(tandem__gpu_backend_register(&nameless), TANDEM_ERROR_INVALID_ARGUMENT, "no name");
  expect_status(tandem__gpu_backend_register(NULL), TANDEM_ERROR_INVALID_ARGUMENT, "NULL");

  /* Fill the table: distinct entries take its slots, and the next one is
   * BUSY. */
  static tandem__gpu_backend_t extra[16];
  static char names[16][16];
  tandem_status_t s = TANDEM_OK;
  int added = 0;
  for (int i = 0; i < 16 && s == TANDEM_OK; i++) {
    snprintf(names[i], sizeof names[i], "extra%d", i);
    extra[i] = (tandem__gpu_backend_t){.name = names[i], .count = no_count};
    s = tandem__gpu_backend_register(&extra[i]);
    if (s == TANDEM_OK) added++;
  }
  expect_status(s, TANDEM_ERROR_BUSY, "the table's end");
  expect_message_has("extra");
  assert_int_equal(added, 8); /* 8 slots; "host" is built in */
  expect_status(tandem__gpu_backend_find("extra7", &b), TANDEM_OK, "the last one added");
  assert_ptr_equal(b, &extra[7]);
}

/* The public side: the option gpu_backend. */
static void test_runtime_option(void **state) {
  (void)state;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  assert_null(o.gpu_backend);
  o.gpu_backend = "metal";
  tandem_runtime_t *rt = (tandem_runtime_t *)&o; /* anything but NULL */
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "'metal'");
  assert_null(rt);
  expect_message_has("gpu_backend is 'metal'");
  expect_message_has("'vulkan'");

  /* The name need not outlive the call; NULL and "vulkan" are the same. */
  char *name = strdup("vulkan");
  assert_non_null(name);
  o.gpu_backend = name;
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_OK, "'vulkan'");
  free(name);
  const tandem__gpu_backend_t *vulkan;
  expect_status(tandem__gpu_backend_find(NULL, &vulkan), TANDEM_OK, "NULL");
  assert_ptr_equal(rt->gpus[0].backend, vulkan);
  assert_string_equal(rt->options.gpu_backend, "vulkan");
  assert_null(rt->npu_backend);
  tandem_runtime_destroy(rt);

  /* NPU backends are chosen by name; the runtime keeps the entry's own
   * string, not the caller's. */
  o.gpu_backend = NULL;
  name = strdup("emulated");
  assert_non_null(name);
  o.npu_backend = name;
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_OK, "npu_backend 'emulated'");
  free(name);
  assert_string_equal(rt->npu_backend->name, "emulated");
  assert_ptr_equal(rt->options.npu_backend, rt->npu_backend->name);
  tandem_runtime_destroy(rt);
  o.npu_backend = "xrt";
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_OK, "npu_backend 'xrt'");
  assert_string_equal(rt->npu_backend->name, "xrt");
  tandem_runtime_destroy(rt);
  /* "" and NULL: no NPU. */
  o.npu_backend = "";
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_OK, "npu_backend ''");
  assert_null(rt->npu_backend);
  assert_null(rt->options.npu_backend);
  tandem_runtime_destroy(rt);
  /* An unknown name is refused, naming the option and every known backend. */
  o.npu_backend = "tpu";
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "npu 'tpu'");
  assert_null(rt);
  expect_message_has("runtime option npu_backend");
  expect_message_has("'tpu'");
  expect_message_has("'xrt', 'emulated'");
  /* TANDEM_NPU overrides the option by name ("none": no NPU), and an unknown
   * name there is refused naming the variable. */
  o.npu_backend = "xrt";
  assert_int_equal(setenv("TANDEM_NPU", "none", 1), 0);
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_OK, "TANDEM_NPU=none");
  assert_null(rt->npu_backend);
  tandem_runtime_destroy(rt);
  assert_int_equal(setenv("TANDEM_NPU", "emulated", 1), 0);
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_OK, "TANDEM_NPU=emulated");
  assert_string_equal(rt->npu_backend->name, "emulated");
  tandem_runtime_destroy(rt);
  assert_int_equal(setenv("TANDEM_NPU", "tpu", 1), 0);
  rt = NULL;
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "TANDEM_NPU=tpu");
  assert_null(rt);
  expect_message_has("TANDEM_NPU");
  expect_message_has("'tpu'");
  expect_message_has("'xrt', 'emulated'");
  assert_int_equal(unsetenv("TANDEM_NPU"), 0);
  o.npu_backend = NULL;

  /* A registered backend is chosen by its name, and does the work. */
  rt = host_runtime(false);
  assert_string_equal(rt->gpus[0].backend->name, HOST_GPU_BACKEND);
  tandem_runtime_destroy(rt);
}

/* The XRT NPU backends' extensions of the runtime options and the NPU info
 * (tandem_xrt.h): read by the NPU backend only, every link checked. */
static void test_xrt_extensions(void **state) {
  (void)state;
  tandem_xrt_runtime_options_t xo;
  tandem_xrt_runtime_options_init(&xo);
  xo.profile = TANDEM_NPU_PROFILE_XDNA;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.gpu_backend = HOST_GPU_BACKEND;
  o.wait_spin_us = 0;
  o.next = &xo;
  tandem_runtime_t *rt = NULL;
  /* No NPU backend: nothing reads the extension, so it is refused. */
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "no NPU backend");
  expect_message_has("0x58520002");
  expect_message_has("no NPU backend to read it");
  o.npu_backend = "emulated";
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  /* Another tag, the extension twice, a bad size, a bad profile. */
  struct {
    tandem_chain_t head;
    uint32_t value;
  } other = {{sizeof other, 0x12345678u, NULL}, 1};
  o.next = &other;
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "another tag");
  expect_message_has("type 0x12345678");
  tandem_xrt_runtime_options_t again = xo;
  xo.next = &again;
  o.next = &xo;
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "twice");
  expect_message_has("chained twice");
  xo.next = NULL;
  xo.struct_size = 4;
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "struct_size 4");
  expect_message_has("set struct_size = sizeof(tandem_xrt_runtime_options_t)");
  xo.struct_size = sizeof xo;
  xo.profile = (tandem_npu_profile_t)7;
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "profile 7");
  expect_message_has("profile is 7");
  /* TANDEM_NPU_PROFILE is the XRT backend's: checked by it, naming it. */
  xo.profile = TANDEM_NPU_PROFILE_XDNA;
  assert_int_equal(setenv("TANDEM_NPU_PROFILE", "npu3", 1), 0);
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "the variable");
  expect_message_has("TANDEM_NPU_PROFILE is 'npu3'");
  assert_int_equal(unsetenv("TANDEM_NPU_PROFILE"), 0);
  /* The extension is read at creation: the caller's may go at once. */
  expect_status(tandem_runtime_create(&o, &rt), TANDEM_OK, "the XRT options");
  memset(&xo, 0xff, sizeof xo);
  /* The info's extension gets the profile in use; its tail past the
   * library's size is zeroed; the chain stays the caller's. */
  struct {
    tandem_xrt_npu_info_t xi;
    unsigned char tail[8];
  } newer;
  memset(&newer, 0xee, sizeof newer);
  tandem_xrt_npu_info_init(&newer.xi);
  newer.xi.struct_size = sizeof newer;
  tandem_npu_info_t info;
  tandem_npu_info_init(&info);
  info.next = &newer;
  expect_status(tandem_runtime_npu_info(rt, &info), TANDEM_OK, "NPU info");
  assert_ptr_equal(info.next, &newer);
  assert_int_equal(newer.xi.profile, TANDEM_NPU_PROFILE_XDNA);
  assert_true(all_bytes(newer.tail, sizeof newer.tail, 0));
  info.next = &other;
  expect_status(tandem_runtime_npu_info(rt, &info), TANDEM_ERROR_INVALID_ARGUMENT, "info tag");
  expect_message_has("type 0x12345678");
  tandem_runtime_destroy(rt);
  o.next = NULL;
}

/*---------------------------------------------------------------------------
 * struct_size
 *---------------------------------------------------------------------------*/

/* The runtime options: 0, too small, exact, larger with a zero tail, larger
 * with a non-zero byte in it. */
static void test_options_struct_size(void **state) {
  (void)state;
  struct {
    tandem_runtime_options_t o;
    unsigned char tail[EXTRA];
  } newer;
  tandem_runtime_t *rt = NULL;
  tandem_runtime_options_init(&newer.o);
  assert_int_equal(newer.o.struct_size, sizeof(tandem_runtime_options_t));

  newer.o.struct_size = 0;
  expect_status(tandem_runtime_create(&newer.o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "size 0");
  assert_null(rt);
  expect_message_has("tandem_runtime_options_t.struct_size is 0");
  expect_message_has("set struct_size = sizeof(tandem_runtime_options_t)");

  newer.o.struct_size = (uint32_t)offsetof(tandem_runtime_options_t, max_submissions);
  expect_status(tandem_runtime_create(&newer.o, &rt), TANDEM_ERROR_INVALID_ARGUMENT, "too small");
  assert_null(rt);
  expect_message_has("less than the");
  expect_message_has("set struct_size = sizeof(tandem_runtime_options_t)");

  /* Exact: the options are read (a value that is not the default). */
  tandem_runtime_options_init(&newer.o);
  newer.o.max_submissions = 5;
  expect_status(tandem_runtime_create(&newer.o, &rt), TANDEM_OK, "exact");
  assert_int_equal(rt->options.max_submissions, 5);
  assert_int_equal(rt->options.struct_size, sizeof(tandem_runtime_options_t));
  tandem_runtime_destroy(rt);

  /* Larger, its tail zero: read as the known layout. */
  memset(newer.tail, 0, sizeof newer.tail);
  newer.o.struct_size = (uint32_t)sizeof newer;
  newer.o.graph_slots = 7;
  expect_status(tandem_runtime_create(&newer.o, &rt), TANDEM_OK, "larger, zero tail");
  assert_int_equal(rt->options.max_submissions, 5);
  assert_int_equal(rt->options.graph_slots, 7);
  assert_int_equal(rt->options.struct_size, sizeof(tandem_runtime_options_t));
  tandem_runtime_destroy(rt);

  /* Larger, a field this library does not have set: refused, naming the byte. */
  newer.tail[EXTRA - 1] = 1;
  rt = (tandem_runtime_t *)&newer;
  expect_status(tandem_runtime_create(&newer.o, &rt), TANDEM_ERROR_INVALID_ARGUMENT,
                "larger, non-zero tail");
  assert_null(rt);
  char byte[32];
  snprintf(byte, sizeof byte, "byte %zu is not zero", sizeof newer - 1);
  expect_message_has(byte);
  expect_message_has("tandem_runtime_options_t.struct_size");
}

/* An out struct of |size| bytes: the first |size| poisoned, struct_size set. */
static void poison(void *p, size_t total, uint32_t size) {
  memset(p, POISON, total);
  memcpy(p, &size, sizeof size);
}

/* Statistics: a buffer of 4096 bytes makes the counters known. */
static void test_statistics_struct_size(void **state) {
  (void)state;
  tandem_runtime_t *rt = host_runtime(false);
  tandem_buffer_t *buf = NULL;
  expect_status(tandem_buffer_create(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE, &buf), TANDEM_OK,
                "a buffer");
  struct {
    tandem_statistics_t st;
    unsigned char tail[EXTRA];
  } newer;
  const size_t known = sizeof(tandem_statistics_t);

  for (uint32_t size = 0; size <= 8; size += 8) { /* 0, and less than the oldest layout */
    poison(&newer, sizeof newer, size);
    expect_status(tandem_runtime_statistics(rt, &newer.st), TANDEM_ERROR_INVALID_ARGUMENT,
                  "a bad struct_size");
    expect_message_has("tandem_statistics_t.struct_size is");
    expect_message_has("set struct_size = sizeof(tandem_statistics_t)");
    assert_int_equal(newer.st.struct_size, size);
    assert_true(all_bytes((char *)&newer + 4, sizeof newer - 4, POISON)); /* nothing written */
  }
  expect_status(tandem_runtime_statistics(rt, NULL), TANDEM_ERROR_INVALID_ARGUMENT, "NULL out");
  expect_status(tandem_runtime_statistics(NULL, &newer.st), TANDEM_ERROR_INVALID_ARGUMENT,
                "NULL runtime");

  /* Exact: every counter written, the bytes after it untouched. */
  poison(&newer, sizeof newer, (uint32_t)known);
  expect_status(tandem_runtime_statistics(rt, &newer.st), TANDEM_OK, "exact");
  assert_int_equal(newer.st.struct_size, known);
  assert_int_equal(newer.st.allocations, 1);
  assert_int_equal(newer.st.live_bytes, 4096);
  assert_int_equal(newer.st.peak_bytes, 4096);
  assert_int_equal(newer.st.submissions, 0);
  assert_int_equal(newer.st.npu_runs, 0);
  assert_true(all_bytes(newer.tail, EXTRA, POISON));

  /* Larger: the same counters, the tail this library does not know zeroed. */
  poison(&newer, sizeof newer, (uint32_t)sizeof newer);
  expect_status(tandem_runtime_statistics(rt, &newer.st), TANDEM_OK, "larger");
  assert_int_equal(newer.st.struct_size, sizeof newer);
  assert_int_equal(newer.st.allocations, 1);
  assert_int_equal(newer.st.live_bytes, 4096);
  assert_true(all_bytes(newer.tail, EXTRA, 0));

  /* The _init function makes a struct the library fills. */
  tandem_statistics_t st;
  memset(&st, POISON, sizeof st);
  tandem_statistics_init(&st);
  assert_int_equal(st.struct_size, known);
  expect_status(tandem_runtime_statistics(rt, &st), TANDEM_OK, "after _init");
  assert_int_equal(st.live_bytes, 4096);
  tandem_buffer_release(buf);
  tandem_runtime_destroy(rt);
}

/* Device info: the host GPU describes itself (tests/core/host_gpu.c). */
static void test_device_info_struct_size(void **state) {
  (void)state;
  tandem_runtime_t *rt = host_runtime(false);
  struct {
    tandem_device_info_t info;
    unsigned char tail[EXTRA];
  } newer;
  poison(&newer, sizeof newer, 0);
  expect_status(tandem_runtime_gpu_info(rt, 0, &newer.info), TANDEM_ERROR_INVALID_ARGUMENT,
                "size 0");
  expect_message_has("tandem_device_info_t.struct_size is 0");
  expect_message_has("set struct_size = sizeof(tandem_device_info_t)");
  assert_true(all_bytes((char *)&newer + 4, sizeof newer - 4, POISON));
  poison(&newer, sizeof newer, 4);
  expect_status(tandem_runtime_gpu_info(rt, 0, &newer.info), TANDEM_ERROR_INVALID_ARGUMENT,
                "size 4");
  expect_message_has("tandem_device_info_t.struct_size is 4");

  /* Before and after the GPU opens (the backend's answer, then the open
   * device's), exact and larger. */
  for (int open = 0; open < 2; open++) {
    if (open) expect_status(tandem_runtime_open_gpu(rt), TANDEM_OK, "opening the host GPU");
    poison(&newer, sizeof newer, (uint32_t)sizeof(tandem_device_info_t));
    expect_status(tandem_runtime_gpu_info(rt, 0, &newer.info), TANDEM_OK, "exact");
    assert_int_equal(newer.info.struct_size, sizeof(tandem_device_info_t));
    assert_string_equal(newer.info.driver_name, "host");
    assert_true(newer.info.is_cpu);
    assert_int_equal(newer.info.max_shared_memory_bytes, 32768);
    assert_true(all_bytes(newer.tail, EXTRA, POISON));
    poison(&newer, sizeof newer, (uint32_t)sizeof newer);
    expect_status(tandem_runtime_gpu_info(rt, 0, &newer.info), TANDEM_OK, "larger");
    assert_int_equal(newer.info.struct_size, sizeof newer);
    assert_string_equal(newer.info.driver_name, "host");
    assert_int_equal(newer.info.max_shared_memory_bytes, 32768);
    assert_true(all_bytes(newer.tail, EXTRA, 0));
  }
  /* A failure still zeroes what it may write, struct_size kept. */
  poison(&newer, sizeof newer, (uint32_t)sizeof newer);
  expect_status(tandem_runtime_gpu_info(rt, 4, &newer.info), TANDEM_ERROR_OUT_OF_RANGE, "index 4");
  assert_int_equal(newer.info.struct_size, sizeof newer);
  assert_true(all_bytes((char *)&newer + 4, sizeof newer - 4, 0));
  tandem_runtime_destroy(rt);
}

static void host_noop(const host_gpu_dispatch_t *dispatch) { (void)dispatch; }

/* Kernel info: a host kernel of known shape. */
static void test_kernel_info_struct_size(void **state) {
  (void)state;
  tandem_runtime_t *rt = host_runtime(false);
  host_gpu_kernel_code_t code = {.magic = HOST_GPU_KERNEL_MAGIC,
                                 .binding_count = 1,
                                 .reads = {true},
                                 .writes = {true},
                                 .local_size = {4, 2, 1},
                                 .run = host_noop};
  tandem_binding_contract_t contract = {64, 16, TANDEM_ACCESS_READ_WRITE};
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                            .name = "registry_info",
                            .spirv = &code,
                            .spirv_size = sizeof code,
                            .workgroups = {3, 1, 1},
                            .bindings = &contract,
                            .binding_count = 1};
  tandem_kernel_t *k = NULL;
  expect_status(tandem_kernel_create(rt, &d, &k), TANDEM_OK, "a host kernel");
  struct {
    tandem_kernel_info_t info;
    unsigned char tail[EXTRA];
  } newer;
  poison(&newer, sizeof newer, 0);
  expect_status(tandem_kernel_info(k, &newer.info), TANDEM_ERROR_INVALID_ARGUMENT, "size 0");
  expect_message_has("set struct_size = sizeof(tandem_kernel_info_t)");
  assert_true(all_bytes((char *)&newer + 4, sizeof newer - 4, POISON));
  poison(&newer, sizeof newer, 2);
  expect_status(tandem_kernel_info(k, &newer.info), TANDEM_ERROR_INVALID_ARGUMENT, "size 2");
  expect_message_has("tandem_kernel_info_t.struct_size is 2");

  poison(&newer, sizeof newer, (uint32_t)sizeof(tandem_kernel_info_t));
  expect_status(tandem_kernel_info(k, &newer.info), TANDEM_OK, "exact");
  assert_int_equal(newer.info.local_size[0], 4);
  assert_int_equal(newer.info.local_size[1], 2);
  assert_int_equal(newer.info.workgroups[0], 3);
  assert_int_equal(newer.info.binding_count, 1);
  assert_true(all_bytes(newer.tail, EXTRA, POISON));
  poison(&newer, sizeof newer, (uint32_t)sizeof newer);
  expect_status(tandem_kernel_info(k, &newer.info), TANDEM_OK, "larger");
  assert_int_equal(newer.info.struct_size, sizeof newer);
  assert_int_equal(newer.info.local_size[0], 4);
  assert_int_equal(newer.info.binding_count, 1);
  assert_true(all_bytes(newer.tail, EXTRA, 0));
  /* A NULL kernel with a good struct: zeroed, struct_size kept. */
  poison(&newer, sizeof newer, (uint32_t)sizeof newer);
  expect_status(tandem_kernel_info(NULL, &newer.info), TANDEM_ERROR_INVALID_ARGUMENT, "NULL");
  assert_int_equal(newer.info.struct_size, sizeof newer);
  assert_true(all_bytes((char *)&newer + 4, sizeof newer - 4, 0));
  tandem_kernel_release(k);
  tandem_runtime_destroy(rt);
}

/* The kernel descriptor, passed in: 0, too small, exact, larger with a zero
 * tail (created, the known fields read), larger with a non-zero byte. */
static void test_kernel_desc_struct_size(void **state) {
  (void)state;
  tandem_runtime_t *rt = host_runtime(false);
  host_gpu_kernel_code_t code = {.magic = HOST_GPU_KERNEL_MAGIC,
                                 .binding_count = 1,
                                 .reads = {true},
                                 .local_size = {8, 1, 1},
                                 .run = host_noop};
  tandem_binding_contract_t contract = {64, 16, TANDEM_ACCESS_READ};
  struct {
    tandem_kernel_desc_t d;
    unsigned char tail[EXTRA];
  } newer;
  memset(&newer, 0, sizeof newer);
  tandem_kernel_desc_init(&newer.d);
  assert_int_equal(newer.d.struct_size, sizeof(tandem_kernel_desc_t));
  newer.d.name = "registry_desc";
  newer.d.spirv = &code;
  newer.d.spirv_size = sizeof code;
  newer.d.workgroups[0] = newer.d.workgroups[1] = newer.d.workgroups[2] = 2;
  newer.d.bindings = &contract;
  newer.d.binding_count = 1;
  tandem_kernel_t *k = NULL;
  const uint32_t bad[] = {0, (uint32_t)offsetof(tandem_kernel_desc_t, workgroups)};
  for (size_t i = 0; i < 2; i++) {
    newer.d.struct_size = bad[i];
    k = (tandem_kernel_t *)&newer;
    expect_status(tandem_kernel_create(rt, &newer.d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                  "a bad struct_size");
    assert_null(k);
    expect_message_has("tandem_kernel_desc_t.struct_size is");
    expect_message_has("set struct_size = sizeof(tandem_kernel_desc_t)");
  }
  for (int larger = 0; larger < 2; larger++) {
    newer.d.struct_size = larger ? (uint32_t)sizeof newer : (uint32_t)sizeof(tandem_kernel_desc_t);
    expect_status(tandem_kernel_create(rt, &newer.d, &k), TANDEM_OK, "exact or larger");
    tandem_kernel_info_t info;
    tandem_kernel_info_init(&info);
    expect_status(tandem_kernel_info(k, &info), TANDEM_OK, "its info");
    assert_int_equal(info.local_size[0], 8);
    assert_int_equal(info.workgroups[2], 2);
    assert_int_equal(info.binding_count, 1);
    assert_string_equal(tandem_kernel_name(k), "registry_desc");
    tandem_kernel_release(k);
  }
  newer.tail[3] = 0x10;
  k = (tandem_kernel_t *)&newer;
  expect_status(tandem_kernel_create(rt, &newer.d, &k), TANDEM_ERROR_INVALID_ARGUMENT,
                "larger, non-zero tail");
  assert_null(k);
  char byte[32];
  snprintf(byte, sizeof byte, "byte %zu is not zero", sizeof(tandem_kernel_desc_t) + 3);
  expect_message_has(byte);
  tandem_runtime_destroy(rt);
}

/* NPU info: the size is checked before the NPU is opened (or found absent);
 * the emulated NPU on the host GPU fills it. Its next (the extensions the
 * caller asks for) is read, not filled: the library keeps it as set, so it
 * is NULL in the struct passed in (tandem_npu_info_init), whatever the
 * poison around it. */
static void poison_info(void *p, size_t total, uint32_t size) {
  poison(p, total, size);
  if (size >= offsetof(tandem_npu_info_t, next) + sizeof(void *))
    memset((char *)p + offsetof(tandem_npu_info_t, next), 0, sizeof(void *));
}

static void test_npu_info_struct_size(void **state) {
  (void)state;
  tandem_runtime_t *none = host_runtime(false);
  struct {
    tandem_npu_info_t info;
    unsigned char tail[EXTRA];
  } newer;
  poison(&newer, sizeof newer, 0);
  expect_status(tandem_runtime_npu_info(none, &newer.info), TANDEM_ERROR_INVALID_ARGUMENT,
                "size 0");
  expect_message_has("set struct_size = sizeof(tandem_npu_info_t)");
  assert_true(all_bytes((char *)&newer + 4, sizeof newer - 4, POISON));
  poison_info(&newer, sizeof newer, (uint32_t)sizeof newer);
  expect_status(tandem_runtime_npu_info(none, &newer.info), TANDEM_ERROR_NO_DEVICE, "no NPU");
  assert_int_equal(newer.info.struct_size, sizeof newer);
  assert_true(all_bytes((char *)&newer + 4, sizeof newer - 4, 0));
  tandem_runtime_destroy(none);

  tandem_runtime_t *rt = host_runtime(true);
  poison(&newer, sizeof newer, 16);
  expect_status(tandem_runtime_npu_info(rt, &newer.info), TANDEM_ERROR_INVALID_ARGUMENT, "size 16");
  expect_message_has("tandem_npu_info_t.struct_size is 16");
  assert_null(atomic_load(&rt->npu)); /* refused before opening anything */
  poison_info(&newer, sizeof newer, (uint32_t)sizeof(tandem_npu_info_t));
  expect_status(tandem_runtime_npu_info(rt, &newer.info), TANDEM_OK, "exact");
  assert_true(newer.info.emulated);
  assert_non_null(strstr(newer.info.name, "emulated NPU"));
  assert_int_equal(newer.info.sharing, TANDEM_SHARING_HOST_POINTER);
  assert_true(newer.info.drm_node_count <= 8);
  assert_true(all_bytes(newer.tail, EXTRA, POISON));
  poison_info(&newer, sizeof newer, (uint32_t)sizeof newer);
  expect_status(tandem_runtime_npu_info(rt, &newer.info), TANDEM_OK, "larger");
  assert_true(newer.info.emulated);
  assert_int_equal(newer.info.sharing, TANDEM_SHARING_HOST_POINTER);
  assert_true(all_bytes(newer.tail, EXTRA, 0));
  tandem_runtime_destroy(rt);
}

/*---------------------------------------------------------------------------
 * struct_size of the interop, dispatch, NPU, lane and profile structs
 *---------------------------------------------------------------------------*/

/* One versioned struct and the call that takes it. |call| passes |user| (a
 * struct of this type with struct_size already set) to the library.
 * |template| (NULL: no valid struct can be made here) is what the exact and
 * the larger cases copy in before struct_size; |exact| is what the call
 * answers for it, with |exact_needle| in the message when not OK (a check
 * after struct_size, which proves the struct was read). |check| (may be
 * NULL) asserts what an out struct holds after an OK call. */
typedef struct sized_case {
  const char *type;
  size_t known;
  bool in; /* passed in (else filled by the library) */
  tandem_status_t (*call)(void *ctx, void *user);
  void *ctx;
  const void *template;
  tandem_status_t exact;
  const char *exact_needle;
  void (*check)(const void *user);
} sized_case_t;

static void expect_struct_refused(const sized_case_t *c, void *buf, size_t total, uint32_t size,
                                  const char *needle) {
  char prefix[128];
  snprintf(prefix, sizeof prefix, "%s.struct_size is %u", c->type, size);
  char fix[128];
  snprintf(fix, sizeof fix, "set struct_size = sizeof(%s)", c->type);
  poison(buf, total, size);
  expect_status(c->call(c->ctx, buf), TANDEM_ERROR_INVALID_ARGUMENT, prefix);
  expect_message_has(prefix);
  expect_message_has(fix);
  if (needle) expect_message_has(needle);
  assert_int_equal(*(uint32_t *)buf, size);
  if (!c->in) /* nothing written to a struct whose size is unknown */
    assert_true(all_bytes((char *)buf + 4, total - 4, POISON));
}

/* Runs the cases every versioned struct must pass (see the file comment). */
static void check_sized(const sized_case_t *c) {
  _Alignas(16) unsigned char buf[1024];
  size_t total = c->known + EXTRA;
  assert_true(total <= sizeof buf);
  expect_struct_refused(c, buf, total, 0, NULL);
  expect_struct_refused(c, buf, total, 2, "less than the");
  expect_struct_refused(c, buf, total, 0xEEEEEEEEu, "it was not set");
  if (c->in) { /* a newer layout that sets a field this library lacks */
    assert_non_null(c->template);
    memset(buf, 0, total);
    memcpy(buf, c->template, c->known);
    uint32_t size = (uint32_t)total;
    memcpy(buf, &size, sizeof size);
    buf[total - 1] = 1;
    expect_status(c->call(c->ctx, buf), TANDEM_ERROR_INVALID_ARGUMENT, "non-zero tail");
    char byte[64];
    snprintf(byte, sizeof byte, "byte %zu is not zero", total - 1);
    expect_message_has(byte);
    expect_message_has(c->type);
  }
  if (!c->template) return;
  for (int larger = 0; larger < 2; larger++) {
    uint32_t size = (uint32_t)(larger ? total : c->known);
    memset(buf, c->in ? 0 : POISON, total);
    if (c->in) memcpy(buf, c->template, c->known);
    memcpy(buf, &size, sizeof size);
    tandem_status_t got = c->call(c->ctx, buf);
    expect_status(got, c->exact, larger ? "larger" : "exact");
    if (got != TANDEM_OK) expect_message_has(c->exact_needle);
    assert_int_equal(*(uint32_t *)buf, size); /* never changed by the library */
    if (!c->in) { /* the tail: untouched when exact, zeroed when larger */
      assert_true(all_bytes(buf + c->known, EXTRA, larger ? 0 : POISON));
      if (got == TANDEM_OK && c->check) c->check(buf);
    }
  }
}

typedef struct sized_ctx {
  tandem_runtime_t *rt;
  tandem_graph_t *graph;
  tandem_buffer_t *buffer;
  tandem_completion_t *done;
} sized_ctx_t;

static tandem_status_t call_dispatch(void *ctx, void *user) {
  return tandem_graph_add_dispatch_node(((sized_ctx_t *)ctx)->graph, user, NULL);
}
static tandem_status_t call_npu_program(void *ctx, void *user) {
  tandem_npu_program_t *p = NULL;
  tandem_status_t s = tandem_npu_program_create(((sized_ctx_t *)ctx)->rt, user, &p);
  tandem_npu_program_release(p);
  return s;
}
static tandem_status_t call_vulkan_device(void *ctx, void *user) {
  (void)ctx;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.gpu_backend = HOST_GPU_BACKEND;
  o.vulkan_device = user;
  tandem_runtime_t *rt = NULL;
  tandem_status_t s = tandem_runtime_create(&o, &rt);
  tandem_runtime_destroy(rt);
  return s;
}
static tandem_status_t call_vulkan_buffer(void *ctx, void *user) {
  tandem_buffer_t *b = NULL;
  tandem_status_t s = tandem_buffer_adopt_vulkan(((sized_ctx_t *)ctx)->rt, user, &b);
  tandem_buffer_release(b);
  return s;
}
static tandem_status_t call_vulkan_kernel(void *ctx, void *user) {
  tandem_kernel_t *k = NULL;
  tandem_status_t s = tandem_kernel_adopt_vulkan(((sized_ctx_t *)ctx)->rt, user, &k);
  tandem_kernel_release(k);
  return s;
}
static tandem_status_t call_import(void *ctx, void *user) {
  tandem_buffer_t *b = NULL;
  tandem_status_t s =
      tandem_buffer_import_fd(((sized_ctx_t *)ctx)->rt, user, 4096, TANDEM_PLACEMENT_GPU_LOCAL, &b);
  tandem_buffer_release(b);
  return s;
}
static tandem_status_t call_export(void *ctx, void *user) {
  return tandem_buffer_export_fd(((sized_ctx_t *)ctx)->buffer, TANDEM_EXTERNAL_MEMORY_OPAQUE_FD,
                                 user);
}
static tandem_status_t call_lane_info(void *ctx, void *user) {
  return tandem_runtime_lane_info(((sized_ctx_t *)ctx)->rt, TANDEM_LANE_COMPUTE, user);
}
static tandem_status_t call_handles(void *ctx, void *user) {
  return tandem_runtime_vulkan_handles(((sized_ctx_t *)ctx)->rt, user);
}
static tandem_status_t call_profile(void *ctx, void *user) {
  return tandem_completion_profile(((sized_ctx_t *)ctx)->done, user, NULL, 0);
}

static void check_lane_info(const void *user) {
  const tandem_lane_info_t *li = user;
  assert_int_equal(li->kind, TANDEM_LANE_KIND_GPU_QUEUE);
  assert_string_equal(li->name, "compute");
  assert_int_equal(li->submissions, 1); /* the fill below */
}
static void check_handles(const void *user) {
  const tandem_vulkan_handles_t *h = user; /* the host GPU has no Vulkan objects */
  assert_null(h->device);
  assert_null(h->lanes[TANDEM_LANE_COMPUTE].queue);
}
static void check_profile(const void *user) {
  const tandem_completion_profile_t *p = user;
  assert_int_equal(p->region_count, 1);
  assert_true(p->host_observed_ns >= p->host_submit_ns && p->host_submit_ns > 0);
}

static void test_more_struct_sizes(void **state) {
  (void)state;
  sized_ctx_t ctx = {.rt = host_runtime(true)};
  expect_status(tandem_buffer_create(ctx.rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE, &ctx.buffer),
                TANDEM_OK, "a buffer");
  host_gpu_kernel_code_t code = {.magic = HOST_GPU_KERNEL_MAGIC,
                                 .binding_count = 1,
                                 .reads = {true},
                                 .local_size = {8, 1, 1},
                                 .run = host_noop};
  tandem_binding_contract_t contract = {64, 16, TANDEM_ACCESS_READ};
  tandem_kernel_desc_t kd = {.struct_size = sizeof kd,
                             .name = "registry_sized",
                             .spirv = &code,
                             .spirv_size = sizeof code,
                             .workgroups = {1, 1, 1},
                             .bindings = &contract,
                             .binding_count = 1};
  tandem_kernel_t *k = NULL;
  expect_status(tandem_kernel_create(ctx.rt, &kd, &k), TANDEM_OK, "a host kernel");
  /* One finished submission (a fill on the compute lane) for the profile. */
  expect_status(tandem_graph_create(ctx.rt, &ctx.graph), TANDEM_OK, "a graph");
  expect_status(tandem_graph_add_fill(ctx.graph, tandem_buffer_whole(ctx.buffer), 7,
                                      TANDEM_LANE_COMPUTE),
                TANDEM_OK, "a fill");
  tandem_exec_t *e = NULL;
  expect_status(tandem_graph_prepare(ctx.graph, &e), TANDEM_OK, "prepare");
  expect_status(tandem_exec_submit(e, &ctx.done), TANDEM_OK, "submit");
  expect_status(tandem_completion_wait(ctx.done), TANDEM_OK, "wait");

  tandem_view_t view;
  expect_status(tandem_buffer_view(ctx.buffer, 0, 64, &view), TANDEM_OK, "a view");
  tandem_dispatch_desc_t dispatch;
  tandem_dispatch_desc_init(&dispatch);
  dispatch.kernel = k;
  dispatch.views = &view;
  dispatch.view_count = 1;
  tandem_binding_contract_t npu_contract[3] = {{4096, 4, TANDEM_ACCESS_READ},
                                               {4096, 4, TANDEM_ACCESS_READ},
                                               {4096, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t program;
  tandem_npu_program_desc_init(&program);
  program.program_path = TANDEM_TEST_EMU_XCLBIN;
  program.kernel_name = "add_i32";
  program.bindings = npu_contract;
  program.binding_count = 3;
  program.scalar_count = 1;
  tandem_vulkan_device_t vdev; /* the host GPU refuses it after the struct is read */
  tandem_vulkan_device_init(&vdev);
  tandem_vulkan_buffer_t vbuf; /* no handles: refused after the struct is read */
  tandem_vulkan_buffer_init(&vbuf);
  tandem_vulkan_kernel_t vkern;
  tandem_vulkan_kernel_init(&vkern);
  tandem_external_memory_t import;
  tandem_external_memory_init(&import);
  import.type = TANDEM_EXTERNAL_MEMORY_OPAQUE_FD;

  const sized_case_t cases[] = {
      {"tandem_dispatch_desc_t", sizeof(tandem_dispatch_desc_t), true, call_dispatch, &ctx,
       &dispatch, TANDEM_OK, NULL, NULL},
      {"tandem_npu_program_desc_t", sizeof(tandem_npu_program_desc_t), true, call_npu_program, &ctx,
       &program, TANDEM_OK, NULL, NULL},
      {"tandem_vulkan_device_t", sizeof(tandem_vulkan_device_t), true, call_vulkan_device, &ctx,
       &vdev, TANDEM_ERROR_UNSUPPORTED, "GPU backend 'host' cannot run on an application's", NULL},
      {"tandem_vulkan_buffer_t", sizeof(tandem_vulkan_buffer_t), true, call_vulkan_buffer, &ctx,
       &vbuf, TANDEM_ERROR_INVALID_ARGUMENT, "desc->device is NULL", NULL},
      {"tandem_vulkan_kernel_t", sizeof(tandem_vulkan_kernel_t), true, call_vulkan_kernel, &ctx,
       &vkern, TANDEM_ERROR_INVALID_ARGUMENT, "desc->kernel is NULL", NULL},
      {"tandem_external_memory_t", sizeof(tandem_external_memory_t), true, call_import, &ctx,
       &import, TANDEM_ERROR_INVALID_ARGUMENT, "not an open file descriptor", NULL},
      {"tandem_external_memory_t", sizeof(tandem_external_memory_t), false, call_export, &ctx, "",
       TANDEM_ERROR_UNSUPPORTED, "the host GPU exports no memory", NULL},
      {"tandem_lane_info_t", sizeof(tandem_lane_info_t), false, call_lane_info, &ctx, "", TANDEM_OK,
       NULL, check_lane_info},
      {"tandem_vulkan_handles_t", sizeof(tandem_vulkan_handles_t), false, call_handles, &ctx, "",
       TANDEM_OK, NULL, check_handles},
      {"tandem_completion_profile_t", sizeof(tandem_completion_profile_t), false, call_profile,
       &ctx, "", TANDEM_OK, NULL, check_profile},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    print_message("%s (%s)\n", cases[i].type, cases[i].in ? "in" : "out");
    check_sized(&cases[i]);
  }
  /* A failed export still leaves fd -1 in a struct of a good size. */
  tandem_external_memory_t out;
  memset(&out, POISON, sizeof out);
  out.struct_size = sizeof out;
  expect_status(call_export(&ctx, &out), TANDEM_ERROR_UNSUPPORTED, "export of a plain buffer");
  assert_int_equal(out.fd, -1);

  tandem_completion_release(ctx.done);
  tandem_exec_release(e);
  tandem_graph_release(ctx.graph);
  tandem_kernel_release(k);
  tandem_buffer_release(ctx.buffer);
  tandem_runtime_destroy(ctx.rt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gpu_lookup),
      cmocka_unit_test(test_npu_lookup),
      cmocka_unit_test(test_fault_kind),
      cmocka_unit_test(test_runtime_option),
      cmocka_unit_test(test_xrt_extensions),
      cmocka_unit_test(test_options_struct_size),
      cmocka_unit_test(test_statistics_struct_size),
      cmocka_unit_test(test_device_info_struct_size),
      cmocka_unit_test(test_kernel_info_struct_size),
      cmocka_unit_test(test_kernel_desc_struct_size),
      cmocka_unit_test(test_npu_info_struct_size),
      cmocka_unit_test(test_more_struct_sizes),
      cmocka_unit_test(test_register), /* last: it fills the table */
  };
  return cmocka_run_group_tests_name("test_registry", tests, NULL, NULL);
}
