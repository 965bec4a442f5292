// decoder.glsl — the whole decode step as one dispatch (llama.c --engine
// persistent). The step as separate nodes pays, per dependent node, the
// driver's dependency (~1.8 µs on the H200) and the next kernel's cold start.
// Here GROUPS workgroups, all resident at once, run every stage of every
// layer, and hand the activations from stage to stage themselves.
//
// SYNC picks how a stage knows its inputs are there. Values a stage publishes
// for other workgroups are always LL entries (below); with SYNC 0 the
// workgroups also meet at a grid barrier between stages (a buffer memory
// barrier, then one atomic add per workgroup on Sync.count; one invocation
// polls it), so the entries are there when read; with SYNC 2 the same
// counter without the memory barrier gates the reads, and an entry that is
// not there yet is polled until it is; with SYNC 1 there is no counter and
// the consumers poll the entries themselves. The counter never goes back:
// stage k of step s waits for (s * STAGES + k + 1) * GROUPS arrivals,
// compared modulo 2^32.
//
// The hand-over carries its own synchronisation (the low-latency protocol of
// NCCL's LL transport): every value a stage publishes for other workgroups
// is one 8-byte entry (bits, bits ^ epoch) of the LL buffer, written by one
// store; a consumer polls the entries it needs (volatile loads, from L2) until
// each carries the epoch of the write it waits for, so the data's arrival is
// the signal: no counter, no memory barrier before it, one L2 round trip
// after the producer's store. Epochs are unique per step, layer and stage
// (ep()), have the top bit set (a zeroed entry never matches) and a torn read
// of an entry (old bits, new check word or the reverse) fails its check
// except where the two values' bits differ exactly as the epochs do. Reuse
// of an entry is safe because every stage consumes all of the outputs of the
// stage two before it (transitively), and the residual x alternates between
// two slots by layer (the hazard analysis is in bench/NOTES.md, 2026-12-05).
//
// The weights do not depend on the data, so each workgroup loads its slice of
// the NEXT stage's weights into registers at the start of a stage (FILL_MODE
// 2): the loads are in flight while the stage polls and computes, and land in
// shared memory at its end. The stage itself reads only shared memory and a
// few KB of activations from L2. With SMEM_W 0 (a slice too big for shared
// memory, or fewer workgroups than heads: lavapipe's case) every product
// reads its weights from the weight buffer directly.
//
// Stages per layer (items split evenly over the workgroups; x the residual):
//   A  RMSNorm(x) · W_qkv, row pairs (d, d + HEAD_DIM/2) of each head, RoPE
//      on q and k: q, k and v published; k and v also into row pos of the
//      layer's caches (read by later steps)
//   B  per (head, slice of W_o's rows): the head's attention over the cache
//      and this step's k, v (recomputed by each of the head's workgroups),
//      then part[head][rows] = W_o[rows, head's columns] · attention — the
//      output product split by head
//   C  xb = x + Σ_heads part, RMSNorm(xb) · W_gate, W_up, h = silu(gate) · up
//   D  x' = xb + W_down · h for its rows (xb recomputed for them)
// then E: RMSNorm(x) · W_head into the logits and each workgroup's best logit
// as a candidate; workgroup 0 picks the token from the candidates (the lowest
// index on ties, as argmax.glsl), writes it to the history and, with ADVANCE,
// moves the position on, and counts the step in Sync.step.
//
// Co-residency is not something Vulkan promises: a poll that waits more than
// SPIN_LIMIT rounds sets Sync.error and its workgroup returns (the others then
// give up on its outputs the same way); the host reads Sync after the run and
// refuses the result with a message (never a hang, never a silently wrong
// token). Weights: one buffer, f16 row-major matrices and f32 gains at the
// offsets of llama.c's layout_weights, given in 16-byte units by
// specialization constants.
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#define LLAMA_CLUSTER_ADD 1
#include "common.glsl"

