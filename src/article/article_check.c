/* article_check.c — validation of one article against the grammar, the footnote rules and the
 * vault's links (include/dream/article.h, dream_article_check). */
#include "article_internal.h"

#include "util/buf.h"
#include "util/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct problems {
    dream_article_problem_fn fn;
    void *ud;
    size_t n;
};

static void problem(struct problems *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(struct problems *p, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->n++;
    if (p->fn) p->fn(p->ud, line, msg);
}

static const char *kind_name(enum dream_article_section_kind k)
{
    switch (k) {
    case DREAM_SECTION_HISTORY: return "History";
    case DREAM_SECTION_SEE_ALSO: return "See also";
    case DREAM_SECTION_NOTES: return "Notes";
    case DREAM_SECTION_REFERENCES: return "References";
    default: return "a body section";
    }
}

/* The structural checks the gate shares: H1, header, infobox count, fences, tail order. */
static void check_grammar(const dream_article *a, struct problems *p)
{
    if (!a->h1_raw) problem(p, 0, "no '# Title' line: an article starts with exactly one H1");
    else if (a->front[0]) {
        bool blank = true;
        for (const char *c = a->front; *c; c++)
            if (*c != '\n' && *c != ' ' && *c != '\t' && *c != '\r') blank = false;
        if (!blank) problem(p, 1, "text before the H1: the '# Title' line comes first");
    }
    for (size_t i = 0; i < a->n_secs; i++)
        if (a->secs[i].pub.level == 1)
            problem(p, a->secs[i].pub.line, "a second H1 '%s': an article has exactly one; make it '## %s'",
                    a->secs[i].title, a->secs[i].title);
    if (a->unclosed_fence_line)
        problem(p, a->unclosed_fence_line, "a code fence opened here is never closed (it hides every heading after it)");
    if (a->conflict_line)
        problem(p, a->conflict_line, "an unresolved merge conflict starts here (<<<<<<< ... >>>>>>>): keep one side and remove the markers");
    if (a->n_infobox > 1) {
        int seen = 0;
        for (size_t i = 0; i < a->n_items; i++)
            if (a->items[i].kind == ART_INFOBOX && seen++)
                problem(p, a->items[i].line, "a second infobox: an article has at most one ```info block");
    }
    /* Header order: stub, banner, categories, infobox, then the lead. */
    int rank_seen = 0;
    for (size_t i = 0; i < a->n_items; i++) {
        int rank = 0;
        switch (a->items[i].kind) {
        case ART_STUB: rank = 1; break;
        case ART_BANNER: rank = 2; break;
        case ART_CATEGORIES: rank = 3; break;
        case ART_INFOBOX: rank = 4; break;
        case ART_LEAD: rank = 5; break;
        default: rank = 0;
        }
        if (!rank) continue;
        if (rank < rank_seen) {
            static const char *names[] = {"", "the {{stub}} line", "the series banner", "the categories line", "the infobox", "lead prose"};
            problem(p, a->items[i].line, "%s comes after %s: the header order is H1, stub, banner, categories, infobox, lead",
                    names[rank], names[rank_seen]);
        }
        if (rank > rank_seen) rank_seen = rank;
    }
    /* Anchors name sections in ledgers and gate parameters: two sections may not share one. */
    for (size_t i = 0; i < a->n_secs; i++)
        for (size_t j = 0; j < i; j++)
            if (a->secs[i].pub.kind == DREAM_SECTION_BODY && strcmp(a->secs[i].anchor, a->secs[j].anchor) == 0) {
                /* no line numbers in the message: the gate compares messages before and after */
                problem(p, a->secs[i].pub.line, "a second section named '%s': section names must differ",
                        a->secs[i].title);
                break;
            }
    /* Tail: each meta section at most once, in the order History, See also, Notes, References,
     * after every body section; References last. */
    int seen[5] = {0};
    enum dream_article_section_kind max = DREAM_SECTION_BODY;
    for (size_t i = 0; i < a->n_secs; i++) {
        const struct dream_article_section *s = &a->secs[i].pub;
        if (s->level != 2) continue;
        if (s->kind != DREAM_SECTION_BODY && seen[s->kind]++)
            problem(p, s->line, "a second '## %s' section: merge it into the first", kind_name(s->kind));
        if (s->kind < max && seen[s->kind] <= 1)
            problem(p, s->line, "'## %s' comes after '## %s': the order is body sections, History, See also, Notes, References",
                    s->kind == DREAM_SECTION_BODY ? s->title : kind_name(s->kind), kind_name(max));
        if (s->kind > max) max = s->kind;
    }
    (void)seen;
}

static void check_provenance(const struct dream_article_footnote *f, struct problems *p)
{
    if (f->n_conv != 1)
        problem(p, f->line, "footnote [^%s] carries %d `conv:` citations; a definition carries exactly one", f->label, f->n_conv);
    else if (!f->well_formed)
        problem(p, f->line, "footnote [^%s] is not in the form [[Sources/NOTE#^BLOCK|conv:HASH#MSG]] or `conv:HASH#MSG`, then "
                "(YYYY-MM-DD or undated, title): '%s'", f->label, f->text);
}

/* provenance: also check each definition's form (the gate judges that per definition). */
static void check_footnotes(const dream_article *a, struct problems *p, bool provenance)
{
    /* every marker defined */
    for (size_t i = 0; i < a->n_refs; i++) {
        bool def = false;
        for (size_t j = 0; j < a->n_notes && !def; j++) def = strcmp(a->notes[j].label, a->refs[i].label) == 0;
        if (!def) problem(p, a->refs[i].line, "footnote marker [^%s] has no definition", a->refs[i].label);
    }
    /* every definition used, once, numbered, well-formed, under References */
    long ri = dream_article_section_find_kind(a, DREAM_SECTION_REFERENCES);
    int ref_from = ri >= 0 ? a->secs[ri].pub.line : 0;
    int ref_to = ri >= 0 && (size_t)ri + 1 < a->n_secs ? a->secs[ri + 1].pub.line : (int)a->n_lines + 1;
    for (size_t j = 0; j < a->n_notes; j++) {
        const struct dream_article_footnote *f = &a->notes[j];
        bool used = false;
        for (size_t i = 0; i < a->n_refs && !used; i++) used = strcmp(f->label, a->refs[i].label) == 0;
        if (!used) problem(p, f->line, "footnote definition [^%s] is never cited in the text", f->label);
        for (size_t k = 0; k < j; k++)
            if (strcmp(a->notes[k].label, f->label) == 0) {
                problem(p, f->line, "footnote [^%s] is defined twice (first on line %d)", f->label, a->notes[k].line);
                break;
            }
        if (!f->number) problem(p, f->line, "footnote label [^%s] is not a number", f->label);
        if (provenance) check_provenance(f, p);
        if (f->line < ref_from || f->line >= ref_to)
            problem(p, f->line, "footnote definition [^%s] is outside '## References'", f->label);
    }
    /* numbers 1..k in first-reference order */
    int expect = 1;
    for (size_t i = 0; i < a->n_refs; i++) {
        bool earlier = false;
        for (size_t k = 0; k < i && !earlier; k++) earlier = strcmp(a->refs[k].label, a->refs[i].label) == 0;
        if (earlier) continue;
        if (a->refs[i].number != expect) {
            problem(p, a->refs[i].line, "footnote [^%s] is cited where [^%d] is expected: numbers run 1, 2, 3 ... in order of first citation",
                    a->refs[i].label, expect);
            break;
        }
        expect++;
    }
}

/* Whether a link's target names an attachment (a file of a kind Obsidian embeds or opens:
 * pictures, audio, video, PDF, canvases), which Obsidian finds anywhere in the vault: no article
 * to check it against. */
static bool check_attachment(const char *target)
{
    static const char *const kinds[] = {"png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "avif", "pdf", "mp3", "wav", "m4a", "ogg",
                                        "flac", "webm", "mp4", "mov", "mkv", "ogv", "canvas", "excalidraw", "base"};
    const char *dot = strrchr(target, '.');
    if (!dot || strchr(dot, '/')) return false;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcasecmp(dot + 1, kinds[i])) return true;
    return false;
}

