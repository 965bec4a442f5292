/* SPDX-License-Identifier: MIT */
/*
 * reference.c — what `tandem run` knows about data without a device: initial
 * buffer contents (file, fill, seeded random), the built-in kernels' SPIR-V,
 * the CPU model used by "reference": "cpu" checks, and the SHA-256 and
 * FNV-1a digests used by checksum checks.
 *
 * The CPU model runs the nodes in record order on host copies of the buffers.
 * That is the meaning tandem guarantees: ordering is inferred from the byte
 * ranges, so a correct run ends with what the sequential run ends with. Only
 * kernels whose meaning the tool knows have a model: the built-in GPU kernels
 * (saxpy, scale_add) and the emulated NPU's kernels (matmul_f32, scale_add_f32,
 * add_i32) when the program's xclbin is "@emulated".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "internal/emu_dpu.h"
#include "npy.h"
#include "pipeline.h"
#include "tandem_cli_shaders.h"

static const struct {
  const char *name;
  const uint32_t *code;
  const size_t *bytes;
} builtins[] = {
    {"saxpy", tandem_spv_saxpy, &tandem_spv_saxpy_size},
    {"scale_add", tandem_spv_scale_add, &tandem_spv_scale_add_size},
};

bool pipeline_builtin_spirv(const char *name, const void **code, size_t *bytes) {
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (!strcmp(builtins[i].name, name)) {
      *code = builtins[i].code;
      *bytes = *builtins[i].bytes;
      return true;
    }
  return false;
}

const char *pipeline_builtin_names(void) { return "saxpy, scale_add"; }

/* splitmix64: small, seedable, the same on every machine. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool pipeline_init_bytes(const pipeline_t *p, uint32_t index, uint8_t *dst) {
  const pl_buffer_t *b = &p->buffers[index];
  memset(dst, 0, b->size);
  switch (b->init) {
    case PL_INIT_ZERO: return true;
    case PL_INIT_FILL:
      for (uint64_t i = 0; i + 4 <= b->size; i += 4) memcpy(dst + i, &b->fill, 4);
      memcpy(dst + (b->size & ~3ull), &b->fill, b->size & 3);
      return true;
    case PL_INIT_FILE: {
      if (npy_is_npy_path(b->init_path)) { /* the array's elements, in order */
        uint8_t *data;
        npy_info_t info;
        char why[512];
        if (!npy_read(b->init_path, b->size, &data, &info, why, sizeof why)) {
          cli_error("%s: buffers[%u].init.file: %s (buffer '%s' is %llu bytes)", p->file, index,
                    why, b->name, (unsigned long long)b->size);
          return false;
        }
        memcpy(dst, data, info.data_bytes); /* a smaller array leaves the rest zero */
        free(data);
        return true;
      }
      FILE *f = fopen(b->init_path, "rb");
      if (!f) {
        cli_error("%s: buffers[%u].init.file: cannot open '%s'", p->file, index, b->init_path);
        return false;
      }
      size_t got = fread(dst, 1, b->size, f);
      int extra = fgetc(f);
      fclose(f);
      if (extra != EOF) {
        cli_error("%s: buffers[%u].init.file: '%s' is larger than buffer '%s' (%llu bytes)",
                  p->file, index, b->init_path, b->name, (unsigned long long)b->size);
        return false;
      }
      (void)got; /* shorter files leave the rest zero */
      return true;
    }
    case PL_INIT_RANDOM: {
      uint64_t state = b->seed;
      double span = b->random_max - b->random_min;
      if (b->random_type == PL_TYPE_F32) {
        for (uint64_t i = 0; i + 4 <= b->size; i += 4) {
          double u = (double)(next_random(&state) >> 11) / 9007199254740992.0;
          float f = (float)(b->random_min + span * u);
          memcpy(dst + i, &f, 4);
        }
      } else if (b->random_type == PL_TYPE_I8) {
        for (uint64_t i = 0; i < b->size; i++)
          dst[i] = (uint8_t)(int8_t)(llround(b->random_min) +
                                     (int64_t)(next_random(&state) % ((uint64_t)span + 1)));
      } else {
        for (uint64_t i = 0; i + 4 <= b->size; i += 4) {
          int64_t v =
              llround(b->random_min) + (int64_t)(next_random(&state) % ((uint64_t)span + 1));
          uint32_t w = (uint32_t)v;
          memcpy(dst + i, &w, 4);
        }
      }
      return true;
    }
  }
  return false;
}

