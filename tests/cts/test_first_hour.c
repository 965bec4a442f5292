/* SPDX-License-Identifier: MIT */
/*
 * test_first_hour.c — the traps and the friction a newcomer met in their
 * first hour (issue 22), each pinned with data checked against the CPU:
 *   - view-sized contracts (TANDEM_BYTES_VIEW): one kernel for every size,
 *     the descriptor bound to the view's bytes (arrayLength), per-submission
 *     tandem_exec_set_view at a new length; a view longer than a fixed
 *     contract refused instead of computed in part;
 *   - a trace started on a default-options runtime has a real GPU duration
 *     on every slice and every dependency going forward in time;
 *   - the emulated NPU named "@emulated" from C;
 *   - the short-program helpers (buffers from host data, staged read-back,
 *     a one-call run, contracts from the shader).
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "tandem_test_shaders.h"

typedef struct {
  float a;
  uint32_t n;
} saxpy_push_t;

/* HOST_VISIBLE buffers only, so the test sees what the kernel wrote without
 * copies in between. */
static tandem_buffer_t *host_floats(tandem_runtime_t *rt, const float *data, uint32_t n) {
  tandem_buffer_t *b = th_buffer(rt, (uint64_t)n * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(b, 0, data, (uint64_t)n * 4);
  return b;
}

static void check_saxpy(tandem_buffer_t *y, uint64_t offset, const float *x0, const float *y0,
                        float a, uint32_t n, uint32_t computed) {
  float *got = malloc((size_t)n * 4);
  th_read(y, offset, got, (uint64_t)n * 4);
  uint32_t bad = 0, first = 0;
  float first_got = 0.0f, first_want = 0.0f;
  for (uint32_t i = 0; i < n; i++) {
    float want = i < computed ? a * x0[i] + y0[i] : y0[i];
    if (fabsf(got[i] - want) > 1e-6f * fmaxf(1.0f, fabsf(want))) {
      if (!bad) first = i, first_got = got[i], first_want = want;
      bad++;
    }
  }
  if (bad)
    fail_msg("%u of %u floats wrong, first at %u: got %g, want %g", bad, n, first,
             (double)first_got, (double)first_want);
  free(got);
}

/* One saxpy kernel with view-sized bindings serves 1000, 2000 and (through
 * tandem_exec_set_view on the next submission) 3000 floats. */
static void test_view_sized_saxpy(void **state) {
  tandem_runtime_t *rt = *state;
  th_rng_t rng = th_rng(1);
  enum { N = 3000 };
  float x0[N], y0[N];
  th_fill_random_float(&rng, x0, N);
  th_fill_random_float(&rng, y0, N);
  tandem_binding_contract_t c[2] = {
      {.bytes = TANDEM_BYTES_VIEW, .alignment = 4, .access = TANDEM_ACCESS_READ},
      {.bytes = TANDEM_BYTES_VIEW, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE}};
  tandem_kernel_desc_t d = th_kernel_desc("saxpy_any", tandem_spv_saxpy, tandem_spv_saxpy_size, c,
                                          2, sizeof(saxpy_push_t));
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  const float a = 1.5f;
  const uint32_t sizes[2] = {1000, 2000};
  for (int s = 0; s < 2; s++) {
    uint32_t n = sizes[s];
    tandem_buffer_t *x = host_floats(rt, x0, n), *y = host_floats(rt, y0, n);
    tandem_graph_t *g = th_graph(rt);
    tandem_view_t v[2] = {tandem_buffer_whole(x), tandem_buffer_whole(y)};
    saxpy_push_t push = {a, n};
    tandem_dispatch_desc_t dd;
    tandem_dispatch_desc_init(&dd);
    dd.kernel = k;
    dd.views = v;
    dd.view_count = 2;
    dd.push_constants = &push;
    dd.push_constant_bytes = sizeof push;
    dd.workgroups[0] = (n + 255) / 256;
    dd.workgroups[1] = dd.workgroups[2] = 1;
    TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &dd, NULL));
    th_run_graph(g, 1);
    tandem_graph_release(g);
    check_saxpy(y, 0, x0, y0, a, n, n);
    tandem_buffer_release(x);
    tandem_buffer_release(y);
  }
  /* Per submission: one executable, its views moved to 3000 floats at an
   * offset, push constants and workgroups to match. */
  tandem_buffer_t *x = th_buffer(rt, 4096 + N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *y = th_buffer(rt, 4096 + N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  th_write(x, 4096, x0, N * 4);
  th_write(y, 4096, y0, N * 4);
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t v[2] = {th_view(x, 0, 1024), th_view(y, 0, 1024)};
  saxpy_push_t push = {a, 256};
  tandem_dispatch_desc_t dd;
  tandem_dispatch_desc_init(&dd);
  dd.kernel = k;
  dd.views = v;
  dd.view_count = 2;
  dd.push_constants = &push;
  dd.push_constant_bytes = sizeof push;
  dd.workgroups[0] = dd.workgroups[1] = dd.workgroups[2] = 1;
  uint32_t node = 0;
  TH_ASSERT_OK(tandem_graph_add_dispatch_node(g, &dd, &node));
  tandem_exec_t *exec = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &exec));
  tandem_graph_release(g);
  TH_ASSERT_OK(tandem_exec_set_view(exec, node, 0, th_view(x, 4096, N * 4)));
  TH_ASSERT_OK(tandem_exec_set_view(exec, node, 1, th_view(y, 4096, N * 4)));
  push.n = N;
  TH_ASSERT_OK(tandem_exec_set_push_constants(exec, node, &push, sizeof push));
  uint32_t wg[3] = {(N + 255) / 256, 1, 1};
  TH_ASSERT_OK(tandem_exec_set_workgroups(exec, node, wg));
  tandem_completion_t *done = NULL;
  TH_ASSERT_OK(tandem_exec_submit(exec, &done));
  TH_ASSERT_OK(tandem_completion_wait(done));
  tandem_completion_release(done);
  check_saxpy(y, 4096, x0, y0, a, N, N);
  /* The first 1024 bytes were never bound in that submission: still zero. */
  uint32_t head[256];
  th_read(y, 0, head, sizeof head);
  TH_ASSERT_U32_FILL(head, 0u, 256, "bytes before the moved view");
  tandem_exec_release(exec);
  tandem_kernel_release(k);
  tandem_buffer_release(x);
  tandem_buffer_release(y);
}

