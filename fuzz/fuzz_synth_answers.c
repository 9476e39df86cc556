/* fuzz_synth_answers.c — the synthesis stages' handling of model answers on any bytes: the draft
 * sanitizer never leaves a heading, fence or footnote definition line that would break the
 * article around it; the outline gives 1-6 one-line headings; the infobox gives only
 * `snake_case: value` lines without kind or aliases; a new section's name is 2-5 words; a
 * correction is one line of at most 80 bytes. Never a crash or a leak. */
#include "synth_internal.h"

#include "../src/util/buf.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
        for (const char *line = box.data; *line;) {
            size_t len = strcspn(line, "\n");
            const char *colon = memchr(line, ':', len);
            if (!colon || colon == line) abort();
            for (const char *k = line; k < colon; k++)
                if (!(islower((unsigned char)*k) || isdigit((unsigned char)*k) || *k == '_')) abort();
            if ((colon - line == 4 && !strncmp(line, "kind", 4)) || (colon - line == 7 && !strncmp(line, "aliases", 7))) abort();
            line += len + (line[len] == '\n');
        }
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
    char *v = synth_parse_correction(text, "old");
    if (v && (strlen(v) > 80 || strchr(v, '\n') || !strcmp(v, "old"))) abort();
    free(v);
    free(text);
    return 0;
}
