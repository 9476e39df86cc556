/* synth.c — what the synthesis stages share (see synth_internal.h): sources and their
 * citations, sanitizing drafts, the write journal and the git commit of exactly what was written. */
#include "synth_internal.h"
#include "../names/entity_name.h"

#include "stage_state.h"

#include "../util/buf.h"
#include "../util/day.h"
#include "../util/file.h"
#include "dream/error.h"
#include "dream/log.h"
#include "dream/search.h"
#include "dream/vault.h"
#include "util/utf8.h"

#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <git2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void dream_synth_default_params(struct dream_synth_params *p)
{
    memset(p, 0, sizeof *p);
    p->batch = 8;
    p->max_attempts = 3;
    p->max_tokens = 768;
    p->section_budget = 24000;
}

void synth_src_free(struct synth_src *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        free(s[i].label);
        free(s[i].cite);
        free(s[i].msg);
        free(s[i].date);
        free(s[i].title);
        free(s[i].note);
        free(s[i].text);
        for (size_t k = 0; k < s[i].n_msgs; k++) free(s[i].msgs[k].id);
        free(s[i].msgs);
    }
    free(s);
}

static char *synth_strdup(const unsigned char *s)
{
    return strdup(s ? (const char *)s : "");
}

void synth_day(int64_t ms, char out[11]) { day_format(ms, out); }

/* synth_day, or DREAM_CITATION_UNDATED when ms is unknown (what a citation shows). */
static void synth_date(int64_t ms, char out[11])
{
    synth_day(ms, out);
    if (!out[0]) snprintf(out, 11, "%s", DREAM_CITATION_UNDATED);
}

int synth_src_messages(dream_store *store, struct synth_src *s, int64_t conv_ms)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT position, role, source_id, created_at, text FROM messages WHERE conversation = ? AND position BETWEEN ? AND ? "
                           "ORDER BY position",
                           -1, &st, NULL))
        return store_sql_error(store, "reading a chunk's messages");
    sqlite3_bind_int64(st, 1, s->conversation);
    sqlite3_bind_int64(st, 2, s->first);
    sqlite3_bind_int64(st, 3, s->last);
    struct dbuf b = {0};
    int step, rc = DREAM_OK;
    int64_t msg_ms = 0;
    bool have_user = false;
    size_t cap = 0;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *role = (const char *)sqlite3_column_text(st, 1);
        bool user = role && strcmp(role, "user") == 0;
        if (!s->msg || (user && !have_user)) {
            free(s->msg);
            s->msg = dream_store_message_cite_id((const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 0));
            msg_ms = sqlite3_column_int64(st, 3);
            have_user = user;
            if (!s->msg) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        }
        const char *text = (const char *)sqlite3_column_text(st, 4);
        size_t full = text ? strlen(text) : 0, len = text ? utf8_prefix(text, full, 1400) : 0;
        if (rc || b.len >= 6000) continue;
        if (s->n_msgs == cap) {
            cap = cap ? 2 * cap : 8;
            struct synth_src_msg *g = realloc(s->msgs, cap * sizeof *g);
            if (!g) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            s->msgs = g;
        }
        if ((rc = dbuf_printf(&b, "[%s] ", role ? role : "?"))) break;
        struct synth_src_msg *m = &s->msgs[s->n_msgs];
        *m = (struct synth_src_msg){dream_store_message_cite_id((const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 0)), user, b.len, len};
        if (!m->id) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else s->n_msgs++;
        if (!rc) rc = dbuf_printf(&b, "%.*s%s\n", (int)len, text ? text : "", len < full ? " " SYNTH_CUT_MARK : "");
    }
    sqlite3_finalize(st);
    if (rc) {
        dbuf_free(&b);
        return rc;
    }
    char d[11];
    synth_date(msg_ms > 0 ? msg_ms : conv_ms, d);
    s->date = strdup(d);
    s->text = dbuf_take(&b);
    if (!s->text) s->text = strdup("");
    if (!s->msg) s->msg = strdup("m0");
    return s->date && s->text && s->msg ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

/* The messages s must keep: its cited message and those before it (at least one). */
static size_t src_keep(const struct synth_src *s)
{
    for (size_t k = 0; s->msg && k < s->n_msgs; k++)
        if (!strcmp(s->msgs[k].id, s->msg)) return k + 1;
    return 1;
}

void synth_src_fit(struct synth_src *const *srcs, size_t n, size_t budget)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += strlen(srcs[i]->text);
    while (total > budget) {
        struct synth_src *s = NULL;
        size_t longest = 0;
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(srcs[i]->text);
            if (srcs[i]->n_msgs > src_keep(srcs[i]) && len > longest) s = srcs[i], longest = len;
        }
        if (!s) return;
        struct synth_src_msg *m = &s->msgs[--s->n_msgs];
        size_t cut = m->at;
        while (cut > 0 && s->text[cut - 1] != '\n') cut--; /* back over its "[role] " tag */
        free(m->id);
        s->text[cut] = '\0';
        total -= longest - cut;
    }
}

/* The names of a chunk's subjects, as the chunk's mentions give them. */
struct focus_name {
    char *name;
    bool self; /* the source's own entity */
};

/* Whether text names one of the names whose self is want (a name of the other subjects that is
 * part of one of the entity's own, "Antonio" in "Antonio Deon", is the entity's). */
static bool focus_names(const char *text, const struct focus_name *nm, size_t n, bool want)
{
    for (size_t i = 0; i < n; i++) {
        if (nm[i].self != want || !entity_name_in_text(text, nm[i].name, NULL)) continue;
        bool inside = false;
        for (size_t k = 0; !want && !inside && k < n; k++) inside = nm[k].self && strcasestr(nm[k].name, nm[i].name);
        if (!inside) return true;
    }
    return false;
}

/* Narrows s to entity's part of its chunk: from the person's first message naming it to the
 * last message before the person turns to another of the chunk's subjects for good. A chunk
 * whose start the segmenter put too early, or that it left with three subjects in it, otherwise
 * gives an article the talk of other subjects first (or their facts), and its later messages,
 * where a subject's change often is, fall outside what a lead's or an outline's note shows. A
 * chunk where the person never names the entity (the model inferred it) stays whole. */
static int src_focus(dream_store *store, struct synth_src *s, int64_t entity)
{
    sqlite3 *db = store_db(store);
    sqlite3_stmt *st = NULL;
    struct focus_name *nm = NULL;
    size_t n = 0, cap = 0;
    int rc = DREAM_OK, step;
    if (sqlite3_prepare_v2(db,
                           "SELECT m.surface, m.entity = ?2 FROM chunk_mentions m WHERE m.chunk = ?1 UNION "
                           "SELECT e.name, e.id = ?2 FROM chunk_mentions m JOIN pipeline_entities e ON e.id = m.entity WHERE m.chunk = ?1",
                           -1, &st, NULL))
        return store_sql_error(store, "reading a chunk's subjects");
    sqlite3_bind_int64(st, 1, s->chunk);
    sqlite3_bind_int64(st, 2, entity);
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name || strlen(name) < 3) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            struct focus_name *g = realloc(nm, cap * sizeof *g);
            if (!g) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            nm = g;
        }
        nm[n] = (struct focus_name){strdup(name), sqlite3_column_int(st, 1) != 0};
        if (!nm[n].name) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else n++;
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "reading a chunk's subjects");
    sqlite3_finalize(st);
    st = NULL;
    /* the person's messages of the chunk, in order: where they name the entity, and the others */
    int64_t first = -1, last = s->last, leave = -1;
    if (!rc &&
        sqlite3_prepare_v2(db, "SELECT position, text FROM messages WHERE conversation = ?1 AND position BETWEEN ?2 AND ?3 AND role = 'user' ORDER BY position",
                           -1, &st, NULL))
        rc = store_sql_error(store, "reading a chunk's messages");
    if (st) {
        sqlite3_bind_int64(st, 1, s->conversation);
        sqlite3_bind_int64(st, 2, s->first);
        sqlite3_bind_int64(st, 3, s->last);
        while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t pos = sqlite3_column_int64(st, 0);
            const char *text = (const char *)sqlite3_column_text(st, 1);
            if (!text) continue;
            if (focus_names(text, nm, n, true)) {
                if (first < 0) first = pos;
                leave = -1; /* it comes back: what came between stays */
            } else if (first >= 0 && leave < 0 && focus_names(text, nm, n, false)) {
                leave = pos;
            }
        }
        if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "reading a chunk's messages");
        sqlite3_finalize(st);
    }
    if (!rc && first >= 0) {
        if (leave > first) last = leave - 1;
        s->first = first;
        s->last = last;
    }
    for (size_t i = 0; i < n; i++) free(nm[i].name);
    free(nm);
    return rc;
}

