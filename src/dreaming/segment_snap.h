/* segment_snap.h — putting a chunk's cut where the conversation's words change.
 *
 * A small model finds a conversation's topics but often puts the cut between two of them an
 * exchange early or late (dream-mini: docs/BENCHMARKS.md, "Cuts where the words change").
 * segment_snap moves each cut between two chained chunks, within `reach` messages of where the
 * model put it and onto a message of the same role, to where the words just before and just after
 * it have least in common (lexical cohesion, as TextTiling measures it: the cosine of the two
 * windows' content-word counts). It moves a cut only when that place is clearly less cohesive
 * than the model's own (by `margin`), so a model that cuts well keeps its cuts.
 *
 * Before the words, the person's own say: a user message that opens with "Changing the subject:",
 * "Unrelated question." and the like (segment_snap_cue) keeps a cut that is on it and takes the
 * nearest cut within reach; segment.c also splits a chunk at such a message inside it. */
#ifndef DREAM_DREAMING_SEGMENT_SNAP_H
#define DREAM_DREAMING_SEGMENT_SNAP_H

#include <stdbool.h>
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

/* How far into a message a topic-change phrase is looked for, in bytes: the opening sentence or
 * two, where a person says "Changing the subject:" or "Thanks. Okay, next topic." */
#define SNAP_CUE_BYTES 120

/* Whether a message opens by saying the conversation turns to another topic ("Changing the
 * subject:", "Unrelated question.", "On another note", "While I have you, something else."):
 * one of a fixed list of English phrases, case aside, starting a word within its first
 * SNAP_CUE_BYTES bytes. */
bool segment_snap_cue(const char *text);

/* Moves the cuts of r[0..nr) (sorted by first, as segment.c stores them) over the n messages
 * roles[i] / texts[i]. A cut on a user message that says the topic changes (segment_snap_cue)
 * stays; otherwise the nearest such message within reach takes it (*cued counts these), before
 * any place the words suggest. A cut is B.first of two neighbours A, B that are chained (A.last is
 * B.first - 1, or B.first when they share it); two neighbours arranged otherwise (overlapping by
 * more than a message, nested, with a gap between) keep their cut as the model gave it. A cut
 * moves only between A.first and the next chunk's first, and by d it moves A.last by d as well,
 * so each chunk keeps its first message before the next one's and the two stay chained. *moved
 * counts the cuts moved by the words, *cued those moved to a cue. Returns 0, or DREAM_ENOMEM with r unchanged. */
int segment_snap(const char *const *roles, const char *const *texts, size_t n, struct snap_range *r, size_t nr, const struct snap_params *p,
                 size_t *moved, size_t *cued);

#endif
