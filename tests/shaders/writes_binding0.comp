// SPDX-License-Identifier: MIT
// writes_binding0.comp — test kernel that writes binding 0: a[i] = b[i], i < n.
//
// Binding 0 is NOT readonly (the shader writes it), binding 1 is readonly, and
// the push-constant block is 4 bytes. Tests declare binding 0 as READ in the
// contract and expect the load to be rejected (ERROR_CONTRACT).
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) writeonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uint b[]; };

layout(push_constant) uniform Push {
  uint n;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) {
    a[i] = b[i];
  }
}
