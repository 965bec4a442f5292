// embed.glsl — x = E[token]: the embedding row of the token at the step's
// position, read from the token history on the GPU (the prompt's ids, then
// what argmax wrote), so decoding needs no host round trip per token. E is
// f16 [VOCAB][DIM]; a token id out of range is clamped so the kernel never
// reads outside its contract.
#include "common.glsl"

layout(constant_id = 1) const uint DIM = 64;
layout(constant_id = 2) const uint VOCAB = 256;
layout(constant_id = 3) const uint MAX_SEQ = 64;

layout(binding = 0) readonly buffer Params { uint pos; uint prompt_len; } params;
layout(binding = 1) readonly buffer History { uint tokens[]; };
layout(binding = 2) readonly buffer Embedding { float16_t e[]; };
layout(binding = 3) writeonly buffer Output { float x[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= DIM) return;
  const uint t = min(tokens[min(params.pos, MAX_SEQ - 1)], VOCAB - 1);
  x[i] = float(e[t * DIM + i]);
}
