/* main.c — the `dream` command: git-style verbs dispatched from a generated table. */
#include "cli.h"

#include "dream/error.h"
#include "dream/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DREAM_CMD(v) int cmd_##v(int argc, char **argv); extern const char cmd_##v##_summary[];
#include "commands.inc"
#undef DREAM_CMD

struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct verb verbs[] = {
#define DREAM_CMD(v) {#v, cmd_##v, cmd_##v##_summary},
#include "commands.inc"
#undef DREAM_CMD
};

bool cli_wants_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

int cli_fail(const char *verb, int code)
{
    const char *msg = dream_error_last();
    fprintf(stderr, "dream %s: %s\n", verb, msg[0] ? msg : dream_status_str(code));
    return 1;
}

bool cli_parse_int(const char *verb, const char *opt, const char *val, long min, long max, long *out)
{
    if (!val) {
        fprintf(stderr, "dream %s: %s needs a value\n", verb, opt);
        return false;
    }
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (errno || end == val || *end || v < min || v > max) {
        fprintf(stderr, "dream %s: %s must be an integer from %ld to %ld, not '%s'\n", verb, opt, min, max, val);
        return false;
    }
    *out = v;
    return true;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: dream [-v|-vv] <verb> [options]\n\n"
               "dream reads your conversations with AI assistants and dreams them into a\n"
               "git-tracked Markdown wiki, with one local language model.\n\nverbs:\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(f, "\n'dream <verb> --help' describes a verb.\n");
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-v")) dream_log_set_level(DREAM_LOG_INFO);
        else if (!strcmp(argv[i], "-vv")) dream_log_set_level(DREAM_LOG_DEBUG);
        else if (!strcmp(argv[i], "--version")) {
            printf("dream %s (llama.cpp de3ff815ea7d)\n", DREAM_VERSION);
            return 0;
        } else if (cli_wants_help(argv[i])) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "dream: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    for (size_t k = 0; k < sizeof verbs / sizeof verbs[0]; k++)
        if (!strcmp(argv[i], verbs[k].name)) return verbs[k].run(argc - i, argv + i);
    fprintf(stderr, "dream: unknown verb '%s'; 'dream --help' lists the verbs\n", argv[i]);
    return 2;
}
