/* SPDX-License-Identifier: MIT */
/*
 * emu_dpu.h — the emulated NPU's tiny instruction format, what its
 * DPU kernels (npu/emu/kernels.c, kernel dpu_vector) execute in place of a
 * real NPU's transaction stream. It exists so that a missing, unsynced or
 * stale instruction buffer gives a wrong result or a failed run a test can
 * see, the way it would on hardware. Shared by the kernels, tandem's CPU
 * reference (tools/reference.c) and tandem_emu_dpu_asm (npu/emu/dpu_asm.c),
 * which assembles streams from text. Not AMD's format: a real IRON build writes its own insts.bin.
 * It sits in internal/ because the tool reads it as well as the emulator,
 * and the shipped tool includes none of the emulator's files.
 *
 * Words are little-endian uint32:
 *   word 0   TANDEM_EMU_DPU_MAGIC
 *   word 1   k, the number of operations
 *   then k operations of 5 words: op, dst, a, b, n — dst, a and b name data
 *   buffers bo0..bo4 (kernel arguments 3..7), n is the element count:
 *     ADD_I32   bo[dst][i] = bo[a][i] + bo[b][i]   (int32, wrapping)
 *     SUB_I32   bo[dst][i] = bo[a][i] - bo[b][i]
 *     MUL_I32   bo[dst][i] = bo[a][i] * bo[b][i]
 *     ADDI_I32  bo[dst][i] = bo[a][i] + (int32_t)b  (b is an immediate)
 *     ADD_F32   bo[dst][i] = bo[a][i] + bo[b][i]   (float)
 * The word count argument must be exactly 2 + 5k.
 */
#ifndef TANDEM_INTERNAL_EMU_DPU_H_
#define TANDEM_INTERNAL_EMU_DPU_H_

#define TANDEM_EMU_DPU_MAGIC 0x31555044u /* "DPU1" */
#define TANDEM_EMU_DPU_OPCODE 3u         /* the opcode argument XRT's DPU kernels take */

enum {
  TANDEM_EMU_DPU_ADD_I32 = 1,
  TANDEM_EMU_DPU_SUB_I32 = 2,
  TANDEM_EMU_DPU_MUL_I32 = 3,
  TANDEM_EMU_DPU_ADDI_I32 = 4,
  TANDEM_EMU_DPU_ADD_F32 = 5,
};

#endif /* TANDEM_INTERNAL_EMU_DPU_H_ */
