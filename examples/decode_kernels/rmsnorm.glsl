// rmsnorm.glsl — y = x / sqrt(mean(x²) + eps) · g: RMSNorm over one vector of
// DIM floats (specialization constant 1) in a single workgroup, with f32
// gains g. Used before attention, before the MLP and before the LM head.
#include "common.glsl"

layout(constant_id = 1) const uint DIM = 256;
layout(constant_id = 2) const float EPS = 1e-5;

layout(binding = 0) readonly buffer Input { float x[]; };
layout(binding = 1) readonly buffer Gain { float g[]; };
layout(binding = 2) writeonly buffer Output { float y[]; };

void main() {
  const uint tid = gl_LocalInvocationID.x;
  float ss = 0.0;
  for (uint i = tid; i < DIM; i += BLOCK_SIZE) ss += x[i] * x[i];
  ss = block_sum(ss);
  const float scale = 1.0 / sqrt(ss / float(DIM) + EPS);
  for (uint i = tid; i < DIM; i += BLOCK_SIZE) y[i] = x[i] * scale * g[i];
}