int synth_entity_sources(dream_store *store, int64_t entity, const char *unrouted_stem, bool no_sources, struct synth_src **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT ch.id, ch.conversation, ch.first_position, ch.last_position, ch.label, c.cite, c.title, "
                           "coalesce(c.updated_at, c.created_at, 0), coalesce(c.created_at, c.updated_at, 0) FROM chunks ch JOIN conversations c ON c.id = ch.conversation "
                           "WHERE ch.id IN (SELECT chunk FROM chunk_mentions WHERE entity = ?1) AND (?2 IS NULL OR NOT EXISTS "
                           "(SELECT 1 FROM chunk_routed r WHERE r.chunk = ch.id AND r.article = ?2)) "
                           "ORDER BY coalesce(c.updated_at, c.created_at, c.ingested_at), c.id, ch.first_position, ch.last_position",
                           -1, &st, NULL))
        return store_sql_error(store, "listing an entity's chunks");
    sqlite3_bind_int64(st, 1, entity);
    if (unrouted_stem) sqlite3_bind_text(st, 2, unrouted_stem, -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, 2);
    size_t cap = 0;
    int step, rc = DREAM_OK;
    int64_t *conv_ms = NULL;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            struct synth_src *g = realloc(*out, cap * sizeof **out);
            int64_t *gm = realloc(conv_ms, cap * sizeof *gm);
            if (gm) conv_ms = gm;
            if (!g || !gm) {
                if (g) *out = g;
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            *out = g;
        }
        struct synth_src *s = &(*out)[(*n)++];
        memset(s, 0, sizeof *s);
        s->chunk = sqlite3_column_int64(st, 0);
        s->conversation = sqlite3_column_int64(st, 1);
        s->first = sqlite3_column_int64(st, 2);
        s->last = sqlite3_column_int64(st, 3);
        s->label = synth_strdup(sqlite3_column_text(st, 4));
        s->cite = synth_strdup(sqlite3_column_text(st, 5));
        s->title = synth_strdup(sqlite3_column_text(st, 6));
        conv_ms[*n - 1] = sqlite3_column_int64(st, 7);
        s->note = no_sources ? NULL : synth_source_note(s->cite, s->title, sqlite3_column_int64(st, 8));
        if (!s->label || !s->cite || !s->title || (!no_sources && !s->note)) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "listing an entity's chunks");
    sqlite3_finalize(st);
    for (size_t i = 0; !rc && i < *n; i++) rc = src_focus(store, &(*out)[i], entity);
    for (size_t i = 0; !rc && i < *n; i++) rc = synth_src_messages(store, &(*out)[i], conv_ms[i]);
    free(conv_ms);
    if (rc) {
        synth_src_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

struct dream_citation synth_src_citation(const struct synth_src *s)
{
    return (struct dream_citation){.conv = s->cite, .msg = s->msg, .date = synth_src_dated(s) ? s->date : NULL, .title = s->title, .note = s->note};
}

char *synth_source_note(const char *cite, const char *title, int64_t conv_ms)
{
    char d[11];
    synth_date(conv_ms, d);
    return dream_source_note(cite, strcmp(d, DREAM_CITATION_UNDATED) ? d : NULL, title);
}

bool synth_src_dated(const struct synth_src *s) { return strcmp(s->date, DREAM_CITATION_UNDATED) != 0; }

/* Appends text with footnote markers removed, [[T|d]] shown as d and [[T]] as T, ** and
 * leading role tags dropped. */
static int synth_plain(struct dbuf *b, const char *text)
{
    for (const char *p = text; *p;) {
        if (p[0] == '[' && p[1] == '^') {
            const char *q = strchr(p, ']');
            if (q) {
                p = q + 1;
                continue;
            }
        }
        if (p[0] == '[' && p[1] == '[') {
            const char *q = strstr(p, "]]");
            if (q) {
                const char *bar = memchr(p, '|', (size_t)(q - p));
                const char *s = bar ? bar + 1 : p + 2;
                if (dbuf_append(b, s, (size_t)(q - s))) return DREAM_ENOMEM;
                p = q + 2;
                continue;
            }
        }
        if (p[0] == '*' && p[1] == '*') {
            p += 2;
            continue;
        }
        if (dbuf_putc(b, *p == '\n' || *p == '\t' ? ' ' : *p)) return DREAM_ENOMEM;
        p++;
    }
    return DREAM_OK;
}

char *synth_gist(const char *text, size_t max)
{
    struct dbuf plain = {0};
    if (synth_plain(&plain, text ? text : "") || dbuf_putc(&plain, '\0')) {
        dbuf_free(&plain);
        return NULL;
    }
    /* two sentences at most, whitespace squeezed */
    struct dbuf b = {0};
    int sentences = 0;
    bool space = true;
    for (const char *p = plain.data; *p && sentences < 2 && b.len < max; p++) {
        if (isspace((unsigned char)*p)) {
            if (!space) dbuf_putc(&b, ' ');
            space = true;
            continue;
        }
        space = false;
        dbuf_putc(&b, *p);
        if ((*p == '.' || *p == '?' || *p == '!') && (p[1] == '\0' || isspace((unsigned char)p[1]))) sentences++;
    }
    dbuf_free(&plain);
    if (b.data) b.len = utf8_complete(b.data, b.len); /* max may have cut through a character */
    while (b.len && b.data[b.len - 1] == ' ') b.len--;
    dbuf_putc(&b, '\0');
    return dbuf_take(&b);
}

static bool synth_line_is(const char *line, size_t len, const char *word)
{
    while (len && (*line == '#' || *line == '*' || *line == ' ')) line++, len--;
    while (len && (line[len - 1] == '*' || line[len - 1] == ':' || line[len - 1] == ' ' || line[len - 1] == '\r')) len--;
    return len == strlen(word) && strncasecmp(line, word, len) == 0;
}

/* A word of a draft: [at, end) its bytes, [core, core_end) without the punctuation around it. */
struct unrep_word {
    size_t at, end, core, core_end;
};

/* Removes from s, in place, a run of 2 to 8 words the model wrote twice or more in a row ("near
 * the Rio Grande to the Rio Grande to the Rio Grande)." keeps one "to the Rio Grande"): a small
 * model that falls into a loop repeats a phrase until the token budget ends, and no sentence of
 * an article needs one said twice. Words holding a marker or a link are left alone, and no cut
 * crosses a line. */
static void synth_unrepeat(char *s)
{
    enum { MAX_WORDS = 512, MAX_RUN = 8 };
    for (int round = 0; round < 64; round++) {
        struct unrep_word w[MAX_WORDS];
        size_t n = 0;
        for (size_t i = 0; s[i] && n < MAX_WORDS;) {
            if (isspace((unsigned char)s[i])) {
                i++;
                continue;
            }
            struct unrep_word *x = &w[n++];
            x->at = i;
            while (s[i] && !isspace((unsigned char)s[i])) i++;
            x->end = i;
            x->core = x->at;
            x->core_end = x->end;
            while (x->core < x->core_end && strchr("(\"'*", s[x->core])) x->core++;
            while (x->core_end > x->core && strchr(".,;:!?)\"'*", s[x->core_end - 1])) x->core_end--;
        }
        bool cut = false;
        for (size_t i = 0; !cut && i < n; i++) {
            for (size_t k = 2; !cut && k <= MAX_RUN && i + 2 * k <= n; k++) {
                bool same = true;
                for (size_t j = 0; same && j < 2 * k; j++) same = !memchr(s + w[i + j].at, '[', w[i + j].end - w[i + j].at);
                for (size_t j = 0; same && j < k; j++) {
                    const struct unrep_word *a = &w[i + j], *b = &w[i + k + j];
                    same = a->core_end - a->core == b->core_end - b->core && a->core_end > a->core &&
                           strncasecmp(s + a->core, s + b->core, a->core_end - a->core) == 0;
                }
                size_t from = w[i + k - 1].core_end, to = w[i + 2 * k - 1].core_end;
                if (!same || memchr(s + from, '\n', to - from)) continue;
                memmove(s + from, s + to, strlen(s + to) + 1);
                cut = true;
            }
        }
        if (!cut) return;
    }
}

char *synth_sanitize(const char *raw, const char *heading)
{
    /* the article module's cleaning first, then what may never sit in a section body: any
     * heading line (it would start a section of its own), header lines */
    char *draft = NULL;
    if (dream_article_sanitize_draft(raw ? raw : "", heading, &draft, NULL, NULL)) return NULL;
    /* first CRs and non-numeric markers [^x] go (each could hide a heading or a definition
     * line from the checks below), then the lines are filtered */
    struct dbuf c = {0};
    for (size_t i = 0; draft[i]; i++) {
        if (draft[i] == '\r') continue;
        if (draft[i] == '[' && draft[i + 1] == '^') {
            size_t j = i + 2;
            while (isdigit((unsigned char)draft[j])) j++;
            size_t close = i + 2;
            while (draft[close] && draft[close] != ']' && draft[close] != '\n') close++;
            if (!(draft[j] == ']' && j > i + 2) && draft[close] == ']') {
                i = close;
                continue;
            }
        }
        dbuf_putc(&c, draft[i]);
    }
    dbuf_putc(&c, '\0');
    free(draft);
    draft = dbuf_take(&c);
    struct dbuf b = {0};
    bool in_info = false, blank = true;
    for (const char *line = draft ? draft : ""; *line;) {
        size_t len = strcspn(line, "\n");
        const char *next = line + len + (line[len] == '\n');
        const char *t = line;
        size_t tl = len;
        while (tl && (*t == ' ' || *t == '\t')) t++, tl--;
        if (tl >= 3 && (strncmp(t, "```", 3) == 0 || strncmp(t, "~~~", 3) == 0)) {
            in_info = !in_info && tl >= 7 && strncmp(t + 3, "info", 4) == 0;
            line = next;
            continue;
        }
        if (in_info) {
            line = next;
            continue;
        }
        if (synth_line_is(t, tl, "References") || synth_line_is(t, tl, "See also") || synth_line_is(t, tl, "Notes")) break;
        bool drop = (tl && *t == '#') || (tl >= 2 && t[0] == '[' && t[1] == '^' && memchr(t, ']', tl) &&
                                           ((const char *)memchr(t, ']', tl))[1] == ':') ||
                    (tl >= 11 && strncasecmp(t, "categories:", 11) == 0) || (tl >= 8 && strncmp(t, "{{stub}}", 8) == 0);
        if (drop) {
            line = next;
            continue;
        }
        if (tl == 0) {
            if (!blank) dbuf_putc(&b, '\n');
            blank = true;
            line = next;
            continue;
        }
        dbuf_append(&b, line, len);
        dbuf_putc(&b, '\n');
        blank = false;
        line = next;
    }
    free(draft);
    while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == ' ')) b.len--;
    dbuf_putc(&b, '\0');
    if (b.data) synth_unrepeat(b.data);
    return dbuf_take(&b);
}

