// embed.glsl — x = E[token]: the embedding row of the current token, read
// from the GPU buffer the previous step's argmax wrote (the loop is driven by
// the GPU; the host never writes the token). E is [VOCAB][DIM], f16 or f32
// (DECODE_F16), and is also the LM head (tied). A token id out of range is
// clamped so the kernel never reads outside its contract.
#include "common.glsl"

layout(constant_id = 1) const uint DIM = 256;
layout(constant_id = 2) const uint VOCAB = 512;

layout(binding = 0) readonly buffer Token { uint token; };
layout(binding = 1) readonly buffer Embedding { WTYPE e[]; };
layout(binding = 2) writeonly buffer Output { float x[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= DIM) return;
  const uint t = min(token, VOCAB - 1);
  x[i] = float(e[t * DIM + i]);
}
