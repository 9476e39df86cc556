/* ingest_common.c — conversation building, storing, repair, JSON reading and times shared by the
 * importers (see ingest_common.h). */
#include "ingest_common.h"
#include "store_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "util/utf8.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define INGEST_TITLE_MAX 80

void conv_free(struct ingest_conv *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->msgs[i].id);
        free(c->msgs[i].text);
    }
    free(c->msgs);
    free(c->id);
    free(c->title);
    memset(c, 0, sizeof *c);
}

static int conv_dup(char **dst, const char *s)
{
    char *d = strdup(s);
    if (!d) return dream_error_set(DREAM_ENOMEM, "out of memory");
    free(*dst);
    *dst = d;
    return 0;
}

int conv_set_id(struct ingest_conv *c, const char *id) { return conv_dup(&c->id, id); }

int conv_set_title(struct ingest_conv *c, const char *title)
{
    if (!title) return 0;
    while (isspace((unsigned char)*title)) title++;
    if (!*title) return 0;
    return conv_dup(&c->title, title);
}

static bool ingest_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v'; }

int conv_add_or_merge(struct ingest_conv *c, const char *role, const char *id, int64_t time_ms, const char *text,
                      size_t len, bool merge)
{
    while (len && ingest_space(*text)) text++, len--;
    while (len && ingest_space(text[len - 1])) len--;
    if (!len) return 0;
    if (merge && c->n && !strcmp(c->msgs[c->n - 1].role, role)) {
        struct ingest_msg *m = &c->msgs[c->n - 1];
        size_t old = strlen(m->text);
        char *t = realloc(m->text, old + 2 + len + 1);
        if (!t) return dream_error_set(DREAM_ENOMEM, "out of memory");
        memcpy(t + old, "\n\n", 2);
        memcpy(t + old + 2, text, len);
        t[old + 2 + len] = '\0';
        m->text = t;
        return 0;
    }
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 16;
        struct ingest_msg *m = realloc(c->msgs, ncap * sizeof *m);
        if (!m) return dream_error_set(DREAM_ENOMEM, "out of memory");
        c->msgs = m;
        c->cap = ncap;
    }
    struct ingest_msg *m = &c->msgs[c->n];
    m->role = !strcmp(role, "user") ? "user" : "assistant";
    m->time_ms = time_ms;
    m->id = strdup(id);
    m->text = strndup(text, len);
    if (!m->id || !m->text) {
        free(m->id);
        free(m->text);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    c->n++;
    return 0;
}

int conv_add(struct ingest_conv *c, const char *role, const char *id, int64_t time_ms, const char *text, size_t len)
{
    return conv_add_or_merge(c, role, id, time_ms, text, len, false);
}

