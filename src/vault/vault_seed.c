/* vault_seed.c — the text of the files `dream init` seeds into a new vault.
 *
 * The Meta pages are policy that stage prompts inline at run time, so a person re-tunes the
 * Dreaming by editing them. They are schematic on purpose: a small model copies any concrete
 * example it sees into unrelated articles (spec, principle 8), so every example here is a
 * <placeholder> shape, never a real name or value. */
#include "vault_internal.h"

#include <string.h>

static const char readme[] =
    "# Memory wiki\n"
    "\n"
    "This directory is written by `dream`. It turns your conversations with AI assistants into\n"
    "articles, one per subject you keep coming back to.\n"
    "\n"
    "- `articles/` holds the articles. Every claim carries a footnote naming the conversation and\n"
    "  message it came from.\n"
    "- `Meta/` holds the policy pages the Dreaming reads before each step. Edit them to change how\n"
    "  it works; `dream init` never overwrites a page you changed.\n"
    "- `Talk/` holds suggestions about the wiki's structure (splits, merges).\n"
    "- `Sources/` holds a transcript of each conversation a footnote cites; a footnote's link\n"
    "  opens the message it names. dream rewrites these notes on every run: do not edit them\n"
    "  (`dream init --no-sources` leaves them out).\n"
    "\n"
    "The directory is a git repository: every change the Dreaming makes is a commit whose subject\n"
    "begins with `memory:`, so you can see, and undo, what it did. It opens in any Markdown\n"
    "editor, Obsidian included.\n";

static const char gitignore[] =
    ".DS_Store\n"
    ".obsidian/workspace*\n";

static const char meta_chunking[] =
    "# Chunking\n"
    "\n"
    "How a conversation is cut into chunks. A chunk is a run of consecutive messages about one\n"
    "subject; later steps read chunks, never whole conversations.\n"
    "\n"
    "- Find every topic. Most substantive conversations hold several; a short single question and\n"
    "  answer may be one chunk.\n"
    "- Start a new chunk when the subject changes substantially. A different aspect of the same\n"
    "  subject may be its own chunk when it is discussed at length.\n"
    "- A subject that comes back later in the conversation is a separate chunk each time.\n"
    "- Chunks may share at most one boundary message, and only when that message matters to both.\n"
    "- Leave out small talk and the topics listed on Topics_to_Ignore.\n"
    "- Label each chunk with 4 to 10 words naming its subject and the aspect discussed, in the\n"
    "  form `<subject>: <aspect>`, using only words from the conversation itself.\n";

static const char meta_topics_to_ignore[] =
    "# Topics to ignore\n"
    "\n"
    "Subjects the Dreaming leaves out of chunks and articles. One per line, as `- <topic>`.\n"
    "\n"
    "Currently nothing is ignored.\n";

static const char meta_entities[] =
    "# Entities\n"
    "\n"
    "How the subjects of a chunk are named. Each name becomes, or joins, an article.\n"
    "\n"
    "- Kinds: `thing`, `person`, `domain`, `project`, `standard`.\n"
    "- Use the canonical title a wiki would use: `<Full Proper Name>`, not a nickname, a possessive\n"
    "  or a sentence.\n"
    "- Name both the specific thing and its broad domain: `<specific thing>` and `<its domain>`.\n"
    "- Always keep the most specific proper noun that the chunk mentions.\n"
    "- One name per line; `NONE` when the chunk has no nameable subject.\n"
    "\n"
    "Names that mean the same subject are listed in Meta/Aliases.md.\n";

static const char meta_aliases[] =
    "# Aliases\n"
    "\n"
    "Names that mean the same subject. Before the Dreaming makes a new entity for a name, it looks\n"
    "here: a name equal to an alias (or to the canonical name itself, ignoring case, spacing and\n"
    "punctuation) joins the canonical entity, created under the spelling given here if it does\n"
    "not exist yet. One subject per line, in this form:\n"
    "\n"
    "- <Canonical Name>: <alias one>, <alias two>\n"
    "\n"
    "Lines with `<` and `>` are examples and are skipped. Currently no aliases are listed.\n";

static const char meta_article_conventions[] =
    "# Article conventions\n"
    "\n"
    "Articles follow an encyclopedia's form, with two differences: anything that recurs in the\n"
    "person's thinking is notable, and articles record the person's own positions. Voice: third\n"
    "person (\"the user ...\"), present tense.\n"
    "\n"
    "Order of an article, fixed:\n"
    "\n"
    "1. `# <Title>` — exactly one; the file is `articles/<Title_with_underscores>.md`.\n"
    "2. Optional `{{stub}}` line.\n"
    "3. Optional infobox: a fenced block with info string `info`, one `<key>: <value>` per line.\n"
    "4. Lead: 2 to 4 sentences; the subject in bold in the first; what it is and how the user\n"
    "   relates to it.\n"
    "5. `## <Section>` body sections, one sub-topic each; optional `## History` for positions the\n"
    "   user changed over time.\n"
    "6. `## See also` — bullets of `[[<Title>]]`.\n"
    "7. `## References` — always last.\n"
    "\n"
    "Citations: a marker `[^<n>]` right after each claim; the definitions under References are\n"
    "written by the program, never by hand: ``[^<n>]: `conv:<hash>#<message>` (<date>, <title>)``.\n"
    "\n"
    "Time: when the user's view evolved, the article states the latest view and `## History`\n"
    "keeps the trajectory; when an earlier statement was simply wrong, it is replaced.\n";

static const char meta_infobox_schemas[] =
    "# Infobox schemas\n"
    "\n"
    "Keys are snake_case. Values naming another subject are `[[<Title>]]`; `aliases` is\n"
    "comma-separated; other multiple values are separated by `;`.\n"
    "\n"
    "| key | meaning | shape |\n"
    "|---|---|---|\n"
    "| type | a free label for what the subject is | `<type label>` |\n"
    "| kind | thing, person, domain, project or standard | `<kind>` |\n"
    "| status | where the user stands with it now | `<status>` |\n"
    "| owned | whether the user has it | `yes`, `no` or `wishlist` |\n"
    "| acquired | when the user got it | `<YYYY-MM>` |\n"
    "| used_for | what the user uses it for | `<purpose>` |\n"
    "| chosen_over | what it was preferred to | `[[<Title>]]` |\n"
    "| opinion | the user's view of it, briefly | `<opinion>` |\n"
    "| aliases | other names for it | `<alias>, <alias>` |\n"
    "\n"
    "Schemas per type emerge as articles are written; record them below as\n"
    "`- <type label>: <key>, <key>, ...`.\n";

static const struct vault_seed_file seeds[] = {
    {"README.md", readme},
    {".gitignore", gitignore},
    {"Meta/Chunking.md", meta_chunking},
    {"Meta/Topics_to_Ignore.md", meta_topics_to_ignore},
    {"Meta/Entities.md", meta_entities},
    {"Meta/Aliases.md", meta_aliases},
    {"Meta/Article_Conventions.md", meta_article_conventions},
    {"Meta/Infobox_Schemas.md", meta_infobox_schemas},
};

const struct vault_seed_file *vault_seed_files(size_t *n)
{
    *n = sizeof seeds / sizeof seeds[0];
    return seeds;
}

const char *dream_vault_seed_meta(const char *name)
{
    char rel[256];
    size_t n;
    const struct vault_seed_file *f = vault_seed_files(&n);
    if (!name || strlen(name) > 200) return NULL;
    snprintf(rel, sizeof rel, "Meta/%s.md", name);
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].path, rel) == 0) return f[i].text;
    return NULL;
}
