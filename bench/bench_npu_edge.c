/* SPDX-License-Identifier: MIT */
/*
 * bench_npu_edge.c — `tandem-bench --only npu-edge`: the cost of one GPU → NPU → GPU
 * edge through tandem against the same work done by direct calls.
 *
 * Work: a GPU dispatch writes n floats into memory the NPU reads, the NPU
 * kernel (the emulated NPU's scale_add_f32) writes n floats the second GPU
 * dispatch reads. tandem: one graph (dispatch → npu run → dispatch) on SHARED
 * buffers, submit + wait. Direct: the same dispatches through raw Vulkan on
 * the NPU buffers' mappings imported with VK_EXT_external_memory_host, and the
 * NPU run through the emulated device's XRT C API (dlopen), each step waited
 * for on the host: submit + wait, sync + run + wait + sync, submit + wait.
 * The difference of the medians is tandem's extra latency for the edge.
 * Needs the emulated NPU and a GPU that can import host memory.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_npu_edge.h"
#include "cmdline/cmdline.h"
#include "tandem_bench_shaders.h"
#include "internal/xrt_headers.h"

/* The direct calls into the emulated NPU (resolved with dlsym). */
typedef struct edge_xrt {
  void *lib;
  xrtDeviceHandle (*DeviceOpen)(unsigned int);
  int (*DeviceClose)(xrtDeviceHandle);
  int (*DeviceLoadXclbinHandle)(xrtDeviceHandle, xrtXclbinHandle);
  xrtXclbinHandle (*XclbinAllocFilename)(const char *);
  int (*XclbinGetUUID)(xrtXclbinHandle, xuid_t);
  int (*XclbinFreeHandle)(xrtXclbinHandle);
  xrtKernelHandle (*PLKernelOpen)(xrtDeviceHandle, const xuid_t, const char *);
  int (*KernelClose)(xrtKernelHandle);
  /* The bridge's registration (internal/xrt_bridge_abi.h): the emulator's
   * XDNA mode refuses loading xclbins, as amdxdna does. */
  int (*BridgeRegisterXclbin)(void *, const char *, char *, size_t);
  xrtBufferHandle (*BOAlloc)(xrtDeviceHandle, size_t, xrtBufferFlags, xrtMemoryGroup);
  int (*BOFree)(xrtBufferHandle);
  void *(*BOMap)(xrtBufferHandle);
  int (*BOSync)(xrtBufferHandle, enum xclBOSyncDirection, size_t, size_t);
  xrtRunHandle (*RunOpen)(xrtKernelHandle);
  int (*RunSetArg)(xrtRunHandle, int, ...);
  int (*RunStart)(xrtRunHandle);
  enum ert_cmd_state (*RunWait)(xrtRunHandle);
  int (*RunClose)(xrtRunHandle);
} edge_xrt_t;

static void edge_xrt_load(edge_xrt_t *x, const char *path) {
  memset(x, 0, sizeof *x);
  x->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!x->lib) bench_die("npu-edge: cannot load the emulated NPU '%s': %s", path, dlerror());
#define EDGE_SYM(field, name)                \
  *(void **)&x->field = dlsym(x->lib, name); \
  if (!x->field) bench_die("npu-edge: the emulated NPU lacks %s", name);
  EDGE_SYM(DeviceOpen, "xrtDeviceOpen")
  EDGE_SYM(DeviceClose, "xrtDeviceClose")
  EDGE_SYM(DeviceLoadXclbinHandle, "xrtDeviceLoadXclbinHandle")
  EDGE_SYM(BridgeRegisterXclbin, "tandemBridgeRegisterXclbin")
  EDGE_SYM(XclbinAllocFilename, "xrtXclbinAllocFilename")
  EDGE_SYM(XclbinGetUUID, "xrtXclbinGetUUID")
  EDGE_SYM(XclbinFreeHandle, "xrtXclbinFreeHandle")
  EDGE_SYM(PLKernelOpen, "xrtPLKernelOpen")
  EDGE_SYM(KernelClose, "xrtKernelClose")
  EDGE_SYM(BOAlloc, "xrtBOAlloc")
  EDGE_SYM(BOFree, "xrtBOFree")
  EDGE_SYM(BOMap, "xrtBOMap")
  EDGE_SYM(BOSync, "xrtBOSync")
  EDGE_SYM(RunOpen, "xrtRunOpen")
  EDGE_SYM(RunSetArg, "xrtRunSetArg")
  EDGE_SYM(RunStart, "xrtRunStart")
  EDGE_SYM(RunWait, "xrtRunWait")
  EDGE_SYM(RunClose, "xrtRunClose")
