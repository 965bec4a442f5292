// SPDX-License-Identifier: MIT
// set1.comp — test kernel with its only storage buffer in descriptor set 1.
//
// tandem binds contract bindings in set 0 only, so loading this kernel must
// fail (ERROR_CONTRACT naming set 1, binding 0).
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 1, binding = 0) buffer Data { uint v[]; };

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(v.length())) {
    v[i] = i;
  }
}
