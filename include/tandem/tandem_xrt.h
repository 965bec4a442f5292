/* SPDX-License-Identifier: MIT */
/*
 * tandem_xrt.h — tandem beside your own XRT code.
 *
 * For programs that call XRT themselves on the NPU tandem drives: the XRT
 * buffer object behind a tandem buffer. What every user needs, the NPU
 * device and programs included, is in <tandem/tandem.h>, which this header
 * includes; its Conventions hold here too. What you do with the BO is
 * outside tandem's tracker (tandem.h, "Sharing"): wait for the completions
 * that touch its bytes first, and do not touch bytes that tandem work in
 * flight reads or writes. tandem keeps ownership of the BO: do not free it.
 * It lives as long as the buffer. docs/interop.md has the whole picture.
 */
#ifndef TANDEM_TANDEM_XRT_H_
#define TANDEM_TANDEM_XRT_H_

#include "tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The XRT buffer object (xrtBufferHandle, as void *) of a SHARED or
 * NPU_LOCAL |buffer|, in |*out_bo|. It belongs to the XRT library tandem
 * loaded (tandem_npu_info_t.backend names it; for the emulated NPU, the
 * emulator's), so only that library's functions may be called on it.
 * Offsets in views of the buffer are offsets in the BO. Errors:
 * INVALID_ARGUMENT (NULL), UNSUPPORTED (the runtime has no NPU open, or a
 * GPU_LOCAL / HOST_VISIBLE buffer: no BO). Thread-safe. */
TANDEM_API tandem_status_t tandem_buffer_xrt_bo(tandem_buffer_t *buffer, void **out_bo);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_TANDEM_XRT_H_ */
