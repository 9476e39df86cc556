/*
 * synthesis.h — the writing half of the Dreaming (spec §6.5–6.6, DESIGN.md §5): articles
 * created for routed entities and later chunks folded into them, in the git-tracked vault.
 *
 * CREATE writes an article for every entity routed to one whose file does not exist yet:
 * outline → a draft per section → lead → infobox and categories, through the seam's
 * `synthesis` stage, batched across entities. Every claim carries a footnote the code writes,
 * `[^N]: [[Sources/NOTE#^BLOCK|conv:HASH#MSG]] (YYYY-MM-DD, title)` (`undated` for a source with
 * no date; `\`conv:HASH#MSG\`` without the link when the vault keeps no transcripts), naming
 * the conversation and the message the chunk starts with. The article goes through normalize
 * and the gate before it is written (atomically, never over an existing file); an answer that
 * gives nothing usable is a failed attempt, and the last allowed attempt writes a valid stub
 * made by the code alone.
 *
 * FOLD takes, for every article of a routed entity, the entity's chunks that the article has
 * not seen yet (the (chunk, article) ledger: a chunk is section-routed to an article once,
 * never every night, spec §12.22): re-reads the article from disk (a hand edit is kept), asks
 * a yes/no per candidate section (the lead and each body section) in one batch whose prompts
 * start with the chunk (a shared prefix for the scheduler), and patches each section that said
 * yes (the (chunk, article, section) ledger: folded once); when none said yes it asks for a
 * new section's name and patches that. A yes for the lead is a LEAD PATCH, preceded by the
 * evolution/error classifier when the lead already cites something. Every patch keeps the
 * section's markers and adds the new one, and the whole article passes the gate with the word
 * floor on each touched section; otherwise nothing is written. The pairs go in rounds of up to
 * `batch` pairs of distinct articles (one article's chunks stay in order, each patch changes
 * it): each phase (section-route, new-section name, classifier, patches) is one batched call
 * across the round, and each pair's answers are used as if it had been asked alone.
 *
 * Writes are journaled in the store (table synth_writes) in the transaction that records the
 * ledger rows, then made on disk; a run killed in between is finished (or undone, when the
 * file changed meanwhile) by the next run. Each stage ends with one git commit holding exactly
 * the texts it wrote (from the journal, never the working tree), with a `memory: ` subject; the
 * person's own uncommitted edits elsewhere are never committed.
 *
 * Functions return 0 (DREAM_OK) or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_SYNTHESIS_H
#define DREAM_SYNTHESIS_H

#include "dream/progress.h"
#include "dream/store.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dream_synth_params {
    const char *wiki_dir;  /* the vault (articles/ under it); required */
    size_t limit;          /* create: at most this many entities; fold: at most this many chunks; 0 = all */
    size_t batch;          /* entities (fold: pairs of distinct articles) per batched round of model calls (default 8) */
    int max_attempts;      /* failed attempts before an entity is given a stub (default 3) */
    int max_tokens;        /* answer budget of a draft (default 768) */
    size_t section_budget; /* create: bytes of source text one section prompt holds (0: the default,
                              24000, about 6k tokens, so the prompt and its answer fit an 8k
                              context); the sources of a heading over it lose their last messages */
    bool dry_run;          /* count the work only */
    bool no_commit;        /* write files but make no git commit (tests of the journal) */
    bool no_sources;       /* footnotes cite `conv:HASH#MSG` without a link, and no transcript note is
                              written; a vault whose dream.sources setting is false is run so anyway */
    dream_progress_fn on_progress;
    void *progress_ud;
};

void dream_synth_default_params(struct dream_synth_params *params);

struct dream_synth_result {
    size_t eligible;     /* entities (create) or chunks (fold) with work to do */
    size_t created;      /* articles written with model prose */
    size_t stubs;        /* articles written as code-made stubs after the last failed attempt */
    size_t failed;       /* failed attempts (nothing written) */
    size_t patched;      /* sections patched (fold) */
    size_t new_sections; /* sections added (fold) */
    size_t lead_patches; /* leads rewritten (fold) */
    size_t rejected;     /* model answers refused (leaky, lost a marker, or vetoed by the gate) */
    size_t retried;      /* leaky section or lead drafts asked again once, prose only (create) */
    size_t unrouted;     /* chunks that went to no section */
    size_t reconciled;   /* articles whose infobox and prose were brought to the lead (reconcile) */
    size_t history;      /* History lines added (reconcile) */
    size_t linked;       /* articles whose links or See also changed (link) */
    size_t wikified;     /* articles written by wikify: sections tightened, infobox refreshed, or both */
    size_t refreshed;    /* of those, articles whose infobox, aliases or categories the refresh added to (wikify) */
    size_t migrated;     /* articles moved from the older format: front matter, tags (migrate) */
    size_t relinked;     /* articles whose footnotes' links were brought to their notes (sources, migrate) */
    size_t sources;      /* transcript notes the vault holds after the stage (sources, migrate) */
    size_t sources_removed; /* transcript notes no footnote cites any more, removed (sources, migrate) */
    size_t committed;    /* files in this stage's git commit */
    size_t unfounded;    /* sentences dropped: no note at hand says anything of them (create, fold) */
    size_t recited;      /* sentences cited to another note at hand that says them (create, fold) */
    size_t unheld;       /* infobox fields left out: their value holds a word no note at hand (create) or the
                          * article (wikify's refresh) holds */
    size_t skipped;      /* articles left as they are because no edit can be placed in them (a code fence that never
                          * closes, NUL bytes): a warning names the file, the line and what to do; retried next run */
};

