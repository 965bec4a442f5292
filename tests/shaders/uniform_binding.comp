// SPDX-License-Identifier: MIT
// uniform_binding.comp — test kernel whose binding 0 is a uniform buffer.
//
// tandem contracts bind storage buffers only, so loading this kernel must fail
// (ERROR_CONTRACT naming binding 0 and its descriptor type). Binding 1 is an
// ordinary writable storage buffer.
#version 450

layout(local_size_x = 256) in;

layout(std140, set = 0, binding = 0) uniform Params {
  uint n;
  uint value;
} params;

layout(std430, set = 0, binding = 1) buffer Out { uint v[]; };

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < params.n) {
    v[i] = params.value;
  }
}
