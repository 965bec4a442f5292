// SPDX-License-Identifier: MIT
// spec_block.comp — the pattern real projects use: the workgroup size comes from
// SpecId 0 and the code assumes a block of BLOCK_SIZE (also SpecId 0).
//
// glslang emits two constants with SpecId 0: the WorkgroupSize x component
// (default 1) and BLOCK_SIZE (default 32). Each workgroup reverses a block of
// BLOCK_SIZE elements through shared memory and scales it by SCALE (SpecId 1):
//   y[b*B + l] = x[b*B + (B-1-l)] * SCALE,  B = BLOCK_SIZE.
// With the workgroup size and BLOCK_SIZE out of step the result is wrong, so
// tandem must refuse the kernel unless SpecId 0 is given.
#version 450

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint BLOCK_SIZE = 32;
layout(constant_id = 1) const float SCALE = 1.0;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };

shared float tile[BLOCK_SIZE];

void main() {
  uint base = gl_WorkGroupID.x * BLOCK_SIZE;
  uint l = gl_LocalInvocationID.x;
  tile[l] = x[base + l];
  barrier();
  y[base + l] = tile[BLOCK_SIZE - 1u - l] * SCALE;
}
