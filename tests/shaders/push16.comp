// SPDX-License-Identifier: MIT
// push16.comp — test kernel with a 16-byte push-constant block (one uvec4).
//
// v[i] = p.y + p.z * i + p.w for i < p.x, binding 0 writable. Tests check that
// contracts declaring any push-constant size but 16 are rejected, and that the
// 16 bytes given at record time reach the shader intact.
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) writeonly buffer Data { uint v[]; };

layout(push_constant) uniform Push {
  uvec4 p;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.p.x) {
    v[i] = pc.p.y + pc.p.z * i + pc.p.w;
  }
}
