/* SPDX-License-Identifier: MIT */
/*
 * test_handoff.c — the scoped handoff (tandem_vulkan.h, "Scoped handoff"):
 * the user's own Vulkan commands as graph nodes, ordered by tandem.
 *
 * The commands are plain Vulkan recorded through the native handles (the
 * harness's entry-point table, harness_vk.h): copies, fills, buffer updates
 * and a compute pipeline the test builds itself from the add_one_u32 SPIR-V
 * (plain Vulkan, not a tandem kernel; its own descriptor pool and sets). They
 * write buffers that tandem dispatches and copies then read, and read buffers
 * tandem wrote, on one lane and across lanes; every graph is replayed with
 * new random data and checked against a CPU reference. Also: the callback
 * runs once per slot at prepare and at re-records only, never per submit; a
 * live host map makes the submit BUSY; an undeclared access index is refused;
 * a callback's error fails prepare (or a re-recording submit) with its code
 * and the node named; declared accesses carry poison; the one-shot form; the
 * external-submit form (the user's own vkQueueSubmit2 between tandem runs,
 * GPU-side waits both ways, one of them held by a host-signalled gate). The
 * docs/interop.md example is the block between the docs:handoff-example
 * markers, checked verbatim. Every runtime runs with validation
 * (synchronization validation included): any message fails the test. Label
 * "vulkan".
 */
#include <stdlib.h>

#include "harness_vk.h"
#include "tandem/tandem_vulkan.h"
#include "tandem_test_shaders.h"

/*------------------------------------------------------------- raw Vulkan --*/

/* The harness's entry points for tandem's device, and the test's own add-one
 * pipeline (not tandem's kernel: a VkPipeline made here from the same
 * SPIR-V, with one storage buffer and a 4-byte push constant). */
typedef struct raw {
  tandem_vulkan_handles_t h;
  th_vk_fns_t vk;
  th_vk_pipeline_t add_one;
  VkDescriptorPool pool; /* one set per recording; freed with the pool */
} raw_t;

#define RAW_MAX_SETS 64

static void raw_open(tandem_runtime_t *rt, raw_t *r) {
  memset(r, 0, sizeof *r);
  tandem_vulkan_handles_init(&r->h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &r->h));
  r->vk = th_vk_fns(&r->h);
  r->add_one = th_vk_pipeline_create(&r->h, (const uint32_t *)tandem_spv_add_one_u32,
                                     tandem_spv_add_one_u32_size, 1, 4);
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, RAW_MAX_SETS};
  VkDescriptorPoolCreateInfo dp = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                   .maxSets = RAW_MAX_SETS,
                                   .poolSizeCount = 1,
                                   .pPoolSizes = &size};
  assert_int_equal(r->vk.CreateDescriptorPool(r->vk.device, &dp, NULL, &r->pool), VK_SUCCESS);
}

/* After every executable that replays the commands is released. */
static void raw_close(raw_t *r) {
  r->vk.DestroyDescriptorPool(r->vk.device, r->pool, NULL);
  th_vk_pipeline_destroy(&r->h, &r->add_one);
}

/* Records v[i] += 1 for the first |n| uints of |view| with the raw pipeline,
 * in a descriptor set of its own (a set already bound in another slot's
 * command buffer must not be written again). */
static void raw_add_one(raw_t *r, VkCommandBuffer cb, tandem_vulkan_view_t view, uint32_t n) {
  VkDescriptorSetLayout set_layout = (VkDescriptorSetLayout)r->add_one.set_layout;
  VkPipelineLayout layout = (VkPipelineLayout)r->add_one.layout;
  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = r->pool,
                                    .descriptorSetCount = 1,
                                    .pSetLayouts = &set_layout};
  VkDescriptorSet set;
  assert_int_equal(r->vk.AllocateDescriptorSets(r->vk.device, &ai, &set), VK_SUCCESS);
  VkDescriptorBufferInfo bi = {(VkBuffer)view.buffer, view.offset, view.range};
  VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                            .dstSet = set,
                            .descriptorCount = 1,
                            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            .pBufferInfo = &bi};
  r->vk.UpdateDescriptorSets(r->vk.device, 1, &w, 0, NULL);
  r->vk.CmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, (VkPipeline)r->add_one.pipeline);
  r->vk.CmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
  r->vk.CmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &n);
  r->vk.CmdDispatch(cb, (n + 255) / 256, 1, 1);
}

/* A barrier between the user's own commands: transfer writes before compute
 * reads and writes (the user's to record; tandem's cover only the edges). */
static void raw_transfer_to_compute(raw_t *r, VkCommandBuffer cb) {
  VkMemoryBarrier2 mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                         .srcStageMask = VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                         .srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT,
                         .dstStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                         .dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT |
                                          VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT};
  VkDependencyInfo dep = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                          .memoryBarrierCount = 1,
                          .pMemoryBarriers = &mb};
  r->vk.CmdPipelineBarrier2(cb, &dep);
}

/*------------------------------------------------------------- callbacks --*/

typedef enum mode {
  COPY_ADD_ONE, /* access 0 → access 1 by copy, then raw add-one on access 1 */
  COPY,         /* access 0 → access 1 by copy (transfer only: any lane) */
  ADD_ONE,      /* raw add-one on access 0 */
  COPY_OUT,     /* access 0 → access 1 by copy; update access 2; fill access 3 */
  FILL,         /* fills access 0 with FILL_WORD */
  UNDECLARED,   /* asks for access |bad| and returns what the accessor said */
  FAIL,         /* returns |result| */
} rec_mode_t;

typedef struct ctx {
  raw_t *raw;
  rec_mode_t mode;
  uint32_t n;             /* uints the commands touch */
  int calls;              /* times the callback ran */
  uint32_t bad;           /* UNDECLARED: the index it asks for */
  tandem_status_t result; /* FAIL: what it returns; UNDECLARED: what the accessor said */
  char message[512];      /* UNDECLARED: the accessor's message */
  uint32_t node;          /* the scope's node number, last call */
  tandem_lane_t lane;     /* the scope's lane, last call */
  tandem_status_t fail;   /* any mode: when set, returned instead of recording */
} ctx_t;

static const uint32_t k_header[4] = {0x0A0B0C0Du, 0x11223344u, 0xDEADBEEFu, 7u};
#define FILL_WORD 0x5A5A5A5Au

static tandem_vulkan_view_t scope_view(const tandem_vulkan_scope_t *scope, uint32_t i) {
  tandem_vulkan_view_t v;
  TH_ASSERT_OK(tandem_vulkan_scope_view(scope, i, &v));
  assert_non_null(v.buffer);
  return v;
}

