#version 450
// matvec.glsl with the residual add fused: y += W x.
#extension GL_GOOGLE_include_directive : require
#define MATVEC_RESIDUAL 1
#include "matvec.glsl"
