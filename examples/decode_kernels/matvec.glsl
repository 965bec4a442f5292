// matvec.glsl — y = W·x (+ r): the matrix-vector product of the decode step
// (the fused Q/K/V projection, the output projection, the MLP's gate/up and
// down projections, the tied LM head). One workgroup per output row: the
// workgroup count is the row count; the column count is specialization
// constant 1 (a multiple of 4: rows are read as vec4). W is row-major
// [rows][NCOLS], f16 or f32 (DECODE_F16); x, r and y are f32. With
// DECODE_RESIDUAL the kernel adds r (the residual stream) to each row.
#include "common.glsl"

layout(constant_id = 1) const uint NCOLS = 256;

layout(binding = 0) readonly buffer Weights { WTYPE4 w[]; };
layout(binding = 1) readonly buffer Input { vec4 x[]; };
#ifdef DECODE_RESIDUAL
layout(binding = 2) readonly buffer Residual { float r[]; };
layout(binding = 3) writeonly buffer Output { float y[]; };
#else
layout(binding = 2) writeonly buffer Output { float y[]; };
#endif

void main() {
  const uint row = gl_WorkGroupID.x;
  const uint tid = gl_LocalInvocationID.x;
  const uint n4 = NCOLS / 4;
  float acc = 0.0;
  for (uint c = tid; c < n4; c += BLOCK_SIZE) acc += dot(vec4(w[row * n4 + c]), x[c]);
  const float s = block_sum(acc);
  if (tid == 0) {
#ifdef DECODE_RESIDUAL
    y[row] = r[row] + s;
#else
    y[row] = s;
#endif
  }
}
