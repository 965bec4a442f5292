// SPDX-License-Identifier: MIT
// write_counts.comp — writes a VkDispatchIndirectCommand computed on the GPU:
// counts = (ceil(n / 256), 1, 1) with n read from a buffer, so the dispatch
// that follows runs exactly enough workgroups for n elements.
#version 450

layout(local_size_x = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer N { uint n; };
layout(std430, set = 0, binding = 1) writeonly buffer Counts { uint xyz[3]; };

void main() {
  xyz[0] = (n + 255u) / 256u;
  xyz[1] = 1u;
  xyz[2] = 1u;
}
