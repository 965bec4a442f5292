#version 450
// matvec_wide.glsl, variant MV_RESIDUAL (see its header).
#extension GL_GOOGLE_include_directive : require
#define MV_RESIDUAL 1
#include "matvec_wide.glsl"
