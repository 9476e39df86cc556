/*
 * cli.h — helpers shared by the verbs of the `dream` command.
 */
#ifndef DREAM_CLI_H
#define DREAM_CLI_H

#include <stdbool.h>

/* True when argv[i] is "-h" or "--help". */
bool cli_wants_help(const char *arg);

/* Prints "dream <verb>: <message>\n" with the last error to stderr; returns exit status 1. */
int cli_fail(const char *verb, int code);

/* Before `dream schedule` or `dream unschedule` (verb) replaces or removes the nightly job: 1,
 * with the error said, when the job dreams another memory and force is false; else 0. */
int cli_schedule_guard(const char *verb, bool force);

/* The value of the option at argv[i]: argv[i + 1], or NULL when there is none or it is another
 * option ("--dry-run" after "--trace" is no file name: taken as one, `dream run --trace
 * --dry-run` ran for real and wrote a file named --dry-run). */
const char *cli_option_value(int argc, char **argv, int i);

/* Parses a non-negative integer option value; on failure prints an error naming the option. */
bool cli_parse_int(const char *verb, const char *opt, const char *val, long min, long max, long *out);

/* From here on, SIGINT (Ctrl-C), SIGTERM or SIGHUP prints note on stderr (after clearing a
 * status line drawn on a terminal) and then ends the process by that signal, as before: what
 * the verb committed is kept, and note says how to go on. A signal the process was started
 * ignoring (a background job's SIGINT) stays ignored. note must outlive the call. */
void cli_on_interrupt(const char *note);

/* 1, with the error said, when store (--store) names a file that is not there: a typo, not "no
 * store yet" (a read verb said "store: none"); 0 for none named, "" (no store) or one that is.
 * dream mcp and serve, which run before the first ingest, take one not made yet. */
int cli_store_missing(const char *verb, const char *store);

/* What --model PATH means on every verb that loads a model (run, ask, generate, tokenize, serve),
 * for their --help: "  --model PATH   " CLI_MODEL_HELP. */
#define CLI_MODEL_HELP "the GGUF model file (default: $DREAM_MODEL, then the Hugging Face cache)"

/* Points the seam's model calls for a verb: at the GGUF file model (--model; it must exist, and
 * it wins over $DREAM_BACKEND), else at the server backend (--backend, else $DREAM_BACKEND),
 * else leaves the embedded model to be found as dream_model_resolve(NULL) finds it. Either may
 * be NULL. Returns 0; 2 (printed) when both are given; 1 (printed) when the model file is
 * missing or the backend URL is not http(s). */
int cli_model_select(const char *verb, const char *model, const char *backend);

#endif
