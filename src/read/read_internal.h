/* read_internal.h — the reader's index, shared by the read tools' files (read_index.c,
 * read_tools.c, read_status.c, read_text.c). */
#ifndef DREAM_READ_INTERNAL_H
#define DREAM_READ_INTERNAL_H

#include "dream/article.h"
#include "dream/read.h"
#include "dream/store.h"

#include <stddef.h>
#include <stdint.h>

/* One article file of the wiki. */
struct read_entry {
    char *stem;
    char *path;         /* <wiki>/articles/<stem>.md */
    dream_article *a;   /* parsed at open */
    int64_t mtime;      /* seconds */
    int64_t mtime_ns;   /* nanoseconds, for the search index's sync */
};

/* A name that resolves to an entry: a normal form or a squeezed form. */
struct read_key {
    char *key;
    size_t entry;
    size_t order; /* insertion order: on equal keys the first writer wins */
    const char *how; /* "alias", "title", "pipeline" (static) */
};

struct dream_reader {
    char *wiki;
    char *articles_dir;
    struct read_entry *e; /* sorted by stem (strcmp) */
    size_t n;
    const char **stems;   /* e[i].stem, for dream_article_resolve_link */
    struct read_key *normal; size_t n_normal;   /* sorted by key */
    struct read_key *squeezed; size_t n_squeezed;
    dream_store *store;   /* NULL when there is none */
    char *store_path;     /* NULL when there is none */
    size_t skipped;       /* files left out of the index: links leaving the wiki, unreadable */
    bool no_wiki;         /* opened with wiki_optional on a wiki not yet created */
};

/* The entry of an article name (exact stem, else the wiki-link rules), or -1. Never touches
 * the file system. */
long read_find(const dream_reader *r, const char *name);

/* A link target's entry by the wiki-link rules (dream_article_resolve_link, faster), or -1. */
long read_target(const dream_reader *r, const char *target);

/* Resolves name as dream_read_resolve's layers 1-4 do: *how says which matched. -1 when none. */
long read_lookup(const dream_reader *r, const char *name, const char **how);

/* The error object for a name that matched nothing (with candidates); sets the last error and
 * returns DREAM_ENOTFOUND (or DREAM_ENOMEM). */
int read_missing(dream_reader *r, const char *name, json_t **out);

/* The title of an entry: its H1, else its stem with '_' -> ' '. malloc'd. */
char *read_title(const struct read_entry *e);

/* The most bytes of a title (or an echoed query) in any output. */
#define READ_TITLE_MAX 160

/* read_title clipped to READ_TITLE_MAX for output. malloc'd. */
char *read_title_out(const struct read_entry *e);

/* text clipped to at most max bytes (UTF-8 safe, at a word boundary when one is near), footnote
 * markers removed and whitespace runs squeezed; "…" appended when cut. malloc'd. */
char *read_clip(const char *text, size_t max);

/* The length of the longest prefix of s[0..n) that is valid UTF-8 (no NUL, no surrogates). */
size_t read_utf8_valid_prefix(const unsigned char *s, size_t n);

/* A JSON string of s[0..n) with every byte that does not begin valid UTF-8 replaced by '?'
 * (articles and store text are not guaranteed UTF-8; JSON strings must be). */
json_t *read_json_text(const char *s, size_t n);

/* The compact JSON size of v in bytes. */
size_t read_json_size(const json_t *v);

/* Sets *out to {"error": message} and returns code. */
int read_error_object(json_t **out, int code);

#endif