static void check_links(const dream_article *a, const struct dream_article_check_params *cp, struct problems *p)
{
    for (size_t i = 0; i < a->n_links; i++) {
        const struct dream_article_link *l = &a->links[i];
        if (!l->target[0] || dream_article_link_is_meta(l->target) || check_attachment(l->target)) continue;
        if (dream_article_resolve_link(cp->stems, cp->n_stems, l->target) < 0)
            problem(p, l->line, "link [[%s]] points to no article (no articles/%s.md)", l->target, l->target);
    }
}

/* Every link into Sources/ (a footnote's key above all) lands on its note and block. */
static void check_sources(const dream_article *a, const struct dream_article_check_params *cp, struct problems *p)
{
    for (size_t i = 0; i < a->n_links; i++) {
        const struct dream_article_link *l = &a->links[i];
        if (strncmp(l->target, DREAM_SOURCES_DIR "/", sizeof DREAM_SOURCES_DIR) != 0) continue;
        const char *block = l->section && l->section[0] == '^' ? l->section + 1 : NULL;
        if (cp->block_exists(cp->block_ud, l->target, block)) continue;
        if (block)
            problem(p, l->line, "link [[%s#^%s]] lands on no message: %s.md is missing or has no block ^%s (the next `dream run` "
                    "writes the transcripts its footnotes cite)", l->target, block, l->target, block);
        else
            problem(p, l->line, "link [[%s]] points to no note: %s.md is missing", l->target, l->target);
    }
}

