/* arena.c — bump allocation for a template's syntax tree and a render's values; one free. */
#include <stdlib.h>
#include <string.h>

#include "template/internal.h"

struct tmpl_chunk {
    struct tmpl_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

#define TMPL_CHUNK_MIN (64u * 1024u)

void *tmpl_alloc(struct tmpl_arena *a, size_t n)
{
    n = (n + 15u) & ~(size_t)15u;
    if (n == 0)
        n = 16;
    if (a->limit && (a->used + n > a->limit || a->used + n < a->used)) {
        dream_error_set(DREAM_ELIMIT,
                        "template render used more than %zu bytes of memory (limit "
                        "max_memory_bytes); the template or its input is too large",
                        a->limit);
        return NULL;
    }
    struct tmpl_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > TMPL_CHUNK_MIN ? n : TMPL_CHUNK_MIN;
        c = malloc(sizeof(*c) + cap);
        if (!c) {
            dream_error_set(DREAM_ENOMEM, "template: out of memory allocating %zu bytes", cap);
            return NULL;
        }
        c->used = 0;
        c->cap = cap;
        /* A big allocation gets its own chunk behind the current one, so the current chunk's
         * free space is not abandoned. */
        if (a->head && n > TMPL_CHUNK_MIN) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used += n;
    memset(p, 0, n);
    return p;
}

char *tmpl_strndup(struct tmpl_arena *a, const char *s, size_t n)
{
    char *p = tmpl_alloc(a, n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void tmpl_arena_free(struct tmpl_arena *a)
{
    struct tmpl_chunk *c = a->head;
    while (c) {
        struct tmpl_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used = 0;
}
