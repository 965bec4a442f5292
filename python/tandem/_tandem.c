/* SPDX-License-Identifier: MIT */
/*
 * _tandem.c — the CPython extension tandem._tandem: every object of the
 * public C API (tandem.h) as a Python type, written by hand against the
 * CPython C API. The Pythonic parts that are easier in Python (info
 * dataclasses, NumPy arrays over maps, asyncio) live in __init__.py, which
 * registers them here through _register(); this file calls them back.
 *
 * Rules this file keeps:
 *   - every tandem failure becomes an exception under tandem.Error carrying
 *     .status (the code), .status_name and .message; a bad Python argument
 *     is a TypeError or ValueError saying what to pass instead;
 *   - the GIL is released around every call that can block or take long
 *     (waits, blocking maps, prepare, kernel and NPU program creation, device
 *     opening, buffer creation) and kept around the short ones (submit,
 *     is_complete, getters), where releasing it would cost more than the call;
 *   - a Python object holds a strong reference to what its C object needs
 *     alive on the Python side (a buffer its runtime, a completion its
 *     executable); the C library keeps its own objects alive by itself.
 */
#include "_cuda.h"
#include "_dlpack.h"
#include "_errors.h"
#include "_objects.h"
#include "tandem/tandem_xrt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/*============================================================================
 * Failures (raised as _errors.h says) and the Python helpers of __init__.py
 *============================================================================*/

static PyObject *tpy_hooks; /* dict from _register() */

#define TPY_CHECK(expr)                        \
  do {                                         \
    tandem_status_t s_ = (expr);               \
    if (s_ != TANDEM_OK) return tpy_raise(s_); \
  } while (0)

/* Calls |expr| with the GIL released and raises on failure. */
#define TPY_CHECK_NOGIL(expr)                  \
  do {                                         \
    tandem_status_t s_;                        \
    Py_BEGIN_ALLOW_THREADS                     \
    s_ = (expr);                               \
    Py_END_ALLOW_THREADS                       \
    if (s_ != TANDEM_OK) return tpy_raise(s_); \
  } while (0)

/* A registered Python helper from __init__.py (borrowed), or NULL. */
static PyObject *tpy_hook(const char *name) {
  if (!tpy_hooks) return NULL;
  return PyDict_GetItemString(tpy_hooks, name);
}

/* Builds the registered class |name| from |dict| (stolen), or the dict. */
static PyObject *tpy_info(const char *name, PyObject *dict) {
  if (!dict) return NULL;
  PyObject *cls = tpy_hook(name);
  if (!cls) return dict;
  PyObject *empty = PyTuple_New(0);
  PyObject *r = empty ? PyObject_Call(cls, empty, dict) : NULL;
  Py_XDECREF(empty);
  Py_DECREF(dict);
  return r;
}

static int tpy_set(PyObject *d, const char *key, PyObject *v) {
  if (!v) return -1;
  int r = PyDict_SetItemString(d, key, v);
  Py_DECREF(v);
  return r;
}
#define TPY_SET_U(d, k, v) tpy_set((d), (k), PyLong_FromUnsignedLongLong((unsigned long long)(v)))
#define TPY_SET_S(d, k, v) tpy_set((d), (k), PyUnicode_FromString(v))
#define TPY_SET_B(d, k, v) tpy_set((d), (k), PyBool_FromLong((v) ? 1 : 0))
#define TPY_SET_F(d, k, v) tpy_set((d), (k), PyFloat_FromDouble(v))

/*============================================================================
 * Argument parsing
 *============================================================================*/

typedef struct {
  const char *name;
  int value;
} tpy_name_t;

static const tpy_name_t tpy_placements[] = {{"gpu_local", TANDEM_PLACEMENT_GPU_LOCAL},
                                            {"host_visible", TANDEM_PLACEMENT_HOST_VISIBLE},
                                            {"shared", TANDEM_PLACEMENT_SHARED},
                                            {"npu_local", TANDEM_PLACEMENT_NPU_LOCAL},
                                            {NULL, 0}};
static const tpy_name_t tpy_accesses[] = {{"read", TANDEM_ACCESS_READ},
                                          {"write", TANDEM_ACCESS_WRITE},
                                          {"read_write", TANDEM_ACCESS_READ_WRITE},
                                          {"rw", TANDEM_ACCESS_READ_WRITE},
                                          {NULL, 0}};
static const tpy_name_t tpy_lanes[] = {
    {"auto", TANDEM_LANE_AUTO},       {"upload", TANDEM_LANE_UPLOAD},
    {"compute", TANDEM_LANE_COMPUTE}, {"download", TANDEM_LANE_DOWNLOAD},
    {"npu", TANDEM_LANE_NPU},         {NULL, 0}};
static const tpy_name_t tpy_sharings[] = {{"auto", TANDEM_SHARING_AUTO},
                                          {"dmabuf_to_gpu", TANDEM_SHARING_DMABUF_TO_GPU},
                                          {"dmabuf_to_npu", TANDEM_SHARING_DMABUF_TO_NPU},
                                          {"host_pointer", TANDEM_SHARING_HOST_POINTER},
                                          {"staged", TANDEM_SHARING_STAGED},
                                          {NULL, 0}};

/* A name from |table| (case-insensitive, '-' as '_') or one of its values as
 * an int; -1 with ValueError/TypeError naming the choices. */
static int tpy_enum(PyObject *o, const tpy_name_t *table, const char *what, int *out) {
  char choices[256] = "";
  for (const tpy_name_t *t = table; t->name; t++) {
    if (choices[0]) strncat(choices, ", ", sizeof choices - strlen(choices) - 1);
    strncat(choices, "'", sizeof choices - strlen(choices) - 1);
    strncat(choices, t->name, sizeof choices - strlen(choices) - 1);
    strncat(choices, "'", sizeof choices - strlen(choices) - 1);
  }
  if (PyUnicode_Check(o)) {
    const char *s = PyUnicode_AsUTF8(o);
    if (!s) return -1;
    char norm[64];
    size_t n = 0;
    for (; s[n] && n + 1 < sizeof norm; n++) norm[n] = s[n] == '-' ? '_' : s[n];
    norm[n] = 0;
    for (const tpy_name_t *t = table; t->name; t++)
      if (strcasecmp(norm, t->name) == 0) {
        *out = t->value;
        return 0;
      }
    PyErr_Format(PyExc_ValueError, "unknown %s '%s': use one of %s", what, s, choices);
    return -1;
  }
  if (PyLong_Check(o) && !PyBool_Check(o)) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    for (const tpy_name_t *t = table; t->name; t++)
      if (t->value == v) {
        *out = (int)v;
        return 0;
      }
    PyErr_Format(PyExc_ValueError, "%s %ld is not a value of its enum: use one of %s", what, v,
                 choices);
    return -1;
  }
  PyErr_Format(PyExc_TypeError, "%s must be a str (%s), not %.80s", what, choices,
               Py_TYPE(o)->tp_name);
  return -1;
}

/* A non-negative integer, with the argument's name in the error. */
static int tpy_u64(PyObject *o, const char *what, uint64_t *out) {
  if (!PyLong_Check(o) || PyBool_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.80s", what, Py_TYPE(o)->tp_name);
    return -1;
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (overflow < 0 || (overflow == 0 && v < 0)) {
    PyErr_Format(PyExc_ValueError, "%s must not be negative (got %R)", what, o);
    return -1;
  }
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (PyErr_Occurred()) return -1;
    *out = u;
    return 0;
  }
  *out = (uint64_t)v;
  return 0;
}

static int tpy_u32(PyObject *o, const char *what, uint32_t *out) {
  uint64_t v;
  if (tpy_u64(o, what, &v) < 0) return -1;
  if (v > UINT32_MAX) {
    PyErr_Format(PyExc_ValueError, "%s must fit in 32 bits (got %R)", what, o);
    return -1;
  }
  *out = (uint32_t)v;
  return 0;
}

/* (x[, y[, z]]) or an int into out[3]; missing dimensions are 1. */
static int tpy_dims(PyObject *o, const char *what, uint32_t out[3]) {
  out[0] = out[1] = out[2] = 1;
  if (PyLong_Check(o)) return tpy_u32(o, what, &out[0]);
  PyObject *seq = PySequence_Fast(o, what);
  if (!seq) {
    PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of 1 to 3 ints", what);
    return -1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n < 1 || n > 3) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "%s must have 1 to 3 dimensions, got %zd", what, n);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++)
    if (tpy_u32(PySequence_Fast_GET_ITEM(seq, i), what, &out[i]) < 0) {
      Py_DECREF(seq);
      return -1;
    }
  Py_DECREF(seq);
  return 0;
}

/*============================================================================
 * Validation messages (process-wide, like the C test harness)
 *============================================================================
 *
 * The layer calls back on whichever thread made the Vulkan call (the NPU
 * lane's thread too), so the callback never touches Python: it counts and
 * keeps the last messages under a mutex, and Python reads them.
 */

#define TPY_VALIDATION_KEEP 32
static pthread_mutex_t tpy_validation_mutex = PTHREAD_MUTEX_INITIALIZER;
static uint64_t tpy_validation_count;
static char *tpy_validation_log[TPY_VALIDATION_KEEP];

static void tpy_validation_callback(void *user, tandem_validation_severity_t severity,
                                    const char *message) {
  (void)user;
  pthread_mutex_lock(&tpy_validation_mutex);
  size_t slot = tpy_validation_count++ % TPY_VALIDATION_KEEP;
  free(tpy_validation_log[slot]);
  size_t len = strlen(message) + 16;
  tpy_validation_log[slot] = malloc(len);
  if (tpy_validation_log[slot])
    snprintf(tpy_validation_log[slot], len, "%s: %s",
             severity == TANDEM_VALIDATION_ERROR ? "error" : "warning", message);
  pthread_mutex_unlock(&tpy_validation_mutex);
  fprintf(stderr, "tandem: validation %s: %s\n",
          severity == TANDEM_VALIDATION_ERROR ? "error" : "warning", message);
}

static PyObject *tpy_validation_messages(PyObject *self, PyObject *noargs) {
  pthread_mutex_lock(&tpy_validation_mutex);
  uint64_t n = tpy_validation_count;
  PyObject *list = PyList_New(0);
  uint64_t first = n > TPY_VALIDATION_KEEP ? n - TPY_VALIDATION_KEEP : 0;
  for (uint64_t i = first; list && i < n; i++) {
    const char *m = tpy_validation_log[i % TPY_VALIDATION_KEEP];
    PyObject *s = PyUnicode_FromString(m ? m : "(no memory for the message)");
    if (!s || PyList_Append(list, s) < 0) Py_CLEAR(list);
    Py_XDECREF(s);
  }
  pthread_mutex_unlock(&tpy_validation_mutex);
  if (!list) return NULL;
  PyObject *r = Py_BuildValue("(KN)", (unsigned long long)n, list);
  return r;
}

/*============================================================================
 * Types (declared first: they refer to each other)
 *============================================================================*/

static PyTypeObject tpy_runtime_type, tpy_buffer_type, tpy_view_type, tpy_map_type, tpy_kernel_type,
    tpy_npu_program_type, tpy_graph_type, tpy_exec_type, tpy_completion_type, tpy_trace_type,
    tpy_tensor_type;

typedef struct {
  PyObject_HEAD
  tpy_buffer_t *buffer;
  uint64_t offset, length;
} tpy_view_obj_t;

typedef struct {
  PyObject_HEAD
  tpy_buffer_t *buffer; /* strong */
  tandem_map_t map;
  bool write;
  bool live;               /* false after unmap(): arrays refuse use */
  bool mapped;             /* the tandem map is held */
  Py_ssize_t dlpack;       /* live DLPack tensors: the tandem map outlives unmap() */
  PyObject *dtype, *shape; /* what __enter__ makes an array as (or None) */
} tpy_map_obj_t;

typedef struct {
  PyObject_HEAD
  tpy_runtime_t *runtime;
  tandem_kernel_t *kernel;
} tpy_kernel_obj_t;

typedef struct {
  PyObject_HEAD
  tpy_runtime_t *runtime;
  tandem_npu_program_t *program;
} tpy_npu_program_obj_t;

typedef struct {
  PyObject_HEAD
  tpy_runtime_t *runtime;
  tandem_graph_t *graph;
  PyObject *keep; /* list: kernels and buffers the graph's nodes name */
} tpy_graph_obj_t;

typedef struct {
  PyObject_HEAD
  tpy_runtime_t *runtime;
  tandem_exec_t *exec;
} tpy_exec_obj_t;

typedef struct {
  PyObject_HEAD
  tpy_exec_obj_t *exec; /* strong; NULL for completions of no executable */
  tpy_runtime_t *runtime;
  tandem_completion_t *completion;
} tpy_completion_obj_t;

typedef struct {
  PyObject_HEAD
  tandem_trace_t *trace;
} tpy_trace_obj_t;

/* A DLPack exporter: |source| (a Map, View or Buffer) as dtype × shape. */
typedef struct {
  PyObject_HEAD
  PyObject *source;
  tpy_dl_dtype_t dtype;
  int32_t ndim;
  int64_t shape[8];
  uint64_t offset, length; /* bytes of the source it covers */
} tpy_tensor_obj_t;

static tpy_runtime_t *tpy_open(tpy_runtime_t *r) {
  if (!r->rt) {
    PyErr_SetString(PyExc_ValueError,
                    "this tandem.Runtime is closed: make a new one (objects made from it "
                    "keep working)");
    return NULL;
  }
  return r;
}

/* A view from a View or a Buffer (its whole range). */
static int tpy_get_view(PyObject *o, const char *what, tandem_view_t *out, tpy_buffer_t **owner) {
  if (PyObject_TypeCheck(o, &tpy_view_type)) {
    tpy_view_obj_t *v = (tpy_view_obj_t *)o;
    out->buffer = v->buffer->buffer;
    out->offset = v->offset;
    out->length = v->length;
    if (owner) *owner = v->buffer;
    return 0;
  }
  if (PyObject_TypeCheck(o, &tpy_buffer_type)) {
    tpy_buffer_t *b = (tpy_buffer_t *)o;
    *out = tandem_buffer_whole(b->buffer);
    if (owner) *owner = b;
    return 0;
  }
  PyErr_Format(PyExc_TypeError, "%s must be a tandem.Buffer or a view of one (buf[a:b]), not %.80s",
               what, Py_TYPE(o)->tp_name);
  return -1;
}

