// SPDX-License-Identifier: MIT
// copy_u32.comp — dst[i] = src[i] for i < n.
//
// Binding 0 readonly, binding 1 writeonly, push constants { uint n; } (4
// bytes). Ordering tests use it to move data between buffers inside a graph
// (read-after-write and write-after-read across dispatches).
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };

layout(push_constant) uniform Push {
  uint n;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) {
    dst[i] = src[i];
  }
}
