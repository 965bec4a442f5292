/* SPDX-License-Identifier: MIT */
/*
 * host_pages.c — does the size of the host's pages set the copy engines'
 * bandwidth? Copies between VRAM and three kinds of host memory, on tandem's
 * own VkDevice and its upload and download lanes' queues
 * (tandem_runtime_vulkan_handles; never a second device):
 *
 *   driver   a tandem HOST_VISIBLE buffer: the driver's own host-visible
 *            memory type, the one tandem's copies use
 *   host-4k  the process's own memory (mmap, MADV_NOHUGEPAGE: 4 KiB pages)
 *            imported with VK_EXT_external_memory_host
 *   host-2m  the same with MADV_HUGEPAGE (transparent 2 MiB pages; the
 *            program prints how much of it the kernel backed with them)
 *
 * Issue 10's copy target (≥ 0.95 × the link one way; bench/NOTES.md, "copies:
 * every host memory type") is missed by 10 %: Vulkan's copies move 48–51 GB/s
 * one way where CUDA's pinned copies move 55. If CUDA's pinned memory gains
 * through larger pages (fewer translations per byte for the GPU's MMU or the
 * IOMMU), host-2m moves more than host-4k and driver. Rows per kind: up
 * (host → VRAM on the upload lane's queue), down (VRAM → host on the download
 * lane's queue) and both at once (one on each), alternated round by round in
 * rotating order, median of the rounds; wall time (submit until the timeline
 * poll sees it done) and GPU time (timestamps, where the queue has them).
 * Before timing, each kind's bytes go up and come back down and are
 * compared with what was written. No validation layer in measurements.
 *
 *   build/bench/tandem_bench_host_pages [--mib M] [--rounds R]   (256, 30)
 *   build/bench/tandem_bench_host_pages --smoke   (CTest: 4 MiB, 3 rounds,
 *        validation layer on, any message fails; skips with 77 where the
 *        device cannot import host memory)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BENCH_NAME "host_pages"
#include "bench_common.h"
#include "tandem/tandem_vulkan.h"
#include "bench_vk.h"

enum { KIND_DRIVER, KIND_4K, KIND_2M, KIND_COUNT };
static const char *const kind_names[KIND_COUNT] = {"driver", "host-4k", "host-2m"};
enum { DIR_UP, DIR_DOWN, DIR_COUNT };
enum { ROW_UP, ROW_DOWN, ROW_BOTH, ROW_KINDS = 3 };
static const char *const row_names[ROW_KINDS] = {"up", "down", "both"};

typedef struct host_mem {
  VkBuffer buffer;
  VkDeviceMemory memory; /* VK_NULL_HANDLE for the driver kind (tandem owns it) */
  tandem_buffer_t *tandem_buffer;
  void *mapping; /* start of the mmap (imports) */
  size_t mapping_bytes;
  uint8_t *data; /* the bytes the GPU sees */
} host_mem_t;

typedef struct bench {
  struct VolkDeviceTable vk;
  VkDevice device;
  VkQueue queue[DIR_COUNT + 1]; /* upload lane's, download lane's, compute lane's */
  VkCommandPool pool[DIR_COUNT];
  VkSemaphore done[DIR_COUNT];
  uint64_t done_value[DIR_COUNT];
  VkQueryPool queries;
  bool timestamps[DIR_COUNT];
  double period_ns;
  uint64_t bytes;
  tandem_buffer_t *vram[DIR_COUNT]; /* up lands in vram[UP], down reads vram[DOWN] */
  VkBuffer vram_buffer[DIR_COUNT];
  host_mem_t host[KIND_COUNT][DIR_COUNT]; /* [kind][UP] is a source, [kind][DOWN] a target */
  /* One command buffer and two queries per (round, row, direction), each
   * run once: timestamp queries are reset only by the compute queue, once,
   * before the rounds. Round |rounds| is the check's. */
  VkCommandBuffer *cb;
} bench_t;

enum { ROWS = KIND_COUNT * ROW_KINDS };

static uint32_t run_index(int round, int row, int dir) {
  return (uint32_t)((round * ROWS + row) * DIR_COUNT + dir);
}

/* AnonHugePages of this process, in KiB. */
static long anon_huge_kib(void) {
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib;
}

static uint32_t pick_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits,
                          VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
    if ((bits & (1u << i)) && (mp->memoryTypes[i].propertyFlags & want) == want) return i;
  return UINT32_MAX;
}

/* Imports |bytes| of fresh anonymous memory, 2 MiB aligned, with huge pages
 * asked for or refused, filled with |seed|'s pattern. */