/* Every well-formed footnote cites a message the store holds (placeholders aside). */
static void check_cited(const dream_article *a, const struct dream_article_check_params *cp, struct problems *p)
{
    for (size_t i = 0; i < a->n_notes; i++) {
        const struct dream_article_footnote *f = &a->notes[i];
        if (!f->well_formed || !f->cite.conv || !f->cite.msg || dream_citation_is_placeholder(f->cite.conv)) continue;
        const char *why = cp->cite_missing(cp->cite_ud, f->cite.conv, f->cite.msg);
        if (why)
            problem(p, f->line, "footnote [^%s] cites conv:%s#%s, which the store does not hold: %s (a forgotten conversation's "
                    "footnotes go with `dream forget`; a wiki dreamed from another store is checked with --store PATH)",
                    f->label, f->cite.conv, f->cite.msg, why);
    }
}

size_t dream_article_check(const dream_article *a, const struct dream_article_check_params *cp,
                           dream_article_problem_fn fn, void *ud)
{
    struct problems p = {fn, ud, 0};
    size_t len, ok = utf8_valid_prefix(a->text, len = a->len);
    if (ok < len) { /* a file saved in another encoding (Latin-1, say): every reader of it sees garbage */
        int line = 1;
        for (size_t i = 0; i < ok; i++) line += a->text[i] == '\n';
        problem(&p, line, "not valid UTF-8 from byte %zu on (0x%02x): save the file as UTF-8", ok, (unsigned char)a->text[ok]);
    }
    check_grammar(a, &p);
    if (cp && cp->stem && a->h1_raw) {
        char *want = strdup(cp->stem);
        if (want) {
            for (char *c = want; *c; c++)
                if (*c == '_') *c = ' ';
            if (strcmp(a->title, want) != 0)
                problem(&p, a->h1_line, "the H1 '%s' does not match the file name (expected '# %s')", a->title, want);
            free(want);
        }
    }
    check_footnotes(a, &p, true);
    if (cp && cp->stems) check_links(a, cp, &p);
    if (cp && cp->block_exists) check_sources(a, cp, &p);
    if (cp && cp->cite_missing) check_cited(a, cp, &p);
    return p.n;
}

size_t art_check_grammar(const dream_article *a, dream_article_problem_fn fn, void *ud)
{
    struct problems p = {fn, ud, 0};
    check_grammar(a, &p);
    return p.n;
}

size_t art_check_footnotes(const dream_article *a, dream_article_problem_fn fn, void *ud)
{
    struct problems p = {fn, ud, 0};
    check_footnotes(a, &p, false);
    return p.n;
}
