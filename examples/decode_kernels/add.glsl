// add.glsl — y = a + b over DIM floats: the residual add after the output
// projection when that product runs on the NPU lane (--npu), where the
// projection cannot fuse the add as matvec_res does on the GPU.
#include "common.glsl"

layout(constant_id = 1) const uint DIM = 256;

layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) readonly buffer B { float b[]; };
layout(binding = 2) writeonly buffer Output { float y[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < DIM) y[i] = a[i] + b[i];
}
