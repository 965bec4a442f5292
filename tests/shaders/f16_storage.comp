// SPDX-License-Identifier: MIT
// f16_storage.comp — weights stored as 16-bit floats (storageBuffer16BitAccess),
// arithmetic in 32-bit floats, as llama.cpp's f16 kernels do:
//   y[i] = float(w[i]) * x[i] + float(b[i % 2]) for i < n.
// Workgroup size from SpecId 0. Push constants: { uint n; }.
#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) readonly buffer W { float16_t w[]; };
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { f16vec2 b; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Push {
  uint n;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) y[i] = float(w[i]) * x[i] + float(b[i % 2u]);
}
