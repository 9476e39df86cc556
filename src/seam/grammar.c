/* grammar.c — the answer shapes of the stages (see dream/grammar.h). */
#include "dream/grammar.h"

#include "util/buf.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char dream_grammar_yes_no[] = "root ::= [Yy] \"es\" | [Nn] \"o\"\n";

const char dream_grammar_evolution_error[] =
    "root ::= \"EVOLUTION\" | \"Evolution\" | \"evolution\" | \"ERROR\" | \"Error\" | \"error\"\n";

/* A name starts with no list marker or space; the answer may end with one newline. */
const char dream_grammar_names[] =
    "root ::= (\"NONE\" | name (\"\\n\" name){0,15}) \"\\n\"?\n"
    "name ::= [^\\-*#> \\t\\n\\r\\x00-\\x1f] [^\\n\\r\\x00-\\x1f]{0,99}\n";

const char dream_grammar_headings[] =
    "root ::= (\"NONE\" | heading (\"\\n\" heading){0,5}) \"\\n\"?\n"
    "heading ::= [A-Za-z0-9\\x80-\\U0010FFFF] [^\\n\\r\\x00-\\x1f\\[`]{0,79}\n";

const char dream_grammar_section_name[] =
    "root ::= \"NONE\" | word (\" \" word){1,4}\n"
    "word ::= [A-Za-z0-9\\x80-\\U0010FFFF] [A-Za-z0-9'\\x80-\\U0010FFFF\\-]{0,23}\n";

const char dream_grammar_value[] = "root ::= [^ \\n\\r\\x00-\\x1f\\[`] [^\\n\\r\\x00-\\x1f\\[`]{0,79}\n";

const char dream_grammar_infobox[] =
    "root ::= line (\"\\n\" line){0,15} \"\\n\"?\n"
    "line ::= [a-z] [a-z0-9_]{0,39} \": \" [^ \\n\\r\\x00-\\x1f`] [^\\n\\r\\x00-\\x1f`]{0,159}\n";

/* ---- the infobox refresh answer ------------------------------------------------------------
 *
 * What synth_parse_refresh (src/dreaming/synth_refresh.c) takes, written so that every answer
 * the grammar allows is one it takes: no line it refuses, and no field, alias or category that
 * it would skip as empty ("unknown", "n/a", ...), so an answer always says something. Parts of
 * the parser's rules are "not one of these words" (a key that is not aliases, category or kind; a
 * value that is not "none"): gbnf_except writes those as a trie of the words, whose every node
 * lets the text go on with any character but the ones that would keep spelling a word. */

/* A character class: which ASCII characters, and whether every non-ASCII one. */
struct gclass {
    bool ascii[128];
    bool high;
};

/* Printable ASCII but the characters of but, and every non-ASCII character. */
static struct gclass gc_all_but(const char *but)
{
    struct gclass c = {.high = true};
    for (int i = 0x20; i < 0x7f; i++) c.ascii[i] = true;
    for (; *but; but++) c.ascii[(unsigned char)*but & 0x7f] = false;
    return c;
}

/* Only the characters of only. */
static struct gclass gc_only(const char *only)
{
    struct gclass c = {.high = false};
    for (; *only; only++) c.ascii[(unsigned char)*only & 0x7f] = true;
    return c;
}

static bool gc_empty(const struct gclass *c)
{
    for (int i = 0; i < 128; i++)
        if (c->ascii[i]) return false;
    return !c->high;
}

/* Takes ch out of c, in both cases when it is a letter. */
static void gc_remove(struct gclass *c, char ch)
{
    c->ascii[(unsigned char)ch & 0x7f] = false;
    c->ascii[toupper((unsigned char)ch) & 0x7f] = false;
    c->ascii[tolower((unsigned char)ch) & 0x7f] = false;
}

/* Writes c as a GBNF class ("[\x41-\x5a...]"); every ASCII character as \xNN. */
static int gc_write(struct dbuf *b, const struct gclass *c)
{
    int rc = dbuf_putc(b, '[');
    for (int i = 0; !rc && i < 128; i++) {
        if (!c->ascii[i]) continue;
        int j = i;
        while (j + 1 < 128 && c->ascii[j + 1]) j++;
        rc = j > i ? dbuf_printf(b, "\\x%02x-\\x%02x", i, j) : dbuf_printf(b, "\\x%02x", i);
        i = j;
    }
    if (!rc && c->high) rc = dbuf_puts(b, "\\x80-\\U0010FFFF");
    return rc || dbuf_putc(b, ']');
}

