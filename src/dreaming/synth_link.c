/* synth_link.c — CROSS-LINK (spec §6.10), deterministic, no model: the first mention of another
 * article's title or alias in an article's prose becomes [[Stem|as written]], and `## See also`
 * is rebuilt from the mentions, the articles that share chunks with it (the routing ledger), and
 * what it listed before, deduplicated and capped at 12. Idempotent: a second run changes
 * nothing. See dream/synthesis.h. */
#include "../util/buf.h"
#include "dream/error.h"
#include "dream/log.h"
#include "synth_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LINK_STAGE "link"
#define LINK_SEE_ALSO_CAP 12

struct lk_surface {
    char *text;  /* lowercase */
    size_t stem; /* index into the stems */
};

static void lk_free_surfaces(struct lk_surface *s, size_t n)
{
    for (size_t i = 0; i < n; i++) free(s[i].text);
    free(s);
}

/* Single words too generic to link on their own. */
static bool lk_generic(const char *s)
{
    static const char *const words[] = {"the", "and", "notes", "note", "overview", "history", "people", "person", "thing", "things",
                                        "work", "home", "time", "project", "projects", "idea", "ideas", "list", "general"};
    if (strchr(s, ' ')) return false;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(s, words[i])) return true;
    return false;
}

static int lk_add_surface(struct lk_surface **s, size_t *n, size_t *cap, const char *text, size_t stem)
{
    char buf[256];
    size_t len = 0;
    while (*text == ' ') text++;
    for (; *text && len < sizeof buf - 1; text++) buf[len++] = (char)tolower((unsigned char)*text);
    while (len && buf[len - 1] == ' ') len--;
    buf[len] = '\0';
    bool letter = false;
    for (size_t i = 0; i < len; i++) letter |= isalpha((unsigned char)buf[i]) != 0;
    if (len < 3 || !letter || lk_generic(buf)) return DREAM_OK;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*s)[i].text, buf)) {
            if ((*s)[i].stem != stem) (*s)[i].stem = (size_t)-1; /* two articles claim it: nobody gets it */
            return DREAM_OK;
        }
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        struct lk_surface *g = realloc(*s, *cap * sizeof *g);
        if (!g) return dream_error_set(DREAM_ENOMEM, "out of memory");
        *s = g;
    }
    (*s)[*n].text = strdup(buf);
    (*s)[*n].stem = stem;
    return (*s)[(*n)++].text ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

static int lk_cmp_len(const void *a, const void *b)
{
    const struct lk_surface *x = a, *y = b;
    size_t lx = strlen(x->text), ly = strlen(y->text);
    return lx != ly ? (lx < ly ? 1 : -1) : strcmp(x->text, y->text);
}

/* The end (exclusive) of what a byte at i opens that a link may not go into, or 0: an existing
 * [[link]] or embed, a [^marker], `code`, the **bold subject**, a Markdown link [text](url) (its
 * text too: a link in a link), a URL, an HTML tag (its attributes), a tag #word, inline $math$,
 * an Obsidian %%comment%% (one left open runs to the line's end: it goes on below). */
static size_t lk_protected_end(const char *line, size_t len, size_t i)
{
    const char *p = line + i, *end = line + len, *close = NULL;
    size_t skip = 0;
    if (p[0] == '[' && i + 1 < len && p[1] == '[') close = strstr(p, "]]"), skip = 2;
    else if (p[0] == '[' && i + 1 < len && p[1] == '^') close = memchr(p, ']', len - i), skip = 1;
    else if (p[0] == '[') { /* [text](url) */
        const char *t = memchr(p, ']', len - i);
        if (t && t + 1 < end && t[1] == '(') close = memchr(t, ')', (size_t)(end - t)), skip = 1;
    } else if (p[0] == '`') close = memchr(p + 1, '`', len - i - 1), skip = 1;
    else if (p[0] == '*' && i + 1 < len && p[1] == '*') close = strstr(p + 2, "**"), skip = 2; /* the bold subject */
    else if (p[0] == '$' && i + 1 < len && p[1] != ' ') close = memchr(p + 1, '$', len - i - 1), skip = 1;
    else if (p[0] == '%' && i + 1 < len && p[1] == '%') {
        close = i + 2 < len ? strstr(p + 2, "%%") : NULL, skip = 2;
        if (!close || close >= end) return len;
    } else if (p[0] == '<' && i + 1 < len && (isalpha((unsigned char)p[1]) || p[1] == '/' || p[1] == '!')) close = memchr(p, '>', len - i), skip = 1;
    else if (!strncasecmp(p, "http://", 7) || !strncasecmp(p, "https://", 8) || (!strncasecmp(p, "www.", 4) && (i == 0 || isspace((unsigned char)p[-1])))) {
        size_t k = i;
        while (k < len && !isspace((unsigned char)line[k]) && line[k] != '>' && line[k] != ')') k++;
        return k;
    } else if (p[0] == '#' && (i == 0 || isspace((unsigned char)p[-1])) && i + 1 < len && !isspace((unsigned char)p[1]) && p[1] != '#') {
        size_t k = i + 1;
        while (k < len && !isspace((unsigned char)line[k])) k++;
        return k;
    }
    if (!close || close >= end) return 0;
    return (size_t)(close - line) + skip;
}

