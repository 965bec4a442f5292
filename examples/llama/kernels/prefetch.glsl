// prefetch.glsl — a dispatch's trailing workgroups read weights that a
// later node of the step will need, so that node finds them in the L2 cache.
// On the H200 a dependent mat-vec dispatch streams its weights from memory at
// about 1 TB/s — a few KB in flight per multiprocessor after the barrier —
// while the same dispatches with no dependency between them reach 2.5–3.3
// TB/s (bench/NOTES.md, 2026-12-05): the weights do not depend on anything
// the step computes, so their loads can start a node early. The kernel that
// includes this defines PF_BINDING (the binding of the weights to prefetch;
// PF_BINDING + 1 is a sink that keeps the loads) and calls prefetch_group()
// first: the workgroups numbered PF_MAIN and up only prefetch; the host
// dispatches PF_MAIN workgroups (no prefetch) or more. Measured on the H100
// (2026-12-05) it made the prefetching nodes slower than the time it saved
// the next ones, so it is opt-in (--prefetch on; bench/NOTES.md).
layout(constant_id = 20) const uint PF_MAIN = 1;   // workgroups doing the kernel's own work
layout(constant_id = 21) const uint PF_COUNT = 0;  // uvec4 to prefetch

layout(binding = PF_BINDING) readonly buffer Prefetch { uvec4 pf[]; };
layout(binding = PF_BINDING + 1) buffer Sink { uint sink[]; };

// True when this workgroup is a prefetch one (and has done its part).
bool prefetch_group() {
  if (gl_WorkGroupID.x < PF_MAIN) return false;
  const uint n = (gl_NumWorkGroups.x - PF_MAIN) * BLOCK_SIZE;
  uint acc = 0;
  for (uint i = (gl_WorkGroupID.x - PF_MAIN) * BLOCK_SIZE + gl_LocalInvocationID.x; i < PF_COUNT;
       i += n) {
    const uvec4 v = pf[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  // a store the compiler cannot drop, which in practice never happens
  if (acc == 0x9E3779B9u && gl_LocalInvocationID.x == 0) sink[0] = acc;
  return true;
}
