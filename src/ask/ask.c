/* ask.c — a question answered from what a few small reads found (see dream/ask.h). */
#include "ask_internal.h"

#include "dream/article.h"
#include "dream/error.h"
#include "dream/model.h"
#include "dream/store.h"
#include "util/buf.h"
#include "util/day.h"
#include "util/utf8.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ASK_MAX_WORDS 12

void dream_ask_default_params(struct dream_ask_params *p)
{
    memset(p, 0, sizeof *p);
    p->max_read = 2048;
    p->max_context = 8192;
    p->max_reads = 6;
}

void ask_sources_free(struct ask_sources *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->cite[i]), free(s->line[i]), free(s->date[i]), free(s->title[i]);
    s->n = 0;
}

/* The number of cite (adding it), 0 when there is no room. */
static size_t ask_source(struct ask_sources *s, const char *conv, const char *msg, const char *date, const char *title)
{
    struct dbuf c = {0};
    dbuf_printf(&c, "%s%s#%s", strncmp(conv, "conv:", 5) ? "conv:" : "", conv, msg);
    if (!c.data) return 0;
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->cite[i], c.data)) {
            dbuf_free(&c);
            return i + 1;
        }
    if (s->n == ASK_MAX_SOURCES) {
        dbuf_free(&c);
        return 0;
    }
    struct dbuf l = {0};
    dbuf_printf(&l, "[^%zu]: `%s` (%s, %s)", s->n + 1, c.data, date && date[0] ? date : DREAM_CITATION_UNDATED, title && title[0] ? title : "conversation");
    s->cite[s->n] = dbuf_take(&c);
    s->line[s->n] = dbuf_take(&l);
    s->date[s->n] = strdup(date ? date : "");
    s->title[s->n] = strdup(title ? title : "");
    return ++s->n;
}

/* A read: its text (markers renumbered to the sources) and what it was. */
struct ask_read {
    const char *kind;
    char *stem, *anchor, *cite;
    char *text;
};

char *ask_renumber(const char *text, const dream_article *a, struct ask_sources *s, size_t max)
{
    struct dbuf b = {0};
    for (const char *p = text; *p; p++) {
        if (p[0] == '[' && p[1] == '[') {
            const char *q = strstr(p + 2, "]]"), *nl = strchr(p + 2, '\n');
            if (q && (!nl || q < nl)) {
                const char *bar = memchr(p + 2, '|', (size_t)(q - p - 2));
                const char *from = bar ? bar + 1 : p + 2;
                dbuf_append(&b, from, (size_t)(q - from));
                p = q + 1;
                continue;
            }
        }
        if (p[0] == '[' && p[1] == '^') {
            const char *q = strchr(p, ']');
            if (q && q - p < 24) {
                char label[24];
                snprintf(label, sizeof label, "%.*s", (int)(q - p - 2), p + 2);
                size_t n = 0;
                for (size_t k = 0; a && k < dream_article_footnote_count(a); k++) {
                    const struct dream_article_footnote *f = dream_article_footnote(a, k);
                    if (!strcmp(f->label, label) && f->cite.conv && f->cite.msg) {
                        n = ask_source(s, f->cite.conv, f->cite.msg, f->cite.date, f->cite.title);
                        break;
                    }
                }
                if (!a) dbuf_append(&b, p, (size_t)(q - p + 1)); /* already a source number */
                else if (n) dbuf_printf(&b, "[^%zu]", n);
                p = q;
                continue;
            }
        }
        dbuf_putc(&b, *p);
    }
    char *t = dbuf_take(&b);
    if (!t || strlen(t) <= max) return t;
    size_t cut = utf8_prefix(t, strlen(t), max - 4);
    size_t at = cut;
    while (at > max / 2 && t[at - 1] != '\n' && !(t[at - 1] == ' ' && at >= 2 && t[at - 2] == '.')) at--;
    if (at > max / 2) cut = at;
    memcpy(t + cut, "…", 4);
    t[cut + 3] = '\0';
    return t;
}

