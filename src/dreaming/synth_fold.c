/* synth_fold.c — FOLD (spec §6.6): SECTION-ROUTE, PATCH, NEW SECTION, LEAD PATCH for the
 * chunks an article has not seen yet (see dream/synthesis.h). */
#include "../util/buf.h"
#include "dream/error.h"
#include "dream/grammar.h"
#include "dream/log.h"
#include "dream/model.h"
#include "stage_state.h"
#include "synth_internal.h"
#include "util/utf8.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define FOLD_STAGE "fold"
#define FOLD_MAX_CANDIDATES 24

struct fd_article {
    int64_t entity;
    char *title, *stem, *path;
    struct synth_src *src;
    size_t n_src;
};

static void fd_article_clear(struct fd_article *a)
{
    free(a->title);
    free(a->stem);
    free(a->path);
    synth_src_free(a->src, a->n_src);
    memset(a, 0, sizeof *a);
}

/* Articles of routed entities whose file exists, oldest entity first, with their unseen chunks. */
static int fd_list(dream_store *store, const char *wiki, bool no_sources, struct fd_article **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT e.id, e.article_title FROM pipeline_entities e WHERE e.route = 'article' AND e.article_title IS NOT NULL "
                           "ORDER BY (SELECT min(coalesce(c.updated_at, c.created_at, c.ingested_at)) FROM chunk_mentions m JOIN chunks ch "
                           "ON ch.id = m.chunk JOIN conversations c ON c.id = ch.conversation WHERE m.entity = e.id), e.id",
                           -1, &st, NULL))
        return store_sql_error(store, "listing articles to fold into");
    size_t cap = 0;
    int rc = DREAM_OK, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        char *title = strdup((const char *)sqlite3_column_text(st, 1));
        char *stem = title ? dream_article_stem(title) : NULL;
        char *path = stem ? synth_article_path(wiki, stem) : NULL;
        bool keep = path && access(path, F_OK) == 0;
        for (size_t j = 0; keep && j < *n; j++) keep = strcmp((*out)[j].stem, stem) != 0;
        if (keep && *n == cap) {
            cap = cap ? 2 * cap : 16;
            struct fd_article *g = realloc(*out, cap * sizeof *g);
            if (!g) keep = false, rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            else *out = g;
        }
        if (!keep) {
            free(title);
            free(stem);
            free(path);
            if (!path && !rc) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            continue;
        }
        (*out)[(*n)++] = (struct fd_article){.entity = sqlite3_column_int64(st, 0), .title = title, .stem = stem, .path = path};
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "listing articles to fold into");
    sqlite3_finalize(st);
    for (size_t i = 0; !rc && i < *n; i++) rc = synth_entity_sources(store, (*out)[i].entity, (*out)[i].stem, no_sources, &(*out)[i].src, &(*out)[i].n_src);
    return rc;
}

/* ---- prompts ------------------------------------------------------------------------------ */

static const char route_task[] =
    "Does this note belong in this section? It belongs when it is about the section's subject, also\n"
    "when it gives a newer or different value than the section states. Answer yes or no.\n";

static const char new_section_task[] =
    "The note fits none of the article's sections. Name one new section for it: 2 to 5 words in\n"
    "Title Case, different from the existing headings. Answer NONE if the note adds nothing to this\n"
    "article. The name only.\n";

static const char patch_rules[] =
    "Keep the existing prose and every existing marker; add what the new note says, with its marker\n"
    "right after the claim it supports. Write no footnote definitions and no headings. If the note\n"
    "contradicts a claim, the later date holds: state the new value as current, put the old one in\n"
    "the past tense and keep its marker beside the new one; never present both as current, and never\n"
    "leave the new note out. Output only the new prose.\n";

static const char classify_task[] =
    "The earlier text and the later note disagree. Is the later note an EVOLUTION (the person's view\n"
    "or situation changed over time) or an ERROR (the earlier text was simply wrong)? Answer one word:\n"
    "EVOLUTION or ERROR.\n";

/* The note as the shared prefix of every question about one chunk. */
static int fd_note(struct dbuf *b, const struct synth_src *s)
{
    size_t len = utf8_prefix(s->text, strlen(s->text), 1400);
    return dbuf_printf(b, "--- Note (%s, %s) ---\n%.*s%s--- end of note ---\n\n", s->date, s->title, (int)len, s->text,
                       len && s->text[len - 1] == '\n' ? "" : "\n");
}

