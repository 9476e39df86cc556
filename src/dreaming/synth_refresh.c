/* synth_refresh.c — WIKIFY's infobox refresh (spec §6.11 b): the prompt that shows the model the
 * infobox as it is (its fields first, so grounded values stay put) and the article's start, the
 * strict parser of its answer, and the merge that only ever adds: new fields, new aliases, new
 * categories. An existing value is never replaced, so a [[link]] in the infobox is sticky. */
#include "../util/buf.h"
#include "../util/utf8.h"
#include "dream/error.h"
#include "dream/grammar.h"
#include "synth_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REFRESH_START_BYTES 4000 /* how much of the article the model reads */
/* lengths in characters, as the refresh grammar (dream/grammar.h) counts them: a value in Greek
 * may be as long as one in English */
#define REFRESH_MAX_VALUE 160
#define REFRESH_MAX_NAME 60     /* an alias or a category */
#define REFRESH_MAX_FIELDS 24   /* fields an infobox may grow to */
#define REFRESH_MAX_CATEGORIES 4

static const char refresh_task[] =
    "Update the infobox of this article from its text above: `key: value` lines only, snake_case\n"
    "keys. Repeat the current fields unchanged, then add the facts about the subject that the text\n"
    "states and the infobox lacks (what it is, when, where, who or what it involves, the person's\n"
    "relation to it). A value naming another article is written [[Its Title]]. Give `aliases:` with\n"
    "the other names the text uses for the subject, comma-separated, and `category:` with one broad\n"
    "wiki category, when they are clear. No kind, no footnote markers, no other text.\n";

/* How many bytes of text (len) the model reads: at most REFRESH_START_BYTES, ending at a line
 * end when one is in the second half, never inside a UTF-8 sequence. */
static size_t rf_start(const char *text, size_t len)
{
    if (len <= REFRESH_START_BYTES) return len;
    size_t n = REFRESH_START_BYTES;
    while (n > REFRESH_START_BYTES / 2 && text[n - 1] != '\n') n--;
    if (text[n - 1] == '\n') return n;
    n = REFRESH_START_BYTES;
    while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80) n--;
    return n;
}

char *synth_refresh_prompt(const char *wiki, const char *stem, const dream_article *a)
{
    struct dbuf b = {0};
    int rc = synth_policy(&b, wiki, "Infobox_Schemas");
    if (!rc) rc = dbuf_printf(&b, "Article: \"%s\"\n", stem);
    size_t nf = dream_article_infobox_count(a), na = dream_article_alias_count(a);
    if (!rc) rc = dbuf_puts(&b, nf || na ? "Current infobox (keep every field as it is):\n" : "Current infobox: none\n");
    for (size_t i = 0; !rc && i < nf; i++) {
        const struct dream_article_field *f = dream_article_infobox_field(a, i);
        if (strcmp(f->key, "aliases") != 0) rc = dbuf_printf(&b, "%s: %s\n", f->key, f->value);
    }
    /* the aliases (the front matter's) as the model knows them: one line, last */
    for (size_t i = 0; !rc && i < na; i++) rc = dbuf_printf(&b, "%s%s%s", i ? ", " : "aliases: ", dream_article_alias(a, i), i + 1 == na ? "\n" : "");
    size_t nc = dream_article_category_count(a);
    if (!rc) rc = dbuf_puts(&b, nc ? "Current categories:" : "Current categories: none");
    for (size_t i = 0; !rc && i < nc; i++) rc = dbuf_printf(&b, "%s %s", i ? "," : "", dream_article_category(a, i));
    size_t len = 0, fm = dream_article_front_matter_len(a);
    const char *text = dream_article_text(a, &len) + fm; /* the front matter is listed above */
    len -= fm;
    size_t n = rf_start(text, len);
    if (!rc) rc = dbuf_printf(&b, "\n\nThe article's start:\n<<<\n%.*s%s>>>\n\n%s", (int)n, text, n && text[n - 1] == '\n' ? "" : "\n", refresh_task);
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

void synth_refresh_free(struct synth_refresh *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->key[i]);
        free(r->value[i]);
    }
    for (size_t i = 0; i < r->n_alias; i++) free(r->alias[i]);
    for (size_t i = 0; i < r->n_cat; i++) free(r->cat[i]);
    memset(r, 0, sizeof *r);
}

