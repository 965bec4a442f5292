// common.glsl — what every kernel of the Llama decoder shares: the workgroup
// size (specialization constant 0, read by the code as BLOCK_SIZE, the
// llama.cpp / ncnn pattern), subgroup reductions over the workgroup, the f16
// weight type, and the step's parameter row (position and prompt length,
// written each token by the step's first node from the per-submission
// position table). Kernels include it first; they need subgroup arithmetic and
// 16-bit storage (the host checks both and skips without them).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint BLOCK_SIZE = 64;

// One slot per subgroup (a subgroup has at least 4 invocations).
shared float red_f[BLOCK_SIZE / 4 + 1];

// The sum of |v| over the workgroup, returned to every invocation. Every
// invocation must call it (it has barriers).
float block_sum(float v) {
  v = subgroupAdd(v);
  if (subgroupElect()) red_f[gl_SubgroupID] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; i++) s += red_f[i];
  barrier();
  return s;
}

// The maximum of |v| over the workgroup, returned to every invocation.
float block_max(float v) {
  v = subgroupMax(v);
  if (subgroupElect()) red_f[gl_SubgroupID] = v;
  barrier();
  float m = red_f[0];
  for (uint i = 1; i < gl_NumSubgroups; i++) m = max(m, red_f[i]);
  barrier();
  return m;
}

#ifdef LLAMA_CLUSTER_ADD  // defined by the kernels that enable subgroup shuffles
// The sum of |v| over aligned clusters of |n| consecutive invocations of the
// subgroup (n a power of two, at most the subgroup size), returned to each:
// a butterfly of shuffles. GLSL's subgroupClusteredAdd wants a literal
// cluster size; this one takes a specialization constant. Every invocation of
// a cluster must be active.
float cluster_add(float v, uint n) {
  for (uint o = n / 2; o > 0; o /= 2) v += subgroupShuffleXor(v, o);
  return v;
}
#endif

// Below every finite float: the start value of a running maximum.
const float NEG_HUGE = -3.0e38;