/*--------------------------------------------------------------------------
 * CPU model
 *--------------------------------------------------------------------------*/

typedef enum model {
  MODEL_NONE,
  MODEL_SAXPY,
  MODEL_SCALE_ADD,
  MODEL_NPU_MATMUL_F32,
  MODEL_NPU_SCALE_ADD_F32,
  MODEL_NPU_ADD_I32,
  MODEL_NPU_DPU_VECTOR, /* dpu_vector: its instruction stream (internal/emu_dpu.h) */
} model_t;

static model_t node_model(const pipeline_t *p, const pl_node_t *n) {
  if (n->op == PL_OP_DISPATCH) {
    const pl_kernel_t *k = &p->kernels[n->target];
    if (!k->builtin || strcmp(k->entry, "main") != 0) return MODEL_NONE;
    if (!strcmp(k->builtin, "saxpy")) return MODEL_SAXPY;
    if (!strcmp(k->builtin, "scale_add")) return MODEL_SCALE_ADD;
    return MODEL_NONE;
  }
  if (n->op == PL_OP_NPU_RUN) {
    const pl_program_t *g = &p->programs[n->target];
    if (!g->emulated_xclbin) return MODEL_NONE;
    if (!strcmp(g->kernel, "matmul_f32") && n->view_count == 3 && n->scalar_count == 3)
      return MODEL_NPU_MATMUL_F32;
    if (!strcmp(g->kernel, "scale_add_f32") && n->view_count == 2 && n->scalar_count == 3)
      return MODEL_NPU_SCALE_ADD_F32;
    if (!strcmp(g->kernel, "add_i32") && n->view_count == 3 && n->scalar_count == 1)
      return MODEL_NPU_ADD_I32;
    if (!strcmp(g->kernel, "dpu_vector") && g->abi == TANDEM_NPU_ABI_DPU && g->instructions_path)
      return MODEL_NPU_DPU_VECTOR;
    return MODEL_NONE;
  }
  return MODEL_SAXPY; /* fill and copy: always modelled (value unused) */
}

bool pipeline_cpu_model_complete(const pipeline_t *p, char *why, size_t why_size) {
  for (uint32_t i = 0; i < p->node_count; i++) {
    const pl_node_t *n = &p->nodes[i];
    if (node_model(p, n) != MODEL_NONE) continue;
    if (n->op == PL_OP_DISPATCH)
      snprintf(why, why_size,
               "nodes[%u] dispatches kernel '%s', which is not a built-in (%s) with entry 'main'",
               i, p->kernels[n->target].name, pipeline_builtin_names());
    else
      snprintf(why, why_size,
               "nodes[%u] runs NPU program '%s' (kernel '%s'), which is not one of the emulated "
               "xclbin's modelled kernels (matmul_f32, scale_add_f32, add_i32, dpu_vector)",
               i, p->programs[n->target].name, p->programs[n->target].kernel);
    return false;
  }
  return true;
}

