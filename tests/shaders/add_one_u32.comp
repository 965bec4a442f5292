// SPDX-License-Identifier: MIT
// add_one_u32.comp — v[i] += 1 for i < n, binding 0 read-write.
//
// The building block of ordering tests: a chain of k dependent dispatches on
// one buffer must leave exactly k in every element; a missing barrier shows up
// as a smaller count. Push constants: { uint n; } (4 bytes).
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) buffer Data { uint v[]; };

layout(push_constant) uniform Push {
  uint n;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) {
    v[i] += 1u;
  }
}