static tandem_status_t record(void *user, const tandem_vulkan_scope_t *scope) {
  ctx_t *c = user;
  c->calls++;
  c->node = scope->node;
  c->lane = scope->lane;
  assert_non_null(scope->command_buffer);
  assert_non_null(scope->handles.device);
  assert_int_equal(scope->queue_family, scope->handles.lanes[scope->lane].queue_family);
  if (c->fail != TANDEM_OK) return c->fail;
  VkCommandBuffer cb = scope->command_buffer;
  raw_t *r = c->raw;
  switch (c->mode) {
    case COPY_ADD_ONE:
    case COPY: {
      tandem_vulkan_view_t src = scope_view(scope, 0), dst = scope_view(scope, 1);
      VkBufferCopy region = {src.offset, dst.offset, (VkDeviceSize)c->n * 4};
      r->vk.CmdCopyBuffer(cb, (VkBuffer)src.buffer, (VkBuffer)dst.buffer, 1, &region);
      if (c->mode == COPY) break;
      raw_transfer_to_compute(r, cb);
      raw_add_one(r, cb, dst, c->n);
      break;
    }
    case ADD_ONE: raw_add_one(r, cb, scope_view(scope, 0), c->n); break;
    case FILL: {
      tandem_vulkan_view_t v = scope_view(scope, 0);
      r->vk.CmdFillBuffer(cb, (VkBuffer)v.buffer, v.offset, v.range, FILL_WORD);
      break;
    }
    case COPY_OUT: {
      tandem_vulkan_view_t src = scope_view(scope, 0), dst = scope_view(scope, 1);
      VkBufferCopy region = {src.offset, dst.offset, (VkDeviceSize)c->n * 4};
      r->vk.CmdCopyBuffer(cb, (VkBuffer)src.buffer, (VkBuffer)dst.buffer, 1, &region);
      tandem_vulkan_view_t head = scope_view(scope, 2), tail = scope_view(scope, 3);
      r->vk.CmdUpdateBuffer(cb, (VkBuffer)head.buffer, head.offset, sizeof k_header, k_header);
      r->vk.CmdFillBuffer(cb, (VkBuffer)tail.buffer, tail.offset, tail.range, FILL_WORD);
      break;
    }
    case UNDECLARED: {
      tandem_vulkan_view_t v = {(void *)1, 1, 1};
      c->result = tandem_vulkan_scope_view(scope, c->bad, &v);
      snprintf(c->message, sizeof c->message, "%s", tandem_error_message());
      assert_null(v.buffer); /* cleared on failure */
      return c->result;
    }
    case FAIL: return c->result;
  }
  return TANDEM_OK;
}

static tandem_access_decl_t decl(tandem_buffer_t *b, uint64_t offset, uint64_t length,
                                 tandem_access_t access) {
  return (tandem_access_decl_t){th_view(b, offset, length), access};
}

static uint32_t test_n(void) { return th_small() ? 1024 : 8192; }

static tandem_runtime_t *runtime_with_slots(uint32_t slots) {
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.graph_slots = slots;
  return th_runtime_create(&o);
}

/* Submits |exec| and waits; the result must be OK. */
static void run_once(tandem_exec_t *exec) {
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(exec, &c));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(c);
}

/* The whole text of |path|, NUL-terminated (the caller frees). */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long size = ftell(f);
  assert_true(size >= 0);
  rewind(f);
  char *text = malloc((size_t)size + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
  text[size] = '\0';
  fclose(f);
  return text;
}

/*----------------------------------------------------------------- tests --*/

/* Raw Vulkan writes, tandem reads: the handoff copies new host data into a
 * device buffer and adds one with its own pipeline; tandem's add_one adds
 * another in the same region (a barrier between), and a copy on the download
 * lane brings it back (a semaphore wait). out = in + 2, replayed with new
 * data; the callback ran once per slot, at prepare only. */
static void test_raw_writes_tandem_reads(void **state) {
  (void)state;
  const uint32_t slots = 3;
  tandem_runtime_t *rt = runtime_with_slots(slots);
  raw_t raw;
  raw_open(rt, &raw);
  uint32_t n = test_n();
  uint64_t bytes = (uint64_t)n * 4;
  tandem_buffer_t *in = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *mid = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = th_add_one_kernel(rt, n);
  ctx_t c = {.raw = &raw, .mode = COPY_ADD_ONE, .n = n};
  tandem_access_decl_t acc[2] = {decl(in, 0, bytes, TANDEM_ACCESS_READ),
                                 decl(mid, 0, bytes, TANDEM_ACCESS_WRITE)};
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, acc, 2, record, &c));
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(mid), n));
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(mid), tandem_buffer_whole(out),
                                     TANDEM_LANE_AUTO));
  assert_int_equal(c.calls, 0); /* recording the node calls nothing */
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  assert_int_equal(c.calls, (int)slots);
  assert_int_equal(c.node, 0);
  assert_int_equal(c.lane, TANDEM_LANE_COMPUTE);
  tandem_graph_release(g); /* the executable keeps what it needs */

  th_rng_t rng = th_rng(1);
  uint32_t *data = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
  assert_non_null(data);
  assert_non_null(got);
  assert_non_null(want);
  for (int round = 0; round < 6; round++) {
    th_fill_random_u32(&rng, data, n);
    th_write(in, 0, data, bytes);
    run_once(e);
    th_read(out, 0, got, bytes);
    for (uint32_t i = 0; i < n; i++) want[i] = data[i] + 2;
    TH_ASSERT_U32_ARRAY(got, want, n, "out = in + 1 (raw pipeline) + 1 (tandem)");
  }
  assert_int_equal(c.calls, (int)slots); /* replay records nothing */
  tandem_exec_release(e);
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(mid);
  tandem_buffer_release(out);
  raw_close(&raw);
  free(data), free(got), free(want);
  th_runtime_destroy(rt);
}

/* tandem writes, raw Vulkan reads: an upload copy and tandem's add_one
 * produce in + 1 in a device buffer; the handoff copies it out to a host
 * buffer and writes a header (vkCmdUpdateBuffer) and a tail (vkCmdFillBuffer)
 * around it. Replayed with new data. */
static void test_tandem_writes_raw_reads(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_runtime_create(NULL);
  raw_t raw;
  raw_open(rt, &raw);
  uint32_t n = test_n();
  uint64_t bytes = (uint64_t)n * 4, tail = 256;
  tandem_buffer_t *in = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *data = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out =
      th_buffer(rt, bytes + sizeof k_header + tail, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = th_add_one_kernel(rt, n);
  ctx_t c = {.raw = &raw, .mode = COPY_OUT, .n = n};
  tandem_access_decl_t acc[4] = {decl(data, 0, bytes, TANDEM_ACCESS_READ),
                                 decl(out, 0, bytes, TANDEM_ACCESS_WRITE),
                                 decl(out, bytes, sizeof k_header, TANDEM_ACCESS_WRITE),
                                 decl(out, bytes + sizeof k_header, tail, TANDEM_ACCESS_WRITE)};
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(in), tandem_buffer_whole(data),
                                     TANDEM_LANE_AUTO));
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(data), n));
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_COMPUTE, acc, 4, record, &c));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  int calls = c.calls;
  assert_int_equal(c.node, 2);

  th_rng_t rng = th_rng(2);
  uint32_t *src = malloc(bytes), *got = malloc(bytes + sizeof k_header + tail),
           *want = malloc(bytes);
  assert_non_null(src);
  assert_non_null(got);
  assert_non_null(want);
  for (int round = 0; round < 5; round++) {
    th_fill_random_u32(&rng, src, n);
    th_write(in, 0, src, bytes);
    th_write(out, 0, src, bytes); /* stale bytes the handoff must replace */
    run_once(e);
    th_read(out, 0, got, bytes + sizeof k_header + tail);
    for (uint32_t i = 0; i < n; i++) want[i] = src[i] + 1;
    TH_ASSERT_U32_ARRAY(got, want, n, "copied out by raw Vulkan after tandem's add_one");
    TH_ASSERT_U32_ARRAY(got + n, k_header, 4, "vkCmdUpdateBuffer's header");
    TH_ASSERT_U32_FILL(got + n + 4, FILL_WORD, tail / 4, "vkCmdFillBuffer's tail");
  }
  assert_int_equal(c.calls, calls);
  tandem_exec_release(e);
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(data);
  tandem_buffer_release(out);
  raw_close(&raw);
  free(src), free(got), free(want);
  th_runtime_destroy(rt);
}

/* Across lanes: a handoff on the upload lane copies host data in (transfer
 * commands), tandem's add_one on the compute lane waits for it, a handoff
 * on the compute lane adds one with the raw pipeline after it, and a copy
 * on the download lane brings the result back, waiting for the handoff.
 * Then the reverse edge: a handoff on the download lane copies what the
 * download copy wrote. out = in + 2 and out2 = out, replayed. */
