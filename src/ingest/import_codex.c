/* import_codex.c — Codex CLI rollout JSONL (export-formats.md §5).
 *
 * Lines are {timestamp, type, payload}; the conversation is the response_item messages in file
 * order (the format is linear). session_meta gives the id. Dropped: developer and system
 * messages, the environment and instruction preambles Codex repeats as user messages, reasoning,
 * and tool calls with their output. Codex has no message ids, so a message's id is its line
 * number. Older rollouts without the {type, payload} wrapper are read too. */
#include "importers.h"

#include "dream/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct codex_session {
    struct ingest_conv c;
    bool have_id;
};

/* User "messages" that are Codex's own context, not the person. */
static bool codex_boilerplate(const char *text)
{
    static const char *const prefixes[] = {"<environment_context>", "<user_instructions>", "<permissions instructions>",
                                           "# AGENTS.md instructions", "<user_shell_command>", "<turn_aborted>",
                                           "<INSTRUCTIONS>"};
    while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r') text++;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(text, prefixes[i], strlen(prefixes[i]))) return true;
    return false;
}

static int codex_line(void *ud, json_t *obj, uint64_t line)
{
    struct codex_session *s = ud;
    static const char *const text_types[] = {"input_text", "output_text", "text", NULL};
    const char *type = ingest_str(obj, "type");
    const json_t *payload = json_object_get(obj, "payload");
    int64_t t = ingest_time_json(json_object_get(obj, "timestamp"));
    if (!json_is_object(payload)) {
        /* The older layout: the item itself, and a first line {id, timestamp, instructions}. */
        if (!type && ingest_str(obj, "id") && !s->have_id) {
            s->have_id = true;
            s->c.created_ms = t;
            return conv_set_id(&s->c, ingest_str(obj, "id"));
        }
        payload = obj;
        type = "response_item";
    }
    if (!type) return 0;
    if (!strcmp(type, "session_meta")) {
        const char *id = ingest_str(payload, "id");
        if (!id || s->have_id) return 0;
        s->have_id = true;
        int64_t pt = ingest_time_json(json_object_get(payload, "timestamp"));
        s->c.created_ms = pt ? pt : t;
        return conv_set_id(&s->c, id);
    }
    if (strcmp(type, "response_item")) return 0;
    const char *ptype = ingest_str(payload, "type");
    const char *role = ingest_str(payload, "role");
    if (!ptype || strcmp(ptype, "message") || !role || (strcmp(role, "user") && strcmp(role, "assistant"))) return 0;
    struct dbuf text = {0};
    int rc = ingest_content_text(json_object_get(payload, "content"), text_types, &text);
    if (!rc && text.len && !(!strcmp(role, "user") && codex_boilerplate(text.data))) {
        char mid[32];
        snprintf(mid, sizeof mid, "L%llu", (unsigned long long)line);
        rc = conv_add(&s->c, role, mid, t, text.data, text.len);
    }
    dbuf_free(&text);
    return rc;
}

int import_codex(struct ingest_ctx *ctx, struct istream *in)
{
    struct codex_session s = {0};
    bool broken;
    int rc = ingest_jsonl_each(ctx, in, false, codex_line, &s, &broken, NULL);
    if (!rc && !broken) {
        if (!s.have_id) {
            /* rollout-<timestamp>-<uuid>.jsonl: the file name is the next best stable id. */
            const char *base = strrchr(ctx->path, '/');
            base = base ? base + 1 : ctx->path;
            size_t len = strlen(base);
            if (len > 6 && !strcmp(base + len - 6, ".jsonl")) len -= 6;
            char *id = strndup(base, len);
            rc = id ? conv_set_id(&s.c, id) : dream_error_set(DREAM_ENOMEM, "out of memory");
            free(id);
        }
        if (!rc) rc = ingest_emit(ctx, &s.c, ctx->path);
    }
    conv_free(&s.c);
    return rc;
}