/* True when every '[' and ']' of v belongs to a [[link]] with a non-empty target. */
static bool rf_brackets_ok(const char *v)
{
    for (const char *p = v; *p; p++) {
        if (*p == ']') return false;
        if (*p != '[') continue;
        if (p[1] != '[') return false;
        const char *q = p + 2;
        while (*q && *q != '[' && *q != ']') q++;
        if (q == p + 2 || q[0] != ']' || q[1] != ']') return false;
        p = q + 1;
    }
    return true;
}

/* Values a model gives for "not known": the field is skipped, the answer is not refused. */
static bool rf_empty_value(const char *v)
{
    if (!*v) return true;
    for (const char *const *none = dream_refresh_empty_values; *none; none++)
        if (!strcasecmp(v, *none)) return true;
    return false;
}

static char *rf_trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '"') s++;
    for (char *e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '"' || e[-1] == '\r'); e--) e[-1] = '\0';
    return s;
}

/* Splits list on any of seps into names (category: a [[Category:X]] wrapper taken off), adding
 * those not yet in out[0..*n) (case-insensitive) up to max. False when a name is unusable. */
static bool rf_names(char *list, const char *seps, bool category, char **out, size_t *n, size_t max)
{
    char *save = NULL;
    for (char *tok = strtok_r(list, seps, &save); tok; tok = strtok_r(NULL, seps, &save)) {
        char *t = rf_trim(tok);
        if (category) {
            if (!strncmp(t, "[[", 2)) t += 2;
            if (!strncasecmp(t, "Category:", 9)) t += 9;
            char *e = t + strlen(t);
            if (e - t >= 2 && !strcmp(e - 2, "]]")) e[-2] = '\0';
            t = rf_trim(t);
        }
        if (rf_empty_value(t)) continue;
        if (utf8_chars(t, strlen(t)) > REFRESH_MAX_NAME || strpbrk(t, "[]{}|`#*:;<>\\")) return false;
        bool dup = false;
        for (size_t i = 0; i < *n && !dup; i++) dup = !strcasecmp(out[i], t);
        if (dup || *n == max) continue;
        if (!(out[*n] = strdup(t))) return false;
        (*n)++;
    }
    return true;
}

