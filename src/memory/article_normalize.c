/* article_normalize.c — NORMALIZE (spec §6.9): deterministic, idempotent, never fatal. */
#include "article_internal.h"

#include "dream/error.h"

int dream_article_normalize(dream_article *a, const struct dream_article_normalize_params *p,
                            dream_article_note_fn note, void *ud)
{
    (void)a;
    (void)p;
    (void)note;
    (void)ud;
    return 0;
}
