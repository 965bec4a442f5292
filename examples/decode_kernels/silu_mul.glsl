// silu_mul.glsl — the gate of the SiLU-gated MLP: h[i] = silu(g[i]) · u[i],
// where the fused gate/up projection holds g in its first FFN floats and u in
// the next FFN.
#include "common.glsl"

layout(constant_id = 1) const uint FFN = 512;

layout(binding = 0) readonly buffer GateUp { float gu[]; };
layout(binding = 1) writeonly buffer Output { float h[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= FFN) return;
  const float g = gu[i];
  h[i] = g / (1.0 + exp(-g)) * gu[FFN + i];
}
