/* read_index.c — opening a reader: list and parse the wiki's articles (never following a link
 * out of the wiki), index their names, and match a name against them (see dream/read.h). */
#include "read_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "dream/paths.h"
#include "dream/vault.h"
#include "entity_name.h"
#include "store_internal.h"
#include "util/buf.h"
#include "util/edit_distance.h"
#include "util/file.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void dream_reader_default_params(struct dream_reader_params *p)
{
    memset(p, 0, sizeof *p);
}

const char *dream_reader_wiki(const dream_reader *r)
{
    return r->wiki;
}

struct dream_store *dream_reader_store(dream_reader *r)
{
    return r->store;
}

int read_error_object(json_t **out, int code)
{
    const char *m = dream_error_last();
    *out = json_object();
    if (*out) json_object_set_new(*out, "error", read_json_text(m, strlen(m)));
    return code;
}

size_t read_json_size(const json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT);
    size_t n = s ? strlen(s) : 0;
    free(s);
    return n;
}

char *read_title(const struct read_entry *e)
{
    const char *t = e->a ? dream_article_title(e->a) : NULL;
    char *s = strdup(t && t[0] ? t : e->stem);
    if (s && !(t && t[0]))
        for (char *p = s; *p; p++)
            if (*p == '_') *p = ' ';
    return s;
}

size_t read_utf8_valid_prefix(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || i + len > n) return i;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xC0) != 0x80) return i;
        unsigned cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
        for (size_t k = 1; k < len; k++) cp = (cp << 6) | (s[i + k] & 0x3F);
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0)
            return i;
        i += len;
    }
    return n;
}

json_t *read_json_text(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (!c) return NULL;
    size_t w = 0, i = 0;
    while (i < n) { /* each byte that does not begin a valid sequence becomes '?' */
        size_t ok = read_utf8_valid_prefix((const unsigned char *)s + i, n - i);
        memcpy(c + w, s + i, ok);
        w += ok;
        i += ok;
        if (i < n) {
            c[w++] = '?';
            i++;
        }
    }
    json_t *v = json_stringn(c, w);
    free(c);
    return v;
}

char *read_title_out(const struct read_entry *e)
{
    char *t = read_title(e);
    char *c = t ? read_clip(t, READ_TITLE_MAX) : NULL;
    free(t);
    return c;
}

char *read_clip(const char *text, size_t max)
{
    struct dbuf b = {0};
    bool space = false;
    for (const char *p = text; *p; p++) {
        if (p[0] == '[' && p[1] == '^') { /* footnote marker [^label] */
            const char *q = strchr(p, ']');
            if (q && q - p < 16) {
                p = q;
                continue;
            }
        }
        if (isspace((unsigned char)*p) || (unsigned char)*p < 0x20 || *p == 0x7f) {
            space = b.len > 0;
            continue;
        }
        if (space && dbuf_putc(&b, ' ')) goto oom;
        space = false;
        if (dbuf_putc(&b, *p)) goto oom;
    }
    if (!b.data) return strdup("");
    if (b.len > max) {
        size_t cut = max;
        while (cut > 0 && ((unsigned char)b.data[cut] & 0xC0) == 0x80) cut--; /* UTF-8 boundary */
        size_t word = cut;
        while (word > 0 && b.data[word] != ' ') word--;
        if (word > max * 3 / 4) cut = word;
        b.len = cut;
        b.data[cut] = '\0';
        if (dbuf_puts(&b, "…")) goto oom;
    }
    for (size_t i = 0; i < b.len;) { /* invalid UTF-8 bytes become '?', so the text is a JSON string */
        size_t ok = read_utf8_valid_prefix((const unsigned char *)b.data + i, b.len - i);
        i += ok;
        if (i < b.len) b.data[i++] = '?';
    }
    return dbuf_take(&b);
oom:
    dbuf_free(&b);
    return NULL;
}

static int read_cmp_entry(const void *x, const void *y)
{
    return strcmp(((const struct read_entry *)x)->stem, ((const struct read_entry *)y)->stem);
}