static int ask_add_read(struct ask_read *reads, size_t *n, size_t cap, const char *kind, const char *stem, const char *anchor, const char *cite,
                        char *text)
{
    if (!text) return dream_error_set(DREAM_ENOMEM, "out of memory");
    if (*n == cap) {
        free(text);
        return 0;
    }
    reads[*n] = (struct ask_read){kind, stem ? strdup(stem) : NULL, anchor ? strdup(anchor) : NULL, cite ? strdup(cite) : NULL, text};
    (*n)++;
    return 0;
}

/* The reads of article stem: its lead, its infobox, and the sections named in anchors. */
static int ask_read_article(dream_reader *r, const char *stem, json_t *anchors, const struct dream_ask_params *p, struct ask_sources *s,
                            struct ask_read *reads, size_t *n, size_t cap)
{
    struct dbuf path = {0};
    dbuf_printf(&path, "%s/articles/%s.md", dream_reader_wiki(r), stem);
    dream_article *a = NULL;
    int rc = path.data ? dream_article_read_file(path.data, &a) : DREAM_ENOMEM;
    dbuf_free(&path);
    if (rc) {
        dream_error_clear(); /* listed a moment ago, gone now: nothing to read */
        return 0;
    }
    const char *t = dream_article_title(a);
    const char *title = t && t[0] ? t : stem;
    struct dbuf b = {0};
    const char *lead = dream_article_lead(a);
    if (lead && lead[0]) {
        dbuf_printf(&b, "## %s\n%s", title, lead);
        char *text = b.data ? ask_renumber(b.data, a, s, p->max_read) : NULL;
        dbuf_free(&b);
        if ((rc = ask_add_read(reads, n, cap, "lead", stem, NULL, NULL, text))) goto out;
    }
    size_t facts = 0; /* an infobox of kind (and aliases) alone tells nothing: no read for it */
    for (size_t i = 0; i < dream_article_infobox_count(a); i++) {
        const struct dream_article_field *f = dream_article_infobox_field(a, i);
        facts += strcmp(f->key, "aliases") && strcmp(f->key, "kind");
    }
    if (facts) {
        dbuf_printf(&b, "## %s: facts\n", title);
        for (size_t i = 0; i < dream_article_infobox_count(a); i++) {
            const struct dream_article_field *f = dream_article_infobox_field(a, i);
            if (strcmp(f->key, "aliases") && strcmp(f->key, "kind")) dbuf_printf(&b, "%s: %s\n", f->key, f->value);
        }
        char *text = b.data ? ask_renumber(b.data, a, s, p->max_read) : NULL;
        dbuf_free(&b);
        if ((rc = ask_add_read(reads, n, cap, "infobox", stem, NULL, NULL, text))) goto out;
    }
    size_t i;
    json_t *v;
    json_array_foreach(anchors, i, v) {
        if (i == 2) break; /* one or two sections */
        long si = dream_article_section_find(a, json_string_value(v));
        if (si < 0) continue;
        const struct dream_article_section *sec = dream_article_section(a, (size_t)si);
        dbuf_printf(&b, "## %s — %s\n%s", title, sec->title, sec->body);
        char *text = b.data ? ask_renumber(b.data, a, s, p->max_read) : NULL;
        dbuf_free(&b);
        if ((rc = ask_add_read(reads, n, cap, "section", stem, sec->anchor, NULL, text))) goto out;
    }
out:
    dream_article_free(a);
    return rc;
}

/* t[0..n) with every "[^" written "[ ^" (malloc'd; NULL when out of memory): a stored message's
 * own footnote-like text, which the read's markers must not be confused with. */
static char *ask_unmarked(const char *t, size_t n)
{
    struct dbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (t[i] == '[' && i + 1 < n && t[i + 1] == '^') dbuf_puts(&b, "[ ");
        else dbuf_putc(&b, t[i]);
    }
    return b.data ? dbuf_take(&b) : strdup("");
}

/* Whether cite ("conv:H#M") is among the sources already. */
static bool ask_has_source(const struct ask_sources *s, const char *cite)
{
    for (size_t k = 0; k < s->n; k++)
        if (!strcmp(s->cite[k], cite)) return true;
    return false;
}

/* A message the search found, whole (clipped), with the reply to it when it is the person's;
 * each with its own footnote. A message already among the sources is not read twice. */
