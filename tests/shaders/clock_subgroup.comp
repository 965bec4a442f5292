// SPDX-License-Identifier: MIT
// clock_subgroup.comp — clock_realtime.comp with the subgroup clock
// (GL_ARB_shader_clock: OpReadClockKHR at Subgroup scope, needs
// shaderSubgroupClock); one invocation, so both reads are of one subgroup:
//   t[0] = the first reading, t[1] = the second (>= the first).
#version 450
#extension GL_ARB_shader_clock : require

layout(local_size_x = 1) in;

layout(std430, set = 0, binding = 0) writeonly buffer Out {
  uvec2 t[2];
  uvec2 sink;
};

void main() {
  uvec2 first = clock2x32ARB();
  uint x = first.x;
  for (uint i = 0u; i < 1000u; i++) x = x * 1664525u + 1013904223u;
  uvec2 second = clock2x32ARB();
  t[0] = first;
  t[1] = second;
  sink = uvec2(x, 0u);
}