static int read_cmp_key(const void *x, const void *y)
{
    const struct read_key *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* Lists and parses articles/: regular files named <stem>.md, and links that stay in the wiki. */
static int read_list_articles(dream_reader *r)
{
    char root[PATH_MAX];
    if (!realpath(r->wiki, root)) return dream_error_set(DREAM_ENOTFOUND, "cannot resolve the wiki path %s", r->wiki);
    DIR *d = opendir(r->articles_dir);
    if (!d) return dream_error_set(DREAM_EIO, "cannot list %s", r->articles_dir);
    size_t cap = 0;
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' || l <= 3 || strcmp(de->d_name + l - 3, ".md") != 0) continue;
        struct dbuf path = {0};
        if (dbuf_printf(&path, "%s/%s", r->articles_dir, de->d_name)) {
            rc = DREAM_ENOMEM;
            break;
        }
        struct stat st;
        bool ok = file_wiki_article(path.data, root, &st);
        dream_article *a = NULL;
        if (ok && dream_article_read_file(path.data, &a) != 0) ok = false;
        if (!ok) {
            r->skipped++;
            dbuf_free(&path);
            continue;
        }
        if (r->n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct read_entry *ne = realloc(r->e, nc * sizeof *ne);
            if (!ne) {
                dream_article_free(a);
                dbuf_free(&path);
                rc = dream_error_set(DREAM_ENOMEM, "out of memory listing %s", r->articles_dir);
                break;
            }
            r->e = ne;
            cap = nc;
        }
        struct read_entry *e = &r->e[r->n];
        e->stem = strndup(de->d_name, l - 3);
        e->path = dbuf_take(&path);
        e->a = a;
        e->mtime = (int64_t)st.st_mtime;
        e->mtime_ns = file_mtime_ns(&st);
        r->n++;
        if (!e->stem || !e->path) rc = dream_error_set(DREAM_ENOMEM, "out of memory listing %s", r->articles_dir);
    }
    closedir(d);
    if (rc) return rc;
    if (r->n) qsort(r->e, r->n, sizeof *r->e, read_cmp_entry);
    r->stems = malloc((r->n ? r->n : 1) * sizeof *r->stems);
    if (!r->stems) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->n; i++) r->stems[i] = r->e[i].stem;
    return 0;
}

struct read_keys {
    struct read_key *v;
    size_t n, cap;
};

/* Adds the normal form of name as a key of entry (no-op for a name that is not valid UTF-8). */
static int read_key_add(struct read_keys *normal, struct read_keys *squeezed, const char *name, size_t entry, const char *how)
{
    char *nf = NULL, *sq = NULL;
    if (entity_name_normal(name, &nf) != 0 || !nf[0]) {
        free(nf);
        dream_error_clear();
        return 0;
    }
    if (entity_name_squeeze(nf, &sq) != 0) {
        free(nf);
        return DREAM_ENOMEM;
    }
    struct read_keys *lists[2] = {normal, squeezed};
    char *keys[2] = {nf, sq};
    for (int k = 0; k < 2; k++) {
        struct read_keys *l = lists[k];
        if (!keys[k][0]) {
            free(keys[k]);
            continue;
        }
        if (l->n == l->cap) {
            size_t nc = l->cap ? l->cap * 2 : 128;
            struct read_key *nv = realloc(l->v, nc * sizeof *nv);
            if (!nv) {
                for (int j = k; j < 2; j++) free(keys[j]);
                return dream_error_set(DREAM_ENOMEM, "out of memory");
            }
            l->v = nv;
            l->cap = nc;
        }
        l->v[l->n] = (struct read_key){keys[k], entry, l->n, how};
        l->n++;
    }
    return 0;
}

/* Sorts a key list and drops later writers of an equal key. */
static void read_keys_finish(struct read_keys *l, struct read_key **v, size_t *n)
{
    if (l->n) qsort(l->v, l->n, sizeof *l->v, read_cmp_key);
    size_t w = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (w && strcmp(l->v[w - 1].key, l->v[i].key) == 0) {
            free(l->v[i].key);
            continue;
        }
        l->v[w++] = l->v[i];
    }
    *v = l->v;
    *n = w;
}