struct fd_cand {
    char *anchor;   /* DREAM_ARTICLE_LEAD_ANCHOR for the lead */
    char *heading;
    char *gist;
};

static void fd_cands_free(struct fd_cand *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].anchor);
        free(c[i].heading);
        free(c[i].gist);
    }
}

/* The lead and the body sections of a, with a short gist each. */
static int fd_candidates(const dream_article *a, struct fd_cand *c, size_t *n)
{
    *n = 0;
    const char *lead = dream_article_lead(a);
    if (lead && *lead) {
        c[*n] = (struct fd_cand){strdup(DREAM_ARTICLE_LEAD_ANCHOR), strdup("Lead Summary"), synth_gist(lead, 320)};
        if (!c[(*n)++].gist) return DREAM_ENOMEM;
    }
    for (size_t i = 0; i < dream_article_section_count(a) && *n < FOLD_MAX_CANDIDATES; i++) {
        const struct dream_article_section *s = dream_article_section(a, i);
        if (s->kind != DREAM_SECTION_BODY || s->level < 2) continue;
        c[*n] = (struct fd_cand){strdup(s->anchor), strdup(s->title), synth_gist(s->body, 320)};
        if (!c[*n].anchor || !c[*n].heading || !c[*n].gist) {
            (*n)++;
            return dream_error_set(DREAM_ENOMEM, "out of memory");
        }
        (*n)++;
    }
    return DREAM_OK;
}

/* Markers [^k] of text, as a list of numbers (at most cap). */
static size_t fd_markers(const char *text, int *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, "[^")) != NULL && n < cap; p += 2) {
        char *end;
        long v = strtol(p + 2, &end, 10);
        if (end != p + 2 && *end == ']' && v > 0) {
            bool dup = false;
            for (size_t i = 0; i < n && !dup; i++) dup = out[i] == (int)v;
            if (!dup) out[n++] = (int)v;
        }
    }
    return n;
}

/* Dates of the markers a passage cites, as "[^k] YYYY-MM-DD" lines. */
static int fd_cited_dates(struct dbuf *b, const dream_article *a, const char *text)
{
    int marks[64];
    size_t n = fd_markers(text, marks, 64);
    int rc = dbuf_puts(b, n ? "Dates of the claims it already cites:" : "It cites nothing yet.");
    for (size_t i = 0; !rc && i < n; i++)
        for (size_t f = 0; f < dream_article_footnote_count(a); f++) {
            const struct dream_article_footnote *fn = dream_article_footnote(a, f);
            if (fn->number == marks[i]) {
                rc = dbuf_printf(b, " [^%d] %s", marks[i], fn->cite.date ? fn->cite.date : DREAM_CITATION_UNDATED);
                break;
            }
        }
    return rc ? rc : dbuf_puts(b, "\n");
}

static char *fd_patch_prompt(const char *wiki, const char *title, const struct fd_cand *c, const char *body, const dream_article *a,
                             const struct synth_src *s, int marker, int lead_mode)
{
    struct dbuf b = {0};
    int rc = synth_policy(&b, wiki, "Article_Conventions");
    if (!rc) rc = fd_note(&b, s);
    if (!rc) rc = dbuf_printf(&b, "Article: \"%s\"\n", title);
    if (!rc && lead_mode) rc = dbuf_puts(&b, "The lead (2 to 4 sentences, present tense, the subject in bold first).\n");
    else if (!rc) rc = dbuf_printf(&b, "Section: \"%s\"\n", c->heading);
    if (!rc) rc = fd_cited_dates(&b, a, body);
    if (!rc) rc = dbuf_printf(&b, "Current text:\n<<<\n%s%s>>>\n\n", body, *body && body[strlen(body) - 1] == '\n' ? "" : "\n");
    char when[32]; /* "dated 2024-03-15", or "undated" */
    snprintf(when, sizeof when, "%s%s", synth_src_dated(s) ? "dated " : "", s->date);
    if (!rc && lead_mode == 0)
        rc = dbuf_printf(&b, "Fold the note above (%s) into this section, citing it as [^%d]. %s", when, marker, patch_rules);
    else if (!rc && lead_mode == 1)
        rc = dbuf_printf(&b,
                         "Rewrite the lead with the note above (%s), citing it as [^%d]: the person's view changed, so the lead "
                         "states the current value in the present tense, without \"previously\" asides, and keeps every existing "
                         "marker. Write no footnote definitions. Output only the lead.\n",
                         when, marker);
    else if (!rc)
        rc = dbuf_printf(&b,
                         "Rewrite the lead with the note above (%s), citing it as [^%d]: the lead stated a wrong value; replace it "
                         "with the right one (the wrong value's marker may go). Write no footnote definitions. Output only the lead.\n",
                         when, marker);
    if (!rc && !synth_src_dated(s)) rc = dbuf_puts(&b, SYNTH_UNDATED_RULE);
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

static bool fd_contains(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; *p; p++)
        if (strncasecmp(p, word, n) == 0) return true;
    return false;
}