layout(constant_id = 1) const uint GROUPS = 1;     // the dispatch's workgroups
layout(constant_id = 2) const uint LANES = 32;     // invocations per weight row (<= subgroup)
layout(constant_id = 3) const uint LAYERS = 1;
layout(constant_id = 4) const uint DIM = 64;       // hidden size
layout(constant_id = 5) const uint HEADS = 4;
layout(constant_id = 6) const uint KV_HEADS = 2;
layout(constant_id = 7) const uint HEAD_DIM = 16;
layout(constant_id = 8) const uint FFN = 128;
layout(constant_id = 9) const uint VOCAB = 256;
layout(constant_id = 10) const uint MAX_SEQ = 64;
layout(constant_id = 11) const float EPS = 1e-5;
layout(constant_id = 12) const float SCALE = 0.25;  // 1 / sqrt(HEAD_DIM)
layout(constant_id = 13) const uint ADVANCE = 0;
layout(constant_id = 14) const uint SMEM_W = 0;     // weights through shared memory
layout(constant_id = 15) const uint WCAP = 1;       // its size, uvec4
layout(constant_id = 16) const uint SPIN_LIMIT = 1u << 24;
// llama.c --profile only: parts to leave out. Bits 0-3: the math of stages
// A-D (their polls and publishes stay, so the hand-over chain is still
// timed), bit 4: stage E's LM-head stream, bit 5: the weight fills. Any bit
// set makes the step's results meaningless; the host never checks or keeps
// them.
layout(constant_id = 17) const uint SKIP = 0;
// When a workgroup loads its next weight slice: 0 at the end of a stage, one
// load at a time; 1 at the end of a stage, all loads issued at once; 2 issued
// at the start of the stage before, stored into shared memory at its end.
layout(constant_id = 18) const uint FILL_MODE = 2;
// LM-head rows a lane cluster streams at once, their loads issued before the
// first product (at most 8).
layout(constant_id = 19) const uint HEAD_ROWS = 4;
// 0: grid barriers, 1: epochs only, 2: a counter without memory barriers
// gating reads checked by their epochs (see the header)
layout(constant_id = 32) const uint SYNC = 2;
// weight offsets, 16-byte units: layer 0's pieces, the layer stride, the rest
layout(constant_id = 20) const uint LAYER_STRIDE = 0;
layout(constant_id = 21) const uint OFF_QKV = 0;
layout(constant_id = 22) const uint OFF_O = 0;
layout(constant_id = 23) const uint OFF_GATE = 0;
layout(constant_id = 24) const uint OFF_UP = 0;
layout(constant_id = 25) const uint OFF_DOWN = 0;
layout(constant_id = 26) const uint OFF_ANORM = 0;
layout(constant_id = 27) const uint OFF_MNORM = 0;
layout(constant_id = 28) const uint EMBED_AT = 0;
layout(constant_id = 29) const uint HEAD_AT = 0;
layout(constant_id = 30) const uint NORM_AT = 0;
layout(constant_id = 31) const uint ROPE_AT = 0;

const uint QDIM = HEADS * HEAD_DIM, KVDIM = KV_HEADS * HEAD_DIM;
const uint HALF = HEAD_DIM / 2;
const uint N8D = DIM / 8, N8F = FFN / 8, N8Q = QDIM / 8, N8H = HEAD_DIM / 8;
const uint DV = HEAD_DIM / 4;  // vec4 per head row
// the slices: stage A row pairs, B (head, rows of W_o) units, C items, D rows
const uint PAIRS = (QDIM + 2 * KVDIM) / 2;
const uint PER_A = (PAIRS + GROUPS - 1) / GROUPS;
const uint OSPLIT = GROUPS >= HEADS ? GROUPS / HEADS : 1;  // W_o row slices per head
const uint UNITS = HEADS * OSPLIT;
const uint PER_B = (DIM + OSPLIT - 1) / OSPLIT;
const uint PER_C = (FFN + GROUPS - 1) / GROUPS;
const uint PER_D = (DIM + GROUPS - 1) / GROUPS;
const uint PER_E = (VOCAB + GROUPS - 1) / GROUPS;
const uint VEC = FFN > DIM ? FFN : DIM;
const uint RES_AC = 2 * PER_A > 2 * PER_C ? 2 * PER_A : 2 * PER_C;
const uint RES_BD = PER_B > PER_D ? PER_B : PER_D;
const uint RES = RES_AC > RES_BD ? RES_AC : RES_BD;  // the most rows a stage gives a workgroup
// LL: the published activations, one uvec2 entry each (the host checks that
// RD <= RMAX and PER_D <= BLOCK_SIZE)
const uint LQ = 0, LK = QDIM, LV = LK + KVDIM, LP = LV + KVDIM, LH = LP + HEADS * DIM,
           LX = LH + FFN, LC = LX + 2 * DIM;
const uint RMAX = 8;                                // x entries an invocation sums at most
const uint RD = (DIM + BLOCK_SIZE - 1) / BLOCK_SIZE;  // x entries per invocation
const uint NB = 16;                                 // LL loads in flight per poll
const uint FR = 8;                                  // slice loads in flight (FILL_MODE 1, 2)
const uint STAGES = 4 * LAYERS + 1;                 // counter arrivals a step, per workgroup

layout(binding = 0) buffer Params { uint pos; uint prompt_len; } params;
layout(binding = 1) buffer History { uint tokens[]; };  // MAX_SEQ + 1 entries
layout(binding = 2) readonly buffer Weights { uvec4 W[]; };
layout(binding = 3) coherent volatile buffer LL { uvec2 ll[]; };
layout(binding = 4) buffer KeyCache { vec4 kc[]; };     // rows < pos: earlier steps'
layout(binding = 5) buffer ValueCache { vec4 vc[]; };
layout(binding = 6) writeonly buffer Logits { float logits[]; };
layout(binding = 7) coherent volatile buffer Sync { uint step; uint error; uint count; uint spare; } sync;

