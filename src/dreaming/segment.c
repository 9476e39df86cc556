/* segment.c — the segment stage (see dream/segment.h; spec §6.1 and the fixes of §12).
 *
 * Flow per run: list the eligible conversations once (so a conversation is tried at most once
 * per run), then per batch: load, skip the ones with nothing to segment, cut each conversation
 * into windows that fit the prompt budget (overlapping by a few messages), render one chunk
 * prompt per window, one dream_call_local_batch for all of them, and per conversation parse →
 * repair anchors → merge the windows' chunks at the seams → store. */
#include "dream/segment.h"

#include "../util/buf.h"
#include "dream/error.h"
#include "dream/model.h"
#include "dream/vault.h"
#include "segment_answer.h"
#include "segment_snap.h"
#include "stage_state.h"
#include "store_internal.h"
#include "util/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SEGMENT_STAGE "segment"

/* The chunk stage passes its own exact system text (DESIGN.md §4). */
static const char segment_system[] =
    "You split conversations into single-topic chunks. You answer with JSON only.";

static const char segment_instructions[] =
    "Split the conversation below into chunks. A chunk is a run of consecutive messages about one\n"
    "subject. Find every topic: most substantive conversations have several, and a subject that\n"
    "returns later is a separate chunk each time. A short single question and answer may be one\n"
    "chunk. Two chunks may share one boundary message only when it matters to both. Leave out the\n"
    "topics the policy below says to ignore. The policy pages set the style; they do not change\n"
    "the answer's format. Never copy words from these instructions into a label.\n"
    "\n"
    "Answer with JSON only, in this shape:\n"
    "{\"chunks\": [{\"start_message_id\": \"<id of the chunk's first message>\",\n"
    "              \"end_message_id\": \"<id of the chunk's last message>\",\n"
    "              \"label\": \"<4 to 10 words: subject and aspect, from the conversation>\"}]}\n"
    "Use the message ids exactly as they appear after \"id:\" in the transcript.\n";

void dream_segment_default_params(struct dream_segment_params *p)
{
    memset(p, 0, sizeof *p);
    p->batch = 8;
    p->max_attempts = 3;
    p->max_tokens = 4096;
    p->window_bytes = 16000; /* ~4k tokens of transcript + ~1k of instructions and policy, leaving
                               room for the answer in the seam's default 8192-cell context */
    p->window_overlap = 2;
    struct snap_params sp;
    segment_snap_default_params(&sp);
    p->snap_reach = sp.reach;
    p->snap_margin = sp.margin;
    const char *env = getenv("DREAM_SNAP");
    if (env && !strcmp(env, "0")) p->snap_reach = 0; /* the model's cuts as given, to measure the snapping */
}

/* A run of messages [first, end) asked about in one call. */
struct seg_window {
    size_t first, end;
    char *prompt;  /* the rendered user turn */
    char *grammar; /* the answer's grammar: anchors only this window's ids and positions */
    char *schema;  /* the same shape as a JSON schema, for a remote server */
    char *answer;  /* borrowed from the batch's outputs */
};

/* One conversation as the stage sees it. */
struct seg_message {
    char *role, *id, *text;
};
struct seg_conv {
    int64_t rowid, revision;
    char *source_id, *title;
    struct seg_message *messages;
    size_t n;
    size_t base; /* the position of messages[0]: 0, or a window's first message in a view */
    struct seg_window *windows;
    size_t n_windows;
};

static void seg_conv_free(struct seg_conv *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->messages[i].role);
        free(c->messages[i].id);
        free(c->messages[i].text);
    }
    free(c->messages);
    free(c->source_id);
    free(c->title);
    for (size_t w = 0; w < c->n_windows; w++) {
        free(c->windows[w].prompt);
        free(c->windows[w].grammar);
        free(c->windows[w].schema);
    }
    free(c->windows);
    memset(c, 0, sizeof *c);
}

static char *seg_dup(const unsigned char *s)
{
    return strdup(s ? (const char *)s : "");
}

