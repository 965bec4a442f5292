// SPDX-License-Identifier: MIT
// bench_increment.comp — `tandem bench` chain kernel: one workgroup of 64
// threads, each adds 1 to its element of a 256-byte range (read-modify-write).
// N dependent dispatches on a zeroed range leave N in every element.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer Data { uint data[]; } buf;
void main() {
  buf.data[gl_LocalInvocationIndex] += 1u;
}
