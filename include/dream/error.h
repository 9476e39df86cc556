/*
 * error.h — status codes and the last-error message.
 *
 * Every fallible dream_* function returns 0 (DREAM_OK) on success or a negative dream_status,
 * and records a human-readable message (what went wrong, the file/line/value involved, and
 * what to do) that dream_error_last() returns until the next error on the same thread.
 */
#ifndef DREAM_ERROR_H
#define DREAM_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum dream_status {
    DREAM_OK = 0,
    DREAM_EINVAL = -1,    /* a bad argument or bad input */
    DREAM_ENOMEM = -2,    /* an allocation failed */
    DREAM_EIO = -3,       /* reading or writing a file failed */
    DREAM_ENOTFOUND = -4, /* a file, model, article or key does not exist */
    DREAM_EFORMAT = -5,   /* input is not in the expected format */
    DREAM_ETOOBIG = -6,   /* input exceeds a limit (context, size, depth) */
    DREAM_EMODEL = -7,    /* the model or llama.cpp failed */
    DREAM_ELIMIT = -8,    /* a safety limit was hit (loop count, output size) */
    DREAM_EINTERNAL = -9, /* a bug: an invariant did not hold */
    DREAM_EBUSY = -10,    /* another run holds the lock; try again when it has finished */
};

/* Records a formatted message for the calling thread; returns code, so callers can write
 * `return dream_error_set(DREAM_EINVAL, "...")`. */
int dream_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes the current message with more context ("loading model X: <old message>"); returns
 * code. */
int dream_error_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The calling thread's last message, or "" when none. Valid until the next error call. */
const char *dream_error_last(void);

/* The last status code set on this thread (0 when none). */
int dream_error_code(void);

void dream_error_clear(void);

/* A short name for a status code ("invalid input", "not found", ...). */
const char *dream_status_str(int code);

#ifdef __cplusplus
}
#endif
#endif