/* The case: a contract of 1000 floats, views of 2000. Before view-
 * sized contracts the dispatch was accepted and computed the first 1000 only;
 * now it is CONTRACT naming both sizes, and shorter views still are. */
static void test_fixed_contract_longer_view_refused(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_binding_contract_t c[2] = {
      {.bytes = 4000, .alignment = 4, .access = TANDEM_ACCESS_READ},
      {.bytes = 4000, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE}};
  tandem_kernel_t *k = th_kernel_load(rt, "saxpy1000", tandem_spv_saxpy, tandem_spv_saxpy_size, 8,
                                      c, 2, sizeof(saxpy_push_t));
  tandem_buffer_t *x = th_buffer(rt, 8000, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *y = th_buffer(rt, 8000, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  saxpy_push_t push = {2.0f, 2000};
  tandem_view_t v[2] = {tandem_buffer_whole(x), tandem_buffer_whole(y)};
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch(g, k, v, 2, &push, sizeof push),
                       TANDEM_ERROR_CONTRACT,
                       "view is 8000 bytes, the contract's fixed size is 4000");
  TH_ASSERT_MESSAGE_HAS("TANDEM_BYTES_VIEW");
  v[0] = th_view(x, 0, 2000);
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch(g, k, v, 2, &push, sizeof push),
                       TANDEM_ERROR_CONTRACT, "view is 2000 bytes, contract needs 4000");
  /* Exactly the contract's bytes: accepted, and computes all of them. */
  float x0[1000], y0[1000];
  th_rng_t rng = th_rng(2);
  th_fill_random_float(&rng, x0, 1000);
  th_fill_random_float(&rng, y0, 1000);
  th_write(x, 0, x0, 4000);
  th_write(y, 0, y0, 4000);
  v[0] = th_view(x, 0, 4000);
  v[1] = th_view(y, 0, 4000);
  push.n = 1000;
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, v, 2, &push, sizeof push));
  tandem_exec_t *exec = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &exec));
  /* set_view keeps the rule: a longer view for a fixed binding is refused. */
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(exec, 0, 1, tandem_buffer_whole(y)),
                       TANDEM_ERROR_CONTRACT, "the contract's fixed size is 4000");
  tandem_completion_t *done = NULL;
  TH_ASSERT_OK(tandem_exec_submit(exec, &done));
  TH_ASSERT_OK(tandem_completion_wait(done));
  tandem_completion_release(done);
  check_saxpy(y, 0, x0, y0, 2.0f, 1000, 1000);
  tandem_exec_release(exec);
  tandem_graph_release(g);
  tandem_kernel_release(k);
  tandem_buffer_release(x);
  tandem_buffer_release(y);
}

