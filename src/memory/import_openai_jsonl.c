/* import_openai_jsonl.c — OpenAI chat "messages" JSONL (export-formats.md §3).
 *
 * One conversation per line: {"messages": [...]}, or the batch API's {custom_id, body:
 * {messages}}. The format has no ids or times, so a conversation's id is the file's SHA-256
 * (first 16 hex digits) and the line number, and a message's id is its index in the line.
 * System and tool messages, and assistant turns that only call tools, are dropped. A malformed
 * line is reported and skipped; the next line is read as usual. */
#include "ingest_internal.h"

#include "dream/error.h"

#include <stdio.h>
#include <string.h>

static int openai_conversation(struct ingest_ctx *ctx, const json_t *obj, uint64_t line, const char *where)
{
    static const char *const text_types[] = {"text", "input_text", "output_text", NULL};
    const json_t *messages = json_object_get(obj, "messages");
    if (!json_is_array(messages)) messages = json_object_get(json_object_get(obj, "body"), "messages");
    if (!json_is_array(messages)) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "a line without a \"messages\" array");
        return 0;
    }
    struct ingest_conv c = {0};
    char id[96];
    snprintf(id, sizeof id, "%.16s:%llu", ctx->file_hash, (unsigned long long)line);
    int rc = conv_set_id(&c, id);
    struct dbuf text = {0};
    size_t i;
    const json_t *m;
    json_array_foreach(messages, i, m) {
        if (rc) break;
        const char *role = ingest_str(m, "role");
        if (!role || (strcmp(role, "user") && strcmp(role, "assistant"))) continue;
        dbuf_reset(&text);
        if ((rc = ingest_content_text(json_object_get(m, "content"), text_types, &text))) break;
        char mid[32];
        snprintf(mid, sizeof mid, "%zu", i);
        rc = conv_add(&c, role, mid, 0, text.data ? text.data : "", text.len);
    }
    if (!rc) rc = ingest_emit(ctx, &c, where);
    dbuf_free(&text);
    conv_free(&c);
    return rc;
}

int import_openai_jsonl(struct ingest_ctx *ctx, struct istream *in)
{
    struct dbuf line = {0};
    char where[1200], msg[512];
    int rc = 0;
    for (;;) {
        uint64_t lineno = in->line, offset = in->offset;
        bool too_long, ended;
        int r = istream_read_line(in, &line, INGEST_MAX_ITEM, &too_long, &ended);
        if (r == 0) break;
        snprintf(where, sizeof where, "%s:%llu", ctx->path, (unsigned long long)lineno);
        if (r < 0) {
            if (r == DREAM_ENOMEM) rc = r;
            else ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "%s; the lines before it were kept", dream_error_last());
            break;
        }
        if (too_long) {
            ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "a line longer than %zu MiB; skipped", INGEST_MAX_ITEM >> 20);
            continue;
        }
        size_t k = 0;
        while (k < line.len && (line.data[k] == ' ' || line.data[k] == '\t')) k++;
        if (k == line.len) continue;
        ctx->repaired = false;
        json_t *v = ingest_parse(ctx, &line, lineno, offset, msg, sizeof msg);
        if (!v) {
            ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "%s; line skipped", msg);
            continue;
        }
        rc = openai_conversation(ctx, v, lineno, where);
        json_decref(v);
        if (rc) break;
    }
    dbuf_free(&line);
    return rc;
}
