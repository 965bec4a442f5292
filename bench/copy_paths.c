/* SPDX-License-Identifier: MIT */
/*
 * copy_paths.c — host <-> device bandwidth through the copy engines against
 * the shader cores, on tandem's own device (public API only).
 *
 * The copies survey (`tandem bench --only copies`, bench/NOTES.md) found that
 * every Vulkan queue of the H200's driver tops out at 48-51 GB/s one way and
 * 58 GB/s both ways at once, while CUDA moves 55 GB/s one way and 92-100 GB/s
 * both ways: GPU timestamps put the time inside vkCmdCopyBuffer, so the copy
 * engines the driver drives are the limit. This program measures the one path
 * left untried: a compute shader that reads the source and writes the
 * destination itself, one buffer HOST_VISIBLE (system memory, which the
 * shader reaches over the link) and the other GPU_LOCAL.
 *
 * Rows, each one prepared graph, run in rotating order round after round
 * (median of the rounds; wall = submit until the wait returned, gpu = the
 * first region's start to the last region's end by GPU timestamps):
 *   up-engine, down-engine, both-engine    copy nodes (upload / download lane)
 *   up-sm/G, down-sm/G, both-sm/G+G        the copy kernel with G workgroups of
 *                                          256 threads, grid-stride over uvec4s
 *                                          (both: two dispatches, one each way)
 *   both-fused/G                           one dispatch of G workgroups, half
 *                                          copying up and half down
 *   both-mixed-up-sm, both-mixed-down-sm   one direction by engine, the other
 *                                          by the kernel
 * "both" rows move two buffers of the size, one each way, independent, so
 * tandem runs them at once. Before timing, every shader row runs once on
 * zeroed destinations and the bytes are compared with the source (a copy
 * that is fast because it copies nothing would be a wrong number).
 *
 *   build/bench/tandem_bench_copy_paths [--mib N] [--rounds R] [--spin-us U]
 *        (256 MiB, 30 rounds, the runtime's default wait spin)
 * Beside wall and GPU time it prints "start" (submit until the GPU started)
 * and "tail" (the GPU's end until tandem saw it finished: what the wait adds).
 *   build/bench/tandem_bench_copy_paths --smoke   (CTest: 1 MiB, 3 rounds,
 *        validation layer on; any validation message or wrong byte fails)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "copy_paths"
#include "bench_common.h"

static const char copy_glsl[] =
    "#version 450\n"
    "layout(local_size_x = 256) in;\n"
    "layout(set = 0, binding = 0, std430) readonly buffer Src { uvec4 s[]; };\n"
    "layout(set = 0, binding = 1, std430) writeonly buffer Dst { uvec4 d[]; };\n"
    "layout(push_constant) uniform P { uint count; } p;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * 256u;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) d[i] = s[i];\n"
    "}\n";

/* Both directions in one dispatch: the first |split| workgroups copy up, the
 * rest down, so the two always run at once whatever the scheduler does with
 * two dispatches. */
static const char fused_glsl[] =
    "#version 450\n"
    "layout(local_size_x = 256) in;\n"
    "layout(set = 0, binding = 0, std430) readonly buffer A { uvec4 a[]; };\n"
    "layout(set = 0, binding = 1, std430) writeonly buffer B { uvec4 b[]; };\n"
    "layout(set = 0, binding = 2, std430) readonly buffer C { uvec4 c[]; };\n"
    "layout(set = 0, binding = 3, std430) writeonly buffer D { uvec4 d[]; };\n"
    "layout(push_constant) uniform P { uint count; uint split; } p;\n"
    "void main() {\n"
    "  bool up = gl_WorkGroupID.x < p.split;\n"
    "  uint groups = up ? p.split : gl_NumWorkGroups.x - p.split;\n"
    "  uint first = (up ? gl_WorkGroupID.x : gl_WorkGroupID.x - p.split) * 256u;\n"
    "  uint stride = groups * 256u;\n"
    "  for (uint i = first + gl_LocalInvocationID.x; i < p.count; i += stride) {\n"
    "    if (up) b[i] = a[i]; else d[i] = c[i];\n"
    "  }\n"
    "}\n";

