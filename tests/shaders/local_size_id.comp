#version 450
// SPDX-License-Identifier: MIT
// y = x * SCALE + the workgroup width, for the first n elements. Compiled
// for Vulkan 1.3 (tandem_test_shaders_vk13: SPIR-V 1.6), where glslang
// writes local_size_x_id as the LocalSizeId execution mode, which needs
// the device's maintenance4 (VUID-RuntimeSpirv-LocalSizeId-06434).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SCALE = 3;
layout(binding = 0) readonly buffer In { uint x[]; };
layout(binding = 1) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push { uint n; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < n) y[i] = x[i] * SCALE + gl_WorkGroupSize.x;
}