/*============================================================================
 * Runtime
 *============================================================================*/

static void tpy_runtime_close_(tpy_runtime_t *r) {
  if (r->rt) {
    tandem_runtime_t *rt = r->rt;
    r->rt = NULL;
    Py_BEGIN_ALLOW_THREADS
    tandem_runtime_destroy(rt);
    Py_END_ALLOW_THREADS
  }
}

static int tpy_runtime_init(tpy_runtime_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"gpu_backend",
                          "gpu_index",
                          "max_submissions",
                          "graph_slots",
                          "budget",
                          "validation",
                          "gpu_timestamps",
                          "npu",
                          "npu_index",
                          "npu_library",
                          "npu_timeout_ms",
                          "sharing",
                          "wait_spin_us",
                          "export_timelines",
                          NULL};
  const char *gpu_backend = NULL, *npu_library = NULL;
  PyObject *gpu_index = NULL, *max_submissions = NULL, *graph_slots = NULL, *budget = NULL,
           *npu = NULL, *npu_index = NULL, *npu_timeout = NULL, *sharing = NULL, *spin = NULL;
  int validation = 0, timestamps = 0, export_timelines = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$zOOOOppOOzOOOp", names, &gpu_backend, &gpu_index,
                                   &max_submissions, &graph_slots, &budget, &validation,
                                   &timestamps, &npu, &npu_index, &npu_library, &npu_timeout,
                                   &sharing, &spin, &export_timelines))
    return -1;
  if (self->rt) {
    PyErr_SetString(PyExc_RuntimeError, "Runtime.__init__ called twice");
    return -1;
  }
  tandem_runtime_options_t o;
  tandem_runtime_options_init(&o);
  o.gpu_backend = gpu_backend;
  o.npu_library = npu_library;
  o.validation = validation != 0;
  o.gpu_timestamps = timestamps != 0;
  o.export_timelines = export_timelines != 0;
  if (o.validation) o.validation_callback = tpy_validation_callback;
  int v;
  if (gpu_index && tpy_u32(gpu_index, "gpu_index", &o.gpu_index) < 0) return -1;
  if (max_submissions && tpy_u32(max_submissions, "max_submissions", &o.max_submissions) < 0)
    return -1;
  if (graph_slots && tpy_u32(graph_slots, "graph_slots", &o.graph_slots) < 0) return -1;
  if (npu_index && tpy_u32(npu_index, "npu_index", &o.npu_index) < 0) return -1;
  if (npu_timeout && tpy_u32(npu_timeout, "npu_timeout_ms", &o.npu_timeout_ms) < 0) return -1;
  if (spin && tpy_u32(spin, "wait_spin_us", &o.wait_spin_us) < 0) return -1;
  /* npu: the NPU backend's name (the option npu_backend); 'none' or None: no
   * NPU. The library refuses an unknown name, listing the known ones. */
  if (npu && npu != Py_None) {
    if (!PyUnicode_Check(npu)) {
      PyErr_Format(PyExc_TypeError,
                   "npu must be a backend name ('xrt', 'emulated') or 'none', not %s",
                   Py_TYPE(npu)->tp_name);
      return -1;
    }
    const char *name = PyUnicode_AsUTF8(npu);
    if (!name) return -1;
    o.npu_backend = strcmp(name, "none") == 0 ? NULL : name;
  }
  if (sharing && sharing != Py_None) {
    if (tpy_enum(sharing, tpy_sharings, "sharing", &v) < 0) return -1;
    o.sharing = (tandem_sharing_t)v;
  }
  tandem_budget_t *bud = NULL;
  if (budget && budget != Py_None) {
    uint64_t limit;
    if (tpy_u64(budget, "budget (bytes)", &limit) < 0) return -1;
    tandem_status_t s = tandem_budget_create(limit, &bud);
    if (s != TANDEM_OK) {
      tpy_raise(s);
      return -1;
    }
    o.budget = bud;
  }
  tandem_runtime_t *rt = NULL;
  tandem_status_t s = tandem_runtime_create(&o, &rt);
  tandem_budget_release(bud); /* the runtime keeps its own reference */
  if (s != TANDEM_OK) {
    tpy_raise(s);
    return -1;
  }
  self->rt = rt;
  self->keep = rt;
  self->track_lanes = o.export_timelines;
  self->gpu_index = o.gpu_index;
  return 0;
}

static void tpy_runtime_dealloc(tpy_runtime_t *self) {
  tpy_cuda_runtime_free(self);
  tpy_runtime_close_(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *tpy_runtime_close(tpy_runtime_t *self, PyObject *noargs) {
  tpy_runtime_close_(self);
  Py_RETURN_NONE;
}

static PyObject *tpy_runtime_enter(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  Py_INCREF(self);
  return (PyObject *)self;
}

static PyObject *tpy_runtime_exit(tpy_runtime_t *self, PyObject *args) {
  tpy_runtime_close_(self);
  Py_RETURN_FALSE;
}

static PyObject *tpy_runtime_open_gpu(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  TPY_CHECK_NOGIL(tandem_runtime_open_gpu(self->rt));
  Py_RETURN_NONE;
}

static PyObject *tpy_runtime_open_npu(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  TPY_CHECK_NOGIL(tandem_runtime_open_npu(self->rt));
  Py_RETURN_NONE;
}

static PyObject *tpy_runtime_gpu_count(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  uint32_t n = 0;
  TPY_CHECK_NOGIL(tandem_runtime_gpu_count(self->rt, &n));
  return PyLong_FromUnsignedLong(n);
}

static PyObject *tpy_device_info_dict(const tandem_device_info_t *i) {
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  PyObject *features = PyList_New(0), *shader = PyList_New(0), *families = PyList_New(0);
  if (!features || !shader || !families) goto fail;
  static const struct {
    uint32_t bit;
    const char *name;
  } gpu_features[] = {{TANDEM_GPU_TIMELINE_SEMAPHORE, "timeline_semaphore"},
                      {TANDEM_GPU_SYNCHRONIZATION2, "synchronization2"},
                      {TANDEM_GPU_EXTERNAL_MEMORY_FD, "external_memory_fd"},
                      {TANDEM_GPU_EXTERNAL_MEMORY_DMA_BUF, "external_memory_dma_buf"},
                      {TANDEM_GPU_EXTERNAL_MEMORY_HOST, "external_memory_host"},
                      {TANDEM_GPU_EXTERNAL_SEMAPHORE_FD, "external_semaphore_fd"},
                      {TANDEM_GPU_CALIBRATED_TIMESTAMPS, "calibrated_timestamps"},
                      {TANDEM_GPU_BUFFER_DEVICE_ADDRESS, "buffer_device_address"},
                      {TANDEM_GPU_PUSH_DESCRIPTORS, "push_descriptors"}};
  for (size_t k = 0; k < sizeof gpu_features / sizeof gpu_features[0]; k++)
    if (i->features & gpu_features[k].bit) {
      PyObject *s = PyUnicode_FromString(gpu_features[k].name);
      if (!s || PyList_Append(features, s) < 0) {
        Py_XDECREF(s);
        goto fail;
      }
      Py_DECREF(s);
    }
  for (uint32_t bit = 0; bit < 32; bit++)
    if (i->shader_features & (1u << bit)) {
      PyObject *s =
          PyUnicode_FromString(tandem_shader_feature_name((tandem_shader_feature_t)(1u << bit)));
      if (!s || PyList_Append(shader, s) < 0) {
        Py_XDECREF(s);
        goto fail;
      }
      Py_DECREF(s);
    }
  for (uint32_t f = 0; f < i->queue_family_count && f < TANDEM_MAX_QUEUE_FAMILIES; f++) {
    PyObject *t =
        Py_BuildValue("(II)", i->queue_families[f].caps, i->queue_families[f].queue_count);
    if (!t || PyList_Append(families, t) < 0) {
      Py_XDECREF(t);
      goto fail;
    }
    Py_DECREF(t);
  }
  if (TPY_SET_U(d, "index", i->index) < 0 || TPY_SET_S(d, "name", i->name) < 0 ||
      TPY_SET_S(d, "driver_name", i->driver_name) < 0 ||
      TPY_SET_S(d, "driver_info", i->driver_info) < 0 ||
      tpy_set(d, "api_version",
              Py_BuildValue("(III)", TANDEM_VERSION_MAJOR_OF(i->api_version),
                            TANDEM_VERSION_MINOR_OF(i->api_version),
                            TANDEM_VERSION_PATCH_OF(i->api_version))) < 0 ||
      TPY_SET_U(d, "vendor_id", i->vendor_id) < 0 || TPY_SET_U(d, "device_id", i->device_id) < 0 ||
      TPY_SET_B(d, "is_cpu", i->is_cpu) < 0 || tpy_set(d, "features", features) < 0 ||
      tpy_set(d, "shader_features", shader) < 0 || tpy_set(d, "queue_families", families) < 0 ||
      TPY_SET_U(d, "device_local_bytes", i->device_local_bytes) < 0 ||
      TPY_SET_F(d, "timestamp_period_ns", i->timestamp_period_ns) < 0 ||
      tpy_set(d, "max_local_size",
              Py_BuildValue("(III)", i->max_local_size[0], i->max_local_size[1],
                            i->max_local_size[2])) < 0 ||
      TPY_SET_U(d, "max_local_invocations", i->max_local_invocations) < 0 ||
      tpy_set(d, "max_workgroups",
              Py_BuildValue("(III)", i->max_workgroups[0], i->max_workgroups[1],
                            i->max_workgroups[2])) < 0 ||
      TPY_SET_U(d, "subgroup_size", i->subgroup_size) < 0 ||
      TPY_SET_U(d, "max_shared_memory_bytes", i->max_shared_memory_bytes) < 0) {
    Py_DECREF(d);
    return NULL;
  }
  return d;
fail:
  Py_XDECREF(features);
  Py_XDECREF(shader);
  Py_XDECREF(families);
  Py_DECREF(d);
  return NULL;
}

static PyObject *tpy_runtime_gpu_info(tpy_runtime_t *self, PyObject *args) {
  unsigned int index = UINT32_MAX;
  if (!PyArg_ParseTuple(args, "|I", &index)) return NULL;
  if (!tpy_open(self)) return NULL;
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  if (index == UINT32_MAX) index = self->gpu_index; /* the runtime's own device */
  TPY_CHECK_NOGIL(tandem_runtime_gpu_info(self->rt, index, &info));
  return tpy_info("DeviceInfo", tpy_device_info_dict(&info));
}

static PyObject *tpy_runtime_npu_info(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  tandem_npu_info_t i;
  tandem_npu_info_init(&i);
  TPY_CHECK_NOGIL(tandem_runtime_npu_info(self->rt, &i));
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  PyObject *nodes = PyList_New(0);
  for (uint32_t k = 0; nodes && k < i.drm_node_count && k < 8; k++) {
    PyObject *s = PyUnicode_FromString(i.drm_nodes[k]);
    if (!s || PyList_Append(nodes, s) < 0) Py_CLEAR(nodes);
    Py_XDECREF(s);
  }
  if (!nodes || TPY_SET_S(d, "name", i.name) < 0 || TPY_SET_S(d, "backend", i.backend) < 0 ||
      TPY_SET_B(d, "emulated", i.emulated) < 0 ||
      TPY_SET_S(d, "sharing", tandem_sharing_name(i.sharing)) < 0 ||
      tpy_set(d, "drm_nodes", nodes) < 0) {
    Py_DECREF(d);
    return NULL;
  }
  return tpy_info("NpuInfo", d);
}

static PyObject *tpy_runtime_statistics(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  tandem_statistics_t st;
  tandem_statistics_init(&st);
  TPY_CHECK(tandem_runtime_statistics(self->rt, &st));
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  if (TPY_SET_U(d, "allocations", st.allocations) < 0 ||
      TPY_SET_U(d, "live_bytes", st.live_bytes) < 0 ||
      TPY_SET_U(d, "peak_bytes", st.peak_bytes) < 0 ||
      TPY_SET_U(d, "submissions", st.submissions) < 0 ||
      TPY_SET_U(d, "completions", st.completions) < 0 || TPY_SET_U(d, "imports", st.imports) < 0 ||
      TPY_SET_U(d, "copied_bytes", st.copied_bytes) < 0 ||
      TPY_SET_U(d, "cache_maintenance_bytes", st.cache_maintenance_bytes) < 0 ||
      TPY_SET_U(d, "npu_runs", st.npu_runs) < 0) {
    Py_DECREF(d);
    return NULL;
  }
  return tpy_info("Statistics", d);
}

static PyObject *tpy_runtime_lanes(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  uint32_t n = tandem_runtime_lane_count(self->rt);
  PyObject *list = PyList_New(0);
  static const char *kinds[] = {"unused", "gpu_queue", "npu_thread", "external", "session"};
  for (uint32_t lane = 0; list && lane < n; lane++) {
    tandem_lane_info_t li;
    tandem_lane_info_init(&li);
    tandem_status_t s = tandem_runtime_lane_info(self->rt, (int)lane, &li);
    if (s != TANDEM_OK) {
      Py_DECREF(list);
      return tpy_raise(s);
    }
    PyObject *d = PyDict_New();
    if (!d || TPY_SET_U(d, "id", lane) < 0 ||
        TPY_SET_S(d, "kind", (unsigned)li.kind < 5 ? kinds[li.kind] : "unknown") < 0 ||
        TPY_SET_S(d, "name", li.name) < 0 || TPY_SET_U(d, "value", li.value) < 0 ||
        TPY_SET_U(d, "submissions", li.submissions) < 0 ||
        TPY_SET_U(d, "copied_bytes", li.copied_bytes) < 0) {
      Py_XDECREF(d);
      Py_DECREF(list);
      return NULL;
    }
    PyObject *o = tpy_info("LaneInfo", d);
    if (!o || PyList_Append(list, o) < 0) Py_CLEAR(list);
    Py_XDECREF(o);
  }
  return list;
}

static PyObject *tpy_runtime_validation_count(tpy_runtime_t *self, void *closure) {
  tandem_runtime_t *rt = self->rt ? self->rt : NULL;
  return PyLong_FromUnsignedLongLong(rt ? tandem_runtime_validation_messages(rt) : 0);
}

static PyObject *tpy_runtime_trim(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  TPY_CHECK(tandem_runtime_trim(self->rt));
  Py_RETURN_NONE;
}

static PyObject *tpy_new_buffer(tpy_runtime_t *r, tandem_buffer_t *b, bool exportable) {
  tpy_buffer_t *o = PyObject_New(tpy_buffer_t, &tpy_buffer_type);
  if (!o) {
    tandem_buffer_release(b);
    return NULL;
  }
  Py_INCREF(r);
  o->runtime = r;
  o->buffer = b;
  o->size = tandem_buffer_size(b);
  o->placement = (int)tandem_buffer_placement(b);
  o->exportable = exportable;
  o->cuda = NULL;
  return (PyObject *)o;
}

/* runtime.buffer(size, placement="host_visible", *, exportable=False) */
static PyObject *tpy_runtime_buffer(tpy_runtime_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"size", "placement", "exportable", NULL};
  PyObject *size_o, *place_o = NULL;
  int exportable = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$p", names, &size_o, &place_o, &exportable))
    return NULL;
  if (!tpy_open(self)) return NULL;
  uint64_t size;
  if (tpy_u64(size_o, "size", &size) < 0) return NULL;
  if (size == 0) {
    PyErr_SetString(PyExc_ValueError, "size must be at least 1 byte");
    return NULL;
  }
  int placement = TANDEM_PLACEMENT_HOST_VISIBLE;
  if (place_o && tpy_enum(place_o, tpy_placements, "placement", &placement) < 0) return NULL;
  tandem_buffer_t *b = NULL;
  if (exportable)
    TPY_CHECK_NOGIL(tandem_buffer_create_exportable(self->rt, size, (tandem_placement_t)placement,
                                                    TANDEM_EXTERNAL_MEMORY_OPAQUE_FD, &b));
  else TPY_CHECK_NOGIL(tandem_buffer_create(self->rt, size, (tandem_placement_t)placement, &b));
  return tpy_new_buffer(self, b, exportable != 0);
}

/* Bindings: a sequence of (bytes, access[, alignment]). */
static int tpy_bindings(PyObject *o, tandem_binding_contract_t *out, uint32_t *count) {
  PyObject *seq = PySequence_Fast(o, "bindings must be a sequence of (bytes, access[, alignment])");
  if (!seq) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > TANDEM_MAX_BINDINGS) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "%zd bindings: at most %d", n, TANDEM_MAX_BINDINGS);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *b = PySequence_Fast_GET_ITEM(seq, i);
    PyObject *t = PySequence_Fast(b, "binding");
    char what[64];
    snprintf(what, sizeof what, "binding %zd", i);
    if (!t) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_TypeError,
                   "%s must be (bytes, access[, alignment]), e.g. tandem.Binding(4096, 'read')",
                   what);
      return -1;
    }
    Py_ssize_t k = PySequence_Fast_GET_SIZE(t);
    int access = 0;
    uint64_t bytes = 0, align = 4;
    int bad = k < 2 || k > 3;
    if (bad) {
      PyErr_Format(PyExc_ValueError, "%s has %zd fields: give (bytes, access[, alignment])", what,
                   k);
    } else {
      char w2[80];
      snprintf(w2, sizeof w2, "%s bytes", what);
      bad = tpy_u64(PySequence_Fast_GET_ITEM(t, 0), w2, &bytes) < 0 ||
            tpy_enum(PySequence_Fast_GET_ITEM(t, 1), tpy_accesses, "access", &access) < 0;
      if (!bad && k == 3 && PySequence_Fast_GET_ITEM(t, 2) != Py_None) {
        snprintf(w2, sizeof w2, "%s alignment", what);
        bad = tpy_u64(PySequence_Fast_GET_ITEM(t, 2), w2, &align) < 0;
      }
    }
    Py_DECREF(t);
    if (bad) {
      Py_DECREF(seq);
      return -1;
    }
    out[i].bytes = bytes;
    out[i].alignment = align;
    out[i].access = (tandem_access_t)access;
  }
  *count = (uint32_t)n;
  Py_DECREF(seq);
  return 0;
}

