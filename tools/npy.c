/* SPDX-License-Identifier: MIT */
/*
 * npy.c — NumPy's .npy files for pipeline inputs, outputs and checks
 * (docs/pipeline.md), beside raw .bin files.
 *
 * Reads format versions 1.0, 2.0 and 3.0 (C order, little-endian or
 * byte-sized elements; any shape: the array is its elements in order) and
 * writes version 1.0 with a one-dimensional shape. Only what a pipeline's
 * bytes need is supported: no object arrays, structured dtypes or Fortran
 * order, each refused with a message that says how to save the array instead.
 */
#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool npy_is_npy_path(const char *path) {
  size_t n = path ? strlen(path) : 0;
  return n >= 4 && strcmp(path + n - 4, ".npy") == 0;
}

const char *npy_descr(pl_type_t type) {
  switch (type) {
    case PL_TYPE_F32: return "<f4";
    case PL_TYPE_U32: return "<u4";
    case PL_TYPE_I32: return "<i4";
    case PL_TYPE_I8: return "|i1";
    case PL_TYPE_BYTES: return "|u1";
  }
  return "|u1";
}

static size_t type_size(pl_type_t type) {
  return (type == PL_TYPE_BYTES || type == PL_TYPE_I8) ? 1 : 4;
}

/* The value of 'key' in the header dict: a pointer just past "'key':" and
 * its spaces, or NULL. */
static const char *dict_value(const char *header, const char *key) {
  char quoted[32];
  snprintf(quoted, sizeof quoted, "'%s'", key);
  const char *at = strstr(header, quoted);
  if (!at) return NULL;
  at += strlen(quoted);
  while (*at == ' ') at++;
  if (*at != ':') return NULL;
  at++;
  while (*at == ' ') at++;
  return at;
}

static bool parse_header(const char *path, const char *header, npy_info_t *info, char *why,
                         size_t why_size) {
  const char *v = dict_value(header, "descr");
  if (!v || *v != '\'') {
    snprintf(why, why_size, "'%s': the .npy header has no 'descr'", path);
    return false;
  }
  v++;
  size_t n = 0;
  while (v[n] && v[n] != '\'' && n + 1 < sizeof info->descr) n++;
  memcpy(info->descr, v, n);
  info->descr[n] = '\0';
  const char *d = info->descr;
  char order = d[0], kind = d[0] ? d[1] : '\0';
  char *end = NULL;
  long size = (order && kind) ? strtol(d + 2, &end, 10) : 0;
  if (!(order == '<' || order == '|' || order == '=') || !strchr("fiub", kind) || !end || *end ||
      size < 1 || size > 16) {
    snprintf(why, why_size,
             "'%s': dtype '%s' is not supported (little-endian numbers or bytes only; save with "
             "arr.astype('<f4') or similar)",
             path, d);
    return false;
  }
  info->itemsize = (uint32_t)size;
  info->type = PL_TYPE_BYTES;
  info->known_type = true;
  if (kind == 'f' && size == 4) info->type = PL_TYPE_F32;
  else if (kind == 'u' && size == 4) info->type = PL_TYPE_U32;
  else if (kind == 'i' && size == 4) info->type = PL_TYPE_I32;
  else if (kind == 'i' && size == 1) info->type = PL_TYPE_I8;
  else if ((kind == 'u' || kind == 'b') && size == 1) info->type = PL_TYPE_BYTES;
  else info->known_type = false;

  v = dict_value(header, "fortran_order");
  if (!v || strncmp(v, "False", 5) != 0) {
    snprintf(why, why_size,
             "'%s': the array is in Fortran order; save a C-ordered copy "
             "(np.save(path, np.ascontiguousarray(arr)))",
             path);
    return false;
  }
  v = dict_value(header, "shape");
  if (!v || *v != '(') {
    snprintf(why, why_size, "'%s': the .npy header has no 'shape'", path);
    return false;
  }
  uint64_t count = 1;
  for (v++;;) {
    while (*v == ' ' || *v == ',') v++;
    if (*v == ')') break;
    if (!isdigit((unsigned char)*v)) {
      snprintf(why, why_size, "'%s': malformed shape in the .npy header", path);
      return false;
    }
    errno = 0;
    unsigned long long dim = strtoull(v, &end, 10);
    if (errno || (dim && count > UINT64_MAX / 4 / dim)) {
      snprintf(why, why_size, "'%s': the array is too large", path);
      return false;
    }
    count *= dim;
    v = end;
  }
  if (count > UINT64_MAX / 4 / info->itemsize) {
    snprintf(why, why_size, "'%s': the array is too large", path);
    return false;
  }
  info->count = count;
  info->data_bytes = count * info->itemsize;
  return true;
}