/* ch in either case, as a class of c's characters; false when c holds neither. */
static bool gc_letter(const struct gclass *c, char ch, struct gclass *out)
{
    *out = (struct gclass){.high = false};
    int lo = tolower((unsigned char)ch) & 0x7f, up = toupper((unsigned char)ch) & 0x7f;
    out->ascii[lo] = c->ascii[lo];
    out->ascii[up] = c->ascii[up];
    return !gc_empty(out);
}

#define EXCEPT_MAX_NODES 256
#define EXCEPT_MAX_TRIM 8 /* trim characters after a word before the text must go on */

/* What "not one of words" is about: the text's first character and the others, the characters
 * the parser cuts from the end before it compares (a word followed only by those is still the
 * word), the words (lowercase ASCII, compared ignoring case, none a proper prefix of another
 * with only trim characters between), and the length in characters. */
struct except_spec {
    const char *name;
    struct gclass first, rest;
    const char *trim;
    const char *const *words;
    size_t max_len;
};

/* The trie's nodes are the words' prefixes; node 0 is the empty one. */
struct except_trie {
    const char *prefix[EXCEPT_MAX_NODES];
    size_t len[EXCEPT_MAX_NODES];
    int n;
    size_t depth; /* the longest word */
};

static bool ex_is_word(const struct except_spec *x, const char *p, size_t len)
{
    for (const char *const *w = x->words; *w; w++)
        if (strlen(*w) == len && !strncmp(*w, p, len)) return true;
    return false;
}

static int ex_trie(const struct except_spec *x, struct except_trie *t)
{
    t->n = 1;
    t->prefix[0] = "";
    t->len[0] = 0;
    t->depth = 0;
    for (const char *const *w = x->words; *w; w++) {
        size_t wl = strlen(*w);
        if (wl > t->depth) t->depth = wl;
        for (size_t l = 1; l <= wl; l++) {
            bool seen = false;
            for (int k = 0; k < t->n && !seen; k++) seen = t->len[k] == l && !strncmp(t->prefix[k], *w, l);
            if (seen) continue;
            if (t->n == EXCEPT_MAX_NODES) return -1;
            t->prefix[t->n] = *w;
            t->len[t->n++] = l;
            /* a word's prefix that is another word and a trim character: the parser would
             * read it as that word, which this trie cannot say */
            if (l >= 2 && strchr(x->trim, (*w)[l - 1]) && ex_is_word(x, *w, l - 1)) return -1;
        }
    }
    return 0;
}

