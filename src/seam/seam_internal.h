/* seam_internal.h — what the seam's files share. */
#ifndef DREAM_SEAM_INTERNAL_H
#define DREAM_SEAM_INTERNAL_H

#include "dream/model.h"
#include "dream/template.h"

/* Parses the model's chat template (an error names the model when it has none). */
int seam_parse_template(dream_model *m, dream_template **out);

/* Renders [system?, user] with t and tokenizes it injection-safely; appends to out. */
int seam_prompt_tokens(dream_model *m, const dream_template *t, const char *system, const char *user, struct dream_tokens *out);

/* Renders any conversation (roles chosen by the program, contents caller data) with the
 * generation prompt and tokenizes it injection-safely; appends to out. */
int seam_chat_tokens(dream_model *m, const dream_template *t, const struct dream_chat_message *msgs, size_t n,
                     struct dream_tokens *out);

/* Tells the watcher that input i of the call in progress is finished (answered or failed);
 * later reports of the same input are ignored. With op_lock held, on the calling thread. */
void seam_call_done(size_t i);

/* The remote backend as a value (what dream_seam_use_remote installs). silent: it does not
 * report its calls to the watcher (replay fetches gold answers with one, and the engine then
 * reports each call as it decodes it). The URL is checked as dream_seam_use_remote's. */
int seam_remote_new(const struct dream_remote_params *params, bool silent, struct dream_backend *out);

#endif
