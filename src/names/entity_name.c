/* entity_name.c — cleaning answer lines into names, and names into match keys (see
 * entity_name.h). */
#include "entity_name.h"

#include "dream/error.h"
#include "util/utf8.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <utf8proc.h>

/* Bytes that wrap a name as emphasis or quotes; the UTF-8 curly quotes are handled apart. */
static bool name_is_wrap(unsigned char c)
{
    return c == '*' || c == '_' || c == '`' || c == '"' || c == '\'';
}

/* Length in bytes of a curly quote (“ ” ‘ ’) or bullet (•) at s, or 0. */
static size_t name_curly(const char *s, size_t len)
{
    static const char *const marks[] = {"\xe2\x80\x9c", "\xe2\x80\x9d", "\xe2\x80\x98", "\xe2\x80\x99", "\xe2\x80\xa2"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (len >= 3 && memcmp(s, marks[i], 3) == 0) return 3;
    return 0;
}

static void name_trim(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s)) (*s)++, (*len)--;
    while (*len && isspace((unsigned char)(*s)[*len - 1])) (*len)--;
}

/* Strips one list marker: "-", "*", "+", "•", "1.", "12)", "(3)", "#". */
static void name_strip_marker(const char **s, size_t *len)
{
    const char *p = *s;
    size_t n = *len, m = 0;
    if (n && (*p == '-' || *p == '+' || *p == '#')) m = 1;
    else if (n > 1 && *p == '*' && p[1] == ' ') m = 1;
    else if ((m = name_curly(p, n)) == 3 && memcmp(p, "\xe2\x80\xa2", 3) != 0) m = 0;
    else if (m == 0) {
        size_t d = *p == '(' ? 1 : 0;
        size_t k = d;
        while (k < n && isdigit((unsigned char)p[k])) k++;
        if (k > d && k < n && (p[k] == '.' || p[k] == ')') && (k + 1 == n || p[k + 1] == ' ')) m = k + 1;
    }
    *s += m;
    *len -= m;
    name_trim(s, len);
}

/* Strips emphasis and quotes that wrap the whole name, from both ends. */
static void name_strip_wrap(const char **s, size_t *len)
{
    for (;;) {
        size_t c;
        if (*len && name_is_wrap((unsigned char)**s)) (*s)++, (*len)--;
        else if ((c = name_curly(*s, *len)) != 0) *s += c, *len -= c;
        else break;
    }
    for (;;) {
        if (*len && name_is_wrap((unsigned char)(*s)[*len - 1])) (*len)--;
        else if (*len >= 3 && name_curly(*s + *len - 3, 3)) *len -= 3;
        else break;
    }
    name_trim(s, len);
}

static bool name_is_none(const char *s, size_t len)
{
    static const char *const nones[] = {"none", "n/a", "na", "nothing", "null", "no entities", "no subjects", "(none)"};
    for (size_t i = 0; i < sizeof nones / sizeof nones[0]; i++)
        if (strlen(nones[i]) == len && strncasecmp(s, nones[i], len) == 0) return true;
    return false;
}

int entity_name_clean(const char *line, size_t len, char **name)
{
    *name = NULL;
    const char *s = line;
    name_trim(&s, &len);
    if (len == 0) return ENTITY_LINE_SKIP;
    if (s[len - 1] == ':') return ENTITY_LINE_SKIP; /* a header such as "Entities:" */
    name_strip_marker(&s, &len);
    name_strip_wrap(&s, &len);
    while (len && strchr(".,;:!?", s[len - 1])) len--;
    name_strip_wrap(&s, &len);
    if (len == 0) return ENTITY_LINE_SKIP;
    if (name_is_none(s, len)) return ENTITY_LINE_NONE;
    if (len > ENTITY_NAME_MAX) return ENTITY_LINE_SKIP;
    size_t words = 1;
    bool alnum = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ' && i + 1 < len && s[i + 1] != ' ') words++;
        if (isalnum((unsigned char)s[i]) || (unsigned char)s[i] >= 0x80) alnum = true;
    }
    if (!alnum || words > ENTITY_NAME_MAX_WORDS) return ENTITY_LINE_SKIP;
    if (!(*name = strndup(s, len))) return dream_error_set(DREAM_ENOMEM, "out of memory");
    return ENTITY_LINE_NAME;
}

/* Drops word w (with its space) from the start of s when s starts with it as a whole word. */
static void name_drop_prefix(char *s, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(words[i]);
        if (strncmp(s, words[i], l) == 0 && s[l] == ' ' && s[l + 1]) {
            memmove(s, s + l + 1, strlen(s + l + 1) + 1);
            return;
        }
    }
}

int entity_name_normal(const char *name, char **out)
{
    *out = NULL;
    utf8proc_uint8_t *folded = NULL;
    utf8proc_ssize_t n = utf8proc_map((const utf8proc_uint8_t *)name, 0, &folded,
                                      UTF8PROC_NULLTERM | UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD);
    if (n < 0)
        return dream_error_set(DREAM_EINVAL, "the name '%.*s…' is not valid UTF-8 (%s)", (int)utf8_valid_prefix(name, (size_t)utf8_cut(name, 80)),
                               name, utf8proc_errmsg(n));
    /* Squeeze whitespace and underscores to single spaces, trimmed. */
    char *s = (char *)folded;
    size_t w = 0;
    bool gap = false;
    for (utf8proc_ssize_t r = 0; r < n; r++) {
        unsigned char c = (unsigned char)s[r];
        if (isspace(c) || c == '_') {
            gap = w > 0;
            continue;
        }
        if (gap) s[w++] = ' ';
        gap = false;
        s[w++] = (char)c;
    }
    s[w] = '\0';
    static const char *const articles[] = {"the", "a", "an"};
    static const char *const possessives[] = {"my", "our", "your"};
    name_drop_prefix(s, articles, 3);
    name_drop_prefix(s, possessives, 3);
    w = strlen(s);
    if (w > 2 && (strcmp(s + w - 2, "'s") == 0)) s[w - 2] = '\0';
    else if (w > 4 && strcmp(s + w - 4, "\xe2\x80\x99s") == 0) s[w - 4] = '\0';
    *out = s;
    return DREAM_OK;
}

int entity_name_squeeze(const char *normal, char **out)
{
    size_t len = strlen(normal), w = 0;
    char *s = malloc(len + 1);
    if (!s) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t r = 0; r < len; r++) {
        unsigned char c = (unsigned char)normal[r];
        if (c >= 0x80 || isalnum(c)) s[w++] = (char)c;
    }
    s[w] = '\0';
    *out = s;
    return DREAM_OK;
}

int entity_name_key(const char *normal, char **out)
{
    int rc = entity_name_squeeze(normal, out);
    if (rc || **out) return rc;
    free(*out);
    *out = strdup(normal);
    return *out ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

static bool word_byte(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

bool entity_name_in_text(const char *text, const char *name, bool *mid)
{
    size_t n = strlen(name);
    bool found = false, mid_any = false;
    for (const char *p = text; n && (p = strcasestr(p, name)); p++) {
        if ((p > text && word_byte((unsigned char)p[-1])) || word_byte((unsigned char)p[n])) continue;
        found = true;
        if (!isupper((unsigned char)*p)) continue;
        const char *q = p;
        while (q > text && (q[-1] == ' ' || q[-1] == '\t')) q--;
        if (q > text && !strchr(".!?:;\n\r\"'*#>-([", q[-1])) mid_any = true;
    }
    if (mid) *mid = mid_any;
    return found;
}
