/* fuzz_article.c — the article parser, writer, normalize, check, gate and forget on any bytes:
 * writing an unedited parse gives back the input byte for byte (a leading byte order mark
 * aside: it is not part of the article), normalize is idempotent, forget
 * leaves no definition of what it forgot, and nothing crashes or leaks. */
#include "dream/article.h"

#include "dream/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *resolve_any(void *ud, const char *target)
{
    (void)ud;
    /* resolves every target that starts with a capital letter, to its stem */
    return target[0] >= 'A' && target[0] <= 'Z' ? dream_article_stem(target) : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dream_article *a = NULL, *before = NULL;
    if (dream_article_parse((const char *)data, size, &a) != DREAM_OK) abort();
    char *out = NULL;
    size_t len = 0;
    if (dream_article_write(a, &out, &len) != DREAM_OK) abort();
    size_t bom = size >= 3 && !memcmp(data, "\xef\xbb\xbf", 3) ? 3 : 0; /* not part of the article */
    if (len != size - bom || (len && memcmp(out, data + bom, len) != 0)) abort();
    free(out);
    const char *stems[] = {"Alpha", "Beta_gamma"};
    struct dream_article_check_params cp = {.stem = "Alpha", .stems = stems, .n_stems = 2};
    (void)dream_article_check(a, &cp, NULL, NULL);
    if (dream_article_parse((const char *)data, size, &before) != DREAM_OK) abort();

    struct dream_article_normalize_params np = {.stem = "Alpha", .resolve = resolve_any, .manage_stub = true};
    if (dream_article_normalize(a, &np, NULL, NULL) != DREAM_OK) abort();
    size_t l1;
    const char *t1 = dream_article_text(a, &l1);
    char *once = malloc(l1 + 1);
    if (!once) abort();
    memcpy(once, t1, l1 + 1);
    if (dream_article_normalize(a, &np, NULL, NULL) != DREAM_OK) abort();
    size_t l2;
    const char *t2 = dream_article_text(a, &l2);
    if (l1 != l2 || memcmp(once, t2, l1) != 0) abort();
    free(once);

    const char *touched[] = {DREAM_ARTICLE_LEAD_ANCHOR, "history"};
    struct dream_gate_params gp = {.touched = touched, .n_touched = 2};
    struct dream_gate_verdict v;
    if (dream_article_gate(before, a, &gp, &v) != DREAM_OK) abort();
    if (v.accepted != (v.n_reasons == 0)) abort();
    dream_gate_verdict_free(&v);

    /* the edits synthesis makes, on the raw parse: each succeeds or refuses cleanly, and does
     * what it says */
    struct dream_citation c = {"0123abcd", "m7", "2024-05-06", "Fuzzed", NULL};
    int num = 0, rc = dream_article_footnote_add(before, &c, &num);
    if (rc == DREAM_OK && dream_article_footnote_find(before, "0123abcd", "m7") != num) abort();
    if (rc != DREAM_OK && rc != DREAM_EFORMAT) abort();
    size_t at = 0;
    rc = dream_article_section_insert(before, 2, "Fuzz Section", "Body[^1].", &at);
    if (rc == DREAM_OK && strcmp(dream_article_section(before, at)->title, "Fuzz Section") != 0) abort();
    if (rc != DREAM_OK && rc != DREAM_EFORMAT) abort();
    rc = dream_article_set_lead(before, "A new lead.");
    if (rc != DREAM_OK && rc != DREAM_EFORMAT) abort();
    rc = dream_article_infobox_set(before, "status", "fuzzed");
    if (rc == DREAM_OK && (!dream_article_infobox_get(before, "status") ||
                           strcmp(dream_article_infobox_get(before, "status"), "fuzzed") != 0))
        abort();
    if (rc != DREAM_OK && rc != DREAM_EFORMAT) abort();
    const char *cats[] = {"Fuzz"};
    rc = dream_article_set_categories(before, cats, 1);
    if (rc != DREAM_OK && rc != DREAM_EFORMAT) abort();
    rc = dream_article_set_stub(before, true);
    if (rc == DREAM_OK && !dream_article_is_stub(before)) abort();
    if (rc != DREAM_OK && rc != DREAM_EFORMAT) abort();
    dream_article_free(before);

    /* forgetting the first footnote's conversation: succeeds (or refuses an article no edit can
     * be placed in), and afterwards no definition cites it */
    dream_article *f = NULL;
    if (dream_article_parse((const char *)data, size, &f) != DREAM_OK) abort();
    const struct dream_article_footnote *fn = dream_article_footnote_count(f) ? dream_article_footnote(f, 0) : NULL;
    char *conv = fn && fn->cite.conv ? strdup(fn->cite.conv) : NULL;
    if (conv) {
        const char *convs[] = {conv};
        struct dream_article_forget_result fr;
        rc = dream_article_forget(f, convs, 1, &fr);
        if (rc != DREAM_OK && rc != DREAM_EFORMAT) abort();
        for (size_t i = 0; rc == DREAM_OK && i < dream_article_footnote_count(f); i++) {
            const char *cited = dream_article_footnote(f, i)->cite.conv;
            if (cited && strcmp(cited, conv) == 0) abort();
        }
        if (rc == DREAM_OK && !fr.changed) abort();
        free(conv);
    }
    dream_article_free(f);
    dream_article_free(a);

    /* a draft cleaned for a section body holds no definitions, no tail sections and only
     * numeric markers, and leaves no fence open */
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0';
    char *clean = NULL;
    if (dream_article_sanitize_draft(text, "Fuzz", &clean, NULL, NULL) != DREAM_OK) abort();
    free(text);
    size_t cl = strlen(clean);
    char *doc = malloc(cl + 32);
    if (!doc) abort();
    memcpy(doc, "# T\n\n## S\n\n", 12);
    memcpy(doc + 12, clean, cl + 1);
    dream_article *d = NULL;
    if (dream_article_parse(doc, strlen(doc), &d) != DREAM_OK) abort();
    if (dream_article_footnote_count(d) != 0) abort();
    for (size_t i = 0; i < dream_article_ref_count(d); i++)
        if (dream_article_ref(d, i)->number == 0) abort();
    for (size_t i = 0; i < dream_article_section_count(d); i++)
        if (dream_article_section(d, i)->kind != DREAM_SECTION_BODY) abort();
    dream_article_free(d);
    free(doc);
    free(clean);
    return 0;
}
