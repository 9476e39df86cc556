/* synth_create.c — CREATE (spec §6.5): outline → sections → lead → infobox and categories for
 * every routed entity without an article, batched across entities (see dream/synthesis.h). */
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

#define CREATE_STAGE "create"
#define CREATE_MAX_HEADINGS 6

struct cr_entity {
    int64_t id;
    char *title, *stem;
    struct synth_src *src;
    size_t n_src;
    char *headings[CREATE_MAX_HEADINGS];
    size_t n_head;
    size_t *assign;                       /* per source: its heading */
    char *drafts[CREATE_MAX_HEADINGS];    /* sanitized section prose, NULL when dropped */
    char *lead, *infobox;                 /* raw answers */
    char *prose_g, *lead_g;               /* the prose grammars of a model that cannot spell names
                                             (synth_prose_grammar; the lead's starts **title**),
                                             else NULL */
    int attempts;                         /* failed attempts so far */
};

static void cr_entity_clear(struct cr_entity *e)
{
    free(e->title);
    free(e->stem);
    synth_src_free(e->src, e->n_src);
    for (size_t i = 0; i < e->n_head; i++) {
        free(e->headings[i]);
        free(e->drafts[i]);
    }
    free(e->assign);
    free(e->lead);
    free(e->infobox);
    free(e->prose_g);
    free(e->lead_g);
    memset(e, 0, sizeof *e);
}

/* Routed entities, oldest first (by their earliest chunk's conversation), with their failed
 * attempts; those whose article file exists are skipped by the caller. */
static int cr_list(dream_store *store, struct cr_entity **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT e.id, e.article_title, coalesce(s.attempts, 0) FROM pipeline_entities e "
                           "LEFT JOIN stage_state s ON s.stage = '" CREATE_STAGE "' AND s.item = e.id "
                           "WHERE e.route = 'article' AND e.article_title IS NOT NULL ORDER BY (SELECT min(coalesce(c.updated_at, "
                           "c.created_at, c.ingested_at)) FROM chunk_mentions m JOIN chunks ch ON ch.id = m.chunk JOIN conversations c ON "
                           "c.id = ch.conversation WHERE m.entity = e.id), e.id",
                           -1, &st, NULL))
        return store_sql_error(store, "listing entities to create articles for");
    size_t cap = 0;
    int rc = DREAM_OK, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            struct cr_entity *g = realloc(*out, cap * sizeof *g);
            if (!g) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            *out = g;
        }
        struct cr_entity *e = &(*out)[(*n)++];
        memset(e, 0, sizeof *e);
        e->id = sqlite3_column_int64(st, 0);
        e->title = strdup((const char *)sqlite3_column_text(st, 1));
        e->stem = e->title ? dream_article_stem(e->title) : NULL;
        e->attempts = sqlite3_column_int(st, 2);
        if (!e->title || !e->stem) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "listing entities to create articles for");
    sqlite3_finalize(st);
    return rc;
}

/* ---- prompts ---------------------------------------------------------------------------- */

static const char outline_task[] =
    "List the sections this article needs: 2 to 6 specific headings in Title Case, one per line, each\n"
    "naming one sub-topic of the notes above. If the notes are about a single sub-topic, answer NONE.\n"
    "Headings only: no numbering, no explanations, and never copy sentences from the notes.\n";

static const char section_task[] =
    "Write the prose of this one section from the sources above: a few sentences in the third person\n"
    "about the person (\"the person\"), saying what they did, asked, decided or think, with the\n"
    "specific details the sources give. Put a source's marker (such as [^1]) right after each claim\n"
    "it supports, exactly as listed; write no footnote definitions, no headings and no References.\n"
    "When two sources disagree, the later date holds and the earlier value is told in the past tense.\n"
    "Output only the prose.\n";

static const char lead_task[] =
    "Write the lead of this article: 2 to 4 sentences, present tense, third person. Name the subject\n"
    "in bold (**Subject**) in the first sentence, say what it is and how the person relates to it,\n"
    "and give the person's current position from the latest-dated note. Cite with the listed\n"
    "markers right after the claims. Output only the lead.\n";

static const char infobox_task[] =
    "Write the infobox of this article: `key: value` lines only, snake_case keys. Give `type:` (a\n"
    "short label of what the subject is) and `category:` (one broad wiki category for it) when\n"
    "clear; add facts about the subject that the notes support, and the person's relation to it\n"
    "(status, opinion, used_for, chosen_over, ...). No kind, no aliases, no other text.\n";

static int cr_header(struct dbuf *b, const char *wiki, const char *title)
{
    int rc = synth_policy(b, wiki, "Article_Conventions");
    if (!rc)
        rc = dbuf_printf(b, "Article: \"%s\"\nWrite only what the notes say; never copy their wording at length.\n\n", title);
    return rc;
}

static int cr_digest(struct dbuf *b, const struct cr_entity *e, size_t cap)
{
    int rc = dbuf_puts(b, "Notes, oldest first:\n");
    for (size_t i = 0; !rc && i < e->n_src; i++) {
        const struct synth_src *s = &e->src[i];
        rc = dbuf_printf(b, "[%s] %s — %s:", s->date, s->title, s->label);
        /* one line per note: the transcript's line breaks become spaces */
        size_t n = utf8_prefix(s->text, strlen(s->text), cap);
        for (size_t k = 0; !rc && k < n; k++) rc = dbuf_putc(b, s->text[k] == '\n' ? ' ' : s->text[k]);
        if (!rc) rc = dbuf_putc(b, '\n');
    }
    return rc ? rc : dbuf_puts(b, "\n");
}

