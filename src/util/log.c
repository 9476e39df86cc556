/* log.c — the one logger (see include/dream/log.h). */
#include "dream/log.h"

#include "util/utf8.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int log_level = -1; /* -1: not yet read from DREAM_LOG */

static int level_from_env(void)
{
    const char *e = getenv("DREAM_LOG");
    if (!e) return DREAM_LOG_WARN;
    if (!strcmp(e, "debug")) return DREAM_LOG_DEBUG;
    if (!strcmp(e, "info")) return DREAM_LOG_INFO;
    if (!strcmp(e, "error")) return DREAM_LOG_ERROR;
    return DREAM_LOG_WARN;
}

void dream_log_set_level(enum dream_log_level level) { atomic_store(&log_level, (int)level); }

enum dream_log_level dream_log_get_level(void)
{
    int l = atomic_load(&log_level);
    if (l < 0) {
        l = level_from_env();
        atomic_store(&log_level, l);
    }
    return (enum dream_log_level)l;
}

void dream_log(enum dream_log_level level, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warning", "error"};
    if (level < dream_log_get_level()) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = strlen(utf8_trim(msg));
    while (n && msg[n - 1] == '\n') msg[--n] = '\0';
    fprintf(stderr, "dream: %s: %s\n", names[level], msg);
}