/* Loads conversation rowid with its messages in position order. */
static int seg_conv_load(dream_store *store, int64_t rowid, struct seg_conv *c)
{
    sqlite3 *db = store_db(store);
    sqlite3_stmt *st;
    memset(c, 0, sizeof *c);
    c->rowid = rowid;
    if (sqlite3_prepare_v2(db, "SELECT source_id, title, revision, message_count FROM conversations WHERE id = ?", -1, &st, NULL))
        return store_sql_error(store, "reading a conversation");
    sqlite3_bind_int64(st, 1, rowid);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return dream_error_set(DREAM_ENOTFOUND, "conversation %lld is not in the store", (long long)rowid);
    }
    c->source_id = seg_dup(sqlite3_column_text(st, 0));
    c->title = seg_dup(sqlite3_column_text(st, 1));
    c->revision = sqlite3_column_int64(st, 2);
    int64_t count = sqlite3_column_int64(st, 3);
    sqlite3_finalize(st);
    if (!c->source_id || !c->title) return dream_error_set(DREAM_ENOMEM, "out of memory");
    if (count > 0 && !(c->messages = calloc((size_t)count, sizeof *c->messages)))
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    if (sqlite3_prepare_v2(db, "SELECT position, role, source_id, text FROM messages WHERE conversation = ? ORDER BY position", -1, &st,
                           NULL))
        return store_sql_error(store, "reading messages");
    sqlite3_bind_int64(st, 1, rowid);
    int rc = DREAM_OK, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        /* Positions are dense from 0 (store.h), so the index is the position. */
        if (sqlite3_column_int64(st, 0) != (int64_t)c->n || (int64_t)c->n >= count) {
            rc = dream_error_set(DREAM_EINTERNAL, "conversation %lld: message positions are not dense", (long long)rowid);
            break;
        }
        struct seg_message *m = &c->messages[c->n++];
        m->role = seg_dup(sqlite3_column_text(st, 1));
        m->id = seg_dup(sqlite3_column_text(st, 2));
        m->text = seg_dup(sqlite3_column_text(st, 3));
        if (!m->role || !m->id || !m->text) {
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc == DREAM_OK && step != SQLITE_DONE) rc = store_sql_error(store, "reading messages");
    sqlite3_finalize(st);
    return rc;
}

/* True when the conversation has something to segment: an assistant message and some text. */
static bool seg_has_work(const struct seg_conv *c)
{
    bool assistant = false, text = false;
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->messages[i].role, "assistant") == 0) assistant = true;
        if (strspn(c->messages[i].text, " \t\r\n") < strlen(c->messages[i].text)) text = true;
    }
    return assistant && text;
}

/* Appends one policy page as a delimited block. */
static int seg_put_page(struct dbuf *b, const char *wiki, const char *name)
{
    char *page = NULL;
    int rc;
    if (wiki) {
        rc = dream_vault_meta_page(wiki, name, &page);
        if (rc) return rc;
    }
    const char *text = wiki ? page : dream_vault_seed_meta(name);
    rc = dbuf_printf(b, "--- Meta/%s.md ---\n%s%s", name, text ? text : "", (text && *text && text[strlen(text) - 1] != '\n') ? "\n" : "");
    free(page);
    return rc;
}

/* Renders the user turn for messages [first, end): instructions, policy pages, transcript with
 * real ids and positions. A message longer than text_cap bytes (0: no cap) is shown cut, with a
 * note: anchors are ids, so the model needs to see what a message is about, not all of it. */
