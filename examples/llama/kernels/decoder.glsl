// decoder.glsl — the whole decode step as one dispatch (llama.c --engine
// persistent). The step as separate nodes pays, per dependent node, the
// driver's dependency (~1.8 µs on the H200) and the next kernel's cold start:
// about 4 µs of a 4.4 µs Q/K/V product (bench/NOTES.md, 2026-12-05). Here
// GROUPS workgroups, all resident at once, run every stage of every layer
// and meet at a grid barrier between stages instead: an atomic counter in
// the Sync buffer, each workgroup adding one after a buffer memory barrier
// and polling (volatile loads) for the stage's total. Activations and caches
// are coherent buffers, so their loads after the barrier come from L2, not a
// stale L1. (Written first in the Vulkan memory model, it lost an invocation
// after subgroup operations on Debian 12's lavapipe, Mesa 22.3.6; the GLSL
// coherent/memoryBarrierBuffer form runs right on both.)
//
// The weights do not depend on the data, so each workgroup loads its slice of
// the NEXT stage's weights into shared memory after it has arrived at the
// barrier and before it waits (SMEM_W): the weight stream overlaps the
// barrier, and the stage itself reads only shared memory and a few KB of
// activations from L2. With SMEM_W 0 (a slice too big for shared memory, or
// fewer workgroups than heads: lavapipe's case) every product reads its
// weights from the weight buffer directly.
// The other loads that do not depend on the data leave the stages too
// (AHEAD bit 0): the next RMSNorm's gain rides with that fill, RoPE's (cos,
// sin) are loaded once a step, stage D's residual beside its input; a
// stage's chain of dependent round trips is then its activations, its
// stores and the barrier. The gathers go out in one wave (bit 1): stage C's
// x and heads' parts, the attention's q and its first value rows beside the
// keys. And the slice a workgroup fills two stages on is touched (bit 2:
// one load per 32-byte sector) before the wait, so that the fill could read
// L2, not HBM: on the H200 it recovered only 7 of the 56 µs a fill from L2
// would save (bench/NOTES.md, 2026-12-06), so most touches come too late
// or do not last; with the down product split it cost 11 µs on an H100, and
// it is off by default (AHEAD 11).
//
// Stages per layer (items split evenly over the workgroups; x the residual):
//   A  RMSNorm(x) · W_qkv, row pairs (d, d + HEAD_DIM/2) of each head, RoPE
//      on q and k, q into Act.q, k and v into row pos of the layer's caches
//   B  per (head, slice of W_o's rows): the head's attention over the cache
//      (recomputed by each of the head's workgroups: tens of KB from L2),
//      then part[head][rows] = W_o[rows, head's columns] · attention — the
//      output product split by head, so it needs no barrier of its own
//   C  xb = x + Σ_heads part (every workgroup sums it; workgroup 0 stores it,
//      or with DOWN_COUNTS each keeps it, and x, in shared memory),
//      RMSNorm(xb) · W_gate, W_up, h = silu(gate) · up; with DOWN_SPLIT the
//      workgroup's items of h times their columns of W_down, added over the
//      workgroups into acc[l] (int64 fixed point: exact, so the sum does not
//      depend on the order the workgroups add in), and the next stage A
//      (or E) reads x = xb + acc[l]: the down product needs no stage
//   D  (DOWN_SPLIT 0) x = xb + W_down · h, rows split over the workgroups
// then E: RMSNorm(x) · W_head into the logits, each workgroup's best logit
// as a candidate, and after a last barrier workgroup 0 picks the token (the
// lowest index on ties, as argmax.glsl), writes it to the history and, with
// ADVANCE, moves the position on (with E_NODE none of stage E runs here:
// workgroup 0 stores x for head_best.glsl's node). 3 grid barriers per layer (4 without
// DOWN_SPLIT; one fewer each with HEAD_FLAGS, DOWN_COUNTS, PART_COUNTS or
// QKV_COUNTS, where the stage after waits for its data's counts instead) and
// one at the end.
//
// Co-residency is not something Vulkan promises: a barrier that waits more
// than SPIN_LIMIT polls sets Sync.error and every workgroup returns; the
// host reads Sync after the run and refuses the result with a message
// (never a hang, never a silently wrong token). Sync.count and Sync.done go
// back to 0 at the end of every step (workgroup 0, once all others have
// left), so the next dispatch starts from 0. Weights: one buffer, f16
// row-major matrices and f32 gains at the offsets of llama.c's
// layout_weights, given in 16-byte units by specialization constants.
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_KHR_memory_scope_semantics : require
#ifdef LLAMA_CLOCKS
// llama.c --clocks (llama_decoder_clocks.comp): both clocks at every stage's
// release and arrival (stamp()); needs VK_KHR_shader_clock's two features
#extension GL_EXT_shader_realtime_clock : require
#extension GL_ARB_shader_clock : require
#endif
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
// llama.c --profile only: stage bodies to leave out (bit 0..4: stages A..E;
// bit 3 with DOWN_SPLIT: stage C's down product; bit 5: the weight fills), so that the time without them shows their cost;
// bit 6: the fills read one 4 KB block (L2 hits), not the slices; bit 7:
// stage E left out at run time, its code kept; bit 8: stage E reads one 4 KB
// block.
// Any bit set makes the step's results meaningless; the host never checks
// or keeps them.
layout(constant_id = 17) const uint SKIP = 0;
// Weight loads in flight per invocation while a slice fills shared memory
// (1: one at a time, each waited on before the next) and LM-head rows per
// lane cluster, all their loads issued before the first product (at most 8
// and 16).
layout(constant_id = 18) const uint FILL_INFLIGHT = 8;
layout(constant_id = 19) const uint HEAD_ROWS = 4;
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
// Loads issued ahead of their use, off the chain of dependent round trips a
// stage is made of (bits; 0 is 7fde1e3's order, and llama.c --profile times
// the step without each bit):
//   1  the next RMSNorm's gain with the weight fill (into gs4), RoPE's
//      (cos, sin) once a step (rope_s), stage D's residual before its products
//   2  gathers in one wave: stage C's x and parts all loaded before the first
//      sum, the attention's q loaded once into registers and its first
//      VPRE value rows per invocation beside the keys
//   4  the weight slice of two stages on touched into L2 (touch())
//   8  the fill's first wave in flight while the barrier is polled (fill_end())
//  16  (--profile) the touched words folded in before the barrier they were
//      touched at, not a stage later: every touch has reached L2 when the
//      next stage starts, at the cost of waiting for it there
//  32  stage C's weights loaded a stage early, into registers (early_c)
//  64  stage B's key and value rows of the positions before pos (written by
//      earlier steps; the weight stream has evicted them from L2 since)
//      loaded into registers before the A -> B barrier's poll (kv_early):
//      only the new row, q and the rest wait for the release
// 128  stage E's next wave of LM-head loads issued before this wave's
//      products (stage_e())
// 256  (with 128) stage E's first wave issued before its poll for the down sums
layout(constant_id = 32) const uint AHEAD = 11;
// Invocations a weight row, by stage: 4 bits each for A..E (A lowest); 0
// keeps LANES, v > 0 means 2^(v-1), capped at LANES. What was measured
// (bench/NOTES.md, 2026-12-06): enough rows at once to keep every
// invocation busy in one pass, then as few shuffle steps as that allows;
// many short rows (B, C) want 4, D's five long rows 16.
layout(constant_id = 33) const uint LANE_LOG = 0;
// 1: the attention's softmax per subgroup (each takes the maximum and sum
// over all scores itself), four workgroup barriers fewer a unit than the
// workgroup-wide max and sum (0, which writes the weights into ps).
layout(constant_id = 34) const uint ATT_SUBGROUP = 1;
// 1: the down product split by stage C's items (see above), W_down
// transposed at OFF_DOWN_T (row i: W_down's column i); 0: stage D.
layout(constant_id = 35) const uint DOWN_SPLIT = 1;
layout(constant_id = 36) const uint OFF_DOWN_T = 0;
// The grid barrier's arrival counters (1..32): workgroup w adds at counter
// w % BARRIER_SPREAD, 256 bytes apart, and the poll sums them (subgroup 0,
// one load a counter, all in one round trip), so that no one L2 line takes
// every workgroup's atomic in turn.
layout(constant_id = 37) const uint BARRIER_SPREAD = 1;
// 1: no grid barrier between stages A and B. Each workgroup that wrote part
// of KV group g's heads in stage A (q of the heads that share KV head g, k
// and v of g) adds one to flag counter g (Sync slot FLAG_SLOT + g), and a
// stage-B unit waits only for its group's writers: (l + 1) x their number.
// 0: the grid barrier (all workgroups) between A and B, the default: with
// the flags the step took 10.3 us more on an H100 (bench/NOTES.md, 2026-12-06).
layout(constant_id = 38) const uint HEAD_FLAGS = 0;
// 1: no grid barrier between stage C and the next stage A (or E). Every
// workgroup's add into acc[l] carries one count (COUNT_ONE, bits 55..62), and
// the gather that opens stage A polls acc[l] until each entry counts GROUPS
// adds: the sum is then whole. Fixed point at 2^26 a unit, not 2^32, and at
// most 255 workgroups (the host checks), so that the counts and sums fit.
// Each workgroup keeps the residual (x from stage A, xb from stage C) in
// shared memory (xr), not in Act. Safe to reuse: stage A of layer l + 1
// starts only once every workgroup has added, i.e. finished stage B of l;
// acc[l - 1] is cleared in stage C of l, after the A -> B grid barrier
// (so HEAD_FLAGS, which removes it, is refused beside this).
layout(constant_id = 40) const uint DOWN_COUNTS = 0;
// 1 (with DOWN_COUNTS: the host checks): no grid barrier between stages B
// and C either. Each stage-B unit adds its W_o rows' products into layer l's
// o_proj sums (acc[ACC_PARTS + l * DIM ..], counted like the down
// product's), and stage C's gather polls them until each counts HEADS adds,
// one a head. Safe to reuse: stage C of layer l clears layer l - 1's sums
// (clear_before_c, before its own poll), after stage A of l polled the down
// sums of l - 1 whole: every workgroup adds those only once it has read its
// o_proj sums of l - 1, in stage C of l - 1. (With the A -> B grid barrier,
// that barrier orders it too.)
layout(constant_id = 39) const uint PART_COUNTS = 0;
// 1 (with DOWN_COUNTS: the host checks): no grid barrier between stages A
// and B either, so none inside a layer. Stage A adds each q, k and v value
// of the new position, with one count, into layer l's zeroed staging
// entries (acc[ACC_QKV + l * QKVN ..]: q, then k, then v; the count over
// the float's bits, so the value is exact), and a stage-B unit polls its
// head's q and its KV head's k and v until each counts one add. The key
// and value caches still get row pos, for later steps. Clearing, with no
// grid barrier in a layer: layer l's staging in stage C of l + 1, before
// that stage's poll (every workgroup has finished its stage-B units of l,
// since stage A of l + 1 polled the down sums of l whole, which each
// workgroup adds after its units); the down sums of layer l in stage C of l + 2,
// not l + 1: a workgroup without a stage-A row or a stage-B unit can still
// be reading them in stage A of l + 1 until every workgroup's adds of l + 1
// are in, which stage A of l + 2 waits for.
layout(constant_id = 41) const uint QKV_COUNTS = 0;
// 1 (with DOWN_COUNTS: the host checks): the last layer's stage C ends with
// a grid barrier, as without DOWN_COUNTS, so that stage E (the LM head's
// rows, streamed from HBM) starts in no workgroup while another still runs
// its stage C; stage E's poll of the down sums then finds them whole. Only
// adds ordering: every reuse argument above still holds.
layout(constant_id = 42) const uint E_BARRIER = 0;
// 1: no stage E here. Workgroup 0 gathers x after the last layer into
// Act.xe, and the LM head and the token are the next node's
// (head_best.glsl: llama.c --head-node on); the logits binding goes unused
// and the host sets ADVANCE to 0 (that node moves the position on).
layout(constant_id = 43) const uint E_NODE = 0;

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
// Act: the activations, in floats
const uint XA = 0, XB = DIM, QV = 2 * DIM, PART = QV + QDIM, HB = PART + HEADS * DIM,
           CAND = HB + FFN, XE = (CAND + 2 * GROUPS + 3) / 4 * 4;  // xe 16-byte aligned

