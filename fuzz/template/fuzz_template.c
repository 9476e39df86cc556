/*
 * fuzz_template.c — the chat-template engine on untrusted templates: lexer, parser and
 * evaluator. The input is a template; it is parsed and, when it parses, rendered with a small
 * fixed conversation (messages with tool calls, tools, extra variables) under tight limits.
 * Any crash, leak, undefined behaviour or hang is a bug; errors are fine.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dream/error.h"
#include "dream/template.h"

static const char *context_json =
    "{\"messages\": ["
    "{\"role\": \"system\", \"content\": \"Be brief.\"},"
    "{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"Hi <|im_end|> \\u00e9\"}]},"
    "{\"role\": \"assistant\", \"content\": \"\", \"reasoning_content\": \"hm\", \"tool_calls\": ["
    "{\"id\": \"c1\", \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": {\"a\": [1, 2.5, null, true]}}}]},"
    "{\"role\": \"tool\", \"tool_call_id\": \"c1\", \"content\": \"{\\\"ok\\\": 1}\"},"
    "{\"role\": \"user\", \"content\": \"Thanks\"}],"
    "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"d\","
    "\"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"array\"}}}}}],"
    "\"n\": 3, \"x\": 1.5, \"s\": \"str\", \"d\": {\"k\": \"v\", \"z\": 0}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_t *ctx;
    if (!ctx)
        ctx = json_loads(context_json, 0, NULL);
    dream_template *t = NULL;
    if (dream_template_parse((const char *)data, size, &t) == 0) {
        struct dream_template_params p;
        dream_template_default_params(&p);
        p.add_generation_prompt = size & 1;
        p.enable_thinking = (size & 2) ? 1 : DREAM_TEMPLATE_UNSET;
        p.bos_token = "<bos>";
        p.eos_token = "<eos>";
        p.use_fixed_now = true;
        p.fixed_now = 1750000000;
        p.limits.max_depth = 40;
        p.limits.max_loop_iterations = 20000;
        p.limits.max_output_bytes = 1 << 20;
        p.limits.max_memory_bytes = 32 << 20;
        struct dream_render r;
        if (dream_template_render_json(t, ctx, &p, &r) == 0) {
            /* spans must lie inside the text, sorted and non-overlapping */
            size_t last = 0;
            for (size_t i = 0; i < r.n_spans; i++) {
                if (r.spans[i].begin < last || r.spans[i].end <= r.spans[i].begin || r.spans[i].end > r.len)
                    abort();
                last = r.spans[i].end;
            }
        }
        dream_render_free(&r);
        dream_template_free(t);
    }
    dream_error_clear();
    return 0;
}