static int seg_render(const struct seg_conv *c, const char *wiki, size_t first, size_t end, size_t text_cap, char **out)
{
    struct dbuf b = {0};
    int rc = dbuf_puts(&b, segment_instructions);
    if (!rc) rc = dbuf_puts(&b, "\n");
    if (!rc) rc = seg_put_page(&b, wiki, "Chunking");
    if (!rc) rc = seg_put_page(&b, wiki, "Topics_to_Ignore");
    if (!rc) rc = dbuf_printf(&b, "--- end of policy ---\n\nConversation: %s (id: %s)\n", *c->title ? c->title : "(untitled)", c->source_id);
    if (!rc && (first > 0 || end < c->n))
        rc = dbuf_printf(&b, "(an excerpt: messages at positions %zu to %zu of %zu)\n", first, end - 1, c->n);
    if (!rc) rc = dbuf_puts(&b, "\n");
    for (size_t i = first; !rc && i < end; i++) {
        const char *text = c->messages[i].text;
        size_t len = strlen(text);
        if (i > first) rc = dbuf_puts(&b, "---\n");
        if (!rc) rc = dbuf_printf(&b, "[%s] (id: %s, position %zu)\n", c->messages[i].role, c->messages[i].id, i);
        if (text_cap && len > text_cap) {
            size_t shown = utf8_prefix(text, len, text_cap);
            if (!rc) rc = dbuf_append(&b, text, shown);
            if (!rc) rc = dbuf_printf(&b, "\n[... %zu more bytes of this message not shown]\n", len - shown);
        } else if (!rc) {
            rc = dbuf_printf(&b, "%s\n", text);
        }
    }
    if (rc) {
        dbuf_free(&b);
        return rc;
    }
    *out = dbuf_take(&b);
    return *out ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

/* The window's answer grammar and JSON schema: its messages' ids and positions are the only
 * anchors. */
static int seg_grammar(const struct seg_conv *c, struct seg_window *win)
{
    size_t n = win->end - win->first;
    const char **ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) ids[i] = c->messages[win->first + i].id;
    int rc = segment_answer_grammar(ids, n, win->first, &win->grammar);
    if (!rc) rc = segment_answer_schema(ids, n, win->first, &win->schema);
    free(ids);
    return rc;
}

/* Cuts the conversation into windows whose transcripts fit budget bytes (0: one window), each
 * starting overlap messages before the previous one ended, so a topic that spans a seam is seen
 * whole from one side. Every window holds at least one message and starts later than the one
 * before, so the plan always ends. */
static int seg_plan_windows(struct seg_conv *c, size_t budget, size_t overlap)
{
    size_t cap = 4, total = 0;
    c->windows = calloc(cap, sizeof *c->windows);
    if (!c->windows) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->n; i++) {
        size_t len = strlen(c->messages[i].text);
        total += (budget && len > budget ? budget : len) + strlen(c->messages[i].id) + 48;
    }
    if (budget == 0 || total <= budget) {
        c->windows[0] = (struct seg_window){.first = 0, .end = c->n};
        c->n_windows = 1;
        return DREAM_OK;
    }
    size_t start = 0;
    for (;;) {
        size_t end = start, acc = 0;
        while (end < c->n) {
            size_t len = strlen(c->messages[end].text);
            size_t cost = (len > budget ? budget : len) + strlen(c->messages[end].id) + 48;
            if (end > start && acc + cost > budget) break;
            acc += cost;
            end++;
        }
        if (c->n_windows == cap) {
            struct seg_window *grown = realloc(c->windows, 2 * cap * sizeof *grown);
            if (!grown) return dream_error_set(DREAM_ENOMEM, "out of memory");
            c->windows = grown;
            cap *= 2;
        }
        c->windows[c->n_windows++] = (struct seg_window){.first = start, .end = end};
        if (end == c->n) return DREAM_OK;
        size_t next = end > overlap ? end - overlap : 0;
        start = next > start ? next : start + 1;
    }
}

/* Length of the common prefix of a and b. */
static size_t seg_lcp(const char *a, const char *b)
{
    size_t n = 0;
    while (a[n] && a[n] == b[n]) n++;
    return n;
}

/* Resolves an anchor to a message position (spec §6.1, with §12 item 16 fixed): an exact id; the
 * conversation's own id (first message for a start, last for an end); a position, given as a
 * number or as a string of digits that is no message's id; or, for an id garbled in its tail, the
 * message whose id shares a prefix of at least 8 characters with it that is unique, and longer
 * than the prefix that message's id shares with any other message's id — so a prefix every id
 * has (a conversation id, a common stem) never snaps to an arbitrary message. */
