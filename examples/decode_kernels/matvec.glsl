// matvec.glsl — y = W·x (+ r): the matrix-vector product of the decode step
// (the fused Q/K/V projection, the output projection, the MLP's gate/up and
// down projections, the tied LM head). Each workgroup computes NUM_ROWS
// consecutive rows (specialization constant 2), so the workgroup count is
// rows / NUM_ROWS; the column count is specialization constant 1 (a multiple
// of 4: rows are read as vec4). W is row-major [rows][NCOLS], f16 or f32
// (DECODE_F16); x, r and y are f32. With DECODE_RESIDUAL the kernel adds r
// (the residual stream) to each row. The NUM_ROWS partial sums are reduced
// together: one barrier per product with subgroups, log2(BLOCK_SIZE) without.
#include "common.glsl"

layout(constant_id = 1) const uint NCOLS = 256;
layout(constant_id = 2) const uint NUM_ROWS = 1;

layout(binding = 0) readonly buffer Weights { WTYPE4 w[]; };
layout(binding = 1) readonly buffer Input { vec4 x[]; };
#ifdef DECODE_RESIDUAL
layout(binding = 2) readonly buffer Residual { float r[]; };
layout(binding = 3) writeonly buffer Output { float y[]; };
#else
layout(binding = 2) writeonly buffer Output { float y[]; };
#endif

// Row j's partial sums at [j * BLOCK_SIZE ...].
shared float partial[NUM_ROWS * BLOCK_SIZE];

void main() {
  const uint row0 = gl_WorkGroupID.x * NUM_ROWS;
  const uint tid = gl_LocalInvocationID.x;
  const uint n4 = NCOLS / 4;
  float acc[NUM_ROWS];
  for (uint j = 0; j < NUM_ROWS; j++) acc[j] = 0.0;
  for (uint c = tid; c < n4; c += BLOCK_SIZE) {
    const vec4 xv = x[c];
    for (uint j = 0; j < NUM_ROWS; j++) acc[j] += dot(vec4(w[(row0 + j) * n4 + c]), xv);
  }
#ifdef DECODE_SUBGROUPS
  for (uint j = 0; j < NUM_ROWS; j++) {
    const float s = subgroupAdd(acc[j]);
    if (subgroupElect()) partial[j * BLOCK_SIZE + gl_SubgroupID] = s;
  }
  barrier();
  const uint parts = gl_NumSubgroups;
#else
  for (uint j = 0; j < NUM_ROWS; j++) partial[j * BLOCK_SIZE + tid] = acc[j];
  barrier();
  for (uint s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
    if (tid < s)
      for (uint j = 0; j < NUM_ROWS; j++) partial[j * BLOCK_SIZE + tid] += partial[j * BLOCK_SIZE + tid + s];
    barrier();
  }
  const uint parts = 1;
#endif
  if (tid < NUM_ROWS) {
    float sum = 0.0;
    for (uint i = 0; i < parts; i++) sum += partial[tid * BLOCK_SIZE + i];
#ifdef DECODE_RESIDUAL
    y[row0 + tid] = r[row0 + tid] + sum;
#else
    y[row0 + tid] = sum;
#endif
  }
}