/* Whether text holds one of tells[0..n) (any case). */
static bool synth_holds_any(const char *text, const char *const *tells, size_t n_tells)
{
    size_t n = strlen(text);
    for (size_t k = 0; k < n_tells; k++) {
        size_t m = strlen(tells[k]);
        for (size_t i = 0; i + m <= n; i++)
            if (strncasecmp(text + i, tells[k], m) == 0) return true;
    }
    return false;
}

/* The prompt's own frame, which a small model runs on into: a transcript's role lines, the
 * notes' and policies' headers, the quotes around an edit's current text (bench/eval.py counts
 * these as leaks). */
static const char *const synth_frame[] = {"[user]",    "[assistant]",         "--- note (", "--- end of", "--- end chunk", "--- conversation chunk",
                                          "--- meta/", "notes, oldest first", "<<<",        ">>>",        "current text:"};

bool synth_prompt_frame(const char *text) { return synth_holds_any(text, synth_frame, sizeof synth_frame / sizeof synth_frame[0]); }

bool synth_leaky(const char *draft)
{
    static const char *const tells[] = {"the user is asking", "the user asks", "the user wants", "source material", "i will draft",
                                        "i'll draft", "here is the section", "here is the lead", "here's the", "here is the article",
                                        "as an ai", "i cannot", "i can't", "i'm sorry", "i am sorry", "i apologize", "the task is",
                                        "output only"};
    return synth_prompt_frame(draft) || synth_holds_any(draft, tells, sizeof tells / sizeof tells[0]);
}

bool synth_cites(const char *text)
{
    bool fence = false;
    for (const char *line = text; line && *line;) {
        size_t len = strcspn(line, "\n");
        const char *t = line + strspn(line, " \t");
        if (!strncmp(t, "```", 3) || !strncmp(t, "~~~", 3)) fence = !fence;
        else if (!fence) {
            bool code = false;
            for (const char *p = line; p < line + len; p++) {
                if (*p == '`') code = !code;
                else if (!code && p[0] == '[' && p[1] == '^' && isdigit((unsigned char)p[2])) {
                    const char *q = p + 2;
                    while (isdigit((unsigned char)*q)) q++;
                    if (*q == ']') return true;
                }
            }
        }
        line += len + (line[len] == '\n');
    }
    return false;
}

bool synth_has_marker(const char *text, int n)
{
    char m[32];
    snprintf(m, sizeof m, "[^%d]", n);
    return strstr(text, m) != NULL;
}

char *synth_article_path(const char *wiki, const char *stem)
{
    struct dbuf b = {0};
    if (dbuf_printf(&b, "%s/articles/%s.md", wiki, stem)) return NULL;
    return dbuf_take(&b);
}

bool synth_editable(const char *stage, const char *path, const dream_article *a, struct dream_synth_result *res)
{
    int line = 0;
    if (dream_article_editable(a, &line) == DREAM_OK) return true;
    dream_error_clear();
    if (line)
        dream_log(DREAM_LOG_WARN,
                  "%s: skipped %s:%d: the code fence opened on this line never closes, so it hides the rest of the article and no "
                  "edit can be placed after it; close the fence (a line like its opener after the code) and the next run takes "
                  "the article up again",
                  stage, path, line);
    else
        dream_log(DREAM_LOG_WARN,
                  "%s: skipped %s: it holds NUL bytes, so no edit can be placed in it; remove them and the next run takes the "
                  "article up again",
                  stage, path);
    res->skipped++;
    return false;
}

void synth_log_verdict(const char *stem, const char *what, const struct dream_gate_verdict *v)
{
    for (size_t i = 0; i < v->n_reasons; i++) dream_log(DREAM_LOG_WARN, "%s: %s refused by the gate: %s", stem, what, v->reasons[i]);
}

/* Runs a prepared statement with (chunk, article[, section], seq) bound. */
static int synth_ledger_insert(dream_store *store, const struct synth_ledger *r, const char *article, int64_t seq)
{
    sqlite3_stmt *st;
    const char *sql = r->section ? "INSERT OR IGNORE INTO chunk_folded (chunk, article, section, write_seq) VALUES (?1, ?2, ?3, ?4)"
                                 : "INSERT OR IGNORE INTO chunk_routed (chunk, article, write_seq) VALUES (?1, ?2, ?4)";
    if (sqlite3_prepare_v2(store_db(store), sql, -1, &st, NULL)) return store_sql_error(store, "recording a ledger row");
    sqlite3_bind_int64(st, 1, r->chunk);
    sqlite3_bind_text(st, 2, article, -1, SQLITE_STATIC);
    if (r->section) sqlite3_bind_text(st, 3, r->section, -1, SQLITE_STATIC);
    if (seq > 0) sqlite3_bind_int64(st, 4, seq);
    else sqlite3_bind_null(st, 4);
    int rc = sqlite3_step(st) == SQLITE_DONE ? DREAM_OK : store_sql_error(store, "recording a ledger row");
    sqlite3_finalize(st);
    return rc;
}