/* Creates the missing articles of routed entities (oldest entity first). */
int dream_synth_create(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result);

/* Folds the chunks each article has not seen yet into it. */
int dream_synth_fold(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result);

/* Reconciles each article folded into since its last reconcile (spec §6.7): every stance field
 * of the infobox (status, opinion, current..., never type/kind/aliases) is asked KEEP-or-value
 * against the lead, which the lead patch moved to the latest-dated statement; a changed value is
 * written, body passages still asserting the old value as current are rewritten (or left and
 * logged as unresolved), and an evolution adds "- Previously OLD[^k]; as of DATE NEW[^n]." to
 * `## History`, citing both statements; an error may drop the old citation. A field the lead
 * keeps as current gets the same History line when the prose tells an earlier, different value
 * cited by an earlier-dated note (a note learned late but dated early: the dates swapped). */
int dream_synth_reconcile(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result);

/* CROSS-LINK (spec §6.10), deterministic: in every article, the first mention of another
 * article's title or infobox alias (3+ characters, not a generic word, claimed by one article
 * only) in the lead, body or History prose becomes [[Stem|as written]] (never inside links, code,
 * markers, headings or definitions; stems already linked are skipped), and `## See also` is
 * rebuilt: mentioned stems, then articles sharing routed chunks, then those listed before,
 * deduplicated, existing articles only, at most 12. Idempotent. */
int dream_synth_link(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result);

/* WIKIFY (spec §6.11, §12.23 fixed): for each article of a routed entity whose text changed
 * since its last wikify (never the person's own articles), each body section is tightened by
 * the editor stage (every marker kept, nothing added), and the infobox is refreshed from the
 * article's first ~4000 bytes, the current fields shown first: fields the infobox lacks are
 * added, an existing value (a [[link]] above all) is never replaced, aliases and categories
 * (at most 4) are merged as unions, and a new infobox goes after the H1; an answer that is
 * junk, leaky or malformed changes nothing and counts as refused. Then normalize and the gate
 * (for stubs too: no citation lost, grammar intact, one infobox at most); the gate's word
 * floor is measured against the section's high-water mark (table section_high_water), never
 * last night's text. One batched editor call per round of `batch` articles. */
int dream_synth_wikify(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result);

/* SOURCES (the last stage), deterministic, no model: every conversation a footnote cites gets a
 * transcript note, Sources/DATE TITLE (HASH).md (dream_source_note), written from the store: a
 * header naming it, then each message as a paragraph "**role** · `MSG` · time ^BLOCK" (BLOCK:
 * dream_citation_block_id of the message id the citations use) and its text in a code fence, so
 * nothing in it is Markdown of the vault. Each well-formed footnote's key becomes the link to its
 * message, [[Sources/NAME#^BLOCK|conv:HASH#MSG]] (relinked when the store's name for the note
 * changed); a conversation the store does not know keeps its link and note as they are. Notes no
 * footnote cites any more are removed. With no_sources (or the vault's dream.sources false) the
 * links become the plain key again and every note goes. Articles change through the gate
 * (synth_write); notes and articles go in one commit. Idempotent. The writing stages' own
 * commits already hold the notes their new footnotes link to (synth_commit). */
int dream_synth_sources(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result);

/* MIGRATE: SOURCES, with every article of the older format moved to this one first
 * (dream_article_migrate: the categories line becomes front matter tags, the infobox's aliases
 * front matter aliases; nothing else of the text changes, the person's edits included), in its
 * own commit "memory: migrate ...". A run calls it before its first writing stage; on a vault
 * that is already migrated it changes nothing. */
int dream_synth_migrate(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result);

/* Finishes writes a killed run journaled, and commits what is written but not yet committed.
 * Both stages call it first; exposed for tests and `dream check`-style tools. */
int dream_synth_recover(dream_store *store, const char *wiki_dir, size_t *committed);

#ifdef __cplusplus
}
#endif
#endif
