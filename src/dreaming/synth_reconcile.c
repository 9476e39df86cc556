/* synth_reconcile.c — RECONCILE + History (spec §6.7): after a fold changed an article, its
 * infobox and prose are brought to agree with the lead (the verdict, which the lead patch moved
 * to the latest-dated statement); a position that evolved leaves a `## History` line citing
 * both the old and the new statement. See dream/synthesis.h. */
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

#define RECONCILE_STAGE "reconcile"

/* Infobox keys that hold the person's stance or relation (never type/kind/aliases/categories). */
/* Keys reconcile never changes. */
static bool rc_fixed_key(const char *key)
{
    return !strcmp(key, "type") || !strcmp(key, "kind") || !strcmp(key, "aliases") || !strcmp(key, "categories");
}

static bool rc_stance_key(const char *key)
{
    static const char *const parts[] = {"favourite", "favorite", "prefer", "pick", "choice", "chosen", "opinion", "verdict",
                                        "status",    "stance",   "current", "rating", "sentiment", "take", "like", "using",
                                        "used_for",  "own",      "acquired"};
    if (rc_fixed_key(key)) return false;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr(key, parts[i])) return true;
    return false;
}

static bool rc_contains(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; n && *p; p++)
        if (strncasecmp(p, word, n) == 0) return true;
    return false;
}

/* The number of the marker nearest the first occurrence of value in text: the first at or after
 * it, else the last before it; 0 when the value or a marker is missing. */
static int rc_marker_near(const char *text, const char *value)
{
    size_t n = strlen(value);
    const char *at = NULL;
    for (const char *p = text; n && *p && !at; p++)
        if (strncasecmp(p, value, n) == 0) at = p;
    if (!at) return 0;
    int before = 0;
    for (const char *p = text; (p = strstr(p, "[^")) != NULL; p += 2) {
        char *end;
        long v = strtol(p + 2, &end, 10);
        if (end == p + 2 || *end != ']' || v <= 0) continue;
        if (p >= at) return (int)v;
        before = (int)v;
    }
    return before;
}

/* The date (YYYY-MM-DD) of footnote number n of a, or NULL. */
static const char *rc_note_date(const dream_article *a, int n)
{
    const struct dream_article_footnote *fn = synth_footnote_numbered(a, n);
    return fn ? fn->cite.date : NULL;
}

/* Like rc_marker_near, but of the run of markers right after the value ([^2][^3]), the one
 * whose footnote is the latest-dated: the statement that made the value current. */
static int rc_marker_latest(const dream_article *a, const char *text, const char *value)
{
    int first = rc_marker_near(text, value);
    size_t n = strlen(value);
    const char *at = NULL;
    for (const char *p = text; n && *p && !at; p++)
        if (strncasecmp(p, value, n) == 0) at = p;
    const char *p = at ? strstr(at, "[^") : NULL;
    if (!p) return first;
    int best = first;
    const char *best_date = rc_note_date(a, first);
    while (p && p[0] == '[' && p[1] == '^') {
        char *end;
        long v = strtol(p + 2, &end, 10);
        if (end == p + 2 || *end != ']') break;
        const char *d = rc_note_date(a, (int)v);
        if (d && (!best_date || strcmp(d, best_date) > 0)) {
            best = (int)v;
            best_date = d;
        }
        p = end + 1;
    }
    return best;
}

/* Present-tense assertion of value in text (spec §6.7 detector): a clause (split on . ; ! ?)
 * holding the value near a present cue and no past cue. */
static bool rc_asserts_current(const char *text, const char *value)
{
    static const char *const present[] = {" is ", " are ", "favourite", "favorite", "prefer", "current", " now ", "pick", "go-to", " uses ", " use "};
    static const char *const past[] = {"previous", "originally", "used to", "no longer", " was ", " were ", "switched", "earlier", "before", "had "};
    const char *s = text;
    while (*s) {
        size_t len = strcspn(s, ".;!?\n");
        char clause[1024];
        snprintf(clause, sizeof clause, " %.*s ", (int)utf8_prefix(s, len, 1000), s);
        if (rc_contains(clause, value)) {
            bool cur = false, old = false;
            for (size_t i = 0; i < sizeof present / sizeof present[0]; i++) cur |= rc_contains(clause, present[i]);
            for (size_t i = 0; i < sizeof past / sizeof past[0]; i++) old |= rc_contains(clause, past[i]);
            if (cur && !old) return true;
        }
        s += len;
        if (*s) s++;
    }
    return false;
}

