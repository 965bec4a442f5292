/* SPDX-License-Identifier: MIT */
/*
 * kernels.c — the kernels shipped with tandem's emulated NPU device (a test
 * and development device, not hardware). Built as libtandem_emu_kernels.so and
 * named by the generated tandem_emu_kernels.xclbin. Each kernel checks that its
 * buffer objects are large enough for its scalar sizes and fails otherwise,
 * the way a real device would fault on an out-of-bounds access.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tandem_emu_kernel.h"

/* true when |arg| (a BO) holds at least a*b*elem bytes, without overflow. */
static bool fits(const tandem_emu_arg_t *arg, uint64_t a, uint64_t b, size_t elem) {
  uint64_t n = 0;
  uint64_t bytes = 0;
  if (arg->ptr == NULL) return false;
  if (__builtin_mul_overflow(a, b, &n) || __builtin_mul_overflow(n, (uint64_t)elem, &bytes))
    return false;
  return bytes <= (uint64_t)arg->size;
}

static float f32_from_bits(uint64_t bits) {
  uint32_t b = (uint32_t)bits;
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* C[MxN] = A[MxK] . B[KxN], f32, row-major. args: A, B, C, M, N, K. */
static int matmul_f32(const tandem_emu_arg_t *args, uint32_t count) {
  if (count != 6) return 1;
  const uint64_t m = args[3].value, n = args[4].value, k = args[5].value;
  if (!fits(&args[0], m, k, sizeof(float)) || !fits(&args[1], k, n, sizeof(float)) ||
      !fits(&args[2], m, n, sizeof(float)))
    return 1;
  const float *a = args[0].ptr;
  const float *b = args[1].ptr;
  float *c = args[2].ptr;
  for (uint64_t i = 0; i < m; i++) {
    for (uint64_t j = 0; j < n; j++) {
      float acc = 0.0f;
      for (uint64_t p = 0; p < k; p++) acc += a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
  }
  return 0;
}

/* C[MxN] (int32) = A[MxK] (int8) . B[KxN] (int8), row-major, wrapping sums. */
static int matmul_i8(const tandem_emu_arg_t *args, uint32_t count) {
  if (count != 6) return 1;
  const uint64_t m = args[3].value, n = args[4].value, k = args[5].value;
  if (!fits(&args[0], m, k, 1) || !fits(&args[1], k, n, 1) || !fits(&args[2], m, n, 4)) return 1;
  const int8_t *a = args[0].ptr;
  const int8_t *b = args[1].ptr;
  int32_t *c = args[2].ptr;
  for (uint64_t i = 0; i < m; i++) {
    for (uint64_t j = 0; j < n; j++) {
      uint32_t acc = 0;
      for (uint64_t p = 0; p < k; p++)
        acc += (uint32_t)((int32_t)a[i * k + p] * (int32_t)b[p * n + j]);
      c[i * n + j] = (int32_t)acc;
    }
  }
  return 0;
}

/* y[i] = x[i] * scale + bias; args: X, Y, n, scale (f32 bits), bias (f32 bits). */
static int scale_add_f32(const tandem_emu_arg_t *args, uint32_t count) {
  if (count != 5) return 1;
  const uint64_t n = args[2].value;
  if (!fits(&args[0], n, 1, sizeof(float)) || !fits(&args[1], n, 1, sizeof(float))) return 1;
  const float scale = f32_from_bits(args[3].value), bias = f32_from_bits(args[4].value);
  const float *x = args[0].ptr;
  float *y = args[1].ptr;
  for (uint64_t i = 0; i < n; i++) y[i] = x[i] * scale + bias;
  return 0;
}

/* C[i] = A[i] + B[i], int32, wrapping; args: A, B, C, n. */
static int add_i32(const tandem_emu_arg_t *args, uint32_t count) {
  if (count != 4) return 1;
  const uint64_t n = args[3].value;
  for (int i = 0; i < 3; i++)
    if (!fits(&args[i], n, 1, sizeof(int32_t))) return 1;
  const int32_t *a = args[0].ptr;
  const int32_t *b = args[1].ptr;
  int32_t *c = args[2].ptr;
  for (uint64_t i = 0; i < n; i++) c[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
  return 0;
}

/* Sleeps |ms| milliseconds, then writes 1 to the first uint of the BO (for
 * watchdog and timeout tests); args: BO, ms. */
static int sleep_ms(const tandem_emu_arg_t *args, uint32_t count) {
  if (count != 2 || !fits(&args[0], 1, 1, sizeof(uint32_t))) return 1;
  const uint64_t ms = args[1].value;
  struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
  const uint32_t one = 1;
  memcpy(args[0].ptr, &one, sizeof one);
  return 0;
}

/* Always fails (for failure-propagation tests); args: one BO. */
static int fail(const tandem_emu_arg_t *args, uint32_t count) {
  (void)args;
  (void)count;
  return 1;
}

static const tandem_emu_kernel_t kernels[] = {
    {"matmul_f32", "bbbuuu", matmul_f32, NULL},
    {"matmul_i8", "bbbuuu", matmul_i8, NULL},
    {"scale_add_f32", "bbuuu", scale_add_f32, NULL},
    {"add_i32", "bbbu", add_i32, NULL},
    {"sleep_ms", "bu", sleep_ms, NULL},
    {"fail", "b", fail, NULL},
    /* add_i32 with C connected to bank 2: tandem must refuse it (its data
     * buffers are in bank 0) rather than let XRT clone C. */
    {"add_i32_c_bank2", "bbbu", add_i32, "002-"},
};

TANDEM_EMU_KERNELS_EXPORT const tandem_emu_kernel_t *tandem_emu_kernels(uint32_t *out_count) {
  *out_count = (uint32_t)(sizeof kernels / sizeof kernels[0]);
  return kernels;
}
