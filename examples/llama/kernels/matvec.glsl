// matvec.glsl — the decoder's matrix-vector products, one subgroup per
// weight row: y[r] = W[r] · x. W is row-major f16 [NROWS][NCOLS] (NCOLS a
// multiple of 4, read as f16vec4); x and y are f32. Each weight is read once
// per product; the subgroup sums its lanes' partial dot products with
// subgroupAdd, so there is no shared memory and no barrier in the product.
// A workgroup of BLOCK_SIZE invocations computes gl_NumSubgroups consecutive
// rows; the host dispatches ceil(NROWS / (BLOCK_SIZE / subgroup size))
// workgroups. Variants (defined by the .comp wrappers):
//   MATVEC_NORM     x is first RMS-normalised with gain g: the workgroup sums
//                   x² (every workgroup: x is small and in cache), then reads
//                   x[c] · scale · g[c] — RMSNorm fused into the product that
//                   follows it (Q/K/V, the LM head).
//   MATVEC_RESIDUAL y[r] += W[r] · x: the residual add fused into the output
//                   and down projections (y is the residual stream, read and
//                   written in place; each row only by its own subgroup).
//   MATVEC_SWIGLU   with MATVEC_NORM: rows of the gate (binding 0) and up
//                   (binding 1) projections together, h[r] = silu(g·x)·(u·x).
#include "common.glsl"

layout(constant_id = 1) const uint NROWS = 64;
layout(constant_id = 2) const uint NCOLS = 64;
layout(constant_id = 3) const float EPS = 1e-5;

#ifdef MATVEC_SWIGLU
layout(binding = 0) readonly buffer Gate { f16vec4 wg[]; };
layout(binding = 1) readonly buffer Up { f16vec4 wu[]; };
layout(binding = 2) readonly buffer Input { vec4 x[]; };
layout(binding = 3) readonly buffer Gain { vec4 g[]; };
layout(binding = 4) writeonly buffer Output { float y[]; };
#else
layout(binding = 0) readonly buffer Weights { f16vec4 w[]; };
layout(binding = 1) readonly buffer Input { vec4 x[]; };
#ifdef MATVEC_NORM
layout(binding = 2) readonly buffer Gain { vec4 g[]; };
layout(binding = 3) writeonly buffer Output { float y[]; };
#elif defined(MATVEC_RESIDUAL)
layout(binding = 2) buffer Output { float y[]; };
#else
layout(binding = 2) writeonly buffer Output { float y[]; };
#endif
#endif

void main() {
  const uint n4 = NCOLS / 4;
  const uint lane = gl_SubgroupInvocationID, lanes = gl_SubgroupSize;
#ifdef MATVEC_NORM
  float ss = 0.0;
  for (uint c = gl_LocalInvocationID.x; c < n4; c += BLOCK_SIZE) ss += dot(x[c], x[c]);
  ss = block_sum(ss);
  const float scale = 1.0 / sqrt(ss / float(NCOLS) + EPS);
#endif
  const uint row = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  if (row >= NROWS) return;  // uniform in the subgroup: a row is one subgroup's
  const uint base = row * n4;
#ifdef MATVEC_SWIGLU
  float ag = 0.0, au = 0.0;
  for (uint c = lane; c < n4; c += lanes) {
    const vec4 xv = x[c] * scale * g[c];
    ag += dot(vec4(wg[base + c]), xv);
    au += dot(vec4(wu[base + c]), xv);
  }
  ag = subgroupAdd(ag);
  au = subgroupAdd(au);
  if (subgroupElect()) y[row] = ag / (1.0 + exp(-ag)) * au;
#else
  float acc = 0.0;
  for (uint c = lane; c < n4; c += lanes) {
#ifdef MATVEC_NORM
    const vec4 xv = x[c] * scale * g[c];
#else
    const vec4 xv = x[c];
#endif
    acc += dot(vec4(w[base + c]), xv);
  }
  acc = subgroupAdd(acc);
#ifdef MATVEC_RESIDUAL
  if (subgroupElect()) y[row] += acc;
#else
  if (subgroupElect()) y[row] = acc;
#endif
#endif
}