/* Whether text states value in a clause with no past cue (the lead names it as current). */
static bool rc_states(const char *text, const char *value)
{
    static const char *const past[] = {"previous", "originally", "used to", "no longer", " was ", " were ", "switched from", "earlier", "before", "had "};
    for (const char *s = text; *s;) {
        size_t len = strcspn(s, ".;!?\n");
        char clause[1024];
        snprintf(clause, sizeof clause, " %.*s ", (int)utf8_prefix(s, len, 1000), s);
        if (rc_contains(clause, value)) {
            bool old = false;
            for (size_t i = 0; i < sizeof past / sizeof past[0]; i++) old |= rc_contains(clause, past[i]);
            if (!old) return true;
        }
        s += len;
        if (*s) s++;
    }
    return false;
}

static char *rc_ask(const char *stage, const char *grammar, const char *prompt, int max_tokens)
{
    struct dream_local_input in = {.user = prompt};
    struct dream_call_opts opts = dream_call_default_opts();
    opts.max_tokens = max_tokens;
    opts.grammar = grammar;
    char *out = NULL;
    if (dream_call_local(stage, &in, &opts, &out)) {
        dream_error_clear();
        return NULL;
    }
    return out;
}

/* The corrected value of a field from the model's answer, or NULL for KEEP / unusable. */
char *synth_parse_correction(const char *answer, const char *old)
{
    if (!answer) return NULL;
    while (isspace((unsigned char)*answer) || *answer == '*' || *answer == '`' || *answer == '"') answer++;
    size_t len = strcspn(answer, "\n");
    while (len && (isspace((unsigned char)answer[len - 1]) || answer[len - 1] == '*' || answer[len - 1] == '`' || answer[len - 1] == '"' ||
                   answer[len - 1] == '.'))
        len--;
    if (len == 0 || len > 80 || (len >= 4 && strncasecmp(answer, "KEEP", 4) == 0) || memchr(answer, '[', len) || memchr(answer, '`', len))
        return NULL;
    char *v = strndup(answer, len);
    if (v && strcasecmp(v, old) == 0) {
        free(v);
        return NULL;
    }
    return v;
}

struct rc_article {
    int64_t entity;
    int64_t folded;
    char *title, *stem, *path;
};

/* Articles whose folded count grew since their last reconcile (a new article is reconciled once:
 * its stance fields are checked against its lead). */
static int rc_list(dream_store *store, const char *wiki, struct rc_article **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT e.id, e.article_title FROM pipeline_entities e WHERE e.route = 'article' AND e.article_title IS NOT NULL "
                           "ORDER BY e.id",
                           -1, &st, NULL))
        return store_sql_error(store, "listing articles to reconcile");
    size_t cap = 0;
    int rc = DREAM_OK, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        char *title = strdup((const char *)sqlite3_column_text(st, 1));
        char *stem = title ? dream_article_stem(title) : NULL;
        char *path = stem ? synth_article_path(wiki, stem) : NULL;
        bool keep = path && access(path, F_OK) == 0;
        if (keep && *n == cap) {
            cap = cap ? 2 * cap : 16;
            struct rc_article *g = realloc(*out, cap * sizeof *g);
            if (!g) keep = false, rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            else *out = g;
        }
        if (!keep) {
            free(title);
            free(stem);
            free(path);
            continue;
        }
        (*out)[(*n)++] = (struct rc_article){.entity = sqlite3_column_int64(st, 0), .title = title, .stem = stem, .path = path};
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "listing articles to reconcile");
    sqlite3_finalize(st);
    /* keep those with new folds */
    size_t k = 0;
    for (size_t i = 0; !rc && i < *n; i++) {
        struct rc_article *a = &(*out)[i];
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(store_db(store),
                               "SELECT (SELECT count(*) FROM chunk_folded WHERE article = ?1), (SELECT revision FROM stage_state WHERE stage = '"
                               RECONCILE_STAGE "' AND item = ?2)",
                               -1, &q, NULL)) {
            rc = store_sql_error(store, "reading an article's folds");
            break;
        }
        sqlite3_bind_text(q, 1, a->stem, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, a->entity);
        bool due = false;
        if (sqlite3_step(q) == SQLITE_ROW) {
            a->folded = sqlite3_column_int64(q, 0);
            due = sqlite3_column_type(q, 1) == SQLITE_NULL ? a->folded > 0 : sqlite3_column_int64(q, 1) < a->folded;
        }
        sqlite3_finalize(q);
        if (due) (*out)[k++] = *a;
        else {
            free(a->title);
            free(a->stem);
            free(a->path);
        }
    }
    for (size_t i = k; rc && i < *n; i++) {
        free((*out)[i].title);
        free((*out)[i].stem);
        free((*out)[i].path);
    }
    *n = k;
    return rc;
}


/* Appends line to `## History` (created when absent); an identical line is never repeated.
 * *added tells whether the article changed. */
