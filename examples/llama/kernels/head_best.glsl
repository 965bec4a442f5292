// head_best.glsl — the LM head and greedy sampling as one node (llama.c
// --head-node on, after the persistent step's layers): y = W · RMSNorm(x, g)
// into the logits, and the index of the largest logit (the lowest such
// index on ties, as argmax.glsl) as token pos + 1 of the history, unless
// pos + 1 is still inside the prompt; with ADVANCE the position moves on.
//
// The product is matvec_wide.glsl's: LANES invocations a weight row, each
// issuing its ITER 16-byte loads (eight f16 weights) before any arithmetic,
// the row's partial sums and the norm's sum of squares (from the same x
// loads) added over the cluster with shuffles. BLOCK_SIZE / LANES rows a
// workgroup.
//
// The argmax needs no second node. A (logit, row) pair becomes one 64-bit
// key, ordered as the pairs are: the logit's bits made monotonic (sign
// flipped, negatives inverted; -0 taken as +0) in the high word, 2^32 - 1 -
// row in the low word, so that a larger key is a larger logit or, at equal
// logits, a lower row; 0 is below every key (no candidate: NaN logits are
// never one). Each workgroup folds its best key into Best.key with
// atomicMax (skipped when the key there is already larger), then counts
// itself in Best.count; the workgroup that counts last reads the key, writes
// the token and the position, and sets both words back to 0 for the next
// step (the host zeroes them once and checks them after a run). The two
// words sit 128 bytes apart: the counter's adds do not queue behind the
// maximum's. Best is coherent and every atomic is followed (or, for the last
// workgroup, preceded) by memoryBarrierBuffer, the form decoder.glsl uses.
// All logits NaN: no key, and the token is VOCAB - 1, as in decoder.glsl;
// --check's comparison of the logits is what catches such a step.
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_KHR_memory_scope_semantics : require
#define LLAMA_CLUSTER_ADD 1
#include "common.glsl"

layout(constant_id = 1) const uint NROWS = 64;  // the vocabulary
layout(constant_id = 2) const uint NCOLS = 64;  // the hidden size, a multiple of 8
layout(constant_id = 3) const float EPS = 1e-5;
layout(constant_id = 4) const uint LANES = 32;  // invocations a row: a power of two <= subgroup
layout(constant_id = 5) const uint MAX_SEQ = 64;
layout(constant_id = 6) const uint ADVANCE = 0;

const uint N8 = NCOLS / 8;                   // uvec4 a row
const uint ITER = (N8 + LANES - 1) / LANES;  // loads an invocation

layout(binding = 0) readonly buffer Weights { uvec4 w[]; };
layout(binding = 1) readonly buffer Input { vec4 x[]; };
layout(binding = 2) readonly buffer Gain { vec4 g[]; };
layout(binding = 3) writeonly buffer Logits { float y[]; };
layout(binding = 4) buffer Params { uint pos; uint prompt_len; } params;
layout(binding = 5) buffer History { uint tokens[]; };  // MAX_SEQ + 1 entries
layout(binding = 6) coherent buffer Best {
  uint64_t key;
  uint pad[30];
  uint count;  // 128 bytes after key
} best;

shared uvec2 s_key[BLOCK_SIZE / 4 + 1];  // each subgroup's best key (high, low)

float dot8(uvec4 wv, vec4 a, vec4 b) {
  return dot(vec4(unpackHalf2x16(wv.x), unpackHalf2x16(wv.y)), a) +
         dot(vec4(unpackHalf2x16(wv.z), unpackHalf2x16(wv.w)), b);
}

// The key of logit v at row r (v not NaN), as (high, low).
uvec2 key_of(float v, uint r) {
  const uint b = v == 0.0 ? 0u : floatBitsToUint(v);
  return uvec2((b & 0x80000000u) != 0u ? ~b : b | 0x80000000u, 0xFFFFFFFFu - r);
}

// The larger of the subgroup's keys, to every invocation.
uvec2 subgroup_best(uvec2 k) {
  const uint hi = subgroupMax(k.x);
  return uvec2(hi, subgroupMax(k.x == hi ? k.y : 0u));
}

void main() {
  const uint lane = gl_SubgroupInvocationID % LANES;
  // a row's LANES invocations are consecutive in one subgroup (the shuffles' clusters)
  const uint row = (gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID) * (gl_SubgroupSize / LANES) +
                   gl_SubgroupInvocationID / LANES;
  const bool live = row < NROWS;  // uniform in the cluster
  uvec4 wv[ITER];
  [[unroll]] for (uint i = 0; i < ITER; i++) {
    const uint c = lane + i * LANES;
    wv[i] = live && c < N8 ? w[row * N8 + c] : uvec4(0);
  }
  float a = 0.0, ss = 0.0;
  [[unroll]] for (uint i = 0; i < ITER; i++) {
    const uint c = lane + i * LANES;
    if (c < N8) {
      const vec4 xa = x[2 * c], xb = x[2 * c + 1];
      ss += dot(xa, xa) + dot(xb, xb);
      a += dot8(wv[i], xa * g[2 * c], xb * g[2 * c + 1]);
    }
  }
  // every invocation takes part: the clusters of rows past NROWS add zeros
  a = cluster_add(a, LANES);
  ss = cluster_add(ss, LANES);
  const float v = a * (1.0 / sqrt(ss / float(NCOLS) + EPS));
  const bool leader = live && lane == 0;
  if (leader) y[row] = v;
  uvec2 k = subgroup_best(leader && !isnan(v) ? key_of(v, row) : uvec2(0));
  if (subgroupElect()) s_key[gl_SubgroupID] = k;
  barrier();
  if (gl_LocalInvocationID.x != 0) return;
  for (uint s = 1; s < gl_NumSubgroups; s++) {
    const uvec2 o = s_key[s];
    if (o.x > k.x || (o.x == k.x && o.y > k.y)) k = o;
  }
  const uint64_t key = (uint64_t(k.x) << 32) | uint64_t(k.y);
  const uint64_t seen = atomicLoad(best.key, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  if (key > seen) atomicMax(best.key, key);
  memoryBarrierBuffer();
  if (atomicAdd(best.count, 1u) != gl_NumWorkGroups.x - 1u) return;
  // the last workgroup: every other one has folded its key in
  memoryBarrierBuffer();
  const uint64_t top = atomicExchange(best.key, 0ul);
  atomicExchange(best.count, 0u);
  const uint r = 0xFFFFFFFFu - uint(top & 0xFFFFFFFFul);  // 2^32 - 1 with no key
  const uint next = min(params.pos, MAX_SEQ - 1) + 1;
  if (next >= params.prompt_len) tokens[next] = min(r, NROWS - 1);
  if (ADVANCE != 0) params.pos = params.pos + 1;
}