static void test_cross_lane(void **state) {
  (void)state;
  tandem_runtime_t *rt = th_runtime_create(NULL);
  raw_t raw;
  raw_open(rt, &raw);
  uint32_t n = test_n();
  uint64_t bytes = (uint64_t)n * 4;
  tandem_buffer_t *in = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *mid = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out2 = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = th_add_one_kernel(rt, n);
  ctx_t up = {.raw = &raw, .mode = COPY, .n = n};
  ctx_t add = {.raw = &raw, .mode = ADD_ONE, .n = n};
  ctx_t down = {.raw = &raw, .mode = COPY, .n = n};
  tandem_access_decl_t up_acc[2] = {decl(in, 0, bytes, TANDEM_ACCESS_READ),
                                    decl(mid, 0, bytes, TANDEM_ACCESS_WRITE)};
  tandem_access_decl_t add_acc[1] = {decl(mid, 0, bytes, TANDEM_ACCESS_READ_WRITE)};
  tandem_access_decl_t down_acc[2] = {decl(out, 0, bytes, TANDEM_ACCESS_READ),
                                      decl(out2, 0, bytes, TANDEM_ACCESS_WRITE)};
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_UPLOAD, up_acc, 2, record, &up));
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(mid), n));
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_COMPUTE, add_acc, 1, record, &add));
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(mid), tandem_buffer_whole(out),
                                     TANDEM_LANE_DOWNLOAD));
  TH_ASSERT_OK(
      tandem_graph_add_vulkan_commands(g, TANDEM_LANE_DOWNLOAD, down_acc, 2, record, &down));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  assert_int_equal(up.lane, TANDEM_LANE_UPLOAD);
  assert_int_equal(down.lane, TANDEM_LANE_DOWNLOAD);
  assert_int_equal(down.node, 4);

  th_rng_t rng = th_rng(3);
  uint32_t *src = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
  assert_non_null(src);
  assert_non_null(got);
  assert_non_null(want);
  for (int round = 0; round < 5; round++) {
    th_fill_random_u32(&rng, src, n);
    th_write(in, 0, src, bytes);
    run_once(e);
    for (uint32_t i = 0; i < n; i++) want[i] = src[i] + 2;
    th_read(out, 0, got, bytes);
    TH_ASSERT_U32_ARRAY(got, want, n, "out: upload handoff, add_one, raw add-one, download");
    th_read(out2, 0, got, bytes);
    TH_ASSERT_U32_ARRAY(got, want, n, "out2: the download-lane handoff's copy of out");
  }
  tandem_exec_release(e);
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(mid);
  tandem_buffer_release(out);
  tandem_buffer_release(out2);
  raw_close(&raw);
  free(src), free(got), free(want);
  th_runtime_destroy(rt);
}

/* A tandem_exec_set_* on another node of the handoff's region re-records
 * that region at the next submit, callback included (once, for the slot
 * used); the commands it records again are still ordered. */
static void test_rerecord(void **state) {
  (void)state;
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.graph_slots = 2;
  o.gpu_timestamps = true; /* it traces */
  tandem_runtime_t *rt = th_runtime_create(&o);
  raw_t raw;
  raw_open(rt, &raw);
  uint32_t n = test_n();
  uint64_t bytes = (uint64_t)n * 4;
  tandem_buffer_t *b = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = th_add_one_kernel(rt, n);
  ctx_t c = {.raw = &raw, .mode = ADD_ONE, .n = n};
  tandem_access_decl_t acc[1] = {decl(b, 0, bytes, TANDEM_ACCESS_READ_WRITE)};
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_COMPUTE, acc, 1, record, &c));
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(b), n));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  assert_int_equal(c.calls, 2);
  /* A Vulkan commands node keeps its views. */
  TH_ASSERT_STATUS_MSG(tandem_exec_set_view(e, 0, 0, tandem_buffer_whole(b)),
                       TANDEM_ERROR_INVALID_ARGUMENT, "node 0 is a Vulkan commands node");
  th_rng_t rng = th_rng(4);
  uint32_t *src = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
  assert_non_null(src);
  assert_non_null(got);
  assert_non_null(want);
  uint32_t half = n / 2;
  TH_ASSERT_OK(tandem_exec_set_push_constants(e, 1, &half, sizeof half));
  for (int round = 0; round < 4; round++) {
    th_fill_random_u32(&rng, src, n);
    th_write(b, 0, src, bytes);
    /* Two runs in flight at once: both slots are used every round. */
    tandem_completion_t *first = NULL, *second = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &first));
    TH_ASSERT_OK(tandem_exec_submit(e, &second));
    TH_ASSERT_OK(tandem_completion_wait(second));
    TH_ASSERT_OK(tandem_completion_wait(first));
    tandem_completion_release(first);
    tandem_completion_release(second);
    th_read(b, 0, got, bytes);
    for (uint32_t i = 0; i < n; i++) want[i] = src[i] + 2 * (1 + (i < half));
    TH_ASSERT_U32_ARRAY(got, want, n, "twice: raw add-one everywhere, tandem's on the first half");
    /* Each slot re-recorded its region once, on its first submit after the
     * set, and never again. */
    assert_int_equal(c.calls, 4);
  }
  /* A callback that fails at a re-record fails that submit with its code,
   * naming the node, and starts nothing; the region (its command buffer
   * ended, not left recording) is recorded again at the next submit. */
  TH_ASSERT_OK(tandem_exec_set_push_constants(e, 1, &n, sizeof n));
  c.fail = TANDEM_ERROR_OUT_OF_MEMORY;
  uint64_t submissions = th_stats(rt).submissions;
  tandem_completion_t *none = NULL;
  TH_ASSERT_STATUS_MSG(tandem_exec_submit(e, &none), TANDEM_ERROR_OUT_OF_MEMORY,
                       "Vulkan commands node 0 (compute lane): its record callback returned "
                       "ERROR_OUT_OF_MEMORY");
  assert_null(none);
  TH_ASSERT_U64_EQ(th_stats(rt).submissions, submissions);
  c.fail = TANDEM_OK;
  th_fill_random_u32(&rng, src, n);
  th_write(b, 0, src, bytes);
  TH_ASSERT_OK(tandem_runtime_trace_start(rt, 16));
  run_once(e);
  tandem_trace_t *trace = NULL;
  TH_ASSERT_OK(tandem_runtime_trace_stop(rt, &trace));
  uint32_t events = 0;
  const tandem_trace_event_t *ev = tandem_trace_events(trace, &events);
  assert_int_equal(events, 1);
  assert_non_null(strstr(ev[0].name, "vulkan commands #0, add_one_u32 #1"));
  tandem_trace_release(trace);
  assert_int_equal(c.calls, 6); /* the failed attempt and the one after it */
  th_read(b, 0, got, bytes);
  for (uint32_t i = 0; i < n; i++) want[i] = src[i] + 2;
  TH_ASSERT_U32_ARRAY(got, want, n, "re-recorded after a failed re-record: +1 raw, +1 tandem");
  tandem_exec_release(e);
  tandem_kernel_release(k);
  tandem_buffer_release(b);
  raw_close(&raw);
  free(src), free(got), free(want);
  th_runtime_destroy(rt);
}

/* A live host map that conflicts with a declared access makes the submit
 * BUSY and starts nothing; one that does not conflict (a read map of bytes
 * the node only reads) does not. The one-shot form answers the same. */
