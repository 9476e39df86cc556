/* ingest.c — format detection and the ingest driver: files, directories, ZIPs (see
 * include/dream/ingest.h). The importers live in import_<format>.c. */
#include "importers.h"
#include "store_internal.h"
#include "zip.h"

#include "dream/error.h"
#include "dream/paths.h"
#include "util/sha256.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* The first array element or line read to detect a format. */
#define INGEST_DETECT_MAX ((size_t)64 << 20)
#define INGEST_MAX_DEPTH 64

struct dream_ingest_params dream_ingest_default_params(void) { return (struct dream_ingest_params){0}; }

/* What an object says about its format: an array element (in_array) or a JSONL line. */
static enum dream_format ingest_classify(const json_t *o, bool in_array)
{
    if (!json_is_object(o)) return DREAM_FORMAT_AUTO;
    if (in_array) {
        if (json_object_get(o, "mapping") || json_object_get(o, "current_node")) return DREAM_FORMAT_CHATGPT;
        if (json_object_get(o, "chat_messages")) return DREAM_FORMAT_CLAUDE;
        return DREAM_FORMAT_AUTO;
    }
    const char *type = ingest_str(o, "type");
    if (type && !strcmp(type, "session") && (json_object_get(o, "cwd") || json_object_get(o, "version")))
        return DREAM_FORMAT_PI;
    if (type && json_is_object(json_object_get(o, "payload"))) return DREAM_FORMAT_CODEX;
    if (json_is_array(json_object_get(o, "messages")) || json_is_array(json_object_get(json_object_get(o, "body"), "messages")))
        return DREAM_FORMAT_OPENAI_JSONL;
    if (json_object_get(o, "sessionId") || json_object_get(o, "parentUuid") || json_object_get(o, "leafUuid"))
        return DREAM_FORMAT_CLAUDE_CODE;
    if (type) {
        static const char *const cc_types[] = {"summary", "file-history-snapshot", "queue-operation", "user", "assistant", "system"};
        for (size_t i = 0; i < sizeof cc_types / sizeof cc_types[0]; i++)
            if (!strcmp(type, cc_types[i])) return DREAM_FORMAT_CLAUDE_CODE;
    }
    /* An old Codex rollout starts with {id, timestamp, instructions}. */
    if (ingest_str(o, "id") && json_object_get(o, "instructions") && json_object_get(o, "timestamp")) return DREAM_FORMAT_CODEX;
    return DREAM_FORMAT_AUTO;
}

/* When the first item does not parse (a head cut short), the keys it shows are the next best
 * evidence. */
static enum dream_format ingest_guess(const char *s, bool in_array)
{
    if (!s) return DREAM_FORMAT_AUTO;
    if (in_array) {
        if (strstr(s, "\"mapping\"")) return DREAM_FORMAT_CHATGPT;
        if (strstr(s, "\"chat_messages\"")) return DREAM_FORMAT_CLAUDE;
        return DREAM_FORMAT_AUTO;
    }
    if (strstr(s, "\"payload\"")) return DREAM_FORMAT_CODEX;
    if (strstr(s, "\"parentUuid\"") || strstr(s, "\"sessionId\"")) return DREAM_FORMAT_CLAUDE_CODE;
    if (strstr(s, "\"type\":\"session\"") || strstr(s, "\"type\": \"session\"")) return DREAM_FORMAT_PI;
    if (strstr(s, "\"messages\"")) return DREAM_FORMAT_OPENAI_JSONL;
    return DREAM_FORMAT_AUTO;
}

/* Detects from the first array element or the first non-blank line. */
static enum dream_format ingest_detect_stream(struct istream *s)
{
    int c;
    if (istream_peek(s) == 0xEF) {
        istream_getc(s);
        istream_getc(s);
        istream_getc(s);
    }
    while ((c = istream_peek(s)) == ' ' || c == '\n' || c == '\r' || c == '\t') istream_getc(s);
    struct dbuf item = {0};
    bool in_array = c == '[';
    enum dream_format f = DREAM_FORMAT_AUTO;
    if (in_array) {
        struct jarray a = {0};
        int r = jarray_next(s, &a, &item, INGEST_DETECT_MAX);
        if (r == 0) f = DREAM_FORMAT_CHATGPT; /* an empty export: nothing to read either way */
        else if (r < 0 && !item.len) f = DREAM_FORMAT_AUTO;
        else if (r < 0 || a.too_big) f = ingest_guess(item.data, true);
    } else if (c == '{') {
        bool too_long, ended;
        if (istream_read_line(s, &item, INGEST_DETECT_MAX, &too_long, &ended) < 0) f = DREAM_FORMAT_AUTO;
        else if (too_long) f = ingest_guess(item.data, false);
    } else {
        return DREAM_FORMAT_AUTO;
    }
    if (f == DREAM_FORMAT_AUTO && item.len) {
        bool repaired = false;
        json_t *v = NULL;
        if (!ingest_repair(&item, &repaired)) v = json_loadb(item.data, item.len, 0, NULL);
        f = v ? ingest_classify(v, in_array) : ingest_guess(item.data, in_array);
        json_decref(v);
    }
    dbuf_free(&item);
    return f;
}

