/* cmd_ingest.c — `dream ingest`: read conversation exports and agent sessions into the store. */
#include "cli.h"

#include "dream/error.h"
#include "dream/ingest.h"
#include "dream/log.h"
#include "dream/paths.h"
#include "dream/store.h"
#include "util/file.h"
#include "util/utf8.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_ingest_summary[] = "read conversation exports and agent sessions into the store";

/* The formats dream reads, for the message that says none was found. */
#define INGEST_FORMATS "ChatGPT or Claude.ai exports, Claude Code, Codex or pi sessions, OpenAI chat JSONL"

static void ingest_usage(FILE *f)
{
    fprintf(f,
            "usage: dream ingest [--store PATH] [--format FORMAT] PATH...\n"
            "       dream ingest [--store PATH] --from claude-code|codex|pi [PATH...]\n"
            "\n"
            "Reads conversations into the store, where the Dreaming finds them. PATH is a file\n"
            "(JSON, JSONL or a ZIP export) or a directory (every *.json, *.jsonl and *.zip under it).\n"
            "Formats are recognised from content: chatgpt, claude (the ZIP or conversations.json\n"
            "of an \"Export data\" download), claude-code, codex, pi (agent session logs) and\n"
            "openai-jsonl (one {\"messages\": [...]} per line).\n"
            "\n"
            "Running it again is safe: unchanged conversations are left alone, grown ones are\n"
            "updated in place and marked for re-processing, and nothing is deleted because a later\n"
            "export lacks it.\n"
            "\n"
            "options:\n"
            "  --from SOURCE   also read an agent's session directory: claude-code\n"
            "                  ($CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects), codex\n"
            "                  ($CODEX_HOME/sessions, else ~/.codex/sessions), pi\n"
            "                  ($PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions); may repeat\n"
            "  --format NAME   read every PATH as this format instead of detecting it\n"
            "  --store PATH    the store (default: ~/.local/share/dream/memory.sqlite,\n"
            "                  $XDG_DATA_HOME/dream/memory.sqlite, or $DREAM_HOME/memory.sqlite)\n"
            "  -h, --help      this text\n"
            "\n"
            "A PATH that holds nothing dream reads (no file of those formats) is named, with what was\n"
            "found in it instead.\n"
            "\n"
            "Exit status: 0 when every input was read, 1 when a PATH held nothing dream reads, some\n"
            "input was malformed (the rest is still stored) or the store failed, 2 for a usage error.\n"
            "An agent's directory of --from that holds no session is named, and is no error.\n");
}

struct ingest_ui {
    bool tty;
    bool line_open; /* a progress line is on screen */
};

static void ingest_clear_line(struct ingest_ui *ui)
{
    if (ui->line_open) fputs("\r\033[K", stderr);
    ui->line_open = false;
}

static void ingest_on_skip(void *user, enum dream_skip_reason why, const char *where, const char *reason)
{
    struct ingest_ui *ui = user;
    ingest_clear_line(ui);
    if (why == DREAM_SKIP_EMPTY || why == DREAM_SKIP_DUPLICATE) dream_log(DREAM_LOG_INFO, "%s: %s", where, reason);
    else fprintf(stderr, "dream ingest: %s: %s\n", where, reason);
}

static void ingest_on_progress(void *user, const char *path, const struct dream_ingest_stats *s)
{
    struct ingest_ui *ui = user;
    if (!ui->tty) return;
    const char *base = strrchr(path, '/');
    const char *name = base ? base + 1 : path;
    fprintf(stderr, "\r\033[Kingest: %zu files, %zu conversations (%zu new, %zu changed) ... %.*s", s->files, s->conversations,
            s->added, s->changed, utf8_cut(name, 60), name);
    ui->line_open = true;
}

static size_t ingest_skipped_total(const struct dream_ingest_stats *s)
{
    size_t n = 0;
    for (int i = 0; i < DREAM_SKIP_COUNT; i++) n += s->skipped[i];
    return n;
}

/* "1 file" or "N files". */
static const char *ingest_files(size_t n) { return n == 1 ? "file" : "files"; }

