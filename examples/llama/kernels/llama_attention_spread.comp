#version 450
// attention.glsl with the dot products spread over the workgroup (the default).
#extension GL_GOOGLE_include_directive : require
#define ATTENTION_SPREAD 1
#include "attention.glsl"