shared uvec4 ws[WCAP];       // this workgroup's rows of the stage's weights
shared float gs[DIM];        // the stage's RMSNorm gain (SMEM_W)
shared vec4 vs4[VEC / 4];    // the stage's input vector (normalised)
shared float res[RES + 1];   // the stage's row results
shared float ps[MAX_SEQ];    // attention scores
shared vec4 red4[BLOCK_SIZE];
shared vec4 att[DV];
shared vec4 cur[3 * DV];     // stage B: this step's q, k, v of the unit's head
shared bool s_fail;
shared uint s_best_i[BLOCK_SIZE / 4 + 1];

#define TID gl_LocalInvocationID.x

uint g_step;       // Sync.step, read once at the start
uvec4 fr[FR];      // the next slice's loads in flight (FILL_MODE 2)
float gr[RMAX];    // and its gain's

float gain(uint at, uint c) { return uintBitsToFloat(W[at + c / 4][c % 4]); }
float vget(uint c) { return vs4[c / 4][c % 4]; }
void vset(uint c, float v) { vs4[c / 4][c % 4] = v; }

float dot8(uvec4 w, uint c8) {
  return dot(vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y)), vs4[2 * c8]) +
         dot(vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w)), vs4[2 * c8 + 1]);
}

// ---- the hand-over ---------------------------------------------------------
// The epoch of stage s of layer l in this step.
uint ep(uint l, uint s) { return 0x80000000u | ((g_step & 0x1FFFFFu) << 10) | ((l & 0xFFu) << 2) | s; }

void put(uint at, float v, uint e) {
  const uint b = floatBitsToUint(v);
  ll[at] = uvec2(b, b ^ e);
}

// Polls the entries at[i], i < n <= NB, until each carries its epoch e[i];
// their values into v. False when it gave up (the error word is then set).
bool poll(uint n, uint at[NB], uint e[NB], out float v[NB]) {
  uint pending = n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1u;
  bool ok = true;
  uint spins = 0;
  while (pending != 0) {
    uvec2 w[NB];
    [[unroll]] for (uint i = 0; i < NB; i++)
      if ((pending & (1u << i)) != 0) w[i] = ll[at[i]];
    [[unroll]] for (uint i = 0; i < NB; i++)
      if ((pending & (1u << i)) != 0 && (w[i].x ^ w[i].y) == e[i]) {
        v[i] = uintBitsToFloat(w[i].x);
        pending &= ~(1u << i);
      }
    if (pending != 0 && (++spins >= SPIN_LIMIT || ((spins & 1023u) == 0 && sync.error != 0))) {
      atomicOr(sync.error, 1u);
      ok = false;
      break;
    }
  }
  return ok;
}

// vs[c] = the entry at base + c, c < n, published with epoch e.
bool get_vec(uint base, uint n, uint e) {
  for (uint c0 = TID; c0 < n; c0 += NB * BLOCK_SIZE) {
    uint at[NB], ee[NB];
    float v[NB];
    const uint m = min(NB, (n - c0 + BLOCK_SIZE - 1) / BLOCK_SIZE);
    [[unroll]] for (uint i = 0; i < NB; i++) {
      at[i] = base + min(c0 + i * BLOCK_SIZE, n - 1);
      ee[i] = e;
    }
    if (!poll(m, at, ee, v)) return false;
    [[unroll]] for (uint i = 0; i < NB; i++)
      if (i < m) vset(c0 + i * BLOCK_SIZE, v[i]);
  }
  return true;
}

// x of layer l (its input residual), element c: the token's embedding row
// for layer 0 (read here, not published), else the LL slot D(l - 1) wrote.
float embed(uint tok, uint c) {
  const uvec4 e = W[EMBED_AT + tok * N8D + c / 8];
  const uint w = e[(c % 8) / 2];
  return unpackHalf2x16(w)[c % 2];
}

// acc[k] = x_l[c] + Σ_h part_h[c] for c = c0 + k * step, k < n <= RMAX.
bool get_resid(uint l, uint tok, uint c0, uint step, uint n, out float acc[RMAX]) {
  const uint per = l == 0 ? HEADS : HEADS + 1;  // entries per c
  [[unroll]] for (uint k = 0; k < RMAX; k++)
    acc[k] = l == 0 && k < n ? embed(tok, c0 + k * step) : 0.0;
  const uint ex = ep(l - 1, 3), ebp = ep(l, 1);
  for (uint i0 = 0; i0 < n * per; i0 += NB) {
    uint at[NB], ee[NB];
    float v[NB];
    const uint m = min(NB, n * per - i0);
    [[unroll]] for (uint i = 0; i < NB; i++) {
      const uint r = min(i0 + i, n * per - 1), k = r / per, j = r % per;
      const uint c = c0 + k * step;
      const bool is_x = l != 0 && j == HEADS;
      at[i] = is_x ? LX + (l % 2) * DIM + c : LP + j * DIM + c;
      ee[i] = is_x ? ex : ebp;
    }
    if (!poll(m, at, ee, v)) return false;
    [[unroll]] for (uint i = 0; i < NB; i++)
      if (i < m) acc[(i0 + i) / per] += v[i];
  }
  return true;
}

