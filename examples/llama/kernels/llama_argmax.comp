#version 450
// The one variant of argmax.glsl.
#extension GL_GOOGLE_include_directive : require
#include "argmax.glsl"