void ingest_skip(struct ingest_ctx *ctx, enum dream_skip_reason why, const char *where, const char *fmt, ...)
{
    char reason[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    ctx->stats->skipped[why]++;
    if (why != DREAM_SKIP_UNSUPPORTED) ctx->stats->conversations++;
    if (ctx->params->on_skip) ctx->params->on_skip(ctx->params->user, why, where, reason);
}

void ingest_tick(struct ingest_ctx *ctx)
{
    if (++ctx->since_progress < 100) return;
    ctx->since_progress = 0;
    if (ctx->params->on_progress) ctx->params->on_progress(ctx->params->user, ctx->path, ctx->stats);
}

/* A title from the first user message: its first line, whitespace squeezed, at most
 * INGEST_TITLE_MAX bytes cut at a character boundary. */
static int ingest_derive_title(struct ingest_conv *c)
{
    const char *src = NULL;
    for (size_t i = 0; i < c->n && !src; i++)
        if (!strcmp(c->msgs[i].role, "user")) src = c->msgs[i].text;
    if (!src) src = c->n ? c->msgs[0].text : c->id;
    struct dbuf t = {0};
    bool space = false;
    for (const char *p = src; *p && *p != '\n' && t.len < INGEST_TITLE_MAX; p++) {
        if (ingest_space(*p)) {
            space = true;
            continue;
        }
        if (space && t.len && dbuf_putc(&t, ' ')) goto oom;
        space = false;
        if (dbuf_putc(&t, *p)) goto oom;
    }
    if (t.len >= INGEST_TITLE_MAX) {
        while (t.len && ((unsigned char)t.data[t.len - 1] & 0xC0) == 0x80) t.len--;
        if (t.len && (unsigned char)t.data[t.len - 1] >= 0xC0) t.len--;
        if (dbuf_puts(&t, "\xE2\x80\xA6")) goto oom;
    }
    if (!t.len && dbuf_puts(&t, "(untitled)")) goto oom;
    free(c->title);
    c->title = dbuf_take(&t);
    return c->title ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
oom:
    dbuf_free(&t);
    return DREAM_ENOMEM;
}

/* s when it is valid UTF-8, else a copy in *copy (utf8_repaired): a file name in another encoding
 * makes ids, titles and origins, and the store holds text. NULL only when out of memory. */
static const char *ingest_utf8_text(const char *s, char **copy)
{
    *copy = NULL;
    if (!s) return NULL;
    size_t n = strlen(s);
    return utf8_valid_prefix(s, n) == n ? s : (*copy = utf8_repaired(s));
}

/* Makes the malloc'd *s valid UTF-8 in place (ingest_utf8_text). */
static int ingest_utf8_own(char **s)
{
    char *copy;
    if (*s && !ingest_utf8_text(*s, &copy)) return dream_error_set(DREAM_ENOMEM, "out of memory");
    if (*s && copy) {
        free(*s);
        *s = copy;
    }
    return 0;
}

int ingest_emit(struct ingest_ctx *ctx, struct ingest_conv *c, const char *where)
{
    bool repaired = ctx->repaired;
    ctx->repaired = false;
    ingest_tick(ctx);
    if (!c->id || !c->id[0]) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "the conversation has no id");
        return 0;
    }
    if (ingest_utf8_own(&c->id)) return DREAM_ENOMEM;
    if (c->n == 0) {
        ingest_skip(ctx, DREAM_SKIP_EMPTY, where, "conversation %s has no user or assistant text", c->id);
        return 0;
    }
    const char *source = dream_format_name(ctx->format);
    int fresh = store_seen_mark(ctx->store, source, c->id);
    if (fresh < 0) return fresh;
    if (!fresh) {
        ingest_skip(ctx, DREAM_SKIP_DUPLICATE, where, "conversation %s appears earlier in this file; the first is kept", c->id);
        return 0;
    }
    if (!c->title && ingest_derive_title(c)) return DREAM_ENOMEM;
    if (ingest_utf8_own(&c->title)) return DREAM_ENOMEM;
    char *origin_copy;
    const char *origin = ingest_utf8_text(ctx->path, &origin_copy);
    if (!origin && ctx->path) return dream_error_set(DREAM_ENOMEM, "out of memory");
    int64_t first = 0, last = 0;
    for (size_t i = 0; i < c->n; i++) {
        int64_t t = c->msgs[i].time_ms;
        if (!t) continue;
        if (!first || t < first) first = t;
        if (t > last) last = t;
    }
    struct dream_message *msgs = malloc(c->n * sizeof *msgs);
    if (!msgs) {
        free(origin_copy);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < c->n; i++)
        msgs[i] = (struct dream_message){c->msgs[i].role, c->msgs[i].id, c->msgs[i].time_ms, c->msgs[i].text};
    struct dream_conversation dc = {
        .source = source,
        .id = c->id,
        .title = c->title,
        .created_ms = c->created_ms ? c->created_ms : first,
        .updated_ms = c->updated_ms ? c->updated_ms : last,
        .origin = origin,
        .messages = msgs,
        .n_messages = c->n,
    };
    enum dream_store_outcome outcome;
    int rc = dream_store_put(ctx->store, &dc, &outcome);
    free(msgs);
    free(origin_copy);
    if (rc) return rc;
    ctx->stats->conversations++;
    if (repaired) ctx->stats->repaired++;
    if (outcome == DREAM_STORE_NEW) ctx->stats->added++;
    else if (outcome == DREAM_STORE_CHANGED) ctx->stats->changed++;
    else ctx->stats->unchanged++;
    if (outcome != DREAM_STORE_UNCHANGED) ctx->stats->messages += c->n;
    return 0;
}

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0 when it is invalid or cut short. */
static size_t ingest_utf8_len(const unsigned char *p, size_t n)
{
    int l = utf8_seq_len(p, n);
    return l > 0 ? (size_t)l : 0;
}