enum { MAX_ROWS = 40 };
typedef struct row {
  char name[40];
  tandem_exec_t *exec;
  uint64_t bytes; /* moved per run */
  uint64_t *wall, *gpu, *start, *tail;
} row_t;

typedef struct ctx {
  tandem_runtime_t *rt;
  tandem_kernel_t *copy, *fused;
  uint64_t size;
  tandem_buffer_t *host_up, *dev_up, *dev_down, *host_down, *check;
} ctx_t;

static void add_sm(ctx_t *c, tandem_graph_t *g, tandem_buffer_t *src, tandem_buffer_t *dst,
                   uint32_t groups) {
  tandem_view_t views[2] = {tandem_buffer_whole(src), tandem_buffer_whole(dst)};
  uint32_t count = (uint32_t)(c->size / 16);
  tandem_dispatch_desc_t d = {.struct_size = sizeof(tandem_dispatch_desc_t),
                              .kernel = c->copy,
                              .views = views,
                              .view_count = 2,
                              .push_constants = &count,
                              .push_constant_bytes = sizeof count,
                              .workgroups = {groups, 1, 1}};
  CHECK(tandem_graph_add_dispatch_node(g, &d, NULL));
}

static void add_fused(ctx_t *c, tandem_graph_t *g, uint32_t groups) {
  tandem_view_t views[4] = {tandem_buffer_whole(c->host_up), tandem_buffer_whole(c->dev_up),
                            tandem_buffer_whole(c->dev_down), tandem_buffer_whole(c->host_down)};
  uint32_t push[2] = {(uint32_t)(c->size / 16), groups / 2};
  tandem_dispatch_desc_t d = {.struct_size = sizeof(tandem_dispatch_desc_t),
                              .kernel = c->fused,
                              .views = views,
                              .view_count = 4,
                              .push_constants = push,
                              .push_constant_bytes = sizeof push,
                              .workgroups = {groups, 1, 1}};
  CHECK(tandem_graph_add_dispatch_node(g, &d, NULL));
}

static void add_engine(ctx_t *c, tandem_graph_t *g, tandem_buffer_t *src, tandem_buffer_t *dst) {
  (void)c;
  CHECK(tandem_graph_add_copy(g, tandem_buffer_whole(src), tandem_buffer_whole(dst),
                              TANDEM_LANE_AUTO));
}

/* up: 0 none, 1 engine, 2 shader, 3 both in one fused dispatch (down
 * ignored); the same for down. */
static void make_row(ctx_t *c, row_t *r, const char *name, int up, int down, uint32_t groups) {
  tandem_graph_t *g;
  CHECK(tandem_graph_create(c->rt, &g));
  if (up == 1) add_engine(c, g, c->host_up, c->dev_up);
  if (up == 2) add_sm(c, g, c->host_up, c->dev_up, groups);
  if (up == 3) add_fused(c, g, groups), down = 3;
  if (down == 1) add_engine(c, g, c->dev_down, c->host_down);
  if (down == 2) add_sm(c, g, c->dev_down, c->host_down, groups);
  CHECK(tandem_graph_prepare(g, &r->exec));
  tandem_graph_release(g);
  snprintf(r->name, sizeof r->name, "%s", name);
  r->bytes = c->size * (uint64_t)((up != 0) + (down != 0));
}

/* wall: submit call until the wait returned; gpu: first region start to
 * last region end; start: submit until the GPU started; tail: the GPU's end
 * until tandem saw it finished (what the wait adds). */
