/* SPDX-License-Identifier: MIT */
/*
 * reference.c — the Llama decoder on the CPU, the check the GPU's logits are
 * held to: the same model (RMSNorm, rotate-half RoPE from the same table,
 * grouped-query attention over a KV cache, SwiGLU MLP, tied or untied head)
 * with the same f16 weights and f32 gains, f32 activations and double sums.
 * It runs one position at a time, like the GPU's step, teacher-forced with the
 * tokens the caller gives it. Slow by design (every weight converted on every
 * use); meant for the tiny CI configurations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

struct llama_reference {
  const llama_model_t *m;
  uint32_t max_seq;
  float *kc, *vc; /* [layers][max_seq][kv_heads * head_dim] */
  float *rope;    /* [max_seq][head_dim / 2][2] */
  float *x, *xn, *q, *k, *v, *attn, *g, *u, *h, *scores;
};

llama_reference_t *llama_reference_create(const llama_model_t *m, uint32_t max_seq) {
  const llama_config_t *c = &m->c;
  llama_reference_t *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->m = m;
  r->max_seq = max_seq;
  const size_t kv = (size_t)c->kv_heads * c->head_dim, q = (size_t)c->heads * c->head_dim;
  const size_t wide = c->dim > q ? c->dim : q;
  r->kc = calloc((size_t)c->layers * max_seq * kv, sizeof(float));
  r->vc = calloc((size_t)c->layers * max_seq * kv, sizeof(float));
  r->rope = calloc((size_t)max_seq * c->head_dim, sizeof(float));
  r->x = calloc(c->dim, sizeof(float));
  r->xn = calloc(wide, sizeof(float));
  r->q = calloc(q, sizeof(float));
  r->k = calloc(kv, sizeof(float));
  r->v = calloc(kv, sizeof(float));
  r->attn = calloc(q, sizeof(float));
  r->g = calloc(c->ffn, sizeof(float));
  r->u = calloc(c->ffn, sizeof(float));
  r->h = calloc(c->ffn, sizeof(float));
  r->scores = calloc(max_seq, sizeof(float));
  if (!r->kc || !r->vc || !r->rope || !r->x || !r->xn || !r->q || !r->k || !r->v || !r->attn ||
      !r->g || !r->u || !r->h || !r->scores) {
    llama_reference_destroy(r);
    return NULL;
  }
  llama_rope_table(c, max_seq, r->rope);
  return r;
}

void llama_reference_destroy(llama_reference_t *r) {
  if (!r) return;
  float *all[] = {r->kc, r->vc,   r->rope, r->x, r->xn, r->q,     r->k,
                  r->v,  r->attn, r->g,    r->u, r->h,  r->scores};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
  free(r);
}

static void rmsnorm(const float *x, const llama_tensor_t *g, float eps, float *y, uint32_t n) {
  double ss = 0.0;
  for (uint32_t i = 0; i < n; i++) ss += (double)x[i] * x[i];
  const float scale = 1.0f / sqrtf((float)(ss / n) + eps);
  for (uint32_t i = 0; i < n; i++) y[i] = x[i] * scale * llama_gain_f32(g, i);
}

/* y[r] (+)= W[r] · x over the tensor's rows. */
static void matvec(const llama_tensor_t *w, const float *x, float *y, bool accumulate) {
  for (uint64_t r = 0; r < w->rows; r++) {
    double acc = 0.0;
    for (uint64_t c = 0; c < w->cols; c++)
      acc += (double)llama_f32_from_f16(llama_weight_f16(w, r * w->cols + c)) * x[c];
    y[r] = accumulate ? y[r] + (float)acc : (float)acc;
  }
}

static void rotate(float *v, const float *cs, uint32_t half) {
  for (uint32_t d = 0; d < half; d++) {
    const float c = cs[2 * d], s = cs[2 * d + 1], a = v[d], b = v[d + half];
    v[d] = a * c - b * s;
    v[d + half] = b * c + a * s;
  }
}

void llama_reference_step(llama_reference_t *r, uint32_t pos, uint32_t token, float *logits) {
  const llama_model_t *m = r->m;
  const llama_config_t *c = &m->c;
  const uint32_t D = c->dim, HD = c->head_dim, half = HD / 2, group = c->heads / c->kv_heads;
  const size_t KV = (size_t)c->kv_heads * HD;
  for (uint32_t i = 0; i < D; i++)
    r->x[i] = llama_f32_from_f16(llama_weight_f16(&m->embed, (uint64_t)token * D + i));
  const float *cs = r->rope + (size_t)pos * HD;
  const float scale = 1.0f / sqrtf((float)HD);
  for (uint32_t l = 0; l < c->layers; l++) {
    const llama_layer_t *L = &m->layer[l];
    float *kc = r->kc + (size_t)l * r->max_seq * KV, *vc = r->vc + (size_t)l * r->max_seq * KV;
    rmsnorm(r->x, &L->attn_norm, c->eps, r->xn, D);
    matvec(&L->q, r->xn, r->q, false);
    matvec(&L->k, r->xn, r->k, false);
    matvec(&L->v, r->xn, r->v, false);
    for (uint32_t h = 0; h < c->heads; h++) rotate(r->q + (size_t)h * HD, cs, half);
    for (uint32_t h = 0; h < c->kv_heads; h++) rotate(r->k + (size_t)h * HD, cs, half);
    memcpy(kc + pos * KV, r->k, KV * sizeof(float));
    memcpy(vc + pos * KV, r->v, KV * sizeof(float));
    for (uint32_t h = 0; h < c->heads; h++) {
      const size_t ko = (size_t)(h / group) * HD;
      float mx = -INFINITY;
      for (uint32_t t = 0; t <= pos; t++) {
        double acc = 0.0;
        for (uint32_t d = 0; d < HD; d++) acc += (double)r->q[h * HD + d] * kc[t * KV + ko + d];
        r->scores[t] = (float)acc * scale;
        if (r->scores[t] > mx) mx = r->scores[t];
      }
      double sum = 0.0;
      for (uint32_t t = 0; t <= pos; t++) sum += (r->scores[t] = expf(r->scores[t] - mx));
      for (uint32_t d = 0; d < HD; d++) {
        double acc = 0.0;
        for (uint32_t t = 0; t <= pos; t++) acc += (double)r->scores[t] * vc[t * KV + ko + d];
        r->attn[h * HD + d] = (float)(acc / sum);
      }
    }
    matvec(&L->o, r->attn, r->x, true);
    rmsnorm(r->x, &L->mlp_norm, c->eps, r->xn, D);
    matvec(&L->gate, r->xn, r->g, false);
    matvec(&L->up, r->xn, r->u, false);
    for (uint32_t i = 0; i < c->ffn; i++) r->h[i] = r->g[i] / (1.0f + expf(-r->g[i])) * r->u[i];
    matvec(&L->down, r->h, r->x, true);
  }
  rmsnorm(r->x, &m->norm, c->eps, r->xn, D);
  matvec(&m->head, r->xn, logits, false);
}