static int rc_add_history(dream_article *a, const char *line, bool *added)
{
    *added = false;
    long hi = dream_article_section_find_kind(a, DREAM_SECTION_HISTORY);
    if (hi < 0) {
        size_t idx;
        int rc = dream_article_section_insert(a, 2, "History", line, &idx);
        *added = rc == DREAM_OK;
        return rc;
    }
    const char *body = dream_article_section(a, (size_t)hi)->body;
    if (strstr(body, line)) return DREAM_OK;
    struct dbuf nb = {0};
    size_t bl = strlen(body);
    while (bl && body[bl - 1] == '\n') bl--;
    dbuf_printf(&nb, "%.*s%s%s", (int)bl, body, bl ? "\n" : "", line);
    char *nbody = dbuf_take(&nb);
    int rc = nbody ? dream_article_section_set_body(a, (size_t)hi, nbody) : DREAM_ENOMEM;
    free(nbody);
    *added = rc == DREAM_OK;
    return rc;
}

/* Whether the `## History` of a already has a line naming both old and value. */
static bool rc_history_has(const dream_article *a, const char *old, const char *value)
{
    long hi = dream_article_section_find_kind(a, DREAM_SECTION_HISTORY);
    if (hi < 0) return false;
    for (const char *s = dream_article_section(a, (size_t)hi)->body; *s;) {
        size_t len = strcspn(s, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)utf8_prefix(s, len, 1000), s);
        if (rc_contains(line, old) && rc_contains(line, value)) return true;
        s += len;
        if (*s) s++;
    }
    return false;
}

/* A field the lead keeps as current may still have a past: a note dated before the one that
 * makes the value current said something else (a note learned late, dated early: the dates
 * swapped). The model names that earlier value from the prose; the code accepts it only when the
 * prose tells it as the past (the lead does not state it, no body section asserts it as current)
 * and the marker nearest it is dated before the marker of the current value. Then History gets
 * the same line an infobox correction gives, citing both. Returns the line or NULL. */
static char *rc_earlier_position(const dream_article *a, const char *title, const char *key, const char *value)
{
    const char *lead = dream_article_lead(a);
    if (!lead || !rc_states(lead, value)) return NULL;
    struct dbuf t = {0};
    dbuf_puts(&t, lead);
    for (size_t s = 0; s < dream_article_section_count(a); s++)
        if (dream_article_section(a, s)->kind == DREAM_SECTION_BODY) dbuf_printf(&t, "\n%s", dream_article_section(a, s)->body);
    char *text = dbuf_take(&t);
    if (!text) return NULL;
    struct dbuf q = {0};
    dbuf_printf(&q,
                "Article: \"%s\"\nIts text:\n<<<\n%s>>>\nInfobox field (current): %s: %s\n\nDoes the text say the person's %s was once "
                "something other than %s, before it became %s? Answer that earlier value only, or NONE.\n",
                title, text, key, value, key, value, value);
    free(text);
    char *prompt = dbuf_take(&q);
    char *answer = prompt ? rc_ask("editor", dream_grammar_value, prompt, 24) : NULL;
    free(prompt);
    const char *ans = answer ? answer + strspn(answer, " \t\n*`\"") : NULL;
    char *old = ans && strncasecmp(ans, "NONE", 4) != 0 ? synth_parse_correction(ans, value) : NULL;
    free(answer);
    if (!old || strlen(old) < 2 || rc_contains(value, old) || rc_contains(old, value) || rc_states(lead, old) ||
        rc_history_has(a, old, value)) {
        free(old);
        return NULL;
    }
    int k_old = rc_marker_near(lead, old);
    bool body_has = false;
    for (size_t s = 0; s < dream_article_section_count(a); s++) {
        const struct dream_article_section *sec = dream_article_section(a, s);
        if (sec->kind != DREAM_SECTION_BODY || !rc_contains(sec->body, old)) continue;
        body_has = true;
        if (rc_asserts_current(sec->body, old)) k_old = -1; /* still current somewhere: not a past */
        else if (!k_old) k_old = rc_marker_near(sec->body, old);
    }
    int k_new = rc_marker_latest(a, lead, value);
    const char *d_old = k_old > 0 ? rc_note_date(a, k_old) : NULL, *d_new = k_new > 0 ? rc_note_date(a, k_new) : NULL;
    char *line = NULL;
    if ((body_has || rc_contains(lead, old)) && d_old && d_new && k_old != k_new && strcmp(d_old, d_new) < 0) {
        struct dbuf h = {0};
        dbuf_printf(&h, "- Previously %s[^%d]; as of %s %s[^%d].\n", old, k_old, d_new, value, k_new);
        line = dbuf_take(&h);
    }
    free(old);
    return line;
}

/* synth_held_fn over the store: the words of w (sorted) that the cited message holds (as the
 * store kept it when a later export replaced it). */