static int ask_read_message(dream_reader *r, const json_t *hit, const struct dream_ask_params *p, struct ask_sources *s, struct ask_read *reads,
                            size_t *n, size_t cap)
{
    const char *cite = json_string_value(json_object_get(hit, "cite"));
    const char *hash = cite ? cite + 5 : NULL, *msg = cite ? strchr(cite, '#') : NULL;
    dream_store *store = dream_reader_store(r);
    if (!store || !hash || !msg || ask_has_source(s, cite)) return 0;
    char h[80];
    snprintf(h, sizeof h, "%.*s", (int)(msg - hash), hash);
    struct dream_store_conversation *c = NULL;
    if (dream_store_get_by_cite(store, h, &c)) {
        dream_error_clear();
        return 0;
    }
    int rc = 0;
    for (size_t i = 0; i < c->n_messages && !rc; i++) {
        /* the hit cites the message as footnotes do (dream_store_message_cite_id) */
        char *id = dream_store_message_cite_id(c->messages[i].id, (int64_t)i);
        if (!id) return dream_store_conversation_free(c), dream_error_set(DREAM_ENOMEM, "out of memory");
        if (strcmp(id, msg + 1)) {
            free(id);
            continue;
        }
        const char *date = json_string_value(json_object_get(hit, "date"));
        /* each message clipped to its share, so its marker survives the read's clip */
        size_t share = p->max_read > 600 ? (p->max_read - 300) / 2 : p->max_read / 4;
        const char *m0 = c->messages[i].text;
        struct dbuf b = {0};
        /* a message's own "[^1]" is text, not one of the read's footnotes: written "[ ^1]", so
         * the answer cannot cite another source by copying it */
        char *u0 = ask_unmarked(m0, utf8_prefix(m0, strlen(m0), share));
        dbuf_printf(&b, "## From the conversation \"%s\" (%s), %s:\n%s%s [^%zu]", c->title, date && date[0] ? date : DREAM_CITATION_UNDATED,
                    strcmp(c->messages[i].role, "user") ? "the assistant said" : "the person said", u0 ? u0 : "",
                    strlen(m0) > share ? "…" : "", ask_source(s, h, id, date, c->title));
        free(u0);
        /* and the reply it got: the assistant's next message (not the person's next one, where
         * the reply between was a tool call ingest left out), dated by its own time */
        if (!strcmp(c->messages[i].role, "user") && i + 1 < c->n_messages && !strcmp(c->messages[i + 1].role, "assistant")) {
            const char *m1 = c->messages[i + 1].text;
            char *id1 = dream_store_message_cite_id(c->messages[i + 1].id, (int64_t)(i + 1)), day[11];
            day_format(c->messages[i + 1].time_ms, day);
            /* a reply the search found first and read on its own is not read again here */
            char key[256];
            snprintf(key, sizeof key, "conv:%s#%s", h, id1 ? id1 : "");
            if (id1 && !ask_has_source(s, key)) {
                char *u1 = ask_unmarked(m1, utf8_prefix(m1, strlen(m1), share));
                dbuf_printf(&b, "\nThe assistant replied: %s%s [^%zu]", u1 ? u1 : "", strlen(m1) > share ? "…" : "",
                            ask_source(s, h, id1, day[0] ? day : date, c->title));
                free(u1);
            }
            free(id1);
        }
        free(id);
        /* the markers are already numbers: clip only */
        char *text = b.data ? ask_renumber(b.data, NULL, s, p->max_read) : NULL;
        dbuf_free(&b);
        rc = ask_add_read(reads, n, cap, "message", NULL, NULL, cite, text);
        break;
    }
    dream_store_conversation_free(c);
    return rc;
}

static bool ask_stopword(const char *w)
{
    static const char *const stop[] = {"the", "and", "for", "are", "was", "were", "what", "when", "where", "which", "who", "whom", "why", "how",
                                       "did", "does", "do", "is", "my", "mine", "me", "you", "your", "i", "a", "an", "of", "to", "in", "on",
                                       "at", "it", "its", "with", "about", "that", "this", "these", "those", "have", "has", "had", "from",
                                       "say", "said", "tell", "know", "any", "ever", "there", "they", "them", "should", "would", "could",
                                       "can", "will", "be", "been", "or", "not", "use", "used", "get", "much", "many", "often", NULL};
    for (size_t i = 0; stop[i]; i++)
        if (!strcasecmp(w, stop[i])) return true;
    return false;
}