// SYNC 0 and 2: the workgroup's arrival after stage k of the step (every
// workgroup arrives at every stage, with work in it or not), and the wait
// for all of them. False when the wait gave up (the error word is then set).
void arrive() {
  if (SYNC == 1) return;
  if (SYNC == 0) memoryBarrierBuffer();
  barrier();
  if (TID == 0) atomicAdd(sync.count, 1u);
}
bool wait_all(uint k) {
  if (SYNC == 1) return true;
  if (TID == 0) {
    const uint target = (g_step * STAGES + k + 1) * GROUPS;
    uint n = 0;
    while (int(sync.count - target) < 0) {
      if (++n >= SPIN_LIMIT || ((n & 1023u) == 0 && sync.error != 0)) {
        atomicOr(sync.error, 1u);
        s_fail = true;
        break;
      }
    }
  }
  if (SYNC == 0) memoryBarrierBuffer();
  memoryBarrierShared();
  barrier();
  return !s_fail;
}

// The workgroup's verdict after its polls: every invocation returns the same.
bool all_ok(bool ok) {
  if (!ok) s_fail = true;
  memoryBarrierShared();
  barrier();
  return !s_fail;
}

// ---- each stage's weight rows: local row k of this workgroup -> 16-byte offset
uint row_a(uint l, uint k) {  // stage A: pair a0 + k / 2, its first or second row
  const uint j = gl_WorkGroupID.x * PER_A + k / 2;
  const uint head = j / HALF, d = j % HALF;
  return l * LAYER_STRIDE + OFF_QKV + (head * HEAD_DIM + d + (k % 2) * HALF) * N8D;
}
uint rows_a() {
  const uint a0 = gl_WorkGroupID.x * PER_A;
  return a0 >= PAIRS ? 0 : 2 * (min(PAIRS, a0 + PER_A) - a0);
}
uint row_b(uint l, uint u, uint k) {  // unit u: head u / OSPLIT, row (u % OSPLIT) * PER_B + k
  const uint h = u / OSPLIT, r = (u % OSPLIT) * PER_B + k;
  return l * LAYER_STRIDE + OFF_O + r * N8Q + h * N8H;
}
uint rows_b(uint u) {
  const uint r0 = (u % OSPLIT) * PER_B;
  return u >= UNITS || r0 >= DIM ? 0 : min(DIM, r0 + PER_B) - r0;
}
uint row_c(uint l, uint k) {  // item c0 + k / 2: its gate row (k even) or up row
  const uint i = gl_WorkGroupID.x * PER_C + k / 2;
  return l * LAYER_STRIDE + ((k % 2) == 0 ? OFF_GATE : OFF_UP) + i * N8D;
}
uint rows_c() {
  const uint c0 = gl_WorkGroupID.x * PER_C;
  return c0 >= FFN ? 0 : 2 * (min(FFN, c0 + PER_C) - c0);
}
uint row_d(uint l, uint k) {
  return l * LAYER_STRIDE + OFF_DOWN + (gl_WorkGroupID.x * PER_D + k) * N8F;
}
uint rows_d() {
  const uint r0 = gl_WorkGroupID.x * PER_D;
  return r0 >= DIM ? 0 : min(DIM, r0 + PER_D) - r0;
}
// Local row k of a stage's slice -> its 16-byte offset (u: stage B's unit).
uint row_at(uint stage, uint l, uint u, uint k) {
  if (stage == 0) return row_a(l, k);
  if (stage == 1) return row_b(l, u, k);
  if (stage == 2) return row_c(l, k);
  return row_d(l, k);
}
// This workgroup's slice of a stage: its rows, uvec4 per row, gain (0: none).
uint slice_rows(uint stage) {
  if (stage == 0) return rows_a();
  if (stage == 1) return rows_b(gl_WorkGroupID.x);
  if (stage == 2) return rows_c();
  if (stage == 3) return rows_d();
  return 0;  // stage E: the final gain only
}
uint slice_n8(uint stage) { return stage == 1 ? N8H : stage == 3 ? N8F : N8D; }
uint slice_gain(uint stage, uint l) {
  if (stage == 0 && slice_rows(0) != 0) return l * LAYER_STRIDE + OFF_ANORM + 1;
  if (stage == 2 && slice_rows(2) != 0) return l * LAYER_STRIDE + OFF_MNORM + 1;
  if (stage == 4) return NORM_AT + 1;
  return 0;  // + 1: offset 0 is a weight, but never a gain
}

