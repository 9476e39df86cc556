/* mcp.c — the Model Context Protocol's JSON-RPC methods over the read tools (see dream/mcp.h).
 * The tool table below is the one place a tool's name, description and argument schema live;
 * tools/list prints it and tools/call checks arguments against the same schema before calling
 * dream_read_call, so what an agent is told and what is enforced cannot drift apart. */
#include "dream/mcp.h"

#include "dream/error.h"
#include "dream/read.h"
#include "util/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DREAM_VERSION
#define DREAM_VERSION "0"
#endif

struct mcp_tool {
    const char *name; /* the MCP tool, and the dream_read_call tool unless .search_conversations */
    const char *title;
    const char *description;
    const char *schema; /* JSON Schema (the subset mcp_check_args enforces) */
    bool search_conversations; /* the read tool "search" over the store's messages only */
};

/* A number macro as a string literal, for the schemas. */
#define MCP_STR_(x) #x
#define MCP_STR(x) MCP_STR_(x)
#define MCP_NAME_PROP "\"name\":{\"type\":\"string\",\"description\":\"an article name, title or alias\"}"

static const struct mcp_tool mcp_tools[] = {
    {"resolve", "Resolve a name",
     "Finds the wiki article for a name or alias (case, spacing and punctuation forgiven) and returns its stem, title and "
     "clipped lead; a subject seen in conversations without an article comes back as 'captured'; otherwise the near "
     "candidates. Start here.",
     "{\"type\":\"object\",\"properties\":{" MCP_NAME_PROP "},\"required\":[\"name\"],\"additionalProperties\":false}", false},
    {"read", "Read an article",
     "An article's title, clipped lead and table of contents (under 2 KB); whole=true gives the full Markdown (refused "
     "over 8 KB: read sections instead).",
     "{\"type\":\"object\",\"properties\":{" MCP_NAME_PROP ",\"whole\":{\"type\":\"boolean\",\"description\":\"the whole "
     "article text\"}},\"required\":[\"name\"],\"additionalProperties\":false}", false},
    {"section", "Read a section",
     "One section of an article with its subsections, verbatim, and the footnotes it cites (conversation and message).",
     "{\"type\":\"object\",\"properties\":{" MCP_NAME_PROP ",\"anchor\":{\"type\":\"string\",\"description\":\"the "
     "section's anchor or heading, as read lists them\"}},\"required\":[\"name\",\"anchor\"],\"additionalProperties\":false}", false},
    {"links", "An article's links",
     "The articles an article links to (infobox, series, main, see also, prose), its red links, and the articles that "
     "link to it.",
     "{\"type\":\"object\",\"properties\":{" MCP_NAME_PROP "},\"required\":[\"name\"],\"additionalProperties\":false}", false},
    {"infobox", "An article's infobox", "The infobox fields of an article (key and value): facts to read.",
     "{\"type\":\"object\",\"properties\":{" MCP_NAME_PROP "},\"required\":[\"name\"],\"additionalProperties\":false}", false},
    {"list", "List articles", "The article stems, sorted, a page at a time.",
     "{\"type\":\"object\",\"properties\":{\"offset\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":" MCP_STR(DREAM_READ_OFFSET_MAX) ","
     "\"description\":\"skip this many\"},"
     "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"description\":\"at most this many (default 100)\"}},"
     "\"additionalProperties\":false}", false},
    {"category", "Members of a category",
     "The articles of a category, type, kind or series (give exactly one), each with a short lead; 40 at most.",
     "{\"type\":\"object\",\"properties\":{\"category\":{\"type\":\"string\"},\"type\":{\"type\":\"string\"},\"kind\":"
     "{\"type\":\"string\"},\"series\":{\"type\":\"string\"}},\"minProperties\":1,\"maxProperties\":1,"
     "\"additionalProperties\":false}", false},
    {"search", "Search the wiki",
     "Last-resort text search over the articles: the articles matching most of the words, and the matching lines.",
     "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\",\"description\":\"words to look for\"},\"limit\":"
     "{\"type\":\"integer\",\"minimum\":1,\"maximum\":30,\"description\":\"at most this many articles (default 8)\"}},"
     "\"required\":[\"query\"],\"additionalProperties\":false}", false},
    {"conversations", "Search the conversations",
     "Full-text search over the person's own conversations (every stored message, not only what the wiki says): the "
     "best-ranked messages, each with its conversation, message id, date and a highlighted snippet. Words must all "
     "match; \"a phrase\", word* (a prefix), OR and -word work. Narrow by day with since/until (YYYY-MM-DD).",
     "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\",\"description\":\"words to look for\"},\"since\":"
     "{\"type\":\"string\",\"description\":\"first day, YYYY-MM-DD\"},\"until\":{\"type\":\"string\",\"description\":"
     "\"last day, YYYY-MM-DD\"},\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":30,\"description\":\"at most this "
     "many messages (default 8)\"}},\"required\":[\"query\"],\"additionalProperties\":false}",
     true},
    {"status", "Memory status",
     "What the memory holds (articles, conversations, chunks, entities), its last memory: commit, whether a run is "
     "going, the schedule.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", false},
};
#define MCP_NTOOLS (sizeof mcp_tools / sizeof mcp_tools[0])

