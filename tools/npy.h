/* SPDX-License-Identifier: MIT */
/*
 * npy.h — reading and writing NumPy .npy files (npy.c), for pipeline buffer
 * inputs, outputs and checks. A path ending in ".npy" is a .npy file; any
 * other path is raw bytes.
 */
#ifndef TANDEM_TOOLS_NPY_H_
#define TANDEM_TOOLS_NPY_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline.h"

typedef struct npy_info {
  char descr[16];    /* the dtype as written, e.g. "<f4" */
  uint32_t itemsize; /* bytes per element */
  bool known_type;   /* descr is one of the pipeline's types (below) */
  pl_type_t type;    /* f32, u32, i32, i8; bytes for u1 / b1 */
  uint64_t count;    /* elements (product of the shape) */
  uint64_t data_bytes;
} npy_info_t;

/* Whether |path| ends in ".npy". */
bool npy_is_npy_path(const char *path);
/* The dtype string tandem writes for |type| ("<f4", "|i1", ...). */
const char *npy_descr(pl_type_t type);

/* Reads a .npy file whose data is at most |max_bytes|. On success
 * *out_data (malloc'ed, the caller frees) holds info->data_bytes bytes. On
 * failure false with the reason, naming the file, in |why|. */
bool npy_read(const char *path, uint64_t max_bytes, uint8_t **out_data, npy_info_t *info, char *why,
              size_t why_size);
/* Writes |bytes| bytes as a one-dimensional .npy array of |type| (a byte
 * count that is not a whole number of elements is the caller's error). */
bool npy_write(const char *path, const uint8_t *data, uint64_t bytes, pl_type_t type);

#endif /* TANDEM_TOOLS_NPY_H_ */