static int seg_anchor(const struct seg_conv *c, const struct segment_anchor *a, bool is_start, size_t index, size_t *pos)
{
    const char *which = is_start ? "start" : "end";
    /* Positions, as the transcript shows them, count from the conversation's first message. */
    if (!a->id) {
        if (a->position >= (long long)c->base && (unsigned long long)a->position < c->base + c->n) {
            *pos = (size_t)a->position - c->base;
            return DREAM_OK;
        }
        return dream_error_set(DREAM_EFORMAT, "chunk %zu: %s position %lld is outside the messages shown (%zu to %zu)", index, which,
                               a->position, c->base, c->base + c->n - 1);
    }
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->messages[i].id, a->id) == 0) {
            *pos = i;
            return DREAM_OK;
        }
    if (strcmp(a->id, c->source_id) == 0) {
        *pos = is_start ? 0 : c->n - 1;
        return DREAM_OK;
    }
    if (*a->id && strspn(a->id, "0123456789") == strlen(a->id) && strlen(a->id) < 10) {
        size_t v = (size_t)strtol(a->id, NULL, 10);
        if (v >= c->base && v < c->base + c->n) {
            *pos = v - c->base;
            return DREAM_OK;
        }
    }
    size_t best = 0, best_len = 0, second_len = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t l = seg_lcp(a->id, c->messages[i].id);
        if (l > best_len) {
            second_len = best_len;
            best_len = l;
            best = i;
        } else if (l > second_len) {
            second_len = l;
        }
    }
    if (best_len >= 8 && best_len > second_len) {
        size_t shared = 0;
        for (size_t i = 0; i < c->n; i++) {
            if (i == best) continue;
            size_t l = seg_lcp(c->messages[best].id, c->messages[i].id);
            if (l > shared) shared = l;
        }
        if (best_len > shared && best_len > seg_lcp(c->messages[best].id, c->source_id)) {
            *pos = best;
            return DREAM_OK;
        }
    }
    return dream_error_set(DREAM_EFORMAT, "chunk %zu: %s anchor \"%.*s\" names no message of this conversation", index, which, utf8_cut(a->id, 80), a->id);
}

struct seg_range {
    size_t first, last;
    const char *label; /* borrowed from the answer */
};

static int seg_range_cmp(const void *a, const void *b)
{
    const struct seg_range *x = a, *y = b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    if (x->last != y->last) return x->last < y->last ? -1 : 1;
    return 0;
}

/* Turns a parsed answer into sorted, distinct ranges over real messages: anchors repaired,
 * inverted ranges swapped, and the trailing gap closed by extending the latest-ending chunk to
 * the last message (interior gaps stay: they are often deliberate). *n_out may be 0. */
static int seg_ranges(const struct seg_conv *c, const struct segment_answer *a, struct seg_range **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (a->n == 0) return DREAM_OK;
    struct seg_range *r = calloc(a->n, sizeof *r);
    if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < a->n; i++) {
        int rc = seg_anchor(c, &a->chunks[i].start, true, i, &r[i].first);
        if (!rc) rc = seg_anchor(c, &a->chunks[i].end, false, i, &r[i].last);
        if (rc) {
            free(r);
            return rc;
        }
        if (r[i].first > r[i].last) {
            size_t t = r[i].first;
            r[i].first = r[i].last;
            r[i].last = t;
        }
        r[i].label = a->chunks[i].label;
    }
    /* Distinct ranges first (the first label wins), then the trailing gap. Extending the
     * latest-ending range keeps the order and cannot make it equal to another range, which
     * would have had to end later. */
    qsort(r, a->n, sizeof *r, seg_range_cmp);
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        if (n == 0 || seg_range_cmp(&r[n - 1], &r[i]) != 0) r[n++] = r[i];
    size_t latest = 0;
    for (size_t i = 1; i < n; i++)
        if (r[i].last > r[latest].last) latest = i;
    r[latest].last = c->n - 1;
    *out = r;
    *n_out = n;
    return DREAM_OK;
}

/* Stores the chunks of one conversation and marks it done, in one transaction. Chunks whose
 * range is unchanged keep their row (and so whatever later stages hung on it); the others are
 * replaced. */