enum dream_format dream_format_detect(const void *head, size_t len)
{
    struct istream s;
    if (istream_open_mem(&s, head, len)) return DREAM_FORMAT_AUTO;
    enum dream_format f = ingest_detect_stream(&s);
    istream_close(&s);
    return f;
}

/* Where a file's bytes come from: a path, a buffer, or a ZIP member. */
struct ingest_source {
    const char *path;
    const void *mem;
    size_t len;
    struct zip *zip;
    size_t member;
};

static int source_open(const struct ingest_source *src, struct istream *s)
{
    if (src->zip) return istream_open_zip(s, src->zip, src->member);
    if (src->mem) return istream_open_mem(s, src->mem, src->len);
    return istream_open_file(s, src->path);
}

/* Reads the source to its end, each buffer to h when it is not NULL: for a ZIP member that also
 * checks its size and CRC-32, which only the read past its last byte does. */
static int source_read_whole(const struct ingest_source *src, struct sha256 *h)
{
    struct istream s;
    int rc = source_open(src, &s);
    if (rc) return rc;
    for (;;) {
        int c = istream_peek(&s);
        if (c < 0) {
            rc = c == -2 ? s.err : 0;
            break;
        }
        if (h) sha256_update(h, s.buf + s.pos, s.len - s.pos);
        s.offset += s.len - s.pos;
        s.pos = s.len;
    }
    istream_close(&s);
    return rc;
}

/* SHA-256 of the source's bytes, as provenance for formats without ids. */
static int source_hash(const struct ingest_source *src, char hex[65])
{
    struct sha256 h;
    uint8_t d[32];
    sha256_init(&h);
    int rc = source_read_whole(src, &h);
    sha256_final(&h, d);
    sha256_hex(d, hex);
    return rc;
}

static void ingest_progress(struct ingest_ctx *ctx)
{
    ctx->since_progress = 0;
    if (ctx->params->on_progress) ctx->params->on_progress(ctx->params->user, ctx->path, ctx->stats);
}

/* Reads one stream of known or detectable format. Input problems are reported as skips; returns
 * non-zero only for a fatal (store or memory) error. */
static int ingest_source(struct ingest_ctx *ctx, const struct ingest_source *src)
{
    struct istream s;
    enum dream_format f = ctx->params->format;
    if (f == DREAM_FORMAT_AUTO) {
        if (source_open(src, &s)) {
            ingest_skip(ctx, DREAM_SKIP_MALFORMED, ctx->path, "%s", dream_error_last());
            return 0;
        }
        f = ingest_detect_stream(&s);
        int err = s.err;
        istream_close(&s);
        if (err == DREAM_ENOMEM) return err;
        if (err) {
            ingest_skip(ctx, DREAM_SKIP_MALFORMED, ctx->path, "%s", dream_error_last());
            return 0;
        }
        if (f == DREAM_FORMAT_AUTO) {
            ingest_skip(ctx, DREAM_SKIP_UNSUPPORTED, ctx->path,
                        "not a conversation export or session log dream recognises; --format forces one");
            return 0;
        }
    }
    ctx->format = f;
    /* A ZIP member is checked whole first: its importer stops at the end of the JSON, before the
     * read that checks the CRC-32, and a damaged export that still parses would replace good
     * stored messages. One more inflate of the member, for the store's sake (bench/ingest.sh: no
     * time measurable). OpenAI JSONL is read whole already, for its hash. */
    if (src->zip && f != DREAM_FORMAT_OPENAI_JSONL && source_read_whole(src, NULL)) {
        if (dream_error_code() == DREAM_ENOMEM) return DREAM_ENOMEM;
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, ctx->path, "%s; nothing of it was stored", dream_error_last());
        return 0;
    }
    if (store_seen_reset(ctx->store)) return DREAM_EIO;
    if (f == DREAM_FORMAT_OPENAI_JSONL && source_hash(src, ctx->file_hash)) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, ctx->path, "%s", dream_error_last());
        return 0;
    }
    if (source_open(src, &s)) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, ctx->path, "%s", dream_error_last());
        return 0;
    }
    int rc;
    switch (f) {
    case DREAM_FORMAT_CHATGPT: rc = import_chatgpt(ctx, &s); break;
    case DREAM_FORMAT_CLAUDE: rc = import_claude(ctx, &s); break;
    case DREAM_FORMAT_CLAUDE_CODE: rc = import_claude_code(ctx, &s); break;
    case DREAM_FORMAT_CODEX: rc = import_codex(ctx, &s); break;
    case DREAM_FORMAT_PI: rc = import_pi(ctx, &s); break;
    case DREAM_FORMAT_OPENAI_JSONL: rc = import_openai_jsonl(ctx, &s); break;
    default: rc = dream_error_set(DREAM_EINTERNAL, "no importer for format %d", (int)f); break;
    }
    ctx->stats->bytes += s.offset;
    istream_close(&s);
    return rc;
}

