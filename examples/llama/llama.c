/* SPDX-License-Identifier: MIT */
/*
 * llama.c — a Llama-family decoder on tandem's public API: weights from a
 * transformers checkpoint (config.json + safetensors, safetensors.c), a
 * prompt prefilled token by token, then greedy decoding of N tokens, every
 * step on the GPU, checked against the CPU reference (reference.c) with
 * --check or written out for an outside comparison with --logits-out.
 *
 * One step (one position) is one prepared graph, replayed for every token:
 *
 *   embed (the token id read from the GPU's token history, the position
 *   from the step's parameters) → per layer: Q/K/V product with RMSNorm
 *   fused → attention (RoPE, KV-cache write at the position, softmax over
 *   the pos + 1 cached rows) → output product + residual → gate/up product
 *   with RMSNorm and SiLU·up fused → down product + residual → LM head with
 *   RMSNorm fused → argmax, which writes the next token into the history (no
 *   host round trip per token) and moves the position in the parameters on
 *   by one → with --check / --logits-out, a copy of the logits to row pos of
 *   a host-visible buffer (download lane; its destination moves per token).
 *
 * So by default nothing of the step changes per token and no command buffer
 * is recorded again. With --pos-lane compute / upload (the first version) the
 * step starts with a copy of the position's row of a host-visible table into
 * the parameters, its source view moved per submission; on the H200 that
 * re-recording of the step's region per token cost more than any kernel
 * change won (bench/NOTES.md). --chunk K records K steps in one graph and
 * submits them at once.
 *
 * With --npu the LM head's last rows of the vocabulary run on the emulated
 * NPU lane (matmul_f32 over the final norm's output, written for it by a
 * small kernel) while the GPU computes the other rows; a copy puts the NPU's
 * logits after the GPU's before the argmax. The logits are the same.
 *
 * The KV cache grows by one row per token: the attention kernel reads the
 * position from the parameters and attends over rows 0..pos; nothing is
 * prepared again. Several submissions are in flight at once (--inflight),
 * each ordered after the previous one by the buffers they share.
 *
 * Weights are f16 on the GPU (f16 checkpoints as they are, bf16 and f32
 * converted at load, rounding to nearest; the norms' gains f32), uploaded in
 * 64 MiB chunks through a host-visible staging buffer and the upload lane.
 * Kernels (kernels/): the mat-vec products are matvec_wide.glsl (several
 * invocations per weight row, 16-byte loads all issued before any is used,
 * shuffle reductions; invocations per row and workgroup size as
 * specialization constants picked per device), the Q/K/V one with RoPE and
 * the KV-cache write fused, then attention_cached.glsl (keys and values from
 * the cache in one round of loads); with --attention fused the attention and
 * the output product are one node (attn_o.glsl), with --prefetch on a node's
 * trailing workgroups read a later node's weights into the L2 cache
 * (prefetch.glsl) — both measured slower on the H100 and off by default. The
 * first kernels (one subgroup per row, RoPE in the attention) stay behind
 * --matvec old / --attention spread|plain. Workgroup size is specialization
 * constant 0 everywhere; 16-bit storage for the embedding.
 *
 * Exit status: 0 the run (and the check, if asked) passed with no validation
 * message, 1 otherwise, 77 no usable device.
 */
#include <assert.h>
#include <dlfcn.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama.h"
#include "tandem/tandem.h"
#include "tandem_llama_shaders.h"

typedef struct options {
  const char *model;
  uint32_t prompt[4096];
  uint32_t prompt_len;
  uint32_t tokens;   /* tokens to generate */
  uint32_t repeat;   /* timed generations; the median is reported */
  uint32_t inflight; /* steps submitted ahead of the one waited for */
  uint32_t block;    /* workgroup size; 0: 128 (64 on a CPU device) */
  uint32_t gpu_index;
  tandem_lane_t pos_lane; /* where the per-token parameter copy runs */
  bool pos_gpu;           /* --pos-lane gpu: no copy, the argmax advances the position */
  uint32_t chunk;         /* steps per submission (--chunk) */
  uint32_t npu_rows;      /* --npu: LM-head rows (the vocabulary's last) on the NPU lane */
  bool npu;
  bool attention_plain;  /* --attention plain: the kernel before the spread one */
  bool attention_spread; /* --attention spread: the spread kernel (RoPE in the attention) */
  bool attention_fused;  /* --attention fused: attention and o_proj as one node */
  bool matvec_old;       /* --matvec old: one subgroup per row, the first kernels */
  uint32_t lanes;        /* --lanes: invocations per row of the wide mat-vecs; 0: per matrix */
  int prefetch;          /* --prefetch: 1 on, 0 off (the default) */
  bool persistent;       /* --engine persistent: the whole step as one dispatch */
  uint32_t groups;       /* --groups: its workgroups; 0: 128 on a GPU, 1 on a CPU device */
  uint32_t counters;     /* --barrier-counters: its grid barrier's (0: DEC_SPREAD) */
  int64_t ahead;         /* --ahead: decoder.glsl's AHEAD bits (-1: DEC_AHEAD) */
  int head_flags;        /* --head-flags: 1 on, 0 off, -1 DEC_FLAGS */
  int part_counts;       /* --part-counts: 1 on, 0 off, -1 DEC_PART_COUNTS */
  int qkv_counts;        /* --qkv-counts: 1 on, 0 off, -1 DEC_QKV_COUNTS */
  int down_counts;       /* --down-counts: 1 on, 0 off, -1 DEC_COUNTS */
  int e_barrier;         /* --e-barrier: 1 on, 0 off, -1 DEC_E_BARRIER */
  int head_node;         /* --head-node: 1 on, 0 off, -1 DEC_E_NODE */
  uint32_t head_block;   /* --head-block: head_best.glsl's workgroup (0: HEAD_BLOCK) */
  bool check, bench, profile, clocks, timestamps, validation, verbose;
  const char *logits_out, *json;
} options_t;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("llama: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void check(tandem_status_t s, const char *what) {
  if (s == TANDEM_OK) return;
  fprintf(stderr, "llama: %s: %s: %s\n", what, tandem_status_name(s), tandem_error_message());
  exit(s == TANDEM_ERROR_NO_DEVICE ? 77 : 1);
}
#define CHECK(expr) check((expr), #expr)

static int compare_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int compare_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f) {
  fprintf(f, "usage: tandem_example_llama --model DIR [options]\n"
             "  --model DIR        a transformers checkpoint: config.json and model.safetensors\n"
             "                     (or model.safetensors.index.json and its shards)\n"
             "  --prompt IDS       comma-separated token ids (default 1); there is no tokenizer\n"
             "  --tokens N         tokens to generate (default 16)\n"
             "  --check            compare every position's logits with the CPU reference\n"
             "                     (slow: meant for small models)\n"
             "  --logits-out PATH  write every position's logits (f32, [positions][vocab])\n"
             "  --json PATH        write the figures and tokens as one JSON object\n"
             "  --repeat N         generate N times, report the median (default 1)\n"
             "  --inflight N       submissions in flight, 1..8 (default 2)\n"
             "  --pos-lane L       gpu | compute | upload: gpu (default): the argmax kernel\n"
             "                     advances the position in the step's parameters, so nothing\n"
             "                     changes per token; compute / upload: a copy node on that\n"
             "                     lane takes the position from a host table, its source view\n"
             "                     moved per submission (the first version)\n"
             "  --chunk K          K steps per submission, one graph of K steps (default 1;\n"
             "                     needs --pos-lane gpu)\n"
             "  --npu              the LM head's last quarter of the vocabulary on the emulated\n"
             "                     NPU lane (matmul_f32), beside the GPU's three quarters\n"
             "  --npu-rows N       as --npu, with the vocabulary's last N rows on the NPU\n"
             "  --block N          workgroup size, a power of two 32..1024 (default 128; 64 on\n"
             "                     a CPU device); attention and argmax use larger ones\n"
             "  --attention K      cached | fused | spread | plain: cached (default): RoPE and\n"
             "                     the KV-cache write in the Q/K/V product, the attention\n"
             "                     reading every key and value from the cache in one round of\n"
             "                     loads; fused: the attention and the output product as one\n"
             "                     node (each workgroup computes the whole attention, then its\n"
             "                     rows of W_o; slower on the H100, bench/NOTES.md 2026-12-05);\n"
             "                     spread: RoPE and the cache write in the attention, its dot\n"
             "                     products spread over the workgroup; plain: as spread, one\n"
             "                     invocation per row (the first version)\n"
             "  --matvec K         wide | old: wide (default): several invocations per weight\n"
             "                     row, all 16-byte loads issued at once; old: one subgroup\n"
             "                     per row (the first version)\n"
             "  --lanes N          invocations per row of the wide mat-vecs, a power of two up\n"
             "                     to the subgroup size (default: chosen per matrix)\n"
             "  --prefetch on|off  on: trailing workgroups of a node read weights a later node\n"
             "                     needs, so that they are in the L2 cache by then (off by\n"
             "                     default: it made the H100's dependent dispatches slower,\n"
             "                     bench/NOTES.md 2026-12-05)\n"
             "  --engine E         nodes | persistent: nodes (default): a dispatch per kernel,\n"
             "                     153 for SmolLM-135M; persistent: the whole step as one\n"
             "                     dispatch whose workgroups meet at grid barriers\n"
             "                     (kernels/decoder.glsl; needs subgroup shuffles)\n"
             "  --groups N         the persistent step's workgroups, all resident at once\n"
             "                     (default 128 on a GPU, 1 on a CPU device)\n"
             "  --barrier-counters N  its grid barrier's arrival counters, summed by the poll\n"
             "                     (1 to 32 and at most the subgroup size)\n"
             "  --ahead BITS       its loads issued ahead (decoder.glsl's AHEAD, 0 to 511;\n"
             "                     default 7), for experiments: --profile times each bit\n"
             "  --head-flags on|off  on: stage B waits only for the workgroups that wrote its\n"
             "                     KV group in stage A (then the counts are off unless\n"
             "                     asked for); off (default)\n"
             "  --part-counts on|off  on (default; needs --down-counts on): stage C polls\n"
             "                     stage B's counted o_proj sums, no grid barrier between\n"
             "  --qkv-counts on|off  on (default; needs --down-counts on): stage B polls\n"
             "                     stage A's counted q, k and v, no grid barrier between\n"
             "  --down-counts on|off  on (default): stage A polls the down product's sums,\n"
             "                     each add counted, no grid barrier after stage C\n"
             "  --e-barrier on|off  on (needs --down-counts on): a grid barrier before the\n"
             "                     LM head (stage E) instead of its poll; off (default)\n"
             "  --head-node on|off  on: the LM head and the token as a node of their own after\n"
             "                     the persistent step's layers (head_best.glsl), not as its\n"
             "                     stage E\n"
             "  --head-block N     that node's workgroup (a multiple of the subgroup size;\n"
             "                     default 256 on a GPU)\n"
             "  --bench            also time the mat-vec products and a device copy (GPU\n"
             "                     timestamps) and report their bandwidth\n"
             "  --profile          (--engine persistent) time the step beside variants of its\n"
             "                     kernel (parts left out, loads, lanes), on GPU timestamps\n"
             "  --clocks           (--engine persistent) the step with the device's clock read at\n"
             "                     every stage's start and barrier arrival, in every workgroup:\n"
             "                     each stage's and barrier's share of the step (needs\n"
             "                     VK_KHR_shader_clock)\n"
             "  --gpu N            Vulkan device index (default 0)\n"
             "  --no-timestamps    no GPU timestamps (no lane table)\n"
             "  --validation       Khronos validation layer on (also TANDEM_VALIDATION=1)\n"
             "  --verbose          print every position's check\n"
             "Exit status: 0 ok, 1 failure or validation message, 77 no usable device.\n");
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

static int parse_on_off(const char *flag, const char *text) {
  if (text && !strcmp(text, "on")) return 1;
  if (text && !strcmp(text, "off")) return 0;
  die("%s: on or off", flag);
}

static options_t *parse_options(int argc, char **argv) {
  options_t *o = calloc(1, sizeof *o);
  if (!o) die("out of memory");
  o->tokens = 16, o->repeat = 1, o->inflight = 2, o->timestamps = true, o->ahead = -1;
  o->head_flags = -1;
  o->part_counts = -1;
  o->qkv_counts = -1;
  o->down_counts = -1;
  o->e_barrier = -1;
  o->head_node = -1;
  o->pos_lane = TANDEM_LANE_COMPUTE, o->pos_gpu = true, o->chunk = 1;
  o->prompt[0] = 1, o->prompt_len = 1, o->prefetch = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(0);
    } else if (!strcmp(a, "--model")) {
      if (!v) die("--model needs a directory");
      o->model = v, i++;
    } else if (!strcmp(a, "--prompt")) {
      if (!v || !*v) die("--prompt needs comma-separated token ids");
      o->prompt_len = 0;
      for (const char *p = v; *p;) {
        char *end;
        unsigned long t = strtoul(p, &end, 10);
        if (end == p || (*end && *end != ',')) die("--prompt: '%s' is not a list of ids", v);
        if (o->prompt_len == 4096) die("--prompt: more than 4096 ids");
        o->prompt[o->prompt_len++] = (uint32_t)t;
        p = *end ? end + 1 : end;
      }
      i++;
    } else if (!strcmp(a, "--tokens")) {
      o->tokens = (uint32_t)parse_uint(a, v, 1, 1 << 20), i++;
    } else if (!strcmp(a, "--repeat")) {
      o->repeat = (uint32_t)parse_uint(a, v, 1, 1000), i++;
    } else if (!strcmp(a, "--inflight")) {
      o->inflight = (uint32_t)parse_uint(a, v, 1, 8), i++;
    } else if (!strcmp(a, "--block")) {
      o->block = (uint32_t)parse_uint(a, v, 32, 1024), i++;
      if (o->block & (o->block - 1)) die("--block: %u is not a power of two", o->block);
    } else if (!strcmp(a, "--gpu")) {
      o->gpu_index = (uint32_t)parse_uint(a, v, 0, 255), i++;
    } else if (!strcmp(a, "--pos-lane")) {
      o->pos_gpu = false;
      if (v && !strcmp(v, "compute")) o->pos_lane = TANDEM_LANE_COMPUTE;
      else if (v && !strcmp(v, "upload")) o->pos_lane = TANDEM_LANE_UPLOAD;
      else if (v && !strcmp(v, "gpu")) o->pos_gpu = true;
      else die("--pos-lane: gpu, compute or upload");
      i++;
    } else if (!strcmp(a, "--npu")) {
      o->npu = true;
    } else if (!strcmp(a, "--npu-rows")) {
      o->npu = true;
      o->npu_rows = (uint32_t)parse_uint(a, v, 1, 1u << 30), i++;
    } else if (!strcmp(a, "--chunk")) {
      o->chunk = (uint32_t)parse_uint(a, v, 1, 64), i++;
    } else if (!strcmp(a, "--attention")) {
      o->attention_plain = o->attention_spread = o->attention_fused = false;
      if (v && !strcmp(v, "spread")) o->attention_spread = true;
      else if (v && !strcmp(v, "plain")) o->attention_plain = true;
      else if (v && !strcmp(v, "fused")) o->attention_fused = true;
      else if (!v || strcmp(v, "cached")) die("--attention: cached, fused, spread or plain");
      i++;
    } else if (!strcmp(a, "--matvec")) {
      if (v && !strcmp(v, "old")) o->matvec_old = true;
      else if (v && !strcmp(v, "wide")) o->matvec_old = false;
      else die("--matvec: wide or old");
      i++;
    } else if (!strcmp(a, "--prefetch")) {
      if (v && !strcmp(v, "off")) o->prefetch = 0;
      else if (v && !strcmp(v, "on")) o->prefetch = 1;
      else die("--prefetch: on or off");
      i++;
    } else if (!strcmp(a, "--engine")) {
      if (v && !strcmp(v, "persistent")) o->persistent = true;
      else if (v && !strcmp(v, "nodes")) o->persistent = false;
      else die("--engine: nodes or persistent");
      i++;
    } else if (!strcmp(a, "--groups")) {
      o->groups = (uint32_t)parse_uint(a, v, 1, 65535), i++;
    } else if (!strcmp(a, "--barrier-counters")) {
      o->counters = (uint32_t)parse_uint(a, v, 1, 32), i++;
    } else if (!strcmp(a, "--head-flags")) {
      o->head_flags = parse_on_off(a, v), i++;
    } else if (!strcmp(a, "--part-counts")) {
      o->part_counts = parse_on_off(a, v), i++;
    } else if (!strcmp(a, "--qkv-counts")) {
      o->qkv_counts = parse_on_off(a, v), i++;
    } else if (!strcmp(a, "--down-counts")) {
      o->down_counts = parse_on_off(a, v), i++;
    } else if (!strcmp(a, "--e-barrier")) {
      o->e_barrier = parse_on_off(a, v), i++;
    } else if (!strcmp(a, "--head-node")) {
      o->head_node = parse_on_off(a, v), i++;
    } else if (!strcmp(a, "--head-block")) {
      o->head_block = (uint32_t)parse_uint(a, v, 1, 1024), i++;
    } else if (!strcmp(a, "--ahead")) {
      o->ahead = (int64_t)parse_uint(a, v, 0, 511), i++;
    } else if (!strcmp(a, "--lanes")) {
      o->lanes = (uint32_t)parse_uint(a, v, 1, 128), i++;
      if (o->lanes & (o->lanes - 1)) die("--lanes: %u is not a power of two", o->lanes);
    } else if (!strcmp(a, "--logits-out")) {
      if (!v) die("--logits-out needs a path");
      o->logits_out = v, i++;
    } else if (!strcmp(a, "--json")) {
      if (!v) die("--json needs a path");
      o->json = v, i++;
    } else if (!strcmp(a, "--check")) {
      o->check = true;
    } else if (!strcmp(a, "--bench")) {
      o->bench = true;
    } else if (!strcmp(a, "--profile")) {
      o->profile = true;
    } else if (!strcmp(a, "--clocks")) {
      o->clocks = true;
    } else if (!strcmp(a, "--no-timestamps")) {
      o->timestamps = false;
    } else if (!strcmp(a, "--validation")) {
      o->validation = true;
    } else if (!strcmp(a, "--verbose")) {
      o->verbose = true;
    } else {
      usage(stderr);
      die("unknown argument '%s'", a);
    }
  }
  if (!o->model) {
    usage(stderr);
    die("--model DIR is required");
  }
  const char *env = getenv("TANDEM_VALIDATION");
  if (env && !strcmp(env, "1")) o->validation = true;
  return o;
}

/*---------------------------------------------------------------------------
 * GPU objects
 *---------------------------------------------------------------------------*/

static atomic_uint_fast64_t validation_count;
static void on_validation(void *user, tandem_validation_severity_t severity, const char *message) {
  (void)user;
  uint64_t n = atomic_fetch_add(&validation_count, 1) + 1;
  if (n <= 10)
    fprintf(stderr, "llama: validation %s #%llu: %s\n",
            severity == TANDEM_VALIDATION_ERROR ? "error" : "warning", (unsigned long long)n,
            message);
}

/* Where one layer's weights live in the weight buffer (byte offsets). */
typedef struct layer_at {
  uint64_t qkv, o, gate, up, down, attn_norm, mlp_norm;
  uint64_t down_t; /* --engine persistent: W_down transposed (FFN x hidden), else unused */
} layer_at_t;

/* The kinds of node a step records; --bench records them one kind at a time. */
enum {
  K_POS = 1,
  K_EMBED = 2,
  K_QKV = 4,
  K_ATTN = 8,
  K_O = 16,
  K_GATEUP = 32,
  K_DOWN = 64,
  K_HEAD = 128,
  K_ARGMAX = 256,
  K_LOGITS = 512,
  K_STEP = K_POS | K_EMBED | K_QKV | K_ATTN | K_O | K_GATEUP | K_DOWN | K_HEAD | K_ARGMAX,
  K_MATVEC = K_QKV | K_O | K_GATEUP | K_DOWN | K_HEAD,
};

/* One build of the persistent step's kernel: decoder.glsl's SKIP,
 * FILL_INFLIGHT, HEAD_ROWS and AHEAD, and LANES (invocations a weight row;
 * 0: the subgroup size, at most 32). --profile times several. */
