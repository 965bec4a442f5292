/* SPDX-License-Identifier: MIT */
/*
 * safetensors.c — loads a Llama-family checkpoint as transformers'
 * save_pretrained writes it: config.json, and model.safetensors (or the
 * shards model.safetensors.index.json names). Each safetensors file is an
 * 8-byte little-endian header length, a JSON header (parsed with jansson)
 * mapping tensor names to dtype, shape and data_offsets, then the data; the
 * file is mmapped and tensors point into the mapping (nothing is copied here).
 * Also the f16 conversions every weight goes through and the RoPE table.
 * Every failure prints what was read, where, and what was expected.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llama.h"

static bool fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("llama: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return false;
}

const char *llama_dtype_name(llama_dtype_t dtype) {
  return dtype == LLAMA_F16 ? "F16" : dtype == LLAMA_BF16 ? "BF16" : "F32";
}

/*---------------------------------------------------------------------------
 * Conversions
 *---------------------------------------------------------------------------*/

/* IEEE binary16 from binary32, rounding to nearest even. */
uint16_t llama_f16_from_f32(float f) {
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

float llama_f32_from_f16(uint16_t h) {
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

float llama_gain_f32(const llama_tensor_t *t, uint64_t i) {
  switch (t->dtype) {
    case LLAMA_F16: {
      uint16_t h;
      memcpy(&h, t->data + 2 * i, 2);
      return llama_f32_from_f16(h);
    }
    case LLAMA_BF16: {
      uint16_t h;
      memcpy(&h, t->data + 2 * i, 2);
      const uint32_t x = (uint32_t)h << 16; /* bf16 is the top half of an f32 */
      float f;
      memcpy(&f, &x, sizeof f);
      return f;
    }
    default: {
      float f;
      memcpy(&f, t->data + 4 * i, 4);
      return f;
    }
  }
}

uint16_t llama_weight_f16(const llama_tensor_t *t, uint64_t i) {
  if (t->dtype == LLAMA_F16) {
    uint16_t h;
    memcpy(&h, t->data + 2 * i, 2);
    return h;
  }
  return llama_f16_from_f32(llama_gain_f32(t, i));
}

void llama_rope_table(const llama_config_t *c, uint32_t max_seq, float *table) {
  const uint32_t half = c->head_dim / 2;
  for (uint32_t i = 0; i < half; i++) {
    double inv = pow(c->rope_theta, -2.0 * i / c->head_dim);
    if (c->rope_llama3) { /* transformers' _compute_llama3_parameters */
      const double low_wavelen = c->rope_original_max_pos / c->rope_low_freq;
      const double high_wavelen = c->rope_original_max_pos / c->rope_high_freq;
      const double wavelen = 2.0 * M_PI / inv;
      if (wavelen > low_wavelen) {
        inv /= c->rope_factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (c->rope_original_max_pos / wavelen - c->rope_low_freq) /
                              (c->rope_high_freq - c->rope_low_freq);
        inv = (1.0 - smooth) * inv / c->rope_factor + smooth * inv;
      }
    }
    for (uint32_t p = 0; p < max_seq; p++) {
      table[((size_t)p * half + i) * 2 + 0] = (float)cos(p * inv);
      table[((size_t)p * half + i) * 2 + 1] = (float)sin(p * inv);
    }
  }
}

/*---------------------------------------------------------------------------
 * config.json
 *---------------------------------------------------------------------------*/

static bool get_uint(json_t *cfg, const char *key, uint32_t *out, bool required, const char *path) {
  json_t *v = json_object_get(cfg, key);
  if (!v || json_is_null(v)) {
    if (required) return fail("%s: no \"%s\" (a transformers LlamaConfig has it)", path, key);
    return true;
  }
  if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > (1 << 30))
    return fail("%s: \"%s\" is not a positive integer", path, key);
  *out = (uint32_t)json_integer_value(v);
  return true;
}

static bool get_real(json_t *obj, const char *key, double *out, const char *path) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return true;
  if (!json_is_number(v)) return fail("%s: \"%s\" is not a number", path, key);
  *out = json_number_value(v);
  return true;
}