/* Marks bytes of a line that may not be linked (lk_protected_end). */
static void lk_protect(const char *line, size_t len, char *prot)
{
    memset(prot, 0, len);
    for (size_t i = 0; i < len; i++) {
        size_t end = lk_protected_end(line, len, i);
        if (!end) continue;
        memset(prot + i, 1, end - i);
        i = end - 1;
    }
}

/* How many times "%%" stands in a line (an odd count opens or closes a comment over lines). */
static size_t lk_comment_marks(const char *line, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i + 1 < len; i++)
        if (line[i] == '%' && line[i + 1] == '%') n++, i++;
    return n;
}

/* Links, in text, the first unprotected whole-word mention of each surface whose stem is not yet
 * in linked[] (and is not self). Returns the new text (malloc'd) or NULL when nothing changed. */
static char *lk_link_text(const char *text, const struct lk_surface *surf, size_t n_surf, char **stems, bool *linked, size_t self)
{
    struct dbuf out = {0};
    bool changed = false, fence = false, math = false, comment = false;
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        const char *next = line + len + (line[len] == '\n');
        const char *t = line;
        while (t < line + len && (*t == ' ' || *t == '\t')) t++;
        /* not linked: a heading, a footnote definition, dream's lines, code (fenced or indented
         * four spaces or a tab deep), a math block, a table row (a link's | splits the cell), and
         * what an Obsidian comment over lines holds */
        bool skip = fence || math || comment || *t == '#' || (t[0] == '[' && t[1] == '^') || !strncmp(t, "categories:", 11) ||
                    !strncmp(t, "{{", 2) || *t == '|' || line[0] == '\t' || t - line >= 4;
        if (!strncmp(t, "```", 3) || !strncmp(t, "~~~", 3)) fence = !fence, skip = true;
        if (!fence && !comment && !strncmp(t, "$$", 2)) {
            skip = true;
            if (!memmem(t + 2, (size_t)(line + len - t - 2), "$$", 2)) math = !math; /* "$$x$$" on one line opens none */
        }
        if (!fence && !math && lk_comment_marks(line, len) % 2) comment = !comment, skip = true;
        char *cur = strndup(line, len);
        if (!cur) {
            dbuf_free(&out);
            return NULL;
        }
        for (size_t k = 0; !skip && k < n_surf; k++) {
            size_t st = surf[k].stem;
            if (st == (size_t)-1 || st == self || linked[st]) continue;
            size_t cl = strlen(cur), sl = strlen(surf[k].text);
            char *prot = malloc(cl + 1);
            if (!prot) break;
            lk_protect(cur, cl, prot);
            for (size_t i = 0; i + sl <= cl; i++) {
                if (prot[i] || prot[i + sl - 1] || strncasecmp(cur + i, surf[k].text, sl) != 0) continue;
                if ((i > 0 && (isalnum((unsigned char)cur[i - 1]) || cur[i - 1] == '_')) || isalnum((unsigned char)cur[i + sl])) continue;
                struct dbuf b = {0};
                dbuf_printf(&b, "%.*s[[%s|%.*s]]%s", (int)i, cur, stems[st], (int)sl, cur + i, cur + i + sl);
                char *nl = dbuf_take(&b);
                if (nl) {
                    free(cur);
                    cur = nl;
                    linked[st] = true;
                    changed = true;
                }
                break;
            }
            free(prot);
        }
        dbuf_puts(&out, cur);
        if (line[len] == '\n') dbuf_putc(&out, '\n');
        free(cur);
        line = next;
    }
    if (!changed) {
        dbuf_free(&out);
        return NULL;
    }
    dbuf_putc(&out, '\0');
    return dbuf_take(&out);
}

