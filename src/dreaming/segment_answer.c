/* segment_answer.c — the tolerant parse of the chunk stage's JSON answer (spec §6.1).
 *
 * Small models wrap JSON in code fences, add prose before or after it, or answer one object
 * where a list was asked for; each of those is still a usable answer. */
#include "segment_answer.h"

#include "dream/error.h"
#include "dream/grammar.h"
#include "util/buf.h"
#include "util/utf8.h"

#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void segment_answer_free(struct segment_answer *a)
{
    if (!a) return;
    for (size_t i = 0; i < a->n; i++) {
        free(a->chunks[i].start.id);
        free(a->chunks[i].end.id);
        free(a->chunks[i].label);
    }
    free(a->chunks);
    a->chunks = NULL;
    a->n = 0;
}

/* The first of keys present in obj, or NULL. */
static json_t *answer_field(json_t *obj, const char *const *keys)
{
    for (; *keys; keys++) {
        json_t *v = json_object_get(obj, *keys);
        if (v && !json_is_null(v)) return v;
    }
    return NULL;
}

/* Reads an anchor from a JSON string or integer. */
static int answer_anchor(json_t *v, struct segment_anchor *a, const char *which, size_t index)
{
    if (json_is_integer(v)) {
        a->position = json_integer_value(v);
        return DREAM_OK;
    }
    if (json_is_string(v)) {
        a->id = strdup(json_string_value(v));
        if (!a->id) return dream_error_set(DREAM_ENOMEM, "out of memory");
        return DREAM_OK;
    }
    return dream_error_set(DREAM_EFORMAT, "chunk %zu has no usable %s anchor (want a message id)", index, which);
}

/* A copy of s with surrounding whitespace trimmed and inner control characters made spaces. */
static char *answer_label(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    char *out = malloc(n + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) out[i] = ((unsigned char)s[i] < 0x20) ? ' ' : s[i];
    out[n] = '\0';
    return out;
}

static const char *const start_keys[] = {"start_message_id", "start_message_uuid", "start_id", "start", NULL};
static const char *const end_keys[] = {"end_message_id", "end_message_uuid", "end_id", "end", NULL};
static const char *const label_keys[] = {"label", "title", "topic", NULL};

/* Fills out from a parsed JSON value. */
static int answer_from_json(json_t *root, struct segment_answer *out)
{
    json_t *list = root;
    json_t *single = NULL;
    if (json_is_object(root)) {
        list = json_object_get(root, "chunks");
        if (!list) {
            if (!answer_field(root, start_keys)) return dream_error_set(DREAM_EFORMAT, "the answer has no \"chunks\" list");
            single = root;
        }
    }
    size_t n = single ? 1 : 0;
    if (!single) {
        if (!json_is_array(list)) return dream_error_set(DREAM_EFORMAT, "\"chunks\" is not a list");
        n = json_array_size(list);
    }
    if (n == 0) return DREAM_OK;
    out->chunks = calloc(n, sizeof *out->chunks);
    if (!out->chunks) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *c = single ? single : json_array_get(list, i);
        struct segment_raw_chunk *rc = &out->chunks[i];
        out->n = i + 1;
        if (!json_is_object(c)) return dream_error_set(DREAM_EFORMAT, "chunk %zu is not an object", i);
        json_t *s = answer_field(c, start_keys), *e = answer_field(c, end_keys);
        if (!s) return dream_error_set(DREAM_EFORMAT, "chunk %zu has no start_message_id", i);
        if (!e) return dream_error_set(DREAM_EFORMAT, "chunk %zu has no end_message_id", i);
        int r = answer_anchor(s, &rc->start, "start", i);
        if (!r) r = answer_anchor(e, &rc->end, "end", i);
        if (r) return r;
        json_t *l = answer_field(c, label_keys);
        rc->label = answer_label(json_is_string(l) ? json_string_value(l) : "");
        if (!rc->label) return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    return DREAM_OK;
}

/* Parses text[0..len) as JSON and converts it; DREAM_EFORMAT when it is not JSON. */
static int answer_try(const char *text, size_t len, struct segment_answer *out)
{
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
    if (!root) return dream_error_set(DREAM_EFORMAT, "the answer is not JSON (%s at character %d)", err.text, err.position);
    int rc = answer_from_json(root, out);
    json_decref(root);
    if (rc) segment_answer_free(out);
    return rc;
}

/* Finds the body of the first ``` fence: *b..*e. False when there is none. */
static bool answer_fence(const char *text, size_t len, size_t *b, size_t *e)
{
    const char *open = NULL;
    for (size_t i = 0; i + 3 <= len; i++)
        if (memcmp(text + i, "```", 3) == 0) {
            open = text + i;
            break;
        }
    if (!open) return false;
    const char *p = memchr(open, '\n', len - (size_t)(open - text));
    if (!p) return false;
    *b = (size_t)(p + 1 - text);
    for (size_t i = *b; i + 3 <= len; i++)
        if (memcmp(text + i, "```", 3) == 0) {
            *e = i;
            return true;
        }
    *e = len; /* an unclosed fence: the rest */
    return true;
}

