/* SPDX-License-Identifier: MIT */
/*
 * _errors.h — tandem's exceptions in the Python extension: tandem.Error and
 * one subclass per status code (those that are also a builtin category
 * inherit it too: InvalidArgumentError is a ValueError), each carrying
 * .status (the code), .status_name and .message. Both C files of the
 * extension raise through here (_tandem.c, _cuda.c); _tandem.c's module
 * init creates the classes.
 */
#ifndef TANDEM_PY_ERRORS_H_
#define TANDEM_PY_ERRORS_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "tandem/tandem.h"

/* Creates tandem.Error and its subclasses and adds them to |module|; 0, or
 * -1 with a Python exception set. Called once, from the module's init. */
int tpy_errors_add(PyObject *module);

/* Raises the tandem exception for |status| with tandem_error_message();
 * returns NULL. */
PyObject *tpy_raise(tandem_status_t status);
/* Raises tandem.UnsupportedError (or another code) with a message of ours;
 * returns NULL. */
PyObject *tpy_raise_msg(tandem_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* TANDEM_PY_ERRORS_H_ */