static char *cr_outline_prompt(const char *wiki, const struct cr_entity *e)
{
    struct dbuf b = {0};
    if (cr_header(&b, wiki, e->title) || cr_digest(&b, e, 600) || dbuf_puts(&b, outline_task)) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

static int cr_links(struct dbuf *b, const struct synth_stems *stems, const char *self)
{
    int rc = dbuf_puts(b, "Other articles, to link as [[Stem]] where the prose names them:");
    size_t shown = 0;
    for (size_t i = 0; !rc && i < stems->n && shown < 200; i++) {
        if (strcmp(stems->stems[i], self) == 0) continue;
        rc = dbuf_printf(b, "%s %s", shown ? "," : "", stems->stems[i]);
        shown++;
    }
    if (!rc && !shown) rc = dbuf_puts(b, " none");
    return rc ? rc : dbuf_puts(b, "\n\n");
}

static char *cr_section_prompt(const char *wiki, const struct cr_entity *e, size_t h, const struct synth_stems *stems)
{
    struct dbuf b = {0};
    int rc = cr_header(&b, wiki, e->title);
    if (!rc) rc = dbuf_printf(&b, "Section: \"%s\"\n", e->headings[h]);
    if (!rc) rc = cr_links(&b, stems, e->stem);
    if (!rc) rc = dbuf_puts(&b, "Sources (each with its marker and date):\n");
    bool undated = false;
    for (size_t i = 0; !rc && i < e->n_src; i++) {
        if (e->assign[i] != h) continue;
        rc = dbuf_printf(&b, "[^%zu] (%s) %s\n%s---\n", i + 1, e->src[i].date, e->src[i].title, e->src[i].text);
        undated |= !synth_src_dated(&e->src[i]);
    }
    if (!rc) rc = dbuf_printf(&b, "\n%s%s", section_task, undated ? SYNTH_UNDATED_RULE : "");
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

static char *cr_lead_prompt(const char *wiki, const struct cr_entity *e, const struct synth_stems *stems, bool infobox)
{
    struct dbuf b = {0};
    int rc = cr_header(&b, wiki, e->title);
    if (!rc && !infobox) rc = cr_links(&b, stems, e->stem);
    if (!rc) rc = dbuf_puts(&b, "Sources (each with its marker and date):\n");
    bool undated = false;
    for (size_t i = 0; !rc && i < e->n_src; i++) {
        size_t len = utf8_prefix(e->src[i].text, strlen(e->src[i].text), 600);
        rc = dbuf_printf(&b, "[^%zu] (%s) %s: %.*s\n", i + 1, e->src[i].date, e->src[i].label, (int)len, e->src[i].text);
        undated |= !synth_src_dated(&e->src[i]);
    }
    if (!rc) rc = dbuf_printf(&b, "\n%s%s", infobox ? infobox_task : lead_task, undated && !infobox ? SYNTH_UNDATED_RULE : "");
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

/* ---- parsing ------------------------------------------------------------------------------ */

/* Headings from an outline answer: markup stripped, deduplicated by anchor, at most 6. */
static void cr_parse_outline(struct cr_entity *e, const char *answer)
{
    for (const char *line = answer ? answer : ""; *line && e->n_head < CREATE_MAX_HEADINGS;) {
        size_t len = strcspn(line, "\n");
        const char *s = line, *t = line + len;
        line = *t ? t + 1 : t;
        while (s < t && (isspace((unsigned char)*s) || *s == '#' || *s == '-' || *s == '*' || *s == '+' || isdigit((unsigned char)*s) ||
                         *s == '.' || *s == ')'))
            s++;
        while (t > s && (isspace((unsigned char)t[-1]) || t[-1] == '*' || t[-1] == ':' || t[-1] == '#')) t--;
        size_t n = (size_t)(t - s);
        if (n == 0 || n > 80 || (n == 4 && strncasecmp(s, "NONE", 4) == 0) || memchr(s, '[', n) || memchr(s, '`', n)) continue;
        char *h = strndup(s, n);
        char *anchor = h ? dream_article_anchor(h) : NULL;
        bool dup = !anchor || !*anchor || strcmp(anchor, "references") == 0 || strcmp(anchor, "see-also") == 0 ||
                   strcmp(anchor, "notes") == 0 || strcmp(anchor, "history") == 0;
        for (size_t i = 0; !dup && i < e->n_head; i++) {
            char *other = dream_article_anchor(e->headings[i]);
            dup = !other || strcmp(other, anchor) == 0;
            free(other);
        }
        free(anchor);
        if (dup) free(h);
        else e->headings[e->n_head++] = h;
    }
    if (e->n_head == 0) e->headings[e->n_head++] = strdup("Overview");
}

size_t synth_parse_outline(const char *answer, char **out, size_t max)
{
    struct cr_entity e;
    memset(&e, 0, sizeof e);
    cr_parse_outline(&e, answer);
    size_t n = 0;
    for (size_t i = 0; i < e.n_head; i++) {
        if (n < max) out[n++] = e.headings[i];
        else free(e.headings[i]);
    }
    return n;
}

/* Lowercase alphanumeric tokens of at least 3 bytes. */
static size_t cr_overlap(const char *heading, const char *text)
{
    size_t score = 0;
    for (const char *p = heading; *p;) {
        while (*p && !isalnum((unsigned char)*p)) p++;
        const char *s = p;
        while (*p && isalnum((unsigned char)*p)) p++;
        size_t n = (size_t)(p - s);
        if (n < 3) continue;
        for (const char *q = text; *q; q++)
            if ((q == text || !isalnum((unsigned char)q[-1])) && strncasecmp(q, s, n) == 0 && !isalnum((unsigned char)q[n])) {
                score++;
                break;
            }
    }
    return score;
}

/* Each source to the heading with the most token overlap (label + first 400 bytes; ties to the
 * first); headings that won no source are dropped. */
static int cr_assign(struct cr_entity *e)
{
    e->assign = calloc(e->n_src ? e->n_src : 1, sizeof *e->assign);
    if (!e->assign) return dream_error_set(DREAM_ENOMEM, "out of memory");
    size_t won[CREATE_MAX_HEADINGS] = {0};
    for (size_t i = 0; i < e->n_src; i++) {
        char buf[600];
        snprintf(buf, sizeof buf, "%s %.*s", e->src[i].label, utf8_cut(e->src[i].text, 400), e->src[i].text);
        utf8_trim(buf);
        size_t best = 0, best_score = 0;
        for (size_t h = 0; h < e->n_head; h++) {
            size_t sc = cr_overlap(e->headings[h], buf);
            if (sc > best_score) best = h, best_score = sc;
        }
        e->assign[i] = best;
        won[best]++;
    }
    size_t map[CREATE_MAX_HEADINGS], k = 0;
    for (size_t h = 0; h < e->n_head; h++) {
        if (won[h]) {
            map[h] = k;
            e->headings[k++] = e->headings[h];
        } else {
            free(e->headings[h]);
        }
    }
    e->n_head = k;
    for (size_t i = 0; i < e->n_src; i++) e->assign[i] = map[e->assign[i]];
    return DREAM_OK;
}

/* The infobox answer's fields into `key: value` lines for the block (kind thing), and its
 * category into cats. A key given again is kept again (the assembly picks one value a key). */
int synth_parse_infobox(const char *answer, struct dbuf *box, char **cats, size_t *n_cats)
{
    int rc = DREAM_OK;
    char seen[64][48];
    size_t n_seen = 0, n_keys = 0;
    for (const char *line = answer ? answer : ""; *line && !rc;) {
        size_t len = strcspn(line, "\n");
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)utf8_prefix(line, len, 511), line);
        line += len + (line[len] == '\n');
        char *colon = strchr(buf, ':');
        if (!colon) continue;
        *colon = '\0';
        char *k = buf, *v = colon + 1;
        while (*k == ' ' || *k == '-' || *k == '*' || *k == '`') k++;
        for (char *q = k + strlen(k); q > k && (q[-1] == ' ' || q[-1] == '*' || q[-1] == '`'); q--) q[-1] = '\0';
        while (*v == ' ') v++;
        for (char *q = v + strlen(v); q > v && (q[-1] == ' ' || q[-1] == '\r' || q[-1] == '`'); q--) q[-1] = '\0';
        bool key_ok = *k && strlen(k) < 48;
        for (char *q = k; key_ok && *q; q++) key_ok = (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_';
        if (!key_ok || !*v || strchr(v, '`') || !strcmp(k, "kind") || !strcmp(k, "aliases")) continue;
        if (!strcmp(k, "category") || !strcmp(k, "categories")) {
            for (char *tok = strtok(v, ",;"); tok && *n_cats < 4; tok = strtok(NULL, ",;")) {
                while (*tok == ' ' || *tok == '[') tok++;
                if (!strncasecmp(tok, "Category:", 9)) tok += 9;
                char *end = tok + strlen(tok);
                while (end > tok && (end[-1] == ']' || end[-1] == ' ')) *--end = '\0';
                if (*tok && !strpbrk(tok, "]|[\n")) cats[(*n_cats)++] = strdup(tok);
            }
            continue;
        }
        /* a key again: kept too (at most 4 values a key), for the assembly to choose the value
         * of the latest note (cr_latest_fields); a small model lists a changed field once per note */
        size_t again = 0;
        for (size_t i = 0; i < n_seen; i++) again += !strcmp(seen[i], k);
        if (again >= 4 || (!again && n_keys == 32) || n_seen == 64) continue;
        n_keys += !again;
        snprintf(seen[n_seen++], 48, "%s", k);
        rc = dbuf_printf(box, "%s: %s\n", k, v);
    }
    return rc;
}

/* ---- assembly ------------------------------------------------------------------------------ */

/* The infobox lines of box ("key: value\n" each), with every value's [[link]] to an article not
 * in live reduced to its text (synth_unlink_redlinks), into out: those whose value one note
 * then holds alone (synth_value_grounded against words[s][0..n_words[s]) and src[s]'s text, for
 * some s < n_src; the others counted in *unheld). One note, not the notes together: "birthday: November 17" from a note
 * saying "July 17" and a later one saying "November 12" is a garble of two positions, which
 * every word of it being held somewhere would let through; so is it from one note saying
 * "November 12, not July 17". */
static int cr_unlink_box(const struct dbuf *box, unsigned *const *words, const long *n_words, const struct synth_src *src, size_t n_src,
                         const struct synth_stems *live, struct dbuf *out, size_t *unheld)
{
    int rc = DREAM_OK;
    for (const char *line = box->len ? box->data : ""; !rc && *line;) {
        size_t len = strcspn(line, "\n");
        char *l = strndup(line, len), *v = l ? synth_unlink_redlinks(l, live) : NULL;
        char *colon = v ? strchr(v, ':') : NULL;
        bool ok = true;
        if (colon) *colon = '\0'; /* the key, for the moment */
        rc = v ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
        ok = false;
        for (size_t s = 0; !rc && !ok && s < n_src; s++)
            rc = synth_value_grounded(v, colon ? colon + 1 : v, words[s], (size_t)n_words[s], src[s].text ? src[s].text : "", &ok);
        if (colon) *colon = ':';
        if (!rc && !ok) (*unheld)++;
        if (!rc && ok) rc = dbuf_printf(out, "%s\n", v);
        free(v);
        free(l);
        line += len + (line[len] == '\n');
    }
    return rc;
}

/* One line a key of box (held fields, "key: value\n" each, a key possibly more than once), in
 * the order keys first appear, into out: the value of the latest-dated note that holds it alone
 * (synth_value_held against that note's words), a later line on a tie. "When two sources
 * disagree, the later date holds": a model that lists a changed field once for each note
 * ("connection: brother", then "connection: sister") keeps the later position, wherever in the
 * answer it put it. words[s][0..n_words[s]): note s's words (synth_notes_words). (cr_unlink_box has
 * left out a value no single note holds; one would rank below all.) */
static int cr_latest_fields(const struct dbuf *box, const struct cr_entity *e, unsigned *const *words, const long *n_words, struct dbuf *out)
{
    enum { MAXL = 64 };
    const char *at[MAXL];
    size_t len[MAXL], klen[MAXL], n = 0;
    for (const char *line = box->len ? box->data : ""; *line && n < MAXL;) {
        size_t l = strcspn(line, "\n");
        const char *colon = memchr(line, ':', l);
        at[n] = line, len[n] = l, klen[n] = colon ? (size_t)(colon - line) : l;
        n++;
        line += l + (line[l] == '\n');
    }
    bool repeated = false;
    for (size_t i = 0; i < n && !repeated; i++)
        for (size_t j = i + 1; j < n && !repeated; j++) repeated = klen[i] == klen[j] && !memcmp(at[i], at[j], klen[i]);
    if (!repeated) return box->len ? dbuf_printf(out, "%s", box->data) : DREAM_OK;
    int rc = DREAM_OK;
    /* rank[i]: the latest note holding line i's value (-1: none alone) */
    long rank[MAXL];
    for (size_t i = 0; !rc && i < n; i++) {
        rank[i] = -1;
        char *key = strndup(at[i], klen[i]), *val = klen[i] < len[i] ? strndup(at[i] + klen[i] + 1, len[i] - klen[i] - 1) : strdup("");
        if (!key || !val) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        for (size_t s = 0; !rc && s < e->n_src; s++) {
            bool ok = false;
            rc = synth_value_held(key, val, words[s], (size_t)n_words[s], &ok);
            if (!rc && ok && (rank[i] < 0 || strcmp(e->src[s].date, e->src[rank[i]].date) >= 0)) rank[i] = (long)s;
        }
        free(key);
        free(val);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++) first = klen[j] != klen[i] || memcmp(at[i], at[j], klen[i]);
        if (!first) continue;
        size_t best = i;
        for (size_t j = i + 1; j < n; j++) {
            if (klen[j] != klen[i] || memcmp(at[i], at[j], klen[i])) continue;
            int c = rank[j] < 0 || rank[best] < 0 ? (rank[j] >= 0) - (rank[best] >= 0)
                                                 : strcmp(e->src[rank[j]].date, e->src[rank[best]].date);
            if (c >= 0) best = j; /* a later date, or the same and a later line */
        }
        rc = dbuf_printf(out, "%.*s\n", (int)len[best], at[best]);
    }
    return rc;
}

/* The article of e from its drafts (lead NULL: a code-made lead; stub: no model prose at all).
 * Prose links are spelled against stems (the vault and every article of this run; synth_write
 * keeps only those to an article that exists as it writes); infobox links only against live
 * (see dream_synth_create). Each sentence's footnote is pinned to the message of its source that
 * says it (synth_pin_citations), and a sentence no source says anything of goes
 * (synth_drop_unfounded), as does an infobox field whose value the notes do not hold (*unheld). */
static int cr_assemble(const struct cr_entity *e, const char *lead, bool stub, const struct synth_stems *stems, const struct synth_stems *live,
                       dream_article **out, size_t *dropped, size_t *recited, size_t *unheld)
{
    struct dbuf b = {0}, raw = {0}, box = {0};
    char *cats[4] = {0};
    size_t n_cats = 0;
    int rc = dbuf_printf(&b, "# %s\n\n", e->title);
    if (!rc && !stub) rc = synth_parse_infobox(e->infobox, &raw, cats, &n_cats);
    if (!rc && raw.len) { /* each note's words only when there are fields to hold to them (a stub has none) */
        unsigned **words = calloc(e->n_src + 1, sizeof *words);
        long *n_words = calloc(e->n_src + 1, sizeof *n_words);
        rc = words && n_words ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
        for (size_t s = 0; !rc && s < e->n_src; s++)
            if ((n_words[s] = synth_notes_words(e->title, &e->src[s], 1, &words[s])) < 0) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        struct dbuf all = {0};
        if (!rc) rc = cr_unlink_box(&raw, words, n_words, e->src, e->n_src, live, &all, unheld);
        if (!rc) rc = cr_latest_fields(&all, e, words, n_words, &box);
        dbuf_free(&all);
        for (size_t s = 0; words && s < e->n_src; s++) free(words[s]);
        free(words);
        free(n_words);
    }
    dbuf_free(&raw);
    if (!rc) rc = dbuf_printf(&b, "```info\n%skind: thing\n```\n\n", box.data && box.len ? box.data : "");
    if (!rc && lead && *lead) {
        rc = dbuf_printf(&b, "%s\n\n", lead);
    } else if (!rc) {
        rc = dbuf_printf(&b, "**%s** is a subject of the person's conversations.", e->title);
        for (size_t i = 0; stub && !rc && i < e->n_src; i++) rc = dbuf_printf(&b, "[^%zu]", i + 1);
        if (!rc) rc = dbuf_puts(&b, "\n\n");
    }
    for (size_t h = 0; !stub && !rc && h < e->n_head; h++)
        if (e->drafts[h]) rc = dbuf_printf(&b, "## %s\n\n%s\n\n", e->headings[h], e->drafts[h]);
    if (!rc) rc = dbuf_puts(&b, "## References\n\n");
    /* only the definitions whose marker the prose used */
    const char *body = b.data;
    for (size_t i = 0; !rc && i < e->n_src; i++) {
        if (!synth_has_marker(body, (int)(i + 1))) continue;
        struct dream_citation c = synth_src_citation(&e->src[i]);
        char *def = dream_citation_format(&c);
        rc = def ? dbuf_printf(&b, "[^%zu]: %s\n", i + 1, def) : DREAM_ENOMEM;
        body = b.data;
        free(def);
    }
    dream_article *a = NULL;
    if (!rc) rc = dream_article_parse(b.data, b.len, &a);
    if (!rc && n_cats) rc = dream_article_set_categories(a, (const char *const *)cats, n_cats);
    if (!rc && !stub) rc = synth_pin_citations(a, e->src, e->n_src, 0);
    *dropped = *recited = 0;
    if (!rc && !stub) rc = synth_drop_unfounded(a, e->src, e->n_src, 0, dropped, recited);
    /* once pinned, a sentence the model said twice in other words cites what its first saying does */
    if (!rc && !stub) rc = synth_drop_repeats_in(a);
    if (!rc) rc = synth_normalize(a, e->stem, stems);
    for (size_t i = 0; i < n_cats; i++) free(cats[i]);
    dbuf_free(&b);
    dbuf_free(&box);
    if (rc) {
        dream_article_free(a);
        return rc;
    }
    *out = a;
    return DREAM_OK;
}

/* Writes e's article (or records a failed attempt); a written one joins live. */
static int cr_finish(dream_store *store, const struct dream_synth_params *p, struct cr_entity *e, const struct synth_stems *stems,
                     struct synth_stems *live, struct dream_synth_result *res)
{
    size_t n_sections = 0;
    for (size_t h = 0; h < e->n_head; h++) n_sections += e->drafts[h] != NULL;
    char *lead = NULL;
    if (e->lead) {
        lead = synth_sanitize(e->lead, NULL);
        if (lead && (synth_leaky(lead) || !*lead || strstr(lead, "\n\n"))) {
            free(lead);
            lead = NULL;
            res->rejected++;
        }
    }
    bool stub = false;
    if (n_sections == 0) {
        bool gave_up = false;
        int rc = stage_state_fail(store, CREATE_STAGE, e->id, 1, "no usable section draft (empty, leaky, or without a citation)",
                                  p->max_attempts, false, store_now_ms(), &gave_up);
        free(lead);
        if (rc) return rc;
        res->failed++;
        if (!gave_up) return DREAM_OK;
        stub = true;
        lead = NULL;
    }
    dream_article *a = NULL;
    size_t dropped = 0, recited = 0, unheld = 0;
    int rc = cr_assemble(e, lead, stub, stems, live, &a, &dropped, &recited, &unheld);
    free(lead);
    if (rc) return rc;
    struct synth_ledger *rows = calloc(2 * e->n_src + 1, sizeof *rows);
    char **anchors = calloc(e->n_head + 1, sizeof *anchors);
    size_t n_rows = 0;
    if (!rows || !anchors) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t h = 0; !rc && h < e->n_head; h++)
        if (!stub && e->drafts[h] && !(anchors[h] = dream_article_anchor(e->headings[h]))) rc = DREAM_ENOMEM;
    for (size_t i = 0; !rc && i < e->n_src; i++) {
        rows[n_rows++] = (struct synth_ledger){.chunk = e->src[i].chunk};
        /* (also for a section grounding removed: the chunk was read into the article all the same) */
        if (!stub && anchors[e->assign[i]]) rows[n_rows++] = (struct synth_ledger){.chunk = e->src[i].chunk, .section = anchors[e->assign[i]]};
    }
    bool accepted = false;
    if (!rc) rc = synth_write(store, p->wiki_dir, CREATE_STAGE, e->stem, NULL, a, NULL, rows, n_rows, e->stem, e->id, &accepted);
    if (!rc && accepted) {
        if (stub) res->stubs++;
        else res->created++;
        res->unfounded += dropped;
        res->recited += recited;
        res->unheld += unheld;
        live->stems[live->n++] = e->stem; /* not owned: e outlives live */
    } else if (!rc) {
        res->rejected++;
        bool gave_up;
        rc = stage_state_fail(store, CREATE_STAGE, e->id, 1, "the assembled article failed the gate", p->max_attempts, false,
                              store_now_ms(), &gave_up);
    }
    for (size_t h = 0; anchors && h < e->n_head; h++) free(anchors[h]);
    free(anchors);
    free(rows);
    dream_article_free(a);
    return rc;
}