static bool fd_yes(const char *answer)
{
    if (!answer) return false;
    while (isspace((unsigned char)*answer) || *answer == '*' || *answer == '"') answer++;
    return *answer == 'y' || *answer == 'Y';
}

/* A new section name from the answer: 2-5 words, letters and digits, not a tail name and not an
 * existing anchor; malloc'd or NULL. */
static char *fd_new_heading(const char *answer, const struct fd_cand *c, size_t n)
{
    if (!answer) return NULL;
    char buf[128];
    size_t len = strcspn(answer, "\n");
    while (len && isspace((unsigned char)*answer)) answer++, len--;
    snprintf(buf, sizeof buf, "%.*s", (int)utf8_prefix(answer, len, 127), answer);
    char *s = buf;
    while (*s == '#' || *s == '*' || *s == ' ' || *s == '"') s++;
    for (char *e = s + strlen(s); e > s && (e[-1] == '*' || e[-1] == ' ' || e[-1] == '"' || e[-1] == '.' || e[-1] == '\r'); e--) e[-1] = '\0';
    int words = 0;
    bool in_word = false, ok = *s != '\0';
    for (const char *p = s; ok && *p; p++) {
        if (*p == ' ') {
            in_word = false;
            continue;
        }
        ok = isalnum((unsigned char)*p) || *p == '-' || *p == '\'' || (unsigned char)*p >= 0x80;
        if (!in_word) words++;
        in_word = true;
    }
    if (!ok || words < 2 || words > 5) return NULL;
    char *anchor = dream_article_anchor(s);
    bool taken = !anchor || !strcmp(anchor, "references") || !strcmp(anchor, "see-also") || !strcmp(anchor, "notes") ||
                 !strcmp(anchor, "history");
    for (size_t i = 0; !taken && i < n; i++) taken = strcmp(c[i].anchor, anchor) == 0;
    free(anchor);
    return taken ? NULL : strdup(s);
}

char *synth_parse_heading(const char *answer)
{
    return fd_new_heading(answer, NULL, 0);
}

/* Whether the patch keeps every marker the old text had and adds the new one. */
static bool fd_patch_ok(const char *old, const char *draft, int marker, bool may_drop)
{
    if (!*draft || synth_leaky(draft) || !synth_has_marker(draft, marker)) return false;
    int marks[64];
    size_t n = fd_markers(old, marks, 64);
    for (size_t i = 0; !may_drop && i < n; i++)
        if (!synth_has_marker(draft, marks[i])) return false;
    return true;
}

static bool fd_already_folded(dream_store *store, int64_t chunk, const char *stem, const char *anchor)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "SELECT 1 FROM chunk_folded WHERE chunk = ? AND article = ? AND section = ?", -1, &st, NULL))
        return false;
    sqlite3_bind_int64(st, 1, chunk);
    sqlite3_bind_text(st, 2, stem, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, anchor, -1, SQLITE_STATIC);
    bool yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* A failed fold of s into art: retried next run until max_attempts, then routed without a patch. */
static int fd_fail(dream_store *store, const struct dream_synth_params *p, const struct fd_article *art, const struct synth_src *s,
                   const char *why, struct dream_synth_result *res)
{
    char stage[600];
    snprintf(stage, sizeof stage, FOLD_STAGE "/%s", art->stem);
    bool gave_up = false;
    int rc = stage_state_fail(store, stage, s->chunk, 1, why, p->max_attempts, false, store_now_ms(), &gave_up);
    res->rejected++;
    if (!rc && gave_up) rc = synth_mark_routed(store, s->chunk, art->stem);
    return rc;
}

/* ---- rounds ---------------------------------------------------------------------------------
 * A round folds up to `batch` (article, chunk) pairs of distinct articles (the pairs of one
 * article stay sequential, each patch changes the article): every phase (section-route, new
 * section, classifier, patches) is one batched call across the round's pairs, and each pair's
 * answers are then used exactly as if it had been asked alone. */

