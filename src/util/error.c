/* error.c — thread-local last-error message (see include/dream/error.h). */
#include "dream/error.h"

#include "util/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ERROR_MSG_MAX 4096

static _Thread_local char error_msg[ERROR_MSG_MAX];
static _Thread_local int error_code;

int dream_error_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_msg, sizeof error_msg, fmt, ap);
    va_end(ap);
    utf8_trim(error_msg); /* a message cut at the buffer's end keeps whole characters */
    error_code = code;
    return code;
}

int dream_error_wrap(int code, const char *fmt, ...)
{
    char prefix[1024];
    char old[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    utf8_trim(prefix);
    memcpy(old, error_msg, sizeof old);
    if (old[0])
        snprintf(error_msg, sizeof error_msg, "%s: %s", prefix, old);
    else
        snprintf(error_msg, sizeof error_msg, "%s", prefix);
    utf8_trim(error_msg);
    error_code = code;
    return code;
}

const char *dream_error_last(void) { return error_msg; }

int dream_error_code(void) { return error_code; }

void dream_error_clear(void)
{
    error_msg[0] = '\0';
    error_code = 0;
}

const char *dream_status_str(int code)
{
    switch (code) {
    case DREAM_OK: return "ok";
    case DREAM_EINVAL: return "invalid input";
    case DREAM_ENOMEM: return "out of memory";
    case DREAM_EIO: return "i/o error";
    case DREAM_ENOTFOUND: return "not found";
    case DREAM_EFORMAT: return "bad format";
    case DREAM_ETOOBIG: return "too big";
    case DREAM_EMODEL: return "model error";
    case DREAM_ELIMIT: return "limit reached";
    case DREAM_EINTERNAL: return "internal error";
    case DREAM_EBUSY: return "busy";
    default: return "unknown error";
    }
}
