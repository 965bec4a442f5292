/* SPDX-License-Identifier: MIT */
/*
 * _errors.c — tandem's exceptions in the Python extension (_errors.h): the
 * class per status code and the raise helpers both C files use. The
 * classes are created once by the module's init and kept here, indexed by
 * -status, for the life of the process (the module is single-phase init,
 * m_size -1: it is never unloaded).
 */
#include "_errors.h"

#include <stdarg.h>
#include <stdio.h>

#define TPY_STATUS_COUNT 17                    /* OK .. ERROR_INTERNAL (-16) */
static PyObject *tpy_error;                    /* tandem.Error */
static PyObject *tpy_errors[TPY_STATUS_COUNT]; /* by -status */

static PyObject *tpy_error_class(tandem_status_t s) {
  int i = -(int)s;
  if (i <= 0 || i >= TPY_STATUS_COUNT || !tpy_errors[i]) return tpy_error;
  return tpy_errors[i];
}

static PyObject *tpy_raise_text(tandem_status_t status, const char *message) {
  PyObject *cls = tpy_error_class(status);
  PyObject *exc = PyObject_CallFunction(cls, "s", message);
  if (!exc) return NULL;
  PyObject *code = PyLong_FromLong((long)status);
  PyObject *name = PyUnicode_FromString(tandem_status_name(status));
  PyObject *msg = PyUnicode_FromString(message);
  if (code && name && msg) {
    PyObject_SetAttrString(exc, "status", code);
    PyObject_SetAttrString(exc, "status_name", name);
    PyObject_SetAttrString(exc, "message", msg);
  }
  Py_XDECREF(code);
  Py_XDECREF(name);
  Py_XDECREF(msg);
  PyErr_SetObject(cls, exc);
  Py_DECREF(exc);
  return NULL;
}

PyObject *tpy_raise(tandem_status_t status) {
  const char *m = tandem_error_message();
  char buf[160];
  if (!m || !*m) {
    snprintf(buf, sizeof buf, "%s: %s", tandem_status_name(status), tandem_status_describe(status));
    m = buf;
  }
  return tpy_raise_text(status, m);
}

PyObject *tpy_raise_msg(tandem_status_t status, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return tpy_raise_text(status, buf);
}

int tpy_errors_add(PyObject *module) {
  tpy_error =
      PyErr_NewExceptionWithDoc("tandem.Error",
                                "A tandem call failed: .status (the code), .status_name, .message.",
                                NULL, NULL);
  if (!tpy_error || PyModule_AddObjectRef(module, "Error", tpy_error) < 0) return -1;
  /* One class per code; the ones that are also a builtin category inherit it. */
  static const struct {
    int code;
    const char *name;
    const char *base;
  } classes[] = {{TANDEM_ERROR_INVALID_ARGUMENT, "InvalidArgumentError", "ValueError"},
                 {TANDEM_ERROR_OUT_OF_RANGE, "OutOfRangeError", "ValueError"},
                 {TANDEM_ERROR_UNSUPPORTED, "UnsupportedError", NULL},
                 {TANDEM_ERROR_BUSY, "BusyError", NULL},
                 {TANDEM_ERROR_OVER_BUDGET, "OverBudgetError", NULL},
                 {TANDEM_ERROR_OUT_OF_MEMORY, "OutOfMemoryError", "MemoryError"},
                 {TANDEM_ERROR_CONTRACT, "ContractError", NULL},
                 {TANDEM_ERROR_INVALID_KERNEL, "InvalidKernelError", NULL},
                 {TANDEM_ERROR_NO_DEVICE, "NoDeviceError", NULL},
                 {TANDEM_ERROR_DEVICE_LOST, "DeviceLostError", NULL},
                 {TANDEM_ERROR_TIMEOUT, "TimeoutError", "TimeoutError"},
                 {TANDEM_ERROR_CANCELLED, "CancelledError", NULL},
                 {TANDEM_ERROR_FAILED_DEPENDENCY, "FailedDependencyError", NULL},
                 {TANDEM_ERROR_IO, "IOError", "OSError"},
                 {TANDEM_ERROR_UNIMPLEMENTED, "UnimplementedError", "NotImplementedError"},
                 {TANDEM_ERROR_INTERNAL, "InternalError", NULL}};
  PyObject *builtins = PyEval_GetBuiltins();
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
    char full[96];
    snprintf(full, sizeof full, "tandem.%s", classes[i].name);
    PyObject *bases =
        classes[i].base
            ? PyTuple_Pack(2, tpy_error, PyDict_GetItemString(builtins, classes[i].base))
            : PyTuple_Pack(1, tpy_error);
    if (!bases) return -1;
    PyObject *cls = PyErr_NewException(full, bases, NULL);
    Py_DECREF(bases);
    if (!cls || PyModule_AddObjectRef(module, classes[i].name, cls) < 0) return -1;
    tpy_errors[-classes[i].code] = cls;
  }
  return 0;
}