int synth_mark_routed(dream_store *store, int64_t chunk, const char *stem)
{
    struct synth_ledger r = {.chunk = chunk};
    return synth_ledger_insert(store, &r, stem, 0);
}

/* The search index's rows of the article at path ("articles/<stem>.md") from text (NULL: none),
 * in the caller's transaction. */
static int synth_reindex(dream_store *store, const char *path, const char *text, size_t len)
{
    size_t pl = strlen(path);
    if (strncmp(path, "articles/", 9) != 0 || pl <= 12 || strcmp(path + pl - 3, ".md") != 0) return 0;
    char *stem = strndup(path + 9, pl - 12);
    dream_article *a = NULL;
    int rc = stem ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    if (!rc && text) rc = dream_article_parse(text, len, &a);
    if (!rc) rc = dream_search_index_article(store, stem, a, 0 /* the file just written: the next sync compares its text */);
    dream_article_free(a);
    free(stem);
    return rc;
}

/* Undoes the journaled write seq: its ledger rows and the journal row; the search index goes
 * back to the text the write found (a file changed since is indexed again by the next reader). */
static int synth_undo(dream_store *store, int64_t seq)
{
    char sql[256];
    int rc = store_exec(store, "BEGIN IMMEDIATE", "undoing a write");
    sqlite3_stmt *st = NULL;
    if (!rc && sqlite3_prepare_v2(store_db(store), "SELECT path, before_text FROM synth_writes WHERE seq = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, seq);
        if (sqlite3_step(st) == SQLITE_ROW)
            rc = synth_reindex(store, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
                               (size_t)sqlite3_column_bytes(st, 1));
    }
    sqlite3_finalize(st);
    snprintf(sql, sizeof sql, "DELETE FROM chunk_routed WHERE write_seq = %lld", (long long)seq);
    if (!rc) rc = store_exec(store, sql, "undoing a write");
    snprintf(sql, sizeof sql, "DELETE FROM chunk_folded WHERE write_seq = %lld", (long long)seq);
    if (!rc) rc = store_exec(store, sql, "undoing a write");
    snprintf(sql, sizeof sql, "DELETE FROM synth_writes WHERE seq = %lld", (long long)seq);
    if (!rc) rc = store_exec(store, sql, "undoing a write");
    if (!rc) rc = store_exec(store, "COMMIT", "undoing a write");
    else store_exec(store, "ROLLBACK", "undoing a write");
    return rc;
}

static int synth_mark_written(dream_store *store, int64_t seq)
{
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE synth_writes SET state = 'written' WHERE seq = %lld", (long long)seq);
    return store_exec(store, sql, "recording a finished write");
}

int synth_journal(dream_store *store, const char *stage, const char *stem, const dream_article *before, const dream_article *after,
                  int64_t *seq)
{
    *seq = 0;
    size_t len = 0, blen = 0;
    const char *text = after ? dream_article_text(after, &len) : "";
    const char *btext = before ? dream_article_text(before, &blen) : NULL;
    char rel[1024];
    snprintf(rel, sizeof rel, "articles/%s.md", stem);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "INSERT INTO synth_writes (path, before_text, text, state, stage, removes) VALUES (?, ?, ?, 'pending', ?, ?)", -1, &st,
                           NULL))
        return store_sql_error(store, "journaling a write");
    sqlite3_bind_text(st, 1, rel, -1, SQLITE_STATIC);
    if (btext) sqlite3_bind_text(st, 2, btext, (int)blen, SQLITE_STATIC);
    else sqlite3_bind_null(st, 2);
    sqlite3_bind_text(st, 3, text, (int)len, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, stage, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, after ? 0 : 1);
    int rc = sqlite3_step(st) == SQLITE_DONE ? DREAM_OK : store_sql_error(store, "journaling a write");
    sqlite3_finalize(st);
    *seq = sqlite3_last_insert_rowid(store_db(store));
    if (!rc) rc = dream_search_index_article(store, stem, after, 0 /* the file just written: the next sync compares its text */);
    return rc;
}

/* Removes the file at path when it holds exactly before[0..blen) (*done); a file changed since,
 * or already gone, is left (not *done). */
static int synth_unlink_if(const char *path, const char *before, size_t blen, bool *done)
{
    *done = false;
    char *have = NULL;
    size_t hlen = 0;
    int rc = file_read_all(path, 0, &have, &hlen);
    if (rc == DREAM_ENOTFOUND) {
        dream_error_clear();
        return DREAM_OK;
    }
    if (rc) return rc;
    bool same = before && dream_article_file_holds(have, hlen, before, blen);
    free(have);
    if (same && unlink(path) != 0) return dream_error_set(DREAM_EIO, "cannot remove %s: %s", path, strerror(errno));
    *done = same;
    return DREAM_OK;
}

int synth_put(dream_store *store, const char *wiki, const char *stage, int64_t seq, const char *stem, const dream_article *before,
              const dream_article *after, const struct dream_gate_params *gate, bool *accepted)
{
    *accepted = false;
    char *path = synth_article_path(wiki, stem);
    if (!path) return dream_error_set(DREAM_ENOMEM, "out of memory");
    int rc;
    if (after) {
        /* git keeps no empty folder: a wiki whose last article went, or a clone of it, has no
         * articles/ (every write failed on it, run after run) */
        char *slash = strrchr(path, '/');
        if (slash) {
            *slash = '\0';
            rc = file_mkdirs(path, 0755);
            *slash = '/';
            if (rc) {
                free(path);
                return rc;
            }
        }
        struct dream_gate_verdict v;
        /* the notes its footnotes link to are on disk before the article is */
        size_t len = 0;
        const char *texts[1] = {dream_article_text(after, &len)};
        rc = synth_sources_for(store, wiki, texts, &len, 1, NULL, NULL);
        if (!rc) rc = dream_article_replace_file(path, before, after, gate, &v);
        if (!rc) {
            *accepted = v.accepted;
            if (!v.accepted) synth_log_verdict(stem, stage, &v);
            dream_gate_verdict_free(&v);
        }
    } else {
        size_t blen = 0;
        const char *btext = before ? dream_article_text(before, &blen) : NULL;
        rc = synth_unlink_if(path, btext, blen, accepted);
        if (!rc && !*accepted)
            dream_log(DREAM_LOG_WARN, "%s: %s: %s changed on disk since it was read (a hand edit?): it is not removed", stem, stage, path);
    }
    free(path);
    if (!rc) rc = *accepted ? synth_mark_written(store, seq) : synth_undo(store, seq);
    return rc;
}

int synth_write(dream_store *store, const char *wiki, const char *stage, const char *stem, const dream_article *before,
                dream_article *after, const struct dream_gate_params *gate, const struct synth_ledger *rows, size_t n_rows,
                const char *article_for_rows, int64_t done_item, bool *accepted)
{
    *accepted = false;
    size_t unlinked = 0;
    int rc = synth_unlink_new_redlinks(after, before, wiki, stem, &unlinked);
    if (rc) return rc;
    if (unlinked)
        dream_log(DREAM_LOG_INFO, "%s: %s: %zu link(s) the model added to no article written as the text they show", stem, stage, unlinked);
    struct dream_gate_verdict v;
    rc = dream_article_gate(before, after, gate, &v);
    if (rc) return rc;
    if (!v.accepted) {
        synth_log_verdict(stem, stage, &v);
        dream_gate_verdict_free(&v);
        return DREAM_OK;
    }
    dream_gate_verdict_free(&v);
    int64_t seq = 0;
    rc = store_exec(store, "BEGIN IMMEDIATE", "journaling a write");
    if (rc) return rc;
    rc = synth_journal(store, stage, stem, before, after, &seq);
    for (size_t i = 0; !rc && i < n_rows; i++) rc = synth_ledger_insert(store, &rows[i], article_for_rows, seq);
    if (!rc && done_item) rc = stage_state_done(store, stage, done_item, 1, store_now_ms());
    if (!rc) rc = store_exec(store, "COMMIT", "journaling a write");
    if (rc) {
        store_exec(store, "ROLLBACK", "journaling a write");
        return rc;
    }
    return synth_put(store, wiki, stage, seq, stem, before, after, gate, accepted);
}

