/*
 * log.h — the one logger. Quiet by default (warnings and errors only); -v shows info, -vv debug.
 * llama.cpp's and ggml's own log output is routed here by the engine layer.
 */
#ifndef DREAM_LOG_H
#define DREAM_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

enum dream_log_level { DREAM_LOG_DEBUG = 0, DREAM_LOG_INFO = 1, DREAM_LOG_WARN = 2, DREAM_LOG_ERROR = 3 };

/* Messages below level are dropped. Default: DREAM_LOG_WARN, or DREAM_LOG env (debug|info|warn|error). */
void dream_log_set_level(enum dream_log_level level);
enum dream_log_level dream_log_get_level(void);

/* Writes "dream: <level>: message\n" to stderr (a trailing newline in fmt is not doubled). */
void dream_log(enum dream_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
