#version 450
// attn_o.glsl: the attention and the output projection + residual as one node.
#extension GL_GOOGLE_include_directive : require
#include "attn_o.glsl"
