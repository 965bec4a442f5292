// attn_o.glsl — the attention and the output projection (with its residual
// add) as one node: every workgroup computes the whole token's attention
// (all heads, keys and values from the cache that the Q/K/V product with
// RoPE filled, matvec_wide.glsl MV_ROPE) into shared memory, then ROWS rows
// of x += W_o · attention. The attention is tiny (HEADS · (pos + 1) ·
// HEAD_DIM multiply-adds twice), so recomputing it in each of the
// D / ROWS workgroups costs less than the dependent dispatch it removes (on
// the H200 a dependent dispatch costs about 1.8 µs before its kernel does
// anything; bench/NOTES.md). The workgroup's W_o rows are loaded into
// registers first: they depend on nothing, so their loads overlap the
// attention's. That was the prediction; the H100 (2026-12-05) ran this node
// in 15.5 µs a layer against 11.3 for the two nodes it replaces, so it is
// opt-in (--attention fused) until it is profiled (bench/NOTES.md).
//
// The workgroup is NSG = BLOCK_SIZE / SG subgroups of SG invocations (SG the
// subgroup size the host planned for; full subgroups). Steps:
//   1. W_o rows into registers: cluster k (a subgroup) owns rows
//      row0 + k + j·NSG, j < RPC, each invocation ITER uvec4 of each row;
//   2. q (all heads) into shared memory;
//   3. scores: pairs (KV group, cached row), SL invocations per pair, each
//      DV / SL vec4 of the key, dotted with the group's HPG query heads;
//   4. softmax: a subgroup per head;
//   5. values: a subgroup per (KV group, vec4 column), its invocations over
//      the rows, one subgroupAdd per query head of the group;
//   6. the W_o rows: dot with the attention in shared memory, clusters of
//      SG invocations, x[row] += the sum.
#extension GL_KHR_shader_subgroup_shuffle : require
#define LLAMA_CLUSTER_ADD 1
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 1) const uint HEADS = 4;
layout(constant_id = 2) const uint KV_HEADS = 2;
layout(constant_id = 3) const uint HEAD_DIM = 16;
layout(constant_id = 4) const uint MAX_SEQ = 64;
layout(constant_id = 5) const float SCALE = 0.25;
layout(constant_id = 6) const uint SL = 4;    // invocations per (group, row) pair in the scores
layout(constant_id = 7) const uint NROWS = 64;  // rows of W_o (hidden size)
layout(constant_id = 8) const uint SG = 8;    // the subgroup size
layout(constant_id = 9) const uint RPC = 2;   // W_o rows per subgroup

layout(binding = 0) readonly buffer Params { uint pos; uint prompt_len; } params;
layout(binding = 1) readonly buffer Q { vec4 q[]; };  // rotated q heads (the qkv buffer)
layout(binding = 2) readonly buffer KeyCache { vec4 kc[]; };
layout(binding = 3) readonly buffer ValueCache { vec4 vc[]; };
layout(binding = 4) readonly buffer Weights { uvec4 w[]; };  // W_o, f16 [NROWS][HEADS·HEAD_DIM]
layout(binding = 5) buffer Residual { float y[]; };
#define PF_BINDING 6
#include "prefetch.glsl"

const uint QD = HEADS * HEAD_DIM;          // W_o's columns
const uint N8 = QD / 8;                    // uvec4 per W_o row
const uint ITER = (N8 + SG - 1) / SG;      // per invocation per row
const uint NSG = BLOCK_SIZE / SG;          // subgroups in the workgroup
const uint ROWS = NSG * RPC;               // W_o rows per workgroup
const uint DV = HEAD_DIM / 4;              // vec4 per head row
const uint VPL = DV / SL;                  // key vec4 per invocation per pair
const uint HPG = HEADS / KV_HEADS;         // query heads per KV group
const uint UNROLL = 4;

shared vec4 qs[QD / 4];
shared float p[HEADS * MAX_SEQ];
shared float inv_l[HEADS];
shared vec4 att[QD / 4];

float dot8(uvec4 wv, vec4 a, vec4 b) {
  return dot(vec4(unpackHalf2x16(wv.x), unpackHalf2x16(wv.y)), a) +
         dot(vec4(unpackHalf2x16(wv.z), unpackHalf2x16(wv.w)), b);
}