/* One batched call of the synthesis stage over prompts[0..n); answers into out (NULL where a
 * call failed). Prompt i's answer grammar: each[i] where each is given, else all (NULL: prose).
 * A call error with no answer at all stops the run. */
static int cr_call(char **prompts, size_t n, int max_tokens, const char *all, const char *const *each, char **out)
{
    if (n == 0) return DREAM_OK;
    struct dream_local_input *in = calloc(n, sizeof *in);
    if (!in) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) in[i] = (struct dream_local_input){.user = prompts[i], .grammar = each ? each[i] : all};
    struct dream_call_opts opts = dream_call_default_opts();
    opts.max_tokens = max_tokens;
    int rc = dream_call_local_batch("synthesis", in, n, &opts, out);
    free(in);
    size_t answered = 0;
    for (size_t i = 0; i < n; i++) answered += out[i] != NULL;
    if (rc && answered == 0 && rc != DREAM_ETOOBIG) return dream_error_wrap(rc, "synthesis: the model gave no answer");
    return DREAM_OK;
}

/* Frees p[0..n) and clears them: a later phase frees the same array again on its way out. */
static void cr_free_prompts(char **p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        free(p[i]);
        p[i] = NULL;
    }
}

/* Fits the sources of each of e's headings into budget bytes (synth_src_fit). */
static int cr_fit_sections(struct cr_entity *e, size_t budget)
{
    struct synth_src **of = calloc(e->n_src + 1, sizeof *of);
    if (!of) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t h = 0; h < e->n_head; h++) {
        size_t k = 0;
        for (size_t i = 0; i < e->n_src; i++)
            if (e->assign[i] == h) of[k++] = &e->src[i];
        synth_src_fit(of, k, budget);
    }
    free(of);
    return DREAM_OK;
}

