/* cmd_check.c — `dream check`: validate every article of the wiki (grammar, footnotes, links,
 * provenance) and name each violation as FILE:LINE: message; and that every text the store
 * holds is valid UTF-8, naming each row that is not. */
#include "cli.h"

#include "dream/article.h"
#include "dream/error.h"
#include "dream/paths.h"
#include "dream/store.h"
#include "dream/vault.h"
#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char cmd_check_summary[] = "validate every article of the wiki (grammar, footnotes, links) and the store's text";

static void check_usage(FILE *f)
{
    fprintf(f,
            "usage: dream check [--wiki DIR] [--store PATH] [--quiet]\n"
            "\n"
            "Reads every article under the wiki's articles/ and reports each violation of the\n"
            "article grammar as FILE:LINE: message: one H1 matching the file name, the header order,\n"
            "at most one infobox, closed code fences, the section order (body, History, See also,\n"
            "Notes, References last), footnotes (every marker defined, every definition cited,\n"
            "numbered 1, 2, 3 ... in order of first citation, each `conv:HASH#MSG` (YYYY-MM-DD,\n"
            "title) or, for a source with no date, (undated, title)), and links to articles that do\n"
            "not exist. Every link into Sources/ (a footnote's link to the message it cites)\n"
            "must land on an existing note and block, and the store must hold the message every\n"
            "footnote cites (as it is now, or as dream kept it when a later export replaced it).\n"
            "Then reads every text the store holds and names each value that is not valid UTF-8\n"
            "as STORE: table TABLE, row KEY, column COLUMN (what breaks a program that reads the\n"
            "store as text).\n"
            "\n"
            "Exits 0 with a summary line (and one for the store) when all is clean, 1 when anything\n"
            "is wrong.\n"
            "\n"
            "options:\n"
            "  --wiki DIR     the wiki (default: ~/.local/share/dream/wiki, $DREAM_WIKI, or\n"
            "                 $DREAM_HOME/wiki)\n"
            "  --store PATH   the store (default: ~/.local/share/dream/memory.sqlite, or\n"
            "                 $DREAM_HOME/memory.sqlite; the default is checked when it exists)\n"
            "  --quiet        no summary lines when clean\n"
            "  -h, --help     this text\n");
}

struct check_file {
    const char *path;
    size_t problems;
};

static void on_problem(void *ud, int line, const char *message)
{
    struct check_file *f = ud;
    f->problems++;
    printf("%s:%d: %s\n", f->path, line > 0 ? line : 1, message);
}

struct check_store {
    const char *path;
    dream_store *store; /* NULL: none to check (the default one does not exist) or it cannot be read */
    int open_rc;        /* why it cannot be read, said after the articles */
    char *open_error;
    char why[512];      /* check_cite_missing's answer */
};

static void on_bad_text(void *ud, const struct dream_store_bad_text *bad)
{
    const struct check_store *s = ud;
    printf("%s: table %s, row %s, column %s: not valid UTF-8 from byte %zu on\n", s->path, bad->table, bad->row, bad->column, bad->offset);
}

/* dream_article_cite_fn over the store: a replaced message (dream_store_cited_message) counts. */
static const char *check_cite_missing(void *ud, const char *conv, const char *msg)
{
    struct check_store *s = ud;
    char *text = NULL;
    bool replaced = false;
    int rc = dream_store_cited_message(s->store, conv, msg, &text, &replaced);
    free(text);
    if (!rc) return NULL;
    snprintf(s->why, sizeof s->why, "%s", dream_error_last());
    dream_error_clear();
    return s->why;
}

/* Opens the store to check: store_arg, else the default when it exists (*dflt its path). 0, or
 * 1 when the default's path cannot be made or store_arg names nothing (said on stderr); a store
 * that cannot be opened is left for check_store to report. */
