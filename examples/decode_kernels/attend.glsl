// attend.glsl — softmax over the scores of one head and the weighted sum of
// the cached values: o_h = Σ_t softmax(s_h)[t] · V[t]_h for t < seq, where
// seq = pos + 1 is a push constant. One workgroup per head (HEADS
// workgroups); the probabilities live in shared memory sized by the
// specialization constant MAX_SEQ.
#include "common.glsl"

layout(constant_id = 1) const uint DIM = 256;
layout(constant_id = 2) const uint HEAD_DIM = 64;
layout(constant_id = 3) const uint MAX_SEQ = 128;

layout(push_constant) uniform Params { uint seq; } params;

layout(binding = 0) readonly buffer Scores { float s[]; };
layout(binding = 1) readonly buffer Values { float v[]; };
layout(binding = 2) writeonly buffer Output { float o[]; };

shared float p[MAX_SEQ];

void main() {
  const uint h = gl_WorkGroupID.x;
  const uint tid = gl_LocalInvocationID.x;
  const uint seq = min(params.seq, MAX_SEQ);
  float m = NEG_HUGE;
  for (uint t = tid; t < seq; t += BLOCK_SIZE) m = max(m, s[h * MAX_SEQ + t]);
  m = block_max(m);
  float l = 0.0;
  for (uint t = tid; t < seq; t += BLOCK_SIZE) {
    const float e = exp(s[h * MAX_SEQ + t] - m);
    p[t] = e;
    l += e;
  }
  l = block_sum(l);  // its barriers also make p[] visible to the workgroup
  const float inv = 1.0 / l;
  for (uint d = tid; d < HEAD_DIM; d += BLOCK_SIZE) {
    float acc = 0.0;
    for (uint t = 0; t < seq; t++) acc += p[t] * v[t * DIM + h * HEAD_DIM + d];
    o[h * HEAD_DIM + d] = acc * inv;
  }
}
