/*
 * article.h — one wiki article (spec §3.2–3.3, DESIGN.md §5): parse, inspect, edit, write,
 * normalize, validate, and the conservative write gate.
 *
 * The part src/article/ (docs/ARCHITECTURE.md): the article grammar, text in and text out.
 * article.c parses, writes and edits one article; article_normalize.c is NORMALIZE,
 * article_gate.c the write gate, article_check.c the validation `dream check` runs,
 * article_draft.c the cleaning of a model's draft, article_forget.c the removal of what some
 * conversations alone support; article_internal.h is what they share. It
 * stands on util alone; dreaming and read use it.
 *
 * The grammar, in its fixed order:
 *   ---                           optional YAML front matter, from the first line: what Obsidian
 *   aliases:                      reads. dream reads and writes two keys, `aliases` (other names
 *     - other name                of the subject) and `tags` (the categories, as tags:
 *   tags:                         dream_category_tag), and keeps every other line as it is
 *     - Home_Cooking
 *   ---
 *   # Title                       exactly one H1; Title == stem with '_' -> ' '
 *   {{stub}}                      optional, a line of its own
 *   *Part of a series on [[X]].*  optional series banner
 *   ```info ... ```               optional infobox, one `key: value` per line, at most one
 *   lead prose                    2-4 sentences
 *   ## Body sections (### ...)    reading order
 *   ## History                    optional, the user's changed positions
 *   ## See also                   bullets of [[Stem]]
 *   ## Notes                      optional
 *   ## References                 always last; one footnote definition per line:
 *                                 [^N]: [[Sources/NOTE#^BLOCK|conv:HASH#MSG]] (YYYY-MM-DD, title)
 *                                 where the vault keeps transcripts (Sources/NOTE.md, the block
 *                                 ^BLOCK on the cited message), else
 *                                 [^N]: `conv:HASH#MSG` (YYYY-MM-DD, conversation title);
 *                                 for a source with no date, (undated, title)
 *
 * Older vaults wrote the categories as a header line `categories: [[Category:A]], ...` and the
 * aliases as the infobox line `aliases: a, b`: both are still read (after the front matter's),
 * never written; the setters below remove them, and dream_article_migrate moves them.
 *
 * Parsing never fails on content: any bytes parse, and dream_article_write() of an article that
 * was not edited gives back exactly the bytes that were parsed, a leading byte order mark aside
 * (malformed parts are kept verbatim; dream_article_check() reports them). Fences (``` or ~~~, closed by the same
 * character at least as long) hide headings, footnotes, links and templates; so do inline code
 * spans.
 *
 * The tree: the front matter (or none), a front (bytes between it and the H1, normally blank),
 * the H1, the header (stub, banner, an old categories line, infobox, lead, each kept as raw
 * lines), and the sections in file order as a flat
 * list (every heading line of level 1-6 outside fences starts one; its body runs to the next
 * heading of any level). Sections of level 1 exist only when the file has a second H1.
 *
 * A patch, as synthesis makes one (a rejected answer writes nothing):
 *   dream_article_read_file(path, &before);  dream_article_clone(before, &after);
 *   dream_article_footnote_add(after, &cite, &n);                 the number for the new note
 *   dream_article_sanitize_draft(model_text, heading, &body, ...); the draft, with [^n] in it
 *   dream_article_section_set_body(after, i, body);
 *   dream_article_normalize(after, &params, ...);
 *   dream_article_replace_file(path, before, after, &gate, &verdict);
 *
 * Every view returned below (strings, structs) points into the article and stays valid until
 * the next call that edits it or frees it. Edits refuse (DREAM_EFORMAT) an article holding NUL
 * bytes or a code fence that never closes (what they add would vanish inside it) until
 * dream_article_normalize has repaired it. Edits re-parse the article, so the indexes
 * (footnotes, references, links, templates, line numbers) always describe the current text.
 *
 * Functions returning int give 0 (DREAM_OK) or a negative dream_status with dream_error_last()
 * set. Nothing here touches the store, the seam or git.
 */
#ifndef DREAM_ARTICLE_H
#define DREAM_ARTICLE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dream_article dream_article;

/* ---- parse and write ------------------------------------------------------------------- */

