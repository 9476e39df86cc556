/* fuzz_segment_snap.c — moving chunk cuts to where the person says the topic changes or the words
 * change: any message texts, roles and chunk arrangement give chunks that stay inside the
 * conversation, keep their order and at least one message each, and stay chained where they
 * were; a cut lands on its own role's message or on the person's topic change; never a crash, a
 * leak or a cut moved further than the reach. Input: two bytes of parameters, then messages separated by newlines (a
 * message starting with '#' is the assistant's); the chunk cuts are drawn from the bytes. */
#include "segment_snap.h"

#include "dream/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MSG 32
#define MAX_RANGES 8

static bool chained(const struct snap_range *x, const struct snap_range *y)
{
    return x->first < y->first && x->last <= y->first && x->last + 1 >= y->first;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    struct snap_params p;
    segment_snap_default_params(&p);
    p.reach = data[1] % 6;
    p.window = 1 + (data[1] >> 4) % 3;
    p.margin = (double)(data[0] >> 3) / 31.0 * 0.3;
    size_t want = 1 + data[0] % MAX_RANGES;
    char *texts[MAX_MSG];
    const char *roles[MAX_MSG];
    size_t n = 0, at = 2;
    while (at <= size && n < MAX_MSG) {
        size_t end = at;
        while (end < size && data[end] != '\n') end++;
        texts[n] = malloc(end - at + 1);
        if (!texts[n]) break;
        memcpy(texts[n], data + at, end - at);
        texts[n][end - at] = 0;
        roles[n] = end > at && data[at] == '#' ? "assistant" : "user";
        n++;
        at = end + 1;
    }
    if (n == 0) return 0;
    /* Cuts at distinct positions drawn from the bytes; a byte's low bit makes two neighbours share
     * their boundary message, its high bit overlaps them (left alone by the snap). */
    struct snap_range r[MAX_RANGES], before[MAX_RANGES];
    size_t nr = 0, first = 0;
    for (size_t k = 0; k < want && first < n; k++) {
        uint8_t b = data[(k * 7 + 3) % size];
        size_t next = first + 1 + b % 5;
        r[nr].first = first;
        r[nr].last = next < n ? next - 1 : n - 1;
        if (next < n && (b & 1)) r[nr].last = next;
        if (nr > 0 && (b & 0x80) && r[nr].first + 1 < n) r[nr - 1].last = r[nr].first + 1; /* two messages shared */
        nr++;
        first = next;
    }
    if (nr > 0) r[nr - 1].last = n - 1;
    memcpy(before, r, sizeof r);
    size_t moved = 0, cued = 0;
    int rc = segment_snap(roles, (const char *const *)texts, n, r, nr, &p, &moved, &cued);
    if (rc != DREAM_OK && rc != DREAM_ENOMEM) abort();
    if (moved + cued > (nr ? nr - 1 : 0)) abort();
    for (size_t i = 0; i < nr; i++) {
        if (r[i].first > r[i].last || r[i].last >= n) abort();
        if (i > 0 && r[i].first <= r[i - 1].first) abort();
        if (i > 0 && chained(&before[i - 1], &before[i]) && !chained(&r[i - 1], &r[i])) abort();
        size_t d = r[i].first > before[i].first ? r[i].first - before[i].first : before[i].first - r[i].first;
        if (d > p.reach) abort();
        /* onto a message of the cut's role, or onto the person's own topic change */
        bool cue = !strcmp(roles[r[i].first], "user") && segment_snap_cue(texts[r[i].first]);
        if (d && strcmp(roles[r[i].first], roles[before[i].first]) != 0 && !cue) abort();
    }
    for (size_t i = 0; i < n; i++) free(texts[i]);
    return 0;
}
