/* test_mcp.c — the MCP server's JSON-RPC handling (dream/mcp.h) on the hand-written vault
 * tests/data/vault: the error codes for malformed messages, version negotiation, the tool list
 * and its schemas, tool calls and tool errors with near candidates, and the stdio loop.
 * argv: VAULT_DIR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dream/error.h"
#include "dream/mcp.h"
#include "dream/read.h"
#include "dream/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *vault_dir;

static dream_mcp *session(bool stateless)
{
    struct dream_mcp_params p;
    dream_mcp_default_params(&p);
    p.wiki = vault_dir;
    p.store = "";
    p.stateless = stateless;
    dream_mcp *m = dream_mcp_new(&p);
    assert_non_null(m);
    return m;
}

/* Handles msg; checks the return code; returns the reply (may be NULL). */
static json_t *call(dream_mcp *m, const char *msg, int want_rc)
{
    json_t *reply = (json_t *)1;
    int rc = dream_mcp_handle(m, msg, strlen(msg), &reply);
    if (rc != want_rc) fail_msg("'%s': rc %d, want %d", msg, rc, want_rc);
    return reply;
}

/* The error code of a reply (0 when it is a result), checking the JSON-RPC envelope. */
static int error_code(const json_t *reply)
{
    assert_non_null(reply);
    assert_string_equal(json_string_value(json_object_get(reply, "jsonrpc")), "2.0");
    assert_non_null(json_object_get(reply, "id"));
    json_t *err = json_object_get(reply, "error");
    if (!err) {
        assert_non_null(json_object_get(reply, "result"));
        return 0;
    }
    assert_non_null(json_string_value(json_object_get(err, "message")));
    return (int)json_integer_value(json_object_get(err, "code"));
}

static void expect_error(dream_mcp *m, const char *msg, int want_rc, int want_code)
{
    json_t *r = call(m, msg, want_rc);
    if (error_code(r) != want_code) fail_msg("'%s': code %d, want %d", msg, error_code(r), want_code);
    json_decref(r);
}

static void test_mcp_malformed_messages_get_jsonrpc_error_codes(void **state)
{
    dream_mcp *m = session(true);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,", DREAM_EFORMAT, DREAM_MCP_PARSE_ERROR);
    expect_error(m, "not json", DREAM_EFORMAT, DREAM_MCP_PARSE_ERROR);
    expect_error(m, "\xff\xfe", DREAM_EFORMAT, DREAM_MCP_PARSE_ERROR);
    /* a key twice: which one counts is not the server's guess to make (before, the last won) */
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"method\":\"ping\"}", DREAM_EFORMAT, DREAM_MCP_PARSE_ERROR);
    expect_error(m, "42", DREAM_EFORMAT, DREAM_MCP_INVALID_REQUEST);
    expect_error(m, "[]", DREAM_EFORMAT, DREAM_MCP_INVALID_REQUEST);
    expect_error(m, "{\"id\":1,\"method\":\"ping\"}", DREAM_EFORMAT, DREAM_MCP_INVALID_REQUEST);
    expect_error(m, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", DREAM_EFORMAT, DREAM_MCP_INVALID_REQUEST);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", DREAM_EFORMAT, DREAM_MCP_INVALID_REQUEST);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", DREAM_EFORMAT, DREAM_MCP_INVALID_REQUEST);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", DREAM_EFORMAT, DREAM_MCP_INVALID_REQUEST);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1}", DREAM_EFORMAT, DREAM_MCP_INVALID_REQUEST);
    /* a bad id is answered with id null */
    json_t *r = call(m, "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", DREAM_EFORMAT);
    assert_true(json_is_null(json_object_get(r, "id")));
    json_decref(r);
    /* well-formed requests that ask for what is not there */
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}", 0, DREAM_MCP_METHOD_NOT_FOUND);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}", 0, DREAM_MCP_INVALID_PARAMS);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}", 0, DREAM_MCP_INVALID_PARAMS);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", 0, DREAM_MCP_INVALID_PARAMS);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"delete\"}}", 0, DREAM_MCP_INVALID_PARAMS);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":\"Sourdough\"}}", 0,
                 DREAM_MCP_INVALID_PARAMS);
    /* an unknown tool's error names the tools there are */
    r = call(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"delete\"}}", 0);
    assert_int_equal(json_array_size(json_object_get(json_object_get(json_object_get(r, "error"), "data"), "tools")), 10);
    json_decref(r);
    /* valid JSON with \u0000 in a string: answered under its own id (before, a parse error with
     * id null, so the client waited for id 42 for ever); a notification still gets nothing */
    r = call(m, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":{\"name\":\"search\","
                "\"arguments\":{\"query\":\"a\\u0000b\"}}}",
             0);
    assert_int_equal(error_code(r), DREAM_MCP_INVALID_PARAMS);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 42);
    json_decref(r);
    assert_null(call(m, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":{\"a\":\"\\u0000\"}}", 0));
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000\",\"method\":\"ping\"}", DREAM_EFORMAT, DREAM_MCP_INVALID_REQUEST);
    /* the id comes back as it was sent */
    r = call(m, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}", 0);
    assert_int_equal(error_code(r), 0);
    assert_string_equal(json_string_value(json_object_get(r, "id")), "abc");
    json_decref(r);
    dream_mcp_free(m);
}