/* Parses len bytes of text (need not be NUL-terminated; may contain NULs) into *out; a leading
 * UTF-8 byte order mark is not part of the article (nor of what it writes). Fails only with
 * DREAM_ENOMEM. The caller frees *out with dream_article_free. */
int dream_article_parse(const char *text, size_t len, dream_article **out);

/* Whether a file's bytes (disk, len) hold text (tlen bytes): equal, or equal after a UTF-8 byte
 * order mark, which dream_article_parse leaves out (a file some editor saved with one is no
 * other text than it was read as). */
bool dream_article_file_holds(const char *disk, size_t len, const char *text, size_t tlen);

/* Reads and parses the file at path. DREAM_ENOTFOUND / DREAM_EIO name the path. */
int dream_article_read_file(const char *path, dream_article **out);

void dream_article_free(dream_article *a);

/* A copy of a to edit (the "after" of an edit whose "before" is a). */
int dream_article_clone(const dream_article *a, dream_article **out);

/* The article's text in *out (malloc'd, NUL-terminated, freed by the caller), its length in
 * *len (may be NULL). Byte-identical to the parsed input when nothing was edited (but for a
 * leading byte order mark, which is not part of the article). */
int dream_article_write(const dream_article *a, char **out, size_t *len);

/* Writes the article to path atomically (temporary file in the same directory, then rename). */
int dream_article_write_file(const dream_article *a, const char *path);

/* The current text without copying (valid until the next edit), and its length. */
const char *dream_article_text(const dream_article *a, size_t *len);

/* Replaces the whole article with the parse of len bytes of text (as dream_article_parse does,
 * in place: a holds text afterwards). Fails only with DREAM_ENOMEM. */
int dream_article_set_text(dream_article *a, const char *text, size_t len);

/* 0 when edits can be placed in a; else DREAM_EFORMAT with the error set, the refusal every
 * edit below gives such an article: a code fence that never closes (*fence_line: its opener's
 * line, 1-based) or NUL bytes (*fence_line 0). fence_line may be NULL. Normalize repairs both. */
int dream_article_editable(const dream_article *a, int *fence_line);

/* ---- header ------------------------------------------------------------------------------ */

/* The H1's text (trimmed), or NULL when the article has no H1. */
const char *dream_article_title(const dream_article *a);

/* Replaces the H1's text, or inserts "# title" as the first line when there is none. */
int dream_article_set_title(dream_article *a, const char *title);

/* True when the header holds a {{stub}} line. */
bool dream_article_is_stub(const dream_article *a);

/* Adds ({{stub}} right after the H1) or removes every {{stub}} line of the header. */
int dream_article_set_stub(dream_article *a, bool stub);

/* True when the article is a redirect page (a `*Redirects to [[X]].*` line in the header). */
bool dream_article_is_redirect(const dream_article *a);

/* The lead: the header's prose lines (not stub, banner, categories, infobox or redirect), from
 * the first to the last, with the blank lines between them; "" when there is none. */
const char *dream_article_lead(const dream_article *a);

/* Replaces the lead with text (a trailing newline is added when missing; "" removes it). When
 * there was no lead it goes after the infobox (or the H1 and stub/banner/categories). */
int dream_article_set_lead(dream_article *a, const char *text);

/* The categories, in order: the front matter's tags as category names (dream_tag_category),
 * then those of an old `categories: [[Category:A]]` line, each name once (case aside): their
 * count and the i-th. */
size_t dream_article_category_count(const dream_article *a);
const char *dream_article_category(const dream_article *a, size_t i);

/* Makes names the categories: the front matter's `tags` list becomes their tags (created, first
 * in the file, when there is no front matter; two names with one tag give it once), and an old
 * categories line is removed; n == 0 removes both. Names may not hold a newline; a name that
 * gives no tag (nothing but punctuation) is left out. */
int dream_article_set_categories(dream_article *a, const char *const *names, size_t n);

/* The Obsidian tag of a category (malloc'd, without '#'; NULL when out of memory or when the
 * name has nothing a tag can hold): spaces become '_' ("Home Cooking" -> "Home_Cooking"), letters
 * (any script), digits, '-', '/' (nesting) stay, every other character goes, '_' runs collapse
 * and edge '_' are trimmed; a tag of digits alone gets a leading '_' (Obsidian wants one
 * non-digit). dream_tag_category is the way back: '#' off, '_' -> ' ', trimmed. The two are
 * inverse on the names dream keeps (no '_', no character a tag cannot hold): ' ' and '_' are
 * one character in names, as in stems (dream_article_resolve_link). */
