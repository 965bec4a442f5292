/* SPDX-License-Identifier: MIT */
/*
 * pipeline_parse.c — reads a pipeline file (docs/pipeline.md) with jansson and
 * builds the model of pipeline.h.
 *
 * Every rejection names the file, the field path and what is wrong, e.g.
 *   demo.json: nodes[3].views[1]: unknown buffer 'tmp2'
 * and JSON syntax errors carry jansson's line and column. Unknown fields are
 * errors too (a misspelt optional field would otherwise be silently ignored).
 * Checks that only need the file happen here: names resolve, views lie inside
 * their buffers, view and value counts and sizes match the contracts. What
 * only the device can tell (SPIR-V reflection, limits) is left to tandem.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pipeline.h"

typedef struct ctx {
  const char *file;
  char *dir; /* the pipeline's folder, for relative paths */
  pipeline_t *p;
} ctx_t;

static bool fail(const ctx_t *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(const ctx_t *c, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tandem: %s: %s: ", c->file, path);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return false;
}

/* snprintf for field paths: a path cut short is still a useful message. */
static void pathf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pathf(char *buf, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, size, fmt, ap);
  va_end(ap);
}

static const char *type_name(const json_t *j) {
  switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
  }
  return "?";
}

static char *xstrdup(const char *s) {
  char *d = strdup(s ? s : "");
  if (!d) {
    cli_error("out of memory");
    exit(CLI_EXIT_FAILURE);
  }
  return d;
}

static char *join_path(const ctx_t *c, const char *rel) {
  if (rel[0] == '/' || !c->dir[0]) return xstrdup(rel);
  size_t n = strlen(c->dir) + strlen(rel) + 2;
  char *s = malloc(n);
  if (!s) {
    cli_error("out of memory");
    exit(CLI_EXIT_FAILURE);
  }
  snprintf(s, n, "%s/%s", c->dir, rel);
  return s;
}

/* Rejects keys of |obj| not in |allowed| (NULL-terminated). "comment" is
 * allowed everywhere. */
static bool check_keys(const ctx_t *c, const json_t *obj, const char *path,
                       const char *const *allowed) {
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)obj, key, v) {
    (void)v;
    bool ok = !strcmp(key, "comment");
    for (const char *const *a = allowed; *a && !ok; a++) ok = !strcmp(*a, key);
    if (!ok) {
      char list[512] = "";
      for (const char *const *a = allowed; *a; a++) {
        strncat(list, a == allowed ? "" : ", ", sizeof list - strlen(list) - 1);
        strncat(list, *a, sizeof list - strlen(list) - 1);
      }
      return fail(c, path, "unknown field '%s' (expected: %s)", key, list);
    }
  }
  return true;
}

static bool want_object(const ctx_t *c, const json_t *j, const char *path) {
  if (json_is_object(j)) return true;
  return fail(c, path, "must be an object, not %s", type_name(j));
}

/* obj[key] as an array (required or NULL when absent). */
static bool get_array(const ctx_t *c, const json_t *obj, const char *path, const char *key,
                      bool required, json_t **out) {
  *out = json_object_get(obj, key);
  char p[256];
  pathf(p, sizeof p, "%s%s%s", path, path[0] ? "." : "", key);
  if (!*out) return required ? fail(c, p, "missing (required)") : true;
  if (!json_is_array(*out)) return fail(c, p, "must be an array, not %s", type_name(*out));
  return true;
}

static bool get_string(const ctx_t *c, const json_t *obj, const char *path, const char *key,
                       bool required, const char **out) {
  json_t *v = json_object_get(obj, key);
  *out = NULL;
  char p[256];
  pathf(p, sizeof p, "%s%s%s", path, path[0] ? "." : "", key);
  if (!v) return required ? fail(c, p, "missing (required)") : true;
  if (!json_is_string(v)) return fail(c, p, "must be a string, not %s", type_name(v));
  if (!json_string_value(v)[0]) return fail(c, p, "must not be empty");
  *out = json_string_value(v);
  return true;
}

/* A whole number in min..max from an integer. */
static bool as_u64(const ctx_t *c, const json_t *v, const char *p, uint64_t min, uint64_t max,
                   uint64_t *out) {
  if (!json_is_integer(v)) return fail(c, p, "must be an integer, not %s", type_name(v));
  json_int_t i = json_integer_value(v);
  if (i < 0 || (uint64_t)i < min || (uint64_t)i > max)
    return fail(c, p, "%lld is out of range %llu..%llu", (long long)i, (unsigned long long)min,
                (unsigned long long)max);
  *out = (uint64_t)i;
  return true;
}

/* A byte size: an integer, or a string "<n>", "<n>KiB", "<n>MiB", "<n>GiB". */
static bool as_size(const ctx_t *c, const json_t *v, const char *p, uint64_t min, uint64_t max,
                    uint64_t *out) {
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(s, &end, 10);
    uint64_t mul = 1;
    if (end == s || s[0] == '-' || errno) goto bad;
    if (!strcmp(end, "") || !strcmp(end, "B")) mul = 1;
    else if (!strcmp(end, "KiB")) mul = 1ull << 10;
    else if (!strcmp(end, "MiB")) mul = 1ull << 20;
    else if (!strcmp(end, "GiB")) mul = 1ull << 30;
    else goto bad;
    if (n > max / mul) goto range;
    *out = n * mul;
    if (*out < min) goto range;
    return true;
  bad:
    return fail(c, p, "'%s' is not a size (an integer, or a string like \"64KiB\", \"4MiB\")", s);
  range:
    return fail(c, p, "'%s' is out of range %llu..%llu bytes", s, (unsigned long long)min,
                (unsigned long long)max);
  }
  if (json_is_integer(v)) return as_u64(c, v, p, min, max, out);
  return fail(c, p, "must be a size (an integer or a string like \"4MiB\"), not %s", type_name(v));
}

static bool get_u64(const ctx_t *c, const json_t *obj, const char *path, const char *key, bool size,
                    bool required, uint64_t min, uint64_t max, uint64_t dflt, uint64_t *out) {
  json_t *v = json_object_get(obj, key);
  char p[256];
  pathf(p, sizeof p, "%s%s%s", path, path[0] ? "." : "", key);
  *out = dflt;
  if (!v) return required ? fail(c, p, "missing (required)") : true;
  return size ? as_size(c, v, p, min, max, out) : as_u64(c, v, p, min, max, out);
}

static bool get_double(const ctx_t *c, const json_t *obj, const char *path, const char *key,
                       double dflt, double *out) {
  json_t *v = json_object_get(obj, key);
  *out = dflt;
  if (!v) return true;
  char p[256];
  pathf(p, sizeof p, "%s.%s", path, key);
  if (!json_is_number(v)) return fail(c, p, "must be a number, not %s", type_name(v));
  *out = json_number_value(v);
  if (!isfinite(*out)) return fail(c, p, "must be finite");
  return true;
}

static bool parse_type(const ctx_t *c, const char *p, const char *s, bool allow_bytes,
                       pl_type_t *out) {
  if (allow_bytes && !strcmp(s, "bytes")) *out = PL_TYPE_BYTES;
  else if (!strcmp(s, "f32")) *out = PL_TYPE_F32;
  else if (!strcmp(s, "u32")) *out = PL_TYPE_U32;
  else if (!strcmp(s, "i32")) *out = PL_TYPE_I32;
  else if (!strcmp(s, "i8")) *out = PL_TYPE_I8;
  else
    return fail(c, p, "unknown type '%s' (expected %sf32, u32, i32 or i8)", s,
                allow_bytes ? "bytes, " : "");
  return true;
}

