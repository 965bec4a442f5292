/* SPDX-License-Identifier: MIT */
/*
 * tandem_testing.h — test-only controls. Not for applications: the interface
 * may change without notice, and builds with TANDEM_UNTESTABLE defined return
 * UNIMPLEMENTED from every call here.
 *
 * The suite uses these hooks to prove that its own checks can fail (a
 * deliberately invalid Vulkan call must be counted as a validation message)
 * and to inject failures at numbered sites inside the library.
 */
#ifndef TANDEM_TANDEM_TESTING_H_
#define TANDEM_TANDEM_TESTING_H_

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tandem_test_op {
  /* Makes one deliberately invalid Vulkan call on the runtime's device
   * (vkCreateBuffer with size 0), which the validation layer must report.
   * The runtime's GPU must be open. */
  TANDEM_TEST_INJECT_VALIDATION_ERROR = 1,
  /* The next submission on this runtime fails when it finishes, as if its
   * device had reported an error: its completion's result is
   * TANDEM_ERROR_INTERNAL, the bytes it writes are poisoned, and every
   * submission that reads them fails with FAILED_DEPENDENCY (tandem.h,
   * Completions: the failure model). */
  TANDEM_TEST_FAIL_NEXT_SUBMISSION = 2,
} tandem_test_op_t;

/*--------------------------------------------------------------------------
 * Numbered fault injection (SQLite's sqlite3FaultSim idea). Process-wide:
 * once armed, every counted native call takes the next number — each host
 * allocation of the library (malloc, calloc, realloc, strdup), each fallible
 * Vulkan call (those returning VkResult, through tandem's function tables),
 * each XRT call (through the loaded API table) — and call |fail_at| fails as
 * the native API would (NULL / ENOMEM; VK_ERROR_OUT_OF_HOST_MEMORY, or
 * VK_ERROR_DEVICE_LOST for queue, wait and signal calls; XRT's error return
 * with errno EIO). With |persistent|, every later counted call fails too.
 * Tests run a scenario for fail_at = 1, 2, ... until a run reports no
 * failure (tests/cts/test_fault.c).
 *--------------------------------------------------------------------------*/
typedef enum tandem_test_fault_kind {
  TANDEM_TEST_FAULT_ALLOC = 1,  /* the library's host allocations */
  TANDEM_TEST_FAULT_VULKAN = 2, /* the "vulkan" GPU backend's calls */
  TANDEM_TEST_FAULT_XRT = 4,    /* the "xrt" NPU backend's calls (and "emulated"'s: one path) */
  TANDEM_TEST_FAULT_ALL = 7,
} tandem_test_fault_kind_t;

/* The kind that counts the native calls of the GPU or NPU backend named
 * |backend|, as the runtime options name it ("vulkan", "xrt", "emulated"),
 * in *out_kind: a test arms faults for the backend a runtime uses without
 * naming its API. Errors: INVALID_ARGUMENT (NULL, or no backend of that
 * name, naming the known ones), UNSUPPORTED (a backend that makes no
 * counted native calls: "host"), UNIMPLEMENTED (TANDEM_UNTESTABLE).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_test_fault_kind(const char *backend, uint32_t *out_kind);

typedef struct tandem_test_fault {
  uint64_t fail_at; /* 1-based number of the call to fail; 0 turns injection off */
  bool persistent;  /* also fail every counted call after it */
  uint32_t kinds;   /* tandem_test_fault_kind_t bits to count; 0 = all */
} tandem_test_fault_t;

typedef struct tandem_test_fault_report {
  uint64_t counted;     /* counted calls since the last tandem_test_fault_set */
  uint64_t failed;      /* of them, made to fail */
  char first_site[128]; /* the first call made to fail ("vkQueueSubmit2", "core/exec.c:51") */
} tandem_test_fault_report_t;

/* Arms (or with NULL / fail_at 0 disarms) injection and zeroes the counts.
 * Errors: INVALID_ARGUMENT (unknown kind bits), UNIMPLEMENTED
 * (TANDEM_UNTESTABLE). Thread-safe, but calls racing with it may or may not
 * be counted. */
TANDEM_API tandem_status_t tandem_test_fault_set(const tandem_test_fault_t *fault);
/* What happened since the last tandem_test_fault_set. Errors:
 * INVALID_ARGUMENT (NULL), UNIMPLEMENTED (TANDEM_UNTESTABLE). Thread-safe. */
TANDEM_API tandem_status_t tandem_test_fault_report(tandem_test_fault_report_t *out_report);

