/* SPDX-License-Identifier: MIT */
/*
 * registry.h — where core finds its backends: by name, never by function.
 *
 * A runtime chooses its GPU backend at creation from the runtime option
 * gpu_backend (NULL: "vulkan"; "host": the host GPU, a test device) and its
 * NPU backend from the option npu_backend ("xrt", "emulated"; NULL or "":
 * none). Both are looked up here by name; everything after that goes through the entry's
 * functions and the device's vtable (core/backend.h, core/npu_backend.h).
 * core/registry.c holds the built-in tables, the only place in core/ that
 * names a backend. Code linked with the library's objects (tests) may add GPU
 * backends of its own with tandem__gpu_backend_register.
 */
#ifndef TANDEM_CORE_REGISTRY_H_
#define TANDEM_CORE_REGISTRY_H_

#include "core/backend.h"
#include "core/npu_backend.h"

/* The GPU backend named |name| (NULL: "vulkan") in |*out|. Errors:
 * INVALID_ARGUMENT for an unknown name, naming every known one. Thread-safe. */
tandem_status_t tandem__gpu_backend_find(const char *name, const tandem__gpu_backend_t **out);

/* The NPU backend named |name| in |*out|. Errors: INVALID_ARGUMENT for an
 * unknown name, naming every known one. Thread-safe. */
tandem_status_t tandem__npu_backend_find(const char *name, const tandem__npu_backend_t **out);

/* Adds |backend| to the GPU backends, after the built-in ones, for good (a
 * test hook: tests/core/test_registry.c registers some). Registering the same
 * entry again is a no-op. Errors: INVALID_ARGUMENT (NULL, no name, a name
 * another entry has), BUSY (the table of added backends is full). Like every
 * internal function it is hidden: only code linked with the library's objects
 * reaches it. Thread-safe. */
tandem_status_t tandem__gpu_backend_register(const tandem__gpu_backend_t *backend);

#endif /* TANDEM_CORE_REGISTRY_H_ */