static bool read_config(const char *dir, llama_config_t *c) {
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", dir);
  json_error_t err;
  json_t *cfg = json_load_file(path, 0, &err);
  if (!cfg) return fail("%s: %s (line %d)", path, err.text, err.line);
  bool ok = json_is_object(cfg);
  if (!ok) fail("%s: not a JSON object", path);
  memset(c, 0, sizeof *c);
  c->max_pos = 2048;
  c->tied = true; /* PretrainedConfig's default; LlamaConfig writes the key */
  ok = ok && get_uint(cfg, "hidden_size", &c->dim, true, path) &&
       get_uint(cfg, "intermediate_size", &c->ffn, true, path) &&
       get_uint(cfg, "num_hidden_layers", &c->layers, true, path) &&
       get_uint(cfg, "num_attention_heads", &c->heads, true, path) &&
       get_uint(cfg, "vocab_size", &c->vocab, true, path) &&
       get_uint(cfg, "max_position_embeddings", &c->max_pos, false, path);
  if (ok) {
    c->kv_heads = c->heads;
    c->head_dim = c->dim / c->heads;
    ok = get_uint(cfg, "num_key_value_heads", &c->kv_heads, false, path) &&
         get_uint(cfg, "head_dim", &c->head_dim, false, path);
  }
  double eps = 1e-6, theta = 10000.0;
  ok = ok && get_real(cfg, "rms_norm_eps", &eps, path) && get_real(cfg, "rope_theta", &theta, path);
  /* transformers 5 writes rope_parameters; 4.x wrote rope_theta and rope_scaling */
  json_t *rope = json_object_get(cfg, "rope_parameters");
  if (!rope || json_is_null(rope)) rope = json_object_get(cfg, "rope_scaling");
  if (ok && rope && json_is_object(rope)) {
    ok = get_real(rope, "rope_theta", &theta, path);
    json_t *type = json_object_get(rope, "rope_type");
    if (!type) type = json_object_get(rope, "type");
    const char *t = json_is_string(type) ? json_string_value(type) : "default";
    if (!strcmp(t, "llama3")) {
      c->rope_llama3 = true;
      c->rope_factor = 8.0, c->rope_low_freq = 1.0, c->rope_high_freq = 4.0;
      c->rope_original_max_pos = 8192.0;
      ok = ok && get_real(rope, "factor", &c->rope_factor, path) &&
           get_real(rope, "low_freq_factor", &c->rope_low_freq, path) &&
           get_real(rope, "high_freq_factor", &c->rope_high_freq, path) &&
           get_real(rope, "original_max_position_embeddings", &c->rope_original_max_pos, path);
    } else if (strcmp(t, "default")) {
      ok = fail("%s: rope type \"%s\" is not supported (default and llama3 are)", path, t);
    }
  }
  c->eps = (float)eps;
  c->rope_theta = theta;
  json_t *tie = json_object_get(cfg, "tie_word_embeddings");
  if (ok && tie) c->tied = json_is_true(tie);
  const char *flags[] = {"attention_bias", "mlp_bias"};
  for (int i = 0; ok && i < 2; i++)
    if (json_is_true(json_object_get(cfg, flags[i])))
      ok = fail("%s: \"%s\": true is not supported (Llama has no biases)", path, flags[i]);
  json_t *act = json_object_get(cfg, "hidden_act");
  if (ok && act && (!json_is_string(act) || strcmp(json_string_value(act), "silu")))
    ok = fail("%s: hidden_act must be \"silu\" (SwiGLU)", path);
  if (ok && (c->heads % c->kv_heads || c->head_dim % 2))
    ok = fail("%s: %u heads, %u KV heads, head_dim %u: heads must be a multiple of the KV "
              "heads and head_dim even",
              path, c->heads, c->kv_heads, c->head_dim);
  json_decref(cfg);
  return ok;
}

/*---------------------------------------------------------------------------
 * safetensors
 *---------------------------------------------------------------------------*/

/* One header entry, found by name across the mapped files. */
typedef struct header_set {
  json_t *headers[64];
  const uint8_t *data[64]; /* start of each file's data section */
  uint64_t data_bytes[64];
  const char *paths[64];
  uint32_t count;
} header_set_t;

