/* synth_internal.h — what the synthesis stages (synth_create.c, synth_fold.c) share: chunks as
 * sources with their citations, the write journal, the git commit, draft sanitizing. */
#ifndef DREAM_DREAMING_SYNTH_INTERNAL_H
#define DREAM_DREAMING_SYNTH_INTERNAL_H

#include "dream/article.h"
#include "dream/synthesis.h"
#include "store_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A message of a source's chunk, as the source's text shows it. */
struct synth_src_msg {
    char *id;       /* dream_store_message_cite_id */
    bool user;      /* the person's */
    size_t at, len; /* its text's bytes in the source's text (after its [role] tag) */
};

/* A chunk as a source of an article. */
struct synth_src {
    int64_t chunk, conversation, first, last;
    char *label;
    char *cite;  /* the conversation's citation hash */
    char *msg;   /* the cited message: the chunk's first message of the person (else its first) */
    char *date;  /* YYYY-MM-DD of that message (else the conversation's), DREAM_CITATION_UNDATED
                    when neither has a date */
    char *title; /* the conversation's title */
    char *note;  /* the conversation's transcript note, "Sources/NAME" (synth_source_note); NULL
                    when the vault keeps none */
    char *text;  /* the chunk's messages, "[role] text" lines */
    struct synth_src_msg *msgs; /* the messages text shows (a long chunk's last ones may not fit) */
    size_t n_msgs;
};

void synth_src_free(struct synth_src *s, size_t n);

/* Fills s's msg, date, text and msgs from the messages first..last of its conversation (conv_ms:
 * the conversation's time, the date when the message has none). */
int synth_src_messages(dream_store *store, struct synth_src *s, int64_t conv_ms);

/* Fits the sources srcs[0..n) of one prompt into budget bytes of text together: while they are
 * over it, the longest one that can loses its last message (its text ends where that message's
 * line began). A source keeps its cited message and every message before it, so a prompt over the
 * budget may stay over it. What a source no longer holds, no prompt shows and no footnote is
 * pinned to. */
void synth_src_fit(struct synth_src *const *srcs, size_t n, size_t budget);

/* The chunks mentioning entity, oldest conversation first then in message order; with
 * unrouted_stem, only those not yet section-routed to that article; no_sources: without notes. */
int synth_entity_sources(dream_store *store, int64_t entity, const char *unrouted_stem, bool no_sources, struct synth_src **out, size_t *n);

/* The citation of s (pointers into s): a link to its transcript note when s has one. */
struct dream_citation synth_src_citation(const struct synth_src *s);

/* The transcript note of a conversation (citation hash cite, title, its creation time in Unix
 * ms, 0 when unknown): dream_source_note with the date of conv_ms. malloc'd. */
char *synth_source_note(const char *cite, const char *title, int64_t conv_ms);

/* A file a commit holds besides the journal's writes: path relative to the wiki, text NULL for
 * a file the commit removes. */
struct synth_file {
    char *path, *text;
    size_t len;
    bool created; /* a stage of this commit made the file (it was not there before its write) */
};
void synth_files_free(struct synth_file *f, size_t n);

/* The transcript notes the link-form footnotes of the given article texts cite, rendered from
 * the store (synth_source_render) and written to disk where they differ, appended to *files (a
 * conversation the store does not know is left out). files NULL: only the notes missing on disk
 * are written (synth_write calls it before it writes an article, so that a run killed at any
 * moment leaves no footnote linking to a note that is not there). */
int synth_sources_for(dream_store *store, const char *wiki, const char *const *texts, const size_t *lens, size_t n,
                      struct synth_file **files, size_t *n_files);

/* The transcript note of conversation cite, rendered from the store: its path ("Sources/NAME.md")
 * and text into f. DREAM_ENOTFOUND when the store has no such conversation. */
int synth_source_render(dream_store *store, const char *cite, struct synth_file *f);