/* The Vulkan descriptor of a view-sized binding covers exactly the view:
 * the shader's arrayLength() sees view bytes / 4, per submission. */
static const char k_glsl_lengths[] =
    "#version 450\n"
    "layout(local_size_x = 1) in;\n"
    "layout(std430, binding = 0) readonly buffer In { uint v[]; } src;\n"
    "layout(std430, binding = 1) writeonly buffer Out { uint n[]; } dst;\n"
    "void main() { dst.n[0] = uint(src.v.length()); dst.n[1] = uint(dst.n.length()); }\n";

static void test_view_sized_descriptor_range(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_binding_contract_t c[2] = {
      {.bytes = TANDEM_BYTES_VIEW, .alignment = 4, .access = TANDEM_ACCESS_READ},
      {.bytes = 8, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE}};
  tandem_kernel_desc_t d;
  tandem_kernel_desc_init(&d);
  d.name = "lengths";
  d.glsl_source = k_glsl_lengths;
  d.bindings = c;
  d.binding_count = 2;
  d.workgroups[0] = d.workgroups[1] = d.workgroups[2] = 1;
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_buffer_t *src = th_buffer(rt, 1 << 16, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out = th_buffer(rt, 8, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t v[2] = {th_view(src, 0, 1200), tandem_buffer_whole(out)};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, v, 2, NULL, 0));
  tandem_exec_t *exec = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &exec));
  tandem_graph_release(g);
  const uint64_t lengths[3] = {1200, 40000, 1 << 16};
  for (int i = 0; i < 3; i++) {
    if (i) TH_ASSERT_OK(tandem_exec_set_view(exec, 0, 0, th_view(src, 0, lengths[i])));
    tandem_completion_t *done = NULL;
    TH_ASSERT_OK(tandem_exec_submit(exec, &done));
    TH_ASSERT_OK(tandem_completion_wait(done));
    tandem_completion_release(done);
    uint32_t got[2];
    th_read(out, 0, got, sizeof got);
    TH_ASSERT_U64_EQ(got[0], lengths[i] / 4);
    TH_ASSERT_U64_EQ(got[1], 2);
  }
  tandem_exec_release(exec);
  tandem_kernel_release(k);
  tandem_buffer_release(src);
  tandem_buffer_release(out);
}

/* upload x, y -> saxpy -> download y, on |rt|; returns the executable. */
static tandem_exec_t *saxpy_pipeline(tandem_runtime_t *rt, uint32_t n, tandem_buffer_t *hx,
                                     tandem_buffer_t *hy, tandem_buffer_t *hout,
                                     tandem_buffer_t *dx, tandem_buffer_t *dy, float a,
                                     tandem_kernel_t **out_kernel) {
  tandem_binding_contract_t c[2] = {
      {.bytes = TANDEM_BYTES_VIEW, .alignment = 4, .access = TANDEM_ACCESS_READ},
      {.bytes = TANDEM_BYTES_VIEW, .alignment = 4, .access = TANDEM_ACCESS_READ_WRITE}};
  tandem_kernel_t *k = th_kernel_load(rt, "saxpy", tandem_spv_saxpy, tandem_spv_saxpy_size,
                                      (n + 255) / 256, c, 2, sizeof(saxpy_push_t));
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(hx), tandem_buffer_whole(dx), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(hy), tandem_buffer_whole(dy), TANDEM_LANE_AUTO));
  tandem_view_t v[2] = {tandem_buffer_whole(dx), tandem_buffer_whole(dy)};
  saxpy_push_t push = {a, n};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, v, 2, &push, sizeof push));
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(dy), tandem_buffer_whole(hout),
                                     TANDEM_LANE_AUTO));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  *out_kernel = k;
  return e;
}

