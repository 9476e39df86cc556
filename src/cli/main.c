/* main.c — the `dream` command: git-style verbs dispatched from a generated table. */
#include "cli.h"

#include "dream/error.h"
#include "dream/log.h"
#include "util/edit_distance.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
#define N_VERBS (sizeof verbs / sizeof verbs[0])

/* The k-th name a verb may be typed as, k < N_VERBS + 1: the table's, then "help". */
static const char *verb_name(size_t k) { return k < N_VERBS ? verbs[k].name : "help"; }

bool cli_wants_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

const char *cli_option_value(int argc, char **argv, int i)
{
    return i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0 ? argv[i + 1] : NULL;
}

static const char *interrupt_note;
static size_t interrupt_note_len;
static bool interrupt_tty;

/* Async-signal-safe: write, signal and raise only. */
static void cli_interrupted(int sig)
{
    if (interrupt_tty) (void)!write(STDERR_FILENO, "\r\033[K", 4);
    (void)!write(STDERR_FILENO, interrupt_note, interrupt_note_len);
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_on_interrupt(const char *note)
{
    interrupt_note = note;
    interrupt_note_len = strlen(note);
    interrupt_tty = isatty(STDERR_FILENO) == 1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE}; /* SIGPIPE: `dream run | head -1` */
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = cli_interrupted;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(sigs[i], &sa, NULL);
    }
}

int cli_store_missing(const char *verb, const char *store)
{
    struct stat st;
    if (!store || !store[0] || stat(store, &st) == 0) return 0;
    fprintf(stderr, "dream %s: no store at %s: name an existing store with --store (or --store '' for none)\n", verb, store);
    return 1;
}

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
    for (size_t i = 0; i < N_VERBS; i++)
        fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(f, "\n'dream help <verb>' (or 'dream <verb> --help') describes a verb.\n");
}

static const struct verb *find_verb(const char *name)
{
    for (size_t k = 0; k < N_VERBS; k++)
        if (!strcmp(name, verbs[k].name)) return &verbs[k];
    return NULL;
}

/* "dream: unknown verb 'X'", with the nearest verbs when a typo explains it: those at the
 * smallest edit distance, if that is at most 1 + a quarter of the typed length (and shorter than
 * the typed word, so nothing is "near" a one-letter guess). Returns exit status 2. */
static int unknown_verb(const char *name)
{
    size_t len = strlen(name), limit = len / 4 + 1, best = limit + 1;
    for (size_t k = 0; k <= N_VERBS; k++) {
        size_t d = edit_distance(name, verb_name(k), limit);
        if (d < best && d < len) best = d;
    }
    fprintf(stderr, "dream: unknown verb '%s'", name);
    if (best <= limit) {
        const char *sep = " (did you mean ";
        for (size_t k = 0; k <= N_VERBS; k++) {
            if (edit_distance(name, verb_name(k), limit) != best) continue;
            fprintf(stderr, "%s'%s'", sep, verb_name(k));
            sep = " or ";
        }
        fputs("?)", stderr);
    }
    fprintf(stderr, "; 'dream --help' lists the verbs\n");
    return 2;
}

/* `dream help [VERB]`: the command's usage, or the verb's own --help. */
static int help(int argc, char **argv)
{
    if (argc < 2 || (argc == 2 && !strcmp(argv[1], "help"))) { /* `dream help help`: this */
        usage(stdout);
        return 0;
    }
    if (argc > 2) {
        fprintf(stderr, "dream help: give one verb, as in 'dream help run'\n");
        return 2;
    }
    const struct verb *v = find_verb(argv[1]);
    if (!v) return unknown_verb(argv[1]);
    char help_flag[] = "--help";
    char *args[] = {argv[1], help_flag, NULL};
    return v->run(2, args);
}