/* Whether cp is a character of a word: an ASCII letter or digit, or a non-ASCII character that
 * is no punctuation or symbol (curly quotes, dashes, arrows, emoji and the like separate words,
 * as spaces do: "“Gus”" is the word Gus). */
static bool ask_word_cp(uint32_t cp)
{
    if (cp < 0x80) return isalnum((int)cp);
    static const uint32_t sep[][2] = {
        {0x80, 0xBF},       /* Latin-1 punctuation and signs: « » ¿ ¡ © ° */
        {0xD7, 0xD7},       {0xF7, 0xF7},       /* × ÷ */
        {0x2000, 0x206F},   /* general punctuation: ‘ ’ “ ” – — … • */
        {0x20A0, 0x20CF},   /* currency */
        {0x2190, 0x2BFF},   /* arrows, mathematical operators, technical, boxes, shapes, symbols, dingbats */
        {0x3000, 0x303F},   /* CJK punctuation */
        {0xFE00, 0xFE0F},   /* variation selectors */
        {0xFF01, 0xFF0F},   {0xFF1A, 0xFF20}, {0xFF3B, 0xFF40}, {0xFF5B, 0xFF65}, /* full-width punctuation */
        {0x1F000, 0x1FAFF}, /* emoji and pictographs */
    };
    for (size_t i = 0; i < sizeof sep / sizeof sep[0]; i++)
        if (cp >= sep[i][0] && cp <= sep[i][1]) return false;
    return true;
}

/* Adds s[0..l) to words unless it is short, too long, punctuation or a stopword. */
static void ask_add_word(char words[][64], size_t *n, const char *s, size_t l)
{
    if (l < 3 || l >= 64 || *n >= ASK_MAX_WORDS) return; /* s holds ask_word_cp characters only */
    snprintf(words[*n], 64, "%.*s", (int)l, s);
    char *ap = strchr(words[*n], '\''), *cap = strstr(words[*n], "\xE2\x80\x99");
    if (ap) *ap = '\0'; /* the person's -> person */
    if (cap) *cap = '\0'; /* and the person’s */
    if (strlen(words[*n]) >= 3 && !ask_stopword(words[*n])) (*n)++;
}

/* The question's content words (letters and digits; non-ASCII kept), at most ASK_MAX_WORDS. In
 * Chinese and Japanese, which put no spaces between words, each Han or Katakana character is a
 * word (the search index makes each one a token); Hiragana, mostly particles, is left out. */
static size_t ask_words(const char *q, char words[][64])
{
    size_t n = 0;
    const char *end = q + strlen(q);
    for (const char *p = q; *p && n < ASK_MAX_WORDS;) {
        uint32_t cp = 0, nx = 0;
        int l;
        while (*p && !ask_word_cp((l = utf8_next(p, (size_t)(end - p), &cp), cp))) p += l > 0 ? l : 1;
        const char *s = p;
        while (*p) {
            l = utf8_next(p, (size_t)(end - p), &cp);
            if (l <= 0) break;
            bool apostrophe = cp == '\'' || cp == 0x2019; /* in a word: "Gus's", "Gus’s" */
            if (apostrophe && p + l < end) {
                utf8_next(p + l, (size_t)(end - p - l), &nx);
                apostrophe = nx < 0x80 ? isalpha((int)nx) : ask_word_cp(nx);
            } else {
                apostrophe = false;
            }
            if (!ask_word_cp(cp) && !apostrophe) break;
            p += l;
        }
        size_t run = (size_t)(p - s), from = 0;
        for (size_t i = 0; i < run;) {
            uint32_t c;
            int cl = utf8_next(s + i, run - i, &c);
            int k = utf8_cjk(c);
            if (k) {
                ask_add_word(words, &n, s + from, i - from);
                if (k == UTF8_HAN) ask_add_word(words, &n, s + i, (size_t)cl);
                from = i + (size_t)cl;
            }
            i += (size_t)cl;
        }
        ask_add_word(words, &n, s + from, run - from);
    }
    return n;
}

