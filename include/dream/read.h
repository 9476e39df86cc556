/*
 * read.h — the read side of the memory (spec §8, issue 6): small, cheap tools an agent or a
 * person uses to look things up in the wiki without reading it whole. The CLI verbs (dream
 * resolve|read|section|links|infobox|list|search|status) and the server's GET /v1/memory/<tool>
 * call exactly these functions.
 *
 * The part src/read/ (docs/ARCHITECTURE.md): read_index.c opens a reader (lists and parses the
 * articles, indexes their names), read_tools.c holds the tools, read_status.c `dream status`,
 * read_text.c a tool's answer as plain text; read_internal.h is what they share. It may include
 * dreaming (only to ask whether a run holds the run lock), article, names, store, os and util,
 * and writes nothing; serve and the CLI use it.
 *
 * A reader is a snapshot: opening it lists and parses every article under <wiki>/articles and
 * builds the name index (stem, title, infobox aliases, and, when the store is there, every
 * surface form the pipeline folded into an entity that has an article). Open one per request or
 * per command; it never writes the wiki or the store.
 *
 * Names never become paths. An article name given to any tool is matched against the index of
 * files found by listing articles/ (a name like "../x" or "/etc/passwd" simply matches nothing),
 * and a symbolic link in articles/ is indexed only when it resolves to a file inside the wiki.
 *
 * Every tool returns 0 with a small JSON object in *out (jansson; the caller json_decref()s it),
 * or a negative dream_status with dream_error_last() set. An article name that matches nothing
 * gives DREAM_ENOTFOUND and STILL sets *out, to {"error": "...", "query": ..., "candidates":
 * [...], "captured": ...}, so callers can show the near candidates. Default outputs stay under
 * DREAM_READ_BUDGET bytes of compact JSON: the lead is clipped, tables of contents and member
 * lists are cut with a "more" count.
 */
#ifndef DREAM_READ_H
#define DREAM_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most bytes a default (not "whole") output may take as compact JSON. */
#define DREAM_READ_BUDGET 2048
/* A whole-article read larger than this gives the table of contents and a size note instead. */
#define DREAM_READ_WHOLE_MAX 8192

/* The largest offset a paged read tool takes (`dream list --offset`, the list tool's schema). */
#define DREAM_READ_OFFSET_MAX 100000000

typedef struct dream_reader dream_reader;

struct dream_reader_params {
    const char *wiki;  /* the vault; NULL: dream_paths_wiki_dir() */
    const char *store; /* the SQLite store; NULL: dream_paths_store(); "" : none. A store path
                          that does not exist is not created: the reader goes without it
                          (no captured subjects, no pipeline counts). */
    bool wiki_optional; /* a wiki that is not there (no articles/) is no error: the reader has
                           no articles, and dream_read_status says how to create the wiki while
                           it still shows the store (`dream status` before `dream init`) */
};

void dream_reader_default_params(struct dream_reader_params *p);

/* Opens a reader over the wiki (and store). DREAM_ENOTFOUND, naming the path and how to create
 * it, when the wiki has no articles/ directory (unless wiki_optional). The caller frees *out
 * with dream_reader_close. */
int dream_reader_open(const struct dream_reader_params *p, dream_reader **out);
void dream_reader_close(dream_reader *r);

/* The wiki directory the reader was opened on. */
const char *dream_reader_wiki(const dream_reader *r);

/* The store the reader opened (owned by the reader), or NULL when it has none. */
struct dream_store *dream_reader_store(dream_reader *r);

/* name or alias -> {"status": "article", "stem", "title", "kind"?, "type"?, "matched": how,
 * "lead" (clipped)}; a subject the pipeline captured without an article -> {"status":
 * "captured", "name", "chunks", "mentions": [{"cite","title","label"}]} (0 as well); otherwise
 * DREAM_ENOTFOUND with {"status": "missing", "candidates": [{"stem","title"}], "captured_near":
 * [{"name","chunks"}]}. Matching: exact stem, link rules (spaces/underscores, case), the
 * normal form (case, Unicode, a leading article dropped), the squeezed form (no spaces or
 * punctuation). */
int dream_read_resolve(dream_reader *r, const char *name, json_t **out);

/* Default (whole false): {"stem","title","lead" (clipped),"sections": [{"anchor","title",
 * "level"}], "more_sections"?, "bytes"}. whole: {"stem","title","bytes","text"}, or when the
 * article is over DREAM_READ_WHOLE_MAX the default output plus "too_big": true. */
int dream_read_article(dream_reader *r, const char *name, bool whole, json_t **out);

/* One section with its subsections, verbatim: {"stem","anchor","title","text","references":
 * [the definitions its markers cite], "truncated"?}. anchor may be a heading's anchor or its
 * title (a leading '#' is ignored). An unknown anchor is DREAM_ENOTFOUND with "anchors":
 * [the article's anchors]. */
int dream_read_section(dream_reader *r, const char *name, const char *anchor, json_t **out);

/* {"stem","outbound": {"infobox","series","main","see_also","prose": [stems]}, "redlinks":
 * [targets], "inbound": [{"stem","via"}], "more"?: {group: count}}; 25 per group at most. */
int dream_read_links(dream_reader *r, const char *name, json_t **out);

/* {"stem","fields": [{"key","value"}],"note"}: facts to read, not a query filter. */
int dream_read_infobox(dream_reader *r, const char *name, json_t **out);