/* ---- the git commit ------------------------------------------------------------------------- */

static int synth_git_error(const char *what, const char *wiki)
{
    const git_error *e = git_error_last();
    return dream_error_set(DREAM_EIO, "%s in the wiki %s: %s", what, wiki, e && e->message ? e->message : "unknown git error");
}

/* True when path is a transcript note: under Sources/. */
static bool synth_is_source_path(const char *path)
{
    return strncmp(path, DREAM_SOURCES_DIR "/", sizeof DREAM_SOURCES_DIR) == 0;
}

/* What a commit records for one written file: its path, blob and mode. */
struct synth_git_entry {
    char *path;
    git_oid id;
    git_filemode_t mode;
};

/* The entries that record file f as git sees it on disk: f itself; or, f's path a symbolic link,
 * the link as a link (its target as the blob) and, when the link lands inside the wiki (outside
 * .git), f's text at the path it lands on. A link out of the wiki leaves the text unversioned
 * here, as the person set it up. Appends to e (room for 2); *n counts them. */
static int synth_git_entries(git_repository *repo, const char *wiki, const struct synth_file *f, struct synth_git_entry *e, size_t *n)
{
    struct dbuf p = {0};
    if (dbuf_printf(&p, "%s/%s", wiki, f->path)) return DREAM_ENOMEM;
    char link[4096];
    ssize_t ll = readlink(p.data, link, sizeof link - 1);
    char *real = ll > 0 ? realpath(p.data, NULL) : NULL, *root = ll > 0 ? realpath(wiki, NULL) : NULL;
    dbuf_free(&p);
    int rc = DREAM_OK;
    if (ll <= 0) { /* a file of its own */
        if (git_blob_create_from_buffer(&e[*n].id, repo, f->text, f->len)) rc = DREAM_EIO;
        else if (!(e[*n].path = strdup(f->path))) rc = DREAM_ENOMEM;
        else e[(*n)++].mode = GIT_FILEMODE_BLOB;
    } else {
        link[ll] = '\0';
        if (git_blob_create_from_buffer(&e[*n].id, repo, link, (size_t)ll)) rc = DREAM_EIO;
        else if (!(e[*n].path = strdup(f->path))) rc = DREAM_ENOMEM;
        else e[(*n)++].mode = GIT_FILEMODE_LINK;
        size_t rl = root ? strlen(root) : 0;
        const char *rel = real && root && !strncmp(real, root, rl) && real[rl] == '/' ? real + rl + 1 : NULL;
        if (!rc && rel && strncmp(rel, ".git/", 5) != 0 && strcmp(rel, f->path) != 0) {
            if (git_blob_create_from_buffer(&e[*n].id, repo, f->text, f->len)) rc = DREAM_EIO;
            else if (!(e[*n].path = strdup(rel))) rc = DREAM_ENOMEM;
            else e[(*n)++].mode = GIT_FILEMODE_BLOB;
        }
    }
    free(real);
    free(root);
    if (rc == DREAM_ENOMEM) return dream_error_set(DREAM_ENOMEM, "out of memory");
    return rc ? synth_git_error("storing an article in git", wiki) : DREAM_OK;
}

/* synth_git_ready on a repository already open. */
static int synth_git_ready_repo(git_repository *repo, const char *wiki)
{
    dream_vault_git_clear_killed(repo);
    return dream_vault_git_ready(repo, wiki);
}