/* Writes rule x->name and its helpers (x->name-N, x->name-tail, x->name-tail0). */
static int gbnf_except(struct dbuf *b, const struct except_spec *x)
{
    struct except_trie t;
    if (ex_trie(x, &t)) return -1;
    size_t trim_room = *x->trim ? EXCEPT_MAX_TRIM + 1 : 0;
    if (x->max_len < t.depth + 1 + trim_room) return -1;
    size_t tail = x->max_len - t.depth - 1 - trim_room;
    struct gclass trim = gc_only(x->trim), rest_untrimmed = x->rest;
    for (const char *c = x->trim; *c; c++) gc_remove(&rest_untrimmed, *c);
    int rc = dbuf_printf(b, "%s-tail0 ::= ", x->name) || gc_write(b, &x->rest) || dbuf_printf(b, "{0,%zu}\n", x->max_len - 1);
    rc = rc || dbuf_printf(b, "%s-tail ::= ", x->name) || gc_write(b, &x->rest) || dbuf_printf(b, "{0,%zu}\n", tail);
    for (int k = 0; !rc && k < t.n; k++) {
        const char *p = t.prefix[k];
        size_t len = t.len[k];
        bool word = k > 0 && ex_is_word(x, p, len);
        const struct gclass *cl = k == 0 ? &x->first : &x->rest;
        struct gclass other = *cl;
        rc = k == 0 ? dbuf_printf(b, "%s ::= ", x->name) : dbuf_printf(b, "%s-%d ::= (", x->name, k);
        int alts = 0;
        for (int c = 1; !rc && c < t.n; c++) { /* the children: one character longer */
            if (t.len[c] != len + 1 || strncmp(t.prefix[c], p, len)) continue;
            struct gclass one;
            gc_remove(&other, t.prefix[c][len]);
            if (!gc_letter(cl, t.prefix[c][len], &one)) continue;
            rc = (alts++ && dbuf_puts(b, " | ")) || gc_write(b, &one) || dbuf_printf(b, " %s-%d", x->name, c);
        }
        if (word) /* a word: it must go on with something the parser does not cut */
            for (const char *c = x->trim; *c; c++) gc_remove(&other, *c);
        if (!rc && !gc_empty(&other))
            rc = (alts++ && dbuf_puts(b, " | ")) || gc_write(b, &other) || dbuf_printf(b, " %s-%s", x->name, k == 0 ? "tail0" : "tail");
        if (!rc && word && *x->trim)
            rc = (alts++ && dbuf_puts(b, " | ")) || gc_write(b, &trim) || dbuf_putc(b, ' ') || gc_write(b, &trim) ||
                 dbuf_printf(b, "{0,%d} ", EXCEPT_MAX_TRIM - 1) || gc_write(b, &rest_untrimmed) || dbuf_printf(b, " %s-tail", x->name);
        if (!rc && k > 0) rc = dbuf_puts(b, word ? ")\n" : ")?\n");
        else if (!rc) rc = dbuf_putc(b, '\n');
    }
    return rc;
}

const char *const dream_refresh_empty_values[] = {"-", "?", "n/a", "na", "none", "unknown", "not stated", "not mentioned", "unclear", NULL};
/* The keys that are not fields: the lines of their own, and the kind, which is the code's. */
static const char *const refresh_not_fields[] = {"alias", "aliases", "category", "categories", "kind", NULL};

char *dream_grammar_infobox_refresh(void)
{
    /* a value: no markup the parser refuses (backticks, templates, footnote markers, the
     * prompt's <<< >>>) and no emphasis; a [[link]], once, is its only bracket */
    const char *value_but = "[]{}<>`*";
    const char *name_but = "[]{}|`#*:;<>\\,\""; /* rf_names refuses these (and ',' splits) */
    struct except_spec key = {.name = "key", .first = gc_only("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
                              .rest = gc_only("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"),
                              .trim = "", .words = refresh_not_fields, .max_len = 40};
    struct except_spec plain = {.name = "plain", .first = gc_all_but(" [\"]{}<>`*"), .rest = gc_all_but(value_but), .trim = " \"",
                                .words = dream_refresh_empty_values, .max_len = 160};
    struct except_spec name = {.name = "name", .first = gc_all_but(" [\"]{}|`#*:;<>\\,"), .rest = gc_all_but(name_but), .trim = " ",
                               .words = dream_refresh_empty_values, .max_len = 60};
    struct gclass vfirst = gc_all_but(" [\"]{}<>`*"), vrest = gc_all_but(value_but), lfirst = vfirst, lrest = vrest;
    gc_remove(&lfirst, '^'); /* "[[^" would be a footnote marker */
    gc_remove(&lrest, '^');
    struct dbuf b = {0};
    int rc = dbuf_puts(&b, "root ::= (\"```info\\n\")? line (\"\\n\" line){0,23} (\"\\n```\")? \"\\n\"?\n"
                           "line ::= field | aliases | category\n"
                           "field ::= key \": \" (plain | linked)\n"
                           "aliases ::= [Aa] \"liases: \" name (\", \" name){0,23}\n"
                           "category ::= [Cc] \"ategory: \" name\n"
                           "linked ::= (");
    rc = rc || gc_write(&b, &vfirst) || dbuf_putc(&b, ' ') || gc_write(&b, &vrest) || dbuf_puts(&b, "{0,39})? \"[[\" ");
    rc = rc || gc_write(&b, &lfirst) || dbuf_putc(&b, ' ') || gc_write(&b, &lrest) || dbuf_puts(&b, "{0,59} \"]]\" ");
    rc = rc || gc_write(&b, &vrest) || dbuf_puts(&b, "{0,40}\n");
    rc = rc || gbnf_except(&b, &key) || gbnf_except(&b, &plain) || gbnf_except(&b, &name);
    char *out = rc ? NULL : dbuf_take(&b);
    dbuf_free(&b);
    return out;
}

char *dream_grammar_literal(const char *text)
{
    struct dbuf b = {0};
    int rc = dbuf_putc(&b, '"');
    for (const unsigned char *p = (const unsigned char *)text; !rc && *p; p++) {
        if (*p == '"' || *p == '\\') rc = dbuf_printf(&b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) rc = dbuf_printf(&b, "\\x%02x", *p);
        else rc = dbuf_putc(&b, (char)*p);
    }
    if (!rc) rc = dbuf_putc(&b, '"');
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

/* Subject names copied from a text: the entity stage's grammar for a model that cannot copy
 * reliably on its own (see dream_grammar_names_from in dream/grammar.h). */

#define NF_MAX_WORDS 4096
#define NF_MAX_WORD 48

struct nf_word {
    const char *s; /* into the text; the first letter's case is free in the grammar */
    size_t len;
    unsigned hash;
};

struct nf_edge {
    int from, to;
};

static unsigned nf_hash(const char *s, size_t n)
{
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == 0 && c >= 'A' && c <= 'Z') c = (unsigned char)(c - 'A' + 'a');
        h = (h ^ c) * 16777619u;
    }
    return h;
}

