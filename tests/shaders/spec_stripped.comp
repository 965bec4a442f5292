// SPDX-License-Identifier: MIT
// spec_stripped.comp — built with STRIPPED (spirv-opt --eliminate-dead-const,
// as glslc -O does): UNUSED (SpecId 2) is removed from the module, while a
// runtime such as llama.cpp still passes a value for it. FLAG is a bool a
// runtime may set as a 4-byte 0 or 1 (VkBool32).
//   o[0] = A, o[1] = B, o[2] = FLAG ? 1 : 0, o[3] = bits of F
#version 450

layout(local_size_x = 1) in;

layout(constant_id = 0) const uint A = 1u;
layout(constant_id = 1) const uint B = 2u;
layout(constant_id = 2) const uint UNUSED = 3u;
layout(constant_id = 3) const bool FLAG = false;
layout(constant_id = 4) const float F = 0.5;

layout(std430, set = 0, binding = 0) writeonly buffer Out { uint o[]; };

void main() {
  o[0] = A;
  o[1] = B;
  o[2] = FLAG ? 1u : 0u;
  o[3] = floatBitsToUint(F);
}
