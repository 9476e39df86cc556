/* synth_wikify.c — WIKIFY (spec §6.11, with §12.23 fixed): an editorial pass that tightens each
 * body section of an article and refreshes its infobox (synth_refresh.c), only for articles
 * that changed since their last wikify (a hash of the text, kept in stage_state), with the
 * gate's word floor measured against each section's high-water mark, so nightly tightening
 * cannot compound. One batched call of the editor stage per round of articles. See
 * dream/synthesis.h. */
#include "../util/buf.h"
#include "dream/error.h"
#include "dream/grammar.h"
#include "dream/log.h"
#include "dream/model.h"
#include "stage_state.h"
#include "synth_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIKIFY_STAGE "wikify"
#define WIKIFY_MAX_SECTIONS 24

static const char tighten_task[] =
    "Tighten this section of the article: merge what is said twice and improve the flow. Keep every\n"
    "footnote marker (such as [^1]) next to the claim it supports and every specific detail; add\n"
    "nothing. Write no headings or definitions. Output only the section's prose.\n";

/* FNV-1a over the text, as a positive 63-bit revision. */
static int64_t wk_hash(const char *t, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)t[i]) * 1099511628211ULL;
    return (int64_t)(h >> 1);
}

struct wk_ctx {
    dream_store *store;
    const char *stem;
};

static size_t wk_baseline(void *ud, const char *anchor)
{
    struct wk_ctx *c = ud;
    sqlite3_stmt *st;
    size_t w = 0;
    if (sqlite3_prepare_v2(store_db(c->store), "SELECT words FROM section_high_water WHERE article = ? AND section = ?", -1, &st, NULL))
        return 0;
    sqlite3_bind_text(st, 1, c->stem, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, anchor, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) w = (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return w;
}

/* Raises the high-water marks of every body section of a to its current words. */
static int wk_high_water(dream_store *store, const char *stem, const dream_article *a)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "INSERT INTO section_high_water (article, section, words) VALUES (?, ?, ?) ON CONFLICT (article, section) "
                           "DO UPDATE SET words = max(words, excluded.words)",
                           -1, &st, NULL))
        return store_sql_error(store, "recording section sizes");
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < dream_article_section_count(a); i++) {
        const struct dream_article_section *s = dream_article_section(a, i);
        if (s->kind != DREAM_SECTION_BODY) continue;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, stem, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, s->anchor, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (int64_t)dream_article_words(s->body, strlen(s->body)));
        if (sqlite3_step(st) != SQLITE_DONE) rc = store_sql_error(store, "recording section sizes");
    }
    sqlite3_finalize(st);
    return rc;
}

struct wk_article {
    int64_t entity;
    char *stem, *path;
    dream_article *before;
    size_t first, n_sections;            /* its tighten prompts in the round: [first, first + n_sections) */
    size_t which[WIKIFY_MAX_SECTIONS];   /* the section each of them tightens */
    long refresh;                        /* its infobox refresh prompt in the round, or -1 */
    bool skip;                           /* no edit can be placed in it: left as it is, not recorded done */
};

static void wk_article_clear(struct wk_article *w)
{
    free(w->stem);
    free(w->path);
    dream_article_free(w->before);
    w->stem = w->path = NULL;
    w->before = NULL;
}

/* Swaps each tightened section of w into after (answers: the round's, from w->first); the
 * anchors of those changed go to touched. A refused answer counts in res. */
