#version 450
// matvec_wide.glsl, variant MV_ROPE (see its header).
#extension GL_GOOGLE_include_directive : require
#define MV_NORM 1
#define MV_ROPE 1
#include "matvec_wide.glsl"
