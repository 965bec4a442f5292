// SPDX-License-Identifier: MIT
// shared_rows.comp — workgroup memory sized by an expression of a spec
// constant (ROWS * 64 floats, an OpSpecConstantOp), as matrix kernels stage
// ROWS rows at a time. Each workgroup stages ROWS rows of 64 and writes their
// sums: out[g*ROWS + r] = sum(in[(g*ROWS + r)*64 .. +64]).
#version 450

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint ROWS = 4;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float o[]; };

shared float rows[ROWS * 64u];

void main() {
  uint l = gl_LocalInvocationID.x, base = gl_WorkGroupID.x * ROWS;
  for (uint r = 0u; r < ROWS; r++) rows[r * 64u + l] = x[(base + r) * 64u + l];
  barrier();
  if (l < ROWS) {
    float s = 0.0;
    for (uint i = 0u; i < 64u; i++) s += rows[l * 64u + i];
    o[base + l] = s;
  }
}