static int wk_tighten(const struct wk_article *w, char **answers, dream_article *after, const char **touched, size_t *n_touched,
                      struct dream_synth_result *res)
{
    int rc = DREAM_OK;
    for (size_t j = 0; !rc && j < w->n_sections; j++) {
        const char *answer = answers[w->first + j];
        const struct dream_article_section *sec = dream_article_section(w->before, w->which[j]);
        char *draft = answer ? synth_sanitize(answer, sec->title) : NULL;
        bool ok = draft && *draft && !synth_leaky(draft) && !synth_broken_marker(draft, strlen(draft)) && strcmp(draft, sec->body) != 0;
        for (const char *m = sec->body; ok && (m = strstr(m, "[^")) != NULL; m += 2) {
            int num = atoi(m + 2);
            ok = num <= 0 || synth_has_marker(draft, num);
        }
        /* and adds none: tightening cites nothing the section did not (a marker the model
         * invents puts a claim on a message that never said it) */
        for (const char *m = draft; ok && (m = strstr(m, "[^")) != NULL; m += 2) {
            int num = atoi(m + 2);
            ok = num <= 0 || synth_has_marker(sec->body, num);
        }
        long si = ok ? dream_article_section_find(after, sec->anchor) : -1;
        if (si >= 0) {
            /* keep the one-paragraph body shape: compare without the trailing newline */
            size_t bl = strlen(sec->body);
            while (bl && sec->body[bl - 1] == '\n') bl--;
            if (strlen(draft) != bl || strncmp(draft, sec->body, bl) != 0) {
                rc = dream_article_section_set_body(after, (size_t)si, draft);
                touched[(*n_touched)++] = sec->anchor;
            }
        } else if (answer) {
            res->rejected++;
        }
        free(draft);
    }
    return rc;
}

/* Merges w's infobox refresh answer into after; *changed tells whether it edited after. A
 * refused answer (junk, leaky, malformed) edits nothing and counts in res. */
static int wk_refresh(const struct wk_article *w, const char *answer, const struct synth_stems *stems, dream_article *after, bool *changed,
                      struct dream_synth_result *res)
{
    *changed = false;
    if (!answer) return DREAM_OK;
    struct synth_refresh r;
    if (!synth_parse_refresh(answer, &r)) {
        dream_log(DREAM_LOG_INFO, "%s: infobox refresh answer refused", w->stem);
        res->rejected++;
        return DREAM_OK;
    }
    int rc = synth_refresh_apply(after, w->stem, &r, stems, changed, &res->unheld);
    synth_refresh_free(&r);
    if (rc == DREAM_EFORMAT) {
        /* an article edits refuse (an unclosed fence) is left to the person, not a failed run */
        dream_log(DREAM_LOG_WARN, "%s: infobox not refreshed: %s", w->stem, dream_error_last());
        dream_error_clear();
        *changed = false;
        rc = DREAM_OK;
    }
    return rc;
}

/* Wikifies the articles w[0..n) with one batched call of the editor stage: every body section
 * tightened, and the infobox refreshed; then normalize, the gate, the write, and each article
 * recorded done at its text as it now is (progress: done + i + 1 of total after the i-th). */
