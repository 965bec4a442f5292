// SPDX-License-Identifier: MIT
// device_address.comp — reaches memory through a buffer device address
// (PhysicalStorageBufferAddresses). tandem cannot see such accesses in the
// contract, so loading must fail with CONTRACT.
#version 450
#extension GL_EXT_buffer_reference : require

layout(local_size_x = 1) in;

layout(buffer_reference, std430) buffer Ptr { uint v; };

layout(std430, set = 0, binding = 0) readonly buffer Where { Ptr p; };

void main() {
  p.v = 1u;
}
