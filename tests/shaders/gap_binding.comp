// SPDX-License-Identifier: MIT
// gap_binding.comp — test kernel whose storage buffers are at bindings 0 and 2.
//
// Binding 1 is skipped. tandem numbers contract bindings 0..n-1 without gaps,
// so loading this kernel with any contract must fail (ERROR_CONTRACT, naming
// the binding numbers).
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 2) buffer C { uint c[]; };

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(a.length()) && i < uint(c.length())) {
    c[i] = a[i];
  }
}