static void test_mcp_notifications_and_responses_get_no_answer(void **state)
{
    dream_mcp *m = session(true);
    assert_null(call(m, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 0));
    assert_null(call(m, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}", 0));
    assert_null(call(m, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}", 0)); /* a notification, even of a request's method */
    assert_null(call(m, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}", 0));
    /* a batch: one answer per request, in order, none for the notification */
    json_t *r = call(m, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},"
                        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}]",
                     0);
    assert_int_equal(json_array_size(r), 2);
    assert_int_equal(error_code(json_array_get(r, 0)), 0);
    assert_int_equal(error_code(json_array_get(r, 1)), DREAM_MCP_METHOD_NOT_FOUND);
    json_decref(r);
    assert_null(call(m, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]", 0));
    dream_mcp_free(m);
}

static void test_mcp_initialize_negotiates_the_version(void **state)
{
    dream_mcp *m = session(false);
    /* a session refuses tools until initialized; ping is always answered */
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", 0, DREAM_MCP_INVALID_REQUEST);
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 0, 0);
    const char *fmt = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                      "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    const char *asked[] = {"2025-06-18", "2024-11-05", DREAM_MCP_LATEST_VERSION, "2099-01-01", "x"};
    const char *want[] = {"2025-06-18", "2024-11-05", DREAM_MCP_LATEST_VERSION, DREAM_MCP_LATEST_VERSION, DREAM_MCP_LATEST_VERSION};
    for (size_t i = 0; i < 5; i++) {
        char msg[512];
        snprintf(msg, sizeof msg, fmt, asked[i]);
        json_t *r = call(m, msg, 0);
        assert_int_equal(error_code(r), 0);
        json_t *res = json_object_get(r, "result");
        assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")), want[i]);
        assert_string_equal(json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name")), "dream");
        assert_non_null(json_object_get(json_object_get(res, "capabilities"), "tools"));
        json_decref(r);
    }
    assert_true(dream_mcp_version_supported("2025-03-26"));
    assert_false(dream_mcp_version_supported("2025-03-27"));
    expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", 0, 0);
    dream_mcp_free(m);
}

static void test_mcp_tools_list_names_every_read_tool_with_a_schema(void **state)
{
    dream_mcp *m = session(true);
    json_t *r = call(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{}}", 0);
    json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
    const char *names[] = {"resolve", "read", "section", "links", "infobox", "list", "category", "search", "conversations", "status"};
    assert_int_equal(json_array_size(tools), 10);
    for (size_t i = 0; i < 10; i++) {
        json_t *t = json_array_get(tools, i);
        assert_string_equal(json_string_value(json_object_get(t, "name")), names[i]);
        assert_true(strlen(json_string_value(json_object_get(t, "description"))) > 20);
        json_t *s = json_object_get(t, "inputSchema");
        assert_string_equal(json_string_value(json_object_get(s, "type")), "object");
        assert_true(json_is_object(json_object_get(s, "properties")));
        assert_true(json_is_false(json_object_get(s, "additionalProperties")));
    }
    json_decref(r);
    dream_mcp_free(m);
}

/* Calls a tool with arguments (JSON text); returns the parsed text content; sets *is_error. */
static json_t *tool(dream_mcp *m, const char *name, const char *args, bool *is_error, size_t *text_len)
{
    char msg[2048];
    snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}", name, args);
    json_t *r = call(m, msg, 0);
    if (error_code(r) != 0) fail_msg("%s %s: a JSON-RPC error: %s", name, args, json_dumps(r, 0));
    json_t *res = json_object_get(r, "result");
    *is_error = json_is_true(json_object_get(res, "isError"));
    json_t *content = json_object_get(res, "content");
    assert_int_equal(json_array_size(content), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "type")), "text");
    const char *text = json_string_value(json_object_get(json_array_get(content, 0), "text"));
    if (text_len) *text_len = strlen(text);
    json_t *obj = json_loads(text, 0, NULL);
    assert_non_null(obj);
    json_decref(r);
    return obj;
}

