/* SPDX-License-Identifier: MIT */
/*
 * decode.c — a real model step on tandem: greedy decoding with one
 * transformer block, every token computed on the GPU and checked against a
 * CPU reference.
 *
 * The model is small and its weights are deterministic random numbers
 * (seeded): d_model 256, 4 heads of 64, a SiLU-gated MLP of 512, a vocabulary
 * of 512 whose embedding is also the LM head (tied), room for 128 positions.
 * One decode step is one prepared graph:
 *
 *   embed (token id read on the GPU) → RMSNorm → fused Q/K/V product → RoPE
 *   (writes this token's K and V row into the caches) → attention scores over
 *   the cache → softmax · V → output projection + residual → RMSNorm →
 *   gate/up product → SiLU·up → down product + residual → RMSNorm → logits
 *   (tied LM head) → argmax (writes the next token id on the GPU) → copies of
 *   the logits and the token to a host-visible buffer (download lane).
 *
 * The graph is prepared once; the shapes that change every token change
 * through per-submission parameters: the position is a push constant of RoPE
 * and of the softmax, the scores dispatch's workgroup count grows with the
 * sequence, and the K/V cache row RoPE writes is a view moved to row pos.
 * The loop is GPU-driven (the host never writes the token); the host reads
 * each token's logits after waiting for it, and after the timed loop replays
 * the same math on the CPU, teacher-forced with the GPU's tokens, comparing
 * every logit. With --inflight 2 the step is prepared twice (a copy node's
 * destination cannot move per submission, and each executable needs its own
 * host buffer) so that token t+1 is queued before token t is waited for.
 *
 * The kernels (the decode_kernels directory) are ordinary GLSL in the style of
 * llama.cpp's and ncnn's: the workgroup size is specialization constant 0,
 * shared with the code's BLOCK_SIZE; reductions use subgroup arithmetic when
 * the device has it (else a shared-memory tree); weights are float16_t with
 * 16-bit storage when the device has it (else f32). The variant is chosen at
 * run time from tandem_device_info_t.shader_features. With --npu the output
 * projection runs on the NPU lane (the emulated NPU's matmul_f32) between two
 * GPU kernels, through SHARED buffers.
 *
 * Prints tokens/s (the 64-token loop, prepare excluded) and, from GPU
 * timestamps, how busy each lane was; --json writes the figures for bench
 * results. Exit status: 0 every token matched and no validation message
 * arrived, 1 otherwise, 77 no usable device (or no NPU with --npu).
 * Run `tandem_example_decode --help` for the options.
 */
#include <dlfcn.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tandem/tandem.h"
#include "tandem_decode_shaders.h"

/* The model's shapes. The kernels receive them as specialization constants. */
enum {
  D = 256,       /* d_model */
  HEADS = 4,     /* attention heads */
  HD = 64,       /* head dimension (D / HEADS) */
  FFN = 512,     /* MLP hidden size */
  VOCAB = 512,   /* vocabulary (tied embedding / LM head) */
  MAX_SEQ = 128, /* KV cache rows: the most tokens one run can generate */
};
#define RMS_EPS 1e-5f
#define ROPE_BASE 10000.0
#define ATTN_SCALE 0.125f /* 1 / sqrt(HD), exact */

/*---------------------------------------------------------------------------
 * Options, failures
 *---------------------------------------------------------------------------*/

typedef enum { CHOICE_AUTO, CHOICE_A, CHOICE_B } choice_t;

typedef struct options {
  uint32_t tokens;   /* tokens to generate, 1 .. MAX_SEQ */
  uint32_t repeat;   /* generations, each timed; the median is reported */
  uint32_t block;    /* workgroup size of every kernel (a power of two) */
  uint32_t rows;     /* matrix rows per matvec workgroup; 0: by device */
  uint32_t inflight; /* tokens submitted ahead: 1 (one executable) or 2 */
  uint32_t gpu_index;
  uint32_t start_token; /* the token fed at position 0 */
  uint64_t seed;        /* weights */
  choice_t weights;     /* A = f16, B = f32 */
  choice_t reduce;      /* A = subgroup, B = tree */
  bool npu;             /* output projection on the emulated NPU */
  bool timestamps;      /* GPU timestamps for the lane table */
  bool validation;      /* also on with TANDEM_VALIDATION=1 */
  bool verbose;         /* print every token's check */
  const char *json;     /* write the figures here */
  const char *trace;    /* write a Perfetto trace of the token loops here */
} options_t;

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("decode: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

/* Exits 77 (skipped) for "no usable device", 1 for any other failure. */
static void check(tandem_status_t s, const char *what) {
  if (s == TANDEM_OK) return;
  fprintf(stderr, "decode: %s: %s: %s\n", what, tandem_status_name(s), tandem_error_message());
  exit(s == TANDEM_ERROR_NO_DEVICE ? 77 : 1);
}
#define CHECK(expr) check((expr), #expr)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: tandem_example_decode [options]\n"
          "  --tokens N        tokens to generate, 1..%d (default 64)\n"
          "  --repeat N        generate N times, report the median tokens/s (default 1)\n"
          "  --json PATH       write the figures as one JSON object\n"
          "  --trace PATH      write a Chrome/Perfetto trace of the token loops (one track\n"
          "                    per lane)\n"
          "  --npu             run the output projection on the emulated NPU lane\n"
          "  --inflight N      1: one executable, each token waited for before the next is\n"
          "                    submitted (default); 2: two executables of the same step\n"
          "                    (each with its own host buffer), token t+1 submitted before\n"
          "                    token t is waited for\n"
          "  --weights W       f16 | f32 | auto (default auto: f16 with 16-bit storage)\n"
          "  --reduce R        subgroup | tree | auto (default auto: subgroup arithmetic)\n"
          "  --block N         workgroup size, a power of two 16..1024 (default 64)\n"
          "  --rows N          matrix rows per matvec workgroup, a power of two 1..64\n"
          "                    (default: 8 on a CPU device, 1 otherwise)\n"
          "  --gpu N           Vulkan device index (default 0)\n"
          "  --seed N          weight seed (default 1)\n"
          "  --start-token N   token at position 0 (default 1)\n"
          "  --no-timestamps   no GPU timestamps (no lane table; about 40 us less per token\n"
          "                    on lavapipe)\n"
          "  --validation      Khronos validation layer on (also TANDEM_VALIDATION=1)\n"
          "  --verbose         print every token's check\n"
          "Exit status: 0 all tokens match the CPU reference and no validation message,\n"
          "1 otherwise, 77 no usable device.\n",
          MAX_SEQ);
}

static uint64_t parse_uint(const char *flag, const char *text, uint64_t lo, uint64_t hi) {
  char *end = NULL;
  if (!text) die("%s needs a value", flag);
  unsigned long long v = strtoull(text, &end, 10);
  if (!*text || *end || v < lo || v > hi)
    die("%s: '%s' is not a number in %llu..%llu", flag, text, (unsigned long long)lo,
        (unsigned long long)hi);
  return v;
}

static choice_t parse_choice(const char *flag, const char *text, const char *a, const char *b) {
  if (!text) die("%s needs a value: %s, %s or auto", flag, a, b);
  if (!strcmp(text, a)) return CHOICE_A;
  if (!strcmp(text, b)) return CHOICE_B;
  if (!strcmp(text, "auto")) return CHOICE_AUTO;
  die("%s: '%s' is not one of %s, %s, auto", flag, text, a, b);
  return CHOICE_AUTO;
}

