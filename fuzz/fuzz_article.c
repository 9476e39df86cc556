/* fuzz_article.c — the article parser, writer, normalize, check and gate on any bytes: writing
 * an unedited parse gives back the input byte for byte, normalize is idempotent, and nothing
 * crashes or leaks. */
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
    if (len != size || (size && memcmp(out, data, size) != 0)) abort();
    free(out);
    const char *stems[] = {"Alpha", "Beta_gamma"};
    struct dream_article_check_params cp = {"Alpha", stems, 2};
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
    dream_article_free(before);
    dream_article_free(a);
    return 0;
}