typedef struct variant {
  const char *name;
  uint32_t skip, fill_inflight, head_rows, ahead;
  uint32_t lanes[5];     /* invocations a weight row in stages A..E (0: the default) */
  uint32_t att_subgroup; /* ATT_SUBGROUP: the softmax per subgroup (1) or workgroup */
  uint32_t stage_d;      /* 1: the down product as stage D (DOWN_SPLIT 0), 0: split in stage C */
  uint32_t spread;       /* BARRIER_SPREAD: the grid barrier's arrival counters */
  uint32_t flags;        /* HEAD_FLAGS: stage B waits per KV group, not for the grid */
  uint32_t pcounts;      /* PART_COUNTS: stage C polls stage B's counted o_proj sums */
  uint32_t qcounts;      /* QKV_COUNTS: stage B polls stage A's counted q, k, v */
  uint32_t counts;       /* DOWN_COUNTS: stage A polls the down product's counted sums */
  uint32_t clocks;       /* llama_decoder_clocks: stamps into a 10th binding (--clocks) */
  uint32_t e_barrier;    /* E_BARRIER: a grid barrier before stage E (with DOWN_COUNTS) */
  uint32_t e_node;       /* E_NODE: no stage E; the LM head is head_best.glsl's node */
} variant_t;

/* The grid barriers in a layer of |v|'s step: one a stage hand-over (A -> B,
 * B -> C, C -> A, and C -> D -> A with stage D), less those a variant
 * replaces by flags or counted sums. */
static uint32_t dec_barriers_per_layer(const variant_t *v) {
  return (v->stage_d ? 4 : 3) - (v->flags ? 1 : 0) - (v->pcounts ? 1 : 0) - (v->qcounts ? 1 : 0) -
         (v->counts ? 1 : 0);
}

typedef struct gpu {
  tandem_runtime_t *rt;
  tandem_device_info_t info;
  const llama_config_t *c;
  uint32_t block, rows_per_wg, max_seq;
  uint32_t attn_block, argmax_block; /* their own workgroup sizes */
  bool attention_plain;
  bool attn_cached;    /* RoPE + KV write in the Q/K/V product (llama_mvw_rope), attention_cached */
  bool attn_fused;     /* and the attention fused with o_proj (attn_o.glsl); k_attn is that node */
  uint32_t fused_rows; /* W_o rows per workgroup of the fused node */
  bool mv_wide;        /* the matvec_wide.glsl kernels */
  uint32_t mv_block, lanes;
  /* the wide mat-vecs: invocations per row and items (rows, or row pairs for
   * the Q/K/V product with RoPE) per workgroup, per product */
  uint32_t lanes_qkv, lanes_o, lanes_gu, lanes_down, lanes_head;
  uint32_t per_wg_qkv, per_wg_o, per_wg_gu, per_wg_down, per_wg_head;
  /* --prefetch (prefetch.glsl): the attention prefetches its layer's o_proj,
   * gate and up weights, o_proj the down weights, gate_up the next layer's
   * Q/K/V; bytes each (0: off) and the trailing workgroups that do it */
  uint64_t pf_attn, pf_o, pf_gu, pf_qkv; /* pf_qkv: with the fused node, its W_o */
  uint32_t pfg_attn, pfg_o, pfg_gu, pfg_qkv;
  tandem_buffer_t *sink;  /* prefetch.glsl's sink (never written in practice) */
  tandem_lane_t pos_lane; /* the per-token parameter copy's lane */
  bool pos_gpu;           /* no copy: the argmax kernel advances params.pos */
  uint64_t qdim, kvdim;
  /* weights: one GPU_LOCAL buffer */
  tandem_buffer_t *w;
  layer_at_t *at;
  uint64_t embed_at, head_at, norm_at, rope_at, w_bytes, matvec_bytes;
  /* activations and state */
  tandem_buffer_t *params, *pos_table, *history, *x, *qkv, *attn, *h, *logits, *kc, *vc;
  tandem_buffer_t *logits_host, *history_host;
  tandem_kernel_t *k_embed, *k_qkv, *k_attn, *k_o, *k_gateup, *k_down, *k_head, *k_argmax;
  tandem_exec_t *step, *chunk_step; /* one step; --chunk steps (or NULL) */
  /* --npu: the LM head's rows [head_rows, vocab) on the NPU lane: xn (the
   * normalised hidden state, SHARED) · head_t (those rows transposed, f32,
   * NPU_LOCAL) into npu_logits (SHARED), copied after the GPU's rows */
  uint32_t npu_rows, head_rows;
  tandem_buffer_t *xn, *head_t, *npu_logits;
  tandem_kernel_t *k_norm;
  tandem_npu_program_t *npu_head;
  uint32_t chunk;
  /* --engine persistent (decoder.glsl): the step as one dispatch of |groups|
   * workgroups of |dec_block| meeting at grid barriers; |act| holds its
   * activations, |acc| its down products (int64, zeroed once, and by the
   * kernel after every step), |sync| the barrier's counters and error word (zeroed once;
   * the kernel leaves them zeroed after every step), |sync_host| their copy */
  bool persistent, dec_smem;
  uint32_t groups, dec_block, dec_wcap, dec_shared, dec_counters;
  tandem_kernel_t *k_decoder;
  tandem_buffer_t *act, *acc, *sync, *sync_host;
  /* E_NODE: whether k_decoder leaves the LM head to k_head_best's node
   * (head_best.glsl), and that node's rows a workgroup; its Best words are
   * Sync's last slot (BEST_AT) */
  bool dec_head_node;
  tandem_kernel_t *k_head_best;
  uint32_t head_per_wg;
  /* --clocks: decoder.glsl's Clocks binding while run_clocks records a step
   * (NULL otherwise: the step has 9 bindings), and the step's variant */
  tandem_buffer_t *clocks;
  variant_t dec_step;
  uint64_t act_bytes, acc_bytes;
  uint32_t node_pos, node_logits, node_count; /* changed per token */
  uint32_t chunk_logits[64];                  /* the logits copies of chunk_step */
} gpu_t;

enum { SINK_STRIDE = 256 }; /* one slice of the sink per node: no hazard between nodes */
/* --bench times each layer matrix alone: one pass over the layers' own
 * weights, and a stream of passes over copies of them (run_bench), at most
 * ALONE_MAX dispatches; the sink has a slice for every one. ALONE_BYTES: the
 * copies' bytes at least on a GPU, ten times the 50 MB L2 of an H100 or
 * H200, so that no pass finds its weights in the cache. */
enum { ALONE_MAX = 1024 };
#define ALONE_BYTES (512ull << 20)

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

static tandem_view_t whole(tandem_buffer_t *b) { return tandem_buffer_whole(b); }

/* Prepares |graph| (released here), runs it once and waits for it. */
static void run_once(tandem_graph_t *graph) {
  tandem_exec_t *exec;
  CHECK(tandem_graph_prepare(graph, &exec));
  tandem_graph_release(graph);
  tandem_completion_t *done;
  CHECK(tandem_exec_submit(exec, &done));
  CHECK(tandem_completion_wait(done));
  tandem_completion_release(done);
  tandem_exec_release(exec);
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
static tandem_binding_contract_t updates(uint64_t bytes) {
  return (tandem_binding_contract_t){bytes, 16, TANDEM_ACCESS_READ_WRITE};
}

/* Loads one kernel; |spec| lists ids 1..; id 0 (the workgroup size, |block|)
 * is added. */
static tandem_kernel_t *kernel_wg(gpu_t *g, uint32_t block, const char *name, const uint32_t *words,
                                  size_t bytes, const tandem_binding_contract_t *bindings,
                                  uint32_t binding_count, const tandem_spec_constant_t *spec,
                                  uint32_t spec_count) {
  tandem_spec_constant_t all[TANDEM_MAX_SPEC_CONSTANTS];
  if (spec_count >= sizeof all / sizeof all[0]) die("kernel '%s': too many constants", name);
  all[0] = spec_u32(0, block);
  for (uint32_t i = 0; i < spec_count; i++) all[1 + i] = spec[i];
  tandem_kernel_desc_t desc = {.struct_size = sizeof(tandem_kernel_desc_t),
                               .name = name,
                               .spirv = words,
                               .spirv_size = bytes,
                               .bindings = bindings,
                               .binding_count = binding_count,
                               .spec_constants = all,
                               .spec_constant_count = 1 + spec_count};
  tandem_kernel_t *k = NULL;
  tandem_status_t s = tandem_kernel_create(g->rt, &desc, &k);
  if (s != TANDEM_OK) {
    fprintf(stderr, "llama: loading kernel '%s': %s: %s\n", name, tandem_status_name(s),
            tandem_error_message());
    exit(s == TANDEM_ERROR_NO_DEVICE ? 77 : 1);
  }
  return k;
}
static tandem_kernel_t *kernel(gpu_t *g, const char *name, const uint32_t *words, size_t bytes,
                               const tandem_binding_contract_t *bindings, uint32_t binding_count,
                               const tandem_spec_constant_t *spec, uint32_t spec_count) {
  return kernel_wg(g, g->block, name, words, bytes, bindings, binding_count, spec, spec_count);
}
#define SPV(stem) tandem_spv_##stem, tandem_spv_##stem##_size

/* Workgroups for |items| rows (row pairs) at |per_wg| a workgroup. */
static uint32_t matvec_groups(uint64_t items, uint32_t per_wg) {
  return (uint32_t)((items + per_wg - 1) / per_wg);
}

/* Invocations per row for a wide mat-vec over |cols| columns: --lanes; on a
 * GPU the whole subgroup (the H200, 2026-12-05: a dependent dispatch's time
 * grows with the loads each invocation issues — 32 per row beat 16, and 8 was
 * far slower — so the fewest loads per invocation win); on a CPU device the
 * fewest invocations (a power of two) that leave each at most 8 loads.
 * They must divide the kernel's workgroup, |block|. */
static uint32_t matvec_lanes(const gpu_t *g, uint32_t cols, uint32_t block) {
  const uint32_t sg = g->info.subgroup_size, n8 = cols / 8;
  uint32_t lanes = g->lanes;
  if (!lanes && !g->info.is_cpu) lanes = sg;
  if (!lanes)
    for (lanes = 1; lanes < sg && (n8 + lanes - 1) / lanes > 8;) lanes *= 2;
  if (lanes > sg || block % lanes)
    die("--lanes %u: must be at most the subgroup size %u and divide the workgroup %u", lanes, sg,
        block);
  return lanes;
}

/* A mat-vec kernel for |rows| x |cols| f16 weights; with the wide kernels
 * its invocations per row into |lanes| and the items (rows; row pairs for
 * the Q/K/V product with RoPE) per workgroup into |per_wg|, and with
 * |pf_bytes| > 0 the size of the weights its trailing workgroups prefetch
 * (prefetch.glsl; the dispatch decides whether there are any). */
static tandem_kernel_t *matvec_kernel(gpu_t *g, const char *name, int variant, uint32_t rows,
                                      uint32_t cols, uint64_t pf_bytes, uint32_t *lanes,
                                      uint32_t *per_wg) {
  const uint64_t wb = 2ull * rows * cols;
  if (!g->mv_wide) {
    const tandem_spec_constant_t spec[3] = {spec_u32(1, rows), spec_u32(2, cols),
                                            spec_f32(3, g->c->eps)};
    *lanes = g->info.subgroup_size, *per_wg = g->rows_per_wg;
    if (variant == K_QKV || variant == K_HEAD) {
      tandem_binding_contract_t b[4] = {reads(wb), reads(4ull * cols), reads(4ull * cols),
                                        writes(4ull * rows)};
      return kernel(g, name, SPV(llama_matvec_norm), b, 4, spec, 3);
    }
    if (variant == K_GATEUP) {
      tandem_binding_contract_t b[5] = {reads(wb), reads(wb), reads(4ull * cols),
                                        reads(4ull * cols), writes(4ull * rows)};
      return kernel(g, name, SPV(llama_matvec_swiglu), b, 5, spec, 3);
    }
    tandem_binding_contract_t b[3] = {reads(wb), reads(4ull * cols), updates(4ull * rows)};
    return kernel(g, name, SPV(llama_matvec_residual), b, 3, spec, 3);
  }
  const llama_config_t *c = g->c;
  *lanes = matvec_lanes(g, cols, g->mv_block);
  *per_wg = g->mv_block / *lanes;
  const bool rope = variant == K_QKV && g->attn_cached;
  const uint64_t items = rope ? rows / 2 : rows;
  /* ids 1-4 for every variant, 5-8 for the one with RoPE; then prefetch.glsl's */
  tandem_spec_constant_t spec[10] = {spec_u32(1, rows),        spec_u32(2, cols),
                                     spec_f32(3, c->eps),      spec_u32(4, *lanes),
                                     spec_u32(5, c->heads),    spec_u32(6, c->kv_heads),
                                     spec_u32(7, c->head_dim), spec_u32(8, g->max_seq)};
  uint32_t ns = rope ? 8 : 4;
  spec[ns++] = spec_u32(20, matvec_groups(items, *per_wg));
  spec[ns++] = spec_u32(21, (uint32_t)(pf_bytes / 16));
  tandem_binding_contract_t b[10];
  uint32_t nb = 0;
  const uint32_t *words;
  size_t size;
  b[nb++] = reads(wb);
  if (variant == K_GATEUP) b[nb++] = reads(wb);
  b[nb++] = reads(4ull * cols);
  if (variant == K_QKV || variant == K_HEAD || variant == K_GATEUP) b[nb++] = reads(4ull * cols);
  if (variant == K_O || variant == K_DOWN) b[nb++] = updates(4ull * rows);
  else b[nb++] = writes(4ull * rows);
  if (rope) {
    const uint64_t cache = 4ull * g->max_seq * g->kvdim;
    b[nb++] = reads(8);
    b[nb++] = reads(4ull * g->max_seq * c->head_dim);
    b[nb++] = writes(cache);
    b[nb++] = writes(cache);
    words = tandem_spv_llama_mvw_rope, size = tandem_spv_llama_mvw_rope_size;
  } else if (variant == K_QKV || variant == K_HEAD) {
    words = tandem_spv_llama_mvw_norm, size = tandem_spv_llama_mvw_norm_size;
  } else if (variant == K_GATEUP) {
    words = tandem_spv_llama_mvw_swiglu, size = tandem_spv_llama_mvw_swiglu_size;
  } else {
    words = tandem_spv_llama_mvw_residual, size = tandem_spv_llama_mvw_residual_size;
  }
  b[nb++] = reads(pf_bytes ? pf_bytes : 16); /* prefetch.glsl: the weights to prefetch */
  b[nb++] = updates(16);                     /* and its sink */
  return kernel_wg(g, g->mv_block, name, words, size, b, nb, spec, ns);
}

static void make_kernels(gpu_t *g) {
  const llama_config_t *c = g->c;
  const uint32_t D = c->dim, Q = (uint32_t)g->qdim, KV = (uint32_t)g->kvdim;
  {
    tandem_binding_contract_t b[4] = {reads(8), reads(4ull * (g->max_seq + 1)),
                                      reads(2ull * c->vocab * D), writes(4ull * D)};
    tandem_spec_constant_t s[3] = {spec_u32(1, D), spec_u32(2, c->vocab), spec_u32(3, g->max_seq)};
    g->k_embed = kernel(g, "embed", SPV(llama_embed), b, 4, s, 3);
  }
  g->k_qkv =
      matvec_kernel(g, "qkv", K_QKV, Q + 2 * KV, D, g->pf_qkv, &g->lanes_qkv, &g->per_wg_qkv);
  if (g->attn_fused) {
    const uint64_t cache = 4ull * g->max_seq * KV;
    tandem_binding_contract_t b[8] = {reads(8),
                                      reads(4ull * (Q + 2 * KV)),
                                      reads(cache),
                                      reads(cache),
                                      reads(2ull * D * Q),
                                      updates(4ull * D),
                                      reads(g->pf_attn ? g->pf_attn : 16),
                                      updates(16)};
    const uint32_t dv = c->head_dim / 4, sg = g->info.subgroup_size;
    const uint32_t rpc = 2; /* W_o rows per subgroup */
    g->fused_rows = g->attn_block / sg * rpc;
    tandem_spec_constant_t s[11] = {spec_u32(1, c->heads),
                                    spec_u32(2, c->kv_heads),
                                    spec_u32(3, c->head_dim),
                                    spec_u32(4, g->max_seq),
                                    spec_f32(5, 1.0f / sqrtf((float)c->head_dim)),
                                    spec_u32(6, dv < sg ? dv : sg),
                                    spec_u32(7, D),
                                    spec_u32(8, sg),
                                    spec_u32(9, rpc),
                                    spec_u32(20, matvec_groups(D, g->fused_rows)),
                                    spec_u32(21, (uint32_t)(g->pf_attn / 16))};
    g->k_attn = kernel_wg(g, g->attn_block, "attention+o_proj", SPV(llama_attn_o), b, 8, s, 11);
  } else if (g->attn_cached) {
    const uint64_t cache = 4ull * g->max_seq * KV;
    tandem_binding_contract_t b[7] = {reads(8),         reads(4ull * (Q + 2 * KV)),
                                      reads(cache),     reads(cache),
                                      writes(4ull * Q), reads(g->pf_attn ? g->pf_attn : 16),
                                      updates(16)};
    const uint32_t dv = c->head_dim / 4, sg = g->info.subgroup_size;
    tandem_spec_constant_t s[8] = {spec_u32(1, c->heads),
                                   spec_u32(2, c->kv_heads),
                                   spec_u32(3, c->head_dim),
                                   spec_u32(4, g->max_seq),
                                   spec_f32(5, 1.0f / sqrtf((float)c->head_dim)),
                                   spec_u32(6, dv < sg ? dv : sg),
                                   spec_u32(20, c->heads),
                                   spec_u32(21, (uint32_t)(g->pf_attn / 16))};
    g->k_attn = kernel_wg(g, g->attn_block, "attention", SPV(llama_attention_cached), b, 7, s, 8);
  } else {
    const uint64_t cache = 4ull * g->max_seq * KV;
    tandem_binding_contract_t b[6] = {reads(8),
                                      reads(4ull * (Q + 2 * KV)),
                                      reads(4ull * g->max_seq * c->head_dim),
                                      updates(cache),
                                      updates(cache),
                                      writes(4ull * Q)};
    tandem_spec_constant_t s[5] = {spec_u32(1, c->heads), spec_u32(2, c->kv_heads),
                                   spec_u32(3, c->head_dim), spec_u32(4, g->max_seq),
                                   spec_f32(5, 1.0f / sqrtf((float)c->head_dim))};
    if (g->attention_plain)
      g->k_attn = kernel_wg(g, g->attn_block, "attention", SPV(llama_attention), b, 6, s, 5);
    else
      g->k_attn = kernel_wg(g, g->attn_block, "attention", SPV(llama_attention_spread), b, 6, s, 5);
  }
  g->k_o = matvec_kernel(g, "o_proj", K_O, D, Q, g->pf_o, &g->lanes_o, &g->per_wg_o);
  g->k_gateup =
      matvec_kernel(g, "gate_up", K_GATEUP, c->ffn, D, g->pf_gu, &g->lanes_gu, &g->per_wg_gu);
  g->k_down = matvec_kernel(g, "down_proj", K_DOWN, D, c->ffn, 0, &g->lanes_down, &g->per_wg_down);
  g->k_head =
      matvec_kernel(g, "lm_head", K_HEAD, g->head_rows, D, 0, &g->lanes_head, &g->per_wg_head);
  if (matvec_groups(g->head_rows, g->per_wg_head) > g->info.max_workgroups[0])
    die("the LM head's %u rows need more workgroups than the device's %u", g->head_rows,
        g->info.max_workgroups[0]);
  if (g->mv_wide)
    printf("matvec:  invocations per row (rows per workgroup): qkv %u (%u%s), o_proj %u (%u), "
           "gate_up %u (%u), down %u (%u), lm_head %u (%u)\n",
           g->lanes_qkv, g->per_wg_qkv, g->attn_cached ? " pairs" : "", g->lanes_o, g->per_wg_o,
           g->lanes_gu, g->per_wg_gu, g->lanes_down, g->per_wg_down, g->lanes_head, g->per_wg_head);
  if (g->npu_rows) {
    tandem_binding_contract_t b[3] = {reads(4ull * D), reads(4ull * D), writes(4ull * D)};
    tandem_spec_constant_t s[2] = {spec_u32(1, D), spec_f32(2, c->eps)};
    g->k_norm = kernel(g, "final_norm", SPV(llama_rmsnorm), b, 3, s, 2);
    const char *xclbin = getenv("TANDEM_EMU_XCLBIN");
#ifdef TANDEM_LLAMA_EMU_XCLBIN
    if (!xclbin || !*xclbin) xclbin = TANDEM_LLAMA_EMU_XCLBIN;
#endif
    if (!xclbin || !*xclbin) die("--npu: set TANDEM_EMU_XCLBIN to the emulated NPU's xclbin");
    tandem_binding_contract_t nb[3] = {{4ull * D, 4, TANDEM_ACCESS_READ},
                                       {4ull * D * g->npu_rows, 4, TANDEM_ACCESS_READ},
                                       {4ull * g->npu_rows, 4, TANDEM_ACCESS_WRITE}};
    tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                   .name = "lm_head (npu)",
                                   .program_path = xclbin,
                                   .kernel_name = "matmul_f32",
                                   .bindings = nb,
                                   .binding_count = 3,
                                   .scalar_count = 3};
    CHECK(tandem_npu_program_create(g->rt, &d, &g->npu_head));
  }
  {
    tandem_binding_contract_t b[3] = {updates(8), reads(4ull * c->vocab),
                                      updates(4ull * (g->max_seq + 1))};
    tandem_spec_constant_t s[3] = {spec_u32(1, c->vocab), spec_u32(2, g->max_seq),
                                   spec_u32(3, g->pos_gpu ? 1 : 0)};
    g->k_argmax = kernel_wg(g, g->argmax_block, "argmax", SPV(llama_argmax), b, 3, s, 3);
  }
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* decoder.glsl's FILL_INFLIGHT and HEAD_ROWS for the step: weight loads an
 * invocation issues before storing the first into shared memory, LM-head
 * rows a lane cluster streams at once (--profile times the alternatives). */
#define DEC_FILL_INFLIGHT 8
#define DEC_HEAD_ROWS 8
/* decoder.glsl's AHEAD bits: 1 the gains, RoPE's table and stage D's
 * residual loaded ahead of the stages that use them; 2 the gathers (stage
 * C's sum, the attention's q and first value rows) in one wave; 4 the weight
 * slice of two stages on touched into L2; 8 the fill's first wave in flight
 * while the barrier is polled; 32 stage C's weights loaded before stage B,
 * into registers; 64 stage B's keys and values of past positions loaded
 * before the A -> B barrier's poll; 128 and 256 stage E's LM-head loads a
 * wave ahead. 0: each load where it is used. Bit 4 is on: with every
 * hand-over counted and stage E in waves, the step took 3.2 and 6.6 us
 * less with it on an H100 (timing runs, 2 rounds alternated,
 * bench/results/2026-12-07-h100-stream), where with the down product split
 * and grid barriers it had cost 11.4 us (bench/results/2026-12-06-h100-down-split).
 * Bit 64 cost 4.9 and 4.8 us in the same runs (though the profile said
 * -10.7); bits 8 and 32 are off: on an H100 the step took 12.3 us less
 * without 8 and 24.1 us more with 32 (bench/results/2026-12-06-h100-ahead32),
 * and in timing runs 13.7 us less without 8 (bench/results/2026-12-06-h100-flags). */
#define DEC_AHEAD 7

/* LANE_LOG's invocations a weight row by stage (A, B, C, D, E): 8 each took 95 us
 * off 32 each on an H100 (bench/results/2026-12-06-h100-persistent-ahead);
 * from 8 each, on the H200, B at 4 took 22.5 us off, C at 4 4.1 and D at 16
 * 5.8 (bench/results/2026-12-06-h200-persistent-lanes); from 8 4 4 16 8, B
 * at 2 took 3.4 us off on an H100 (bench/results/2026-12-06-h100-down-split),
 * and from 8 2 4 16 8, B at 1 another 6.7 us (bench/results/2026-12-06-h100-ahead32) */
#define DEC_LANES 8, 1, 4, 16, 8

/* BARRIER_SPREAD: the grid barrier's arrival counters (at most 32 and the
 * subgroup size; SYNC_BYTES holds 32). More than 1 made the step slower on
 * GPU timestamps (16: +21.4 us on an H100, bench/results/
 * 2026-12-06-h100-down-split): the poll's loads cost more than one line's
 * atomics. */
#define DEC_SPREAD 1
/* HEAD_FLAGS: stage B's units wait only for the stage-A workgroups that
 * wrote their KV group (Sync slots 32 + g), not for all of them: one grid
 * barrier a layer fewer (--head-flags; --profile times both). Off: on an
 * H100 the step took 10.3 us more with the flags (timing runs, 4 rounds
 * alternated, bench/results/2026-12-06-h100-flags), though the barriers
 * alone took the same; why is not known. */
#define DEC_FLAGS 0
/* DOWN_COUNTS: every add into the down product's sums carries a count, and
 * the next stage A polls them, no grid barrier after stage C
 * (--down-counts). On: on an H100 the step took 34 us less (timing runs, 3
 * rounds alternated, bench/results/2026-12-06-h100-counts). PART_COUNTS
 * (with it): stage B's o_proj products summed and counted alike, polled by
 * stage C, no grid barrier between B and C (--part-counts). (Stage B's
 * parts stored with a tag each and polled element by element, 5 184 words
 * a workgroup, took 120 us more: the same results.) QKV_COUNTS (with
 * DOWN_COUNTS): stage A's q, k, v each stored with a count and polled by
 * stage B, no grid barrier between A and B (--qkv-counts). Both on: on an
 * H100, 2 290 tokens/s against 2 114 with neither (-36 us a token; qkv
 * alone -21, part alone -6; timing runs, 2 rounds alternated,
 * bench/results/2026-12-07-h100-all-counts). With all three, no grid
 * barrier is left inside a layer. */
#define DEC_COUNTS 1
#define DEC_PART_COUNTS 1
#define DEC_QKV_COUNTS 1
/* E_BARRIER (with DOWN_COUNTS): stage E starts after a grid barrier, not
 * after polling the last layer's down sums, so that no workgroup streams the
 * LM head's 57 MB from HBM while others still run their last stage C
 * (--e-barrier). Off until timed. */
#define DEC_E_BARRIER 0
/* E_NODE: no stage E in the step; workgroup 0 stores x after the last
 * layer, and the LM head, the argmax and the position's advance are one node
 * after it (head_best.glsl: a wide mat-vec whose workgroups fold their best
 * logit into one 64-bit atomic maximum, the last of them writing the token)
 * (--head-node). On the H200 stage E cost the step 76.9 us on GPU timestamps,
 * the LM head as a node 29.6 (bench/results/2026-12-07-h200-e-barrier). Off
 * until timed. */
#define DEC_E_NODE 0
/* head_best.glsl's workgroup on a GPU (--head-block): rows a workgroup are
 * this over the invocations a row */
#define HEAD_BLOCK 256
/* Sync: counters and error word, the arrival counters (slots 1..31) and the
 * KV groups' flags (slots 32..63), a slot 256 bytes */
#define SYNC_SLOTS 64u
#define SYNC_BYTES (256u * SYNC_SLOTS)
/* head_best.glsl's Best words (a 64-bit key, a counter 128 bytes on): one
 * more slot after the decoder's, 0 between steps as they are */
#define BEST_AT SYNC_BYTES
#define BEST_BYTES 256u

/* The variants --profile times (run_profile); the first is the step. DVX:
 * name, SKIP, LM-head rows, AHEAD, ATT_SUBGROUP, stage D, barrier counters,
 * HEAD_FLAGS, QKV_COUNTS, PART_COUNTS, DOWN_COUNTS, E_BARRIER, then the
 * invocations a weight row of stages A..E; DVQ: E_BARRIER as DEC_E_BARRIER
 * where the down sums are counted; DV: the three counts as DEC_* too. */
#define DVX(name, skip, hr, ahead, att, stage_d, spread, flags, qcounts, pcounts, counts, ebar,    \
            ...)                                                                                   \
  {                                                                                                \
    name, skip, DEC_FILL_INFLIGHT, hr, ahead, {__VA_ARGS__}, att, stage_d, spread, flags, pcounts, \
        qcounts, counts, 0, ebar, 0                                                                \
  }