static int ingest_hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Rewrites, in place, \u escapes jansson rejects: \u0000 and unpaired surrogates become \uFFFD.
 * Only inside strings; the text is valid UTF-8 by now. */
static void ingest_repair_escapes(struct dbuf *b, bool *repaired)
{
    char *s = b->data;
    size_t n = b->len;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        if (!in_str) {
            if (s[i] == '"') in_str = true;
            continue;
        }
        if (s[i] == '"') {
            in_str = false;
            continue;
        }
        if (s[i] != '\\' || i + 1 >= n) continue;
        if (s[i + 1] != 'u' || i + 6 > n) {
            i++;
            continue;
        }
        int v = ingest_hex4(s + i + 2);
        if (v < 0) {
            i++;
            continue;
        }
        bool bad = v == 0 || (v >= 0xDC00 && v <= 0xDFFF);
        if (v >= 0xD800 && v <= 0xDBFF) {
            int lo = i + 12 <= n && s[i + 6] == '\\' && s[i + 7] == 'u' ? ingest_hex4(s + i + 8) : -1;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                i += 11;
                continue;
            }
            bad = true;
        }
        if (bad) {
            memcpy(s + i + 2, "FFFD", 4);
            *repaired = true;
        }
        i += 5;
    }
}

int ingest_repair(struct dbuf *b, bool *repaired)
{
    const unsigned char *p = (const unsigned char *)b->data;
    size_t n = b->len, i = 0;
    while (i < n) {
        size_t l = ingest_utf8_len(p + i, n - i);
        if (!l) break;
        i += l;
    }
    if (i < n) {
        struct dbuf out = {0};
        if (dbuf_reserve(&out, n + 16)) return DREAM_ENOMEM;
        if (dbuf_append(&out, p, i)) goto oom;
        while (i < n) {
            size_t l = ingest_utf8_len(p + i, n - i);
            if (l) {
                if (dbuf_append(&out, p + i, l)) goto oom;
                i += l;
            } else {
                if (dbuf_puts(&out, "\xEF\xBF\xBD")) goto oom;
                i++;
            }
        }
        dbuf_free(b);
        *b = out;
        *repaired = true;
        goto escapes;
    oom:
        dbuf_free(&out);
        return DREAM_ENOMEM;
    }
escapes:
    if (b->data) ingest_repair_escapes(b, repaired);
    return 0;
}

json_t *ingest_parse(struct ingest_ctx *ctx, struct dbuf *b, uint64_t line, uint64_t offset, char *msg, size_t n)
{
    bool repaired = false;
    if (ingest_repair(b, &repaired)) {
        snprintf(msg, n, "out of memory");
        return NULL;
    }
    if (repaired) ctx->repaired = true;
    json_error_t err;
    json_t *v = json_loadb(b->data ? b->data : "", b->len, 0, &err);
    if (!v) {
        /* jansson counts lines and columns from the start of this text. */
        uint64_t l = line + (err.line > 0 ? (uint64_t)err.line - 1 : 0);
        snprintf(msg, n, "malformed JSON at line %llu, column %d (byte %llu): %s", (unsigned long long)l, err.column,
                 (unsigned long long)(offset + (err.position > 0 ? (uint64_t)err.position : 0)), err.text);
    }
    return v;
}

