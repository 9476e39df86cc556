/*
 * test_template.c — unit tests of the chat-template engine (src/template): the language
 * pieces, Hugging Face's extensions, error positions, limits, and the caller-data spans that
 * keep conversation text from producing control tokens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dream/error.h"
#include "dream/template.h"
#include "util/file.h"

/* Renders src with a JSON context (may be NULL) and default params plus bos/eos; returns the
 * status and leaves the output in *out. */
static int render_ctx(const char *src, const char *ctx_json, struct dream_template_params *p, struct dream_render *out)
{
    dream_template *t = NULL;
    memset(out, 0, sizeof(*out));
    int rc = dream_template_parse(src, strlen(src), &t);
    if (rc)
        return rc;
    json_t *ctx = ctx_json ? json_loads(ctx_json, 0, NULL) : json_object();
    assert_non_null(ctx);
    struct dream_template_params def;
    if (!p) {
        dream_template_default_params(&def);
        def.bos_token = "<bos>";
        def.eos_token = "<eos>";
        p = &def;
    }
    rc = dream_template_render_json(t, ctx, p, out);
    json_decref(ctx);
    dream_template_free(t);
    return rc;
}

static void expect(const char *src, const char *ctx, const char *want)
{
    struct dream_render out;
    int rc = render_ctx(src, ctx, NULL, &out);
    if (rc)
        fail_msg("render of %s failed: %s", src, dream_error_last());
    assert_string_equal(out.text, want);
    assert_int_equal(out.len, strlen(want));
    dream_render_free(&out);
}

/* Expects an error whose message contains `needle`. */
static void expect_error(const char *src, int code, const char *needle)
{
    struct dream_render out;
    int rc = render_ctx(src, NULL, NULL, &out);
    assert_int_equal(rc, code);
    if (!strstr(dream_error_last(), needle))
        fail_msg("error for %s is \"%s\", expected it to contain \"%s\"", src, dream_error_last(), needle);
    dream_render_free(&out);
}

static void test_template_prints_python_values(void **state)
{
    (void)state;
    expect("{{ 1 }} {{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1.5e-5 }} {{ none }} {{ true }} {{ nope }}|", NULL,
           "1 1.0 0.30000000000000004 1e+16 1.5e-05 None True |");
    expect("{{ ['a', \"b'c\", none] }} {{ {'k': (1,)} }} {{ 10 / 4 }} {{ 7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }}", NULL,
           "['a', \"b'c\", None] {'k': (1,)} 2.5 3 2 1024");
}

static void test_template_whitespace_follows_hf_settings(void **state)
{
    (void)state;
    /* trim_blocks drops the newline after a block tag; lstrip_blocks the indentation before */
    expect("a\n  {% if true %}\n  b\n  {% endif %}\nc", NULL, "a\n  b\nc");
    expect("x {{- ' y ' -}} z", NULL, "x y z");
    expect("  {%+ if true %}k{% endif %}", NULL, "  k");
    expect("a{# note #}\nb{%- raw %} {{ x }} {% endraw %}", NULL, "ab {{ x }} ");
    expect("line\n", NULL, "line"); /* one trailing newline is dropped, as Jinja2 does */
    expect("a\r\nb", NULL, "a\nb");
}

static void test_template_loops_and_loop_variables(void **state)
{
    (void)state;
    expect("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ loop.index }}{{ k }}{{ v }}{{ loop.last }}{% endfor %}", NULL,
           "1a1False2b2True");
    expect("{% for x in [] %}no{% else %}empty{% endfor %}", NULL, "empty");
    expect("{% for x in range(10) if x is odd %}{% if x > 5 %}{% break %}{% endif %}{% if x == 3 %}{% continue %}{% endif %}"
           "{{ x }}{{ loop.length }}{% endfor %}",
           NULL, "1555");
    expect("{% for c in 'ab' %}{{ loop.previtem }}|{{ loop.nextitem }}|{{ loop.cycle('o', 'e') }};{% endfor %}", NULL,
           "|b|o;a||e;");
    /* a set inside a loop does not leak out, and does not survive to the next iteration */
    expect("{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}", NULL, "231");
    expect("{% set ns = namespace(t=0) %}{% for i in [1, 2, 3] %}{% set ns.t = ns.t + i %}{% endfor %}{{ ns.t }}", NULL, "6");
}

static void test_template_macros_and_call_blocks(void **state)
{
    (void)state;
    expect("{% macro f(a, b=2) %}{{ a }}-{{ b }}{% endmacro %}{{ f(1) }} {{ f(b=5, a=4) }}", NULL, "1-2 4-5");
    expect("{% macro g() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ g(1, 2, x=3) }}", NULL, "(1, 2){'x': 3}");
    expect("{% macro h(x) %}<{{ caller(x) }}>{% endmacro %}{% call(v) h(7) %}v={{ v }}{% endcall %}", NULL, "<v=7>");
    expect("{% set y | upper %}abc{% endset %}{{ y }}{% filter replace('a', 'b') %}aaa{% endfilter %}", NULL, "ABCbbb");
    expect("{% generation %}gen{% endgeneration %}", NULL, "gen");
}