int synth_git_ready(const char *wiki)
{
    git_libgit2_init();
    git_repository *repo = NULL;
    int rc = DREAM_OK;
    if (git_repository_open_ext(&repo, wiki, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0) rc = synth_git_ready_repo(repo, wiki);
    else git_error_clear(); /* no repository: nothing to commit to (the commit says so) */
    git_repository_free(repo);
    git_libgit2_shutdown();
    return rc;
}

/* Commits the given texts onto HEAD: a tree of HEAD's plus exactly these blobs, less the paths
 * whose text is NULL and, with prune_sources, less every Sources/ path d does not hold. The
 * repository's index takes our blobs only for paths where it agreed with HEAD (a path the person
 * staged something else for keeps their staging). The message is "memory: <subject>" and the
 * paths that changed; *made counts them (0: no commit was needed). A file reached through a
 * symbolic link is recorded as git sees it on disk: synth_git_entries. */
static int synth_git_commit(const char *wiki, const struct synth_file *d, size_t n, const char *subject, bool prune_sources, size_t *made)
{
    *made = 0;
    char *message = NULL;
    git_diff *diff = NULL;
    git_repository *repo = NULL;
    git_index *idx = NULL, *ridx = NULL;
    git_commit *parent = NULL;
    git_tree *ptree = NULL, *tree = NULL;
    git_signature *author = NULL, *committer = NULL;
    git_oid parent_id, tree_id, commit_id;
    struct synth_git_entry *ents = NULL; /* what the commit records for d: synth_git_entries */
    size_t n_ents = 0;
    int rc = DREAM_OK;
    if (git_repository_open_ext(&repo, wiki, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
        dream_log(DREAM_LOG_WARN, "the wiki %s is not a git repository (run dream init): %zu written file(s) left uncommitted", wiki, n);
        return DREAM_OK;
    }
    if ((rc = synth_git_ready_repo(repo, wiki))) goto done;
    if (git_reference_name_to_id(&parent_id, repo, "HEAD") == 0) {
        if (git_commit_lookup(&parent, repo, &parent_id) || git_commit_tree(&ptree, parent)) {
            rc = synth_git_error("reading HEAD", wiki);
            goto done;
        }
    }
    if (git_index_new(&idx) || (ptree && git_index_read_tree(idx, ptree))) {
        rc = synth_git_error("reading HEAD's tree", wiki);
        goto done;
    }
    ents = calloc(2 * n + 1, sizeof *ents);
    if (!ents) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; prune_sources && i < git_index_entrycount(idx);) {
        const git_index_entry *ie = git_index_get_byindex(idx, i);
        bool keep = !synth_is_source_path(ie->path);
        if (!keep) { /* only a note dream wrote: the person's own files there stay */
            git_blob *blob = NULL;
            keep = git_blob_lookup(&blob, repo, &ie->id) != 0 ||
                   !synth_source_note_is_ours(ie->path, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
            git_blob_free(blob);
        }
        for (size_t k = 0; k < n && !keep; k++) keep = d[k].text && strcmp(d[k].path, ie->path) == 0;
        if (!keep && git_index_remove(idx, ie->path, 0) == 0) continue;
        i++;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        git_index_entry e;
        memset(&e, 0, sizeof e);
        if (!d[i].text) {
            git_index_remove(idx, d[i].path, 0); /* absent from HEAD already: nothing to remove */
            continue;
        }
        /* an article of the person's that their git rules ignore (.gitignore, info/exclude) and
         * that was never committed stays out of git, as `git add` would leave it: a stage edited
         * it (a link, a footnote), but it is theirs, kept out of history on purpose */
        int ignored = 0;
        if (!d[i].created && strncmp(d[i].path, "articles/", 9) == 0 && !git_index_get_bypath(idx, d[i].path, 0) &&
            git_ignore_path_is_ignored(&ignored, repo, d[i].path) == 0 && ignored) {
            dream_log(DREAM_LOG_INFO, "%s: ignored by the wiki's git rules and never committed: left out of the commit", d[i].path);
            continue;
        }
        size_t from = n_ents;
        if ((rc = synth_git_entries(repo, wiki, &d[i], ents, &n_ents))) break;
        for (size_t k = from; k < n_ents && !rc; k++) {
            e.mode = ents[k].mode;
            e.id = ents[k].id;
            e.path = ents[k].path;
            if (git_index_add(idx, &e)) rc = synth_git_error("staging an article", wiki);
        }
    }
    if (!rc && git_index_write_tree_to(&tree_id, idx, repo)) rc = synth_git_error("writing the commit's tree", wiki);
    if (rc || (ptree && git_oid_equal(&tree_id, git_tree_id(ptree)))) goto done; /* already committed (a run killed after its commit) */
    if (git_tree_lookup(&tree, repo, &tree_id) || git_diff_tree_to_tree(&diff, repo, ptree, tree, NULL)) {
        rc = synth_git_error("preparing the commit", wiki);
        goto done;
    }
    if ((rc = dream_vault_git_signatures(repo, &author, &committer))) goto done;
    {
        struct dbuf m = {0};
        size_t nd = git_diff_num_deltas(diff);
        rc = dbuf_printf(&m, "memory: %s\n\n", subject);
        size_t notes_gone = 0;
        for (size_t i = 0; !rc && i < nd; i++) {
            const git_diff_delta *dd = git_diff_get_delta(diff, i);
            bool gone = dd->status == GIT_DELTA_DELETED;
            /* a removed transcript's name holds its conversation's title: forget keeps it out */
            if (gone && synth_is_source_path(dd->old_file.path)) notes_gone++;
            else rc = dbuf_printf(&m, "%s%s\n", gone ? dd->old_file.path : dd->new_file.path, gone ? " (removed)" : "");
        }
        if (!rc && notes_gone) rc = dbuf_printf(&m, "%zu transcript note(s) under %s/ removed\n", notes_gone, DREAM_SOURCES_DIR);
        message = rc ? NULL : dbuf_take(&m);
        if (!message) {
            dbuf_free(&m);
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            goto done;
        }
        *made = nd;
    }
    const git_commit *parents[1] = {parent};
    dream_vault_git_marker(repo, true, parent ? git_commit_id(parent) : NULL);
    if (git_commit_create(&commit_id, repo, "HEAD", author, committer, NULL, message, tree, parent ? 1 : 0, parents)) {
        rc = synth_git_error("committing", wiki);
        dream_vault_git_marker(repo, false, NULL);
        goto done;
    }
    /* The index follows for our paths, unless the person staged something the commit lacks there. */
    if (git_repository_index(&ridx, repo) == 0) {
        /* paths the commit removed leave the index where it held HEAD's blob */
        for (size_t i = 0; ptree && i < git_index_entrycount(ridx);) {
            const git_index_entry *ie = git_index_get_byindex(ridx, i);
            git_tree_entry *old = NULL;
            bool gone = git_index_get_bypath(idx, ie->path, 0) == NULL && git_tree_entry_bypath(&old, ptree, ie->path) == 0 &&
                        git_oid_equal(&ie->id, git_tree_entry_id(old));
            git_tree_entry_free(old);
            if (gone && git_index_remove(ridx, ie->path, 0) == 0) continue;
            i++;
        }
        for (size_t i = 0; i < n_ents; i++) {
            const git_index_entry *cur = git_index_get_bypath(ridx, ents[i].path, 0);
            git_tree_entry *old = NULL;
            bool agreed = !cur;
            if (cur && ptree && git_tree_entry_bypath(&old, ptree, ents[i].path) == 0) agreed = git_oid_equal(&cur->id, git_tree_entry_id(old));
            git_tree_entry_free(old);
            /* what the person staged there went into the commit when the file on disk is what was
             * committed: a stage re-reads the file it edits, staged and unstaged edits and all
             * (the index kept the staged text, so git status showed the commit undone) */
            if (!agreed) {
                struct dbuf full = {0};
                git_oid disk;
                agreed = !dbuf_printf(&full, "%s/%s", wiki, ents[i].path) && git_odb_hashfile(&disk, full.data, GIT_OBJECT_BLOB) == 0 &&
                         git_oid_equal(&disk, &ents[i].id);
                dbuf_free(&full);
            }
            if (!agreed) continue;
            git_index_entry e;
            memset(&e, 0, sizeof e);
            e.mode = ents[i].mode;
            e.id = ents[i].id;
            e.path = ents[i].path;
            git_index_add(ridx, &e);
        }
        if (git_index_write(ridx)) dream_log(DREAM_LOG_WARN, "the wiki %s: could not update the git index after committing", wiki);
    }
    dream_vault_git_marker(repo, false, NULL);
done:
    for (size_t i = 0; ents && i < n_ents; i++) free(ents[i].path);
    free(ents);
    if (rc) *made = 0;
    free(message);
    git_diff_free(diff);
    git_index_free(ridx);
    git_index_free(idx);
    git_signature_free(author);
    git_signature_free(committer);
    git_tree_free(tree);
    git_tree_free(ptree);
    git_commit_free(parent);
    git_repository_free(repo);
    return rc;
}

void synth_files_free(struct synth_file *f, size_t n)
{
    for (size_t i = 0; f && i < n; i++) {
        free(f[i].path);
        free(f[i].text);
    }
    free(f);
}

/* The journal's written texts, the files given, and (find_sources) the notes the texts cite, in
 * one commit. */
static int synth_commit_all(dream_store *store, const char *wiki, const char *subject, const struct synth_file *extra, size_t n_extra,
                            bool find_sources, bool prune_sources, size_t *n_files)
{
    if (n_files) *n_files = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT path, text, removes, (SELECT f.before_text IS NULL FROM synth_writes f WHERE f.path = synth_writes.path "
                           "ORDER BY f.seq LIMIT 1) FROM synth_writes WHERE seq IN (SELECT max(seq) FROM synth_writes WHERE state = 'written' "
                           "GROUP BY path) ORDER BY path",
                           -1, &st, NULL))
        return store_sql_error(store, "listing written articles");
    struct synth_file *d = NULL;
    size_t n = 0, cap = 0;
    int rc = DREAM_OK, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            struct synth_file *g = realloc(d, cap * sizeof *d);
            if (!g) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            d = g;
        }
        bool removes = sqlite3_column_int(st, 2) != 0; /* the path leaves the tree: text NULL */
        d[n].path = strdup((const char *)sqlite3_column_text(st, 0));
        d[n].len = removes ? 0 : (size_t)sqlite3_column_bytes(st, 1);
        d[n].text = removes ? NULL : malloc(d[n].len + 1);
        d[n].created = sqlite3_column_int(st, 3) != 0;
        if (d[n].text && d[n].len) memcpy(d[n].text, sqlite3_column_blob(st, 1), d[n].len);
        n++;
        if (!d[n - 1].path || (!removes && !d[n - 1].text)) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    sqlite3_finalize(st);
    size_t n_journal = n;
    if (!rc && find_sources && n) {
        const char **texts = calloc(n, sizeof *texts);
        size_t *lens = calloc(n, sizeof *lens);
        struct synth_file *notes = NULL;
        size_t n_notes = 0;
        for (size_t i = 0; texts && lens && i < n; i++) texts[i] = d[i].text ? d[i].text : "", lens[i] = d[i].len;
        rc = texts && lens ? synth_sources_for(store, wiki, texts, lens, n, &notes, &n_notes) : dream_error_set(DREAM_ENOMEM, "out of memory");
        extra = notes;
        n_extra = n_notes;
        free(texts);
        free(lens);
    }
    struct synth_file *all = !rc && n + n_extra ? calloc(n + n_extra, sizeof *all) : NULL;
    if (!rc && n + n_extra && !all) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; all && i < n; i++) all[i] = d[i];
    for (size_t i = 0; all && i < n_extra; i++) all[n + i] = extra[i];
    if (!rc && (n + n_extra || prune_sources)) {
        size_t made = 0;
        git_libgit2_init();
        rc = synth_git_commit(wiki, all, n + n_extra, subject, prune_sources, &made);
        git_libgit2_shutdown();
        if (!rc) rc = store_exec(store, "BEGIN IMMEDIATE", "clearing committed writes");
        if (!rc) {
            rc = store_exec(store,
                            "UPDATE chunk_routed SET write_seq = NULL WHERE write_seq IN (SELECT seq FROM synth_writes WHERE state = 'written');"
                            "UPDATE chunk_folded SET write_seq = NULL WHERE write_seq IN (SELECT seq FROM synth_writes WHERE state = 'written');"
                            "DELETE FROM synth_writes WHERE state = 'written'",
                            "clearing committed writes");
            if (!rc) rc = store_exec(store, "COMMIT", "clearing committed writes");
            else store_exec(store, "ROLLBACK", "clearing committed writes");
        }
        if (!rc && n_files) *n_files = made;
    }
    free(all);
    if (find_sources) synth_files_free((struct synth_file *)extra, n_extra);
    synth_files_free(d, n_journal);
    return rc;
}