static const tpy_name_t tpy_scalar_types[] = {
    {"bool", TANDEM_SCALAR_BOOL},       {"int32", TANDEM_SCALAR_INT32},
    {"uint32", TANDEM_SCALAR_UINT32},   {"float32", TANDEM_SCALAR_FLOAT32},
    {"int64", TANDEM_SCALAR_INT64},     {"uint64", TANDEM_SCALAR_UINT64},
    {"float64", TANDEM_SCALAR_FLOAT64}, {NULL, 0}};

/* One spec constant value: bool, int, float, or (type name, value). */
static int tpy_spec_value(PyObject *v, tandem_spec_constant_t *c) {
  int type = 0;
  if (PyTuple_Check(v) && PyTuple_GET_SIZE(v) == 2) {
    if (tpy_enum(PyTuple_GET_ITEM(v, 0), tpy_scalar_types, "specialization constant type", &type) <
        0)
      return -1;
    v = PyTuple_GET_ITEM(v, 1);
  } else if (PyBool_Check(v)) {
    type = TANDEM_SCALAR_BOOL;
  } else if (PyFloat_Check(v)) {
    type = TANDEM_SCALAR_FLOAT32;
  } else if (PyLong_Check(v)) {
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      type = TANDEM_SCALAR_UINT64;
    } else if (x < INT32_MIN) {
      type = TANDEM_SCALAR_INT64;
    } else if (x < 0) {
      type = TANDEM_SCALAR_INT32;
    } else if (x <= UINT32_MAX) {
      type = TANDEM_SCALAR_UINT32;
    } else {
      type = TANDEM_SCALAR_UINT64;
    }
  } else {
    PyErr_Format(PyExc_TypeError,
                 "specialization constant %u: give a bool, int, float or (type, value), not %.80s",
                 c->id, Py_TYPE(v)->tp_name);
    return -1;
  }
  c->type = (tandem_scalar_type_t)type;
  switch (type) {
    case TANDEM_SCALAR_BOOL: c->value.b = PyObject_IsTrue(v) == 1; break;
    case TANDEM_SCALAR_INT32: c->value.i32 = (int32_t)PyLong_AsLong(v); break;
    case TANDEM_SCALAR_UINT32: c->value.u32 = (uint32_t)PyLong_AsUnsignedLong(v); break;
    case TANDEM_SCALAR_INT64: c->value.i64 = PyLong_AsLongLong(v); break;
    case TANDEM_SCALAR_UINT64: c->value.u64 = PyLong_AsUnsignedLongLong(v); break;
    case TANDEM_SCALAR_FLOAT32: c->value.f32 = (float)PyFloat_AsDouble(v); break;
    case TANDEM_SCALAR_FLOAT64: c->value.f64 = PyFloat_AsDouble(v); break;
  }
  return PyErr_Occurred() ? -1 : 0;
}

/* runtime.kernel(glsl=None, spirv=None, *, bindings, push_constant_bytes=0,
 *                workgroups=None, local_size=None, spec_constants=None,
 *                entry_point=None, name=None, required_subgroup_size=0, spirv_path=None) */
static PyObject *tpy_runtime_kernel(tpy_runtime_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"glsl",           "spirv",
                          "bindings",       "push_constant_bytes",
                          "workgroups",     "local_size",
                          "spec_constants", "entry_point",
                          "name",           "required_subgroup_size",
                          "spirv_path",     NULL};
  const char *glsl = NULL, *entry = NULL, *name = NULL, *path = NULL;
  PyObject *spirv = NULL, *bindings = NULL, *push = NULL, *wg = NULL, *local = NULL, *spec = NULL,
           *subgroup = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|zO$OOOOOzzOz", names, &glsl, &spirv, &bindings,
                                   &push, &wg, &local, &spec, &entry, &name, &subgroup, &path))
    return NULL;
  if (!tpy_open(self)) return NULL;
  int sources = (glsl != NULL) + (spirv != NULL && spirv != Py_None) + (path != NULL);
  if (sources != 1) {
    PyErr_SetString(PyExc_ValueError,
                    "give exactly one of glsl= (source text), spirv= (bytes) or spirv_path=");
    return NULL;
  }
  tandem_kernel_desc_t d;
  tandem_kernel_desc_init(&d);
  tandem_binding_contract_t b[TANDEM_MAX_BINDINGS];
  tandem_spec_constant_t sc[TANDEM_MAX_SPEC_CONSTANTS];
  d.name = name;
  d.entry_point = entry;
  d.glsl_source = glsl;
  d.spirv_path = path;
  if (bindings && bindings != Py_None) {
    if (tpy_bindings(bindings, b, &d.binding_count) < 0) return NULL;
    d.bindings = b;
  }
  if (push && tpy_u32(push, "push_constant_bytes", &d.push_constant_bytes) < 0) return NULL;
  if (wg && wg != Py_None && tpy_dims(wg, "workgroups", d.workgroups) < 0) return NULL;
  if (local && local != Py_None && tpy_dims(local, "local_size", d.local_size) < 0) return NULL;
  if (subgroup && tpy_u32(subgroup, "required_subgroup_size", &d.required_subgroup_size) < 0)
    return NULL;
  if (spec && spec != Py_None) {
    if (!PyDict_Check(spec)) {
      PyErr_SetString(PyExc_TypeError, "spec_constants must be a dict {constant_id: value}");
      return NULL;
    }
    if (PyDict_Size(spec) > TANDEM_MAX_SPEC_CONSTANTS) {
      PyErr_Format(PyExc_ValueError, "%zd specialization constants: at most %d", PyDict_Size(spec),
                   TANDEM_MAX_SPEC_CONSTANTS);
      return NULL;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(spec, &pos, &key, &value)) {
      tandem_spec_constant_t *c = &sc[d.spec_constant_count];
      memset(c, 0, sizeof *c);
      if (tpy_u32(key, "specialization constant id", &c->id) < 0) return NULL;
      if (tpy_spec_value(value, c) < 0) return NULL;
      d.spec_constant_count++;
    }
    d.spec_constants = sc;
  }
  Py_buffer code = {0};
  if (spirv && spirv != Py_None) {
    if (PyObject_GetBuffer(spirv, &code, PyBUF_CONTIG_RO) < 0) return NULL;
    d.spirv = code.buf;
    d.spirv_size = (size_t)code.len;
  }
  tandem_kernel_t *k = NULL;
  tandem_status_t s;
  Py_BEGIN_ALLOW_THREADS
  s = tandem_kernel_create(self->rt, &d, &k);
  Py_END_ALLOW_THREADS
  if (code.obj) PyBuffer_Release(&code);
  if (s != TANDEM_OK) return tpy_raise(s);
  tpy_kernel_obj_t *o = PyObject_New(tpy_kernel_obj_t, &tpy_kernel_type);
  if (!o) {
    tandem_kernel_release(k);
    return NULL;
  }
  Py_INCREF(self);
  o->runtime = self;
  o->kernel = k;
  return (PyObject *)o;
}

/* The emulated NPU's xclbin, beside the libtandem this process loaded
 * (tandem/tandem_emu_kernels.xclbin in the build tree and under lib/ when
 * installed). */
static int tpy_emulated_xclbin(char *out, size_t cap) {
  Dl_info info;
  if (!dladdr((void *)tandem_version, &info) || !info.dli_fname) return -1;
  const char *slash = strrchr(info.dli_fname, '/');
  size_t dir = slash ? (size_t)(slash - info.dli_fname) : 0;
  int n = snprintf(out, cap, "%.*s%standem/tandem_emu_kernels.xclbin", (int)dir, info.dli_fname,
                   slash ? "/" : "");
  return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* runtime.npu_program(kernel, *, bindings, scalar_count=0, xclbin="@emulated",
 *                     name=None, instructions=None) */
static PyObject *tpy_runtime_npu_program(tpy_runtime_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"kernel",       "bindings", "scalar_count", "xclbin", "name",
                          "instructions", NULL};
  const char *kernel, *xclbin = "@emulated", *name = NULL;
  PyObject *bindings = NULL, *scalars = NULL, *instr = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|$OOzzO", names, &kernel, &bindings, &scalars,
                                   &xclbin, &name, &instr))
    return NULL;
  if (!tpy_open(self)) return NULL;
  if (!bindings) {
    PyErr_SetString(PyExc_TypeError, "npu_program() needs bindings=[(bytes, access), ...]");
    return NULL;
  }
  tandem_npu_program_desc_t d;
  tandem_npu_program_desc_init(&d);
  tandem_binding_contract_t b[TANDEM_MAX_BINDINGS];
  if (tpy_bindings(bindings, b, &d.binding_count) < 0) return NULL;
  d.bindings = b;
  if (scalars && tpy_u32(scalars, "scalar_count", &d.scalar_count) < 0) return NULL;
  char path[4096];
  if (!xclbin || strcmp(xclbin, "@emulated") == 0 || strcmp(xclbin, "emulated") == 0) {
    if (tpy_emulated_xclbin(path, sizeof path) < 0) {
      PyErr_SetString(PyExc_RuntimeError, "cannot tell where libtandem was loaded from");
      return NULL;
    }
    xclbin = path;
  }
  d.program_path = xclbin;
  d.kernel_name = kernel;
  d.name = name;
  Py_buffer code = {0};
  /* An instruction stream is XRT's: its extension, chained only when given. */
  tandem_xrt_program_desc_t xrt;
  tandem_xrt_program_desc_init(&xrt);
  if (instr && instr != Py_None) {
    if (PyObject_GetBuffer(instr, &code, PyBUF_CONTIG_RO) < 0) return NULL;
    xrt.instructions = code.buf;
    xrt.instruction_bytes = (size_t)code.len;
    d.next = &xrt;
  }
  tandem_npu_program_t *p = NULL;
  tandem_status_t s;
  Py_BEGIN_ALLOW_THREADS
  s = tandem_npu_program_create(self->rt, &d, &p);
  Py_END_ALLOW_THREADS
  if (code.obj) PyBuffer_Release(&code);
  if (s != TANDEM_OK) return tpy_raise(s);
  tpy_npu_program_obj_t *o = PyObject_New(tpy_npu_program_obj_t, &tpy_npu_program_type);
  if (!o) {
    tandem_npu_program_release(p);
    return NULL;
  }
  Py_INCREF(self);
  o->runtime = self;
  o->program = p;
  return (PyObject *)o;
}

