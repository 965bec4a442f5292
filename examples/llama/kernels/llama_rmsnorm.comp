#version 450
// The one variant of rmsnorm.glsl.
#extension GL_GOOGLE_include_directive : require
#include "rmsnorm.glsl"
