#version 450
// The one variant of attention.glsl.
#extension GL_GOOGLE_include_directive : require
#include "attention.glsl"
