// attention_cached.glsl — one token's grouped-query attention for one query
// head per workgroup (HEADS workgroups), after the Q/K/V product that rotated
// q and k and wrote k, v into row pos of the caches (matvec_wide.glsl,
// MV_ROPE): so every key and value comes from the cache, and the kernel is
// two dependent rounds of loads (the position; then q, keys and values all
// at once) and arithmetic, the way a latency-bound kernel wants it.
//
// DV = HEAD_DIM / 4 vec4 per row. The workgroup is DV subgroups (BLOCK_SIZE =
// DV · subgroup size, checked by the host), and
//   scores:  SL = min(DV, subgroup) invocations per cached row, each DV / SL
//            vec4 of the key, the row's dot product by a clustered add;
//            BLOCK_SIZE / SL rows per pass, UNROLL passes' loads issued
//            before any is used; the scores into shared memory;
//   softmax: workgroup max and sum over the pos + 1 scores;
//   values:  subgroup s owns vec4 column s of the head; its invocations
//            take rows lane, lane + subgroup, ... (UNROLL at a time) and one
//            subgroupAdd gives the column — no shared-memory reduction.
// The value loads do not depend on the scores: each invocation's first
// UNROLL rows of values are loaded before the scores, beside the key loads.
#extension GL_KHR_shader_subgroup_shuffle : require
#define LLAMA_CLUSTER_ADD 1
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 1) const uint HEADS = 4;
layout(constant_id = 2) const uint KV_HEADS = 2;
layout(constant_id = 3) const uint HEAD_DIM = 16;
layout(constant_id = 4) const uint MAX_SEQ = 64;
layout(constant_id = 5) const float SCALE = 0.25;
layout(constant_id = 6) const uint SL = 4;  // invocations per row in the scores (power of two)

layout(binding = 0) readonly buffer Params { uint pos; uint prompt_len; } params;
layout(binding = 1) readonly buffer Q { vec4 q[]; };  // rotated q heads (the qkv buffer)
layout(binding = 2) readonly buffer KeyCache { vec4 kc[]; };
layout(binding = 3) readonly buffer ValueCache { vec4 vc[]; };
layout(binding = 4) writeonly buffer Output { vec4 o[]; };
#define PF_BINDING 5
#include "prefetch.glsl"  // the trailing workgroups prefetch the next products' weights

const uint DV = HEAD_DIM / 4;
const uint VPL = DV / SL;  // key vec4 per invocation per row
const uint UNROLL = 4;

shared float p[MAX_SEQ];

void main() {
  if (prefetch_group()) return;
  const uint h = gl_WorkGroupID.x;
  const uint group = h / (HEADS / KV_HEADS);
  const uint KV4 = KV_HEADS * DV;  // vec4 per cache row
  const uint pos = min(params.pos, MAX_SEQ - 1), seq = pos + 1;
  const uint fi = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
  const uint li = fi % SL, rr = fi / SL, rows = BLOCK_SIZE / SL;

  vec4 qv[VPL];
  [[unroll]] for (uint k = 0; k < VPL; k++) qv[k] = q[h * DV + li + k * SL];

  // the first UNROLL rows of each invocation's values, loaded now: they do
  // not depend on the scores, so their loads overlap the keys'
  const uint col = gl_SubgroupID, lanes = gl_SubgroupSize;  // values: subgroup = vec4 column
  vec4 vfirst[UNROLL];
  [[unroll]] for (uint u = 0; u < UNROLL; u++) {
    const uint t = gl_SubgroupInvocationID + u * lanes;
    vfirst[u] = vec4(0.0);
    if (col < DV && t < seq) vfirst[u] = vc[t * KV4 + group * DV + col];
  }

  // scores
  for (uint t0 = 0; t0 < seq; t0 += rows * UNROLL) {
    float s[UNROLL];
    [[unroll]] for (uint u = 0; u < UNROLL; u++) {
      const uint t = t0 + u * rows + rr;
      float acc = 0.0;
      if (t < seq) {
        [[unroll]] for (uint k = 0; k < VPL; k++)
          acc += dot(qv[k], kc[t * KV4 + group * DV + li + k * SL]);
      }
      s[u] = acc;
    }
    [[unroll]] for (uint u = 0; u < UNROLL; u++) {
      const uint t = t0 + u * rows + rr;
      const float sum = cluster_add(s[u], SL);
      if (li == 0 && t < seq) p[t] = sum * SCALE;
    }
  }
  barrier();
  float m = NEG_HUGE;
  for (uint t = fi; t < seq; t += BLOCK_SIZE) m = max(m, p[t]);
  m = block_max(m);
  float l = 0.0;
  for (uint t = fi; t < seq; t += BLOCK_SIZE) {
    const float e = exp(p[t] - m);
    p[t] = e;
    l += e;
  }
  l = block_sum(l);  // its barriers also make p[] visible to the workgroup

  vec4 acc = vec4(0.0);
  [[unroll]] for (uint u = 0; u < UNROLL; u++) {
    const uint t = gl_SubgroupInvocationID + u * lanes;
    if (col < DV && t < seq) acc += p[t] * vfirst[u];
  }
  if (col < DV) {
    for (uint t0 = gl_SubgroupInvocationID + lanes * UNROLL; t0 < seq; t0 += lanes * UNROLL) {
      [[unroll]] for (uint u = 0; u < UNROLL; u++) {
        const uint t = t0 + u * lanes;
        if (t < seq) acc += p[t] * vc[t * KV4 + group * DV + col];
      }
    }
  }
  acc = subgroupAdd(acc);
  if (col < DV && subgroupElect()) o[h * DV + col] = acc / l;
}
