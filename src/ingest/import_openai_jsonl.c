/* import_openai_jsonl.c — OpenAI chat "messages" JSONL (export-formats.md §3).
 *
 * One conversation per line: {"messages": [...]}, or the batch API's {custom_id, body:
 * {messages}}. The format has no ids or times, so a conversation's id is the SHA-256 of what it
 * says ("sha:" and 16 hex digits of each kept message's role and text), which a line added to
 * the file or the lines' order does not change; a message's id is its index in the line. Ids
 * were once the file's SHA-256 and the line number: a store that holds a conversation by that
 * id, or forgot it, keeps it so.
 * System and tool messages, and assistant turns that only call tools, are dropped. A malformed
 * line is reported and skipped; the next line is read as usual. */
#include "importers.h"

#include "dream/error.h"
#include "store_internal.h"
#include "util/sha256.h"

#include <stdio.h>
#include <string.h>

static int openai_conversation(void *ud, json_t *obj, uint64_t line)
{
    struct ingest_ctx *ctx = ud;
    char where[1200];
    snprintf(where, sizeof where, "%s:%llu", ctx->path, (unsigned long long)line);
    static const char *const text_types[] = {"text", "input_text", "output_text", NULL};
    const json_t *messages = json_object_get(obj, "messages");
    if (!json_is_array(messages)) messages = json_object_get(json_object_get(obj, "body"), "messages");
    if (!json_is_array(messages)) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "a line without a \"messages\" array");
        return 0;
    }
    struct ingest_conv c = {0};
    struct sha256 h;
    sha256_init(&h);
    int rc = 0;
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
        sha256_update(&h, role, strlen(role) + 1);
        sha256_update(&h, text.data ? text.data : "", text.len);
        sha256_update(&h, "", 1);
    }
    uint8_t d[32];
    char hex[65], id[96], legacy[96];
    sha256_final(&h, d);
    sha256_hex(d, hex);
    snprintf(id, sizeof id, "sha:%.16s", hex);
    snprintf(legacy, sizeof legacy, "%.16s:%llu", ctx->file_hash, (unsigned long long)line);
    int known = rc ? 0 : store_id_known(ctx->store, dream_format_name(ctx->format), legacy);
    if (known < 0) rc = known;
    if (!rc) rc = conv_set_id(&c, known ? legacy : id);
    if (!rc) rc = ingest_emit(ctx, &c, where);
    dbuf_free(&text);
    conv_free(&c);
    return rc;
}

int import_openai_jsonl(struct ingest_ctx *ctx, struct istream *in)
{
    bool broken;
    return ingest_jsonl_each(ctx, in, true, openai_conversation, ctx, &broken, NULL);
}