void main() {
  if (prefetch_group()) return;
  const uint sgid = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint tid = sgid * SG + lane;
  const uint row0 = gl_WorkGroupID.x * ROWS;

  // 1. this subgroup's W_o rows into registers (their loads overlap what follows)
  uvec4 wr[RPC * ITER];
  [[unroll]] for (uint j = 0; j < RPC; j++) {
    const uint row = row0 + sgid + j * NSG;
    [[unroll]] for (uint i = 0; i < ITER; i++) {
      const uint c = lane + i * SG;
      wr[j * ITER + i] = uvec4(0);
      if (row < NROWS && c < N8) wr[j * ITER + i] = w[row * N8 + c];
    }
  }

  // 2. q
  const uint pos = min(params.pos, MAX_SEQ - 1), seq = pos + 1;
  for (uint i = tid; i < QD / 4; i += BLOCK_SIZE) qs[i] = q[i];
  barrier();

  // 3. scores of every query head: (group, row) pairs
  const uint KV4 = KV_HEADS * DV;
  const uint li = tid % SL, rr = tid / SL, per_pass = BLOCK_SIZE / SL;
  const uint pairs = KV_HEADS * seq;
  for (uint p0 = 0; p0 < pairs; p0 += per_pass * UNROLL) {
    vec4 kv[UNROLL * VPL];
    [[unroll]] for (uint u = 0; u < UNROLL; u++) {
      const uint pi = p0 + u * per_pass + rr;
      const uint g = pi / seq, t = pi % seq;
      [[unroll]] for (uint k = 0; k < VPL; k++) {
        kv[u * VPL + k] = vec4(0.0);
        if (pi < pairs) kv[u * VPL + k] = kc[t * KV4 + g * DV + li + k * SL];
      }
    }
    [[unroll]] for (uint u = 0; u < UNROLL; u++) {
      const uint pi = p0 + u * per_pass + rr;
      const uint g = min(pi / seq, KV_HEADS - 1), t = pi % seq;
      for (uint hh = 0; hh < HPG; hh++) {
        const uint h = g * HPG + hh;
        float acc = 0.0;
        [[unroll]] for (uint k = 0; k < VPL; k++)
          acc += dot(qs[h * DV + li + k * SL], kv[u * VPL + k]);
        acc = cluster_add(acc, SL);
        if (li == 0 && pi < pairs) p[h * MAX_SEQ + t] = acc * SCALE;
      }
    }
  }
  barrier();

  // 4. softmax, a subgroup per head
  for (uint h = sgid; h < HEADS; h += NSG) {
    float m = NEG_HUGE;
    for (uint t = lane; t < seq; t += SG) m = max(m, p[h * MAX_SEQ + t]);
    m = subgroupMax(m);
    float l = 0.0;
    for (uint t = lane; t < seq; t += SG) {
      const float e = exp(p[h * MAX_SEQ + t] - m);
      p[h * MAX_SEQ + t] = e;
      l += e;
    }
    l = subgroupAdd(l);
    if (subgroupElect()) inv_l[h] = 1.0 / l;
  }
  barrier();

  // 5. values: a subgroup per (group, vec4 column); its query heads at once
  for (uint it = sgid; it < KV_HEADS * DV; it += NSG) {
    const uint g = it / DV, col = it % DV;
    vec4 acc[HPG];
    for (uint hh = 0; hh < HPG; hh++) acc[hh] = vec4(0.0);
    for (uint t0 = lane; t0 < seq; t0 += SG * UNROLL) {
      vec4 v[UNROLL];
      [[unroll]] for (uint u = 0; u < UNROLL; u++) {
        const uint t = t0 + u * SG;
        v[u] = vec4(0.0);
        if (t < seq) v[u] = vc[t * KV4 + g * DV + col];
      }
      [[unroll]] for (uint u = 0; u < UNROLL; u++) {
        const uint t = min(t0 + u * SG, seq - 1);  // v[u] is 0 past the end
        for (uint hh = 0; hh < HPG; hh++) acc[hh] += p[(g * HPG + hh) * MAX_SEQ + t] * v[u];
      }
    }
    for (uint hh = 0; hh < HPG; hh++) {
      const vec4 s = subgroupAdd(acc[hh]);
      const uint h = g * HPG + hh;
      if (subgroupElect()) att[h * DV + col] = s * inv_l[h];
    }
  }
  barrier();

  // 6. x[row] += W_o[row] · attention
  [[unroll]] for (uint j = 0; j < RPC; j++) {
    const uint row = row0 + sgid + j * NSG;
    float acc = 0.0;
    [[unroll]] for (uint i = 0; i < ITER; i++) {
      const uint c = lane + i * SG;
      if (c < N8) acc += dot8(wr[j * ITER + i], att[2 * c], att[2 * c + 1]);
    }
    acc = subgroupAdd(acc);
    if (row < NROWS && subgroupElect()) y[row] += acc;
  }
}