static bool nf_same(const struct nf_word *w, const char *s, size_t n)
{
    if (w->len != n) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)w->s[i], b = (unsigned char)s[i];
        if (i == 0) {
            if (a >= 'A' && a <= 'Z') a = (unsigned char)(a - 'A' + 'a');
            if (b >= 'A' && b <= 'Z') b = (unsigned char)(b - 'A' + 'a');
        }
        if (a != b) return false;
    }
    return true;
}

static bool nf_lead(unsigned char c) { return c && strchr("\"'([{*_`<>#~", c) != NULL; }
static bool nf_trail(unsigned char c) { return c && strchr("\"'.,;:!?)]}*_`>~", c) != NULL; }

static int nf_edge_cmp(const void *a, const void *b)
{
    const struct nf_edge *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return (x->to > y->to) - (x->to < y->to);
}

/* Function words and chat filler: never the first or last word of a name. */
static bool nf_stop(const char *s, size_t n)
{
    static const char *const words[] = {
        "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "anything", "are", "as", "at",
        "be", "because", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
        "doing", "done", "during", "each", "either", "even", "every", "few", "for", "from", "get", "got", "had",
        "has", "have", "he", "hello", "her", "here", "hers", "hey", "hi", "him", "his", "how", "i", "if", "in",
        "into", "is", "it", "its", "just", "let", "like", "many", "may", "me", "might", "mine", "more", "most",
        "much", "must", "my", "neither", "no", "nor", "not", "now", "of", "off", "ok", "okay", "on", "one",
        "only", "or", "other", "our", "out", "over", "own", "please", "quick", "same", "shall", "she",
        "should", "since", "so", "some", "something", "still", "such", "sure", "than", "thank", "thanks",
        "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "though", "to",
        "too", "under", "until", "up", "update", "us", "very", "was", "we", "well", "were", "what", "when",
        "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "yes", "yet", "you",
        "your", "yours",
    };
    char low[16];
    if (n >= sizeof low) return false;
    for (size_t i = 0; i < n; i++) low[i] = (char)tolower((unsigned char)s[i]);
    low[n] = 0;
    size_t lo = 0, hi = sizeof words / sizeof words[0];
    while (lo < hi) { /* the list is sorted */
        size_t mid = (lo + hi) / 2;
        int c = strcmp(low, words[mid]);
        if (!c) return true;
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return false;
}

char *dream_grammar_names_from(const char *text, size_t len)
{
    struct nf_word *words = calloc(NF_MAX_WORDS, sizeof *words);
    int *slots = malloc(2 * NF_MAX_WORDS * sizeof *slots); /* open addressing: word ids, -1 empty */
    struct nf_edge *edges = NULL;
    size_t n_edges = 0, cap_edges = 0;
    int n_words = 0, prev = -1;
    struct dbuf b = {0};
    char *out = NULL;
    if (!words || !slots) goto done;
    for (int i = 0; i < 2 * NF_MAX_WORDS; i++) slots[i] = -1;

    for (size_t i = 0; i < len;) {
        while (i < len && isspace((unsigned char)text[i])) {
            if (text[i] == '\n') prev = -1; /* a name does not run across lines */
            i++;
        }
        if (i < len && text[i] == '[' && (i == 0 || text[i - 1] == '\n')) {
            /* a line of transcript markup: [user], [assistant], [... N more bytes not shown] */
            size_t e = i;
            while (e < len && text[e] != '\n') e++;
            size_t last = e;
            while (last > i && isspace((unsigned char)text[last - 1])) last--;
            if (text[last - 1] == ']') {
                i = e;
                continue;
            }
        }
        size_t s = i;
        while (i < len && !isspace((unsigned char)text[i])) i++;
        size_t e = i;
        if (s == e) break;
        /* [markup] and (id: ...) inside a line: never part of a name */
        if ((text[s] == '[' && text[e - 1] == ']') || (e - s >= 4 && !memcmp(text + s, "(id:", 4))) {
            prev = -1;
            continue;
        }
        bool cut_before = false, cut_after = false;
        while (s < e && nf_lead((unsigned char)text[s])) s++, cut_before = true;
        while (e > s && nf_trail((unsigned char)text[e - 1])) e--, cut_after = true;
        /* a possessive ('s, \u2019s) or a closing \u2019: the name is the word without it */
        size_t cut = 0;
        if (e - s >= 2 && text[e - 2] == '\'' && (text[e - 1] == 's' || text[e - 1] == 'S')) cut = 2;
        else if (e - s >= 4 && !memcmp(text + e - 4, "\xe2\x80\x99s", 4)) cut = 4;
        else if (e - s >= 3 && !memcmp(text + e - 3, "\xe2\x80\x99", 3)) cut = 3;
        if (cut) e -= cut, cut_after = true;
        bool ok = e > s && e - s <= NF_MAX_WORD;
        for (size_t k = s; ok && k < e; k++) ok = (unsigned char)text[k] >= 0x20 && text[k] != 0x7f;
        if (!ok) {
            prev = -1;
            continue;
        }
        unsigned h = nf_hash(text + s, e - s);
        int id = -1;
        for (unsigned k = h % (2 * NF_MAX_WORDS);; k = (k + 1) % (2 * NF_MAX_WORDS)) {
            int w = slots[k];
            if (w < 0) {
                if (n_words < NF_MAX_WORDS) {
                    id = n_words++;
                    words[id] = (struct nf_word){text + s, e - s, h};
                    slots[k] = id;
                }
                break;
            }
            if (words[w].hash == h && nf_same(&words[w], text + s, e - s)) {
                id = w;
                break;
            }
        }
        if (id >= 0 && prev >= 0 && !cut_before) {
            if (n_edges == cap_edges) {
                size_t nc = cap_edges ? 2 * cap_edges : 256;
                struct nf_edge *ne = realloc(edges, nc * sizeof *ne);
                if (!ne) goto done;
                edges = ne, cap_edges = nc;
            }
            edges[n_edges++] = (struct nf_edge){prev, id};
        }
        prev = cut_after ? -1 : id;
    }
    if (n_edges) qsort(edges, n_edges, sizeof *edges, nf_edge_cmp);
    /* edge ranges per word (edges are sorted by from) */
    size_t *first_edge = calloc((size_t)n_words + 1, sizeof *first_edge);
    bool *stop = calloc((size_t)n_words + 1, sizeof *stop), *endable = calloc((size_t)n_words + 1, sizeof *endable);
    if (!first_edge || !stop || !endable) {
        free(first_edge), free(stop), free(endable);
        goto done;
    }
    for (int w = 0, e = 0; w <= n_words; w++) { /* words without edges: an empty range */
        while ((size_t)e < n_edges && edges[e].from < w) e++;
        first_edge[w] = (size_t)e;
    }
    /* A name neither starts nor ends with a function word; a stop word can only sit inside one,
     * so it is usable only when some run of words after it ends on a word that is not one. */
    for (int w = 0; w < n_words; w++) stop[w] = nf_stop(words[w].s, words[w].len);
    for (int w = 0; w < n_words; w++) endable[w] = !stop[w];
    for (bool changed = true; changed;) {
        changed = false;
        for (int w = 0; w < n_words; w++)
            for (size_t e = first_edge[w]; !endable[w] && e < first_edge[w + 1]; e++)
                if (endable[edges[e].to]) endable[w] = changed = true;
    }
    int n_start = 0;
    for (int w = 0; w < n_words; w++) n_start += !stop[w];

    int rc = 0;
    if (n_start == 0) { /* nothing to copy: NONE is the only answer */
        rc = dbuf_puts(&b, "root ::= \" NONE\" \"\\n\"?\n");
        goto emitted;
    }
    rc = dbuf_puts(&b, "root ::= \" \" (\"NONE\" | line (\"\\n \" line){0,15}) \"\\n\"?\nline ::= ");
    for (int w = 0, k = 0; !rc && w < n_words; w++)
        if (!stop[w]) rc = dbuf_printf(&b, "%sw%d", k++ ? " | " : "", w);
    rc = rc || dbuf_putc(&b, '\n');
    for (int w = 0; !rc && w < n_words; w++) {
        if (!endable[w]) continue;
        const struct nf_word *x = &words[w];
        unsigned char c0 = (unsigned char)x->s[0];
        rc = dbuf_printf(&b, "w%d ::= ", w);
        size_t rest = 0;
        if ((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z')) {
            char lo = (char)(c0 | 0x20), up = (char)(lo - 'a' + 'A');
            rc = rc || dbuf_printf(&b, "[%c%c]", up, lo);
            rest = 1;
        }
        if (!rc && rest < x->len) {
            char *tmp = strndup(x->s + rest, x->len - rest);
            char *lit = tmp ? dream_grammar_literal(tmp) : NULL;
            rc = lit ? dbuf_printf(&b, "%s%s", rest ? " " : "", lit) : -1;
            free(lit);
            free(tmp);
        }
        int n_next = 0;
        for (size_t e = first_edge[w]; !rc && e < first_edge[w + 1]; e++) {
            int to = edges[e].to;
            if (!endable[to] || (e > first_edge[w] && edges[e - 1].to == to)) continue;
            rc = dbuf_printf(&b, "%sw%d", n_next++ ? " | " : " (\" \" (", to);
        }
        if (!rc && n_next) rc = dbuf_puts(&b, stop[w] ? "))" : "))?");
        rc = rc || dbuf_putc(&b, '\n');
    }
emitted:
    free(first_edge), free(stop), free(endable);
    if (!rc) out = dbuf_take(&b);
done:
    dbuf_free(&b);
    free(edges);
    free(slots);
    free(words);
    return out;
}

char *dream_names_copy_form(const char *answer)
{
    struct dbuf b = {0};
    int rc = 0;
    for (const char *line = answer; !rc && *line;) {
        size_t len = strcspn(line, "\n");
        while (len && line[0] == ' ') line++, len--; /* one space, however many it had */
        rc = dbuf_putc(&b, ' ') || dbuf_append(&b, line, len) || (line[len] == '\n' && dbuf_putc(&b, '\n'));
        line += len + (line[len] == '\n');
    }
    char *out = rc ? NULL : dbuf_take(&b);
    dbuf_free(&b);
    return out;
}

/* Prose whose capitalized words are the text's own (dream_grammar_prose_from in dream/grammar.h). */

#define PF_MAX_WORDS 8192
#define PF_MAX_WORD 40

/* Words a sentence may start with that a note need not hold: how prose about the person is told. */
const char *const dream_prose_openers[] = {
    "A", "After", "Also", "An", "And", "As", "At", "Because", "Before", "Both", "But", "By", "Currently", "During",
    "Each", "Earlier", "Every", "For", "From", "He", "Her", "His", "However", "If", "In", "It", "Its", "Later",
    "Now", "On", "Once", "Previously", "Recently", "She", "Since", "So", "Some", "That", "The", "Their", "Them",
    "Then", "There", "These", "They", "This", "Those", "To", "Today", "Until", "When", "While", "With", NULL,
};

static int pf_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* An ASCII letter: the grammar's words are runs of them (a byte of UTF-8 is not one). */
static bool pf_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

/* The rule of words[lo..hi), which share their first d letters: the letters after them, as a
 * trie (one alternative a next letter, a run of letters no word leaves as one literal), the
 * empty rest allowed where a word ends at d. Its number into *id; rules into b. */
static int pf_rule(struct dbuf *b, char **words, size_t lo, size_t hi, size_t d, int *next_id, int *id)
{
    bool ends = lo < hi && strlen(words[lo]) == d; /* sorted: the word that ends here comes first */
    if (ends) lo++;
    struct dbuf alt = {0};
    int rc = 0;
    for (size_t a = lo; !rc && a < hi;) {
        char c = words[a][d];
        size_t e = a;
        while (e < hi && words[e][d] == c) e++;
        size_t k = d + 1; /* the run every word of [a, e) shares, up to the first that ends or parts */
        for (;;) {
            bool same = true;
            for (size_t i = a; same && i < e; i++) same = strlen(words[i]) > k && words[i][k] == words[a][k];
            if (!same) break;
            k++;
        }
        rc = dbuf_printf(&alt, "%s\"%.*s\"", alt.len ? " | " : "", (int)(k - d), words[a] + d);
        if (!rc && !(e - a == 1 && strlen(words[a]) == k)) {
            int child;
            rc = pf_rule(b, words, a, e, k, next_id, &child);
            if (!rc) rc = dbuf_printf(&alt, " p%d", child);
        }
        a = e;
    }
    *id = (*next_id)++;
    if (!rc) rc = dbuf_printf(b, "p%d ::= %s%s%s\n", *id, ends ? "(" : "", alt.len ? alt.data : "\"\"", ends ? ")?" : "");
    dbuf_free(&alt);
    return rc;
}

char *dream_grammar_prose_from(const char *text, size_t len, const char *start)
{
    size_t n_open = 0;
    while (dream_prose_openers[n_open]) n_open++;
    char **words = calloc(PF_MAX_WORDS + n_open, sizeof *words);
    size_t n = 0;
    struct dbuf b = {0};
    char *out = NULL;
    int rc = words ? 0 : -1;
    for (size_t i = 0; i < n_open && !rc; i++)
        if (!(words[n++] = strdup(dream_prose_openers[i]))) rc = -1;
    for (size_t i = 0; !rc && i < len && n < PF_MAX_WORDS + n_open;) {
        if (!pf_letter(text[i])) {
            i++;
            continue;
        }
        size_t s = i;
        while (i < len && pf_letter(text[i])) i++;
        if (i - s > PF_MAX_WORD || (i - s == 1 && text[s] != 'I')) continue; /* "3D", "Plan B": a dead end for a name */
        bool caps = false;
        for (size_t k = s; k < i && !caps; k++) caps = isupper((unsigned char)text[k]);
        char *w = strndup(text + s, i - s);
        if (!w) rc = -1;
        else if (!caps) w[0] = (char)toupper((unsigned char)w[0]); /* a word of the text may start a sentence */
        if (!rc) words[n++] = w; /* a word with a capital as it is written ("Dayton", "iPhone") */
    }
    if (!rc) qsort(words, n, sizeof *words, pf_cmp);
    size_t m = 0; /* unique */
    for (size_t i = 0; !rc && i < n; i++) {
        if (m && !strcmp(words[m - 1], words[i])) {
            free(words[i]);
            continue;
        }
        words[m++] = words[i];
    }
    n = rc ? n : m;
    int next_id = 0, top = -1;
    /* a word: free when it is all lowercase, else one of the trie of words with a capital; the
     * text ends after one, not inside a word (a small model that cannot go on with a name it was
     * kept from garbling ends there: "**Adelaide") */
    char *lit = start ? dream_grammar_literal(start) : NULL;
    if (start && !lit) rc = -1;
    if (!rc) rc = dbuf_printf(&b, "root ::= %s%sprose\nprose ::= [^A-Za-z]* (w [^A-Za-z]+)*\nw ::= [a-z]+ | cap\n", lit ? lit : "", lit ? " " : "");
    free(lit);
    if (!rc) rc = pf_rule(&b, words, 0, n, 0, &next_id, &top);
    if (!rc) rc = dbuf_printf(&b, "cap ::= p%d\n", top);
    if (!rc) out = dbuf_take(&b);
    dbuf_free(&b);
    for (size_t i = 0; words && i < n; i++) free(words[i]);
    free(words);
    return out;
}