/* One line of the answer into r; false refuses the whole answer. */
static bool rf_line(char *line, struct synth_refresh *r)
{
    char *s = rf_trim(line);
    for (const char *q = s; *q; q++)
        if ((unsigned char)*q < 0x20 && *q != '\t') return false; /* a stray CR or control byte */
    if (!*s) return true;
    if (!strncmp(s, "```", 3)) return !strcmp(s, "```") || !strcmp(s, "```info"); /* the block's own fence */
    while (*s == '-' || *s == '*' || *s == '`' || *s == ' ') s++;
    char *colon = strchr(s, ':');
    if (!colon) return false;
    *colon = '\0';
    char *k = s, *v = colon + 1;
    for (char *e = k + strlen(k); e > k && (e[-1] == ' ' || e[-1] == '*' || e[-1] == '`'); e--) e[-1] = '\0';
    for (char *q = k; *q; q++) *q = (char)tolower((unsigned char)*q);
    if (!islower((unsigned char)*k) || strlen(k) >= 48) return false;
    for (char *q = k; *q; q++)
        if (!islower((unsigned char)*q) && !isdigit((unsigned char)*q) && *q != '_') return false;
    while (*v == ' ' || *v == '*') v++;
    for (char *e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '*'); e--) e[-1] = '\0';
    if (!strcmp(k, "kind")) return true; /* the kind is the code's, never the model's */
    if (!strcmp(k, "aliases") || !strcmp(k, "alias")) return rf_names(v, ",", false, r->alias, &r->n_alias, SYNTH_REFRESH_MAX);
    if (!strcmp(k, "category") || !strcmp(k, "categories"))
        return rf_names(v, ",;", true, r->cat, &r->n_cat, REFRESH_MAX_CATEGORIES);
    if (utf8_chars(v, strlen(v)) > REFRESH_MAX_VALUE || strchr(v, '`') || strstr(v, "[^") || strstr(v, "{{") || strstr(v, "}}") || strstr(v, "<<<") ||
        strstr(v, ">>>") || !rf_brackets_ok(v))
        return false;
    if (rf_empty_value(v)) return true;
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->key[i], k)) return true; /* the first wins */
    if (r->n == SYNTH_REFRESH_MAX) return true;
    r->key[r->n] = strdup(k);
    r->value[r->n] = strdup(v);
    if (!r->key[r->n] || !r->value[r->n]) {
        free(r->key[r->n]);
        free(r->value[r->n]);
        return false;
    }
    r->n++;
    return true;
}

bool synth_parse_refresh(const char *answer, struct synth_refresh *out)
{
    memset(out, 0, sizeof out[0]);
    if (!answer || synth_leaky(answer)) return false;
    char *copy = strdup(answer);
    bool ok = copy != NULL;
    char *save = NULL;
    for (char *line = ok ? strtok_r(copy, "\n", &save) : NULL; ok && line; line = strtok_r(NULL, "\n", &save)) ok = rf_line(line, out);
    free(copy);
    if (ok && out->n + out->n_alias + out->n_cat == 0) ok = false; /* nothing usable said */
    if (!ok) synth_refresh_free(out);
    return ok;
}

/* The number of comma-separated names in value, and whether name is one of them (ignoring case). */
/* True when name equals the article's title or stem, ignoring case and '_' vs ' '. */
static bool rf_is_title(const char *name, const char *stem)
{
    size_t n = strlen(name);
    if (n != strlen(stem)) return false;
    for (size_t i = 0; i < n; i++) {
        char a = name[i] == '_' ? ' ' : (char)tolower((unsigned char)name[i]);
        char b = stem[i] == '_' ? ' ' : (char)tolower((unsigned char)stem[i]);
        if (a != b) return false;
    }
    return true;
}

/* The content words (synth_words) of a's text, its lead's first sentence aside: grounding repairs
 * that sentence (it defines the subject) but never drops it, so it may hold words no note says
 * ("the person's sourd"), and a value taken from it would carry them on. -1 when out of memory. */
static long rf_held_words(const dream_article *a, unsigned **out)
{
    size_t len = 0;
    const char *text = dream_article_text(a, &len), *lead = dream_article_lead(a);
    char *copy = text ? strndup(text, len) : strdup("");
    if (!copy) return -1;
    const char *at = lead && *lead && text ? strstr(text, lead) : NULL;
    struct synth_span sp[1];
    if (at && synth_sentences(lead, sp, 1) >= 1) memset(copy + (at - text) + sp[0].at, ' ', sp[0].len);
    long n = synth_words(copy, strlen(copy), out);
    free(copy);
    return n;
}

