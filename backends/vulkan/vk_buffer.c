/* SPDX-License-Identifier: MIT */
/*
 * vk_buffer.c — device memory for tandem buffers.
 *
 * One VkBuffer with its own VkDeviceMemory per tandem buffer (sizes here are
 * large and few; a sub-allocator can come later without changing core).
 * New memory is zeroed: by memset through the mapping, or by a fill on the
 * compute queue that finishes before the buffer is returned.
 *
 * Memory types (tandem_vk_memory_type; tandem_buffer_memory reports the
 * result). Each rule is a required set of flags, then preferences in order
 * of importance; ties go to the lowest index:
 *   GPU_LOCAL     DEVICE_LOCAL; prefer not HOST_VISIBLE.
 *   HOST_VISIBLE  HOST_VISIBLE|HOST_COHERENT; prefer not DEVICE_LOCAL, then
 *                 HOST_CACHED. On a discrete GPU a DEVICE_LOCAL|HOST_VISIBLE
 *                 type is the PCIe BAR window into VRAM: the host reads it
 *                 uncached (about 20 MB/s on the H200) and a GPU copy into it
 *                 never crosses the link, so a download target must not land
 *                 there. It is taken only when every coherent host-visible
 *                 type is device-local (integrated GPUs and lavapipe, where
 *                 device-local memory is system memory). HOST_CACHED comes
 *                 second: it makes host reads run at memory speed (a
 *                 write-combined mapping reads uncached), and DMA reads and
 *                 writes system memory either way. One rule serves upload
 *                 sources and download targets, because any HOST_VISIBLE
 *                 buffer may be mapped for reading.
 *   host import   (SHARED through VK_EXT_external_memory_host) among the
 *                 types the pointer allows: prefer HOST_COHERENT (tandem
 *                 flushes nothing on the GPU side), then HOST_CACHED (the
 *                 imported pages are the host's cached mapping), then not
 *                 DEVICE_LOCAL.
 *   export        (SHARED, Vulkan memory exported as a dma-buf) DEVICE_LOCAL.
 *   dma-buf import  the first type the fd allows; a HOST_VISIBLE import
 *                 (tandem_buffer_import_fd) the HOST_VISIBLE rule among them.
 *   exportable    (tandem_buffer_create_exportable) its placement's rule,
 *                 among the types an exportable buffer allows.
 *   opaque-fd import  the exporter's type (Vulkan requires it), checked
 *                 against the placement.
 */
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/vulkan/vk_internal.h"

typedef struct tandem_vk_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *host;
  uint32_t memory_type; /* index of |memory|'s type */
  /* Exportable memory (tandem_buffer_create_exportable): the handle types it
   * was allocated for, and what an importer must repeat (with memory_type). */
  VkExternalMemoryHandleTypeFlags export_types;
  VkDeviceSize allocation_size;
  bool dedicated;
  /* Adopted (tandem_buffer_adopt_vulkan): |buffer| and |memory| are the
   * application's and never destroyed or freed here; |mapped| says tandem
   * mapped |memory| itself (and unmaps it at destroy). */
  bool adopted;
  bool mapped;
} tandem_vk_buffer_t;

#define TANDEM_VK_BUFFER_USAGE                                             \
  (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | \
   VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT)

VkBuffer tandem_vk_buffer_handle(void *native) { return ((tandem_vk_buffer_t *)native)->buffer; }

void *tandem_vk_buffer_vulkan(tandem__gpu_t *gpu, void *native) {
  (void)gpu;
  return (void *)((tandem_vk_buffer_t *)native)->buffer;
}

/* tandem_external_memory_type_t bits as Vulkan handle types. */
static VkExternalMemoryHandleTypeFlags tandem_vk_handle_types(uint32_t types) {
  VkExternalMemoryHandleTypeFlags f = 0;
  if (types & TANDEM_EXTERNAL_MEMORY_OPAQUE_FD) f |= VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  if (types & TANDEM_EXTERNAL_MEMORY_DMA_BUF) f |= VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT;
  return f;
}

static const char *tandem_vk_handle_type_name(VkExternalMemoryHandleTypeFlagBits t) {
  return t == VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT ? "opaque fd" : "dma-buf";
}

/* Whether storage buffers (tandem's usage, flags 0) can be exported or
 * imported (|feature|) as every type in |types| together; sets |dedicated|
 * when a type needs a dedicated allocation. */