int ingest_json_array(struct ingest_ctx *ctx, struct istream *in,
                      int (*fn)(struct ingest_ctx *ctx, json_t *elem, const char *where))
{
    struct jarray a = {0};
    struct dbuf elem = {0};
    char where[1200], msg[512];
    int rc = 0;
    for (;;) {
        int r = jarray_next(in, &a, &elem, INGEST_MAX_ITEM);
        if (r == 0) break;
        if (r == DREAM_ENOMEM) {
            rc = r;
            break;
        }
        if (r < 0) {
            /* The element never closed. A file cut short says "premature end" to the parser too;
             * anything else is a byte that broke the JSON (a stray quote or a lost brace threw
             * the scan's count off), and the parser names where: the person fixes it there. */
            char why[1024];
            snprintf(why, sizeof why, "%s", dream_error_last());
            json_error_t err;
            json_t *v = elem.len && !a.too_big ? json_loadb(elem.data, elem.len, 0, &err) : NULL;
            /* an error before the text's end: where it broke (at its end: cut short) */
            bool broken = !v && elem.len && !a.too_big && err.position >= 0 && (size_t)err.position < elem.len &&
                          !strstr(err.text, "premature end");
            json_decref(v);
            if (broken)
                snprintf(msg, sizeof msg, "malformed JSON at line %llu, column %d (byte %llu): %s",
                         (unsigned long long)(a.elem_line + (err.line > 0 ? (uint64_t)err.line - 1 : 0)), err.column,
                         (unsigned long long)(a.elem_offset + (uint64_t)err.position), err.text);
            snprintf(where, sizeof where, "%s", ctx->path);
            if (broken)
                ingest_skip(ctx, DREAM_SKIP_MALFORMED, where,
                            "%s, in the conversation that starts on line %llu; no conversation after it can be told apart, so the rest "
                            "of the file was not read (fix the file there, or export it again); the conversations before it were kept",
                            msg, (unsigned long long)a.elem_line);
            else
                ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "%s; the conversations before it were kept", why);
            break;
        }
        snprintf(where, sizeof where, "%s:%llu", ctx->path, (unsigned long long)a.elem_line);
        ctx->repaired = false;
        if (a.too_big) {
            ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "the conversation at byte %llu is larger than %zu MiB; skipped",
                        (unsigned long long)a.elem_offset, INGEST_MAX_ITEM >> 20);
            continue;
        }
        json_t *v = ingest_parse(ctx, &elem, a.elem_line, a.elem_offset, msg, sizeof msg);
        if (!v) {
            ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "%s; conversation skipped", msg);
            continue;
        }
        if (!json_is_object(v)) {
            ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "an array element that is not a conversation object");
            json_decref(v);
            continue;
        }
        rc = fn(ctx, v, where);
        json_decref(v);
        if (rc) break;
    }
    dbuf_free(&elem);
    return rc;
}

int ingest_jsonl_each(struct ingest_ctx *ctx, struct istream *in, bool per_line, int (*fn)(void *ud, json_t *obj, uint64_t line),
                      void *ud, bool *broken, bool *damaged)
{
    struct dbuf line = {0};
    char where[1200], msg[512];
    int rc = 0;
    const char *unit = per_line ? "line skipped" : "the line is left out and the rest of the session read";
    *broken = false;
    if (damaged) *damaged = false;
    ctx->repaired = false;
    for (;;) {
        uint64_t lineno = in->line, offset = in->offset;
        bool too_long, ended;
        int r = istream_read_line(in, &line, INGEST_MAX_ITEM, &too_long, &ended);
        if (r == 0) break;
        snprintf(where, sizeof where, "%s:%llu", ctx->path, (unsigned long long)lineno);
        if (r < 0) {
            if (r == DREAM_ENOMEM) rc = r;
            else ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "%s; %s", dream_error_last(),
                             per_line ? "the lines before it were kept" : "the session is skipped");
            *broken = true;
            break;
        }
        if (too_long) {
            ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "a line longer than %zu MiB; %s", INGEST_MAX_ITEM >> 20, unit);
            if (damaged) *damaged = true;
            continue;
        }
        /* a UTF-8 byte order mark before the first line (detection passes over it too) */
        if (lineno <= 1 && offset == 0 && line.len >= 3 && !memcmp(line.data, "\xef\xbb\xbf", 3)) {
            memmove(line.data, line.data + 3, line.len - 2); /* with the terminator */
            line.len -= 3;
        }
        size_t k = 0;
        while (k < line.len && (line.data[k] == ' ' || line.data[k] == '\t')) k++;
        if (k == line.len) continue;
        if (per_line) ctx->repaired = false;
        json_t *v = ingest_parse(ctx, &line, lineno, offset, msg, sizeof msg);
        if (!v) {
            if (!per_line && !ended) {
                dream_log(DREAM_LOG_INFO, "%s: ignoring an unfinished last line (a session still being written?)", where);
                break;
            }
            ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "%s; %s", msg, unit);
            if (damaged) *damaged = true;
            continue;
        }
        if (per_line || json_is_object(v)) rc = fn(ud, v, lineno);
        json_decref(v);
        if (rc) break;
    }
    dbuf_free(&line);
    return rc;
}

