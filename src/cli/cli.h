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

/* Parses a non-negative integer option value; on failure prints an error naming the option. */
bool cli_parse_int(const char *verb, const char *opt, const char *val, long min, long max, long *out);

#endif