static tandem_status_t tandem_vk_external_check(tandem_vk_gpu_t *g,
                                                VkExternalMemoryHandleTypeFlags types,
                                                VkExternalMemoryFeatureFlags feature,
                                                bool *dedicated) {
  *dedicated = false;
  for (VkExternalMemoryHandleTypeFlags bit = 1; bit && bit <= types; bit <<= 1) {
    if (!(types & bit)) continue;
    VkPhysicalDeviceExternalBufferInfo info = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
        .usage = TANDEM_VK_BUFFER_USAGE,
        .handleType = (VkExternalMemoryHandleTypeFlagBits)bit};
    VkExternalBufferProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
    vkGetPhysicalDeviceExternalBufferProperties(g->physical, &info, &props);
    const VkExternalMemoryProperties *p = &props.externalMemoryProperties;
    const char *name = tandem_vk_handle_type_name((VkExternalMemoryHandleTypeFlagBits)bit);
    if (!(p->externalMemoryFeatures & feature))
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "the driver cannot %s storage-buffer memory as %s "
                         "(vkGetPhysicalDeviceExternalBufferProperties)",
                         feature == VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT ? "export" : "import",
                         name);
    if ((types & ~p->compatibleHandleTypes) != 0)
      return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                         "the driver cannot export one allocation as both opaque fd and dma-buf; "
                         "ask for one type");
    if (p->externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT)
      *dedicated = true;
  }
  return TANDEM_OK;
}

void tandem_vk_buffer_memory(tandem__gpu_t *base, void *native, tandem_buffer_memory_t *out) {
  const VkPhysicalDeviceMemoryProperties *mem = &tandem_vk_gpu_cast(base)->memory;
  const tandem_vk_buffer_t *b = native;
  const VkMemoryType *t = &mem->memoryTypes[b->memory_type];
  const VkMemoryHeap *h = &mem->memoryHeaps[t->heapIndex];
  *out = (tandem_buffer_memory_t){.memory_type = b->memory_type,
                                  .properties = t->propertyFlags,
                                  .heap = t->heapIndex,
                                  .heap_bytes = h->size,
                                  .heap_device_local = h->flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT};
}

/* One preference: the type has |flag| (present) or lacks it (!present). */
typedef struct tandem_vk_preference {
  VkMemoryPropertyFlags flag;
  bool present;
} tandem_vk_preference_t;