static PyObject *tpy_runtime_graph(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  tandem_graph_t *g = NULL;
  TPY_CHECK(tandem_graph_create(self->rt, &g));
  tpy_graph_obj_t *o = PyObject_New(tpy_graph_obj_t, &tpy_graph_type);
  if (!o) {
    tandem_graph_release(g);
    return NULL;
  }
  Py_INCREF(self);
  o->runtime = self;
  o->graph = g;
  o->keep = PyList_New(0);
  if (!o->keep) {
    Py_DECREF(o);
    return NULL;
  }
  return (PyObject *)o;
}

static PyObject *tpy_runtime_trace_start(tpy_runtime_t *self, PyObject *args) {
  unsigned int capacity = 65536;
  if (!PyArg_ParseTuple(args, "|I", &capacity)) return NULL;
  if (!tpy_open(self)) return NULL;
  TPY_CHECK(tandem_runtime_trace_start(self->rt, capacity));
  Py_RETURN_NONE;
}

static PyObject *tpy_runtime_trace_stop(tpy_runtime_t *self, PyObject *noargs) {
  if (!tpy_open(self)) return NULL;
  tandem_trace_t *t = NULL;
  TPY_CHECK(tandem_runtime_trace_stop(self->rt, &t));
  tpy_trace_obj_t *o = PyObject_New(tpy_trace_obj_t, &tpy_trace_type);
  if (!o) {
    tandem_trace_release(t);
    return NULL;
  }
  o->trace = t;
  return (PyObject *)o;
}

static PyObject *tpy_runtime_cuda_signal(tpy_runtime_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"stream", NULL};
  PyObject *stream = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", names, &stream)) return NULL;
  if (!tpy_open(self)) return NULL;
  return tpy_cuda_signal(self, stream);
}

static PyMethodDef tpy_runtime_methods[] = {
    {"close", (PyCFunction)tpy_runtime_close, METH_NOARGS,
     "Gives up the runtime; objects made from it keep working until released."},
    {"__enter__", (PyCFunction)tpy_runtime_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)tpy_runtime_exit, METH_VARARGS, NULL},
    {"open_gpu", (PyCFunction)tpy_runtime_open_gpu, METH_NOARGS,
     "Opens the GPU now (else on first use)."},
    {"open_npu", (PyCFunction)tpy_runtime_open_npu, METH_NOARGS,
     "Opens the NPU now (else on first use)."},
    {"gpu_count", (PyCFunction)tpy_runtime_gpu_count, METH_NOARGS,
     "Vulkan devices the loader reports."},
    {"gpu_info", (PyCFunction)tpy_runtime_gpu_info, METH_VARARGS,
     "gpu_info(index=None) -> DeviceInfo of device |index| (None: the runtime's own)."},
    {"npu_info", (PyCFunction)tpy_runtime_npu_info, METH_NOARGS,
     "npu_info() -> NpuInfo (opens the NPU)."},
    {"statistics", (PyCFunction)tpy_runtime_statistics, METH_NOARGS, "statistics() -> Statistics."},
    {"lanes", (PyCFunction)tpy_runtime_lanes, METH_NOARGS,
     "lanes() -> [LaneInfo] for every lane id."},
    {"trim", (PyCFunction)tpy_runtime_trim, METH_NOARGS, "Gives back memory kept for reuse."},
    {"buffer", (PyCFunction)(void (*)(void))tpy_runtime_buffer, METH_VARARGS | METH_KEYWORDS,
     "buffer(size, placement='host_visible', *, exportable=False) -> Buffer (zero-filled)."},
    {"kernel", (PyCFunction)(void (*)(void))tpy_runtime_kernel, METH_VARARGS | METH_KEYWORDS,
     "kernel(glsl=None, spirv=None, *, bindings, push_constant_bytes=0, workgroups=None, "
     "local_size=None, spec_constants=None, entry_point=None, name=None, "
     "required_subgroup_size=0, spirv_path=None) -> Kernel."},
    {"npu_program", (PyCFunction)(void (*)(void))tpy_runtime_npu_program,
     METH_VARARGS | METH_KEYWORDS,
     "npu_program(kernel, *, bindings, scalar_count=0, xclbin='@emulated', name=None, "
     "instructions=None) -> NpuProgram."},
    {"graph", (PyCFunction)tpy_runtime_graph, METH_NOARGS, "graph() -> an empty Graph."},
    {"trace_start", (PyCFunction)tpy_runtime_trace_start, METH_VARARGS,
     "trace_start(capacity=65536): starts a bounded trace (see Runtime.trace)."},
    {"trace_stop", (PyCFunction)tpy_runtime_trace_stop, METH_NOARGS, "trace_stop() -> Trace."},
    {"cuda_signal", (PyCFunction)(void (*)(void))tpy_runtime_cuda_signal,
     METH_VARARGS | METH_KEYWORDS,
     "cuda_signal(stream=None) -> (lane, value): makes |stream| (a CUDA stream handle as torch's "
     "Stream.cuda_stream gives it, 0 the NULL stream; or DLPack's 1 / 2) signal a timeline tandem imported; pass the pair in submit(waits=[...]) so that "
     "submission waits, on the GPU, for the stream's work so far."},
    {NULL}};

static PyObject *tpy_runtime_closed(tpy_runtime_t *self, void *closure) {
  return PyBool_FromLong(self->rt == NULL);
}

static PyGetSetDef tpy_runtime_getset[] = {
    {"validation_message_count", (getter)tpy_runtime_validation_count, NULL,
     "validation messages this runtime counted (0 when closed)", NULL},
    {"closed", (getter)tpy_runtime_closed, NULL, "close() was called", NULL},
    {NULL}};

static PyTypeObject tpy_runtime_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.Runtime",
    .tp_basicsize = sizeof(tpy_runtime_t),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Runtime(**options): tandem's allocation and scheduling domain (a context manager).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)tpy_runtime_init,
    .tp_dealloc = (destructor)tpy_runtime_dealloc,
    .tp_methods = tpy_runtime_methods,
    .tp_getset = tpy_runtime_getset,
};

/*============================================================================
 * Buffers and views
 *============================================================================*/

static void tpy_buffer_dealloc(tpy_buffer_t *self) {
  tpy_cuda_buffer_free(self);
  tandem_buffer_t *b = self->buffer;
  Py_BEGIN_ALLOW_THREADS
  tandem_buffer_release(b);
  Py_END_ALLOW_THREADS
  Py_XDECREF(self->runtime);
  PyObject_Free(self);
}

static PyObject *tpy_new_view(tpy_buffer_t *b, uint64_t offset, uint64_t length) {
  tandem_view_t v;
  tandem_status_t s = tandem_buffer_view(b->buffer, offset, length, &v);
  if (s != TANDEM_OK) return tpy_raise(s);
  tpy_view_obj_t *o = PyObject_New(tpy_view_obj_t, &tpy_view_type);
  if (!o) return NULL;
  Py_INCREF(b);
  o->buffer = b;
  o->offset = offset;
  o->length = length;
  return (PyObject *)o;
}

/* buf[a:b] / view[a:b]: a view of bytes a..b of the range (step 1). */
static PyObject *tpy_slice(tpy_buffer_t *b, uint64_t base, uint64_t length, PyObject *key) {
  if (!PySlice_Check(key)) {
    PyErr_SetString(PyExc_TypeError, "index a buffer with a byte slice (buf[offset:end])");
    return NULL;
  }
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
  if (step != 1) {
    PyErr_SetString(PyExc_ValueError, "a view is a contiguous byte range: slice step must be 1");
    return NULL;
  }
  Py_ssize_t n = PySlice_AdjustIndices((Py_ssize_t)length, &start, &stop, step);
  if (n <= 0) {
    PyErr_Format(PyExc_ValueError, "empty view [%zd:%zd] of %llu bytes: a view is at least 1 byte",
                 start, stop, (unsigned long long)length);
    return NULL;
  }
  return tpy_new_view(b, base + (uint64_t)start, (uint64_t)n);
}

static PyObject *tpy_buffer_subscript(tpy_buffer_t *self, PyObject *key) {
  return tpy_slice(self, 0, self->size, key);
}

static PyObject *tpy_buffer_view(tpy_buffer_t *self, PyObject *args) {
  unsigned long long offset, length;
  if (!PyArg_ParseTuple(args, "KK", &offset, &length)) return NULL;
  return tpy_new_view(self, offset, length);
}

static Py_ssize_t tpy_buffer_len(tpy_buffer_t *self) { return (Py_ssize_t)self->size; }

static PyObject *tpy_new_map(tpy_buffer_t *b, tandem_view_t v, bool write, bool wait,
                             PyObject *dtype, PyObject *shape) {
  tpy_map_obj_t *m = PyObject_New(tpy_map_obj_t, &tpy_map_type);
  if (!m) return NULL;
  Py_INCREF(b);
  m->buffer = b;
  memset(&m->map, 0, sizeof m->map);
  m->write = write;
  m->live = false;
  m->mapped = false;
  m->dlpack = 0;
  m->dtype = dtype ? Py_NewRef(dtype) : Py_NewRef(Py_None);
  m->shape = shape ? Py_NewRef(shape) : Py_NewRef(Py_None);
  tandem_status_t s;
  if (wait) {
    Py_BEGIN_ALLOW_THREADS
    s = write ? tandem_map_write(v, &m->map) : tandem_map_read(v, &m->map);
    Py_END_ALLOW_THREADS
  } else {
    s = write ? tandem_try_map_write(v, &m->map) : tandem_try_map_read(v, &m->map);
  }
  if (s != TANDEM_OK) {
    Py_DECREF(m);
    return tpy_raise(s);
  }
  m->live = m->mapped = true;
  return (PyObject *)m;
}

/* map_read(dtype=None, shape=None, *, wait=True) on a buffer or view */
static PyObject *tpy_map_common(PyObject *self, PyObject *args, PyObject *kw, bool write) {
  static char *names[] = {"dtype", "shape", "wait", NULL};
  PyObject *dtype = NULL, *shape = NULL;
  int wait = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO$p", names, &dtype, &shape, &wait)) return NULL;
  tandem_view_t v;
  tpy_buffer_t *owner;
  if (tpy_get_view(self, "self", &v, &owner) < 0) return NULL;
  return tpy_new_map(owner, v, write, wait != 0, dtype, shape);
}
static PyObject *tpy_map_read_m(PyObject *self, PyObject *args, PyObject *kw) {
  return tpy_map_common(self, args, kw, false);
}
static PyObject *tpy_map_write_m(PyObject *self, PyObject *args, PyObject *kw) {
  return tpy_map_common(self, args, kw, true);
}

static PyObject *tpy_make_tensor(PyObject *source, PyObject *args, PyObject *kw);

static PyObject *tpy_dlpack_of(PyObject *self, PyObject *args, PyObject *kw) {
  PyObject *empty = PyTuple_New(0);
  if (!empty) return NULL;
  PyObject *t = tpy_make_tensor(self, empty, NULL);
  Py_DECREF(empty);
  if (!t) return NULL;
  PyObject *m = PyObject_GetAttrString(t, "__dlpack__");
  Py_DECREF(t);
  if (!m) return NULL;
  PyObject *r = PyObject_Call(m, args, kw);
  Py_DECREF(m);
  return r;
}

static PyObject *tpy_dlpack_device_of(PyObject *self, PyObject *noargs) {
  PyObject *empty = PyTuple_New(0);
  if (!empty) return NULL;
  PyObject *t = tpy_make_tensor(self, empty, NULL);
  Py_DECREF(empty);
  if (!t) return NULL;
  PyObject *r = PyObject_CallMethod(t, "__dlpack_device__", NULL);
  Py_DECREF(t);
  return r;
}

static PyObject *tpy_buffer_memory(tpy_buffer_t *self, PyObject *noargs) {
  tandem_buffer_memory_t m;
  TPY_CHECK(tandem_buffer_memory(self->buffer, &m));
  return Py_BuildValue("{sIsIsIsKsO}", "memory_type", m.memory_type, "properties", m.properties,
                       "heap", m.heap, "heap_bytes", (unsigned long long)m.heap_bytes,
                       "heap_device_local", m.heap_device_local ? Py_True : Py_False);
}

