// argmax.glsl — greedy sampling on the GPU: the index of the largest logit
// (the lowest such index on ties) becomes token pos + 1 of the history the
// next step's embedding reads — unless pos + 1 is still inside the prompt,
// whose ids the history already holds (prefill). One workgroup: each
// invocation scans a strided slice (VOCAB / BLOCK_SIZE logits), then
// subgroup max/min and one pass over the subgroups' winners. With ADVANCE
// (the host's --pos-lane gpu) it also moves the step's position on by one,
// so the next submission of the same, unchanged graph is the next position:
// the step's last kernel is the only writer of the parameters, and every
// other kernel of the step has read them before it runs.
#include "common.glsl"

layout(constant_id = 1) const uint VOCAB = 256;
layout(constant_id = 2) const uint MAX_SEQ = 64;
layout(constant_id = 3) const uint ADVANCE = 0;

layout(binding = 0) buffer Params { uint pos; uint prompt_len; } params;
layout(binding = 1) readonly buffer Logits { float logits[]; };
layout(binding = 2) buffer History { uint tokens[]; };  // MAX_SEQ + 1 entries

shared float best_v[BLOCK_SIZE / 4 + 1];
shared uint best_i[BLOCK_SIZE / 4 + 1];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  float bv = NEG_HUGE;
  uint bi = 0xFFFFFFFFu;
  for (uint i = tid; i < VOCAB; i += BLOCK_SIZE) {
    const float l = logits[i];
    if (l > bv) { bv = l; bi = i; }
  }
  const float sv = subgroupMax(bv);
  const uint si = subgroupMin(bv == sv ? bi : 0xFFFFFFFFu);
  if (subgroupElect()) { best_v[gl_SubgroupID] = sv; best_i[gl_SubgroupID] = si; }
  barrier();
  if (tid == 0) {
    float v0 = best_v[0];
    uint i0 = best_i[0];
    for (uint s = 1; s < gl_NumSubgroups; s++) {
      if (best_v[s] > v0 || (best_v[s] == v0 && best_i[s] < i0)) {
        v0 = best_v[s];
        i0 = best_i[s];
      }
    }
    const uint next = min(params.pos, MAX_SEQ - 1) + 1;
    if (next >= params.prompt_len) tokens[next] = i0;
    if (ADVANCE != 0) params.pos = params.pos + 1;
  }
}