/* A runtime with default options (no gpu_timestamps) whose trace starts
 * before anything opened the GPU: every GPU slice has a real duration and
 * every dependency arrow goes forward in time. Before, every GPU slice had
 * ts 0 and dur 0 and the arrows pointed backwards. */
static void test_default_options_trace(void **state) {
  (void)state;
  th_validation_reset();
  tandem_runtime_t *rt = th_runtime_create_closed(NULL);
  TH_ASSERT_OK(tandem_runtime_trace_start(rt, 256));
  enum { N = 1 << 16, RUNS = 3 };
  float *x0 = malloc(N * 4), *y0 = malloc(N * 4);
  th_rng_t rng = th_rng(3);
  th_fill_random_float(&rng, x0, N);
  th_fill_random_float(&rng, y0, N);
  tandem_buffer_t *hx = host_floats(rt, x0, N), *hy = host_floats(rt, y0, N);
  tandem_buffer_t *hout = th_buffer(rt, N * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *dx = th_buffer(rt, N * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *dy = th_buffer(rt, N * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_kernel_t *k = NULL;
  tandem_exec_t *e = saxpy_pipeline(rt, N, hx, hy, hout, dx, dy, 0.5f, &k);
  for (int r = 0; r < RUNS; r++) {
    tandem_completion_t *done = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &done));
    TH_ASSERT_OK(tandem_completion_wait(done));
    tandem_completion_release(done);
    check_saxpy(hout, 0, x0, y0, 0.5f, N, N); /* y is uploaded afresh each run */
  }
  tandem_trace_t *t = NULL;
  TH_ASSERT_OK(tandem_runtime_trace_stop(rt, &t));
  uint32_t count = 0;
  const tandem_trace_event_t *ev = tandem_trace_events(t, &count);
  assert_true(count >= 3 * RUNS); /* upload, compute, download regions per run */
  uint32_t waits = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (ev[i].lane >= TANDEM_LANE_COUNT_GPU) continue;
    if (!ev[i].gpu_start_ns || ev[i].gpu_end_ns <= ev[i].gpu_start_ns)
      fail_msg("event %u (%s, lane %d): GPU start %llu, end %llu", i, ev[i].name, (int)ev[i].lane,
               (unsigned long long)ev[i].gpu_start_ns, (unsigned long long)ev[i].gpu_end_ns);
    for (int l = 0; l < TANDEM_LANE_COUNT; l++) {
      if (ev[i].waits_for[l] < 0) continue;
      for (uint32_t j = 0; j < count; j++)
        if (ev[j].submission == ev[i].submission && ev[j].region == (uint32_t)ev[i].waits_for[l]) {
          if (ev[j].gpu_end_ns > ev[i].gpu_start_ns)
            fail_msg("region %u of submission %llu starts at %llu, before region %u it waits "
                     "for ends (%llu)",
                     ev[i].region, (unsigned long long)ev[i].submission,
                     (unsigned long long)ev[i].gpu_start_ns, ev[j].region,
                     (unsigned long long)ev[j].gpu_end_ns);
          waits++;
        }
    }
  }
  assert_true(waits >= 2 * RUNS);
  /* The JSON a user opens: every slice has a duration, every arrow goes
   * forward. */
  char path[] = "/tmp/tandem_first_hour_trace_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  TH_ASSERT_OK(tandem_trace_write_json(t, path));
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (!root) fail_msg("trace JSON does not parse: %s (line %d)", jerr.text, jerr.line);
  json_t *events = json_object_get(root, "traceEvents");
  double flow_start[512];
  uint32_t slices = 0, flows = 0;
  for (size_t i = 0; i < json_array_size(events); i++) {
    json_t *je = json_array_get(events, i);
    const char *ph = json_string_value(json_object_get(je, "ph"));
    double ts = json_number_value(json_object_get(je, "ts"));
    if (!strcmp(ph, "X")) {
      double dur = json_number_value(json_object_get(je, "dur"));
      if (!(dur > 0.0)) fail_msg("slice %u has duration %g", slices, dur);
      assert_true(json_is_true(json_object_get(json_object_get(je, "args"), "gpu_clock")));
      slices++;
    } else if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
      json_int_t id = json_integer_value(json_object_get(je, "id"));
      assert_true(id >= 1 && id < 512);
      if (ph[0] == 's') {
        flow_start[id] = ts;
      } else {
        if (ts < flow_start[id])
          fail_msg("arrow %d goes backwards: from %g us to %g us", (int)id, flow_start[id], ts);
        flows++;
      }
    }
  }
  TH_ASSERT_U64_EQ(slices, count);
  TH_ASSERT_U64_EQ(flows, waits);
  json_decref(root);
  unlink(path);
  tandem_trace_release(t);
  tandem_exec_release(e);
  tandem_kernel_release(k);
  tandem_buffer_release(hx);
  tandem_buffer_release(hy);
  tandem_buffer_release(hout);
  tandem_buffer_release(dx);
  tandem_buffer_release(dy);
  free(x0);
  free(y0);
  th_runtime_destroy(rt);
}