static PyMethodDef tpy_buffer_methods[] = {
    {"view", (PyCFunction)tpy_buffer_view, METH_VARARGS,
     "view(offset, length) -> View (also buf[a:b])."},
    {"map_read", (PyCFunction)(void (*)(void))tpy_map_read_m, METH_VARARGS | METH_KEYWORDS,
     "map_read(dtype=None, shape=None, *, wait=True) -> Map; `with buf.map_read('f4') as a:` gives a "
     "read-only NumPy array over the mapped bytes (no copy)."},
    {"map_write", (PyCFunction)(void (*)(void))tpy_map_write_m, METH_VARARGS | METH_KEYWORDS,
     "map_write(dtype=None, shape=None, *, wait=True) -> Map with a writable array."},
    {"tensor", (PyCFunction)(void (*)(void))tpy_make_tensor, METH_VARARGS | METH_KEYWORDS,
     "tensor(dtype='uint8', shape=None) -> a DLPack exporter of the buffer as dtype x shape."},
    {"__dlpack__", (PyCFunction)(void (*)(void))tpy_dlpack_of, METH_VARARGS | METH_KEYWORDS,
     "DLPack: the whole buffer as uint8 (kDLCPU when host-visible, kDLCUDA when exportable GPU memory)."},
    {"__dlpack_device__", (PyCFunction)tpy_dlpack_device_of, METH_NOARGS, NULL},
    {"memory", (PyCFunction)tpy_buffer_memory, METH_NOARGS,
     "memory() -> dict: the Vulkan memory type."},
    {NULL}};

static PyObject *tpy_buffer_get_size(tpy_buffer_t *self, void *c) {
  return PyLong_FromUnsignedLongLong(self->size);
}
static PyObject *tpy_buffer_get_placement(tpy_buffer_t *self, void *c) {
  for (const tpy_name_t *t = tpy_placements; t->name; t++)
    if (t->value == self->placement) return PyUnicode_FromString(t->name);
  return PyUnicode_FromString("unknown");
}
static PyObject *tpy_buffer_get_exportable(tpy_buffer_t *self, void *c) {
  return PyBool_FromLong(self->exportable);
}
static PyObject *tpy_buffer_get_runtime(tpy_buffer_t *self, void *c) {
  return Py_NewRef((PyObject *)self->runtime);
}

static PyGetSetDef tpy_buffer_getset[] = {
    {"size", (getter)tpy_buffer_get_size, NULL, "bytes", NULL},
    {"nbytes", (getter)tpy_buffer_get_size, NULL, "bytes", NULL},
    {"placement", (getter)tpy_buffer_get_placement, NULL, "'gpu_local', 'host_visible', ...", NULL},
    {"exportable", (getter)tpy_buffer_get_exportable, NULL, "created with exportable=True", NULL},
    {"runtime", (getter)tpy_buffer_get_runtime, NULL, "the Runtime it belongs to", NULL},
    {NULL}};

static PyObject *tpy_buffer_repr(tpy_buffer_t *self) {
  PyObject *p = tpy_buffer_get_placement(self, NULL);
  PyObject *r =
      PyUnicode_FromFormat("<tandem.Buffer %llu bytes %U>", (unsigned long long)self->size, p);
  Py_XDECREF(p);
  return r;
}

static PyMappingMethods tpy_buffer_mapping = {(lenfunc)tpy_buffer_len,
                                              (binaryfunc)tpy_buffer_subscript, NULL};

static PyTypeObject tpy_buffer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.Buffer",
    .tp_basicsize = sizeof(tpy_buffer_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tandem buffer (make it with Runtime.buffer). buf[a:b] is a View of bytes a..b.",
    .tp_dealloc = (destructor)tpy_buffer_dealloc,
    .tp_methods = tpy_buffer_methods,
    .tp_getset = tpy_buffer_getset,
    .tp_as_mapping = &tpy_buffer_mapping,
    .tp_repr = (reprfunc)tpy_buffer_repr,
};

static void tpy_view_dealloc(tpy_view_obj_t *self) {
  Py_XDECREF(self->buffer);
  PyObject_Free(self);
}
static PyObject *tpy_view_subscript(tpy_view_obj_t *self, PyObject *key) {
  return tpy_slice(self->buffer, self->offset, self->length, key);
}
static Py_ssize_t tpy_view_len(tpy_view_obj_t *self) { return (Py_ssize_t)self->length; }
static PyObject *tpy_view_repr(tpy_view_obj_t *self) {
  return PyUnicode_FromFormat("<tandem.View [%llu:%llu] of %llu bytes>",
                              (unsigned long long)self->offset,
                              (unsigned long long)(self->offset + self->length),
                              (unsigned long long)self->buffer->size);
}
static PyObject *tpy_view_get_offset(tpy_view_obj_t *self, void *c) {
  return PyLong_FromUnsignedLongLong(self->offset);
}
static PyObject *tpy_view_get_length(tpy_view_obj_t *self, void *c) {
  return PyLong_FromUnsignedLongLong(self->length);
}
static PyObject *tpy_view_get_buffer(tpy_view_obj_t *self, void *c) {
  return Py_NewRef((PyObject *)self->buffer);
}
static PyGetSetDef tpy_view_getset[] = {{"offset", (getter)tpy_view_get_offset, NULL, NULL, NULL},
                                        {"length", (getter)tpy_view_get_length, NULL, NULL, NULL},
                                        {"nbytes", (getter)tpy_view_get_length, NULL, NULL, NULL},
                                        {"buffer", (getter)tpy_view_get_buffer, NULL, NULL, NULL},
                                        {NULL}};
static PyMethodDef tpy_view_methods[] = {
    {"map_read", (PyCFunction)(void (*)(void))tpy_map_read_m, METH_VARARGS | METH_KEYWORDS,
     "As Buffer.map_read."},
    {"map_write", (PyCFunction)(void (*)(void))tpy_map_write_m, METH_VARARGS | METH_KEYWORDS,
     "As Buffer.map_write."},
    {"tensor", (PyCFunction)(void (*)(void))tpy_make_tensor, METH_VARARGS | METH_KEYWORDS,
     "As Buffer.tensor."},
    {"__dlpack__", (PyCFunction)(void (*)(void))tpy_dlpack_of, METH_VARARGS | METH_KEYWORDS, NULL},
    {"__dlpack_device__", (PyCFunction)tpy_dlpack_device_of, METH_NOARGS, NULL},
    {NULL}};
static PyMappingMethods tpy_view_mapping = {(lenfunc)tpy_view_len, (binaryfunc)tpy_view_subscript,
                                            NULL};
static PyTypeObject tpy_view_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.View",
    .tp_basicsize = sizeof(tpy_view_obj_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A byte range (buffer, offset, length) of a Buffer; buf[a:b] makes one.",
    .tp_dealloc = (destructor)tpy_view_dealloc,
    .tp_methods = tpy_view_methods,
    .tp_getset = tpy_view_getset,
    .tp_as_mapping = &tpy_view_mapping,
    .tp_repr = (reprfunc)tpy_view_repr,
};

/*============================================================================
 * Maps
 *============================================================================
 *
 * A Map holds one tandem map. unmap() (or leaving the with block) ends it
 * and marks the Map dead: the arrays made over it (tandem.MappedArray, in
 * __init__.py) then refuse every use with an exception. The bytes stay
 * valid memory after that, because an array keeps the Map, the Map keeps
 * its Buffer and tandem keeps host-visible memory mapped for the buffer's
 * life: a stray pointer reads stale data, it never faults. A DLPack tensor
 * over a map holds the tandem map itself until the consumer frees it.
 */

static void tpy_map_end(tpy_map_obj_t *m) {
  m->live = false;
  if (m->mapped && m->dlpack == 0) {
    m->mapped = false;
    tandem_unmap(&m->map);
  }
}

static void tpy_map_dealloc(tpy_map_obj_t *self) {
  tpy_map_end(self);
  Py_XDECREF(self->buffer);
  Py_XDECREF(self->dtype);
  Py_XDECREF(self->shape);
  PyObject_Free(self);
}

static PyObject *tpy_map_unmap(tpy_map_obj_t *self, PyObject *noargs) {
  tpy_map_end(self);
  Py_RETURN_NONE;
}

static PyObject *tpy_map_array(tpy_map_obj_t *self, PyObject *args) {
  PyObject *dtype = self->dtype, *shape = self->shape;
  if (!PyArg_ParseTuple(args, "|OO", &dtype, &shape)) return NULL;
  if (!self->live) {
    PyErr_SetString(PyExc_ValueError, "this map was unmapped: map the buffer again");
    return NULL;
  }
  PyObject *hook = tpy_hook("make_array");
  if (!hook) return PyMemoryView_FromObject((PyObject *)self);
  return PyObject_CallFunctionObjArgs(hook, (PyObject *)self, dtype, shape, NULL);
}

static PyObject *tpy_map_enter(tpy_map_obj_t *self, PyObject *noargs) {
  PyObject *empty = PyTuple_New(0);
  if (!empty) return NULL;
  PyObject *r = tpy_map_array(self, empty);
  Py_DECREF(empty);
  return r;
}

static PyObject *tpy_map_exit(tpy_map_obj_t *self, PyObject *args) {
  tpy_map_end(self);
  Py_RETURN_FALSE;
}

static int tpy_map_getbuffer(tpy_map_obj_t *self, Py_buffer *view, int flags) {
  if (!self->live) {
    PyErr_SetString(PyExc_BufferError, "this map was unmapped: map the buffer again");
    return -1;
  }
  return PyBuffer_FillInfo(view, (PyObject *)self, self->map.data, (Py_ssize_t)self->map.length,
                           self->write ? 0 : 1, flags);
}

static PyBufferProcs tpy_map_as_buffer = {(getbufferproc)tpy_map_getbuffer, NULL};

static PyObject *tpy_map_get_live(tpy_map_obj_t *self, void *c) {
  return PyBool_FromLong(self->live);
}
static PyObject *tpy_map_get_writable(tpy_map_obj_t *self, void *c) {
  return PyBool_FromLong(self->write);
}
static PyObject *tpy_map_get_nbytes(tpy_map_obj_t *self, void *c) {
  return PyLong_FromUnsignedLongLong(self->map.length);
}
static PyObject *tpy_map_get_address(tpy_map_obj_t *self, void *c) {
  if (!self->live) {
    PyErr_SetString(PyExc_ValueError, "this map was unmapped: map the buffer again");
    return NULL;
  }
  return PyLong_FromVoidPtr(self->map.data);
}

static PyGetSetDef tpy_map_getset[] = {
    {"live", (getter)tpy_map_get_live, NULL, "False after unmap()", NULL},
    {"writable", (getter)tpy_map_get_writable, NULL, "a write map", NULL},
    {"nbytes", (getter)tpy_map_get_nbytes, NULL, "bytes mapped", NULL},
    {"address", (getter)tpy_map_get_address, NULL, "the host address of the first byte", NULL},
    {NULL}};

static PyMethodDef tpy_map_methods[] = {
    {"unmap", (PyCFunction)tpy_map_unmap, METH_NOARGS,
     "Ends the map; its arrays refuse use afterwards."},
    {"array", (PyCFunction)tpy_map_array, METH_VARARGS,
     "array(dtype=None, shape=None) -> a NumPy array over the mapped bytes (no copy)."},
    {"__enter__", (PyCFunction)tpy_map_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)tpy_map_exit, METH_VARARGS, NULL},
    {"tensor", (PyCFunction)(void (*)(void))tpy_make_tensor, METH_VARARGS | METH_KEYWORDS,
     "tensor(dtype='uint8', shape=None) -> a DLPack exporter (kDLCPU) of the mapped bytes."},
    {"__dlpack__", (PyCFunction)(void (*)(void))tpy_dlpack_of, METH_VARARGS | METH_KEYWORDS, NULL},
    {"__dlpack_device__", (PyCFunction)tpy_dlpack_device_of, METH_NOARGS, NULL},
    {NULL}};

static PyTypeObject tpy_map_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.Map",
    .tp_basicsize = sizeof(tpy_map_obj_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "A host map of a view (Buffer.map_read / map_write); a context manager giving an array.",
    .tp_dealloc = (destructor)tpy_map_dealloc,
    .tp_methods = tpy_map_methods,
    .tp_getset = tpy_map_getset,
    .tp_as_buffer = &tpy_map_as_buffer,
};

/*============================================================================
 * DLPack
 *============================================================================*/

static const struct {
  const char *name;
  uint8_t code, bits;
} tpy_dtypes[] = {{"uint8", 1, 8},    {"int8", 0, 8},     {"uint16", 1, 16},  {"int16", 0, 16},
                  {"uint32", 1, 32},  {"int32", 0, 32},   {"uint64", 1, 64},  {"int64", 0, 64},
                  {"float16", 2, 16}, {"float32", 2, 32}, {"float64", 2, 64}, {"bfloat16", 4, 16},
                  {"u1", 1, 8},       {"i1", 0, 8},       {"u2", 1, 16},      {"i2", 0, 16},
                  {"u4", 1, 32},      {"i4", 0, 32},      {"u8", 1, 64},      {"i8", 0, 64},
                  {"f2", 2, 16},      {"f4", 2, 32},      {"f8", 2, 64},      {"bool", 6, 8}};

/* dtype: a name or anything with .name / str() naming one (numpy dtypes, types). */
static int tpy_dtype(PyObject *o, tpy_dl_dtype_t *out) {
  if (!o || o == Py_None) {
    *out = (tpy_dl_dtype_t){1, 8, 1};
    return 0;
  }
  PyObject *name = NULL;
  if (PyUnicode_Check(o)) {
    name = Py_NewRef(o);
  } else {
    PyObject *hook = tpy_hook("dtype_name");
    name = hook ? PyObject_CallOneArg(hook, o) : PyObject_Str(o);
    if (!name) return -1;
  }
  const char *s = PyUnicode_AsUTF8(name);
  if (!s) {
    Py_DECREF(name);
    return -1;
  }
  for (size_t i = 0; i < sizeof tpy_dtypes / sizeof tpy_dtypes[0]; i++)
    if (strcmp(s, tpy_dtypes[i].name) == 0) {
      *out = (tpy_dl_dtype_t){tpy_dtypes[i].code, tpy_dtypes[i].bits, 1};
      Py_DECREF(name);
      return 0;
    }
  PyErr_Format(
      PyExc_TypeError,
      "dtype '%s' has no DLPack type here: use uint8/16/32/64, int8..int64, float16/32/64, "
      "bfloat16 or bool",
      s);
  Py_DECREF(name);
  return -1;
}