/* Every marker of a (only > 0: marker only) whose definition cites one of src[0..n_src) re-cited,
 * sentence by sentence, to the message of that source's text (its msgs) sharing the most of the
 * sentence's content words (a tie keeps the chunk's own message): new definitions added, markers
 * swapped.
 * Definitions left unused are the caller's normalize to drop. synth_pin.c says why. */
int synth_pin_citations(dream_article *a, const struct synth_src *src, size_t n_src, int only);

/* The distinct content words of text[0..len) as sorted hashes (casefolded ASCII; 3 bytes or
 * more; not a stop word; markers [^N] skipped), malloc'd into *out; their count, or -1 when out
 * of memory. The same words pinning compares. */
long synth_words(const char *text, size_t len, unsigned **out);

/* The content words (synth_words) of each message a source's text shows, computed once. */
struct synth_src_words {
    bool done;
    unsigned **w; /* per message of src->msgs */
    size_t *n;
};
int synth_src_words_of(const struct synth_src *s, struct synth_src_words *p);
void synth_src_words_free(struct synth_src_words *p, size_t n_msgs);

/* Whether the sorted synth_words array w[0..n) holds the word hash h. */
bool synth_words_has(const unsigned *w, size_t n, unsigned h);

/* The definition of footnote number `number` of a, or NULL. */
const struct dream_article_footnote *synth_footnote_numbered(const dream_article *a, int number);

/* How many words two sorted synth_words arrays share. */
size_t synth_words_shared(const unsigned *a, size_t na, const unsigned *b, size_t nb);

/* A sentence of a text: [at, at + len), its trailing markers included. */
struct synth_span {
    size_t at, len;
};

/* The sentences of text: each ends at . ! or ? (with the markers after it) before a space or
 * the end, or at a line break; at most max. Returns their count. */
size_t synth_sentences(const char *text, struct synth_span *out, size_t max);

/* Whether text[i..) starts a footnote marker [^N] whose label the article numbers (no leading
 * zero, at most six digits); the index just past it in *end. */
bool synth_marker_at(const char *text, size_t i, size_t *end);

/* After pinning (synth_ground.c): a sentence whose footnotes all cite sources at hand and which
 * shares no content word (the subject's name words aside) with any of their messages is cited to
 * another source's message sharing at least two of its words (*recited), or dropped (*dropped);
 * never the lead's first sentence; a body section left without prose goes. only > 0: only
 * sentences carrying marker only. */
int synth_drop_unfounded(dream_article *a, const struct synth_src *src, size_t n_src, int only, size_t *dropped, size_t *recited);

/* The content words (synth_words) of title and of every note's text together, malloc'd into
 * *out; their count, or -1 when out of memory. What an infobox value is held to. */
long synth_notes_words(const char *title, const struct synth_src *src, size_t n_src, unsigned **out);

/* *out: the grammar of prose about title from src[0..n_src) for a model that cannot spell a name
 * (dream_seam_names_from_text): every capitalized word one of the title's or the notes' own
 * (dream_grammar_prose_from; the chunk labels, which such a model wrote, are not read); the
 * answer starts with start when it is not NULL. malloc'd. */
int synth_prose_grammar(const char *title, const struct synth_src *src, size_t n_src, const char *start, char **out);

/* *ok: whether the infobox field key: value is held by held[0..n_held) (synth_notes_words):
 * every content word of value is in it, as written or with a plural "s" added or taken away (a
 * value of no content word is held); for key `type` (a label) one such word is enough; `status`
 * and `opinion` (a stance) are always held; the words of a [[link]] are not read (a link to an
 * article that exists). key NULL: an alias, held as a fact. */
int synth_value_held(const char *key, const char *value, const unsigned *held, size_t n_held, bool *ok);

/* Whether every number of value stands in text beside the content words (synth_words) it stands
 * beside in value, on the same side: "November 17" is not placed in "November 12, not July 17",
 * whose 17 follows July, though text holds each of its words. A number with no content word
 * beside it in value ("75%", "3 kg") is placed wherever text has it. Words are runs of ASCII
 * letters and digits (and bytes >= 0x80), compared without case; a number is a run of digits. */