static void test_busy_with_live_map(void **state) {
  tandem_runtime_t *rt = *state;
  raw_t raw;
  raw_open(rt, &raw);
  uint32_t n = 256;
  uint64_t bytes = (uint64_t)n * 4;
  tandem_buffer_t *in = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  uint32_t src[256], got[256];
  th_rng_t rng = th_rng(5);
  th_fill_random_u32(&rng, src, n);
  th_write(in, 0, src, bytes);
  ctx_t c = {.raw = &raw, .mode = COPY, .n = n};
  tandem_access_decl_t acc[2] = {decl(in, 0, bytes, TANDEM_ACCESS_READ),
                                 decl(out, 0, bytes, TANDEM_ACCESS_WRITE)};
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_COMPUTE, acc, 2, record, &c));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  uint64_t before = th_stats(rt).submissions;

  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_write(th_view(in, 64, 64), &m));
  tandem_completion_t *done = NULL;
  TH_ASSERT_STATUS_MSG(tandem_exec_submit(e, &done), TANDEM_ERROR_BUSY, "live host write map");
  assert_null(done);
  TH_ASSERT_STATUS_MSG(tandem_runtime_run_vulkan_commands(rt, TANDEM_LANE_COMPUTE, acc, 2, record,
                                                          &c, &done),
                       TANDEM_ERROR_BUSY, "live host write map");
  assert_null(done);
  tandem_unmap(&m);
  TH_ASSERT_U64_EQ(th_stats(rt).submissions, before);

  TH_ASSERT_OK(tandem_map_read(th_view(out, 0, 64), &m));
  TH_ASSERT_STATUS_MSG(tandem_exec_submit(e, &done), TANDEM_ERROR_BUSY, "live host read map");
  tandem_unmap(&m);
  TH_ASSERT_OK(tandem_map_read(th_view(in, 0, 64), &m)); /* read/read: no conflict */
  TH_ASSERT_OK(tandem_exec_submit(e, &done));
  TH_ASSERT_OK(tandem_completion_wait(done));
  tandem_completion_release(done);
  tandem_unmap(&m);
  th_read(out, 0, got, bytes);
  TH_ASSERT_U32_ARRAY(got, src, n, "copied by the handoff once the write map was gone");
  tandem_exec_release(e);
  tandem_buffer_release(in);
  tandem_buffer_release(out);
  raw_close(&raw);
}

/* An index the node did not declare is refused inside the callback, naming
 * the index and the node; a callback that returns that failure fails the
 * prepare with it. */
static void test_undeclared_index(void **state) {
  tandem_runtime_t *rt = *state;
  raw_t raw;
  raw_open(rt, &raw);
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(b, 0, 64), 1, TANDEM_LANE_AUTO));
  ctx_t c = {.raw = &raw, .mode = UNDECLARED, .bad = 2};
  tandem_access_decl_t acc[2] = {decl(b, 0, 1024, TANDEM_ACCESS_READ),
                                 decl(b, 1024, 1024, TANDEM_ACCESS_WRITE)};
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_COMPUTE, acc, 2, record, &c));
  tandem_exec_t *e = (tandem_exec_t *)1;
  TH_ASSERT_STATUS_MSG(tandem_graph_prepare(g, &e), TANDEM_ERROR_INVALID_ARGUMENT,
                       "Vulkan commands node 1 (compute lane): its record callback failed");
  TH_ASSERT_MESSAGE_HAS("access 2 is not declared (the node declares 2)");
  assert_null(e);
  assert_int_equal(c.calls, 1); /* the first slot's recording stopped the prepare */
  assert_int_equal(c.result, TANDEM_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(c.message, "Vulkan commands node 1: access 2 is not declared"));
  /* Outside a callback, and with NULLs. */
  tandem_vulkan_view_t v;
  TH_ASSERT_STATUS_MSG(tandem_vulkan_scope_view(NULL, 0, &v), TANDEM_ERROR_INVALID_ARGUMENT,
                       "scope is NULL");
  tandem_vulkan_scope_t fake = {0};
  TH_ASSERT_STATUS_MSG(tandem_vulkan_scope_view(&fake, 0, &v), TANDEM_ERROR_INVALID_ARGUMENT,
                       "scope->internal is NULL");
  TH_ASSERT_STATUS_MSG(tandem_vulkan_scope_view(&fake, 0, NULL), TANDEM_ERROR_INVALID_ARGUMENT,
                       "out is NULL");
  tandem_graph_release(g);
  tandem_buffer_release(b);
  raw_close(&raw);
}

/* A callback's error fails prepare with its code and a message naming the
 * node; a value that is no tandem_status_t is refused as such. Nothing
 * leaks, and the half-recorded command buffers raise no validation message. */
static void test_callback_error(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(b, 0, 64), 1, TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(b, 64, 64), 2, TANDEM_LANE_DOWNLOAD));
  ctx_t c = {.mode = FAIL, .result = TANDEM_ERROR_UNSUPPORTED};
  tandem_access_decl_t acc[1] = {decl(b, 0, 128, TANDEM_ACCESS_READ)};
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_DOWNLOAD, acc, 1, record, &c));
  tandem_exec_t *e = NULL;
  TH_ASSERT_STATUS_MSG(tandem_graph_prepare(g, &e), TANDEM_ERROR_UNSUPPORTED,
                       "Vulkan commands node 2 (download lane): its record callback returned "
                       "ERROR_UNSUPPORTED");
  assert_null(e);
  c.result = (tandem_status_t)5;
  TH_ASSERT_STATUS_MSG(tandem_graph_prepare(g, &e), TANDEM_ERROR_INVALID_ARGUMENT,
                       "returned 5, which is not a tandem_status_t");
  c.result = TANDEM_OK; /* the same graph prepares once the callback succeeds */
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  /* ... and a success leaves the thread's last failure message alone. */
  assert_non_null(strstr(tandem_error_message(), "returned 5"));
  run_once(e);
  tandem_exec_release(e);
  tandem_graph_release(g);
  tandem_buffer_release(b);
}

/* The one-shot form: the callback runs once, before the call returns; the
 * commands are ordered after in-flight work that writes what they read
 * (no wait in between), and the completion works as usual. */
static void test_one_shot(void **state) {
  tandem_runtime_t *rt = *state;
  raw_t raw;
  raw_open(rt, &raw);
  uint32_t n = test_n();
  uint64_t bytes = (uint64_t)n * 4;
  tandem_buffer_t *in = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *dev = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = th_add_one_kernel(rt, n);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_copy(g, tandem_buffer_whole(in), tandem_buffer_whole(dev),
                                     TANDEM_LANE_AUTO));
  for (int i = 0; i < 3; i++) TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(dev), n));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  th_rng_t rng = th_rng(6);
  uint32_t *src = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
  assert_non_null(src);
  assert_non_null(got);
  assert_non_null(want);
  ctx_t c = {.raw = &raw, .mode = COPY_ADD_ONE, .n = n};
  tandem_access_decl_t acc[2] = {decl(dev, 0, bytes, TANDEM_ACCESS_READ),
                                 decl(out, 0, bytes, TANDEM_ACCESS_WRITE)};
  for (int round = 0; round < 3; round++) {
    th_fill_random_u32(&rng, src, n);
    th_write(in, 0, src, bytes);
    tandem_completion_t *first = NULL, *second = NULL;
    TH_ASSERT_OK(tandem_exec_submit(e, &first));
    TH_ASSERT_OK(
        tandem_runtime_run_vulkan_commands(rt, TANDEM_LANE_AUTO, acc, 2, record, &c, &second));
    assert_non_null(second);
    assert_int_equal(c.calls, round + 1);
    TH_ASSERT_OK(tandem_completion_wait(second));
    assert_true(tandem_completion_is_complete(first)); /* ordered after it */
    tandem_completion_release(second);
    tandem_completion_release(first);
    th_read(out, 0, got, bytes);
    for (uint32_t i = 0; i < n; i++) want[i] = src[i] + 4;
    TH_ASSERT_U32_ARRAY(got, want, n, "3 tandem add_ones, then the one-shot's copy + add-one");
  }
  tandem_completion_t *none = (tandem_completion_t *)1;
  TH_ASSERT_STATUS_MSG(tandem_runtime_run_vulkan_commands(rt, TANDEM_LANE_NPU, acc, 2, record, &c,
                                                          &none),
                       TANDEM_ERROR_INVALID_ARGUMENT, "lane 3 is not a GPU lane");
  assert_null(none);
  tandem_exec_release(e);
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(dev);
  tandem_buffer_release(out);
  raw_close(&raw);
  free(src), free(got), free(want);
}