enum fd_outcome {
    FD_ASKING = 0, /* still in the phases */
    FD_NOWHERE,    /* no section said yes and the model answered NONE: the note adds nothing */
    FD_NO_NAME,    /* no section said yes and the new section's name was unusable */
    FD_SKIPPED,    /* no edit can be placed in the article (synth_editable): nothing asked or recorded */
};

struct fd_pair {
    const struct fd_article *art;
    const struct synth_src *s;
    dream_article *before, *after;
    struct fd_cand cands[FOLD_MAX_CANDIDATES + 1];
    size_t n_c;
    bool matched[FOLD_MAX_CANDIDATES + 1];
    size_t n_match;
    char *new_heading;
    int evolution, marker;
    enum fd_outcome outcome;
    size_t first, n_asked;                 /* its prompts in the phase's call */
    size_t which[FOLD_MAX_CANDIDATES + 1]; /* the candidate of each of its patch prompts */
};

static void fd_pair_clear(struct fd_pair *q)
{
    free(q->new_heading);
    fd_cands_free(q->cands, q->n_c);
    dream_article_free(q->before);
    dream_article_free(q->after);
    memset(q, 0, sizeof *q);
}

/* The prompts of one phase, every pair's in a row, and their answers. */
struct fd_batch {
    char **prompts, **answers;
    char **grammars; /* a patch prompt's own prose grammar (synth_prose_grammar), else NULL */
    size_t n;
};

static void fd_batch_reset(struct fd_batch *b, struct fd_pair *pairs, size_t n_pairs)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->prompts[i]);
        free(b->answers[i]);
        free(b->grammars[i]);
        b->prompts[i] = b->answers[i] = b->grammars[i] = NULL;
    }
    b->n = 0;
    for (size_t k = 0; k < n_pairs; k++) pairs[k].first = pairs[k].n_asked = 0;
}

/* The prompt built in d (NULL, d freed, when building it failed). */
static char *fd_take(struct dbuf *d, bool failed)
{
    if (!failed) return dbuf_take(d);
    dbuf_free(d);
    return NULL;
}

/* Adds prompt (taken; NULL: out of memory) to q's questions of the phase. */
static int fd_ask(struct fd_batch *b, struct fd_pair *q, char *prompt)
{
    if (!prompt) return dream_error_set(DREAM_ENOMEM, "out of memory");
    if (q->n_asked == 0) q->first = b->n;
    b->prompts[b->n++] = prompt;
    q->n_asked++;
    return DREAM_OK;
}

/* One batched call of stage for the phase's prompts; an answer is NULL where its call failed.
 * As when each pair was asked alone, the stage fails when one pair's questions got no answer at
 * all (a prompt too big for the context is not a failure: the pair goes on without it). */
static int fd_call(const char *stage, const char *grammar, struct fd_batch *b, int max_tokens, const struct fd_pair *pairs, size_t n_pairs)
{
    if (b->n == 0) return DREAM_OK;
    struct dream_local_input *in = calloc(b->n, sizeof *in);
    if (!in) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < b->n; i++) in[i] = (struct dream_local_input){.user = b->prompts[i], .grammar = b->grammars[i]};
    struct dream_call_opts opts = dream_call_default_opts();
    opts.max_tokens = max_tokens;
    opts.grammar = grammar;
    int rc = dream_call_local_batch(stage, in, b->n, &opts, b->answers);
    free(in);
    if (!rc || rc == DREAM_ETOOBIG) return DREAM_OK;
    for (size_t k = 0; k < n_pairs; k++) {
        size_t answered = 0;
        for (size_t j = 0; j < pairs[k].n_asked; j++) answered += b->answers[pairs[k].first + j] != NULL;
        if (pairs[k].n_asked && answered == 0) return dream_error_wrap(rc, "fold: the %s stage gave no answer", stage);
    }
    return DREAM_OK;
}

/* The answer to q's j-th question of the phase. */
static const char *fd_answer(const struct fd_batch *b, const struct fd_pair *q, size_t j)
{
    return j < q->n_asked ? b->answers[q->first + j] : NULL;
}

/* Phase 1: re-read the article (a hand edit since the last run is what we patch), list its
 * candidates, and ask one yes/no per candidate, the note first in every prompt. An article no
 * edit can be placed in (a fence that never closes) is skipped with a warning. */
