// SPDX-License-Identifier: MIT
// alias_vec4.comp — ncnn gemm style: one output bound twice, as scalars at
// binding 0 and as vec4s at binding 1, and written through both (disjoint
// elements, so no barrier is needed inside the dispatch). Invocation i owns
// floats 4i..4i+3: even i writes them as one vec4 (in * 2), odd i as four
// scalars (in * 3). Push constants: { uint n; } (vec4 count).
#version 450

layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) writeonly buffer S { float s[]; };
layout(std430, set = 0, binding = 1) writeonly buffer V { vec4 v[]; };
layout(std430, set = 0, binding = 2) readonly buffer In { vec4 x[]; };

layout(push_constant) uniform Push {
  uint n;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  vec4 a = x[i];
  if ((i & 1u) == 0u) {
    v[i] = a * 2.0;
  } else {
    for (uint k = 0u; k < 4u; k++) s[4u * i + k] = a[k] * 3.0;
  }
}