char *dream_category_tag(const char *category);
char *dream_tag_category(const char *tag);

/* ---- front matter and aliases --------------------------------------------------------------- */

/* Bytes of the front matter block at the start of the text ("---" alone on line 1 through the
 * next "---" line, its newline included); 0 when there is none. Text readers skip them. */
size_t dream_article_front_matter_len(const dream_article *a);

/* The subject's other names: the front matter's `aliases` list (block `- a` items, a flow
 * `[a, "b"]` list, or one scalar; YAML quoting undone), then an old infobox `aliases: a, b`
 * line's names, each once: their count and the i-th. */
size_t dream_article_alias_count(const dream_article *a);
const char *dream_article_alias(const dream_article *a, size_t i);

/* Makes names the aliases: the front matter's `aliases` list (created as for categories), an old
 * infobox aliases line removed (and the infobox with it when nothing else is left in it);
 * n == 0 removes the list. Names may not be empty or hold a newline. Strings are written plain
 * when YAML reads them back as the same string, else double-quoted. */
int dream_article_set_aliases(dream_article *a, const char *const *names, size_t n);

/* Moves an article of the older format to this one, touching nothing else: the old categories
 * line becomes the front matter's tags, the infobox's aliases line its aliases. *changed tells
 * whether a was edited. Refuses (DREAM_EFORMAT) what dream_article_editable refuses. */
int dream_article_migrate(dream_article *a, bool *changed);

/* ---- infobox ------------------------------------------------------------------------------ */

struct dream_article_field {
    const char *key;   /* as written, trimmed */
    const char *value; /* trimmed; may be "" */
    int line;          /* 1-based line in the article */
};

/* True when the header holds an ```info fenced block (the first one when there are several). */
bool dream_article_has_infobox(const dream_article *a);

/* Number of `key: value` lines in the (first) infobox, and the i-th of them in file order.
 * Lines of the block without a ':' are kept verbatim and not listed. */
size_t dream_article_infobox_count(const dream_article *a);
const struct dream_article_field *dream_article_infobox_field(const dream_article *a, size_t i);

/* The value of key (exact match), or NULL. */
const char *dream_article_infobox_get(const dream_article *a, const char *key);

/* Sets key to value (replacing the first line with that key, else appending a line; creating
 * the infobox after the H1/stub/banner/categories when there is none). value NULL removes
 * every line with that key. key must be non-empty with no ':' or newline; value no newline. */
int dream_article_infobox_set(dream_article *a, const char *key, const char *value);

/* ---- sections ----------------------------------------------------------------------------- */

enum dream_article_section_kind {
    DREAM_SECTION_BODY = 0,
    DREAM_SECTION_HISTORY,    /* "## History" */
    DREAM_SECTION_SEE_ALSO,   /* "## See also" */
    DREAM_SECTION_NOTES,      /* "## Notes" */
    DREAM_SECTION_REFERENCES, /* "## References" */
};

struct dream_article_section {
    int level;         /* number of '#': 2..6 (1 for a stray second H1) */
    const char *title; /* the heading text, trimmed */
    const char *anchor; /* the heading anchor (dream_article_anchor of title) */
    const char *body;  /* the bytes after the heading line up to the next heading, verbatim */
    int line;          /* 1-based line of the heading */
    enum dream_article_section_kind kind; /* by level-2 title, case-insensitive; else BODY */
};

size_t dream_article_section_count(const dream_article *a);
const struct dream_article_section *dream_article_section(const dream_article *a, size_t i);

/* Index of the first section whose anchor equals dream_article_anchor(name) (so a title or an
 * anchor both work), or -1. */
long dream_article_section_find(const dream_article *a, const char *name);

/* Index of the first section of that kind (HISTORY, SEE_ALSO, NOTES, REFERENCES), or -1. */
long dream_article_section_find_kind(const dream_article *a, enum dream_article_section_kind kind);

/* The index just past section i's extent: the next section of equal or shallower level (spec
 * §3.2 "section extraction"), or the section count. Sections i+1 .. end-1 are its subsections. */
size_t dream_article_section_end(const dream_article *a, size_t i);

/* Replaces section i's body. A heading line inside body becomes a section of its own after the
 * re-parse (callers sanitize model drafts first). A trailing newline is added when missing. */
