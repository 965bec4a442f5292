#version 450
// attention_cached.glsl: keys and values from the cache (after llama_mvw_rope).
#extension GL_GOOGLE_include_directive : require
#include "attention_cached.glsl"
