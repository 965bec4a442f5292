#version 450
// matvec.glsl with RMSNorm fused: y = W rmsnorm(x, g).
#extension GL_GOOGLE_include_directive : require
#define MATVEC_NORM 1
#include "matvec.glsl"