static int fd_route(dream_store *store, struct fd_pair *pairs, size_t n_pairs, struct fd_batch *b, struct dream_synth_result *res)
{
    int rc = DREAM_OK;
    for (size_t k = 0; !rc && k < n_pairs; k++) {
        struct fd_pair *q = &pairs[k];
        rc = dream_article_read_file(q->art->path, &q->before);
        if (!rc && !synth_editable(FOLD_STAGE, q->art->path, q->before, res)) {
            q->outcome = FD_SKIPPED;
            continue;
        }
        if (!rc) rc = fd_candidates(q->before, q->cands, &q->n_c);
        for (size_t i = 0; !rc && i < q->n_c; i++) {
            struct dbuf d = {0};
            bool e = fd_note(&d, q->s) || dbuf_printf(&d, "Article: \"%s\"\nSection: \"%s\"\nWhat it says: %s\n\n%s", q->art->title,
                                                      q->cands[i].heading, *q->cands[i].gist ? q->cands[i].gist : "(nothing yet)", route_task);
            rc = fd_ask(b, q, fd_take(&d, e));
        }
    }
    if (!rc) rc = fd_call("section", dream_grammar_yes_no, b, 4, pairs, n_pairs);
    for (size_t k = 0; !rc && k < n_pairs; k++) {
        struct fd_pair *q = &pairs[k];
        if (q->outcome == FD_SKIPPED) continue;
        for (size_t i = 0; i < q->n_c; i++)
            if (fd_yes(fd_answer(b, q, i)) && !fd_already_folded(store, q->s->chunk, q->art->stem, q->cands[i].anchor))
                q->matched[i] = true, q->n_match++;
        rc = dream_article_clone(q->before, &q->after);
    }
    fd_batch_reset(b, pairs, n_pairs);
    return rc;
}

/* Phase 2: for a pair no section said yes to, a new section's name, or NONE (nowhere). */
static int fd_new_sections(struct fd_pair *pairs, size_t n_pairs, struct fd_batch *b)
{
    int rc = DREAM_OK;
    for (size_t k = 0; !rc && k < n_pairs; k++) {
        struct fd_pair *q = &pairs[k];
        if (q->n_match || q->outcome != FD_ASKING) continue;
        struct dbuf d = {0};
        bool e = fd_note(&d, q->s) || dbuf_printf(&d, "Article: \"%s\"\nThe note is about: %s\nExisting sections:", q->art->title, q->s->label);
        for (size_t i = 0; !e && i < q->n_c; i++)
            if (strcmp(q->cands[i].anchor, DREAM_ARTICLE_LEAD_ANCHOR) != 0) e = dbuf_printf(&d, "\n- %s", q->cands[i].heading) != 0;
        if (!e) e = dbuf_printf(&d, "\n\n%s", new_section_task) != 0;
        rc = fd_ask(b, q, fd_take(&d, e));
    }
    if (!rc) rc = fd_call("editor", dream_grammar_section_name, b, 16, pairs, n_pairs);
    for (size_t k = 0; !rc && k < n_pairs; k++) {
        struct fd_pair *q = &pairs[k];
        if (q->n_match || q->outcome != FD_ASKING) continue;
        const char *answer = fd_answer(b, q, 0);
        q->new_heading = fd_new_heading(answer, q->cands, q->n_c);
        if (!q->new_heading) {
            bool none = false;
            if (answer) {
                while (isspace((unsigned char)*answer) || *answer == '*') answer++;
                none = strncasecmp(answer, "NONE", 4) == 0;
            }
            q->outcome = none ? FD_NOWHERE : FD_NO_NAME;
            continue;
        }
        size_t idx;
        rc = dream_article_section_insert(q->after, 2, q->new_heading, "", &idx);
        if (!rc) {
            const struct dream_article_section *sec = dream_article_section(q->after, idx);
            q->cands[q->n_c] = (struct fd_cand){strdup(sec->anchor), strdup(q->new_heading), strdup("")};
            q->matched[q->n_c++] = true;
            q->n_match = 1;
        }
    }
    fd_batch_reset(b, pairs, n_pairs);
    return rc;
}

/* Phase 3: the citation, then, for a pair whose lead said yes and already cites something, the
 * evolution/error classifier (evolution unless the answer says error and not evolution). */
