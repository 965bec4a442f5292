#version 450
// decoder.glsl with both clocks stamped at every stage's release and arrival
// (llama.c --clocks; needs VK_KHR_shader_clock's shaderDeviceClock and
// shaderSubgroupClock).
#extension GL_GOOGLE_include_directive : require
#define LLAMA_CLOCKS 1
#include "decoder.glsl"