/* Appended to a section or lead prompt whose answer narrated the task instead of giving prose. */
static const char prose_only_task[] =
    "\nA previous answer to this talked about the task, the notes or itself instead of giving the text.\n"
    "Answer with the prose itself and nothing else: no remarks on the task or the notes, no plan, no\n"
    "apology, no heading.\n";

/* Spec §6.5 step 7: every prose answer (prose[i]) that is leaky once sanitized (with heading[i])
 * is asked again, once, in one batch, with the prose-only instruction; its answer replaces the
 * first (the caller's checks then accept it or drop the section or lead). */
static int cr_retry_leaky(char **prompts, char **answers, size_t n, char *const *heading, const bool *prose, const char *const *each, int max_tokens,
                          struct dream_synth_result *res)
{
    size_t *which = calloc(n + 1, sizeof *which);
    char **again = calloc(n + 1, sizeof *again), **out = calloc(n + 1, sizeof *out);
    const char **g = calloc(n + 1, sizeof *g);
    int rc = which && again && out && g ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (!prose[i] || !answers[i]) continue;
        char *d = synth_sanitize(answers[i], heading[i]);
        bool leaky = d && *d && synth_leaky(d);
        free(d);
        if (!leaky) continue;
        struct dbuf b = {0};
        if (dbuf_puts(&b, prompts[i]) || dbuf_puts(&b, prose_only_task)) {
            dbuf_free(&b);
            rc = DREAM_ENOMEM;
            break;
        }
        which[k] = i;
        g[k] = each ? each[i] : NULL;
        again[k++] = dbuf_take(&b);
    }
    if (!rc) rc = cr_call(again, k, max_tokens, NULL, g, out); /* prose only */
    for (size_t j = 0; !rc && j < k; j++) {
        free(answers[which[j]]);
        answers[which[j]] = out[j];
        out[j] = NULL;
        res->retried++;
    }
    cr_free_prompts(again, k);
    cr_free_prompts(out, k);
    free(which);
    free(again);
    free(out);
    free((void *)g);
    return rc;
}

