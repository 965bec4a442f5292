/* SPDX-License-Identifier: MIT */
/*
 * resident.h — keeps the Vulkan driver and the validation layer loaded for
 * the whole process, in the libFuzzer binaries and in fuzz/replay.c alike.
 * The Vulkan loader unloads both when the last instance goes (the targets
 * destroy theirs at exit); LeakSanitizer's exit check then sees a driver leak
 * as "<unknown module>", which fuzz/lsan.supp cannot match by library name
 * (CI stop 26: 128 bytes realloc'ed by an unloaded module failed the smoke
 * run). Loaded once more with RTLD_NODELETE, their frames keep their names.
 * A library that is absent is simply not kept: the suppressions only matter
 * where it runs.
 */
#ifndef TANDEM_FUZZ_RESIDENT_H_
#define TANDEM_FUZZ_RESIDENT_H_

#include <dlfcn.h>

static inline void fuzz_keep_drivers_resident(void) {
  (void)dlopen("libVkLayer_khronos_validation.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  (void)dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}

#endif /* TANDEM_FUZZ_RESIDENT_H_ */