/* Stems sharing routed chunks with stem, most shared first (ties by name). */
static int lk_cooccur(dream_store *store, const char *stem, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT b.article, count(*) AS k FROM chunk_routed a JOIN chunk_routed b ON b.chunk = a.chunk AND b.article <> a.article "
                           "WHERE a.article = ? GROUP BY b.article ORDER BY k DESC, b.article LIMIT 24",
                           -1, &st, NULL))
        return store_sql_error(store, "reading shared chunks");
    sqlite3_bind_text(st, 1, stem, -1, SQLITE_STATIC);
    int rc = DREAM_OK;
    *out = calloc(24, sizeof **out);
    if (!*out) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    while (!rc && sqlite3_step(st) == SQLITE_ROW && *n < 24) (*out)[(*n)++] = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc;
}

/* Whether line (trimmed) is dream's own See also line, a bare "- [[target]]". */
static bool lk_bare_line(const char *line, size_t len)
{
    if (len < 7 || strncmp(line, "- [[", 4) || strncmp(line + len - 2, "]]", 2)) return false;
    for (size_t i = 4; i < len - 2; i++)
        if (line[i] == '[' || line[i] == ']' || line[i] == '|') return false;
    return true;
}

/* Whether dream listed target in article's See also before (see_also_offered): 1, 0, or a
 * negative status. */
static int lk_offered(dream_store *store, const char *article, const char *target)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "SELECT 1 FROM see_also_offered WHERE article = ?1 AND target = ?2", -1, &st, NULL))
        return store_sql_error(store, "reading the See also ledger");
    sqlite3_bind_text(st, 1, article, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, target, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    return step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : store_sql_error(store, "reading the See also ledger");
}

/* Records that article's See also lists the targets (on disk now). */
static int lk_offer(dream_store *store, const char *article, char *const *targets, size_t n)
{
    if (!n) return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "INSERT OR IGNORE INTO see_also_offered (article, target) VALUES (?1, ?2)", -1, &st, NULL))
        return store_sql_error(store, "writing the See also ledger");
    int rc = 0;
    for (size_t m = 0; !rc && m < n; m++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, article, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, targets[m], -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) rc = store_sql_error(store, "writing the See also ledger");
    }
    sqlite3_finalize(st);
    return rc;
}

/* The person's own lines of a's See also (anything but dream's bare "- [[stem]]" of an article: an
 * annotation, a link outside the wiki or to a note of theirs) into b as they are, in their order; the stems those lines link leave
 * see[0..*n), so that the rebuilt list does not name them twice. */
static int lk_own_see_also(const dream_article *a, const struct synth_stems *stems, char **see, size_t *n, struct dbuf *b)
{
    long si = dream_article_section_find_kind(a, DREAM_SECTION_SEE_ALSO);
    const char *body = si >= 0 ? dream_article_section(a, (size_t)si)->body : NULL;
    int rc = 0;
    for (const char *l = body; !rc && l && *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        const char *next = e ? e + 1 : l + len;
        while (len && (l[len - 1] == ' ' || l[len - 1] == '\t' || l[len - 1] == '\r')) len--;
        /* a bare line is dream's when it links an article; one to anything else (a note of the
         * person's, a Meta page) is theirs: dream lists articles only, so it never came back */
        bool ours = len && lk_bare_line(l, len);
        if (ours) {
            size_t t = strcspn(l + 4, "|#]\n");
            char *target = strndup(l + 4, t);
            if (!target) return dream_error_set(DREAM_ENOMEM, "out of memory");
            ours = dream_article_resolve_link((const char *const *)stems->stems, stems->n, target) >= 0;
            free(target);
        }
        if (len && !ours) {
            rc = dbuf_printf(b, "%.*s\n", (int)len, l);
            for (const char *o = l; !rc && (o = strstr(o, "[[")) != NULL && o < l + len; o += 2) {
                size_t t = strcspn(o + 2, "|#]\n");
                char *target = strndup(o + 2, t);
                if (!target) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                long k = target ? dream_article_resolve_link((const char *const *)stems->stems, stems->n, target) : -1;
                free(target);
                for (size_t m = 0; k >= 0 && m < *n;) {
                    if (strcmp(see[m], stems->stems[k]) == 0) {
                        memmove(see + m, see + m + 1, (*n - m - 1) * sizeof *see);
                        (*n)--;
                    } else {
                        m++;
                    }
                }
            }
        }
        l = next;
    }
    return rc;
}

/* The articles a's links name outside See also, in document order: each marked in seen[]
 * (self's too); out, when not NULL, gets each other than self once, in that order. */