/* A ZIP export: its conversations.json (ChatGPT or Claude). */
static int ingest_zip(struct ingest_ctx *ctx, const char *name, const void *mem, size_t len)
{
    struct zip *z;
    int rc = mem ? zip_open_mem(mem, len, name, &z) : zip_open_file(name, &z);
    if (rc == DREAM_ENOMEM) return rc;
    if (rc) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, name, "%s", dream_error_last());
        return 0;
    }
    size_t member;
    if (zip_find(z, "conversations.json", &member)) {
        ingest_skip(ctx, DREAM_SKIP_UNSUPPORTED, name, "a ZIP without conversations.json (not a ChatGPT or Claude export)");
        zip_close(z);
        return 0;
    }
    char *display = NULL;
    size_t dlen = strlen(name) + strlen(z->entries[member].name) + 2;
    if (!(display = malloc(dlen))) {
        zip_close(z);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    snprintf(display, dlen, "%s!%s", name, z->entries[member].name);
    const char *outer = ctx->path;
    ctx->path = display;
    struct ingest_source src = {.path = display, .zip = z, .member = member};
    rc = ingest_source(ctx, &src);
    ctx->path = outer;
    free(display);
    zip_close(z);
    return rc;
}

static bool ingest_head_is_zip(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    unsigned char head[4];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return zip_looks_like(head, n);
}

static int ingest_file(struct ingest_ctx *ctx, const char *path)
{
    ctx->path = path;
    ctx->stats->files++;
    int rc;
    if (ingest_head_is_zip(path)) {
        rc = ingest_zip(ctx, path, NULL, 0);
    } else {
        struct ingest_source src = {.path = path};
        rc = ingest_source(ctx, &src);
    }
    ctx->path = path;
    ingest_progress(ctx);
    return rc;
}

/* *.json, *.jsonl, *.zip, in any case (Windows saves EXPORT.JSON and Export.ZIP) */
static bool ingest_wanted_name(const char *name)
{
    size_t n = strlen(name);
    return (n > 5 && !strcasecmp(name + n - 5, ".json")) || (n > 6 && !strcasecmp(name + n - 6, ".jsonl")) ||
           (n > 4 && !strcasecmp(name + n - 4, ".zip"));
}

static int ingest_visible(const struct dirent *e) { return e->d_name[0] != '.'; }

/* The directories a walk has read, by device and inode: each is read once, however many links
 * lead to it (a link back up the tree among them). */
struct ingest_seen_dirs {
    struct {
        dev_t dev;
        ino_t ino;
    } *v;
    size_t n, cap;
};

/* True when dir was read already; else notes it (false). */
static bool ingest_dir_seen(struct ingest_seen_dirs *seen, const struct stat *st)
{
    for (size_t i = 0; i < seen->n; i++)
        if (seen->v[i].dev == st->st_dev && seen->v[i].ino == st->st_ino) return true;
    if (seen->n == seen->cap) {
        size_t cap = seen->cap ? seen->cap * 2 : 32;
        void *g = realloc(seen->v, cap * sizeof *seen->v);
        if (!g) return false; /* read it again rather than not at all; depth still bounds a loop */
        seen->v = g;
        seen->cap = cap;
    }
    seen->v[seen->n].dev = st->st_dev;
    seen->v[seen->n++].ino = st->st_ino;
    return false;
}