static int wk_round(dream_store *store, const struct dream_synth_params *p, struct wk_article *w, size_t n, size_t done, size_t total,
                    struct synth_stems *stems, struct dream_synth_result *res)
{
    size_t cap = n * (WIKIFY_MAX_SECTIONS + 1);
    char **prompts = calloc(cap, sizeof *prompts), **answers = calloc(cap, sizeof *answers);
    /* a tightened section of a model that cannot spell a name keeps the section's own names
     * (synth_prose_grammar over it: tightening adds nothing) */
    char **spelled = calloc(cap, sizeof *spelled);
    bool spell = dream_seam_names_from_text();
    int rc = prompts && answers && spelled ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        rc = dream_article_read_file(w[i].path, &w[i].before);
        w[i].first = k;
        w[i].n_sections = 0;
        w[i].refresh = -1;
        /* a hand edit no edit can be placed in (a fence that never closes): no prompt, no write */
        w[i].skip = !rc && !synth_editable(WIKIFY_STAGE, w[i].path, w[i].before, res);
        if (w[i].skip) continue;
        if (!rc) rc = wk_high_water(store, w[i].stem, w[i].before);
        for (size_t s = 0; !rc && s < dream_article_section_count(w[i].before) && w[i].n_sections < WIKIFY_MAX_SECTIONS; s++) {
            const struct dream_article_section *sec = dream_article_section(w[i].before, s);
            if (sec->kind != DREAM_SECTION_BODY || dream_article_words(sec->body, strlen(sec->body)) < 8) continue;
            /* a section that cites nothing is the person's (dream cites what it writes): theirs
             * to word, never tightened (a hand edit made wikify rewrite it, and the model's
             * rewording lost what they wrote) */
            if (!synth_cites(sec->body)) continue;
            struct dbuf b = {0};
            if (synth_policy(&b, p->wiki_dir, "Article_Conventions") ||
                dbuf_printf(&b, "Article: \"%s\"\nSection: \"%s\"\nCurrent text:\n<<<\n%s>>>\n\n%s", w[i].stem, sec->title, sec->body, tighten_task))
                rc = DREAM_ENOMEM;
            if (!rc && spell) rc = synth_prose_grammar(w[i].stem, &(struct synth_src){.text = (char *)sec->body}, 1, NULL, &spelled[k]);
            prompts[k++] = dbuf_take(&b);
            w[i].which[w[i].n_sections++] = s;
        }
        if (!rc && !dream_article_is_redirect(w[i].before)) {
            w[i].refresh = (long)k;
            if (!(prompts[k++] = synth_refresh_prompt(p->wiki_dir, w[i].stem, w[i].before))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        }
    }
    if (!rc && k) {
        /* the refresh answers decode under the grammar of what synth_parse_refresh takes; the
         * tightened sections are prose */
        struct dream_local_input *in = calloc(k, sizeof *in);
        char *refresh_grammar = dream_grammar_infobox_refresh();
        if (!in || !refresh_grammar) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        for (size_t j = 0; !rc && j < k; j++) in[j] = (struct dream_local_input){.user = prompts[j], .grammar = spelled[j]};
        for (size_t i = 0; !rc && i < n; i++)
            if (w[i].refresh >= 0) in[w[i].refresh].grammar = refresh_grammar;
        struct dream_call_opts opts = dream_call_default_opts();
        opts.max_tokens = p->max_tokens;
        int call = rc ? DREAM_OK : dream_call_local_batch("editor", in, k, &opts, answers);
        free(in);
        free(refresh_grammar);
        size_t got = 0;
        for (size_t j = 0; j < k; j++) got += answers[j] != NULL;
        if (call && !got && call != DREAM_ETOOBIG) rc = dream_error_wrap(call, "wikify: the editor stage gave no answer");
        else dream_error_clear();
    }
    for (size_t i = 0; !rc && i < n; i++) {
        if (w[i].skip) {
            /* not recorded done: the next run looks again (and warns again) until it is fixed */
            if (p->on_progress) p->on_progress(p->progress_ud, WIKIFY_STAGE, done + i + 1, total);
            continue;
        }
        dream_article *after = NULL;
        const char *touched[WIKIFY_MAX_SECTIONS];
        size_t n_touched = 0;
        bool refreshed = false, accepted = false;
        rc = dream_article_clone(w[i].before, &after);
        if (!rc) rc = wk_tighten(&w[i], answers, after, touched, &n_touched, res);
        if (!rc && w[i].refresh >= 0) rc = wk_refresh(&w[i], answers[w[i].refresh], stems, after, &refreshed, res);
        if (!rc && (n_touched || refreshed)) {
            rc = synth_normalize(after, w[i].stem, stems);
            struct wk_ctx wc = {store, w[i].stem};
            struct dream_gate_params gp = {.touched = touched, .n_touched = n_touched, .baseline = wk_baseline, .baseline_ud = &wc};
            if (!rc) rc = synth_write(store, p->wiki_dir, WIKIFY_STAGE, w[i].stem, w[i].before, after, &gp, NULL, 0, w[i].stem, 0, &accepted);
            if (!rc && accepted) {
                res->wikified++;
                if (refreshed) res->refreshed++;
            } else if (!rc) {
                res->rejected++;
            }
        }
        /* done at the text as it now is (ours when written, else the one read) */
        if (!rc) {
            size_t len;
            const char *t = dream_article_text(accepted ? after : w[i].before, &len);
            rc = stage_state_done(store, WIKIFY_STAGE, w[i].entity, wk_hash(t, len), store_now_ms());
        }
        dream_article_free(after);
        if (!rc && p->on_progress) p->on_progress(p->progress_ud, WIKIFY_STAGE, done + i + 1, total);
    }
    for (size_t j = 0; j < k; j++) {
        free(prompts[j]);
        free(answers[j]);
        free(spelled[j]);
    }
    free(prompts);
    free(answers);
    free(spelled);
    return rc;
}

