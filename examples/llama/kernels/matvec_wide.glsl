// matvec_wide.glsl — the decoder's mat-vec products for a GPU whose time
// per product is memory latency, not bandwidth (the per-layer matrices are
// 0.7–3.5 MB: at 4 TB/s under a microsecond, less than one dependent round
// trip of loads). So every invocation issues all of its weight loads at once
// and then does arithmetic: LANES invocations per weight row (a power of two,
// at most the subgroup size), each reading ITER = ceil(NCOLS / 8 / LANES)
// 16-byte uvec4 (eight f16 weights) in an unrolled loop with no dependency
// between loads, the row's LANES partial sums added with a clustered
// subgroupAdd — no shared memory, no barrier. A workgroup of BLOCK_SIZE
// invocations computes BLOCK_SIZE / LANES rows; the host picks LANES and the
// workgroup size per device and matrix (llama.c, matvec_shape), so that even
// the 576-row products have a few hundred workgroups. Weights row-major f16
// [NROWS][NCOLS], NCOLS a multiple of 8; x and y f32.
//
// Variants (defined by the .comp wrappers):
//   MV_NORM      x is RMS-normalised with gain g. The norm's scale is one
//                number, so the product is scale · (W · (x∘g)): the scale's
//                sum of squares comes from the same x loads the dot products
//                use (a row's LANES invocations read all of x between them)
//                and the same clustered add, so the norm costs no barrier and
//                no extra pass.
//   MV_RESIDUAL  y[r] += W[r] · x (the output and down projections).
//   MV_SWIGLU    with MV_NORM: a row of the gate (binding 0) and the up
//                (binding 1) projections, h[r] = silu(g·x) · (u·x).
//   MV_ROPE      with MV_NORM, the Q/K/V product with RoPE and the KV-cache
//                write fused: each row cluster computes the pair of rows
//                (d, d + HEAD_DIM/2) of one head, rotates q and k (rotate-half,
//                transformers' Llama, angles from the host's (cos, sin)
//                table), writes q into y and k, v into row pos of the
//                layer's caches — so the attention that follows reads every
//                key and value from the cache and does no RoPE of its own.
// Every variant can also prefetch a later node's weights (prefetch.glsl).
#extension GL_KHR_shader_subgroup_shuffle : require
#define LLAMA_CLUSTER_ADD 1
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 1) const uint NROWS = 64;
layout(constant_id = 2) const uint NCOLS = 64;
layout(constant_id = 3) const float EPS = 1e-5;
layout(constant_id = 4) const uint LANES = 8;  // invocations per row (power of two)
#ifdef MV_ROPE
layout(constant_id = 5) const uint HEADS = 4;
layout(constant_id = 6) const uint KV_HEADS = 2;
layout(constant_id = 7) const uint HEAD_DIM = 16;
layout(constant_id = 8) const uint MAX_SEQ = 64;
#endif

const uint N8 = NCOLS / 8;                      // uvec4 per row
const uint ITER = (N8 + LANES - 1) / LANES;     // loads per invocation per row

#ifdef MV_SWIGLU
layout(binding = 0) readonly buffer Gate { uvec4 wg[]; };
layout(binding = 1) readonly buffer Up { uvec4 wu[]; };
layout(binding = 2) readonly buffer Input { vec4 x[]; };
layout(binding = 3) readonly buffer Gain { vec4 g[]; };
layout(binding = 4) writeonly buffer Output { float y[]; };
#else
layout(binding = 0) readonly buffer Weights { uvec4 w[]; };
layout(binding = 1) readonly buffer Input { vec4 x[]; };
#ifdef MV_NORM
layout(binding = 2) readonly buffer Gain { vec4 g[]; };
layout(binding = 3) writeonly buffer Output { float y[]; };
#elif defined(MV_RESIDUAL)
layout(binding = 2) buffer Output { float y[]; };
#else
layout(binding = 2) writeonly buffer Output { float y[]; };
#endif
#endif
#ifdef MV_ROPE
layout(binding = 4) readonly buffer Params { uint pos; uint prompt_len; } params;
layout(binding = 5) readonly buffer Rope { vec2 cs[]; };
layout(binding = 6) writeonly buffer KeyCache { float kc[]; };
layout(binding = 7) writeonly buffer ValueCache { float vc[]; };
#define PF_BINDING 8
#elif defined(MV_SWIGLU)
#define PF_BINDING 5
#elif defined(MV_NORM)
#define PF_BINDING 4
#else
#define PF_BINDING 3
#endif
#include "prefetch.glsl"