/* Declared accesses carry poison like any node's: a handoff that reads
 * bytes a failed run wrote is refused with FAILED_DEPENDENCY; one that
 * declares WRITE over the whole buffer (the promise WRITE makes: every byte
 * overwritten) rewrites it, and readers run again after it. */
static void test_poison(void **state) {
  tandem_runtime_t *rt = *state;
  raw_t raw;
  raw_open(rt, &raw);
  uint32_t n = 1024;
  uint64_t bytes = (uint64_t)n * 4;
  tandem_buffer_t *x = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, tandem_buffer_whole(x), 1u, TANDEM_LANE_AUTO));
  tandem_exec_t *fill = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &fill));
  tandem_graph_release(g);
  TH_ASSERT_OK(tandem_test_control(rt, TANDEM_TEST_FAIL_NEXT_SUBMISSION));
  tandem_completion_t *c = NULL;
  TH_ASSERT_OK(tandem_exec_submit(fill, &c));
  TH_ASSERT_STATUS(tandem_completion_wait(c), TANDEM_ERROR_INTERNAL);
  tandem_completion_release(c);

  ctx_t reader = {.raw = &raw, .mode = COPY, .n = n};
  tandem_access_decl_t racc[2] = {decl(x, 0, bytes, TANDEM_ACCESS_READ),
                                  decl(out, 0, bytes, TANDEM_ACCESS_WRITE)};
  g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, racc, 2, record, &reader));
  tandem_exec_t *read = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &read));
  tandem_graph_release(g);
  TH_ASSERT_STATUS_MSG(tandem_exec_submit(read, &c), TANDEM_ERROR_FAILED_DEPENDENCY,
                       "written by work that failed");
  /* READ_WRITE over the whole buffer reads the poisoned bytes: refused too. */
  ctx_t writer = {.raw = &raw, .mode = FILL};
  tandem_access_decl_t wacc = decl(x, 0, bytes, TANDEM_ACCESS_READ_WRITE);
  TH_ASSERT_STATUS(tandem_runtime_run_vulkan_commands(rt, TANDEM_LANE_AUTO, &wacc, 1, record,
                                                      &writer, &c),
                   TANDEM_ERROR_FAILED_DEPENDENCY);
  wacc.access = TANDEM_ACCESS_WRITE;
  TH_ASSERT_OK(
      tandem_runtime_run_vulkan_commands(rt, TANDEM_LANE_AUTO, &wacc, 1, record, &writer, &c));
  tandem_completion_t *r = NULL;
  TH_ASSERT_OK(tandem_exec_submit(read, &r)); /* ordered after the rewrite in flight */
  TH_ASSERT_OK(tandem_completion_wait(r));
  TH_ASSERT_OK(tandem_completion_wait(c));
  tandem_completion_release(r);
  tandem_completion_release(c);
  uint32_t got[1024];
  th_read(out, 0, got, sizeof got);
  TH_ASSERT_U32_FILL(got, FILL_WORD, n, "the handoff's rewrite, copied by the handoff reader");
  tandem_exec_release(fill);
  tandem_exec_release(read);
  tandem_buffer_release(x);
  tandem_buffer_release(out);
  raw_close(&raw);
}

/*--------------------------------------------------------- external submit --*/

/* The user's own submission: a command pool and a timeline semaphore of
 * theirs, on tandem's device; commands submitted on a lane's queue under
 * tandem's queue lock. */
typedef struct ext_ctx {
  raw_t *raw;
  tandem_runtime_t *rt;
  tandem_lane_t queue_lane; /* whose VkQueue the work goes to */
  VkQueue queue;
  VkCommandPool pool; /* one command buffer per call, freed with the pool */
  VkSemaphore timeline;
  uint64_t value; /* the last value submitted to signal */
  uint32_t n;
  int calls;
  uint32_t waits_seen;                      /* scope->wait_count, last call */
  void *wait_semaphores[TANDEM_LANE_COUNT]; /* and its waits */
  uint64_t wait_values[TANDEM_LANE_COUNT];
  VkSemaphore gate; /* when set, the work also waits for gate >= gate_value */
  uint64_t gate_value;
  tandem_status_t fail; /* returned before submitting anything */
  bool no_semaphore;    /* submits, but returns no semaphore */
  bool computes;        /* the queue's family runs compute (else: copy only) */
} ext_ctx_t;

static void ext_open(ext_ctx_t *c, tandem_runtime_t *rt, raw_t *raw, tandem_lane_t lane,
                     uint32_t n) {
  memset(c, 0, sizeof *c);
  c->raw = raw;
  c->rt = rt;
  c->queue_lane = lane;
  c->n = n;
  const tandem_vulkan_lane_t *l = &raw->h.lanes[lane];
  c->queue = (VkQueue)l->queue;
  /* A transfer-only family (the H200's upload lane) takes the copy only. */
  uint32_t families = 0;
  raw->vk.GetPhysicalDeviceQueueFamilyProperties(raw->vk.physical_device, &families, NULL);
  VkQueueFamilyProperties props[32];
  if (families > 32) families = 32;
  raw->vk.GetPhysicalDeviceQueueFamilyProperties(raw->vk.physical_device, &families, props);
  assert_true(l->queue_family < families);
  c->computes = props[l->queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT;
  c->pool = th_vk_command_pool(&raw->vk, l->queue_family);
  c->timeline = th_vk_timeline(&raw->vk);
}

/* Waits (host) for everything the context submitted, then frees it. */
static void ext_close(ext_ctx_t *c) {
  raw_t *r = c->raw;
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &c->timeline,
                            .pValues = &c->value};
  assert_int_equal(r->vk.WaitSemaphores(r->vk.device, &wi, UINT64_MAX), VK_SUCCESS);
  r->vk.DestroySemaphore(r->vk.device, c->timeline, NULL);
  r->vk.DestroyCommandPool(r->vk.device, c->pool, NULL);
}

/* Copies access 0 into access 1 and adds one there with the raw pipeline
 * (where the queue computes),
 * in a command buffer of its own, submitted waiting for scope's waits and
 * signalling the context's timeline. */