/* source.tensor(dtype='uint8', shape=None) */
static PyObject *tpy_make_tensor(PyObject *source, PyObject *args, PyObject *kw) {
  static char *names[] = {"dtype", "shape", NULL};
  PyObject *dtype = NULL, *shape = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO", names, &dtype, &shape)) return NULL;
  tpy_tensor_obj_t *t = PyObject_New(tpy_tensor_obj_t, &tpy_tensor_type);
  if (!t) return NULL;
  t->source = Py_NewRef(source);
  uint64_t length;
  if (PyObject_TypeCheck(source, &tpy_map_type)) {
    tpy_map_obj_t *m = (tpy_map_obj_t *)source;
    if (!dtype || dtype == Py_None) dtype = m->dtype;
    if (!shape || shape == Py_None) shape = m->shape;
    t->offset = 0;
    length = m->map.length;
  } else {
    tandem_view_t v;
    if (tpy_get_view(source, "source", &v, NULL) < 0) {
      Py_DECREF(t);
      return NULL;
    }
    t->offset = v.offset;
    length = v.length;
  }
  t->length = length;
  if (tpy_dtype(dtype, &t->dtype) < 0) {
    Py_DECREF(t);
    return NULL;
  }
  uint64_t elem = t->dtype.bits / 8u;
  if (!shape || shape == Py_None) {
    if (length % elem) {
      Py_DECREF(t);
      PyErr_Format(PyExc_ValueError, "%llu bytes are not a whole number of %u-byte elements",
                   (unsigned long long)length, (unsigned)elem);
      return NULL;
    }
    t->ndim = 1;
    t->shape[0] = (int64_t)(length / elem);
  } else {
    PyObject *seq = PyLong_Check(shape) ? PyTuple_Pack(1, shape) : PySequence_Tuple(shape);
    if (!seq) {
      Py_DECREF(t);
      return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    if (n < 1 || n > 8) {
      Py_DECREF(seq);
      Py_DECREF(t);
      PyErr_SetString(PyExc_ValueError, "shape must have 1 to 8 dimensions");
      return NULL;
    }
    uint64_t count = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
      uint64_t d;
      if (tpy_u64(PyTuple_GET_ITEM(seq, i), "shape dimension", &d) < 0) {
        Py_DECREF(seq);
        Py_DECREF(t);
        return NULL;
      }
      t->shape[i] = (int64_t)d;
      count *= d;
    }
    Py_DECREF(seq);
    t->ndim = (int32_t)n;
    if (count * elem > length) {
      Py_DECREF(t);
      PyErr_Format(PyExc_ValueError, "shape needs %llu bytes, the %s has %llu",
                   (unsigned long long)(count * elem),
                   PyObject_TypeCheck(source, &tpy_map_type) ? "map" : "view",
                   (unsigned long long)length);
      return NULL;
    }
  }
  return (PyObject *)t;
}

static void tpy_tensor_dealloc(tpy_tensor_obj_t *self) {
  Py_XDECREF(self->source);
  PyObject_Free(self);
}

/* What a capsule owns: the DLManagedTensor, its shape, and one reference
 * to the object that keeps the bytes valid (a Map or a Buffer). */
typedef struct {
  tpy_dl_managed_t managed;
  int64_t shape[8];
  PyObject *owner;
} tpy_dl_block_t;

static void tpy_dl_deleter(tpy_dl_managed_t *self) {
  tpy_dl_block_t *blk = (tpy_dl_block_t *)self;
  /* Consumers may free their tensor on any thread, with or without the GIL. */
  PyGILState_STATE g = PyGILState_Ensure();
  if (PyObject_TypeCheck(blk->owner, &tpy_map_type)) {
    tpy_map_obj_t *m = (tpy_map_obj_t *)blk->owner;
    if (--m->dlpack == 0 && !m->live) tpy_map_end(m);
  }
  Py_DECREF(blk->owner);
  PyMem_RawFree(blk);
  PyGILState_Release(g);
}

static void tpy_capsule_destructor(PyObject *capsule) {
  /* A capsule nobody consumed still owns its tensor (a consumer renames it
   * "used_dltensor" and calls the deleter itself). */
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  tpy_dl_managed_t *m = PyCapsule_GetPointer(capsule, "dltensor");
  if (m && m->deleter) m->deleter(m);
}

static PyObject *tpy_capsule(tpy_tensor_obj_t *t, void *data, int device_type, int device_id,
                             PyObject *owner) {
  tpy_dl_block_t *blk = PyMem_RawCalloc(1, sizeof *blk);
  if (!blk) return PyErr_NoMemory();
  memcpy(blk->shape, t->shape, sizeof blk->shape);
  blk->managed.dl_tensor.data = data;
  blk->managed.dl_tensor.device.device_type = device_type;
  blk->managed.dl_tensor.device.device_id = device_id;
  blk->managed.dl_tensor.ndim = t->ndim;
  blk->managed.dl_tensor.dtype = t->dtype;
  blk->managed.dl_tensor.shape = blk->shape;
  blk->managed.dl_tensor.strides = NULL;
  blk->managed.dl_tensor.byte_offset = 0;
  blk->managed.manager_ctx = blk;
  blk->managed.deleter = tpy_dl_deleter;
  blk->owner = Py_NewRef(owner);
  if (PyObject_TypeCheck(owner, &tpy_map_type)) ((tpy_map_obj_t *)owner)->dlpack++;
  PyObject *cap = PyCapsule_New(&blk->managed, "dltensor", tpy_capsule_destructor);
  if (!cap) tpy_dl_deleter(&blk->managed);
  return cap;
}

/* Is the source's memory GPU memory CUDA would import (exportable, not host-visible)? */
static tpy_buffer_t *tpy_tensor_buffer(tpy_tensor_obj_t *t) {
  if (PyObject_TypeCheck(t->source, &tpy_map_type)) return ((tpy_map_obj_t *)t->source)->buffer;
  if (PyObject_TypeCheck(t->source, &tpy_view_type)) return ((tpy_view_obj_t *)t->source)->buffer;
  return (tpy_buffer_t *)t->source;
}

static bool tpy_tensor_is_cuda(tpy_tensor_obj_t *t) {
  if (PyObject_TypeCheck(t->source, &tpy_map_type)) return false;
  return tpy_tensor_buffer(t)->placement == TANDEM_PLACEMENT_GPU_LOCAL;
}

static PyObject *tpy_tensor_dlpack(tpy_tensor_obj_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO", names, &stream, &max_version, &dl_device,
                                   &copy))
    return NULL;
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError,
                    "tandem exports its memory without copies; copy=True is not offered");
    return NULL;
  }
  if (tpy_tensor_is_cuda(self)) {
    void *ptr = NULL;
    int dev = 0;
    if (tpy_cuda_buffer_export(tpy_tensor_buffer(self), stream, &ptr, &dev) < 0) return NULL;
    return tpy_capsule(self, (char *)ptr + self->offset, TPY_DL_CUDA, dev,
                       (PyObject *)tpy_tensor_buffer(self));
  }
  if (stream != Py_None && !(PyLong_Check(stream) && PyLong_AsLong(stream) == -1)) {
    PyErr_SetString(PyExc_BufferError, "stream must be None for a kDLCPU tensor");
    return NULL;
  }
  if (PyObject_TypeCheck(self->source, &tpy_map_type)) {
    tpy_map_obj_t *m = (tpy_map_obj_t *)self->source;
    if (!m->live) {
      PyErr_SetString(PyExc_BufferError, "this map was unmapped: map the buffer again");
      return NULL;
    }
    return tpy_capsule(self, m->map.data, TPY_DL_CPU, 0, (PyObject *)m);
  }
  /* A view or buffer: a write map that the capsule holds until the consumer
   * frees the tensor (unmap() is already requested: live is false). */
  tandem_view_t v;
  tpy_buffer_t *owner;
  if (tpy_get_view(self->source, "source", &v, &owner) < 0) return NULL;
  if (owner->placement == TANDEM_PLACEMENT_GPU_LOCAL) {
    PyErr_SetString(PyExc_BufferError,
                    "a GPU_LOCAL buffer is no kDLCPU tensor: create it exportable");
    return NULL;
  }
  tpy_map_obj_t *m = (tpy_map_obj_t *)tpy_new_map(owner, v, true, true, NULL, NULL);
  if (!m) return NULL;
  PyObject *cap = tpy_capsule(self, m->map.data, TPY_DL_CPU, 0, (PyObject *)m);
  m->live = false; /* ends when the tensor is freed */
  Py_DECREF(m);
  return cap;
}

static PyObject *tpy_tensor_dlpack_device(tpy_tensor_obj_t *self, PyObject *noargs) {
  if (tpy_tensor_is_cuda(self)) {
    int dev = 0;
    if (tpy_cuda_buffer_device(tpy_tensor_buffer(self), &dev) < 0) return NULL;
    return Py_BuildValue("(ii)", TPY_DL_CUDA, dev);
  }
  return Py_BuildValue("(ii)", TPY_DL_CPU, 0);
}

static PyMethodDef tpy_tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tpy_tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(stream=None): a 'dltensor' capsule, no copy."},
    {"__dlpack_device__", (PyCFunction)tpy_tensor_dlpack_device, METH_NOARGS, NULL},
    {NULL}};

static PyTypeObject tpy_tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.Tensor",
    .tp_basicsize = sizeof(tpy_tensor_obj_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A DLPack exporter over a map, view or buffer (x.tensor(dtype, shape)).",
    .tp_dealloc = (destructor)tpy_tensor_dealloc,
    .tp_methods = tpy_tensor_methods,
};

/*============================================================================
 * Kernels and NPU programs
 *============================================================================*/

static void tpy_kernel_dealloc(tpy_kernel_obj_t *self) {
  tandem_kernel_release(self->kernel);
  Py_XDECREF(self->runtime);
  PyObject_Free(self);
}

static PyObject *tpy_kernel_info(tpy_kernel_obj_t *self, void *c) {
  tandem_kernel_info_t i;
  tandem_kernel_info_init(&i);
  TPY_CHECK(tandem_kernel_info(self->kernel, &i));
  PyObject *d = Py_BuildValue("{s(III)sOs(III)sIsIsIsIsIsK}", "local_size", i.local_size[0],
                              i.local_size[1], i.local_size[2], "local_size_specialized",
                              i.local_size_specialized ? Py_True : Py_False, "workgroups",
                              i.workgroups[0], i.workgroups[1], i.workgroups[2], "binding_count",
                              i.binding_count, "push_constant_bytes", i.push_constant_bytes,
                              "spec_constant_count", i.spec_constant_count, "shader_features",
                              i.shader_features, "required_subgroup_size", i.required_subgroup_size,
                              "shared_memory_bytes", (unsigned long long)i.shared_memory_bytes);
  return tpy_info("KernelInfo", d);
}
static PyObject *tpy_kernel_name(tpy_kernel_obj_t *self, void *c) {
  return PyUnicode_FromString(tandem_kernel_name(self->kernel));
}
static PyGetSetDef tpy_kernel_getset[] = {{"info", (getter)tpy_kernel_info, NULL, "KernelInfo",
                                           NULL},
                                          {"name", (getter)tpy_kernel_name, NULL, NULL, NULL},
                                          {NULL}};
static PyTypeObject tpy_kernel_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.Kernel",
    .tp_basicsize = sizeof(tpy_kernel_obj_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A GPU kernel with its contract (Runtime.kernel).",
    .tp_dealloc = (destructor)tpy_kernel_dealloc,
    .tp_getset = tpy_kernel_getset,
};

static void tpy_npu_program_dealloc(tpy_npu_program_obj_t *self) {
  tandem_npu_program_release(self->program);
  Py_XDECREF(self->runtime);
  PyObject_Free(self);
}
static PyObject *tpy_npu_program_name(tpy_npu_program_obj_t *self, void *c) {
  return PyUnicode_FromString(tandem_npu_program_name(self->program));
}
static PyGetSetDef tpy_npu_program_getset[] = {
    {"name", (getter)tpy_npu_program_name, NULL, NULL, NULL}, {NULL}};
static PyTypeObject tpy_npu_program_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.NpuProgram",
    .tp_basicsize = sizeof(tpy_npu_program_obj_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An NPU program with its contract (Runtime.npu_program).",
    .tp_dealloc = (destructor)tpy_npu_program_dealloc,
    .tp_getset = tpy_npu_program_getset,
};

/*============================================================================
 * Graphs
 *============================================================================*/

static void tpy_graph_dealloc(tpy_graph_obj_t *self) {
  tandem_graph_release(self->graph);
  Py_XDECREF(self->keep);
  Py_XDECREF(self->runtime);
  PyObject_Free(self);
}

static int tpy_lane(PyObject *o, int *out) {
  *out = TANDEM_LANE_AUTO;
  if (!o || o == Py_None) return 0;
  return tpy_enum(o, tpy_lanes, "lane", out);
}

static PyObject *tpy_node_result(tpy_graph_obj_t *g) {
  return PyLong_FromUnsignedLong(tandem_graph_node_count(g->graph) - 1);
}

/* graph.fill(view, pattern=0, lane=None) -> node */
static PyObject *tpy_graph_fill(tpy_graph_obj_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"view", "pattern", "lane", NULL};
  PyObject *view, *lane_o = NULL;
  unsigned long pattern = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|kO", names, &view, &pattern, &lane_o)) return NULL;
  tandem_view_t v;
  int lane;
  if (tpy_get_view(view, "view", &v, NULL) < 0 || tpy_lane(lane_o, &lane) < 0) return NULL;
  if (pattern > UINT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "pattern is a 32-bit value");
    return NULL;
  }
  TPY_CHECK(tandem_graph_add_fill(self->graph, v, (uint32_t)pattern, (tandem_lane_t)lane));
  if (PyList_Append(self->keep, view) < 0) return NULL;
  return tpy_node_result(self);
}

