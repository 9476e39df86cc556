/* day.h — a calendar day written YYYY-MM-DD, as options and tools take one. */
#ifndef DREAM_UTIL_DAY_H
#define DREAM_UTIL_DAY_H

#include <stdbool.h>
#include <stdint.h>

/* True when s is a real day (YYYY-MM-DD, 1970 on; not 2024-02-31), *ms its start in Unix ms
 * (UTC). */
bool day_parse(const char *s, int64_t *ms);

/* The day (YYYY-MM-DD, UTC) of Unix ms into out; "" when ms is unknown (0 or less). */
void day_format(int64_t ms, char out[11]);

#endif