// ---- the weight slices -----------------------------------------------------
// fetch(): the first FR * BLOCK_SIZE uvec4 of the slice and the gain into
// registers; commit(): them into shared memory, and the rest of the slice
// (a slice larger than FR uvec4 an invocation) loaded there directly.
void fetch(uint stage, uint l) {
  if (SMEM_W == 0 || (SKIP & 32u) != 0) return;
  const uint n8 = slice_n8(stage), n = slice_rows(stage) * n8, u = gl_WorkGroupID.x;
  [[unroll]] for (uint j = 0; j < FR; j++) {
    const uint i = TID + j * BLOCK_SIZE;
    if (i < n) fr[j] = W[row_at(stage, l, u, i / n8) + i % n8];
  }
  const uint g = slice_gain(stage, l);
  [[unroll]] for (uint k = 0; k < RMAX; k++) {
    const uint c = TID + k * BLOCK_SIZE;
    if (g != 0 && c < DIM) gr[k] = gain(g - 1, c);
  }
}
void commit(uint stage, uint l) {
  if (SMEM_W == 0 || (SKIP & 32u) != 0) return;
  const uint n8 = slice_n8(stage), n = slice_rows(stage) * n8, u = gl_WorkGroupID.x;
  [[unroll]] for (uint j = 0; j < FR; j++) {
    const uint i = TID + j * BLOCK_SIZE;
    if (i < n) ws[i] = fr[j];
  }
  for (uint i = TID + FR * BLOCK_SIZE; i < n; i += BLOCK_SIZE)
    ws[i] = W[row_at(stage, l, u, i / n8) + i % n8];
  const uint g = slice_gain(stage, l);
  [[unroll]] for (uint k = 0; k < RMAX; k++) {
    const uint c = TID + k * BLOCK_SIZE;
    if (g != 0 && c < DIM) gs[c] = gr[k];
  }
}
// FILL_MODE 0: the slice straight into shared memory, a load at a time.
void fill_serial(uint stage, uint l) {
  if (SMEM_W == 0 || (SKIP & 32u) != 0) return;
  const uint n8 = slice_n8(stage), n = slice_rows(stage) * n8, u = gl_WorkGroupID.x;
  for (uint i = TID; i < n; i += BLOCK_SIZE) ws[i] = W[row_at(stage, l, u, i / n8) + i % n8];
  const uint g = slice_gain(stage, l);
  for (uint c = TID; g != 0 && c < DIM; c += BLOCK_SIZE) gs[c] = gain(g - 1, c);
}
// Where the main loop loads slices: before a stage (|early|) or after it.
void load_slice(bool early, uint stage, uint l) {
  if (FILL_MODE == 2) {
    if (early) fetch(stage, l);
    else commit(stage, l);
  } else if (!early) {
    if (FILL_MODE == 0) fill_serial(stage, l);
    else {
      fetch(stage, l);
      commit(stage, l);
    }
  }
}

// The cluster width for rows of |n8| uvec4: LANES, halved while wider than the row.
uint lanes_for(uint n8) {
  uint n = LANES;
  while (n > n8) n /= 2;
  return n;
}

// res[k] = row k · vs for |rows| rows of |n8| uvec4 (ws, or the weight buffer
// through the stage's row map). All invocations call it.
void products(uint stage, uint l, uint u, uint rows, uint n8) {
  if ((SKIP & (1u << stage)) != 0) {
    barrier();
    return;
  }
  const uint lanes = lanes_for(n8), per_pass = BLOCK_SIZE / lanes;
  const uint lane = TID % lanes;
  for (uint k0 = 0; k0 < rows; k0 += per_pass) {
    const uint k = k0 + TID / lanes;
    float a = 0.0;
    if (k < rows) {
      const uint at = SMEM_W == 0 ? row_at(stage, l, u, k) : 0;
      if (SMEM_W != 0)
        for (uint c = lane; c < n8; c += lanes) a += dot8(ws[k * n8 + c], c);
      else
        for (uint c = lane; c < n8; c += lanes) a += dot8(W[at + c], c);
    }
    a = cluster_add(a, lanes);
    if (lane == 0 && k < rows) res[k] = a;
  }
  barrier();
}

// vs = RMSNorm(v) with the gain at |gat| (gs with SMEM_W); v in vs[0, DIM).
void normalise(uint gat) {
  float ss = 0.0;
  for (uint c = TID; c < DIM; c += BLOCK_SIZE) ss += vget(c) * vget(c);
  const float scale = inversesqrt(block_sum(ss) / float(DIM) + EPS);
  for (uint c = TID; c < DIM; c += BLOCK_SIZE)
    vset(c, vget(c) * scale * (SMEM_W != 0 && (SKIP & 32u) == 0 ? gs[c] : gain(gat, c)));
  barrier();
}

