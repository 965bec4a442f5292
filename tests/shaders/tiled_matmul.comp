// SPDX-License-Identifier: MIT
// tiled_matmul.comp — C[M x N] = A[M x K] . B[K x N] (row-major floats) with
// TILE x TILE tiles staged in shared memory; TILE is SpecId 0 and sizes both
// workgroup dimensions (x and y name the same SpecId). Push constants:
// { uint M, N, K; }. Dispatch ceil(N/TILE) x ceil(M/TILE) workgroups.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 0) in;
layout(constant_id = 0) const uint TILE = 16;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };

layout(push_constant) uniform Push {
  uint M, N, K;
} pc;

shared float ta[TILE][TILE];
shared float tb[TILE][TILE];

void main() {
  uint row = gl_GlobalInvocationID.y, col = gl_GlobalInvocationID.x;
  uint ly = gl_LocalInvocationID.y, lx = gl_LocalInvocationID.x;
  float acc = 0.0;
  for (uint t = 0u; t < pc.K; t += TILE) {
    uint ak = t + lx, bk = t + ly;
    ta[ly][lx] = (row < pc.M && ak < pc.K) ? a[row * pc.K + ak] : 0.0;
    tb[ly][lx] = (bk < pc.K && col < pc.N) ? b[bk * pc.N + col] : 0.0;
    barrier();
    for (uint k = 0u; k < TILE; k++) acc += ta[ly][k] * tb[k][lx];
    barrier();
  }
  if (row < pc.M && col < pc.N) c[row * pc.N + col] = acc;
}
