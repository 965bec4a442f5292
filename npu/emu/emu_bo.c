/* SPDX-License-Identifier: MIT */
/*
 * emu_bo.c — buffer objects of tandem's emulated NPU device (a test and
 * development device, not hardware). The host side is a memfd mapped
 * MAP_SHARED (exportable as an fd, importable from one); the device side is a
 * separate private copy, so the device is modelled as non-coherent: kernels
 * see only what xrtBOSync(TO_DEVICE) copied, the host sees kernel results only
 * after xrtBOSync(FROM_DEVICE). A BO in use by a queued or running run cannot
 * be synced (-EBUSY). The XDNA mode adds a write-back CPU cache (xrtBOSync).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu_internal.h"

emu_bo_t *emu_bo_from(xrtBufferHandle h) {
  emu_bo_t *bo = h;
  if (bo == NULL || bo->magic != EMU_MAGIC_BO) return NULL;
  return bo;
}

bool emu_bo_put_locked(emu_bo_t *bo) {
  if (--bo->refs > 0) return false;
  bo->magic = EMU_MAGIC_DEAD;
  return true;
}

/* The BO's fd is its own, and what xrtBOExport hands out, as in XRT: a user
 * who closed it (a double close with any real XRT, which may hit an fd reused
 * meanwhile) is caught here, when the fd no longer names the BO's memfd. The
 * emulator then stops the process with the reason: real XRT would close a
 * stranger's fd. */
static void check_own_fd(const emu_bo_t *bo) {
  struct stat st;
  if (fstat(bo->fd, &st) == 0 && st.st_ino == bo->fd_ino && st.st_dev == bo->fd_dev) return;
  fprintf(stderr,
          "tandem emulated NPU: fd %d of a %zu-byte buffer object was closed by its user; "
          "xrtBOExport's fd belongs to the buffer (closed when it is freed): dup it instead\n",
          bo->fd, bo->size);
  abort();
}

void emu_bo_destroy(emu_bo_t *bo) {
  emu_device_t *dev = bo->dev;
  munmap(bo->host, bo->size);
  munmap(bo->device_side, bo->size);
  if (bo->clean != NULL) munmap(bo->clean, bo->size);
  check_own_fd(bo);
  close(bo->fd);
  free(bo);
  pthread_mutex_lock(&dev->mu);
  const bool last = emu_device_put_locked(dev);
  pthread_mutex_unlock(&dev->mu);
  if (last) emu_device_destroy(dev);
}

/* Builds a BO around |fd| (owned by the BO from here on, closed on failure). */
static emu_bo_t *bo_create(emu_device_t *dev, int fd, size_t size, emu_bo_type_t type,
                           int32_t group) {
  emu_bo_t *bo = calloc(1, sizeof *bo);
  void *host = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  void *device_side = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void *clean = dev->mode == EMU_MODE_XDNA
                    ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                    : NULL;
  if (bo == NULL || host == MAP_FAILED || device_side == MAP_FAILED || clean == MAP_FAILED) {
    const int err = bo == NULL ? ENOMEM : errno;
    if (host != MAP_FAILED) munmap(host, size);
    if (device_side != MAP_FAILED) munmap(device_side, size);
    if (clean != NULL && clean != MAP_FAILED) munmap(clean, size);
    free(bo);
    close(fd);
    errno = err;
    return NULL;
  }
  bo->magic = EMU_MAGIC_BO;
  bo->dev = dev;
  bo->refs = 1;
  bo->size = size;
  bo->fd = fd;
  bo->flags_type = (int)type;
  bo->group = group;
  struct stat st;
  if (fstat(fd, &st) == 0) {
    bo->fd_ino = st.st_ino;
    bo->fd_dev = st.st_dev;
  }
  bo->host = host;
  bo->device_side = device_side;
  /* Every line starts clean: a new buffer's host side as it is (zeros, or
   * an imported buffer's current bytes); the plugin flushes new buffers
   * for this reason (amd/xdna-driver@856409ca src/shim/buffer.cpp:467-472). */
  bo->clean = clean;
  if (clean != NULL) memcpy(clean, host, size);
  pthread_mutex_lock(&dev->mu);
  emu_device_get_locked(dev);
  pthread_mutex_unlock(&dev->mu);
  return bo;
}