/* Coverage of the sweep: every distinct site counted (reached, failed or
 * not) while injection was armed, since the process started, of the kinds
 * in |kinds| (0 = all): allocation sites as "core/prepare.c:42", Vulkan and
 * XRT calls by name. Writes up to |capacity| of them to |out_sites| (static
 * strings, valid while the library is loaded; NULL with capacity 0 asks
 * only the count) and how many there are to *out_count. A process keeps
 * up to 512 sites. Errors: INVALID_ARGUMENT (NULL out_count, NULL out_sites
 * with capacity, unknown kind bits), UNIMPLEMENTED (TANDEM_UNTESTABLE).
 * Thread-safe. */
TANDEM_API tandem_status_t tandem_test_fault_sites(uint32_t kinds, const char **out_sites,
                                                   uint32_t capacity, uint32_t *out_count);

/* The distinct sites made to fail since the last tandem_test_fault_set, in
 * the order they first failed (one with a transient fault; with
 * |persistent|, every site counted after fail_at): names as for
 * tandem_test_fault_sites. Writes up to |capacity| to |out_sites| and how
 * many there are (at most 64 are kept) to *out_count. Errors:
 * INVALID_ARGUMENT (NULL out_count, NULL out_sites with capacity),
 * UNIMPLEMENTED (TANDEM_UNTESTABLE). Thread-safe. */
TANDEM_API tandem_status_t tandem_test_fault_failed_sites(const char **out_sites, uint32_t capacity,
                                                          uint32_t *out_count);

/* Runs test operation |op| on |runtime|. Errors: INVALID_ARGUMENT (unknown op),
 * UNIMPLEMENTED (TANDEM_UNTESTABLE build), and whatever the operation raises. */
TANDEM_API tandem_status_t tandem_test_control(tandem_runtime_t *runtime, tandem_test_op_t op);

/*--------------------------------------------------------------------------
 * The host GPU (runtime option gpu_backend = "host"): a test and development
 * device on host threads, never hardware. It runs no GPU code: a kernel made
 * from SPIR-V is reflected and checked as on Vulkan, then runs the C twin
 * registered for that SPIR-V (same bytes, same entry point). A twin does for
 * every invocation of the dispatch what the shader does, honouring the
 * workgroup size and push constants it is given, so results match.
 *--------------------------------------------------------------------------*/

typedef struct tandem_test_host_dispatch {
  uint32_t binding_count;
  uint8_t *bindings[TANDEM_MAX_BINDINGS];      /* the view's bytes from its offset */
  uint64_t binding_bytes[TANDEM_MAX_BINDINGS]; /* the contract's bytes: all the kernel sees */
  const void *push;
  uint32_t push_bytes;
  uint32_t workgroups[3]; /* direct, or read from the indirect view */
  uint32_t local_size[3]; /* the effective workgroup size */
} tandem_test_host_dispatch_t;

typedef void (*tandem_test_host_kernel_fn)(const tandem_test_host_dispatch_t *dispatch);

/* Registers |fn| as the host twin of the |spirv_size| bytes at |spirv| with
 * entry point |entry_point| (NULL: "main"), process-wide, for good; the
 * bytes are hashed, not kept. Registering the same again is a no-op. On the
 * host GPU, tandem_kernel_create of SPIR-V without a twin fails with
 * UNSUPPORTED naming the kernel. Errors: INVALID_ARGUMENT (NULL, not
 * SPIR-V), BUSY (the table of twins is full), UNIMPLEMENTED
 * (TANDEM_UNTESTABLE). Thread-safe. */
TANDEM_API tandem_status_t tandem_test_host_kernel_register(const void *spirv, size_t spirv_size,
                                                            const char *entry_point,
                                                            tandem_test_host_kernel_fn fn);

/* The host GPU's ordering check (backends/host/host_gpu.h): conflicting
 * accesses (overlapping bytes, one side writes) that no timeline wait or
 * barrier ordered, found since |runtime|'s GPU opened, and the first one in
 * words (empty when none). Errors: INVALID_ARGUMENT (NULL), UNSUPPORTED (the
 * runtime's GPU backend has no ordering check), what opening the GPU
 * raises, UNIMPLEMENTED (TANDEM_UNTESTABLE). */
typedef struct tandem_test_unordered {
  uint64_t count;
  char first[256];
} tandem_test_unordered_t;
TANDEM_API tandem_status_t tandem_test_unordered(tandem_runtime_t *runtime,
                                                 tandem_test_unordered_t *out);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_TANDEM_TESTING_H_ */