int32_t tandem_vk_memory_type(const VkPhysicalDeviceMemoryProperties *mem, uint32_t bits,
                              tandem_vk_memory_use_t use) {
  const VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                              HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                              HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                              CACHED = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  VkMemoryPropertyFlags required = 0;
  tandem_vk_preference_t prefs[3];
  uint32_t n = 0;
  switch (use) {
    case TANDEM_VK_MEMORY_GPU_LOCAL:
      required = DL;
      prefs[n++] = (tandem_vk_preference_t){HV, false};
      break;
    case TANDEM_VK_MEMORY_HOST:
      required = HV | HC;
      prefs[n++] = (tandem_vk_preference_t){DL, false};
      prefs[n++] = (tandem_vk_preference_t){CACHED, true};
      break;
    case TANDEM_VK_MEMORY_HOST_IMPORT:
      prefs[n++] = (tandem_vk_preference_t){HC, true};
      prefs[n++] = (tandem_vk_preference_t){CACHED, true};
      prefs[n++] = (tandem_vk_preference_t){DL, false};
      break;
    case TANDEM_VK_MEMORY_EXPORT: required = DL; break;
  }
  int32_t best = -1;
  uint32_t best_score = 0;
  for (uint32_t i = 0; i < mem->memoryTypeCount && i < 32; i++) {
    if (!(bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = mem->memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    /* Earlier preferences outweigh all later ones together. */
    uint32_t score = 0;
    for (uint32_t k = 0; k < n; k++)
      if (((f & prefs[k].flag) != 0) == prefs[k].present) score |= 1u << (n - 1 - k);
    if (best < 0 || score > best_score) {
      best = (int32_t)i;
      best_score = score;
    }
  }
  return best;
}

static void tandem_vk_record_zero(tandem_vk_gpu_t *g, VkCommandBuffer cb, void *ctx) {
  g->vk.vkCmdFillBuffer(cb, *(VkBuffer *)ctx, 0, VK_WHOLE_SIZE, 0);
}

/* Makes a buffer record and its VkBuffer (storage + transfer, CONCURRENT over
 * the lanes' families), for memory of external handle |type| (0: ordinary).
 * Returns its memory requirements; on failure nothing is left behind. */
static tandem_status_t tandem_vk_buffer_new(tandem_vk_gpu_t *g, uint64_t size,
                                            VkExternalMemoryHandleTypeFlags type,
                                            tandem_vk_buffer_t **out, VkMemoryRequirements *req) {
  *out = NULL;
  /* vkCreateBuffer must not be asked for more (a validation error, and some
   * drivers fail in unhelpful ways). */
  if (size > g->max_buffer_size)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                       "%llu bytes do not fit one buffer of GPU '%s': it allows at most %llu "
                       "(maxBufferSize)",
                       (unsigned long long)size, g->base.info.name,
                       (unsigned long long)g->max_buffer_size);
  tandem_vk_buffer_t *b = calloc(1, sizeof *b);
  if (!b) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a buffer record");
  VkExternalMemoryBufferCreateInfo ext = {.sType =
                                              VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                          .handleTypes = type};
  VkBufferCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .pNext = type ? &ext : NULL,
                           .size = size,
                           .usage = TANDEM_VK_BUFFER_USAGE,
                           .sharingMode = g->family_count > 1 ? VK_SHARING_MODE_CONCURRENT
                                                              : VK_SHARING_MODE_EXCLUSIVE,
                           .queueFamilyIndexCount = g->family_count > 1 ? g->family_count : 0,
                           .pQueueFamilyIndices = g->family_count > 1 ? g->families : NULL};
  VkResult r = g->vk.vkCreateBuffer(g->device, &ci, NULL, &b->buffer);
  if (r < 0) {
    free(b);
    return tandem_vk_fail(r, "vkCreateBuffer", __FILE__, __LINE__);
  }
  g->vk.vkGetBufferMemoryRequirements(g->device, b->buffer, req);
  *out = b;
  return TANDEM_OK;
}

tandem_status_t tandem_vk_buffer_create(tandem__gpu_t *base, uint64_t size,
                                        tandem_placement_t placement, uint32_t export_types,
                                        void **out_native, void **out_host) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  *out_host = NULL;
  VkExternalMemoryHandleTypeFlags types = tandem_vk_handle_types(export_types);
  bool dedicated = false;
  if (types)
    TANDEM_RETURN_IF_ERROR(
        tandem_vk_external_check(g, types, VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT, &dedicated));
  tandem_vk_buffer_t *b;
  VkMemoryRequirements req;
  TANDEM_RETURN_IF_ERROR(tandem_vk_buffer_new(g, size, types, &b, &req));
  tandem_status_t s = TANDEM_OK;
  VkResult r;
  bool host = placement == TANDEM_PLACEMENT_HOST_VISIBLE;
  int32_t type = tandem_vk_memory_type(&g->memory, req.memoryTypeBits,
                                       host ? TANDEM_VK_MEMORY_HOST : TANDEM_VK_MEMORY_GPU_LOCAL);
  if (type < 0) {
    s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "the device has no memory type for %s buffers",
                    host ? "HOST_VISIBLE" : "GPU_LOCAL");
  } else if (req.size > g->memory.memoryHeaps[g->memory.memoryTypes[type].heapIndex].size ||
             req.size > g->max_allocation) {
    s = TANDEM_FAIL(
        TANDEM_ERROR_OUT_OF_MEMORY,
        "%llu bytes do not fit the device: its %s heap holds %llu bytes and one "
        "allocation may be at most %llu",
        (unsigned long long)req.size, host ? "host-visible" : "device-local",
        (unsigned long long)g->memory.memoryHeaps[g->memory.memoryTypes[type].heapIndex].size,
        (unsigned long long)g->max_allocation);
  } else {
    /* Exportable memory: one dedicated allocation when the driver asks for
     * it, recorded so an importer can repeat it. */
    VkMemoryDedicatedAllocateInfo ded = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
                                         .buffer = b->buffer};
    VkExportMemoryAllocateInfo exp = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                      .pNext = dedicated ? &ded : NULL,
                                      .handleTypes = types};
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .pNext = types ? &exp : NULL,
                               .allocationSize = req.size,
                               .memoryTypeIndex = (uint32_t)type};
    b->memory_type = (uint32_t)type;
    b->export_types = types;
    b->allocation_size = req.size;
    b->dedicated = dedicated;
    r = g->vk.vkAllocateMemory(g->device, &ai, NULL, &b->memory);
    if (r < 0) {
      b->memory = VK_NULL_HANDLE;
      s = tandem_vk_fail(r, "vkAllocateMemory", __FILE__, __LINE__);
    }
  }
  if (s == TANDEM_OK) {
    r = g->vk.vkBindBufferMemory(g->device, b->buffer, b->memory, 0);
    if (r < 0) s = tandem_vk_fail(r, "vkBindBufferMemory", __FILE__, __LINE__);
  }
  if (s == TANDEM_OK && host) {
    r = g->vk.vkMapMemory(g->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->host);
    if (r < 0) {
      s = tandem_vk_fail(r, "vkMapMemory", __FILE__, __LINE__);
    } else {
      memset(b->host, 0, size);
    }
  }
  if (s == TANDEM_OK && !host)
    s = tandem_vk_run_once(g, TANDEM_LANE_COMPUTE, tandem_vk_record_zero, &b->buffer);
  if (s != TANDEM_OK) {
    tandem_vk_buffer_destroy(base, b);
    return s;
  }
  *out_native = b;
  *out_host = b->host;
  return TANDEM_OK;
}

