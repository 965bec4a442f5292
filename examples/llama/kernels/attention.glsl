// attention.glsl — one token's grouped-query attention for one query head
// per workgroup (HEADS workgroups), RoPE and the KV-cache write included.
// The step's position |pos| comes from the parameter row (binding 0), so the
// sequence this token attends over, pos + 1 rows of the cache, grows every
// token with no change to the dispatch. The workgroup:
//   1. rotates its query head and its group's key (rotate-half RoPE, as
//      transformers' Llama: pairs (d, d + HEAD_DIM/2), angles from a (cos,
//      sin) table [MAX_SEQ][HEAD_DIM/2] the host computed in double);
//   2. if it is the group's first query head, writes the rotated key and the
//      value into row pos of the layer's caches ([MAX_SEQ][KV_HEADS·HEAD_DIM]);
//      the group's other heads use their own copy of row pos and never read
//      it from the cache, so no workgroup reads what another writes;
//   3. computes the scores over rows 0..pos (one row per invocation, in
//      shared memory), the softmax with workgroup max/sum, and the weighted
//      sum of the values.
// Loops run at most MAX_SEQ / BLOCK_SIZE and HEAD_DIM times per invocation.
//
// ATTENTION_SPREAD (llama_attention_spread.comp, the default) spreads steps 3's
// dot products over the whole workgroup, the way a memory-latency-bound
// kernel wants it: scores are computed by groups of SPREAD invocations per
// cached row (BLOCK_SIZE / SPREAD rows per pass, each invocation HEAD_DIM /
// SPREAD independent loads, the group's partial sums added in shared
// memory), and the weighted sum of the values by BLOCK_SIZE / HEAD_DIM
// slices of the rows at once, four rows in flight per invocation, the
// slices added in shared memory. The plain variant (llama_attention.comp,
// --attention plain) has each invocation walk a whole row or a whole column:
// HEAD_DIM and pos dependent loads in a row, which the H200 showed to be the
// step's largest cost (bench/NOTES.md).
#include "common.glsl"

layout(constant_id = 1) const uint HEADS = 4;
layout(constant_id = 2) const uint KV_HEADS = 2;
layout(constant_id = 3) const uint HEAD_DIM = 16;
layout(constant_id = 4) const uint MAX_SEQ = 64;
layout(constant_id = 5) const float SCALE = 0.25;

layout(binding = 0) readonly buffer Params { uint pos; uint prompt_len; } params;
layout(binding = 1) readonly buffer QKV { float qkv[]; };  // q | k | v
layout(binding = 2) readonly buffer Rope { vec2 cs[]; };
layout(binding = 3) buffer KeyCache { float kc[]; };
layout(binding = 4) buffer ValueCache { float vc[]; };
layout(binding = 5) writeonly buffer Output { float o[]; };

shared float qs[HEAD_DIM], kp[HEAD_DIM], vp[HEAD_DIM];
shared float p[MAX_SEQ];
#ifdef ATTENTION_SPREAD
const uint SPREAD = 8;  // invocations per cached row in the scores
shared float part[BLOCK_SIZE + HEAD_DIM];
#endif