/* Drafts and writes the articles of e[0..n). */
static int cr_batch(dream_store *store, const struct dream_synth_params *p, struct cr_entity *e, size_t n, const struct synth_stems *stems,
                    struct synth_stems *live, struct dream_synth_result *res)
{
    size_t total_sections = 0;
    char **prompts = calloc(n * (CREATE_MAX_HEADINGS + 2) + 1, sizeof *prompts);
    char **answers = calloc(n * (CREATE_MAX_HEADINGS + 2) + 1, sizeof *answers);
    int rc = prompts && answers ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
    /* 1. outlines */
    for (size_t i = 0; !rc && i < n; i++)
        if (!(prompts[i] = cr_outline_prompt(p->wiki_dir, &e[i]))) rc = DREAM_ENOMEM;
    if (!rc) rc = cr_call(prompts, n, p->max_tokens < 128 ? p->max_tokens : 128, dream_grammar_headings, NULL, answers);
    for (size_t i = 0; !rc && i < n; i++) {
        cr_parse_outline(&e[i], answers[i]);
        rc = cr_assign(&e[i]);
        if (!rc) rc = cr_fit_sections(&e[i], p->section_budget);
    }
    cr_free_prompts(prompts, n);
    cr_free_prompts(answers, n);
    /* 2. sections, all entities' in one batch (each under its entity's prose grammar, if any) */
    const char **each = calloc(n * (CREATE_MAX_HEADINGS + 2) + 1, sizeof *each); /* not owned */
    if (!rc && !each) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    bool spell = !rc && dream_seam_names_from_text();
    for (size_t i = 0; spell && !rc && i < n; i++) {
        rc = synth_prose_grammar(e[i].title, e[i].src, e[i].n_src, NULL, &e[i].prose_g);
        /* the lead names its subject in bold first: the title as it is (gr_define would make
         * any other bold subject the title; this way the sentence goes on from the right name) */
        struct dbuf bold = {0};
        if (!rc && dbuf_printf(&bold, "**%s**", e[i].title)) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        if (!rc) rc = synth_prose_grammar(e[i].title, e[i].src, e[i].n_src, bold.data, &e[i].lead_g);
        dbuf_free(&bold);
    }
    size_t k = 0;
    for (size_t i = 0; !rc && i < n; i++)
        for (size_t h = 0; !rc && h < e[i].n_head; h++, k++) {
            prompts[k] = cr_section_prompt(p->wiki_dir, &e[i], h, stems);
            answers[k] = NULL;
            each[k] = e[i].prose_g;
            if (!prompts[k]) rc = DREAM_ENOMEM;
        }
    total_sections = k;
    if (!rc) rc = cr_call(prompts, total_sections, p->max_tokens, NULL, each, answers);
    if (!rc) {
        char **heading = calloc(total_sections + 1, sizeof *heading);
        bool *prose = calloc(total_sections + 1, sizeof *prose);
        if (!heading || !prose) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        k = 0;
        for (size_t i = 0; !rc && i < n; i++)
            for (size_t h = 0; h < e[i].n_head; h++, k++) heading[k] = e[i].headings[h], prose[k] = true;
        if (!rc) rc = cr_retry_leaky(prompts, answers, total_sections, heading, prose, each, p->max_tokens, res);
        free(heading);
        free(prose);
    }
    k = 0;
    for (size_t i = 0; !rc && i < n; i++)
        for (size_t h = 0; h < e[i].n_head; h++, k++) {
            char *d = answers[k] ? synth_sanitize(answers[k], e[i].headings[h]) : NULL;
            bool cited = false;
            for (size_t s = 0; d && s < e[i].n_src && !cited; s++) cited = e[i].assign[s] == h && synth_has_marker(d, (int)(s + 1));
            if (d && (!*d || synth_leaky(d) || !cited)) {
                free(d);
                d = NULL;
                res->rejected++;
            }
            e[i].drafts[h] = d;
        }
    cr_free_prompts(prompts, total_sections);
    cr_free_prompts(answers, total_sections);
    /* 3. lead and infobox */
    for (size_t i = 0; !rc && i < n; i++) {
        prompts[2 * i] = cr_lead_prompt(p->wiki_dir, &e[i], stems, false);
        prompts[2 * i + 1] = cr_lead_prompt(p->wiki_dir, &e[i], stems, true);
        answers[2 * i] = answers[2 * i + 1] = NULL;
        each[2 * i] = e[i].lead_g, each[2 * i + 1] = dream_grammar_infobox; /* the leads are prose */
        if (!prompts[2 * i] || !prompts[2 * i + 1]) rc = DREAM_ENOMEM;
    }
    if (!rc) rc = cr_call(prompts, 2 * n, p->max_tokens < 256 ? p->max_tokens : 256, NULL, each, answers);
    if (!rc) {
        /* the leads (even places) are prose; the infoboxes are not */
        char **heading = calloc(2 * n + 1, sizeof *heading);
        bool *prose = calloc(2 * n + 1, sizeof *prose);
        if (!heading || !prose) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        for (size_t i = 0; !rc && i < n; i++) prose[2 * i] = true;
        if (!rc) rc = cr_retry_leaky(prompts, answers, 2 * n, heading, prose, each, p->max_tokens < 256 ? p->max_tokens : 256, res);
        free(heading);
        free(prose);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        e[i].lead = answers[2 * i];
        e[i].infobox = answers[2 * i + 1];
        answers[2 * i] = answers[2 * i + 1] = NULL;
    }
    cr_free_prompts(prompts, 2 * n);
    cr_free_prompts(answers, 2 * n);
    free(prompts);
    free(answers);
    free((void *)each);
    for (size_t i = 0; !rc && i < n; i++) rc = cr_finish(store, p, &e[i], stems, live, res);
    return rc;
}