int dream_article_section_set_body(dream_article *a, size_t i, const char *body);

/* Inserts a section "<level #> title" with body. Placement follows the grammar: a body section
 * goes before the first of History / See also / Notes / References (else at the end); History,
 * See also, Notes and References go to their place in that tail. *index_out (may be NULL) is
 * the new section's index. Refuses (DREAM_EINVAL) a title with a newline or level outside 2..6. */
int dream_article_section_insert(dream_article *a, int level, const char *title, const char *body,
                                 size_t *index_out);

/* Removes section i (heading and body; its subsections stay). */
int dream_article_section_remove(dream_article *a, size_t i);

/* The anchor of a heading (spec §3.2): lowercase ASCII, runs of non-[a-z0-9] -> '-', edges
 * trimmed. A heading with no ASCII letter or digit ("Русский", "日本語") keeps its own letters
 * and digits of other scripts the same way (the spec's rule gives every such heading the empty
 * anchor, so only the first could be read); "" only for a heading of signs alone. malloc'd,
 * freed by the caller; NULL only on allocation failure. */
char *dream_article_anchor(const char *heading);

/* The pseudo-anchor that names the lead in gate parameters and ledgers. */
#define DREAM_ARTICLE_LEAD_ANCHOR "__lead__"

/* ---- footnotes ---------------------------------------------------------------------------- */

/* A citation: where a claim came from. conv is the conversation's citation hash (store.h),
 * msg the message id within it, date YYYY-MM-DD (the message's own date when known, so the
 * chronology is per message rather than per conversation: spec §12.30) or NULL for a source
 * with no date (written DREAM_CITATION_UNDATED; parsed from that, and from the 0000-00-00 older
 * versions wrote), title the conversation title. */
#define DREAM_CITATION_UNDATED "undated"
struct dream_citation {
    const char *conv;
    const char *msg;
    const char *date;
    const char *title;
    const char *note; /* the transcript note the footnote links to, "Sources/NAME" (no .md), as
                         dream_source_note names it; NULL: no link, the plain `conv:` form */
};

/* The folder of the transcript notes, and the longest title part of a note's name (bytes). */
#define DREAM_SOURCES_DIR "Sources"
#define DREAM_SOURCE_TITLE_MAX 60

/* A footnote definition line `[^label]: text` outside fences. */
struct dream_article_footnote {
    const char *label; /* "3" */
    int number;        /* label as a positive number, 0 when it is not one */
    const char *text;  /* everything after "]: ", trimmed */
    struct dream_citation cite; /* parsed from text; members NULL when absent or malformed */
    int n_conv;        /* citation keys in text: backticked `conv:...` spans and a leading
                          [[...|conv:...]] link (the grammar wants exactly 1) */
    const char *block; /* the link's block id (after "#^"), NULL when the key is not a link */
    bool well_formed;  /* text is exactly KEY (YYYY-MM-DD or undated, title), KEY `conv:HASH#MSG`
                          or [[NOTE#^BLOCK|conv:HASH#MSG]] (cite.note: NOTE) */
    int line;
};

/* A marker [^label] in prose (outside fences, code spans and definition lines). */
struct dream_article_ref {
    const char *label;
    int number; /* as above */
    int line;
    size_t offset; /* byte offset of '[' in the text */
};

size_t dream_article_footnote_count(const dream_article *a);
const struct dream_article_footnote *dream_article_footnote(const dream_article *a, size_t i);
size_t dream_article_ref_count(const dream_article *a);
const struct dream_article_ref *dream_article_ref(const dream_article *a, size_t i);

/* The number of the definition citing (conv, msg) (msg NULL: any message of conv), or 0. */
int dream_article_footnote_find(const dream_article *a, const char *conv, const char *msg);

/* The number to cite c with: an existing definition of the same (conv, msg), else a new
 * definition numbered max+1 appended to ## References (created, last, when absent). The marker
 * itself is the caller's to place, after this call (markers already in the text count toward
 * max, so an undefined marker never gets a definition it was not meant for). */
int dream_article_footnote_add(dream_article *a, const struct dream_citation *c, int *number);