int segment_answer_parse(const char *text, size_t len, struct segment_answer *out)
{
    memset(out, 0, sizeof *out);
    if (!text) return dream_error_set(DREAM_EFORMAT, "no answer");
    size_t b, e;
    int rc = answer_try(text, len, out);
    if (rc != DREAM_EFORMAT) return rc;
    if (answer_fence(text, len, &b, &e)) {
        rc = answer_try(text + b, e - b, out);
        if (rc != DREAM_EFORMAT) return rc;
    }
    /* The outermost bracketed span, for prose around the JSON. */
    size_t first = len, last = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '{' || text[i] == '[') {
            first = i;
            break;
        }
    for (size_t i = len; i > 0; i--)
        if (text[i - 1] == '}' || text[i - 1] == ']') {
            last = i;
            break;
        }
    if (first < last) {
        rc = answer_try(text + first, last - first, out);
        if (rc != DREAM_EFORMAT) return rc;
    }
    if (len == 0) return dream_error_set(DREAM_EFORMAT, "the answer is empty");
    size_t shown = utf8_prefix(text, len, 60);
    return dream_error_set(DREAM_EFORMAT, "no chunk list found in the answer (\"%.*s%s\")", (int)shown, text, shown < len ? "..." : "");
}

#define SEGMENT_GRAMMAR_MAX_CHUNKS 64

int segment_answer_grammar(const char *const *ids, size_t n, size_t first, char **out)
{
    *out = NULL;
    if (n == 0) return dream_error_set(DREAM_EINVAL, "a chunk answer grammar needs at least one message");
    size_t max_chunks = n < SEGMENT_GRAMMAR_MAX_CHUNKS ? n : SEGMENT_GRAMMAR_MAX_CHUNKS;
    struct dbuf b = {0};
    int rc = dbuf_puts(&b, "root ::= \"{\" ws \"\\\"chunks\\\":\" ws \"[\" ws (chunk");
    if (!rc && max_chunks > 1) rc = dbuf_printf(&b, " (ws \",\" ws chunk){0,%zu}", max_chunks - 1);
    if (!rc)
        rc = dbuf_puts(&b, ")? ws \"]\" ws \"}\"\n"
                           "chunk ::= \"{\" ws \"\\\"start_message_id\\\":\" ws anchor ws \",\" ws \"\\\"end_message_id\\\":\" ws anchor ws \",\" ws "
                           "\"\\\"label\\\":\" ws \"\\\"\" [^\"\\\\\\x00-\\x1f]{0,120} \"\\\"\" ws \"}\"\n"
                           "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n"
                           "anchor ::= ");
    /* an id as the JSON string the answer holds, then as a GBNF literal of that text */
    for (size_t i = 0; !rc && i < n; i++) {
        json_t *js = json_string(ids[i]);
        char *jtext = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
        char *lit = jtext ? dream_grammar_literal(jtext) : NULL;
        json_decref(js);
        if (!js) rc = dream_error_set(DREAM_EFORMAT, "message id %zu is not valid UTF-8", first + i);
        else if (!lit) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else rc = dbuf_printf(&b, "%s | ", lit);
        free(jtext);
        free(lit);
    }
    for (size_t i = 0; !rc && i < n; i++) rc = dbuf_printf(&b, "\"%zu\"%s", first + i, i + 1 < n ? " | " : "\n");
    if (rc) {
        dbuf_free(&b);
        return rc;
    }
    *out = dbuf_take(&b);
    return *out ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

int segment_answer_schema(const char *const *ids, size_t n, size_t first, char **out)
{
    *out = NULL;
    if (n == 0) return dream_error_set(DREAM_EINVAL, "a chunk answer schema needs at least one message");
    size_t max_chunks = n < SEGMENT_GRAMMAR_MAX_CHUNKS ? n : SEGMENT_GRAMMAR_MAX_CHUNKS;
    json_t *anchors = json_array();
    int rc = anchors ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        json_t *id = json_string(ids[i]);
        if (!id) rc = dream_error_set(DREAM_EFORMAT, "message id %zu is not valid UTF-8", first + i);
        else if (json_array_append_new(anchors, id)) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; !rc && i < n; i++)
        if (json_array_append_new(anchors, json_integer((json_int_t)(first + i)))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    json_t *schema = NULL;
    if (!rc) {
        schema = json_pack("{s:s, s:{s:{s:s, s:I, s:{s:s, s:{s:{s:O}, s:{s:O}, s:{s:s, s:i}}, s:[sss], s:b}}}, s:[s], s:b}", "type", "object",
                           "properties", "chunks", "type", "array", "maxItems", (json_int_t)max_chunks, "items", "type", "object",
                           "properties", "start_message_id", "enum", anchors, "end_message_id", "enum", anchors, "label", "type", "string",
                           "maxLength", 120, "required", "start_message_id", "end_message_id", "label", "additionalProperties", 0,
                           "required", "chunks", "additionalProperties", 0);
        if (!schema || !(*out = json_dumps(schema, JSON_COMPACT))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    json_decref(schema);
    json_decref(anchors);
    return rc;
}
