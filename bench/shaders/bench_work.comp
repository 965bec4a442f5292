// SPDX-License-Identifier: MIT
// bench_work.comp — `tandem bench overlap`'s compute step: out[i] = in[i] put
// through `rounds` steps of a linear congruential generator, for i < n. The
// rounds set how long the compute lane is busy per chunk; the CPU checks
// sampled elements with the same recurrence.
#version 450
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer In { uint in_words[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Push { uint n; uint rounds; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  uint x = in_words[i];
  for (uint r = 0u; r < pc.rounds; r++) x = x * 1664525u + 1013904223u;
  out_words[i] = x;
}