static int seg_store(dream_store *store, const struct seg_conv *c, const struct seg_range *r, size_t n, int64_t now)
{
    sqlite3 *db = store_db(store);
    sqlite3_stmt *st = NULL;
    int rc = store_exec(store, "BEGIN IMMEDIATE", "starting the chunk write");
    if (rc) return rc;
    if (sqlite3_prepare_v2(db, "UPDATE chunks SET revision = -1 WHERE conversation = ?", -1, &st, NULL)) goto sql_fail;
    sqlite3_bind_int64(st, 1, c->rowid);
    if (sqlite3_step(st) != SQLITE_DONE) goto sql_fail;
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO chunks (conversation, first_position, last_position, label, revision, created_at) "
                           "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (conversation, first_position, last_position) "
                           "DO UPDATE SET label = excluded.label, revision = excluded.revision",
                           -1, &st, NULL))
        goto sql_fail;
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, c->rowid);
        sqlite3_bind_int64(st, 2, (int64_t)r[i].first);
        sqlite3_bind_int64(st, 3, (int64_t)r[i].last);
        sqlite3_bind_text(st, 4, r[i].label, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, c->revision);
        sqlite3_bind_int64(st, 6, now);
        if (sqlite3_step(st) != SQLITE_DONE) goto sql_fail;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db, "DELETE FROM chunks WHERE conversation = ? AND revision = -1", -1, &st, NULL)) goto sql_fail;
    sqlite3_bind_int64(st, 1, c->rowid);
    if (sqlite3_step(st) != SQLITE_DONE) goto sql_fail;
    sqlite3_finalize(st);
    st = NULL;
    rc = stage_state_done(store, SEGMENT_STAGE, c->rowid, c->revision, now);
    if (!rc) rc = store_exec(store, "COMMIT", "committing the chunk write");
    if (rc) store_exec(store, "ROLLBACK", "rolling back the chunk write");
    return rc;
sql_fail:
    rc = store_sql_error(store, "writing chunks");
    sqlite3_finalize(st);
    store_exec(store, "ROLLBACK", "rolling back the chunk write");
    return rc;
}

/* Records a failed attempt (its own transaction) and counts it. */
static int seg_fail(dream_store *store, const struct seg_conv *c, const char *error, const struct dream_segment_params *p, bool final,
                    struct dream_segment_result *res)
{
    return stage_state_fail_counted(store, SEGMENT_STAGE, c->rowid, c->revision, error, p->max_attempts, final, &res->failed, &res->gave_up);
}

/* The eligible conversations, oldest first: never segmented, segmented at an older revision, or
 * pending a retry. *ids is malloc'd. */
static int seg_eligible(dream_store *store, const struct dream_segment_params *p, int64_t **ids, size_t *n)
{
    sqlite3_stmt *st;
    *ids = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT c.id FROM conversations c LEFT JOIN stage_state s ON s.stage = '" SEGMENT_STAGE "' AND s.item = c.id "
                           "WHERE (s.item IS NULL OR s.revision < c.revision OR s.status = 'pending') AND (?1 = 0 OR c.id = ?1) "
                           "ORDER BY coalesce(c.updated_at, c.created_at, c.ingested_at), c.id LIMIT ?2",
                           -1, &st, NULL))
        return store_sql_error(store, "listing conversations to segment");
    sqlite3_bind_int64(st, 1, p->conversation);
    sqlite3_bind_int64(st, 2, p->limit ? (int64_t)p->limit : -1);
    size_t cap = 0;
    int step, rc = DREAM_OK;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            int64_t *grown = realloc(*ids, cap * sizeof **ids);
            if (!grown) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            *ids = grown;
        }
        (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "listing conversations to segment");
    sqlite3_finalize(st);
    if (rc) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}

/* Appends r[0..n) to *all (growing it). */
static int seg_append(struct seg_range **all, size_t *n_all, size_t *cap, const struct seg_range *r, size_t n)
{
    if (n == 0) return DREAM_OK; /* a window that answered no chunks: nothing to copy (r may be NULL) */
    if (*n_all + n > *cap) {
        size_t want = (*n_all + n) * 2;
        struct seg_range *grown = realloc(*all, want * sizeof *grown);
        if (!grown) return dream_error_set(DREAM_ENOMEM, "out of memory");
        *all = grown;
        *cap = want;
    }
    memcpy(*all + *n_all, r, n * sizeof *r);
    *n_all += n;
    return DREAM_OK;
}

/* Reads every window's answer into ranges over the whole conversation, merged at the seams: a
 * chunk cut off by the end of a window (it reaches the window's last message) and a chunk of the
 * next window that starts inside their overlap and meets it become one chunk, under the earlier
 * label. answers[w] holds window w's parse (kept by the caller: labels are borrowed from it). */