/* {"total","offset","articles": [stems, sorted], "more"?}; limit 0 means 100. */
int dream_read_list(dream_reader *r, size_t offset, size_t limit, json_t **out);

/* Membership: by is "category", "type", "kind" or "series"; {"by","value","total","offset",
 * "members": [{"stem","lead" (clipped to 140)}], "more"? (members after these)}: the members
 * from the offset-th on, limit of them (0 or over 40 means 40), fewer when the page would be
 * over the budget. An unknown `by` is DREAM_EINVAL. */
int dream_read_members(dream_reader *r, const char *by, const char *value, size_t offset, size_t limit, json_t **out);

/* The search without a store: a text scan over the articles: terms split on whitespace, stopwords dropped (a
 * query of stopwords only is one term), case-insensitive substring matches; articles ranked by
 * distinct terms matched, then terms in the stem, then occurrences, then stem. {"query",
 * "terms","total","results": [{"stem","matched","hits","lead"}], "lines": [{"stem","anchor",
 * "line","text"}], "captured"?: [{"name","chunks"}]}. limit 0 means 8; at most 30. */
int dream_read_search(dream_reader *r, const char *query, size_t limit, json_t **out);

/* The full-text search (dream/search.h) over the store's index: query in its language (words,
 * "phrases", prefix*, OR, -word). Before it searches, the article rows are brought up to date
 * with the articles the reader listed (the one write a reader makes; derived data only).
 * {"query","match" (the FTS5 expression),"note"?,"results": [ranked leads, sections and
 * subjects: {"kind": "lead"|"section", "stem","anchor","title","section"?,"cite" (the first
 * citation its markers use, or null),"cites": [up to 4],"date" (the newest cited), "snippet"}
 * or {"kind": "subject","name","chunks","snippet"}] (absent with
 * conversations_only), "conversations": [ranked messages: {"cite": "conv:HASH#MSG",
 * "conversation" (its title),"date","role","snippet"}], "more"?: {"results",
 * "conversations"}, "ranked_among"?: {"newest": N, "why"} (a query matching more than
 * rank_window rows of a list is ranked among the most recently stored rank_window of them:
 * BM25 costs a lookup per row it scores)}. Snippets mark matches **so**.
 * Within DREAM_READ_BUDGET. A bad query is
 * DREAM_EINVAL naming it; no store is DREAM_ENOTFOUND. */
struct dream_read_search_params {
    const char *query;
    size_t limit;            /* hits per list; 0 means 5, at most 30 */
    bool conversations_only; /* messages only */
    int64_t since_ms;        /* only hits dated at or after this (0: no bound) */
    int64_t until_ms;        /* only hits dated before this (0: no bound) */
    size_t rank_window;      /* rows ranked per list at most; 0 means DREAM_READ_SEARCH_RANKED */
};
#define DREAM_READ_SEARCH_RANKED 20000
void dream_read_search_default_params(struct dream_read_search_params *p);
int dream_read_search_index(dream_reader *r, const struct dream_read_search_params *p, json_t **out);

/* {"wiki","wiki_exists","articles","stubs","redirects","skipped","git","last_commit": {"id",
 * "date","subject"} | null, "store": path | null, "conversations","messages","chunks",
 * "entities": {"total","article","captured"}, "progress": {"segment": {"done","given_up",
 * "total"} (conversations, at their current revision), "extract": {the same of chunks}},
 * "running": {"pid"} | null (a run holds the store's lock; pid -1 when it is not known),
 * "schedule": {...}, "recent": [5 stems, newest first]}. last_commit is the newest commit on
 * HEAD whose subject begins "memory:". wiki_exists is false only for a reader opened with
 * wiki_optional on a wiki not yet created; the store's part is there all the same. */
int dream_read_status(dream_reader *r, json_t **out);

/* One entry point for every tool, for the server and the CLI: tool is "resolve", "read",
 * "section", "links", "infobox", "list", "category", "search" or "status"; args is an object
 * of strings (or numbers/booleans), the ones dream_read_tool_args names: "name", "anchor",
 * "whole", "query", "limit", "offset", for search "conversations" (messages only), "since" and
 * "until" (YYYY-MM-DD, both days included), and for list one of "category", "type", "kind",
 * "series": then list is dream_read_members (paged by limit and offset), and "category" is the
 * same list with one of them required. Two of those four is DREAM_EINVAL rather than one
 * dropped. "search" is dream_read_search_index when the reader has a store, else
 * dream_read_search (the scan of the articles). A missing required argument or an unknown tool
 * is DREAM_EINVAL with {"error": ...} in *out; an argument the tool does not take is ignored
 * here (the server refuses it with dream_read_tool_args). */
int dream_read_call(dream_reader *r, const char *tool, const json_t *args, json_t **out);

/* The arguments tool takes, as dream_read_call reads them: a NULL-terminated list (static; empty
 * for "status"), or NULL for a tool that does not exist. */
const char *const *dream_read_tool_args(const char *tool);

/* Whether tool answers on a wiki not yet created (open the reader with wiki_optional for it):
 * "status", which still shows the store and says how to create the wiki. */
bool dream_read_tool_wiki_optional(const char *tool);

/* The tool's result as short human-readable text (malloc'd, ends with '\n'); NULL on
 * allocation failure. Works for error objects too. */
char *dream_read_text(const char *tool, const json_t *result);

#ifdef __cplusplus
}
#endif
#endif