static int find_name(const char *name, const void *array, uint32_t count, size_t stride) {
  for (uint32_t i = 0; i < count; i++) {
    const char *n = *(char *const *)((const char *)array + (size_t)i * stride);
    if (n && !strcmp(n, name)) return (int)i;
  }
  return -1;
}

/*--------------------------------------------------------------------------*/

static bool parse_placement(const ctx_t *c, const char *p, const char *s, tandem_placement_t *out) {
  static const struct {
    const char *name;
    tandem_placement_t value;
  } names[] = {{"GPU_LOCAL", TANDEM_PLACEMENT_GPU_LOCAL},
               {"HOST_VISIBLE", TANDEM_PLACEMENT_HOST_VISIBLE},
               {"SHARED", TANDEM_PLACEMENT_SHARED},
               {"NPU_LOCAL", TANDEM_PLACEMENT_NPU_LOCAL}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(names[i].name, s)) {
      *out = names[i].value;
      return true;
    }
  return fail(c, p,
              "unknown placement '%s' (expected GPU_LOCAL, HOST_VISIBLE, SHARED or NPU_LOCAL)", s);
}

static bool parse_init(const ctx_t *c, const json_t *j, const char *path, pl_buffer_t *b) {
  static const char *const keys[] = {"file", "fill", "random", NULL};
  if (!want_object(c, j, path) || !check_keys(c, j, path, keys)) return false;
  if (json_object_size(j) - (json_object_get(j, "comment") ? 1 : 0) != 1)
    return fail(c, path, "must have exactly one of 'file', 'fill', 'random'");
  char p[256];
  json_t *v;
  if ((v = json_object_get(j, "file"))) {
    const char *f;
    if (!get_string(c, j, path, "file", true, &f)) return false;
    b->init = PL_INIT_FILE;
    b->init_path = join_path(c, f);
  } else if ((v = json_object_get(j, "fill"))) {
    uint64_t f;
    pathf(p, sizeof p, "%s.fill", path);
    if (!as_u64(c, v, p, 0, UINT32_MAX, &f)) return false;
    b->init = PL_INIT_FILL;
    b->fill = (uint32_t)f;
  } else {
    v = json_object_get(j, "random");
    pathf(p, sizeof p, "%s.random", path);
    static const char *const rkeys[] = {"seed", "type", "min", "max", NULL};
    if (!want_object(c, v, p) || !check_keys(c, v, p, rkeys)) return false;
    b->init = PL_INIT_RANDOM;
    const char *t;
    if (!get_u64(c, v, p, "seed", false, false, 0, UINT64_MAX >> 1, 1, &b->seed)) return false;
    if (!get_string(c, v, p, "type", false, &t)) return false;
    char tp[256];
    pathf(tp, sizeof tp, "%s.type", p);
    b->random_type = PL_TYPE_F32;
    if (t && !parse_type(c, tp, t, false, &b->random_type)) return false;
    double dmin = 0, dmax = 1;
    if (b->random_type == PL_TYPE_U32) dmax = 4294967295.0;
    if (b->random_type == PL_TYPE_I32) dmin = -2147483648.0, dmax = 2147483647.0;
    if (b->random_type == PL_TYPE_I8) dmin = -128, dmax = 127;
    if (!get_double(c, v, p, "min", dmin, &b->random_min) ||
        !get_double(c, v, p, "max", dmax, &b->random_max))
      return false;
    if (b->random_min > b->random_max)
      return fail(c, p, "min %g is greater than max %g", b->random_min, b->random_max);
    if ((b->random_type == PL_TYPE_F32 || b->random_type == PL_TYPE_U32 ||
         b->random_type == PL_TYPE_I32) &&
        b->size % 4)
      return fail(c, p, "type %s needs a size that is a multiple of 4; the buffer has %llu bytes",
                  t ? t : "f32", (unsigned long long)b->size);
  }
  return true;
}

/* "gpus": ["backend:index" | "backend", ...], 1 .. TANDEM_MAX_GPUS of them. */
static bool parse_gpus(ctx_t *c, const json_t *root) {
  json_t *arr;
  if (!get_array(c, root, "", "gpus", false, &arr)) return false;
  if (!arr) return true;
  pipeline_t *p = c->p;
  size_t n = json_array_size(arr);
  if (n == 0 || n > TANDEM_MAX_GPUS)
    return fail(c, "gpus", "lists %zu GPUs; a runtime has 1 to %d", n, TANDEM_MAX_GPUS);
  for (size_t i = 0; i < n; i++) {
    char path[32];
    pathf(path, sizeof path, "gpus[%zu]", i);
    const json_t *j = json_array_get(arr, i);
    if (!json_is_string(j))
      return fail(c, path, "must be a string \"backend:index\" (\"vulkan:0\", \"host:1\"), not %s",
                  type_name(j));
    const char *text = json_string_value(j);
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len == 0 || len >= sizeof p->gpu_backends[0])
      return fail(c, path, "'%s': the backend name is empty or too long", text);
    memcpy(p->gpu_backends[i], text, len);
    p->gpu_backends[i][len] = '\0';
    uint32_t index = 0;
    if (colon) {
      char *end = NULL;
      unsigned long v = strtoul(colon + 1, &end, 10);
      if (!colon[1] || *end || v > 1024)
        return fail(c, path, "'%s': the index after ':' must be a number 0..1024", text);
      index = (uint32_t)v;
    }
    p->gpus[i] = (tandem_gpu_choice_t){p->gpu_backends[i], index};
  }
  p->gpu_count = (uint32_t)n;
  return true;
}

/* An object's "gpu": an index into the pipeline's gpus (0 when absent). */
static bool parse_gpu_ref(const ctx_t *c, const json_t *j, const char *path, uint32_t *out) {
  uint64_t g;
  uint32_t count = c->p->gpu_count ? c->p->gpu_count : 1;
  if (!get_u64(c, j, path, "gpu", false, false, 0, TANDEM_MAX_GPUS - 1, 0, &g)) return false;
  if (g >= count) {
    char pp[96];
    pathf(pp, sizeof pp, "%s.gpu", path);
    return fail(c, pp, "is %llu; the pipeline has %u GPU%s (top-level \"gpus\")",
                (unsigned long long)g, count, count == 1 ? "" : "s");
  }
  *out = (uint32_t)g;
  return true;
}

static bool parse_buffers(ctx_t *c, const json_t *root) {
  json_t *arr;
  if (!get_array(c, root, "", "buffers", true, &arr)) return false;
  if (json_array_size(arr) == 0) return fail(c, "buffers", "must list at least one buffer");
  pipeline_t *p = c->p;
  p->buffer_count = (uint32_t)json_array_size(arr);
  p->buffers = calloc(p->buffer_count, sizeof *p->buffers);
  if (!p->buffers) return fail(c, "buffers", "out of memory");
  static const char *const keys[] = {"name", "size", "placement", "init", "gpu", NULL};
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    char path[64];
    pathf(path, sizeof path, "buffers[%u]", i);
    json_t *j = json_array_get(arr, i);
    pl_buffer_t *b = &p->buffers[i];
    const char *name, *pl;
    if (!want_object(c, j, path) || !check_keys(c, j, path, keys)) return false;
    if (!get_string(c, j, path, "name", true, &name)) return false;
    if (find_name(name, p->buffers, i, sizeof *b) >= 0)
      return fail(c, path, "duplicate buffer name '%s'", name);
    b->name = xstrdup(name);
    if (!get_u64(c, j, path, "size", true, true, 1, UINT64_MAX / 4, 0, &b->size)) return false;
    if (!get_string(c, j, path, "placement", true, &pl)) return false;
    char pp[96];
    pathf(pp, sizeof pp, "%s.placement", path);
    if (!parse_placement(c, pp, pl, &b->placement)) return false;
    if (!parse_gpu_ref(c, j, path, &b->gpu)) return false;
    json_t *init = json_object_get(j, "init");
    pathf(pp, sizeof pp, "%s.init", path);
    if (init && !parse_init(c, init, pp, b)) return false;
  }
  return true;
}