bool synth_numbers_placed(const char *value, const char *text);

/* *ok: whether the infobox field key: value is grounded in a source whose content words are
 * held[0..n_held) and whose text is text: held (synth_value_held), and, but for a label or a
 * stance (type, status, opinion), its numbers placed as text places them (synth_numbers_placed). */
int synth_value_grounded(const char *key, const char *value, const unsigned *held, size_t n_held, const char *text, bool *ok);

/* How many of the content words w[0..nw) (sorted synth_words hashes) message msg of conversation conv
 * holds; 0 when there is no such message. */
typedef size_t (*synth_held_fn)(void *ud, const char *conv, const char *msg, const unsigned *w, size_t nw);

/* Reconcile's first step (synth_lead.c): each lead sentence after the first that still states a
 * position a later-or-same-dated body sentence tells as changed ("... instead of Y", "no longer
 * Y") is replaced by that body sentence, its markers with it, when a message it cites (held)
 * says its new position. *replaced: how many. No model call. */
int synth_lead_follow_body(dream_article *a, synth_held_fn held, void *ud, size_t *replaced);

/* Whether a body sentence of a tells value as a past position: a change cue whose old position
 * holds every content word of value ("used to cost about £32 a month" for "£32 a month");
 * *section: that sentence's section. */
bool synth_told_as_past(const dream_article *a, const char *value, size_t *section);

/* The position that replaced value, where that sentence (synth_told_as_past) says it in words
 * code can take: "moved it to X instead of Y" / "X rather than Y" (the phrase after the clause's
 * first to, at or in), "switched from Y to X"; else, for a value with a number, the same shape
 * ("£115 a month" for "£32 a month") in a body sentence that tells no past, dated no earlier
 * than it (the latest such). malloc'd; NULL when there is none. *told (optional): whether the
 * body tells value as past at all (synth_told_as_past), from the same scan. */
char *synth_past_successor(const dream_article *a, const char *value, bool *told);

/* What a message of the person's says replaced value, in words code can take: "X instead of V"
 * and "X rather than V" (the phrase after the clause's first to / at / in / for, else after its
 * "is"), "... is now X, no longer V", and a correction, "... X. I mixed it up with V" (in the
 * sentence before: a value of V's shape, its numbers free, else the phrase after "is (on)").
 * A preposition may stand between the cue and V ("instead of in the shed"). And "X, not V" (or
 * "X — not V"): for V with a number, the words of V's shape right before the cue ("November
 * 12, not July 17"); else the words that stand where a sentence of said (the person's other
 * words, optional) put V ("my sister lives there — not brother" against "my brother lives
 * there"); a correction unless the clause says "now". malloc'd; NULL when the message says no
 * such thing. *correction (optional): the message corrects a mistake rather than telling a
 * change. */
char *synth_message_successor(const char *msg, const char *value, const char *said, bool *correction);

/* Whether a source has a date (else it is DREAM_CITATION_UNDATED). */
bool synth_src_dated(const struct synth_src *s);

/* The line a prompt gets when a source it shows is undated, so the model writes no date for it
 * (not "Later, on undated, ..."). */
/* What a source's text shows where a long message was cut (synth_src_messages). */
#define SYNTH_CUT_MARK "[...]"

#define SYNTH_UNDATED_RULE "A source marked undated has no known date: write no date for it.\n"

/* The first sentences of text (up to max bytes, whole sentences when possible), footnote
 * markers and link brackets stripped. malloc'd. */
char *synth_gist(const char *text, size_t max);

/* A model draft made safe to place in a section (heading: the section's, or NULL):
 * dream_article_sanitize_draft, then any remaining heading, categories or stub line dropped;
 * trimmed. malloc'd ("" when nothing is left); NULL only when out of memory. */
char *synth_sanitize(const char *draft, const char *heading);

/* Drops from a draft (in place) each sentence that says nothing an earlier one did not: its
 * content words (synth_words, three or more) all an earlier sentence's, and its markers all that
 * sentence's ("They have written 117 tests for Parrot.[^2]" after "The person has written 117
 * tests for Parrot.[^2]"). A small model restates a sentence in other openers. Returns how many. */