void tandem_vk_buffer_destroy(tandem__gpu_t *base, void *native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_buffer_t *b = native;
  if (!b) return;
  if (b->adopted) {
    if (b->mapped) g->vk.vkUnmapMemory(g->device, b->memory);
    free(b);
    return;
  }
  if (b->buffer) g->vk.vkDestroyBuffer(g->device, b->buffer, NULL);
  if (b->memory) g->vk.vkFreeMemory(g->device, b->memory, NULL); /* unmaps too */
  free(b);
}

/* Allocates |size| bytes of memory type |type_index| with |chain| chained
 * (an import or export structure) and binds it to |b|. */
static tandem_status_t tandem_vk_allocate_bound(tandem_vk_gpu_t *g, tandem_vk_buffer_t *b,
                                                uint32_t type_index, const void *chain,
                                                VkDeviceSize size, const char *what) {
  b->memory_type = type_index;
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .pNext = chain,
                             .allocationSize = size,
                             .memoryTypeIndex = type_index};
  VkResult r = g->vk.vkAllocateMemory(g->device, &ai, NULL, &b->memory);
  if (r < 0) {
    b->memory = VK_NULL_HANDLE;
    return tandem_vk_fail(r, what, __FILE__, __LINE__);
  }
  r = g->vk.vkBindBufferMemory(g->device, b->buffer, b->memory, 0);
  if (r < 0) return tandem_vk_fail(r, "vkBindBufferMemory", __FILE__, __LINE__);
  return TANDEM_OK;
}

tandem_status_t tandem_vk_buffer_import_host(tandem__gpu_t *base, void *host, uint64_t size,
                                             void **out_native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  const VkExternalMemoryHandleTypeFlagBits type =
      VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  uint64_t align = base->host_import_alignment ? base->host_import_alignment : 1;
  if ((uintptr_t)host % align || size % align)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "host-pointer import needs address and size aligned to %llu bytes",
                       (unsigned long long)align);
  tandem_vk_buffer_t *b;
  VkMemoryRequirements req;
  TANDEM_RETURN_IF_ERROR(tandem_vk_buffer_new(g, size, type, &b, &req));
  tandem_status_t s = TANDEM_OK;
  VkMemoryHostPointerPropertiesEXT hpp = {.sType =
                                              VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  if (s == TANDEM_OK) {
    VkResult r = g->vk.vkGetMemoryHostPointerPropertiesEXT(g->device, type, host, &hpp);
    if (r < 0) s = tandem_vk_fail(r, "vkGetMemoryHostPointerPropertiesEXT", __FILE__, __LINE__);
  }
  uint32_t bits = hpp.memoryTypeBits & req.memoryTypeBits;
  if (s == TANDEM_OK && !bits)
    s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                    "no memory type can hold both this host allocation and a storage buffer");
  if (s == TANDEM_OK) {
    VkImportMemoryHostPointerInfoEXT import = {
        .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
        .handleType = type,
        .pHostPointer = host};
    uint32_t type_index =
        (uint32_t)tandem_vk_memory_type(&g->memory, bits, TANDEM_VK_MEMORY_HOST_IMPORT);
    s = tandem_vk_allocate_bound(g, b, type_index, &import, size,
                                 "vkAllocateMemory (host-pointer import)");
  }
  if (s != TANDEM_OK) {
    tandem_vk_buffer_destroy(base, b);
    return s;
  }
  *out_native = b;
  return TANDEM_OK;
}