/* A view: "name" (whole buffer) or {"buffer", "offset", "length"}. */
static bool parse_view(const ctx_t *c, const json_t *j, const char *path, pl_view_t *v) {
  const pipeline_t *p = c->p;
  const char *name;
  uint64_t offset = 0, length = 0;
  bool has_length = false;
  if (json_is_string(j)) {
    name = json_string_value(j);
  } else if (json_is_object(j)) {
    static const char *const keys[] = {"buffer", "offset", "length", NULL};
    if (!check_keys(c, j, path, keys) || !get_string(c, j, path, "buffer", true, &name))
      return false;
    if (!get_u64(c, j, path, "offset", true, false, 0, UINT64_MAX / 4, 0, &offset)) return false;
    has_length = json_object_get(j, "length") != NULL;
    if (!get_u64(c, j, path, "length", true, false, 1, UINT64_MAX / 4, 0, &length)) return false;
  } else {
    return fail(c, path, "must be a buffer name or {\"buffer\", \"offset\", \"length\"}, not %s",
                type_name(j));
  }
  int b = find_name(name, p->buffers, p->buffer_count, sizeof *p->buffers);
  if (b < 0) return fail(c, path, "unknown buffer '%s'", name);
  uint64_t size = p->buffers[b].size;
  if (offset >= size)
    return fail(c, path, "offset %llu is outside buffer '%s' (%llu bytes)",
                (unsigned long long)offset, name, (unsigned long long)size);
  if (!has_length) length = size - offset;
  if (length > size - offset)
    return fail(c, path, "range %llu+%llu is outside buffer '%s' (%llu bytes)",
                (unsigned long long)offset, (unsigned long long)length, name,
                (unsigned long long)size);
  *v = (pl_view_t){(uint32_t)b, offset, length};
  return true;
}

/* A contract's bindings. |gpu|: a GPU kernel's, which may also be empty and
 * may say "bytes": "view" (TANDEM_BYTES_VIEW: the bound view's length). */
static bool parse_bindings(const ctx_t *c, const json_t *obj, const char *path,
                           tandem_binding_contract_t *out, uint32_t *count, bool gpu) {
  bool allow_empty = gpu;
  json_t *arr;
  if (!get_array(c, obj, path, "bindings", true, &arr)) return false;
  char bp[160];
  pathf(bp, sizeof bp, "%s.bindings", path);
  size_t n = json_array_size(arr);
  if (n > TANDEM_MAX_BINDINGS)
    return fail(c, bp, "%zu bindings, at most %d", n, TANDEM_MAX_BINDINGS);
  if (n == 0 && !allow_empty) return fail(c, bp, "must list at least one binding");
  static const char *const keys[] = {"bytes", "alignment", "access", NULL};
  for (size_t i = 0; i < n; i++) {
    char p[192];
    pathf(p, sizeof p, "%s[%zu]", bp, i);
    json_t *j = json_array_get(arr, i);
    if (!want_object(c, j, p) || !check_keys(c, j, p, keys)) return false;
    uint64_t bytes, align;
    const char *access;
    json_t *bj = json_object_get(j, "bytes");
    if (gpu && json_is_string(bj) && !strcmp(json_string_value(bj), "view"))
      bytes = TANDEM_BYTES_VIEW;
    else if (!get_u64(c, j, p, "bytes", true, true, 1, UINT64_MAX / 4, 0, &bytes)) return false;
    if (!get_u64(c, j, p, "alignment", false, false, 1, 1u << 30, 4, &align)) return false;
    if (align & (align - 1)) {
      char ap[224];
      pathf(ap, sizeof ap, "%s.alignment", p);
      return fail(c, ap, "%llu is not a power of two", (unsigned long long)align);
    }
    if (!get_string(c, j, p, "access", true, &access)) return false;
    tandem_access_t a;
    if (!strcmp(access, "read")) a = TANDEM_ACCESS_READ;
    else if (!strcmp(access, "write")) a = TANDEM_ACCESS_WRITE;
    else if (!strcmp(access, "read_write")) a = TANDEM_ACCESS_READ_WRITE;
    else {
      char ap[224];
      pathf(ap, sizeof ap, "%s.access", p);
      return fail(c, ap, "unknown access '%s' (expected read, write or read_write)", access);
    }
    out[i] = (tandem_binding_contract_t){bytes, align, a};
  }
  *count = (uint32_t)n;
  return true;
}

/* An integer or an array of 1 to 3 integers, each |min|..UINT32_MAX; missing
 * dimensions are 1. */
static bool parse_dims(const ctx_t *c, const json_t *v, const char *fp, uint64_t min,
                       uint32_t out[3]) {
  out[0] = out[1] = out[2] = 1;
  if (json_is_integer(v)) {
    uint64_t x;
    if (!as_u64(c, v, fp, min, UINT32_MAX, &x)) return false;
    out[0] = (uint32_t)x;
    return true;
  }
  if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > 3)
    return fail(c, fp, "must be an integer or an array of 1 to 3 integers");
  for (size_t d = 0; d < json_array_size(v); d++) {
    char dp[160];
    uint64_t x;
    pathf(dp, sizeof dp, "%s[%zu]", fp, d);
    if (!as_u64(c, json_array_get(v, d), dp, min, UINT32_MAX, &x)) return false;
    out[d] = (uint32_t)x;
  }
  return true;
}

/* [{"id": 0, "u32": 64}, {"id": 1, "f32": 0.5}, {"id": 2, "bool": true}, ...]:
 * one typed value per SpecId (u32, i32, f32, bool, u64, i64, f64). */