/* After one PATH (or --from directory) was walked: when it gave no conversation at all, says on
 * stderr what was found there and why none of it was read, and returns true. A single file that
 * is in no known format was named by its skip message already; one that holds no conversation
 * is named here. */
static bool ingest_explain_nothing(struct ingest_ui *ui, const char *path, const struct dream_ingest_stats *before,
                                   const struct dream_ingest_stats *after)
{
    if (after->conversations > before->conversations) return false;
    size_t files = after->files - before->files, other = after->ignored - before->ignored;
    if (files == 1 && !other && !file_is_dir(path)) {
        if (ingest_skipped_total(after) > ingest_skipped_total(before)) return true;
        ingest_clear_line(ui); /* no skip message named it: an export of no conversation */
        fprintf(stderr, "dream ingest: %s holds no conversation; nothing ingested from it\n", path);
        return true;
    }
    ingest_clear_line(ui);
    if (!files && !other) fprintf(stderr, "dream ingest: found no files in %s; nothing ingested from it\n", path);
    else if (!files)
        fprintf(stderr, "dream ingest: found %zu %s in %s, none named *.json, *.jsonl or *.zip (the files dream opens); nothing ingested from it\n",
                other, ingest_files(other), path);
    else
        fprintf(stderr,
                "dream ingest: found %zu %s in %s, none in a format dream reads (" INGEST_FORMATS "; --format forces one)%s%zu%s; "
                "nothing ingested from it\n",
                files + other, ingest_files(files + other), path, other ? ", " : "", other, other ? " of them not named *.json, *.jsonl or *.zip" : "");
    return true;
}

static void ingest_print_summary(const struct dream_ingest_stats *s, dream_store *store)
{
    printf("read %zu %s (%.1f MB): %zu new, %zu changed, %zu unchanged, %zu skipped\n", s->files, ingest_files(s->files),
           (double)s->bytes / 1e6, s->added, s->changed, s->unchanged, ingest_skipped_total(s));
    if (ingest_skipped_total(s)) {
        static const char *const names[DREAM_SKIP_COUNT] = {"empty", "duplicate id in one export", "malformed",
                                                            "not in a known format (files)"};
        printf("  skipped:");
        const char *sep = " ";
        for (int i = 0; i < DREAM_SKIP_COUNT; i++) {
            if (!s->skipped[i]) continue;
            printf("%s%zu %s", sep, s->skipped[i], names[i]);
            sep = ", ";
        }
        printf("\n");
    }
    if (s->repaired) printf("  %zu conversation%s had invalid UTF-8 replaced by U+FFFD\n", s->repaired, s->repaired == 1 ? "" : "s");
    struct dream_store_counts counts;
    if (!dream_store_count(store, &counts))
        printf("store %s: %lld conversations, %lld messages\n", dream_store_path(store), (long long)counts.conversations,
               (long long)counts.messages);
}

