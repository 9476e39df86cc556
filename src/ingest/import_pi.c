/* import_pi.c — pi coding agent session JSONL, versions 1 to 3 (export-formats.md §6).
 *
 * Line 1 is the session header (type "session", id, version; no version means 1). In v2 and v3
 * entries form a tree through id/parentId, and the active branch is the one ending at the last
 * entry; v1 files are linear (each entry follows the one before). Kept: user and assistant text
 * parts. Dropped: thinking, tool calls and results, bash executions, custom and summary messages
 * (branch and compaction summaries repeat earlier content). The title is the session's name
 * (a session_info entry, itself a node of the tree) when it has one. A line damaged in the middle
 * of the file is left out (ingest_jsonl_each), and an entry whose parent it took hangs from the
 * entry before it in the file. */
#include "importers.h"

#include "dream/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pi_entry {
    char *id, *parent;
    const char *role;
    char *text;
    int64_t time_ms;
};

struct pi_session {
    struct pi_entry *e;
    size_t n, cap;
    json_t *index; /* id -> position */
    char *session_id, *title;
    int64_t created_ms;
    bool header_seen;
};

static void pi_free(struct pi_session *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->e[i].id);
        free(s->e[i].parent);
        free(s->e[i].text);
    }
    free(s->e);
    json_decref(s->index);
    free(s->session_id);
    free(s->title);
}

static int pi_set(char **dst, const char *v)
{
    free(*dst);
    *dst = v ? strdup(v) : NULL;
    return !v || *dst ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
}

static int pi_line(void *ud, json_t *obj, uint64_t line)
{
    struct pi_session *s = ud;
    static const char *const text_types[] = {"text", NULL};
    const char *type = ingest_str(obj, "type");
    if (!type) return 0;
    if (!strcmp(type, "session")) {
        if (s->header_seen) return 0;
        s->header_seen = true;
        s->created_ms = ingest_time_json(json_object_get(obj, "timestamp"));
        return pi_set(&s->session_id, ingest_str(obj, "id"));
    }
    if (!strcmp(type, "session_info")) { /* and a node of the tree, like every entry after the header */
        const char *name = ingest_str(obj, "name");
        int rc = name && name[0] ? pi_set(&s->title, name) : 0;
        if (rc) return rc;
    }
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        struct pi_entry *e = realloc(s->e, ncap * sizeof *e);
        if (!e) return dream_error_set(DREAM_ENOMEM, "out of memory");
        s->e = e;
        s->cap = ncap;
    }
    struct pi_entry *e = &s->e[s->n];
    memset(e, 0, sizeof *e);
    char synth[32];
    const char *id = ingest_str(obj, "id");
    const char *parent = ingest_str(obj, "parentId");
    if (!id) { /* v1: linear, so the previous entry is the parent */
        snprintf(synth, sizeof synth, "L%llu", (unsigned long long)line);
        id = synth;
        parent = s->n ? s->e[s->n - 1].id : NULL;
    }
    int rc = pi_set(&e->id, id);
    if (!rc) rc = pi_set(&e->parent, parent);
    e->time_ms = ingest_time_json(json_object_get(obj, "timestamp"));
    const json_t *msg = json_object_get(obj, "message");
    const char *role = ingest_str(msg, "role");
    if (!rc && !strcmp(type, "message") && role && (!strcmp(role, "user") || !strcmp(role, "assistant"))) {
        struct dbuf t = {0};
        rc = ingest_content_text(json_object_get(msg, "content"), text_types, &t);
        if (!rc && t.len) {
            e->role = !strcmp(role, "user") ? "user" : "assistant";
            e->text = dbuf_take(&t);
            if (!e->text) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        }
        dbuf_free(&t);
        int64_t mt = ingest_time_json(json_object_get(msg, "timestamp"));
        if (mt) e->time_ms = mt;
    }
    if (!rc && json_object_set_new(s->index, e->id, json_integer((json_int_t)s->n))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    if (rc) {
        free(e->id);
        free(e->parent);
        free(e->text);
        return rc;
    }
    s->n++;
    return 0;
}

int import_pi(struct ingest_ctx *ctx, struct istream *in)
{
    struct pi_session s = {.index = json_object()};
    if (!s.index) return dream_error_set(DREAM_ENOMEM, "out of memory");
    bool broken, damaged;
    int rc = ingest_jsonl_each(ctx, in, false, pi_line, &s, &broken, &damaged);
    if (rc || broken) {
        pi_free(&s);
        return rc;
    }
    if (!s.session_id) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, ctx->path, "a pi session without its header line (type \"session\", id)");
        pi_free(&s);
        return 0;
    }
    size_t *chain = malloc((s.n ? s.n : 1) * sizeof *chain);
    if (!chain) {
        pi_free(&s);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    size_t len = 0;
    for (size_t at = s.n ? s.n - 1 : SIZE_MAX; at != SIZE_MAX && len < s.n;) {
        chain[len++] = at;
        const json_t *p = s.e[at].parent ? json_object_get(s.index, s.e[at].parent) : NULL;
        if (json_is_integer(p)) at = (size_t)json_integer_value(p);
        else at = damaged && s.e[at].parent && at > 0 ? at - 1 : SIZE_MAX; /* a parent a damaged line took: the entry before */
    }
    struct ingest_conv c = {0};
    rc = conv_set_id(&c, s.session_id);
    if (!rc) rc = conv_set_title(&c, s.title);
    c.created_ms = s.created_ms;
    for (size_t k = len; k-- > 0 && !rc;) {
        const struct pi_entry *e = &s.e[chain[k]];
        if (e->role) rc = conv_add(&c, e->role, e->id, e->time_ms, e->text, strlen(e->text));
    }
    if (!rc) rc = ingest_emit(ctx, &c, ctx->path);
    conv_free(&c);
    free(chain);
    pi_free(&s);
    return rc;
}
