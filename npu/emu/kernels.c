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

#include "internal/emu_dpu.h"
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

/* The smallest size (in int32 elements) of the BOs at |idx|. */
static uint64_t min_elems(const tandem_emu_arg_t *args, const int *idx, int count) {
  uint64_t n = UINT64_MAX;
  for (int i = 0; i < count; i++) {
    const uint64_t e = args[idx[i]].ptr != NULL ? args[idx[i]].size / 4 : 0;
    if (e < n) n = e;
  }
  return n;
}

/* An mlir-aie style DPU kernel: opcode (u64), instr, ninstr (u32), bo0..bo4.
 * Executes the instruction stream of internal/emu_dpu.h from the device side
 * of the instruction buffer: an unsynced buffer (zeros) fails the magic
 * check, a stale one runs the old program. */
static int dpu_vector(const tandem_emu_arg_t *args, uint32_t count) {
  if (count != 8 || args[0].value != TANDEM_EMU_DPU_OPCODE) return 1;
  const uint32_t *w = args[1].ptr;
  const uint64_t words = args[2].value;
  if (w == NULL || words < 2 || words * 4 > args[1].size) return 1;
  if (w[0] != TANDEM_EMU_DPU_MAGIC || words != 2 + 5 * (uint64_t)w[1]) return 1;
  for (uint32_t k = 0; k < w[1]; k++) {
    const uint32_t *op = &w[2 + 5 * k];
    const uint32_t dst = op[1], a = op[2], b = op[3], n = op[4];
    const bool imm = op[0] == TANDEM_EMU_DPU_ADDI_I32;
    if (dst > 4 || a > 4 || (!imm && b > 4)) return 1;
    const tandem_emu_arg_t *D = &args[3 + dst], *A = &args[3 + a], *B = imm ? NULL : &args[3 + b];
    if (!fits(D, n, 1, 4) || !fits(A, n, 1, 4) || (B != NULL && !fits(B, n, 1, 4))) return 1;
    int32_t *d = D->ptr;
    const int32_t *x = A->ptr, *y = B != NULL ? B->ptr : NULL;
    for (uint32_t i = 0; i < n; i++) {
      const uint32_t u = (uint32_t)x[i];
      switch (op[0]) {
        case TANDEM_EMU_DPU_ADD_I32: d[i] = (int32_t)(u + (uint32_t)y[i]); break;
        case TANDEM_EMU_DPU_SUB_I32: d[i] = (int32_t)(u - (uint32_t)y[i]); break;
        case TANDEM_EMU_DPU_MUL_I32: d[i] = (int32_t)(u * (uint32_t)y[i]); break;
        case TANDEM_EMU_DPU_ADDI_I32: d[i] = (int32_t)(u + b); break;
        case TANDEM_EMU_DPU_ADD_F32: {
          float fa, fb;
          memcpy(&fa, &x[i], 4);
          memcpy(&fb, &y[i], 4);
          fa += fb;
          memcpy(&d[i], &fa, 4);
          break;
        }
        default: return 1;
      }
    }
  }
  return 0;
}

/* An xclbin + ELF-module kernel: opcode 3, arguments 1 and 2 zero (the
 * instruction stream is the module's: here fixed, bo2 = bo0 + bo1), bo0..bo4. */
static int dpu_module_add_i32(const tandem_emu_arg_t *args, uint32_t count) {
  if (count != 8 || args[0].value != TANDEM_EMU_DPU_OPCODE || args[1].ptr != NULL ||
      args[2].value != 0)
    return 1;
  static const int idx[3] = {3, 4, 5};
  const uint64_t n = min_elems(args, idx, 3);
  if (n == 0) return 1;
  const int32_t *a = args[3].ptr, *b = args[4].ptr;
  int32_t *c = args[5].ptr;
  for (uint64_t i = 0; i < n; i++) c[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
  return 0;
}

/* A full-ELF kernel: data buffers only (bo0..bo4); bo2 = bo0 + bo1. */
static int elf_add_i32(const tandem_emu_arg_t *args, uint32_t count) {
  if (count != 5) return 1;
  static const int idx[3] = {0, 1, 2};
  const uint64_t n = min_elems(args, idx, 3);
  if (n == 0) return 1;
  const int32_t *a = args[0].ptr, *b = args[1].ptr;
  int32_t *c = args[2].ptr;
  for (uint64_t i = 0; i < n; i++) c[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
  return 0;
}

/* Writes a 64-bit scalar |n| times; args: BO, value (u64), n (u32). */
static int fill_u64(const tandem_emu_arg_t *args, uint32_t count) {
  if (count != 3 || !fits(&args[0], args[2].value, 1, 8)) return 1;
  uint64_t *d = args[0].ptr;
  for (uint64_t i = 0; i < args[2].value; i++) d[i] = args[1].value;
  return 0;
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
    /* DPU kernels, declared as aiecc declares them: the instruction buffer
     * in bank 1 (SRAM), five data buffers in bank 0 (HOST). */
    {"dpu_vector", "Ububbbbb", dpu_vector, "-1-00000"},
    {"dpu_module_add_i32", "Ububbbbb", dpu_module_add_i32, "-1-00000"},
    {"elf_add_i32", "bbbbb", elf_add_i32, NULL},
    {"fill_u64", "bUu", fill_u64, NULL},
};

TANDEM_EMU_KERNELS_EXPORT const tandem_emu_kernel_t *tandem_emu_kernels(uint32_t *out_count) {
  *out_count = (uint32_t)(sizeof kernels / sizeof kernels[0]);
  return kernels;
}