tandem_status_t tandem_vk_buffer_import_dmabuf(tandem__gpu_t *base, int fd, uint64_t size,
                                               void **out_native) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  const VkExternalMemoryHandleTypeFlagBits type = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT;
  tandem_vk_buffer_t *b;
  VkMemoryRequirements req;
  TANDEM_RETURN_IF_ERROR(tandem_vk_buffer_new(g, size, type, &b, &req));
  tandem_status_t s = TANDEM_OK;
  VkMemoryFdPropertiesKHR fdp = {.sType = VK_STRUCTURE_TYPE_MEMORY_FD_PROPERTIES_KHR};
  if (s == TANDEM_OK) {
    VkResult r = g->vk.vkGetMemoryFdPropertiesKHR(g->device, type, fd, &fdp);
    if (r < 0) s = tandem_vk_fail(r, "vkGetMemoryFdPropertiesKHR (dma-buf)", __FILE__, __LINE__);
  }
  uint32_t bits = fdp.memoryTypeBits & req.memoryTypeBits;
  if (s == TANDEM_OK && !bits)
    s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "no memory type can hold this dma-buf as a buffer");
  /* Vulkan takes ownership of the fd it imports: give it a duplicate. */
  int dup_fd = s == TANDEM_OK ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (s == TANDEM_OK && dup_fd < 0)
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "duplicating dma-buf fd %d", fd);
  if (s == TANDEM_OK) {
    VkImportMemoryFdInfoKHR import = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
                                      .handleType = type,
                                      .fd = dup_fd};
    uint32_t type_index = 0;
    while (!(bits & (1u << type_index))) type_index++;
    s = tandem_vk_allocate_bound(g, b, type_index, &import, req.size > size ? req.size : size,
                                 "vkAllocateMemory (dma-buf import)");
    if (s != TANDEM_OK && !b->memory) close(dup_fd); /* not consumed when the import failed */
  }
  if (s != TANDEM_OK) {
    tandem_vk_buffer_destroy(base, b);
    return s;
  }
  *out_native = b;
  return TANDEM_OK;
}

tandem_status_t tandem_vk_buffer_create_dmabuf(tandem__gpu_t *base, uint64_t size,
                                               void **out_native, int *out_fd) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  *out_fd = -1;
  const VkExternalMemoryHandleTypeFlagBits type = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT;
  tandem_vk_buffer_t *b;
  VkMemoryRequirements req;
  TANDEM_RETURN_IF_ERROR(tandem_vk_buffer_new(g, size, type, &b, &req));
  tandem_status_t s = TANDEM_OK;
  int32_t mem_type = -1;
  if (s == TANDEM_OK) {
    mem_type = tandem_vk_memory_type(&g->memory, req.memoryTypeBits, TANDEM_VK_MEMORY_EXPORT);
    if (mem_type < 0)
      s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED, "no device-local memory type can be exported");
  }
  if (s == TANDEM_OK) {
    VkExportMemoryAllocateInfo exp = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                      .handleTypes = type};
    s = tandem_vk_allocate_bound(g, b, (uint32_t)mem_type, &exp, req.size,
                                 "vkAllocateMemory (dma-buf export)");
  }
  if (s == TANDEM_OK) {
    VkMemoryGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                               .memory = b->memory,
                               .handleType = type};
    VkResult r = g->vk.vkGetMemoryFdKHR(g->device, &gi, out_fd);
    if (r < 0) {
      *out_fd = -1;
      s = tandem_vk_fail(r, "vkGetMemoryFdKHR (dma-buf)", __FILE__, __LINE__);
    }
  }
  if (s == TANDEM_OK)
    s = tandem_vk_run_once(g, TANDEM_LANE_COMPUTE, tandem_vk_record_zero, &b->buffer);
  if (s != TANDEM_OK) {
    if (*out_fd >= 0) close(*out_fd);
    *out_fd = -1;
    tandem_vk_buffer_destroy(base, b);
    return s;
  }
  *out_native = b;
  return TANDEM_OK;
}

