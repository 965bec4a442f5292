// SPDX-License-Identifier: MIT
// subgroup_clustered.comp — sums of clusters of 4 invocations with
// subgroupClusteredAdd (needs "subgroup clustered"; lavapipe lacks it, so
// there loading must fail with UNSUPPORTED naming the feature):
//   out[i] = x[i & ~3] + x[(i & ~3) + 1] + x[(i & ~3) + 2] + x[(i & ~3) + 3].
#version 450
#extension GL_KHR_shader_subgroup_clustered : require

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer In { uint x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint o[]; };

void main() {
  uint i = gl_GlobalInvocationID.x;
  o[i] = subgroupClusteredAdd(x[i], 4u);
}