/* Whether word is one Han or Katakana character (ask_words makes those words). */
static bool ask_cjk_word(const char *w)
{
    uint32_t cp;
    size_t l = strlen(w);
    return l && (size_t)utf8_next(w, l, &cp) == l && utf8_cjk(cp) == UTF8_HAN;
}

/* w[0..n) folded as the search index folds it, into out (cap bytes, NUL-terminated): ASCII in
 * lower case, a Latin letter with an accent as its base letter ("Café" and "CAFÉ" are "cafe");
 * its length. Other characters are kept as written. */
static size_t ask_fold(const char *w, size_t n, char *out, size_t cap)
{
    static const char latin[] = "aaaaaaaceeeeiiiidnooooo*ouuuuytsaaaaaaaceeeeiiiidnooooo*ouuuuyty" /* U+00C0..U+00FF */
                                "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiiiijjkkkllllllllllnnnnnnnnnoooooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs";
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < cap;) {
        uint32_t cp;
        int l = utf8_next(w + i, n - i, &cp);
        if (l <= 0) l = 1;
        if (cp < 0x80) out[k++] = (char)tolower((int)cp);
        else if (cp >= 0xC0 && cp < 0x180) out[k++] = latin[cp - 0xC0];
        else memcpy(out + k, w + i, (size_t)l), k += (size_t)l;
        i += (size_t)l;
    }
    out[k] = '\0';
    return k;
}

/* Two words are the same word for ask_answers_the_question: equal, or alike over their first
 * five letters (or all of the shorter, of three or more): oil/oiling, start/started/starter,
 * battery/batteries. Loose on purpose: the rule only silences answers about something else.
 * Folded first (ask_fold), as the search folds them. */
static bool ask_same_word(const char *a0, size_t la0, const char *b0, size_t lb0)
{
    char a[256], b[256];
    size_t la = ask_fold(a0, la0, a, sizeof a), lb = ask_fold(b0, lb0, b, sizeof b);
    if (la == lb && !memcmp(a, b, la)) return true;
    if (la < 3 || lb < 3) return false;
    size_t want = la < lb ? la : lb;
    if (want > 5) want = 5;
    return !memcmp(a, b, want);
}

/* Whether an answer shares a content word with the question it was asked: a model that reads
 * notes about one thing and answers with another ("Alice's birthday is in July" to "How many
 * solar batteries did I order?") has not found the question on file. Footnote markers and words
 * under three letters do not count. A question without content words passes. */
static bool ask_answers_the_question(const char *answer, char words[][64], size_t nw)
{
    if (!nw) return true;
    size_t wl[ASK_MAX_WORDS];
    for (size_t i = 0; i < nw; i++) wl[i] = strlen(words[i]);
    /* a character of a script without spaces is found anywhere in the answer */
    for (size_t i = 0; i < nw; i++)
        if (ask_cjk_word(words[i]) && strstr(answer, words[i])) return true;
    const char *end = answer + strlen(answer);
    for (const char *p = answer; *p;) {
        if (p[0] == '[' && p[1] == '^') { /* a footnote marker */
            p += 2;
            while (*p && *p != ']') p++;
            continue;
        }
        uint32_t cp = 0;
        int cl = utf8_next(p, (size_t)(end - p), &cp);
        if (cl <= 0 || !ask_word_cp(cp)) {
            p += cl > 0 ? cl : 1;
            continue;
        }
        const char *s = p;
        while (*p && (cl = utf8_next(p, (size_t)(end - p), &cp)) > 0 && ask_word_cp(cp)) p += cl;
        size_t l = (size_t)(p - s);
        if (l < 3) continue;
        for (size_t i = 0; i < nw; i++)
            if (ask_same_word(s, l, words[i], wl[i])) return true;
    }
    return false;
}

