/* chat.c — `dream generate --chat` renders through the seam's prompt path, the same one the
 * stages use. */
#include "dream/model.h"

int cli_render_chat(dream_model *m, const char *system, const char *user, struct dream_tokens *out)
{
    return dream_prompt_tokens(m, system, user, out);
}