int synth_commit(dream_store *store, const char *wiki, const char *subject, size_t *n_files)
{
    return synth_commit_all(store, wiki, subject, NULL, 0, true, false, n_files);
}

int synth_commit_files(dream_store *store, const char *wiki, const char *subject, const struct synth_file *extra, size_t n_extra,
                       bool prune_sources, size_t *n_files)
{
    return synth_commit_all(store, wiki, subject, extra, n_extra, false, prune_sources, n_files);
}

/* A write killed between its temporary file and the rename leaves "<file>.md.tmp.<pid>"
 * (file_write_atomic) in articles/ or Sources/: an untracked file `git add -A` would commit.
 * Those of a process no longer running are removed. */
static void synth_clean_temps(const char *wiki)
{
    static const char *const dirs[] = {"articles", DREAM_SOURCES_DIR};
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        struct dbuf p = {0};
        if (dbuf_printf(&p, "%s/%s", wiki, dirs[k])) return;
        DIR *d = opendir(p.data);
        for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
            const char *t = strstr(e->d_name, ".md.tmp.");
            if (!t || t == e->d_name) continue;
            char *end = NULL;
            long pid = strtol(t + 8, &end, 10);
            if (pid <= 0 || *end || end == t + 8 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
                continue; /* not such a name, or a running process's write (EPERM: running too) */
            struct dbuf f = {0};
            if (!dbuf_printf(&f, "%s/%s", p.data, e->d_name) && unlink(f.data) == 0)
                dream_log(DREAM_LOG_INFO, "removed %s, left by a write that was killed", f.data);
            dbuf_free(&f);
        }
        if (d) closedir(d);
        dbuf_free(&p);
    }
}

int dream_synth_recover(dream_store *store, const char *wiki, size_t *committed)
{
    if (committed) *committed = 0;
    /* before anything is written: a wiki git would not commit in now is named, not written to */
    int rc0 = synth_git_ready(wiki);
    if (rc0) return rc0;
    synth_clean_temps(wiki);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "SELECT seq, path, before_text, text, removes FROM synth_writes WHERE state = 'pending' ORDER BY seq",
                           -1, &st, NULL))
        return store_sql_error(store, "reading the write journal");
    int rc = DREAM_OK, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0);
        struct dbuf p = {0};
        dbuf_printf(&p, "%s/%s", wiki, (const char *)sqlite3_column_text(st, 1));
        char *path = dbuf_take(&p);
        const char *before = (const char *)sqlite3_column_text(st, 2);
        size_t blen = (size_t)sqlite3_column_bytes(st, 2);
        const char *text = (const char *)sqlite3_column_blob(st, 3);
        size_t len = (size_t)sqlite3_column_bytes(st, 3);
        char *have = NULL;
        size_t hlen = 0;
        int r = path ? file_read_all(path, 0, &have, &hlen) : DREAM_ENOMEM;
        if (r == DREAM_ENOTFOUND) dream_error_clear();
        else if (r) rc = r;
        bool removes = sqlite3_column_int(st, 4) != 0;
        if (!rc) {
            /* a removal is done when the file is gone; otherwise the file holds the write's text */
            bool done = removes ? r == DREAM_ENOTFOUND : r == DREAM_OK && hlen == len && memcmp(have, text, len) == 0;
            bool redo = !done && ((r == DREAM_ENOTFOUND && !before) || (r == DREAM_OK && before && dream_article_file_holds(have, hlen, before, blen)));
            /* as synth_put: the notes its footnotes link to are on disk before the article is (a
             * kill between the journal and synth_put left them unwritten) */
            if ((done || redo) && !removes) rc = synth_sources_for(store, wiki, &text, &len, 1, NULL, NULL);
            if (rc) /* nothing more for this row: the loop stops on rc */;
            else if (done) rc = synth_mark_written(store, seq);
            else if (redo && removes && unlink(path) != 0) rc = dream_error_set(DREAM_EIO, "cannot remove %s: %s", path, strerror(errno));
            else if (redo && removes) rc = synth_mark_written(store, seq);
            else if (redo && !(rc = file_write_atomic(path, text, len))) rc = synth_mark_written(store, seq);
            else if (!redo) {
                dream_log(DREAM_LOG_WARN, "%s changed since an interrupted run read it; that run's write is dropped and redone later", path);
                rc = synth_undo(store, seq);
            }
        }
        free(have);
        free(path);
    }
    if (!rc && step != SQLITE_DONE && step != SQLITE_ROW) rc = store_sql_error(store, "reading the write journal");
    sqlite3_finalize(st);
    if (!rc) rc = synth_commit(store, wiki, "finish an interrupted run", committed);
    return rc;
}

/* ---- stems ---------------------------------------------------------------------------------- */

static int synth_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int synth_list_stems(const char *wiki, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    struct dbuf p = {0};
    dbuf_printf(&p, "%s/articles", wiki);
    char *dir = dbuf_take(&p);
    DIR *d = dir ? opendir(dir) : NULL;
    free(dir);
    if (!d) return DREAM_OK;
    size_t cap = 0;
    struct dirent *e;
    int rc = DREAM_OK;
    while (!rc && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l <= 3 || e->d_name[0] == '.' || strcmp(e->d_name + l - 3, ".md") != 0) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 32;
            char **g = realloc(*out, cap * sizeof *g);
            if (!g) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            *out = g;
        }
        (*out)[*n] = strndup(e->d_name, l - 3);
        if (!(*out)[(*n)++]) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    closedir(d);
    if (!rc && *n) qsort(*out, *n, sizeof **out, synth_cmp);
    return rc;
}

void synth_free_strings(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) free(s[i]);
    free(s);
}

int synth_normalize(dream_article *a, const char *stem, const struct synth_stems *stems)
{
    struct dream_article_normalize_params np = {.stem = stem, .resolve = synth_resolve_stem, .resolve_ud = (void *)stems, .manage_stub = true};
    return dream_article_normalize(a, &np, NULL, NULL);
}

char *synth_resolve_stem(void *ud, const char *target)
{
    struct synth_stems *s = ud;
    long i = dream_article_resolve_link((const char *const *)s->stems, s->n, target);
    return i < 0 ? NULL : strdup(s->stems[i]);
}