int cmd_ingest(int argc, char **argv)
{
    const char *store_path = NULL;
    struct dream_ingest_params params = dream_ingest_default_params();
    enum dream_format from[8];
    int n_from = 0, n_paths = 0;
    const char **paths = calloc((size_t)argc, sizeof *paths);
    if (!paths) return cli_fail("ingest", dream_error_set(DREAM_ENOMEM, "out of memory"));
    bool words = false; /* after "--": paths, whatever they start with */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!words && !strcmp(a, "--")) {
            words = true;
            continue;
        }
        if (words) {
            paths[n_paths++] = a;
            continue;
        }
        if (cli_wants_help(a)) {
            ingest_usage(stdout);
            free(paths);
            return 0;
        }
        bool takes = !strcmp(a, "--store") || !strcmp(a, "--format") || !strcmp(a, "--from");
        if (takes && !cli_option_value(argc, argv, i)) {
            fprintf(stderr, "dream ingest: %s needs a value\n", a);
            free(paths);
            return 2;
        }
        if (!strcmp(a, "--store")) store_path = argv[++i];
        else if (!strcmp(a, "--format")) {
            if (dream_format_parse(argv[++i], &params.format)) {
                fprintf(stderr, "dream ingest: %s\n", dream_error_last());
                free(paths);
                return 2;
            }
        } else if (!strcmp(a, "--from")) {
            enum dream_format f;
            if (dream_format_parse(argv[++i], &f) ||
                (f != DREAM_FORMAT_CLAUDE_CODE && f != DREAM_FORMAT_CODEX && f != DREAM_FORMAT_PI)) {
                fprintf(stderr, "dream ingest: --from takes claude-code, codex or pi, not '%s'\n", argv[i]);
                free(paths);
                return 2;
            }
            if (n_from < 8) from[n_from++] = f;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "dream ingest: unknown option '%s'\n", a);
            ingest_usage(stderr);
            free(paths);
            return 2;
        } else
            paths[n_paths++] = a;
    }
    if (!n_paths && !n_from) {
        ingest_usage(stderr);
        free(paths);
        return 2;
    }
    /* only paths that are not there, and no agent to read: said, and no store made for it */
    bool any = n_from > 0;
    for (int k = 0; k < n_paths && !any; k++) {
        struct stat st;
        any = stat(paths[k], &st) == 0;
    }
    if (!any) {
        for (int k = 0; k < n_paths; k++) {
            struct stat st;
            int e = stat(paths[k], &st) == 0 ? 0 : errno;
            fprintf(stderr, "dream ingest: %s: %s\n", paths[k], strerror(e ? e : ENOENT));
        }
        free(paths);
        return 1;
    }
    char *default_store = NULL;
    if (!store_path) {
        if (dream_paths_store(&default_store)) {
            free(paths);
            return cli_fail("ingest", dream_error_code());
        }
        store_path = default_store;
    }
    dream_store *store;
    int rc = dream_store_open(store_path, &store);
    free(default_store);
    if (rc) {
        free(paths);
        return cli_fail("ingest", rc);
    }
    struct ingest_ui ui = {.tty = isatty(STDERR_FILENO) != 0};
    params.on_skip = ingest_on_skip;
    params.on_progress = ingest_on_progress;
    params.user = &ui;
    struct dream_ingest_stats stats = {0};
    int status = 0, missing = 0;
    cli_on_interrupt("dream ingest: interrupted; the conversations it stored are kept, and ingesting again reads the rest\n");
    for (int k = 0; k < n_from && !rc; k++) {
        char *dir;
        if ((rc = dream_ingest_default_dir(from[k], &dir))) break;
        struct dream_ingest_params p = params;
        p.format = from[k];
        struct dream_ingest_stats before = stats;
        rc = dream_ingest_path(store, dir, &p, &stats);
        if (rc == DREAM_ENOTFOUND) {
            ingest_clear_line(&ui);
            /* one agent asked for and not there is an error; among several (the nightly job asks
             * for all three), only the agents the person does not use: said, and no error, so the
             * job's log does not show one every night */
            fprintf(stderr, "dream ingest: no %s sessions: %s does not exist%s\n", dream_format_name(from[k]), dir,
                    n_from > 1 ? " (the other agents are read)" : "");
            missing++;
            rc = 0;
        } else if (!rc) {
            ingest_explain_nothing(&ui, dir, &before, &stats);
        }
        free(dir);
    }
    if (missing && (n_from == 1 || missing == n_from)) status = 1;
    for (int k = 0; k < n_paths && !rc; k++) {
        struct dream_ingest_stats before = stats;
        rc = dream_ingest_path(store, paths[k], &params, &stats);
        if (rc == DREAM_ENOTFOUND) {
            ingest_clear_line(&ui);
            fprintf(stderr, "dream ingest: %s\n", dream_error_last());
            status = 1;
            rc = 0;
        } else if (!rc && ingest_explain_nothing(&ui, paths[k], &before, &stats)) {
            status = 1;
        }
    }
    ingest_clear_line(&ui);
    free(paths);
    if (rc) {
        int r = cli_fail("ingest", rc);
        ingest_print_summary(&stats, store);
        dream_store_close(store);
        return r;
    }
    ingest_print_summary(&stats, store);
    dream_store_close(store);
    if (stats.skipped[DREAM_SKIP_MALFORMED]) status = 1;
    return status;
}