static bool parse_spec_constants(const ctx_t *c, const json_t *arr, const char *path,
                                 pl_kernel_t *k) {
  if (!json_is_array(arr)) return fail(c, path, "must be an array, not %s", type_name(arr));
  size_t n = json_array_size(arr);
  if (n > TANDEM_MAX_SPEC_CONSTANTS)
    return fail(c, path, "%zu constants, at most %d", n, TANDEM_MAX_SPEC_CONSTANTS);
  for (size_t i = 0; i < n; i++) {
    char p[160], vp[200];
    pathf(p, sizeof p, "%s[%zu]", path, i);
    json_t *o = json_array_get(arr, i);
    if (!json_is_object(o) || json_object_size(o) != 2 || !json_object_get(o, "id"))
      return fail(c, p,
                  "must be {\"id\": N, \"<type>\": value} with type u32, i32, f32, bool, "
                  "u64, i64 or f64");
    uint64_t id;
    pathf(vp, sizeof vp, "%s.id", p);
    if (!as_u64(c, json_object_get(o, "id"), vp, 0, UINT32_MAX, &id)) return false;
    tandem_spec_constant_t *sc = &k->spec_constants[i];
    sc->id = (uint32_t)id;
    const char *key = NULL;
    json_t *x = NULL;
    for (void *it = json_object_iter((json_t *)o); it; it = json_object_iter_next((json_t *)o, it))
      if (strcmp(json_object_iter_key(it), "id")) {
        key = json_object_iter_key(it);
        x = json_object_iter_value(it);
      }
    pathf(vp, sizeof vp, "%s.%s", p, key ? key : "?");
    if (!key) return fail(c, p, "has no typed value next to \"id\"");
    if (!strcmp(key, "bool")) {
      if (!json_is_boolean(x)) return fail(c, vp, "must be true or false, not %s", type_name(x));
      sc->type = TANDEM_SCALAR_BOOL;
      sc->value.b = json_is_true(x);
    } else if (!strcmp(key, "f32") || !strcmp(key, "f64")) {
      if (!json_is_number(x)) return fail(c, vp, "must be a number, not %s", type_name(x));
      if (key[1] == '3') {
        sc->type = TANDEM_SCALAR_FLOAT32;
        sc->value.f32 = (float)json_number_value(x);
      } else {
        sc->type = TANDEM_SCALAR_FLOAT64;
        sc->value.f64 = json_number_value(x);
      }
    } else if (!strcmp(key, "u32") || !strcmp(key, "u64")) {
      uint64_t u;
      if (!as_u64(c, x, vp, 0, key[1] == '3' ? UINT32_MAX : UINT64_MAX, &u)) return false;
      sc->type = key[1] == '3' ? TANDEM_SCALAR_UINT32 : TANDEM_SCALAR_UINT64;
      if (key[1] == '3') sc->value.u32 = (uint32_t)u;
      else sc->value.u64 = u;
    } else if (!strcmp(key, "i32") || !strcmp(key, "i64")) {
      if (!json_is_integer(x)) return fail(c, vp, "must be an integer, not %s", type_name(x));
      json_int_t v = json_integer_value(x);
      if (key[1] == '3') {
        if (v < INT32_MIN || v > INT32_MAX)
          return fail(c, vp, "%lld is out of range for i32", (long long)v);
        sc->type = TANDEM_SCALAR_INT32;
        sc->value.i32 = (int32_t)v;
      } else {
        sc->type = TANDEM_SCALAR_INT64;
        sc->value.i64 = (int64_t)v;
      }
    } else {
      return fail(c, vp, "unknown type '%s' (expected u32, i32, f32, bool, u64, i64 or f64)", key);
    }
    for (size_t j = 0; j < i; j++)
      if (k->spec_constants[j].id == sc->id)
        return fail(c, p, "SpecId %u is given twice (also at [%zu])", sc->id, j);
  }
  k->spec_constant_count = (uint32_t)n;
  return true;
}

/* The kernel's boolean pipeline fields, each one tandem_kernel_flag_t bit
 * (tandem.h, "Literal size override" and "Pipeline flags"). */
static bool parse_kernel_flags(const ctx_t *c, const json_t *j, const char *path, pl_kernel_t *k) {
  static const struct {
    const char *key;
    uint32_t bit;
  } fields[] = {{"override_local_size", TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE},
                {"strict_spec_ids", TANDEM_KERNEL_STRICT_SPEC_IDS},
                {"require_full_subgroups", TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS},
                {"disable_robustness", TANDEM_KERNEL_DISABLE_ROBUSTNESS}};
  k->flags = 0;
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    json_t *v = json_object_get(j, fields[i].key);
    if (!v) continue;
    char p[160];
    pathf(p, sizeof p, "%s.%s", path, fields[i].key);
    if (!json_is_boolean(v)) return fail(c, p, "must be true or false, not %s", type_name(v));
    if (json_is_true(v)) k->flags |= fields[i].bit;
  }
  return true;
}

/* "aliased_bindings": [0, 4]: the bindings that may overlap one another in a
 * dispatch (tandem.h, "Aliased bindings"); each index names a binding. */
static bool parse_aliased_bindings(const ctx_t *c, const json_t *j, const char *path,
                                   pl_kernel_t *k) {
  json_t *arr;
  k->aliased_bindings = 0;
  if (!get_array(c, j, path, "aliased_bindings", false, &arr)) return false;
  if (!arr) return true;
  for (size_t i = 0; i < json_array_size(arr); i++) {
    char p[160];
    pathf(p, sizeof p, "%s.aliased_bindings[%zu]", path, i);
    uint64_t b;
    if (!k->binding_count) return fail(c, p, "the kernel has no bindings");
    if (!as_u64(c, json_array_get(arr, i), p, 0, k->binding_count - 1, &b)) return false;
    if (k->aliased_bindings & (1u << b))
      return fail(c, p, "binding %llu is named twice", (unsigned long long)b);
    k->aliased_bindings |= 1u << b;
  }
  return true;
}

static bool parse_kernels(ctx_t *c, const json_t *root) {
  json_t *arr;
  pipeline_t *p = c->p;
  if (!get_array(c, root, "", "kernels", false, &arr)) return false;
  if (!arr) return true;
  p->kernel_count = (uint32_t)json_array_size(arr);
  p->kernels = calloc(p->kernel_count ? p->kernel_count : 1, sizeof *p->kernels);
  if (!p->kernels) return fail(c, "kernels", "out of memory");
  static const char *const keys[] = {"name",
                                     "gpu",
                                     "spirv",
                                     "builtin",
                                     "entry",
                                     "workgroups",
                                     "bindings",
                                     "push_constant_bytes",
                                     "spec_constants",
                                     "local_size",
                                     "required_subgroup_size",
                                     "glsl",
                                     "override_local_size",
                                     "strict_spec_ids",
                                     "require_full_subgroups",
                                     "disable_robustness",
                                     "aliased_bindings",
                                     NULL};
  for (uint32_t i = 0; i < p->kernel_count; i++) {
    char path[64], fp[96];
    pathf(path, sizeof path, "kernels[%u]", i);
    json_t *j = json_array_get(arr, i);
    pl_kernel_t *k = &p->kernels[i];
    const char *name, *spirv, *builtin, *entry, *glsl;
    if (!want_object(c, j, path) || !check_keys(c, j, path, keys)) return false;
    if (!get_string(c, j, path, "name", true, &name)) return false;
    if (find_name(name, p->kernels, i, sizeof *k) >= 0)
      return fail(c, path, "duplicate kernel name '%s'", name);
    k->name = xstrdup(name);
    if (!get_string(c, j, path, "spirv", false, &spirv) ||
        !get_string(c, j, path, "builtin", false, &builtin) ||
        !get_string(c, j, path, "glsl", false, &glsl))
      return false;
    if (!!spirv + !!builtin + !!glsl != 1)
      return fail(c, path,
                  "needs exactly one of 'spirv' (a SPIR-V file), 'glsl' (a GLSL compute shader "
                  "file, compiled when the pipeline loads) and 'builtin' (one of %s)",
                  pipeline_builtin_names());
    if (glsl) {
      k->glsl_path = join_path(c, glsl);
    } else if (builtin) {
      const void *code;
      size_t bytes;
      pathf(fp, sizeof fp, "%s.builtin", path);
      if (!pipeline_builtin_spirv(builtin, &code, &bytes))
        return fail(c, fp, "unknown built-in kernel '%s' (built-ins: %s)", builtin,
                    pipeline_builtin_names());
      k->builtin = xstrdup(builtin);
    } else {
      k->spirv_path = join_path(c, spirv);
    }
    if (!get_string(c, j, path, "entry", false, &entry)) return false;
    k->entry = xstrdup(entry ? entry : "main");
    if (!parse_gpu_ref(c, j, path, &k->gpu)) return false;
    /* Optional: without it every dispatch node gives its own count. */
    json_t *wg = json_object_get(j, "workgroups");
    pathf(fp, sizeof fp, "%s.workgroups", path);
    if (wg && !parse_dims(c, wg, fp, 1, k->workgroups)) return false;
    json_t *ls = json_object_get(j, "local_size");
    pathf(fp, sizeof fp, "%s.local_size", path);
    if (ls && !parse_dims(c, ls, fp, 1, k->local_size)) return false;
    json_t *sc = json_object_get(j, "spec_constants");
    pathf(fp, sizeof fp, "%s.spec_constants", path);
    if (sc && !parse_spec_constants(c, sc, fp, k)) return false;
    uint64_t sg;
    if (!get_u64(c, j, path, "required_subgroup_size", false, false, 0, 1u << 16, 0, &sg))
      return false;
    k->required_subgroup_size = (uint32_t)sg;
    if (!parse_kernel_flags(c, j, path, k)) return false;
    if (!parse_bindings(c, j, path, k->bindings, &k->binding_count, true)) return false;
    if (!parse_aliased_bindings(c, j, path, k)) return false;
    uint64_t pc;
    if (!get_u64(c, j, path, "push_constant_bytes", false, false, 0, TANDEM_MAX_PUSH_CONSTANT_BYTES,
                 0, &pc))
      return false;
    if (pc % 4) {
      pathf(fp, sizeof fp, "%s.push_constant_bytes", path);
      return fail(c, fp, "%llu is not a multiple of 4", (unsigned long long)pc);
    }
    k->push_constant_bytes = (uint32_t)pc;
  }
  return true;
}

