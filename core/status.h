/* SPDX-License-Identifier: MIT */
/*
 * status.h — how tandem raises and passes on failures internally.
 *
 * A failure is a tandem_status_t code plus a message kept per thread
 * (tandem_error_message()). TANDEM_FAIL records the message with its source
 * location and returns the code; TANDEM_RETURN_IF_ERROR passes a failure up
 * unchanged, optionally prefixing context ("binding 2 of 'saxpy': ...").
 * Invariant: the message always describes the most recent failing call on the
 * thread; callers that recover from a failure call tandem__clear_error().
 */
#ifndef TANDEM_CORE_STATUS_H_
#define TANDEM_CORE_STATUS_H_

#include <stddef.h>

#include "tandem/tandem.h"

#if defined(__GNUC__)
#define TANDEM__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TANDEM__PRINTF(a, b)
#endif

/* Records "message (file:line)" as this thread's error and returns |code|. */
tandem_status_t tandem__fail(tandem_status_t code, const char *file, int line, const char *fmt, ...)
    TANDEM__PRINTF(4, 5);
/* Puts "prefix: " in front of this thread's current message; returns |code|. */
tandem_status_t tandem__annotate(tandem_status_t code, const char *fmt, ...) TANDEM__PRINTF(2, 3);
void tandem__clear_error(void);
/* Bytes of this thread's message, its terminating NUL included. */
#define TANDEM__MESSAGE_BYTES 1024
/* Saves this thread's message into |buf| (|size| bytes) / puts it back:
 * release calls wait and may fail internally, but never change the caller's
 * message. A |buf| of TANDEM__MESSAGE_BYTES keeps it whole; a smaller one
 * would put back a cut message. */
void tandem__save_error(char *buf, size_t size);
void tandem__restore_error(const char *buf);

#define TANDEM_FAIL(code, ...) tandem__fail((code), __FILE__, __LINE__, __VA_ARGS__)

#define TANDEM_RETURN_IF_ERROR(expr)              \
  do {                                            \
    tandem_status_t tandem__s = (expr);           \
    if (tandem__s != TANDEM_OK) return tandem__s; \
  } while (0)

#define TANDEM_RETURN_IF_ERROR_CTX(expr, ...)                                    \
  do {                                                                           \
    tandem_status_t tandem__s = (expr);                                          \
    if (tandem__s != TANDEM_OK) return tandem__annotate(tandem__s, __VA_ARGS__); \
  } while (0)

#endif /* TANDEM_CORE_STATUS_H_ */