static tandem_status_t ext_submit(void *user, const tandem_vulkan_scope_t *scope,
                                  tandem_vulkan_signal_t *out) {
  ext_ctx_t *c = user;
  raw_t *r = c->raw;
  c->calls++;
  c->waits_seen = scope->wait_count;
  memcpy(c->wait_semaphores, scope->wait_semaphores, sizeof c->wait_semaphores);
  memcpy(c->wait_values, scope->wait_values, sizeof c->wait_values);
  assert_null(scope->command_buffer);
  if (c->fail != TANDEM_OK) return c->fail;
  tandem_vulkan_view_t src = scope_view(scope, 0), dst = scope_view(scope, 1);
  VkCommandBuffer cb = th_vk_begin(&r->vk, c->pool);
  VkBufferCopy region = {src.offset, dst.offset, (VkDeviceSize)c->n * 4};
  r->vk.CmdCopyBuffer(cb, (VkBuffer)src.buffer, (VkBuffer)dst.buffer, 1, &region);
  if (c->computes) {
    raw_transfer_to_compute(r, cb);
    raw_add_one(r, cb, dst, c->n);
  }
  assert_int_equal(r->vk.EndCommandBuffer(cb), VK_SUCCESS);
  VkSemaphoreSubmitInfo waits[TANDEM_LANE_COUNT + 1];
  uint32_t wait_count = 0;
  for (uint32_t i = 0; i < scope->wait_count; i++)
    waits[wait_count++] =
        (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                .semaphore = (VkSemaphore)scope->wait_semaphores[i],
                                .value = scope->wait_values[i],
                                .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  if (c->gate)
    waits[wait_count++] =
        (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                .semaphore = c->gate,
                                .value = c->gate_value,
                                .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkSemaphoreSubmitInfo signal = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                  .semaphore = c->timeline,
                                  .value = ++c->value,
                                  .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
  VkCommandBufferSubmitInfo cbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                   .commandBuffer = cb};
  VkSubmitInfo2 si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                      .waitSemaphoreInfoCount = wait_count,
                      .pWaitSemaphoreInfos = waits,
                      .commandBufferInfoCount = 1,
                      .pCommandBufferInfos = &cbi,
                      .signalSemaphoreInfoCount = 1,
                      .pSignalSemaphoreInfos = &signal};
  tandem_runtime_queue_lock(c->rt, c->queue_lane);
  VkResult vr = r->vk.QueueSubmit2(c->queue, 1, &si, VK_NULL_HANDLE);
  tandem_runtime_queue_unlock(c->rt, c->queue_lane);
  assert_int_equal(vr, VK_SUCCESS);
  *out = (tandem_vulkan_signal_t){c->no_semaphore ? NULL : (void *)c->timeline, c->value};
  return TANDEM_OK;
}

/* tandem writes x (upload copy, add_one), the user's own submission copies
 * x into y and adds one there, tandem adds one to y and downloads it: both
 * edges are GPU-side waits, and nothing waits on the host in between. The
 * user's queue is the compute lane's, and then the upload lane's (the region
 * that waits for it on the compute lane). out = in + 3, replayed. */
static void test_external_submit(void **state) {
  tandem_runtime_t *rt = *state;
  raw_t raw;
  raw_open(rt, &raw);
  uint32_t n = test_n();
  uint64_t bytes = (uint64_t)n * 4;
  tandem_buffer_t *in = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *x = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *y = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *out = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = th_add_one_kernel(rt, n);
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(in), tandem_buffer_whole(x), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(x), n));
  tandem_exec_t *before = NULL, *after = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &before));
  tandem_graph_release(g);
  g = th_graph(rt);
  TH_ASSERT_OK(th_add_add_one(g, k, tandem_buffer_whole(y), n));
  TH_ASSERT_OK(
      tandem_graph_add_copy(g, tandem_buffer_whole(y), tandem_buffer_whole(out), TANDEM_LANE_AUTO));
  TH_ASSERT_OK(tandem_graph_prepare(g, &after));
  tandem_graph_release(g);
  tandem_access_decl_t acc[2] = {decl(x, 0, bytes, TANDEM_ACCESS_READ),
                                 decl(y, 0, bytes, TANDEM_ACCESS_WRITE)};
  th_rng_t rng = th_rng(8);
  uint32_t *src = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
  assert_non_null(src);
  assert_non_null(got);
  assert_non_null(want);
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  TH_ASSERT_OK(tandem_runtime_vulkan_handles(rt, &h));
  VkSemaphore gate = th_vk_timeline(&raw.vk);
  uint64_t gate_value = 0;
  const tandem_lane_t queues[2] = {TANDEM_LANE_COMPUTE, TANDEM_LANE_UPLOAD};
  for (int q = 0; q < 2; q++) {
    ext_ctx_t c;
    ext_open(&c, rt, &raw, queues[q], n);
    for (int round = 0; round < 3; round++) {
      th_fill_random_u32(&rng, src, n);
      th_write(in, 0, src, bytes);
      tandem_completion_t *c1 = NULL, *c2 = NULL, *c3 = NULL;
      TH_ASSERT_OK(tandem_exec_submit(before, &c1));
      /* The first round holds the user's work behind a gate the host opens
       * later: tandem's work after it must not finish before it. */
      bool gated = round == 0;
      c.gate = gated ? gate : VK_NULL_HANDLE;
      c.gate_value = ++gate_value;
      TH_ASSERT_OK(
          tandem_runtime_submit_vulkan(rt, TANDEM_LANE_COMPUTE, acc, 2, ext_submit, &c, &c2));
      /* Nothing retired |before|'s run in between (no wait, no poll), so the
       * user's submission had to wait for it: for the values its upload copy
       * and its add_one (both write x) reach on their lanes' timelines. */
      uint64_t lane_values[TANDEM_LANE_COUNT];
      TH_ASSERT_OK(tandem_completion_lane_values(c1, lane_values));
      assert_int_equal(c.waits_seen, 2);
      for (uint32_t w = 0; w < c.waits_seen; w++) {
        tandem_lane_t l = w == 0 ? TANDEM_LANE_UPLOAD : TANDEM_LANE_COMPUTE; /* lane order */
        assert_ptr_equal(c.wait_semaphores[w], h.lanes[l].timeline);
        TH_ASSERT_U64_EQ(c.wait_values[w], lane_values[l]);
      }
      TH_ASSERT_OK(tandem_exec_submit(after, &c3));
      if (gated) {
        TH_ASSERT_STATUS(tandem_completion_wait_timeout(c3, 50 * 1000 * 1000),
                         TANDEM_ERROR_TIMEOUT);
        assert_false(tandem_completion_is_complete(c2));
        th_vk_timeline_signal(&raw.vk, gate, gate_value);
      }
      TH_ASSERT_OK(tandem_completion_wait(c3));
      assert_true(tandem_completion_is_complete(c2)); /* c3 was ordered after it */
      TH_ASSERT_OK(tandem_completion_wait(c2));
      TH_ASSERT_OK(tandem_completion_wait(c1));
      tandem_completion_release(c1);
      tandem_completion_release(c2);
      tandem_completion_release(c3);
      th_read(out, 0, got, bytes);
      /* On a transfer-only queue the user's submission copies without +1. */
      for (uint32_t i = 0; i < n; i++) want[i] = src[i] + (c.computes ? 3 : 2);
      TH_ASSERT_U32_ARRAY(got, want, n, "tandem +1, the user's submission copy (+1), tandem +1");
    }
    assert_int_equal(c.calls, 3);
    ext_close(&c);
  }
  /* An open gate at every value used (later rounds did not wait for it). */
  th_vk_timeline_signal(&raw.vk, gate, gate_value + 1);
  raw.vk.DestroySemaphore(raw.vk.device, gate, NULL);
  free(src), free(got), free(want);
  tandem_exec_release(before);
  tandem_exec_release(after);
  tandem_kernel_release(k);
  tandem_buffer_release(in);
  tandem_buffer_release(x);
  tandem_buffer_release(y);
  tandem_buffer_release(out);
  raw_close(&raw);
}

/* What the external submit refuses: a conflicting live map (the callback is
 * not called), a callback error (nothing started), OK without a semaphore
 * (the user's work is then theirs to wait for). */