static int fd_classify(struct fd_pair *pairs, size_t n_pairs, struct fd_batch *b)
{
    int rc = DREAM_OK;
    for (size_t k = 0; !rc && k < n_pairs; k++) {
        struct fd_pair *q = &pairs[k];
        q->evolution = 1;
        if (q->outcome != FD_ASKING) continue;
        struct dream_citation cite = synth_src_citation(q->s);
        rc = dream_article_footnote_add(q->after, &cite, &q->marker);
        for (size_t i = 0; !rc && i < q->n_c; i++) {
            if (!q->matched[i] || strcmp(q->cands[i].anchor, DREAM_ARTICLE_LEAD_ANCHOR) != 0) continue;
            const char *lead = dream_article_lead(q->after);
            int marks[4];
            if (fd_markers(lead, marks, 4) == 0) break;
            struct dbuf d = {0};
            bool e = fd_note(&d, q->s) || dbuf_printf(&d, "Earlier text:\n%s\n\n%s", lead, classify_task);
            rc = fd_ask(b, q, fd_take(&d, e));
            break;
        }
    }
    if (!rc) rc = fd_call("editor", dream_grammar_evolution_error, b, 8, pairs, n_pairs);
    for (size_t k = 0; !rc && k < n_pairs; k++) {
        const char *answer = fd_answer(b, &pairs[k], 0);
        if (answer && fd_contains(answer, "error") && !fd_contains(answer, "evolution")) pairs[k].evolution = 0;
    }
    fd_batch_reset(b, pairs, n_pairs);
    return rc;
}

/* Phase 4: one patch per matched candidate of every pair (the lead as a lead patch). */
static int fd_patches(const struct dream_synth_params *p, struct fd_pair *pairs, size_t n_pairs, struct fd_batch *b)
{
    int rc = DREAM_OK;
    bool spell = dream_seam_names_from_text();
    for (size_t k = 0; !rc && k < n_pairs; k++) {
        struct fd_pair *q = &pairs[k];
        if (q->outcome != FD_ASKING) continue;
        for (size_t i = 0; !rc && i < q->n_c; i++) {
            if (!q->matched[i]) continue;
            bool is_lead = strcmp(q->cands[i].anchor, DREAM_ARTICLE_LEAD_ANCHOR) == 0;
            long si = is_lead ? -1 : dream_article_section_find(q->after, q->cands[i].anchor);
            if (!is_lead && si < 0) continue;
            const char *body = is_lead ? dream_article_lead(q->after) : dream_article_section(q->after, (size_t)si)->body;
            q->which[q->n_asked] = i;
            rc = fd_ask(b, q, fd_patch_prompt(p->wiki_dir, q->art->title, &q->cands[i], body, q->after, q->s, q->marker,
                                              is_lead ? (q->evolution ? 1 : 2) : 0));
            /* a model that cannot spell a name writes the note's or the text's own */
            if (!rc && spell) {
                struct synth_src both[2] = {*q->s, {.text = (char *)body}};
                rc = synth_prose_grammar(q->art->title, both, 2, NULL, &b->grammars[b->n - 1]);
            }
        }
    }
    if (!rc) rc = fd_call("editor", NULL, b, p->max_tokens, pairs, n_pairs);
    return rc; /* the caller applies the answers, then resets b */
}

/* Phase 5, one pair: swap in each accepted draft, normalize, gate (word floor on each touched
 * section), journal and write; or record why nothing was. */