static void lk_mentions(const dream_article *a, const struct synth_stems *stems, size_t self, bool *seen, char **out, size_t *n)
{
    for (size_t l = 0; l < dream_article_link_count(a); l++) {
        const struct dream_article_link *lk = dream_article_link(a, l);
        if (lk->in_see_also || dream_article_link_is_meta(lk->target)) continue;
        long s = dream_article_resolve_link((const char *const *)stems->stems, stems->n, lk->target);
        if (s < 0 || seen[s]) continue;
        seen[s] = true;
        if (out && (size_t)s != self) out[(*n)++] = stems->stems[s];
    }
}

static bool lk_in(char **list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] && !strcmp(list[i], s)) return true;
    return false;
}

int dream_synth_link(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result)
{
    struct dream_synth_params p;
    int rc = synth_stage_params("link", params, &p);
    if (rc) return rc;
    struct dream_synth_result res = {0};
    rc = p.dry_run ? DREAM_OK : dream_synth_recover(store, p.wiki_dir, NULL);
    struct synth_stems stems = {0};
    if (!rc) rc = synth_list_stems(p.wiki_dir, &stems.stems, &stems.n);
    res.eligible = stems.n;
    if (rc || p.dry_run || stems.n == 0) goto out;
    /* the alias index: titles and infobox aliases */
    struct lk_surface *surf = NULL;
    size_t n_surf = 0, cap = 0;
    for (size_t i = 0; !rc && i < stems.n; i++) {
        char *title = strdup(stems.stems[i]);
        for (char *q = title; q && *q; q++)
            if (*q == '_') *q = ' ';
        rc = title ? lk_add_surface(&surf, &n_surf, &cap, title, i) : DREAM_ENOMEM;
        free(title);
        char *path = synth_article_path(p.wiki_dir, stems.stems[i]);
        dream_article *a = NULL;
        if (!rc && path && dream_article_read_file(path, &a) == 0) {
            for (size_t k = 0; !rc && k < dream_article_alias_count(a); k++) rc = lk_add_surface(&surf, &n_surf, &cap, dream_article_alias(a, k), i);
        }
        dream_error_clear();
        dream_article_free(a);
        free(path);
    }
    if (n_surf) qsort(surf, n_surf, sizeof *surf, lk_cmp_len);
    bool *linked = calloc(stems.n, sizeof *linked);
    if (!linked && !rc) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < stems.n; i++) {
        char *path = synth_article_path(p.wiki_dir, stems.stems[i]);
        dream_article *before = NULL, *after = NULL;
        if (!path || dream_article_read_file(path, &before) || dream_article_is_redirect(before) ||
            !synth_editable(LINK_STAGE, path, before, &res)) {
            dream_error_clear();
            free(path);
            dream_article_free(before);
            continue;
        }
        rc = dream_article_clone(before, &after);
        /* stems already linked from the body count as linked */
        memset(linked, 0, stems.n * sizeof *linked);
        lk_mentions(before, &stems, i, linked, NULL, NULL);
        char **mentioned = calloc(stems.n + 1, sizeof *mentioned);
        size_t n_mentioned = 0;
        if (!mentioned && !rc) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        /* the lead, then each body section */
        const char *lead = dream_article_lead(after);
        char *nl = !rc && lead && *lead ? lk_link_text(lead, surf, n_surf, stems.stems, linked, i) : NULL;
        if (nl) rc = dream_article_set_lead(after, nl);
        free(nl);
        for (size_t s = 0; !rc && s < dream_article_section_count(after); s++) {
            const struct dream_article_section *sec = dream_article_section(after, s);
            if (sec->kind != DREAM_SECTION_BODY && sec->kind != DREAM_SECTION_HISTORY) continue;
            char *nb = lk_link_text(sec->body, surf, n_surf, stems.stems, linked, i);
            if (nb) rc = dream_article_section_set_body(after, s, nb);
            free(nb);
        }
        /* the mentions in document order, the links just made among them: listed in the order
         * the next run reads them in (before, the new ones came in stem order, and the next run
         * reordered See also and committed again) */
        if (!rc) {
            memset(linked, 0, stems.n * sizeof *linked);
            lk_mentions(after, &stems, i, linked, mentioned, &n_mentioned);
        }
        /* See also: mentions in document order, co-occurring, old */
        char **co = NULL;
        size_t n_co = 0;
        if (!rc) rc = lk_cooccur(store, stems.stems[i], &co, &n_co);
        char *see[LINK_SEE_ALSO_CAP];
        size_t n_see = 0;
        for (size_t m = 0; m < n_mentioned && n_see < LINK_SEE_ALSO_CAP; m++)
            if (!lk_in(see, n_see, mentioned[m])) see[n_see++] = mentioned[m];
        for (size_t m = 0; m < n_co && n_see < LINK_SEE_ALSO_CAP; m++)
            if (co[m] && lk_in(stems.stems, stems.n, co[m]) && !lk_in(see, n_see, co[m]) && strcmp(co[m], stems.stems[i])) see[n_see++] = co[m];
        for (size_t l = 0; !rc && l < dream_article_link_count(before) && n_see < LINK_SEE_ALSO_CAP; l++) {
            const struct dream_article_link *lk = dream_article_link(before, l);
            if (!lk->in_see_also) continue;
            long s = dream_article_resolve_link((const char *const *)stems.stems, stems.n, lk->target);
            if (s >= 0 && (size_t)s != i && !lk_in(see, n_see, stems.stems[s])) see[n_see++] = stems.stems[s];
        }
        /* an entry dream listed before and the person took out stays out: the next run put it
         * back (a co-occurring subject the text never names), and a removal is an edit too */
        for (size_t m = 0; !rc && m < n_see;) {
            bool there = false;
            for (size_t l = 0; !there && l < dream_article_link_count(before); l++) {
                const struct dream_article_link *lk = dream_article_link(before, l);
                long s = lk->in_see_also ? dream_article_resolve_link((const char *const *)stems.stems, stems.n, lk->target) : -1;
                there = s >= 0 && strcmp(stems.stems[s], see[m]) == 0;
            }
            int was = there ? 0 : lk_offered(store, stems.stems[i], see[m]);
            if (was < 0) rc = was;
            else if (was) {
                n_see--;
                memmove(see + m, see + m + 1, (n_see - m) * sizeof *see);
            } else {
                m++;
            }
        }
        char *offer[LINK_SEE_ALSO_CAP];
        size_t n_offer = 0;
        if (!rc && n_see) {
            struct dbuf b = {0};
            rc = lk_own_see_also(before, &stems, see, &n_see, &b);
            for (size_t m = 0; !rc && m < n_see; m++)
                if (!(offer[n_offer++] = strdup(see[m]))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            for (size_t m = 0; !rc && m < n_see; m++) rc = dbuf_printf(&b, "- [[%s]]\n", see[m]);
            char *body = dbuf_take(&b);
            long si;
            while (!rc && (si = dream_article_section_find_kind(after, DREAM_SECTION_SEE_ALSO)) >= 0) rc = dream_article_section_remove(after, (size_t)si);
            if (!rc) rc = body ? dream_article_section_insert(after, 2, "See also", body, NULL) : DREAM_ENOMEM;
            free(body);
        }
        for (size_t m = 0; m < n_co; m++) free(co[m]);
        free(co);
        free(mentioned);
        /* only an article whose links or See also changed is normalized and written */
        size_t bl, al;
        const char *bt = dream_article_text(before, &bl), *at = rc ? NULL : dream_article_text(after, &al);
        bool changed = !rc && (bl != al || memcmp(bt, at, bl) != 0);
        if (changed) {
            rc = synth_normalize(after, stems.stems[i], &stems);
            at = rc ? NULL : dream_article_text(after, &al);
            changed = !rc && (bl != al || memcmp(bt, at, bl) != 0);
        }
        bool listed = !rc; /* the See also on disk now is the one built here */
        if (changed) {
            bool accepted = false;
            rc = synth_write(store, p.wiki_dir, LINK_STAGE, stems.stems[i], before, after, NULL, NULL, 0, stems.stems[i], 0, &accepted);
            if (!rc && accepted) res.linked++;
            else if (!rc) res.rejected++;
            listed = !rc && accepted;
        }
        if (listed) rc = lk_offer(store, stems.stems[i], offer, n_offer);
        for (size_t m = 0; m < n_offer; m++) free(offer[m]);
        dream_article_free(before);
        dream_article_free(after);
        free(path);
        if (!rc && p.on_progress) p.on_progress(p.progress_ud, LINK_STAGE, i + 1, stems.n);
    }
    free(linked);
    lk_free_surfaces(surf, n_surf);
    if (!rc && res.linked) {
        char subject[128];
        snprintf(subject, sizeof subject, "link %zu article(s)", res.linked);
        rc = synth_commit(store, p.wiki_dir, subject, &res.committed);
    }
out:
    synth_free_strings(stems.stems, stems.n);
    if (result) *result = res;
    return rc;
}