/*------------------------------------------------- export and import --*/

tandem_status_t tandem_vk_buffer_export(tandem__gpu_t *base, void *native,
                                        tandem_external_memory_type_t type,
                                        tandem_external_memory_t *out) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  tandem_vk_buffer_t *b = native;
  VkExternalMemoryHandleTypeFlagBits vk_type =
      (VkExternalMemoryHandleTypeFlagBits)tandem_vk_handle_types(type);
  if (!(b->export_types & vk_type))
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "the buffer was not created exportable as %s: create it with "
                       "tandem_buffer_create_exportable and that type",
                       tandem_vk_handle_type_name(vk_type));
  VkMemoryGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                             .memory = b->memory,
                             .handleType = vk_type};
  int fd = -1;
  VkResult r = g->vk.vkGetMemoryFdKHR(g->device, &gi, &fd);
  if (r < 0) return tandem_vk_fail(r, "vkGetMemoryFdKHR", __FILE__, __LINE__);
  out->fd = fd;
  out->allocation_size = b->allocation_size;
  out->memory_type_index = b->memory_type;
  out->dedicated = b->dedicated;
  memcpy(out->device_uuid, g->base.info.device_uuid, sizeof out->device_uuid);
  memcpy(out->driver_uuid, g->base.info.driver_uuid, sizeof out->driver_uuid);
  return TANDEM_OK;
}

/* Hex of a 16-byte UUID's first 8 bytes, for messages. */
static void tandem_vk_uuid_text(const uint8_t *uuid, char out[17]) {
  for (int i = 0; i < 8; i++) snprintf(out + 2 * i, 3, "%02x", uuid[i]);
}

