/*
 * search.h — the store's full-text search index (issue 15): one SQLite FTS5 table, BM25
 * ranking, the unicode61 tokenizer with diacritics folded (remove_diacritics 2), so "cafe"
 * finds "café" and case never matters. The index holds no copy of the text (FTS5's external
 * content): a snippet's text is read from the row that holds it, through the view
 * search_source (store_internal.h has the schema).
 *
 * What it holds, by row id (the ranges let a query ask for one kind without a filter column):
 *   - every stored message: (1 << 50) + conversation row id * 2^24 + position, text only, dated
 *     by the message's time (else the conversation's); kept by triggers on messages, so ingest
 *     indexes a conversation in the transaction that writes it;
 *   - every captured subject (a pipeline entity not routed to an article): (1 << 48) + its id,
 *     its name as the title, no date; kept by triggers on pipeline_entities (route writes it);
 *   - every article's lead (with its infobox) and body sections: the row ids of
 *     search_sections (below 2^48), which holds their text: title = the article's title,
 *     section = the heading, dated by the newest date its footnotes cite. Written by every
 *     stage that writes an article, in the transaction that journals the write (synth_write),
 *     and brought up to date with the wiki (a hand edit, an older store) whenever a reader
 *     searches (dream_search_sync).
 *
 * The query language (dream_search_compile): words (all must match), "a phrase", word* (a
 * prefix), OR between alternatives, -word or NOT word to exclude; AND is allowed and changes
 * nothing. Everything else is text: punctuation never reaches FTS5 as syntax.
 *
 * The parts: the compiler and the fill SQL live in the store (src/store/store_search.c); the
 * article rows in src/dreaming/search_index.c (it parses articles); the query and its hits in
 * src/read/read_search.c (the read tool "search", dream/read.h).
 *
 * Functions return 0 (DREAM_OK) or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_SEARCH_H
#define DREAM_SEARCH_H

#include "dream/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dream_article dream_article; /* dream/article.h */

#define DREAM_SEARCH_MESSAGE_BASE (INT64_C(1) << 50)
#define DREAM_SEARCH_SUBJECT_BASE (INT64_C(1) << 48)
#define DREAM_SEARCH_POSITION_SPAN (INT64_C(1) << 24)

/* The most bytes a query may have, and the most terms (words and phrases) in it. */
#define DREAM_SEARCH_QUERY_MAX 1000
#define DREAM_SEARCH_TERMS_MAX 32

/* Compiles a query (the language above) into an FTS5 MATCH expression in which every term is
 * a quoted string, so no input can be an FTS5 syntax error. *match is malloc'd (the caller
 * frees it). Bad syntax is DREAM_EINVAL, the message naming the query and what is wrong: an
 * unclosed quote, OR with nothing on one side, an alternative that only excludes, a query
 * with no word at all, over DREAM_SEARCH_QUERY_MAX bytes or DREAM_SEARCH_TERMS_MAX terms, not
 * valid UTF-8. */
int dream_search_compile(const char *query, char **match);

/* Rows of one article (its stem) in the index, replacing what it had: the lead with the
 * infobox's values, then each body or History section; "See also", "Notes" and "References"
 * are left out. mtime (the file's, in nanoseconds; 0 when not known) and the text's size and hash
 * are recorded so dream_search_sync can tell a changed file. Runs inside the caller's transaction (it opens
 * none). a NULL: the article's rows are removed. */
int dream_search_index_article(dream_store *store, const char *stem, const dream_article *a, int64_t mtime);

/* Brings the article rows up to date with the wiki's articles as listed (stems sorted by strcmp; stems[i] parsed as
 * articles[i], its file's mtime[i] in nanoseconds): an article whose size, mtime or hash differs
 * from what was indexed is indexed again (the hash is compared only when size or mtime differ,
 * or when the mtime recorded was too recent to trust: see search_record); an indexed stem not in the list is removed. One transaction,
 * only when something changed; *changed (may be NULL) counts the articles indexed or removed. */
int dream_search_sync(dream_store *store, const char *const *stems, const dream_article *const *articles, const int64_t *mtimes,
                      size_t n, size_t *changed);

struct dream_search_rebuild_stats {
    size_t messages, subjects, articles, sections;
    size_t text_bytes; /* the bytes of text indexed */
};

/* Rebuilds the whole index (a damaged one too): drops the FTS5 table and what records the
 * articles, creates them again, indexes every message and captured subject from the store and
 * every article under <wiki>/articles (wiki NULL: articles are left for the next sync). One
 * transaction, so a crash leaves the old index as it was. stats may be NULL. */
int dream_search_rebuild(dream_store *store, const char *wiki, struct dream_search_rebuild_stats *stats);

/* FTS5's own integrity check of the index against its content; DREAM_EFORMAT with its message
 * when it fails (then dream_search_rebuild). */
int dream_search_check(dream_store *store);

#ifdef __cplusplus
}
#endif
#endif
