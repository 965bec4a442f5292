#version 450
// The one variant of head_best.glsl.
#extension GL_GOOGLE_include_directive : require
#include "head_best.glsl"
