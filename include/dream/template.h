/*
 * template.h — chat templates: a Jinja2 engine that renders Hugging Face chat templates.
 *
 * A template is parsed once (dream_template_parse) and rendered many times, from any number of
 * threads at once (rendering never modifies the template). Rendering follows Jinja2 as Hugging
 * Face's transformers sets it up for chat templates: trim_blocks and lstrip_blocks on, the
 * loopcontrols extension (break/continue), the {% generation %} block tag, `tojson` as
 * json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=False), and the
 * globals raise_exception(msg) and strftime_now(fmt).
 *
 * Templates are untrusted input: there is no file or network access, and every render is
 * bounded by limits on recursion depth, loop iterations, output size and memory. Errors carry
 * the template's line and column ("template:12:5: unknown filter 'frobnicate'").
 *
 * The render also reports which byte ranges of its output came from caller data (message
 * contents, tool-call arguments, reasoning, tool definitions — every string the caller passed)
 * rather than from the template's own text, so the tokenizer can keep conversation text from
 * ever producing a control token (DESIGN.md §4). bos_token and eos_token are template text.
 */
#ifndef DREAM_TEMPLATE_H
#define DREAM_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dream/engine.h" /* struct dream_span */

#ifdef __cplusplus
extern "C" {
#endif

struct json_t; /* jansson's json_t */

typedef struct dream_template dream_template;

/* Limits on one render. A limit that is hit fails the render with DREAM_ELIMIT. */
struct dream_template_limits {
    int max_depth;                /* nested macro/caller calls (default 200) */
    int64_t max_loop_iterations;  /* loop iterations in one render, all loops together (1,000,000) */
    size_t max_output_bytes;      /* bytes of output, captured blocks included (64 MiB) */
    size_t max_memory_bytes;      /* scratch memory of one render (512 MiB) */
};

/* Enable-thinking value meaning "leave the variable undefined". */
#define DREAM_TEMPLATE_UNSET (-1)

/* Render options. Always start from dream_template_default_params(), so that fields added
 * later keep their defaults. */
struct dream_template_params {
    bool add_generation_prompt; /* default false */
    int enable_thinking;        /* 0, 1, or DREAM_TEMPLATE_UNSET (default: unset) */
    const char *bos_token;      /* NULL leaves bos_token undefined (default NULL) */
    const char *eos_token;      /* NULL leaves eos_token undefined (default NULL) */
    bool use_fixed_now;         /* strftime_now() reports fixed_now, not the local clock */
    int64_t fixed_now;          /* seconds since the epoch, shown as UTC (for tests) */
    struct dream_template_limits limits;
};

void dream_template_default_params(struct dream_template_params *params);

/* One chat message with plain-text content. The content is caller data (its bytes are
 * reported in the render's spans); the role is a name the program chose and counts as template
 * text. Callers passing roles from untrusted input use dream_template_render_json. */
struct dream_chat_message {
    const char *role;    /* "system", "user", "assistant", "tool", ... */
    const char *content; /* NUL-terminated UTF-8; NULL renders as none */
};

/* What to render: messages plus options. extra (optional) is a JSON object of further variables
 * (tools, documents, anything the template reads); its strings count as caller data. */
struct dream_chat_input {
    const struct dream_chat_message *messages;
    size_t n_messages;
    const struct json_t *extra;
    struct dream_template_params params;
};

/* A rendered prompt. spans are the byte ranges of text that came from caller data: sorted,
 * non-overlapping, non-empty, merged where adjacent. */
struct dream_render {
    char *text; /* NUL-terminated; owned, freed by dream_render_free */
    size_t len;
    struct dream_span *spans;
    size_t n_spans;
};

/* Parses a template (len bytes of UTF-8, need not be NUL-terminated) into *out.
 * @return 0 on success; DREAM_EFORMAT on a syntax error (the message gives line:column),
 *         DREAM_ENOMEM, DREAM_ETOOBIG (nesting too deep). The caller frees *out with
 *         dream_template_free. */
int dream_template_parse(const char *source, size_t len, dream_template **out);

void dream_template_free(dream_template *tmpl);

/* Renders messages with the template into *out (which the caller frees with
 * dream_render_free, also after an error).
 * @return 0 on success; DREAM_EFORMAT when the template raises (raise_exception, undefined
 *         attribute, type error; the message gives line:column), DREAM_ELIMIT when a limit is
 *         hit, DREAM_ENOMEM, DREAM_EINVAL for bad arguments. */
int dream_template_render(const dream_template *tmpl, const struct dream_chat_input *in,
                          struct dream_render *out);

/* Renders with every variable taken from a JSON object (messages, tools, documents, any
 * extra variable; a message's content may be a string, null or a list of parts). params adds
 * add_generation_prompt, enable_thinking, bos_token and eos_token unless context sets them.
 * Every string of context counts as caller data. Returns as dream_template_render. */
int dream_template_render_json(const dream_template *tmpl, const struct json_t *context,
                               const struct dream_template_params *params, struct dream_render *out);

void dream_render_free(struct dream_render *r);

#ifdef __cplusplus
}
#endif
#endif