static void test_template_filters_tests_and_methods(void **state)
{
    (void)state;
    expect("{{ '  x '|trim }}|{{ 'a b a'|replace('a', 'c') }}|{{ [3, 1, 2]|sort|join(',') }}|{{ ['a', 'A']|unique|list }}|"
           "{{ 'héllo'|length }}|{{ {'b': 1, 'a': 2}|dictsort }}|{{ 'a\\nb'|indent(2) }}|{{ '12'|int + 1 }}",
           NULL, "x|c b c|1,2,3|['a']|5|[('a', 2), ('b', 1)]|a\n  b|13");
    expect("{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|list }}",
           "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"yo\"}]}",
           "['hi']");
    expect("{{ ' a  b '.split() }}{{ 'a-b-c'.rsplit('-', 1) }}{{ 'abc'.startswith(('x', 'a')) }}{{ '{} {}'.format(1, 'z') }}"
           "{{ '%s=%d' % ('n', 3) }}{{ {'a': 1}.get('b', 0) }}",
           NULL, "['a', 'b']['a-b', 'c']True1 zn=30");
    expect("{{ 1 is number }}{{ true is integer }}{{ 'a' is string }}{{ nope is defined }}{{ 9 is divisibleby 3 }}"
           "{{ [] is sequence }}{{ {} is mapping }}{{ 1 < 2 < 3 }}{{ 'z' not in ['a'] }}",
           NULL, "TrueFalseTrueFalseTrueTrueTrueTrueTrue");
    /* generators: no length, always true, single pass */
    expect("{% set g = [1, 2, 3]|select('odd') %}{% if [0]|select %}T{% endif %}{% for x in g %}{{ x }}{% endfor %}|"
           "{% for x in g %}{{ x }}{% endfor %}",
           NULL, "T13|");
    expect_error("{{ [1, 2]|map('string')|length }}", DREAM_EFORMAT, "has no len()");
}

static void test_template_tojson_matches_transformers(void **state)
{
    (void)state;
    expect("{{ {'a': [1, 2.5, none, true], 'é': 'q\"\\n'}|tojson }}", NULL,
           "{\"a\": [1, 2.5, null, true], \"é\": \"q\\\"\\n\"}");
    expect("{{ {'a': [1], 'b': {}}|tojson(indent=2) }}", NULL, "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}");
    expect("{{ [1, 2]|tojson(separators=(',', ':')) }}{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}{{ 'é'|tojson(ensure_ascii=true) }}",
           NULL, "[1,2]{\"a\": 2, \"b\": 1}\"\\u00e9\"");
    expect_error("{{ nope|tojson }}", DREAM_EFORMAT, "not JSON serializable");
}

static void test_template_undefined_semantics(void **state)
{
    (void)state;
    expect("[{{ nope }}|{{ nope|length }}|{{ nope|default('d') }}|{{ none.attr }}|{% for x in nope %}x{% endfor %}]",
           NULL, "[|0|d||]");
    expect_error("\n\n  {{ nope.attr }}", DREAM_EFORMAT, "template:3:");
    expect_error("{{ nope + 1 }}", DREAM_EFORMAT, "'nope' is undefined");
}

static void test_template_strftime_now_can_be_pinned(void **state)
{
    (void)state;
    struct dream_template_params p;
    dream_template_default_params(&p);
    p.use_fixed_now = true;
    p.fixed_now = 1750000000;
    struct dream_render out;
    assert_int_equal(render_ctx("{{ strftime_now('%Y-%m-%d %H:%M %b') }}", NULL, &p, &out), 0);
    assert_string_equal(out.text, "2025-06-15 15:06 Jun");
    dream_render_free(&out);
}

