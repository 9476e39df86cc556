/* fuzz_synth_answers.c — the synthesis stages' handling of model answers on any bytes: the draft
 * sanitizer never leaves a heading, fence or footnote definition line that would break the
 * article around it; the outline gives 1-6 one-line headings; the infobox gives only
 * `snake_case: value` lines without kind or aliases; a new section's name is 2-5 words; a
 * correction is one line of at most 80 bytes; a refresh answer, once accepted, gives snake_case
 * fields without kind, one-line values, plain aliases and categories, and merged into a small
 * article leaves it passing the grammar and footnote checks; an infobox value's links, once
 * synth_unlink_redlinks has run, all resolve; a sanitized draft placed as a section, once
 * synth_unlink_new_redlinks has run (as every write does), links to no missing article but the
 * ones the article had; a sentence said twice goes without taking a footnote marker with it.
 * Never a crash or a leak. */
#include "synth_internal.h"

#include "../src/util/buf.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Counts dream check's "points to no article" problems. */
static void fz_redlink(void *ud, int line, const char *message)
{
    (void)line;
    if (strstr(message, "points to no article")) (*(size_t *)ud)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0'; /* the seam's answers are C strings: a NUL ends them */

    char *clean = synth_sanitize(text, "Overview");
    for (const char *line = clean; line && *line;) {
        size_t len = strcspn(line, "\n");
        const char *t = line;
        while (t < line + len && (*t == ' ' || *t == '\t')) t++;
        if (*t == '#' && t < line + len) abort();
        if (t + 1 < line + len && t[0] == '[' && t[1] == '^') {
            const char *close = memchr(t, ']', (size_t)(line + len - t));
            if (close && close + 1 < line + len && close[1] == ':') abort();
        }
        line += len + (line[len] == '\n');
    }
    /* a sentence said twice goes: the text only shrinks, and every marker stays somewhere */
    if (clean) {
        char *once = strdup(clean);
        if (once) {
            size_t dropped = synth_drop_repeated_sentences(once);
            size_t lo = strlen(once), lc = strlen(clean);
            if (lo > lc || (dropped == 0) != (lo == lc)) abort();
            for (size_t i = 0, e; i < lc; i++) {
                if (!synth_marker_at(clean, i, &e)) continue;
                char m[32];
                snprintf(m, sizeof m, "%.*s", (int)(e - i < 31 ? e - i : 31), clean + i);
                if (!strstr(once, m)) abort();
            }
            free(once);
        }
    }
    /* the draft as a new section of T (the vault: T alone), its model links reduced: only T and
     * the person's own [[Hand]] (a link to no article the article already had) stay links */
    if (clean) {
        static const char own[] = "# T\n\n**T** is a thing, says [[Hand]].\n";
        struct dbuf art = {0};
        dbuf_printf(&art, "%s\n## Notes\n\n%s\n", own, clean);
        dream_article *before = NULL, *after = NULL;
        size_t unlinked = 0;
        if (art.data && dream_article_parse(own, sizeof own - 1, &before) == 0 && dream_article_parse(art.data, art.len, &after) == 0 &&
            synth_unlink_new_redlinks(after, before, "/nonexistent/dream-fuzz-wiki", "T", &unlinked) == 0) {
            static const char *const vault[] = {"T", "Hand"};
            struct dream_article_check_params cp = {.stem = "T", .stems = vault, .n_stems = 2};
            size_t red = 0;
            dream_article_check(after, &cp, fz_redlink, &red);
            if (red) abort();
            if (!strstr(dream_article_text(after, NULL), "says [[Hand]].")) abort(); /* the person's own link stays */
        }
        dream_article_free(before);
        dream_article_free(after);
        dbuf_free(&art);
    }
    free(clean);
    char *gist = synth_gist(text, 320);
    if (gist && strlen(gist) > 320 + 4) abort();
    free(gist);
    (void)synth_leaky(text);

    char *heads[8];
    size_t n = synth_parse_outline(text, heads, 8);
    if (n < 1 || n > 6) abort();
    for (size_t i = 0; i < n; i++) {
        if (!heads[i][0] || strchr(heads[i], '\n')) abort();
        free(heads[i]);
    }

    struct dbuf box = {0};
    char *cats[4] = {0};
    size_t n_cats = 0;
    if (synth_parse_infobox(text, &box, cats, &n_cats) == 0 && box.data) {
        dbuf_putc(&box, '\0');
        /* each line with its links to no article reduced to text (CREATE's rule) makes an infobox
         * whose every link resolves */
        static char *stems[] = {"T", "Maestro_Lee"};
        struct synth_stems st = {stems, 2};
        struct dbuf art = {0};
        dbuf_puts(&art, "# T\n\n```info\n");
        for (const char *line = box.data; *line;) {
            size_t len = strcspn(line, "\n");
            const char *colon = memchr(line, ':', len);
            if (!colon || colon == line) abort();
            for (const char *k = line; k < colon; k++)
                if (!(islower((unsigned char)*k) || isdigit((unsigned char)*k) || *k == '_')) abort();
            if ((colon - line == 4 && !strncmp(line, "kind", 4)) || (colon - line == 7 && !strncmp(line, "aliases", 7))) abort();
            char *l = strndup(line, len), *u = l ? synth_unlink_redlinks(l, &st) : NULL;
            if (u) dbuf_printf(&art, "%s\n", u);
            free(u);
            free(l);
            line += len + (line[len] == '\n');
        }
        dbuf_puts(&art, "```\n\n**T** is a thing.\n");
        dream_article *a = NULL;
        if (art.data && dream_article_parse(art.data, art.len, &a) == 0) {
            struct dream_article_check_params cp = {.stem = "T", .stems = (const char *const *)stems, .n_stems = 2};
            size_t red = 0;
            dream_article_check(a, &cp, fz_redlink, &red);
            if (red) abort();
        }
        dream_article_free(a);
        dbuf_free(&art);
    }
    dbuf_free(&box);
    if (n_cats > 4) abort();
    for (size_t i = 0; i < n_cats; i++) {
        if (!cats[i] || strpbrk(cats[i], "[]|\n")) abort();
        free(cats[i]);
    }

    char *h = synth_parse_heading(text);
    if (h) {
        int words = 0;
        for (const char *p = h; *p; p++)
            if (*p != ' ' && (p == h || p[-1] == ' ')) words++;
        if (words < 2 || words > 5) abort();
        free(h);
    }
    struct synth_refresh rf;
    if (synth_parse_refresh(text, &rf)) {
        if (rf.n + rf.n_alias + rf.n_cat == 0 || rf.n > SYNTH_REFRESH_MAX || rf.n_alias > SYNTH_REFRESH_MAX || rf.n_cat > 4) abort();
        for (size_t i = 0; i < rf.n; i++) {
            if (!rf.key[i][0] || !strcmp(rf.key[i], "kind") || !rf.value[i][0] || strpbrk(rf.value[i], "\n`")) abort();
            for (const char *k = rf.key[i]; *k; k++)
                if (!(islower((unsigned char)*k) || isdigit((unsigned char)*k) || *k == '_')) abort();
        }
        for (size_t i = 0; i < rf.n_alias; i++)
            if (!rf.alias[i][0] || strpbrk(rf.alias[i], ",[]\n")) abort();
        for (size_t i = 0; i < rf.n_cat; i++)
            if (!rf.cat[i][0] || strpbrk(rf.cat[i], "[]|\n")) abort();
        static const char art[] = "# T\n\n**T** is a thing.[^1]\n\n## References\n\n[^1]: `conv:abcd1234#m1` (2024-01-01, t)\n";
        dream_article *a = NULL;
        bool changed = false;
        size_t unheld = 0;
        if (dream_article_parse(art, sizeof art - 1, &a) == 0 && synth_refresh_apply(a, "T", &rf, NULL, &changed, &unheld) == 0) {
            struct dream_article_check_params cp = {.stem = "T"};
            if (dream_article_check(a, &cp, NULL, NULL) != 0) abort();
        }
        dream_article_free(a);
        synth_refresh_free(&rf);
    }

    char *v = synth_parse_correction(text, "old");
    if (v && (strlen(v) > 80 || strchr(v, '\n') || !strcmp(v, "old"))) abort();
    free(v);
    free(text);
    return 0;
}