static int seg_merge_windows(const struct seg_conv *c, struct segment_answer *answers, struct seg_range **out, size_t *n_out)
{
    struct seg_range *all = NULL;
    size_t n_all = 0, cap = 0;
    int rc = DREAM_OK;
    for (size_t w = 0; w < c->n_windows && !rc; w++) {
        const struct seg_window *win = &c->windows[w];
        struct seg_conv view = *c;
        view.messages = c->messages + win->first;
        view.n = win->end - win->first;
        view.base = win->first;
        rc = segment_answer_parse(win->answer, strlen(win->answer), &answers[w]);
        struct seg_range *r = NULL;
        size_t n = 0;
        if (!rc) rc = seg_ranges(&view, &answers[w], &r, &n);
        if (rc) {
            if (c->n_windows > 1) dream_error_wrap(rc, "window %zu of %zu (messages %zu to %zu)", w + 1, c->n_windows, win->first, win->end - 1);
            break;
        }
        for (size_t i = 0; i < n; i++) {
            r[i].first += win->first;
            r[i].last += win->first;
        }
        if (w > 0) {
            size_t seam_last = c->windows[w - 1].end - 1;
            for (size_t i = 0; i < n; i++) {
                if (r[i].first > seam_last) continue;
                for (size_t j = 0; j < n_all; j++) {
                    if (all[j].last != seam_last || all[j].last < r[i].first) continue;
                    if (all[j].first < r[i].first) r[i].first = all[j].first;
                    if (all[j].last > r[i].last) r[i].last = all[j].last;
                    r[i].label = all[j].label;
                    all[j] = all[--n_all];
                    j--;
                }
            }
        }
        rc = seg_append(&all, &n_all, &cap, r, n);
        free(r);
    }
    if (rc) {
        free(all);
        return rc;
    }
    if (n_all > 1) {
        qsort(all, n_all, sizeof *all, seg_range_cmp);
        size_t k = 0;
        for (size_t i = 0; i < n_all; i++)
            if (k == 0 || seg_range_cmp(&all[k - 1], &all[i]) != 0) all[k++] = all[i];
        n_all = k;
    }
    *out = all;
    *n_out = n_all;
    return DREAM_OK;
}

/* Moves the cuts between chained chunks to where the person says the topic changes, or to where
 * the words change (segment_snap.h). */
static int seg_snap(const struct seg_conv *c, const struct dream_segment_params *p, struct seg_range *r, size_t n, size_t *moved, size_t *cued)
{
    if (n < 2 || p->snap_reach == 0) return DREAM_OK;
    struct snap_params sp;
    segment_snap_default_params(&sp);
    sp.reach = p->snap_reach;
    sp.margin = p->snap_margin;
    const char **roles = calloc(c->n, sizeof *roles), **texts = calloc(c->n, sizeof *texts);
    struct snap_range *sr = calloc(n, sizeof *sr);
    int rc = DREAM_OK;
    if (!roles || !texts || !sr) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < c->n; i++) {
        roles[i] = c->messages[i].role;
        texts[i] = c->messages[i].text;
    }
    for (size_t i = 0; i < n; i++) sr[i] = (struct snap_range){r[i].first, r[i].last};
    size_t k = 0, q = 0;
    rc = segment_snap(roles, texts, c->n, sr, n, &sp, &k, &q);
    if (!rc) {
        for (size_t i = 0; i < n; i++) r[i].first = sr[i].first, r[i].last = sr[i].last;
        *moved += k;
        *cued += q;
    }
done:
    free(roles);
    free(texts);
    free(sr);
    return rc;
}

/* Splits a chunk at a user message inside it (not its first) that says the topic changes
 * (segment_snap_cue) and that no other chunk holds: from there on it is a chunk of its own, with
 * the same label. The model saw one topic where the person said there were two. *split counts
 * the chunks made; *r may be reallocated. */
static int seg_split_cues(const struct seg_conv *c, const struct dream_segment_params *p, struct seg_range **r, size_t *n, size_t *split)
{
    if (p->snap_reach == 0) return DREAM_OK;
    for (size_t i = 0; i < *n; i++) {
        struct seg_range *x = &(*r)[i];
        size_t at = 0;
        for (size_t q = x->first + 1; !at && q <= x->last && q < c->n; q++) {
            if (strcmp(c->messages[q].role, "user") != 0 || !segment_snap_cue(c->messages[q].text)) continue;
            bool other = false;
            for (size_t j = 0; j < *n && !other; j++) other = j != i && (*r)[j].first <= q && q <= (*r)[j].last;
            if (!other) at = q;
        }
        if (!at) continue;
        struct seg_range *g = realloc(*r, (*n + 1) * sizeof *g);
        if (!g) return dream_error_set(DREAM_ENOMEM, "out of memory");
        *r = g;
        memmove(g + i + 2, g + i + 1, (*n - i - 1) * sizeof *g);
        g[i + 1] = (struct seg_range){at, g[i].last, g[i].label};
        g[i].last = at - 1;
        (*n)++;
        (*split)++;
    }
    if (*split && *n > 1) qsort(*r, *n, sizeof **r, seg_range_cmp);
    return DREAM_OK;
}