static bool map_file(const char *path, llama_model_t *m, header_set_t *hs) {
  if (hs->count == 64) return fail("%s: more than 64 safetensors shards", path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) || st.st_size < 8) {
    close(fd);
    return fail("%s: not a safetensors file (%lld bytes)", path, (long long)st.st_size);
  }
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return fail("%s: mmap: %s", path, strerror(errno));
  m->maps[m->file_count] = p;
  m->map_bytes[m->file_count] = (size_t)st.st_size;
  m->file_count++;
  uint64_t n = 0;
  for (int i = 0; i < 8; i++) n |= (uint64_t)((const uint8_t *)p)[i] << (8 * i);
  if (n > (uint64_t)st.st_size - 8)
    return fail("%s: header of %llu bytes in a file of %lld", path, (unsigned long long)n,
                (long long)st.st_size);
  json_error_t err;
  json_t *h = json_loadb((const char *)p + 8, (size_t)n, 0, &err);
  if (!h || !json_is_object(h)) {
    json_decref(h);
    return fail("%s: header is not a JSON object: %s", path, err.text);
  }
  hs->headers[hs->count] = h;
  hs->data[hs->count] = (const uint8_t *)p + 8 + n;
  hs->data_bytes[hs->count] = (uint64_t)st.st_size - 8 - n;
  hs->paths[hs->count] = strdup(path);
  hs->count++;
  return true;
}

/* Finds |name| with |rows| x |cols| elements (rows 0: a vector of cols). */
static bool find_tensor(header_set_t *hs, llama_model_t *m, const char *name, uint64_t rows,
                        uint64_t cols, llama_tensor_t *out, bool optional) {
  for (uint32_t f = 0; f < hs->count; f++) {
    json_t *e = json_object_get(hs->headers[f], name);
    if (!e) continue;
    const char *path = hs->paths[f];
    const char *dt = json_string_value(json_object_get(e, "dtype"));
    json_t *shape = json_object_get(e, "shape"), *off = json_object_get(e, "data_offsets");
    if (!dt || !json_is_array(shape) || !json_is_array(off) || json_array_size(off) != 2)
      return fail("%s: tensor %s: no dtype, shape or data_offsets", path, name);
    llama_dtype_t dtype;
    uint64_t esize;
    if (!strcmp(dt, "F16")) dtype = LLAMA_F16, esize = 2;
    else if (!strcmp(dt, "BF16")) dtype = LLAMA_BF16, esize = 2;
    else if (!strcmp(dt, "F32")) dtype = LLAMA_F32, esize = 4;
    else return fail("%s: tensor %s is %s; F16, BF16 and F32 are supported", path, name, dt);
    const size_t rank = json_array_size(shape);
    uint64_t got[2] = {0, 0};
    const size_t want_rank = rows ? 2 : 1;
    for (size_t i = 0; i < rank && i < 2; i++)
      got[i] = (uint64_t)json_integer_value(json_array_get(shape, i));
    if (rank != want_rank || (rows ? got[0] != rows || got[1] != cols : got[0] != cols))
      return fail("%s: tensor %s has shape [%llu%s%llu] (rank %zu); config.json needs "
                  "[%llu%s%llu]",
                  path, name, (unsigned long long)got[0], rank > 1 ? ", " : "",
                  (unsigned long long)(rank > 1 ? got[1] : 0), rank,
                  (unsigned long long)(rows ? rows : cols), rows ? ", " : "",
                  (unsigned long long)(rows ? cols : 0));
    const uint64_t begin = (uint64_t)json_integer_value(json_array_get(off, 0));
    const uint64_t end = (uint64_t)json_integer_value(json_array_get(off, 1));
    const uint64_t count = (rows ? rows : 1) * cols;
    if (end < begin || end - begin != count * esize || end > hs->data_bytes[f])
      return fail("%s: tensor %s: data_offsets [%llu, %llu] do not hold %llu %s values inside "
                  "the %llu data bytes",
                  path, name, (unsigned long long)begin, (unsigned long long)end,
                  (unsigned long long)count, dt, (unsigned long long)hs->data_bytes[f]);
    *out = (llama_tensor_t){dtype, rows ? rows : 1, cols, hs->data[f] + begin};
    m->weight_bytes += end - begin;
    m->dtype_counts[dtype]++;
    return true;
  }
  if (optional) return true;
  return fail("no tensor %s in the checkpoint (%u safetensors file%s)", name, hs->count,
              hs->count == 1 ? "" : "s");
}