static void test_external_submit_refuses(void **state) {
  tandem_runtime_t *rt = *state;
  raw_t raw;
  raw_open(rt, &raw);
  uint32_t n = 256;
  uint64_t bytes = (uint64_t)n * 4;
  tandem_buffer_t *in = th_buffer(rt, bytes, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_buffer_t *dev = th_buffer(rt, bytes, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_access_decl_t acc[2] = {decl(in, 0, bytes, TANDEM_ACCESS_READ),
                                 decl(dev, 0, bytes, TANDEM_ACCESS_WRITE)};
  ext_ctx_t c;
  ext_open(&c, rt, &raw, TANDEM_LANE_COMPUTE, n);
  uint64_t submissions = th_stats(rt).submissions;
  tandem_completion_t *done = (tandem_completion_t *)1;
  tandem_map_t m;
  TH_ASSERT_OK(tandem_map_write(th_view(in, 0, 64), &m));
  TH_ASSERT_STATUS_MSG(tandem_runtime_submit_vulkan(rt, TANDEM_LANE_AUTO, acc, 2, ext_submit, &c,
                                                    &done),
                       TANDEM_ERROR_BUSY, "live host write map");
  tandem_unmap(&m);
  assert_null(done);
  assert_int_equal(c.calls, 0);
  c.fail = TANDEM_ERROR_CANCELLED;
  TH_ASSERT_STATUS_MSG(
      tandem_runtime_submit_vulkan(rt, TANDEM_LANE_AUTO, acc, 2, ext_submit, &c, &done),
      TANDEM_ERROR_CANCELLED,
      "Vulkan submit (compute lane): its submit callback returned ERROR_CANCELLED; nothing was "
      "started");
  c.fail = TANDEM_OK;
  c.no_semaphore = true;
  TH_ASSERT_STATUS_MSG(tandem_runtime_submit_vulkan(rt, TANDEM_LANE_AUTO, acc, 2, ext_submit, &c,
                                                    &done),
                       TANDEM_ERROR_INVALID_ARGUMENT, "returned TANDEM_OK with no semaphore");
  assert_int_equal(c.calls, 2);
  TH_ASSERT_U64_EQ(th_stats(rt).submissions, submissions);
  TH_ASSERT_STATUS_MSG(tandem_runtime_submit_vulkan(rt, TANDEM_LANE_AUTO, acc, 2, NULL, &c, &done),
                       TANDEM_ERROR_INVALID_ARGUMENT, "the submit callback is NULL");
  ext_close(&c); /* waits for the work submitted without a semaphore for tandem */
  tandem_buffer_release(in);
  tandem_buffer_release(dev);
  raw_close(&raw);
}

/* A "submission" that is the host's: the callback submits nothing and
 * names a timeline the test signals later. Later conflicting tandem work
 * must not run before it: tandem's own wait, seen even on a device whose
 * lanes share one in-order queue (a blocked user submission on that queue
 * would hold everything behind it anyway). */
static tandem_status_t host_gate_submit(void *user, const tandem_vulkan_scope_t *scope,
                                        tandem_vulkan_signal_t *out) {
  (void)scope;
  ext_ctx_t *c = user;
  c->calls++;
  *out = (tandem_vulkan_signal_t){(void *)c->gate, c->gate_value};
  return TANDEM_OK;
}

static void test_external_submit_waits(void **state) {
  tandem_runtime_t *rt = *state;
  raw_t raw;
  raw_open(rt, &raw);
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  ext_ctx_t c;
  ext_open(&c, rt, &raw, TANDEM_LANE_COMPUTE, 0);
  c.gate = c.timeline; /* the context's own timeline, signalled by the host */
  c.gate_value = c.value = 5;
  tandem_access_decl_t acc[1] = {decl(b, 0, 4096, TANDEM_ACCESS_WRITE)};
  tandem_completion_t *gated = NULL, *fill = NULL;
  TH_ASSERT_OK(
      tandem_runtime_submit_vulkan(rt, TANDEM_LANE_DOWNLOAD, acc, 1, host_gate_submit, &c, &gated));
  tandem_graph_t *g = th_graph(rt);
  TH_ASSERT_OK(tandem_graph_add_fill(g, th_view(b, 0, 64), 0x77u, TANDEM_LANE_AUTO));
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(tandem_graph_prepare(g, &e));
  tandem_graph_release(g);
  TH_ASSERT_OK(tandem_exec_submit(e, &fill));
  /* The fill (compute lane) waits for the gated region (download lane). */
  TH_ASSERT_STATUS(tandem_completion_wait_timeout(fill, 100 * 1000 * 1000), TANDEM_ERROR_TIMEOUT);
  assert_false(tandem_completion_is_complete(gated));
  tandem_map_t m;
  TH_ASSERT_STATUS_MSG(tandem_try_map_read(th_view(b, 1024, 64), &m), TANDEM_ERROR_BUSY,
                       "in use by in-flight device work");
  th_vk_timeline_signal(&raw.vk, c.gate, c.gate_value);
  TH_ASSERT_OK(tandem_completion_wait(fill));
  TH_ASSERT_OK(tandem_completion_wait(gated));
  tandem_completion_release(fill);
  tandem_completion_release(gated);
  uint32_t got[16];
  th_read(b, 0, got, sizeof got);
  TH_ASSERT_U32_FILL(got, 0x77u, 16, "the fill, once the gate opened");
  assert_int_equal(c.calls, 1);
  tandem_exec_release(e);
  ext_close(&c);
  tandem_buffer_release(b);
  raw_close(&raw);
}

/* docs:handoff-example begin */
/* Raw Vulkan fills a scratch buffer and copies it into |data|; tandem then
 * adds one to |data| and downloads it. The entry points come from the loader
 * tandem uses (tandem_vulkan_handles_t.get_instance_proc_addr). */
typedef struct fill_copy {
  PFN_vkCmdFillBuffer fill;
  PFN_vkCmdCopyBuffer copy;
  PFN_vkCmdPipelineBarrier2 barrier;
  uint32_t pattern;
} fill_copy_t;

static tandem_status_t record_fill_copy(void *user, const tandem_vulkan_scope_t *scope) {
  const fill_copy_t *f = user;
  tandem_vulkan_view_t scratch, data; /* declared accesses 0 and 1 */
  tandem_status_t s = tandem_vulkan_scope_view(scope, 0, &scratch);
  if (s == TANDEM_OK) s = tandem_vulkan_scope_view(scope, 1, &data);
  if (s != TANDEM_OK) return s; /* prepare fails with it, naming the node */
  VkCommandBuffer cb = scope->command_buffer;
  f->fill(cb, (VkBuffer)scratch.buffer, scratch.offset, scratch.range, f->pattern);
  /* Between your own commands, your own barrier; tandem's cover the edges. */
  VkMemoryBarrier2 mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                         .srcStageMask = VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                         .srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT,
                         .dstStageMask = VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                         .dstAccessMask = VK_ACCESS_2_TRANSFER_READ_BIT};
  VkDependencyInfo dep = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                          .memoryBarrierCount = 1,
                          .pMemoryBarriers = &mb};
  f->barrier(cb, &dep);
  VkBufferCopy region = {scratch.offset, data.offset, data.range};
  f->copy(cb, (VkBuffer)scratch.buffer, (VkBuffer)data.buffer, 1, &region);
  return TANDEM_OK;
}

/* scratch and data: GPU_LOCAL, n uints; host: HOST_VISIBLE, n uints;
 * add_one: a kernel adding one to n uints in place (push constant n). |f|
 * must outlive the executable: the callback may run again at a re-record. */
