// SPDX-License-Identifier: MIT
// saxpy.comp — y[i] = a * x[i] + y[i] for i < n.
//
// tandem's reference kernel: one read-only binding (x), one read-write binding
// (y) and an 8-byte push-constant block. Examples, tests and benchmarks load it
// from the embedded SPIR-V (tandem_spv_saxpy) with a contract of
// { READ n*4 bytes, READ_WRITE n*4 bytes } and 8 push-constant bytes.
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };

layout(push_constant) uniform Push {
  float a;
  uint n;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) {
    y[i] = pc.a * x[i] + y[i];
  }
}
