/* SPDX-License-Identifier: MIT */
/*
 * emu_xclbin.c — the emulated NPU device's "xclbin": a small text file that
 * names a native kernels library (format in npu/emu/README.md). The emulated
 * NPU is a test and development device; a real (binary) xclbin given to it is
 * refused with EINVAL so the mix-up is reported, never half-loaded.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define EMU_XCLBIN_HEADER "tandem-emulated-xclbin 1"
#define EMU_XCLBIN_MAX_BYTES 65536

emu_xclbin_t *emu_xclbin_from(xrtXclbinHandle h) {
  emu_xclbin_t *x = h;
  if (x == NULL || x->magic != EMU_MAGIC_XCLBIN) return NULL;
  return x;
}

/* Reads the whole file (at most EMU_XCLBIN_MAX_BYTES) as a NUL-terminated string. */
static char *read_small_file(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL; /* errno from fopen */
  char *buf = malloc(EMU_XCLBIN_MAX_BYTES + 1);
  if (buf == NULL) {
    fclose(f);
    errno = ENOMEM;
    return NULL;
  }
  size_t n = fread(buf, 1, EMU_XCLBIN_MAX_BYTES + 1, f);
  const bool err = ferror(f) != 0;
  fclose(f);
  if (err || n > EMU_XCLBIN_MAX_BYTES) {
    free(buf);
    errno = err ? EIO : EINVAL;
    return NULL;
  }
  buf[n] = '\0';
  *out_len = n;
  return buf;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool parse_uuid(const char *s, xuid_t out) {
  if (strlen(s) != 32) return false;
  for (int i = 0; i < 16; i++) {
    const int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = (unsigned char)(hi * 16 + lo);
  }
  return true;
}

/* Deterministic 128-bit id of the file contents: two FNV-1a 64 hashes. */
static void derive_uuid(const char *data, size_t len, xuid_t out) {
  uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < len; i++) {
      h[k] ^= (unsigned char)data[i];
      h[k] *= 0x100000001b3ull;
    }
    h[k] ^= (uint64_t)len + (uint64_t)k;
    h[k] *= 0x100000001b3ull;
  }
  for (int i = 0; i < 16; i++) out[i] = (unsigned char)(h[i / 8] >> (8 * (i % 8)));
}

/* |library| relative to the directory of |xclbin_path| unless absolute. */
static char *resolve_library(const char *xclbin_path, const char *library) {
  if (library[0] == '/') return strdup(library);
  const char *slash = strrchr(xclbin_path, '/');
  const size_t dir_len = slash ? (size_t)(slash - xclbin_path) + 1 : 0;
  char *out = malloc(dir_len + strlen(library) + 1);
  if (out == NULL) return NULL;
  memcpy(out, xclbin_path, dir_len);
  strcpy(out + dir_len, library);
  return out;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

EMU_EXPORT xrtXclbinHandle xrtXclbinAllocFilename(const char *filename) {
  if (filename == NULL) {
    errno = EINVAL;
    return NULL;
  }
  size_t len = 0;
  char *data = read_small_file(filename, &len);
  if (data == NULL) return NULL;
  emu_xclbin_t *x = NULL;
  int err = EINVAL;
  bool have_uuid = false;
  xuid_t uuid;
  derive_uuid(data, len, uuid);
  if (memchr(data, '\0', len) != NULL) goto out; /* binary: e.g. a real xclbin */

  char *save = NULL;
  char *line = strtok_r(data, "\n", &save);
  if (line == NULL || strcmp(trim(line), EMU_XCLBIN_HEADER) != 0) goto out;
  char *library = NULL;
  while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
    line = trim(line);
    if (line[0] == '\0' || line[0] == '#') continue;
    char *value = line + strcspn(line, " \t");
    if (*value != '\0') *value++ = '\0';
    value = trim(value);
    if (strcmp(line, "library") == 0 && library == NULL && value[0] != '\0') {
      library = value;
    } else if (strcmp(line, "uuid") == 0 && !have_uuid && parse_uuid(value, uuid)) {
      have_uuid = true;
    } else {
      goto out; /* unknown key, repeated key or bad value */
    }
  }
  if (library == NULL) goto out;

  x = calloc(1, sizeof *x);
  if (x == NULL || (x->library = resolve_library(filename, library)) == NULL) {
    free(x);
    x = NULL;
    err = ENOMEM;
    goto out;
  }
  x->magic = EMU_MAGIC_XCLBIN;
  memcpy(x->uuid, uuid, sizeof(xuid_t));
out:
  free(data);
  if (x == NULL) errno = err;
  return x;
}

EMU_EXPORT int xrtXclbinGetUUID(xrtXclbinHandle xhdl, xuid_t ret_uuid) {
  emu_xclbin_t *x = emu_xclbin_from(xhdl);
  if (x == NULL || ret_uuid == NULL) return emu_fail(EINVAL);
  memcpy(ret_uuid, x->uuid, sizeof(xuid_t));
  return 0;
}

EMU_EXPORT int xrtXclbinFreeHandle(xrtXclbinHandle xhdl) {
  emu_xclbin_t *x = emu_xclbin_from(xhdl);
  if (x == NULL) return emu_fail(EINVAL);
  x->magic = EMU_MAGIC_DEAD;
  free(x->library);
  free(x);
  return 0;
}