static void test_mcp_tool_calls_answer_as_the_read_tools(void **state)
{
    dream_mcp *m = session(true);
    bool err;
    size_t len;
    json_t *o = tool(m, "resolve", "{\"name\":\"natural leaven\"}", &err, NULL);
    assert_false(err);
    assert_string_equal(json_string_value(json_object_get(o, "stem")), "Sourdough");
    json_decref(o);
    o = tool(m, "read", "{\"name\":\"Sourdough\"}", &err, &len);
    assert_false(err);
    assert_true(len < DREAM_READ_BUDGET);
    assert_true(json_array_size(json_object_get(o, "sections")) > 0);
    json_decref(o);
    o = tool(m, "read", "{\"name\":\"Sourdough\",\"whole\":true}", &err, NULL);
    assert_false(err);
    assert_non_null(strstr(json_string_value(json_object_get(o, "text")), "## Starter"));
    json_decref(o);
    o = tool(m, "section", "{\"name\":\"Sourdough\",\"anchor\":\"feeding-schedule\"}", &err, NULL);
    assert_false(err);
    assert_non_null(strstr(json_string_value(json_object_get(o, "text")), "twice"));
    json_decref(o);
    o = tool(m, "infobox", "{\"name\":\"Sourdough\"}", &err, NULL);
    assert_false(err);
    assert_true(json_array_size(json_object_get(o, "fields")) > 0);
    json_decref(o);
    o = tool(m, "links", "{\"name\":\"Sourdough\"}", &err, NULL);
    assert_false(err);
    json_decref(o);
    o = tool(m, "list", "{\"limit\":2,\"offset\":1}", &err, NULL);
    assert_false(err);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 6);
    assert_int_equal(json_array_size(json_object_get(o, "articles")), 2);
    json_decref(o);
    o = tool(m, "category", "{\"category\":\"Baking\"}", &err, NULL);
    assert_false(err);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 1);
    json_decref(o);
    o = tool(m, "search", "{\"query\":\"rye flour\"}", &err, NULL);
    assert_false(err);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(o, "results"), 0), "stem")), "Sourdough");
    json_decref(o);
    o = tool(m, "status", "{}", &err, NULL);
    assert_false(err);
    assert_int_equal(json_integer_value(json_object_get(o, "articles")), 6);
    json_decref(o);
    /* arguments may be left out when a tool needs none */
    json_t *r = call(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"status\"}}", 0);
    assert_false(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
    json_decref(r);
    dream_mcp_free(m);
}