int dream_synth_wikify(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result)
{
    struct dream_synth_params p;
    int rc = synth_stage_params("wikify", params, &p);
    if (rc) return rc;
    struct dream_synth_result res = {0};
    rc = p.dry_run ? DREAM_OK : dream_synth_recover(store, p.wiki_dir, NULL);
    if (rc) return rc;
    /* the articles of routed entities (the person's own articles are never tightened) */
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT e.id, e.article_title, s.revision FROM pipeline_entities e LEFT JOIN stage_state s ON s.stage = '" WIKIFY_STAGE
                           "' AND s.item = e.id WHERE e.route = 'article' AND e.article_title IS NOT NULL ORDER BY e.id",
                           -1, &st, NULL))
        return store_sql_error(store, "listing articles to wikify");
    struct wk_article *arts = NULL;
    size_t n = 0, cap = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char *stem = dream_article_stem((const char *)sqlite3_column_text(st, 1));
        char *path = stem ? synth_article_path(p.wiki_dir, stem) : NULL;
        size_t len = 0;
        bool due = false;
        dream_article *a = NULL;
        if (path && dream_article_read_file(path, &a) == 0) {
            const char *t = dream_article_text(a, &len);
            due = sqlite3_column_type(st, 2) == SQLITE_NULL || sqlite3_column_int64(st, 2) != wk_hash(t, len);
            for (size_t j = 0; due && j < n; j++) due = strcmp(arts[j].stem, stem) != 0;
        }
        dream_error_clear();
        dream_article_free(a);
        if (due && n == cap) {
            cap = cap ? 2 * cap : 16;
            struct wk_article *g = realloc(arts, cap * sizeof *g);
            if (!g) due = false, rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            else arts = g;
        }
        if (!due) {
            free(stem);
            free(path);
            continue;
        }
        arts[n++] = (struct wk_article){.entity = sqlite3_column_int64(st, 0), .stem = stem, .path = path, .refresh = -1};
    }
    sqlite3_finalize(st);
    res.eligible = n;
    struct synth_stems stems = {0};
    if (!rc && !p.dry_run) rc = synth_list_stems(p.wiki_dir, &stems.stems, &stems.n);
    if (!rc && !p.dry_run) dream_progress_begin(p.on_progress, p.progress_ud, WIKIFY_STAGE, n);
    for (size_t i = 0; !p.dry_run && !rc && i < n; i += p.batch) {
        size_t k = n - i < p.batch ? n - i : p.batch;
        rc = wk_round(store, &p, arts + i, k, i, n, &stems, &res);
    }
    if (!rc && !p.dry_run && res.wikified) {
        char subject[128];
        snprintf(subject, sizeof subject, "wikify %zu article(s)", res.wikified);
        rc = synth_commit(store, p.wiki_dir, subject, &res.committed);
    }
    synth_free_strings(stems.stems, stems.n);
    for (size_t i = 0; i < n; i++) wk_article_clear(&arts[i]);
    free(arts);
    if (result) *result = res;
    return rc;
}
