// rmsnorm.glsl — y = rmsnorm(x) · g in one workgroup: the final norm written
// out on its own, for --npu, where the emulated NPU's matmul_f32 takes the
// normalised hidden state (the GPU's LM-head kernel fuses the norm instead).
#include "common.glsl"

layout(constant_id = 1) const uint NCOLS = 64;
layout(constant_id = 2) const float EPS = 1e-5;

layout(binding = 0) readonly buffer Input { float x[]; };
layout(binding = 1) readonly buffer Gain { float g[]; };
layout(binding = 2) writeonly buffer Output { float y[]; };

void main() {
  float ss = 0.0;
  for (uint c = gl_LocalInvocationID.x; c < NCOLS; c += BLOCK_SIZE) ss += x[c] * x[c];
  ss = block_sum(ss);
  const float scale = 1.0 / sqrt(ss / float(NCOLS) + EPS);
  for (uint c = gl_LocalInvocationID.x; c < NCOLS; c += BLOCK_SIZE) y[c] = x[c] * scale * g[c];
}
