/* import_chatgpt.c — ChatGPT "Export data" conversations.json (export-formats.md §1).
 *
 * Each conversation's mapping is a tree: edits and regenerations branch it. The thread the person
 * sees is current_node followed up through parent links; it is read back to front and reversed.
 * Only user and assistant messages addressed to everyone (recipient "all") with text content are
 * kept; system, tool and hidden nodes, tool calls, reasoning and custom-instruction contexts are
 * dropped. */
#include "importers.h"

#include "dream/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a message belongs to the visible conversation. */
static bool chatgpt_visible(const json_t *msg, const char **role)
{
    const json_t *author = json_object_get(msg, "author");
    *role = ingest_str(author, "role");
    if (!*role || (strcmp(*role, "user") && strcmp(*role, "assistant"))) return false;
    const char *recipient = ingest_str(msg, "recipient");
    if (recipient && strcmp(recipient, "all")) return false;
    const json_t *meta = json_object_get(msg, "metadata");
    if (json_is_true(json_object_get(meta, "is_visually_hidden_from_conversation"))) return false;
    if (json_is_true(json_object_get(meta, "is_user_system_message"))) return false;
    return true;
}

/* Appends a message's visible text: the string parts of text and multimodal_text content, and the
 * words of a voice turn (an audio_transcription part; the audio itself, images and other objects
 * are skipped), or the text of a code block the assistant showed. */
static int chatgpt_text(const json_t *msg, struct dbuf *out)
{
    const json_t *content = json_object_get(msg, "content");
    const char *type = ingest_str(content, "content_type");
    if (!type) return 0;
    if (!strcmp(type, "text") || !strcmp(type, "multimodal_text")) {
        size_t i;
        const json_t *part;
        json_array_foreach(json_object_get(content, "parts"), i, part) {
            const char *ptype = ingest_str(part, "content_type");
            const char *text = json_is_string(part) ? json_string_value(part)
                               : ptype && !strcmp(ptype, "audio_transcription") ? ingest_str(part, "text") : NULL;
            if (!text || !text[0]) continue;
            if (out->len && dbuf_puts(out, "\n\n")) return DREAM_ENOMEM;
            if (dbuf_puts(out, text)) return DREAM_ENOMEM;
        }
        return 0;
    }
    if (!strcmp(type, "code")) {
        const char *text = ingest_str(content, "text");
        if (text && (dbuf_puts(out, "```\n") || dbuf_puts(out, text) || dbuf_puts(out, "\n```"))) return DREAM_ENOMEM;
    }
    return 0;
}

/* The node the visible branch ends at: current_node, else the leaf reached by always taking the
 * last child from the root (an export without current_node). */
static const char *chatgpt_leaf(const json_t *conv, const json_t *mapping)
{
    const char *cur = ingest_str(conv, "current_node");
    if (cur && json_object_get(mapping, cur)) return cur;
    const char *root = NULL;
    const char *key;
    const json_t *node;
    json_object_foreach((json_t *)mapping, key, node) {
        const json_t *parent = json_object_get(node, "parent");
        if (!json_is_string(parent) || !json_object_get(mapping, json_string_value(parent))) {
            root = key;
            break;
        }
    }
    const char *at = root;
    for (size_t steps = 0; at && steps <= json_object_size(mapping); steps++) {
        const json_t *children = json_object_get(json_object_get(mapping, at), "children");
        size_t n = json_array_size(children);
        const json_t *last = n ? json_array_get(children, n - 1) : NULL;
        if (!json_is_string(last) || !json_object_get(mapping, json_string_value(last))) break;
        at = json_string_value(last);
    }
    return at;
}

static int chatgpt_conversation(struct ingest_ctx *ctx, json_t *conv, const char *where)
{
    const char *id = ingest_str(conv, "id");
    if (!id) id = ingest_str(conv, "conversation_id");
    const json_t *mapping = json_object_get(conv, "mapping");
    if (!id || !json_is_object(mapping)) {
        ingest_skip(ctx, DREAM_SKIP_MALFORMED, where, "a ChatGPT conversation needs an id and a mapping");
        return 0;
    }
    /* Collect the branch leaf-first; a cycle cannot be longer than the mapping. */
    size_t cap = json_object_size(mapping);
    const json_t **path = malloc((cap ? cap : 1) * sizeof *path);
    const char **ids = malloc((cap ? cap : 1) * sizeof *ids);
    if (!path || !ids) {
        free(path);
        free(ids);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    size_t n = 0;
    const char *at = chatgpt_leaf(conv, mapping);
    while (at && n < cap) {
        const json_t *node = json_object_get(mapping, at);
        if (!node) break;
        ids[n] = at;
        path[n++] = node;
        const json_t *parent = json_object_get(node, "parent");
        at = json_is_string(parent) ? json_string_value(parent) : NULL;
    }
    struct ingest_conv c = {0};
    struct dbuf text = {0};
    int rc = conv_set_id(&c, id);
    if (!rc) rc = conv_set_title(&c, ingest_str(conv, "title"));
    c.created_ms = ingest_time_json(json_object_get(conv, "create_time"));
    c.updated_ms = ingest_time_json(json_object_get(conv, "update_time"));
    for (size_t k = n; k-- > 0 && !rc;) {
        const json_t *msg = json_object_get(path[k], "message");
        const char *role;
        if (!json_is_object(msg) || !chatgpt_visible(msg, &role)) continue;
        dbuf_reset(&text);
        if ((rc = chatgpt_text(msg, &text))) break;
        const char *mid = ingest_str(msg, "id");
        rc = conv_add(&c, role, mid ? mid : ids[k], ingest_time_json(json_object_get(msg, "create_time")),
                      text.data ? text.data : "", text.len);
    }
    if (!rc) rc = ingest_emit(ctx, &c, where);
    conv_free(&c);
    dbuf_free(&text);
    free(path);
    free(ids);
    return rc;
}

int import_chatgpt(struct ingest_ctx *ctx, struct istream *in) { return ingest_json_array(ctx, in, chatgpt_conversation); }