static void run_graph(tandem_exec_t *e, uint64_t *wall, uint64_t *gpu, uint64_t *start,
                      uint64_t *tail) {
  tandem_completion_t *done;
  uint64_t t0 = now_ns();
  CHECK(tandem_exec_submit(e, &done));
  CHECK(tandem_completion_wait(done));
  uint64_t t1 = now_ns();
  tandem_completion_profile_t prof;
  tandem_completion_profile_init(&prof);
  CHECK(tandem_completion_profile(done, &prof, NULL, 0));
  tandem_completion_release(done);
  if (wall) *wall = t1 - t0;
  if (gpu) *gpu = prof.gpu_times_valid ? prof.execution_ns : 0;
  if (start) *start = prof.gpu_times_valid ? prof.queue_ns : 0;
  uint64_t end = prof.host_submit_ns + prof.queue_ns + prof.execution_ns;
  if (tail)
    *tail = prof.gpu_times_valid && prof.host_observed_ns > end ? prof.host_observed_ns - end : 0;
}

static void run_once(ctx_t *c, tandem_graph_t *g) {
  tandem_exec_t *e;
  CHECK(tandem_graph_prepare(g, &e));
  run_graph(e, NULL, NULL, NULL, NULL);
  tandem_exec_release(e);
  (void)c;
}

static void fill_random(tandem_buffer_t *b, uint32_t seed) {
  tandem_map_t m;
  CHECK(tandem_map_write(tandem_buffer_whole(b), &m));
  uint32_t *w = m.data, x = seed;
  for (uint64_t i = 0; i < m.length / 4; i++) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    w[i] = x;
  }
  tandem_unmap(&m);
}

static bool same_bytes(tandem_buffer_t *a, tandem_buffer_t *b) {
  tandem_map_t ma, mb;
  CHECK(tandem_map_read(tandem_buffer_whole(a), &ma));
  CHECK(tandem_map_read(tandem_buffer_whole(b), &mb));
  bool same = ma.length == mb.length && memcmp(ma.data, mb.data, ma.length) == 0;
  tandem_unmap(&ma);
  tandem_unmap(&mb);
  return same;
}

/* Runs a shader row on zeroed destinations and compares the bytes moved. */
static bool check_row(ctx_t *c, row_t *r, int up, int down) {
  tandem_graph_t *g;
  CHECK(tandem_graph_create(c->rt, &g));
  CHECK(tandem_graph_add_fill(g, tandem_buffer_whole(c->dev_up), 0, TANDEM_LANE_AUTO));
  CHECK(tandem_graph_add_fill(g, tandem_buffer_whole(c->host_down), 0, TANDEM_LANE_AUTO));
  run_once(c, g);
  tandem_graph_release(g);
  run_graph(r->exec, NULL, NULL, NULL, NULL);
  bool ok = true;
  if (up) {
    CHECK(tandem_graph_create(c->rt, &g));
    add_engine(c, g, c->dev_up, c->check);
    run_once(c, g);
    tandem_graph_release(g);
    ok = ok && same_bytes(c->check, c->host_up);
  }
  if (down) {
    CHECK(tandem_graph_create(c->rt, &g));
    add_engine(c, g, c->dev_down, c->check);
    run_once(c, g);
    tandem_graph_release(g);
    ok = ok && same_bytes(c->check, c->host_down);
  }
  if (!ok) fprintf(stderr, "copy_paths: row %s moved wrong bytes\n", r->name);
  return ok;
}

static double median_of(uint64_t *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  return n % 2 ? (double)v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
}