static size_t rc_held(void *ud, const char *conv, const char *msg, const unsigned *w, size_t nw)
{
    char *text = NULL;
    bool replaced = false;
    if (dream_store_cited_message(ud, conv, msg, &text, &replaced)) {
        dream_error_clear();
        return 0;
    }
    unsigned *mw = NULL;
    long nm = synth_words(text, strlen(text), &mw);
    size_t n = nm > 0 ? synth_words_shared(w, nw, mw, (size_t)nm) : 0;
    free(mw);
    free(text);
    return n;
}

/* Asks the model whether field f still agrees with the lead (and, for a field the body tells as
 * past, the section that tells it). *value: the corrected value the text states as current, or
 * the body's later position when the model keeps a value the body tells as past; NULL when the
 * value stays. */
static int rc_ask_field(const dream_article *after, const struct rc_article *art, const char *lead, const struct dream_article_field *f, bool past,
                        size_t told, char **value)
{
    *value = NULL;
    struct dbuf b = {0}, v = {0};
    dbuf_puts(&v, lead);
    if (past) dbuf_printf(&v, "\n%s", dream_article_section(after, told)->body);
    char *against = dbuf_take(&v);
    if (!against || dbuf_printf(&b,
                                "Article: \"%s\"\nIts lead (the current position):\n%s\nInfobox field: %s: %s\n\nDoes the field still agree with the "
                                "lead? Answer KEEP if it does; otherwise answer the corrected value only.\n",
                                art->title, against, f->key, f->value)) {
        free(against);
        dbuf_free(&b);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    char *prompt = dbuf_take(&b);
    char *answer = rc_ask("editor", dream_grammar_value, prompt, 24);
    free(prompt);
    char *val = synth_parse_correction(answer, f->value);
    free(answer);
    /* only a value the lead (or the section that tells the old one as past) states as current */
    bool stated = val && rc_states(against, val);
    free(against);
    if (!stated && past) {
        /* the model kept a value the body tells as past: the position that replaced it, where
         * the body says it in words code can take */
        free(val);
        val = synth_past_successor(after, f->value, NULL);
        stated = val != NULL;
        if (stated) dream_log(DREAM_LOG_INFO, "%s: %s: %s is told as past; the body's later %s", art->stem, f->key, f->value, val);
    }
    if (!stated) {
        free(val);
        val = NULL;
    }
    *value = val;
    return DREAM_OK;
}

/* Asks the model whether the later value is an evolution of the earlier one or a correction of
 * an error; an evolution unless it says ERROR alone. */
static bool rc_ask_evolution(const char *key, const char *old, const char *value)
{
    struct dbuf c = {0};
    dbuf_printf(&c, "Earlier: %s: %s\nLater: %s: %s\n\nIs the later value an EVOLUTION (the person's view or situation changed over "
                    "time) or an ERROR (the earlier value was simply wrong)? Answer one word: EVOLUTION or ERROR.\n",
                key, old, key, value);
    char *cprompt = dbuf_take(&c);
    char *verdict = cprompt ? rc_ask("editor", dream_grammar_evolution_error, cprompt, 8) : NULL;
    free(cprompt);
    bool evolution = !(verdict && rc_contains(verdict, "error") && !rc_contains(verdict, "evolution"));
    free(verdict);
    return evolution;
}

/* Whether text names the article's subject: a content word of its title or of an alias. */
static bool rc_names_subject(const dream_article *a, const char *text)
{
    unsigned *tw = NULL, *mw = NULL;
    long nm = synth_words(text, strlen(text), &mw);
    bool named = false;
    for (size_t i = 0; nm > 0 && !named && i <= dream_article_alias_count(a); i++) {
        const char *name = i ? dream_article_alias(a, i - 1) : dream_article_title(a);
        long nt = name ? synth_words(name, strlen(name), &tw) : 0;
        named = nt > 0 && synth_words_shared(tw, (size_t)nt, mw, (size_t)nm) > 0;
        free(tw);
        tw = NULL;
    }
    free(mw);
    return named;
}

/* The conversations an article cites, each once, read from the store once for all its fields:
 * each one's id and date (copies: an edit of the article re-parses its footnotes), and what the
 * person said in them, where "my sister lives there — not brother" finds the place brother stood. */
struct rc_cited {
    bool loaded;
    size_t n;
    struct dream_store_conversation **convs;
    char **conv, **date;
    struct dbuf said;
};

static void rc_cited_load(dream_store *store, const dream_article *a, struct rc_cited *c)
{
    c->loaded = true;
    size_t n_fn = dream_article_footnote_count(a);
    c->convs = calloc(n_fn + 1, sizeof *c->convs);
    c->conv = calloc(n_fn + 1, sizeof *c->conv);
    c->date = calloc(n_fn + 1, sizeof *c->date);
    for (size_t i = 0; c->convs && c->conv && c->date && i < n_fn; i++) {
        const struct dream_article_footnote *fn = dream_article_footnote(a, i);
        if (fn->number <= 0 || !fn->cite.conv || !fn->cite.date) continue;
        bool seen = false;
        for (size_t j = 0; j < c->n && !seen; j++) seen = !strcmp(c->conv[j], fn->cite.conv);
        if (seen || dream_store_get_by_cite(store, fn->cite.conv, &c->convs[c->n])) {
            dream_error_clear();
            continue;
        }
        c->conv[c->n] = strdup(fn->cite.conv);
        c->date[c->n] = strdup(fn->cite.date);
        if (!c->conv[c->n] || !c->date[c->n]) {
            dream_store_conversation_free(c->convs[c->n]);
            free(c->conv[c->n]), free(c->date[c->n]);
            continue;
        }
        const struct dream_store_conversation *cv = c->convs[c->n++];
        for (size_t m = 0; m < cv->n_messages; m++)
            if (!strcmp(cv->messages[m].role, "user")) dbuf_printf(&c->said, "%s\n", cv->messages[m].text);
    }
}

static void rc_cited_free(struct rc_cited *c)
{
    for (size_t k = 0; k < c->n; k++) {
        dream_store_conversation_free(c->convs[k]);
        free(c->conv[k]);
        free(c->date[k]);
    }
    free(c->convs);
    free(c->conv);
    free(c->date);
    dbuf_free(&c->said);
    memset(c, 0, sizeof *c);
}

/* The later position the person's own words tell of value (synth_message_successor: "X instead
 * of V", "is now X, no longer V", "X. I mixed it up with V", "X, not V"), in a user message of a
 * conversation the article cites (cited, read at the first call): one a footnote cites, or one
 * that names the subject. The latest such (by its conversation's date, then its place), unless
 * the text cites value to a note dated after it. *marker: the footnote that cites that message,
 * added when none does (normalizing drops it again if nothing comes to cite it); *correction: it
 * corrects a mistake. malloc'd; NULL when none. */
static char *rc_source_successor(dream_store *store, dream_article *a, struct rc_cited *cited, const char *value, int *marker, bool *correction)
{
    char *best = NULL, *best_msg = NULL;
    const char *best_date = NULL, *best_conv = NULL;
    *marker = 0;
    *correction = false;
    if (!cited->loaded) rc_cited_load(store, a, cited);
    for (size_t k = 0; k < cited->n; k++) {
        const char *d = cited->date[k];
        const struct dream_store_conversation *c = cited->convs[k];
        for (size_t m = 0; (!best_date || strcmp(d, best_date) >= 0) && m < c->n_messages; m++) {
            const struct dream_message *msg = &c->messages[m];
            if (strcmp(msg->role, "user") != 0) continue;
            if (!dream_article_footnote_find(a, cited->conv[k], msg->id) && !rc_names_subject(a, msg->text)) continue;
            bool corr = false;
            char *later = synth_message_successor(msg->text, value, cited->said.data, &corr);
            if (!later) continue;
            char *id = strdup(msg->id);
            if (!id) {
                free(later);
                continue;
            }
            free(best), free(best_msg);
            best = later, best_conv = cited->conv[k], best_msg = id, best_date = d, *correction = corr;
        }
    }
    if (!best) return NULL;
    /* a statement of value the text cites to a later note: value is the later position */
    const char *lead = dream_article_lead(a);
    int k = lead ? rc_marker_latest(a, lead, value) : 0;
    for (size_t s = 0; !k && s < dream_article_section_count(a); s++)
        if (dream_article_section(a, s)->kind == DREAM_SECTION_BODY) k = rc_marker_latest(a, dream_article_section(a, s)->body, value);
    const char *kd = k > 0 ? rc_note_date(a, k) : NULL;
    bool stale = kd && strcmp(kd, best_date) > 0;
    int rc = DREAM_OK;
    if (!stale && !(*marker = dream_article_footnote_find(a, best_conv, best_msg))) {
        /* a new footnote like the conversation's first one, for that message */
        const struct dream_article_footnote *fn = NULL;
        for (size_t i = 0; !fn && i < dream_article_footnote_count(a); i++) {
            fn = dream_article_footnote(a, i);
            if (fn->number <= 0 || !fn->cite.conv || strcmp(fn->cite.conv, best_conv) != 0) fn = NULL;
        }
        struct dream_citation cite = fn ? fn->cite : (struct dream_citation){0};
        cite.msg = best_msg;
        rc = fn ? dream_article_footnote_add(a, &cite, marker) : DREAM_ENOTFOUND;
    }
    free(best_msg);
    if (stale || rc) {
        dream_error_clear();
        free(best);
        best = NULL;
        *marker = 0;
    }
    return best;
}

/* text with each sentence that states old as current (rc_asserts_current) told with value
 * instead, cited to footnote k alone: only when message k of the person's holds three in four of
 * the new sentence's words (the successor message says it), and each marker the sentence
 * drops is cited elsewhere in the article (or is droppable: the old statement's, which History
 * cites, or whose conversation may vanish). malloc'd; NULL when no sentence changed. */
static char *rc_restate(dream_store *store, const dream_article *a, const char *text, const char *old, const char *value, int k, int droppable)
{
    const struct dream_article_footnote *fn = synth_footnote_numbered(a, k);
    if (!fn || !fn->cite.conv || !fn->cite.msg) return NULL;
    const char *whole = dream_article_text(a, NULL);
    struct synth_span sp[64];
    size_t n = synth_sentences(text, sp, 64), done = 0, made = 0;
    struct dbuf b = {0};
    size_t ol = strlen(old);
    for (size_t i = 0; i < n; i++) {
        const char *st = text + sp[i].at;
        char one[1024];
        snprintf(one, sizeof one, "%.*s", (int)utf8_prefix(st, sp[i].len, sizeof one - 1), st);
        if (strlen(one) != sp[i].len || !rc_asserts_current(one, old)) continue;
        /* the sentence without its markers, old told as value, then [^k] */
        struct dbuf t = {0};
        size_t e, j = 0, body_end = sp[i].len;
        while (body_end && (isspace((unsigned char)one[body_end - 1]))) body_end--;
        bool dropped_ok = true;
        for (; j < body_end;) {
            if (synth_marker_at(one, j, &e)) {
                int num = atoi(one + j + 2);
                if (num != k && num != droppable && synth_marker_uses(whole, strlen(whole), num) <= synth_marker_uses(one, sp[i].len, num))
                    dropped_ok = false;
                j = e;
                continue;
            }
            if (!strncasecmp(one + j, old, ol) && (!j || !isalnum((unsigned char)one[j - 1])) && !isalnum((unsigned char)one[j + ol])) {
                /* capitalized as the old value was ("Clock golf is ..." -> "Touch football is ...") */
                bool cap = isupper((unsigned char)one[j]) && islower((unsigned char)value[0]);
                dbuf_printf(&t, "%c%s", cap ? toupper((unsigned char)value[0]) : value[0], value + 1);
                j += ol;
                continue;
            }
            dbuf_printf(&t, "%c", one[j]);
            j++;
        }
        char *ns = dbuf_take(&t);
        if (!ns) break;
        size_t nl = strlen(ns);
        while (nl && isspace((unsigned char)ns[nl - 1])) ns[--nl] = '\0';
        unsigned *w = NULL;
        long nw = synth_words(ns, nl, &w);
        size_t held = nw > 0 ? rc_held(store, fn->cite.conv, fn->cite.msg, w, (size_t)nw) : 0;
        free(w);
        if (dropped_ok && nw > 0 && held * 4 >= (size_t)nw * 3) {
            /* the end mark goes before the marker, as the drafts put it */
            char mark = nl && strchr(".!?", ns[nl - 1]) ? ns[--nl] : '.';
            dbuf_append(&b, text + done, sp[i].at - done);
            dbuf_printf(&b, "%.*s%c[^%d]", (int)nl, ns, mark, k);
            done = sp[i].at + body_end;
            made++;
        }
        free(ns);
    }
    if (!made) {
        dbuf_free(&b);
        return NULL;
    }
    dbuf_puts(&b, text + done);
    return dbuf_take(&b);
}

/* Reconciles one article: each stance field against the lead, History for an evolution. */
static int rc_one(dream_store *store, const struct dream_synth_params *p, const struct rc_article *art, const struct synth_stems *stems,
                  struct dream_synth_result *res)
{
    dream_article *before = NULL, *after = NULL;
    int rc = dream_article_read_file(art->path, &before);
    if (rc) return rc;
    if (!synth_editable(RECONCILE_STAGE, art->path, before, res)) {
        /* not recorded done: the next run takes it up again once the person has fixed it */
        dream_article_free(before);
        return DREAM_OK;
    }
    bool changed = false;
    const char *touched[64];
    size_t n_touched = 0;
    char *vanish[16];
    size_t n_vanish = 0;
    char *lead = NULL;
    size_t moved = 0;
    struct rc_cited cited = {0}; /* read at the first field that asks */
    if (!dream_article_lead(before) || !*dream_article_lead(before)) goto record;
    rc = dream_article_clone(before, &after);
    /* the lead first takes up a change the body tells (synth_lead.c), so the verdict the fields
     * are checked against is the latest one the article states */
    if (!rc) rc = synth_lead_follow_body(after, rc_held, store, &moved);
    if (!rc && moved) {
        changed = true;
        res->lead_patches += moved;
        touched[n_touched++] = strdup(DREAM_ARTICLE_LEAD_ANCHOR);
    }
    if (!rc && !(lead = strdup(dream_article_lead(after)))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < dream_article_infobox_count(before); i++) {
        const struct dream_article_field *f = dream_article_infobox_field(before, i);
        if (!*f->value || rc_fixed_key(f->key)) continue;
        /* any other field the body tells as the past ("used to cost ..."), the lead not stating
         * it: checked against the lead and the section that tells it */
        size_t told = 0;
        bool past = !rc_stance_key(f->key) && !rc_states(lead, f->value) && synth_told_as_past(after, f->value, &told);
        /* a later message of the person's says what replaced the value: no question to ask */
        int k_src = 0;
        bool correction = false;
        char *src = rc_source_successor(store, after, &cited, f->value, &k_src, &correction);
        if (!src && !rc_stance_key(f->key) && !past) continue;
        char *value = src;
        if (src)
            dream_log(DREAM_LOG_INFO, "%s: %s: %s is replaced by %s in the person's own words [^%d]", art->stem, f->key, f->value, src, k_src);
        else if ((rc = rc_ask_field(after, art, lead, f, past, told, &value)))
            break;
        if (!value) {
            /* the value stays; an earlier, different position may still be History */
            char *line = rc_earlier_position(after, art->title, f->key, f->value);
            bool added = false;
            if (line) rc = rc_add_history(after, line, &added);
            free(line);
            if (!rc && added) {
                changed = true;
                res->history++;
                if (n_touched < 60) touched[n_touched++] = strdup("history");
            }
            continue;
        }
        char *old = strdup(f->value), *key = strdup(f->key);
        /* evolution or error: the old value was the person's view then, or simply wrong (the
         * person's own words say which when they told the successor) */
        bool evolution = src ? !correction : rc_ask_evolution(key, old, value);
        rc = dream_article_infobox_set(after, key, value);
        if (!rc) changed = true;
        /* the markers of the old and the new statement */
        int k_old = 0, k_new = rc_marker_latest(after, dream_article_lead(after), value);
        for (size_t s = 0; !k_new && s < dream_article_section_count(after); s++) /* a value the body states */
            if (dream_article_section(after, s)->kind == DREAM_SECTION_BODY) k_new = rc_marker_latest(after, dream_article_section(after, s)->body, value);
        if (!k_new) k_new = k_src; /* the message that told the successor */
        for (size_t s = 0; !k_old && s < dream_article_section_count(after); s++)
            if (dream_article_section(after, s)->kind == DREAM_SECTION_BODY) k_old = rc_marker_near(dream_article_section(after, s)->body, old);
        if (!k_old && src) k_old = rc_marker_near(dream_article_lead(after), old); /* the lead stated it, before it is restated */
        /* a successor the person told: the lead's and the body's sentences that still state the
         * old value are told with the new one, cited to that message, where it says them */
        for (size_t s = 0; src && !rc && s <= dream_article_section_count(after); s++) {
            bool is_lead = s == 0; /* the lead, then each body section */
            const struct dream_article_section *sec = is_lead ? NULL : dream_article_section(after, s - 1);
            if (sec && sec->kind != DREAM_SECTION_BODY) continue;
            char *text = rc_restate(store, after, is_lead ? dream_article_lead(after) : sec->body, old, value, k_src, k_old);
            if (!text) continue;
            char *anchor = strdup(is_lead ? DREAM_ARTICLE_LEAD_ANCHOR : sec->anchor);
            rc = is_lead ? dream_article_set_lead(after, text) : dream_article_section_set_body(after, s - 1, text);
            if (anchor && n_touched < 60) touched[n_touched++] = anchor;
            else free(anchor);
            free(text);
            if (!rc && is_lead) {
                free(lead);
                if (!(lead = strdup(dream_article_lead(after)))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            }
        }
        /* body passages still asserting the old value as current: rewritten, or left and reported */
        for (size_t s = 0; !rc && s < dream_article_section_count(after); s++) {
            const struct dream_article_section *sec = dream_article_section(after, s);
            if (sec->kind != DREAM_SECTION_BODY || !rc_asserts_current(sec->body, old)) continue;
            struct dbuf r = {0};
            dbuf_printf(&r,
                        "Article: \"%s\"\nSection text:\n<<<\n%s>>>\n\nThe person's %s is now %s, no longer %s. %s Keep every footnote marker "
                        "(such as [^1]); write no headings or definitions. Output only the section's new prose.\n",
                        art->title, sec->body, key, value, old,
                        evolution ? "Rewrite the section as a change over time: the old value in the past tense, the new one as current."
                                  : "Rewrite the section to state only the current value.");
            char *rprompt = dbuf_take(&r);
            char *draft_raw = rprompt ? rc_ask("editor", NULL, rprompt, p->max_tokens) : NULL;
            free(rprompt);
            char *draft = draft_raw ? synth_sanitize(draft_raw, sec->title) : NULL;
            free(draft_raw);
            /* and at least the gate's word floor of the section: a draft boiled down below it
             * would have the gate refuse the whole edit, the field's change with it */
            size_t had = dream_article_words(sec->body, strlen(sec->body));
            bool ok = draft && *draft && !synth_leaky(draft) && !synth_broken_marker(draft, strlen(draft)) && !rc_asserts_current(draft, old) &&
                      (double)dream_article_words(draft, strlen(draft)) >= DREAM_GATE_WORD_FLOOR * (double)had;
            for (const char *m = sec->body; ok && (m = strstr(m, "[^")) != NULL; m += 2) {
                int num = atoi(m + 2);
                ok = num <= 0 || synth_has_marker(draft, num);
            }
            if (ok) {
                char *anchor = strdup(sec->anchor);
                rc = dream_article_section_set_body(after, s, draft);
                if (anchor && n_touched < 60) touched[n_touched++] = anchor;
                else free(anchor);
            } else {
                dream_log(DREAM_LOG_INFO, "%s: section still states %s as current (unresolved)", art->stem, old);
            }
            free(draft);
        }
        if (!rc && evolution && k_old && k_new && k_old != k_new) {
            const char *date = rc_note_date(after, k_new);
            struct dbuf h = {0};
            if (date) dbuf_printf(&h, "- Previously %s[^%d]; as of %s %s[^%d].\n", old, k_old, date, value, k_new);
            else dbuf_printf(&h, "- Previously %s[^%d]; later %s[^%d].\n", old, k_old, value, k_new); /* an undated note */
            char *line = dbuf_take(&h);
            bool added = false;
            rc = line ? rc_add_history(after, line, &added) : DREAM_ENOMEM;
            free(line);
            if (!rc && n_touched < 60) touched[n_touched++] = strdup("history");
            res->history++;
        } else if (!rc && !evolution && n_vanish < 16 && k_old) {
            const struct dream_article_footnote *fn = synth_footnote_numbered(after, k_old);
            if (fn && fn->cite.conv) vanish[n_vanish++] = strdup(fn->cite.conv);
        }
        free(old);
        free(key);
        free(value);
    }
    if (!rc && changed) {
        rc = synth_normalize(after, art->stem, stems);
        struct dream_gate_params gp = {.touched = touched, .n_touched = n_touched, .may_vanish = (const char *const *)vanish, .n_may_vanish = n_vanish};
        bool accepted = false;
        if (!rc) rc = synth_write(store, p->wiki_dir, RECONCILE_STAGE, art->stem, before, after, &gp, NULL, 0, art->stem, 0, &accepted);
        if (!rc && accepted) res->reconciled++;
        else if (!rc) res->rejected++;
    }
record:
    if (!rc) rc = stage_state_done(store, RECONCILE_STAGE, art->entity, art->folded, store_now_ms());
    for (size_t i = 0; i < n_touched; i++) free((char *)touched[i]);
    for (size_t i = 0; i < n_vanish; i++) free(vanish[i]);
    rc_cited_free(&cited);
    free(lead);
    dream_article_free(before);
    dream_article_free(after);
    return rc;
}

int dream_synth_reconcile(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result)
{
    struct dream_synth_params p;
    int rc = synth_stage_params("reconcile", params, &p);
    if (rc) return rc;
    struct dream_synth_result res = {0};
    rc = p.dry_run ? DREAM_OK : dream_synth_recover(store, p.wiki_dir, NULL);
    struct rc_article *arts = NULL;
    size_t n = 0;
    if (!rc) rc = rc_list(store, p.wiki_dir, &arts, &n);
    res.eligible = n;
    struct synth_stems stems = {0};
    if (!rc && !p.dry_run) rc = synth_list_stems(p.wiki_dir, &stems.stems, &stems.n);
    if (!rc && !p.dry_run) dream_progress_begin(p.on_progress, p.progress_ud, RECONCILE_STAGE, n);
    for (size_t i = 0; !p.dry_run && !rc && i < n; i++) {
        rc = rc_one(store, &p, &arts[i], &stems, &res);
        if (!rc && p.on_progress) p.on_progress(p.progress_ud, RECONCILE_STAGE, i + 1, n);
    }
    if (!rc && !p.dry_run && res.reconciled) {
        char subject[128];
        snprintf(subject, sizeof subject, "reconcile %zu article(s) (%zu history line(s))", res.reconciled, res.history);
        rc = synth_commit(store, p.wiki_dir, subject, &res.committed);
    }
    synth_free_strings(stems.stems, stems.n);
    for (size_t i = 0; i < n; i++) {
        free(arts[i].title);
        free(arts[i].stem);
        free(arts[i].path);
    }
    free(arts);
    if (result) *result = res;
    return rc;
}
