/* article_gate.c — the conservative write gate (spec §6.8, with the word floor per touched
 * section as §12.24 asks): it can only say no, and says why. */
#include "article_internal.h"

#include "dream/error.h"
#include "util/file.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct verdict {
    struct dream_gate_verdict *v;
    size_t cap;
    bool oom;
};

static void reason(struct verdict *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason(struct verdict *r, const char *fmt, ...)
{
    if (r->oom) return;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->v->n_reasons == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 4;
        char **p = realloc(r->v->reasons, nc * sizeof *p);
        if (!p) {
            r->oom = true;
            return;
        }
        r->v->reasons = p;
        r->cap = nc;
    }
    char *s = strdup(msg);
    if (!s) {
        r->oom = true;
        return;
    }
    r->v->reasons[r->v->n_reasons++] = s;
}

/* Collects problem messages into a list (to compare before's with after's). */
struct msgs {
    char **m;
    size_t n, cap;
    bool oom;
};

static void collect(void *ud, int line, const char *message)
{
    (void)line;
    struct msgs *ms = ud;
    if (ms->oom) return;
    if (ms->n == ms->cap) {
        size_t nc = ms->cap ? ms->cap * 2 : 8;
        char **p = realloc(ms->m, nc * sizeof *p);
        if (!p) {
            ms->oom = true;
            return;
        }
        ms->m = p;
        ms->cap = nc;
    }
    if (!(ms->m[ms->n] = strdup(message))) ms->oom = true;
    else ms->n++;
}

static void msgs_free(struct msgs *ms)
{
    for (size_t i = 0; i < ms->n; i++) free(ms->m[i]);
    free(ms->m);
}

static bool may_vanish(const struct dream_gate_params *p, const char *conv)
{
    for (size_t i = 0; p && i < p->n_may_vanish; i++)
        if (strcmp(p->may_vanish[i], conv) == 0) return true;
    return false;
}

/* Words of a touched unit: the lead, or the section with that anchor (its own body). Returns
 * false when the article has no such unit. */
static bool unit_words(const dream_article *a, const char *anchor, size_t *words)
{
    if (strcmp(anchor, DREAM_ARTICLE_LEAD_ANCHOR) == 0) {
        const char *lead = dream_article_lead(a);
        *words = dream_article_words(lead, strlen(lead));
        return lead[0] != '\0';
    }
    for (size_t i = 0; i < a->n_secs; i++)
        if (strcmp(a->secs[i].anchor, anchor) == 0) {
            *words = dream_article_words(a->secs[i].body, strlen(a->secs[i].body));
            return true;
        }
    return false;
}