size_t synth_drop_repeated_sentences(char *text);

/* synth_drop_repeated_sentences over a's lead and each body section. */
int synth_drop_repeats_in(dream_article *a);

/* True when the draft narrates the task instead of being article prose, or runs on into the
 * prompt's own frame (a transcript's [user] line, a note's header). */
bool synth_leaky(const char *draft);
/* Whether s[0..len) holds a footnote marker's tail without its head: digits and "]" after neither
 * "[^" nor "[" ("a pan on 1] The person"), a garble that would show the reader a stray bracket. */
bool synth_broken_marker(const char *s, size_t len);
/* Whether text holds a piece of the prompt's own frame ("[user]", "--- end chunk", "<<<", ...):
 * never right in an article, whatever a note holds. */
bool synth_prompt_frame(const char *text);

/* How many times text[0..len) cites marker [^num] (a definition line's "[^num]:" is not a use). */
size_t synth_marker_uses(const char *text, size_t len, int num);

/* True when text holds the marker [^n]. */
bool synth_has_marker(const char *text, int n);
/* Whether text cites: a footnote marker "[^N]" (N a number: dream's) outside code, fenced or
 * `inline` ("[^" in a regex or in a code block showing Markdown cites nothing). */
bool synth_cites(const char *text);

/* Path of the article stem under wiki ("<wiki>/articles/<stem>.md"), malloc'd. */
char *synth_article_path(const char *wiki, const char *stem);

/* A ledger row to record with a write. section NULL: a (chunk, article) routed row. */
struct synth_ledger {
    int64_t chunk;
    const char *section;
};

/* First, in after, every [[link]] the model added (its target is none that a link of before
 * resolves to) that points to no article of the vault as it is now (nor to stem itself) is
 * reduced to the text it shows (synth_unlink_new_redlinks), so no answer leaves a vault dream
 * check refuses. Then gates after against before (NULL: a new file) and, when accepted,
 * journals the write with the ledger rows (and the routed rows of every chunk in routed[]),
 * writes the file atomically (dream_article_replace_file) and marks the write done. A gate rejection writes nothing;
 * *accepted tells which (the reasons go to the log). A file changed since `before` was read
 * (a hand edit in the meantime) is a rejection too, and the journaled rows are undone.
 * done_item (0: none) is recorded done for stage in the journal's transaction. */
int synth_write(dream_store *store, const char *wiki, const char *stage, const char *stem, const dream_article *before,
                dream_article *after, const struct dream_gate_params *gate, const struct synth_ledger *rows, size_t n_rows,
                const char *article_for_rows, int64_t done_item, bool *accepted);

/* The two halves of synth_write, for a stage that journals several writes in one transaction
 * of its own (`dream forget`: the store's rows and the wiki's writes together).
 * journal: records, in the caller's transaction, that stage writes after (NULL: removes the
 *   file) over before (NULL: a new file) at articles/<stem>.md, and indexes after for search;
 *   *seq is the journal row.
 * put: then, after that transaction's commit, writes after (gated and only over a file that
 *   still holds before's text, as dream_article_replace_file) or removes the file (only when it
 *   still holds before's text), and marks the write done; otherwise undoes the journal row and
 *   its index rows, and warns. *accepted tells which. */
int synth_journal(dream_store *store, const char *stage, const char *stem, const dream_article *before, const dream_article *after,
                  int64_t *seq);
int synth_put(dream_store *store, const char *wiki, const char *stage, int64_t seq, const char *stem, const dream_article *before,
              const dream_article *after, const struct dream_gate_params *gate, bool *accepted);

/* Records (chunk, stem) as routed with no write (the chunk went nowhere). */
int synth_mark_routed(dream_store *store, int64_t chunk, const char *stem);

/* "YYYY-MM-DD" (UTC) of Unix ms; "" when ms is unknown (0 or less). */
void synth_day(int64_t ms, char out[11]);

