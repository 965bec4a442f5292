/* SPDX-License-Identifier: MIT */
/*
 * _cuda.h — CUDA interop for DLPack's kDLCUDA (_cuda.c), as _tandem.c's
 * Buffer and Runtime call it.
 */
#ifndef TANDEM_PY_CUDA_H_
#define TANDEM_PY_CUDA_H_

#include "_objects.h"

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

#endif /* TANDEM_PY_CUDA_H_ */
