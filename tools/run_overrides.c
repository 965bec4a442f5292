/* SPDX-License-Identifier: MIT */
/*
 * run_overrides.c — `tandem run --input NAME=... / --output NAME=@FILE`
 * (run_files.h): IREE-style changes to a parsed pipeline's inputs and outputs
 * that leave the pipeline file as it is.
 *
 *   --input NAME=@FILE   buffer NAME starts with FILE's bytes (a .npy array's
 *                        data, else raw bytes; shorter leaves the rest zero)
 *   --input NAME=VALUE   buffer NAME is filled with VALUE: "f32:1.5", "u32:7",
 *                        "i32:-3", or bare: with a '.', an exponent, inf or
 *                        nan it is f32, else an integer (u32, i32 if negative)
 *   --output NAME=@FILE  the whole of buffer NAME is written to FILE (.npy or
 *                        raw); it replaces the pipeline's outputs of NAME. A
 *                        .npy's type is that of NAME's output in the file,
 *                        else of a check of NAME, else of its random init,
 *                        else bytes (u1)
 *
 * Paths are the command line's: relative to the current folder, not to the
 * pipeline file or --output-dir. The CPU reference of "reference": "cpu"
 * checks sees the overridden inputs, as the device does.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "npy.h"
#include "run_files.h"

/* Splits "NAME=REST" and finds buffer NAME; -1 with a message when not. */
static int find_named(const pipeline_t *p, const char *flag, const char *arg, const char **rest) {
  const char *eq = arg ? strchr(arg, '=') : NULL;
  if (!eq || eq == arg) {
    cli_error("%s '%s': expected NAME=@FILE%s (NAME a buffer of %s)", flag, arg ? arg : "",
              strcmp(flag, "--input") ? "" : " or NAME=VALUE", p->file);
    return -1;
  }
  size_t n = (size_t)(eq - arg);
  for (uint32_t i = 0; i < p->buffer_count; i++)
    if (strlen(p->buffers[i].name) == n && !strncmp(p->buffers[i].name, arg, n)) {
      *rest = eq + 1;
      return (int)i;
    }
  char names[512] = "";
  for (uint32_t i = 0; i < p->buffer_count && strlen(names) < 400; i++) {
    strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
    strncat(names, p->buffers[i].name, sizeof names - strlen(names) - 1);
  }
  cli_error("%s '%s': %s has no buffer '%.*s' (its buffers: %s)", flag, arg, p->file, (int)n, arg,
            names);
  return -1;
}

/* An inline value as a 32-bit fill pattern. */
static bool parse_fill(const char *flag, const char *arg, const char *v, uint32_t *bits) {
  const char *kind = NULL;
  if (!strncmp(v, "f32:", 4) || !strncmp(v, "u32:", 4) || !strncmp(v, "i32:", 4)) {
    kind = v;
    v += 4;
  }
  char *end;
  errno = 0;
  bool is_float = kind ? kind[0] == 'f' : strpbrk(v, ".eEnN") != NULL;
  if (is_float) {
    float f = strtof(v, &end);
    if (*v && !*end && errno == 0) {
      memcpy(bits, &f, 4);
      return true;
    }
  } else if (*v == '-' && (!kind || kind[0] == 'i')) {
    long long x = strtoll(v, &end, 0);
    if (!*end && errno == 0 && x >= INT32_MIN) {
      int32_t i = (int32_t)x;
      memcpy(bits, &i, 4);
      return true;
    }
  } else if (*v && *v != '-' && (!kind || kind[0] != 'f')) {
    unsigned long long x = strtoull(v, &end, 0);
    if (!*end && errno == 0 && x <= (kind && kind[0] == 'i' ? INT32_MAX : UINT32_MAX)) {
      *bits = (uint32_t)x;
      return true;
    }
  }
  cli_error("%s '%s': '%s' is not a value: use @FILE, f32:X, u32:N, i32:N, or a bare number "
            "(1.5 is f32, 7 is u32)",
            flag, arg, v);
  return false;
}

bool run_apply_input(pipeline_t *p, const char *arg) {
  const char *v;
  int b = find_named(p, "--input", arg, &v);
  if (b < 0) return false;
  pl_buffer_t *buf = &p->buffers[b];
  if (v[0] == '@') {
    if (!v[1]) return cli_error("--input '%s': a file name follows '@'", arg), false;
    char *path = strdup(v + 1);
    if (!path) return cli_error("out of memory"), false;
    free(buf->init_path);
    buf->init_path = path;
    buf->init = PL_INIT_FILE;
    return true;
  }
  uint32_t bits;
  if (!parse_fill("--input", arg, v, &bits)) return false;
  buf->init = PL_INIT_FILL;
  buf->fill = bits;
  return true;
}

bool run_apply_output(pipeline_t *p, const char *arg) {
  const char *v;
  int b = find_named(p, "--output", arg, &v);
  if (b < 0) return false;
  if (v[0] != '@' || !v[1]) {
    cli_error("--output '%s': expected NAME=@FILE (the file the buffer is written to)", arg);
    return false;
  }
  char *path = strdup(v + 1);
  if (!path) return cli_error("out of memory"), false;
  /* The type of a .npy: the pipeline's own output of NAME, else bytes. */
  pl_type_t type = PL_TYPE_BYTES;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < p->output_count; i++) {
    if (p->outputs[i].view.buffer == (uint32_t)b) {
      if (type == PL_TYPE_BYTES) type = p->outputs[i].type;
      free(p->outputs[i].path);
      continue;
    }
    p->outputs[kept++] = p->outputs[i];
  }
  /* else a check's type of NAME, else its random init's (f32 data reads as f32) */
  for (uint32_t i = 0; type == PL_TYPE_BYTES && i < p->check_count; i++)
    if (p->checks[i].view.buffer == (uint32_t)b) type = p->checks[i].type;
  if (type == PL_TYPE_BYTES && p->buffers[b].init == PL_INIT_RANDOM)
    type = p->buffers[b].random_type;
  pl_output_t *grown = realloc(p->outputs, (kept + 1) * sizeof *grown);
  if (!grown) {
    free(path);
    p->output_count = kept;
    return cli_error("out of memory"), false;
  }
  p->outputs = grown;
  uint64_t size = p->buffers[b].size;
  if (type != PL_TYPE_BYTES && type != PL_TYPE_I8 && size % 4) type = PL_TYPE_BYTES;
  p->outputs[kept] = (pl_output_t){.view = {(uint32_t)b, 0, size},
                                   .path = path,
                                   .type = type,
                                   .from_command_line = true};
  p->output_count = kept + 1;
  return true;
}
