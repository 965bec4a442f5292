/* SPDX-License-Identifier: MIT */
/*
 * emu_device.c — the emulated NPU device's identity and reference count:
 * turning a handle into a device and holding or dropping a device reference.
 * It sits below both emu_bo.c (a buffer object holds its device) and
 * emulator.c (devices, kernels, contexts and runs), so calls between the
 * emulator's files only run down: emulator.c -> emu_bo.c -> emu_device.c.
 * Opening a device (xrtDeviceOpen, its worker thread) stays in emulator.c;
 * the last reference is dropped after xrtDeviceClose joined the worker.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "emu_internal.h"

emu_device_t *emu_device_from(xrtDeviceHandle h) {
  emu_device_t *dev = h;
  if (dev == NULL || dev->magic != EMU_MAGIC_DEVICE) return NULL;
  return dev;
}

void emu_device_get_locked(emu_device_t *dev) { dev->refs++; }

bool emu_device_put_locked(emu_device_t *dev) { return --dev->refs == 0; }

/* Last reference gone: the worker was joined by xrtDeviceClose. */
void emu_device_destroy(emu_device_t *dev) {
  dev->magic = EMU_MAGIC_DEAD;
  if (dev->lib != NULL) dlclose(dev->lib);
  pthread_cond_destroy(&dev->work_cv);
  pthread_cond_destroy(&dev->done_cv);
  pthread_mutex_destroy(&dev->mu);
  free(dev);
}