EMU_EXPORT xrtBufferHandle xrtBOAlloc(xrtDeviceHandle dhdl, size_t size, xrtBufferFlags flags,
                                      xrtMemoryGroup grp) {
  emu_device_t *dev = emu_device_from(dhdl);
  if (dev == NULL || size == 0 || size > (size_t)INT64_MAX / 2 || (int32_t)grp < 0) {
    errno = EINVAL;
    return NULL;
  }
  /* XDNA mode reads the flags as amdxdna's plugin does: no buffer type is
   * "unsupported buffer type: none flag", ENOTSUP (amd/xdna-driver@856409ca
   * src/shim/device.cpp:2602-2604); otherwise the type byte (bits 24-31)
   * must be exactly one of HOST_ONLY, CACHEABLE, EXECBUF and KERNBUF
   * (bo_flags_to_type, src/shim/buffer.cpp:185-204), else the buffer is
   * AMDXDNA_BO_INVALID and refused as "Bad BO type.", EINVAL
   * (buffer.cpp:386, 402). HOST_ONLY and KERNBUF make a SHARE buffer,
   * CACHEABLE a device-heap one, EXECBUF a command buffer (neither
   * exports). PLAIN mode accepts any flags. */
  emu_bo_type_t type = EMU_BO_PLAIN;
  const uint32_t kind = (uint32_t)flags & 0xff000000u;
  if (dev->mode == EMU_MODE_XDNA) {
    if (kind == 0) {
      errno = ENOTSUP;
      return NULL;
    }
    if (kind == XCL_BO_FLAGS_HOST_ONLY || kind == XCL_BO_FLAGS_KERNBUF) type = EMU_BO_SHARE;
    else if (kind == XCL_BO_FLAGS_CACHEABLE || kind == XCL_BO_FLAGS_EXECBUF) type = EMU_BO_DEV;
    else {
      errno = EINVAL; /* "Bad BO type." */
      return NULL;
    }
  }
  int fd = memfd_create("tandem-npu-emu-bo", MFD_CLOEXEC);
  if (fd < 0) return NULL;
  if (ftruncate(fd, (off_t)size) != 0) {
    const int err = errno;
    close(fd);
    errno = err;
    return NULL;
  }
  /* XRT puts the group id's bank and slot into the buffer's flags (XRT@963c58ee
   * src/runtime_src/core/common/api/xrt_bo.cpp:1083-1120); amdxdna's plugin
   * then ignores both. The emulator keeps the bank, which xrtRunSetArg
   * checks against the argument's. */
  return bo_create(dev, fd, size, type, (int32_t)(grp & 0xffffu));
}