static bool parse_programs(ctx_t *c, const json_t *root) {
  json_t *arr;
  pipeline_t *p = c->p;
  if (!get_array(c, root, "", "npu_programs", false, &arr)) return false;
  if (!arr) return true;
  p->program_count = (uint32_t)json_array_size(arr);
  p->programs = calloc(p->program_count ? p->program_count : 1, sizeof *p->programs);
  if (!p->programs) return fail(c, "npu_programs", "out of memory");
  static const char *const keys[] = {"name",         "xclbin",       "kernel",
                                     "bindings",     "scalar_count", "abi",
                                     "instructions", "scalar_types", NULL};
  for (uint32_t i = 0; i < p->program_count; i++) {
    char path[64], fp[96];
    pathf(path, sizeof path, "npu_programs[%u]", i);
    json_t *j = json_array_get(arr, i);
    pl_program_t *g = &p->programs[i];
    const char *name, *xclbin, *kernel;
    if (!want_object(c, j, path) || !check_keys(c, j, path, keys)) return false;
    if (!get_string(c, j, path, "name", true, &name)) return false;
    if (find_name(name, p->programs, i, sizeof *g) >= 0)
      return fail(c, path, "duplicate NPU program name '%s'", name);
    g->name = xstrdup(name);
    if (!get_string(c, j, path, "xclbin", true, &xclbin)) return false;
    if (!strcmp(xclbin, "@emulated")) {
      g->emulated_xclbin = true;
      g->xclbin_path = xstrdup(cli_emulated_xclbin());
    } else {
      g->xclbin_path = join_path(c, xclbin);
    }
    if (!get_string(c, j, path, "kernel", true, &kernel)) return false;
    g->kernel = xstrdup(kernel);
    if (!parse_bindings(c, j, path, g->bindings, &g->binding_count, false)) return false;
    uint64_t sc;
    if (!get_u64(c, j, path, "scalar_count", false, false, 0, TANDEM_MAX_NPU_SCALARS, 0, &sc))
      return false;
    g->scalar_count = (uint32_t)sc;
    const char *abi;
    if (!get_string(c, j, path, "abi", false, &abi)) return false;
    g->abi = TANDEM_NPU_ABI_PLAIN;
    if (abi) {
      static const tandem_npu_abi_t all[] = {TANDEM_NPU_ABI_PLAIN, TANDEM_NPU_ABI_DPU,
                                             TANDEM_NPU_ABI_DPU_MODULE, TANDEM_NPU_ABI_ELF};
      size_t k = 0;
      while (k < 4 && strcmp(abi, tandem_npu_abi_name(all[k]))) k++;
      pathf(fp, sizeof fp, "%s.abi", path);
      if (k == 4)
        return fail(c, fp, "unknown ABI '%s' (expected plain, dpu, dpu_module or elf)", abi);
      g->abi = all[k];
    }
    const char *instr;
    if (!get_string(c, j, path, "instructions", false, &instr)) return false;
    if (instr) g->instructions_path = join_path(c, instr);
    pathf(fp, sizeof fp, "%s.instructions", path);
    if (g->abi == TANDEM_NPU_ABI_DPU && !instr)
      return fail(c, fp, "the dpu ABI needs an instruction stream file");
    if ((g->abi == TANDEM_NPU_ABI_DPU_MODULE || g->abi == TANDEM_NPU_ABI_ELF) && instr)
      return fail(c, fp, "the %s ABI takes no instruction stream", tandem_npu_abi_name(g->abi));
    json_t *types = json_object_get(j, "scalar_types");
    g->scalar_words = g->scalar_count;
    if (types) {
      pathf(fp, sizeof fp, "%s.scalar_types", path);
      if (!json_is_array(types) || json_array_size(types) != g->scalar_count)
        return fail(c, fp, "must be an array of scalar_count (%u) types, \"u32\" or \"u64\"",
                    g->scalar_count);
      g->scalar_words = 0;
      for (uint32_t k = 0; k < g->scalar_count; k++) {
        const char *t = json_string_value(json_array_get(types, k));
        if (!t || (strcmp(t, "u32") && strcmp(t, "u64")))
          return fail(c, fp, "entry %u must be \"u32\" or \"u64\"", k);
        g->scalar_types[k] = strcmp(t, "u64") ? TANDEM_NPU_SCALAR_U32 : TANDEM_NPU_SCALAR_U64;
        g->scalar_words += g->scalar_types[k] == TANDEM_NPU_SCALAR_U64 ? 2 : 1;
      }
      if (g->scalar_words > TANDEM_MAX_NPU_SCALARS)
        return fail(c, fp, "the scalars take %u 32-bit words, at most %u (a u64 takes two)",
                    g->scalar_words, TANDEM_MAX_NPU_SCALARS);
    }
  }
  return true;
}

/* Typed values as 32-bit words: [{"f32": 2.5}, {"u32": 7}, {"i32": -1}, 7 (a
 * u32), {"u64": n} (two words, low first)]. */
/* "npu": {"profile": "auto" | "plain" | "xdna"}: how tandem speaks to the
 * runtime's NPU (tandem_npu_profile_t; the runtime has one NPU, so the
 * profile is the file's, not a program's). */
