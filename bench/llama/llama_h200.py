#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""llama_h200.py — the PyTorch side of the H200 side-by-side of
examples/llama (run-h200.sh drives it; see bench/NOTES.md):

  make DIR            a Llama of SmolLM-135M's shape (hidden 576, 30 layers,
                      9 heads, 3 KV heads, MLP 1536, vocab 49152, tied
                      embeddings) with random weights (seed 0), written by
                      transformers' save_pretrained as bf16 safetensors.
  compare DIR RUN     tandem's logits (RUN/tandem-logits.f32, every
                      position, from --logits-out) and tokens (RUN/tandem.json)
                      against transformers in float32 on the same weights,
                      teacher-forced on tandem's tokens: the largest logit
                      error, and whether every greedy token whose top two
                      logits differ by more than that error is the same; also
                      transformers' own free-running float32 greedy tokens.
  time DIR RUN PART   tokens/s and ms per token, decode only (after the
                      first generated token), 64 tokens, same prompt, one
                      process per PART: eager = a device copy and
                      transformers' eager generate (bf16, greedy, its dynamic
                      KV cache); static = transformers' model over a
                      StaticCache with one decode step captured by hand in a
                      CUDA graph (failed on 2026-12-02: run1/torch-static.txt);
                      minimal = a hand-written PyTorch decoder over a static
                      cache, eager and in a CUDA graph.
  compile DIR RUN     the hand-written decoder through torch.compile (inductor,
                      no CUDA graphs of its own), then also captured by hand
                      in a CUDA graph.
  summary RUN         the table of everything above (RUN/*.json).
  clocks RUN          the GPU's SM and memory clocks during each step and
                      timing run of the scripts (RUN/marks.txt, each mark
                      until the next, against RUN/gpu-clocks.csv: nvidia-smi
                      samples every 200 ms): median, lowest and highest.

Everything it measures goes to RUN/<what>.json; the tables to stdout.
"""
import json
import os
import statistics
import sys
import time
import traceback

PROMPT = [1, 450, 4996, 17354, 1119, 3453, 975, 278]
NEW_TOKENS = 64
REPEAT = 5


def cfg_kwargs():
    return dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                num_attention_heads=9, num_key_value_heads=3, vocab_size=49152,
                max_position_embeddings=2048, rms_norm_eps=1e-5, tie_word_embeddings=True)


def dump(run, name, obj):
    with open(os.path.join(run, name + ".json"), "w") as f:
        json.dump(obj, f, indent=1)


def load_model(d, dtype):
    import torch
    from transformers import LlamaForCausalLM
    try:
        m = LlamaForCausalLM.from_pretrained(d, dtype=dtype)
    except TypeError:
        m = LlamaForCausalLM.from_pretrained(d, torch_dtype=dtype)
    m = m.cuda().eval()
    m.generation_config.eos_token_id = None
    m.generation_config.pad_token_id = 0
    return m


def cmd_make(d):
    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(**cfg_kwargs())
    m = LlamaForCausalLM(cfg).to(torch.bfloat16)
    m.save_pretrained(d, safe_serialization=True)
    n = sum(p.numel() for p in m.parameters())
    print(f"model: {n / 1e6:.1f} M parameters, bf16, seed 0, transformers {transformers.__version__}, "
          f"torch {torch.__version__} -> {d}")
    print("files:", sorted(os.listdir(d)))


def cmd_compare(d, run):
    import numpy as np
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tj = json.load(open(os.path.join(run, "tandem.json")))
    gen = tj["generated"]
    tokens = PROMPT + gen
    V = tj["vocab"]
    rows = len(tokens) - 1
    lt = np.fromfile(os.path.join(run, "tandem-logits.f32"), dtype=np.float32).reshape(-1, V)
    assert lt.shape[0] == rows, (lt.shape, rows)
    res = {"prompt": PROMPT, "tandem_tokens": gen}
    m32 = load_model(d, torch.float32)
    with torch.no_grad():
        ids = torch.tensor([tokens[:rows]], device="cuda")
        ref = m32(ids).logits[0].double().cpu().numpy()
        # transformers' own greedy tokens, float32, its KV cache
        out = m32.generate(torch.tensor([PROMPT], device="cuda"), max_new_tokens=NEW_TOKENS,
                           do_sample=False)
        hf32 = out[0, len(PROMPT):].tolist()
    err = np.abs(lt.astype(np.float64) - ref)
    max_err = float(err.max())
    scale = float(np.abs(ref).max())
    near, bad, same = 0, 0, 0
    per = []
    for pos in range(len(PROMPT) - 1, rows):
        r = ref[pos]
        want = int(r.argmax())
        got = tokens[pos + 1]
        srt = np.sort(r)
        gap = float(srt[-1] - srt[-2])
        tie = gap <= 2 * max_err  # both sides can be off by max_err
        if got == want:
            same += 1
        elif tie and r[want] - r[got] <= 2 * max_err:
            near += 1
        else:
            bad += 1
        per.append({"pos": pos, "tandem": got, "ref": want, "top2_gap": gap,
                    "max_err": float(err[pos].max())})
    first_div = next((i for i, (a, b) in enumerate(zip(gen, hf32)) if a != b), None)
    # transformers in bf16 (the side the timings use) against the same float32 reference
    mbf = load_model(d, torch.bfloat16)
    with torch.no_grad():
        rb = mbf(ids).logits[0].double().cpu().numpy()
    del mbf
    res.update({"positions": rows, "max_abs_err": max_err, "max_abs_logit": scale,
                "rel_err": max_err / scale, "greedy_same": same, "greedy_near_tie": near,
                "greedy_mismatch": bad, "hf_f32_tokens": hf32,
                "hf_f32_first_divergence": first_div,
                "hf_bf16_max_abs_err": float(np.abs(rb - ref).max()),
                "min_top2_gap": min(p["top2_gap"] for p in per), "per_position": per})
    dump(run, "compare", res)
    print(f"compare: {rows} positions, tandem vs transformers f32: max |logit err| {max_err:.3e} "
          f"(largest logit {scale:.3f}, rel {max_err / scale:.2e}); transformers bf16 vs f32 "
          f"{res['hf_bf16_max_abs_err']:.3e}")
    print(f"compare: greedy tokens: {same} same, {near} differ within the error (near-ties), "
          f"{bad} differ outside it; smallest top-two gap {res['min_top2_gap']:.3e}")
    print(f"compare: transformers f32 free-running greedy == tandem's for "
          f"{NEW_TOKENS if first_div is None else first_div} of {NEW_TOKENS} tokens")
    return 0 if bad == 0 else 1


def events_time(fn, reps):
    """Median milliseconds of fn() with CUDA events, reps times."""
    import torch
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts), ts


class Minimal:
    """A Llama decode step over a static KV cache in plain PyTorch ops (bf16
    weights and cache, float32 norms and softmax, as transformers does):
    fused QKV and gate|up weights, attention over the whole static cache with
    a mask past the position, the next token's argmax fed back on the GPU."""

    def __init__(self, model, max_len):
        import torch
        c = model.config
        self.D, self.H, self.KVH = c.hidden_size, c.num_attention_heads, c.num_key_value_heads
        self.hd = getattr(c, "head_dim", None) or self.D // self.H
        self.eps = c.rms_norm_eps
        self.max_len = max_len
        sd = model.model
        self.embed = sd.embed_tokens.weight
        self.head = model.lm_head.weight
        self.norm = sd.norm.weight
        self.layers = []
        for L in sd.layers:
            a, m = L.self_attn, L.mlp
            self.layers.append((
                L.input_layernorm.weight,
                torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]).contiguous(),
                a.o_proj.weight, L.post_attention_layernorm.weight,
                torch.cat([m.gate_proj.weight, m.up_proj.weight]).contiguous(), m.down_proj.weight))
        dev, dt = self.embed.device, self.embed.dtype
        self.kc = torch.zeros(len(self.layers), self.KVH, max_len, self.hd, device=dev, dtype=dt)
        self.vc = torch.zeros_like(self.kc)
        theta = getattr(c, "rope_theta", None)
        if theta is None:
            theta = (getattr(c, "rope_parameters", None) or {}).get("rope_theta", 10000.0)
        inv = 1.0 / (theta ** (torch.arange(0, self.hd, 2, dtype=torch.float64) / self.hd))
        f = torch.outer(torch.arange(max_len, dtype=torch.float64), inv)
        emb = torch.cat([f, f], -1)
        self.cos = emb.cos().to(dev, torch.float32)
        self.sin = emb.sin().to(dev, torch.float32)
        self.ar = torch.arange(max_len, device=dev)
        self.tok = torch.zeros(1, dtype=torch.long, device=dev)
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        self.out = torch.zeros(max_len + 1, dtype=torch.long, device=dev)

    def rms(self, x, w):
        import torch
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return w * xf.to(x.dtype)

    def rope(self, t, cos, sin):
        import torch
        h = self.hd // 2
        rot = torch.cat([-t[..., h:], t[..., :h]], -1)
        return (t.float() * cos + rot.float() * sin).to(t.dtype)

    def step(self):
        """One token at self.pos from self.tok; writes the next token into
        self.tok and self.out[pos + 1], advances self.pos; returns logits."""
        import torch
        import torch.nn.functional as F
        H, KVH, hd = self.H, self.KVH, self.hd
        pos = self.pos
        cos, sin = self.cos[pos], self.sin[pos]  # [1, hd]
        x = self.embed[self.tok]  # [1, D]
        mask = (self.ar <= pos).view(1, 1, -1)
        for l, (wn1, wqkv, wo, wn2, wgu, wd) in enumerate(self.layers):
            qkv = F.linear(self.rms(x, wn1), wqkv)
            q = qkv[:, :H * hd].view(H, hd)
            k = qkv[:, H * hd:(H + KVH) * hd].view(KVH, hd)
            v = qkv[:, (H + KVH) * hd:].view(KVH, hd)
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
            self.kc[l].index_copy_(1, pos, k.unsqueeze(1))
            self.vc[l].index_copy_(1, pos, v.unsqueeze(1))
            s = torch.matmul(q.view(KVH, H // KVH, hd), self.kc[l].transpose(1, 2)).float()
            s = s * (hd ** -0.5)
            s = s.masked_fill(~mask, float("-inf"))
            p = torch.softmax(s, -1).to(x.dtype)
            o = torch.matmul(p, self.vc[l]).reshape(1, H * hd)
            x = x + F.linear(o, wo)
            gu = F.linear(self.rms(x, wn2), wgu)
            g, u = gu.chunk(2, -1)
            x = x + F.linear(F.silu(g) * u, wd)
        logits = F.linear(self.rms(x, self.norm), self.head)
        nxt = logits.argmax(-1)
        self.out.index_copy_(0, pos + 1, nxt)
        self.tok.copy_(nxt)
        self.pos.add_(1)
        return logits

    def prefill(self, prompt):
        """The prompt one position at a time (as tandem does); leaves the first
        generated token in self.tok."""
        import torch
        self.pos.zero_()
        self.out.zero_()
        pt = torch.tensor(prompt, device=self.out.device)
        for i in range(len(prompt)):
            self.tok.copy_(pt[i:i + 1])  # step() writes its prediction over out[i + 1]
            self.step()


def capture(fn, warm=3):
    import torch
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warm):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def time_minimal(mini, name, step, prompt, results, reps=REPEAT):
    """Decode tokens/s of |step| (a function or a graph replay) after a prefill."""
    import torch
    ms = []
    toks = None
    for _ in range(reps):
        with torch.no_grad():
            mini.prefill(prompt)
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(NEW_TOKENS - 1):
                step()
            b.record()
            b.synchronize()
        ms.append(a.elapsed_time(b) / (NEW_TOKENS - 1))
        toks = mini.out[len(prompt):len(prompt) + NEW_TOKENS].tolist()
    med = statistics.median(ms)
    results[name] = {"ms_per_token": med, "tokens_per_s": 1e3 / med, "runs_ms_per_token": ms,
                     "tokens": toks}
    print(f"time: {name:34s} {1e3 / med:9.1f} tokens/s {med:8.3f} ms/token")


def cmd_time(d, run, part):
    """|part|: eager (copy + transformers generate), static (transformers over a
    StaticCache; its own process, since a failed capture can spoil the CUDA
    context) or minimal (the hand-written decoder)."""
    import torch
    import transformers
    res = {"part": part, "torch": torch.__version__, "transformers": transformers.__version__,
           "gpu": torch.cuda.get_device_name(), "prompt": PROMPT, "new_tokens": NEW_TOKENS}
    # device copy: 1 GiB, read + write counted
    name = "torch-" + part
    if part == "eager":
        n = 1 << 30
        a = torch.empty(n, dtype=torch.uint8, device="cuda").random_()
        b = torch.empty_like(a)
        for _ in range(3):
            b.copy_(a)
        ms, _ = events_time(lambda: b.copy_(a), 20)
        res["copy_gb_s"] = 2 * n / ms * 1e-6
        del a, b
        print(f"time: device copy (torch, 1 GiB, read + write) {res['copy_gb_s']:.0f} GB/s")

    m = load_model(d, torch.bfloat16)
    ids = torch.tensor([PROMPT], device="cuda")
    res["weight_bytes"] = sum(p.numel() * p.element_size() for p in m.parameters())

    # transformers eager generate, greedy, its default (dynamic) KV cache; its
    # tokens are what the other paths are compared with
    def gen(k):
        with torch.no_grad():
            return m.generate(ids, max_new_tokens=k, min_new_tokens=k, do_sample=False)
    eager_tokens = gen(NEW_TOKENS)[0, len(PROMPT):].tolist()
    if part != "eager":
        return static_or_minimal(m, ids, part, eager_tokens, res, run, name)
    t64, runs64 = events_time(lambda: gen(NEW_TOKENS), REPEAT)
    t1, runs1 = events_time(lambda: gen(1), REPEAT)
    dec = (t64 - t1) / (NEW_TOKENS - 1)
    res["hf_eager_generate"] = {"ms_per_token": dec, "tokens_per_s": 1e3 / dec,
                                "whole_generate_ms": t64, "whole_tokens_per_s": NEW_TOKENS / t64 * 1e3,
                                "first_token_ms": t1, "runs_ms": runs64, "tokens": eager_tokens}
    print(f"time: {'transformers eager generate':34s} {1e3 / dec:9.1f} tokens/s {dec:8.3f} ms/token "
          f"(whole generate {NEW_TOKENS} tokens {t64:.1f} ms: {NEW_TOKENS / t64 * 1e3:.1f} tokens/s)")
    dump(run, name, res)


def static_or_minimal(m, ids, part, eager_tokens, res, run, name):
    import torch
    if part == "minimal":
        mini = Minimal(m, len(PROMPT) + NEW_TOKENS + 8)
        with torch.no_grad():
            time_minimal(mini, "minimal_eager", mini.step, PROMPT, res, reps=3)
            mini.prefill(PROMPT)
            g = capture(mini.step)
            time_minimal(mini, "minimal_graph", g.replay, PROMPT, res)
        for k in ("minimal_eager", "minimal_graph"):
            res[k]["same_tokens_as_eager"] = sum(x == y for x, y in zip(res[k]["tokens"], eager_tokens))
            print(f"time: {k}: {res[k]['same_tokens_as_eager']}/{NEW_TOKENS} tokens as eager generate")
        dump(run, name, res)
        return
    # transformers' model over a StaticCache, one decode step in a CUDA graph
    try:
        from transformers import StaticCache
        L = len(PROMPT) + NEW_TOKENS
        try:
            cache = StaticCache(config=m.config, max_cache_len=L)
        except TypeError:
            cache = StaticCache(config=m.config, max_batch_size=1, max_cache_len=L,
                                device="cuda", dtype=torch.bfloat16)
        tok = torch.zeros(1, 1, dtype=torch.long, device="cuda")
        pos = torch.zeros(1, dtype=torch.long, device="cuda")
        out = torch.zeros(L + 1, dtype=torch.long, device="cuda")

        def hf_prefill():
            with torch.no_grad():
                o = m(input_ids=ids, past_key_values=cache, use_cache=True,
                      cache_position=torch.arange(len(PROMPT), device="cuda"))
            nxt = o.logits[:, -1].argmax(-1)
            tok.copy_(nxt.view(1, 1))
            pos.fill_(len(PROMPT))
            out[len(PROMPT)] = nxt[0]

        def hf_step():
            with torch.no_grad():
                o = m(input_ids=tok, position_ids=pos.view(1, 1), cache_position=pos,
                      past_key_values=cache, use_cache=True)
            nxt = o.logits[:, -1].argmax(-1)
            out.index_copy_(0, pos + 1, nxt)
            tok.copy_(nxt.view(1, 1))
            pos.add_(1)

        hf_prefill()
        for _ in range(3):
            hf_step()
        for label, fn in (("transformers static cache, eager", None),
                          ("transformers static cache, CUDA graph", "graph")):
            step = hf_step
            if fn == "graph":
                hf_prefill()
                g = capture(hf_step)
                step = g.replay
            ms = []
            for _ in range(REPEAT):
                hf_prefill()
                torch.cuda.synchronize()
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                for _ in range(NEW_TOKENS - 1):
                    step()
                b.record()
                b.synchronize()
                ms.append(a.elapsed_time(b) / (NEW_TOKENS - 1))
            med = statistics.median(ms)
            key = "hf_static_graph" if fn else "hf_static_eager"
            res[key] = {"ms_per_token": med, "tokens_per_s": 1e3 / med, "runs_ms_per_token": ms,
                        "tokens": out[len(PROMPT):L].tolist()}
            same = sum(x == y for x, y in zip(res[key]["tokens"], eager_tokens))
            res[key]["same_tokens_as_eager"] = same
            print(f"time: {label:34s} {1e3 / med:9.1f} tokens/s {med:8.3f} ms/token "
                  f"({same}/{NEW_TOKENS} tokens as eager generate)")
            dump(run, name, res)
    except Exception as e:  # record why, carry on with the other paths
        res["hf_static_error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
        print("time: transformers static cache failed:", res["hf_static_error"])
    dump(run, name, res)



def cmd_compile(d, run):
    import torch
    res = {}
    m = load_model(d, torch.bfloat16)
    mini = Minimal(m, len(PROMPT) + NEW_TOKENS + 8)
    t0 = time.time()
    step = torch.compile(mini.step, fullgraph=True, dynamic=False)
    with torch.no_grad():
        mini.prefill(PROMPT)
        for _ in range(3):
            step()
    res["compile_s"] = time.time() - t0
    print(f"time: torch.compile took {res['compile_s']:.1f} s")
    with torch.no_grad():
        # prefill through the compiled step too (same function)
        mini.step = step
        time_minimal(mini, "compiled", step, PROMPT, res)
        dump(run, "compile", res)
        mini.prefill(PROMPT)
        g = capture(step)
        time_minimal(mini, "compiled_graph", g.replay, PROMPT, res)
    dump(run, "compile", res)


def cmd_summary(run):
    def load(n):
        p = os.path.join(run, n + ".json")
        return json.load(open(p)) if os.path.exists(p) else {}
    tj, tn, cmp_, tc = load("tandem"), load("tandem-notimestamps"), load("compare"), load("compile")
    tt = {}
    for part in ("eager", "static", "minimal"):
        tt.update(load("torch-" + part))
    variants = {k[len("tandem-"):]: load(k) for k in
                sorted(f[:-5] for f in os.listdir(run) if f.startswith("tandem-v") and f.endswith(".json"))}
    rows = []
    for key, label in (("hf_eager_generate", "transformers generate, eager (bf16, dynamic cache)"),
                       ("hf_static_eager", "transformers, static cache, eager"),
                       ("hf_static_graph", "transformers, static cache, CUDA graph by hand"),
                       ("minimal_eager", "hand-written PyTorch decoder, eager"),
                       ("minimal_graph", "hand-written PyTorch decoder, CUDA graph")):
        if key in tt:
            rows.append((label, tt[key]["tokens_per_s"], tt[key]["ms_per_token"]))
    for key, label in (("compiled", "hand-written decoder, torch.compile"),
                       ("compiled_graph", "hand-written decoder, torch.compile + CUDA graph")):
        if key in tc:
            rows.append((label, tc[key]["tokens_per_s"], tc[key]["ms_per_token"]))
    before = load("tandem-before")

    def label(name, j):
        counters = j.get("barrier_counters", 1)
        st = j.get("step") or {}
        counted = [k for k in ("qkv", "part", "down") if st.get(k + "_counts")]
        engine = (f"persistent ({j.get('groups')} workgroups"
                  + (f", {counters} barrier counters" if counters > 1 else "")
                  + (f", {st['grid_barriers_per_layer']} grid barriers a layer" if st else "")
                  + (f", counted {'/'.join(counted)}" if counted else "")
                  + (", a grid barrier before E" if st.get("e_barrier") else "")
                  + (", LM head as a node" if st.get("head_node") else "")
                  + (f", ahead {st['ahead']}" if st.get("ahead") else "") + ")"
                  if j.get("engine") == "persistent"
                  else f"nodes: matvec {j.get('matvec', 'old')}, attention {j.get('attention', 'plain')}")
        return (f"{name}: {engine}, position {j.get('pos_lane', 'compute')}, inflight {j['inflight']}, "
                f"chunk {j.get('chunk', 1)}")
    for name, j in [("tandem, timestamps on", tj), ("tandem", tn), ("tandem first version, timestamps on", before)] + \
            [("tandem", v) for v in variants.values()]:
        if j:
            rows.append((label(name, j), j["decode_tokens_per_s"], j["decode_us_per_token"] * 1e-3))
    eager = tt.get("hf_eager_generate", {}).get("tokens_per_s")
    print(f"\n{'path (decode, ' + str(NEW_TOKENS) + ' tokens, prompt ' + str(len(PROMPT)) + ')':92s} "
          f"{'tokens/s':>9s} {'ms/token':>9s} {'x eager':>8s}")
    for name, tps, ms in rows:
        # no transformers eager run (TORCH_PARTS without "eager"): no ratio
        print(f"{name:92s} {tps:9.1f} {ms:9.3f} " + (f"{tps / eager:8.1f}" if eager else f"{'-':>8s}"))
    for name, j in (("2026-12-02 kernels", before), ("now", tj)):
        if j.get("bench"):
            kinds = ", ".join(f"{k} {v:.1f}" for k, v in j["bench"]["kind_us"].items())
            print(f"GPU us per step by kind, alone ({name}): {kinds}; whole step "
                  f"{j['bench']['step_gpu_us']:.1f}")
            if j["bench"].get("alone"):
                # (stream: the dispatches over copies of the weights, more
                # than the L2 cache holds; absent before 2026-12-07's second
                # H100 call, whose "marginal" figures re-read cached weights)
                print("  each layer matrix alone (independent dispatches, own weights): " + ", ".join(
                    f"{k} {v['us']:.2f} us {v['gb_s']:.0f} GB/s" +
                    (f" (stream of {v['stream_dispatches']} over {v['stream_mb']:.0f} MB: "
                     f"{v['stream_us']:.2f} us {v['stream_gb_s']:.0f} GB/s)"
                     if v.get("stream_gb_s") else "")
                    for k, v in j["bench"]["alone"].items()) +
                    f"; device copy {j['bench']['copy_gb_s']:.0f} GB/s")
    wb = tj.get("matvec_bytes_per_token")
    # The floor reads the weights at the fastest rate this run measured
    # from the GPU's memory: a device copy (torch's, tandem's Vulkan copy
    # node: on NVIDIA the latter measured 850 GB/s, far below the memory),
    # the LM head alone (57 MB, more than the L2 holds) or one of tandem's
    # mat-vecs in a stream over copies of its weights. The mat-vecs over
    # their own weights are left out: the L2 may hold a product's layers.
    bj = tj.get("bench", {})
    rates = {"torch's device copy": tt.get("copy_gb_s", 0), "tandem's Vulkan copy": bj.get("copy_gb_s", 0),
             "tandem's LM head alone": bj.get("lm_head_gb_s", 0)}
    rates.update({f"tandem's {k} alone, stream": v.get("stream_gb_s", 0)
                  for k, v in (bj.get("alone") or {}).items()})
    source, copy = max(rates.items(), key=lambda kv: kv[1])
    if wb and copy:
        best = min((r for r in rows if r[0].startswith("tandem")), key=lambda r: r[2], default=None)
        print(f"\nfloor: {wb / 1e6:.1f} MB of weights per token at {copy:.0f} GB/s (the fastest read this "
              f"run measured: {source}; " + ", ".join(f"{k} {v:.0f}" for k, v in rates.items() if v) +
              f") = {wb / copy * 1e-3:.1f} us/token" +
              (f"; tandem's best {best[2] * 1e3:.1f} us/token is {best[2] * 1e3 / (wb / copy * 1e-3):.1f}x the floor"
               if best else ""))
        if tj.get("bench"):
            print(f"tandem: mat-vec products alone {tj['bench']['matvec_gb_s']:.0f} GB/s, LM head alone "
                  f"{tj['bench']['lm_head_gb_s']:.0f} GB/s, whole step {tj['bench']['step_gpu_us']:.1f} us "
                  f"on the GPU ({tj.get('step_nodes')} nodes)")
    if cmp_:
        print(f"check: max |logit err| {cmp_['max_abs_err']:.3e} vs transformers f32 "
              f"(rel {cmp_['rel_err']:.2e}); greedy {cmp_['greedy_same']} same, "
              f"{cmp_['greedy_near_tie']} near-ties, {cmp_['greedy_mismatch']} mismatches")
    if "hf_static_error" in tt:
        print("transformers static cache:", tt["hf_static_error"])
    # llama.cpp's llama-bench in the same call (run-h200.sh with LLAMACPP;
    # `-o json` files in llamacpp/): its best backend beside tandem's best
    # timing run (no timestamps), the comparison issue 32 asks for
    lc, lcdir = [], os.path.join(run, "llamacpp")
    for f in sorted(os.listdir(lcdir)) if os.path.isdir(lcdir) else []:
        if not f.endswith(".json"):
            continue
        try:
            entries = json.load(open(os.path.join(lcdir, f)))
        except ValueError as e:
            print(f"llama.cpp: {f} does not parse ({e}): left out")
            continue
        lc += [(e["avg_ts"], e["backends"], e["model_type"], e["flash_attn"], e["gpu_info"])
               for e in entries]
    timed = [r for r in rows if r[0].startswith("tandem: ")]
    if lc and timed:
        ts, backend, model, fa, gpu = max(lc)
        best = max(timed, key=lambda r: r[1])
        print(f"beside llama.cpp (same call, {gpu}): tandem's best timing run {best[1]:.1f} tokens/s "
              f"({best[2] * 1e3:.1f} us/token) against llama.cpp's best, {backend} ({model}, flash "
              f"attention {'on' if fa else 'off'}) {ts:.1f} tokens/s: {best[1] / ts:.2f}x")


def cmd_clocks(run):
    marks_at, samples_at = os.path.join(run, "marks.txt"), os.path.join(run, "gpu-clocks.csv")
    if not os.path.exists(samples_at):
        print("clocks: no samples (no nvidia-smi on this machine)")
        return
    marks = []
    for line in open(marks_at):
        t, _, text = line.rstrip("\n").partition(" ")
        marks.append((float(t), text))
    samples = []  # (time, SM MHz, memory MHz); nvidia-smi's time is local, as date +%s
    for line in open(samples_at):
        f = [x.strip() for x in line.split(",")]
        try:
            day, frac = f[0].split(".") if "." in f[0] else (f[0], "0")
            t = time.mktime(time.strptime(day, "%Y/%m/%d %H:%M:%S")) + float("0." + frac)
            samples.append((t, float(f[1]), float(f[2])))
        except (ValueError, IndexError):
            continue  # a line nvidia-smi wrote that is not a sample
    print(f"{'step or run (from its mark to the next)':70s} {'s':>6s} {'n':>4s} "
          f"{'SM MHz med':>10s} {'min':>5s} {'max':>5s} {'mem MHz':>8s}")
    for i, (t0, text) in enumerate(marks):
        t1 = marks[i + 1][0] if i + 1 < len(marks) else (samples[-1][0] if samples else t0)
        inside = [s for s in samples if t0 <= s[0] < t1]
        if not inside:
            print(f"{text[:70]:70s} {t1 - t0:6.1f} {0:4d}")
            continue
        sm = [s[1] for s in inside]
        print(f"{text[:70]:70s} {t1 - t0:6.1f} {len(inside):4d} {statistics.median(sm):10.0f} "
              f"{min(sm):5.0f} {max(sm):5.0f} {statistics.median(s[2] for s in inside):8.0f}")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    what, args = sys.argv[1], sys.argv[2:]
    if what == "make":
        cmd_make(*args)
    elif what == "compare":
        return cmd_compare(*args)
    elif what == "time":
        cmd_time(*args)
    elif what == "compile":
        cmd_compile(*args)
    elif what == "summary":
        cmd_summary(*args)
    elif what == "clocks":
        cmd_clocks(*args)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