/* The definition text for c (malloc'd): "[[NOTE#^BLOCK|conv:HASH#MSG]] (YYYY-MM-DD, title)" when
 * c->note is set (BLOCK: dream_citation_block_id of the message), else "`conv:HASH#MSG`
 * (YYYY-MM-DD, title)"; "(undated, title)" when c->date is NULL or empty. Newlines and backticks
 * in the title become spaces and brackets parentheses (a title never makes a link); a NULL or
 * empty title gives "conversation". */
char *dream_citation_format(const struct dream_citation *c);

/* Footnote i's key made the link to note (dream_citation_format's form) or, note NULL, the plain
 * `conv:HASH#MSG`; the rest of the definition stays byte for byte. Refuses (DREAM_EINVAL) a
 * definition that is not well-formed. */
int dream_article_footnote_set_note(dream_article *a, size_t i, const char *note);

/* Footnote i's shown title made title (as dream_citation_format writes one), its key and date
 * kept: for a conversation a later export retitled. Refuses (DREAM_EINVAL) a definition that is
 * not well-formed. */
int dream_article_footnote_set_title(dream_article *a, size_t i, const char *title);

/* The Obsidian block id of message msg (malloc'd): msg itself when it is made of letters, digits
 * and '-' only (what a block id may hold), else msg with every other run of characters made one
 * '-', then '-' and 8 hex digits of its SHA-256, so two ids never share a block. */
char *dream_citation_block_id(const char *msg);

/* The transcript note of conversation conv (its citation hash), "Sources/DATE TITLE (conv)"
 * without .md (malloc'd): DATE YYYY-MM-DD or "undated" (date NULL or empty), TITLE the title with
 * what a file name or a link cannot hold on any system (\ / : * ? " < > | # ^ [ ] `, control
 * characters) made spaces, spaces squeezed, edge spaces and dots trimmed, cut at
 * DREAM_SOURCE_TITLE_MAX bytes on a character boundary ("conversation" when nothing is left). */
char *dream_source_note(const char *conv, const char *date, const char *title);

/* Placeholder hashes (conv:00000000, conv:00000001) that the gate ignores. */
bool dream_citation_is_placeholder(const char *conv);

/* ---- links and templates ------------------------------------------------------------------ */

/* [[target#section|display]] outside fences and code spans. */
struct dream_article_link {
    const char *target;  /* trimmed; "" when the link is [[#section]] */
    const char *section; /* NULL when none */
    const char *display; /* NULL when none */
    int line;
    size_t offset, len;  /* the whole [[...]] in the text */
    bool in_see_also;    /* inside the ## See also section */
};

/* {{name|args}} outside fences and code spans. */
struct dream_article_template {
    const char *name; /* trimmed */
    const char *args; /* after the first '|', NULL when none */
    int line;
};

size_t dream_article_link_count(const dream_article *a);
const struct dream_article_link *dream_article_link(const dream_article *a, size_t i);
size_t dream_article_template_count(const dream_article *a);
const struct dream_article_template *dream_article_template(const dream_article *a, size_t i);

/* True for targets that are never graph edges: conv:..., Category:..., Sources/... (a
 * transcript note; dream check verifies those land) */
bool dream_article_link_is_meta(const char *target);

/* The stem a title is stored under (spec §6.5 stem rule): trim; '/' '\' -> '-'; whitespace ->
 * '_'; drop <>:"|?*; collapse '_'; strip leading dots and edge '-'/'_'; "" -> "entity".
 * malloc'd. */
char *dream_article_stem(const char *title);

/* Resolves a link target against the stems of a vault (spec §3.3): exact, then spaces ->
 * underscores, then case-insensitive on either; then the same for the target written as
 * Obsidian also reads it, with the file's folder or extension (articles/NAME, NAME.md).
 * Returns the index into stems, or -1 (a redlink). */
long dream_article_resolve_link(const char *const *stems, size_t n, const char *target);

/* ---- words -------------------------------------------------------------------------------- */

/* Words of prose in text: whitespace-separated tokens, not counting footnote markers, heading
 * markers or fenced lines. */
size_t dream_article_words(const char *text, size_t len);

/* ---- validation --------------------------------------------------------------------------- */

/* Called once per problem, in line order: line (1-based; 0 = the whole file) and a message. */
typedef void (*dream_article_problem_fn)(void *ud, int line, const char *message);

/* True when the vault's note `note` ("Sources/NAME", no .md) holds the block ^block (block NULL:
 * when the note exists). */