/* Fails if a weight does not fit f16 (it would become infinite on the GPU). */
static bool check_f16_range(const llama_tensor_t *t, const char *name) {
  if (t->dtype == LLAMA_F16) return true;
  const uint64_t n = t->rows * t->cols;
  for (uint64_t i = 0; i < n; i++) {
    const float v = llama_gain_f32(t, i);
    if (fabsf(v) > 65504.0f)
      return fail("tensor %s: element %llu is %g, outside f16's range (weights are converted "
                  "to f16 for the GPU)",
                  name, (unsigned long long)i, (double)v);
  }
  return true;
}

bool llama_load(const char *dir, llama_model_t *m) {
  memset(m, 0, sizeof *m);
  if (!read_config(dir, &m->c)) return false;
  header_set_t hs = {0};
  char path[4096];
  bool ok = true;
  snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
  if (access(path, R_OK) == 0) {
    json_error_t err;
    json_t *index = json_load_file(path, 0, &err);
    json_t *map = json_object_get(index, "weight_map");
    if (!json_is_object(map)) {
      ok = fail("%s: no \"weight_map\" object", path);
    } else {
      const char *key;
      json_t *file;
      json_t *seen = json_object();
      json_object_foreach(map, key, file) {
        const char *f = json_string_value(file);
        if (!f || json_object_get(seen, f)) continue;
        json_object_set_new(seen, f, json_true());
        char shard[4096];
        snprintf(shard, sizeof shard, "%s/%s", dir, f);
        if (!(ok = map_file(shard, m, &hs))) break;
      }
      json_decref(seen);
    }
    json_decref(index);
  } else {
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    ok = map_file(path, m, &hs);
  }
  const llama_config_t *c = &m->c;
  const uint64_t D = c->dim, Q = (uint64_t)c->heads * c->head_dim,
                 KV = (uint64_t)c->kv_heads * c->head_dim, F = c->ffn;
  ok = ok && find_tensor(&hs, m, "model.embed_tokens.weight", c->vocab, D, &m->embed, false) &&
       find_tensor(&hs, m, "model.norm.weight", 0, D, &m->norm, false) &&
       check_f16_range(&m->embed, "model.embed_tokens.weight");
  if (ok) {
    llama_tensor_t head = {0};
    ok = find_tensor(&hs, m, "lm_head.weight", c->vocab, D, &head, true);
    if (ok && head.data && !c->tied) {
      m->head = head;
      ok = check_f16_range(&m->head, "lm_head.weight");
    } else if (ok && !head.data && !c->tied) {
      ok = fail("config.json says tie_word_embeddings false but the checkpoint has no "
                "lm_head.weight");
    } else {
      m->head = m->embed;
    }
  }
  m->layer = calloc(c->layers, sizeof *m->layer);
  if (!m->layer) ok = fail("out of memory");
  for (uint32_t l = 0; ok && l < c->layers; l++) {
    llama_layer_t *L = &m->layer[l];
    struct {
      const char *name;
      uint64_t rows, cols;
      llama_tensor_t *t;
    } want[] = {{"self_attn.q_proj", Q, D, &L->q},
                {"self_attn.k_proj", KV, D, &L->k},
                {"self_attn.v_proj", KV, D, &L->v},
                {"self_attn.o_proj", D, Q, &L->o},
                {"mlp.gate_proj", F, D, &L->gate},
                {"mlp.up_proj", F, D, &L->up},
                {"mlp.down_proj", D, F, &L->down},
                {"input_layernorm", 0, D, &L->attn_norm},
                {"post_attention_layernorm", 0, D, &L->mlp_norm}};
    for (size_t i = 0; ok && i < sizeof want / sizeof want[0]; i++) {
      char name[256];
      snprintf(name, sizeof name, "model.layers.%u.%s.weight", l, want[i].name);
      ok = find_tensor(&hs, m, name, want[i].rows, want[i].cols, want[i].t, false) &&
           (!want[i].rows || check_f16_range(want[i].t, name));
    }
  }
  for (uint32_t f = 0; f < hs.count; f++) {
    json_decref(hs.headers[f]);
    free((void *)hs.paths[f]);
  }
  if (!ok) llama_unload(m);
  return ok;
}

void llama_unload(llama_model_t *m) {
  for (uint32_t f = 0; f < m->file_count; f++) munmap(m->maps[f], m->map_bytes[f]);
  free(m->layer);
  memset(m, 0, sizeof *m);
}