bool stage_a(uint l, uint pos, uint tok) {
  const uint rows = rows_a();
  if (rows == 0) return true;
  bool ok = true;
  if (l == 0)
    for (uint c = TID; c < DIM; c += BLOCK_SIZE) vset(c, embed(tok, c));
  else
    ok = get_vec(LX + (l % 2) * DIM, DIM, ep(l - 1, 3));
  if (!all_ok(ok)) return false;
  normalise(l * LAYER_STRIDE + OFF_ANORM);
  products(0, l, 0, rows, N8D);
  const uint e = ep(l, 0);
  for (uint k = TID; k < rows / 2; k += BLOCK_SIZE) {
    const uint j = gl_WorkGroupID.x * PER_A + k;
    const uint head = j / HALF, d = j % HALF;
    float a0 = res[2 * k], a1 = res[2 * k + 1];
    if (head < HEADS + KV_HEADS) {  // rotate-half RoPE, (cos, sin) from the host's table
      const uint q = pos * HALF + d;
      const uvec4 cs4 = W[ROPE_AT + q / 2];
      const vec2 r = (q % 2) == 0 ? uintBitsToFloat(cs4.xy) : uintBitsToFloat(cs4.zw);
      const float b0 = a0 * r.x - a1 * r.y, b1 = a1 * r.x + a0 * r.y;
      a0 = b0;
      a1 = b1;
    }
    // q, k, v are consecutive in LL (LQ, LK, LV) as the heads are in W_qkv
    put(LQ + head * HEAD_DIM + d, a0, e);
    put(LQ + head * HEAD_DIM + d + HALF, a1, e);
    if (head >= HEADS) {
      const bool is_k = head < HEADS + KV_HEADS;
      const uint kvh = is_k ? head - HEADS : head - HEADS - KV_HEADS;
      const uint at = (l * MAX_SEQ + pos) * KVDIM + kvh * HEAD_DIM + d;
      if (is_k) {
        kc[at / 4][at % 4] = a0;
        kc[(at + HALF) / 4][(at + HALF) % 4] = a1;
      } else {
        vc[at / 4][at % 4] = a0;
        vc[(at + HALF) / 4][(at + HALF) % 4] = a1;
      }
    }
  }
  barrier();
  return true;
}

// One unit of stage B: head u / OSPLIT's attention, then its W_o rows.
bool attention_unit(uint l, uint pos, uint u) {
  const uint h = u / OSPLIT, kvh = h / (HEADS / KV_HEADS);
  const uint seq = pos + 1;
  const uint base = (l * MAX_SEQ) * (KVDIM / 4) + kvh * DV;  // vec4 index of key 0's head row
  // this step's q of head h, k and v of its KV head (published by stage A)
  {
    const uint e = ep(l, 0);
    bool ok = true;
    for (uint c0 = TID; c0 < 3 * HEAD_DIM && ok; c0 += NB * BLOCK_SIZE) {
      uint at[NB], ee[NB];
      float v[NB];
      const uint m = min(NB, (3 * HEAD_DIM - c0 + BLOCK_SIZE - 1) / BLOCK_SIZE);
      [[unroll]] for (uint i = 0; i < NB; i++) {
        const uint c = min(c0 + i * BLOCK_SIZE, 3 * HEAD_DIM - 1), part = c / HEAD_DIM;
        at[i] = part == 0 ? LQ + h * HEAD_DIM + c
                          : (part == 1 ? LK : LV) + kvh * HEAD_DIM + c % HEAD_DIM;
        ee[i] = e;
      }
      ok = poll(m, at, ee, v);
      [[unroll]] for (uint i = 0; i < NB; i++)
        if (ok && i < m) {
          const uint c = c0 + i * BLOCK_SIZE;
          cur[c / 4][c % 4] = v[i];
        }
    }
    if (!all_ok(ok)) return false;
  }
  if ((SKIP & 2u) == 0) {
    // scores: 4 invocations a key (DV / 4 vec4 each), BLOCK_SIZE / 4 keys a pass
    const uint SL = 4, VPL = DV / 4;
    const uint li = TID % SL;
    for (uint t0 = 0; t0 < seq; t0 += BLOCK_SIZE / SL) {
      const uint t = t0 + TID / SL;
      float a = 0.0;
      if (t < seq)
        for (uint k = 0; k < VPL; k++) {
          const uint c4 = li + k * SL;
          const vec4 key = t < pos ? kc[base + t * (KVDIM / 4) + c4] : cur[DV + c4];
          a += dot(cur[c4], key);
        }
      a = cluster_add(a, SL);
      if (li == 0 && t < seq) ps[t] = a * SCALE;
    }
    barrier();
    float m = NEG_HUGE;
    for (uint t = TID; t < seq; t += BLOCK_SIZE) m = max(m, ps[t]);
    m = block_max(m);
    float sum = 0.0;
    for (uint t = TID; t < seq; t += BLOCK_SIZE) {
      const float e = exp(ps[t] - m);
      ps[t] = e;
      sum += e;
    }
    sum = block_sum(sum);  // its barriers also publish ps
    // values: invocation (phase, column), BLOCK_SIZE / DV phases over the keys
    const uint col = TID % DV, phase = TID / DV, phases = BLOCK_SIZE / DV;
    vec4 acc = vec4(0.0);
    for (uint t = phase; t < seq; t += phases)
      acc += ps[t] * (t < pos ? vc[base + t * (KVDIM / 4) + col] : cur[2 * DV + col]);
    red4[TID] = acc;
    barrier();
    if (TID < DV) {
      vec4 o = vec4(0.0);
      for (uint p = 0; p < phases; p++) o += red4[p * DV + TID];
      att[TID] = o / sum;
    }
    barrier();
    for (uint c = TID; c < HEAD_DIM; c += BLOCK_SIZE) vset(c, att[c / 4][c % 4]);
    barrier();
  }
  const uint rows = rows_b(u);
  products(1, l, u, rows, N8H);
  const uint r0 = (u % OSPLIT) * PER_B, e = ep(l, 1);
  for (uint k = TID; k < rows; k += BLOCK_SIZE) put(LP + h * DIM + r0 + k, res[k], e);
  barrier();  // res and cur are reused by the next unit
  return true;
}

