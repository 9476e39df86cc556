/* format.c — the source formats' names (see include/dream/ingest.h), which the dispatcher and
 * the shared helpers both use; detection is in ingest.c. */
#include "dream/error.h"
#include "dream/ingest.h"

#include <string.h>

static const char *const format_names[] = {"auto", "chatgpt", "claude", "claude-code", "codex", "pi", "openai-jsonl"};

const char *dream_format_name(enum dream_format f)
{
    return (unsigned)f < sizeof format_names / sizeof format_names[0] ? format_names[f] : "unknown";
}

int dream_format_parse(const char *name, enum dream_format *out)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (!strcmp(name, format_names[i])) {
            *out = (enum dream_format)i;
            return 0;
        }
    return dream_error_set(DREAM_EINVAL, "unknown format '%s'; one of: chatgpt, claude, claude-code, codex, pi, openai-jsonl, auto", name);
}
