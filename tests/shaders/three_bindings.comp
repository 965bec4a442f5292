// SPDX-License-Identifier: MIT
// three_bindings.comp — test kernel with three storage buffers and no push
// constants: c[i] = a[i] + b[i] over the shortest of the three arrays.
//
// Bindings 0 and 1 are readonly, binding 2 is written. Tests use it to check
// that a contract with the wrong binding count, or with push-constant bytes the
// shader does not declare, is rejected at load.
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { uint c[]; };

void main() {
  uint i = gl_GlobalInvocationID.x;
  uint n = min(uint(c.length()), min(uint(a.length()), uint(b.length())));
  if (i < n) {
    c[i] = a[i] + b[i];
  }
}
