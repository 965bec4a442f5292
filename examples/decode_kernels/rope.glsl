// rope.glsl — rotary position embedding of this token's query and key, and
// the key/value cache write. Reads the fused Q/K/V projection (3·DIM floats),
// rotates each interleaved pair (2i, 2i+1) of q and k by the angle of pair
// i mod HEAD_DIM/2 at position |pos| (a push constant), taken from a table of
// (cos, sin) the host computed once in double precision ([MAX_SEQ][HEAD_DIM/2]),
// writes q, and writes k and v into their cache rows. The host points the k
// and v bindings at row |pos| of the caches before every token
// (tandem_exec_set_view), so this dispatch never changes shape.
#include "common.glsl"

layout(constant_id = 1) const uint DIM = 256;
layout(constant_id = 2) const uint HEAD_DIM = 64;
layout(constant_id = 3) const uint MAX_SEQ = 128;

layout(push_constant) uniform Params { uint pos; } params;

layout(binding = 0) readonly buffer QKV { float qkv[]; };
layout(binding = 1) readonly buffer Table { vec2 cs[]; };
layout(binding = 2) writeonly buffer Query { float q[]; };
layout(binding = 3) writeonly buffer KeyRow { float k[]; };
layout(binding = 4) writeonly buffer ValueRow { float v[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;  // the pair (2i, 2i+1)
  if (i >= DIM / 2) return;
  const uint half_head = HEAD_DIM / 2;
  const vec2 r = cs[min(params.pos, MAX_SEQ - 1) * half_head + i % half_head];
  const uint a = 2 * i, b = 2 * i + 1;
  const float qa = qkv[a], qb = qkv[b];
  const float ka = qkv[DIM + a], kb = qkv[DIM + b];
  q[a] = qa * r.x - qb * r.y;
  q[b] = qa * r.y + qb * r.x;
  k[a] = ka * r.x - kb * r.y;
  k[b] = ka * r.y + kb * r.x;
  v[a] = qkv[2 * DIM + a];
  v[b] = qkv[2 * DIM + b];
}