static bool parse_npu(ctx_t *c, const json_t *root) {
  json_t *j = json_object_get(root, "npu");
  if (!j) return true;
  static const char *const keys[] = {"profile", NULL};
  if (!want_object(c, j, "npu") || !check_keys(c, j, "npu", keys)) return false;
  const char *profile;
  if (!get_string(c, j, "npu", "profile", false, &profile)) return false;
  if (!profile) return true;
  static const tandem_npu_profile_t all[] = {TANDEM_NPU_PROFILE_AUTO, TANDEM_NPU_PROFILE_PLAIN,
                                             TANDEM_NPU_PROFILE_XDNA};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    if (!strcmp(profile, tandem_npu_profile_name(all[k]))) {
      c->p->npu_profile = all[k];
      c->p->npu_profile_set = true;
      return true;
    }
  return fail(c, "npu.profile",
              "unknown NPU profile '%s' (expected auto, plain or xdna; --npu-profile overrides "
              "the file)",
              profile);
}

static bool parse_values(const ctx_t *c, const json_t *arr, const char *path, uint32_t *words,
                         uint32_t max_words, uint32_t *count) {
  if (!json_is_array(arr)) return fail(c, path, "must be an array, not %s", type_name(arr));
  size_t n = json_array_size(arr);
  uint32_t w = 0;
  for (size_t i = 0; i < n; i++) {
    char p[192];
    pathf(p, sizeof p, "%s[%zu]", path, i);
    json_t *v = json_array_get(arr, i);
    const char *key = json_is_object(v) && json_object_size(v) == 1
                          ? json_object_iter_key(json_object_iter(v))
                          : NULL;
    uint32_t need = key && !strcmp(key, "u64") ? 2 : 1;
    if (w + need > max_words) return fail(c, path, "more than %u 32-bit words", max_words);
    if (json_is_integer(v)) {
      uint64_t u;
      if (!as_u64(c, v, p, 0, UINT32_MAX, &u)) return false;
      words[w++] = (uint32_t)u;
      continue;
    }
    if (!key)
      return fail(c, p,
                  "must be {\"f32\": x}, {\"u32\": n}, {\"i32\": n}, {\"u64\": n} or "
                  "an integer");
    json_t *x = json_object_iter_value(json_object_iter(v));
    char vp[224];
    pathf(vp, sizeof vp, "%s.%s", p, key);
    if (!strcmp(key, "f32")) {
      if (!json_is_number(x)) return fail(c, vp, "must be a number, not %s", type_name(x));
      float f = (float)json_number_value(x);
      memcpy(&words[w++], &f, 4);
    } else if (!strcmp(key, "u32")) {
      uint64_t u;
      if (!as_u64(c, x, vp, 0, UINT32_MAX, &u)) return false;
      words[w++] = (uint32_t)u;
    } else if (!strcmp(key, "u64")) {
      uint64_t u;
      if (!as_u64(c, x, vp, 0, UINT64_MAX, &u)) return false;
      words[w++] = (uint32_t)u;
      words[w++] = (uint32_t)(u >> 32);
    } else if (!strcmp(key, "i32")) {
      if (!json_is_integer(x)) return fail(c, vp, "must be an integer, not %s", type_name(x));
      json_int_t s = json_integer_value(x);
      if (s < INT32_MIN || s > INT32_MAX)
        return fail(c, vp, "%lld is out of range for i32", (long long)s);
      int32_t s32 = (int32_t)s;
      memcpy(&words[w++], &s32, 4);
    } else {
      return fail(c, p, "unknown value type '%s' (expected f32, u32, i32 or u64)", key);
    }
  }
  *count = w;
  return true;
}

static bool parse_lane(const ctx_t *c, const json_t *j, const char *path, tandem_lane_t *out) {
  const char *s;
  *out = TANDEM_LANE_AUTO;
  if (!get_string(c, j, path, "lane", false, &s)) return false;
  if (!s || !strcmp(s, "auto")) return true;
  if (!strcmp(s, "upload")) *out = TANDEM_LANE_UPLOAD;
  else if (!strcmp(s, "compute")) *out = TANDEM_LANE_COMPUTE;
  else if (!strcmp(s, "download")) *out = TANDEM_LANE_DOWNLOAD;
  else {
    char p[160];
    pathf(p, sizeof p, "%s.lane", path);
    return fail(c, p, "unknown lane '%s' (expected auto, upload, compute or download)", s);
  }
  return true;
}

/* Checks views against a contract: count, length, alignment. */
static bool check_views_contract(const ctx_t *c, const char *path, const pl_node_t *n,
                                 const tandem_binding_contract_t *b, uint32_t count,
                                 const char *what, const char *name) {
  if (n->view_count != count)
    return fail(c, path, "%u view%s given, %s '%s' has %u binding%s", n->view_count,
                n->view_count == 1 ? "" : "s", what, name, count, count == 1 ? "" : "s");
  for (uint32_t i = 0; i < count; i++) {
    char p[192];
    pathf(p, sizeof p, "%s[%u]", path, i);
    const pl_view_t *v = &n->views[i];
    /* A GPU kernel's fixed binding takes exactly its bytes (a longer view
     * would be computed in part); an NPU argument is its whole buffer. */
    bool gpu = !strcmp(what, "kernel");
    if (gpu && b[i].bytes != TANDEM_BYTES_VIEW && v->length > b[i].bytes)
      return fail(c, p,
                  "view of '%s' is %llu bytes, binding %u of %s '%s' is a fixed %llu; give the "
                  "view a \"length\" of %llu, or declare the binding's \"bytes\": \"view\"",
                  c->p->buffers[v->buffer].name, (unsigned long long)v->length, i, what, name,
                  (unsigned long long)b[i].bytes, (unsigned long long)b[i].bytes);
    if (v->length < b[i].bytes)
      return fail(c, p, "view of '%s' is %llu bytes, binding %u of %s '%s' needs %llu",
                  c->p->buffers[v->buffer].name, (unsigned long long)v->length, i, what, name,
                  (unsigned long long)b[i].bytes);
    if (v->offset % b[i].alignment)
      return fail(c, p, "offset %llu is not a multiple of binding %u's alignment %llu",
                  (unsigned long long)v->offset, i, (unsigned long long)b[i].alignment);
  }
  return true;
}