static int ingest_digits(const char **p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)**p)) return -1;
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    return v;
}

int64_t ingest_time_iso(const char *s)
{
    if (!s) return 0;
    const char *p = s;
    int Y = ingest_digits(&p, 4);
    if (Y < 0 || *p++ != '-') return 0;
    int M = ingest_digits(&p, 2);
    if (M < 1 || M > 12 || *p++ != '-') return 0;
    int D = ingest_digits(&p, 2);
    /* a day the month has (timegm would roll 2024-02-30 over into March) */
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
    if (D < 1 || D > mdays[M - 1] || (M == 2 && D == 29 && !leap)) return 0;
    int h = 0, m = 0, sec = 0, ms = 0;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        h = ingest_digits(&p, 2);
        if (h < 0 || h > 23 || *p++ != ':') return 0;
        m = ingest_digits(&p, 2);
        if (m < 0 || m > 59) return 0;
        if (*p == ':') {
            p++;
            sec = ingest_digits(&p, 2);
            if (sec < 0 || sec > 60) return 0;
        }
        if (*p == '.' || *p == ',') {
            p++;
            int scale = 100;
            while (isdigit((unsigned char)*p)) {
                ms += (*p - '0') * scale;
                scale /= 10;
                p++;
            }
        }
    }
    int64_t off = 0;
    if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int oh = ingest_digits(&p, 2);
        if (*p == ':') p++;
        int om = isdigit((unsigned char)*p) ? ingest_digits(&p, 2) : 0;
        if (oh < 0 || om < 0) return 0;
        off = sign * (oh * 3600 + om * 60);
    } else if (*p == 'Z' || *p == 'z')
        p++;
    if (*p) return 0;
    struct tm tm = {.tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h, .tm_min = m, .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1) return 0;
    return ((int64_t)t - off) * 1000 + ms;
}

int64_t ingest_time_json(const json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        double d = strtod(s, &end);
        if (end != s && !*end) return d > 1e11 ? (int64_t)d : (int64_t)(d * 1000.0);
        return ingest_time_iso(s);
    }
    if (!json_is_number(v)) return 0;
    double d = json_number_value(v);
    if (!(d > 0) || d > 1e15) return 0; /* also rejects NaN */
    return d > 1e11 ? (int64_t)d : (int64_t)(d * 1000.0 + 0.5);
}

const char *ingest_str(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

int ingest_content_text(const json_t *content, const char *const *types, struct dbuf *out)
{
    if (json_is_string(content)) {
        if (out->len && dbuf_puts(out, "\n\n")) return DREAM_ENOMEM;
        return dbuf_puts(out, json_string_value(content));
    }
    if (!json_is_array(content)) return 0;
    size_t i;
    const json_t *block;
    json_array_foreach(content, i, block) {
        const char *type = ingest_str(block, "type");
        const char *text = ingest_str(block, "text");
        if (!type || !text) continue;
        bool wanted = false;
        for (const char *const *t = types; *t && !wanted; t++) wanted = !strcmp(type, *t);
        if (!wanted || !text[0]) continue;
        if (out->len && dbuf_puts(out, "\n\n")) return DREAM_ENOMEM;
        if (dbuf_puts(out, text)) return DREAM_ENOMEM;
    }
    return 0;
}