#define DVQ(name, skip, hr, ahead, att, stage_d, spread, flags, qcounts, pcounts, counts, ...) \
  DVX(name, skip, hr, ahead, att, stage_d, spread, flags, qcounts, pcounts, counts,            \
      (counts) ? DEC_E_BARRIER : 0, __VA_ARGS__)
#define DV(name, skip, hr, ahead, att, stage_d, spread, flags, ...)                        \
  DVQ(name, skip, hr, ahead, att, stage_d, spread, flags, DEC_QKV_COUNTS, DEC_PART_COUNTS, \
      DEC_COUNTS, __VA_ARGS__)
#define HR DEC_HEAD_ROWS
#define AH DEC_AHEAD
#define SP DEC_SPREAD
#define FL DEC_FLAGS
/* the step with its LM head as DEC_E_NODE says, or the other way */
#define DVN(name, e_node)                                                           \
  {                                                                                 \
    name, 0, DEC_FILL_INFLIGHT, HR, AH, {DEC_LANES}, 1, 0, SP, FL, DEC_PART_COUNTS, \
        DEC_QKV_COUNTS, DEC_COUNTS, 0, DEC_COUNTS ? DEC_E_BARRIER : 0, e_node       \
  }
static const variant_t profile_variants[] = {
    DVN("the step", DEC_E_NODE),
#if DEC_E_NODE
    DVN("the LM head as stage E (--head-node off)", 0),
#else
    DVN("the LM head as a node (--head-node on)", 1),
#endif
    /* a grid barrier back in place of each counted hand-over; HEAD_FLAGS
     * and stage D only without any counts */
    DVQ("stage A -> B by a grid barrier", 0, HR, AH, 1, 0, SP, FL, 0, 1, 1, DEC_LANES),
    DVQ("stage B -> C by a grid barrier", 0, HR, AH, 1, 0, SP, FL, 1, 0, 1, DEC_LANES),
    DVQ("only the down sums counted", 0, HR, AH, 1, 0, SP, FL, 0, 0, 1, DEC_LANES),
    DVQ("stage A -> B by KV groups' flags", 0, HR, AH, 1, 0, SP, 1, 0, 0, 0, DEC_LANES),
    DVQ("grid barriers, no counted sums", 0, HR, AH, 1, 0, SP, FL, 0, 0, 0, DEC_LANES),
    DVQ("the down product as stage D", 0, HR, AH, 1, 1, SP, FL, 0, 0, 0, DEC_LANES),
    DV("without the down product", 8, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("gains, RoPE, residual where used", 0, HR, AH & ~1u, 1, 0, SP, FL, DEC_LANES),
    DV("gathers load by load", 0, HR, AH & ~2u, 1, 0, SP, FL, DEC_LANES),
    DV("slices not touched into L2 ahead (-4)", 0, HR, AH & ~4u, 1, 0, SP, FL, DEC_LANES),
    DV("the fill's first wave in flight while polled (+8)", 0, HR, AH | 8u, 1, 0, SP, FL,
       DEC_LANES),
    DV("stage C's weights a stage early (+32)", 0, HR, AH | 32u, 1, 0, SP, FL, DEC_LANES),
    DV("past keys and values before the poll (+64)", 0, HR, AH | 64u, 1, 0, SP, FL, DEC_LANES),
    DV("softmax over the workgroup", 0, HR, AH, 0, 0, SP, FL, DEC_LANES),
    DVQ("fca38a1's step (grid barriers)", 0, HR, 3, 1, 0, 1, 0, 0, 0, 0, 8, 1, 4, 16, 8),
    DVQ("424015a's step (AHEAD 11, B 2 lanes)", 0, HR, 11, 1, 0, 1, 0, 0, 0, 0, 8, 2, 4, 16, 8),
    DVQ("6980f70's step (stage D, lanes 8, ...)", 0, 4, 15, 0, 1, 1, 0, 0, 0, 0, 8, 8, 8, 8, 8),
    DVQ("bedfa4e's step (only the down sums counted)", 0, HR, AH, 1, 0, SP, FL, 0, 0, 1, DEC_LANES),
    DVX("stage E behind a grid barrier", 0, HR, AH, 1, 0, SP, FL, DEC_QKV_COUNTS, DEC_PART_COUNTS,
        DEC_COUNTS, 1, DEC_LANES),
    DVX("stage E polls the down sums", 0, HR, AH, 1, 0, SP, FL, DEC_QKV_COUNTS, DEC_PART_COUNTS,
        DEC_COUNTS, 0, DEC_LANES),
    /* invocations a weight row (DEC_LANES, D's only stage D's): one stage changed */
    DV("lanes A..E  8  2  4  -  8", 0, HR, AH, 1, 0, SP, FL, 8, 2, 4, 16, 8),
    DV("lanes A..E  4  1  4  -  8", 0, HR, AH, 1, 0, SP, FL, 4, 1, 4, 16, 8),
    DV("lanes A..E 16  1  4  -  8", 0, HR, AH, 1, 0, SP, FL, 16, 1, 4, 16, 8),
    DV("lanes A..E  8  1  2  -  8", 0, HR, AH, 1, 0, SP, FL, 8, 1, 2, 16, 8),
    DV("lanes A..E  8  1  8  -  8", 0, HR, AH, 1, 0, SP, FL, 8, 1, 8, 16, 8),
    DV("lanes A..E  8  1  4  - 16", 0, HR, AH, 1, 0, SP, FL, 8, 1, 4, 16, 16),
    DV("with 4 LM-head rows a cluster", 0, 4, AH, 1, 0, SP, FL, DEC_LANES),
    DV("with 1 LM-head row a cluster", 0, 1, AH, 1, 0, SP, FL, DEC_LANES),
    DV("stage E's next wave before its products (+128)", 0, HR, AH | 128u, 1, 0, SP, FL, DEC_LANES),
    DV("... and its first before the poll (+384)", 0, HR, AH | 384u, 1, 0, SP, FL, DEC_LANES),
    DV("... +128 with 4 LM-head rows a cluster", 0, 4, AH | 128u, 1, 0, SP, FL, DEC_LANES),
    DV("with 16 LM-head rows a cluster", 0, 16, AH, 1, 0, SP, FL, DEC_LANES),
    DV("... +384 with 16 LM-head rows a cluster", 0, 16, AH | 384u, 1, 0, SP, FL, DEC_LANES),
    DV("... +384, E's rows over 4 lanes", 0, HR, AH | 384u, 1, 0, SP, FL, 8, 1, 4, 16, 4),
    DV("... +384, 16 rows, E's over 16 lanes", 0, 16, AH | 384u, 1, 0, SP, FL, 8, 1, 4, 16, 16),
    DV("barrier counters 16", 0, HR, AH, 1, 0, 16, FL, DEC_LANES),
    DV("without stage A (norm, Q/K/V, RoPE)", 1, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("without stage B (attention, o_proj)", 2, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("without stage C (norm, gate/up, down)", 4, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("without stage E (LM head, argmax)", 16, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("stage E left out at run time, its code kept", 128, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("stage E's rows from one 4 KB block (L2 hits)", 256, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("fills from one 4 KB block (L2 hits)", 64, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("without the weight fills", 32, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("without stages A-D", 15, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("without stages A-E", 31, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DV("barriers only", 63, HR, AH, 1, 0, SP, FL, DEC_LANES),
    DVQ("barriers only, all grid barriers", 63, HR, AH, 1, 0, SP, FL, 0, 0, 0, DEC_LANES),
    DVQ("barriers only, A -> B by flags", 63, HR, AH, 1, 0, SP, 1, 0, 0, 0, DEC_LANES),
    DV("barriers only, 16 counters", 63, HR, AH, 1, 0, 16, FL, DEC_LANES),
    DVQ("barriers only, stage D's too", 63, HR, AH, 1, 1, SP, FL, 0, 0, 0, DEC_LANES),
};
#undef DV
#undef DVQ
#undef DVX
#undef DVN
#undef HR
#undef AH
#undef SP
#undef FL
static const variant_t *const dec_default = &profile_variants[0];

/* Whether the device has what head_best.glsl needs: the token's 64-bit
 * atomic maximum and subgroup shuffles. The default step does not, so a
 * device without them runs it and only --head-node on is refused. */
static bool head_best_supported(const gpu_t *g) {
  const uint32_t need =
      TANDEM_SHADER_INT64 | TANDEM_SHADER_INT64_ATOMICS | TANDEM_SHADER_SUBGROUP_SHUFFLE;
  return (g->info.shader_features & need) == need;
}

/* E_NODE's LM-head node (head_best.glsl) with workgroups of |block|, its
 * rows a workgroup into |per_wg|. */
static tandem_kernel_t *make_head_best(gpu_t *g, uint32_t block, uint32_t *per_wg) {
  const llama_config_t *c = g->c;
  const uint32_t sg = g->info.subgroup_size;
  if (!head_best_supported(g))
    die("--head-node on: the device lacks shaderInt64, shaderBufferInt64Atomics or subgroup "
        "shuffles (the token's 64-bit atomic maximum); use --head-node off");
  if (block % sg || block > g->info.max_local_invocations)
    die("--head-block %u: a multiple of the subgroup size %u, at most %u", block, sg,
        g->info.max_local_invocations);
  if (c->dim % 8) die("--head-node on: hidden size %u is not a multiple of 8", c->dim);
  /* the invocations a row as the wide mat-vecs take them */
  const uint32_t lanes = matvec_lanes(g, c->dim, block);
  *per_wg = block / lanes;
  /* one dispatch: the last workgroup is the one that counts to all of them */
  if (matvec_groups(c->vocab, *per_wg) > g->info.max_workgroups[0])
    die("--head-node on: %u workgroups for %u LM-head rows at %u a workgroup, more than the "
        "device's %u; use a larger --head-block",
        matvec_groups(c->vocab, *per_wg), c->vocab, *per_wg, g->info.max_workgroups[0]);
  const tandem_spec_constant_t s[6] = {spec_u32(1, c->vocab),   spec_u32(2, c->dim),
                                       spec_f32(3, c->eps),     spec_u32(4, lanes),
                                       spec_u32(5, g->max_seq), spec_u32(6, g->pos_gpu ? 1 : 0)};
  const tandem_binding_contract_t b[7] = {reads(2ull * c->vocab * c->dim),
                                          reads(4ull * c->dim),
                                          reads(4ull * c->dim),
                                          writes(4ull * c->vocab),
                                          updates(8),
                                          updates(4ull * (g->max_seq + 1)),
                                          updates(BEST_BYTES)};
  return kernel_wg(g, block, "lm_head+argmax", SPV(llama_head_best), b, 7, s, 6);
}

/* decoder.glsl's clock events a workgroup (NEV: 6 a layer, 3 for stage E
 * and the end) and the Clocks binding's size, 16 bytes an event */
static uint32_t clock_events(const gpu_t *g) { return 6 * g->c->layers + 3; }
static uint64_t clock_bytes(const gpu_t *g) { return 16ull * g->groups * clock_events(g); }

/* The persistent step (decoder.glsl): checks what the kernel assumes of the
 * model and the device, sizes each workgroup's slice of every stage, decides
 * whether the slices fit in shared memory, and loads the kernel. */
static tandem_kernel_t *make_decoder(gpu_t *g, const variant_t *v) {
  const llama_config_t *c = g->c;
  const uint64_t D = c->dim, F = c->ffn, Q = g->qdim, KV = g->kvdim, HD = c->head_dim;
  const uint32_t sg = g->info.subgroup_size, G = g->groups, B = g->dec_block;
  if (!(g->info.shader_features & TANDEM_SHADER_SUBGROUP_SHUFFLE))
    die("--engine persistent: the device lacks subgroup shuffles; use --engine nodes");
  if (D % 8 || F % 8 || Q % 8 || HD % 16 || c->heads % c->kv_heads)
    die("--engine persistent: hidden %llu, intermediate %llu and heads x head_dim %llu must be "
        "multiples of 8, head_dim %llu of 16, and heads %u a multiple of KV heads %u",
        (unsigned long long)D, (unsigned long long)F, (unsigned long long)Q, (unsigned long long)HD,
        c->heads, c->kv_heads);
  if (B % sg || B % (HD / 4) || B < 16 || B > g->info.max_local_invocations)
    die("--engine persistent: workgroup %u must be a multiple of the subgroup size %u and of "
        "head_dim / 4 = %llu, at least 16 and at most %u",
        B, sg, (unsigned long long)(HD / 4), g->info.max_local_invocations);
  if (G > g->info.max_workgroups[0])
    die("--groups %u: more than the device's %u workgroups", G, g->info.max_workgroups[0]);
  /* DOWN_SPLIT: every workgroup adds its part of the down product into an
   * int64 fixed-point sum (decoder.glsl's acc), each part within +-2^20 at
   * 2^32 a unit: fewer than 2048 such parts cannot overflow */
  const uint32_t need = TANDEM_SHADER_INT64 | TANDEM_SHADER_INT64_ATOMICS;
  if ((g->info.shader_features & need) != need)
    die("--engine persistent: the device lacks shaderInt64 or shaderBufferInt64Atomics (the "
        "down product's sum over workgroups); use --engine nodes");
  if (v->spread < 1 || v->spread > 32 || v->spread > sg)
    die("--engine persistent: %u barrier counters: 1 to 32, and at most the subgroup size %u",
        v->spread, sg);
  /* HEAD_FLAGS: a flag a KV group, in Sync slots 32..63 */
  if (v->flags && c->kv_heads > SYNC_SLOTS - 32)
    die("--head-flags on: %u KV heads, but Sync holds flags for %u; use --head-flags off",
        c->kv_heads, SYNC_SLOTS - 32);
  /* PART_COUNTS: the o_proj sums beside the down product's, counted alike:
   * HEADS adds an entry, counted in the same 8 bits */
  if (v->pcounts && c->heads > 255)
    die("--part-counts on: %u heads, more adds than an entry counts (255); use --part-counts off",
        c->heads);
  /* HEAD_FLAGS runs with no counted sum: without the grid barrier between
   * stages A and B, nothing keeps stage B's parts of one layer from the
   * next's (decoder.glsl's DOWN_COUNTS). Named first, so that the answer to
   * a refusal is not refused in turn. */
  if (v->flags && (v->counts || v->pcounts || v->qcounts))
    die("--head-flags on runs without counted sums: add%s%s%s",
        v->counts ? " --down-counts off" : "", v->qcounts ? " --qkv-counts off" : "",
        v->pcounts ? " --part-counts off" : "");
  if ((v->pcounts || v->qcounts) && !v->counts)
    die("--%s-counts on needs --down-counts on (the residual in each workgroup)",
        v->pcounts ? "part" : "qkv");
  if (v->e_barrier && !v->counts)
    die("--e-barrier on needs --down-counts on (without it a grid barrier precedes stage E)");
  /* QKV_COUNTS: one invocation polls each of q, k and v's HEAD_DIM entries */
  if (v->qcounts && 3 * HD > B)
    die("--qkv-counts on: 3 x head_dim = %llu entries to poll, more than the workgroup's %u; use "
        "--qkv-counts off",
        (unsigned long long)(3 * HD), B);
  /* DOWN_COUNTS: counts in bits 55..62 of each sum, 2^26 a unit; an
   * invocation's poll tracks its elements in a 32-bit mask */
  if (v->counts && (v->stage_d || G > 255 || D > 32ull * B))
    die("--down-counts on: needs the down product split (not stage D), at most 255 --groups "
        "(not %u) and a hidden size of at most 32 x the workgroup (%llu, workgroup %u); use "
        "--down-counts off",
        G, (unsigned long long)D, B);
  /* --clocks: both of VK_KHR_shader_clock's clocks, the down product split */
  const uint32_t clk = TANDEM_SHADER_DEVICE_CLOCK | TANDEM_SHADER_SUBGROUP_CLOCK;
  if (v->clocks && (g->info.shader_features & clk) != clk)
    die("--clocks: the device lacks VK_KHR_shader_clock's shaderDeviceClock or "
        "shaderSubgroupClock; run without --clocks");
  if (v->clocks && v->stage_d)
    die("--clocks stamps the step with the down product split, not with stage D");
  if (!v->stage_d && G >= 2048)
    die("--groups %u: the down product's fixed-point sum takes at most 2047 workgroups", G);
  /* LANES: at most the subgroup and 32; LANE_LOG: stage s's count in bits
   * 4s..4s+3 as log2 + 1 (decoder.glsl caps each at LANES) */
  const uint32_t lanes = sg < 32 ? sg : 32;
  uint32_t lane_log = 0;
  for (uint32_t s = 0; s < 5; s++) {
    const uint32_t n = v->lanes[s];
    if (!n) continue;
    if (n & (n - 1) || n > 32)
      die("--engine persistent: %u invocations a weight row: a power of two up to 32", n);
    uint32_t lg = 0;
    while ((1u << lg) < n) lg++;
    lane_log |= (lg + 1) << (4 * s);
  }
  /* Debian 12's lavapipe (Mesa 22.3.6) miscompiles the barrier's polls once
   * workgroups wait on each other: a poll returned false without taking its
   * only branch that does so, and the steps gave wrong logits
   * (bench/NOTES.md, 2026-12-05). One workgroup waits only on itself. */
  if (g->info.is_cpu && G > 1)
    die("--groups %u: on a CPU device (lavapipe) the persistent step runs as 1 workgroup; "
        "several gave wrong steps there (Mesa 22.3's loops), so they are refused",
        G);
  /* the slices, as decoder.glsl computes them */
  const uint64_t pairs = (Q + 2 * KV) / 2, per_a = ceil_div(pairs, G);
  const uint64_t osplit = G >= c->heads ? G / c->heads : 1, per_b = ceil_div(D, osplit);
  const uint64_t per_c = ceil_div(F, G), per_d = ceil_div(D, G);
  uint64_t wcap = 2 * per_a * (D / 8);
  if (per_b * (HD / 8) > wcap) wcap = per_b * (HD / 8);
  if (2 * per_c * (D / 8) > wcap) wcap = 2 * per_c * (D / 8);
  if (v->stage_d && per_d * (F / 8) > wcap) wcap = per_d * (F / 8);
  uint64_t res = 2 * per_a > 2 * per_c ? 2 * per_a : 2 * per_c;
  if (per_b > res) res = per_b;
  if (per_d > res) res = per_d;
  const uint64_t vec = F > D ? F : D;
  /* ws, vs, xr, res, ps, red4, gs4, rope_s, s_fail, s_best_i, common.glsl's red_f */
  const uint64_t fixed = 4 * vec + 4 * D + 4 * (res + 1) + 4ull * g->max_seq + 16ull * B + 4 * D +
                         8 * per_a + 4 + 2 * 4 * (B / 4 + 1);
  if (fixed + 16 > g->info.max_shared_memory_bytes)
    die("--engine persistent: %llu bytes of shared memory a workgroup; the device has %u",
        (unsigned long long)(fixed + 16), g->info.max_shared_memory_bytes);
  g->dec_smem = G >= c->heads && fixed + 16 * wcap <= g->info.max_shared_memory_bytes;
  g->dec_wcap = g->dec_smem ? (uint32_t)wcap : 1;
  g->dec_shared = (uint32_t)(fixed + 16ull * g->dec_wcap);
  /* weight offsets in 16-byte units: the layers must be laid out at one stride */
  const layer_at_t *a0 = &g->at[0];
  const uint64_t stride = c->layers > 1 ? g->at[1].qkv - a0->qkv : 0;
  for (uint32_t l = 0; l < c->layers; l++) {
    const layer_at_t *a = &g->at[l];
    const uint64_t d = l * stride;
    if (a->qkv != a0->qkv + d || a->o != a0->o + d || a->gate != a0->gate + d ||
        a->up != a0->up + d || a->down != a0->down + d || a->attn_norm != a0->attn_norm + d ||
        a->mlp_norm != a0->mlp_norm + d || a->down_t != a0->down_t + d)
      die("--engine persistent: layer %u's weights are not at layer 0's offsets + %u x %llu", l, l,
          (unsigned long long)stride);
  }
  if (g->w_bytes / 16 > UINT32_MAX || stride % 16 || g->embed_at % 16 || g->head_at % 16 ||
      g->norm_at % 16 || g->rope_at % 16)
    die("--engine persistent: the weight buffer's offsets must be 16-byte units below 2^32");
#define U16(x) ((uint32_t)((x) / 16))
  const tandem_spec_constant_t s[] = {
      spec_u32(1, G),
      spec_u32(2, lanes),
      spec_u32(3, c->layers),
      spec_u32(4, (uint32_t)D),
      spec_u32(5, c->heads),
      spec_u32(6, c->kv_heads),
      spec_u32(7, (uint32_t)HD),
      spec_u32(8, (uint32_t)F),
      spec_u32(9, c->vocab),
      spec_u32(10, g->max_seq),
      spec_f32(11, c->eps),
      spec_f32(12, 1.0f / sqrtf((float)HD)),
      /* with E_NODE the LM-head node moves the position on */
      spec_u32(13, g->pos_gpu && !v->e_node ? 1 : 0),
      spec_u32(14, g->dec_smem ? 1 : 0),
      spec_u32(15, g->dec_wcap),
      /* polls before a barrier gives up: seconds on either kind of device */
      spec_u32(16, g->info.is_cpu ? 1u << 30 : 1u << 24),
      spec_u32(17, v->skip),
      spec_u32(18, v->fill_inflight),
      spec_u32(19, v->head_rows),
      spec_u32(20, U16(stride)),
      spec_u32(21, U16(a0->qkv)),
      spec_u32(22, U16(a0->o)),
      spec_u32(23, U16(a0->gate)),
      spec_u32(24, U16(a0->up)),
      spec_u32(25, U16(a0->down)),
      spec_u32(26, U16(a0->attn_norm)),
      spec_u32(27, U16(a0->mlp_norm)),
      spec_u32(28, U16(g->embed_at)),
      spec_u32(29, U16(g->head_at)),
      spec_u32(30, U16(g->norm_at)),
      spec_u32(31, U16(g->rope_at)),
      spec_u32(32, v->ahead),
      spec_u32(33, lane_log),
      spec_u32(34, v->att_subgroup),
      spec_u32(35, v->stage_d ? 0 : 1),
      spec_u32(36, U16(a0->down_t)),
      spec_u32(37, v->spread),
      spec_u32(38, v->flags ? 1 : 0),
      spec_u32(39, v->pcounts ? 1 : 0),
      spec_u32(40, v->counts ? 1 : 0),
      spec_u32(41, v->qcounts ? 1 : 0),
      spec_u32(42, v->e_barrier ? 1 : 0),
      spec_u32(43, v->e_node ? 1 : 0),
  };
#undef U16
  const uint64_t cache = 4ull * c->layers * g->max_seq * KV;
  const tandem_binding_contract_t b[10] = {updates(8),
                                           updates(4ull * (g->max_seq + 1)),
                                           reads(g->w_bytes),
                                           updates(g->act_bytes),
                                           updates(cache),
                                           updates(cache),
                                           writes(4ull * c->vocab),
                                           updates(SYNC_BYTES),
                                           updates(g->acc_bytes),
                                           writes(clock_bytes(g))};
  if (v->clocks)
    return kernel_wg(g, B, "decoder", SPV(llama_decoder_clocks), b, 10, s, sizeof s / sizeof s[0]);
  return kernel_wg(g, B, "decoder", SPV(llama_decoder), b, 9, s, sizeof s / sizeof s[0]);
}

/* Lays the weights out in one buffer: per layer Q|K|V (one matrix), O,
 * gate, up, down (and for the persistent step down transposed: decoder.glsl
 * reads a column of W_down as a row), the two gains; then the embedding, the head (untied), the
 * final gain and the RoPE table. */
static void layout_weights(gpu_t *g) {
  const llama_config_t *c = g->c;
  const uint64_t D = c->dim, F = c->ffn;
  uint64_t at = 0, mv = 0;
  g->at = calloc(c->layers, sizeof *g->at);
  if (!g->at) die("out of memory");
#define PLACE(dst, bytes) (dst = at, at = align_up(at + (bytes), 256))
  for (uint32_t l = 0; l < c->layers; l++) {
    layer_at_t *a = &g->at[l];
    PLACE(a->qkv, 2 * (g->qdim + 2 * g->kvdim) * D);
    PLACE(a->o, 2 * D * g->qdim);
    PLACE(a->gate, 2 * F * D);
    PLACE(a->up, 2 * F * D);
    PLACE(a->down, 2 * D * F);
    if (g->persistent) PLACE(a->down_t, 2 * F * D);
    PLACE(a->attn_norm, 4 * D);
    PLACE(a->mlp_norm, 4 * D);
    mv += 2 * ((g->qdim + 2 * g->kvdim) * D + D * g->qdim + 3 * F * D);
  }
  PLACE(g->embed_at, 2 * c->vocab * D);
  if (c->tied) g->head_at = g->embed_at;
  else PLACE(g->head_at, 2 * c->vocab * D);
  PLACE(g->norm_at, 4 * D);
  PLACE(g->rope_at, 4ull * g->max_seq * c->head_dim);
#undef PLACE
  g->w_bytes = at;
  g->matvec_bytes = mv + 2ull * c->vocab * D;
}

/* The weight buffer's bytes, produced piece by piece: |emit| writes
 * [offset, offset + n) of the packed image into |dst|. */
typedef struct piece {
  uint64_t at;             /* offset in the weight buffer */
  const llama_tensor_t *t; /* NULL: raw f32 from |raw| */
  bool gain;               /* f32 gains rather than f16 weights */
  const float *raw;
  uint64_t count;
  uint64_t cols; /* > 0: the tensor's (count / cols) x cols matrix, transposed */
} piece_t;

static void fill_piece(const piece_t *p, uint64_t from, uint64_t to, uint8_t *dst) {
  /* [from, to) are byte offsets inside the piece */
  const uint64_t esize = p->t && !p->gain ? 2 : 4;
  for (uint64_t b = from; b < to; b += esize) {
    const uint64_t i = b / esize;
    if (!p->t) {
      memcpy(dst + (b - from), p->raw + i, 4);
    } else if (p->gain) {
      const float f = llama_gain_f32(p->t, i);
      memcpy(dst + (b - from), &f, 4);
    } else {
      const uint64_t rows = p->cols ? p->count / p->cols : 0; /* element i of the transpose */
      const uint16_t h = llama_weight_f16(p->t, p->cols ? (i % rows) * p->cols + i / rows : i);
      memcpy(dst + (b - from), &h, 2);
    }
  }
}

/* Converts and uploads every weight: 64 MiB at a time through a
 * HOST_VISIBLE staging buffer and a copy node on the upload lane. */
static void upload_weights(gpu_t *g, const llama_model_t *m, float *rope) {
  const llama_config_t *c = g->c;
  const uint32_t n = c->layers * 10 + 4;
  piece_t *pieces = calloc(n, sizeof *pieces);
  if (!pieces) die("out of memory");
  uint32_t k = 0;
  const uint64_t D = c->dim;
  for (uint32_t l = 0; l < c->layers; l++) {
    const llama_layer_t *L = &m->layer[l];
    const layer_at_t *a = &g->at[l];
    pieces[k++] = (piece_t){a->qkv, &L->q, false, NULL, g->qdim * D, 0};
    pieces[k++] = (piece_t){a->qkv + 2 * g->qdim * D, &L->k, false, NULL, g->kvdim * D, 0};
    pieces[k++] =
        (piece_t){a->qkv + 2 * (g->qdim + g->kvdim) * D, &L->v, false, NULL, g->kvdim * D, 0};
    pieces[k++] = (piece_t){a->o, &L->o, false, NULL, D * g->qdim, 0};
    pieces[k++] = (piece_t){a->gate, &L->gate, false, NULL, (uint64_t)c->ffn * D, 0};
    pieces[k++] = (piece_t){a->up, &L->up, false, NULL, (uint64_t)c->ffn * D, 0};
    pieces[k++] = (piece_t){a->down, &L->down, false, NULL, (uint64_t)c->ffn * D, 0};
    if (g->persistent)
      pieces[k++] = (piece_t){a->down_t, &L->down, false, NULL, (uint64_t)c->ffn * D, c->ffn};
    pieces[k++] = (piece_t){a->attn_norm, &L->attn_norm, true, NULL, D, 0};
    pieces[k++] = (piece_t){a->mlp_norm, &L->mlp_norm, true, NULL, D, 0};
  }
  pieces[k++] = (piece_t){g->embed_at, &m->embed, false, NULL, (uint64_t)c->vocab * D, 0};
  if (!c->tied)
    pieces[k++] = (piece_t){g->head_at, &m->head, false, NULL, (uint64_t)c->vocab * D, 0};
  pieces[k++] = (piece_t){g->norm_at, &m->norm, true, NULL, D, 0};
  pieces[k++] = (piece_t){g->rope_at, NULL, false, rope, (uint64_t)g->max_seq * c->head_dim, 0};

  const uint64_t chunk = g->w_bytes < (64ull << 20) ? g->w_bytes : (64ull << 20);
  tandem_buffer_t *staging = buffer(g, chunk, TANDEM_PLACEMENT_HOST_VISIBLE);
  for (uint64_t start = 0; start < g->w_bytes; start += chunk) {
    const uint64_t len = g->w_bytes - start < chunk ? g->w_bytes - start : chunk;
    tandem_map_t map;
    CHECK(tandem_map_write(view(staging, 0, len), &map));
    memset(map.data, 0, len);
    for (uint32_t i = 0; i < k; i++) {
      const piece_t *p = &pieces[i];
      const uint64_t bytes = p->count * (p->t && !p->gain ? 2 : 4);
      const uint64_t lo = p->at > start ? p->at : start;
      const uint64_t hi = p->at + bytes < start + len ? p->at + bytes : start + len;
      if (lo < hi) fill_piece(p, lo - p->at, hi - p->at, (uint8_t *)map.data + (lo - start));
    }
    tandem_unmap(&map);
    tandem_graph_t *graph;
    CHECK(tandem_graph_create(g->rt, &graph));
    CHECK(tandem_graph_add_copy(graph, view(staging, 0, len), view(g->w, start, len),
                                TANDEM_LANE_UPLOAD));
    run_once(graph);
  }
  tandem_buffer_release(staging);
  free(pieces);
}

/* decoder.glsl's Act: x, xb, q, the heads' o_proj parts, h, a candidate
 * per workgroup, then xe (E_NODE: x for the LM-head node), at this offset
 * (16-byte aligned, as a view must be) */
static uint64_t act_xe(const gpu_t *g) {
  const llama_config_t *c = g->c;
  return align_up(
      4ull * (2 * c->dim + g->qdim + (uint64_t)c->heads * c->dim + c->ffn + 2ull * g->groups), 16);
}

static void make_buffers(gpu_t *g, bool logits_host) {
  const llama_config_t *c = g->c;
  const tandem_placement_t local = TANDEM_PLACEMENT_GPU_LOCAL;
  g->w = buffer(g, g->w_bytes, local);
  g->params = buffer(g, 16, local);
  g->pos_table = buffer(g, 16ull * g->max_seq, TANDEM_PLACEMENT_HOST_VISIBLE);
  g->history = buffer(g, 4ull * (g->max_seq + 1), local);
  g->history_host = buffer(g, 4ull * (g->max_seq + 1), TANDEM_PLACEMENT_HOST_VISIBLE);
  g->x = buffer(g, 4ull * c->dim, local);
  g->qkv = buffer(g, 4ull * (g->qdim + 2 * g->kvdim), local);
  g->attn = buffer(g, 4ull * g->qdim, local);
  g->h = buffer(g, 4ull * c->ffn, local);
  g->logits = buffer(g, 4ull * c->vocab, local);
  g->kc = buffer(g, 4ull * c->layers * g->max_seq * g->kvdim, local);
  g->vc = buffer(g, 4ull * c->layers * g->max_seq * g->kvdim, local);
  g->sink =
      buffer(g, (5ull * (ALONE_MAX > c->layers ? ALONE_MAX : c->layers) + 1) * SINK_STRIDE, local);
  if (logits_host)
    g->logits_host = buffer(g, 4ull * c->vocab * g->max_seq, TANDEM_PLACEMENT_HOST_VISIBLE);
  if (g->persistent) {
    g->act_bytes = act_xe(g) + 4ull * c->dim;
    g->act = buffer(g, g->act_bytes, local);
    /* the down product's sums, PART_COUNTS's o_proj sums, QKV_COUNTS's
     * staging of q, k, v: 0 between steps */
    g->acc_bytes = 2 * 8ull * c->layers * c->dim + 8ull * c->layers * (g->qdim + 2 * g->kvdim);
    g->acc = buffer(g, g->acc_bytes, local);
    g->sync = buffer(g, SYNC_BYTES + BEST_BYTES, local);
    g->sync_host = buffer(g, SYNC_BYTES + BEST_BYTES, TANDEM_PLACEMENT_HOST_VISIBLE);
    tandem_graph_t *graph;
    CHECK(tandem_graph_create(g->rt, &graph));
    CHECK(tandem_graph_add_fill(graph, whole(g->sync), 0, TANDEM_LANE_AUTO));
    CHECK(tandem_graph_add_fill(graph, whole(g->acc), 0, TANDEM_LANE_AUTO));
    run_once(graph);
  }
  if (g->npu_rows) {
    g->xn = buffer(g, 4ull * c->dim, TANDEM_PLACEMENT_SHARED);
    g->head_t = buffer(g, 4ull * c->dim * g->npu_rows, TANDEM_PLACEMENT_NPU_LOCAL);
    g->npu_logits = buffer(g, 4ull * g->npu_rows, TANDEM_PLACEMENT_SHARED);
  }
}

static void dispatch(tandem_graph_t *graph, tandem_kernel_t *k, const tandem_view_t *views,
                     uint32_t view_count, uint32_t wx) {
  tandem_dispatch_desc_t d;
  tandem_dispatch_desc_init(&d);
  d.kernel = k;
  d.views = views;
  d.view_count = view_count;
  d.workgroups[0] = wx, d.workgroups[1] = 1, d.workgroups[2] = 1;
  tandem_status_t s = tandem_graph_add_dispatch_node(graph, &d, NULL);
  if (s != TANDEM_OK)
    die("adding a dispatch of '%s': %s: %s", tandem_kernel_name(k), tandem_status_name(s),
        tandem_error_message());
}

static tandem_view_t wv(gpu_t *g, uint64_t at, uint64_t bytes) { return view(g->w, at, bytes); }

/* A dispatch of a wide kernel (matvec_wide.glsl, attention_cached.glsl):
 * |views| (room for two more) gets the weights to prefetch, |pf| (any view
 * of the kernel's prefetch size when |pf_groups| is 0), and the sink's slice
 * |slot|; |pf_groups| workgroups beyond |groups| prefetch. The old kernels
 * have neither binding: then the views are used as they are. */
static void dispatch_pf(gpu_t *g, tandem_graph_t *graph, tandem_kernel_t *k, tandem_view_t *views,
                        uint32_t view_count, uint32_t groups, tandem_view_t pf, uint32_t pf_groups,
                        uint32_t slot) {
  if (!g->mv_wide) {
    dispatch(graph, k, views, view_count, groups);
    return;
  }
  views[view_count++] = pf;
  views[view_count++] = view(g->sink, (uint64_t)slot * SINK_STRIDE, 16);
  dispatch(graph, k, views, view_count, groups + pf_groups);
}

/* E_NODE: the LM head and the token after the persistent step's layers,
 * |k| (head_best.glsl) at |per_wg| rows a workgroup; x is decoder.glsl's
 * Act.xe. */
static void record_head_best(gpu_t *g, tandem_graph_t *graph, tandem_kernel_t *k, uint32_t per_wg) {
  const llama_config_t *c = g->c;
  const uint64_t D = c->dim;
  tandem_view_t v[7] = {wv(g, g->head_at, 2ull * c->vocab * D),
                        view(g->act, act_xe(g), 4 * D),
                        wv(g, g->norm_at, 4 * D),
                        whole(g->logits),
                        view(g->params, 0, 8),
                        whole(g->history),
                        view(g->sync, BEST_AT, BEST_BYTES)};
  dispatch(graph, k, v, 7, matvec_groups(c->vocab, per_wg));
}

/* Records the nodes of one step whose kinds are in |kinds| into |graph|; the
 * logits copy's node number (K_LOGITS) into |logit_node|. */
static void record_step(gpu_t *g, tandem_graph_t *graph, uint32_t kinds, uint32_t *logit_node) {
  const llama_config_t *c = g->c;
  const uint64_t D = c->dim, F = c->ffn, Q = g->qdim, KV = g->kvdim;
  if ((kinds & K_POS) && !g->pos_gpu) {
    g->node_pos = tandem_graph_node_count(graph);
    CHECK(tandem_graph_add_copy(graph, view(g->pos_table, 0, 16), whole(g->params), g->pos_lane));
  }
  const tandem_view_t params = view(g->params, 0, 8);
  if (g->persistent && (kinds & K_STEP) == K_STEP) {
    const uint64_t cache = 4ull * c->layers * g->max_seq * KV;
    tandem_view_t v[9] = {params,
                          whole(g->history),
                          whole(g->w),
                          whole(g->act),
                          view(g->kc, 0, cache),
                          view(g->vc, 0, cache),
                          whole(g->logits),
                          view(g->sync, 0, SYNC_BYTES),
                          whole(g->acc)};
    if (g->clocks) {
      tandem_view_t vc[10];
      memcpy(vc, v, sizeof v);
      vc[9] = whole(g->clocks);
      dispatch(graph, g->k_decoder, vc, 10, g->groups);
    } else {
      dispatch(graph, g->k_decoder, v, 9, g->groups);
    }
    /* main makes the node's kernel when the step or --profile uses it */
    assert(!g->dec_head_node || g->k_head_best);
    if (g->dec_head_node) record_head_best(g, graph, g->k_head_best, g->head_per_wg);
    if (kinds & K_LOGITS) {
      *logit_node = tandem_graph_node_count(graph);
      CHECK(tandem_graph_add_copy(graph, whole(g->logits), view(g->logits_host, 0, 4ull * c->vocab),
                                  TANDEM_LANE_AUTO));
    }
    return;
  }
  if (kinds & K_EMBED) {
    tandem_view_t v[4] = {params, whole(g->history), wv(g, g->embed_at, 2 * c->vocab * D),
                          whole(g->x)};
    dispatch(graph, g->k_embed, v, 4, (uint32_t)((D + g->block - 1) / g->block));
  }
  const uint64_t cache = 4ull * g->max_seq * KV;
  for (uint32_t l = 0; l < c->layers; l++) {
    const layer_at_t *a = &g->at[l];
    if (kinds & K_QKV) {
      tandem_view_t v[10] = {wv(g, a->qkv, 2 * (Q + 2 * KV) * D),
                             whole(g->x),
                             wv(g, a->attn_norm, 4 * D),
                             whole(g->qkv),
                             params,
                             wv(g, g->rope_at, 4ull * g->max_seq * c->head_dim),
                             view(g->kc, l * cache, cache),
                             view(g->vc, l * cache, cache)};
      const uint64_t items = g->attn_cached ? (Q + 2 * KV) / 2 : Q + 2 * KV;
      /* prefetch (with the fused attention node): this layer's W_o */
      dispatch_pf(g, graph, g->k_qkv, v, g->attn_cached ? 8 : 4,
                  matvec_groups(items, g->per_wg_qkv), wv(g, a->o, g->pf_qkv ? g->pf_qkv : 16),
                  g->pfg_qkv, 5 * l);
    }
    if ((kinds & K_ATTN) && g->attn_fused) {
      tandem_view_t v[8] = {params,
                            whole(g->qkv),
                            view(g->kc, l * cache, cache),
                            view(g->vc, l * cache, cache),
                            wv(g, a->o, 2 * D * Q),
                            whole(g->x)};
      /* prefetch: this layer's gate, up and down weights (laid out in a row) */
      dispatch_pf(g, graph, g->k_attn, v, 6, matvec_groups(D, g->fused_rows),
                  wv(g, a->gate, g->pf_attn ? g->pf_attn : 16), g->pfg_attn, 5 * l + 1);
    } else if ((kinds & K_ATTN) && g->attn_cached) {
      tandem_view_t v[7] = {params, whole(g->qkv), view(g->kc, l * cache, cache),
                            view(g->vc, l * cache, cache), whole(g->attn)};
      /* prefetch: this layer's o_proj, gate and up weights (laid out in a row) */
      dispatch_pf(g, graph, g->k_attn, v, 5, c->heads,
                  g->pf_attn ? wv(g, a->o, g->pf_attn) : wv(g, a->o, 16), g->pfg_attn, 5 * l + 1);
    } else if (kinds & K_ATTN) {
      tandem_view_t v[6] = {params,
                            whole(g->qkv),
                            wv(g, g->rope_at, 4ull * g->max_seq * c->head_dim),
                            view(g->kc, l * cache, cache),
                            view(g->vc, l * cache, cache),
                            whole(g->attn)};
      dispatch(graph, g->k_attn, v, 6, c->heads);
    }
    if ((kinds & K_O) && !g->attn_fused) {
      tandem_view_t v[5] = {wv(g, a->o, 2 * D * Q), whole(g->attn), whole(g->x)};
      /* prefetch: this layer's down weights */
      dispatch_pf(g, graph, g->k_o, v, 3, matvec_groups(D, g->per_wg_o),
                  g->pf_o ? wv(g, a->down, g->pf_o) : wv(g, a->down, 16), g->pfg_o, 5 * l + 2);
    }
    if (kinds & K_GATEUP) {
      tandem_view_t v[7] = {wv(g, a->gate, 2 * F * D), wv(g, a->up, 2 * F * D), whole(g->x),
                            wv(g, a->mlp_norm, 4 * D), whole(g->h)};
      /* prefetch: the next layer's Q/K/V weights (none after the last layer) */
      const bool next = l + 1 < c->layers && g->pf_gu;
      dispatch_pf(g, graph, g->k_gateup, v, 5, matvec_groups(F, g->per_wg_gu),
                  wv(g, next ? g->at[l + 1].qkv : a->qkv, g->pf_gu ? g->pf_gu : 16),
                  next ? g->pfg_gu : 0, 5 * l + 3);
    }
    if (kinds & K_DOWN) {
      tandem_view_t v[5] = {wv(g, a->down, 2 * D * F), whole(g->h), whole(g->x)};
      dispatch_pf(g, graph, g->k_down, v, 3, matvec_groups(D, g->per_wg_down), wv(g, a->down, 16),
                  0, 5 * l + 4);
    }
  }
  if ((kinds & K_HEAD) && g->npu_rows) {
    /* the NPU's rows first, so that the GPU's rows run while it works: both
     * read only what the norm wrote, and only the copy waits for the NPU */
    tandem_view_t vn[3] = {whole(g->x), wv(g, g->norm_at, 4 * D), whole(g->xn)};
    dispatch(graph, g->k_norm, vn, 3, 1);
    tandem_view_t v_npu[3] = {whole(g->xn), whole(g->head_t), whole(g->npu_logits)};
    const uint32_t mnk[3] = {1, g->npu_rows, (uint32_t)D};
    CHECK(tandem_graph_add_npu_run(graph, g->npu_head, v_npu, 3, mnk, 3));
  }
  if (kinds & K_HEAD) {
    const uint64_t rows = g->head_rows;
    tandem_view_t v[6] = {wv(g, g->head_at, 2ull * rows * D), whole(g->x), wv(g, g->norm_at, 4 * D),
                          view(g->logits, 0, 4 * rows)};
    dispatch_pf(g, graph, g->k_head, v, 4, matvec_groups(rows, g->per_wg_head),
                wv(g, g->head_at, 16), 0, 5 * c->layers);
  }
  if ((kinds & K_HEAD) && g->npu_rows)
    CHECK(tandem_graph_add_copy(graph, whole(g->npu_logits),
                                view(g->logits, 4ull * g->head_rows, 4ull * g->npu_rows),
                                TANDEM_LANE_COMPUTE));
  if (kinds & K_ARGMAX) {
    tandem_view_t v[3] = {params, whole(g->logits), whole(g->history)};
    dispatch(graph, g->k_argmax, v, 3, 1);
  }
  if (kinds & K_LOGITS) {
    *logit_node = tandem_graph_node_count(graph);
    CHECK(tandem_graph_add_copy(graph, whole(g->logits), view(g->logits_host, 0, 4ull * c->vocab),
                                TANDEM_LANE_AUTO));
  }
}

/* Records |count| steps of the kinds in |kinds| (K_STEP for the real step)
 * into one graph, the logits copies' node numbers into |logit_nodes|; returns
 * the prepared executable. */
static tandem_exec_t *make_steps(gpu_t *g, uint32_t kinds, uint32_t count, uint32_t *logit_nodes) {
  tandem_graph_t *graph;
  CHECK(tandem_graph_create(g->rt, &graph));
  for (uint32_t i = 0; i < count; i++)
    record_step(g, graph, kinds, logit_nodes ? &logit_nodes[i] : NULL);
  if (count == 1 && (kinds == (K_STEP | K_LOGITS) || kinds == K_STEP))
    g->node_count = tandem_graph_node_count(graph);
  tandem_exec_t *exec;
  CHECK(tandem_graph_prepare(graph, &exec));
  tandem_graph_release(graph);
  return exec;
}

static tandem_exec_t *make_step(gpu_t *g, uint32_t kinds) {
  uint32_t unused;
  return make_steps(g, kinds, 1, (kinds & K_LOGITS) ? &g->node_logits : &unused);
}

/* Runs a one-node graph once: a copy from |src| to |dst|. */
static void copy_once(gpu_t *g, tandem_view_t src, tandem_view_t dst) {
  tandem_graph_t *graph;
  CHECK(tandem_graph_create(g->rt, &graph));
  CHECK(tandem_graph_add_copy(graph, src, dst, TANDEM_LANE_AUTO));
  run_once(graph);
}

/*---------------------------------------------------------------------------
 * Generation and timing
 *---------------------------------------------------------------------------*/

typedef struct lane_time {
  uint64_t regions, busy_ns;
} lane_time_t;

typedef struct totals {
  lane_time_t lanes[TANDEM_LANE_COUNT];
  uint64_t span_ns, steps_timed;
  uint64_t npu_overlap_ns; /* NPU-lane time that compute-lane regions overlapped */
} totals_t;

typedef struct run {
  double prefill_s, decode_s;
  uint32_t *tokens; /* [max_seq + 1]: the history after the run */
} run_t;

/* Adds one submission's GPU times (|steps| steps: more with --chunk). */
static void account(tandem_completion_t *c, uint32_t steps, totals_t *t) {
  enum { MAX_REGIONS = 256 }; /* a chunk of 64 steps has 64 logits copies */
  tandem_region_profile_t regions[MAX_REGIONS];
  tandem_completion_profile_t p;
  tandem_completion_profile_init(&p);
  CHECK(tandem_completion_profile(c, &p, regions, MAX_REGIONS));
  if (!p.gpu_times_valid) return;
  t->span_ns += p.execution_ns;
  t->steps_timed += steps;
  const uint32_t n = p.region_count < MAX_REGIONS ? p.region_count : MAX_REGIONS;
  for (uint32_t r = 0; r < n; r++) {
    if ((unsigned)regions[r].lane >= TANDEM_LANE_COUNT) continue;
    lane_time_t *lt = &t->lanes[regions[r].lane];
    lt->regions++;
    if (regions[r].gpu_end_ns > regions[r].gpu_start_ns)
      lt->busy_ns += regions[r].gpu_end_ns - regions[r].gpu_start_ns;
    if (regions[r].lane != TANDEM_LANE_NPU) continue;
    /* against the compute lane's regions (one queue: they follow one another) */
    for (uint32_t q = 0; q < n; q++) {
      if (regions[q].lane != TANDEM_LANE_COMPUTE) continue;
      const uint64_t lo = regions[r].gpu_start_ns > regions[q].gpu_start_ns
                              ? regions[r].gpu_start_ns
                              : regions[q].gpu_start_ns;
      const uint64_t hi = regions[r].gpu_end_ns < regions[q].gpu_end_ns ? regions[r].gpu_end_ns
                                                                        : regions[q].gpu_end_ns;
      if (hi > lo) t->npu_overlap_ns += hi - lo;
    }
  }
}

static void finish(tandem_completion_t *c, uint32_t pos, uint32_t steps, totals_t *t) {
  tandem_status_t s = tandem_completion_wait(c);
  if (s != TANDEM_OK) die("step %u: %s: %s", pos, tandem_status_name(s), tandem_error_message());
  account(c, steps, t);
  tandem_completion_release(c);
}

/* Submits steps [from, to) with up to |inflight| submissions in flight (a
 * submission is one step, or --chunk steps while that many are left) and
 * waits for all. */
static void run_steps(gpu_t *g, uint32_t from, uint32_t to, uint32_t inflight, totals_t *t) {
  tandem_completion_t *ring[8] = {0};
  uint32_t ring_pos[8] = {0}, ring_n[8] = {0}, s = 0;
  const uint64_t row = 4ull * g->c->vocab;
  for (uint32_t pos = from; pos < to; s++) {
    const uint32_t k = s % inflight;
    if (s >= inflight) finish(ring[k], ring_pos[k], ring_n[k], t);
    const bool chunk = g->chunk_step && to - pos >= g->chunk;
    tandem_exec_t *exec = chunk ? g->chunk_step : g->step;
    const uint32_t n = chunk ? g->chunk : 1;
    if (!g->pos_gpu)
      CHECK(tandem_exec_set_view(exec, g->node_pos, 0, view(g->pos_table, 16ull * pos, 16)));
    for (uint32_t i = 0; g->logits_host && i < n; i++)
      CHECK(tandem_exec_set_view(exec, chunk ? g->chunk_logits[i] : g->node_logits, 1,
                                 view(g->logits_host, row * (pos + i), row)));
    CHECK(tandem_exec_submit(exec, &ring[k]));
    ring_pos[k] = pos, ring_n[k] = n;
    pos += n;
  }
  const uint32_t first = s > inflight ? s - inflight : 0;
  for (uint32_t i = first; i < s; i++)
    finish(ring[i % inflight], ring_pos[i % inflight], ring_n[i % inflight], t);
}

/* After a generation with the persistent step: its barrier's error word
 * (decoder.glsl sets it when a barrier waits past its poll limit: the
 * workgroups were not all resident at once) and its counters, which every
 * step that ended normally left at 0. */
static void check_sync(gpu_t *g) {
  copy_once(g, whole(g->sync), whole(g->sync_host));
  tandem_map_t map;
  CHECK(tandem_map_read(whole(g->sync_host), &map));
  uint32_t w[4], spread = 0; /* spread: the other arrival counters and the flags, or'ed */
  memcpy(w, map.data, sizeof w);
  for (uint32_t i = 1; i < SYNC_SLOTS; i++) {
    uint32_t v;
    memcpy(&v, (const uint8_t *)map.data + 256u * i, sizeof v);
    spread |= v;
  }
  uint64_t best_key; /* head_best.glsl's words */
  uint32_t best_count;
  memcpy(&best_key, (const uint8_t *)map.data + BEST_AT, sizeof best_key);
  memcpy(&best_count, (const uint8_t *)map.data + BEST_AT + 128, sizeof best_count);
  tandem_unmap(&map);
  if (w[2] & 4)
    die("--engine persistent: a part of a sum over workgroups (the down product's, or "
        "o_proj's with --part-counts) was outside +-2^20 or not a number "
        "(error word %u), beyond its fixed-point sum's range, so the tokens are not valid; "
        "run with --engine nodes",
        w[2]);
  if (w[2])
    die("--engine persistent: a grid barrier gave up waiting (error word %u): the %u workgroups "
        "were not all resident on the GPU at once, so the tokens are not valid; run with fewer "
        "--groups, or --engine nodes",
        w[2], g->groups);
  if (w[0] || w[1] || spread)
    die("--engine persistent: the barrier's counters are %u, %u and %u after the run, not 0 "
        "(error word %u): a step did not finish its protocol",
        w[0], w[1], spread, w[2]);
  if (best_key || best_count)
    die("--head-node on: the LM-head node's key and counter are %#llx and %u after the run, not "
        "0: a step's last workgroup did not take the token, so the tokens are not valid",
        (unsigned long long)best_key, best_count);
}

/* One generation: the prompt into the history, prefill (one step per prompt
 * token), decode; the history read back. */
static void generate(gpu_t *g, const options_t *o, run_t *run, totals_t *t) {
  const uint32_t steps = g->max_seq, n_hist = g->max_seq + 1;
  tandem_map_t map;
  CHECK(tandem_map_write(whole(g->history_host), &map));
  uint32_t *h = map.data;
  memset(h, 0, 4ull * n_hist);
  memcpy(h, o->prompt, 4ull * o->prompt_len);
  tandem_unmap(&map);
  copy_once(g, whole(g->history_host), whole(g->history));
  /* position 0 and the prompt length; with --pos-lane gpu the steps advance
   * the position themselves from here */
  copy_once(g, view(g->pos_table, 0, 16), whole(g->params));

  uint64_t t0 = now_ns();
  run_steps(g, 0, o->prompt_len, o->inflight, t);
  uint64_t t1 = now_ns();
  run_steps(g, o->prompt_len, steps, o->inflight, t);
  uint64_t t2 = now_ns();
  run->prefill_s = (double)(t1 - t0) * 1e-9;
  run->decode_s = (double)(t2 - t1) * 1e-9;

  copy_once(g, whole(g->history), whole(g->history_host));
  CHECK(tandem_map_read(whole(g->history_host), &map));
  memcpy(run->tokens, map.data, 4ull * n_hist);
  tandem_unmap(&map);
  if (g->persistent) check_sync(g);
}

/* GPU time of one submission of |exec| (the best of |reps|), in ns. */
static double gpu_time(tandem_exec_t *exec, uint32_t reps) {
  double best = 0.0;
  for (uint32_t r = 0; r < reps; r++) {
    tandem_completion_t *c;
    CHECK(tandem_exec_submit(exec, &c));
    CHECK(tandem_completion_wait(c));
    tandem_completion_profile_t p;
    tandem_completion_profile_init(&p);
    CHECK(tandem_completion_profile(c, &p, NULL, 0));
    tandem_completion_release(c);
    if (!p.gpu_times_valid) return 0.0;
    if (!best || (double)p.execution_ns < best) best = (double)p.execution_ns;
  }
  return best;
}

typedef struct bench {
  double copy_gbs, matvec_gbs, head_gbs, step_us;
  double kind_us[10]; /* per node kind, per step */
  /* each layer matrix alone: the layers' dispatches of one product with no
   * dependency between them (distinct outputs), GPU time per dispatch (the
   * best of 10 submissions: a product whose layers fit in the L2 cache may
   * find them there); and the same in a stream of stream_n dispatches over
   * copies of the weights (stream_mb MB of them: on a GPU more than an L2
   * holds), each read from the memory */
  double alone_us[4], alone_gbs[4], stream_us[4], stream_gbs[4], stream_mb[4];
  uint32_t stream_n[4];
  /* --engine persistent: the LM-head node (head_best.glsl) alone, by its
   * workgroup size (HEAD_BLOCKS; 0: not run, too large for the device) */
  double head_node_us[4];
} bench_t;

static const uint32_t head_blocks[4] = {128, 256, 512, 1024};

static const char *const matrix_names[4] = {"qkv", "o_proj", "gate_up", "down"};

/* The per-layer dispatches of one mat-vec product (|m|: 0 qkv, 1 o_proj,
 * 2 gate_up, 3 down), |n| of them, with nothing between them that depends
 * on another: each writes its own slice of |scratch| (the Q/K/V product with
 * RoPE also its own rows of the scratch caches |kc|, |vc|) and of the sink,
 * so the GPU may overlap them and the time over the bytes is the kernel's
 * own bandwidth, not the dependency's cost. Dispatch i is layer i % layers;
 * with |wc| NULL it reads that layer's weights, else copy i in |wc| (at i x
 * |wstride|; gate_up's up matrix |wstride| / 2 after its gate). Returns the
 * weight bytes one dispatch reads. */
static uint64_t record_alone(gpu_t *g, tandem_graph_t *graph, int m, uint32_t n,
                             tandem_buffer_t *wc, uint64_t wstride, tandem_buffer_t *scratch,
                             uint64_t slice, tandem_buffer_t *kc, tandem_buffer_t *vc) {
  const llama_config_t *c = g->c;
  const uint64_t D = c->dim, F = c->ffn, Q = g->qdim, KV = g->kvdim;
  const uint64_t cache = 4ull * g->max_seq * KV;
  const tandem_view_t params = view(g->params, 0, 8);
  const uint64_t rows = Q + 2 * KV;
  const uint64_t bytes = m == 0   ? 2 * rows * D
                         : m == 1 ? 2 * D * Q
                         : m == 2 ? 4 * F * D
                                  : 2 * D * F;
  assert(n <= ALONE_MAX);
  assert(!wc || wstride >= (m == 2 ? 2 * align_up(bytes / 2, 256) : bytes));
  for (uint32_t i = 0; i < n; i++) {
    const layer_at_t *a = &g->at[i % c->layers];
    const uint64_t own = m == 0 ? a->qkv : m == 1 ? a->o : m == 2 ? a->gate : a->down;
    /* the weights: the layer's, or copy i (gate_up: gate, then up) */
    const tandem_view_t w0 = wc ? view(wc, i * wstride, m == 2 ? bytes / 2 : bytes)
                                : wv(g, own, m == 2 ? bytes / 2 : bytes);
    if (m == 0) {
      tandem_view_t v[10] = {w0,
                             whole(g->x),
                             wv(g, a->attn_norm, 4 * D),
                             view(scratch, i * slice, 4 * rows),
                             params,
                             wv(g, g->rope_at, 4ull * g->max_seq * c->head_dim),
                             view(kc, i * cache, cache),
                             view(vc, i * cache, cache)};
      dispatch_pf(g, graph, g->k_qkv, v, g->attn_cached ? 8 : 4,
                  matvec_groups(g->attn_cached ? rows / 2 : rows, g->per_wg_qkv),
                  wv(g, a->o, g->pf_qkv ? g->pf_qkv : 16), 0, 5 * i);
    } else if (m == 1) {
      tandem_view_t v[5] = {w0, whole(g->attn), view(scratch, i * slice, 4 * D)};
      dispatch_pf(g, graph, g->k_o, v, 3, matvec_groups(D, g->per_wg_o),
                  wv(g, a->down, g->pf_o ? g->pf_o : 16), 0, 5 * i + 2);
    } else if (m == 2) {
      const tandem_view_t up =
          wc ? view(wc, i * wstride + wstride / 2, bytes / 2) : wv(g, a->up, bytes / 2);
      tandem_view_t v[7] = {w0, up, whole(g->x), wv(g, a->mlp_norm, 4 * D),
                            view(scratch, i * slice, 4 * F)};
      dispatch_pf(g, graph, g->k_gateup, v, 5, matvec_groups(F, g->per_wg_gu),
                  wv(g, a->qkv, g->pf_gu ? g->pf_gu : 16), 0, 5 * i + 3);
    } else {
      tandem_view_t v[5] = {w0, whole(g->h), view(scratch, i * slice, 4 * D)};
      dispatch_pf(g, graph, g->k_down, v, 3, matvec_groups(D, g->per_wg_down), wv(g, a->down, 16),
                  0, 5 * i + 4);
    }
  }
  return bytes;
}

static const char *const kind_names[10] = {"pos copy", "embed", "qkv",     "attention", "o_proj",
                                           "gate_up",  "down",  "lm_head", "argmax",    "logits"};

/* --bench: a device copy, the step's mat-vec products alone, and each kind
 * of node alone, timed on the GPU. */
static void run_bench(gpu_t *g, bench_t *b) {
  const uint64_t copy_bytes = g->info.is_cpu ? (16ull << 20) : (1ull << 30);
  tandem_buffer_t *a = buffer(g, copy_bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *z = buffer(g, copy_bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_graph_t *graph;
  CHECK(tandem_graph_create(g->rt, &graph));
  CHECK(tandem_graph_add_copy(graph, whole(a), whole(z), TANDEM_LANE_COMPUTE));
  tandem_exec_t *exec;
  CHECK(tandem_graph_prepare(graph, &exec));
  tandem_graph_release(graph);
  const double copy_ns = gpu_time(exec, 5);
  tandem_exec_release(exec);
  tandem_buffer_release(a);
  tandem_buffer_release(z);
  b->copy_gbs = copy_ns > 0 ? 2.0 * (double)copy_bytes / copy_ns : 0.0; /* read + write */

  exec = make_step(g, K_MATVEC);
  const double mv_ns = gpu_time(exec, 10);
  tandem_exec_release(exec);
  b->matvec_gbs = mv_ns > 0 ? (double)g->matvec_bytes / mv_ns : 0.0;
  exec = make_step(g, K_HEAD);
  const double head_ns = gpu_time(exec, 10);
  tandem_exec_release(exec);
  /* with --npu: the GPU's rows' bytes, over a time that includes the NPU's */
  b->head_gbs = head_ns > 0 ? 2.0 * g->head_rows * g->c->dim / head_ns : 0.0;
  for (int k = 1; k < 9; k++) {
    if ((1u << k) == K_O && g->attn_fused) continue; /* inside the attention's node */
    exec = make_step(g, 1u << k);
    b->kind_us[k] = gpu_time(exec, 10) * 1e-3;
    tandem_exec_release(exec);
  }
  exec = make_step(g, K_STEP);
  b->step_us = gpu_time(exec, 10) * 1e-3;
  tandem_exec_release(exec);

  const llama_config_t *c = g->c;
  uint64_t widest = c->ffn > c->dim ? c->ffn : c->dim;
  if (g->qdim + 2 * g->kvdim > widest) widest = g->qdim + 2 * g->kvdim;
  const uint64_t slice = align_up(4 * widest, 256);
  const uint64_t cache = 4ull * g->max_seq * g->kvdim;
  tandem_buffer_t *scratch = buffer(g, slice * ALONE_MAX, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *kc = buffer(g, cache * ALONE_MAX, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *vc = buffer(g, cache * ALONE_MAX, TANDEM_PLACEMENT_GPU_LOCAL);
  for (int m = 0; m < 4; m++) {
    /* one pass over the layers' own weights */
    CHECK(tandem_graph_create(g->rt, &graph));
    const uint64_t bytes = record_alone(g, graph, m, c->layers, NULL, 0, scratch, slice, kc, vc);
    CHECK(tandem_graph_prepare(graph, &exec));
    tandem_graph_release(graph);
    const double each = gpu_time(exec, 10) / c->layers;
    tandem_exec_release(exec);
    b->alone_us[m] = each * 1e-3;
    b->alone_gbs[m] = each > 0 ? (double)bytes / each : 0.0;
    /* the stream: a copy of the weights for every dispatch, ALONE_BYTES of
     * them on a GPU (two passes' worth on a CPU device), filled once */
    const uint64_t wstride = m == 2 ? 2 * align_up(bytes / 2, 256) : align_up(bytes, 256);
    uint64_t n = g->info.is_cpu ? 2ull * c->layers : (ALONE_BYTES + wstride - 1) / wstride;
    if (n < 2ull * c->layers) n = 2ull * c->layers;
    if (n > ALONE_MAX) n = ALONE_MAX;
    tandem_buffer_t *wc = buffer(g, n * wstride, TANDEM_PLACEMENT_GPU_LOCAL);
    CHECK(tandem_graph_create(g->rt, &graph));
    CHECK(tandem_graph_add_fill(graph, whole(wc), 0x2c002c00u, TANDEM_LANE_AUTO)); /* f16 1/16 */
    run_once(graph);
    CHECK(tandem_graph_create(g->rt, &graph));
    record_alone(g, graph, m, (uint32_t)n, wc, wstride, scratch, slice, kc, vc);
    CHECK(tandem_graph_prepare(graph, &exec));
    tandem_graph_release(graph);
    const double per = gpu_time(exec, 10) / (double)n;
    tandem_exec_release(exec);
    tandem_buffer_release(wc);
    b->stream_n[m] = (uint32_t)n;
    b->stream_mb[m] = (double)(n * bytes) * 1e-6;
    b->stream_us[m] = per * 1e-3;
    b->stream_gbs[m] = per > 0 ? (double)bytes / per : 0.0;
  }
  tandem_buffer_release(scratch);
  tandem_buffer_release(kc);
  tandem_buffer_release(vc);

  /* the LM-head node alone: it moves the position on and writes the
   * history's next token, as in a step */
  for (int i = 0; g->persistent && !g->info.is_cpu && head_best_supported(g) && i < 4; i++) {
    if (head_blocks[i] > g->info.max_local_invocations) continue;
    uint32_t per_wg;
    tandem_kernel_t *k = make_head_best(g, head_blocks[i], &per_wg);
    CHECK(tandem_graph_create(g->rt, &graph));
    record_head_best(g, graph, k, per_wg);
    CHECK(tandem_graph_prepare(graph, &exec));
    tandem_graph_release(graph);
    b->head_node_us[i] = gpu_time(exec, 10) * 1e-3;
    tandem_exec_release(exec);
    tandem_kernel_release(k);
  }
}

/* --profile (the persistent step): the step's GPU time beside variants of its
 * kernel: each of the AHEAD bits undone, other invocations a weight row by
 * stage, the workgroup-wide softmax, the earlier load loops (one weight load
 * in flight per invocation, other LM-head rows per cluster), and the step
 * with parts left out (decoder.glsl's SKIP), whose difference to the step is
 * what that part costs on the critical path. Each variant is its own kernel
 * and one-dispatch step; the variants are submitted in turn, |rounds|
 * rounds, and the median of each is printed. The left-out variants compute nothing valid: this runs
 * after the checked generations, and the barrier's words are checked after
 * it (a variant whose barrier gave up would time as fast, not as right). */
enum { PROFILE_VARIANTS = sizeof profile_variants / sizeof profile_variants[0] };

static void run_profile(gpu_t *g, uint32_t rounds) {
  tandem_exec_t *exec[PROFILE_VARIANTS];
  tandem_kernel_t *kern[PROFILE_VARIANTS];
  tandem_kernel_t *const keep = g->k_decoder;
  const uint32_t keep_nodes = g->node_count;
  for (int i = 0; i < PROFILE_VARIANTS; i++) {
    const variant_t *v = &profile_variants[i];
    kern[i] = NULL, exec[i] = NULL;
    if (v->spread > g->info.subgroup_size) continue; /* printed as not run */
    if (v->e_node && !g->k_head_best) continue;      /* likewise */
    kern[i] = make_decoder(g, v);
    g->k_decoder = kern[i];
    g->dec_head_node = v->e_node;
    exec[i] = make_step(g, K_STEP);
  }
  g->k_decoder = keep;
  g->dec_head_node = g->dec_step.e_node;
  g->node_count = keep_nodes;
  double *t = calloc((size_t)rounds * PROFILE_VARIANTS, sizeof *t);
  if (!t) die("out of memory");
  for (uint32_t r = 0; r < rounds; r++)
    for (int i = 0; i < PROFILE_VARIANTS; i++)
      if (exec[i]) t[i * rounds + r] = gpu_time(exec[i], 1) * 1e-3;
  check_sync(g);
  printf("profile: the persistent step's GPU time, median of %u rounds of every variant in "
         "turn (position at its last value, %u keys)\n",
         rounds, g->max_seq);
  double step = 0.0;
  for (int i = 0; i < PROFILE_VARIANTS; i++) {
    if (!exec[i]) {
      if (profile_variants[i].e_node)
        printf("  %-44s not run: no 64-bit atomics or subgroup shuffles\n",
               profile_variants[i].name);
      else
        printf("  %-44s not run: %u barrier counters, subgroup %u\n", profile_variants[i].name,
               profile_variants[i].spread, g->info.subgroup_size);
      continue;
    }
    qsort(&t[i * rounds], rounds, sizeof *t, compare_double);
    const double m = t[i * rounds + rounds / 2];
    if (i == 0) step = m;
    printf("  %-44s %8.1f us", profile_variants[i].name, m);
    if (i) printf("  (%+.1f)", m - step);
    printf("\n");
    tandem_exec_release(exec[i]);
    tandem_kernel_release(kern[i]);
  }
  free(t);
}

/* --clocks: the step (its own variant, with LLAMA_CLOCKS) |rounds| times at
 * the last position. Invocation 0 of every workgroup reads the device clock
 * when a stage starts (its barrier released it) and when the workgroup
 * arrives at the next barrier (decoder.glsl's events). Per stage and
 * layer: "span", from the median workgroup's release to the last arrival
 * (what the stage adds to the critical path), "own", the median
 * workgroup's release to its own arrival ("slowest": the slowest
 * workgroup's), and then the barrier's "latency",
 * from that last arrival to the median workgroup's release. Summed over the
 * layers, medians over the rounds. Spans and latencies add up to the step
 * but for the time before stage A's first release; the device clock's
 * unit is taken as 1 ns (NVIDIA's and Mesa's), checked against the GPU
 * timestamps on the first line. The subgroup clock (cycles of the
 * workgroup's SM) over the same "own" intervals gives the SM's clock rate. */
enum { CLOCK_KINDS = 4 }; /* stages A, B, C, E */

static uint64_t clock_at(const uint32_t *w, uint32_t sub) {
  return (uint64_t)w[2 * sub] | (uint64_t)w[2 * sub + 1] << 32;
}

/* The |n| events' clocks at |w| (per event: the device clock's two words,
 * the subgroup clock's) into |out| (2 per event), unwrapped where a device's
 * clocks read only 32 bits (every high word 0, as Debian 12's lavapipe's):
 * such a clock wraps every 2^32 ticks, so each reading is taken as the one
 * nearest the first event's, 2^32 on, which holds while the step lasts
 * under 2^31 ticks. A 0 (not stamped) stays 0. */
static void clocks_read(const uint32_t *w, uint64_t n, uint64_t *out) {
  bool wide = false;
  for (uint64_t i = 0; i < 2 * n; i++) wide |= w[2 * i + 1] != 0;
  for (uint64_t i = 0; i < 2 * n; i++) out[i] = clock_at(w + 2 * i, 0);
  if (wide) return;
  for (uint32_t sub = 0; sub < 2; sub++) {
    const uint32_t ref = w[2 * sub];
    for (uint64_t e = 0; e < n; e++) {
      const uint32_t lo = w[4 * e + 2 * sub];
      if (lo) out[2 * e + sub] = (1ull << 32) + ref + (int64_t)(int32_t)(lo - ref);
    }
  }
}

static double median_u64(uint64_t *v, uint32_t n) {
  qsort(v, n, sizeof *v, compare_u64);
  return n % 2 ? (double)v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
}

/* The median over |rounds| of kind |k|'s entries of |per_round| (rounds x
 * CLOCK_KINDS), through |scratch| (|rounds| doubles). */
static double median_by_round(const double *per_round, uint32_t k, uint32_t rounds,
                              double *scratch) {
  for (uint32_t r = 0; r < rounds; r++) scratch[r] = per_round[r * CLOCK_KINDS + k];
  qsort(scratch, rounds, sizeof *scratch, compare_double);
  return scratch[rounds / 2];
}

static void run_clocks(gpu_t *g, uint32_t rounds) {
  const uint32_t G = g->groups, L = g->c->layers, nev = clock_events(g);
  const uint64_t bytes = clock_bytes(g);
  tandem_kernel_t *const keep = g->k_decoder;
  const uint32_t keep_nodes = g->node_count;
  variant_t v = g->dec_step;
  v.clocks = 1;
  tandem_buffer_t *host = buffer(g, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  g->clocks =
      buffer(g, bytes, g->info.is_cpu ? TANDEM_PLACEMENT_HOST_VISIBLE : TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_kernel_t *k = make_decoder(g, &v);
  g->k_decoder = k;
  tandem_exec_t *exec = make_step(g, K_STEP);
  g->k_decoder = keep;
  g->node_count = keep_nodes;
  /* per round: span, own, latency by stage kind; the step's clock span and
   * GPU time; own intervals in both clocks (for the SM's rate) */
  double *r_span = calloc((size_t)rounds * CLOCK_KINDS, sizeof(double));
  double *r_own = calloc((size_t)rounds * CLOCK_KINDS, sizeof(double));
  double *r_lat = calloc((size_t)rounds * CLOCK_KINDS, sizeof(double));
  double *r_total = calloc(rounds, sizeof(double)), *r_gpu = calloc(rounds, sizeof(double));
  double *r_mhz = calloc(rounds, sizeof(double));
  uint64_t *tmp = calloc(G, sizeof(uint64_t)), *tmp2 = calloc(G, sizeof(uint64_t));
  if (!r_span || !r_own || !r_lat || !r_total || !r_gpu || !r_mhz || !tmp || !tmp2)
    die("out of memory");
  uint32_t *last_count = calloc((size_t)CLOCK_KINDS * G, sizeof(uint32_t));
  double *r_slow = calloc((size_t)rounds * CLOCK_KINDS, sizeof(double));
  double *by_round = calloc(rounds, sizeof(double));
  uint64_t *ck = calloc(2ull * G * nev, sizeof(uint64_t));
  /* per round: the last layer's stage-C span and the median layer's (does
   * stage E, starting early in some workgroups, slow the last stage C?) */
  double *r_lastc = calloc(rounds, sizeof(double)), *r_medc = calloc(rounds, sizeof(double));
  double *c_span = calloc(L, sizeof(double));
  if (!last_count || !r_slow || !by_round || !ck || !r_lastc || !r_medc || !c_span)
    die("out of memory");
  for (uint32_t r = 0; r < rounds; r++) {
    /* zeros first, so that an event the kernel did not stamp shows */
    tandem_map_t map;
    CHECK(tandem_map_write(whole(host), &map));
    memset(map.data, 0, bytes);
    tandem_unmap(&map);
    copy_once(g, whole(host), whole(g->clocks));
    r_gpu[r] = gpu_time(exec, 1);
    copy_once(g, whole(g->clocks), whole(host));
    CHECK(tandem_map_read(whole(host), &map));
    clocks_read(map.data, (uint64_t)G * nev, ck);
    /* event e of workgroup i: the device clock, the subgroup clock */
#define EV(i, e) ck[2 * ((uint64_t)(i)*nev + (e))]
#define SM(i, e) ck[2 * ((uint64_t)(i)*nev + (e)) + 1]
    /* every event stamped, each clock never behind its last reading in the
     * same workgroup (one invocation reads both, on one SM) */
    for (uint32_t i = 0; i < G; i++)
      for (uint32_t e = 0; e < nev; e++)
        if (!EV(i, e) || (e && (EV(i, e) < EV(i, e - 1) || SM(i, e) < SM(i, e - 1))))
          die("--clocks: workgroup %u's event %u reads device clock %llu, subgroup clock %llu "
              "(the event before: %llu, %llu): not stamped, or a clock went back; the step's "
              "clocks cannot be read on this device",
              i, e, (unsigned long long)EV(i, e), (unsigned long long)SM(i, e),
              (unsigned long long)(e ? EV(i, e - 1) : 0),
              (unsigned long long)(e ? SM(i, e - 1) : 0));
    uint64_t first = UINT64_MAX, last = 0;
    for (uint32_t i = 0; i < G; i++) {
      if (EV(i, 0) < first) first = EV(i, 0);
      if (EV(i, nev - 1) > last) last = EV(i, nev - 1);
    }
    r_total[r] = last > first ? (double)(last - first) : 0.0;
    double own_ev = 0.0, own_sm = 0.0;
    /* stage instances: (release event, arrival event, kind) */
    for (uint32_t l = 0; l <= L; l++)
      for (uint32_t st = 0; st < (l < L ? 3u : 1u); st++) {
        const uint32_t rel = 6 * l + 2 * st, arr = rel + 1, kind = l < L ? st : 3;
        const uint32_t next = arr + 1; /* the release after its barrier */
        uint64_t last_arr = 0, slow = 0;
        uint32_t last_wg = 0;
        for (uint32_t i = 0; i < G; i++) {
          if (EV(i, arr) > last_arr) last_arr = EV(i, arr), last_wg = i;
          if (EV(i, arr) - EV(i, rel) > slow) slow = EV(i, arr) - EV(i, rel);
          tmp[i] = EV(i, rel);
        }
        last_count[kind * G + last_wg]++;
        r_slow[r * CLOCK_KINDS + kind] += (double)slow;
        const double med_rel = median_u64(tmp, G);
        for (uint32_t i = 0; i < G; i++) tmp[i] = EV(i, arr) - EV(i, rel);
        for (uint32_t i = 0; i < G; i++) tmp2[i] = SM(i, arr) - SM(i, rel);
        const double own = median_u64(tmp, G), own_c = median_u64(tmp2, G);
        for (uint32_t i = 0; i < G; i++) tmp[i] = EV(i, next);
        const double med_next = median_u64(tmp, G);
        r_span[r * CLOCK_KINDS + kind] += (double)last_arr - med_rel;
        if (kind == 2) c_span[l] = (double)last_arr - med_rel;
        r_own[r * CLOCK_KINDS + kind] += own;
        r_lat[r * CLOCK_KINDS + kind] += med_next - (double)last_arr;
        own_ev += own, own_sm += own_c;
      }
#undef EV
#undef SM
    tandem_unmap(&map);
    r_lastc[r] = c_span[L - 1];
    qsort(c_span, L, sizeof(double), compare_double);
    r_medc[r] = c_span[L / 2];
    r_mhz[r] = own_ev > 0 ? own_sm / own_ev * 1e3 : 0.0;
  }
  check_sync(g);
  static const char *const kinds[CLOCK_KINDS] = {"A (norm, Q/K/V, RoPE)", "B (attention, o_proj)",
                                                 "C (norm, gate/up, down)", "E (LM head)"};
  static const char *const bars[CLOCK_KINDS] = {"A -> B", "B -> C", "C -> next A", "E -> end"};
  qsort(r_total, rounds, sizeof(double), compare_double);
  qsort(r_gpu, rounds, sizeof(double), compare_double);
  qsort(r_mhz, rounds, sizeof(double), compare_double);
  printf("clocks: the persistent step with every workgroup's device clock read at each stage's "
         "release and barrier arrival, median of %u steps at the last position (%u keys)\n",
         rounds, g->max_seq);
  printf("  the clocks span %.1f us of the step's %.1f us on GPU timestamps (%s clock); the SM "
         "ran at %.0f MHz (subgroup clock over device clock)\n",
         r_total[rounds / 2] * 1e-3, r_gpu[rounds / 2] * 1e-3, "1 ns a tick of the device",
         r_mhz[rounds / 2]);
  printf("  %-26s %8s %8s %8s   %-12s %10s %9s   %s\n", "stage (summed over layers)", "span us",
         "own us", "slowest", "barrier", "latency us", "a barrier", "last to arrive, most often");
  double sum = 0.0;
  for (uint32_t s = 0; s < CLOCK_KINDS; s++) {
    const double sp = median_by_round(r_span, s, rounds, by_round);
    const double ow = median_by_round(r_own, s, rounds, by_round);
    const double sl = median_by_round(r_slow, s, rounds, by_round);
    const double la = median_by_round(r_lat, s, rounds, by_round);
    const uint32_t count = s < 3 ? L : 1;
    uint32_t often = 0;
    for (uint32_t i = 1; i < G; i++)
      if (last_count[s * G + i] > last_count[s * G + often]) often = i;
    printf("  %-26s %8.1f %8.1f %8.1f   %-12s %10.1f %9.2f   workgroup %u (%u of %u)\n", kinds[s],
           sp * 1e-3, ow * 1e-3, sl * 1e-3, bars[s], la * 1e-3, la * 1e-3 / count, often,
           last_count[s * G + often], count * rounds);
    sum += sp + la;
  }
  printf("  spans and latencies add up to %.1f us\n", sum * 1e-3);
  qsort(r_lastc, rounds, sizeof(double), compare_double);
  qsort(r_medc, rounds, sizeof(double), compare_double);
  printf("  the last layer's stage C spans %.2f us, the median layer's %.2f (%s)\n",
         r_lastc[rounds / 2] * 1e-3, r_medc[rounds / 2] * 1e-3,
         v.counts && !v.e_barrier
             ? "stage E starts in each workgroup once its poll has the down sums"
             : "a grid barrier before stage E");
  free(r_lastc), free(r_medc), free(c_span);
  free(r_span), free(r_own), free(r_lat), free(r_total), free(r_gpu), free(r_mhz);
  free(r_slow), free(last_count), free(by_round), free(ck);
  free(tmp), free(tmp2);
  tandem_exec_release(exec);
  tandem_kernel_release(k);
  tandem_buffer_release(g->clocks);
  g->clocks = NULL;
  tandem_buffer_release(host);
}

static void gpu_release(gpu_t *g) {
  tandem_exec_release(g->step);
  tandem_exec_release(g->chunk_step);
  tandem_kernel_release(g->k_norm);
  tandem_npu_program_release(g->npu_head);
  tandem_buffer_release(g->xn);
  tandem_buffer_release(g->head_t);
  tandem_buffer_release(g->npu_logits);
  tandem_kernel_t *ks[] = {g->k_embed, g->k_qkv,  g->k_attn,   g->k_o,       g->k_gateup,
                           g->k_down,  g->k_head, g->k_argmax, g->k_decoder, g->k_head_best};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) tandem_kernel_release(ks[i]);
  tandem_buffer_t *bs[] = {g->w,    g->params,    g->pos_table,   g->history, g->history_host,
                           g->x,    g->qkv,       g->attn,        g->h,       g->logits,
                           g->kc,   g->vc,        g->logits_host, g->sink,    g->act,
                           g->sync, g->sync_host, g->acc};
  for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) tandem_buffer_release(bs[i]);
  free(g->at);
}

static uint32_t argmax(const float *v, uint32_t n) {
  uint32_t best = 0;
  for (uint32_t i = 1; i < n; i++)
    if (v[i] > v[best]) best = i;
  return best;
}

/* Teacher-forced CPU replay of the run's tokens; returns the bad positions. */
static uint32_t verify(const llama_model_t *m, const gpu_t *g, const options_t *o,
                       const uint32_t *tokens, const float *logits, double *worst_rel) {
  const uint32_t V = m->c.vocab;
  llama_reference_t *ref = llama_reference_create(m, g->max_seq);
  float *want = malloc(4ull * V);
  if (!ref || !want) die("out of memory");
  uint32_t bad = 0;
  *worst_rel = 0.0;
  for (uint32_t pos = 0; pos < g->max_seq; pos++) {
    llama_reference_step(ref, pos, tokens[pos], want);
    const float *got = logits + (size_t)pos * V;
    float err = 0.0f, scale = 0.0f;
    for (uint32_t i = 0; i < V; i++) {
      err = fmaxf(err, fabsf(got[i] - want[i]));
      scale = fmaxf(scale, fabsf(want[i]));
    }
    const float tol = 1e-4f * scale + 1e-5f;
    const uint32_t next = tokens[pos + 1], cpu = argmax(want, V);
    bool ok = err <= tol;
    if (pos + 1 >= o->prompt_len) {
      /* the GPU's token is the argmax of its own logits, and the CPU's
       * unless their top two are within the tolerance */
      if (next != argmax(got, V)) ok = false;
      if (next != cpu && want[cpu] - want[next] > tol) ok = false;
    }
    if (scale > 0.0f && err / scale > *worst_rel) *worst_rel = err / scale;
    if (!ok) bad++;
    if (!ok || o->verbose)
      printf("  pos %3u  in %5u  next %5u  cpu argmax %5u  max|err| %.3g  tol %.3g  %s\n", pos,
             tokens[pos], next, cpu, (double)err, (double)tol, ok ? "ok" : "MISMATCH");
  }
  free(want);
  llama_reference_destroy(ref);
  return bad;
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
  options_t *o = parse_options(argc, argv);
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* Sanitizer hygiene, as in tests/harness.c and decode.c: keep the
   * validation layer (and lavapipe, in sanitizer builds) mapped until exit. */
  if (o->validation)
    (void)dlopen("libVkLayer_khronos_validation.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
#endif

  llama_model_t *m = calloc(1, sizeof *m);
  if (!m) die("out of memory");
  const uint64_t load0 = now_ns();
  if (!llama_load(o->model, m)) return 1;
  const llama_config_t *c = &m->c;
  for (uint32_t i = 0; i < o->prompt_len; i++)
    if (o->prompt[i] >= c->vocab)
      die("--prompt: id %u is not below vocab_size %u", o->prompt[i], c->vocab);
  gpu_t g = {.c = c,
             .qdim = (uint64_t)c->heads * c->head_dim,
             .kvdim = (uint64_t)c->kv_heads * c->head_dim};
  g.max_seq = o->prompt_len + o->tokens - 1;
  if (g.max_seq > c->max_pos)
    die("prompt %u + tokens %u - 1 = %u positions: more than max_position_embeddings %u",
        o->prompt_len, o->tokens, g.max_seq, c->max_pos);
  if (c->dim % 4 || g.qdim % 4 || c->ffn % 4)
    die("hidden_size %u, heads x head_dim %llu and intermediate_size %u must be multiples of 4 "
        "(the kernels read f16vec4)",
        c->dim, (unsigned long long)g.qdim, c->ffn);

  tandem_runtime_options_t ro;
  tandem_runtime_options_init(&ro);
  ro.gpu_index = o->gpu_index;
  ro.graph_slots = o->inflight;
  ro.validation = o->validation;
  ro.validation_callback = on_validation;
  ro.gpu_timestamps = o->timestamps;
  if (o->npu) {
    ro.npu_backend = "emulated";
#ifdef TANDEM_LLAMA_NPU_LIBRARY
    if (!getenv("TANDEM_NPU_LIBRARY")) ro.npu_library = TANDEM_LLAMA_NPU_LIBRARY;
#endif
    g.npu_rows = o->npu_rows ? o->npu_rows : c->vocab / 4;
    if (g.npu_rows >= c->vocab)
      die("--npu-rows %u: must leave the GPU at least one of the vocabulary's %u rows", g.npu_rows,
          c->vocab);
  }
  g.head_rows = c->vocab - g.npu_rows;
  CHECK(tandem_runtime_create(&ro, &g.rt));
  CHECK(tandem_runtime_open_gpu(g.rt));
  if (o->npu) {
    tandem_npu_info_t ni;
    tandem_npu_info_init(&ni);
    CHECK(tandem_runtime_npu_info(g.rt, &ni));
    printf("npu:     %s, sharing %s: LM-head rows %u..%u of the vocabulary on the NPU lane\n",
           ni.name, tandem_sharing_name(ni.sharing), g.head_rows, c->vocab - 1);
  }
  tandem_device_info_init(&g.info);
  CHECK(tandem_runtime_gpu_info(g.rt, o->gpu_index, &g.info));
  const uint32_t f = g.info.shader_features;
  if (!(f & TANDEM_SHADER_STORAGE_BUFFER_16BIT) || !(f & TANDEM_SHADER_SUBGROUP_BASIC) ||
      !(f & TANDEM_SHADER_SUBGROUP_ARITHMETIC)) {
    fprintf(stderr, "llama: skipped: the device lacks %s\n",
            !(f & TANDEM_SHADER_STORAGE_BUFFER_16BIT) ? "storageBuffer16BitAccess"
                                                      : "subgroup arithmetic");
    return 77;
  }
  g.block = o->block ? o->block : g.info.is_cpu ? 64 : 128;
  const uint32_t sg = g.info.subgroup_size;
  if (sg < 4 || g.block % sg || g.block > g.info.max_local_invocations)
    die("workgroup %u: must be a multiple of the subgroup size %u and at most %u", g.block, sg,
        g.info.max_local_invocations);
  g.rows_per_wg = g.block / sg;
  /* One workgroup scans the whole vocabulary for the argmax, and attention
   * has one per head: both want more invocations than the mat-vec products
   * (the plain attention kernel keeps the common size, as it was measured). */
  const uint32_t big = g.info.max_local_invocations < 1024 ? g.info.max_local_invocations : 1024;
  /* The wide mat-vecs (matvec_wide.glsl) shuffle within the subgroup and
   * read rows as 16-byte groups of eight f16; without either, the first
   * kernels (one subgroup per row, f16vec4). */
  const bool shuffle = (f & TANDEM_SHADER_SUBGROUP_SHUFFLE) != 0;
  g.mv_wide = !o->matvec_old && shuffle && c->dim % 8 == 0 && g.qdim % 8 == 0 && c->ffn % 8 == 0;
  if (!o->matvec_old && !g.mv_wide)
    printf("note:    the wide mat-vecs need subgroup shuffles and hidden, heads x head_dim and "
           "intermediate sizes that are multiples of 8; using --matvec old\n");
  if (o->lanes && !g.mv_wide) die("--lanes is for the wide mat-vecs (--matvec wide)");
  g.lanes = o->lanes;
  /* Two subgroups per workgroup on a GPU (the H200, 2026-12-05: with a
   * subgroup per row, two rows per workgroup gave the fastest step measured,
   * 734 us of GPU time against 892 for the first kernels). */
  g.mv_block = o->block || g.info.is_cpu ? g.block : 2 * sg;
  if (g.mv_block > g.info.max_local_invocations) g.mv_block = g.block;
  /* The cached attention: a workgroup of head_dim / 4 subgroups (one per
   * vec4 column of the head), clusters of up to a subgroup per cached row. */
  const uint32_t dv = c->head_dim / 4;
  g.attention_plain = o->attention_plain;
  g.attn_cached = !o->attention_plain && !o->attention_spread && g.mv_wide &&
                  c->head_dim % 8 == 0 && !(dv & (dv - 1)) &&
                  dv * sg <= g.info.max_local_invocations;
  if (!o->attention_plain && !o->attention_spread && !g.attn_cached)
    printf("note:    the cached attention needs the wide mat-vecs, head_dim a multiple of 8 with "
           "head_dim / 4 a power of two, and head_dim / 4 subgroups in a workgroup; using "
           "--attention spread\n");
  /* the fused attention + o_proj: the cached attention's workgroup, W_o rows
   * read as uvec4 (heads x head_dim a multiple of 8), its shared memory */
  const uint64_t fused_shared =
      4ull * (2 * g.qdim + (uint64_t)c->heads * g.max_seq + c->heads + dv * sg / 4 + 1);
  g.attn_fused = g.attn_cached && o->attention_fused && g.qdim % 8 == 0 &&
                 fused_shared <= g.info.max_shared_memory_bytes;
  if (g.attn_cached) g.attn_block = dv * sg;
  else
    g.attn_block =
        g.attention_plain || g.info.is_cpu || o->block ? g.block : (big < 256 ? big : 256);
  g.argmax_block = g.info.is_cpu || o->block ? g.block : big;
  if (g.attn_block % sg || g.argmax_block % sg) g.attn_block = g.argmax_block = g.block;
  const uint64_t shared = g.attn_cached ? 4ull * (g.max_seq + g.attn_block / 4 + 1)
                                        : 4ull * (3 * c->head_dim + g.max_seq + g.attn_block / 4 +
                                                  1 + g.attn_block + c->head_dim);
  if (shared > g.info.max_shared_memory_bytes)
    die("attention over %u positions needs %llu bytes of shared memory; the device has %u",
        g.max_seq, (unsigned long long)shared, g.info.max_shared_memory_bytes);
  if (c->heads > g.info.max_workgroups[0])
    die("%u heads need more workgroups than the device's %u", c->heads, g.info.max_workgroups[0]);

  printf("device:  %s (%s %s), subgroup %u, workgroup %u; mat-vecs %s (workgroup %u); "
         "attention %s (workgroup %u); argmax %u\n",
         g.info.name, g.info.driver_name, g.info.driver_info, sg, g.block,
         g.mv_wide ? "wide" : "old, a subgroup per row", g.mv_wide ? g.mv_block : g.block,
         g.attn_fused        ? "fused with o_proj"
         : g.attn_cached     ? "cached"
         : g.attention_plain ? "plain"
                             : "spread",
         g.attn_block, g.argmax_block);
  printf("model:   %s: %u layers, hidden %u, %u heads (%u KV) of %u, MLP %u, vocab %u, %s "
         "embeddings, rope_theta %g%s\n",
         o->model, c->layers, c->dim, c->heads, c->kv_heads, c->head_dim, c->ffn, c->vocab,
         c->tied ? "tied" : "untied", c->rope_theta, c->rope_llama3 ? " (llama3 scaling)" : "");
  g.persistent = o->persistent; /* layout_weights places W_down transposed for it */
  layout_weights(&g);
  /* --prefetch: sizes of what each prefetching node reads ahead, and the
   * trailing workgroups (four 16-byte loads an invocation) that read it */
  if (o->prefetch == 1 && !g.mv_wide) die("--prefetch on needs the wide mat-vecs");
  if (g.mv_wide && o->prefetch == 1) {
    if (g.attn_fused) {
      g.pf_qkv = 2ull * c->dim * g.qdim;                                /* o_proj */
      g.pf_attn = g.at[0].down + 2ull * c->dim * c->ffn - g.at[0].gate; /* gate, up, down */
    } else if (g.attn_cached) {
      g.pf_attn = g.at[0].down - g.at[0].o; /* o_proj, gate, up */
    }
    g.pf_o = 2ull * c->dim * c->ffn;                                     /* down */
    if (c->layers > 1) g.pf_gu = 2ull * (g.qdim + 2 * g.kvdim) * c->dim; /* the next Q/K/V */
  }
  g.pfg_attn = (uint32_t)((g.pf_attn / 16 + 4ull * g.attn_block - 1) / (4ull * g.attn_block));
  g.pfg_o = (uint32_t)((g.pf_o / 16 + 4ull * g.mv_block - 1) / (4ull * g.mv_block));
  g.pfg_qkv = (uint32_t)((g.pf_qkv / 16 + 4ull * g.mv_block - 1) / (4ull * g.mv_block));
  g.pfg_gu = (uint32_t)((g.pf_gu / 16 + 4ull * g.mv_block - 1) / (4ull * g.mv_block));
  if (g.pf_attn || g.pf_o || g.pf_gu)
    printf("prefetch: qkv %.2f MB (%u workgroups), attention %.2f MB (%u), o_proj %.2f MB (%u), "
           "gate_up %.2f MB (%u)\n",
           (double)g.pf_qkv * 1e-6, g.pfg_qkv, (double)g.pf_attn * 1e-6, g.pfg_attn,
           (double)g.pf_o * 1e-6, g.pfg_o, (double)g.pf_gu * 1e-6, g.pfg_gu);
  printf("weights: %.1f MB in %u file%s (%u F16, %u BF16, %u F32 tensors) -> f16 on the GPU "
         "(gains f32); %.1f MB read per token by the mat-vec products\n",
         (double)m->weight_bytes * 1e-6, m->file_count, m->file_count == 1 ? "" : "s",
         m->dtype_counts[LLAMA_F16], m->dtype_counts[LLAMA_BF16], m->dtype_counts[LLAMA_F32],
         (double)g.matvec_bytes * 1e-6);
  g.pos_lane = o->pos_lane;
  g.pos_gpu = o->pos_gpu;
  if (o->groups && !g.persistent) die("--groups is for --engine persistent");
  if (o->counters && !g.persistent) die("--barrier-counters is for --engine persistent");
  if (o->ahead >= 0 && !g.persistent) die("--ahead is for --engine persistent");
  if (o->head_flags >= 0 && !g.persistent) die("--head-flags is for --engine persistent");
  if (o->part_counts >= 0 && !g.persistent) die("--part-counts is for --engine persistent");
  if (o->qkv_counts >= 0 && !g.persistent) die("--qkv-counts is for --engine persistent");
  if (o->down_counts >= 0 && !g.persistent) die("--down-counts is for --engine persistent");
  if (o->e_barrier >= 0 && !g.persistent) die("--e-barrier is for --engine persistent");
  if ((o->head_node >= 0 || o->head_block) && !g.persistent)
    die("--head-node and --head-block are for --engine persistent");
  if (o->clocks && (!g.persistent || !o->timestamps))
    die("--clocks reads the persistent step's clocks beside its GPU timestamps: it needs "
        "--engine persistent and no --no-timestamps");
  if (o->profile && (!g.persistent || !o->timestamps))
    die("--profile times the persistent step on GPU timestamps: it needs --engine persistent "
        "and no --no-timestamps");
  if (g.persistent) {
    if (g.npu_rows) die("--engine persistent runs the LM head on the GPU: no --npu with it");
    g.groups = o->groups ? o->groups : g.info.is_cpu ? 1 : 128;
    /* 256 on a GPU: eight subgroups of 32 share a workgroup's slice */
    g.dec_block = o->block ? o->block : g.info.is_cpu ? 64 : 256;
  }
  g.chunk = o->chunk;
  if (g.chunk > 1 && !g.pos_gpu)
    die("--chunk %u needs --pos-lane gpu (the host table's copy is per step)", g.chunk);
  make_buffers(&g, o->check || o->logits_out);
  float *rope = malloc(4ull * g.max_seq * c->head_dim);
  if (!rope) die("out of memory");
  llama_rope_table(c, g.max_seq, rope);
  upload_weights(&g, m, rope);
  if (g.npu_rows) { /* matmul_f32: C[1 x N] = A[1 x D] · B[D x N], B the rows transposed, as f16 */
    const llama_tensor_t *head = c->tied ? &m->embed : &m->head;
    tandem_map_t map;
    CHECK(tandem_map_write(whole(g.head_t), &map));
    float *bt = map.data;
    for (uint64_t r = 0; r < g.npu_rows; r++)
      for (uint64_t k = 0; k < c->dim; k++)
        bt[k * g.npu_rows + r] =
            llama_f32_from_f16(llama_weight_f16(head, (g.head_rows + r) * c->dim + k));
    tandem_unmap(&map);
  }
  free(rope);
  {
    tandem_map_t map;
    CHECK(tandem_map_write(whole(g.pos_table), &map));
    uint32_t *row = map.data;
    for (uint32_t p = 0; p < g.max_seq; p++)
      row[4 * p] = p, row[4 * p + 1] = o->prompt_len, row[4 * p + 2] = 0, row[4 * p + 3] = 0;
    tandem_unmap(&map);
  }
  const double load_ms = (double)(now_ns() - load0) * 1e-6;
  make_kernels(&g);
  if (g.persistent) {
    variant_t step = *dec_default;
    if (o->counters) step.spread = o->counters;
    if (o->ahead >= 0) step.ahead = (uint32_t)o->ahead;
    if (o->head_flags >= 0) step.flags = (uint32_t)o->head_flags;
    if (o->part_counts >= 0) step.pcounts = (uint32_t)o->part_counts;
    if (o->qkv_counts >= 0) step.qcounts = (uint32_t)o->qkv_counts;
    if (o->down_counts >= 0) step.counts = (uint32_t)o->down_counts;
    /* the counted q, k, v and o_proj sums need the counted down sums, and
     * HEAD_FLAGS needs none: an explicit --down-counts off or --head-flags
     * on turns off the counts not also asked for (an explicit pair that
     * cannot run together is refused by make_decoder) */
    if (!step.counts || step.flags) {
      if (o->part_counts < 0) step.pcounts = 0;
      if (o->qkv_counts < 0) step.qcounts = 0;
    }
    if (step.flags && o->down_counts < 0) step.counts = 0;
    if (o->e_barrier >= 0) step.e_barrier = (uint32_t)o->e_barrier;
    if (!step.counts && o->e_barrier < 0) step.e_barrier = 0;
    if (o->head_node >= 0) step.e_node = (uint32_t)o->head_node;
    g.k_decoder = make_decoder(&g, &step);
    g.dec_head_node = step.e_node;
    /* made for the step's node, and for --profile, which times the step
     * both ways where the device can run the node */
    const uint32_t head_block = o->head_block   ? o->head_block
                                : g.info.is_cpu ? g.block
                                                : HEAD_BLOCK;
    if (step.e_node || o->head_block || (o->profile && head_best_supported(&g)))
      g.k_head_best = make_head_best(&g, head_block, &g.head_per_wg);
    g.dec_step = step;
    g.dec_counters = step.spread;
    printf(
        "engine:  persistent: one dispatch of %u workgroups of %u, %u grid barriers a layer "
        "(%u arrival counters)%s%s%s%s%s%s; weights %s (%u bytes of shared memory a workgroup)\n",
        g.groups, g.dec_block, dec_barriers_per_layer(&step), step.spread,
        step.flags ? " and flags per KV group between stages A and B" : "",
        step.pcounts ? ", counted o_proj sums between stages B and C" : "",
        step.qcounts ? ", counted q, k, v between stages A and B" : "",
        step.counts ? ", counted sums between stage C and the next" : "",
        step.e_barrier ? ", a grid barrier before stage E" : "",
        step.e_node ? "; the LM head and the token as a node after it" : "",
        g.dec_smem ? "through shared memory, loaded while the barrier waits"
                   : "read from the weight buffer in each stage",
        g.dec_shared);
  }
  const uint64_t prep0 = now_ns();
  g.step = make_step(&g, K_STEP | (g.logits_host ? K_LOGITS : 0));
  if (g.chunk > 1)
    g.chunk_step = make_steps(&g, K_STEP | (g.logits_host ? K_LOGITS : 0), g.chunk, g.chunk_logits);
  const double prepare_ms = (double)(now_ns() - prep0) * 1e-6;
  printf("step:    %u nodes, prepared once in %.2f ms%s; position %s; load + convert + upload "
         "%.0f ms\n",
         g.node_count, prepare_ms, g.chunk > 1 ? " (with the chunk graph)" : "",
         g.pos_gpu ? "advanced on the GPU by the argmax" : "copied from a host table per step",
         load_ms);
  if (g.chunk > 1) printf("chunk:   %u steps per submission\n", g.chunk);

  const uint32_t n_hist = g.max_seq + 1;
  run_t *runs = calloc(o->repeat, sizeof *runs);
  double *rates = calloc(o->repeat, sizeof *rates);
  if (!runs || !rates) die("out of memory");
  totals_t totals = {0};
  const uint32_t decode_steps = g.max_seq - (o->prompt_len - 1) - 1; /* after the first token */
  for (uint32_t r = 0; r < o->repeat; r++) {
    runs[r].tokens = calloc(n_hist, sizeof(uint32_t));
    if (!runs[r].tokens) die("out of memory");
    generate(&g, o, &runs[r], &totals);
    rates[r] = decode_steps ? decode_steps / runs[r].decode_s : 0.0;
    printf("run %u:   prefill %u tokens %.2f ms, decode %u tokens %.2f ms: %.1f tokens/s\n", r + 1,
           o->prompt_len, runs[r].prefill_s * 1e3, decode_steps, runs[r].decode_s * 1e3, rates[r]);
    if (r && memcmp(runs[r].tokens, runs[0].tokens, 4ull * n_hist))
      die("run %u generated other tokens than run 1", r + 1);
  }
  printf("tokens: ");
  for (uint32_t i = o->prompt_len; i < n_hist; i++) printf(" %u", runs[0].tokens[i]);
  printf("\n");

  float *logits = NULL;
  if (g.logits_host) {
    logits = malloc(4ull * c->vocab * g.max_seq);
    if (!logits) die("out of memory");
    tandem_map_t map;
    CHECK(tandem_map_read(whole(g.logits_host), &map));
    memcpy(logits, map.data, 4ull * c->vocab * g.max_seq);
    tandem_unmap(&map);
  }
  if (o->logits_out) {
    FILE *lf = fopen(o->logits_out, "wb");
    if (!lf || fwrite(logits, 4ull * c->vocab, g.max_seq, lf) != g.max_seq || fclose(lf))
      die("cannot write %s", o->logits_out);
    printf("logits:  %u positions x %u to %s\n", g.max_seq, c->vocab, o->logits_out);
  }
  uint32_t bad = 0;
  double worst = 0.0;
  if (o->check) {
    bad = verify(m, &g, o, runs[0].tokens, logits, &worst);
    printf("check:   %s: %u positions against the CPU reference, largest error %.2e of the "
           "largest logit\n",
           bad ? "FAILED" : "ok", g.max_seq, worst);
  }

  qsort(rates, o->repeat, sizeof *rates, compare_double);
  const double median = o->repeat % 2 ? rates[o->repeat / 2]
                                      : 0.5 * (rates[o->repeat / 2 - 1] + rates[o->repeat / 2]);
  double prefill = 0.0;
  for (uint32_t r = 0; r < o->repeat; r++) prefill += runs[r].prefill_s / o->repeat;
  printf("speed:   decode %.1f tokens/s (median of %u), %.1f us per token; prefill %.1f us per "
         "prompt token%s\n",
         median, o->repeat, median > 0 ? 1e6 / median : 0.0, prefill * 1e6 / o->prompt_len,
         o->timestamps ? " (with GPU timestamps)" : "");
  if (totals.steps_timed) {
    printf("lanes:   GPU timestamps of %llu steps; busy time per step\n",
           (unsigned long long)totals.steps_timed);
    for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
      const lane_time_t *lt = &totals.lanes[l];
      if (!lt->regions) continue;
      printf("  %-9s %8llu regions %10.1f us/step\n", tandem_lane_name((tandem_lane_t)l),
             (unsigned long long)lt->regions,
             (double)lt->busy_ns * 1e-3 / (double)totals.steps_timed);
    }
    printf("  %-9s %17s %10.1f us/step\n", "span", "",
           (double)totals.span_ns * 1e-3 / (double)totals.steps_timed);
    if (totals.lanes[TANDEM_LANE_NPU].regions)
      printf("  npu overlapped by compute-lane regions %.1f us/step (the GPU's LM-head rows)\n",
             (double)totals.npu_overlap_ns * 1e-3 / (double)totals.steps_timed);
  }
  bench_t b = {0};
  if (o->bench) {
    run_bench(&g, &b);
    printf("bench:   device copy %.1f GB/s (read + write); mat-vec products of one step %.1f "
           "GB/s (%.1f MB in %.1f us), LM head alone %.1f GB/s; whole step %.1f us on the GPU\n",
           b.copy_gbs, b.matvec_gbs, (double)g.matvec_bytes * 1e-6,
           b.matvec_gbs > 0 ? (double)g.matvec_bytes / b.matvec_gbs * 1e-3 : 0.0, b.head_gbs,
           b.step_us);
    printf("  GPU time per step of each kind of node, alone (all layers, each dispatch after "
           "the one before):\n");
    for (int k = 1; k < 9; k++) printf("  %-10s %9.1f us\n", kind_names[k], b.kind_us[k]);
    printf("  each layer matrix alone, dispatches with no dependency between them: the %u "
           "layers' own weights (the L2 cache may hold them), and a stream over copies of them "
           "(read from the memory), beside the device copy's %.1f GB/s:\n",
           c->layers, b.copy_gbs);
    for (int i = 0; i < 4; i++)
      printf("  %-10s %6.2f us a dispatch, %7.1f GB/s; stream of %4u over %6.1f MB: %6.2f us, "
             "%7.1f GB/s\n",
             matrix_names[i], b.alone_us[i], b.alone_gbs[i], b.stream_n[i], b.stream_mb[i],
             b.stream_us[i], b.stream_gbs[i]);
    if (b.head_node_us[0] > 0) {
      printf("  the LM head and the token as one node (--head-node on), by its workgroup:");
      for (int i = 0; i < 4; i++)
        if (b.head_node_us[i] > 0)
          printf(" %u: %.1f us (%.0f GB/s)", head_blocks[i], b.head_node_us[i],
                 2.0 * c->vocab * c->dim / (b.head_node_us[i] * 1e3));
      printf("\n");
    }
  }

  if (o->profile) run_profile(&g, 41);
  if (o->clocks) run_clocks(&g, 41);

  const uint64_t messages = atomic_load(&validation_count);
  if (o->validation) printf("validation: %llu messages\n", (unsigned long long)messages);
  if (o->json) {
    FILE *jf = fopen(o->json, "w");
    if (!jf) die("cannot write %s", o->json);
    fprintf(jf, "{\"example\": \"llama\", \"device\": ");
    write_json_string(jf, g.info.name);
    fprintf(jf, ", \"driver\": ");
    write_json_string(jf, g.info.driver_name);
    fprintf(jf, ", \"driver_info\": ");
    write_json_string(jf, g.info.driver_info);
    fprintf(
        jf,
        ", \"layers\": %u, \"hidden\": %u, \"heads\": %u, \"kv_heads\": %u, \"vocab\": %u"
        ", \"workgroup\": %u, \"engine\": \"%s\", \"groups\": %u, \"barrier_counters\": %u, \"attention\": \"%s\", \"matvec\": \"%s\", \"inflight\": %u, \"chunk\": %u, \"npu_rows\": %u, \"pos_lane\": \"%s\", \"prompt_len\": %u"
        ", \"tokens\": %u, \"repeat\": %u, \"decode_tokens_per_s\": %.3f"
        ", \"decode_us_per_token\": %.3f, \"prefill_us_per_token\": %.3f"
        ", \"prepare_ms\": %.3f, \"step_nodes\": %u, \"matvec_bytes_per_token\": %llu"
        ", \"check\": \"%s\", \"max_rel_err\": %.3e",
        c->layers, c->dim, c->heads, c->kv_heads, c->vocab, g.block,
        g.persistent ? "persistent" : "nodes", g.groups, g.dec_counters,
        g.attn_fused        ? "fused"
        : g.attn_cached     ? "cached"
        : g.attention_plain ? "plain"
                            : "spread",
        g.mv_wide ? "wide" : "old", o->inflight, g.chunk, g.npu_rows,
        o->pos_gpu ? "gpu" : tandem_lane_name(o->pos_lane), o->prompt_len, o->tokens, o->repeat,
        median, median > 0 ? 1e6 / median : 0.0, prefill * 1e6 / o->prompt_len, prepare_ms,
        g.node_count, (unsigned long long)g.matvec_bytes,
        o->check ? (bad ? "failed" : "ok") : "none", worst);
    if (g.persistent) {
      const variant_t *v = &g.dec_step;
      fprintf(jf,
              ", \"step\": {\"ahead\": %u, \"head_flags\": %u, \"part_counts\": %u"
              ", \"qkv_counts\": %u, \"down_counts\": %u, \"stage_d\": %u, \"clocks\": %u"
              ", \"e_barrier\": %u, \"head_node\": %u, \"grid_barriers_per_layer\": %u}",
              v->ahead, v->flags, v->pcounts, v->qcounts, v->counts, v->stage_d, v->clocks,
              v->e_barrier, v->e_node, dec_barriers_per_layer(v));
    }
    if (totals.steps_timed) {
      fprintf(jf, ", \"span_us_per_step\": %.3f, \"lanes_us_per_step\": {",
              (double)totals.span_ns * 1e-3 / (double)totals.steps_timed);
      bool first = true;
      for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
        if (!totals.lanes[l].regions) continue;
        fprintf(jf, "%s\"%s\": %.3f", first ? "" : ", ", tandem_lane_name((tandem_lane_t)l),
                (double)totals.lanes[l].busy_ns * 1e-3 / (double)totals.steps_timed);
        first = false;
      }
      fprintf(jf, "}");
    }
    if (o->bench) {
      fprintf(jf,
              ", \"bench\": {\"copy_gb_s\": %.3f, \"matvec_gb_s\": %.3f, \"lm_head_gb_s\": %.3f"
              ", \"step_gpu_us\": %.3f, \"kind_us\": {",
              b.copy_gbs, b.matvec_gbs, b.head_gbs, b.step_us);
      for (int k = 1; k < 9; k++)
        fprintf(jf, "%s\"%s\": %.3f", k > 1 ? ", " : "", kind_names[k], b.kind_us[k]);
      fprintf(jf, "}, \"alone\": {");
      for (int i = 0; i < 4; i++)
        fprintf(jf,
                "%s\"%s\": {\"us\": %.3f, \"gb_s\": %.3f, \"stream_us\": %.3f, "
                "\"stream_gb_s\": %.3f, \"stream_dispatches\": %u, \"stream_mb\": %.1f}",
                i ? ", " : "", matrix_names[i], b.alone_us[i], b.alone_gbs[i], b.stream_us[i],
                b.stream_gbs[i], b.stream_n[i], b.stream_mb[i]);
      fprintf(jf, "}, \"head_node_us\": {");
      for (int i = 0, n = 0; i < 4; i++)
        if (b.head_node_us[i] > 0)
          fprintf(jf, "%s\"%u\": %.3f", n++ ? ", " : "", head_blocks[i], b.head_node_us[i]);
      fprintf(jf, "}}");
    }
    fprintf(jf, ", \"generated\": [");
    for (uint32_t i = o->prompt_len; i < n_hist; i++)
      fprintf(jf, "%s%u", i > o->prompt_len ? ", " : "", runs[0].tokens[i]);
    fprintf(jf, "]}\n");
    if (fclose(jf)) die("writing %s failed", o->json);
    printf("json:    %s\n", o->json);
  }

  for (uint32_t r = 0; r < o->repeat; r++) free(runs[r].tokens);
  free(runs);
  free(rates);
  free(logits);
  gpu_release(&g);
  tandem_runtime_destroy(g.rt);
  llama_unload(m);
  free(m);
  free(o);
  if (messages) fprintf(stderr, "llama: %llu validation messages\n", (unsigned long long)messages);
  return bad || messages ? 1 : 0;
}
