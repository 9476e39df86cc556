/* segment_snap.h — putting a chunk's cut where the conversation's words change.
 *
 * A small model finds a conversation's topics but often puts the cut between two of them an
 * exchange early or late (dream-mini: docs/BENCHMARKS.md, "Cuts where the words change").
 * segment_snap moves each cut between two chained chunks, within `reach` messages of where the
 * model put it and onto a message of the same role, to where the words just before and just after
 * it have least in common (lexical cohesion, as TextTiling measures it: the cosine of the two
 * windows' content-word counts). It moves a cut only when that place is clearly less cohesive
 * than the model's own (by `margin`), so a model that cuts well keeps its cuts. */
#ifndef DREAM_DREAMING_SEGMENT_SNAP_H
#define DREAM_DREAMING_SEGMENT_SNAP_H

#include <stddef.h>

/* A chunk: messages first..last (positions, inclusive). */
struct snap_range {
    size_t first, last;
};

struct snap_params {
    size_t reach;  /* how far a cut may move, in messages each way (default 6: three exchanges); 0 = never */
    size_t window; /* messages each side of a cut whose words are compared (default 2) */
    double margin; /* the cosine a new place must be below the model's place by (default 0.1) */
};

void segment_snap_default_params(struct snap_params *p);

/* The words a cut is judged by: lower-cased ASCII words of three or more letters (a letter, then
 * letters, apostrophes or hyphens), less common English function words. Other bytes separate
 * words, so text in other scripts has none, and a cut there never moves. Writes up to cap hashes
 * of text[0..len) to out and returns how many the text holds (more than cap: only cap written). */
size_t segment_snap_words(const char *text, size_t len, unsigned long long *out, size_t cap);

/* Moves the cuts of r[0..nr) (sorted by first, as segment.c stores them) over the n messages
 * roles[i] / texts[i]. A cut is B.first of two neighbours A, B that are chained (A.last is
 * B.first - 1, or B.first when they share it); two neighbours arranged otherwise (overlapping by
 * more than a message, nested, with a gap between) keep their cut as the model gave it. A cut
 * moves only between A.first and the next chunk's first, and by d it moves A.last by d as well,
 * so each chunk keeps its first message before the next one's and the two stay chained. *moved
 * counts the cuts moved. Returns 0, or DREAM_ENOMEM with r unchanged. */
int segment_snap(const char *const *roles, const char *const *texts, size_t n, struct snap_range *r, size_t nr, const struct snap_params *p,
                 size_t *moved);

#endif
