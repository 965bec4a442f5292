/* SPDX-License-Identifier: MIT */
/*
 * kernel_interface.h — what a backend learned about a kernel's code by
 * reflecting it (bindings, their writability, push-constant size, workgroup
 * size). Backends fill it; core/kernel.c compares it with the user's contract,
 * so the comparison and its messages are written once for every backend.
 */
#ifndef TANDEM_CORE_KERNEL_INTERFACE_H_
#define TANDEM_CORE_KERNEL_INTERFACE_H_

#include <stdbool.h>
#include <stdint.h>

#include "tandem/tandem.h"

typedef struct tandem__reflected_binding {
  uint32_t set;
  uint32_t binding;
  bool is_storage_buffer; /* false: some other descriptor type (uniform, image...) */
  bool writable;          /* false only when the shader declares it NonWritable */
  bool readable;          /* false only when the shader declares it NonReadable */
} tandem__reflected_binding_t;

typedef struct tandem__kernel_interface {
  uint32_t binding_count;
  tandem__reflected_binding_t bindings[TANDEM_MAX_BINDINGS * 2];
  uint32_t push_constant_bytes; /* declared size of the push-constant block, 0 if none */
  uint32_t local_size[3];       /* workgroup size from the entry point */
} tandem__kernel_interface_t;

#endif /* TANDEM_CORE_KERNEL_INTERFACE_H_ */
