/* SPDX-License-Identifier: MIT */
/*
 * _tandem.h — what the two C files of the Python extension share: the object
 * layouts of the types that cross between them (runtime, buffer), the DLPack
 * ABI structs, and the CUDA interop entry points (_cuda.c). The extension is
 * tandem._tandem; python/tandem/__init__.py builds the Pythonic layer on it.
 */
#ifndef TANDEM_PY_TANDEM_H_
#define TANDEM_PY_TANDEM_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "tandem/tandem.h"

/* DLPack's legacy ABI (dlpack.h v0.8, "dltensor" capsules), which every
 * consumer reads: NumPy ≥ 1.22, PyTorch, CuPy. Written from the protocol's
 * specification; the struct layouts are the ABI. */
enum { TPY_DL_CPU = 1, TPY_DL_CUDA = 2 };
typedef struct {
  int32_t device_type;
  int32_t device_id;
} tpy_dl_device_t;
typedef struct {
  uint8_t code; /* 0 int, 1 uint, 2 float, 4 bfloat */
  uint8_t bits;
  uint16_t lanes;
} tpy_dl_dtype_t;
typedef struct {
  void *data;
  tpy_dl_device_t device;
  int32_t ndim;
  tpy_dl_dtype_t dtype;
  int64_t *shape;
  int64_t *strides; /* NULL: compact row-major */
  uint64_t byte_offset;
} tpy_dl_tensor_t;
typedef struct tpy_dl_managed {
  tpy_dl_tensor_t dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct tpy_dl_managed *self);
} tpy_dl_managed_t;

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

/* Raises the tandem exception for |status| with tandem_error_message(). */
PyObject *tpy_raise(tandem_status_t status);
/* Raises tandem.UnsupportedError (or another code) with a message of ours. */
PyObject *tpy_raise_msg(tandem_status_t status, const char *fmt, ...);

/* _cuda.c. Each returns 0, or -1 with a Python exception set. */
/* The CUDA device ordinal of |b|'s memory, importing it on first use. */
int tpy_cuda_buffer_device(tpy_buffer_t *b, int *out_device);
/* Imports |b| into CUDA (once) and makes |stream| wait, on the GPU, until
 * every lane reaches what Python submitted so far. stream: the DLPack
 * value (None/1 legacy default, 2 per-thread default, else a CUstream);
 * -1: no wait. */
int tpy_cuda_buffer_export(tpy_buffer_t *b, PyObject *stream, void **out_ptr, int *out_device);
void tpy_cuda_buffer_free(tpy_buffer_t *b);
void tpy_cuda_runtime_free(tpy_runtime_t *r);
/* Runtime.cuda_signal(stream): the (lane, value) a submission waits on. */
PyObject *tpy_cuda_signal(tpy_runtime_t *r, PyObject *stream);
/* tandem._tandem.cuda_available(): None, or why not (a string). */
PyObject *tpy_cuda_unavailable_reason(void);

#endif /* TANDEM_PY_TANDEM_H_ */
