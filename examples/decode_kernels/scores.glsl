// scores.glsl — attention scores of this token's query against every cached
// key: s[h][t] = (q_h · K[t]_h) · SCALE for t = 0 .. pos. One workgroup per
// (t, h): the workgroup count is (pos + 1, HEADS, 1) and grows by one column
// every token (tandem_exec_set_workgroups), so no parameter says how long the
// sequence is. K is the cache, [MAX_SEQ][DIM]; s is [HEADS][MAX_SEQ], of which
// this dispatch writes the first pos + 1 entries of each row.
#include "common.glsl"

layout(constant_id = 1) const uint DIM = 256;
layout(constant_id = 2) const uint HEAD_DIM = 64;
layout(constant_id = 3) const uint MAX_SEQ = 128;
layout(constant_id = 4) const float SCALE = 0.125;

layout(binding = 0) readonly buffer Query { float q[]; };
layout(binding = 1) readonly buffer Keys { float k[]; };
layout(binding = 2) writeonly buffer Scores { float s[]; };

void main() {
  const uint t = gl_WorkGroupID.x, h = gl_WorkGroupID.y;
  const uint tid = gl_LocalInvocationID.x;
  float acc = 0.0;
  for (uint d = tid; d < HEAD_DIM; d += BLOCK_SIZE)
    acc += q[h * HEAD_DIM + d] * k[t * DIM + h * HEAD_DIM + d];
  acc = block_sum(acc);
  if (tid == 0) s[h * MAX_SEQ + t] = acc * SCALE;
}
