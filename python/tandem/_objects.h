/* SPDX-License-Identifier: MIT */
/*
 * _objects.h — the layouts of the extension's Python objects that both of
 * its C files read: a runtime and a buffer. _tandem.c defines their types
 * and owns their lives; _cuda.c (CUDA interop) reads them and keeps its own
 * state behind the |cuda| pointers.
 */
#ifndef TANDEM_PY_OBJECTS_H_
#define TANDEM_PY_OBJECTS_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

#include "tandem/tandem.h"

struct tpy_cuda_runtime; /* _cuda.c: per-runtime CUDA state */
struct tpy_cuda_buffer;  /* _cuda.c: a buffer's memory imported into CUDA */

typedef struct {
  PyObject_HEAD
  tandem_runtime_t *rt;   /* NULL once closed */
  tandem_runtime_t *keep; /* the pointer, for objects made before close */
  uint32_t gpu_index;     /* the option, for gpu_info() */
  bool track_lanes;       /* export_timelines: remember what was submitted */
  /* Per built-in lane, the highest timeline value any submission made from
   * Python reaches there: what a CUDA consumer waits for (_cuda.c). */
  uint64_t submitted[TANDEM_LANE_COUNT];
  struct tpy_cuda_runtime *cuda;
} tpy_runtime_t;

typedef struct {
  PyObject_HEAD
  tpy_runtime_t *runtime; /* strong reference */
  tandem_buffer_t *buffer;
  uint64_t size;
  int placement;
  bool exportable;
  struct tpy_cuda_buffer *cuda;
} tpy_buffer_t;

#endif /* TANDEM_PY_OBJECTS_H_ */