/* Names from the pipeline: each entity routed to an article that exists is known by its name
 * and by every surface form folded into it. */
static int read_store_keys(dream_reader *r, struct read_keys *nk, struct read_keys *sk)
{
    if (!r->store) return 0;
    sqlite3_stmt *st = NULL;
    const char *sql = "SELECT e.article_title, e.name, m.surface FROM pipeline_entities e"
                      " LEFT JOIN chunk_mentions m ON m.entity = e.id"
                      " WHERE e.route = 'article' AND e.article_title IS NOT NULL ORDER BY e.id, m.surface";
    if (sqlite3_prepare_v2(store_db(r->store), sql, -1, &st, NULL) != SQLITE_OK)
        return store_sql_error(r->store, "reading entity names");
    int rc = 0, s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *title = (const char *)sqlite3_column_text(st, 0);
        char *stem = dream_article_stem(title);
        if (!stem) {
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
        long i = read_target(r, stem);
        free(stem);
        if (i < 0) continue;
        for (int c = 1; c <= 2 && !rc; c++) {
            const char *name = (const char *)sqlite3_column_text(st, c);
            if (name) rc = read_key_add(nk, sk, name, (size_t)i, "pipeline");
        }
    }
    sqlite3_finalize(st);
    return rc;
}

static int read_build_keys(dream_reader *r)
{
    struct read_keys nk = {0}, sk = {0};
    int rc = 0;
    for (size_t i = 0; i < r->n && !rc; i++) {
        struct read_entry *e = &r->e[i];
        char *title = read_title(e);
        if (!title) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        if (!rc) rc = read_key_add(&nk, &sk, e->stem, i, "stem");
        if (!rc) rc = read_key_add(&nk, &sk, title, i, "title");
        free(title);
    }
    /* Aliases come after every stem and title, so an alias never takes an article's own name. */
    for (size_t i = 0; i < r->n && !rc; i++)
        for (size_t k = 0; k < dream_article_alias_count(r->e[i].a) && !rc; k++)
            rc = read_key_add(&nk, &sk, dream_article_alias(r->e[i].a, k), i, "alias");
    if (!rc) rc = read_store_keys(r, &nk, &sk);
    read_keys_finish(&nk, &r->normal, &r->n_normal);
    read_keys_finish(&sk, &r->squeezed, &r->n_squeezed);
    return rc;
}

