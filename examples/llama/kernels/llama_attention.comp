#version 450
// attention.glsl, plain: one invocation per row or column (--attention plain).
#extension GL_GOOGLE_include_directive : require
#include "attention.glsl"