/* "@emulated" from C: the emulated NPU's own xclbin by name (found beside
 * libtandem, or through TANDEM_EMU_XCLBIN), running add_i32 on SHARED
 * buffers, checked against the CPU. Before, the C API tried to read a file
 * named "@emulated". */
static void test_emulated_by_name(void **state) {
  (void)state;
  unsetenv("TANDEM_EMU_XCLBIN");
  const char *found = tandem_npu_emulated_xclbin();
  if (!found) fail_msg("tandem_npu_emulated_xclbin() found nothing beside libtandem");
  char want[4096], got[4096];
  assert_non_null(realpath(TANDEM_TEST_EMU_XCLBIN, want));
  assert_non_null(realpath(found, got));
  assert_string_equal(got, want);
  th_validation_reset();
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.npu_backend = "emulated";
  o.npu_library = TANDEM_TEST_NPU_LIBRARY;
  tandem_runtime_t *rt = th_runtime_create(&o);
  enum { N = 1000 };
  tandem_binding_contract_t c[3] = {{N * 4, 4, TANDEM_ACCESS_READ},
                                    {N * 4, 4, TANDEM_ACCESS_READ},
                                    {N * 4, 4, TANDEM_ACCESS_WRITE}};
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  d.program_path = TANDEM_NPU_EMULATED_XCLBIN;
  d.kernel_name = "add_i32";
  d.bindings = c;
  d.binding_count = 3;
  d.scalar_count = 1;
  tandem_npu_program_t *p = NULL;
  TH_ASSERT_OK(tandem_npu_program_create(rt, &d, &p));
  tandem_buffer_t *b[3];
  for (int i = 0; i < 3; i++) b[i] = th_buffer(rt, N * 4, TANDEM_PLACEMENT_SHARED);
  uint32_t a[N], bb[N], sum[N], out[N];
  th_rng_t rng = th_rng(4);
  th_fill_random_u32(&rng, a, N);
  th_fill_random_u32(&rng, bb, N);
  for (int i = 0; i < N; i++) sum[i] = a[i] + bb[i];
  th_write(b[0], 0, a, sizeof a);
  th_write(b[1], 0, bb, sizeof bb);
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t v[3] = {tandem_buffer_whole(b[0]), tandem_buffer_whole(b[1]),
                        tandem_buffer_whole(b[2])};
  const uint32_t n = N;
  TH_ASSERT_OK(tandem_graph_add_npu_run(g, p, v, 3, &n, 1));
  th_run_graph(g, 1);
  tandem_graph_release(g);
  th_read(b[2], 0, out, sizeof out);
  TH_ASSERT_U32_ARRAY(out, sum, N, "add_i32 through \"@emulated\"");
  /* TANDEM_EMU_XCLBIN overrides, also for "@emulated". */
  setenv("TANDEM_EMU_XCLBIN", "/nonexistent/emulated.xclbin", 1);
  assert_string_equal(tandem_npu_emulated_xclbin(), "/nonexistent/emulated.xclbin");
  tandem_npu_program_t *q = NULL;
  TH_ASSERT_STATUS_MSG(tandem_npu_program_create(rt, &d, &q), TANDEM_ERROR_IO,
                       "/nonexistent/emulated.xclbin");
  unsetenv("TANDEM_EMU_XCLBIN");
  tandem_npu_program_release(p);
  for (int i = 0; i < 3; i++) tandem_buffer_release(b[i]);
  th_runtime_destroy(rt);
}