char *dream_ask_prompt(const char *question, const char *reads)
{
    struct dbuf b = {0};
    dbuf_printf(&b,
                "Answer the person's question from these notes and nothing else. Answer as their own memory would: "
                "state the facts directly in one to three sentences, with no preamble and no mention of notes, "
                "articles, sources or a wiki. After each fact put the marker of the footnote it comes from, like [^2]. "
                "If the notes do not answer the question, reply exactly: NOTHING ON FILE\n\n"
                "%s\nQuestion: %s\n",
                reads, question);
    return dbuf_take(&b);
}

static const char *ask_candidate_add(char stems[][256], size_t *n, size_t cap, const char *stem)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(stems[i], stem)) return stems[i];
    if (*n == cap || strlen(stem) >= 256) return NULL;
    snprintf(stems[*n], 256, "%s", stem);
    return stems[(*n)++];
}

/* One pass of ask_clean_answer over in: the markers of listed footnotes kept (and counted into
 * used), the others taken out (*dropped says whether any was); cap: the first letter upper-cased. */
static char *ask_markers(const char *in, bool cap, const bool *listed, size_t n_sources, size_t *used, size_t *n_used, bool *dropped)
{
    *n_used = 0;
    *dropped = false;
    struct dbuf b = {0};
    for (const char *p = in; *p; p++) {
        if (p[0] == '[' && p[1] == '^') {
            char *end;
            unsigned long k = strtoul(p + 2, &end, 10);
            if (end > p + 2 && *end == ']') {
                if (k >= 1 && k <= n_sources && listed[k]) {
                    bool seen = false;
                    for (size_t i = 0; i < *n_used; i++) seen = seen || used[i] == k;
                    if (!seen && *n_used < ASK_MAX_SOURCES) used[(*n_used)++] = k;
                    dbuf_printf(&b, "[^%lu]", k);
                } else {
                    *dropped = true;
                }
                p = end;
                continue;
            }
        }
        if (cap && islower((unsigned char)*p)) {
            dbuf_putc(&b, (char)toupper((unsigned char)*p));
        } else {
            dbuf_putc(&b, *p);
        }
        cap = false;
    }
    return dbuf_take(&b);
}

char *ask_clean_answer(const char *raw, const bool *listed, size_t n_sources, size_t *used, size_t *n_used)
{
    *n_used = 0;
    while (*raw && isspace((unsigned char)*raw)) raw++;
    static const char *const preambles[] = {"according to your notes", "according to the notes", "according to your memory",
                                            "according to your wiki", "based on your notes", "based on the notes",
                                            "from your notes", "your notes say", "the notes say", NULL};
    for (size_t i = 0; preambles[i]; i++) {
        size_t l = strlen(preambles[i]);
        if (!strncasecmp(raw, preambles[i], l)) {
            raw += l;
            while (*raw == ',' || *raw == ':' || *raw == ' ') raw++;
            break;
        }
    }
    bool dropped;
    char *t = ask_markers(raw, true, listed, n_sources, used, n_used, &dropped);
    /* a marker taken out can close the brackets around it into another ("[[^2]^5]" leaves
     * "[^5]"), so the markers are read again until a pass takes none out; each pass that does
     * is shorter, so this ends */
    while (t && dropped) {
        char *again = ask_markers(t, false, listed, n_sources, used, n_used, &dropped);
        free(t);
        t = again;
    }
    if (t) { /* trailing whitespace */
        size_t l = strlen(t);
        while (l && isspace((unsigned char)t[l - 1])) t[--l] = '\0';
    }
    return t;
}

