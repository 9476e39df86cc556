/* chat.c — rendering `dream generate --chat` input. Until the template engine lands this is a
 * clear error rather than a guess at the model's format. */
#include "dream/engine.h"
#include "dream/error.h"

int cli_render_chat(dream_model *m, const char *system, const char *user, struct dream_tokens *out)
{
    (void)m, (void)system, (void)user, (void)out;
    return dream_error_set(DREAM_EINVAL, "--chat needs the chat-template engine, which this build does not have yet; use --prompt");
}
