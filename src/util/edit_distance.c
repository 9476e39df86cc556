/* edit_distance.c — the optimal string alignment distance (see edit_distance.h). */
#include "util/edit_distance.h"

#include <string.h>

#define EDIT_DISTANCE_MAX_LEN 200

static size_t edit_min(size_t x, size_t y) { return x < y ? x : y; }

size_t edit_distance(const char *a, const char *b, size_t limit)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > lb ? la - lb > limit : lb - la > limit) return limit + 1;
    if (la > EDIT_DISTANCE_MAX_LEN || lb > EDIT_DISTANCE_MAX_LEN) return limit + 1;
    /* Three rows of the table: i-2 (for swaps), i-1 and i. */
    size_t rows[3][EDIT_DISTANCE_MAX_LEN + 1];
    size_t *two = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++) prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        size_t best = cur[0];
        for (size_t j = 1; j <= lb; j++) {
            size_t v = edit_min(prev[j - 1] + (a[i - 1] != b[j - 1]), edit_min(prev[j], cur[j - 1]) + 1);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) v = edit_min(v, two[j - 2] + 1);
            cur[j] = v;
            best = edit_min(best, v);
        }
        if (best > limit) return limit + 1;
        size_t *t = two;
        two = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}
