// SPDX-License-Identifier: MIT
// spec_types.comp — one specialization constant of every type tandem sets,
// written out so a test can read back what the pipeline was built with.
//   out[0] = I32 (int), out[1] = U32, out[2] = bits of F32, out[3] = FLAG,
//   out[4..5] = I64, out[6..7] = U64, out[8..9] = bits of F64.
#version 450
#extension GL_ARB_gpu_shader_int64 : require

layout(local_size_x = 1) in;

layout(constant_id = 10) const int I32 = -7;
layout(constant_id = 11) const uint U32 = 7u;
layout(constant_id = 12) const float F32 = 0.5;
layout(constant_id = 13) const bool FLAG = false;
layout(constant_id = 14) const int64_t I64 = -1l;
layout(constant_id = 15) const uint64_t U64 = 1ul;
layout(constant_id = 16) const double F64 = 0.25lf;

layout(std430, set = 0, binding = 0) writeonly buffer Out { uint o[]; };

void main() {
  o[0] = uint(I32);
  o[1] = U32;
  o[2] = floatBitsToUint(F32);
  o[3] = FLAG ? 1u : 0u;
  o[4] = uint(uint64_t(I64) & 0xFFFFFFFFul);
  o[5] = uint(uint64_t(I64) >> 32);
  o[6] = uint(U64 & 0xFFFFFFFFul);
  o[7] = uint(U64 >> 32);
  uvec2 d = unpackDouble2x32(F64);
  o[8] = d.x;
  o[9] = d.y;
}
