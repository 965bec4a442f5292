#version 450
// decoder.glsl: the whole decode step in one dispatch (see its header).
#extension GL_GOOGLE_include_directive : require
#include "decoder.glsl"