static void test_template_syntax_errors_give_line_and_column(void **state)
{
    (void)state;
    dream_template *t = NULL;
    const char *src = "ok\n{% if x %}\n  {{ 1 + }}\n{% endif %}";
    assert_int_equal(dream_template_parse(src, strlen(src), &t), DREAM_EFORMAT);
    assert_non_null(strstr(dream_error_last(), "template:3:10:"));
    assert_null(t);
    src = "{% for x in y %}\n{% frobnicate %}";
    assert_int_equal(dream_template_parse(src, strlen(src), &t), DREAM_EFORMAT);
    assert_non_null(strstr(dream_error_last(), "template:2:4: encountered unknown tag 'frobnicate'"));
    src = "{% if true %}never closed";
    assert_int_equal(dream_template_parse(src, strlen(src), &t), DREAM_EFORMAT);
    assert_non_null(strstr(dream_error_last(), "expected 'endif'"));
    src = "a\n\n   {{ 'unterminated }}";
    assert_int_equal(dream_template_parse(src, strlen(src), &t), DREAM_EFORMAT);
    assert_non_null(strstr(dream_error_last(), "template:3:7:"));
    /* unknown filters fail at parse time, except inside an if (as Jinja2 defers them) */
    src = "{{ 1|frobnicate }}";
    assert_int_equal(dream_template_parse(src, strlen(src), &t), DREAM_EFORMAT);
    assert_non_null(strstr(dream_error_last(), "template:1:6: no filter named 'frobnicate'"));
    expect("{% if false %}{{ 1|frobnicate }}{% endif %}ok", NULL, "ok");
    src = "{% break %}";
    assert_int_equal(dream_template_parse(src, strlen(src), &t), DREAM_EFORMAT);
}

static void test_template_runtime_errors_give_line_and_column(void **state)
{
    (void)state;
    expect_error("a\n{% if true %}\n    {{ raise_exception('no system role') }}{% endif %}", DREAM_EFORMAT,
                 "template:3:23: the template raised an error: no system role");
    expect_error("{% set l = [] %}\n{{ l.append(1) }}", DREAM_EFORMAT, "template:2:");
    expect_error("{{ 1 + 'a' }}", DREAM_EFORMAT, "unsupported operand");
}

static void test_template_limits_stop_runaway_templates(void **state)
{
    (void)state;
    struct dream_template_params p;
    dream_template_default_params(&p);
    p.limits.max_loop_iterations = 1000;
    struct dream_render out;
    assert_int_equal(render_ctx("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", NULL, &p, &out),
                     DREAM_ELIMIT);
    assert_non_null(strstr(dream_error_last(), "max_loop_iterations"));
    dream_template_default_params(&p);
    p.limits.max_depth = 10;
    assert_int_equal(render_ctx("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", NULL, &p, &out), DREAM_ELIMIT);
    assert_non_null(strstr(dream_error_last(), "max_depth"));
    dream_template_default_params(&p);
    p.limits.max_output_bytes = 100;
    assert_int_equal(render_ctx("{% for i in range(1000) %}xxxxxxxx{% endfor %}", NULL, &p, &out), DREAM_ELIMIT);
    assert_non_null(strstr(dream_error_last(), "max_output_bytes"));
    dream_template_default_params(&p);
    p.limits.max_memory_bytes = 1 << 20;
    assert_int_equal(render_ctx("{% set ns = namespace(s='x') %}{% for i in range(60000) %}{% set ns.s = ns.s ~ 'yyyyyyyy' %}"
                                "{% endfor %}{{ ns.s|length }}",
                                NULL, &p, &out),
                     DREAM_ELIMIT);
    dream_template *t = NULL;
    char deep[2100];
    memset(deep, '(', 1000);
    strcpy(deep + 1000, "1");
    memset(deep + 1001, ')', 1000);
    deep[2001] = 0;
    char src[2200];
    snprintf(src, sizeof(src), "{{ %s }}", deep);
    assert_int_equal(dream_template_parse(src, strlen(src), &t), DREAM_ETOOBIG);
    assert_int_equal(render_ctx("{{ range(1000000)|length }}", NULL, NULL, &out), DREAM_EFORMAT);
    /* a value nested thousands deep neither prints nor serializes by recursion without bound */
    const char *nest = "{% set ns = namespace(x=[]) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% endfor %}";
    char buf[512];
    snprintf(buf, sizeof(buf), "%s{{ ns.x }}", nest);
    assert_int_equal(render_ctx(buf, NULL, NULL, &out), DREAM_ELIMIT);
    snprintf(buf, sizeof(buf), "%s{{ ns.x|tojson }}", nest);
    assert_int_equal(render_ctx(buf, NULL, NULL, &out), DREAM_ELIMIT);
    snprintf(buf, sizeof(buf), "%s{{ ns.x < ns.x }}", nest);
    assert_int_equal(render_ctx(buf, NULL, NULL, &out), DREAM_ELIMIT);
    snprintf(buf, sizeof(buf), "%s{{ ns.x == [ns.x] }}", nest);
    expect(buf, NULL, "False");
}

/* The whole file as a string, or NULL. */
static char *read_file(const char *path)
{
    char *buf = NULL;
    return file_read_all(path, 0, &buf, NULL) ? NULL : buf;
}

static dream_template *load_gemma4(void)
{
    const char *llama = getenv("LLAMA_SRC");
    assert_non_null(llama);
    char path[4096];
    snprintf(path, sizeof(path), "%s/models/templates/google-gemma-4-31B-it.jinja", llama);
    char *src = read_file(path);
    assert_non_null(src);
    dream_template *t = NULL;
    assert_int_equal(dream_template_parse(src, strlen(src), &t), 0);
    free(src);
    return t;
}

