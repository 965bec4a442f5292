#version 450
// The one variant of embed.glsl.
#extension GL_GOOGLE_include_directive : require
#include "embed.glsl"