typedef bool (*dream_article_block_fn)(void *ud, const char *note, const char *block);

/* NULL when the store holds the message a footnote cites (conversation conv, message msg), else
 * why not, in words (valid until the next call). */
typedef const char *(*dream_article_cite_fn)(void *ud, const char *conv, const char *msg);

struct dream_article_check_params {
    const char *stem;              /* the file's stem: H1 must equal it with '_' -> ' ' (NULL: skip) */
    const char *const *stems;      /* the vault's stems for link checks (NULL: skip link checks) */
    size_t n_stems;
    dream_article_block_fn block_exists; /* Sources/ links, footnotes first (NULL: skip) */
    void *block_ud;
    dream_article_cite_fn cite_missing; /* each well-formed footnote's message (NULL: skip) */
    void *cite_ud;
};

/* Validates the grammar (one H1 first, header order, at most one infobox, balanced fences,
 * tail order History < See also < Notes < References with References last, no duplicate
 * meta sections), the footnotes (every marker defined, every definition used, numbers 1..k
 * contiguous in first-reference order, each definition well-formed with exactly one
 * `conv:HASH#MSG`), and the links (when stems are given, every non-meta target resolves; when
 * block_exists is given, every Sources/ link, a footnote's above all, lands on its note and
 * block; when cite_missing is given, the store holds every message a footnote cites).
 * Returns the number of problems (0 = clean). */
size_t dream_article_check(const dream_article *a, const struct dream_article_check_params *p,
                           dream_article_problem_fn fn, void *ud);

/* ---- normalize ---------------------------------------------------------------------------- */

/* Resolves a wikilink target to the exact stem (malloc'd), or returns NULL for a redlink. */
typedef char *(*dream_article_resolve_fn)(void *ud, const char *target);

struct dream_article_normalize_params {
    const char *stem;                 /* H1 := stem with '_' -> ' ' (NULL: keep the H1) */
    dream_article_resolve_fn resolve; /* link canonicalization (NULL: links untouched) */
    void *resolve_ud;
    bool manage_stub; /* add/remove {{stub}} by the threshold (spec §3.3) */
};

/* Called once per change normalize made (or problem it could not fix), human-readable. */
typedef void (*dream_article_note_fn)(void *ud, const char *note);

/* Normalizes the article in place (spec §6.9, deterministic and idempotent: a second call
 * changes nothing): line endings LF; unbalanced fences closed before the first heading they
 * would swallow (or dropped when they wrap only blank lines); orphan markers removed, orphan
 * definitions removed (as spec §6.9 says: a definition nothing cites is dropped, and the gate,
 * comparing with the text before, rejects the edit if that loses a citation), definitions of
 * the same message (conv#msg) merged, survivors renumbered 1..k in
 * first-reference order and gathered under ## References; a link whose target resolves to
 * another spelling of a stem becomes [[Stem#section|what it showed]]; infobox keys
 * sorted (type, kind, alphabetical, aliases last) and an invalid kind made `thing`; H1 from
 * the stem; (unless a redirect) the tail reordered History, See also, Notes, References with
 * duplicates merged line-deduplicated; the stub marker managed; trailing whitespace removed,
 * blank runs collapsed to one, one blank line around headings, one final newline. Never
 * fails on content (only DREAM_ENOMEM). p and note may be NULL. */
int dream_article_normalize(dream_article *a, const struct dream_article_normalize_params *p,
                            dream_article_note_fn note, void *ud);

/* ---- forgetting conversations ------------------------------------------------------------- */

struct dream_article_forget_result {
    bool changed;     /* the article cited one of the conversations, and was edited */
    bool cited;       /* afterwards, a marker of a real citation is left (else nothing cited is) */
    size_t sentences; /* sentences removed */
    size_t citations; /* markers of the conversations removed (with their sentences or alone) */
    size_t sections;  /* sections left without prose, removed */
};

