/* alias_seeds.c — see alias_seeds.h. */
#include "alias_seeds.h"

#include "dream/error.h"
#include "dream/log.h"
#include "entity_name.h"
#include "util/utf8.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void alias_seeds_free(struct alias_seeds *s)
{
    for (size_t i = 0; i < s->n_canonical; i++) free(s->canonical[i]);
    free(s->canonical);
    for (size_t i = 0; i < s->n_keys; i++) {
        free(s->keys[i].normal);
        free(s->keys[i].squeezed);
    }
    free(s->keys);
    memset(s, 0, sizeof *s);
}

const struct alias_seed_key *alias_seeds_find(const struct alias_seeds *s, const char *normal, const char *squeezed)
{
    for (size_t i = 0; i < s->n_keys; i++)
        if (strcmp(s->keys[i].normal, normal) == 0 || strcmp(s->keys[i].squeezed, squeezed) == 0) return &s->keys[i];
    return NULL;
}

/* Adds the name [p, p+len) as a key of canonical ci. */
static int seeds_add(struct alias_seeds *s, const char *p, size_t len, size_t ci, const char *where, int line)
{
    while (len && isspace((unsigned char)*p)) p++, len--;
    while (len && isspace((unsigned char)p[len - 1])) len--;
    if (!len) return DREAM_OK;
    char *name = strndup(p, len), *normal = NULL, *squeezed = NULL;
    if (!name) return dream_error_set(DREAM_ENOMEM, "out of memory");
    int rc = entity_name_normal(name, &normal);
    if (rc == DREAM_EINVAL) {
        dream_log(DREAM_LOG_WARN, "%s:%d: '%.*s…' is not valid UTF-8; the alias is skipped", where, line,
                  (int)utf8_valid_prefix(name, (size_t)utf8_cut(name, 80)), name);
        free(name);
        return DREAM_OK;
    }
    if (!rc && !*normal) { /* nothing left of it (an article alone): no key */
        free(name);
        free(normal);
        return DREAM_OK;
    }
    if (!rc) rc = entity_name_key(normal, &squeezed);
    if (!rc) {
        const struct alias_seed_key *dup = alias_seeds_find(s, normal, squeezed);
        if (dup && dup->canonical != ci) {
            dream_log(DREAM_LOG_WARN, "%s:%d: '%.*s' is already an alias of '%.*s' (an earlier line); this line's claim is skipped",
                      where, line, utf8_cut(name, 80), name, utf8_cut(s->canonical[dup->canonical], 80), s->canonical[dup->canonical]);
        } else if (!dup) {
            if (s->n_keys == s->cap_keys) {
                size_t cap = s->cap_keys ? s->cap_keys * 2 : 16;
                struct alias_seed_key *grown = realloc(s->keys, cap * sizeof *grown);
                if (!grown) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                else s->keys = grown, s->cap_keys = cap;
            }
            if (!rc) {
                s->keys[s->n_keys++] = (struct alias_seed_key){normal, squeezed, ci};
                normal = squeezed = NULL;
            }
        }
    }
    free(name);
    free(normal);
    free(squeezed);
    return rc;
}

/* Parses one list item [q, end) (after its marker) of line number line. */
static int seeds_item(struct alias_seeds *s, const char *q, const char *end, const char *where, int line)
{
    const char *colon = memchr(q, ':', (size_t)(end - q));
    if (!colon) {
        int show = (int)utf8_prefix(q, (size_t)(end - q), 80);
        dream_log(DREAM_LOG_WARN, "%s:%d: expected '- Canonical Name: alias, alias', got '- %.*s'; the line is skipped", where, line, show, q);
        return DREAM_OK;
    }
    const char *c0 = q, *c1 = colon;
    while (c0 < c1 && isspace((unsigned char)*c0)) c0++;
    while (c1 > c0 && isspace((unsigned char)c1[-1])) c1--;
    if (c1 == c0) return DREAM_OK;
    char **grown = realloc(s->canonical, (s->n_canonical + 1) * sizeof *grown);
    if (!grown) return dream_error_set(DREAM_ENOMEM, "out of memory");
    s->canonical = grown;
    char *name = strndup(c0, (size_t)(c1 - c0));
    if (!name) return dream_error_set(DREAM_ENOMEM, "out of memory");
    char *normal = NULL;
    int rc = entity_name_normal(name, &normal);
    bool usable = !rc && *normal;
    free(normal);
    if (rc == DREAM_ENOMEM) {
        free(name);
        return rc;
    }
    if (!usable) {
        dream_log(DREAM_LOG_WARN, "%s:%d: '%.*s' is no usable canonical name (empty once normalized, or not UTF-8); the line is skipped",
                  where, line, (int)utf8_valid_prefix(name, (size_t)utf8_cut(name, 80)), name);
        free(name);
        return DREAM_OK;
    }
    size_t ci = s->n_canonical++;
    s->canonical[ci] = name;
    rc = seeds_add(s, c0, (size_t)(c1 - c0), ci, where, line);
    for (const char *a = colon + 1; !rc && a < end;) {
        const char *comma = memchr(a, ',', (size_t)(end - a));
        const char *stop = comma ? comma : end;
        rc = seeds_add(s, a, (size_t)(stop - a), ci, where, line);
        a = stop + 1;
    }
    return rc;
}

int alias_seeds_parse(const char *text, size_t len, const char *where, struct alias_seeds *s)
{
    memset(s, 0, sizeof *s);
    int line = 0, rc = DREAM_OK;
    bool fenced = false;
    for (const char *p = text, *end_all = text + len; !rc && p < end_all;) {
        const char *nl = memchr(p, '\n', (size_t)(end_all - p));
        const char *end = nl ? nl : end_all;
        line++;
        const char *q = p;
        while (q < end && (*q == ' ' || *q == '\t')) q++;
        if (end - q >= 3 && strncmp(q, "```", 3) == 0) fenced = !fenced;
        bool item = !fenced && end - q >= 2 && (*q == '-' || *q == '*') && q[1] == ' ';
        if (item && memchr(q, '<', (size_t)(end - q))) item = false; /* a placeholder */
        /* A NUL inside the line ends what is read of it (the page is text). */
        const char *z = item ? memchr(q, '\0', (size_t)(end - q)) : NULL;
        if (item) rc = seeds_item(s, q + 2, z ? z : end, where, line);
        p = nl ? nl + 1 : end_all;
    }
    return rc;
}
