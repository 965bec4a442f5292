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
  m = block_max(m);
  float l = 0.0;
  for (uint t = tid; t < seq; t += BLOCK_SIZE) {
    const float e = exp(p[t] - m);
    p[t] = e;
    l += e;
  }
  l = block_sum(l);  // its barriers also make p[] visible to the workgroup
  const float inv = 1.0 / l;
  for (uint d = tid; d < HEAD_DIM; d += BLOCK_SIZE) {
    float acc = 0.0;
    for (uint t = 0; t < pos; t++) acc += p[t] * vc[t * KV_DIM + group * HEAD_DIM + d];
    acc += p[pos] * vp[d];
    o[qo + d] = acc * inv;
  }
}