layout(binding = 0) buffer Params { uint pos; uint prompt_len; } params;
layout(binding = 1) buffer History { uint tokens[]; };  // MAX_SEQ + 1 entries
layout(binding = 2) readonly buffer Weights { uvec4 W[]; };
layout(binding = 3) coherent buffer Act { float act[]; };
layout(binding = 4) coherent buffer KeyCache { vec4 kc[]; };
layout(binding = 5) coherent buffer ValueCache { vec4 vc[]; };
layout(binding = 6) writeonly buffer Logits { float logits[]; };
// Sync: counter 0 is count; counter i > 0 is uint 64 * i of the buffer
layout(binding = 7) coherent volatile buffer Sync {
  uint count;
  uint done;
  uint error;
  uint sink;
  uint spread[];
} sync;
// DOWN_SPLIT: per layer, W_down · h in fixed point (ACC_ONE a unit), DIM
// entries; 0 at the start of every step (entries of layer l go back to 0 in
// stage C of layer l + 1, the last layer's after the last barrier). Then,
// from ACC_PARTS, PART_COUNTS's o_proj sums, per layer, cleared alike.
layout(binding = 8) coherent buffer Acc { int64_t acc[]; };
const uint ACC_PARTS = LAYERS * DIM;
const uint QKVN = QDIM + 2 * KVDIM, ACC_QKV = 2 * LAYERS * DIM;  // QKV_COUNTS's staging
#ifdef LLAMA_CLOCKS
// Clocks: NEV events a workgroup (stamp()), each (device clock, subgroup
// clock), 2 x 32 bits each
layout(binding = 9) writeonly buffer Clocks { uvec4 clk[]; };
#endif

shared uvec4 ws[WCAP];       // this workgroup's rows of the stage's weights
shared float vs[VEC];        // the stage's input vector (normalised)
shared float xr[DIM];        // DOWN_COUNTS: the residual, x (stage A to C) or xb (C to A)
shared float res[RES + 1];   // the stage's row results
shared float ps[MAX_SEQ];    // attention scores
shared vec4 red4[BLOCK_SIZE];
shared vec4 gs4[DIM / 4];     // the next RMSNorm's gain (AHEAD)
shared vec2 rope_s[PER_A];    // (cos, sin) of this workgroup's stage-A pairs at pos (AHEAD)
shared bool s_fail;
shared uint s_best_i[BLOCK_SIZE / 4 + 1];

#define TID gl_LocalInvocationID.x

// ---- clocks (LLAMA_CLOCKS) ------------------------------------------------
// Event 6 l + k of layer l: k = 0 stage A starts, 1 A arrives at its
// barrier, 2 B is released, 3 B arrives, 4 C released, 5 C arrives (the
// C -> A barrier's release is layer l + 1's event 0); then 6 LAYERS: stage E
// starts, + 1 E arrives, + 2 the last barrier's release. An arrival is
// stamped after the workgroup's own barrier (every invocation done), before
// its atomic; a release after the poll and the barriers that follow it.
// Invocation 0 stamps; NO_EV stamps nothing (stage D's barrier).
const uint NEV = 6 * LAYERS + 3, NO_EV = 0xFFFFFFFFu;

void stamp(uint ev) {
#ifdef LLAMA_CLOCKS
  if (TID == 0 && ev < NEV) clk[gl_WorkGroupID.x * NEV + ev] = uvec4(clockRealtime2x32EXT(), clock2x32ARB());
#endif
}

float gain(uint at, uint c) { return uintBitsToFloat(W[at + c / 4][c % 4]); }

// The 8 halves of a 16-byte weight load, in order: elements 0..3 and 4..7.
void halves(uvec4 w, out vec4 lo, out vec4 hi) {
  lo = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
  hi = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
}

// The 8 weights of w times vs[8 c8 .. 8 c8 + 7].
float dot8(uvec4 w, uint c8) {
  vec4 lo, hi;
  halves(w, lo, hi);
  const vec4 a = vec4(vs[8 * c8], vs[8 * c8 + 1], vs[8 * c8 + 2], vs[8 * c8 + 3]);
  const vec4 b = vec4(vs[8 * c8 + 4], vs[8 * c8 + 5], vs[8 * c8 + 6], vs[8 * c8 + 7]);
  return dot(lo, a) + dot(hi, b);
}