bool stage_c(uint l, uint tok) {
  const uint rows = rows_c();
  if (rows == 0) return true;
  float acc[RMAX];
  const bool ok = get_resid(l, tok, TID, BLOCK_SIZE, (DIM - TID + BLOCK_SIZE - 1) / BLOCK_SIZE, acc);
  [[unroll]] for (uint k = 0; k < RMAX; k++) {
    const uint c = TID + k * BLOCK_SIZE;
    if (ok && c < DIM) vset(c, acc[k]);
  }
  if (!all_ok(ok)) return false;
  normalise(l * LAYER_STRIDE + OFF_MNORM);
  products(2, l, 0, rows, N8D);
  const uint e = ep(l, 2);
  for (uint k = TID; k < rows / 2; k += BLOCK_SIZE) {
    const float g = res[2 * k], up = res[2 * k + 1];
    put(LH + gl_WorkGroupID.x * PER_C + k, g / (1.0 + exp(-g)) * up, e);
  }
  barrier();
  return true;
}

bool stage_d(uint l, uint tok) {
  const uint rows = rows_d();
  if (rows == 0) return true;
  const uint r0 = gl_WorkGroupID.x * PER_D;
  bool ok = get_vec(LH, FFN, ep(l, 2));
  float xb[RMAX];  // invocation k < rows: row r0 + k's x + attention
  if (ok && TID < rows) ok = get_resid(l, tok, r0 + TID, 1, 1, xb);
  if (!all_ok(ok)) return false;
  products(3, l, 0, rows, N8F);
  if (TID < rows) put(LX + ((l + 1) % 2) * DIM + r0 + TID, xb[0] + res[TID], ep(l, 3));
  barrier();
  return true;
}

// The best (largest value, then lowest index) over the workgroup, to every
// invocation: subgroup winners, then one subgroup's pass over them (the host
// checks that a workgroup has at most a subgroup's worth of subgroups).
void block_best(inout float bv, inout uint bi) {
  float sv = subgroupMax(bv);
  uint si = subgroupMin(bv == sv ? bi : 0xFFFFFFFFu);
  if (subgroupElect()) { red_f[gl_SubgroupID] = sv; s_best_i[gl_SubgroupID] = si; }
  barrier();
  const uint lane = gl_SubgroupInvocationID;
  const float v = lane < gl_NumSubgroups ? red_f[lane] : NEG_HUGE;
  const uint i = lane < gl_NumSubgroups ? s_best_i[lane] : 0xFFFFFFFFu;
  sv = subgroupMax(v);
  si = subgroupMin(v == sv ? i : 0xFFFFFFFFu);
  barrier();
  bv = sv;
  bi = si;
}