void main() {
  const uint h = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
  const uint group = h / (HEADS / KV_HEADS);
  const uint KV_DIM = KV_HEADS * HEAD_DIM, half_dim = HEAD_DIM / 2;
  const uint pos = min(params.pos, MAX_SEQ - 1), seq = pos + 1;
  const uint qo = h * HEAD_DIM, ko = HEADS * HEAD_DIM + group * HEAD_DIM;
  const uint vo = HEADS * HEAD_DIM + KV_DIM + group * HEAD_DIM;
  for (uint d = tid; d < half_dim; d += BLOCK_SIZE) {
    const vec2 r = cs[pos * half_dim + d];
    const float q0 = qkv[qo + d], q1 = qkv[qo + d + half_dim];
    const float k0 = qkv[ko + d], k1 = qkv[ko + d + half_dim];
    qs[d] = q0 * r.x - q1 * r.y;
    qs[d + half_dim] = q1 * r.x + q0 * r.y;
    kp[d] = k0 * r.x - k1 * r.y;
    kp[d + half_dim] = k1 * r.x + k0 * r.y;
    vp[d] = qkv[vo + d];
    vp[d + half_dim] = qkv[vo + d + half_dim];
  }
  barrier();
  if (h % (HEADS / KV_HEADS) == 0) {
    for (uint d = tid; d < HEAD_DIM; d += BLOCK_SIZE) {
      kc[pos * KV_DIM + group * HEAD_DIM + d] = kp[d];
      vc[pos * KV_DIM + group * HEAD_DIM + d] = vp[d];
    }
  }
#ifdef ATTENTION_SPREAD
  // scores: SPREAD invocations per row, BLOCK_SIZE / SPREAD rows per pass
  {
    const uint rows = BLOCK_SIZE / SPREAD, sub = tid % SPREAD, r = tid / SPREAD;
    for (uint t0 = 0; t0 < seq; t0 += rows) {
      const uint t = t0 + r;
      float acc = 0.0;
      if (t < pos) {
        const uint at = t * KV_DIM + group * HEAD_DIM;
        for (uint d = sub; d < HEAD_DIM; d += SPREAD) acc += qs[d] * kc[at + d];
      } else if (t == pos) {
        for (uint d = sub; d < HEAD_DIM; d += SPREAD) acc += qs[d] * kp[d];
      }
      part[tid] = acc;
      barrier();
      if (sub == 0 && t < seq) {
        float s = 0.0;
        for (uint i = 0; i < SPREAD; i++) s += part[tid + i];
        p[t] = s * SCALE;
      }
      barrier();
    }
  }
  float m = NEG_HUGE;
  for (uint t = tid; t < seq; t += BLOCK_SIZE) m = max(m, p[t]);
#else
  float m = NEG_HUGE;
  for (uint t = tid; t < seq; t += BLOCK_SIZE) {
    float acc = 0.0;
    if (t == pos) {
      for (uint d = 0; d < HEAD_DIM; d++) acc += qs[d] * kp[d];
    } else {
      for (uint d = 0; d < HEAD_DIM; d++) acc += qs[d] * kc[t * KV_DIM + group * HEAD_DIM + d];
    }
    p[t] = acc * SCALE;
    m = max(m, p[t]);
  }
#endif
  m = block_max(m);
  float l = 0.0;
  for (uint t = tid; t < seq; t += BLOCK_SIZE) {
    const float e = exp(p[t] - m);
    p[t] = e;
    l += e;
  }
  l = block_sum(l);  // its barriers also make p[] visible to the workgroup
  const float inv = 1.0 / l;
#ifdef ATTENTION_SPREAD
  // values: |slices| groups of HEAD_DIM invocations, each over every
  // slices-th row, four rows in flight; then the slices added
  const uint slices = BLOCK_SIZE >= HEAD_DIM ? BLOCK_SIZE / HEAD_DIM : 1;
  const uint slice = tid / HEAD_DIM;
  if (slice < slices) {
    for (uint d = tid % HEAD_DIM; d < HEAD_DIM; d += BLOCK_SIZE) {
      const uint col = group * HEAD_DIM + d;
      float a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
      uint t = slice;
      for (; t + 3 * slices < pos; t += 4 * slices) {
        a0 += p[t] * vc[t * KV_DIM + col];
        a1 += p[t + slices] * vc[(t + slices) * KV_DIM + col];
        a2 += p[t + 2 * slices] * vc[(t + 2 * slices) * KV_DIM + col];
        a3 += p[t + 3 * slices] * vc[(t + 3 * slices) * KV_DIM + col];
      }
      for (; t < pos; t += slices) a0 += p[t] * vc[t * KV_DIM + col];
      if (slice == 0) a0 += p[pos] * vp[d];
      part[slice * HEAD_DIM + d] = (a0 + a1) + (a2 + a3);
    }
  }
  barrier();
  for (uint d = tid; d < HEAD_DIM; d += BLOCK_SIZE) {
    float acc = 0.0;
    for (uint i = 0; i < slices; i++) acc += part[i * HEAD_DIM + d];
    o[qo + d] = acc * inv;
  }
#else
  for (uint d = tid; d < HEAD_DIM; d += BLOCK_SIZE) {
    float acc = 0.0;
    for (uint t = 0; t < pos; t++) acc += p[t] * vc[t * KV_DIM + group * HEAD_DIM + d];
    acc += p[pos] * vp[d];
    o[qo + d] = acc * inv;
  }
#endif
}