tandem_status_t tandem_vk_buffer_import(tandem__gpu_t *base, const tandem_external_memory_t *m,
                                        uint64_t size, tandem_placement_t placement,
                                        void **out_native, void **out_host) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  *out_host = NULL;
  VkExternalMemoryHandleTypeFlagBits vk_type =
      (VkExternalMemoryHandleTypeFlagBits)tandem_vk_handle_types(m->type);
  bool opaque = vk_type == VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  bool host = placement == TANDEM_PLACEMENT_HOST_VISIBLE;
  if (opaque && (memcmp(m->device_uuid, g->base.info.device_uuid, VK_UUID_SIZE) != 0 ||
                 memcmp(m->driver_uuid, g->base.info.driver_uuid, VK_UUID_SIZE) != 0)) {
    char theirs[17], ours[17];
    bool device = memcmp(m->device_uuid, g->base.info.device_uuid, VK_UUID_SIZE) != 0;
    tandem_vk_uuid_text(device ? m->device_uuid : m->driver_uuid, theirs);
    tandem_vk_uuid_text(device ? g->base.info.device_uuid : g->base.info.driver_uuid, ours);
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "the opaque fd was exported by another %s (UUID %s..., this one %s...): "
                       "opaque fds import only into the same device and driver; share a "
                       "dma-buf between different devices",
                       device ? "device" : "driver", theirs, ours);
  }
  bool dedicated = false;
  TANDEM_RETURN_IF_ERROR(
      tandem_vk_external_check(g, vk_type, VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT, &dedicated));
  dedicated = dedicated || m->dedicated;
  tandem_vk_buffer_t *b;
  VkMemoryRequirements req;
  TANDEM_RETURN_IF_ERROR(tandem_vk_buffer_new(g, size, vk_type, &b, &req));
  tandem_status_t s = TANDEM_OK;
  VkDeviceSize allocation = req.size;
  int32_t type = -1;
  const VkMemoryPropertyFlags host_flags =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if (opaque) {
    /* Vulkan: an opaque-fd import repeats the exporter's memory type and
     * allocation size. */
    type = (int32_t)m->memory_type_index;
    allocation = m->allocation_size;
    if (m->memory_type_index >= g->memory.memoryTypeCount ||
        !(req.memoryTypeBits & (1u << m->memory_type_index)))
      s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                      "the exported memory's type %u cannot hold a storage buffer on this device "
                      "(allowed types: 0x%x)",
                      m->memory_type_index, req.memoryTypeBits);
    else if (req.size > m->allocation_size)
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                      "a %llu-byte buffer needs %llu bytes of memory; the exported memory has %llu",
                      (unsigned long long)size, (unsigned long long)req.size,
                      (unsigned long long)m->allocation_size);
  } else {
    VkMemoryFdPropertiesKHR fdp = {.sType = VK_STRUCTURE_TYPE_MEMORY_FD_PROPERTIES_KHR};
    VkResult r = g->vk.vkGetMemoryFdPropertiesKHR(g->device, vk_type, m->fd, &fdp);
    if (r < 0) s = tandem_vk_fail(r, "vkGetMemoryFdPropertiesKHR (dma-buf)", __FILE__, __LINE__);
    off_t bytes = s == TANDEM_OK ? lseek(m->fd, 0, SEEK_END) : -1;
    if (s == TANDEM_OK && bytes >= 0 && (uint64_t)bytes < req.size)
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                      "a %llu-byte buffer needs %llu bytes of memory; the dma-buf has %llu",
                      (unsigned long long)size, (unsigned long long)req.size,
                      (unsigned long long)bytes);
    if (s == TANDEM_OK) {
      /* HOST_VISIBLE: the host rule among the types the fd allows; GPU_LOCAL:
       * the first of them, as for the NPU's dma-bufs (a foreign dma-buf need
       * not be device-local). */
      uint32_t bits = fdp.memoryTypeBits & req.memoryTypeBits;
      if (host) {
        type = tandem_vk_memory_type(&g->memory, bits, TANDEM_VK_MEMORY_HOST);
      } else {
        for (uint32_t i = 0; i < g->memory.memoryTypeCount && type < 0; i++)
          if (bits & (1u << i)) type = (int32_t)i;
      }
      if (type < 0)
        s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                        "no memory type can hold this dma-buf as a %s storage buffer",
                        host ? "host-visible coherent" : "");
    }
  }
  if (s == TANDEM_OK && host &&
      (g->memory.memoryTypes[type].propertyFlags & host_flags) != host_flags)
    s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                    "the exported memory (type %d) is not host-visible and coherent, so it "
                    "cannot be a HOST_VISIBLE buffer: import it as GPU_LOCAL and copy, or export "
                    "a HOST_VISIBLE buffer",
                    (int)type);
  /* Vulkan takes the fd on a successful import only; import a duplicate so
   * that no failure after it (binding, mapping) can close the caller's. */
  int fd = s == TANDEM_OK ? fcntl(m->fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (s == TANDEM_OK && fd < 0)
    s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "duplicating fd %d for the import", m->fd);
  if (s == TANDEM_OK) {
    VkMemoryDedicatedAllocateInfo ded = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
                                         .buffer = b->buffer};
    VkImportMemoryFdInfoKHR import = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
                                      .pNext = dedicated ? &ded : NULL,
                                      .handleType = vk_type,
                                      .fd = fd};
    s = tandem_vk_allocate_bound(g, b, (uint32_t)type, &import, allocation,
                                 opaque ? "vkAllocateMemory (opaque fd import)"
                                        : "vkAllocateMemory (dma-buf import)");
    if (s != TANDEM_OK && !b->memory) close(fd); /* not consumed when the import failed */
  }
  if (s == TANDEM_OK && host) {
    VkResult r = g->vk.vkMapMemory(g->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->host);
    if (r < 0) {
      b->host = NULL;
      s = tandem_vk_fail(r, "vkMapMemory", __FILE__, __LINE__);
    }
  }
  if (s != TANDEM_OK) {
    tandem_vk_buffer_destroy(base, b);
    return s;
  }
  *out_native = b;
  *out_host = b->host;
  return TANDEM_OK;
}

/*------------------------------------------------------------ adoption --*/