struct dream_mcp {
    char *wiki, *store;
    bool stateless, initialized;
};

void dream_mcp_default_params(struct dream_mcp_params *p) { *p = (struct dream_mcp_params){0}; }

dream_mcp *dream_mcp_new(const struct dream_mcp_params *p)
{
    dream_mcp *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->stateless = p && p->stateless;
    if (p && p->wiki && !(m->wiki = strdup(p->wiki))) goto oom;
    if (p && p->store && !(m->store = strdup(p->store))) goto oom;
    return m;
oom:
    dream_mcp_free(m);
    return NULL;
}

void dream_mcp_free(dream_mcp *m)
{
    if (!m) return;
    free(m->wiki);
    free(m->store);
    free(m);
}

bool dream_mcp_version_supported(const char *version)
{
    static const char *const versions[] = DREAM_MCP_VERSIONS;
    for (size_t i = 0; version && versions[i]; i++)
        if (!strcmp(version, versions[i])) return true;
    return false;
}

/* A JSON string of text, dropping what a bounded format (%.60s) may have cut off mid-character
 * (jansson takes only valid UTF-8). NULL on allocation failure. */
static json_t *mcp_string(const char *text)
{
    size_t n = strlen(text);
    json_t *s;
    while (!(s = json_stringn(text, n)) && n > 0) n--;
    return s;
}

/* {"jsonrpc":"2.0","id":id,"error":{"code","message","data"?}}; takes the reference to data.
 * id may be NULL (answered as null). */
