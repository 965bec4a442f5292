// SPDX-License-Identifier: MIT
// no_local_size.comp — an ncnn-style shader that declares no workgroup size,
// so glslang writes LocalSize 1 1 1; its code assumes 256 invocations per
// workgroup (the shared array, the reversal). Each workgroup reverses its
// block of 256 elements through shared memory:
//   out[g * 256 + l] = in[g * 256 + 255 - l]
// Right only when the runtime rewrites the size to 256
// (TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE); at 1x1x1 only element 0 of each block
// is written.
#version 450

shared uint tmp[256];

layout(std430, set = 0, binding = 0) readonly buffer In { uint in_v[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_v[]; };

void main() {
  uint l = gl_LocalInvocationID.x;
  uint base = gl_WorkGroupID.x * 256u;
  tmp[l] = in_v[base + l];
  barrier();
  out_v[base + l] = tmp[255u - l];
}
