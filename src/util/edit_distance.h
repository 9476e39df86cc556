/* edit_distance.h — how far apart two strings are, for "did you mean" (near article names in the
 * read tools, a mistyped verb in the command). */
#ifndef DREAM_UTIL_EDIT_DISTANCE_H
#define DREAM_UTIL_EDIT_DISTANCE_H

#include <stddef.h>

/* The edit distance between a and b in bytes: an insertion, a deletion, a substitution or a swap
 * of two neighbouring bytes costs 1 each (the optimal string alignment distance, so "rnu" is 1
 * from "run"). Returns limit + 1 as soon as the distance is known to be over limit, and for a
 * string over 200 bytes. */
size_t edit_distance(const char *a, const char *b, size_t limit);

#endif
