/* import_claude.c — Claude.ai export conversations.json (export-formats.md §2).
 *
 * The export is linear (the current branch). A message's text is its text blocks (tool use,
 * tool results and thinking dropped), or its "text" field in older exports without blocks.
 * Attachments' extracted text is kept after it as a marked quote, so what the person pasted in
 * stays findable. */
#include "importers.h"

#include "dream/error.h"

#include <stdio.h>
#include <string.h>

/* Appends "[attachment: NAME]" and the extracted text as "> " quoted lines. */
static int claude_attachments(const json_t *msg, struct dbuf *out)
{
    size_t i;
    const json_t *att;
    json_array_foreach(json_object_get(msg, "attachments"), i, att) {
        const char *body = ingest_str(att, "extracted_content");
        if (!body || !body[0]) continue;
        const char *name = ingest_str(att, "file_name");
        if (dbuf_printf(out, "%s[attachment: %s]\n", out->len ? "\n\n" : "", name && name[0] ? name : "unnamed"))
            return DREAM_ENOMEM;
        for (const char *p = body; *p;) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            if (dbuf_puts(out, "> ") || dbuf_append(out, p, len) || (nl && nl[1] && dbuf_putc(out, '\n'))) return DREAM_ENOMEM;
            p += len + (nl ? 1 : 0);
        }
    }
    return 0;
}

static int claude_conversation(struct ingest_ctx *ctx, json_t *conv, const char *where)
{
    static const char *const text_types[] = {"text", NULL};
    const char *id = ingest_str(conv, "uuid");
    const json_t *messages = json_object_get(conv, "chat_messages");
    if (!id || !json_is_array(messages)) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "a Claude conversation needs a uuid and chat_messages");
        return 0;
    }
    struct ingest_conv c = {0};
    struct dbuf text = {0};
    int rc = conv_set_id(&c, id);
    if (!rc) rc = conv_set_title(&c, ingest_str(conv, "name"));
    c.created_ms = ingest_time_json(json_object_get(conv, "created_at"));
    c.updated_ms = ingest_time_json(json_object_get(conv, "updated_at"));
    size_t i;
    const json_t *msg;
    json_array_foreach(messages, i, msg) {
        if (rc) break;
        const char *sender = ingest_str(msg, "sender");
        const char *role = !sender ? NULL : !strcmp(sender, "human") || !strcmp(sender, "user") ? "user"
                                        : !strcmp(sender, "assistant")                          ? "assistant"
                                                                                                : NULL;
        if (!role) continue;
        dbuf_reset(&text);
        const json_t *content = json_object_get(msg, "content");
        if (json_array_size(content)) rc = ingest_content_text(content, text_types, &text);
        else if (ingest_str(msg, "text")) rc = dbuf_puts(&text, ingest_str(msg, "text"));
        if (!rc) rc = claude_attachments(msg, &text);
        if (rc) break;
        const char *mid = ingest_str(msg, "uuid");
        char synth[32];
        if (!mid) {
            snprintf(synth, sizeof synth, "#%zu", i);
            mid = synth;
        }
        rc = conv_add(&c, role, mid, ingest_time_json(json_object_get(msg, "created_at")), text.data ? text.data : "",
                      text.len);
    }
    if (!rc) rc = ingest_emit(ctx, &c, where);
    conv_free(&c);
    dbuf_free(&text);
    return rc;
}

int import_claude(struct ingest_ctx *ctx, struct istream *in) { return ingest_json_array(ctx, in, claude_conversation); }
