#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""make_tiny.py — writes a tiny Llama checkpoint the way transformers'
save_pretrained lays it out (config.json + model.safetensors), with NumPy
only, for the example's CI check. The safetensors file is written here by
hand (8-byte little-endian header length, JSON header, data), independently
of the C reader it tests. Weights are seeded random numbers; --dtype picks
how the weights are stored (f16, bf16, f32, or mixed: a different type per
tensor kind), --untied adds lm_head.weight (--head-ties: its second half
repeats its first, so that every logit is tied).

usage: make_tiny.py OUT_DIR [--layers N] [--dtype f16|bf16|f32|mixed]
                            [--untied [--head-ties]] [--seed N] [--mlp-gain G]
"""
import argparse
import json
import os

import numpy as np


def bf16_bytes(a):
    """float32 → bfloat16 bytes, rounding to nearest even."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16).tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--dtype", default="bf16", choices=["f16", "bf16", "f32", "mixed"])
    ap.add_argument("--untied", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    # scales the MLP's RMSNorm gains: 4096 makes the down product's parts
    # ~1e7, beyond the persistent step's fixed-point range (its refusal test)
    ap.add_argument("--mlp-gain", type=float, default=1.0)
    # (with --untied) LM-head rows vocab/2.. repeat rows 0..: every logit
    # comes twice, and greedy decoding must take the lower index (the ties test)
    ap.add_argument("--head-ties", action="store_true")
    args = ap.parse_args()
    if args.head_ties and not args.untied:
        ap.error("--head-ties needs --untied")

    hidden, heads, kv_heads, head_dim, ffn, vocab = 64, 4, 2, 16, 160, 256
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": ffn,
        "num_hidden_layers": args.layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "vocab_size": vocab,
        "max_position_embeddings": 128,
        "rms_norm_eps": 1e-5,
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
        "tie_word_embeddings": not args.untied,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
        "dtype": "bfloat16" if args.dtype == "bf16" else "float16" if args.dtype == "f16" else "float32",
    }
    rng = np.random.default_rng(args.seed)
    tensors = {}

    def w(name, shape, scale, kind):
        tensors[name] = ((rng.standard_normal(shape) * scale).astype(np.float32), kind)

    w("model.embed_tokens.weight", (vocab, hidden), 0.05, "embed")
    for l in range(args.layers):
        p = f"model.layers.{l}."
        w(p + "self_attn.q_proj.weight", (heads * head_dim, hidden), hidden ** -0.5, "attn")
        w(p + "self_attn.k_proj.weight", (kv_heads * head_dim, hidden), hidden ** -0.5, "attn")
        w(p + "self_attn.v_proj.weight", (kv_heads * head_dim, hidden), hidden ** -0.5, "attn")
        w(p + "self_attn.o_proj.weight", (hidden, heads * head_dim), (heads * head_dim) ** -0.5, "attn")
        w(p + "mlp.gate_proj.weight", (ffn, hidden), hidden ** -0.5, "mlp")
        w(p + "mlp.up_proj.weight", (ffn, hidden), hidden ** -0.5, "mlp")
        w(p + "mlp.down_proj.weight", (hidden, ffn), ffn ** -0.5, "mlp")
        tensors[p + "input_layernorm.weight"] = (1.0 + 0.1 * rng.standard_normal(hidden).astype(np.float32), "norm")
        tensors[p + "post_attention_layernorm.weight"] = (
            args.mlp_gain * (1.0 + 0.1 * rng.standard_normal(hidden).astype(np.float32)), "norm")
    tensors["model.norm.weight"] = (1.0 + 0.1 * rng.standard_normal(hidden).astype(np.float32), "norm")
    if args.untied:
        w("lm_head.weight", (vocab, hidden), hidden ** -0.5 * 4.0, "embed")
        if args.head_ties:
            head = tensors["lm_head.weight"][0]
            head[vocab // 2:] = head[: vocab // 2]

    mixed = {"embed": "f16", "attn": "bf16", "mlp": "f32", "norm": "f32"}
    header, blobs, at = {}, [], 0
    for name in sorted(tensors):  # save_pretrained sorts too
        a, kind = tensors[name]
        dt = mixed[kind] if args.dtype == "mixed" else args.dtype
        if dt == "f16":
            data, st = a.astype(np.float16).tobytes(), "F16"
        elif dt == "bf16":
            data, st = bf16_bytes(a), "BF16"
        else:
            data, st = a.astype("<f4").tobytes(), "F32"
        header[name] = {"dtype": st, "shape": list(a.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the header is padded to 8 bytes with spaces
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "model.safetensors"), "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for b in blobs:
            f.write(b)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)


if __name__ == "__main__":
    main()