int synth_refresh_apply(dream_article *a, const char *stem, const struct synth_refresh *r, const struct synth_stems *stems, bool *changed,
                        size_t *unheld)
{
    *changed = false;
    /* what the article says, before any edit: a new value or alias must be in it (synth_value_held) */
    unsigned *held = NULL;
    long n_held = rf_held_words(a, &held);
    size_t said_len = 0;
    const char *text = dream_article_text(a, &said_len);
    char *said = text ? strndup(text, said_len) : strdup(""); /* and its text, for where a value's numbers stand */
    int rc = n_held < 0 || !said ? dream_error_set(DREAM_ENOMEM, "out of memory") : DREAM_OK;
    /* 1. new fields only: a key the infobox lacks (or holds empty); never more than the cap */
    size_t have = dream_article_infobox_count(a);
    for (size_t i = 0; !rc && i < r->n; i++) {
        const char *cur = dream_article_infobox_get(a, r->key[i]);
        if (cur && *cur) continue;
        if (!cur && have >= REFRESH_MAX_FIELDS) continue;
        bool ok = true;
        char *v = synth_unlink_redlinks(r->value[i], stems);
        rc = v ? synth_value_grounded(r->key[i], v, held, (size_t)n_held, said, &ok) : dream_error_set(DREAM_ENOMEM, "out of memory");
        if (!rc && !ok) (*unheld)++;
        bool told = false;
        char *later = !rc && ok ? synth_past_successor(a, v, &told) : NULL;
        if (told) {
            /* a value the body tells as past ("... instead of every Saturday morning"): the later
             * position it says, when code can take it and the article holds it, else no field */
            ok = false;
            if (later) rc = synth_value_grounded(r->key[i], later, held, (size_t)n_held, said, &ok);
            free(v);
            v = later;
        }
        if (!rc && ok) rc = dream_article_infobox_set(a, r->key[i], v);
        free(v);
        if (rc || !ok) continue;
        have += !cur;
        *changed = true;
    }
    /* 2. aliases: those written stay as written, new ones after them (copies: the edit re-parses a) */
    char *als[SYNTH_REFRESH_MAX] = {0};
    size_t na = 0, had = dream_article_alias_count(a);
    bool added = false;
    for (size_t i = 0; !rc && i < had && na < SYNTH_REFRESH_MAX; i++)
        if (!(als[na++] = strdup(dream_article_alias(a, i)))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < r->n_alias && na < SYNTH_REFRESH_MAX; i++) {
        bool dup = rf_is_title(r->alias[i], stem), ok = true;
        for (size_t j = 0; j < na && !dup; j++) dup = !strcasecmp(als[j], r->alias[i]);
        if (dup) continue;
        rc = synth_value_held(NULL, r->alias[i], held, (size_t)n_held, &ok);
        if (rc || !ok) {
            *unheld += !rc;
            continue;
        }
        if (!(als[na++] = strdup(r->alias[i]))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        added = true;
    }
    if (!rc && added) {
        rc = dream_article_set_aliases(a, (const char *const *)als, na);
        if (!rc) *changed = true;
    }
    for (size_t i = 0; i < na; i++) free(als[i]);
    /* 3. categories: those written stay first, new ones after them, at most four in all */
    const char *cats[REFRESH_MAX_CATEGORIES];
    size_t nc = 0, before = dream_article_category_count(a);
    for (size_t i = 0; i < before && nc < REFRESH_MAX_CATEGORIES; i++) cats[nc++] = dream_article_category(a, i);
    for (size_t i = 0; !rc && i < r->n_cat && nc < REFRESH_MAX_CATEGORIES; i++) {
        bool dup = false;
        for (size_t j = 0; j < nc && !dup; j++) dup = !strcasecmp(cats[j], r->cat[i]);
        if (!dup) cats[nc++] = r->cat[i];
    }
    if (!rc && nc > before) {
        /* the names point into a, which the edit re-parses: copy them first */
        char *copy[REFRESH_MAX_CATEGORIES] = {0};
        for (size_t i = 0; !rc && i < nc; i++)
            if (!(copy[i] = strdup(cats[i]))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        if (!rc) rc = dream_article_set_categories(a, (const char *const *)copy, nc);
        for (size_t i = 0; i < nc; i++) free(copy[i]);
        if (!rc) *changed = true;
    }
    free(held);
    free(said);
    return rc;
}