static int dream_main(int argc, char **argv)
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
    if (!strcmp(argv[i], "help")) return help(argc - i, argv + i);
    /* a path option given "" ($UNSET_VAR) is a usage error for the verbs that write: SQLite takes
     * "" for a temporary store that is gone at exit (an ingest reported success and kept
     * nothing), and a wiki "" wrote at the filesystem's root. (The read verbs take --store ""
     * for no store at all.) */
    static const char *const writers[] = {"ingest", "run", "forget", "init", "reindex", "schedule", "serve", NULL};
    static const char *const paths[] = {"--store", "--wiki", "--model", "--from", "--adapter", "--trace", "--replay", "--host", NULL};
    bool writer = false;
    for (size_t k = 0; writers[k]; k++) writer |= !strcmp(argv[i], writers[k]);
    /* and --model "" for the verbs that read a model (it fell back to DREAM_MODEL) */
    static const char *const readers[] = {"ask", "generate", "tokenize", NULL};
    bool reader = false;
    for (size_t k = 0; readers[k]; k++) reader |= !strcmp(argv[i], readers[k]);
    for (int j = i + 1; (writer || reader) && j + 1 < argc && strcmp(argv[j], "--") != 0; j++)
        for (size_t k = 0; paths[k]; k++)
            if (!strcmp(argv[j], paths[k]) && !argv[j + 1][0] && (writer || !strcmp(paths[k], "--model") || !strcmp(paths[k], "--adapter"))) {
                fprintf(stderr, "dream %s: %s is empty: give it a value, or leave the option out\n", argv[i], paths[k]);
                return 2;
            }
    /* an option that takes a value, given last with none, or with another option after it: said
     * so for every verb alike (some verbs' own parsers took it for an unknown argument, others
     * took the next option's name for its value: `dream run --trace --dry-run` ran for real and
     * traced into a file named --dry-run) */
    static const char *const valued[] = {"--at", "--wiki", "--store", "--model", "--limit", "--offset", "--from", "--stage", "--trace",
                                         "--replay", "--backend", "--source", "--before", "--format", "--conversation", "--adapter",
                                         "--batch", "--engagement", "--since", "--until", "--host", "--port", NULL};
    bool wants_help = false;
    for (int j = i + 1; j < argc && strcmp(argv[j], "--") != 0; j++) wants_help |= cli_wants_help(argv[j]);
    for (int j = i + 1; !wants_help && j < argc && strcmp(argv[j], "--") != 0; j++)
        for (size_t k = 0; valued[k]; k++)
            if (!strcmp(argv[j], valued[k]) && (j + 1 == argc || !strncmp(argv[j + 1], "--", 2))) {
                fprintf(stderr, "dream %s: %s needs a value\n", argv[i], valued[k]);
                return 2;
            }
    const struct verb *v = find_verb(argv[i]);
    return v ? v->run(argc - i, argv + i) : unknown_verb(argv[i]);
}

/* A copy of argv (each word its own copy) with each "--option=value" before a bare "--" as the
 * two words "--option" "value", as GNU tools take it (every verb refused it as an unknown
 * option); NULL when memory runs out. */
static char **split_equals(int argc, char **argv, int *n)
{
    char **out = calloc((size_t)argc * 2 + 1, sizeof *out);
    if (!out) return NULL;
    bool words = false;
    *n = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        words |= !strcmp(a, "--");
        size_t name = eq ? (size_t)(eq - a) : 0;
        bool split = !words && i > 0 && eq && name > 2 && !strncmp(a, "--", 2) && strspn(a + 2, "abcdefghijklmnopqrstuvwxyz-") == name - 2;
        if (split) out[(*n)++] = strndup(a, name);
        out[(*n)++] = strdup(split ? eq + 1 : a);
        if (!out[*n - 1] || (split && !out[*n - 2])) return NULL; /* the process ends on it: nothing to free */
    }
    return out;
}

int main(int argc, char **argv)
{
    int n = argc;
    char **args = split_equals(argc, argv, &n);
    if (!args) {
        fprintf(stderr, "dream: out of memory\n");
        return 1;
    }
    int rc = dream_main(n, args);
    for (int i = 0; i < n; i++) free(args[i]);
    free(args);
    /* what was printed must have reached stdout: a full disk or a closed file said nothing and
     * exited 0 */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "dream: writing to stdout failed: %s\n", strerror(errno ? errno : EIO));
        return rc ? rc : 1;
    }
    return rc;
}
