/* fuzz_ask_answer.c — `dream ask` on any answer and any read. The input: a byte for how many
 * footnotes the context gave (0-40), a byte whose bits say which of them count as listed, a byte
 * for the read budget, then an article, a NUL, and the model's answer (no NUL: the answer alone).
 * The cleaned answer cites only footnotes that were listed, each marker it shows is one it reports
 * as used, and what it reports is listed, distinct and within the bound; a read renumbered against
 * the article (or kept as it is) stays within its budget and the sources within theirs. Never a
 * crash or a leak. */
#include "ask_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every marker [^k] of text (k digits) is listed and among used. */
static void fz_markers_are_used(const char *text, const bool *listed, size_t n_sources, const size_t *used, size_t n_used)
{
    for (const char *p = text; (p = strstr(p, "[^")) != NULL; p++) {
        const char *q = p + 2;
        while (*q >= '0' && *q <= '9') q++;
        if (q == p + 2 || *q != ']') continue;
        if (q - (p + 2) > 9) abort(); /* a number no source has */
        size_t k = (size_t)strtoul(p + 2, NULL, 10);
        if (k < 1 || k > n_sources || !listed[k]) abort();
        bool found = false;
        for (size_t i = 0; i < n_used; i++) found = found || used[i] == k;
        if (!found) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    size_t n_sources = data[0] % (ASK_MAX_SOURCES + 1);
    bool listed[ASK_MAX_SOURCES + 1] = {false};
    for (size_t k = 1; k <= n_sources; k++) listed[k] = (data[1] >> (k % 8)) & 1;
    size_t max = 4 + (size_t)data[2] * 4;
    data += 3, size -= 3;
    const uint8_t *nul = memchr(data, 0, size);
    size_t art_len = nul ? (size_t)(nul - data) : 0;
    const uint8_t *ans = nul ? nul + 1 : data;
    size_t ans_len = size - (size_t)(ans - data);
    char *answer = malloc(ans_len + 1);
    if (!answer) return 0;
    memcpy(answer, ans, ans_len);
    answer[ans_len] = '\0';

    size_t used[ASK_MAX_SOURCES];
    size_t n_used = 0;
    char *clean = ask_clean_answer(answer, listed, n_sources, used, &n_used);
    if (n_used > ASK_MAX_SOURCES) abort();
    for (size_t i = 0; i < n_used; i++) {
        if (used[i] < 1 || used[i] > n_sources || !listed[used[i]]) abort();
        for (size_t j = 0; j < i; j++)
            if (used[j] == used[i]) abort();
    }
    if (clean) fz_markers_are_used(clean, listed, n_sources, used, n_used);
    free(clean);

    /* the answer's text as a read: kept as it is, then renumbered against the article */
    struct ask_sources src = {0};
    char *kept = ask_renumber(answer, NULL, &src, max);
    if (kept && strlen(kept) > max) abort();
    free(kept);
    dream_article *a = NULL;
    if (art_len && dream_article_parse((const char *)data, art_len, &a) == 0) {
        char *read = ask_renumber(answer, a, &src, max);
        if (read && strlen(read) > max) abort();
        if (src.n > ASK_MAX_SOURCES) abort();
        free(read);
    }
    dream_article_free(a);
    ask_sources_free(&src);
    free(answer);
    return 0;
}
