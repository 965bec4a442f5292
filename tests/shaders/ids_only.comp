// SPDX-License-Identifier: MIT
// ids_only.comp — ncnn style: the shader declares no size, only the SpecIds
// the runtime sets it through (233, 234, 235, defaults 1).
//
// out[gid] = in[gid] * 2 + local_size_x, for the whole 2-D grid: the value
// written shows which local size the pipeline was built with. Push constants:
// { uint width; } (row length of the grid, in elements).
#version 450

layout(local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout(std430, set = 0, binding = 0) readonly buffer In { uint in_v[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_v[]; };

layout(push_constant) uniform Push {
  uint width;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.y * pc.width + gl_GlobalInvocationID.x;
  out_v[i] = in_v[i] * 2u + gl_WorkGroupSize.x;
}