// ---- the grid barrier ----------------------------------------------------
// arrive(): every invocation's writes so far are ordered before one atomic
// add per workgroup. wait_all(): one invocation (a subgroup with
// BARRIER_SPREAD > 1) polls until GROUPS * n arrivals, bounded by
// SPIN_LIMIT, then every invocation ends the fill under way; the memory and
// workgroup barriers after it order every invocation's later loads after the
// poll, and publish the fill.
const uint SPREAD = BARRIER_SPREAD < 1 ? 1 : BARRIER_SPREAD > 32 ? 32 : BARRIER_SPREAD;

void arrive(uint ev) {
  memoryBarrierBuffer();
  memoryBarrierShared();
  barrier();
  stamp(ev);
  if (TID == 0) {
    const uint i = gl_WorkGroupID.x % SPREAD;
    if (i == 0) atomicAdd(sync.count, 1u);
    else atomicAdd(sync.spread[64 * i - 4], 1u);
  }
}

void fill_end();

// Sync slot i's word: the count (0), or the uint 256 bytes a slot in
// (volatile: a load from L2 each time).
uint slot_word(uint i) {
  if (i == 0) return sync.count;
  return sync.spread[64 * i - 4];
}

// One invocation polls slot i until it reaches |target|; false after
// SPIN_LIMIT polls or once another workgroup has set the error word (the
// error is then set here too).
bool poll_slot(uint i, uint target) {
  uint n = 0;
  while (slot_word(i) < target)
    if (++n >= SPIN_LIMIT || sync.error != 0) {
      atomicOr(sync.error, 1u);
      return false;
    }
  return true;
}

// After the poll, every invocation: the fill under way ends (AHEAD bit 3:
// its first wave was in flight during the poll), and the barriers order the
// later loads after the poll and publish the fill.
bool released() {
  fill_end();
  memoryBarrierBuffer();
  memoryBarrierShared();
  barrier();
  return !s_fail;
}

bool wait_all(uint target) {
  if (SPREAD == 1 && TID == 0) {
    s_fail = !poll_slot(0, target);
  } else if (SPREAD > 1 && gl_SubgroupID == 0) {  // SPREAD <= the subgroup (the host checks)
    const uint lane = gl_SubgroupInvocationID;
    bool fail = false;
    uint n = 0;
    for (;;) {
      const uint v = lane < SPREAD ? slot_word(lane) : 0;
      if (subgroupAdd(v) >= target) break;
      if (subgroupAny(++n >= SPIN_LIMIT || (lane == 0 && sync.error != 0))) {
        fail = true;
        break;
      }
    }
    if (subgroupElect()) {
      if (fail) atomicOr(sync.error, 1u);
      s_fail = fail;
    }
  }
  return released();
}

// ---- stage A -> B by KV group (HEAD_FLAGS) --------------------------------
// Stage A's pair j belongs to head j / HALF: q heads first, then k, then v;
// head -> its KV group. The flags live in Sync slots FLAG_SLOT.. (256 bytes
// apart, like the arrival counters; the host sizes Sync and checks them).
const uint FLAG_SLOT = 32;
const uint GROUP_HEADS = HEADS / KV_HEADS;  // q heads a KV head serves

uint kv_group(uint head) {
  return head < HEADS ? head / GROUP_HEADS : head < HEADS + KV_HEADS ? head - HEADS : head - HEADS - KV_HEADS;
}


// The workgroups whose stage-A pairs meet head range [h0, h1), as an
// inclusive range [first, last] (first > last: none).
uvec2 writers(uint h0, uint h1) {
  return uvec2(h0 * HALF / PER_A, min(GROUPS, (h1 * HALF + PER_A - 1) / PER_A) - 1);
}

// How many workgroups add to group g's flag in a layer: the union of the
// writers of its q heads, its k head and its v head (three ranges, in order).
uint flag_writers(uint g) {
  const uvec2 r[3] = uvec2[3](writers(g * GROUP_HEADS, (g + 1) * GROUP_HEADS),
                              writers(HEADS + g, HEADS + g + 1),
                              writers(HEADS + KV_HEADS + g, HEADS + KV_HEADS + g + 1));
  uint n = 0, end = 0;
  bool any = false;
  [[unroll]] for (uint i = 0; i < 3; i++) {
    if (r[i].x > r[i].y) continue;
    const uint a = any ? max(r[i].x, end + 1) : r[i].x;
    if (r[i].y >= a) n += r[i].y - a + 1;
    end = any ? max(end, r[i].y) : r[i].y;
    any = true;
  }
  return n;
}

// After stage A: this workgroup's writes ordered before one add to the flag
// of every KV group it wrote a pair of (TID 0).
void flag_arrive(uint ev) {
  memoryBarrierBuffer();
  memoryBarrierShared();
  barrier();
  stamp(ev);
  if (TID == 0) {
    const uint a0 = gl_WorkGroupID.x * PER_A, a1 = min(PAIRS, a0 + PER_A);
    uint mask = 0;  // KV groups written (the host checks KV_HEADS <= 32)
    for (uint j = a0; j < a1; j += HALF - j % HALF) mask |= 1u << kv_group(j / HALF);
    for (uint g = 0; g < KV_HEADS; g++)
      if ((mask & (1u << g)) != 0) atomicAdd(sync.spread[64 * (FLAG_SLOT + g) - 4], 1u);
  }
}