// Eight f16 weights (one uvec4, element 0 in the low half of .x) times
// x[8c .. 8c + 8).
float dot8(uvec4 wv, vec4 a, vec4 b) {
  return dot(vec4(unpackHalf2x16(wv.x), unpackHalf2x16(wv.y)), a) +
         dot(vec4(unpackHalf2x16(wv.z), unpackHalf2x16(wv.w)), b);
}

void main() {
  if (prefetch_group()) return;
  const uint lane = gl_SubgroupInvocationID % LANES;
  // a row's LANES invocations are consecutive in one subgroup (the clustered add's clusters)
  const uint item = (gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID) * (gl_SubgroupSize / LANES) +
                    gl_SubgroupInvocationID / LANES;
#ifdef MV_ROPE
  const uint half_dim = HEAD_DIM / 2;
  const uint head = item / half_dim, d = item % half_dim;
  const uint row0 = head * HEAD_DIM + d, row1 = row0 + half_dim;
  if (row1 >= NROWS) return;  // uniform in the cluster
  const uint pos = min(params.pos, MAX_SEQ - 1);  // its load overlaps the weights'
#elif defined(MV_SWIGLU)
  const uint row0 = item, row1 = item;
  if (row0 >= NROWS) return;
#else
  const uint row0 = item;
  if (row0 >= NROWS) return;
#endif
  float a0 = 0.0;
#if defined(MV_ROPE) || defined(MV_SWIGLU)
  float a1 = 0.0;
#endif
#ifdef MV_NORM
  float ss = 0.0;
#endif
  [[unroll]] for (uint i = 0; i < ITER; i++) {
    const uint c = lane + i * LANES;
    if (c < N8) {
#ifdef MV_SWIGLU
      const uvec4 w0 = wg[row0 * N8 + c], w1 = wu[row1 * N8 + c];
#elif defined(MV_ROPE)
      const uvec4 w0 = w[row0 * N8 + c], w1 = w[row1 * N8 + c];
#else
      const uvec4 w0 = w[row0 * N8 + c];
#endif
      vec4 xa = x[2 * c], xb = x[2 * c + 1];
#ifdef MV_NORM
      ss += dot(xa, xa) + dot(xb, xb);
      xa *= g[2 * c];
      xb *= g[2 * c + 1];
#endif
      a0 += dot8(w0, xa, xb);
#if defined(MV_ROPE) || defined(MV_SWIGLU)
      a1 += dot8(w1, xa, xb);
#endif
    }
  }
  a0 = cluster_add(a0, LANES);
#if defined(MV_ROPE) || defined(MV_SWIGLU)
  a1 = cluster_add(a1, LANES);
#endif
#ifdef MV_NORM
  ss = cluster_add(ss, LANES);
  const float scale = 1.0 / sqrt(ss / float(NCOLS) + EPS);
  a0 *= scale;
#if defined(MV_ROPE) || defined(MV_SWIGLU)
  a1 *= scale;
#endif
#endif
  if (lane != 0) return;
#ifdef MV_SWIGLU
  y[row0] = a0 / (1.0 + exp(-a0)) * a1;
#elif defined(MV_RESIDUAL)
  y[row0] += a0;
#elif defined(MV_ROPE)
  const uint KV_DIM = KV_HEADS * HEAD_DIM;
  if (head < HEADS + KV_HEADS) {  // q or k: rotate the pair
    const vec2 r = cs[pos * half_dim + d];
    const float b0 = a0 * r.x - a1 * r.y, b1 = a1 * r.x + a0 * r.y;
    a0 = b0;
    a1 = b1;
  }
  if (head < HEADS) {
    y[row0] = a0;
    y[row1] = a1;
  } else if (head < HEADS + KV_HEADS) {
    const uint at = pos * KV_DIM + (head - HEADS) * HEAD_DIM + d;
    kc[at] = a0;
    kc[at + half_dim] = a1;
  } else {
    const uint at = pos * KV_DIM + (head - HEADS - KV_HEADS) * HEAD_DIM + d;
    vc[at] = a0;
    vc[at + half_dim] = a1;
  }
#else
  y[row0] = a0;
#endif
}
