#version 450
// matvec.glsl, the SwiGLU MLP's first half: h = silu(Wg xn) * (Wu xn).
#extension GL_GOOGLE_include_directive : require
#define MATVEC_NORM 1
#define MATVEC_SWIGLU 1
#include "matvec.glsl"
