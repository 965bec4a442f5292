// SPDX-License-Identifier: MIT
// scale_add.comp — c[i] = a[i] * scale + b[i] for i < n.
//
// Two read-only inputs and one write-only output (declared writeonly, so the
// output is decorated NonReadable), with an 8-byte push-constant block. Used to
// exercise three-binding contracts and write-only outputs.
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };

layout(push_constant) uniform Push {
  float scale;
  uint n;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) {
    c[i] = a[i] * pc.scale + b[i];
  }
}
