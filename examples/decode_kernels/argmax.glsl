// argmax.glsl — greedy sampling: the index of the largest logit (the lowest
// such index on ties), written as the next token for the next step's
// embedding lookup. One workgroup: each invocation scans a strided slice,
// then the workgroup reduces (value, index) pairs — with subgroup max/min
// (DECODE_SUBGROUPS) or a shared-memory tree.
#include "common.glsl"

layout(constant_id = 1) const uint VOCAB = 512;

layout(binding = 0) readonly buffer Logits { float logits[]; };
layout(binding = 1) writeonly buffer Token { uint token; };

shared float best_v[BLOCK_SIZE];
shared uint best_i[BLOCK_SIZE];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  float bv = NEG_HUGE;
  uint bi = 0xFFFFFFFFu;
  for (uint i = tid; i < VOCAB; i += BLOCK_SIZE) {
    const float l = logits[i];
    if (l > bv) { bv = l; bi = i; }
  }
#ifdef DECODE_SUBGROUPS
  const float sv = subgroupMax(bv);
  const uint si = subgroupMin(bv == sv ? bi : 0xFFFFFFFFu);
  if (subgroupElect()) { best_v[gl_SubgroupID] = sv; best_i[gl_SubgroupID] = si; }
  barrier();
  if (tid == 0) {
    float v0 = best_v[0];
    uint i0 = best_i[0];
    for (uint g = 1; g < gl_NumSubgroups; g++) {
      if (best_v[g] > v0 || (best_v[g] == v0 && best_i[g] < i0)) {
        v0 = best_v[g];
        i0 = best_i[g];
      }
    }
    token = i0;
  }
#else
  best_v[tid] = bv;
  best_i[tid] = bi;
  barrier();
  for (uint s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
    if (tid < s) {
      const float ov = best_v[tid + s];
      const uint oi = best_i[tid + s];
      if (ov > best_v[tid] || (ov == best_v[tid] && oi < best_i[tid])) {
        best_v[tid] = ov;
        best_i[tid] = oi;
      }
    }
    barrier();
  }
  if (tid == 0) token = best_i[0];
#endif
}