/* Takes out of a what only the conversations convs[0..n) (citation hashes, "conv:" left off)
 * support, claim by claim (`dream forget`). A definition citing one of them makes its markers
 * forgotten. In the lead and in body, History and Notes sections, each paragraph, list item and
 * table row is cut into sentences (at '.', '!' or '?' with the quotes, brackets and markers
 * right after them, before whitespace and a word that is not lowercase; links, code spans and
 * a few abbreviations are passed over): a sentence all of whose markers are forgotten goes; one
 * with other markers keeps those and loses the forgotten ones; a sentence without markers goes
 * with the cited sentence it leads up to (else the one it follows, in the same paragraph), since
 * a footnote covers the claim it closes; a paragraph or item left empty goes whole. A forgotten
 * marker anywhere else (a heading, the infobox) is removed, and so is each forgotten
 * definition. A section the edit left with no text (and no subsections) goes, heading and all,
 * and then a parent left so. Footnotes are not renumbered: dream_article_normalize does that.
 * Nothing changes (out->changed false) when no definition cites them. DREAM_EFORMAT for an
 * article no edit can be placed in (dream_article_editable); DREAM_ENOMEM. */
int dream_article_forget(dream_article *a, const char *const *convs, size_t n, struct dream_article_forget_result *out);

/* ---- model drafts ------------------------------------------------------------------------- */

/* Cleans a model's draft of a section body or lead (spec §6.5 step 6) into *out (malloc'd):
 * CRLF -> LF; a draft wrapped whole in a code fence is unwrapped; ```info blocks, footnote
 * definition lines and markers whose label is not a number are removed (outside fences and
 * code spans); a first line that is a heading repeating `heading` (or any H1) is dropped; from
 * a heading named References, See also or Notes on, everything is cut (the model spilled the
 * article's tail); an unclosed fence is closed; blank runs collapse and the edges are trimmed.
 * heading may be NULL. note (may be NULL) hears each change. "" when nothing is left. */
int dream_article_sanitize_draft(const char *draft, const char *heading, char **out,
                                 dream_article_note_fn note, void *ud);

/* ---- the write gate ----------------------------------------------------------------------- */

/* Baseline words for a touched section, e.g. its high-water mark over past nights so nightly
 * tightening cannot compound erosion (spec §12.23); 0 when unknown. */
typedef size_t (*dream_gate_baseline_fn)(void *ud, const char *anchor);

/* The share of its words a touched section keeps by default (dream_gate_params.word_floor 0). */
#define DREAM_GATE_WORD_FLOOR 0.7

struct dream_gate_params {
    const char *const *touched; /* anchors of the sections the edit touched (DREAM_ARTICLE_LEAD_ANCHOR for the lead) */
    size_t n_touched;
    double word_floor;          /* each touched section keeps >= floor x its words; 0 -> DREAM_GATE_WORD_FLOOR */
    const char *const *may_vanish; /* conv hashes allowed to disappear (an ERROR correction) */
    size_t n_may_vanish;
    dream_gate_baseline_fn baseline; /* may be NULL */
    void *baseline_ud;
};

struct dream_gate_verdict {
    bool accepted;
    char **reasons; /* one line each; n_reasons == 0 when accepted */
    size_t n_reasons;
};

/* Decides whether `after` may replace `before` (NULL for a new article). Rejects unless: every
 * real citation (conv#msg, placeholders aside) of before is still defined in after (minus
 * may_vanish conversations); footnotes in after are bijective, contiguous 1..k in
 * first-reference order and well-formed; each touched section present in before keeps at least
 * word_floor of its words (and a touched section is not lost); the grammar is intact (one H1,
 * first, kept when before had it; References present when before had it and last; at most one
 * See also and one infobox; balanced fences; tail order). Fails only with DREAM_ENOMEM / EINVAL;
 * the caller frees the verdict with dream_gate_verdict_free. */
int dream_article_gate(const dream_article *before, const dream_article *after,
                       const struct dream_gate_params *p, struct dream_gate_verdict *out);

void dream_gate_verdict_free(struct dream_gate_verdict *v);

/* The one way synthesis writes an article: gates `after` against `before` and writes it to
 * path atomically only when accepted AND the file still holds exactly before's text (before
 * NULL: only when path does not exist yet), so a hand edit made since the article was read is
 * never overwritten; that case is a rejection whose reason says so (re-read and retry). A
 * rejection writes nothing: a bad model answer is a no-op. Returns 0 with the verdict in *out
 * (freed with dream_gate_verdict_free), or DREAM_EIO / DREAM_ENOMEM. */
int dream_article_replace_file(const char *path, const dream_article *before, const dream_article *after,
                               const struct dream_gate_params *p, struct dream_gate_verdict *out);

#ifdef __cplusplus
}
#endif
#endif