static int fd_apply(dream_store *store, const struct dream_synth_params *p, struct fd_pair *q, const struct fd_batch *b,
                    const struct synth_stems *stems, struct dream_synth_result *res)
{
    const struct fd_article *art = q->art;
    const struct synth_src *s = q->s;
    if (q->outcome == FD_SKIPPED) return DREAM_OK; /* the chunk stays unseen: the next run tries again */
    if (q->outcome == FD_NOWHERE) {
        res->unrouted++;
        return synth_mark_routed(store, s->chunk, art->stem);
    }
    if (q->outcome == FD_NO_NAME)
        return fd_fail(store, p, art, s, "no section said yes and the new section's name was unusable (2 to 5 new words, or NONE)", res);
    dream_article *after = q->after;
    char *touched[FOLD_MAX_CANDIDATES + 1];
    size_t n_touched = 0, n_lead = 0, n_new = 0, n_patch = 0;
    const char *may_vanish[64];
    size_t n_vanish = 0;
    int rc = DREAM_OK;
    for (size_t k = 0; !rc && k < q->n_asked; k++) {
        size_t i = q->which[k];
        const char *answer = fd_answer(b, q, k);
        bool is_lead = strcmp(q->cands[i].anchor, DREAM_ARTICLE_LEAD_ANCHOR) == 0;
        long si = is_lead ? -1 : dream_article_section_find(after, q->cands[i].anchor);
        const char *old = is_lead ? dream_article_lead(after) : si >= 0 ? dream_article_section(after, (size_t)si)->body : NULL;
        if (!old) continue;
        char *oldcopy = strdup(old);
        char *draft = answer ? synth_sanitize(answer, is_lead ? NULL : q->cands[i].heading) : NULL;
        if (!oldcopy || (answer && !draft)) rc = DREAM_ENOMEM;
        bool ok = !rc && draft && fd_patch_ok(oldcopy, draft, q->marker, is_lead && !q->evolution);
        if (ok && is_lead && !q->evolution) {
            /* an error correction: the wrong value's conversations may leave */
            int marks[16];
            size_t nm = fd_markers(oldcopy, marks, 16);
            for (size_t m = 0; m < nm && n_vanish < 64; m++)
                if (!synth_has_marker(draft, marks[m]))
                    for (size_t f = 0; f < dream_article_footnote_count(after); f++)
                        if (dream_article_footnote(after, f)->number == marks[m] && dream_article_footnote(after, f)->cite.conv)
                            may_vanish[n_vanish++] = strdup(dream_article_footnote(after, f)->cite.conv);
        }
        if (ok) rc = is_lead ? dream_article_set_lead(after, draft) : dream_article_section_set_body(after, (size_t)si, draft);
        if (ok && !rc) {
            touched[n_touched++] = q->cands[i].anchor;
            if (is_lead) n_lead++;
            else if (q->new_heading && i == q->n_c - 1) n_new++;
            else n_patch++;
        } else if (!rc) {
            res->rejected++;
        }
        free(oldcopy);
        free(draft);
    }
    if (!rc && n_touched == 0) {
        rc = fd_fail(store, p, art, s, "no usable patch (empty, leaky, or without the new marker or an old one)", res);
    } else if (!rc) {
        rc = synth_pin_citations(after, s, 1, q->marker);
        size_t dropped = 0, recited = 0;
        if (!rc) rc = synth_drop_unfounded(after, s, 1, q->marker, &dropped, &recited);
        if (!rc) rc = synth_normalize(after, art->stem, stems);
        struct synth_ledger rows[FOLD_MAX_CANDIDATES + 2];
        size_t n_rows = 0;
        rows[n_rows++] = (struct synth_ledger){.chunk = s->chunk};
        for (size_t t = 0; t < n_touched; t++) rows[n_rows++] = (struct synth_ledger){.chunk = s->chunk, .section = touched[t]};
        struct dream_gate_params gp = {.touched = (const char *const *)touched, .n_touched = n_touched, .may_vanish = may_vanish, .n_may_vanish = n_vanish};
        bool accepted = false;
        if (!rc) rc = synth_write(store, p->wiki_dir, FOLD_STAGE, art->stem, q->before, after, &gp, rows, n_rows, art->stem, 0, &accepted);
        if (!rc && accepted) {
            res->unfounded += dropped;
            res->recited += recited;
            res->lead_patches += n_lead;
            res->new_sections += n_new;
            res->patched += n_patch;
        } else if (!rc) {
            /* vetoed (or the file changed under us): nothing written */
            rc = fd_fail(store, p, art, s, "the patched article failed the gate", res);
        }
    }
    for (size_t i = 0; i < n_vanish; i++) free((char *)may_vanish[i]);
    return rc;
}

/* Folds each pair of the round (of distinct articles) into its article; *done counts the pairs
 * finished, wrote[k] says whether pair k's article was written, skipped[k] whether it was
 * skipped (no edit can be placed in it). */
static int fd_round(dream_store *store, const struct dream_synth_params *p, struct fd_pair *pairs, size_t n_pairs, struct fd_batch *b,
                    const struct synth_stems *stems, struct dream_synth_result *res, size_t *done, bool *wrote, bool *skipped)
{
    int rc = fd_route(store, pairs, n_pairs, b, res);
    if (!rc) rc = fd_new_sections(pairs, n_pairs, b);
    if (!rc) rc = fd_classify(pairs, n_pairs, b);
    if (!rc) rc = fd_patches(p, pairs, n_pairs, b);
    for (size_t k = 0; !rc && k < n_pairs; k++) {
        size_t before = res->patched + res->new_sections + res->lead_patches;
        rc = fd_apply(store, p, &pairs[k], b, stems, res);
        wrote[k] = res->patched + res->new_sections + res->lead_patches > before;
        skipped[k] = pairs[k].outcome == FD_SKIPPED;
        ++*done;
        if (!rc && p->on_progress) p->on_progress(p->progress_ud, FOLD_STAGE, *done, res->eligible);
    }
    fd_batch_reset(b, pairs, n_pairs);
    for (size_t k = 0; k < n_pairs; k++) fd_pair_clear(&pairs[k]);
    return rc;
}