tandem_status_t tandem_vk_buffer_adopt(tandem__gpu_t *base, const tandem_vulkan_buffer_t *d,
                                       void **out_native, void **out_host, bool *out_indirect) {
  tandem_vk_gpu_t *g = tandem_vk_gpu_cast(base);
  *out_native = NULL;
  *out_host = NULL;
  *out_indirect = (d->usage & VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT) != 0;
  assert((VkDevice)d->device == g->device); /* core/adopt.c checked it */
  /* What tandem does with any buffer: bind it as storage, copy and fill it.
   * Reading dispatch sizes from it (INDIRECT_BUFFER) is asked only of
   * buffers used as indirect views (graph.c): a renderer's buffers rarely
   * have it. */
  static const struct {
    VkBufferUsageFlags bit;
    const char *name;
  } usage[] = {{VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, "STORAGE_BUFFER"},
               {VK_BUFFER_USAGE_TRANSFER_SRC_BIT, "TRANSFER_SRC"},
               {VK_BUFFER_USAGE_TRANSFER_DST_BIT, "TRANSFER_DST"}};
  char missing[128] = "";
  for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++)
    if (!(d->usage & usage[i].bit)) {
      size_t used = strlen(missing);
      snprintf(missing + used, sizeof missing - used, "%s%s", used ? "|" : "", usage[i].name);
    }
  if (missing[0])
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "the buffer's usage 0x%x lacks %s: tandem binds, copies and fills "
                       "any buffer; create it with STORAGE_BUFFER|TRANSFER_SRC|TRANSFER_DST "
                       "(and INDIRECT_BUFFER to read dispatch sizes from it)",
                       d->usage, missing);
  if (g->family_count > 1 && !d->concurrent)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "the runtime's lanes use %u queue families and tandem transfers no "
                       "queue-family ownership: create the buffer VK_SHARING_MODE_CONCURRENT "
                       "over the families tandem_runtime_vulkan_handles lists, and set "
                       "concurrent",
                       g->family_count);
  if (d->memory_type >= g->memory.memoryTypeCount)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "memory_type %u is not a memory type of GPU '%s' (it has %u)",
                       d->memory_type, base->info.name, g->memory.memoryTypeCount);
  VkMemoryRequirements req;
  g->vk.vkGetBufferMemoryRequirements(g->device, (VkBuffer)d->buffer, &req);
  if (!(req.memoryTypeBits & (1u << d->memory_type)))
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "memory_type %u cannot back this buffer: vkGetBufferMemoryRequirements "
                       "allows types 0x%x",
                       d->memory_type, req.memoryTypeBits);
  if (d->size > req.size)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "size %llu is more than the buffer holds: its memory requirements are "
                       "%llu bytes",
                       (unsigned long long)d->size, (unsigned long long)req.size);
  if (req.alignment && d->memory_offset % req.alignment)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "memory_offset %llu is not a multiple of the buffer's required "
                       "alignment %llu",
                       (unsigned long long)d->memory_offset, (unsigned long long)req.alignment);
  if (d->memory_offset > d->memory_size || req.size > d->memory_size - d->memory_offset)
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_RANGE,
                       "the buffer needs %llu bytes at memory_offset %llu, past the end of "
                       "the %llu-byte memory",
                       (unsigned long long)req.size, (unsigned long long)d->memory_offset,
                       (unsigned long long)d->memory_size);
  const VkMemoryPropertyFlags host_flags =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  VkMemoryPropertyFlags flags = g->memory.memoryTypes[d->memory_type].propertyFlags;
  bool host = d->placement == TANDEM_PLACEMENT_HOST_VISIBLE;
  if (host && (flags & host_flags) != host_flags)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "memory type %u (flags 0x%x) is not HOST_VISIBLE|HOST_COHERENT, so the "
                       "buffer cannot be HOST_VISIBLE: adopt it as GPU_LOCAL and copy through "
                       "a HOST_VISIBLE buffer",
                       d->memory_type, (unsigned)flags);
  tandem_vk_buffer_t *b = calloc(1, sizeof *b);
  if (!b) return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating a buffer record");
  b->adopted = true;
  b->buffer = (VkBuffer)d->buffer;
  b->memory = (VkDeviceMemory)d->memory;
  b->memory_type = d->memory_type;
  b->allocation_size = d->memory_size;
  if (host && d->host) {
    b->host = d->host;
  } else if (host) {
    VkResult r = g->vk.vkMapMemory(g->device, b->memory, d->memory_offset, d->size, 0, &b->host);
    if (r < 0) {
      free(b);
      return tandem__annotate(tandem_vk_fail(r, "vkMapMemory", __FILE__, __LINE__),
                              "mapping the adopted memory (is it mapped already? then pass "
                              "your mapping as host)");
    }
    b->mapped = true;
  }
  *out_native = b;
  *out_host = b->host;
  return TANDEM_OK;
}