#undef EDGE_SYM
}

typedef struct edge_direct {
  raw_t *raw;
  edge_xrt_t *x;
  xrtBufferHandle bo_mid1, bo_mid2;
  xrtRunHandle run;
  VkCommandBuffer cb1, cb2;
  size_t bytes;
} edge_direct_t;

static void edge_direct_job(raw_t *unused, void *ctx) {
  (void)unused; /* bench_time_pairs passes NULL: the context carries the device */
  edge_direct_t *d = ctx;
  raw_t *raw = d->raw;
  raw_run(raw, TANDEM_LANE_COMPUTE, &d->cb1, 1);
  if (d->x->BOSync(d->bo_mid1, XCL_BO_SYNC_BO_TO_DEVICE, d->bytes, 0) != 0 ||
      d->x->RunStart(d->run) != 0 || d->x->RunWait(d->run) != ERT_CMD_STATE_COMPLETED ||
      d->x->BOSync(d->bo_mid2, XCL_BO_SYNC_BO_FROM_DEVICE, d->bytes, 0) != 0)
    bench_die("npu-edge: a direct call to the emulated NPU failed");
  raw_run(raw, TANDEM_LANE_COMPUTE, &d->cb2, 1);
}

static uint32_t edge_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

const char *bench_npu_edge_unavailable(const raw_t *raw) {
  if (!cli_emulated_library()[0] || !cli_emulated_xclbin()[0])
    return "this build does not know where the emulated NPU and its xclbin are";
  if (!raw->host_import)
    return "the GPU cannot import host memory (VK_EXT_external_memory_host), which both sides use";
  return NULL;
}