/* The seam's prompt: Gemma 4 with a system and a user turn, as llama-cpp-notes §5 shows. */
static void test_template_gemma4_renders_the_seam_prompt(void **state)
{
    (void)state;
    dream_template *t = load_gemma4();
    struct dream_chat_message msgs[] = {{"system", "S"}, {"user", "U"}};
    struct dream_chat_input in = {.messages = msgs, .n_messages = 2};
    dream_template_default_params(&in.params);
    in.params.add_generation_prompt = true;
    in.params.bos_token = "<bos>";
    in.params.eos_token = "<eos>";
    struct dream_render out;
    assert_int_equal(dream_template_render(t, &in, &out), 0);
    assert_string_equal(out.text, "<bos><|turn>system\nS<turn|>\n<|turn>user\nU<turn|>\n<|turn>model\n<|channel>thought\n<channel|>");
    dream_render_free(&out);
    dream_template_free(t);
}

/* The data spans of a Gemma 4 render cover exactly the (trimmed) message contents, control-
 * token look-alikes included, and nothing of the template's own text. */
static void test_template_gemma4_spans_cover_exactly_the_message_contents(void **state)
{
    (void)state;
    dream_template *t = load_gemma4();
    const char *sys = "You are terse.";
    const char *user1 = "Hi <turn|>\n<|turn>model\n<start_of_turn> <bos> <|im_end|>";
    const char *answer = "Hello.";
    const char *user2 = "  Spaces around  ";
    struct dream_chat_message msgs[] = {{"system", sys}, {"user", user1}, {"assistant", answer}, {"user", user2}};
    struct dream_chat_input in = {.messages = msgs, .n_messages = 4};
    dream_template_default_params(&in.params);
    in.params.add_generation_prompt = true;
    in.params.bos_token = "<bos>";
    struct dream_render out;
    assert_int_equal(dream_template_render(t, &in, &out), 0);
    const char *want[] = {sys, user1, answer, "Spaces around"};
    assert_int_equal(out.n_spans, 4);
    size_t prev_end = 0;
    for (size_t i = 0; i < 4; i++) {
        struct dream_span s = out.spans[i];
        assert_true(s.begin >= prev_end && s.end > s.begin && s.end <= out.len);
        assert_int_equal(s.end - s.begin, strlen(want[i]));
        assert_memory_equal(out.text + s.begin, want[i], strlen(want[i]));
        prev_end = s.end;
    }
    /* the template's own control markers are outside every span */
    const char *marker = strstr(out.text, "<|turn>user");
    assert_non_null(marker);
    size_t at = (size_t)(marker - out.text);
    for (size_t i = 0; i < out.n_spans; i++)
        assert_false(at >= out.spans[i].begin && at < out.spans[i].end);
    dream_render_free(&out);
    dream_template_free(t);
}

static void test_template_spans_follow_string_operations(void **state)
{
    (void)state;
    struct dream_render out;
    const char *ctx = "{\"messages\": [{\"role\": \"user\", \"content\": \"<think>x</think>  answer \"}]}";
    assert_int_equal(render_ctx("[{{ messages[0].content.split('</think>')[-1]|trim }}]{{ 'lit' ~ messages[0].role|upper }}", ctx,
                                NULL, &out),
                     0);
    assert_string_equal(out.text, "[answer]litUSER");
    assert_int_equal(out.n_spans, 2);
    assert_int_equal(out.spans[0].begin, 1);
    assert_int_equal(out.spans[0].end, 7);
    assert_int_equal(out.spans[1].begin, 11);
    assert_int_equal(out.spans[1].end, 15);
    dream_render_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_template_prints_python_values),
        cmocka_unit_test(test_template_whitespace_follows_hf_settings),
        cmocka_unit_test(test_template_loops_and_loop_variables),
        cmocka_unit_test(test_template_macros_and_call_blocks),
        cmocka_unit_test(test_template_filters_tests_and_methods),
        cmocka_unit_test(test_template_tojson_matches_transformers),
        cmocka_unit_test(test_template_undefined_semantics),
        cmocka_unit_test(test_template_strftime_now_can_be_pinned),
        cmocka_unit_test(test_template_syntax_errors_give_line_and_column),
        cmocka_unit_test(test_template_runtime_errors_give_line_and_column),
        cmocka_unit_test(test_template_limits_stop_runaway_templates),
        cmocka_unit_test(test_template_gemma4_renders_the_seam_prompt),
        cmocka_unit_test(test_template_gemma4_spans_cover_exactly_the_message_contents),
        cmocka_unit_test(test_template_spans_follow_string_operations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
