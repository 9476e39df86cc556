/* stages.c — the stage registry: names and default system turns.
 *
 * The wording is ours; the intent follows the seed: short directives that reinforce each
 * stage's own instructions. `chunk` has none on purpose: the chunk stage passes its exact
 * system text, the one its adapter was trained with. */
#include "dream/model.h"

#include <string.h>

static const struct {
    const char *stage;
    const char *system;
} registry[] = {
    {"entity", "You name the subjects a conversation excerpt is about. Reply with one wiki article title per line "
               "and nothing else."},
    {"route", "Reply with exactly one word: yes or no."},
    {"section", "You decide where a conversation excerpt belongs in an article. Follow the instructions in the "
                "message and answer briefly, without preamble."},
    {"synthesis", "You write encyclopedia articles from a person's own conversations. Follow the editorial "
                  "instructions in the message exactly and reply with only the requested article text."},
    {"editor", "You edit one section of an encyclopedia article. Follow the editorial instructions in the message "
               "exactly and reply with only the requested text."},
    {"answer", "You answer a person's question from their own notes only. Reply with the answer and its footnote "
               "markers and nothing else, or exactly NOTHING ON FILE."},
};

const char *dream_stage_default_system(const char *stage)
{
    if (!stage) return NULL;
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (!strcmp(registry[i].stage, stage)) return registry[i].system;
    return NULL;
}