void bench_npu_edge(const bench_options_t *o, raw_t *raw, bench_row_t *rows, uint32_t *count) {
  const uint32_t n = 1u << 16;
  const size_t bytes = (size_t)n * 4;
  const float npu_scale = 3.0f, npu_bias = 0.25f;
  const char *library = cli_emulated_library();
  const char *xclbin = cli_emulated_xclbin();
  if (!library[0] || !xclbin[0])
    bench_die("npu-edge: this build does not know where the emulated NPU is");

  /* tandem side. */
  cli_npu_choice_t npu = {.backend = "emulated"};
  tandem_runtime_options_t opts;
  cli_runtime_options(&opts, o->validate, &npu);
  opts.gpu_index = o->gpu_index;
  tandem_runtime_t *rt;
  TCHECK(tandem_runtime_create(&opts, &rt));
  TCHECK(tandem_runtime_open_npu(rt));
  tandem_buffer_t *in, *mid1, *mid2, *out, *zeros;
  TCHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE, &in));
  TCHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_SHARED, &mid1));
  TCHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_SHARED, &mid2));
  TCHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE, &out));
  TCHECK(tandem_buffer_create(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL, &zeros));
  float *input = malloc(bytes), *expect = malloc(bytes);
  if (!input || !expect) bench_die("out of memory");
  for (uint32_t i = 0; i < n; i++) {
    input[i] = (float)(i % 1000) * 0.001f - 0.5f;
    float a = input[i] * 2.0f;
    float b = a * npu_scale + npu_bias;
    expect[i] = b * 0.5f;
  }
  tandem_map_t m;
  TCHECK(tandem_map_write(tandem_buffer_whole(in), &m));
  memcpy(m.data, input, bytes);
  tandem_unmap(&m);
  tandem_binding_contract_t kb[3] = {{bytes, 4, TANDEM_ACCESS_READ},
                                     {bytes, 4, TANDEM_ACCESS_READ},
                                     {bytes, 4, TANDEM_ACCESS_WRITE}};
  tandem_kernel_desc_t kd = {.struct_size = sizeof(tandem_kernel_desc_t),
                             .name = "scale_add",
                             .spirv = tandem_spv_scale_add,
                             .spirv_size = tandem_spv_scale_add_size,
                             .workgroups = {n / 256, 1, 1},
                             .bindings = kb,
                             .binding_count = 3,
                             .push_constant_bytes = 8};
  tandem_kernel_t *k;
  TCHECK(tandem_kernel_create(rt, &kd, &k));
  tandem_binding_contract_t nb[2] = {{bytes, 4, TANDEM_ACCESS_READ},
                                     {bytes, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t pd = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                  .name = "scale_add_f32",
                                  .program_path = xclbin,
                                  .kernel_name = "scale_add_f32",
                                  .bindings = nb,
                                  .binding_count = 2,
                                  .scalar_count = 3};
  tandem_npu_program_t *prog;
  TCHECK(tandem_npu_program_create(rt, &pd, &prog));
  tandem_graph_t *g;
  TCHECK(tandem_graph_create(rt, &g));
  struct {
    float scale;
    uint32_t n;
  } push1 = {2.0f, n}, push2 = {0.5f, n};
  tandem_view_t v1[3] = {tandem_buffer_whole(in), tandem_buffer_whole(zeros),
                         tandem_buffer_whole(mid1)};
  TCHECK(tandem_graph_add_dispatch(g, k, v1, 3, &push1, sizeof push1));
  tandem_view_t vn[2] = {tandem_buffer_whole(mid1), tandem_buffer_whole(mid2)};
  uint32_t scalars[3] = {n, edge_f32_bits(npu_scale), edge_f32_bits(npu_bias)};
  TCHECK(tandem_graph_add_npu_run(g, prog, vn, 2, scalars, 3));
  tandem_view_t v2[3] = {tandem_buffer_whole(mid2), tandem_buffer_whole(zeros),
                         tandem_buffer_whole(out)};
  TCHECK(tandem_graph_add_dispatch(g, k, v2, 3, &push2, sizeof push2));
  tandem_exec_t *exec;
  TCHECK(tandem_graph_prepare(g, &exec));
  tandem_graph_release(g);

  /* Direct side: the emulated NPU's own device, its BOs imported into raw Vulkan. */
  edge_xrt_t x;
  edge_xrt_load(&x, library);
  xrtDeviceHandle dev = x.DeviceOpen(0);
  xrtXclbinHandle xb = dev ? x.XclbinAllocFilename(xclbin) : NULL;
  xuid_t uuid;
  int loaded = xb ? x.DeviceLoadXclbinHandle(dev, xb) : -1;
  if (loaded == -ENOTSUP) loaded = x.BridgeRegisterXclbin(dev, xclbin, NULL, 0);
  if (!xb || loaded != 0 || x.XclbinGetUUID(xb, uuid) != 0)
    bench_die("npu-edge: the emulated NPU refused '%s'", xclbin);
  xrtKernelHandle kern = x.PLKernelOpen(dev, uuid, "scale_add_f32");
  size_t align = raw->host_import_alignment > 0 ? raw->host_import_alignment : 4096;
  size_t bo_bytes = (bytes + align - 1) / align * align;
  edge_direct_t d = {.raw = raw, .x = &x, .bytes = bytes};
  d.bo_mid1 = x.BOAlloc(dev, bo_bytes, XCL_BO_FLAGS_HOST_ONLY, 0);
  d.bo_mid2 = x.BOAlloc(dev, bo_bytes, XCL_BO_FLAGS_HOST_ONLY, 0);
  if (!kern || !d.bo_mid1 || !d.bo_mid2) bench_die("npu-edge: emulated NPU setup failed");
  void *h1 = x.BOMap(d.bo_mid1), *h2 = x.BOMap(d.bo_mid2);
  raw_buffer_t r_in, r_out, r_zero, r_mid1, r_mid2;
  raw_buffer_create(raw, bytes, true, &r_in);
  raw_buffer_create(raw, bytes, true, &r_out);
  raw_buffer_create(raw, bytes, false, &r_zero);
  raw_buffer_import_host(raw, h1, bo_bytes, &r_mid1);
  raw_buffer_import_host(raw, h2, bo_bytes, &r_mid2);
  memcpy(r_in.mapped, input, bytes);
  VkCommandBuffer zcb = raw_begin(raw, TANDEM_LANE_COMPUTE);
  raw->vk.vkCmdFillBuffer(zcb, r_zero.buffer, 0, VK_WHOLE_SIZE, 0);
  VKCHECK(raw->vk.vkEndCommandBuffer(zcb));
  raw_run(raw, TANDEM_LANE_COMPUTE, &zcb, 1);
  d.run = x.RunOpen(kern);
  if (!d.run || x.RunSetArg(d.run, 0, d.bo_mid1) || x.RunSetArg(d.run, 1, d.bo_mid2) ||
      x.RunSetArg(d.run, 2, (unsigned int)n) ||
      x.RunSetArg(d.run, 3, (unsigned int)edge_f32_bits(npu_scale)) ||
      x.RunSetArg(d.run, 4, (unsigned int)edge_f32_bits(npu_bias)))
    bench_die("npu-edge: setting the direct run's arguments failed");
  raw_kernel_t rk;
  raw_kernel_create(raw, tandem_spv_scale_add, tandem_spv_scale_add_size, 3, 8, &rk);
  VkBuffer s1[3] = {r_in.buffer, r_zero.buffer, r_mid1.buffer};
  VkBuffer s2[3] = {r_mid2.buffer, r_zero.buffer, r_out.buffer};
  VkDeviceSize offs[3] = {0, 0, 0}, ranges[3] = {bytes, bytes, bytes};
  VkDescriptorSet set1 = raw_descriptor_set(raw, &rk, s1, offs, ranges);
  VkDescriptorSet set2 = raw_descriptor_set(raw, &rk, s2, offs, ranges);
  VkCommandBuffer cbs[2];
  const void *pushes[2] = {&push1, &push2};
  VkDescriptorSet sets[2] = {set1, set2};
  for (int i = 0; i < 2; i++) {
    cbs[i] = raw_begin(raw, TANDEM_LANE_COMPUTE);
    raw->vk.vkCmdBindPipeline(cbs[i], VK_PIPELINE_BIND_POINT_COMPUTE, rk.pipeline);
    raw->vk.vkCmdBindDescriptorSets(cbs[i], VK_PIPELINE_BIND_POINT_COMPUTE, rk.layout, 0, 1,
                                    &sets[i], 0, NULL);
    raw->vk.vkCmdPushConstants(cbs[i], rk.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, pushes[i]);
    raw->vk.vkCmdDispatch(cbs[i], n / 256, 1, 1);
    VKCHECK(raw->vk.vkEndCommandBuffer(cbs[i]));
  }
  d.cb1 = cbs[0];
  d.cb2 = cbs[1];

  uint32_t iters = o->quick ? 100 : 1000, warm = o->quick ? 10 : 100;
  double *tt = calloc(iters, sizeof *tt), *dt = calloc(iters, sizeof *dt);
  if (!tt || !dt) bench_die("out of memory");
  bench_time_pairs(o, "npu-edge", iters, warm, exec, edge_direct_job, &d, NULL, tt, dt);

  /* Both sides computed the right thing. */
  uint32_t bad_t = 0, bad_d = 0;
  TCHECK(tandem_map_read(tandem_buffer_whole(out), &m));
  const float *got = m.data, *got_d = r_out.mapped;
  for (uint32_t i = 0; i < n; i++) {
    if (fabsf(got[i] - expect[i]) > 1e-5f) bad_t++;
    if (fabsf(got_d[i] - expect[i]) > 1e-5f) bad_d++;
  }
  tandem_unmap(&m);
  if (bad_t || bad_d)
    bench_die("npu-edge: wrong results: %u (tandem) and %u (direct) of %u elements", bad_t, bad_d,
              n);

  bench_row_t *row = &rows[(*count)++];
  memset(row, 0, sizeof *row);
  snprintf(row->name, sizeof row->name, "npu-edge");
  row->nodes = 3;
  double *pr = calloc(iters, sizeof *pr);
  if (!pr) bench_die("out of memory");
  for (uint32_t i = 0; i < iters; i++) pr[i] = tt[i] / dt[i];
  row->tandem = bench_summarize(tt, iters);
  row->direct = bench_summarize(dt, iters);
  row->pair_ratio = bench_summarize(pr, iters);
  row->ratio = row->tandem.median / row->direct.median;
  free(pr);
  free(tt);
  free(dt);

  raw_kernel_destroy(raw, &rk);
  raw_buffer_destroy(raw, &r_in);
  raw_buffer_destroy(raw, &r_out);
  raw_buffer_destroy(raw, &r_zero);
  raw_buffer_destroy(raw, &r_mid1); /* before the BOs whose memory they wrap */
  raw_buffer_destroy(raw, &r_mid2);
  x.RunClose(d.run);
  x.BOFree(d.bo_mid1);
  x.BOFree(d.bo_mid2);
  x.KernelClose(kern);
  x.XclbinFreeHandle(xb);
  x.DeviceClose(dev);
  dlclose(x.lib);
  tandem_exec_release(exec);
  tandem_npu_program_release(prog);
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(mid1);
  tandem_buffer_release(mid2);
  tandem_buffer_release(out);
  tandem_buffer_release(zeros);
  free(input);
  free(expect);
  if (o->validate && tandem_runtime_validation_messages(rt))
    bench_die("npu-edge: %llu validation messages on the tandem side",
              (unsigned long long)tandem_runtime_validation_messages(rt));
  tandem_runtime_destroy(rt);
}