/* Whether create wrote the article stem (of entity id) before: create recorded it done, or its
 * chunks are in the ledger of what was folded into it. The record of create's own comes first:
 * a re-export that replaces a conversation's chunks takes their ledger rows along, and the
 * article the person renamed was written again beside theirs. (Forget takes both out with an
 * article it removes.) */
static bool cr_written_before(dream_store *store, const char *stem, int64_t id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT 1 FROM stage_state WHERE stage = '" CREATE_STAGE "' AND item = ?2 AND status = 'done'"
                           " UNION ALL SELECT 1 FROM chunk_folded WHERE article = ?1 LIMIT 1",
                           -1, &st, NULL))
        return false;
    sqlite3_bind_text(st, 1, stem, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    bool yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

int dream_synth_create(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result)
{
    struct dream_synth_params p;
    int rc = synth_stage_params("create", params, &p);
    if (rc) return rc;
    struct dream_synth_result res = {0};
    rc = p.dry_run ? DREAM_OK : dream_synth_recover(store, p.wiki_dir, NULL);
    struct cr_entity *all = NULL;
    size_t n_all = 0, n = 0;
    if (!rc) rc = cr_list(store, &all, &n_all);
    /* keep those without an article file and with chunks; and not one create wrote before (its
     * chunks in the ledger) whose file is gone: the person renamed or deleted it */
    for (size_t i = 0; !rc && i < n_all; i++) {
        char *path = synth_article_path(p.wiki_dir, all[i].stem);
        bool exists = path && access(path, F_OK) == 0;
        if (!exists && path && cr_written_before(store, all[i].stem, all[i].id)) {
            dream_log(DREAM_LOG_INFO, "create: %s was written before and is gone (renamed or deleted): not written again", path);
            exists = true;
        }
        free(path);
        bool dup = false; /* two entities under one stem: the first (oldest) owns it */
        for (size_t j = 0; j < n && !dup; j++) dup = strcmp(all[j].stem, all[i].stem) == 0;
        if (exists || dup || (p.limit && n >= p.limit)) {
            cr_entity_clear(&all[i]);
            continue;
        }
        rc = synth_entity_sources(store, all[i].id, NULL, p.no_sources, &all[i].src, &all[i].n_src);
        if (!rc && all[i].n_src == 0) {
            cr_entity_clear(&all[i]);
            continue;
        }
        if (i != n) {
            all[n] = all[i];
            memset(&all[i], 0, sizeof all[i]);
        }
        n++;
    }
    res.eligible = n;
    struct synth_stems stems = {0}, live = {0};
    if (!rc && !p.dry_run) rc = synth_list_stems(p.wiki_dir, &stems.stems, &stems.n);
    /* An infobox [[link]] stays only when its article exists as the new article is written: in
     * the vault, or written earlier in this run (live: borrowed pointers, grown by cr_finish).
     * One this run writes later may yet fail (no stub before the last attempt, or the gate), and
     * a value is never revisited (refresh keeps it, link only edits prose), so a link to it
     * would be a redlink dream check refuses; it is written as its text. */
    if (!rc && !p.dry_run && !(live.stems = calloc(stems.n + n + 1, sizeof *live.stems))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && !p.dry_run && i < stems.n; i++) live.stems[live.n++] = stems.stems[i];
    /* the new articles' stems count as link targets of the prose for normalize's spelling only:
     * as each article is written, synth_write reduces a link to one not written yet to its text */
    if (!rc && !p.dry_run && n) {
        char **g = realloc(stems.stems, (stems.n + n) * sizeof *g);
        if (!g) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else stems.stems = g;
        for (size_t i = 0; !rc && i < n; i++)
            if (!(stems.stems[stems.n++] = strdup(all[i].stem))) rc = DREAM_ENOMEM;
    }
    if (!rc && !p.dry_run) dream_progress_begin(p.on_progress, p.progress_ud, CREATE_STAGE, n);
    for (size_t i = 0; !p.dry_run && !rc && i < n; i += p.batch) {
        size_t k = n - i < p.batch ? n - i : p.batch;
        rc = cr_batch(store, &p, all + i, k, &stems, &live, &res);
        if (!rc && p.on_progress) p.on_progress(p.progress_ud, CREATE_STAGE, i + k, n);
    }
    if (!rc && !p.dry_run && (res.created || res.stubs)) {
        char subject[128];
        snprintf(subject, sizeof subject, "create %zu article(s)", res.created + res.stubs);
        rc = synth_commit(store, p.wiki_dir, subject, &res.committed);
    }
    free(live.stems);
    synth_free_strings(stems.stems, stems.n);
    for (size_t i = 0; i < n_all; i++) cr_entity_clear(&all[i]);
    free(all);
    if (result) *result = res;
    return rc;
}
