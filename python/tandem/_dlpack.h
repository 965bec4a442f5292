/* SPDX-License-Identifier: MIT */
/*
 * _dlpack.h — the DLPack ABI the extension's tensors speak (_tandem.c:
 * Tensor.__dlpack__ and from_dlpack).
 */
#ifndef TANDEM_PY_DLPACK_H_
#define TANDEM_PY_DLPACK_H_

#include <stdint.h>

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

#endif /* TANDEM_PY_DLPACK_H_ */