static bool parse_nodes(ctx_t *c, const json_t *root) {
  json_t *arr;
  pipeline_t *p = c->p;
  if (!get_array(c, root, "", "nodes", true, &arr)) return false;
  if (json_array_size(arr) == 0) return fail(c, "nodes", "must list at least one node");
  p->node_count = (uint32_t)json_array_size(arr);
  p->nodes = calloc(p->node_count, sizeof *p->nodes);
  if (!p->nodes) return fail(c, "nodes", "out of memory");
  for (uint32_t i = 0; i < p->node_count; i++) {
    char path[64], fp[128];
    pathf(path, sizeof path, "nodes[%u]", i);
    json_t *j = json_array_get(arr, i);
    pl_node_t *n = &p->nodes[i];
    const char *op;
    if (!want_object(c, j, path) || !get_string(c, j, path, "op", true, &op)) return false;
    if (!parse_lane(c, j, path, &n->lane)) return false;
    if (!strcmp(op, "fill")) {
      static const char *const keys[] = {"op", "lane", "dst", "value", NULL};
      if (!check_keys(c, j, path, keys)) return false;
      n->op = PL_OP_FILL;
      json_t *dst = json_object_get(j, "dst");
      pathf(fp, sizeof fp, "%s.dst", path);
      if (!dst) return fail(c, fp, "missing (required)");
      if (!parse_view(c, dst, fp, &n->views[0])) return false;
      n->view_count = 1;
      if (n->views[0].offset % 4 || n->views[0].length % 4)
        return fail(c, fp, "a fill needs offset and length multiples of 4 (got %llu+%llu)",
                    (unsigned long long)n->views[0].offset, (unsigned long long)n->views[0].length);
      uint64_t v;
      if (!get_u64(c, j, path, "value", false, false, 0, UINT32_MAX, 0, &v)) return false;
      n->fill = (uint32_t)v;
    } else if (!strcmp(op, "copy")) {
      static const char *const keys[] = {"op", "lane", "src", "dst", NULL};
      if (!check_keys(c, j, path, keys)) return false;
      n->op = PL_OP_COPY;
      const char *names[2] = {"src", "dst"};
      for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(j, names[k]);
        pathf(fp, sizeof fp, "%s.%s", path, names[k]);
        if (!v) return fail(c, fp, "missing (required)");
        if (!parse_view(c, v, fp, &n->views[k])) return false;
      }
      n->view_count = 2;
      if (n->views[0].length != n->views[1].length)
        return fail(c, path, "src is %llu bytes but dst is %llu bytes (a copy needs equal lengths)",
                    (unsigned long long)n->views[0].length, (unsigned long long)n->views[1].length);
      if (n->views[0].buffer == n->views[1].buffer &&
          n->views[0].offset < n->views[1].offset + n->views[1].length &&
          n->views[1].offset < n->views[0].offset + n->views[0].length)
        return fail(c, path, "src and dst overlap in buffer '%s'",
                    p->buffers[n->views[0].buffer].name);
    } else if (!strcmp(op, "dispatch") || !strcmp(op, "npu_run")) {
      bool gpu = !strcmp(op, "dispatch");
      static const char *const dkeys[] = {"op",         "lane", "kernel", "views", "push_constants",
                                          "workgroups", NULL};
      static const char *const nkeys[] = {"op", "lane", "program", "views", "scalars", NULL};
      if (!check_keys(c, j, path, gpu ? dkeys : nkeys)) return false;
      n->op = gpu ? PL_OP_DISPATCH : PL_OP_NPU_RUN;
      const char *target;
      if (!get_string(c, j, path, gpu ? "kernel" : "program", true, &target)) return false;
      pathf(fp, sizeof fp, "%s.%s", path, gpu ? "kernel" : "program");
      int t = gpu ? find_name(target, p->kernels, p->kernel_count, sizeof *p->kernels)
                  : find_name(target, p->programs, p->program_count, sizeof *p->programs);
      if (t < 0) return fail(c, fp, "unknown %s '%s'", gpu ? "kernel" : "NPU program", target);
      n->target = (uint32_t)t;
      json_t *views;
      if (!get_array(c, j, path, "views", true, &views)) return false;
      pathf(fp, sizeof fp, "%s.views", path);
      if (json_array_size(views) > TANDEM_MAX_BINDINGS)
        return fail(c, fp, "%zu views, at most %d", json_array_size(views), TANDEM_MAX_BINDINGS);
      n->view_count = (uint32_t)json_array_size(views);
      for (uint32_t v = 0; v < n->view_count; v++) {
        char vp[160];
        pathf(vp, sizeof vp, "%s[%u]", fp, v);
        if (!parse_view(c, json_array_get(views, v), vp, &n->views[v])) return false;
      }
      if (gpu) {
        const pl_kernel_t *k = &p->kernels[t];
        if (!check_views_contract(c, fp, n, k->bindings, k->binding_count, "kernel", k->name))
          return false;
        json_t *pc = json_object_get(j, "push_constants");
        uint32_t words[TANDEM_MAX_PUSH_CONSTANT_BYTES / 4], count = 0;
        pathf(fp, sizeof fp, "%s.push_constants", path);
        if (pc && !parse_values(c, pc, fp, words, TANDEM_MAX_PUSH_CONSTANT_BYTES / 4, &count))
          return false;
        if (count * 4 != k->push_constant_bytes)
          return fail(c, fp, "%u bytes given, kernel '%s' takes exactly %u", count * 4, k->name,
                      k->push_constant_bytes);
        memcpy(n->push, words, count * 4);
        n->push_bytes = count * 4;
        json_t *wg = json_object_get(j, "workgroups");
        pathf(fp, sizeof fp, "%s.workgroups", path);
        if (wg) {
          if (!parse_dims(c, wg, fp, 1, n->workgroups)) return false;
        } else if (!k->workgroups[0]) {
          return fail(c, fp,
                      "missing: kernel '%s' has no default \"workgroups\", so each "
                      "dispatch of it gives its own",
                      k->name);
        } else {
          memcpy(n->workgroups, k->workgroups, sizeof n->workgroups);
        }
      } else {
        const pl_program_t *g = &p->programs[t];
        if (!check_views_contract(c, fp, n, g->bindings, g->binding_count, "NPU program", g->name))
          return false;
        for (uint32_t v = 0; v < n->view_count; v++) {
          tandem_placement_t pl = p->buffers[n->views[v].buffer].placement;
          if (pl != TANDEM_PLACEMENT_SHARED && pl != TANDEM_PLACEMENT_NPU_LOCAL)
            return fail(c, fp, "view %u: buffer '%s' is %s; the NPU needs SHARED or NPU_LOCAL", v,
                        p->buffers[n->views[v].buffer].name, tandem_placement_name(pl));
        }
        json_t *sc = json_object_get(j, "scalars");
        pathf(fp, sizeof fp, "%s.scalars", path);
        uint32_t count = 0;
        if (sc && !parse_values(c, sc, fp, n->scalars, TANDEM_MAX_NPU_SCALARS, &count))
          return false;
        if (count != g->scalar_words)
          return fail(c, fp, "%u scalar words given, NPU program '%s' takes %u (a u64 is two)",
                      count, g->name, g->scalar_words);
        n->scalar_count = count;
      }
    } else {
      pathf(fp, sizeof fp, "%s.op", path);
      return fail(c, fp, "unknown op '%s' (expected fill, copy, dispatch or npu_run)", op);
    }
  }
  return true;
}

static bool parse_outputs(ctx_t *c, const json_t *root) {
  json_t *arr;
  pipeline_t *p = c->p;
  if (!get_array(c, root, "", "outputs", false, &arr)) return false;
  if (!arr) return true;
  p->output_count = (uint32_t)json_array_size(arr);
  p->outputs = calloc(p->output_count ? p->output_count : 1, sizeof *p->outputs);
  if (!p->outputs) return fail(c, "outputs", "out of memory");
  static const char *const keys[] = {"buffer", "file", "type", NULL};
  for (uint32_t i = 0; i < p->output_count; i++) {
    char path[64], fp[96];
    pathf(path, sizeof path, "outputs[%u]", i);
    json_t *j = json_array_get(arr, i);
    const char *file, *type;
    if (!want_object(c, j, path) || !check_keys(c, j, path, keys)) return false;
    json_t *b = json_object_get(j, "buffer");
    pathf(fp, sizeof fp, "%s.buffer", path);
    if (!b) return fail(c, fp, "missing (required)");
    if (!parse_view(c, b, fp, &p->outputs[i].view)) return false;
    if (!get_string(c, j, path, "file", true, &file)) return false;
    p->outputs[i].path = xstrdup(file);
    /* .npy outputs carry a dtype: "type" (default bytes, written as u1). */
    if (!get_string(c, j, path, "type", false, &type)) return false;
    pathf(fp, sizeof fp, "%s.type", path);
    if (type && !parse_type(c, fp, type, true, &p->outputs[i].type)) return false;
    if (p->outputs[i].type != PL_TYPE_BYTES && p->outputs[i].type != PL_TYPE_I8 &&
        p->outputs[i].view.length % 4)
      return fail(c, path, "%llu bytes is not a whole number of 4-byte elements",
                  (unsigned long long)p->outputs[i].view.length);
  }
  return true;
}