static tandem_status_t prepare_fill_copy(tandem_runtime_t *rt, fill_copy_t *f,
                                         tandem_buffer_t *scratch, tandem_buffer_t *data,
                                         tandem_buffer_t *host, tandem_kernel_t *add_one,
                                         uint32_t n, tandem_exec_t **out_exec) {
  tandem_vulkan_handles_t h;
  tandem_vulkan_handles_init(&h);
  tandem_status_t s = tandem_runtime_vulkan_handles(rt, &h);
  if (s != TANDEM_OK) return s;
  PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)h.get_instance_proc_addr;
  PFN_vkGetDeviceProcAddr gdpa =
      (PFN_vkGetDeviceProcAddr)gipa((VkInstance)h.instance, "vkGetDeviceProcAddr");
  VkDevice device = (VkDevice)h.device;
  f->fill = (PFN_vkCmdFillBuffer)gdpa(device, "vkCmdFillBuffer");
  f->copy = (PFN_vkCmdCopyBuffer)gdpa(device, "vkCmdCopyBuffer");
  f->barrier = (PFN_vkCmdPipelineBarrier2)gdpa(device, "vkCmdPipelineBarrier2");

  tandem_access_decl_t accesses[2] = {
      {tandem_buffer_whole(scratch), TANDEM_ACCESS_WRITE},
      {tandem_buffer_whole(data), TANDEM_ACCESS_WRITE},
  };
  tandem_view_t data_view = tandem_buffer_whole(data);
  tandem_graph_t *g;
  s = tandem_graph_create(rt, &g);
  if (s != TANDEM_OK) return s;
  s = tandem_graph_add_vulkan_commands(g, TANDEM_LANE_COMPUTE, accesses, 2, record_fill_copy, f);
  if (s == TANDEM_OK) s = tandem_graph_add_dispatch(g, add_one, &data_view, 1, &n, sizeof n);
  if (s == TANDEM_OK)
    s = tandem_graph_add_copy(g, data_view, tandem_buffer_whole(host), TANDEM_LANE_DOWNLOAD);
  if (s == TANDEM_OK) s = tandem_graph_prepare(g, out_exec); /* calls record_fill_copy */
  tandem_graph_release(g);
  return s; /* then tandem_exec_submit replays the commands, no callback */
}
/* docs:handoff-example end */

/* The example in docs/interop.md ("Handoff"), which is the block above
 * verbatim (checked here): it compiles, runs clean and computes. */
static void test_docs_example(void **state) {
  tandem_runtime_t *rt = *state;
  uint32_t n = 1024;
  tandem_buffer_t *scratch = th_buffer(rt, n * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *data = th_buffer(rt, n * 4, TANDEM_PLACEMENT_GPU_LOCAL);
  tandem_buffer_t *host = th_buffer(rt, n * 4, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_kernel_t *k = th_add_one_kernel(rt, n);
  th_rng_t rng = th_rng(7);
  fill_copy_t f = {.pattern = th_rand_u32(&rng)};
  tandem_exec_t *e = NULL;
  TH_ASSERT_OK(prepare_fill_copy(rt, &f, scratch, data, host, k, n, &e));
  uint32_t got[1024];
  for (int round = 0; round < 3; round++) {
    th_write(host, 0, (uint32_t[4]){1, 2, 3, 4}, 16); /* overwritten by the run */
    run_once(e);
    th_read(host, 0, got, sizeof got);
    TH_ASSERT_U32_FILL(got, f.pattern + 1, n, "the pattern raw Vulkan filled, plus one");
  }
  tandem_exec_release(e);
  tandem_kernel_release(k);
  tandem_buffer_release(scratch);
  tandem_buffer_release(data);
  tandem_buffer_release(host);

  /* The block between the markers appears verbatim in docs/interop.md. */
  char *test = read_text(TANDEM_TEST_SOURCE_DIR "/tests/cts/test_handoff.c");
  char *doc = read_text(TANDEM_TEST_SOURCE_DIR "/docs/interop.md");
  const char *begin_marker = "/* docs:handoff-example begin */\n";
  char *begin = strstr(test, begin_marker);
  assert_non_null(begin);
  begin += strlen(begin_marker);
  char *end = strstr(begin, "/* docs:handoff-example end */");
  assert_non_null(end);
  *end = '\0';
  if (!strstr(doc, begin))
    fail_msg("docs/interop.md does not hold the example of test_handoff.c verbatim; copy the "
             "block between the docs:handoff-example markers into its Handoff section");
  free(test);
  free(doc);
}

/* What add refuses, each leaving the graph unchanged. */
static void test_add_refuses(void **state) {
  tandem_runtime_t *rt = *state;
  tandem_buffer_t *b = th_buffer(rt, 4096, TANDEM_PLACEMENT_HOST_VISIBLE);
  tandem_graph_t *g = th_graph(rt);
  ctx_t c = {.mode = FAIL};
  tandem_access_decl_t acc[TANDEM_MAX_BINDINGS + 1];
  for (uint32_t i = 0; i <= TANDEM_MAX_BINDINGS; i++)
    acc[i] = decl(b, 64u * i, 64, TANDEM_ACCESS_READ);
  TH_ASSERT_STATUS_MSG(tandem_graph_add_vulkan_commands(NULL, TANDEM_LANE_AUTO, acc, 1, record, &c),
                       TANDEM_ERROR_INVALID_ARGUMENT, "graph is NULL");
  TH_ASSERT_STATUS_MSG(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, acc, 1, NULL, &c),
                       TANDEM_ERROR_INVALID_ARGUMENT, "the record callback is NULL");
  TH_ASSERT_STATUS_MSG(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_NPU, acc, 1, record, &c),
                       TANDEM_ERROR_INVALID_ARGUMENT, "lane 3 is not a GPU lane");
  TH_ASSERT_STATUS_MSG(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, NULL, 1, record, &c),
                       TANDEM_ERROR_INVALID_ARGUMENT, "accesses is NULL with access_count 1");
  TH_ASSERT_STATUS_MSG(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, acc,
                                                        TANDEM_MAX_BINDINGS + 1, record, &c),
                       TANDEM_ERROR_OUT_OF_RANGE, "33 accesses declared, at most 32");
  tandem_access_decl_t bad = decl(b, 0, 64, (tandem_access_t)0);
  TH_ASSERT_STATUS_MSG(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, &bad, 1, record, &c),
                       TANDEM_ERROR_INVALID_ARGUMENT,
                       "access 0 of Vulkan commands node 0: 0 is not a tandem_access_t");
  tandem_access_decl_t outside[2] = {acc[0], {{b, 4000, 200}, TANDEM_ACCESS_WRITE}};
  TH_ASSERT_STATUS_MSG(
      tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, outside, 2, record, &c),
      TANDEM_ERROR_OUT_OF_RANGE, "access 1 of Vulkan commands node 0: view: view (offset 4000");
  tandem_access_decl_t empty = {{NULL, 0, 64}, TANDEM_ACCESS_READ};
  TH_ASSERT_STATUS_MSG(tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, &empty, 1, record, &c),
                       TANDEM_ERROR_INVALID_ARGUMENT, "view has no buffer");
  TH_ASSERT_U64_EQ(tandem_graph_node_count(g), 0);
  /* Every declared access is tracked: 32 is the most. */
  TH_ASSERT_OK(
      tandem_graph_add_vulkan_commands(g, TANDEM_LANE_AUTO, acc, TANDEM_MAX_BINDINGS, record, &c));
  TH_ASSERT_U64_EQ(tandem_graph_node_count(g), 1);
  assert_int_equal(c.calls, 0);
  tandem_graph_release(g);
  tandem_buffer_release(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_raw_writes_tandem_reads),
      cmocka_unit_test(test_tandem_writes_raw_reads),
      cmocka_unit_test(test_cross_lane),
      cmocka_unit_test(test_rerecord),
      cmocka_unit_test_setup_teardown(test_busy_with_live_map, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_undeclared_index, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_callback_error, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_one_shot, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_add_refuses, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_poison, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_docs_example, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_external_submit, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_external_submit_refuses, th_setup_gpu, th_teardown_gpu),
      cmocka_unit_test_setup_teardown(test_external_submit_waits, th_setup_gpu, th_teardown_gpu),
  };
  return TH_RUN_GROUP(tests);
}