bool npy_read(const char *path, uint64_t max_bytes, uint8_t **out_data, npy_info_t *info, char *why,
              size_t why_size) {
  *out_data = NULL;
  memset(info, 0, sizeof *info);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(why, why_size, "cannot open '%s': %s", path, strerror(errno));
    return false;
  }
  bool ok = false;
  char *header = NULL;
  uint8_t pre[12];
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    snprintf(why, why_size, "'%s' is not a .npy file (no \\x93NUMPY magic)", path);
    goto out;
  }
  uint32_t header_len;
  if (pre[6] == 1) {
    if (fread(pre + 8, 1, 2, f) != 2) goto truncated;
    header_len = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
  } else if (pre[6] == 2 || pre[6] == 3) {
    if (fread(pre + 8, 1, 4, f) != 4) goto truncated;
    header_len = (uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 |
                 (uint32_t)pre[11] << 24;
  } else {
    snprintf(why, why_size, "'%s': .npy format version %u.%u is not supported (1.0 to 3.0)", path,
             pre[6], pre[7]);
    goto out;
  }
  if (header_len > (1u << 20)) {
    snprintf(why, why_size, "'%s': the .npy header is %u bytes, too large", path, header_len);
    goto out;
  }
  header = malloc(header_len + 1);
  if (!header) {
    snprintf(why, why_size, "out of memory reading '%s'", path);
    goto out;
  }
  if (fread(header, 1, header_len, f) != header_len) goto truncated;
  header[header_len] = '\0';
  if (!parse_header(path, header, info, why, why_size)) goto out;
  if (info->data_bytes > max_bytes) {
    snprintf(why, why_size, "'%s' holds %llu bytes of data (%llu elements of '%s'), more than %llu",
             path, (unsigned long long)info->data_bytes, (unsigned long long)info->count,
             info->descr, (unsigned long long)max_bytes);
    goto out;
  }
  *out_data = malloc(info->data_bytes ? info->data_bytes : 1);
  if (!*out_data) {
    snprintf(why, why_size, "out of memory reading '%s'", path);
    goto out;
  }
  if (fread(*out_data, 1, info->data_bytes, f) != info->data_bytes) goto truncated;
  if (fgetc(f) != EOF) {
    snprintf(why, why_size, "'%s' has bytes after its %llu elements", path,
             (unsigned long long)info->count);
    goto out;
  }
  ok = true;
  goto out;
truncated:
  snprintf(why, why_size, "'%s' is truncated", path);
out:
  if (!ok) {
    free(*out_data);
    *out_data = NULL;
  }
  free(header);
  fclose(f);
  return ok;
}

bool npy_write(const char *path, const uint8_t *data, uint64_t bytes, pl_type_t type) {
  size_t es = type_size(type);
  char dict[160];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%llu,), }",
                   npy_descr(type), (unsigned long long)(bytes / es));
  if (n < 0 || (size_t)n >= sizeof dict) return false;
  /* magic(6) + version(2) + length(2) + dict + padding + '\n', a multiple of 64 */
  size_t total = 10 + (size_t)n + 1;
  size_t padded = (total + 63) / 64 * 64;
  char header[256];
  memcpy(header, "\x93NUMPY\x01\x00", 8);
  uint16_t len = (uint16_t)(padded - 10);
  header[8] = (char)(len & 0xff);
  header[9] = (char)(len >> 8);
  memcpy(header + 10, dict, (size_t)n);
  memset(header + 10 + n, ' ', padded - total);
  header[padded - 1] = '\n';
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(header, 1, padded, f) == padded && fwrite(data, 1, bytes, f) == bytes;
  if (fclose(f) != 0) ok = false;
  return ok;
}
