/* day.c — a calendar day written YYYY-MM-DD (util/day.h). */
#include "day.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

bool day_parse(const char *s, int64_t *ms)
{
    int y = 0, m = 0, d = 0;
    bool ok = s && strlen(s) == 10 && s[4] == '-' && s[7] == '-';
    for (int i = 0; ok && i < 10; i++) ok = i == 4 || i == 7 || isdigit((unsigned char)s[i]);
    if (ok && sscanf(s, "%4d-%2d-%2d", &y, &m, &d) != 3) ok = false;
    ok = ok && y >= 1970 && m >= 1 && m <= 12 && d >= 1 && d <= 31;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d};
    time_t t = ok ? timegm(&tm) : 0;
    struct tm back;
    /* timegm rolls 2024-02-31 over to 2 March: a day it moved is no day */
    ok = ok && gmtime_r(&t, &back) && back.tm_mday == d && back.tm_mon == m - 1;
    if (ok) *ms = (int64_t)t * 1000;
    return ok;
}

void day_format(int64_t ms, char out[11])
{
    out[0] = '\0';
    if (ms <= 0) return;
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (gmtime_r(&t, &tm)) snprintf(out, 11, "%04d-%02d-%02d", (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100, tm.tm_mday % 100);
}