int dream_synth_fold(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result)
{
    struct dream_synth_params p;
    int rc = synth_stage_params("fold", params, &p);
    if (rc) return rc;
    struct dream_synth_result res = {0};
    rc = p.dry_run ? DREAM_OK : dream_synth_recover(store, p.wiki_dir, NULL);
    struct fd_article *arts = NULL;
    size_t n = 0;
    if (!rc) rc = fd_list(store, p.wiki_dir, p.no_sources, &arts, &n);
    for (size_t i = 0; !rc && i < n; i++) res.eligible += arts[i].n_src;
    if (p.limit && res.eligible > p.limit) res.eligible = p.limit;
    struct synth_stems stems = {0};
    if (!rc && !p.dry_run) rc = synth_list_stems(p.wiki_dir, &stems.stems, &stems.n);
    /* the pairs to fold: each article's chunks, oldest article first, up to the limit */
    size_t *take = NULL, *next = NULL, *round_art = NULL;
    bool *touched = NULL, *wrote = NULL, *skipped = NULL;
    struct fd_pair *pairs = NULL;
    struct fd_batch b = {0};
    size_t width = p.batch < n ? p.batch : n;
    if (!rc && !p.dry_run && n) {
        take = calloc(n, sizeof *take);
        next = calloc(n, sizeof *next);
        touched = calloc(n, sizeof *touched);
        round_art = calloc(width, sizeof *round_art);
        wrote = calloc(width, sizeof *wrote);
        skipped = calloc(width, sizeof *skipped);
        pairs = calloc(width, sizeof *pairs);
        b.prompts = calloc(width * (FOLD_MAX_CANDIDATES + 1), sizeof *b.prompts);
        b.answers = calloc(width * (FOLD_MAX_CANDIDATES + 1), sizeof *b.answers);
        b.grammars = calloc(width * (FOLD_MAX_CANDIDATES + 1), sizeof *b.grammars);
        if (!take || !next || !touched || !round_art || !wrote || !skipped || !pairs || !b.prompts || !b.answers || !b.grammars)
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    size_t left = res.eligible;
    for (size_t i = 0; !rc && take && i < n; i++) {
        take[i] = arts[i].n_src < left ? arts[i].n_src : left;
        left -= take[i];
    }
    size_t done = 0, n_skipped = 0; /* done: pairs settled; n_skipped: of those, chunks of skipped articles */
    if (!rc && take) dream_progress_begin(p.on_progress, p.progress_ud, FOLD_STAGE, res.eligible);
    while (!rc && take) {
        /* a round: the next pair of each of the first `batch` articles with pairs left */
        size_t n_round = 0;
        for (size_t i = 0; i < n && n_round < width; i++)
            if (next[i] < take[i]) {
                round_art[n_round] = i;
                pairs[n_round++] = (struct fd_pair){.art = &arts[i], .s = &arts[i].src[next[i]++]};
            }
        if (n_round == 0) break;
        rc = fd_round(store, &p, pairs, n_round, &b, &stems, &res, &done, wrote, skipped);
        for (size_t k = 0; k < n_round; k++) {
            size_t i = round_art[k];
            touched[i] |= wrote[k];
            if (rc || !skipped[k]) continue;
            /* a skipped article's other chunks wait for it too: one warning, none recorded */
            n_skipped += 1 + take[i] - next[i];
            done += take[i] - next[i];
            next[i] = take[i];
            if (p.on_progress) p.on_progress(p.progress_ud, FOLD_STAGE, done, res.eligible);
        }
    }
    size_t touched_articles = 0;
    for (size_t i = 0; touched && i < n; i++) touched_articles += touched[i];
    if (!rc && !p.dry_run && touched_articles) {
        char subject[160];
        snprintf(subject, sizeof subject, "fold %zu chunk(s) into %zu article(s)", done - n_skipped, touched_articles);
        rc = synth_commit(store, p.wiki_dir, subject, &res.committed);
    }
    free(take);
    free(next);
    free(touched);
    free(round_art);
    free(wrote);
    free(skipped);
    free(pairs);
    free(b.prompts);
    free(b.answers);
    free(b.grammars);
    synth_free_strings(stems.stems, stems.n);
    for (size_t i = 0; i < n; i++) fd_article_clear(&arts[i]);
    free(arts);
    if (result) *result = res;
    return rc;
}