/* Whether dream may commit to the wiki now (dream_vault_git_ready), after removing the git locks
 * a dream commit killed half way left (its marker in the git directory says so). */
int synth_git_ready(const char *wiki);

/* Commits the journal's written texts (and removals) in one git commit with subject
 * "memory: <subject>", with the transcript notes their footnotes link to (synth_sources_for),
 * and clears them; *n_files (may be NULL) counts the paths. */
int synth_commit(dream_store *store, const char *wiki, const char *subject, size_t *n_files);

/* Whether the file rel (relative to the wiki) with text[0..len) (its start is enough) is a
 * transcript note dream wrote: Sources/<date> <title> (<hash>).md, no deeper, its front matter
 * saying `dream: transcript`. Only such files are removed or pruned; the person's own files
 * under Sources/ are left as they are. */
bool synth_source_note_is_ours(const char *rel, const char *text, size_t len);

/* Whether the file name (or path) name is the transcript note of conv:<hash>: "... (HASH).md". */
bool synth_source_note_of(const char *name, const char *hash);

/* Removes from disk the transcript notes of the conversations hashes (Sources/... (HASH).md),
 * *removed counting them, and reads every other note into *kept (synth_files_free): with
 * synth_commit_files(..., prune_sources = true) the notes leave the vault in that commit. */
int synth_sources_drop(const char *wiki, const char *const *hashes, size_t n, struct synth_file **kept, size_t *n_kept, size_t *removed);

/* synth_commit with the files given instead of those synth_sources_for finds; prune_sources: the
 * commit also removes every Sources/ file of HEAD that extra does not hold. */
int synth_commit_files(dream_store *store, const char *wiki, const char *subject, const struct synth_file *extra, size_t n_extra,
                       bool prune_sources, size_t *n_files);

/* The stems of every article file in the vault (sorted), for link rules; malloc'd array of
 * malloc'd strings. */
int synth_list_stems(const char *wiki, char ***out, size_t *n);

/* A stage's parameters into *p: the caller's or the defaults, with the shared floors applied
 * (batch, attempts, output tokens); an error naming the stage when no wiki is given. */
int synth_stage_params(const char *stage, const struct dream_synth_params *params, struct dream_synth_params *p);
void synth_free_strings(char **s, size_t n);

/* Resolver for dream_article_normalize over a stems list (ud = struct synth_stems *). */
struct synth_stems {
    char **stems;
    size_t n;
};
char *synth_resolve_stem(void *ud, const char *target);

/* Normalizes a the way every writing stage does before it writes: links resolved against stems
 * (synth_resolve_stem), the stub marker managed. Returns dream_article_normalize's status. */
int synth_normalize(dream_article *a, const char *stem, const struct synth_stems *stems);

/* value (one line: an infobox value) with each [[link]] whose target is no article of stems
 * replaced by the text it shows ([[T|shown]] -> shown, [[T]] -> T; a link with a bracket inside
 * -> its text without brackets), so a value the model wrote never adds a redlink (dream check
 * allows none). The one rule for CREATE's infobox, WIKIFY's refresh and (link by link) every
 * write's model-added links (synth_unlink_new_redlinks). The target is trimmed as the article
 * parser trims it. stems NULL: value as it is. malloc'd, NULL when out of memory. */
char *synth_unlink_redlinks(const char *value, const struct synth_stems *stems);

/* The one rule for links in what a stage writes (synth_write applies it to every write): each
 * [[link]] of a that dream check would refuse (a non-meta target no article resolves to, by
 * dream_article_resolve_link over the vault's stems as the write happens plus stem, the article
 * being written) and that the model added (no link of before, NULL for a new article, has a
 * target resolving to the same) becomes the text it shows, as synth_unlink_redlinks reduces it;
 * a link to an existing article, and any link already in before (a person's own, even to a
 * missing article), stays as it is. So a CREATE link to an article the same run writes later
 * (which may yet fail) is text; cross-linking (synth_link.c) links such mentions once the
 * article exists. When anything changed, a is normalized again (stem, links, stub). *unlinked
 * counts the links reduced. */