// Stage E: the LM head's rows of this workgroup, streamed (no shared-memory
// slice: 49152 rows): HEAD_ROWS rows a lane cluster per pass, all of a pass's
// loads (HEAD_ROWS x up to 4 uvec4 an invocation) issued before the first
// product, so that enough bytes are in flight per SM to cover the memory's
// latency. Each workgroup's best logit becomes a candidate for workgroup 0.
bool stage_e() {
  if (!all_ok(get_vec(LX + (LAYERS % 2) * DIM, DIM, ep(LAYERS - 1, 3)))) return false;
  normalise(NORM_AT);
  const uint lanes = lanes_for(N8D), per_pass = BLOCK_SIZE / lanes, lane = TID % lanes;
  const uint HR = HEAD_ROWS < 1 ? 1 : HEAD_ROWS > 8 ? 8 : HEAD_ROWS;
  const uint r0 = gl_WorkGroupID.x * PER_E, r1 = min(VOCAB, r0 + PER_E);
  float bv = NEG_HUGE;
  uint bi = 0xFFFFFFFFu;
  if ((SKIP & 16u) == 0)
    for (uint k0 = r0 + TID / lanes; k0 < r1; k0 += HR * per_pass) {
      float a[8];
      [[unroll]] for (uint j = 0; j < 8; j++) a[j] = 0.0;
      for (uint c0 = lane; c0 < N8D; c0 += 4 * lanes) {
        uvec4 w[8][4];
        [[unroll]] for (uint j = 0; j < 8; j++)
          [[unroll]] for (uint q = 0; q < 4; q++) {
            const uint r = k0 + j * per_pass, c = c0 + q * lanes;
            if (j < HR && r < r1 && c < N8D) w[j][q] = W[HEAD_AT + r * N8D + c];
          }
        [[unroll]] for (uint j = 0; j < 8; j++)
          [[unroll]] for (uint q = 0; q < 4; q++) {
            const uint r = k0 + j * per_pass, c = c0 + q * lanes;
            if (j < HR && r < r1 && c < N8D) a[j] += dot8(w[j][q], c);
          }
      }
      [[unroll]] for (uint j = 0; j < 8; j++) {
        if (j >= HR) break;
        const uint r = k0 + j * per_pass;
        const float v = cluster_add(a[j], lanes);
        if (r < r1) {
          if (lane == 0) logits[r] = v;
          if (v > bv) { bv = v; bi = r; }
        }
      }
    }
  block_best(bv, bi);
  if (TID == 0) {
    const uint e = ep(LAYERS, 0);
    put(LC + 2 * gl_WorkGroupID.x, bv, e);
    put(LC + 2 * gl_WorkGroupID.x + 1, uintBitsToFloat(bi), e);
  }
  barrier();
  return true;
}

void main() {
  if (TID == 0) s_fail = sync.error != 0;
  g_step = sync.step;  // Sync.step changes only at the end of the step (workgroup 0)
  barrier();
  if (s_fail) return;  // an earlier step failed: the host refuses the run
  const uint pos = min(params.pos, MAX_SEQ - 1);
  const uint tok = min(tokens[pos], VOCAB - 1);
  load_slice(true, 0, 0);
  load_slice(false, 0, 0);
  barrier();
  uint k = 0;  // the stage's number in the step
  for (uint l = 0; l < LAYERS; l++) {
    load_slice(true, 1, l);
    if (!stage_a(l, pos, tok)) return;
    arrive();
    load_slice(false, 1, l);
    if (!wait_all(k++)) return;
    load_slice(true, 2, l);
    for (uint u = gl_WorkGroupID.x; u < UNITS; u += GROUPS)
      if (!attention_unit(l, pos, u)) return;
    arrive();
    load_slice(false, 2, l);
    if (!wait_all(k++)) return;
    load_slice(true, 3, l);
    if (!stage_c(l, tok)) return;
    arrive();
    load_slice(false, 3, l);
    if (!wait_all(k++)) return;
    const uint next = l + 1 < LAYERS ? 0 : 4;
    load_slice(true, next, l + 1);
    if (!stage_d(l, tok)) return;
    arrive();
    load_slice(false, next, l + 1);
    if (!wait_all(k++)) return;
  }
  if (!stage_e()) return;
  arrive();
  if (gl_WorkGroupID.x != 0) return;
  if (!wait_all(k)) return;
  // workgroup 0: the token from the candidates
  float bv = NEG_HUGE;
  uint bi = 0xFFFFFFFFu;
  bool ok = true;
  const uint e = ep(LAYERS, 0);
  for (uint w0 = TID; w0 < GROUPS && ok; w0 += BLOCK_SIZE * (NB / 2)) {
    uint at[NB], ee[NB];
    float v[NB];
    const uint m = min(NB / 2, (GROUPS - w0 + BLOCK_SIZE - 1) / BLOCK_SIZE);
    [[unroll]] for (uint i = 0; i < NB; i++) {
      at[i] = LC + 2 * min(w0 + (i / 2) * BLOCK_SIZE, GROUPS - 1) + i % 2;
      ee[i] = e;
    }
    ok = poll(2 * m, at, ee, v);
    [[unroll]] for (uint i = 0; i < NB / 2; i++) {
      const uint idx = floatBitsToUint(v[2 * i + 1]);
      if (ok && i < m && idx != 0xFFFFFFFFu && (v[2 * i] > bv || (v[2 * i] == bv && idx < bi))) {
        bv = v[2 * i];
        bi = idx;
      }
    }
  }
  if (!all_ok(ok)) return;
  block_best(bv, bi);
  if (TID == 0) {
    const uint next = pos + 1;
    if (next >= params.prompt_len) tokens[next] = min(bi, VOCAB - 1);
    if (ADVANCE != 0) params.pos = params.pos + 1;
    sync.step = g_step + 1;
  }
}