// Before stage B of layer l: TID 0 polls the flag of each of this
// workgroup's units' KV groups until all its writers of layers 0..l have
// added, bounded by SPIN_LIMIT as wait_all(); then the fill under way ends
// and the barriers publish it, as there.
bool wait_flags(uint l) {
  if (TID == 0) {
    bool ok = true;
    for (uint u = gl_WorkGroupID.x; u < UNITS && ok; u += GROUPS) {
      const uint g = (u / OSPLIT) / GROUP_HEADS;
      ok = poll_slot(FLAG_SLOT + g, (l + 1) * flag_writers(g));
    }
    s_fail = !ok;
  }
  return released();
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
  return r0 >= DIM ? 0 : min(DIM, r0 + PER_B) - r0;
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

const uint NO_GAIN = 0xFFFFFFFFu;

// The fill: |rows| rows of |n8| uvec4 into ws, row k from the stage's row
// map, and with AHEAD bit 0 the gain at |gat| (unless NO_GAIN) into gs4, as
// elements after the rows. fill_begin() issues the first FILL_INFLIGHT
// loads an invocation into registers (ft); fill_end() stores them and
// streams the rest, FILL_INFLIGHT loads in flight before the first store
// (the stream is latency-bound otherwise). With AHEAD bit 3, wait_all()
// calls fill_end() after its poll, so the poll runs while the first wave is
// in flight; without it, fill_begin() ends the fill itself, and the
// invocation that polls starts only once its loads have landed. The gain is
// loaded even when SKIP leaves the weights out, so that variant's norms
// still read a gain. Every invocation calls both.
const uint FI = FILL_INFLIGHT < 1 ? 1 : FILL_INFLIGHT > 8 ? 8 : FILL_INFLIGHT;
uint f_stage, f_l, f_n8, f_gat, f_nw, f_n;  // the fill under way
uvec4 ft[8];                                // its first wave

// Element i of stage |stage|'s fill: |nw| weight elements (rows of |n8|),
// then the gain at |gat| (SKIP bit 6: rows from one 4 KB block, in L2).
uvec4 slice_load(uint stage, uint l, uint nw, uint n8, uint gat, uint i) {
  return W[i >= nw ? gat + i - nw
           : (SKIP & 64u) != 0 ? i % 256
                               : row_at(stage, l, gl_WorkGroupID.x, i / n8) + i % n8];
}
uint fill_nw(uint rows, uint n8) { return SMEM_W == 0 || (SKIP & 32u) != 0 ? 0 : rows * n8; }
uint fill_n(uint nw, uint gat) {
  return nw + ((AHEAD & 1u) != 0 && gat != NO_GAIN ? DIM / 4 : 0);
}
uvec4 fill_load(uint i) { return slice_load(f_stage, f_l, f_nw, f_n8, f_gat, i); }

// AHEAD bit 32: stage C's first wave, loaded before stage B (early_c)
uvec4 fc[8];

void fill_put(uint i, uvec4 t) {
  if (i < f_nw) ws[i] = t;
  else gs4[i - f_nw] = uintBitsToFloat(t);
}

void consume();

void fill_end() {
  if ((AHEAD & 16u) != 0) consume();
  [[unroll]] for (uint j = 0; j < 8; j++) {
    const uint i = TID + j * BLOCK_SIZE;
    if (j < FI && i < f_n) fill_put(i, ft[j]);
  }
  for (uint i0 = TID + FI * BLOCK_SIZE; i0 < f_n; i0 += FI * BLOCK_SIZE) {
    uvec4 t[8];
    [[unroll]] for (uint j = 0; j < 8; j++) {
      const uint i = i0 + j * BLOCK_SIZE;
      if (j < FI && i < f_n) t[j] = fill_load(i);
    }
    [[unroll]] for (uint j = 0; j < 8; j++) {
      const uint i = i0 + j * BLOCK_SIZE;
      if (j < FI && i < f_n) fill_put(i, t[j]);
    }
  }
  f_n = 0;  // done: a second call stores nothing
}

void fill_begin(uint stage, uint l, uint rows, uint n8, uint gat) {
  f_stage = stage;
  f_l = l;
  f_n8 = n8;
  f_gat = gat;
  f_nw = fill_nw(rows, n8);
  f_n = fill_n(f_nw, gat);
  [[unroll]] for (uint j = 0; j < 8; j++) {
    const uint i = TID + j * BLOCK_SIZE;
    if (j < FI && i < f_n) ft[j] = (AHEAD & 32u) != 0 && stage == 2 ? fc[j] : fill_load(i);
  }
  if ((AHEAD & 8u) == 0) fill_end();
}
// This workgroup's slice of stage |stage| (0..3: A..D; 4: E, none): its
// rows and their length in uvec4.
void slice(uint stage, out uint rows, out uint n8) {
  rows = 0;
  n8 = 1;
  if (stage == 0) { rows = rows_a(); n8 = N8D; }
  else if (stage == 1) { rows = gl_WorkGroupID.x < UNITS ? rows_b(gl_WorkGroupID.x) : 0; n8 = N8H; }
  else if (stage == 2) { rows = rows_c(); n8 = N8D; }
  else if (stage == 3) { rows = rows_d(); n8 = N8F; }
}

// The slice of stage |stage| of layer l into ws, with the gain of the norm
// that opens the stage (A, C; E: the final norm's, no rows).
void prefetch(uint stage, uint l) {
  const uint at = l * LAYER_STRIDE;
  uint rows, n8;
  slice(stage, rows, n8);
  fill_begin(stage < 4 ? stage : 0, l, rows, n8,
             stage == 0 ? at + OFF_ANORM : stage == 2 ? at + OFF_MNORM : stage == 4 ? NORM_AT : NO_GAIN);
}

// ---- the slice two stages on, into L2 (AHEAD bit 2) ---------------------
// touch() loads one 32-bit word of every 32-byte sector of the slice this
// workgroup fills two stages later (at most PF_N a invocation: the rest is
// left to the fill), into registers that consume() folds into pf_x one stage
// later, when they have long landed: so the loads stay in flight while the
// barrier and the next stage run, and are never waited on. pf_x goes to
// Sync.sink only if it happens to equal a constant, which keeps the loads
// alive for the compiler and changes nothing the host reads.
const uint PF_N = 8;
uint pfv[PF_N];
uint pf_x = 0;

void touch(uint stage, uint l) {
  if ((AHEAD & 4u) == 0 || SMEM_W == 0 || (SKIP & 32u) != 0 || l >= LAYERS) return;
  uint rows, n8;
  slice(stage, rows, n8);
  const uint spr = (n8 + 1) / 2, ns = rows * spr;  // sectors a row, in the slice
  [[unroll]] for (uint j = 0; j < PF_N; j++) {
    const uint i = TID + j * BLOCK_SIZE;
    if (i < ns)
      pfv[j] = W[row_at(stage, l, gl_WorkGroupID.x, i / spr) + min(2 * (i % spr), n8 - 1)].x;
  }
}

void consume() {
  if ((AHEAD & 4u) == 0) return;
  [[unroll]] for (uint j = 0; j < PF_N; j++) {
    pf_x ^= pfv[j];
    pfv[j] = 0;
  }
}

// The cluster width for stage |stage|'s rows of |n8| uvec4: LANE_LOG's (or
// LANES), halved while wider than the row.
uint lanes_for(uint stage, uint n8) {
  const uint v = (LANE_LOG >> (4 * stage)) & 15u;
  uint n = v == 0 ? LANES : min(1u << (v - 1), LANES);
  while (n > n8) n /= 2;
  return n;
}

// res[k] = row k · vs for |rows| rows of |n8| uvec4 (ws, or the weight buffer
// through the stage's row map). All invocations call it.
void products(uint stage, uint l, uint u, uint rows, uint n8) {
  const uint lanes = lanes_for(stage, n8), per_pass = BLOCK_SIZE / lanes;
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

// vs = RMSNorm(v) with the gain at |gat| (with AHEAD: in gs4, filled
// before the stage); v already in vs[0, DIM).
void normalise(uint gat) {
  float ss = 0.0;
  for (uint c = TID; c < DIM; c += BLOCK_SIZE) ss += vs[c] * vs[c];
  const float scale = inversesqrt(block_sum(ss) / float(DIM) + EPS);
  for (uint c = TID; c < DIM; c += BLOCK_SIZE)
    vs[c] *= scale * ((AHEAD & 1u) != 0 ? gs4[c / 4][c % 4] : gain(gat, c));
  barrier();
}

// RoPE's (cos, sin) for stage-A pair |j| at |pos|, from the host's table.
vec2 rope_cs(uint pos, uint j) {
  const uint e = pos * HALF + j % HALF;
  const uvec4 cs4 = W[ROPE_AT + e / 2];
  return (e % 2) == 0 ? uintBitsToFloat(cs4.xy) : uintBitsToFloat(cs4.zw);
}

// ---- the down product split by stage C's items (DOWN_SPLIT) -------------
// Invocation (c8, kq) = (TID / KQ, TID % KQ) takes column group c8 (8 of the
// DIM outputs) over items kq, kq + KQ, ... of the workgroup's PER_C; the KQ
// partial sums of a group meet by shuffles (KQ a power of two, at most LANES,
// so a cluster lies in one subgroup). Its first DREG rows are loaded into wd
// before stage C's barrier (down_load), so HBM's latency hides behind the
// barrier and the stage's own products.
const uint KQ0 = BLOCK_SIZE / N8D;
const uint KQ1 = KQ0 >= 16 ? 16 : KQ0 >= 8 ? 8 : KQ0 >= 4 ? 4 : KQ0 >= 2 ? 2 : 1;
const uint KQ = KQ1 > LANES ? LANES : KQ1;
const uint DREG = 8;
// Fixed point: ACC_ONE a unit. A partial sum outside ±ACC_MAX (or NaN) sets
// error bit 4 and the host refuses the run: fewer than 2048 workgroups (the
// host checks) of such partials cannot overflow int64.
const float ACC_ONE = DOWN_COUNTS != 0 ? 67108864.0 : 4294967296.0, ACC_MAX = 1048576.0;
// DOWN_COUNTS: one add's count; an entry's count k is (w + COUNT_ONE / 2) >> COUNT_SHIFT
const uint COUNT_SHIFT = 55;
const int64_t COUNT_ONE = DOWN_COUNTS != 0 ? int64_t(1) << COUNT_SHIFT : int64_t(0);
uvec4 wd[DREG];

// acc[i] += p in fixed point (and, with DOWN_COUNTS, one count); a p outside
// +-ACC_MAX (or NaN) sets error bit 4.
void sum_add(uint i, float p) {
  if (!(abs(p) < ACC_MAX)) atomicOr(sync.error, 4u);
  atomicAdd(acc[i], int64_t(roundEven(p * ACC_ONE)) + COUNT_ONE);
}

uint row_dt(uint l, uint k) {  // W_down's column for stage C's item c0 + k, as a row
  return l * LAYER_STRIDE + OFF_DOWN_T + (gl_WorkGroupID.x * PER_C + k) * N8D;
}

void down_load(uint l) {
  if (DOWN_SPLIT == 0) return;
  const uint c8 = TID / KQ, kq = TID % KQ, n = rows_c() / 2;
  [[unroll]] for (uint j = 0; j < DREG; j++) {
    const uint k = kq + j * KQ;
    if (c8 < N8D && k < n) wd[j] = W[row_dt(l, k) + c8];
  }
}

float swiglu(uint k) {  // item k of h, from stage C's products
  const float g = res[2 * k], u = res[2 * k + 1];
  return g / (1.0 + exp(-g)) * u;
}

void add8(inout float a[8], uvec4 w, float h) {
  vec4 lo, hi;
  halves(w, lo, hi);
  [[unroll]] for (uint i = 0; i < 4; i++) {
    a[i] += h * lo[i];
    a[4 + i] += h * hi[i];
  }
}

// acc[l] += W_down[:, items] · h[items], after stage C's products (vs is
// free again: products() ended with a barrier).
void down_partial(uint l) {
  const uint n = rows_c() / 2, kq = TID % KQ;
  for (uint c0 = 0; c0 < N8D; c0 += BLOCK_SIZE / KQ) {
    const uint c8 = c0 + TID / KQ;
    float a[8];
    [[unroll]] for (uint e = 0; e < 8; e++) a[e] = 0.0;
    if (c8 < N8D) {
      [[unroll]] for (uint j = 0; j < DREG; j++) {
        const uint k = kq + j * KQ;
        if (k < n) add8(a, c0 == 0 ? wd[j] : W[row_dt(l, k) + c8], swiglu(k));
      }
      for (uint k = kq + DREG * KQ; k < n; k += KQ) add8(a, W[row_dt(l, k) + c8], swiglu(k));
    }
    [[unroll]] for (uint e = 0; e < 8; e++) a[e] = cluster_add(a[e], KQ);
    if (kq == 0 && c8 < N8D)
      [[unroll]] for (uint e = 0; e < 8; e++) vs[8 * c8 + e] = a[e];
  }
  barrier();
  for (uint c = TID; c < DIM; c += BLOCK_SIZE) sum_add(l * DIM + c, vs[c]);
}

// Element c of x after layer l: stage D's store, or xb + acc[l].
float x_after(uint l, uint c) {
  return DOWN_SPLIT == 0 ? act[XA + c] : act[XB + c] + float(acc[l * DIM + c]) * (1.0 / ACC_ONE);
}

// With DOWN_COUNTS the residual lives in xr. gather_counted(): for every
// element c, xr[c] += the counted sum acc[at + c] and vs[c] = xr[c], each
// invocation polling its elements (one wave of loads, then again those not
// yet at |want| adds), SPIN_LIMIT waves at most; false once it gave up (the
// error word is set). With |wait| false (SKIP left the adds out) it takes
// the entries as they are.
const uint XJ = (DIM + BLOCK_SIZE - 1) / BLOCK_SIZE;  // elements an invocation (<= 32: the host checks)
bool gather_counted(uint at, uint want, bool wait) {
  uint missing = 0;
  for (uint j = 0; j < XJ; j++)
    if (TID + j * BLOCK_SIZE < DIM) missing |= 1u << j;
  uint n = 0;
  while (missing != 0) {
    for (uint j = 0; j < XJ; j++) {
      const uint c = TID + j * BLOCK_SIZE;
      if ((missing & (1u << j)) == 0) continue;
      const int64_t w = atomicLoad(acc[at + c], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
      const int64_t k = (w + (COUNT_ONE >> 1)) >> COUNT_SHIFT;  // the adds so far
      if (k == int64_t(want) || !wait) {
        xr[c] += float(w - k * COUNT_ONE) * (1.0 / ACC_ONE);
        vs[c] = xr[c];
        missing &= ~(1u << j);
      }
    }
    if (missing != 0 && (++n >= SPIN_LIMIT || sync.error != 0)) {
      atomicOr(sync.error, 1u);
      return false;
    }
  }
  return true;
}

// x after layer l into vs (with DOWN_COUNTS, into xr too, once the sums
// are whole); false as gather_counted().
bool gather_x(uint l) {
  if (DOWN_COUNTS != 0) return gather_counted(l * DIM, GROUPS, (SKIP & 12u) == 0);
  for (uint c = TID; c < DIM; c += BLOCK_SIZE) vs[c] = x_after(l, c);
  return true;
}

// After a gather that may have failed (|ok| false in some invocations):
// true in every invocation if none did. s_fail is false on entry (the last
// wait returned true), and stays set once a gather failed.
bool gathered(bool ok) {
  if (!ok) s_fail = true;
  barrier();
  return !s_fail;
}

// acc[at .. at + n) back to 0, this workgroup's share.
void clear_share(uint at, uint n) {
  const uint per = (n + GROUPS - 1) / GROUPS, r0 = gl_WorkGroupID.x * per, r1 = min(n, r0 + per);
  for (uint c = r0 + TID; c < r1; c += BLOCK_SIZE) acc[at + c] = 0;
}

// Layer l's down sums back to 0, once no stage reads them again.
void acc_clear(uint l) {
  if (DOWN_SPLIT != 0) clear_share(l * DIM, DIM);
}

// Layer l's o_proj sums and q, k, v staging back to 0 (PART_COUNTS,
// QKV_COUNTS), once no stage reads them again.
void stage_clear(uint l) {
  if (PART_COUNTS != 0) clear_share(ACC_PARTS + l * DIM, DIM);
  if (QKV_COUNTS != 0) clear_share(ACC_QKV + l * QKVN, QKVN);
}

// Before stage C of layer l: what no stage reads again (QKV_COUNTS says why
// l - 2 there). Outside stage C, so that it runs whatever SKIP leaves out:
// counted sums must start each step at 0.
void clear_before_c(uint l) {
  if (l > 0) stage_clear(l - 1);
  if (l > 0 && QKV_COUNTS == 0) acc_clear(l - 1);  // read by stage A of layer l, two barriers ago
  if (l > 1 && QKV_COUNTS != 0) acc_clear(l - 2);
}

// QKV_COUNTS: entry i of layer l's staging := v, with one count (on a 0).
void stage_put(uint l, uint i, float v) {
  atomicAdd(acc[ACC_QKV + l * QKVN + i], COUNT_ONE + int64_t(floatBitsToUint(v)));
}

// Stage A; false if DOWN_COUNTS's poll gave up (every invocation returns it).
bool stage_a(uint l, uint pos, uint tok) {
  if (l == 0) {  // the embedding row of the token: x; workgroup 0 keeps it as the residual
    for (uint c8 = TID; c8 < N8D; c8 += BLOCK_SIZE) {
      vec4 v[2];
      halves(W[EMBED_AT + tok * N8D + c8], v[0], v[1]);
      [[unroll]] for (uint i = 0; i < 8; i++) {
        vs[8 * c8 + i] = v[i / 4][i % 4];
        if (DOWN_COUNTS != 0) xr[8 * c8 + i] = v[i / 4][i % 4];
        else if (gl_WorkGroupID.x == 0) act[XA + 8 * c8 + i] = v[i / 4][i % 4];
      }
    }
  } else if (DOWN_COUNTS != 0) {
    if (!gathered(gather_x(l - 1))) return false;
    stamp(6 * l);  // the release: every sum whole
  } else {
    for (uint c = TID; c < DIM; c += BLOCK_SIZE) {
      const float x = x_after(l - 1, c);
      vs[c] = x;
      if (DOWN_SPLIT != 0 && gl_WorkGroupID.x == 0) act[XA + c] = x;  // stage C's residual
    }
  }
  barrier();
  normalise(l * LAYER_STRIDE + OFF_ANORM);
  const uint rows = rows_a();
  products(0, l, 0, rows, N8D);
  for (uint k = TID; k < rows / 2; k += BLOCK_SIZE) {
    const uint j = gl_WorkGroupID.x * PER_A + k;
    const uint head = j / HALF, d = j % HALF;
    float a0 = res[2 * k], a1 = res[2 * k + 1];
    if (head < HEADS + KV_HEADS) {  // rotate-half RoPE
      const vec2 r = (AHEAD & 1u) != 0 ? rope_s[k] : rope_cs(pos, j);
      const float b0 = a0 * r.x - a1 * r.y, b1 = a1 * r.x + a0 * r.y;
      a0 = b0;
      a1 = b1;
    }
    if (QKV_COUNTS != 0) {  // q, k, v in order, as the heads are
      stage_put(l, head * HEAD_DIM + d, a0);
      stage_put(l, head * HEAD_DIM + d + HALF, a1);
    }
    if (head < HEADS) {
      if (QKV_COUNTS == 0) {
        act[QV + head * HEAD_DIM + d] = a0;
        act[QV + head * HEAD_DIM + d + HALF] = a1;
      }
    } else {
      const uint kvh = head < HEADS + KV_HEADS ? head - HEADS : head - HEADS - KV_HEADS;
      const uint at = (l * MAX_SEQ + pos) * KVDIM + kvh * HEAD_DIM + d;
      if (head < HEADS + KV_HEADS) {
        kc[at / 4][at % 4] = a0;
        kc[(at + HALF) / 4][(at + HALF) % 4] = a1;
      } else {
        vc[at / 4][at % 4] = a0;
        vc[(at + HALF) / 4][(at + HALF) % 4] = a1;
      }
    }
  }
  return true;
}

// AHEAD bit 1: q's vec4 an invocation held in registers (at most), and the
// value rows an invocation loads beside the keys.
const uint QREG = 8, VPRE = 4;
// The attention's split: 4 invocations a key (VPL vec4 each), KP keys a
// pass; values by invocation (phase, column), PHASES phases over the keys.
const uint SL = 4, VPL = DV / 4, KP = BLOCK_SIZE / SL, PHASES = BLOCK_SIZE / DV;
// AHEAD bit 64: the first KPASS passes of keys and the VPRE value rows of
// this workgroup's first unit, for positions before pos (kv_early)
const uint KPASS = 2;
const bool KV_EARLY = (AHEAD & 66u) == 66u && VPL <= QREG;
vec4 vpre[VPRE], kpre0[QREG], kpre1[QREG];

// Vec4 index of layer l's key (or value) row 0 of KV head kvh.
uint kv_base(uint l, uint kvh) { return (l * MAX_SEQ) * (KVDIM / 4) + kvh * DV; }

// AHEAD bit 64, before the A -> B barrier's poll: the rows of positions
// t < pos this workgroup's first stage-B unit reads (those before it are not
// written in this step; row pos is, by stage A, and is loaded after the
// release). Every invocation calls it; zeros where t >= pos.
void kv_early(uint l, uint pos) {
  if (!KV_EARLY || gl_WorkGroupID.x >= UNITS || (SKIP & 2u) != 0) return;
  const uint h = gl_WorkGroupID.x / OSPLIT, base = kv_base(l, h / (HEADS / KV_HEADS));
  const uint li = TID % SL, col = TID % DV, phase = TID / DV;
  [[unroll]] for (uint j = 0; j < VPRE; j++) {
    const uint t = phase + j * PHASES;
    vpre[j] = t < pos ? vc[base + t * (KVDIM / 4) + col] : vec4(0.0);
  }
  [[unroll]] for (uint k = 0; k < QREG; k++) {
    const uint t0 = TID / SL, t1 = t0 + KP, c = li + k * SL;
    kpre0[k] = k < VPL && t0 < pos ? kc[base + t0 * (KVDIM / 4) + c] : vec4(0.0);
    kpre1[k] = KPASS > 1 && k < VPL && t1 < pos ? kc[base + t1 * (KVDIM / 4) + c] : vec4(0.0);
  }
}

// A key's softmax weight: exp(score - m) with ATT_SUBGROUP; otherwise ps
// already holds the weight, and m is not used.
float weight(float p, float m) { return ATT_SUBGROUP != 0 ? exp(p - m) : p; }

// QKV_COUNTS: head h's q into vs[0, HEAD_DIM), KV head kvh's k and v of
// the new row into vs[HEAD_DIM, 3 HEAD_DIM), from layer l's staging, each
// entry polled by one invocation until it counts one add (3 HEAD_DIM <=
// BLOCK_SIZE: the host checks); false as gather_counted().
bool qkv_gather(uint l, uint h, uint kvh) {
  bool ok = true;
  if (TID < 3 * HEAD_DIM) {
    const uint part = TID / HEAD_DIM, d = TID % HEAD_DIM;
    const uint i = part == 0 ? h * HEAD_DIM + d : QDIM + (part - 1) * KVDIM + kvh * HEAD_DIM + d;
    uint n = 0;
    for (;;) {
      const int64_t w = atomicLoad(acc[ACC_QKV + l * QKVN + i], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
      if ((w >> COUNT_SHIFT) == 1 || (SKIP & 1u) != 0) {  // (SKIP: stage A left out, nothing to wait for)
        vs[TID] = uintBitsToFloat(uint(w & 0xFFFFFFFFl));
        break;
      }
      if (++n >= SPIN_LIMIT || sync.error != 0) {
        atomicOr(sync.error, 1u);
        ok = false;
        break;
      }
    }
  }
  return gathered(ok);
}

// Elements 4 c4 .. 4 c4 + 3 of head h's q; of key row t (vec4 c4 of the
// head row at |base|); of value row t: row pos from the staging in vs with
// QKV_COUNTS, else from Act and the caches.
vec4 q4(uint h, uint c4) {
  if (QKV_COUNTS != 0) return vec4(vs[4 * c4], vs[4 * c4 + 1], vs[4 * c4 + 2], vs[4 * c4 + 3]);
  const uint c = QV + h * HEAD_DIM + 4 * c4;
  return vec4(act[c], act[c + 1], act[c + 2], act[c + 3]);
}
vec4 key4(uint base, uint t, uint c4, uint pos) {
  const uint i = HEAD_DIM + 4 * c4;
  if (QKV_COUNTS != 0 && t == pos) return vec4(vs[i], vs[i + 1], vs[i + 2], vs[i + 3]);
  return kc[base + t * (KVDIM / 4) + c4];
}
vec4 val4(uint base, uint t, uint c4, uint pos) {
  const uint i = 2 * HEAD_DIM + 4 * c4;
  if (QKV_COUNTS != 0 && t == pos) return vec4(vs[i], vs[i + 1], vs[i + 2], vs[i + 3]);
  return vc[base + t * (KVDIM / 4) + c4];
}

// One unit of stage B: head u / OSPLIT's attention, then its W_o rows;
// false if QKV_COUNTS's poll gave up (every invocation returns it).
bool attention_unit(uint l, uint pos, uint u) {
  const uint h = u / OSPLIT, kvh = h / (HEADS / KV_HEADS);
  const uint seq = pos + 1;
  if (QKV_COUNTS != 0) {
    if (!qkv_gather(l, h, kvh)) return false;
    if (u == gl_WorkGroupID.x) stamp(6 * l + 2);  // the release: q, k, v in
  }
  const uint base = kv_base(l, kvh);  // vec4 index of key 0's head row
  const uint li = TID % SL;
  const uint col = TID % DV, phase = TID / DV, phases = PHASES;
  // AHEAD bit 1: q once into registers, and the first VPRE value rows of
  // this invocation loaded now, beside the keys, not after the softmax
  // (bit 64: those before pos, and the first keys, are loaded already)
  const bool early = (AHEAD & 2u) != 0 && VPL <= QREG;
  const bool pre = KV_EARLY && u == gl_WorkGroupID.x;
  vec4 qr[QREG];
  if (early) {
    [[unroll]] for (uint j = 0; j < VPRE; j++) {
      const uint t = phase + j * phases;
      if (!pre || t == pos) vpre[j] = t < seq ? val4(base, t, col, pos) : vec4(0.0);
    }
    [[unroll]] for (uint k = 0; k < QREG; k++)
      if (k < VPL) qr[k] = q4(h, li + k * SL);
  }
  for (uint t0 = 0; t0 < seq; t0 += KP) {
    const uint t = t0 + TID / SL;
    float a = 0.0;
    if (t < seq) {
      if (early) {
        const bool have = pre && t < pos && t0 < KPASS * KP;
        [[unroll]] for (uint k = 0; k < QREG; k++)
          if (k < VPL)
            a += dot(qr[k], have ? (t0 == 0 ? kpre0[k] : kpre1[k]) : key4(base, t, li + k * SL, pos));
      } else {
        for (uint k = 0; k < VPL; k++) {
          const uint c4 = li + k * SL;
          a += dot(q4(h, c4), key4(base, t, c4, pos));
        }
      }
    }
    a = cluster_add(a, SL);
    if (li == 0 && t < seq) ps[t] = a * SCALE;
  }
  barrier();
  float m = NEG_HUGE, sum = 0.0;
  if (ATT_SUBGROUP != 0) {
    // every subgroup takes the maximum and the sum over all the scores
    // itself, and the weights are exp(score - m) where they are used: ps is
    // read only, so no workgroup barrier until the values are summed
    for (uint t = gl_SubgroupInvocationID; t < seq; t += gl_SubgroupSize) m = max(m, ps[t]);
    m = subgroupMax(m);
    for (uint t = gl_SubgroupInvocationID; t < seq; t += gl_SubgroupSize) sum += exp(ps[t] - m);
    sum = subgroupAdd(sum);
  } else {
    for (uint t = TID; t < seq; t += BLOCK_SIZE) m = max(m, ps[t]);
    m = block_max(m);
    for (uint t = TID; t < seq; t += BLOCK_SIZE) {
      const float e = exp(ps[t] - m);
      ps[t] = e;
      sum += e;
    }
    sum = block_sum(sum);  // its barriers also publish ps
  }
  vec4 acc = vec4(0.0);
  uint t1 = phase;
  if (early) {
    [[unroll]] for (uint j = 0; j < VPRE; j++) {
      const uint t = phase + j * phases;
      if (t < seq) acc += weight(ps[t], m) * vpre[j];
    }
    t1 += VPRE * phases;
  }
  for (uint t = t1; t < seq; t += phases) acc += weight(ps[t], m) * val4(base, t, col, pos);
  red4[TID] = acc;
  barrier();
  if (TID < DV) {  // the head's output straight into vs (its values 4 * TID .. + 3)
    vec4 o = vec4(0.0);
    for (uint p = 0; p < phases; p++) o += red4[p * DV + TID];
    o /= sum;
    [[unroll]] for (uint i = 0; i < 4; i++) vs[4 * TID + i] = o[i];
  }
  barrier();
  const uint rows = rows_b(u);
  products(1, l, u, rows, N8H);
  const uint r0 = (u % OSPLIT) * PER_B;
  for (uint k = TID; k < rows; k += BLOCK_SIZE)
    if (PART_COUNTS != 0) sum_add(ACC_PARTS + l * DIM + r0 + k, res[k]);
    else act[PART + h * DIM + r0 + k] = res[k];
  barrier();  // res is reused by the next unit
  return true;
}

// Stage C's gather, in waves of CW elements of x an invocation held in
// registers: with AHEAD bit 1 every load of a wave (x and each head's part)
// is issued before the first sum, and no buffer store among them orders
// them, so a wave is one round trip to L2; without it, one element a wave.
const uint CG = 4, CW = (AHEAD & 2u) != 0 ? CG : 1;

// Stage C; false if PART_COUNTS's poll gave up (every invocation returns it).
bool stage_c(uint l) {
  if (PART_COUNTS != 0) {  // xb = x + the o_proj sums, once each counts HEADS adds
    if (!gathered(gather_counted(ACC_PARTS + l * DIM, HEADS, (SKIP & 2u) == 0))) return false;
    stamp(6 * l + 4);
  }
  for (uint c0 = TID; c0 < DIM && PART_COUNTS == 0; c0 += CW * BLOCK_SIZE) {
    float v[CG];
    [[unroll]] for (uint i = 0; i < CG; i++) {
      const uint c = c0 + i * BLOCK_SIZE;
      v[i] = i < CW && c < DIM ? (DOWN_COUNTS != 0 ? xr[c] : act[XA + c]) : 0.0;
    }
    for (uint h = 0; h < HEADS; h++)
      [[unroll]] for (uint i = 0; i < CG; i++) {
        const uint c = c0 + i * BLOCK_SIZE;
        if (i < CW && c < DIM) v[i] += act[PART + h * DIM + c];
      }
    [[unroll]] for (uint i = 0; i < CG; i++) {
      const uint c = c0 + i * BLOCK_SIZE;
      if (i < CW && c < DIM) {
        vs[c] = v[i];
        if (DOWN_COUNTS != 0) xr[c] = v[i];
        else if (gl_WorkGroupID.x == 0) act[XB + c] = v[i];
      }
    }
  }
  barrier();
  normalise(l * LAYER_STRIDE + OFF_MNORM);
  const uint rows = rows_c();
  products(2, l, 0, rows, N8D);
  if (DOWN_SPLIT != 0) {
    if ((SKIP & 8u) == 0) down_partial(l);
  } else {
    for (uint k = TID; k < rows / 2; k += BLOCK_SIZE) act[HB + gl_WorkGroupID.x * PER_C + k] = swiglu(k);
  }
  return true;
}

void stage_d(uint l) {
  const uint rows = rows_d(), r0 = gl_WorkGroupID.x * PER_D;
  // AHEAD: the residual of this invocation's first row, loaded beside h and
  // used after the products
  float xb0 = 0.0;
  if ((AHEAD & 1u) != 0 && TID < rows) xb0 = act[XB + r0 + TID];
  for (uint c = TID; c < FFN; c += BLOCK_SIZE) vs[c] = act[HB + c];
  barrier();
  products(3, l, 0, rows, N8F);
  for (uint k = TID; k < rows; k += BLOCK_SIZE)
    act[XA + r0 + k] = ((AHEAD & 1u) != 0 && k == TID ? xb0 : act[XB + r0 + k]) + res[k];
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
// slice: 49152 rows): HEAD_ROWS rows a lane cluster per pass, their loads
// issued before the first product, so that enough bytes are in flight per SM
// to cover the memory's latency. The passes and each lane's uvec4 of a row
// run as one sequence of waves t (pass t / E_ITERS, column wave t % E_ITERS);
// with AHEAD bit 128 wave t + 1's loads go out before wave t's products
// (across passes too), and with bit 256 wave 0's before the poll for the
// down sums (the LM head does not depend on the data).
// SKIP bit 7 leaves stage E out at run time, its code compiled in (beside
// bit 4, which compiles it out); bit 8 reads its rows from one 4 KB block.
const uint HR = HEAD_ROWS < 1 ? 1 : HEAD_ROWS > 16 ? 16 : HEAD_ROWS;

// Wave t's loads of this invocation into w (rows past r1, columns past the
// row left alone).
void e_wave(uint t, uint r0, uint r1, uint lanes, uvec4 w[16], out uvec4 o[16]) {
  o = w;
  const uint iters = (N8D + lanes - 1) / lanes, per_pass = BLOCK_SIZE / lanes;
  const uint k0 = r0 + TID / lanes + (t / iters) * HR * per_pass;
  const uint c = TID % lanes + (t % iters) * lanes;
  if (c >= N8D) return;
  [[unroll]] for (uint j = 0; j < 16; j++) {
    const uint r = k0 + j * per_pass;
    if (j < HR && r < r1) o[j] = W[(SKIP & 256u) != 0 ? (r * N8D + c) % 256 : HEAD_AT + r * N8D + c];
  }
}

// Stage E; false if DOWN_COUNTS's poll gave up (every invocation returns it).
bool stage_e() {
  const uint lanes = lanes_for(4, N8D), per_pass = BLOCK_SIZE / lanes, lane = TID % lanes;
  const uint iters = (N8D + lanes - 1) / lanes, rows_pass = HR * per_pass;
  const uint r0 = gl_WorkGroupID.x * PER_E, r1 = min(VOCAB, r0 + PER_E);
  const uint waves = r1 > r0 ? (r1 - r0 + rows_pass - 1) / rows_pass * iters : 0;
  const bool pipe = (AHEAD & 128u) != 0;
  uvec4 w[16];
  [[unroll]] for (uint j = 0; j < 16; j++) w[j] = uvec4(0);
  if (pipe && (AHEAD & 256u) != 0 && waves > 0) e_wave(0, r0, r1, lanes, w, w);
  if (!gathered(gather_x(LAYERS - 1))) return false;
  if (DOWN_COUNTS != 0) stamp(6 * LAYERS);
  normalise(NORM_AT);
  if (pipe && (AHEAD & 256u) == 0 && waves > 0) e_wave(0, r0, r1, lanes, w, w);
  float bv = NEG_HUGE;
  uint bi = 0xFFFFFFFFu;
  float a[16];
  [[unroll]] for (uint j = 0; j < 16; j++) a[j] = 0.0;
  for (uint t = 0; t < waves; t++) {
    uvec4 wn[16];
    if (!pipe) e_wave(t, r0, r1, lanes, w, w);
    else if (t + 1 < waves) e_wave(t + 1, r0, r1, lanes, w, wn);
    const uint k0 = r0 + TID / lanes + (t / iters) * rows_pass, c = lane + (t % iters) * lanes;
    if (c < N8D)
      [[unroll]] for (uint j = 0; j < 16; j++)
        if (j < HR && k0 + j * per_pass < r1) a[j] += dot8(w[j], c);
    if (pipe && t + 1 < waves) w = wn;
    if (t % iters != iters - 1) continue;
    // the pass's last wave: its rows' sums (t is the same in every invocation)
    [[unroll]] for (uint j = 0; j < 16; j++) {
      if (j >= HR) break;
      const uint r = k0 + j * per_pass;
      const float v = cluster_add(a[j], lanes);
      a[j] = 0.0;
      if (r < r1) {
        if (lane == 0) logits[r] = v;
        if (v > bv) { bv = v; bi = r; }
      }
    }
  }
  block_best(bv, bi);
  if (TID == 0) {
    act[CAND + 2 * gl_WorkGroupID.x] = bv;
    act[CAND + 2 * gl_WorkGroupID.x + 1] = uintBitsToFloat(bi);
  }
  barrier();
  return true;
}

// E_NODE: x after the last layer, from workgroup 0, for the LM-head node;
// false as gather_counted() (in every invocation of workgroup 0).
bool x_out() {
  if (DOWN_COUNTS != 0) stamp(6 * LAYERS);  // (as stage E would)
  if (gl_WorkGroupID.x != 0) return true;
  if (!gathered(gather_x(LAYERS - 1))) return false;
  for (uint c = TID; c < DIM; c += BLOCK_SIZE) act[XE + c] = vs[c];
  return true;
}

// AHEAD bit 32: stage C's weights a stage early. Before stage B, the first
// wave of stage C's fill (all of it when the slice fits FI loads an
// invocation: gate and up rows and the gain) goes into fc and the down
// product's columns into wd, so that HBM has stage B and its barrier to
// deliver them, not stage C's barrier alone; fill_begin() then takes fc
// where it would load.
void early_c(uint l) {
  if ((AHEAD & 32u) == 0) return;
  uint rows, n8;
  slice(2, rows, n8);
  const uint gat = l * LAYER_STRIDE + OFF_MNORM;
  const uint nw = fill_nw(rows, n8), n = fill_n(nw, gat);
  [[unroll]] for (uint j = 0; j < 8; j++) {
    const uint i = TID + j * BLOCK_SIZE;
    if (j < FI && i < n) fc[j] = slice_load(2, l, nw, n8, gat, i);
  }
  down_load(l);
}

void main() {
  if (TID == 0)
    s_fail = sync.error != 0;
  barrier();
  if (s_fail) return;  // an earlier step failed: the host refuses the run
  const uint pos = min(params.pos, MAX_SEQ - 1);
  const uint tok = min(tokens[pos], VOCAB - 1);
  uint target = 0;
  if ((AHEAD & 1u) != 0)  // the same (cos, sin) in every layer: once a step
    for (uint k = TID; k < PER_A; k += BLOCK_SIZE) {
      const uint j = gl_WorkGroupID.x * PER_A + k;
      if (j < PAIRS && j / HALF < HEADS + KV_HEADS) rope_s[k] = rope_cs(pos, j);
    }
  [[unroll]] for (uint j = 0; j < PF_N; j++) pfv[j] = 0;
  prefetch(0, 0);
  touch(1, 0);
  fill_end();
  barrier();
  // Between stages: arrive, fold the touched words in, fill the next stage's
  // slice (from L2, touched a stage ago), touch the one after it, wait.
  for (uint l = 0; l < LAYERS; l++) {
    // with DOWN_COUNTS stage A's gather is the release, and stamps it
    if (DOWN_COUNTS == 0 || l == 0 || (SKIP & 1u) != 0) stamp(6 * l);
    if ((SKIP & 1u) == 0 && !stage_a(l, pos, tok)) return;
    if (HEAD_FLAGS != 0) {
      flag_arrive(6 * l + 1);
    } else if (QKV_COUNTS != 0) {  // no grid barrier: stage B polls q, k and v
      barrier();
      stamp(6 * l + 1);
    } else {
      arrive(6 * l + 1);
    }
    consume();
    prefetch(1, l);
    early_c(l);
    kv_early(l, pos);
    touch(2, l);
    if (QKV_COUNTS != 0) {
      fill_end();
      barrier();  // the fill is in ws before stage B's products
    } else if (HEAD_FLAGS != 0 ? !wait_flags(l) : !wait_all(target += GROUPS)) {
      return;
    }
    // with QKV_COUNTS a unit's poll is the release, and stamps it
    if (QKV_COUNTS == 0 || gl_WorkGroupID.x >= UNITS || (SKIP & 2u) != 0) stamp(6 * l + 2);
    if ((SKIP & 2u) == 0)
      for (uint u = gl_WorkGroupID.x; u < UNITS; u += GROUPS)
        if (!attention_unit(l, pos, u)) return;
    if (PART_COUNTS != 0) {  // no grid barrier: stage C polls the o_proj sums
      barrier();
      stamp(6 * l + 3);
    } else {
      arrive(6 * l + 3);
    }
    consume();
    prefetch(2, l);
    if ((AHEAD & 32u) == 0) down_load(l);
    if (DOWN_SPLIT != 0) touch(0, l + 1);
    else touch(3, l);
    if (PART_COUNTS != 0) {
      fill_end();
      barrier();  // the fill is in ws before stage C's products
    } else if (!wait_all(target += GROUPS)) {
      return;
    }
    if (PART_COUNTS == 0 || (SKIP & 4u) != 0) stamp(6 * l + 4);  // else once stage C's gather has its sums
    clear_before_c(l);
    if ((SKIP & 4u) == 0 && !stage_c(l)) return;
    // with E_BARRIER, the last layer's stage C ends with a grid barrier
    const bool counted_c = DOWN_COUNTS != 0 && (E_BARRIER == 0 || l + 1 < LAYERS);
    if (counted_c) {  // no grid barrier: the next stage A (or E) polls acc[l]'s counts
      barrier();
      stamp(6 * l + 5);
    } else {
      arrive(6 * l + 5);
    }
    consume();
    if (DOWN_SPLIT == 0) {
      prefetch(3, l);
      touch(0, l + 1);
      if (!wait_all(target += GROUPS)) return;
      if ((SKIP & 8u) == 0) stage_d(l);
      arrive(NO_EV);
      consume();
    }
    prefetch(l + 1 < LAYERS ? 0 : 4, l + 1);
    touch(1, l + 1);
    if (counted_c) {
      fill_end();
      barrier();  // the fill is in ws before stage A's products
    } else if (!wait_all(target += GROUPS)) {
      return;
    }
  }
  if (DOWN_COUNTS == 0 || (SKIP & 16u) != 0) stamp(6 * LAYERS);
  consume();
  if (pf_x == 0x5bd1e995u) atomicOr(sync.sink, 1u);
  // (SKIP bit 7: prompt_len is never 0xFFFFFFFF, but the compiler cannot know)
  const bool e_run = (SKIP & 128u) == 0 || params.prompt_len == 0xFFFFFFFFu;
  if (E_NODE != 0) {
    if (!x_out()) return;
  } else if ((SKIP & 16u) == 0 && e_run && !stage_e()) {
    return;
  }
  arrive(6 * LAYERS + 1);
  if (!wait_all(target += GROUPS)) return;
  stamp(6 * LAYERS + 2);
  acc_clear(LAYERS - 1);  // stage E read it before the last barrier
  stage_clear(LAYERS - 1);
  if (QKV_COUNTS != 0 && LAYERS > 1) acc_clear(LAYERS - 2);
  if (gl_WorkGroupID.x != 0) {
    if (TID == 0) atomicAdd(sync.done, 1u);
    return;
  }
  // workgroup 0: the token from the candidates (not with E_NODE: the next
  // node's), then the counters back to 0
  float bv = NEG_HUGE;
  uint bi = 0xFFFFFFFFu;
  if (E_NODE == 0) {
    for (uint w = TID; w < GROUPS; w += BLOCK_SIZE) {
      const float v = act[CAND + 2 * w];
      const uint i = floatBitsToUint(act[CAND + 2 * w + 1]);
      if (i != 0xFFFFFFFFu && (v > bv || (v == bv && i < bi))) { bv = v; bi = i; }
    }
    block_best(bv, bi);
  }
  if (TID == 0) {
    const uint next = pos + 1;
    if (E_NODE == 0 && next >= params.prompt_len) tokens[next] = min(bi, VOCAB - 1);
    if (ADVANCE != 0) params.pos = params.pos + 1;
    uint n = 0;
    while (sync.done < GROUPS - 1) {
      if (++n >= SPIN_LIMIT) {
        atomicOr(sync.error, 2u);
        return;
      }
    }
    atomicExchange(sync.done, 0u);
    atomicExchange(sync.count, 0u);
    for (uint i = 1; i < SPREAD; i++) atomicExchange(sync.spread[64 * i - 4], 0u);
    if (HEAD_FLAGS != 0)
      for (uint g = 0; g < KV_HEADS; g++) atomicExchange(sync.spread[64 * (FLAG_SLOT + g) - 4], 0u);
  }
}
