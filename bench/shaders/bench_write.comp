// SPDX-License-Identifier: MIT
// bench_write.comp — `tandem bench` tiny kernel: one workgroup of 64 threads,
// thread i writes (value + i) to element i of a 256-byte range. The range each
// dispatch writes is chosen by the descriptor (offset), value by push constant.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) writeonly buffer Out { uint data[]; } out_buf;
layout(push_constant) uniform Push { uint value; } pc;
void main() {
  out_buf.data[gl_LocalInvocationIndex] = pc.value + gl_LocalInvocationIndex;
}