static float f32_at(const uint8_t *base, uint64_t i) {
  float f;
  memcpy(&f, base + i * 4, 4);
  return f;
}
static void f32_put(uint8_t *base, uint64_t i, float f) { memcpy(base + i * 4, &f, 4); }
static float f32_bits(uint32_t w) {
  float f;
  memcpy(&f, &w, 4);
  return f;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* dpu_vector on the CPU: the program's instruction stream, executed as the
 * emulated kernel does (npu/emu/kernels.c) over the node's views (bo0..);
 * an operation that does not fit leaves its output alone, as a failed run. */
static void run_dpu_vector(const pl_program_t *g, uint8_t **v, const uint64_t *len,
                           uint32_t count) {
  FILE *f = fopen(g->instructions_path, "rb");
  if (!f) return;
  uint32_t head[2];
  if (fread(head, 4, 2, f) != 2 || head[0] != TANDEM_EMU_DPU_MAGIC) {
    fclose(f);
    return;
  }
  for (uint32_t k = 0; k < head[1]; k++) {
    uint32_t op[5];
    if (fread(op, 4, 5, f) != 5) break;
    const uint32_t d = op[1], a = op[2], b = op[3], n = op[4];
    const bool imm = op[0] == TANDEM_EMU_DPU_ADDI_I32;
    if (d >= count || a >= count || (!imm && b >= count)) continue;
    if ((uint64_t)n * 4 > len[d] || (uint64_t)n * 4 > len[a] || (!imm && (uint64_t)n * 4 > len[b]))
      continue;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t x, y = imm ? b : 0, r;
      memcpy(&x, v[a] + i * 4, 4);
      if (!imm) memcpy(&y, v[b] + i * 4, 4);
      switch (op[0]) {
        case TANDEM_EMU_DPU_ADD_I32: r = x + y; break;
        case TANDEM_EMU_DPU_SUB_I32: r = x - y; break;
        case TANDEM_EMU_DPU_MUL_I32: r = x * y; break;
        case TANDEM_EMU_DPU_ADDI_I32: r = x + y; break;
        case TANDEM_EMU_DPU_ADD_F32: {
          float fx = f32_bits(x) + f32_bits(y);
          memcpy(&r, &fx, 4);
          break;
        }
        default: r = 0; break;
      }
      memcpy(v[d] + i * 4, &r, 4);
    }
  }
  fclose(f);
}

static void run_node(const pipeline_t *p, const pl_node_t *n, uint8_t **mem) {
  uint8_t *v[TANDEM_MAX_BINDINGS];
  uint64_t len[TANDEM_MAX_BINDINGS];
  for (uint32_t i = 0; i < n->view_count; i++) {
    v[i] = mem[n->views[i].buffer] + n->views[i].offset;
    len[i] = n->views[i].length;
  }
  switch (n->op) {
    case PL_OP_FILL:
      for (uint64_t i = 0; i < len[0]; i += 4) memcpy(v[0] + i, &n->fill, 4);
      return;
    case PL_OP_COPY: memmove(v[1], v[0], len[0]); return;
    default: break;
  }
  uint32_t w[TANDEM_MAX_PUSH_CONSTANT_BYTES / 4];
  memcpy(w, n->push, n->push_bytes);
  switch (node_model(p, n)) {
    case MODEL_SAXPY: { /* y[i] = a*x[i] + y[i], i < n (and the grid) */
      uint64_t count = min_u64(w[1], (uint64_t)n->workgroups[0] * 256);
      count = min_u64(count, min_u64(len[0], len[1]) / 4);
      float a = f32_bits(w[0]);
      for (uint64_t i = 0; i < count; i++)
        f32_put(v[1], i, fmaf(a, f32_at(v[0], i), f32_at(v[1], i)));
      return;
    }
    case MODEL_SCALE_ADD: { /* c[i] = a[i]*scale + b[i] */
      uint64_t count = min_u64(w[1], (uint64_t)n->workgroups[0] * 256);
      count = min_u64(count, min_u64(len[0], min_u64(len[1], len[2])) / 4);
      float s = f32_bits(w[0]);
      for (uint64_t i = 0; i < count; i++)
        f32_put(v[2], i, fmaf(f32_at(v[0], i), s, f32_at(v[1], i)));
      return;
    }
    case MODEL_NPU_MATMUL_F32: { /* C[M×N] = A[M×K] · B[K×N], row-major */
      uint64_t M = n->scalars[0], N = n->scalars[1], K = n->scalars[2];
      if (M * K * 4 > len[0] || K * N * 4 > len[1] || M * N * 4 > len[2]) return;
      for (uint64_t r = 0; r < M; r++)
        for (uint64_t col = 0; col < N; col++) {
          float acc = 0;
          for (uint64_t k = 0; k < K; k++)
            acc += f32_at(v[0], r * K + k) * f32_at(v[1], k * N + col);
          f32_put(v[2], r * N + col, acc);
        }
      return;
    }
    case MODEL_NPU_SCALE_ADD_F32: { /* Y[i] = X[i]*scale + bias */
      uint64_t count = min_u64(n->scalars[0], min_u64(len[0], len[1]) / 4);
      float s = f32_bits(n->scalars[1]), b = f32_bits(n->scalars[2]);
      for (uint64_t i = 0; i < count; i++) f32_put(v[1], i, f32_at(v[0], i) * s + b);
      return;
    }
    case MODEL_NPU_ADD_I32: {
      uint64_t count = min_u64(n->scalars[0], min_u64(len[0], min_u64(len[1], len[2])) / 4);
      for (uint64_t i = 0; i < count; i++) {
        uint32_t a, b;
        memcpy(&a, v[0] + i * 4, 4);
        memcpy(&b, v[1] + i * 4, 4);
        a += b;
        memcpy(v[2] + i * 4, &a, 4);
      }
      return;
    }
    case MODEL_NPU_DPU_VECTOR:
      run_dpu_vector(&p->programs[n->target], v, len, n->view_count);
      return;
    case MODEL_NONE: return;
  }
}