/* Every wanted file under dir (self: its stat), in name order, depth first; a directory reached
 * through a link is read like any other, and no directory twice (seen). */
static int ingest_dir(struct ingest_ctx *ctx, const char *dir, const struct stat *self, int depth, struct ingest_seen_dirs *seen)
{
    if (ingest_dir_seen(seen, self)) return 0;
    if (depth > INGEST_MAX_DEPTH) {
        ingest_skip(ctx, DREAM_SKIP_UNSUPPORTED, dir, "directories nested deeper than %d levels are not read", INGEST_MAX_DEPTH);
        return 0;
    }
    struct dirent **list;
    int n = scandir(dir, &list, ingest_visible, alphasort);
    if (n < 0) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, dir, "cannot read the directory: %s", strerror(errno));
        return 0;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (!rc) {
            size_t len = strlen(dir) + strlen(list[i]->d_name) + 2;
            char *path = malloc(len);
            if (!path) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            else {
                snprintf(path, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", list[i]->d_name);
                struct stat st;
                bool there = stat(path, &st) == 0; /* through a link: a dangling one is not there */
                if (there && S_ISDIR(st.st_mode)) rc = ingest_dir(ctx, path, &st, depth + 1, seen);
                else if (there && S_ISREG(st.st_mode)) {
                    if (ingest_wanted_name(list[i]->d_name)) rc = ingest_file(ctx, path);
                    else ctx->stats->ignored++;
                }
                free(path);
            }
        }
        free(list[i]);
    }
    free(list);
    return rc;
}

int dream_ingest_path(dream_store *store, const char *path, const struct dream_ingest_params *params,
                      struct dream_ingest_stats *stats)
{
    struct dream_ingest_params defaults = dream_ingest_default_params();
    struct ingest_ctx ctx = {.store = store, .params = params ? params : &defaults, .stats = stats, .path = path};
    struct stat st;
    if (stat(path, &st) != 0)
        return dream_error_set(errno == ENOENT ? DREAM_ENOTFOUND : DREAM_EIO, "cannot read %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return ingest_file(&ctx, path);
    struct ingest_seen_dirs seen = {0};
    int rc = ingest_dir(&ctx, path, &st, 0, &seen);
    free(seen.v);
    return rc;
}

int dream_ingest_buffer(dream_store *store, const char *name, const void *data, size_t len,
                        const struct dream_ingest_params *params, struct dream_ingest_stats *stats)
{
    struct dream_ingest_params defaults = dream_ingest_default_params();
    struct ingest_ctx ctx = {.store = store, .params = params ? params : &defaults, .stats = stats, .path = name};
    stats->files++;
    int rc;
    if (zip_looks_like(data, len)) {
        rc = ingest_zip(&ctx, name, data, len);
    } else {
        struct ingest_source src = {.path = name, .mem = data, .len = len};
        rc = ingest_source(&ctx, &src);
    }
    ctx.path = name;
    ingest_progress(&ctx);
    return rc;
}

int dream_ingest_default_dir(enum dream_format format, char **out)
{
    *out = NULL;
    /* each agent's own setting for where it keeps its files, and its default under the home */
    const char *var, *sub, *home_sub;
    switch (format) {
    case DREAM_FORMAT_CLAUDE_CODE: var = "CLAUDE_CONFIG_DIR", sub = "projects", home_sub = ".claude/projects"; break;
    case DREAM_FORMAT_CODEX: var = "CODEX_HOME", sub = "sessions", home_sub = ".codex/sessions"; break;
    case DREAM_FORMAT_PI: var = "PI_CODING_AGENT_DIR", sub = "sessions", home_sub = ".pi/agent/sessions"; break;
    default:
        return dream_error_set(DREAM_EINVAL, "--from takes claude-code, codex or pi, not %s", dream_format_name(format));
    }
    const char *dir = getenv(var);
    char *home = NULL;
    if (!dir || !dir[0]) {
        int rc = dream_paths_home(&home);
        if (rc) return rc;
        dir = home, sub = home_sub;
    }
    size_t n = strlen(dir) + strlen(sub) + 2;
    if ((*out = malloc(n))) snprintf(*out, n, "%s/%s", dir, sub);
    free(home);
    return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
}