char *synth_unlink_redlinks(const char *value, const struct synth_stems *stems)
{
    struct dbuf b = {0};
    int rc = DREAM_OK;
    for (const char *p = value; !rc && *p;) {
        const char *open = strstr(p, "[["), *close = open ? strstr(open, "]]") : NULL;
        if (!open || !close || !stems) {
            rc = dbuf_puts(&b, p);
            break;
        }
        rc = dbuf_append(&b, p, (size_t)(open - p));
        char *inner = rc ? NULL : strndup(open + 2, (size_t)(close - open - 2));
        if (!inner) rc = DREAM_ENOMEM;
        /* a bracket inside ([[a [[b]], [[a|[[b]]) makes no link to trust: its text, unbracketed */
        bool odd = inner && strpbrk(inner, "[]") != NULL;
        char *bar = inner ? strchr(inner, '|') : NULL;
        if (bar && !odd) *bar = '\0';
        char *hash = inner && !odd ? strchr(inner, '#') : NULL;
        if (hash) *hash = '\0';
        /* the target as the article parser (and so dream check) reads it: trimmed */
        char *t = inner;
        while (t && isspace((unsigned char)*t)) t++;
        for (size_t l = t ? strlen(t) : 0; l && isspace((unsigned char)t[l - 1]); l--) t[l - 1] = '\0';
        char *target = inner && !odd ? synth_resolve_stem((void *)stems, t) : NULL;
        if (!rc && target) {
            rc = dbuf_append(&b, open, (size_t)(close + 2 - open));
        } else if (!rc) {
            for (const char *q = odd ? inner : bar ? bar + 1 : inner; !rc && *q; q++)
                if (*q != '[' && *q != ']') rc = dbuf_putc(&b, *q);
        }
        free(target);
        free(inner);
        p = close + 2;
    }
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

/* The stems of the vault's articles now, with stem (the article being written) among them. */
static int synth_live_stems(const char *wiki, const char *stem, struct synth_stems *out)
{
    int rc = synth_list_stems(wiki, &out->stems, &out->n);
    char **g = rc ? NULL : realloc(out->stems, (out->n + 1) * sizeof *g);
    if (!rc && !g) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    if (!rc) {
        out->stems = g;
        if (!(out->stems[out->n++] = strdup(stem))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    return rc;
}

/* One pass of synth_unlink_new_redlinks over a; *changed counts the links it reduced. */
static int synth_unlink_pass(dream_article *a, const char *const *old, size_t n_old, const char *wiki, const char *stem,
                             struct synth_stems *live, bool *listed, size_t *changed)
{
    size_t len, from = 0;
    const char *text = dream_article_text(a, &len);
    struct dbuf b = {0};
    const struct synth_stems none = {0};
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < dream_article_link_count(a); i++) {
        const struct dream_article_link *l = dream_article_link(a, i);
        /* what dream check skips, and what the text the stage started from already linked to */
        if (!l->target[0] || dream_article_link_is_meta(l->target) || l->offset < from) continue;
        if (n_old && dream_article_resolve_link(old, n_old, l->target) >= 0) continue;
        if (!*listed) {
            rc = synth_live_stems(wiki, stem, live);
            *listed = true;
            if (rc) break;
        }
        if (dream_article_resolve_link((const char *const *)live->stems, live->n, l->target) >= 0) continue;
        char *raw = strndup(text + l->offset, l->len), *shown = raw ? synth_unlink_redlinks(raw, &none) : NULL;
        if (!shown) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        if (!rc) rc = dbuf_append(&b, text + from, l->offset - from);
        if (!rc) rc = dbuf_puts(&b, shown);
        from = l->offset + l->len;
        (*changed)++;
        free(shown);
        free(raw);
    }
    if (!rc && *changed) rc = dbuf_append(&b, text + from, len - from);
    if (!rc && *changed) rc = dream_article_set_text(a, b.data, b.len);
    dbuf_free(&b);
    return rc;
}

int synth_unlink_new_redlinks(dream_article *a, const dream_article *before, const char *wiki, const char *stem, size_t *unlinked)
{
    *unlinked = 0;
    size_t n_old = before ? dream_article_link_count(before) : 0;
    const char **old = n_old ? calloc(n_old, sizeof *old) : NULL;
    if (n_old && !old) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_old; i++) old[i] = dream_article_link(before, i)->target;
    struct synth_stems live = {0};
    bool listed = false;
    int rc = DREAM_OK;
    /* a pass rewrites every such link; the text shown has no brackets, so each pass that changes
     * something removes '[' bytes, and a link its removal formed anew is seen by the next pass.
     * The normalize that closes a change may form one too (a footnote marker with no definition
     * goes, and the brackets around it close), so the passes look again after it, and a change
     * they make is normalized in turn */
    for (bool normalized = false; !rc;) {
        size_t reduced = 0; /* links these passes reduced */
        for (size_t changed = 1; !rc && changed; reduced += changed) {
            changed = 0;
            rc = synth_unlink_pass(a, old, n_old, wiki, stem, &live, &listed, &changed);
        }
        *unlinked += reduced;
        if (rc || !*unlinked || (normalized && !reduced)) break;
        rc = synth_normalize(a, stem, &live);
        normalized = true;
    }
    synth_free_strings(live.stems, live.n);
    free(old);
    return rc;
}

int synth_policy(struct dbuf *b, const char *wiki, const char *page)
{
    char *text = NULL;
    int rc = wiki ? dream_vault_meta_page(wiki, page, &text) : DREAM_OK;
    if (rc) return rc;
    const char *policy = wiki ? text : dream_vault_seed_meta(page);
    if (policy && *policy)
        rc = dbuf_printf(b, "--- Meta/%s.md ---\n%s%s--- end of policy ---\n\n", page, policy, policy[strlen(policy) - 1] != '\n' ? "\n" : "");
    free(text);
    return rc;
}

int synth_stage_params(const char *stage, const struct dream_synth_params *params, struct dream_synth_params *p)
{
    if (params) *p = *params;
    else dream_synth_default_params(p);
    if (!p->wiki_dir) return dream_error_set(DREAM_EINVAL, "%s: no wiki directory given", stage);
    bool sources = true;
    if (dream_vault_sources(p->wiki_dir, &sources) == DREAM_OK && !sources) p->no_sources = true;
    if (p->batch == 0) p->batch = 1;
    if (p->max_attempts < 1) p->max_attempts = 1;
    if (p->max_tokens < 1) p->max_tokens = 768;
    if (p->section_budget == 0) p->section_budget = 24000;
    return 0;
}

/* The numbers of the markers in text[0..len) (up to max), sorted, deduplicated; their count. */
static size_t synth_marker_set(const char *text, size_t len, int *out, size_t max)
{
    size_t n = 0, e;
    for (size_t i = 0; i < len && n < max; i++) {
        if (!synth_marker_at(text, i, &e)) continue;
        int v = atoi(text + i + 2);
        size_t k = 0;
        while (k < n && out[k] < v) k++;
        if (k == n || out[k] != v) {
            memmove(out + k + 1, out + k, (n - k) * sizeof *out);
            out[k] = v;
            n++;
        }
        i = e - 1;
    }
    return n;
}

size_t synth_drop_repeated_sentences(char *text)
{
    enum { MAX_SENT = 64, MAX_MARKS = 16, MIN_WORDS = 3 };
    struct synth_span sp[MAX_SENT];
    size_t n = synth_sentences(text, sp, MAX_SENT);
    unsigned *w[MAX_SENT] = {0};
    long nw[MAX_SENT];
    int mk[MAX_SENT][MAX_MARKS];
    size_t nm[MAX_SENT];
    bool drop[MAX_SENT] = {0};
    size_t dropped = 0;
    for (size_t i = 0; i < n; i++) {
        nw[i] = synth_words(text + sp[i].at, sp[i].len, &w[i]);
        nm[i] = synth_marker_set(text + sp[i].at, sp[i].len, mk[i], MAX_MARKS);
    }
    for (size_t i = 1; i < n; i++) {
        if (nw[i] < MIN_WORDS) continue;
        for (size_t j = 0; j < i && !drop[i]; j++) {
            if (drop[j] || nw[j] < nw[i] || synth_words_shared(w[i], (size_t)nw[i], w[j], (size_t)nw[j]) != (size_t)nw[i]) continue;
            size_t held = 0;
            for (size_t a = 0, b = 0; a < nm[i] && b < nm[j];) {
                if (mk[i][a] == mk[j][b]) held++, a++, b++;
                else if (mk[i][a] < mk[j][b]) b++;
                else a++;
            }
            drop[i] = held == nm[i];
        }
        dropped += drop[i];
    }
    if (dropped) {
        /* each dropped sentence goes with the spaces before it on its line, and a line it had to itself */
        size_t out = 0, from = 0;
        for (size_t i = 0; i < n; i++) {
            if (!drop[i]) continue;
            size_t gap = sp[i].at;
            while (gap > from && text[gap - 1] == ' ') gap--;
            memmove(text + out, text + from, gap - from);
            out += gap - from;
            from = sp[i].at + sp[i].len;
            if ((out == 0 || text[out - 1] == '\n') && text[from] == '\n') from++; /* a line of its own */
        }
        memmove(text + out, text + from, strlen(text + from) + 1);
    }
    for (size_t i = 0; i < n; i++) free(w[i]);
    return dropped;
}

int synth_drop_repeats_in(dream_article *a)
{
    int rc = DREAM_OK;
    for (size_t s = 0; !rc && s <= dream_article_section_count(a); s++) {
        bool is_lead = s == 0; /* the lead, then each body section */
        const struct dream_article_section *sec = is_lead ? NULL : dream_article_section(a, s - 1);
        if (sec && sec->kind != DREAM_SECTION_BODY) continue;
        const char *text = is_lead ? dream_article_lead(a) : sec->body;
        char *t = text ? strdup(text) : NULL;
        if (text && !t) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        if (t && synth_drop_repeated_sentences(t)) rc = is_lead ? dream_article_set_lead(a, t) : dream_article_section_set_body(a, s - 1, t);
        free(t);
    }
    return rc;
}