/* Handles one conversation's answers (one per window): parse, repair, merge, store; a bad answer
 * becomes a failed attempt. Returns an error only when the store fails. */
static int seg_accept(dream_store *store, const struct seg_conv *c, const struct dream_segment_params *p, struct dream_segment_result *res)
{
    struct segment_answer *answers = calloc(c->n_windows, sizeof *answers);
    if (!answers) return dream_error_set(DREAM_ENOMEM, "out of memory");
    struct seg_range *r = NULL;
    size_t n = 0;
    int rc = seg_merge_windows(c, answers, &r, &n);
    if (!rc) rc = seg_snap(c, p, r, n, &res->moved, &res->cued);
    size_t split = 0;
    if (!rc) rc = seg_split_cues(c, p, &r, &n, &split);
    res->cued += split;
    if (rc && rc != DREAM_ENOMEM) {
        char *why = strdup(dream_error_last());
        rc = seg_fail(store, c, why ? why : "unusable answer", p, false, res);
        free(why);
    } else if (!rc) {
        rc = seg_store(store, c, r, n, store_now_ms());
        if (!rc) {
            res->segmented++;
            res->chunks += n;
        }
    }
    free(r);
    for (size_t w = 0; w < c->n_windows; w++) segment_answer_free(&answers[w]);
    free(answers);
    return rc;
}

/* One batch of conversations: load, plan windows, render, one call for every window, accept. */
static int seg_batch(dream_store *store, const int64_t *ids, size_t n, const struct dream_segment_params *p, struct dream_segment_result *res)
{
    struct seg_conv *convs = calloc(n, sizeof *convs);
    struct dream_local_input *in = NULL;
    char **out = NULL;
    struct seg_window **slot = NULL; /* slot[k]: the window input k asks about */
    bool *asked = calloc(n, sizeof *asked);
    size_t n_calls = 0, cap = 0;
    int rc = DREAM_OK;
    if (!convs || !asked) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        struct seg_conv *c = &convs[i];
        rc = seg_conv_load(store, ids[i], c);
        if (rc) break;
        if (!seg_has_work(c)) {
            /* Nothing to cut: done with no chunks (and any old chunks go). */
            rc = seg_store(store, c, NULL, 0, store_now_ms());
            if (!rc) res->skipped++;
            continue;
        }
        rc = seg_plan_windows(c, p->window_bytes, p->window_overlap);
        size_t biggest = 0;
        for (size_t w = 0; !rc && w < c->n_windows; w++) {
            struct seg_window *win = &c->windows[w];
            rc = seg_render(c, p->wiki_dir, win->first, win->end, p->window_bytes, &win->prompt);
            if (!rc) rc = seg_grammar(c, win);
            if (!rc && strlen(win->prompt) > biggest) biggest = strlen(win->prompt);
        }
        if (rc) break;
        if (p->max_prompt_bytes && biggest > p->max_prompt_bytes) {
            char why[200];
            snprintf(why, sizeof why, "a prompt is %zu bytes, over the %zu-byte budget; lower the window size", biggest, p->max_prompt_bytes);
            rc = seg_fail(store, c, why, p, true, res);
            continue;
        }
        if (n_calls + c->n_windows > cap) {
            size_t want = (n_calls + c->n_windows) * 2;
            struct dream_local_input *gi = realloc(in, want * sizeof *gi);
            if (gi) in = gi;
            struct seg_window **gs = realloc(slot, want * sizeof *gs);
            if (gs) slot = gs;
            if (!gi || !gs) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            cap = want;
        }
        for (size_t w = 0; w < c->n_windows; w++) {
            in[n_calls] = (struct dream_local_input){
                .system = segment_system, .user = c->windows[w].prompt, .grammar = c->windows[w].grammar, .json_schema = c->windows[w].schema};
            slot[n_calls++] = &c->windows[w];
        }
        asked[i] = true;
    }
    if (rc || n_calls == 0) goto done;
    if (!(out = calloc(n_calls, sizeof *out))) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        goto done;
    }

    struct dream_call_opts opts = dream_call_default_opts();
    opts.max_tokens = p->max_tokens;
    int call_rc = dream_call_local_batch("chunk", in, n_calls, &opts, out);
    size_t answered = 0;
    for (size_t k = 0; k < n_calls; k++) {
        answered += out[k] != NULL;
        slot[k]->answer = out[k];
    }
    if (call_rc && answered == 0 && call_rc != DREAM_ETOOBIG) {
        /* No answer at all, and not because of the prompts (a missing model, a broken backend):
         * the run stops, and no conversation is charged an attempt for it. */
        rc = dream_error_wrap(call_rc, "segmenting: the chunk stage gave no answer");
        goto done;
    }
    char *call_error = call_rc ? strdup(dream_error_last()) : NULL;
    for (size_t i = 0; i < n && !rc; i++) {
        const struct seg_conv *c = &convs[i];
        if (!asked[i]) continue;
        bool all = true;
        for (size_t w = 0; w < c->n_windows; w++) all = all && c->windows[w].answer;
        if (all) {
            rc = seg_accept(store, c, p, res);
        } else {
            char why[600];
            snprintf(why, sizeof why, "the model call failed: %s", call_error ? call_error : "no answer");
            rc = seg_fail(store, c, utf8_trim(why), p, false, res);
        }
    }
    free(call_error);