int synth_unlink_new_redlinks(dream_article *a, const dream_article *before, const char *wiki, const char *stem, size_t *unlinked);

struct dbuf;
/* Appends the Meta page `page` of wiki (the seeded text when wiki is NULL) between policy
 * delimiters; nothing when the page is empty. */
int synth_policy(struct dbuf *b, const char *wiki, const char *page);

/* The model-answer parsers of the stages (fuzzed by fuzz_synth_answers):
 * outline: up to max headings (markup stripped, deduplicated by anchor, never a tail name;
 *   "Overview" when none), malloc'd into out; returns their count;
 * infobox: `key: value` lines (snake_case keys, a key's repeats kept: at most 4 values each and
 *   32 keys; kind and aliases dropped) appended
 *   to box, category/categories values into cats (at most 4, malloc'd);
 * heading: a new section's name (2-5 words of letters and digits, not a tail name), or NULL;
 * correction: reconcile's answer about a field whose value is old: the new value, or NULL for
 *   KEEP / the same value / an unusable answer. */
size_t synth_parse_outline(const char *answer, char **out, size_t max);
int synth_parse_infobox(const char *answer, struct dbuf *box, char **cats, size_t *n_cats);
char *synth_parse_heading(const char *answer);
char *synth_parse_correction(const char *answer, const char *old);

/* WIKIFY's infobox refresh (synth_refresh.c, spec §6.11 b).
 * prompt: the Infobox_Schemas policy, the infobox's current fields first, the categories, and
 *   the article's first ~4000 bytes (cut at a line end); malloc'd, NULL when out of memory.
 * parse: the answer's `key: value` fields (snake_case keys, lowercased; first wins; kind
 *   ignored), aliases and categories (at most 4) into *out; false (out left empty) when the
 *   answer is refused whole: leaky, a line that is neither blank, the ```info fence nor
 *   `key: value`, a value with backticks, footnote markers, templates, stray brackets or over
 *   160 characters, an alias or category holding markup, nothing usable at all, or out of memory.
 * apply: merges r into a, only adding: a field whose key a lacks (or holds empty), up to 24
 *   fields; aliases the infobox does not list yet (never the title itself), after those it
 *   lists; categories it lacks, after its own, at most 4 in all. An existing value (a [[link]]
 *   above all) is never replaced; a new value's [[link]] to no article in stems (NULL: links
 *   kept) is reduced to the text it shows. A new field or alias whose words the article's text
 *   does not hold (synth_value_held; the lead's first sentence, never dropped by grounding, is
 *   no ground) is left out and counted in *unheld. A new infobox goes
 *   after the H1 (and stub, banner, categories). *changed tells whether a was edited. */
#define SYNTH_REFRESH_MAX 24
struct synth_refresh {
    char *key[SYNTH_REFRESH_MAX], *value[SYNTH_REFRESH_MAX];
    size_t n;
    char *alias[SYNTH_REFRESH_MAX];
    size_t n_alias;
    char *cat[4];
    size_t n_cat;
};
char *synth_refresh_prompt(const char *wiki, const char *stem, const dream_article *a);
bool synth_parse_refresh(const char *answer, struct synth_refresh *out);
void synth_refresh_free(struct synth_refresh *r);
int synth_refresh_apply(dream_article *a, const char *stem, const struct synth_refresh *r, const struct synth_stems *stems, bool *changed,
                        size_t *unheld);

/* Whether stage may edit the article a read from path. False when no edit can be placed in it
 * (dream_article_editable: a code fence that never closes, NUL bytes, typically a person's hand
 * edit): then a warning names the file and the fence's line and says what to do, res->skipped
 * counts it, and the stage leaves the file as it is and goes on with the other articles. */
bool synth_editable(const char *stage, const char *path, const dream_article *a, struct dream_synth_result *res);

/* Logs a gate verdict's reasons at warn level, naming the article. */
void synth_log_verdict(const char *stem, const char *what, const struct dream_gate_verdict *v);

#endif