static void test_mcp_tool_errors_carry_the_near_candidates(void **state)
{
    dream_mcp *m = session(true);
    bool err;
    json_t *o = tool(m, "read", "{\"name\":\"Sourdoh\"}", &err, NULL);
    assert_true(err);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(o, "candidates"), 0), "stem")), "Sourdough");
    json_decref(o);
    o = tool(m, "section", "{\"name\":\"Sourdough\",\"anchor\":\"nowhere\"}", &err, NULL);
    assert_true(err);
    assert_true(json_array_size(json_object_get(o, "anchors")) > 0);
    json_decref(o);
    /* arguments that do not fit the schema: a tool error that says which */
    const char *bad[][3] = {
        {"read", "{}", "needs the argument 'name'"},
        {"read", "{\"name\":3}", "must be a string"},
        {"read", "{\"name\":\"Sourdough\",\"whole\":\"yes\"}", "must be a boolean"},
        {"resolve", "{\"name\":\"x\",\"path\":\"/etc/passwd\"}", "takes no argument 'path'"},
        {"list", "{\"limit\":101}", "from 1 to 100"},
        {"list", "{\"offset\":-1}", "from 0 to 100000000"},
        {"list", "{\"limit\":1.5}", "must be an integer"},
        {"category", "{}", "exactly one"},
        {"category", "{\"kind\":\"a\",\"type\":\"b\"}", "exactly one"},
        {"search", "{\"limit\":3}", "needs the argument 'query'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o = tool(m, bad[i][0], bad[i][1], &err, NULL);
        if (!err) fail_msg("%s %s: no tool error", bad[i][0], bad[i][1]);
        const char *msg = json_string_value(json_object_get(o, "error"));
        if (!msg || !strstr(msg, bad[i][2])) fail_msg("%s %s: '%s' does not say '%s'", bad[i][0], bad[i][1], msg, bad[i][2]);
        json_decref(o);
    }
    dream_mcp_free(m);
    /* a wiki that is not there: a tool error that names it, not a crash */
    struct dream_mcp_params p;
    dream_mcp_default_params(&p);
    p.wiki = "/nonexistent/dream-wiki";
    p.store = "";
    p.stateless = true;
    m = dream_mcp_new(&p);
    o = tool(m, "list", "{}", &err, NULL);
    assert_true(err);
    assert_non_null(strstr(json_string_value(json_object_get(o, "error")), "/nonexistent/dream-wiki"));
    json_decref(o);
    /* status answers all the same, as `dream status` does before `dream init` */
    o = tool(m, "status", "{}", &err, NULL);
    assert_false(err);
    assert_true(json_is_false(json_object_get(o, "wiki_exists")));
    assert_string_equal(json_string_value(json_object_get(o, "wiki")), "/nonexistent/dream-wiki");
    json_decref(o);
    dream_mcp_free(m);
}

