// SPDX-License-Identifier: MIT
// clock_realtime.comp — two reads of the device clock
// (GL_EXT_shader_realtime_clock: OpReadClockKHR at Device scope, needs
// shaderDeviceClock) around some arithmetic, as (low, high) word pairs:
//   t[0] = the first reading, t[1] = the second (>= the first), sink = the
//   arithmetic's result, so that it stays between them.
#version 450
#extension GL_EXT_shader_realtime_clock : require

layout(local_size_x = 1) in;

layout(std430, set = 0, binding = 0) writeonly buffer Out {
  uvec2 t[2];
  uvec2 sink;
};

void main() {
  uvec2 first = clockRealtime2x32EXT();
  uint x = first.x;
  for (uint i = 0u; i < 1000u; i++) x = x * 1664525u + 1013904223u;
  uvec2 second = clockRealtime2x32EXT();
  t[0] = first;
  t[1] = second;
  sink = uvec2(x, 0u);
}
