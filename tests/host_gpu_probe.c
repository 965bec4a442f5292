/* SPDX-License-Identifier: MIT */
/*
 * host_gpu_probe.c — host_gpu_probe.h: from core's runtime, executable and
 * buffer to the host GPU's objects. The one place outside core that reads
 * core's layouts for the host GPU (the runtime's GPUs, an executable's
 * natives, a buffer's native); the backend hands back only what its own
 * natives hold (host_gpu_from, host_gpu_program_id, host_gpu_buffer_bytes).
 */
#include "host_gpu_probe.h"

#include "core/backend.h"
#include "core/buffer_int.h"
#include "core/exec_int.h"
#include "core/runtime.h"
#include "core/runtime_int.h"

host_gpu_t *host_gpu_of(tandem_runtime_t *runtime) {
  tandem__gpu_t *gpu;
  if (!runtime || runtime->gpus[0].backend != &tandem_host_gpu_backend) return NULL;
  if (tandem__runtime_gpu(runtime, &gpu) != TANDEM_OK) return NULL;
  return host_gpu_from(gpu);
}

uint32_t host_gpu_program_of(const tandem_exec_t *exec) {
  return exec ? host_gpu_program_id(exec->natives[0]) : 0;
}

uint8_t *host_gpu_memory(const tandem_buffer_t *buffer) {
  return buffer ? host_gpu_buffer_bytes(buffer->native) : NULL;
}