/* The one-shot helpers: a GPU_LOCAL buffer made from host data and read
 * back through counted staging copies; a HOST_VISIBLE one through maps,
 * with no copy. */
static void test_staged_helpers(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 4096 };
  uint32_t data[N], back[N], part[256];
  th_rng_t rng = th_rng(5);
  th_fill_random_u32(&rng, data, N);
  uint64_t up0 = th_lane_copied(rt, TANDEM_LANE_UPLOAD);
  uint64_t down0 = th_lane_copied(rt, TANDEM_LANE_DOWNLOAD);
  tandem_buffer_t *g = NULL;
  TH_ASSERT_OK(tandem_buffer_create_staged(rt, data, sizeof data, TANDEM_PLACEMENT_GPU_LOCAL, &g));
  TH_ASSERT_U64_EQ(tandem_buffer_size(g), sizeof data);
  TH_ASSERT_U64_EQ(th_lane_copied(rt, TANDEM_LANE_UPLOAD) - up0, sizeof data);
  memset(back, 0, sizeof back);
  TH_ASSERT_OK(tandem_buffer_read_staged(tandem_buffer_whole(g), back));
  TH_ASSERT_U64_EQ(th_lane_copied(rt, TANDEM_LANE_DOWNLOAD) - down0, sizeof data);
  TH_ASSERT_U32_ARRAY(back, data, N, "GPU_LOCAL buffer read back");
  /* Part of a view, written then read. */
  for (int i = 0; i < 256; i++) part[i] = 0xC0DE0000u + (uint32_t)i;
  TH_ASSERT_OK(tandem_buffer_write_staged(th_view(g, 1024, sizeof part), part));
  TH_ASSERT_OK(tandem_buffer_read_staged(tandem_buffer_whole(g), back));
  memcpy(&data[256], part, sizeof part);
  TH_ASSERT_U32_ARRAY(back, data, N, "GPU_LOCAL buffer after a staged write of 1 KiB at 1 KiB");
  /* HOST_VISIBLE: maps only, no copy counted. */
  uint64_t up1 = th_lane_copied(rt, TANDEM_LANE_UPLOAD);
  uint64_t down1 = th_lane_copied(rt, TANDEM_LANE_DOWNLOAD);
  tandem_buffer_t *h = NULL;
  TH_ASSERT_OK(
      tandem_buffer_create_staged(rt, data, sizeof data, TANDEM_PLACEMENT_HOST_VISIBLE, &h));
  memset(back, 0, sizeof back);
  TH_ASSERT_OK(tandem_buffer_read_staged(tandem_buffer_whole(h), back));
  TH_ASSERT_U32_ARRAY(back, data, N, "HOST_VISIBLE buffer read back");
  TH_ASSERT_U64_EQ(th_lane_copied(rt, TANDEM_LANE_UPLOAD), up1);
  TH_ASSERT_U64_EQ(th_lane_copied(rt, TANDEM_LANE_DOWNLOAD), down1);
  tandem_buffer_t *none = (tandem_buffer_t *)(uintptr_t)1;
  TH_ASSERT_STATUS_MSG(tandem_buffer_create_staged(rt, NULL, 64, TANDEM_PLACEMENT_GPU_LOCAL, &none),
                       TANDEM_ERROR_INVALID_ARGUMENT, "data is NULL");
  assert_null(none);
  TH_ASSERT_STATUS(tandem_buffer_read_staged(th_view(g, 0, 8), NULL),
                   TANDEM_ERROR_INVALID_ARGUMENT);
  TH_ASSERT_STATUS(tandem_buffer_read_staged((tandem_view_t){g, sizeof data - 4, 8}, back),
                   TANDEM_ERROR_OUT_OF_RANGE);
  tandem_buffer_release(g);
  tandem_buffer_release(h);
}

/* A contract from the shader: saxpy's x readonly (READ), y read-write, 8
 * push-constant bytes, both view-sized; run once with tandem_graph_run and
 * checked against the CPU. */