/* graph.copy(src, dst, lane=None) -> node */
static PyObject *tpy_graph_copy(tpy_graph_obj_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"src", "dst", "lane", NULL};
  PyObject *src, *dst, *lane_o = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O", names, &src, &dst, &lane_o)) return NULL;
  tandem_view_t s, d;
  int lane;
  if (tpy_get_view(src, "src", &s, NULL) < 0 || tpy_get_view(dst, "dst", &d, NULL) < 0 ||
      tpy_lane(lane_o, &lane) < 0)
    return NULL;
  TPY_CHECK(tandem_graph_add_copy(self->graph, s, d, (tandem_lane_t)lane));
  if (PyList_Append(self->keep, src) < 0 || PyList_Append(self->keep, dst) < 0) return NULL;
  return tpy_node_result(self);
}

static int tpy_views(PyObject *o, tandem_view_t *out, uint32_t *count, uint32_t cap) {
  PyObject *seq = PySequence_Fast(o, "views must be a sequence of buffers or views");
  if (!seq) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > (Py_ssize_t)cap) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "%zd views: at most %u", n, cap);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    char what[32];
    snprintf(what, sizeof what, "views[%zd]", i);
    if (tpy_get_view(PySequence_Fast_GET_ITEM(seq, i), what, &out[i], NULL) < 0) {
      Py_DECREF(seq);
      return -1;
    }
  }
  *count = (uint32_t)n;
  Py_DECREF(seq);
  return 0;
}

/* graph.dispatch(kernel, views, push_constants=None, *, workgroups=None, indirect=None) -> node */
static PyObject *tpy_graph_dispatch(tpy_graph_obj_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"kernel", "views", "push_constants", "workgroups", "indirect", NULL};
  PyObject *kernel, *views, *push = Py_None, *wg = Py_None, *indirect = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O|O$OO", names, &tpy_kernel_type, &kernel, &views,
                                   &push, &wg, &indirect))
    return NULL;
  tandem_dispatch_desc_t d;
  tandem_dispatch_desc_init(&d);
  tandem_view_t v[TANDEM_MAX_BINDINGS];
  d.kernel = ((tpy_kernel_obj_t *)kernel)->kernel;
  if (tpy_views(views, v, &d.view_count, TANDEM_MAX_BINDINGS) < 0) return NULL;
  d.views = v;
  if (wg != Py_None && tpy_dims(wg, "workgroups", d.workgroups) < 0) return NULL;
  if (indirect != Py_None && tpy_get_view(indirect, "indirect", &d.indirect, NULL) < 0) return NULL;
  Py_buffer pc = {0};
  if (push != Py_None) {
    if (PyObject_GetBuffer(push, &pc, PyBUF_CONTIG_RO) < 0) return NULL;
    d.push_constants = pc.buf;
    d.push_constant_bytes = (uint32_t)pc.len;
  }
  tandem_status_t s = tandem_graph_add_dispatch_node(self->graph, &d, NULL);
  if (pc.obj) PyBuffer_Release(&pc);
  if (s != TANDEM_OK) return tpy_raise(s);
  if (PyList_Append(self->keep, kernel) < 0 || PyList_Append(self->keep, views) < 0) return NULL;
  return tpy_node_result(self);
}

/* graph.npu_run(program, views, scalars=()) -> node */
static PyObject *tpy_graph_npu_run(tpy_graph_obj_t *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"program", "views", "scalars", NULL};
  PyObject *program, *views, *scalars = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O|O", names, &tpy_npu_program_type, &program,
                                   &views, &scalars))
    return NULL;
  tandem_view_t v[TANDEM_MAX_BINDINGS];
  uint32_t nv = 0, ns = 0, sc[TANDEM_MAX_NPU_SCALARS];
  if (tpy_views(views, v, &nv, TANDEM_MAX_BINDINGS) < 0) return NULL;
  if (scalars) {
    PyObject *seq = PySequence_Fast(scalars, "scalars must be a sequence of 32-bit ints");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > TANDEM_MAX_NPU_SCALARS) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_ValueError, "%zd scalars: at most %d", n, TANDEM_MAX_NPU_SCALARS);
      return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
      if (tpy_u32(PySequence_Fast_GET_ITEM(seq, i), "scalar", &sc[i]) < 0) {
        Py_DECREF(seq);
        return NULL;
      }
    ns = (uint32_t)n;
    Py_DECREF(seq);
  }
  TPY_CHECK(tandem_graph_add_npu_run(self->graph, ((tpy_npu_program_obj_t *)program)->program, v,
                                     nv, sc, ns));
  if (PyList_Append(self->keep, program) < 0 || PyList_Append(self->keep, views) < 0) return NULL;
  return tpy_node_result(self);
}

static PyObject *tpy_graph_prepare(tpy_graph_obj_t *self, PyObject *noargs) {
  tandem_exec_t *e = NULL;
  TPY_CHECK_NOGIL(tandem_graph_prepare(self->graph, &e));
  tpy_exec_obj_t *o = PyObject_New(tpy_exec_obj_t, &tpy_exec_type);
  if (!o) {
    tandem_exec_release(e);
    return NULL;
  }
  o->runtime = (tpy_runtime_t *)Py_NewRef((PyObject *)self->runtime);
  o->exec = e;
  return (PyObject *)o;
}

static Py_ssize_t tpy_graph_len(tpy_graph_obj_t *self) {
  return tandem_graph_node_count(self->graph);
}

static PyMethodDef tpy_graph_methods[] = {
    {"fill", (PyCFunction)(void (*)(void))tpy_graph_fill, METH_VARARGS | METH_KEYWORDS,
     "fill(view, pattern=0, lane=None) -> node number: fills with a 32-bit pattern."},
    {"copy", (PyCFunction)(void (*)(void))tpy_graph_copy, METH_VARARGS | METH_KEYWORDS,
     "copy(src, dst, lane=None) -> node number."},
    {"dispatch", (PyCFunction)(void (*)(void))tpy_graph_dispatch, METH_VARARGS | METH_KEYWORDS,
     "dispatch(kernel, views, push_constants=None, *, workgroups=None, indirect=None) -> node number; "
     "push_constants is bytes-like (struct.pack)."},
    {"npu_run", (PyCFunction)(void (*)(void))tpy_graph_npu_run, METH_VARARGS | METH_KEYWORDS,
     "npu_run(program, views, scalars=()) -> node number."},
    {"prepare", (PyCFunction)tpy_graph_prepare, METH_NOARGS,
     "prepare() -> Executable (GIL released)."},
    {NULL}};

static PySequenceMethods tpy_graph_seq = {.sq_length = (lenfunc)tpy_graph_len};

static PyTypeObject tpy_graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.Graph",
    .tp_basicsize = sizeof(tpy_graph_obj_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "A graph of fills, copies, dispatches and NPU runs (Runtime.graph); len() is its node count.",
    .tp_dealloc = (destructor)tpy_graph_dealloc,
    .tp_methods = tpy_graph_methods,
    .tp_as_sequence = &tpy_graph_seq,
};

/*============================================================================
 * Executables and completions
 *============================================================================*/

static void tpy_exec_dealloc(tpy_exec_obj_t *self) {
  tandem_exec_t *e = self->exec;
  /* The last release blocks until the executable's work has finished. */
  Py_BEGIN_ALLOW_THREADS
  tandem_exec_release(e);
  Py_END_ALLOW_THREADS
  Py_XDECREF(self->runtime);
  PyObject_Free(self);
}

static PyObject *tpy_new_completion(tpy_exec_obj_t *exec, tpy_runtime_t *rt,
                                    tandem_completion_t *c) {
  tpy_completion_obj_t *o = PyObject_New(tpy_completion_obj_t, &tpy_completion_type);
  if (!o) {
    tandem_completion_release(c);
    return NULL;
  }
  o->exec = exec ? (tpy_exec_obj_t *)Py_NewRef((PyObject *)exec) : NULL;
  o->runtime = (tpy_runtime_t *)Py_NewRef((PyObject *)rt);
  o->completion = c;
  if (rt->track_lanes) {
    uint64_t values[TANDEM_LANE_COUNT];
    if (tandem_completion_lane_values(c, values) == TANDEM_OK)
      for (int i = 0; i < TANDEM_LANE_COUNT; i++)
        if (values[i] > rt->submitted[i]) rt->submitted[i] = values[i];
  }
  return (PyObject *)o;
}

/* exec.submit(after=(), waits=()) -> Completion. The fast path (no
 * arguments) parses nothing. */
static PyObject *tpy_exec_submit(tpy_exec_obj_t *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  tandem_completion_t *c = NULL;
  if (nargs == 0 && (!kwnames || PyTuple_GET_SIZE(kwnames) == 0)) {
    TPY_CHECK(tandem_exec_submit(self->exec, &c));
    return tpy_new_completion(self, self->runtime, c);
  }
  PyObject *after = NULL, *waits = NULL;
  if (nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "submit(after=(), waits=()) takes at most 2 arguments");
    return NULL;
  }
  if (nargs > 0) after = args[0];
  if (nargs > 1) waits = args[1];
  for (Py_ssize_t i = 0; kwnames && i < PyTuple_GET_SIZE(kwnames); i++) {
    const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, i));
    if (!k) return NULL;
    if (strcmp(k, "after") == 0) after = args[nargs + i];
    else if (strcmp(k, "waits") == 0) waits = args[nargs + i];
    else {
      PyErr_Format(PyExc_TypeError, "submit() got an unexpected keyword argument '%s'", k);
      return NULL;
    }
  }
  tandem_completion_t *deps[64];
  uint32_t ndeps = 0;
  if (after && after != Py_None) {
    PyObject *seq = PySequence_Fast(after, "after must be a sequence of Completions");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > 64) {
      Py_DECREF(seq);
      PyErr_SetString(PyExc_ValueError, "after: at most 64 completions per submit");
      return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
      if (!PyObject_TypeCheck(x, &tpy_completion_type)) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_TypeError, "after[%zd] must be a tandem.Completion, not %.80s", i,
                     Py_TYPE(x)->tp_name);
        return NULL;
      }
      deps[ndeps++] = ((tpy_completion_obj_t *)x)->completion;
    }
    Py_DECREF(seq);
  }
  tandem_lane_wait_t w[TANDEM_MAX_LANES];
  uint32_t nw = 0;
  if (waits && waits != Py_None) {
    PyObject *seq = PySequence_Fast(waits, "waits must be a sequence of (lane, value) pairs");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > TANDEM_MAX_LANES) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_ValueError, "waits: at most %d", TANDEM_MAX_LANES);
      return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      int lane;
      unsigned long long value;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iK;waits entries are (lane, value)",
                            &lane, &value)) {
        Py_DECREF(seq);
        return NULL;
      }
      w[nw].lane = (tandem_lane_t)lane;
      w[nw++].value = value;
    }
    Py_DECREF(seq);
  }
  if (nw && ndeps) {
    PyErr_SetString(
        PyExc_ValueError,
        "give after= or waits=, not both (order the completions with an earlier submit)");
    return NULL;
  }
  if (nw) TPY_CHECK(tandem_exec_submit_waiting(self->exec, w, nw, &c));
  else TPY_CHECK(tandem_exec_submit_after(self->exec, deps, ndeps, &c));
  return tpy_new_completion(self, self->runtime, c);
}

static PyObject *tpy_exec_set_push_constants(tpy_exec_obj_t *self, PyObject *args) {
  unsigned int node;
  Py_buffer pc;
  if (!PyArg_ParseTuple(args, "Iy*", &node, &pc)) return NULL;
  tandem_status_t s = tandem_exec_set_push_constants(self->exec, node, pc.buf, (uint32_t)pc.len);
  PyBuffer_Release(&pc);
  if (s != TANDEM_OK) return tpy_raise(s);
  Py_RETURN_NONE;
}

static PyObject *tpy_exec_set_workgroups(tpy_exec_obj_t *self, PyObject *args) {
  unsigned int node;
  PyObject *wg;
  if (!PyArg_ParseTuple(args, "IO", &node, &wg)) return NULL;
  uint32_t d[3];
  if (tpy_dims(wg, "workgroups", d) < 0) return NULL;
  TPY_CHECK(tandem_exec_set_workgroups(self->exec, node, d));
  Py_RETURN_NONE;
}

static PyObject *tpy_exec_set_view(tpy_exec_obj_t *self, PyObject *args) {
  unsigned int node, binding;
  PyObject *view;
  if (!PyArg_ParseTuple(args, "IIO", &node, &binding, &view)) return NULL;
  tandem_view_t v;
  if (tpy_get_view(view, "view", &v, NULL) < 0) return NULL;
  TPY_CHECK(tandem_exec_set_view(self->exec, node, binding, v));
  Py_RETURN_NONE;
}

/* Keeps the new view's buffer alive with the executable: it is in the
 * executable's node from now on, and Python's buffer object must outlive
 * that use (the C side retains the tandem buffer itself). */

static PyMethodDef tpy_exec_methods[] = {
    {"submit", (PyCFunction)(void (*)(void))tpy_exec_submit, METH_FASTCALL | METH_KEYWORDS,
     "submit(after=(), waits=()) -> Completion. after: completions to run after (GPU-side); waits: "
     "(lane, value) pairs of external lanes (Runtime.cuda_signal)."},
    {"set_push_constants", (PyCFunction)tpy_exec_set_push_constants, METH_VARARGS,
     "set_push_constants(node, data): for later submissions."},
    {"set_workgroups", (PyCFunction)tpy_exec_set_workgroups, METH_VARARGS,
     "set_workgroups(node, (x, y, z)): for later submissions."},
    {"set_view", (PyCFunction)tpy_exec_set_view, METH_VARARGS,
     "set_view(node, binding, view): for later submissions."},
    {NULL}};

static PyTypeObject tpy_exec_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.Executable",
    .tp_basicsize = sizeof(tpy_exec_obj_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A prepared graph (Graph.prepare); submit() runs it.",
    .tp_dealloc = (destructor)tpy_exec_dealloc,
    .tp_methods = tpy_exec_methods,
};

static void tpy_completion_dealloc(tpy_completion_obj_t *self) {
  tandem_completion_release(self->completion);
  Py_XDECREF(self->exec);
  Py_XDECREF(self->runtime);
  PyObject_Free(self);
}