int dream_reader_open(const struct dream_reader_params *p, dream_reader **out)
{
    *out = NULL;
    dream_reader *r = calloc(1, sizeof *r);
    if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory");
    int rc = 0;
    if (p && p->wiki) {
        if (!(r->wiki = strdup(p->wiki))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    } else {
        rc = dream_paths_wiki_dir(&r->wiki);
    }
    struct dbuf dir = {0};
    if (!rc && dbuf_printf(&dir, "%s/articles", r->wiki)) rc = DREAM_ENOMEM;
    r->articles_dir = dbuf_take(&dir);
    struct stat st;
    /* a wiki dream init set up whose articles/ is gone holds no article yet */
    bool have = !rc && stat(r->articles_dir, &st) == 0 && S_ISDIR(st.st_mode);
    bool empty = !rc && !have && dream_vault_is_set_up(r->wiki);
    if (!rc && !have && !empty) {
        if (p && p->wiki_optional) r->no_wiki = true;
        else
            rc = dream_error_set(DREAM_ENOTFOUND, "no wiki at %s (%s is not a directory): create one with `dream init --wiki %s`, or point --wiki/DREAM_WIKI at one",
                                 r->wiki, r->articles_dir, r->wiki);
    }
    if (!rc && !r->no_wiki && !empty) rc = read_list_articles(r);
    /* The store is optional: used when it exists, never created. */
    if (!rc) {
        char *sp = NULL;
        if (p && p->store) {
            if (p->store[0] && !(sp = strdup(p->store))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        } else if (dream_paths_store(&sp) != 0) {
            dream_error_clear();
            sp = NULL;
        }
        if (sp && stat(sp, &st) == 0) {
            /* A store that cannot be opened (a newer schema, a damaged file) costs the captured
             * subjects and counts, not the wiki: the reader goes on without it. */
            if (dream_store_open(sp, &r->store) != 0) {
                dream_log(DREAM_LOG_WARN, "reading the wiki without the store: %s", dream_error_last());
                dream_error_clear();
                r->store = NULL;
                free(sp);
            } else {
                r->store_path = sp;
            }
        } else {
            free(sp);
        }
    }
    if (!rc) rc = read_build_keys(r);
    if (rc) {
        dream_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

void dream_reader_close(dream_reader *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->e[i].stem);
        free(r->e[i].path);
        dream_article_free(r->e[i].a);
    }
    for (size_t i = 0; i < r->n_normal; i++) free(r->normal[i].key);
    for (size_t i = 0; i < r->n_squeezed; i++) free(r->squeezed[i].key);
    free(r->normal);
    free(r->squeezed);
    free(r->e);
    free(r->stems);
    dream_store_close(r->store);
    free(r->store_path);
    free(r->articles_dir);
    free(r->wiki);
    free(r);
}

/* Binary search of the sorted stems. */
static long read_stem_index(const dream_reader *r, const char *stem)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->stems[mid], stem);
        if (c == 0) return (long)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

long read_target(const dream_reader *r, const char *target)
{
    /* The two exact layers of dream_article_resolve_link by binary search (links are resolved
     * for every article by `links` and `category --series`); the case-insensitive layer, and
     * anything unusual, through it. */
    long i = read_stem_index(r, target);
    if (i >= 0) return i;
    char *u = strdup(target);
    if (u) {
        for (char *p = u; *p; p++)
            if (*p == ' ') *p = '_';
        i = read_stem_index(r, u);
        free(u);
        if (i >= 0) return i;
    }
    return dream_article_resolve_link(r->stems, r->n, target);
}

long read_find(const dream_reader *r, const char *name)
{
    if (!name || !name[0]) return -1;
    return read_target(r, name);
}

static long read_key_find(const struct read_key *v, size_t n, const char *key, const char **how)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(v[mid].key, key);
        if (c == 0) {
            if (how) *how = v[mid].how;
            return (long)v[mid].entry;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

long read_lookup(const dream_reader *r, const char *name, const char **how)
{
    long i = read_find(r, name);
    if (i >= 0) {
        *how = "stem";
        return i;
    }
    char *nf = NULL, *sq = NULL;
    if (entity_name_normal(name, &nf) != 0) {
        dream_error_clear();
        return -1;
    }
    i = read_key_find(r->normal, r->n_normal, nf, how);
    if (i < 0 && entity_name_squeeze(nf, &sq) == 0 && sq[0]) {
        i = read_key_find(r->squeezed, r->n_squeezed, sq, how);
        if (i >= 0) *how = "squeezed";
    }
    free(nf);
    free(sq);
    return i;
}

/* ---- near candidates -------------------------------------------------------------------- */

/* How near candidate (a normal form) is to the query (a normal form): shared words count most,
 * then containment, then a small edit distance (typos). 0 = not near. */
static int read_nearness(const char *query, const char *cand)
{
    int score = 0;
    char *q = strdup(query), *save = NULL;
    if (!q) return 0;
    for (char *t = strtok_r(q, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (strlen(t) < 2) continue;
        const char *c = cand;
        size_t tl = strlen(t);
        while ((c = strstr(c, t))) { /* a whole word of cand */
            bool start = c == cand || c[-1] == ' ';
            bool end = c[tl] == '\0' || c[tl] == ' ';
            if (start && end) {
                score += 10;
                break;
            }
            c += tl;
        }
    }
    free(q);
    if (strlen(query) >= 3 && strstr(cand, query)) score += 5;
    else if (strlen(cand) >= 3 && strstr(query, cand)) score += 5;
    size_t limit = strlen(query) / 4 + 1;
    if (limit > 3) limit = 3;
    size_t d = edit_distance(query, cand, limit);
    if (d <= limit) score += 8 - (int)d;
    return score;
}

struct read_cand {
    int score;
    size_t entry;
};

static int read_cmp_cand(const void *x, const void *y)
{
    const struct read_cand *a = x, *b = y;
    if (a->score != b->score) return b->score - a->score;
    return (a->entry > b->entry) - (a->entry < b->entry);
}

/* Near articles: each article scored by its best key. */
static json_t *read_near_articles(const dream_reader *r, const char *nf, size_t max)
{
    struct read_cand *c = calloc(r->n ? r->n : 1, sizeof *c);
    json_t *arr = json_array();
    if (!c || !arr) goto done;
    for (size_t i = 0; i < r->n; i++) c[i].entry = i;
    for (size_t k = 0; k < r->n_normal; k++) {
        int s = read_nearness(nf, r->normal[k].key);
        struct read_cand *x = &c[r->normal[k].entry];
        if (s > x->score) x->score = s;
    }
    qsort(c, r->n, sizeof *c, read_cmp_cand);
    for (size_t i = 0; i < r->n && i < max && c[i].score > 0; i++) {
        const struct read_entry *e = &r->e[c[i].entry];
        char *title = read_title_out(e);
        json_array_append_new(arr, json_pack("{ss ss}", "stem", e->stem, "title", title ? title : e->stem));
        free(title);
    }
done:
    free(c);
    return arr;
}

/* Near captured subjects from the store. */
static json_t *read_near_captured(dream_reader *r, const char *nf, size_t max)
{
    json_t *arr = json_array();
    if (!r->store || !arr) return arr;
    sqlite3_stmt *st = NULL;
    const char *sql = "SELECT name, normal, chunk_count FROM pipeline_entities WHERE route IS NOT 'article' ORDER BY id LIMIT 100000";
    if (sqlite3_prepare_v2(store_db(r->store), sql, -1, &st, NULL) != SQLITE_OK) return arr;
    struct {
        int score;
        char *name;
        int64_t chunks;
    } best[8] = {{0}};
    size_t n = 0;
    if (max > 8) max = 8;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int s = read_nearness(nf, (const char *)sqlite3_column_text(st, 1));
        if (s <= 0) continue;
        size_t at = n;
        while (at > 0 && best[at - 1].score < s) at--;
        if (at >= max) continue;
        if (n == max) free(best[--n].name);
        memmove(&best[at + 1], &best[at], (n - at) * sizeof best[0]);
        best[at].score = s;
        best[at].name = strdup((const char *)sqlite3_column_text(st, 0));
        best[at].chunks = sqlite3_column_int64(st, 2);
        n++;
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < n; i++) {
        if (best[i].name) json_array_append_new(arr, json_pack("{ss sI}", "name", best[i].name, "chunks", (json_int_t)best[i].chunks));
        free(best[i].name);
    }
    return arr;
}

int read_missing(dream_reader *r, const char *name, json_t **out)
{
    char *nf = NULL;
    if (entity_name_normal(name, &nf) != 0) {
        dream_error_clear();
        nf = strdup(name);
    }
    if (!nf) return dream_error_set(DREAM_ENOMEM, "out of memory");
    json_t *cands = read_near_articles(r, nf, 3);
    json_t *cap = read_near_captured(r, nf, 3);
    free(nf);
    struct dbuf msg = {0};
    char *q = read_clip(name, READ_TITLE_MAX);
    dbuf_printf(&msg, "no article named '%s'", q ? q : "");
    size_t nc = json_array_size(cands);
    for (size_t i = 0; i < nc; i++)
        dbuf_printf(&msg, "%s%s", i ? ", " : "; near: ", json_string_value(json_object_get(json_array_get(cands, i), "stem")));
    dbuf_puts(&msg, nc ? "" : "; try `dream search` with a word of it, or `dream list`");
    dream_error_set(DREAM_ENOTFOUND, "%s", msg.data ? msg.data : "no such article");
    *out = json_pack("{ss so ss so so}", "status", "missing", "error", read_json_text(msg.data ? msg.data : "", msg.len), "query", q ? q : "",
                     "candidates", cands ? cands : json_array(), "captured_near", cap ? cap : json_array());
    dbuf_free(&msg);
    free(q);
    return DREAM_ENOTFOUND;
}