static bool is_hex(const char *s, size_t len) {
  if (strlen(s) != len) return false;
  for (size_t i = 0; i < len; i++)
    if (!isxdigit((unsigned char)s[i])) return false;
  return true;
}

static bool parse_checks(ctx_t *c, const json_t *root) {
  json_t *arr;
  pipeline_t *p = c->p;
  if (!get_array(c, root, "", "checks", false, &arr)) return false;
  if (!arr) return true;
  p->check_count = (uint32_t)json_array_size(arr);
  p->checks = calloc(p->check_count ? p->check_count : 1, sizeof *p->checks);
  if (!p->checks) return fail(c, "checks", "out of memory");
  static const char *const keys[] = {"buffer", "file",      "sha256",        "fnv1a64", "reference",
                                     "type",   "tolerance", "rel_tolerance", NULL};
  for (uint32_t i = 0; i < p->check_count; i++) {
    char path[64], fp[96];
    pathf(path, sizeof path, "checks[%u]", i);
    json_t *j = json_array_get(arr, i);
    pl_check_t *k = &p->checks[i];
    if (!want_object(c, j, path) || !check_keys(c, j, path, keys)) return false;
    json_t *b = json_object_get(j, "buffer");
    pathf(fp, sizeof fp, "%s.buffer", path);
    if (!b) return fail(c, fp, "missing (required)");
    if (!parse_view(c, b, fp, &k->view)) return false;
    const char *file, *sha, *fnv, *ref, *type;
    if (!get_string(c, j, path, "file", false, &file) ||
        !get_string(c, j, path, "sha256", false, &sha) ||
        !get_string(c, j, path, "fnv1a64", false, &fnv) ||
        !get_string(c, j, path, "reference", false, &ref) ||
        !get_string(c, j, path, "type", false, &type))
      return false;
    if (!!file + !!sha + !!fnv + !!ref != 1)
      return fail(c, path, "needs exactly one of 'file', 'sha256', 'fnv1a64', 'reference'");
    k->type = PL_TYPE_BYTES;
    pathf(fp, sizeof fp, "%s.type", path);
    if (type && !parse_type(c, fp, type, true, &k->type)) return false;
    if (!get_double(c, j, path, "tolerance", 0, &k->tolerance) ||
        !get_double(c, j, path, "rel_tolerance", 0, &k->rel_tolerance))
      return false;
    if (k->tolerance < 0 || k->rel_tolerance < 0)
      return fail(c, path, "tolerances must not be negative");
    if ((k->tolerance > 0 || k->rel_tolerance > 0) && k->type != PL_TYPE_F32)
      return fail(c, path, "a tolerance needs \"type\": \"f32\"");
    if (k->type != PL_TYPE_BYTES && k->type != PL_TYPE_I8 && k->view.length % 4)
      return fail(c, path, "%llu bytes is not a whole number of 4-byte elements",
                  (unsigned long long)k->view.length);
    if (file) {
      k->kind = PL_CHECK_FILE;
      k->path = join_path(c, file);
    } else if (sha) {
      pathf(fp, sizeof fp, "%s.sha256", path);
      if (!is_hex(sha, 64)) return fail(c, fp, "must be 64 hexadecimal digits");
      k->kind = PL_CHECK_SHA256;
      k->digest = xstrdup(sha);
    } else if (fnv) {
      pathf(fp, sizeof fp, "%s.fnv1a64", path);
      if (!is_hex(fnv, 16)) return fail(c, fp, "must be 16 hexadecimal digits");
      k->kind = PL_CHECK_FNV1A64;
      k->digest = xstrdup(fnv);
    } else {
      pathf(fp, sizeof fp, "%s.reference", path);
      if (strcmp(ref, "cpu") != 0)
        return fail(c, fp, "unknown reference '%s' (expected \"cpu\")", ref);
      char why[256];
      if (!pipeline_cpu_model_complete(p, why, sizeof why))
        return fail(c, fp, "no CPU reference for this pipeline: %s", why);
      k->kind = PL_CHECK_CPU;
    }
    if (k->digest)
      for (char *d = k->digest; *d; d++) *d = (char)tolower((unsigned char)*d);
  }
  return true;
}

bool pipeline_parse(const char *path, pipeline_t *out) {
  memset(out, 0, sizeof *out);
  out->file = xstrdup(path);
  ctx_t c = {.file = path, .p = out};
  c.dir = xstrdup(path);
  char *slash = strrchr(c.dir, '/');
  if (slash) *slash = '\0';
  else c.dir[0] = '\0';

  json_error_t err;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
  bool ok = false;
  if (!root) {
    if (err.line > 0)
      fprintf(stderr, "tandem: %s:%d:%d: JSON syntax error: %s\n", path, err.line, err.column,
              err.text);
    else fprintf(stderr, "tandem: %s: cannot read the pipeline: %s\n", path, err.text);
    goto done;
  }
  if (!json_is_object(root)) {
    fail(&c, "(top level)", "must be an object, not %s", type_name(root));
    goto done;
  }
  static const char *const keys[] = {"name",  "description", "iterations", "npu",
                                     "gpus",  "buffers",     "kernels",    "npu_programs",
                                     "nodes", "outputs",     "checks",     NULL};
  if (!check_keys(&c, root, "(top level)", keys)) goto done;
  const char *name, *desc;
  if (!get_string(&c, root, "", "name", false, &name) ||
      !get_string(&c, root, "", "description", false, &desc))
    goto done;
  out->name = xstrdup(name ? name : path);
  out->description = desc ? xstrdup(desc) : NULL;
  uint64_t it;
  if (!get_u64(&c, root, "", "iterations", false, false, 1, 10000000, 1, &it)) goto done;
  out->iterations = (uint32_t)it;
  if (!parse_npu(&c, root) || !parse_gpus(&c, root)) goto done;
  ok = parse_buffers(&c, root) && parse_kernels(&c, root) && parse_programs(&c, root) &&
       parse_nodes(&c, root) && parse_outputs(&c, root) && parse_checks(&c, root);
done:
  json_decref(root);
  free(c.dir);
  if (!ok) pipeline_free(out);
  return ok;
}

void pipeline_free(pipeline_t *p) {
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    free(p->buffers[i].name);
    free(p->buffers[i].init_path);
  }
  for (uint32_t i = 0; i < p->kernel_count; i++) {
    free(p->kernels[i].name);
    free(p->kernels[i].spirv_path);
    free(p->kernels[i].glsl_path);
    free(p->kernels[i].builtin);
    free(p->kernels[i].entry);
  }
  for (uint32_t i = 0; i < p->program_count; i++) {
    free(p->programs[i].name);
    free(p->programs[i].xclbin_path);
    free(p->programs[i].kernel);
    free(p->programs[i].instructions_path);
  }
  for (uint32_t i = 0; i < p->output_count; i++) free(p->outputs[i].path);
  for (uint32_t i = 0; i < p->check_count; i++) {
    free(p->checks[i].path);
    free(p->checks[i].digest);
  }
  free(p->buffers);
  free(p->kernels);
  free(p->programs);
  free(p->nodes);
  free(p->outputs);
  free(p->checks);
  free(p->file);
  free(p->name);
  free(p->description);
  memset(p, 0, sizeof *p);
}