static uint64_t tpy_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Waits up to |timeout_ns| (UINT64_MAX: for ever) with the GIL released,
 * in slices so Ctrl-C works. Returns the completion's result, TIMEOUT when
 * the time passed, or INVALID_ARGUMENT - 1000 when a signal handler raised. */
#define TPY_INTERRUPTED ((tandem_status_t)-1000)
static tandem_status_t tpy_wait(tandem_completion_t *c, uint64_t timeout_ns) {
  const uint64_t slice = 100000000ull; /* 100 ms */
  uint64_t start = timeout_ns == UINT64_MAX ? 0 : tpy_now_ns();
  for (;;) {
    uint64_t left = slice;
    if (timeout_ns != UINT64_MAX) {
      uint64_t spent = tpy_now_ns() - start;
      left = spent >= timeout_ns ? 0 : timeout_ns - spent;
      if (left > slice) left = slice;
    }
    tandem_status_t s;
    Py_BEGIN_ALLOW_THREADS
    s = tandem_completion_wait_timeout(c, left);
    Py_END_ALLOW_THREADS
    if (s != TANDEM_ERROR_TIMEOUT) return s;
    /* Finished between the slice's end and here (or TIMEOUT is its result:
     * an NPU run past its watchdog): answer with its own result, which a
     * zero wait reads, never with the slice's TIMEOUT. */
    if (tandem_completion_is_complete(c)) return tandem_completion_wait_timeout(c, 0);
    if (timeout_ns != UINT64_MAX && tpy_now_ns() - start >= timeout_ns) return TANDEM_ERROR_TIMEOUT;
    if (PyErr_CheckSignals() < 0) return TPY_INTERRUPTED;
  }
}

/* completion.wait(timeout=None): None on success; raises the failure
 * (tandem.TimeoutError when the time passed; the work goes on). */
static PyObject *tpy_completion_wait(tpy_completion_obj_t *self, PyObject *const *args,
                                     Py_ssize_t nargs, PyObject *kwnames) {
  uint64_t timeout = UINT64_MAX;
  PyObject *t = nargs > 0 ? args[0] : NULL;
  if (kwnames && PyTuple_GET_SIZE(kwnames) == 1 && nargs == 0) {
    const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, 0));
    if (!k || strcmp(k, "timeout") != 0) {
      PyErr_SetString(PyExc_TypeError, "wait() takes only timeout= (seconds)");
      return NULL;
    }
    t = args[0];
  } else if (nargs > 1 || (kwnames && PyTuple_GET_SIZE(kwnames) > 0)) {
    PyErr_SetString(PyExc_TypeError, "wait(timeout=None) takes one argument, seconds");
    return NULL;
  }
  if (t && t != Py_None) {
    double sec = PyFloat_AsDouble(t);
    if (sec == -1.0 && PyErr_Occurred()) return NULL;
    if (sec < 0) {
      PyErr_SetString(PyExc_ValueError, "timeout must be ≥ 0 seconds (None: wait for ever)");
      return NULL;
    }
    timeout = sec > 1e9 ? UINT64_MAX : (uint64_t)(sec * 1e9);
  }
  tandem_status_t s = tpy_wait(self->completion, timeout);
  if (s == TPY_INTERRUPTED) return NULL;
  if (s != TANDEM_OK) return tpy_raise(s);
  Py_RETURN_NONE;
}

/* The result without raising: 'OK', the failure's status name, or None if not finished. */
static PyObject *tpy_completion_status(tpy_completion_obj_t *self, void *c) {
  if (!tandem_completion_is_complete(self->completion)) Py_RETURN_NONE;
  tandem_status_t s = tandem_completion_wait_timeout(self->completion, 0);
  return PyUnicode_FromString(tandem_status_name(s));
}

static PyObject *tpy_completion_done(tpy_completion_obj_t *self, void *c) {
  return PyBool_FromLong(tandem_completion_is_complete(self->completion));
}

static PyObject *tpy_completion_cancel(tpy_completion_obj_t *self, PyObject *noargs) {
  TPY_CHECK(tandem_completion_cancel(self->completion));
  Py_RETURN_NONE;
}

static PyObject *tpy_completion_profile(tpy_completion_obj_t *self, void *c) {
  tandem_completion_profile_t p;
  tandem_completion_profile_init(&p);
  tandem_region_profile_t regions[64];
  TPY_CHECK(tandem_completion_profile(self->completion, &p, regions, 64));
  PyObject *list = PyList_New(0);
  if (!list) return NULL;
  for (uint32_t i = 0; i < p.region_count && i < 64; i++) {
    PyObject *r = Py_BuildValue("{sssIsKsK}", "lane", tandem_lane_name(regions[i].lane),
                                "node_count", regions[i].node_count, "gpu_start_ns",
                                (unsigned long long)regions[i].gpu_start_ns, "gpu_end_ns",
                                (unsigned long long)regions[i].gpu_end_ns);
    if (!r || PyList_Append(list, r) < 0) {
      Py_XDECREF(r);
      Py_DECREF(list);
      return NULL;
    }
    Py_DECREF(r);
  }
  PyObject *d =
      Py_BuildValue("{sKsKsKsKsOsssN}", "host_submit_ns", (unsigned long long)p.host_submit_ns,
                    "host_observed_ns", (unsigned long long)p.host_observed_ns, "queue_ns",
                    (unsigned long long)p.queue_ns, "execution_ns",
                    (unsigned long long)p.execution_ns, "gpu_times_valid",
                    p.gpu_times_valid ? Py_True : Py_False, "gpu_times_status",
                    tandem_status_name(p.gpu_times_status), "regions", list);
  return tpy_info("Profile", d);
}

static PyObject *tpy_completion_lane_values(tpy_completion_obj_t *self, void *c) {
  uint64_t v[TANDEM_LANE_COUNT];
  TPY_CHECK(tandem_completion_lane_values(self->completion, v));
  return Py_BuildValue("(KKKK)", (unsigned long long)v[0], (unsigned long long)v[1],
                       (unsigned long long)v[2], (unsigned long long)v[3]);
}

static PyObject *tpy_completion_await(tpy_completion_obj_t *self) {
  PyObject *hook = tpy_hook("await_completion");
  if (!hook) {
    PyErr_SetString(PyExc_RuntimeError,
                    "tandem's asyncio support is not registered (import tandem)");
    return NULL;
  }
  PyObject *coro = PyObject_CallOneArg(hook, (PyObject *)self);
  if (!coro) return NULL;
  PyObject *it = PyObject_CallMethod(coro, "__await__", NULL);
  Py_DECREF(coro);
  return it;
}

static PyMethodDef tpy_completion_methods[] = {
    {"wait", (PyCFunction)(void (*)(void))tpy_completion_wait, METH_FASTCALL | METH_KEYWORDS,
     "wait(timeout=None): blocks (GIL released) until finished; raises the failure, or "
     "tandem.TimeoutError after |timeout| seconds (the work goes on)."},
    {"cancel", (PyCFunction)tpy_completion_cancel, METH_NOARGS, "Cancels the submission."},
    {NULL}};

static PyGetSetDef tpy_completion_getset[] = {
    {"done", (getter)tpy_completion_done, NULL, "finished (successfully or not); never blocks",
     NULL},
    {"status", (getter)tpy_completion_status, NULL,
     "'OK', the failure's name, or None while running", NULL},
    {"profile", (getter)tpy_completion_profile, NULL, "Profile of a finished submission", NULL},
    {"lane_values", (getter)tpy_completion_lane_values, NULL, "per-lane timeline values at its end",
     NULL},
    {NULL}};

static PyAsyncMethods tpy_completion_async = {.am_await = (unaryfunc)tpy_completion_await};

static PyTypeObject tpy_completion_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.Completion",
    .tp_basicsize = sizeof(tpy_completion_obj_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One submission (Executable.submit): wait(), done, cancel(), profile; awaitable.",
    .tp_dealloc = (destructor)tpy_completion_dealloc,
    .tp_methods = tpy_completion_methods,
    .tp_getset = tpy_completion_getset,
    .tp_as_async = &tpy_completion_async,
};

/*============================================================================
 * Traces
 *============================================================================*/

static void tpy_trace_dealloc(tpy_trace_obj_t *self) {
  tandem_trace_release(self->trace);
  PyObject_Free(self);
}

static PyObject *tpy_trace_write_json(tpy_trace_obj_t *self, PyObject *arg) {
  PyObject *path = NULL;
  if (!PyUnicode_FSConverter(arg, &path)) return NULL;
  tandem_status_t s = tandem_trace_write_json(self->trace, PyBytes_AS_STRING(path));
  Py_DECREF(path);
  if (s != TANDEM_OK) return tpy_raise(s);
  Py_RETURN_NONE;
}

static PyObject *tpy_trace_events(tpy_trace_obj_t *self, void *c) {
  uint32_t n = 0;
  const tandem_trace_event_t *e = tandem_trace_events(self->trace, &n);
  PyObject *list = PyList_New(0);
  for (uint32_t i = 0; list && i < n; i++) {
    PyObject *d =
        Py_BuildValue("{sssIsKsIsKsKsKsKsssssIsK}", "lane", tandem_lane_name(e[i].lane), "region",
                      e[i].region, "submission", (unsigned long long)e[i].submission, "node_count",
                      e[i].node_count, "copied_bytes", (unsigned long long)e[i].copied_bytes,
                      "host_submit_ns", (unsigned long long)e[i].host_submit_ns, "gpu_start_ns",
                      (unsigned long long)e[i].gpu_start_ns, "gpu_end_ns",
                      (unsigned long long)e[i].gpu_end_ns, "result",
                      tandem_status_name(e[i].result), "name", e[i].name, "first_node",
                      e[i].first_node, "bytes", (unsigned long long)e[i].bytes);
    if (!d || PyList_Append(list, d) < 0) Py_CLEAR(list);
    Py_XDECREF(d);
  }
  return list;
}

static PyObject *tpy_trace_dropped(tpy_trace_obj_t *self, void *c) {
  return PyLong_FromUnsignedLongLong(tandem_trace_dropped(self->trace));
}

static PyMethodDef tpy_trace_methods[] = {{"write_json", (PyCFunction)tpy_trace_write_json, METH_O,
                                           "write_json(path): Chrome/Perfetto JSON."},
                                          {NULL}};
static PyGetSetDef tpy_trace_getset[] = {
    {"events", (getter)tpy_trace_events, NULL, "list of dicts", NULL},
    {"dropped", (getter)tpy_trace_dropped, NULL, "events lost", NULL},
    {NULL}};
static PyTypeObject tpy_trace_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tandem.Trace",
    .tp_basicsize = sizeof(tpy_trace_obj_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A stopped trace (Runtime.trace_stop / Runtime.trace).",
    .tp_dealloc = (destructor)tpy_trace_dealloc,
    .tp_methods = tpy_trace_methods,
    .tp_getset = tpy_trace_getset,
};

/*============================================================================
 * Module
 *============================================================================*/

static PyObject *tpy_register(PyObject *self, PyObject *args, PyObject *kw) {
  if (kw) {
    if (!tpy_hooks) tpy_hooks = PyDict_New();
    if (!tpy_hooks || PyDict_Update(tpy_hooks, kw) < 0) return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *tpy_version(PyObject *self, PyObject *noargs) {
  return PyUnicode_FromString(tandem_version());
}

static PyObject *tpy_library_path(PyObject *self, PyObject *noargs) {
  Dl_info info;
  if (!dladdr((void *)tandem_version, &info) || !info.dli_fname) Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(info.dli_fname);
}

static PyObject *tpy_cuda_available(PyObject *self, PyObject *noargs) {
  return tpy_cuda_unavailable_reason();
}

static PyMethodDef tpy_module_methods[] = {
    {"_register", (PyCFunction)(void (*)(void))tpy_register, METH_VARARGS | METH_KEYWORDS, NULL},
    {"version", tpy_version, METH_NOARGS, "The loaded libtandem's version."},
    {"library_path", tpy_library_path, METH_NOARGS, "The path of the loaded libtandem."},
    {"validation_messages", tpy_validation_messages, METH_NOARGS,
     "validation_messages() -> (count, [last messages]): process-wide, from runtimes made with "
     "validation=True."},
    {"cuda_unavailable_reason", tpy_cuda_available, METH_NOARGS,
     "None when CUDA interop can work here, else why not."},
    {NULL}};

static struct PyModuleDef tpy_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tandem._tandem",
    .m_doc = "tandem's C API as Python types (use the package tandem).",
    .m_size = -1,
    .m_methods = tpy_module_methods,
};

static int tpy_add_type(PyObject *m, PyTypeObject *t, const char *name) {
  if (PyType_Ready(t) < 0) return -1;
  return PyModule_AddObjectRef(m, name, (PyObject *)t);
}

PyMODINIT_FUNC PyInit__tandem(void) {
  PyObject *m = PyModule_Create(&tpy_module);
  if (!m) return NULL;
  if (tpy_add_type(m, &tpy_runtime_type, "Runtime") < 0 ||
      tpy_add_type(m, &tpy_buffer_type, "Buffer") < 0 ||
      tpy_add_type(m, &tpy_view_type, "View") < 0 || tpy_add_type(m, &tpy_map_type, "Map") < 0 ||
      tpy_add_type(m, &tpy_kernel_type, "Kernel") < 0 ||
      tpy_add_type(m, &tpy_npu_program_type, "NpuProgram") < 0 ||
      tpy_add_type(m, &tpy_graph_type, "Graph") < 0 ||
      tpy_add_type(m, &tpy_exec_type, "Executable") < 0 ||
      tpy_add_type(m, &tpy_completion_type, "Completion") < 0 ||
      tpy_add_type(m, &tpy_trace_type, "Trace") < 0 ||
      tpy_add_type(m, &tpy_tensor_type, "Tensor") < 0)
    goto fail;
  if (tpy_errors_add(m) < 0) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