int dream_article_gate(const dream_article *before, const dream_article *after,
                       const struct dream_gate_params *p, struct dream_gate_verdict *out)
{
    memset(out, 0, sizeof *out);
    if (!after) return dream_error_set(DREAM_EINVAL, "gate: no article to judge");
    struct verdict r = {out, 0, false};
    double floor = p && p->word_floor > 0 ? p->word_floor : DREAM_GATE_WORD_FLOOR;

    /* 1. every real citation of before survives */
    for (size_t i = 0; before && i < before->n_notes; i++) {
        const struct dream_citation *c = &before->notes[i].cite;
        if (!c->conv || dream_citation_is_placeholder(c->conv) || may_vanish(p, c->conv)) continue;
        bool found = false;
        for (size_t j = 0; j < after->n_notes && !found; j++) {
            const struct dream_citation *d = &after->notes[j].cite;
            found = d->conv && strcmp(d->conv, c->conv) == 0 &&
                    (!c->msg || (d->msg && strcmp(d->msg, c->msg) == 0));
        }
        if (!found)
            reason(&r, "citation conv:%s%s%s (footnote [^%s] before) is lost", c->conv, c->msg ? "#" : "",
                   c->msg ? c->msg : "", before->notes[i].label);
    }

    /* 2. footnotes of after: bijective, contiguous, well-formed */
    struct msgs fm = {0};
    art_check_footnotes(after, collect, &fm);
    for (size_t i = 0; i < fm.n; i++) reason(&r, "footnotes: %s", fm.m[i]);
    bool oom = fm.oom;
    msgs_free(&fm);
    /* each definition in the form `conv:HASH#MSG` (DATE, title): a new one must be; one kept
     * word for word from before (say, imported in an older form) may stay as it was */
    for (size_t j = 0; j < after->n_notes; j++) {
        const struct dream_article_footnote *f = &after->notes[j];
        if (f->n_conv == 1 && f->well_formed) continue;
        bool old = false;
        for (size_t k = 0; before && k < before->n_notes && !old; k++) old = strcmp(before->notes[k].text, f->text) == 0;
        if (!old)
            reason(&r, "footnotes: definition [^%s] is not in the form `conv:HASH#MSG` (YYYY-MM-DD or undated, title) with one citation: '%s'",
                   f->label, f->text);
    }

    /* 3. the word floor on each touched section */
    for (size_t i = 0; p && i < p->n_touched; i++) {
        const char *an = p->touched[i];
        size_t wb = 0, wa = 0;
        bool in_before = before && unit_words(before, an, &wb);
        bool in_after = unit_words(after, an, &wa);
        if (!in_after) {
            reason(&r, "touched section '%s' is missing from the new text", an);
            continue;
        }
        size_t base = wb;
        if (p->baseline) {
            size_t bl = p->baseline(p->baseline_ud, an);
            if (bl > base) base = bl;
        }
        if ((in_before || base) && (double)wa < floor * (double)base)
            reason(&r, "section '%s' shrank to %zu words from %zu (the floor is %.0f%%)", an, wa, base, floor * 100.0);
    }

    /* 4. the grammar: no structural problem that before did not already have */
    struct msgs gb = {0}, ga = {0};
    if (before) art_check_grammar(before, collect, &gb);
    art_check_grammar(after, collect, &ga);
    for (size_t i = 0; i < ga.n; i++) {
        bool old = false;
        for (size_t j = 0; j < gb.n && !old; j++) old = strcmp(gb.m[j], ga.m[i]) == 0;
        if (!old) reason(&r, "grammar: %s", ga.m[i]);
    }
    oom = oom || gb.oom || ga.oom;
    msgs_free(&gb);
    msgs_free(&ga);
    if (before && before->h1_raw && !after->h1_raw) reason(&r, "the H1 is gone");
    if (before && dream_article_section_find_kind(before, DREAM_SECTION_REFERENCES) >= 0 &&
        dream_article_section_find_kind(after, DREAM_SECTION_REFERENCES) < 0)
        reason(&r, "'## References' is gone");

    if (r.oom || oom) {
        dream_gate_verdict_free(out);
        return dream_error_set(DREAM_ENOMEM, "out of memory in the gate");
    }
    out->accepted = out->n_reasons == 0;
    return 0;
}

void dream_gate_verdict_free(struct dream_gate_verdict *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->n_reasons; i++) free(v->reasons[i]);
    free(v->reasons);
    memset(v, 0, sizeof *v);
}

int dream_article_replace_file(const char *path, const dream_article *before, const dream_article *after,
                               const struct dream_gate_params *p, struct dream_gate_verdict *out)
{
    int rc = dream_article_gate(before, after, p, out);
    if (rc || !out->accepted) return rc;
    /* the file must still be what the edit was made from */
    char *disk = NULL;
    size_t len = 0;
    rc = file_read_all(path, 0, &disk, &len);
    bool same;
    if (rc == DREAM_ENOTFOUND) same = before == NULL;
    else if (rc) {
        dream_gate_verdict_free(out);
        return rc;
    } else {
        same = before && dream_article_file_holds(disk, len, before->text, before->len);
    }
    free(disk);
    dream_error_clear();
    if (!same) {
        struct verdict r = {out, 0, false};
        if (before) reason(&r, "%s changed on disk since it was read (a hand edit?): re-read it and retry", path);
        else reason(&r, "%s already exists: a new article never replaces one", path);
        if (r.oom) {
            dream_gate_verdict_free(out);
            return dream_error_set(DREAM_ENOMEM, "out of memory in the gate");
        }
        out->accepted = false;
        return 0;
    }
    rc = dream_article_write_file(after, path);
    if (rc) dream_gate_verdict_free(out);
    return rc;
}