static int check_open_store(const char *store_arg, char **dflt, struct check_store *cs)
{
    *dflt = NULL;
    if (!store_arg && dream_paths_store(dflt) != 0) return cli_fail("check", dream_error_code());
    cs->path = store_arg ? store_arg : *dflt;
    struct stat st;
    if (stat(cs->path, &st) != 0) { /* checking never makes a store */
        if (!store_arg) cs->path = NULL;
        else fprintf(stderr, "dream check: no store at %s: %s (name an existing store with --store)\n", store_arg, strerror(errno));
        return store_arg ? 1 : 0;
    }
    if ((cs->open_rc = dream_store_open(cs->path, &cs->store))) {
        cs->open_error = strdup(dream_error_last());
        dream_error_clear();
    }
    return 0;
}

/* Checks the store's text; *problems counts what it found. Returns 0, or 1 when the store cannot
 * be read (said on stderr). */
static int check_store(struct check_store *cs, bool quiet, size_t *problems)
{
    *problems = 0;
    if (!cs->path) return 0;
    if (cs->open_rc) {
        fflush(stdout);
        fprintf(stderr, "dream check: %s\n", cs->open_error ? cs->open_error : "cannot open the store");
        return 1;
    }
    int rc = dream_store_check_text(cs->store, on_bad_text, cs, problems);
    int status = rc ? cli_fail("check", rc) : 0;
    fflush(stdout);
    if (!rc && *problems) fprintf(stderr, "dream check: %zu text value(s) of the store %s are not valid UTF-8\n", *problems, cs->path);
    else if (!rc && !quiet) printf("dream check: the store %s: all its text is valid UTF-8\n", cs->path);
    return status;
}

/* dream_article_block_fn over the wiki: note NAME is NAME.md under the wiki; block id ^id must
 * end one of its lines (or stand alone on one), as Obsidian reads block ids. */
static bool check_block_exists(void *ud, const char *note, const char *block)
{
    const char *wiki = ud;
    char path[4096];
    if (strstr(note, "..")) return false;
    snprintf(path, sizeof path, "%s/%s.md", wiki, note);
    char *text = NULL;
    size_t len = 0;
    if (file_read_all(path, 0, &text, &len) != 0) {
        dream_error_clear();
        return false;
    }
    bool found = block == NULL;
    size_t bl = block ? strlen(block) : 0;
    for (size_t i = 0; !found && i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - text) : len;
        while (e > i && (text[e - 1] == ' ' || text[e - 1] == '\r')) e--;
        found = e - i >= bl + 1 && memcmp(text + e - bl, block, bl) == 0 && text[e - bl - 1] == '^' &&
                (e - bl - 1 == i || text[e - bl - 2] == ' ');
        i = nl ? (size_t)(nl - text) + 1 : len;
    }
    free(text);
    return found;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir, hidden ones aside, sorted: with ext, only the names ending in it, without
 * it ("Gus" for "Gus.md"); NULL on failure. */
static char **list_names(const char *dir, const char *ext, size_t *n)
{
    DIR *d = opendir(dir);
    *n = 0;
    if (!d) return NULL;
    size_t cap = 64, el = ext ? strlen(ext) : 0;
    char **v = malloc(cap * sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || (ext && (l <= el || strcmp(e->d_name + l - el, ext) != 0))) continue;
        if (*n == cap) {
            char **p = realloc(v, (cap *= 2) * sizeof *v);
            if (!p) break;
            v = p;
        }
        if (!(v[*n] = strndup(e->d_name, l - el))) break;
        (*n)++;
    }
    closedir(d);
    if (v) qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

/* Reports each article (*.md) in a folder of articles/ (dir, at any depth up to eight, hidden
 * folders aside): dream reads and writes only the articles directly in dir, so one filed in a
 * folder is out of every read verb and the nightly run. Adds one problem per such file. */