int dream_ask(dream_reader *r, const char *question, const struct dream_ask_params *params, json_t **out)
{
    *out = NULL;
    struct dream_ask_params p;
    dream_ask_default_params(&p);
    if (params) {
        if (params->max_read) p.max_read = params->max_read;
        if (params->max_context) p.max_context = params->max_context;
        if (params->max_reads) p.max_reads = params->max_reads;
    }
    if (p.max_reads > 12) p.max_reads = 12;
    if (p.max_read < 256) p.max_read = 256; /* a clipped read needs room for its "…" and a sentence */
    size_t ql = question ? strlen(question) : 0;
    if (!ql) return dream_error_set(DREAM_EINVAL, "ask needs a question");
    if (ql > DREAM_ASK_QUESTION_MAX)
        return dream_error_set(DREAM_EINVAL, "the question is over %d bytes; ask a shorter one", DREAM_ASK_QUESTION_MAX);
    for (size_t i = 0; i < ql;) {
        int l = utf8_seq_len((const unsigned char *)question + i, ql - i);
        if (l <= 0) return dream_error_set(DREAM_EINVAL, "the question is not valid UTF-8");
        i += (size_t)l;
    }
    for (size_t i = 0; i < ql; i++)
        if ((unsigned char)question[i] < 0x20 && question[i] != '\n' && question[i] != '\t')
            return dream_error_set(DREAM_EINVAL, "the question holds a control character (byte %zu)", i);

    /* Candidates: names in the question first (the longest run of words that resolves), then
     * what the search ranks for any of its words (a word of four letters or more as a prefix,
     * so "freelance" finds "freelancer"). */
    char words[ASK_MAX_WORDS][64];
    size_t nw = ask_words(question, words);
    char stems[4][256];
    json_t *anchors[4] = {NULL, NULL, NULL, NULL};
    size_t ns = 0;
    for (size_t len = nw < 3 ? nw : 3; len >= 1 && ns < 2; len--) {
        for (size_t i = 0; i + len <= nw && ns < 2; i++) {
            char name[256] = "";
            for (size_t k = 0; k < len; k++) snprintf(name + strlen(name), sizeof name - strlen(name), "%s%s", k ? " " : "", words[i + k]);
            json_t *o = NULL;
            const char *status = NULL;
            if (dream_read_resolve(r, name, &o) == 0) status = json_string_value(json_object_get(o, "status"));
            if (status && !strcmp(status, "article"))
                ask_candidate_add(stems, &ns, 2, json_string_value(json_object_get(o, "stem")));
            json_decref(o);
            dream_error_clear();
        }
    }
    json_t *hits = NULL;
    if (nw) {
        struct dbuf q = {0};
        for (size_t i = 0; i < nw; i++) dbuf_printf(&q, "%s%s%s", i ? " OR " : "", words[i], strlen(words[i]) >= 4 ? "*" : "");
        struct dream_read_search_params sp;
        dream_read_search_default_params(&sp);
        sp.query = q.data;
        sp.limit = 6;
        if (q.data && dream_read_search_index(r, &sp, &hits) != 0) {
            json_decref(hits);
            hits = NULL;
            dream_error_clear();
        }
        dbuf_free(&q);
    }
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(hits, "results"), i, v) {
        const char *stem = json_string_value(json_object_get(v, "stem"));
        if (!stem) continue; /* a captured subject: nothing to read */
        const char *at = ask_candidate_add(stems, &ns, 2, stem);
        if (!at) continue;
        size_t k = (size_t)(at - stems[0]) / sizeof stems[0];
        const char *anchor = json_string_value(json_object_get(v, "anchor"));
        if (anchor && anchor[0]) {
            if (!anchors[k]) anchors[k] = json_array();
            json_array_append_new(anchors[k], json_string(anchor));
        }
    }

    /* Reads, within the budgets. */
    struct ask_sources src = {0};
    struct ask_read reads[16];
    size_t nr = 0;
    int rc = 0;
    for (size_t k = 0; !rc && k < ns; k++) rc = ask_read_article(r, stems[k], anchors[k], &p, &src, reads, &nr, p.max_reads);
    if (!rc && nr < 3) {
        size_t taken = 0;
        json_array_foreach(json_object_get(hits, "conversations"), i, v) {
            if (rc || taken == 2 || nr >= p.max_reads) break;
            size_t before = nr;
            rc = ask_read_message(r, v, &p, &src, reads, &nr, p.max_reads);
            taken += nr > before;
        }
    }
    for (size_t k = 0; k < 4; k++) json_decref(anchors[k]);
    json_decref(hits);
    /* The context: reads in order while the whole prompt stays under max_context. */
    struct dbuf ctx = {0}, notes = {0};
    bool listed[ASK_MAX_SOURCES + 1] = {false};
    json_t *jreads = json_array();
    char *bare = dream_ask_prompt("", "");
    size_t fixed = (bare ? strlen(bare) : 0) + ql + 24; /* instructions and the question */
    free(bare);
    size_t used_bytes = fixed;
    for (size_t k = 0; !rc && k < nr; k++) {
        /* the footnotes this read adds */
        struct dbuf fn = {0};
        bool add[ASK_MAX_SOURCES + 1] = {false};
        for (const char *m = reads[k].text; (m = strstr(m, "[^")); m += 2) {
            unsigned long n = strtoul(m + 2, NULL, 10);
            if (n >= 1 && n <= src.n && !listed[n] && !add[n]) {
                add[n] = true;
                dbuf_printf(&fn, "%s\n", src.line[n - 1]);
            }
        }
        size_t cost = strlen(reads[k].text) + 2 + fn.len;
        if (used_bytes + cost + 12 > p.max_context) {
            dbuf_free(&fn);
            break;
        }
        used_bytes += cost;
        for (size_t n = 1; n <= src.n; n++) listed[n] = listed[n] || add[n];
        dbuf_printf(&notes, "%s\n\n", reads[k].text);
        dbuf_append(&ctx, fn.data ? fn.data : "", fn.len);
        dbuf_free(&fn);
        json_t *jr = json_pack("{ss sI}", "kind", reads[k].kind, "bytes", (json_int_t)strlen(reads[k].text));
        if (reads[k].stem) json_object_set_new(jr, "stem", json_string(reads[k].stem));
        if (reads[k].anchor) json_object_set_new(jr, "anchor", json_string(reads[k].anchor));
        if (reads[k].cite) json_object_set_new(jr, "cite", json_string(reads[k].cite));
        json_array_append_new(jreads, jr);
    }
    for (size_t k = 0; k < nr; k++) free(reads[k].stem), free(reads[k].anchor), free(reads[k].cite), free(reads[k].text);
    char *answer = NULL, *prompt = NULL;
    size_t used[ASK_MAX_SOURCES], n_used = 0;
    int calls = 0;
    if (!rc && json_array_size(jreads)) {
        struct dbuf all = {0};
        dbuf_printf(&all, "Notes:\n\n%sFootnotes:\n%s", notes.data ? notes.data : "", ctx.data ? ctx.data : "");
        prompt = all.data ? dream_ask_prompt(question, all.data) : NULL;
        dbuf_free(&all);
        if (!prompt) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        struct dream_local_input in = {.system = NULL, .user = prompt};
        struct dream_call_opts opts = dream_call_default_opts();
        char *raw = NULL;
        if (!rc) {
            calls = 1;
            rc = dream_call_local("answer", &in, &opts, &raw);
        }
        if (!rc) {
            const char *t = raw;
            while (*t && isspace((unsigned char)*t)) t++;
            if (strncasecmp(t, "NOTHING ON FILE", 15) != 0) answer = ask_clean_answer(raw, listed, src.n, used, &n_used);
            /* the silence rule: an answer that cites nothing, or that shares no word with the
             * question, is not on file */
            if (answer && (!n_used || !ask_answers_the_question(answer, words, nw))) {
                free(answer);
                answer = NULL;
                n_used = 0;
            }
        }
        free(raw);
    }
    dbuf_free(&notes);
    dbuf_free(&ctx);
    if (rc) {
        json_decref(jreads);
        free(prompt);
        ask_sources_free(&src);
        return rc;
    }
    json_t *cites = json_array();
    for (size_t k = 0; k < n_used; k++)
        json_array_append_new(cites, json_pack("{sI ss ss ss}", "n", (json_int_t)used[k], "cite", src.cite[used[k] - 1], "date",
                                               src.date[used[k] - 1] ? src.date[used[k] - 1] : "", "title",
                                               src.title[used[k] - 1] ? src.title[used[k] - 1] : ""));
    *out = json_pack("{ss ss sb so so sI si}", "question", question, "answer", answer ? answer : DREAM_ASK_NOTHING, "answered", answer != NULL,
                     "citations", cites, "reads", jreads, "context_bytes", (json_int_t)(prompt ? strlen(prompt) : 0), "model_calls", calls);
    free(answer);
    free(prompt);
    ask_sources_free(&src);
    return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
}