static options_t parse_options(int argc, char **argv) {
  options_t o = {.tokens = 64,
                 .repeat = 1,
                 .block = 64,
                 .seed = 1,
                 .start_token = 1,
                 .inflight = 1,
                 .timestamps = true};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(0);
    } else if (!strcmp(a, "--tokens")) {
      o.tokens = (uint32_t)parse_uint(a, v, 1, MAX_SEQ), i++;
    } else if (!strcmp(a, "--repeat")) {
      o.repeat = (uint32_t)parse_uint(a, v, 1, 1000), i++;
    } else if (!strcmp(a, "--block")) {
      o.block = (uint32_t)parse_uint(a, v, 16, 1024), i++;
      if (o.block & (o.block - 1)) die("--block: %u is not a power of two", o.block);
    } else if (!strcmp(a, "--rows")) {
      o.rows = (uint32_t)parse_uint(a, v, 1, 64), i++;
      if (o.rows & (o.rows - 1)) die("--rows: %u is not a power of two", o.rows);
    } else if (!strcmp(a, "--inflight")) {
      o.inflight = (uint32_t)parse_uint(a, v, 1, 2), i++;
    } else if (!strcmp(a, "--gpu")) {
      o.gpu_index = (uint32_t)parse_uint(a, v, 0, 255), i++;
    } else if (!strcmp(a, "--seed")) {
      o.seed = parse_uint(a, v, 0, UINT64_MAX), i++;
    } else if (!strcmp(a, "--start-token")) {
      o.start_token = (uint32_t)parse_uint(a, v, 0, VOCAB - 1), i++;
    } else if (!strcmp(a, "--weights")) {
      o.weights = parse_choice(a, v, "f16", "f32"), i++;
    } else if (!strcmp(a, "--reduce")) {
      o.reduce = parse_choice(a, v, "subgroup", "tree"), i++;
    } else if (!strcmp(a, "--json")) {
      if (!v) die("--json needs a path");
      o.json = v, i++;
    } else if (!strcmp(a, "--trace")) {
      if (!v) die("--trace needs a path");
      o.trace = v, i++;
    } else if (!strcmp(a, "--npu")) {
      o.npu = true;
    } else if (!strcmp(a, "--no-timestamps")) {
      o.timestamps = false;
    } else if (!strcmp(a, "--validation")) {
      o.validation = true;
    } else if (!strcmp(a, "--verbose")) {
      o.verbose = true;
    } else {
      usage(stderr);
      die("unknown argument '%s'", a);
    }
  }
  /* A trace needs GPU timestamps (tandem_runtime_trace_start refuses
   * without them). */
  if (o.trace && !o.timestamps) die("--trace needs GPU timestamps; drop --no-timestamps");
  const char *env = getenv("TANDEM_VALIDATION");
  if (env && !strcmp(env, "1")) o.validation = true;
  return o;
}

/*---------------------------------------------------------------------------
 * Weights: deterministic random numbers, rounded to f16
 *---------------------------------------------------------------------------*/

