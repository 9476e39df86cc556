/* fuzz_read.c — the read tools on an article made of any bytes, asked with any name, anchor and
 * query. Input: ARTICLE \0 NAME \0 ANCHOR \0 QUERY (missing parts are empty). Checks: every tool
 * answers with a JSON object, the default outputs about the fuzzed article stay within
 * DREAM_READ_BUDGET, whatever the name only the two listed files are ever read, the text
 * rendering never fails; never a crash or a leak. */
#include "dream/error.h"
#include "dream/log.h"
#include "dream/read.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char vault[64];

static void fuzz_write(const char *name, const void *text, size_t len)
{
    char path[160];
    snprintf(path, sizeof path, "%s/articles/%s", vault, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (len && fwrite(text, 1, len, f) != len) abort();
    fclose(f);
}

static void fuzz_cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", vault);
    if (system(cmd) != 0) fprintf(stderr, "fuzz_read: cannot remove %s\n", vault);
}

static void fuzz_setup(void)
{
    if (vault[0]) return;
    snprintf(vault, sizeof vault, "/tmp/dream-fuzz-read-XXXXXX");
    if (!mkdtemp(vault)) abort();
    char dir[96];
    snprintf(dir, sizeof dir, "%s/articles", vault);
    if (mkdir(dir, 0755) != 0) abort();
    const char *alpha = "# Alpha\n\ncategories: [[Category:Letters]]\n\n**Alpha** links to [[Fuzz]] and [[Beta]][^1].\n\n"
                        "## One\n\nText.\n\n## References\n\n[^1]: `conv:0a0b0c0d#1` (2024-01-01, A title)\n";
    fuzz_write("Alpha.md", alpha, strlen(alpha));
    atexit(fuzz_cleanup);
}

/* Calls one tool; checks the answer. budget: the result must fit DREAM_READ_BUDGET on success. */
static int fuzz_call(dream_reader *r, const char *tool, json_t *args, int budget)
{
    json_t *o = NULL;
    int rc = dream_read_call(r, tool, args, &o);
    if (rc == DREAM_ENOMEM) {
        json_decref(o);
        return rc;
    }
    if (!json_is_object(o)) abort();
    if (rc == 0 && budget) {
        char *s = json_dumps(o, JSON_COMPACT);
        if (!s) abort();
        if (strlen(s) > DREAM_READ_BUDGET) {
            fprintf(stderr, "fuzz_read: %s gave %zu bytes: %.300s\n", tool, strlen(s), s);
            abort();
        }
        free(s);
    }
    char *t = dream_read_text(tool, o);
    if (!t) abort();
    free(t);
    json_decref(o);
    return rc;
}

/* {key: value, ...} of the pairs whose value is valid UTF-8 (JSON strings must be). */
static json_t *fuzz_args(const char *const *kv, size_t n)
{
    json_t *o = json_object();
    if (!o) abort();
    for (size_t i = 0; i + 1 < n; i += 2) {
        json_t *v = json_string(kv[i + 1]);
        if (v) json_object_set_new(o, kv[i], v);
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dream_log_set_level(DREAM_LOG_ERROR);
    fuzz_setup();
    const char *part[4] = {"", "", "", ""};
    size_t plen[4] = {0, 0, 0, 0};
    char *copy = malloc(size + 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= size && k < 4; i++) {
        if (i == size || copy[i] == '\0') {
            part[k] = copy + start;
            plen[k] = i - start;
            k++;
            start = i + 1;
        }
    }
    fuzz_write("Fuzz.md", part[0], plen[0]);
    struct dream_reader_params p = {.wiki = vault, .store = ""};
    dream_reader *r = NULL;
    if (dream_reader_open(&p, &r) != 0) abort();
    const char *name = part[1], *anchor = part[2], *query = part[3];

    /* the fuzzed article by its own name: every default output within the budget */
    json_t *a = fuzz_args((const char *const[]){"name", "Fuzz", "anchor", anchor, "query", "fuzz"}, 6);
    if (fuzz_call(r, "resolve", a, 1) != 0 && dream_error_code() != DREAM_ENOMEM) abort();
    if (fuzz_call(r, "read", a, 1) != 0 && dream_error_code() != DREAM_ENOMEM) abort();
    fuzz_call(r, "links", a, 1);
    fuzz_call(r, "infobox", a, 1);
    fuzz_call(r, "section", a, 0);
    fuzz_call(r, "search", a, 1);
    fuzz_call(r, "list", a, 1);
    fuzz_call(r, "status", a, 0);
    json_object_set_new(a, "whole", json_true());
    fuzz_call(r, "read", a, 0);
    json_decref(a);

    /* the fuzzed name, anchor and query */
    a = fuzz_args((const char *const[]){"name", name, "anchor", anchor, "query", query, "category", name, "type", name}, 10);
    {
        json_t *o = NULL;
        if (dream_read_article(r, name, true, &o) == 0) { /* whatever the name, only a listed file is read */
            const char *stem = json_string_value(json_object_get(o, "stem"));
            if (!stem || (strcmp(stem, "Alpha") && strcmp(stem, "Fuzz"))) abort();
        }
        json_decref(o);
        fuzz_call(r, "read", a, 1);
        fuzz_call(r, "resolve", a, 0);
        fuzz_call(r, "section", a, 0);
        fuzz_call(r, "links", a, 1);
        fuzz_call(r, "infobox", a, 1);
        fuzz_call(r, "category", a, 1);
        fuzz_call(r, "search", a, 1);
        fuzz_call(r, (const char *)query, a, 0); /* any tool name */
        json_decref(a);
    }
    dream_reader_close(r);
    free(copy);
    dream_error_clear();
    return 0;
}