int main(int argc, char **argv) {
  uint64_t mib = 256;
  int rounds = 30;
  bool smoke = false;
  int spin_us = -1; /* -1: the runtime's default */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--smoke") == 0) smoke = true;
    else if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc) mib = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--spin-us") == 0 && i + 1 < argc) spin_us = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--mib N] [--rounds R] [--spin-us U] | --smoke\n", argv[0]);
      return 2;
    }
  }
  if (smoke) mib = 1, rounds = 3;
  if (mib < 1 || rounds < 1) {
    fprintf(stderr, "copy_paths: --mib and --rounds must be at least 1\n");
    return 2;
  }
  ctx_t c = {.size = mib << 20};
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.gpu_timestamps = true;
  if (spin_us >= 0) o.wait_spin_us = (uint32_t)spin_us;
  o.validation = smoke;
  o.validation_callback = on_validation;
  CHECK(tandem_runtime_create(&o, &c.rt));
  CHECK(tandem_runtime_open_gpu(c.rt));
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  CHECK(tandem_runtime_gpu_info(c.rt, 0, &info));
  tandem_binding_contract_t b[2] = {{c.size, 16, TANDEM_ACCESS_READ},
                                    {c.size, 16, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t kd = {.struct_size = sizeof(tandem_kernel_desc_t),
                             .name = "copy_uvec4",
                             .glsl_source = copy_glsl,
                             .bindings = b,
                             .binding_count = 2,
                             .push_constant_bytes = 4};
  CHECK(tandem_kernel_create(c.rt, &kd, &c.copy));
  tandem_binding_contract_t fb[4] = {b[0], b[1], b[0], b[1]};
  tandem_kernel_desc_t fd = {.struct_size = sizeof(tandem_kernel_desc_t),
                             .name = "copy_both_uvec4",
                             .glsl_source = fused_glsl,
                             .bindings = fb,
                             .binding_count = 4,
                             .push_constant_bytes = 8};
  CHECK(tandem_kernel_create(c.rt, &fd, &c.fused));
  CHECK(tandem_buffer_create(c.rt, c.size, TANDEM_PLACEMENT_HOST_VISIBLE, &c.host_up));
  CHECK(tandem_buffer_create(c.rt, c.size, TANDEM_PLACEMENT_GPU_LOCAL, &c.dev_up));
  CHECK(tandem_buffer_create(c.rt, c.size, TANDEM_PLACEMENT_GPU_LOCAL, &c.dev_down));
  CHECK(tandem_buffer_create(c.rt, c.size, TANDEM_PLACEMENT_HOST_VISIBLE, &c.host_down));
  CHECK(tandem_buffer_create(c.rt, c.size, TANDEM_PLACEMENT_HOST_VISIBLE, &c.check));
  fill_random(c.host_up, 0x1234567u);
  /* The download source: random bytes too, put there by the engine. */
  fill_random(c.check, 0x89abcdefu);
  {
    tandem_graph_t *g;
    CHECK(tandem_graph_create(c.rt, &g));
    add_engine(&c, g, c.check, c.dev_down);
    run_once(&c, g);
    tandem_graph_release(g);
  }
  tandem_buffer_memory_t mem;
  CHECK(tandem_buffer_memory(c.host_up, &mem));
  printf("device: %s (%s %s), %llu MiB per direction, %d rounds, HOST_VISIBLE = memory type "
         "%u\n",
         info.name, info.driver_name, info.driver_info, (unsigned long long)mib, rounds,
         mem.memory_type);

  static const uint32_t one_way[] = {264, 1056};
  static const uint32_t both[] = {132, 264, 528, 1056};
  static const uint32_t fused[] = {132, 264, 528, 1056, 4224};
  row_t rows[MAX_ROWS];
  int n = 0, shader_up[MAX_ROWS], shader_down[MAX_ROWS];
  memset(rows, 0, sizeof rows);
#define ROW(name_, up_, down_, groups_, sup_, sdown_)   \
  do {                                                  \
    make_row(&c, &rows[n], name_, up_, down_, groups_); \
    shader_up[n] = sup_, shader_down[n] = sdown_, n++;  \
  } while (0)
  char name[40];
  ROW("up-engine", 1, 0, 0, 0, 0);
  ROW("down-engine", 0, 1, 0, 0, 0);
  ROW("both-engine", 1, 1, 0, 0, 0);
  for (size_t k = 0; k < sizeof one_way / sizeof *one_way; k++) {
    snprintf(name, sizeof name, "up-sm/%u", one_way[k]);
    ROW(name, 2, 0, one_way[k], 1, 0);
    snprintf(name, sizeof name, "down-sm/%u", one_way[k]);
    ROW(name, 0, 2, one_way[k], 0, 1);
  }
  for (size_t k = 0; k < sizeof both / sizeof *both; k++) {
    snprintf(name, sizeof name, "both-sm/%u+%u", both[k], both[k]);
    ROW(name, 2, 2, both[k], 1, 1);
  }
  for (size_t k = 0; k < sizeof fused / sizeof *fused; k++) {
    snprintf(name, sizeof name, "both-fused/%u", fused[k]);
    ROW(name, 3, 3, fused[k], 1, 1);
  }
  ROW("both-mixed-up-sm", 2, 1, 264, 1, 0);
  ROW("both-mixed-down-sm", 1, 2, 264, 0, 1);
#undef ROW

  int rc = 0;
  for (int i = 0; i < n; i++)
    if ((shader_up[i] || shader_down[i]) && !check_row(&c, &rows[i], shader_up[i], shader_down[i]))
      rc = 1;
  for (int i = 0; i < n; i++) {
    rows[i].wall = calloc((size_t)rounds, sizeof(uint64_t));
    rows[i].gpu = calloc((size_t)rounds, sizeof(uint64_t));
    rows[i].start = calloc((size_t)rounds, sizeof(uint64_t));
    rows[i].tail = calloc((size_t)rounds, sizeof(uint64_t));
    if (!rows[i].wall || !rows[i].gpu || !rows[i].start || !rows[i].tail) {
      fprintf(stderr, "copy_paths: out of memory\n");
      return 1;
    }
    run_graph(rows[i].exec, NULL, NULL, NULL, NULL); /* warm-up */
  }
  for (int round = 0; round < rounds; round++)
    for (int k = 0; k < n; k++) {
      int i = (round + k) % n;
      run_graph(rows[i].exec, &rows[i].wall[round], &rows[i].gpu[round], &rows[i].start[round],
                &rows[i].tail[round]);
    }
  printf("%-22s %10s %8s %10s %8s %9s %9s\n", "row", "wall us", "GB/s", "gpu us", "GB/s",
         "start us", "tail us");
  for (int i = 0; i < n; i++) {
    double w = median_of(rows[i].wall, rounds), gp = median_of(rows[i].gpu, rounds);
    printf("%-22s %10.1f %8.2f %10.1f %8.2f %9.1f %9.1f\n", rows[i].name, w / 1e3,
           (double)rows[i].bytes / w, gp / 1e3, gp > 0 ? (double)rows[i].bytes / gp : 0.0,
           median_of(rows[i].start, rounds) / 1e3, median_of(rows[i].tail, rounds) / 1e3);
  }
  printf("reference (issue 10, CUDA pinned memcpy on this machine): 55.0 GB/s one way, "
         "both ways at once 2 x 64 MiB in 1336-1460 us (92-100 GB/s)\n");
  uint64_t msgs = tandem_runtime_validation_messages(c.rt);
  if (msgs) {
    fprintf(stderr, "copy_paths: %llu validation messages\n", (unsigned long long)msgs);
    rc = 1;
  }
  for (int i = 0; i < n; i++) {
    tandem_exec_release(rows[i].exec);
    free(rows[i].wall);
    free(rows[i].gpu);
    free(rows[i].start);
    free(rows[i].tail);
  }
  tandem_buffer_release(c.host_up);
  tandem_buffer_release(c.dev_up);
  tandem_buffer_release(c.dev_down);
  tandem_buffer_release(c.host_down);
  tandem_buffer_release(c.check);
  tandem_kernel_release(c.copy);
  tandem_kernel_release(c.fused);
  tandem_runtime_destroy(c.rt);
  return rc;
}
