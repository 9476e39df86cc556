/*
 * article_internal.h — the parsed form of an article shared by article*.c (see
 * include/dream/article.h for the contract).
 *
 * The article is a list of parts that tile its text exactly: front, H1 line, header items,
 * then each section's heading line and body. Writing concatenates the parts; every edit changes
 * parts, re-renders the text and re-parses it, so the indexes always describe the current text.
 */
#ifndef DREAM_ARTICLE_INTERNAL_H
#define DREAM_ARTICLE_INTERNAL_H

#include "dream/article.h"

#include <stdbool.h>
#include <stddef.h>

enum art_item_kind {
    ART_BLANK = 0,
    ART_LEAD,       /* a prose line of the header */
    ART_STUB,       /* {{stub}} */
    ART_BANNER,     /* *Part of a series on [[X]].* */
    ART_CATEGORIES, /* categories: [[Category:A]], ... */
    ART_INFOBOX,    /* a whole ```info block, fences included */
    ART_REDIRECT,   /* *Redirects to [[X]].* */
    ART_CODE,       /* another fenced block in the header */
};

struct art_item {
    enum art_item_kind kind;
    char *raw; /* the exact bytes, newline(s) included */
    int line;
};

struct art_section {
    struct dream_article_section pub;
    char *heading_raw; /* the heading line, newline included */
    char *body;
    char *title;
    char *anchor;
};

/* One line of the text: [start, end) without its '\n'; next is where the following line starts. */
struct art_line {
    size_t start, end, next;
    bool fenced;   /* a fence delimiter or inside a fence */
    bool delim;    /* a fence delimiter line */
    int heading;   /* 1-6 for a heading outside fences, else 0 */
};

struct dream_article {
    char *text; /* the current text, NUL-terminated */
    size_t len;

    struct art_line *lines;
    size_t n_lines;

    char *fm_raw;  /* the front matter block, delimiters and newline included; NULL when none */
    size_t fm_len;   /* its bytes (0 when none) */
    size_t fm_lines; /* its lines */
    char *front;   /* bytes between the front matter and the H1 */
    char *h1_raw;  /* the H1 line, NULL when none */
    char *title;   /* H1 text, trimmed */
    int h1_line;
    struct art_item *items;
    size_t n_items;
    struct art_section *secs;
    size_t n_secs;

    char *lead; /* cached dream_article_lead */

    int infobox_item; /* index into items of the first infobox, -1 */
    int n_infobox;    /* infobox blocks in the header */
    struct dream_article_field *fields;
    size_t n_fields;

    struct dream_article_footnote *notes;
    size_t n_notes;
    size_t *key_from, *key_to; /* per footnote: the byte span of its citation key in the text */
    struct dream_article_ref *refs;
    size_t n_refs;
    struct dream_article_link *links;
    size_t n_links;
    struct dream_article_template *tmpls;
    size_t n_tmpls;

    int unclosed_fence_line; /* the opener of a fence never closed, 0 when balanced */
    int conflict_line;       /* a "<<<<<<<" line a ">>>>>>>" line follows (a merge left
                                unresolved), 0 when none */

    char **aliases; /* dream_article_alias: the front matter's, then the infobox's */
    size_t n_aliases;
    char **cats;    /* dream_article_category: the tags', then the categories line's */
    size_t n_cats;
};

/* Front matter (article_front.c). The block's length at the start of text (0: none) and its
 * line count; the aliases and categories of a parsed article into a->aliases and a->cats (0 or
 * DREAM_ENOMEM); the removal of an old categories line or infobox aliases line, with a blank line
 * that would be left doubled. */
size_t art_front_matter_span(const char *t, size_t len, size_t *lines);
int art_front_index(dream_article *a);

/* Removes header item at and, when a blank line would be left doubled, the blank after it. */
void art_remove_item_tidy(dream_article *a, size_t at);

/* Rebuilds a->text from its parts and re-parses it in place. */
int art_rerender(dream_article *a);

/* Replaces the whole article with the parse of text. */
int art_reparse(dream_article *a, const char *text, size_t len);

/* Fence scanning over one text (the one scanner every component uses): returns the fence
 * opener's marker length (>= 3) and char when line [s, e) opens a fence, else 0. */
size_t art_fence_open(const char *s, const char *e, char *ch);
/* True when [s, e) closes a fence opened with n x ch. */
bool art_fence_close(const char *s, const char *e, char ch, size_t n);

/* Heading level of line [s, e) (1-6), or 0. */
int art_heading_level(const char *s, const char *e);

/* Trimmed copy of [s, e). */
char *art_strndup_trim(const char *s, const char *e);

/* True when line [s, e) is a footnote definition ("[^label]:" at its start). */
bool art_is_def_line(const char *s, const char *e);

/* Section kind of a heading by level and title. */
enum dream_article_section_kind art_section_kind(int level, const char *title);

/* Parses the text of a definition into f's citation fields; f->text must be set. The key's
 * byte span within f->text goes to [*key_from, *key_to) (both 0 when there is no key). */
void art_parse_citation_at(struct dream_article_footnote *f, size_t *key_from, size_t *key_to);

/* The structural checks of dream_article_check (H1, header order, infoboxes, fences, tail
 * order), and its footnote checks without the form of each definition; each returns the
 * number of problems reported to fn. */
size_t art_check_grammar(const dream_article *a, dream_article_problem_fn fn, void *ud);
size_t art_check_footnotes(const dream_article *a, dream_article_problem_fn fn, void *ud);

#endif