EMU_EXPORT xrtBufferHandle xrtBOImport(xrtDeviceHandle dhdl, xclBufferExportHandle ehdl) {
  emu_device_t *dev = emu_device_from(dhdl);
  struct stat st;
  if (dev == NULL || ehdl < 0 || fstat(ehdl, &st) != 0 || st.st_size <= 0) {
    errno = EINVAL;
    return NULL;
  }
  /* The caller keeps its fd; the BO holds its own duplicate. */
  int fd = fcntl(ehdl, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return NULL;
  return bo_create(dev, fd, (size_t)st.st_size, EMU_BO_IMPORTED, -1);
}

EMU_EXPORT xclBufferExportHandle xrtBOExport(xrtBufferHandle bhdl) {
  emu_bo_t *bo = emu_bo_from(bhdl);
  if (bo == NULL) {
    errno = EINVAL;
    return -1;
  }
  if (bo->flags_type == EMU_BO_DEV) { /* amdxdna: device-heap buffers do not export */
    errno = EOPNOTSUPP;
    return -1;
  }
  return bo->fd; /* the BO's own fd, as XRT's cached export: closed when the BO is freed */
}

EMU_EXPORT int xrtBOFree(xrtBufferHandle bhdl) {
  emu_bo_t *bo = emu_bo_from(bhdl);
  if (bo == NULL) return emu_fail(EINVAL);
  emu_device_t *dev = bo->dev;
  pthread_mutex_lock(&dev->mu);
  if (bo->user_freed) {
    pthread_mutex_unlock(&dev->mu);
    return emu_fail(EINVAL);
  }
  /* A BO a queued or running run uses stays alive until that run lets go
   * of it (the run holds a reference): XRT's command binds the xrt::bo of
   * each buffer argument (XRT@963c58ee src/runtime_src/core/common/api/
   * xrt_kernel.cpp:2868-2871), so freeing the user's handle frees nothing
   * under running work there either. */
  bo->user_freed = true;
  const bool dead = emu_bo_put_locked(bo);
  pthread_mutex_unlock(&dev->mu);
  if (dead) emu_bo_destroy(bo);
  return 0;
}

EMU_EXPORT size_t xrtBOSize(xrtBufferHandle bhdl) {
  emu_bo_t *bo = emu_bo_from(bhdl);
  if (bo == NULL) {
    errno = EINVAL;
    return 0;
  }
  return bo->size;
}

EMU_EXPORT void *xrtBOMap(xrtBufferHandle bhdl) {
  emu_bo_t *bo = emu_bo_from(bhdl);
  if (bo == NULL) {
    errno = EINVAL;
    return NULL;
  }
  return bo->host;
}

/* The XDNA mode's sync, a write-back CPU cache over the buffer. amdxdna's
 * plugin syncs a non-coherent buffer by clflush of the range whatever the
 * direction (amd/xdna-driver@856409ca src/shim/buffer.cpp:664-681): each
 * 64-byte line the range touches is written back if the CPU dirtied it,
 * and dropped from the cache either way. Here: a line whose host bytes
 * differ from |clean| (the bytes when it was last synced) is dirty and is
 * written over the device side, whole, even by a FROM_DEVICE sync (so host
 * writes left unsynced overwrite what the device wrote, as on hardware); a
 * clean line is refetched from the device side. A line then becomes clean.
 * Lines are 64 bytes from the buffer's start (buffers are page aligned).
 * The device lock is held. */
static void sync_lines(emu_bo_t *bo, size_t offset, size_t size) {
  enum { LINE = 64 };
  if (size == 0) return;
  size_t first = offset / LINE * LINE;
  size_t end = offset + size;
  for (size_t at = first; at < end; at += LINE) {
    size_t n = bo->size - at < LINE ? bo->size - at : LINE;
    char *host = (char *)bo->host + at, *device_side = (char *)bo->device_side + at,
         *clean = (char *)bo->clean + at;
    if (memcmp(host, clean, n) != 0) memcpy(device_side, host, n); /* dirty: written back */
    else memcpy(host, device_side, n);                             /* clean: refetched */
    memcpy(clean, host, n);
  }
}

EMU_EXPORT int xrtBOSync(xrtBufferHandle bhdl, enum xclBOSyncDirection dir, size_t size,
                         size_t offset) {
  emu_bo_t *bo = emu_bo_from(bhdl);
  if (bo == NULL || offset > bo->size || size > bo->size - offset) return emu_fail(EINVAL);
  if (dir != XCL_BO_SYNC_BO_TO_DEVICE && dir != XCL_BO_SYNC_BO_FROM_DEVICE) return emu_fail(EINVAL);
  emu_device_t *dev = bo->dev;
  /* The copy happens under the device lock so that it is ordered with the
   * runs that use this BO (which make it busy until they finish). */
  pthread_mutex_lock(&dev->mu);
  if (bo->busy > 0) {
    pthread_mutex_unlock(&dev->mu);
    return emu_fail(EBUSY);
  }
  if (bo->clean != NULL) {
    sync_lines(bo, offset, size);
  } else {
    char *host = (char *)bo->host + offset;
    char *device_side = (char *)bo->device_side + offset;
    if (dir == XCL_BO_SYNC_BO_TO_DEVICE) memcpy(device_side, host, size);
    else memcpy(host, device_side, size);
  }
  pthread_mutex_unlock(&dev->mu);
  return 0;
}