static json_t *mcp_error(const json_t *id, int code, json_t *data, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static json_t *mcp_error(const json_t *id, int code, json_t *data, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *err = json_pack("{s:i, s:o}", "code", code, "message", mcp_string(msg));
    if (err && data) json_object_set(err, "data", data);
    json_decref(data);
    json_t *r = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", err);
    return r;
}

/* {"jsonrpc":"2.0","id":id,"result":result}; takes the reference to result. */
static json_t *mcp_result(const json_t *id, json_t *result)
{
    if (!result) return NULL;
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

static json_t *mcp_initialize(dream_mcp *m, const json_t *id, const json_t *params)
{
    const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
    if (!asked) return mcp_error(id, DREAM_MCP_INVALID_PARAMS, NULL, "initialize needs params.protocolVersion, a string such as \"%s\"", DREAM_MCP_LATEST_VERSION);
    m->initialized = true;
    const char *version = dream_mcp_version_supported(asked) ? asked : DREAM_MCP_LATEST_VERSION;
    return mcp_result(id, json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", version, "capabilities", "tools",
                                    "listChanged", 0, "serverInfo", "name", "dream", "title", "dream memory", "version", DREAM_VERSION,
                                    "instructions",
                                    "The person's memory wiki, dreamed from their AI-assistant conversations. Resolve a name first; then "
                                    "read the article (lead and contents) and read only the sections you need; search is the last resort. "
                                    "Footnotes cite the conversation and message each claim came from."));
}

static json_t *mcp_tools_list(const json_t *id)
{
    json_t *tools = json_array();
    for (size_t i = 0; tools && i < MCP_NTOOLS; i++) {
        json_t *schema = json_loads(mcp_tools[i].schema, 0, NULL);
        json_t *t = schema ? json_pack("{s:s, s:s, s:s, s:o, s:{s:b, s:b}}", "name", mcp_tools[i].name, "title", mcp_tools[i].title,
                                       "description", mcp_tools[i].description, "inputSchema", schema, "annotations",
                                       "readOnlyHint", 1, "openWorldHint", 0)
                           : NULL;
        if (!t || json_array_append_new(tools, t)) {
            json_decref(tools);
            return NULL;
        }
    }
    return mcp_result(id, json_pack("{s:o}", "tools", tools));
}

static const struct mcp_tool *mcp_tool_find(const char *name)
{
    for (size_t i = 0; name && i < MCP_NTOOLS; i++)
        if (!strcmp(mcp_tools[i].name, name)) return &mcp_tools[i];
    return NULL;
}

/* Checks args against the tool's schema (type, required, additionalProperties, min/maxProperties,
 * integer minimum/maximum): 0, or DREAM_EINVAL with the message in dream_error_last(). */
static int mcp_check_args(const struct mcp_tool *t, const json_t *args)
{
    json_t *schema = json_loads(t->schema, 0, NULL);
    if (!schema) return dream_error_set(DREAM_ENOMEM, "out of memory");
    json_t *props = json_object_get(schema, "properties");
    int rc = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)args, key, v)
    {
        json_t *p = json_object_get(props, key);
        const char *type = json_string_value(json_object_get(p, "type"));
        if (!p || !type) {
            rc = dream_error_set(DREAM_EINVAL, "%s takes no argument '%.*s'", t->name, utf8_cut(key, 60), key);
            break;
        }
        bool ok = !strcmp(type, "string") ? json_is_string(v) : !strcmp(type, "boolean") ? json_is_boolean(v) : json_is_integer(v);
        if (!ok) {
            rc = dream_error_set(DREAM_EINVAL, "%s: the argument '%s' must be a%s %s", t->name, key, type[0] == 'i' ? "n" : "", type);
            break;
        }
        json_t *lo = json_object_get(p, "minimum"), *hi = json_object_get(p, "maximum");
        json_int_t x = json_integer_value(v);
        if ((lo && x < json_integer_value(lo)) || (hi && x > json_integer_value(hi))) {
            if (lo && hi)
                rc = dream_error_set(DREAM_EINVAL, "%s: the argument '%s' must be from %lld to %lld", t->name, key,
                                     (long long)json_integer_value(lo), (long long)json_integer_value(hi));
            else
                rc = dream_error_set(DREAM_EINVAL, "%s: the argument '%s' must be at %s %lld", t->name, key, lo ? "least" : "most",
                                     (long long)json_integer_value(lo ? lo : hi));
            break;
        }
    }
    size_t i;
    json_array_foreach(json_object_get(schema, "required"), i, v)
    {
        if (rc) break;
        if (!json_object_get(args, json_string_value(v)))
            rc = dream_error_set(DREAM_EINVAL, "%s needs the argument '%s'", t->name, json_string_value(v));
    }
    json_t *minp = json_object_get(schema, "minProperties"), *maxp = json_object_get(schema, "maxProperties");
    size_t n = json_object_size(args);
    if (!rc && ((minp && (json_int_t)n < json_integer_value(minp)) || (maxp && (json_int_t)n > json_integer_value(maxp))))
        rc = dream_error_set(DREAM_EINVAL, "%s takes exactly one of its arguments (%zu given)", t->name, n);
    json_decref(schema);
    return rc;
}