bool pipeline_cpu_reference(const pipeline_t *p, uint32_t iterations, uint8_t ***out) {
  uint8_t **mem = calloc(p->buffer_count, sizeof *mem);
  if (!mem) return false;
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    mem[b] = malloc(p->buffers[b].size);
    if (!mem[b] || !pipeline_init_bytes(p, b, mem[b])) {
      for (uint32_t k = 0; k <= b; k++) free(mem[k]);
      free(mem);
      return false;
    }
  }
  for (uint32_t it = 0; it < iterations; it++)
    for (uint32_t i = 0; i < p->node_count; i++) run_node(p, &p->nodes[i], mem);
  *out = mem;
  return true;
}

/*--------------------------------------------------------------------------
 * Digests
 *--------------------------------------------------------------------------*/

void cli_fnv1a64_hex(const uint8_t *data, uint64_t len, char hex[17]) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t i = 0; i < len; i++) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  snprintf(hex, 17, "%016llx", (unsigned long long)h);
}

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha_block(uint32_t h[8], const uint8_t *blk) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)blk[i * 4] << 24 | (uint32_t)blk[i * 4 + 1] << 16 |
           (uint32_t)blk[i * 4 + 2] << 8 | blk[i * 4 + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 =
        k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
    uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void cli_sha256_hex(const uint8_t *data, uint64_t len, char hex[65]) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint64_t i = 0;
  for (; i + 64 <= len; i += 64) sha_block(h, data + i);
  uint8_t tail[128] = {0};
  uint64_t rest = len - i;
  memcpy(tail, data + i, rest);
  tail[rest] = 0x80;
  uint64_t tail_len = rest + 9 <= 64 ? 64 : 128;
  uint64_t bits = len * 8;
  for (int b = 0; b < 8; b++) tail[tail_len - 1 - b] = (uint8_t)(bits >> (8 * b));
  for (uint64_t t = 0; t < tail_len; t += 64) sha_block(h, tail + t);
  for (int b = 0; b < 8; b++) snprintf(hex + b * 8, 9, "%08x", h[b]);
}