done:
    if (out)
        for (size_t k = 0; k < n_calls; k++) free(out[k]);
    if (convs)
        for (size_t i = 0; i < n; i++) seg_conv_free(&convs[i]);
    free(convs);
    free(in);
    free(out);
    free(slot);
    free(asked);
    return rc;
}

int dream_segment_run(dream_store *store, const struct dream_segment_params *params, struct dream_segment_result *result)
{
    struct dream_segment_params p;
    if (params) p = *params;
    else dream_segment_default_params(&p);
    if (p.batch == 0) p.batch = 1;
    if (p.max_attempts < 1) p.max_attempts = 1;
    if (p.max_tokens < 1) p.max_tokens = 4096;
    struct dream_segment_result res = {0};
    int64_t *ids;
    size_t n;
    int rc = seg_eligible(store, &p, &ids, &n);
    if (rc) return rc;
    res.eligible = n;
    if (!p.dry_run) dream_progress_begin(p.on_progress, p.progress_ud, "segment", n);
    for (size_t i = 0; !p.dry_run && !rc && i < n; i += p.batch) {
        size_t k = n - i < p.batch ? n - i : p.batch;
        rc = seg_batch(store, ids + i, k, &p, &res);
        if (!rc && p.on_progress) p.on_progress(p.progress_ud, "segment", i + k, n);
    }
    free(ids);
    if (result) *result = res;
    return rc;
}

int dream_segment_chunks(dream_store *store, int64_t conversation, struct dream_chunk **out, size_t *n)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT id, conversation, first_position, last_position, revision, label FROM chunks WHERE conversation = ? "
                           "ORDER BY first_position, last_position",
                           -1, &st, NULL))
        return store_sql_error(store, "reading chunks");
    sqlite3_bind_int64(st, 1, conversation);
    size_t cap = 0;
    int step, rc = DREAM_OK;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            struct dream_chunk *grown = realloc(*out, cap * sizeof **out);
            if (!grown) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            *out = grown;
        }
        struct dream_chunk *ch = &(*out)[*n];
        ch->id = sqlite3_column_int64(st, 0);
        ch->conversation = sqlite3_column_int64(st, 1);
        ch->first = sqlite3_column_int64(st, 2);
        ch->last = sqlite3_column_int64(st, 3);
        ch->revision = sqlite3_column_int64(st, 4);
        ch->label = seg_dup(sqlite3_column_text(st, 5));
        if (!ch->label) {
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
        (*n)++;
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "reading chunks");
    sqlite3_finalize(st);
    if (rc) {
        dream_chunks_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void dream_chunks_free(struct dream_chunk *chunks, size_t n)
{
    if (!chunks) return;
    for (size_t i = 0; i < n; i++) free(chunks[i].label);
    free(chunks);
}