/* IEEE binary16 from binary32, rounding to nearest even. */
static uint16_t f16_from_f32(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t biased = (x >> 23) & 0xFFu;
  uint32_t mant = x & 0x7FFFFFu;
  if (biased == 0xFFu) return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0u));
  const int32_t e = (int32_t)biased - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7C00u);
  if (e <= 0) { /* subnormal or zero */
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    const uint32_t shift = (uint32_t)(14 - e);
    uint32_t h = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    if (rest > mid || (rest == mid && (h & 1u))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* may carry into the exponent */
  return (uint16_t)(sign | h);
}

static float f32_from_f16(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1Fu, mant = h & 0x3FFu, x;
  if (e == 0x1Fu) {
    x = sign | 0x7F800000u | (mant << 13);
  } else if (e) {
    x = sign | ((e - 15 + 127) << 23) | (mant << 13);
  } else if (!mant) {
    x = sign;
  } else { /* subnormal: normalise */
    e = 127 - 15 + 1;
    while (!(mant & 0x400u)) mant <<= 1, e--;
    x = sign | (e << 23) | ((mant & 0x3FFu) << 13);
  }
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [-scale, scale), rounded to the nearest f16 (so f16 and f32
 * weights are the same numbers). */
static void fill_weights(float *w, size_t n, float scale, uint64_t *rng) {
  for (size_t i = 0; i < n; i++) {
    const float u = (float)(splitmix64(rng) >> 40) * (1.0f / 8388608.0f) - 1.0f;
    w[i] = f32_from_f16(f16_from_f32(u * scale));
  }
}

typedef struct model {
  float *emb;                            /* [VOCAB][D], also the LM head */
  float *wqkv;                           /* [3D][D]: rows 0..D-1 q, D..2D-1 k, 2D..3D-1 v */
  float *wo;                             /* [D][D] */
  float *wgu;                            /* [2FFN][D]: rows 0..FFN-1 gate, FFN..2FFN-1 up */
  float *wdown;                          /* [D][FFN] */
  float g_attn[D], g_mlp[D], g_final[D]; /* RMSNorm gains (f32) */
  float rope[MAX_SEQ][HD / 2][2];        /* cos, sin per position and pair */
} model_t;

static model_t *model_create(uint64_t seed) {
  model_t *m = calloc(1, sizeof *m);
  if (!m) die("out of memory");
  m->emb = malloc(sizeof(float) * VOCAB * D);
  m->wqkv = malloc(sizeof(float) * 3 * D * D);
  m->wo = malloc(sizeof(float) * D * D);
  m->wgu = malloc(sizeof(float) * 2 * FFN * D);
  m->wdown = malloc(sizeof(float) * D * FFN);
  if (!m->emb || !m->wqkv || !m->wo || !m->wgu || !m->wdown) die("out of memory");
  uint64_t rng = seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
  /* Scales keep the activations of order one. The embedding is small next
   * to the block's outputs: with a tied LM head a large one gives the input
   * token a logit of |e|² that no other token beats, and greedy decoding
   * would repeat its first token forever. With these, seed 1 visits 54
   * distinct tokens in 64 steps. */
  fill_weights(m->emb, (size_t)VOCAB * D, 0.1f, &rng);
  fill_weights(m->wqkv, (size_t)3 * D * D, 2.0f / sqrtf((float)D), &rng);
  fill_weights(m->wo, (size_t)D * D, 4.0f / sqrtf((float)D), &rng);
  fill_weights(m->wgu, (size_t)2 * FFN * D, 2.0f / sqrtf((float)D), &rng);
  fill_weights(m->wdown, (size_t)D * FFN, 4.0f / sqrtf((float)FFN), &rng);
  float *gains[3] = {m->g_attn, m->g_mlp, m->g_final};
  for (int g = 0; g < 3; g++) {
    fill_weights(gains[g], D, 0.25f, &rng);
    for (int i = 0; i < D; i++) gains[g][i] += 1.0f;
  }
  for (int p = 0; p < MAX_SEQ; p++) {
    for (int i = 0; i < HD / 2; i++) {
      const double angle = p * pow(ROPE_BASE, -2.0 * i / HD);
      m->rope[p][i][0] = (float)cos(angle);
      m->rope[p][i][1] = (float)sin(angle);
    }
  }
  return m;
}

static void model_destroy(model_t *m) {
  free(m->emb);
  free(m->wqkv);
  free(m->wo);
  free(m->wgu);
  free(m->wdown);
  free(m);
}

/*---------------------------------------------------------------------------
 * CPU reference: the same step in float (sums in double)
 *---------------------------------------------------------------------------*/

typedef struct reference {
  const model_t *m;
  float kc[MAX_SEQ][D], vc[MAX_SEQ][D];
} reference_t;

static void ref_rmsnorm(const float *x, const float *g, float *y) {
  double ss = 0.0;
  for (int i = 0; i < D; i++) ss += (double)x[i] * x[i];
  const float scale = 1.0f / sqrtf((float)(ss / D) + RMS_EPS);
  for (int i = 0; i < D; i++) y[i] = x[i] * scale * g[i];
}

/* y[r] = (res ? res[r] : 0) + Σ_c w[r][c] x[c] */
static void ref_matvec(const float *w, const float *x, const float *res, float *y, int rows,
                       int cols) {
  for (int r = 0; r < rows; r++) {
    double acc = 0.0;
    for (int c = 0; c < cols; c++) acc += (double)w[(size_t)r * cols + c] * x[c];
    y[r] = (float)acc + (res ? res[r] : 0.0f);
  }
}

/* One decode step at |pos| for |token|; writes VOCAB logits. */
static void ref_step(reference_t *ref, int pos, uint32_t token, float *logits) {
  const model_t *m = ref->m;
  float x[D], xn[D], qkv[3 * D], q[D], attn[D], x1[D], gu[2 * FFN], h[FFN], x2[D];
  memcpy(x, m->emb + (size_t)token * D, sizeof x);
  ref_rmsnorm(x, m->g_attn, xn);
  ref_matvec(m->wqkv, xn, NULL, qkv, 3 * D, D);
  for (int i = 0; i < D / 2; i++) {
    const float c = m->rope[pos][i % (HD / 2)][0], s = m->rope[pos][i % (HD / 2)][1];
    const int a = 2 * i, b = 2 * i + 1;
    q[a] = qkv[a] * c - qkv[b] * s;
    q[b] = qkv[a] * s + qkv[b] * c;
    ref->kc[pos][a] = qkv[D + a] * c - qkv[D + b] * s;
    ref->kc[pos][b] = qkv[D + a] * s + qkv[D + b] * c;
    ref->vc[pos][a] = qkv[2 * D + a];
    ref->vc[pos][b] = qkv[2 * D + b];
  }
  for (int hh = 0; hh < HEADS; hh++) {
    float sc[MAX_SEQ], mx = -INFINITY;
    for (int t = 0; t <= pos; t++) {
      double acc = 0.0;
      for (int d = 0; d < HD; d++) acc += (double)q[hh * HD + d] * ref->kc[t][hh * HD + d];
      sc[t] = (float)acc * ATTN_SCALE;
      if (sc[t] > mx) mx = sc[t];
    }
    double l = 0.0;
    for (int t = 0; t <= pos; t++) l += (sc[t] = expf(sc[t] - mx));
    for (int d = 0; d < HD; d++) {
      double acc = 0.0;
      for (int t = 0; t <= pos; t++) acc += (double)sc[t] * ref->vc[t][hh * HD + d];
      attn[hh * HD + d] = (float)(acc / l);
    }
  }
  ref_matvec(m->wo, attn, x, x1, D, D);
  ref_rmsnorm(x1, m->g_mlp, xn);
  ref_matvec(m->wgu, xn, NULL, gu, 2 * FFN, D);
  for (int i = 0; i < FFN; i++) h[i] = gu[i] / (1.0f + expf(-gu[i])) * gu[FFN + i];
  ref_matvec(m->wdown, h, x1, x2, D, FFN);
  ref_rmsnorm(x2, m->g_final, xn);
  ref_matvec(m->emb, xn, NULL, logits, VOCAB, D);
}

/* The index of the largest value, the lowest on ties (as the argmax kernel). */
static uint32_t argmax(const float *v, int n) {
  uint32_t best = 0;
  for (int i = 1; i < n; i++)
    if (v[i] > v[best]) best = (uint32_t)i;
  return best;
}

/*---------------------------------------------------------------------------
 * GPU side
 *---------------------------------------------------------------------------*/

/* Validation messages: counted, the first few printed. */
static atomic_uint_fast64_t validation_count;
static void on_validation(void *user, tandem_validation_severity_t severity, const char *message) {
  (void)user;
  uint64_t n = atomic_fetch_add(&validation_count, 1) + 1;
  if (n <= 10)
    fprintf(stderr, "decode: validation %s #%llu: %s\n",
            severity == TANDEM_VALIDATION_ERROR ? "error" : "warning", (unsigned long long)n,
            message);
}

/* The SPIR-V of one kernel variant. */
typedef struct spirv {
  const uint32_t *words;
  size_t bytes;
} spirv_t;
#define SPV(stem) ((spirv_t){tandem_spv_##stem, tandem_spv_##stem##_size})

typedef struct variant {
  bool f16, subgroups;
  spirv_t embed, matvec, matvec_res, rmsnorm, scores, attend, argmax, rope, silu_mul, add;
} variant_t;

static variant_t pick_variant(bool f16, bool subgroups) {
  variant_t v = {.f16 = f16, .subgroups = subgroups};
  v.embed = f16 ? SPV(decode_embed_f16) : SPV(decode_embed_f32);
  if (f16 && subgroups) {
    v.matvec = SPV(decode_matvec_f16_sg), v.matvec_res = SPV(decode_matvec_res_f16_sg);
  } else if (f16) {
    v.matvec = SPV(decode_matvec_f16_tree), v.matvec_res = SPV(decode_matvec_res_f16_tree);
  } else if (subgroups) {
    v.matvec = SPV(decode_matvec_f32_sg), v.matvec_res = SPV(decode_matvec_res_f32_sg);
  } else {
    v.matvec = SPV(decode_matvec_f32_tree), v.matvec_res = SPV(decode_matvec_res_f32_tree);
  }
  v.rmsnorm = subgroups ? SPV(decode_rmsnorm_sg) : SPV(decode_rmsnorm_tree);
  v.scores = subgroups ? SPV(decode_scores_sg) : SPV(decode_scores_tree);
  v.attend = subgroups ? SPV(decode_attend_sg) : SPV(decode_attend_tree);
  v.argmax = subgroups ? SPV(decode_argmax_sg) : SPV(decode_argmax_tree);
  v.rope = SPV(decode_rope);
  v.silu_mul = SPV(decode_silu_mul);
  v.add = SPV(decode_add);
  return v;
}

/* Where each weight lives in the one GPU_LOCAL parameter buffer. */
typedef struct layout {
  uint64_t emb, wqkv, wo, wgu, wdown, g_attn, g_mlp, g_final, rope, total;
} layout_t;

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static layout_t make_layout(uint64_t wsize) {
  layout_t l;
  uint64_t at = 0;
#define PLACE(field, bytes) (l.field = at, at = align_up(at + (bytes), 256))
  PLACE(emb, wsize * VOCAB * D);
  PLACE(wqkv, wsize * 3 * D * D);
  PLACE(wo, wsize * D * D);
  PLACE(wgu, wsize * 2 * FFN * D);
  PLACE(wdown, wsize * D * FFN);
  PLACE(g_attn, 4 * D);
  PLACE(g_mlp, 4 * D);
  PLACE(g_final, 4 * D);
  PLACE(rope, sizeof(float) * MAX_SEQ * HD);
#undef PLACE
  l.total = at;
  return l;
}

typedef struct gpu {
  tandem_runtime_t *rt;
  tandem_device_info_t info;
  variant_t variant;
  uint32_t block;
  uint32_t rows;  /* matvec rows per workgroup */
  uint64_t wsize; /* bytes per weight: 2 or 4 */
  layout_t lay;
  bool npu;
  tandem_buffer_t *params;
  /* activations; attn and o are SHARED with --npu (the NPU reads / writes them) */
  tandem_buffer_t *tok, *x, *xn, *qkv, *q, *kc, *vc, *scores, *attn, *o, *x1, *xn2, *gu, *h, *x2,
      *xf, *logits, *wo_t;
  tandem_buffer_t *out[2]; /* host-visible logits + token, one per executable */
  tandem_kernel_t *k_embed, *k_rms, *k_qkv, *k_rope, *k_scores, *k_attend, *k_wo, *k_gu, *k_silu,
      *k_down, *k_head, *k_argmax, *k_add;
  tandem_npu_program_t *npu_wo;
  uint32_t inflight; /* executables of the step: 1 or 2 */
  tandem_exec_t *step[2], *reset;
  uint32_t node_rope, node_scores, node_attend; /* changed per token */
  uint32_t node_count;
} gpu_t;

static tandem_buffer_t *buffer(gpu_t *g, uint64_t bytes, tandem_placement_t placement) {
  tandem_buffer_t *b = NULL;
  CHECK(tandem_buffer_create(g->rt, bytes, placement, &b));
  return b;
}

static tandem_view_t view(tandem_buffer_t *b, uint64_t offset, uint64_t length) {
  tandem_view_t v;
  CHECK(tandem_buffer_view(b, offset, length, &v));
  return v;
}

static tandem_spec_constant_t spec_u32(uint32_t id, uint32_t value) {
  return (tandem_spec_constant_t){.id = id, .type = TANDEM_SCALAR_UINT32, .value.u32 = value};
}

static tandem_spec_constant_t spec_f32(uint32_t id, float value) {
  return (tandem_spec_constant_t){.id = id, .type = TANDEM_SCALAR_FLOAT32, .value.f32 = value};
}

static tandem_binding_contract_t reads(uint64_t bytes) {
  return (tandem_binding_contract_t){bytes, 16, TANDEM_ACCESS_READ};
}
static tandem_binding_contract_t writes(uint64_t bytes) {
  return (tandem_binding_contract_t){bytes, 16, TANDEM_ACCESS_WRITE};
}

/* Loads one kernel: |spec| lists ids 1..; id 0 (the workgroup size) is added. */
static tandem_kernel_t *kernel(gpu_t *g, const char *name, spirv_t code,
                               const tandem_binding_contract_t *bindings, uint32_t binding_count,
                               uint32_t push_bytes, const tandem_spec_constant_t *spec,
                               uint32_t spec_count) {
  tandem_spec_constant_t all[8];
  all[0] = spec_u32(0, g->block);
  for (uint32_t i = 0; i < spec_count; i++) all[1 + i] = spec[i];
  tandem_kernel_desc_t desc = {.struct_size = sizeof(tandem_kernel_desc_t),
                               .name = name,
                               .spirv = code.words,
                               .spirv_size = code.bytes,
                               .bindings = bindings,
                               .binding_count = binding_count,
                               .push_constant_bytes = push_bytes,
                               .spec_constants = all,
                               .spec_constant_count = 1 + spec_count};
  tandem_kernel_t *k = NULL;
  tandem_status_t s = tandem_kernel_create(g->rt, &desc, &k);
  if (s != TANDEM_OK) {
    fprintf(stderr, "decode: loading kernel '%s': %s: %s\n", name, tandem_status_name(s),
            tandem_error_message());
    exit(s == TANDEM_ERROR_NO_DEVICE ? 77 : 1);
  }
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  CHECK(tandem_kernel_info(k, &info));
  if (info.local_size[0] != g->block || info.local_size[1] != 1 || info.local_size[2] != 1)
    die("kernel '%s' runs with local size %ux%ux%u, expected %ux1x1", name, info.local_size[0],
        info.local_size[1], info.local_size[2], g->block);
  return k;
}

/* A matrix-vector kernel for |rows| x |cols| weights, with or without the
 * residual binding; it runs rows / g->rows workgroups. */
static tandem_kernel_t *matvec_kernel(gpu_t *g, const char *name, uint32_t rows, uint32_t cols,
                                      bool residual) {
  tandem_binding_contract_t b[4] = {reads(g->wsize * rows * cols), reads(4ull * cols),
                                    reads(4ull * rows), writes(4ull * rows)};
  if (!residual) b[2] = b[3];
  tandem_spec_constant_t spec[2] = {spec_u32(1, cols), spec_u32(2, g->rows)};
  return kernel(g, name, residual ? g->variant.matvec_res : g->variant.matvec, b, residual ? 4 : 3,
                0, spec, 2);
}

static uint32_t groups(uint32_t n, uint32_t block) { return (n + block - 1) / block; }

/* Adds one dispatch node of (wx, wy, 1) workgroups; its number goes to
 * |out_node| (may be NULL). */
static void dispatch(tandem_graph_t *graph, tandem_kernel_t *k, const tandem_view_t *views,
                     uint32_t view_count, const void *push, uint32_t push_bytes, uint32_t wx,
                     uint32_t wy, uint32_t *out_node) {
  tandem_dispatch_desc_t d = {.struct_size = sizeof(tandem_dispatch_desc_t),
                              .kernel = k,
                              .views = views,
                              .view_count = view_count,
                              .push_constants = push,
                              .push_constant_bytes = push_bytes,
                              .workgroups = {wx, wy, 1}};
  tandem_status_t s = tandem_graph_add_dispatch_node(graph, &d, out_node);
  if (s != TANDEM_OK)
    die("adding a dispatch of '%s': %s: %s", tandem_kernel_name(k), tandem_status_name(s),
        tandem_error_message());
}

static tandem_view_t whole(tandem_buffer_t *b) { return tandem_buffer_whole(b); }

static tandem_view_t param(gpu_t *g, uint64_t offset, uint64_t bytes) {
  return view(g->params, offset, bytes);
}

/* Uploads the weights (through a HOST_VISIBLE staging buffer and a copy node)
 * and, with --npu, Wo transposed into the NPU's own buffer. */
static void upload_weights(gpu_t *g, const model_t *m) {
  tandem_buffer_t *staging = buffer(g, g->lay.total, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_map_t map;
  CHECK(tandem_map_write(whole(staging), &map));
  uint8_t *base = map.data;
  struct {
    uint64_t offset;
    const float *w;
    size_t n;
  } mats[] = {{g->lay.emb, m->emb, (size_t)VOCAB * D},
              {g->lay.wqkv, m->wqkv, (size_t)3 * D * D},
              {g->lay.wo, m->wo, (size_t)D * D},
              {g->lay.wgu, m->wgu, (size_t)2 * FFN * D},
              {g->lay.wdown, m->wdown, (size_t)D * FFN}};
  for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) {
    if (g->variant.f16) {
      uint16_t *dst = (uint16_t *)(base + mats[i].offset);
      for (size_t j = 0; j < mats[i].n; j++) dst[j] = f16_from_f32(mats[i].w[j]);
    } else {
      memcpy(base + mats[i].offset, mats[i].w, mats[i].n * sizeof(float));
    }
  }
  memcpy(base + g->lay.g_attn, m->g_attn, sizeof m->g_attn);
  memcpy(base + g->lay.g_mlp, m->g_mlp, sizeof m->g_mlp);
  memcpy(base + g->lay.g_final, m->g_final, sizeof m->g_final);
  memcpy(base + g->lay.rope, m->rope, sizeof m->rope);
  tandem_unmap(&map);

  if (g->npu) { /* matmul_f32 computes C[1xD] = A[1xD] · B[DxD]: B = Wo transposed */
    CHECK(tandem_map_write(whole(g->wo_t), &map));
    float *bt = map.data;
    for (int r = 0; r < D; r++)
      for (int c = 0; c < D; c++) bt[(size_t)c * D + r] = m->wo[(size_t)r * D + c];
    tandem_unmap(&map);
  }

  tandem_graph_t *graph;
  CHECK(tandem_graph_create(g->rt, &graph));
  CHECK(tandem_graph_add_copy(graph, whole(staging), whole(g->params), TANDEM_LANE_AUTO));
  tandem_exec_t *exec;
  CHECK(tandem_graph_prepare(graph, &exec));
  tandem_graph_release(graph);
  tandem_completion_t *done;
  CHECK(tandem_exec_submit(exec, &done));
  CHECK(tandem_completion_wait(done));
  tandem_completion_release(done);
  tandem_exec_release(exec);
  tandem_buffer_release(staging);
}

static void make_buffers(gpu_t *g) {
  const tandem_placement_t local = TANDEM_PLACEMENT_GPU_LOCAL;
  const tandem_placement_t npu_side = g->npu ? TANDEM_PLACEMENT_SHARED : local;
  g->params = buffer(g, g->lay.total, local);
  g->tok = buffer(g, 4, local);
  g->x = buffer(g, 4 * D, local);
  g->xn = buffer(g, 4 * D, local);
  g->qkv = buffer(g, 4 * 3 * D, local);
  g->q = buffer(g, 4 * D, local);
  g->kc = buffer(g, 4ull * MAX_SEQ * D, local);
  g->vc = buffer(g, 4ull * MAX_SEQ * D, local);
  g->scores = buffer(g, 4ull * HEADS * MAX_SEQ, local);
  g->attn = buffer(g, 4 * D, npu_side);
  g->x1 = buffer(g, 4 * D, local);
  g->xn2 = buffer(g, 4 * D, local);
  g->gu = buffer(g, 4 * 2 * FFN, local);
  g->h = buffer(g, 4 * FFN, local);
  g->x2 = buffer(g, 4 * D, local);
  g->xf = buffer(g, 4 * D, local);
  g->logits = buffer(g, 4 * VOCAB, local);
  for (uint32_t k = 0; k < g->inflight; k++)
    g->out[k] = buffer(g, 4 * (VOCAB + 1), TANDEM_PLACEMENT_HOST_VISIBLE);
  if (g->npu) {
    g->o = buffer(g, 4 * D, TANDEM_PLACEMENT_SHARED);
    g->wo_t = buffer(g, 4ull * D * D, TANDEM_PLACEMENT_NPU_LOCAL);
  }
}

static void make_kernels(gpu_t *g) {
  const variant_t *v = &g->variant;
  {
    tandem_binding_contract_t b[3] = {{4, 4, TANDEM_ACCESS_READ},
                                      reads(g->wsize * VOCAB * D),
                                      writes(4 * D)};
    tandem_spec_constant_t s[2] = {spec_u32(1, D), spec_u32(2, VOCAB)};
    g->k_embed = kernel(g, "embed", v->embed, b, 3, 0, s, 2);
  }
  {
    tandem_binding_contract_t b[3] = {reads(4 * D), reads(4 * D), writes(4 * D)};
    tandem_spec_constant_t s[2] = {spec_u32(1, D), spec_f32(2, RMS_EPS)};
    g->k_rms = kernel(g, "rmsnorm", v->rmsnorm, b, 3, 0, s, 2);
  }
  g->k_qkv = matvec_kernel(g, "qkv", 3 * D, D, false);
  {
    tandem_binding_contract_t b[5] = {reads(4 * 3 * D), reads(sizeof(float) * MAX_SEQ * HD),
                                      writes(4 * D), writes(4 * D), writes(4 * D)};
    tandem_spec_constant_t s[3] = {spec_u32(1, D), spec_u32(2, HD), spec_u32(3, MAX_SEQ)};
    g->k_rope = kernel(g, "rope", v->rope, b, 5, 4, s, 3);
  }
  {
    /* The scores dispatch writes only the first pos+1 entries of each head's
     * row: it does not overwrite every declared byte, so the binding is
     * READ_WRITE (the shader still declares it writeonly: it never reads). */
    tandem_binding_contract_t b[3] = {reads(4 * D),
                                      reads(4ull * MAX_SEQ * D),
                                      {4ull * HEADS * MAX_SEQ, 16, TANDEM_ACCESS_READ_WRITE}};
    tandem_spec_constant_t s[4] = {spec_u32(1, D), spec_u32(2, HD), spec_u32(3, MAX_SEQ),
                                   spec_f32(4, ATTN_SCALE)};
    g->k_scores = kernel(g, "scores", v->scores, b, 3, 0, s, 4);
  }
  {
    tandem_binding_contract_t b[3] = {reads(4ull * HEADS * MAX_SEQ), reads(4ull * MAX_SEQ * D),
                                      writes(4 * D)};
    tandem_spec_constant_t s[3] = {spec_u32(1, D), spec_u32(2, HD), spec_u32(3, MAX_SEQ)};
    g->k_attend = kernel(g, "attend", v->attend, b, 3, 4, s, 3);
  }
  if (g->npu) {
    tandem_binding_contract_t b[3] = {reads(4 * D), reads(4 * D), writes(4 * D)};
    tandem_spec_constant_t s[1] = {spec_u32(1, D)};
    g->k_add = kernel(g, "add", v->add, b, 3, 0, s, 1);
  } else {
    g->k_wo = matvec_kernel(g, "wo", D, D, true);
  }
  g->k_gu = matvec_kernel(g, "gate_up", 2 * FFN, D, false);
  {
    tandem_binding_contract_t b[2] = {reads(4 * 2 * FFN), writes(4 * FFN)};
    tandem_spec_constant_t s[1] = {spec_u32(1, FFN)};
    g->k_silu = kernel(g, "silu_mul", v->silu_mul, b, 2, 0, s, 1);
  }
  g->k_down = matvec_kernel(g, "down", D, FFN, true);
  g->k_head = matvec_kernel(g, "lm_head", VOCAB, D, false);
  {
    tandem_binding_contract_t b[2] = {reads(4 * VOCAB), {4, 4, TANDEM_ACCESS_WRITE}};
    tandem_spec_constant_t s[1] = {spec_u32(1, VOCAB)};
    g->k_argmax = kernel(g, "argmax", v->argmax, b, 2, 0, s, 1);
  }
}

static void make_npu_program(gpu_t *g) {
  const char *xclbin = getenv("TANDEM_EMU_XCLBIN");
#ifdef TANDEM_DECODE_EMU_XCLBIN
  if (!xclbin || !*xclbin) xclbin = TANDEM_DECODE_EMU_XCLBIN;
#endif
  if (!xclbin || !*xclbin) die("--npu: set TANDEM_EMU_XCLBIN to the emulated NPU's xclbin");
  tandem_binding_contract_t b[3] = {{4 * D, 4, TANDEM_ACCESS_READ},
                                    {4ull * D * D, 4, TANDEM_ACCESS_READ},
                                    {4 * D, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                 .name = "wo (npu)",
                                 .program_path = xclbin,
                                 .kernel_name = "matmul_f32",
                                 .bindings = b,
                                 .binding_count = 3,
                                 .scalar_count = 3};
  CHECK(tandem_npu_program_create(g->rt, &d, &g->npu_wo));
}

/* Records and prepares the decode step (parameters of position 0), copying
 * its results to out[k]. */
static tandem_exec_t *make_step(gpu_t *g, uint32_t k) {
  const layout_t *l = &g->lay;
  const uint32_t B = g->block;
  tandem_graph_t *graph;
  CHECK(tandem_graph_create(g->rt, &graph));
  const uint32_t pos0 = 0, seq0 = 1;

  tandem_view_t v_embed[3] = {whole(g->tok), param(g, l->emb, g->wsize * VOCAB * D), whole(g->x)};
  dispatch(graph, g->k_embed, v_embed, 3, NULL, 0, groups(D, B), 1, NULL);
  tandem_view_t v_rms1[3] = {whole(g->x), param(g, l->g_attn, 4 * D), whole(g->xn)};
  dispatch(graph, g->k_rms, v_rms1, 3, NULL, 0, 1, 1, NULL);
  tandem_view_t v_qkv[3] = {param(g, l->wqkv, g->wsize * 3 * D * D), whole(g->xn), whole(g->qkv)};
  dispatch(graph, g->k_qkv, v_qkv, 3, NULL, 0, 3 * D / g->rows, 1, NULL);
  tandem_view_t v_rope[5] = {whole(g->qkv), param(g, l->rope, sizeof(float) * MAX_SEQ * HD),
                             whole(g->q), view(g->kc, 0, 4 * D), view(g->vc, 0, 4 * D)};
  dispatch(graph, g->k_rope, v_rope, 5, &pos0, 4, groups(D / 2, B), 1, &g->node_rope);
  tandem_view_t v_scores[3] = {whole(g->q), whole(g->kc), whole(g->scores)};
  dispatch(graph, g->k_scores, v_scores, 3, NULL, 0, seq0, HEADS, &g->node_scores);
  tandem_view_t v_attend[3] = {whole(g->scores), whole(g->vc), whole(g->attn)};
  dispatch(graph, g->k_attend, v_attend, 3, &seq0, 4, HEADS, 1, &g->node_attend);
  if (g->npu) {
    tandem_view_t v_npu[3] = {whole(g->attn), whole(g->wo_t), whole(g->o)};
    const uint32_t mnk[3] = {1, D, D};
    CHECK(tandem_graph_add_npu_run(graph, g->npu_wo, v_npu, 3, mnk, 3));
    tandem_view_t v_add[3] = {whole(g->x), whole(g->o), whole(g->x1)};
    dispatch(graph, g->k_add, v_add, 3, NULL, 0, groups(D, B), 1, NULL);
  } else {
    tandem_view_t v_wo[4] = {param(g, l->wo, g->wsize * D * D), whole(g->attn), whole(g->x),
                             whole(g->x1)};
    dispatch(graph, g->k_wo, v_wo, 4, NULL, 0, D / g->rows, 1, NULL);
  }
  tandem_view_t v_rms2[3] = {whole(g->x1), param(g, l->g_mlp, 4 * D), whole(g->xn2)};
  dispatch(graph, g->k_rms, v_rms2, 3, NULL, 0, 1, 1, NULL);
  tandem_view_t v_gu[3] = {param(g, l->wgu, g->wsize * 2 * FFN * D), whole(g->xn2), whole(g->gu)};
  dispatch(graph, g->k_gu, v_gu, 3, NULL, 0, 2 * FFN / g->rows, 1, NULL);
  tandem_view_t v_silu[2] = {whole(g->gu), whole(g->h)};
  dispatch(graph, g->k_silu, v_silu, 2, NULL, 0, groups(FFN, B), 1, NULL);
  tandem_view_t v_down[4] = {param(g, l->wdown, g->wsize * D * FFN), whole(g->h), whole(g->x1),
                             whole(g->x2)};
  dispatch(graph, g->k_down, v_down, 4, NULL, 0, D / g->rows, 1, NULL);
  tandem_view_t v_rms3[3] = {whole(g->x2), param(g, l->g_final, 4 * D), whole(g->xf)};
  dispatch(graph, g->k_rms, v_rms3, 3, NULL, 0, 1, 1, NULL);
  tandem_view_t v_head[3] = {param(g, l->emb, g->wsize * VOCAB * D), whole(g->xf),
                             whole(g->logits)};
  dispatch(graph, g->k_head, v_head, 3, NULL, 0, VOCAB / g->rows, 1, NULL);
  tandem_view_t v_argmax[2] = {whole(g->logits), whole(g->tok)};
  dispatch(graph, g->k_argmax, v_argmax, 2, NULL, 0, 1, 1, NULL);
  CHECK(tandem_graph_add_copy(graph, whole(g->logits), view(g->out[k], 0, 4 * VOCAB),
                              TANDEM_LANE_AUTO));
  CHECK(
      tandem_graph_add_copy(graph, whole(g->tok), view(g->out[k], 4 * VOCAB, 4), TANDEM_LANE_AUTO));
  g->node_count = tandem_graph_node_count(graph);
  tandem_exec_t *exec;
  CHECK(tandem_graph_prepare(graph, &exec));
  tandem_graph_release(graph);
  return exec;
}

/* The graph that sets the first token before a generation. */
static void make_reset(gpu_t *g, uint32_t start_token) {
  tandem_graph_t *graph;
  CHECK(tandem_graph_create(g->rt, &graph));
  CHECK(tandem_graph_add_fill(graph, whole(g->tok), start_token, TANDEM_LANE_AUTO));
  CHECK(tandem_graph_prepare(graph, &g->reset));
  tandem_graph_release(graph);
}

/* Points executable |step| at position |pos|: the only per-token changes. */
static void set_position(gpu_t *g, tandem_exec_t *step, uint32_t pos) {
  const uint32_t seq = pos + 1;
  CHECK(tandem_exec_set_push_constants(step, g->node_rope, &pos, sizeof pos));
  CHECK(tandem_exec_set_view(step, g->node_rope, 3, view(g->kc, 4ull * D * pos, 4 * D)));
  CHECK(tandem_exec_set_view(step, g->node_rope, 4, view(g->vc, 4ull * D * pos, 4 * D)));
  const uint32_t wg[3] = {seq, HEADS, 1};
  CHECK(tandem_exec_set_workgroups(step, g->node_scores, wg));
  CHECK(tandem_exec_set_push_constants(step, g->node_attend, &seq, sizeof seq));
}

static void gpu_release(gpu_t *g) {
  tandem_exec_release(g->step[0]);
  tandem_exec_release(g->step[1]);
  tandem_exec_release(g->reset);
  tandem_kernel_t *ks[] = {g->k_embed,  g->k_rms,    g->k_qkv, g->k_rope, g->k_scores,
                           g->k_attend, g->k_wo,     g->k_gu,  g->k_silu, g->k_down,
                           g->k_head,   g->k_argmax, g->k_add};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) tandem_kernel_release(ks[i]);
  tandem_npu_program_release(g->npu_wo);
  tandem_buffer_t *bs[] = {g->params, g->tok,    g->x,    g->xn,     g->qkv,    g->q,      g->kc,
                           g->vc,     g->scores, g->attn, g->o,      g->x1,     g->xn2,    g->gu,
                           g->h,      g->x2,     g->xf,   g->logits, g->out[0], g->out[1], g->wo_t};
  for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) tandem_buffer_release(bs[i]);
}

/*---------------------------------------------------------------------------
 * Generation, timing, lanes
 *---------------------------------------------------------------------------*/

typedef struct lane_time {
  uint64_t regions;
  uint64_t busy_ns;
} lane_time_t;

typedef struct run {
  double seconds;
  uint32_t *tokens; /* [tokens] the GPU's token after each position */
  float *logits;    /* [tokens][VOCAB] */
} run_t;

typedef struct totals {
  lane_time_t lanes[TANDEM_LANE_COUNT];
  uint64_t span_ns;     /* Σ per token: first region start → last region end */
  uint64_t steps_timed; /* tokens whose GPU times were valid */
} totals_t;

static void account(tandem_completion_t *c, totals_t *t) {
  tandem_region_profile_t regions[32];
  tandem_completion_profile_t p;
  tandem_completion_profile_init(&p);
  CHECK(tandem_completion_profile(c, &p, regions, 32));
  if (!p.gpu_times_valid) return;
  t->span_ns += p.execution_ns;
  t->steps_timed++;
  const uint32_t n = p.region_count < 32 ? p.region_count : 32;
  for (uint32_t r = 0; r < n; r++) {
    if ((unsigned)regions[r].lane >= TANDEM_LANE_COUNT) continue;
    lane_time_t *lt = &t->lanes[regions[r].lane];
    lt->regions++;
    if (regions[r].gpu_end_ns > regions[r].gpu_start_ns)
      lt->busy_ns += regions[r].gpu_end_ns - regions[r].gpu_start_ns;
  }
}

/* Submits token |pos| on executable k and points k at the token it runs
 * next (pos + inflight): safe while the token runs, because a set never
 * affects submitted work. */
static tandem_completion_t *submit_token(gpu_t *g, uint32_t k, uint32_t pos, uint32_t n) {
  tandem_completion_t *c;
  CHECK(tandem_exec_submit(g->step[k], &c));
  if (pos + g->inflight < n) set_position(g, g->step[k], pos + g->inflight);
  return c;
}

/* One generation of |n| tokens; records the wall time of the token loop.
 * Token pos runs on executable pos % inflight. With one executable each
 * token is waited for before the next is submitted; with two, token pos+1 is
 * already queued (ordered after token pos by the buffers they share) while
 * the host waits for token pos and reads its logits from out[pos % 2]. */
static void generate(gpu_t *g, uint32_t n, run_t *run, totals_t *totals) {
  tandem_completion_t *c, *pending[2] = {NULL, NULL};
  CHECK(tandem_exec_submit(g->reset, &c));
  CHECK(tandem_completion_wait(c));
  tandem_completion_release(c);
  for (uint32_t k = 0; k < g->inflight; k++) set_position(g, g->step[k], k);

  const uint64_t t0 = now_ns();
  for (uint32_t k = 0; k < g->inflight && k < n; k++) pending[k] = submit_token(g, k, k, n);
  for (uint32_t pos = 0; pos < n; pos++) {
    const uint32_t k = pos % g->inflight;
    c = pending[k];
    tandem_status_t s = tandem_completion_wait(c);
    if (s != TANDEM_OK) {
      fprintf(stderr, "decode: token %u: %s: %s\n", pos, tandem_status_name(s),
              tandem_error_message());
      exit(1);
    }
    tandem_map_t map;
    CHECK(tandem_map_read(whole(g->out[k]), &map));
    const float *logits = map.data;
    memcpy(run->logits + (size_t)pos * VOCAB, logits, 4 * VOCAB);
    memcpy(&run->tokens[pos], logits + VOCAB, 4);
    tandem_unmap(&map);
    account(c, totals);
    tandem_completion_release(c);
    pending[k] = pos + g->inflight < n ? submit_token(g, k, pos + g->inflight, n) : NULL;
  }
  run->seconds = (double)(now_ns() - t0) * 1e-9;
}

/* Teacher-forced CPU replay of |run|; returns the number of bad tokens and
 * the largest error relative to the token's largest logit. */
static uint32_t verify(const model_t *m, const options_t *o, const run_t *run, double *worst_rel,
                       bool print_all) {
  reference_t *ref = calloc(1, sizeof *ref);
  float *want = malloc(4 * VOCAB);
  if (!ref || !want) die("out of memory");
  ref->m = m;
  uint32_t bad = 0;
  *worst_rel = 0.0;
  for (uint32_t pos = 0; pos < o->tokens; pos++) {
    const uint32_t in = pos ? run->tokens[pos - 1] : o->start_token;
    ref_step(ref, (int)pos, in, want);
    const float *got = run->logits + (size_t)pos * VOCAB;
    float err = 0.0f, scale = 0.0f;
    for (int i = 0; i < VOCAB; i++) {
      err = fmaxf(err, fabsf(got[i] - want[i]));
      scale = fmaxf(scale, fabsf(want[i]));
    }
    const float tol = 1e-3f * scale + 1e-4f;
    const uint32_t tok = run->tokens[pos], cpu_tok = argmax(want, VOCAB);
    bool ok = err <= tol && tok < VOCAB;
    /* The GPU's argmax of its own logits is exact; against the CPU's the
     * token may differ only where the CPU's top logits are within tolerance. */
    if (ok && tok != argmax(got, VOCAB)) ok = false;
    if (ok && tok != cpu_tok && want[cpu_tok] - want[tok] > tol) ok = false;
    if (scale > 0.0f && err / scale > *worst_rel) *worst_rel = err / scale;
    if (!ok) bad++;
    if (!ok || print_all)
      printf("  pos %3u  in %3u  gpu token %3u  cpu argmax %3u  max|err| %.3g  tol %.3g  %s\n", pos,
             in, tok, cpu_tok, (double)err, (double)tol, ok ? "ok" : "MISMATCH");
  }
  free(want);
  free(ref);
  return bad;
}

static int compare_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* |s| as a JSON string literal, escaped by jansson. */
static void write_json_string(FILE *f, const char *s) {
  json_t *j = json_string_nocheck(s ? s : "");
  char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
  if (!text) {
    fprintf(stderr, "out of memory writing JSON\n");
    exit(1);
  }
  fputs(text, f);
  free(text);
  json_decref(j);
}

int main(int argc, char **argv) {
  options_t o = parse_options(argc, argv);
  setvbuf(stdout, NULL, _IOLBF, 0);

  /* Sanitizer hygiene, as in tests/harness.c: keep the validation layer and
   * lavapipe mapped until exit, so that LeakSanitizer can attribute (and
   * tests/lsan.supp suppress) the layer's own leaks, lavapipe's per-device
   * allocations stay reachable, and ThreadSanitizer's called_from_lib
   * suppressions (tests/tsan.supp) can name both. lavapipe only in
   * sanitizer builds, as in tests/harness.c. */
  if (o.validation)
    (void)dlopen("libVkLayer_khronos_validation.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
#endif

  tandem_runtime_options_t ro;
  tandem_runtime_options_init(&ro);
  ro.gpu_index = o.gpu_index;
  ro.graph_slots = 2;
  ro.validation = o.validation;
  ro.validation_callback = on_validation;
  ro.gpu_timestamps = o.timestamps;
  if (o.npu) {
    ro.npu_backend = "emulated";
#ifdef TANDEM_DECODE_NPU_LIBRARY
    if (!getenv("TANDEM_NPU_LIBRARY")) ro.npu_library = TANDEM_DECODE_NPU_LIBRARY;
#endif
  }
  gpu_t g = {.block = o.block, .npu = o.npu, .inflight = o.inflight};
  bool staged = false; /* NPU sharing through copies (counted on the NPU lane) */
  CHECK(tandem_runtime_create(&ro, &g.rt));
  CHECK(tandem_runtime_open_gpu(g.rt));
  tandem_device_info_init(&g.info);
  CHECK(tandem_runtime_gpu_info(g.rt, o.gpu_index, &g.info));
  if (o.npu) {
    tandem_npu_info_t ni;
    tandem_npu_info_init(&ni);
    CHECK(tandem_runtime_npu_info(g.rt, &ni));
    printf("npu:     %s, sharing %s\n", ni.name, tandem_sharing_name(ni.sharing));
    staged = ni.sharing == TANDEM_SHARING_STAGED;
  }

  const uint32_t features = g.info.shader_features;
  const bool has_f16 = features & TANDEM_SHADER_STORAGE_BUFFER_16BIT;
  const bool has_sg =
      (features & TANDEM_SHADER_SUBGROUP_BASIC) && (features & TANDEM_SHADER_SUBGROUP_ARITHMETIC);
  if ((o.weights == CHOICE_A && !has_f16) || (o.reduce == CHOICE_A && !has_sg)) {
    fprintf(stderr, "decode: skipped: the device lacks %s\n",
            o.weights == CHOICE_A && !has_f16 ? "storageBuffer16BitAccess" : "subgroup arithmetic");
    return 77;
  }
  if (o.block > g.info.max_local_invocations || o.block > g.info.max_local_size[0])
    die("--block %u is over the device's limit (%u invocations)", o.block,
        g.info.max_local_invocations);
  g.rows = o.rows ? o.rows : g.info.is_cpu ? 8 : 1;
  if (g.rows > o.block) die("--rows %u is more than the workgroup size %u", g.rows, o.block);
  /* The largest workgroup memory of any kernel: matvec's partial sums plus
   * the common reduction scratch, argmax's pairs, attend's probabilities. */
  uint64_t shared = 4ull * (g.rows + 1) * o.block;
  if (4ull * 3 * o.block > shared) shared = 4ull * 3 * o.block;
  if (4ull * (MAX_SEQ + o.block) > shared) shared = 4ull * (MAX_SEQ + o.block);
  if (shared > g.info.max_shared_memory_bytes)
    die("--rows %u with --block %u needs %llu bytes of shared memory; the device has %u", g.rows,
        o.block, (unsigned long long)shared, g.info.max_shared_memory_bytes);
  const bool f16 = o.weights == CHOICE_AUTO ? has_f16 : o.weights == CHOICE_A;
  const bool sg = o.reduce == CHOICE_AUTO ? has_sg : o.reduce == CHOICE_A;
  g.variant = pick_variant(f16, sg);
  g.wsize = f16 ? 2 : 4;
  g.lay = make_layout(g.wsize);
  printf("device:  %s (%s %s), subgroup size %u\n", g.info.name, g.info.driver_name,
         g.info.driver_info, g.info.subgroup_size);
  printf("model:   d_model %d, %d heads of %d, ffn %d, vocab %d (tied), %s weights, "
         "%s reductions, workgroup %u, %u rows per matvec workgroup%s\n",
         D, HEADS, HD, FFN, VOCAB, f16 ? "f16" : "f32", sg ? "subgroup" : "shared-memory", o.block,
         g.rows, o.npu ? ", output projection on the NPU lane" : "");

  model_t *m = model_create(o.seed);
  make_buffers(&g);
  if (o.npu) make_npu_program(&g);
  make_kernels(&g);
  upload_weights(&g, m);
  const uint64_t prep0 = now_ns();
  for (uint32_t k = 0; k < g.inflight; k++) g.step[k] = make_step(&g, k);
  const double prepare_ms = (double)(now_ns() - prep0) * 1e-6;
  make_reset(&g, o.start_token);
  printf("step:    %u nodes, prepared once in %.2f ms%s\n", g.node_count, prepare_ms,
         g.inflight == 2 ? " (two executables: two tokens in flight)" : "");

  run_t *runs = calloc(o.repeat, sizeof *runs);
  double *rates = calloc(o.repeat, sizeof *rates);
  if (!runs || !rates) die("out of memory");
  totals_t totals = {0};
  tandem_statistics_t st0, st1;
  tandem_lane_info_t down0, down1;
  tandem_lane_info_init(&down0);
  tandem_lane_info_init(&down1);
  tandem_statistics_init(&st0);
  tandem_statistics_init(&st1);
  tandem_runtime_statistics(g.rt, &st0);
  CHECK(tandem_runtime_lane_info(g.rt, TANDEM_LANE_DOWNLOAD, &down0));
  if (o.trace) CHECK(tandem_runtime_trace_start(g.rt, 8 * (o.tokens + 1) * o.repeat));
  for (uint32_t r = 0; r < o.repeat; r++) {
    runs[r].tokens = calloc(o.tokens, sizeof(uint32_t));
    runs[r].logits = calloc((size_t)o.tokens * VOCAB, sizeof(float));
    if (!runs[r].tokens || !runs[r].logits) die("out of memory");
    generate(&g, o.tokens, &runs[r], &totals);
    rates[r] = o.tokens / runs[r].seconds;
    printf("run %u:   %u tokens in %.2f ms: %.1f tokens/s\n", r + 1, o.tokens,
           runs[r].seconds * 1e3, rates[r]);
  }

  tandem_runtime_statistics(g.rt, &st1);
  CHECK(tandem_runtime_lane_info(g.rt, TANDEM_LANE_DOWNLOAD, &down1));
  if (o.trace) {
    tandem_trace_t *trace;
    CHECK(tandem_runtime_trace_stop(g.rt, &trace));
    CHECK(tandem_trace_write_json(trace, o.trace));
    tandem_trace_release(trace);
    printf("trace:   %s\n", o.trace);
  }

  printf("tokens: ");
  for (uint32_t i = 0; i < o.tokens; i++) printf(" %u", runs[0].tokens[i]);
  printf("\n");

  uint32_t bad = 0;
  double worst = 0.0;
  for (uint32_t r = 0; r < o.repeat; r++) {
    double rel;
    const uint32_t b = verify(m, &o, &runs[r], &rel, o.verbose && r == 0);
    if (b) printf("run %u: %u of %u tokens differ from the CPU reference\n", r + 1, b, o.tokens);
    bad += b;
    if (rel > worst) worst = rel;
  }
  uint32_t distinct = 0;
  for (uint32_t i = 0; i < o.tokens; i++) {
    bool seen = false;
    for (uint32_t j = 0; j < i; j++) seen = seen || runs[0].tokens[j] == runs[0].tokens[i];
    distinct += !seen;
  }
  printf("check:   %s: %u tokens x %u runs against the CPU reference, largest error %.2e of "
         "the largest logit; %u distinct tokens\n",
         bad ? "FAILED" : "ok", o.tokens, o.repeat, worst, distinct);
  /* The replay allocates no buffer and copies exactly the logits and the
   * token of each step (the download lane); nothing else is copied unless
   * the NPU shares memory through staged copies, which count on its lane. */
  const uint64_t steps = (uint64_t)o.tokens * o.repeat;
  const uint64_t copied = st1.copied_bytes - st0.copied_bytes;
  const uint64_t downloaded = down1.copied_bytes - down0.copied_bytes;
  const bool replay_ok = st1.allocations == st0.allocations &&
                         downloaded == steps * 4 * (VOCAB + 1) && (staged || copied == downloaded);
  printf("replay:  %s: %llu buffers allocated, %llu bytes copied per token (download %llu), "
         "%llu submissions, %llu NPU runs\n",
         replay_ok ? "ok" : "FAILED", (unsigned long long)(st1.allocations - st0.allocations),
         (unsigned long long)(copied / steps), (unsigned long long)(downloaded / steps),
         (unsigned long long)(st1.submissions - st0.submissions),
         (unsigned long long)(st1.npu_runs - st0.npu_runs));
  if (!replay_ok) bad++;

  double *sorted = malloc(o.repeat * sizeof *sorted);
  if (!sorted) die("out of memory");
  memcpy(sorted, rates, o.repeat * sizeof *sorted);
  qsort(sorted, o.repeat, sizeof *sorted, compare_double);
  const double median =
      o.repeat % 2 ? sorted[o.repeat / 2] : 0.5 * (sorted[o.repeat / 2 - 1] + sorted[o.repeat / 2]);
  double wall = 0.0;
  for (uint32_t r = 0; r < o.repeat; r++) wall += runs[r].seconds;
  printf("speed:   %.1f tokens/s (median of %u), %.1f us per token%s\n", median, o.repeat,
         1e6 / median, o.timestamps ? " (with GPU timestamps)" : "");

  if (totals.steps_timed) {
    printf("lanes:   GPU timestamps of %llu steps; busy time per token and share of the step's "
           "GPU span / of wall time\n",
           (unsigned long long)totals.steps_timed);
    printf("  %-9s %8s %12s %10s %10s\n", "lane", "regions", "us/token", "of span", "of wall");
    for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
      const lane_time_t *lt = &totals.lanes[l];
      if (!lt->regions) continue;
      printf("  %-9s %8llu %12.1f %9.1f%% %9.1f%%\n", tandem_lane_name((tandem_lane_t)l),
             (unsigned long long)lt->regions,
             (double)lt->busy_ns * 1e-3 / (double)totals.steps_timed,
             100.0 * (double)lt->busy_ns / (double)totals.span_ns,
             100.0 * (double)lt->busy_ns * 1e-9 / wall);
    }
    printf("  %-9s %8s %12.1f %9s %9.1f%%\n", "span", "",
           (double)totals.span_ns * 1e-3 / (double)totals.steps_timed, "100.0%",
           100.0 * (double)totals.span_ns * 1e-9 / wall);
  } else if (o.timestamps) {
    printf("lanes:   no valid GPU timestamps on this device\n");
  }

  const uint64_t messages = atomic_load(&validation_count);
  if (o.validation) printf("validation: %llu messages\n", (unsigned long long)messages);

  if (o.json) {
    FILE *f = fopen(o.json, "w");
    if (!f) die("cannot write %s", o.json);
    fprintf(f, "{\"example\": \"decode\", \"device\": ");
    write_json_string(f, g.info.name);
    fprintf(f, ", \"driver\": ");
    write_json_string(f, g.info.driver_name);
    fprintf(f, ", \"driver_info\": ");
    write_json_string(f, g.info.driver_info);
    fprintf(f,
            ", \"weights\": \"%s\", \"reduce\": \"%s\", \"block\": %u, \"rows\": %u"
            ", \"subgroup_size\": %u"
            ", \"inflight\": %u, \"npu\": %s, \"gpu_timestamps\": %s, \"validation\": %s"
            ", \"model\": {\"d_model\": %d, \"heads\": %d, \"head_dim\": %d, \"ffn\": %d"
            ", \"vocab\": %d, \"max_seq\": %d}"
            ", \"tokens\": %u, \"repeat\": %u, \"tokens_per_s\": %.3f, \"us_per_token\": %.3f"
            ", \"tokens_per_s_runs\": [",
            f16 ? "f16" : "f32", sg ? "subgroup" : "tree", o.block, g.rows, g.info.subgroup_size,
            o.inflight, o.npu ? "true" : "false", o.timestamps ? "true" : "false",
            o.validation ? "true" : "false", D, HEADS, HD, FFN, VOCAB, MAX_SEQ, o.tokens, o.repeat,
            median, 1e6 / median);
    for (uint32_t r = 0; r < o.repeat; r++) fprintf(f, "%s%.3f", r ? ", " : "", rates[r]);
    fprintf(f, "], \"prepare_ms\": %.3f, \"check\": \"%s\", \"max_rel_err\": %.3e", prepare_ms,
            bad ? "failed" : "ok", worst);
    fprintf(f, ", \"copied_bytes_per_token\": %llu, \"allocations_during_replay\": %llu",
            (unsigned long long)(copied / steps),
            (unsigned long long)(st1.allocations - st0.allocations));
    fprintf(f, ", \"lanes\": {");
    bool first = true;
    for (int l = 0; l < TANDEM_LANE_COUNT && totals.steps_timed; l++) {
      const lane_time_t *lt = &totals.lanes[l];
      if (!lt->regions) continue;
      fprintf(f,
              "%s\"%s\": {\"regions\": %llu, \"us_per_token\": %.3f, \"share_of_span\": %.4f"
              ", \"share_of_wall\": %.4f}",
              first ? "" : ", ", tandem_lane_name((tandem_lane_t)l),
              (unsigned long long)lt->regions,
              (double)lt->busy_ns * 1e-3 / (double)totals.steps_timed,
              (double)lt->busy_ns / (double)totals.span_ns, (double)lt->busy_ns * 1e-9 / wall);
      first = false;
    }
    fprintf(f, "}, \"span_us_per_token\": %.3f, \"generated\": [",
            totals.steps_timed ? (double)totals.span_ns * 1e-3 / (double)totals.steps_timed : 0.0);
    for (uint32_t i = 0; i < o.tokens; i++) fprintf(f, "%s%u", i ? ", " : "", runs[0].tokens[i]);
    fprintf(f, "]}\n");
    if (fclose(f)) die("writing %s failed", o.json);
    printf("json:    %s\n", o.json);
  }

  for (uint32_t r = 0; r < o.repeat; r++) {
    free(runs[r].tokens);
    free(runs[r].logits);
  }
  free(runs);
  free(rates);
  free(sorted);
  gpu_release(&g);
  model_destroy(m);
  tandem_runtime_destroy(g.rt);
  if (messages) fprintf(stderr, "decode: %llu validation messages\n", (unsigned long long)messages);
  return bad || messages ? 1 : 0;
}
