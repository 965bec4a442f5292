// common.glsl — what every decode-step kernel shares: the workgroup size, the
// block reductions and the weight type. Included first by each kernel; the
// variant wrappers that examples/CMakeLists.txt generates define, before the
// include, DECODE_SUBGROUPS (reduce with subgroup arithmetic instead of a
// shared-memory tree) and DECODE_F16 (weights stored as float16_t with 16-bit
// storage, converted to f32 for the math).
//
// The workgroup size follows the llama.cpp / ncnn pattern: local_size_x comes
// from specialization constant 0 and the code reads the same constant as
// BLOCK_SIZE, so one SpecId sets both (glslang emits two constants with
// SpecId 0 and defaults 1 and 64; the host always sets id 0). BLOCK_SIZE must
// be a power of two (the shared-memory tree halves it).
#ifdef DECODE_SUBGROUPS
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#ifdef DECODE_F16
#extension GL_EXT_shader_16bit_storage : require
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint BLOCK_SIZE = 64;

#ifdef DECODE_F16
#define WTYPE float16_t
#define WTYPE4 f16vec4
#else
#define WTYPE float
#define WTYPE4 vec4
#endif

// Scratch for the reductions: one slot per invocation (tree) or per subgroup.
shared float red_f[BLOCK_SIZE];

// The sum of |v| over the workgroup, returned to every invocation. Every
// invocation must call it (it has barriers).
float block_sum(float v) {
#ifdef DECODE_SUBGROUPS
  v = subgroupAdd(v);
  if (subgroupElect()) red_f[gl_SubgroupID] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; i++) s += red_f[i];
  barrier();
  return s;
#else
  const uint tid = gl_LocalInvocationID.x;
  red_f[tid] = v;
  barrier();
  for (uint s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
    if (tid < s) red_f[tid] += red_f[tid + s];
    barrier();
  }
  const float r = red_f[0];
  barrier();
  return r;
#endif
}

// The maximum of |v| over the workgroup, returned to every invocation.
float block_max(float v) {
#ifdef DECODE_SUBGROUPS
  v = subgroupMax(v);
  if (subgroupElect()) red_f[gl_SubgroupID] = v;
  barrier();
  float m = red_f[0];
  for (uint i = 1; i < gl_NumSubgroups; i++) m = max(m, red_f[i]);
  barrier();
  return m;
#else
  const uint tid = gl_LocalInvocationID.x;
  red_f[tid] = v;
  barrier();
  for (uint s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
    if (tid < s) red_f[tid] = max(red_f[tid], red_f[tid + s]);
    barrier();
  }
  const float r = red_f[0];
  barrier();
  return r;
#endif
}

// Below every finite float: the start value of a running maximum.
const float NEG_HUGE = -3.0e38;