static void import_host(bench_t *b, VkPhysicalDevice phys, bool huge, uint8_t seed,
                        host_mem_t *out) {
  const size_t align = 2u << 20;
  out->mapping_bytes = b->bytes + align;
  out->mapping =
      mmap(NULL, out->mapping_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (out->mapping == MAP_FAILED) {
    perror("host_pages: mmap");
    exit(1);
  }
  out->data = (uint8_t *)(((uintptr_t)out->mapping + align - 1) & ~(uintptr_t)(align - 1));
  if (madvise(out->data, b->bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0)
    perror("host_pages: madvise (continuing with the kernel's default pages)");
  for (uint64_t i = 0; i < b->bytes; i++) out->data[i] = (uint8_t)(i * 7 + seed);
  VkMemoryHostPointerPropertiesEXT hp = {.sType =
                                             VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  VKCHECK(b->vk.vkGetMemoryHostPointerPropertiesEXT(
      b->device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, out->data, &hp));
  VkExternalMemoryBufferCreateInfo ext = {
      .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
      .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .pNext = &ext,
                            .size = b->bytes,
                            .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  VKCHECK(b->vk.vkCreateBuffer(b->device, &bci, NULL, &out->buffer));
  VkMemoryRequirements req;
  b->vk.vkGetBufferMemoryRequirements(b->device, out->buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  uint32_t type =
      pick_type(&mp, req.memoryTypeBits & hp.memoryTypeBits,
                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (type == UINT32_MAX) {
    fprintf(stderr, "host_pages: no host-coherent memory type imports a host pointer here\n");
    exit(77);
  }
  VkImportMemoryHostPointerInfoEXT imp = {
      .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
      .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
      .pHostPointer = out->data};
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .pNext = &imp,
                              .allocationSize = b->bytes,
                              .memoryTypeIndex = type};
  VKCHECK(b->vk.vkAllocateMemory(b->device, &mai, NULL, &out->memory));
  VKCHECK(b->vk.vkBindBufferMemory(b->device, out->buffer, out->memory, 0));
}

static void driver_host(bench_t *b, tandem_runtime_t *rt, uint8_t seed, host_mem_t *out) {
  CHECK(tandem_buffer_create(rt, b->bytes, TANDEM_PLACEMENT_HOST_VISIBLE, &out->tandem_buffer));
  tandem_vulkan_view_t vv;
  CHECK(tandem_view_vulkan_buffer(tandem_buffer_whole(out->tandem_buffer), &vv));
  out->buffer = (VkBuffer)vv.buffer;
  tandem_map_t m;
  CHECK(tandem_map_write(tandem_buffer_whole(out->tandem_buffer), &m));
  out->data = m.data;
  for (uint64_t i = 0; i < b->bytes; i++) out->data[i] = (uint8_t)(i * 7 + seed);
  tandem_unmap(&m);
}

/* Records |cb|: timestamp, one copy, timestamp (queries |query| and
 * |query| + 1, reset beforehand: transfer-only queues cannot reset them). */
static void record_copy(bench_t *b, VkCommandBuffer cb, int dir, VkBuffer src, VkBuffer dst,
                        uint32_t query) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKCHECK(b->vk.vkBeginCommandBuffer(cb, &bi));
  if (b->timestamps[dir])
    b->vk.vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, b->queries, query);
  VkBufferCopy region = {0, 0, b->bytes};
  b->vk.vkCmdCopyBuffer(cb, src, dst, 1, &region);
  if (b->timestamps[dir])
    b->vk.vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, b->queries, query + 1);
  VKCHECK(b->vk.vkEndCommandBuffer(cb));
}

/* Submits |cb| on |dir|'s queue (DIR_COUNT: the compute lane's, whose
 * signal goes to done[DIR_UP]: the caller waits for it at once). */
static void submit(bench_t *b, tandem_runtime_t *rt, int dir, VkCommandBuffer cb) {
  int d = dir == DIR_COUNT ? DIR_UP : dir;
  int lane = dir == DIR_UP     ? TANDEM_LANE_UPLOAD
             : dir == DIR_DOWN ? TANDEM_LANE_DOWNLOAD
                               : TANDEM_LANE_COMPUTE;
  VKCHECK(bench_vk_submit_one(&b->vk, rt, lane, b->queue[dir], cb, b->done[d], ++b->done_value[d]));
}

static void poll_done(bench_t *b, int dir) {
  uint64_t v = 0;
  do VKCHECK(b->vk.vkGetSemaphoreCounterValue(b->device, b->done[dir], &v));
  while (v < b->done_value[dir]);
}

/* GPU µs of the copy recorded with |query|, or -1 without timestamps. */
static double gpu_us(bench_t *b, int dir, uint32_t query) {
  if (!b->timestamps[dir]) return -1;
  uint64_t ts[2];
  VKCHECK(b->vk.vkGetQueryPoolResults(b->device, b->queries, query, 2, sizeof ts, ts, sizeof ts[0],
                                      VK_QUERY_RESULT_64_BIT));
  return (double)(ts[1] - ts[0]) * b->period_ns / 1e3;
}

/* GPU µs from the first of two copies' starts to the last of their ends,
 * or -1 when either queue lacks timestamps. */
static double span_us(bench_t *b, uint32_t query_up, uint32_t query_down) {
  if (!b->timestamps[DIR_UP] || !b->timestamps[DIR_DOWN]) return -1;
  uint64_t u[2], d[2];
  VKCHECK(b->vk.vkGetQueryPoolResults(b->device, b->queries, query_up, 2, sizeof u, u, sizeof u[0],
                                      VK_QUERY_RESULT_64_BIT));
  VKCHECK(b->vk.vkGetQueryPoolResults(b->device, b->queries, query_down, 2, sizeof d, d,
                                      sizeof d[0], VK_QUERY_RESULT_64_BIT));
  uint64_t first = u[0] < d[0] ? u[0] : d[0], last = u[1] > d[1] ? u[1] : d[1];
  return (double)(last - first) * b->period_ns / 1e3;
}

static int cmp_double(const void *a, const void *c) {
  double x = *(const double *)a, y = *(const double *)c;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  uint64_t mib = 256;
  int rounds = 30;
  bool smoke = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--smoke") == 0) {
      smoke = true, mib = 4, rounds = 3;
    } else if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc) {
      mib = strtoull(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--mib M] [--rounds R] | --smoke\n", argv[0]);
      return 2;
    }
  }
  if (mib < 2 || mib > 4096 || mib % 2 || rounds < 1 || rounds > 1000) {
    fprintf(stderr, "host_pages: --mib must be even, 2 to 4096; --rounds 1 to 1000\n");
    return 2;
  }
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.validation = smoke;
  if (smoke) o.validation_callback = on_validation;
  tandem_runtime_t *rt;
  CHECK(tandem_runtime_create(&o, &rt));
  CHECK(tandem_runtime_open_gpu(rt));
  bench_t b;
  memset(&b, 0, sizeof b);
  b.bytes = mib << 20;
  tandem_vulkan_handles_t h;
  bench_vk_load(rt, &h, &b.vk);
  b.device = h.device;
  VkPhysicalDevice phys = h.physical_device;
  if (!b.vk.vkGetMemoryHostPointerPropertiesEXT) {
    fprintf(stderr, "host_pages: tandem's device has no VK_EXT_external_memory_host\n");
    tandem_runtime_destroy(rt);
    return 77;
  }
  VkPhysicalDeviceExternalMemoryHostPropertiesEXT hostp = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                       .pNext = &hostp};
  vkGetPhysicalDeviceProperties2(phys, &props);
  b.period_ns = props.properties.limits.timestampPeriod;
  if (hostp.minImportedHostPointerAlignment > (2u << 20)) {
    fprintf(stderr, "host_pages: imports need %llu-byte alignment, more than 2 MiB\n",
            (unsigned long long)hostp.minImportedHostPointerAlignment);
    tandem_runtime_destroy(rt);
    return 77;
  }
  uint32_t nfam = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, NULL);
  VkQueueFamilyProperties fam[64];
  if (nfam > 64) nfam = 64;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, fam);
  uint32_t runs = (uint32_t)(rounds + 1) * ROWS * DIR_COUNT;
  VkQueryPoolCreateInfo qpci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = 2 * runs};
  VKCHECK(b.vk.vkCreateQueryPool(b.device, &qpci, NULL, &b.queries));
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  for (int dir = 0; dir <= DIR_COUNT; dir++) {
    int lane_index = dir == DIR_UP     ? TANDEM_LANE_UPLOAD
                     : dir == DIR_DOWN ? TANDEM_LANE_DOWNLOAD
                                       : TANDEM_LANE_COMPUTE;
    const tandem_vulkan_lane_t *lane = &h.lanes[lane_index];
    b.queue[dir] = lane->queue;
    if (dir == DIR_COUNT) break;
    b.timestamps[dir] =
        b.period_ns > 0 && lane->queue_family < nfam && fam[lane->queue_family].timestampValidBits;
    VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = lane->queue_family};
    VKCHECK(b.vk.vkCreateCommandPool(b.device, &cpci, NULL, &b.pool[dir]));
    VKCHECK(b.vk.vkCreateSemaphore(b.device, &sci, NULL, &b.done[dir]));
    CHECK(tandem_buffer_create(rt, b.bytes, TANDEM_PLACEMENT_GPU_LOCAL, &b.vram[dir]));
    tandem_vulkan_view_t vv;
    CHECK(tandem_view_vulkan_buffer(tandem_buffer_whole(b.vram[dir]), &vv));
    b.vram_buffer[dir] = (VkBuffer)vv.buffer;
  }
  long huge_before = anon_huge_kib();
  long huge_4k = 0;
  for (int kind = 0; kind < KIND_COUNT; kind++) {
    for (int dir = 0; dir < DIR_COUNT; dir++) {
      uint8_t seed = (uint8_t)(kind * 2 + dir + 1);
      if (kind == KIND_DRIVER) driver_host(&b, rt, seed, &b.host[kind][dir]);
      else import_host(&b, phys, kind == KIND_2M, seed, &b.host[kind][dir]);
    }
    if (kind == KIND_4K) huge_4k = anon_huge_kib() - huge_before;
  }
  long huge_2m = anon_huge_kib() - huge_before - huge_4k;

  /* Every run's command buffer, recorded before anything is timed. */
  b.cb = calloc(runs, sizeof *b.cb);
  if (!b.cb) return 1;
  for (int dir = 0; dir < DIR_COUNT; dir++) {
    VkCommandBuffer *cbs = malloc((size_t)(rounds + 1) * ROWS * sizeof *cbs);
    if (!cbs) return 1;
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = b.pool[dir],
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = (uint32_t)(rounds + 1) * ROWS};
    VKCHECK(b.vk.vkAllocateCommandBuffers(b.device, &ai, cbs));
    for (int r = 0; r <= rounds; r++)
      for (int row = 0; row < ROWS; row++) {
        int kind = row / ROW_KINDS;
        uint32_t run = run_index(r, row, dir);
        b.cb[run] = cbs[r * ROWS + row];
        if (dir == DIR_UP)
          record_copy(&b, b.cb[run], dir, b.host[kind][DIR_UP].buffer, b.vram_buffer[DIR_UP],
                      2 * run);
        else
          record_copy(&b, b.cb[run], dir, b.vram_buffer[DIR_DOWN], b.host[kind][DIR_DOWN].buffer,
                      2 * run);
      }
    free(cbs);
  }
  /* The queries' reset and, for the check, a VRAM-to-VRAM copy from the
   * upload side's buffer to the download side's, both on the compute lane. */
  VkCommandPool compute_pool;
  VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .queueFamilyIndex = h.lanes[TANDEM_LANE_COMPUTE].queue_family};
  VKCHECK(b.vk.vkCreateCommandPool(b.device, &cpci, NULL, &compute_pool));
  VkCommandBuffer setup[2];
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = compute_pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 2};
  VKCHECK(b.vk.vkAllocateCommandBuffers(b.device, &ai, setup));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKCHECK(b.vk.vkBeginCommandBuffer(setup[0], &bi));
  b.vk.vkCmdResetQueryPool(setup[0], b.queries, 0, 2 * runs);
  VKCHECK(b.vk.vkEndCommandBuffer(setup[0]));
  VKCHECK(b.vk.vkBeginCommandBuffer(setup[1], &bi));
  VkBufferCopy whole = {0, 0, b.bytes};
  b.vk.vkCmdCopyBuffer(setup[1], b.vram_buffer[DIR_UP], b.vram_buffer[DIR_DOWN], 1, &whole);
  VKCHECK(b.vk.vkEndCommandBuffer(setup[1]));
  submit(&b, rt, DIR_COUNT, setup[0]);
  poll_done(&b, DIR_UP);

  /* Check: each kind's source goes up, across and down into the kind's
   * target, which must then hold the source's bytes. */
  for (int kind = 0; kind < KIND_COUNT; kind++) {
    int row = kind * ROW_KINDS + ROW_BOTH;
    submit(&b, rt, DIR_UP, b.cb[run_index(rounds, row, DIR_UP)]);
    poll_done(&b, DIR_UP);
    submit(&b, rt, DIR_COUNT, setup[1]);
    poll_done(&b, DIR_UP);
    submit(&b, rt, DIR_DOWN, b.cb[run_index(rounds, row, DIR_DOWN)]);
    poll_done(&b, DIR_DOWN);
    host_mem_t *src = &b.host[kind][DIR_UP], *dst = &b.host[kind][DIR_DOWN];
    tandem_map_t ms, md;
    const uint8_t *want = src->data, *got = dst->data;
    if (kind == KIND_DRIVER) {
      CHECK(tandem_map_read(tandem_buffer_whole(src->tandem_buffer), &ms));
      CHECK(tandem_map_read(tandem_buffer_whole(dst->tandem_buffer), &md));
      want = ms.data, got = md.data;
    }
    int bad = memcmp(want, got, b.bytes) != 0;
    if (kind == KIND_DRIVER) tandem_unmap(&ms), tandem_unmap(&md);
    if (bad) {
      fprintf(stderr, "host_pages: %s: the bytes that came back differ from those sent\n",
              kind_names[kind]);
      return 1;
    }
  }

  tandem_device_info_t info;
  tandem_device_info_init(&info);
  CHECK(tandem_runtime_gpu_info(rt, 0, &info));
  printf("device: %s (%s %s); %llu MiB per copy, %d rounds, medians\n", info.name, info.driver_name,
         info.driver_info, (unsigned long long)mib, rounds);
  printf("huge pages backing the imports (two buffers each): host-4k %ld KiB, host-2m %ld KiB "
         "of %llu KiB\n",
         huge_4k, huge_2m, (unsigned long long)(2 * b.bytes / 1024));
  double *wall = calloc((size_t)ROWS * rounds, sizeof *wall);
  double *gpu = calloc((size_t)ROWS * rounds, sizeof *gpu);
  if (!wall || !gpu) return 1;
  for (int r = 0; r < rounds; r++)
    for (int step = 0; step < ROWS; step++) {
      int row = (step + r) % ROWS, what = row % ROW_KINDS;
      uint32_t up = run_index(r, row, DIR_UP), down = run_index(r, row, DIR_DOWN);
      uint64_t t0 = now_ns();
      if (what != ROW_DOWN) submit(&b, rt, DIR_UP, b.cb[up]);
      if (what != ROW_UP) submit(&b, rt, DIR_DOWN, b.cb[down]);
      if (what != ROW_DOWN) poll_done(&b, DIR_UP);
      if (what != ROW_UP) poll_done(&b, DIR_DOWN);
      wall[row * rounds + r] = (double)(now_ns() - t0) / 1e3;
      /* Both at once runs on two queues; their timestamps share the device's
       * clock, so the span is the first start to the last end. */
      gpu[row * rounds + r] = what == ROW_UP     ? gpu_us(&b, DIR_UP, 2 * up)
                              : what == ROW_DOWN ? gpu_us(&b, DIR_DOWN, 2 * down)
                                                 : span_us(&b, 2 * up, 2 * down);
    }
  printf("%-8s %-5s %12s %10s %12s %10s\n", "memory", "row", "wall us", "GB/s", "GPU us", "GB/s");
  for (int row = 0; row < ROWS; row++) {
    int kind = row / ROW_KINDS, what = row % ROW_KINDS;
    qsort(wall + row * rounds, (size_t)rounds, sizeof *wall, cmp_double);
    qsort(gpu + row * rounds, (size_t)rounds, sizeof *gpu, cmp_double);
    double w = wall[row * rounds + rounds / 2], g = gpu[row * rounds + rounds / 2];
    double moved = (double)b.bytes * (what == ROW_BOTH ? 2 : 1);
    printf("%-8s %-5s %12.1f %10.2f", kind_names[kind], row_names[what], w, moved / w / 1e3);
    if (g > 0) printf(" %12.1f %10.2f\n", g, moved / g / 1e3);
    else printf(" %12s %10s\n", "-", "-");
  }
  free(wall);
  free(gpu);
  for (int kind = 0; kind < KIND_COUNT; kind++)
    for (int dir = 0; dir < DIR_COUNT; dir++) {
      host_mem_t *hm = &b.host[kind][dir];
      if (hm->tandem_buffer) {
        tandem_buffer_release(hm->tandem_buffer);
      } else {
        b.vk.vkDestroyBuffer(b.device, hm->buffer, NULL);
        b.vk.vkFreeMemory(b.device, hm->memory, NULL);
        munmap(hm->mapping, hm->mapping_bytes);
      }
    }
  for (int dir = 0; dir < DIR_COUNT; dir++) {
    b.vk.vkDestroyCommandPool(b.device, b.pool[dir], NULL);
    b.vk.vkDestroySemaphore(b.device, b.done[dir], NULL);
    tandem_buffer_release(b.vram[dir]);
  }
  b.vk.vkDestroyCommandPool(b.device, compute_pool, NULL);
  b.vk.vkDestroyQueryPool(b.device, b.queries, NULL);
  free(b.cb);
  return bench_runtime_destroy(rt);
}