static void check_foldered(const char *dir, const char *sub, int depth, size_t *problems)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", dir, sub[0] ? "/" : "", sub);
    size_t n = 0;
    char **names = depth < 8 ? list_names(path, NULL, &n) : NULL;
    for (size_t i = 0; names && i < n; i++) {
        char child[4096], rel[4096];
        snprintf(rel, sizeof rel, "%s%s%s", sub, sub[0] ? "/" : "", names[i]);
        snprintf(child, sizeof child, "%s/%s", dir, rel);
        struct stat st;
        size_t l = strlen(names[i]);
        if (lstat(child, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) check_foldered(dir, rel, depth + 1, problems);
        else if (sub[0] && S_ISREG(st.st_mode) && l > 3 && strcmp(names[i] + l - 3, ".md") == 0) {
            printf("%s:1: an article in a folder of articles/: dream reads and writes only the articles directly in %s, so read, search, "
                   "ask and the nightly run do not see this one; move it back to %s/%s (Obsidian links by name, so [[links]] to it keep "
                   "working)\n",
                   child, dir, dir, names[i]);
            ++*problems;
        }
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

int cmd_check(int argc, char **argv)
{
    const char *wiki = NULL, *store = NULL;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        if (cli_wants_help(argv[i])) {
            check_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--wiki") == 0 && cli_option_value(argc, argv, i)) {
            wiki = argv[++i];
        } else if (strcmp(argv[i], "--store") == 0 && cli_option_value(argc, argv, i)) {
            store = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = true;
        } else {
            fprintf(stderr, "dream check: unknown argument '%s'\n", argv[i]);
            check_usage(stderr);
            return 2;
        }
    }
    char *dflt = NULL;
    if (!wiki) {
        int rc = dream_paths_wiki_dir(&dflt);
        if (rc) return cli_fail("check", rc);
        wiki = dflt;
    }
    size_t wl = strlen(wiki);
    char *dir = malloc(wl + 16);
    if (!dir) {
        free(dflt);
        return cli_fail("check", dream_error_set(DREAM_ENOMEM, "out of memory"));
    }
    snprintf(dir, wl + 16, "%s/articles", wiki);
    struct stat st;
    /* a wiki dream init set up whose articles/ is gone holds no article */
    bool have = stat(dir, &st) == 0 && S_ISDIR(st.st_mode), empty = !have && dream_vault_is_set_up(wiki);
    if (!have && !empty) {
        fprintf(stderr, "dream check: %s is not a directory: is %s a wiki? (create one with `dream init --wiki %s`)\n",
                dir, wiki, wiki);
        free(dir);
        free(dflt);
        return 1;
    }
    size_t n = 0;
    char **stems = empty ? calloc(1, sizeof *stems) : list_names(dir, ".md", &n);
    if (!stems) {
        fprintf(stderr, "dream check: cannot list %s\n", dir);
        free(dir);
        free(dflt);
        return 1;
    }
    char *store_dflt = NULL;
    struct check_store cs = {0};
    if (check_open_store(store, &store_dflt, &cs)) {
        for (size_t i = 0; i < n; i++) free(stems[i]);
        free(stems);
        free(dir);
        free(dflt);
        return 1;
    }
    size_t problems = 0, bad_files = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.md", dir, stems[i]);
        struct check_file cf = {path, 0};
        dream_article *a = NULL;
        int rc = dream_article_read_file(path, &a);
        if (rc) {
            printf("%s:1: cannot read: %s\n", path, dream_error_last());
            cf.problems = 1;
        } else {
            struct dream_article_check_params p = {.stem = stems[i], .stems = (const char *const *)stems, .n_stems = n,
                                                   .block_exists = check_block_exists, .block_ud = (void *)wiki,
                                                   .cite_missing = cs.store ? check_cite_missing : NULL, .cite_ud = &cs};
            dream_article_check(a, &p, on_problem, &cf);
            dream_article_free(a);
        }
        problems += cf.problems;
        bad_files += cf.problems > 0;
    }
    for (size_t i = 0; i < n; i++) free(stems[i]);
    free(stems);
    size_t foldered = 0;
    if (have) check_foldered(dir, "", 0, &foldered);
    problems += foldered;
    bad_files += foldered;
    int status = 0;
    fflush(stdout);
    if (problems) {
        fprintf(stderr, "dream check: %zu problem(s) in %zu of %zu article(s) in %s\n", problems, bad_files, n + foldered, dir);
        status = 1;
    } else if (!quiet) {
        printf("dream check: %zu article(s) in %s, all clean\n", n, dir);
    }
    size_t bad_text = 0;
    if (check_store(&cs, quiet, &bad_text) || bad_text) status = 1;
    dream_store_close(cs.store);
    free(cs.open_error);
    free(store_dflt);
    free(dir);
    free(dflt);
    return status;
}