static void test_contract_from_shader_and_run(void **state) {
  tandem_runtime_t *rt = *state;
  enum { N = 5000 };
  float x0[N], y0[N], got[N];
  th_rng_t rng = th_rng(6);
  th_fill_random_float(&rng, x0, N);
  th_fill_random_float(&rng, y0, N);
  tandem_kernel_desc_t d;
  tandem_kernel_desc_init(&d);
  d.spirv = tandem_spv_saxpy;
  d.spirv_size = tandem_spv_saxpy_size;
  d.flags = TANDEM_KERNEL_CONTRACT_FROM_SHADER;
  d.workgroups[0] = (N + 255) / 256;
  d.workgroups[1] = d.workgroups[2] = 1;
  tandem_kernel_t *k = NULL;
  TH_ASSERT_OK(tandem_kernel_create(rt, &d, &k));
  tandem_kernel_info_t info;
  tandem_kernel_info_init(&info);
  TH_ASSERT_OK(tandem_kernel_info(k, &info));
  TH_ASSERT_U64_EQ(info.binding_count, 2);
  TH_ASSERT_U64_EQ(info.push_constant_bytes, 8);
  tandem_buffer_t *x = NULL, *y = NULL;
  TH_ASSERT_OK(tandem_buffer_create_staged(rt, x0, sizeof x0, TANDEM_PLACEMENT_GPU_LOCAL, &x));
  TH_ASSERT_OK(tandem_buffer_create_staged(rt, y0, sizeof y0, TANDEM_PLACEMENT_GPU_LOCAL, &y));
  tandem_graph_t *g = th_graph(rt);
  tandem_view_t v[2] = {tandem_buffer_whole(x), tandem_buffer_whole(y)};
  saxpy_push_t push = {3.0f, N};
  TH_ASSERT_OK(tandem_graph_add_dispatch(g, k, v, 2, &push, sizeof push));
  /* x is READ (readonly in the shader): binding it twice in one dispatch
   * beside a write is refused, as for any READ / READ_WRITE overlap. */
  tandem_view_t same[2] = {tandem_buffer_whole(y), tandem_buffer_whole(y)};
  TH_ASSERT_STATUS_MSG(tandem_graph_add_dispatch(g, k, same, 2, &push, sizeof push),
                       TANDEM_ERROR_CONTRACT, "overlap in one buffer");
  TH_ASSERT_OK(tandem_graph_run(g));
  TH_ASSERT_OK(tandem_buffer_read_staged(tandem_buffer_whole(y), got));
  for (int i = 0; i < N; i++) y0[i] = 3.0f * x0[i] + y0[i];
  for (int i = 0; i < N; i++)
    if (fabsf(got[i] - y0[i]) > 1e-6f * fmaxf(1.0f, fabsf(y0[i])))
      fail_msg("y[%d] = %g, want %g", i, (double)got[i], (double)y0[i]);
  /* graph_run returns the run's own failure. */
  TH_ASSERT_OK(tandem_test_control(rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION));
  TH_ASSERT_STATUS(tandem_graph_run(g), TANDEM_ERROR_INTERNAL);
  tandem_graph_release(g);
  /* The flag with a written contract is a contradiction. */
  tandem_binding_contract_t c[2] = {{0, 4, TANDEM_ACCESS_READ}, {0, 4, TANDEM_ACCESS_READ_WRITE}};
  d.bindings = c;
  d.binding_count = 2;
  tandem_kernel_t *k2 = NULL;
  TH_ASSERT_STATUS_MSG(tandem_kernel_create(rt, &d, &k2), TANDEM_ERROR_INVALID_ARGUMENT,
                       "TANDEM_KERNEL_CONTRACT_FROM_SHADER takes the bindings from the shader");
  tandem_kernel_release(k);
  tandem_buffer_release(x);
  tandem_buffer_release(y);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_view_sized_saxpy, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_fixed_contract_longer_view_refused, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_view_sized_descriptor_range, th_setup_gpu,
                                      th_teardown_gpu),
      cmocka_unit_test(test_default_options_trace),
      cmocka_unit_test(test_emulated_by_name),
      cmocka_unit_test_setup_teardown(test_staged_helpers, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_contract_from_shader_and_run, th_setup_gpu,
                                      th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
