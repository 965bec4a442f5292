/* SPDX-License-Identifier: MIT */
/*
 * fuzz_kernel.c — libFuzzer target for kernel creation through the public
 * API: hostile SPIR-V plus a contract and specialization, on the default
 * Vulkan device (lavapipe in CI), one runtime for the whole run.
 *
 * Input: a 16-byte header, then |binding_count| 4-byte binding contracts,
 * then |spec_count| 8-byte specialization constants, then the SPIR-V bytes
 * (any length; a size that is not a multiple of 4 must be refused).
 *   header[0] binding_count % 33          header[1] push_constant_bytes % 129
 *   header[2] spec_count % 5              header[3] bit 0: give local_size
 *   header[4..6] local_size (bytes)       header[7] workgroups (all three; 0 none)
 *   binding: access % 4, log2 alignment % 8, bytes (uint16 LE, 0 kept)
 *   spec:    id, type % 8, 2 unused, value (uint32 LE)
 * Every call must return (no abort, no sanitizer report); a success must be a
 * kernel whose info agrees with the contract. fuzz/README.md says how to run it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tandem/tandem.h"

#include "resident.h"

static tandem_runtime_t *g_runtime;

static void on_validation_message(void *user, tandem_validation_severity_t severity,
                                  const char *message) {
  (void)user;
  (void)severity;
  fprintf(stderr, "fuzz_kernel: validation message: %s\n", message);
  abort();
}

/* At exit (before LeakSanitizer's check, registered earlier, runs): the
 * runtime goes, so the driver frees what it holds for it. */
static void destroy_runtime(void) {
  tandem_runtime_destroy(g_runtime);
  g_runtime = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_keep_drivers_resident();
  tandem_runtime_options_t options;
  tandem_runtime_options_init(&options);
  /* The replay test (fuzz/replay.c) runs with the validation layer; any
   * message is a failure. Fuzzing itself runs without it, for speed. */
  const char *validate = getenv("TANDEM_FUZZ_VALIDATION");
  options.validation = validate && validate[0] == '1';
  options.validation_callback = on_validation_message;
  if (tandem_runtime_create(&options, &g_runtime) != TANDEM_OK ||
      tandem_runtime_open_gpu(g_runtime) != TANDEM_OK) {
    fprintf(stderr, "fuzz_kernel: no usable Vulkan device: %s\n", tandem_error_message());
    abort();
  }
  atexit(destroy_runtime);
  return 0;
}

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 16) return 0;
  tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t), .name = "fuzz"};
  tandem_binding_contract_t bindings[TANDEM_MAX_BINDINGS];
  tandem_spec_constant_t specs[4];
  const uint8_t *h = data;
  d.binding_count = h[0] % (TANDEM_MAX_BINDINGS + 1);
  d.push_constant_bytes = h[1] % (TANDEM_MAX_PUSH_CONSTANT_BYTES + 1);
  d.spec_constant_count = h[2] % 5;
  if (h[3] & 1)
    for (int i = 0; i < 3; i++) d.local_size[i] = h[4 + i];
  for (int i = 0; i < 3; i++) d.workgroups[i] = h[7];
  size_t at = 16;
  if (size < at + 4 * (size_t)d.binding_count + 8 * (size_t)d.spec_constant_count) return 0;
  for (uint32_t i = 0; i < d.binding_count; i++, at += 4)
    bindings[i] = (tandem_binding_contract_t){.bytes = le16(data + at + 2),
                                              .alignment = 1u << (data[at + 1] % 8),
                                              .access = (tandem_access_t)(data[at] % 4)};
  for (uint32_t i = 0; i < d.spec_constant_count; i++, at += 8) {
    specs[i].id = data[at];
    specs[i].type = (tandem_scalar_type_t)(data[at + 1] % 8);
    specs[i].value.u64 = le32(data + at + 4);
  }
  d.bindings = bindings;
  d.spec_constants = specs;
  /* A copy of exactly the SPIR-V bytes, so ASan sees any read past them. */
  size_t n = size - at;
  void *spirv = malloc(n ? n : 1);
  if (!spirv) return 0;
  memcpy(spirv, data + at, n);
  d.spirv = spirv;
  d.spirv_size = n;
  tandem_kernel_t *kernel = NULL;
  tandem_status_t s = tandem_kernel_create(g_runtime, &d, &kernel);
  free(spirv);
  if (s == TANDEM_OK) {
    tandem_kernel_info_t info;
    tandem_kernel_info_init(&info);
    if (tandem_kernel_info(kernel, &info) != TANDEM_OK || info.binding_count != d.binding_count ||
        info.push_constant_bytes != d.push_constant_bytes) {
      fprintf(stderr, "fuzz_kernel: accepted kernel disagrees with its contract\n");
      abort();
    }
    tandem_kernel_release(kernel);
  } else if (kernel != NULL || tandem_error_message()[0] == '\0') {
    fprintf(stderr, "fuzz_kernel: failure %s without a message or with a kernel\n",
            tandem_status_name(s));
    abort();
  }
  return 0;
}
