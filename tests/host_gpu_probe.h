/* SPDX-License-Identifier: MIT */
/*
 * host_gpu_probe.h — what tests reach of a host GPU through core's objects
 * (tests/host_gpu_probe.c): the runtime's host GPU, the program number of a
 * prepared executable and a buffer's bytes. These read core's layouts, so
 * they live with the tests that link the library's objects, not in the
 * backend (backends/host/ includes only core/backend.h and core's basics,
 * tests/core/check_boundary.sh).
 */
#ifndef TANDEM_TESTS_HOST_GPU_PROBE_H_
#define TANDEM_TESTS_HOST_GPU_PROBE_H_

#include <stdint.h>

#include "host_gpu.h"
#include "tandem/tandem.h"

/* The runtime's GPU, opened if needed; NULL when it is not a host GPU. */
host_gpu_t *host_gpu_of(tandem_runtime_t *runtime);
/* The program number of a prepared executable (its events' |program|). */
uint32_t host_gpu_program_of(const tandem_exec_t *exec);
/* The GPU side of a buffer (any placement with one): its bytes. */
uint8_t *host_gpu_memory(const tandem_buffer_t *buffer);

#endif /* TANDEM_TESTS_HOST_GPU_PROBE_H_ */
