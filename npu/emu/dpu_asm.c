/* SPDX-License-Identifier: MIT */
/*
 * dpu_asm.c — tandem_emu_dpu_asm: assembles the emulated NPU's tiny
 * instruction format (internal/emu_dpu.h) from text, the emulator's stand-in
 * for the insts.bin an IRON (mlir-aie) build writes for a real NPU.
 *
 *   tandem_emu_dpu_asm IN.txt OUT.bin
 *
 * One operation per line, '#' starts a comment; buffers are bo0..bo4 (the
 * data arguments 3..7 of a DPU kernel), n the element count:
 *   add_i32 DST A B N | sub_i32 DST A B N | mul_i32 DST A B N
 *   addi_i32 DST A IMM N | add_f32 DST A B N
 * A malformed line stops with its number and what was expected (exit 1).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/emu_dpu.h"

enum { MAX_OPS = 4096 };

static int parse_buffer(const char *s, uint32_t *out) {
  if (strncmp(s, "bo", 2) != 0 || s[2] < '0' || s[2] > '4' || s[3] != '\0') return 0;
  *out = (uint32_t)(s[2] - '0');
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s IN.txt OUT.bin\n", argv[0]);
    return 2;
  }
  FILE *in = fopen(argv[1], "r");
  if (!in) {
    fprintf(stderr, "tandem_emu_dpu_asm: %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  static uint32_t words[2 + 5 * MAX_OPS];
  uint32_t ops = 0;
  char line[512];
  for (unsigned lineno = 1; fgets(line, sizeof line, in); lineno++) {
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char name[32], dst[16], a[16], b[32];
    unsigned long long n;
    int got = sscanf(line, "%31s %15s %15s %31s %llu", name, dst, a, b, &n);
    if (got <= 0) continue; /* blank or comment */
    static const struct {
      const char *name;
      uint32_t op;
    } table[] = {{"add_i32", TANDEM_EMU_DPU_ADD_I32},
                 {"sub_i32", TANDEM_EMU_DPU_SUB_I32},
                 {"mul_i32", TANDEM_EMU_DPU_MUL_I32},
                 {"addi_i32", TANDEM_EMU_DPU_ADDI_I32},
                 {"add_f32", TANDEM_EMU_DPU_ADD_F32}};
    uint32_t op = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
      if (!strcmp(name, table[i].name)) op = table[i].op;
    uint32_t d = 0, x = 0, y = 0;
    int ok = got == 5 && op != 0 && n <= UINT32_MAX && parse_buffer(dst, &d) && parse_buffer(a, &x);
    if (ok && op == TANDEM_EMU_DPU_ADDI_I32) {
      char *end = NULL;
      long imm = strtol(b, &end, 0);
      ok = *end == '\0' && imm >= INT32_MIN && imm <= INT32_MAX;
      y = (uint32_t)(int32_t)imm;
    } else if (ok) {
      ok = parse_buffer(b, &y);
    }
    if (!ok || ops == MAX_OPS) {
      fprintf(stderr,
              "tandem_emu_dpu_asm: %s:%u: expected 'add_i32|sub_i32|mul_i32|add_f32 boD boA boB "
              "N' or 'addi_i32 boD boA IMM N' (buffers bo0..bo4, at most %d operations)\n",
              argv[1], lineno, MAX_OPS);
      fclose(in);
      return 1;
    }
    uint32_t *w = &words[2 + 5 * ops++];
    w[0] = op, w[1] = d, w[2] = x, w[3] = y, w[4] = (uint32_t)n;
  }
  fclose(in);
  words[0] = TANDEM_EMU_DPU_MAGIC;
  words[1] = ops;
  FILE *out = fopen(argv[2], "wb");
  size_t count = 2 + 5 * (size_t)ops;
  /* Little-endian words: this is x86-64 / aarch64-little only, like XRT. */
  if (!out || fwrite(words, 4, count, out) != count || fclose(out) != 0) {
    fprintf(stderr, "tandem_emu_dpu_asm: writing %s failed: %s\n", argv[2], strerror(errno));
    return 1;
  }
  return 0;
}
