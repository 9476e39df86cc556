/* prompt.c — the one prompt path: [system?, user] through the model's own chat template, then
 * the injection-safe tokenizer. Stages, `dream generate --chat` and the server all use it, so
 * what a stage sends is exactly what adapters are trained on. */
#include "dream/error.h"
#include "dream/model.h"
#include "dream/template.h"

#include "seam_internal.h"

#include <string.h>

int seam_parse_template(dream_model *m, dream_template **out)
{
    const char *src = dream_model_chat_template(m);
    if (!src)
        return dream_error_set(DREAM_EFORMAT, "the model %s has no chat template (tokenizer.chat_template); use a chat model", dream_model_path(m));
    int rc = dream_template_parse(src, strlen(src), out);
    return rc ? dream_error_wrap(rc, "the chat template of %s", dream_model_path(m)) : 0;
}

int seam_prompt_tokens(dream_model *m, const dream_template *t, const char *system, const char *user, struct dream_tokens *out)
{
    struct dream_chat_message msgs[2];
    size_t n = 0;
    if (system) msgs[n++] = (struct dream_chat_message){.role = "system", .content = system};
    msgs[n++] = (struct dream_chat_message){.role = "user", .content = user ? user : ""};
    return seam_chat_tokens(m, t, msgs, n, out);
}

int seam_chat_tokens(dream_model *m, const dream_template *t, const struct dream_chat_message *msgs, size_t n,
                     struct dream_tokens *out)
{
    int rc;
    struct dream_chat_input in = {.messages = msgs, .n_messages = n};
    dream_template_default_params(&in.params);
    in.params.add_generation_prompt = true;
    dream_token bos = dream_model_bos(m), eos = dream_model_eos(m);
    in.params.bos_token = bos >= 0 ? dream_model_token_text(m, bos) : NULL;
    in.params.eos_token = eos >= 0 ? dream_model_token_text(m, eos) : NULL;
    struct dream_render r = {0};
    rc = dream_template_render(t, &in, &r);
    if (!rc && r.len) rc = dream_tokenize_prompt(m, r.text, r.len, r.spans, r.n_spans, out);
    else if (rc) dream_error_wrap(rc, "rendering the chat template of %s", dream_model_path(m));
    if (!rc && (!r.len || out->n == 0)) {
        /* a template that ignores the messages (an empty or commented-out one) gives the model
         * nothing to read: the model's fault, said once, not an empty answer per call */
        dream_tokens_free(out);
        rc = dream_error_set(DREAM_EFORMAT,
                             "the chat template of %s renders nothing for a conversation of %zu message(s): the model's template is "
                             "unusable; use another model or remake this one with a working template",
                             dream_model_path(m), n);
    }
    dream_render_free(&r);
    return rc;
}

int dream_prompt_tokens(dream_model *m, const char *system, const char *user, struct dream_tokens *out)
{
    dream_template *t = NULL;
    int rc = seam_parse_template(m, &t);
    if (!rc) rc = seam_prompt_tokens(m, t, system, user, out);
    dream_template_free(t);
    return rc;
}