static void test_mcp_stdio_answers_a_line_per_request(void **state)
{
    size_t huge = DREAM_MCP_MAX_MESSAGE + 10;
    char *input = malloc(huge + 1024);
    assert_non_null(input);
    int n = snprintf(input, 1024,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}\n"
                     "\n   \n"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n"
                     "{oops\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"resolve\",\"arguments\":{\"name\":\"Sourdough\"}}}\n");
    memset(input + n, ' ', huge);
    memcpy(input + n + huge - 2, "{}", 2);
    input[n + huge] = '\n';
    n += (int)huge + 1;
    n += snprintf(input + n, 200, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    FILE *in = fmemopen(input, (size_t)n, "r");
    char *outbuf = NULL;
    size_t outlen = 0;
    FILE *out = open_memstream(&outbuf, &outlen);
    dream_mcp *m = session(false);
    assert_int_equal(dream_mcp_stdio(m, in, out), 0);
    fclose(in);
    fclose(out);
    dream_mcp_free(m);
    free(input);
    /* five answers: initialize, the parse error, the call, the oversized line, the ping */
    int want[] = {0, DREAM_MCP_PARSE_ERROR, 0, DREAM_MCP_INVALID_REQUEST, 0};
    int lines = 0;
    for (char *save = NULL, *line = strtok_r(outbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++) {
        json_t *r = json_loads(line, 0, NULL);
        assert_non_null(r);
        assert_true(lines < 5);
        assert_int_equal(error_code(r), want[lines]);
        json_decref(r);
    }
    assert_int_equal(lines, 5);
    free(outbuf);
}

/* The conversations tool searches the store's messages, never the wiki: a real store of two
 * conversations, each hit cited as a footnote cites, since/until by day, and a clear tool error
 * for a server with no store or a malformed day. */
static void test_mcp_conversations_searches_the_stored_messages(void **state)
{
    (void)state;
    char dir[] = "/tmp/dream-test-mcp-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/memory.sqlite", dir);
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(path, &s), 0);
    const int64_t jan = INT64_C(1704844800000), jun = INT64_C(1717977600000); /* 2024-01-10, 2024-06-10 */
    struct dream_message m1[] = {{"user", "a-m0", jan, "My rye starter doubles in five hours now."},
                                 {"assistant", "a-m1", jan + 1000, "Good: feed it before it falls."}};
    struct dream_message m2[] = {{"user", "b-m0", jun, "The rye loaf came out dense again."}};
    struct dream_conversation c1 = {"openai-jsonl", "a", "Rye starter", jan, jan, "test", m1, 2};
    struct dream_conversation c2 = {"openai-jsonl", "b", "Dense loaf", jun, jun, "test", m2, 1};
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c1, &o), 0);
    assert_int_equal(dream_store_put(s, &c2, &o), 0);
    dream_store_close(s);

    struct dream_mcp_params p;
    dream_mcp_default_params(&p);
    p.wiki = vault_dir;
    p.store = path;
    p.stateless = true;
    dream_mcp *m = dream_mcp_new(&p);
    assert_non_null(m);
    bool err;
    json_t *r = tool(m, "conversations", "{\"query\":\"rye\"}", &err, NULL);
    assert_false(err);
    assert_null(json_object_get(r, "results")); /* messages only, not the vault's articles */
    json_t *hits = json_object_get(r, "conversations");
    assert_int_equal(json_array_size(hits), 2);
    for (size_t i = 0; i < 2; i++) {
        const char *cite = json_string_value(json_object_get(json_array_get(hits, i), "cite"));
        assert_non_null(cite);
        assert_true(strncmp(cite, "conv:", 5) == 0 && (strstr(cite, "#a-m0") || strstr(cite, "#b-m0")));
    }
    json_decref(r);
    r = tool(m, "conversations", "{\"query\":\"rye\",\"since\":\"2024-03-01\"}", &err, NULL);
    assert_false(err);
    hits = json_object_get(r, "conversations");
    assert_int_equal(json_array_size(hits), 1);
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(hits, 0), "cite")), "#b-m0"));
    json_decref(r);
    r = tool(m, "conversations", "{\"query\":\"rye\",\"until\":\"2024-01\"}", &err, NULL);
    assert_true(err);
    assert_non_null(strstr(json_string_value(json_object_get(r, "error")), "YYYY-MM-DD"));
    json_decref(r);
    dream_mcp_free(m);

    /* the messages need no wiki, as `dream search --conversations` needs none (before: "no wiki
     * at ..., create one with dream init") */
    char nowiki[96];
    snprintf(nowiki, sizeof nowiki, "%s/no-wiki", dir);
    p.wiki = nowiki;
    m = dream_mcp_new(&p);
    assert_non_null(m);
    r = tool(m, "conversations", "{\"query\":\"rye\"}", &err, NULL);
    assert_false(err);
    assert_int_equal(json_array_size(json_object_get(r, "conversations")), 2);
    json_decref(r);
    dream_mcp_free(m);
    p.wiki = vault_dir;

    /* a store path with no store there: an error, not the wiki's article hits in the
     * conversations' place (before, isError false with articles, and the bad day let through) */
    char none[96];
    snprintf(none, sizeof none, "%s/none.sqlite", dir);
    p.store = none;
    m = dream_mcp_new(&p);
    assert_non_null(m);
    r = tool(m, "conversations", "{\"query\":\"rye\",\"since\":\"not-a-day\"}", &err, NULL);
    assert_true(err);
    assert_non_null(strstr(json_string_value(json_object_get(r, "error")), "there is no store to read them from"));
    json_decref(r);
    r = tool(m, "search", "{\"query\":\"rye\",\"until\":\"2024-01-01\"}", &err, NULL);
    assert_true(err);
    json_decref(r);
    dream_mcp_free(m);

    m = session(true); /* --store '': nothing to search, and it says so */
    r = tool(m, "conversations", "{\"query\":\"rye\"}", &err, NULL);
    assert_true(err);
    assert_non_null(strstr(json_string_value(json_object_get(r, "error")), "without one"));
    json_decref(r);
    dream_mcp_free(m);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s VAULT_DIR\n", argv[0]);
        return 2;
    }
    vault_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mcp_malformed_messages_get_jsonrpc_error_codes),
        cmocka_unit_test(test_mcp_notifications_and_responses_get_no_answer),
        cmocka_unit_test(test_mcp_initialize_negotiates_the_version),
        cmocka_unit_test(test_mcp_tools_list_names_every_read_tool_with_a_schema),
        cmocka_unit_test(test_mcp_tool_calls_answer_as_the_read_tools),
        cmocka_unit_test(test_mcp_tool_errors_carry_the_near_candidates),
        cmocka_unit_test(test_mcp_stdio_answers_a_line_per_request),
        cmocka_unit_test(test_mcp_conversations_searches_the_stored_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