/* A tools/call result: the object as one text item; isError when is_error. Takes obj. */
static json_t *mcp_tool_result(json_t *obj, bool is_error)
{
    char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    json_decref(obj);
    if (!text) return NULL;
    json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError", is_error);
    free(text);
    return r;
}

static json_t *mcp_tools_call(dream_mcp *m, const json_t *id, const json_t *params)
{
    json_t *jname = json_object_get(params, "name"), *args = json_object_get(params, "arguments");
    if (!json_is_string(jname)) return mcp_error(id, DREAM_MCP_INVALID_PARAMS, NULL, "tools/call needs params.name, the tool's name (see tools/list)");
    const struct mcp_tool *t = mcp_tool_find(json_string_value(jname));
    if (!t) {
        json_t *names = json_array();
        for (size_t i = 0; names && i < MCP_NTOOLS; i++) json_array_append_new(names, json_string(mcp_tools[i].name));
        return mcp_error(id, DREAM_MCP_INVALID_PARAMS, json_pack("{s:o*}", "tools", names), "unknown tool '%.*s' (see data.tools, or tools/list)",
                         utf8_cut(json_string_value(jname), 60), json_string_value(jname));
    }
    if (args && !json_is_object(args) && !json_is_null(args))
        return mcp_error(id, DREAM_MCP_INVALID_PARAMS, NULL, "tools/call: params.arguments must be an object");
    json_t *empty = NULL;
    if (!json_is_object(args) && !(args = empty = json_object())) return NULL;
    json_t *out = NULL;
    int rc = mcp_check_args(t, args);
    if (rc) {
        out = json_pack("{s:o, s:s}", "error", mcp_string(dream_error_last()), "tool", t->name);
    } else {
        struct dream_reader_params p;
        dream_reader_default_params(&p);
        if (m->wiki) p.wiki = m->wiki;
        if (m->store) p.store = m->store;
        /* conversations reads the store alone, as `dream search --conversations` does */
        p.wiki_optional = dream_read_tool_wiki_optional(t->name) || t->search_conversations;
        dream_reader *r = NULL;
        json_t *search = NULL;
        if (t->search_conversations && !(search = json_deep_copy(args))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else if (search && json_object_set_new(search, "conversations", json_true())) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else if (search && p.store && !p.store[0])
            rc = dream_error_set(DREAM_EINVAL, "%s searches the store, and this server was started without one (--store '')", t->name);
        if (!rc) rc = dream_reader_open(&p, &r);
        if (rc) {
            out = json_pack("{s:o}", "error", mcp_string(dream_error_last()));
        } else {
            rc = dream_read_call(r, search ? "search" : t->name, search ? search : args, &out);
            dream_reader_close(r);
            if (rc && !out) out = json_pack("{s:o}", "error", mcp_string(dream_error_last()));
        }
        json_decref(search);
    }
    json_decref(empty);
    return mcp_result(id, mcp_tool_result(out, rc != 0));
}

/* Whether a string of v (at any depth) holds a NUL character (JSON's \u0000, which the decoder
 * lets through so that the request keeps its id). */
static bool mcp_holds_nul(const json_t *v)
{
    if (json_is_string(v)) return strlen(json_string_value(v)) != json_string_length(v);
    size_t i;
    const char *k;
    const json_t *e;
    if (json_is_array(v)) json_array_foreach(v, i, e) if (mcp_holds_nul(e)) return true;
    if (json_is_object(v)) json_object_foreach((json_t *)v, k, e) if (mcp_holds_nul(e)) return true;
    return false;
}

/* One message (not a batch). *bad is set when it was not a JSON-RPC message at all. */
static json_t *mcp_one(dream_mcp *m, const json_t *msg, bool *bad)
{
    if (!json_is_object(msg)) return *bad = true, mcp_error(NULL, DREAM_MCP_INVALID_REQUEST, NULL, "a JSON-RPC message is an object");
    json_t *id = json_object_get(msg, "id"), *method = json_object_get(msg, "method"), *params = json_object_get(msg, "params");
    if (id && ((!json_is_string(id) && !json_is_integer(id)) || mcp_holds_nul(id)))
        return *bad = true, mcp_error(NULL, DREAM_MCP_INVALID_REQUEST, NULL, "\"id\" must be a string or an integer");
    if (mcp_holds_nul(msg))
        return id ? mcp_error(id, DREAM_MCP_INVALID_PARAMS, NULL, "a string of the request holds \\u0000 (a NUL character), which no "
                                                             "name, query or method may hold")
                  : NULL; /* a notification is never answered */
    if (!json_is_string(json_object_get(msg, "jsonrpc")) || strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0"))
        return *bad = true, mcp_error(id, DREAM_MCP_INVALID_REQUEST, NULL, "\"jsonrpc\" must be \"2.0\"");
    if (!method) {
        /* a response to a request of ours: we send none, so there is nothing to do */
        if (id && (json_object_get(msg, "result") || json_object_get(msg, "error"))) return NULL;
        return *bad = true, mcp_error(id, DREAM_MCP_INVALID_REQUEST, NULL, "a request needs \"method\", a string");
    }
    if (!json_is_string(method)) return *bad = true, mcp_error(id, DREAM_MCP_INVALID_REQUEST, NULL, "\"method\" must be a string");
    if (!id) return NULL; /* a notification is never answered, whatever it says */
    const char *name = json_string_value(method);
    if (params && !json_is_object(params)) return mcp_error(id, DREAM_MCP_INVALID_PARAMS, NULL, "\"params\" must be an object");
    if (!strcmp(name, "initialize")) return mcp_initialize(m, id, params);
    if (!strcmp(name, "ping")) return mcp_result(id, json_object());
    bool known = !strcmp(name, "tools/list") || !strcmp(name, "tools/call");
    if (!known) return mcp_error(id, DREAM_MCP_METHOD_NOT_FOUND, NULL, "method not found: '%.*s' (this server has initialize, ping, tools/list and tools/call)", utf8_cut(name, 80), name);
    if (!m->stateless && !m->initialized) return mcp_error(id, DREAM_MCP_INVALID_REQUEST, NULL, "the session is not initialized: send initialize first");
    if (!strcmp(name, "tools/list")) return mcp_tools_list(id);
    return mcp_tools_call(m, id, params);
}

int dream_mcp_handle(dream_mcp *m, const char *msg, size_t len, json_t **reply)
{
    *reply = NULL;
    json_error_t je;
    json_t *root = json_loadb(msg, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!root) {
        *reply = mcp_error(NULL, DREAM_MCP_PARSE_ERROR, NULL, "parse error: %s (line %d, column %d)", je.text, je.line, je.column);
        return *reply ? DREAM_EFORMAT : DREAM_ENOMEM;
    }
    bool bad = false;
    if (!json_is_array(root)) {
        *reply = mcp_one(m, root, &bad);
    } else if (json_array_size(root) == 0) {
        bad = true;
        *reply = mcp_error(NULL, DREAM_MCP_INVALID_REQUEST, NULL, "an empty batch");
    } else { /* a JSON-RPC batch (protocol versions before 2025-06-18): one answer per request */
        json_t *all = json_array(), *one;
        size_t i;
        bool bad_one = false;
        json_array_foreach(root, i, one)
        {
            json_t *r = mcp_one(m, one, &bad_one);
            if (r && all) json_array_append_new(all, r);
            else json_decref(r);
        }
        if (all && json_array_size(all) == 0) json_decref(all), all = NULL;
        *reply = all;
    }
    json_decref(root);
    return bad ? DREAM_EFORMAT : 0;
}
