// SPDX-License-Identifier: MIT
// subgroup_sum.comp — a block reduction the way real kernels write it: each
// subgroup reduces with subgroupAdd, subgroup leaders combine through shared
// memory. One workgroup sums BLOCK_SIZE consecutive uints:
//   sums[g] = x[g*B] + ... + x[g*B + B-1],  B = BLOCK_SIZE = workgroup size.
// Workgroup size and BLOCK_SIZE share SpecId 0.
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint BLOCK_SIZE = 64;

layout(std430, set = 0, binding = 0) readonly buffer In { uint x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint sums[]; };

shared uint partial[BLOCK_SIZE];  // one per subgroup at most

void main() {
  uint l = gl_LocalInvocationID.x;
  uint v = subgroupAdd(x[gl_WorkGroupID.x * BLOCK_SIZE + l]);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  barrier();
  if (l == 0u) {
    uint total = 0u;
    for (uint s = 0u; s < gl_NumSubgroups; s++) total += partial[s];
    sums[gl_WorkGroupID.x] = total;
  }
}
