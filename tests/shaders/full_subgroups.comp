// SPDX-License-Identifier: MIT
// full_subgroups.comp — each invocation writes how many invocations its
// subgroup has active and the subgroup size. With full subgroups required
// (TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS) the two agree everywhere.
//   o[2 * gid] = subgroupAdd(1), o[2 * gid + 1] = gl_SubgroupSize
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) writeonly buffer Out { uint o[]; };

void main() {
  uint g = gl_GlobalInvocationID.x;
  o[2u * g] = subgroupAdd(1u);
  o[2u * g + 1u] = gl_SubgroupSize;
}
