/* dreaming_fake.c — see dreaming_fake.h. */
#include "dreaming_fake.h"

#include "../src/util/buf.h"
#include "dream/error.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

long dreaming_fake_calls;
void (*dreaming_fake_on_call)(const char *stage);
unsigned dreaming_fake_delay_us;
const char *dreaming_fake_infobox_extra;
const char *dreaming_fake_prose_extra;

/* The subjects the chunker tells apart, with the label it gives their chunks. */
enum fake_subject { SUBJ_NONE, SUBJ_BREAD, SUBJ_BIKE, SUBJ_GARDEN, SUBJ_CELLO, SUBJ_SOLAR, SUBJ_KAYAK, SUBJ_CHESS, SUBJ_TAX, SUBJ_COUNT };
static const char *const subject_label[SUBJ_COUNT] = {"small talk",          "sourdough baking", "bicycle upkeep",
                                                      "balcony gardening",   "cello practice",   "home solar power",
                                                      "a kayak weekend",     "chess study",      "freelance taxes"};

/* Trigger phrase (matched case-insensitively in the text) → the line the fake model answers
 * (formatted as small models do: list markers, emphasis, odd capitals) and its subject. */
static const struct {
    const char *trigger, *answer;
    enum fake_subject subject;
} lexicon[] = {
    {"sourdough", "- **Sourdough**", SUBJ_BREAD},
    {"sour-dough", "Sour-dough", SUBJ_BREAD},
    {"levain", "Levain", SUBJ_BREAD},
    {"bicycle maintenance", "1. Bicycle Maintenance", SUBJ_BIKE},
    {"bike repair", "bike repair", SUBJ_BIKE},
    {"derailleur", "Bicycle", SUBJ_BIKE},
    {"balcony garden", "Balcony garden", SUBJ_GARDEN},
    {"balcony planters", "The Balcony Garden", SUBJ_GARDEN},
    {"balcony tomatoes", "Balcony", SUBJ_GARDEN},
    {"cello practice", "Cello Practice", SUBJ_CELLO},
    {"cello lesson", "Cello", SUBJ_CELLO},
    {"bow hold", "CELLO PRACTICE", SUBJ_CELLO},
    {"solar panels", "Home Solar Panels", SUBJ_SOLAR},
    {"home solar", "Home solar", SUBJ_SOLAR},
    {"inverter", "Solar inverter", SUBJ_SOLAR},
    {"kayak", "Kayak Trip", SUBJ_KAYAK},
    {"chess openings", "Chess Openings", SUBJ_CHESS},
    {"tax return", "Tax Return", SUBJ_TAX},
};
#define N_LEXICON (sizeof lexicon / sizeof lexicon[0])

/* The first case-insensitive occurrence of word in [s, e), or NULL. */
static const char *fake_find(const char *s, const char *e, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = s; p + n <= e; p++)
        if (strncasecmp(p, word, n) == 0) return p;
    return NULL;
}

/* The subject of the text [s, e): that of its earliest trigger; SUBJ_NONE without one. */
static enum fake_subject fake_subject_of(const char *s, const char *e)
{
    const char *best = NULL;
    enum fake_subject subject = SUBJ_NONE;
    for (size_t i = 0; i < N_LEXICON; i++) {
        const char *at = fake_find(s, e, lexicon[i].trigger);
        if (at && (!best || at < best)) best = at, subject = lexicon[i].subject;
    }
    return subject;
}

char *dreaming_fake_chunk(const char *prompt)
{
    struct dbuf b = {0};
    dbuf_puts(&b, "```json\n{\"chunks\": [");
    const char *p = strstr(prompt, "--- end of policy ---");
    int n_chunks = 0;
    char open_id[256] = "", last_id[256] = "";
    enum fake_subject open = SUBJ_NONE;
    while (p && (p = strstr(p, "\n[")) != NULL) {
        p++;
        char role[16], id[256];
        int pos;
        if (sscanf(p, "[%15[a-z]] (id: %255[^,], position %d)", role, id, &pos) != 3) continue;
        const char *text = strchr(p, '\n');
        if (!text) break;
        text++;
        const char *end = strstr(text, "\n---\n[");
        if (!end) end = text + strlen(text);
        if (strcmp(role, "user") == 0) {
            enum fake_subject subject = fake_subject_of(text, end);
            if (!*open_id) {
                snprintf(open_id, sizeof open_id, "%s", id);
                open = subject;
            } else if (subject != SUBJ_NONE && open == SUBJ_NONE) {
                open = subject; /* the chunk's first subject names it */
            } else if (subject != SUBJ_NONE && subject != open) {
                dbuf_printf(&b, "%s{\"start_message_id\": \"%s\", \"end_message_id\": \"%s\", \"label\": \"%s\"}", n_chunks++ ? ", " : "",
                            open_id, last_id, subject_label[open]);
                snprintf(open_id, sizeof open_id, "%s", id);
                open = subject;
            }
        }
        snprintf(last_id, sizeof last_id, "%s", id);
    }
    if (*open_id)
        dbuf_printf(&b, "%s{\"start_message_id\": \"%s\", \"end_message_id\": \"%s\", \"label\": \"%s\"}", n_chunks ? ", " : "", open_id,
                    last_id, subject_label[open]);
    dbuf_puts(&b, "]}\n```\n");
    return dbuf_take(&b);
}

char *dreaming_fake_entities(const char *prompt)
{
    const char *s = strstr(prompt, "--- Conversation chunk ---\n");
    const char *e = s ? strstr(s, "--- end chunk ---") : NULL;
    if (!s || !e) return strdup("NONE");
    struct dbuf b = {0};
    for (size_t i = 0; i < N_LEXICON; i++)
        if (fake_find(s, e, lexicon[i].trigger)) dbuf_printf(&b, "%s\n", lexicon[i].answer);
    if (b.len == 0) dbuf_puts(&b, "NONE\n");
    return dbuf_take(&b);
}

/* ---- the synthesis stages (tests/data/dreaming/golden) ------------------------------------ */

/* A prose answer: b's text, then (when set) a space and dreaming_fake_prose_extra on its last
 * line. */
static char *fake_prose(struct dbuf *b)
{
    if (dreaming_fake_prose_extra) {
        while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == ' ')) b->data[--b->len] = '\0';
        dbuf_printf(b, " %s\n", dreaming_fake_prose_extra);
    }
    return dbuf_take(b);
}

/* The quoted value after key (e.g. `Article: "`) up to the next quote, into out. */
static void fake_quoted(const char *prompt, const char *key, char *out, size_t cap)
{
    const char *p = strstr(prompt, key);
    out[0] = '\0';
    if (!p) return;
    p += strlen(key);
    const char *q = strchr(p, '"');
    if (q) snprintf(out, cap, "%.*s", (int)(q - p), p);
}

/* The first sentence of the person's first line ("[user] ...") in [s, e), into out. */
static void fake_user_sentence(const char *s, const char *e, char *out, size_t cap)
{
    out[0] = '\0';
    const char *u = fake_find(s, e, "[user] ");
    if (!u) return;
    u += 7;
    size_t n = 0;
    while (u + n < e && u[n] != '\n' && !((u[n] == '.' || u[n] == '?' || u[n] == '!') && (u + n + 1 >= e || u[n + 1] == ' ' || u[n + 1] == '\n'))) n++;
    snprintf(out, cap, "%.*s", (int)n, u);
}

/* Outline: one heading per note, its conversation's title in Title Case without the words of
 * the article's own title. */
static char *fake_outline(const char *prompt)
{
    struct dbuf b = {0};
    char title[200];
    fake_quoted(prompt, "Article: \"", title, sizeof title);
    const char *p = strstr(prompt, "Notes, oldest first:\n");
    for (p = p ? strchr(p, '\n') : NULL; p && p[1] == '['; p = strchr(p + 1, '\n')) {
        const char *t = strstr(p, "] ");
        const char *dash = t ? strstr(t, " \xe2\x80\x94 ") : NULL;
        if (!t || !dash) break;
        size_t line_start = b.len;
        for (const char *w = t + 2; w < dash;) {
            const char *we = w;
            while (we < dash && *we != ' ') we++;
            char word[64];
            snprintf(word, sizeof word, "%.*s", (int)(we - w), w);
            for (char *q = word; *q; q++)
                if (*q == '?' || *q == '.' || *q == '!') *q = '\0';
            if (*word && !fake_find(title, title + strlen(title), word)) {
                if (b.len > line_start) dbuf_putc(&b, ' ');
                if (word[0] >= 'a' && word[0] <= 'z') word[0] = (char)(word[0] - 32);
                dbuf_puts(&b, word);
            }
            w = we < dash ? we + 1 : we;
        }
        dbuf_putc(&b, '\n');
    }
    if (b.len == 0) dbuf_puts(&b, "NONE\n");
    return dbuf_take(&b);
}

/* Section: a sentence per source, quoting the person's first sentence, with its marker. */
static char *fake_section(const char *prompt)
{
    struct dbuf b = {0};
    const char *p = strstr(prompt, "Sources (each with its marker and date):\n");
    const char *end = p ? strstr(p, "\nWrite the prose") : NULL;
    for (p = p ? strstr(p, "\n[^") : NULL; p && end && p < end; p = strstr(p + 1, "\n[^")) {
        int n;
        char date[16];
        if (sscanf(p + 1, "[^%d] (%15[^)])", &n, date) != 2) continue;
        const char *next = strstr(p + 1, "\n---\n");
        char sent[300];
        fake_user_sentence(p + 1, next ? next : end, sent, sizeof sent);
        if (!strcmp(date, "undated")) dbuf_printf(&b, "%sIn an undated note the person wrote: \"%s\".[^%d]", b.len ? " " : "", sent, n);
        else dbuf_printf(&b, "%sOn %s the person wrote: \"%s\".[^%d]", b.len ? " " : "", date, sent, n);
    }
    dbuf_putc(&b, '\n');
    return fake_prose(&b);
}

/* The practice slot ("morning" or "evening") the latest-dated source of a prompt's list names
 * (lines "[^n] (YYYY-MM-DD) ..." followed by their text), with its marker; "" when none. */
static void fake_slot(const char *prompt, char *slot, size_t cap, int *marker)
{
    char best[16] = "";
    slot[0] = '\0';
    *marker = 0;
    for (const char *p = strstr(prompt, "\n[^"); p; p = strstr(p + 1, "\n[^")) {
        int n;
        char d[16];
        if (sscanf(p + 1, "[^%d] (%15[^)])", &n, d) != 2) continue;
        const char *next = strstr(p + 1, "\n[^");
        const char *e = next ? next : p + strlen(p);
        const char *v = fake_find(p, e, "in the morning") ? "morning" : fake_find(p, e, "in the evening") ? "evening" : NULL;
        const char *when = strcmp(d, "undated") ? d : ""; /* an undated note is the oldest */
        if (v && strcmp(when, best) >= 0) {
            snprintf(best, sizeof best, "%s", when);
            snprintf(slot, cap, "%s", v);
            *marker = n;
        }
    }
}

/* Lead: the subject in bold, how many notes, the latest marker. */
static char *fake_lead(const char *prompt)
{
    char title[200];
    fake_quoted(prompt, "Article: \"", title, sizeof title);
    int count = 0, last = 0;
    char date[16] = "", d[16];
    for (const char *p = strstr(prompt, "\n[^"); p; p = strstr(p + 1, "\n[^")) {
        int n;
        if (sscanf(p + 1, "[^%d] (%15[^)])", &n, d) != 2) continue;
        count++;
        last = n;
        snprintf(date, sizeof date, "%s", d);
    }
    struct dbuf b = {0};
    if (!strcmp(date, "undated"))
        dbuf_printf(&b, "**%s** is something the person came back to in %d note(s), most recently in an undated one.[^%d]", title, count, last);
    else dbuf_printf(&b, "**%s** is something the person came back to in %d note(s), most recently on %s.[^%d]", title, count, date, last);
    char slot[16];
    int m;
    fake_slot(prompt, slot, sizeof slot, &m);
    if (*slot) dbuf_printf(&b, " The person practises in the %s.[^%d]", slot, m);
    dbuf_putc(&b, '\n');
    return fake_prose(&b);
}

/* The date of a fold prompt's note, "(dated YYYY-MM-DD)", into date; "" for "(undated)". False
 * when the prompt says neither. */
static bool fake_note_date(const char *prompt, char *date, size_t cap)
{
    const char *dated = strstr(prompt, "(dated ");
    date[0] = '\0';
    if (dated) {
        char d[16] = "";
        sscanf(dated + 7, "%15[^)]", d);
        snprintf(date, cap, "%s", d);
        return true;
    }
    return strstr(prompt, "(undated)") != NULL;
}

/* The note of a fold prompt: [start, end). */
static bool fake_note(const char *prompt, const char **s, const char **e)
{
    *s = strstr(prompt, "--- Note (");
    *e = *s ? strstr(*s, "--- end of note ---") : NULL;
    return *s && *e;
}

/* Infobox refresh: every current field but kind and aliases repeated with a changed value (the
 * stage must keep what is written), a type when there is none, first_noted: the earliest date
 * in the article's start (an older writer's 0000-00-00 aside), the lexicon's other names for the title's subject
 * as aliases, and Hobbies as the category. */
static char *fake_refresh(const char *prompt)
{
    struct dbuf b = {0};
    bool has_type = false;
    const char *cur = strstr(prompt, "Current infobox (keep every field as it is):\n");
    for (const char *l = cur ? strchr(cur, '\n') + 1 : NULL; l && *l && *l != '\n' && strncmp(l, "Current categories", 18); l = strchr(l, '\n') + 1) {
        size_t len = strcspn(l, "\n");
        if (!l[len]) break;
        if (!strncmp(l, "kind:", 5) || !strncmp(l, "aliases:", 8)) continue;
        has_type |= !strncmp(l, "type:", 5);
        dbuf_printf(&b, "%.*s (revised)\n", (int)len, l);
    }
    if (!has_type) dbuf_puts(&b, "type: subject\n");
    const char *s = strstr(prompt, "The article's start:\n<<<\n"), *e = s ? strstr(s, ">>>\n") : NULL;
    char first[16] = "";
    for (const char *p = s; p && p + 10 <= e; p++) {
        char d[16];
        int y, m, dd, used = 0;
        if (sscanf(p, "%4d-%2d-%2d%n", &y, &m, &dd, &used) != 3 || used != 10 || y == 0) continue;
        snprintf(d, sizeof d, "%.10s", p);
        if (!*first || strcmp(d, first) < 0) snprintf(first, sizeof first, "%s", d);
    }
    if (*first) dbuf_printf(&b, "first_noted: %s\n", first);
    char title[200];
    fake_quoted(prompt, "Article: \"", title, sizeof title);
    for (char *q = title; *q; q++)
        if (*q == '_') *q = ' ';
    enum fake_subject subject = fake_subject_of(title, title + strlen(title));
    size_t at = b.len;
    for (size_t i = 0; subject != SUBJ_NONE && i < N_LEXICON; i++)
        if (lexicon[i].subject == subject && strcasecmp(lexicon[i].trigger, title) != 0)
            dbuf_printf(&b, "%s%s", b.len > at ? ", " : "aliases: ", lexicon[i].trigger);
    if (b.len > at) dbuf_putc(&b, '\n');
    dbuf_puts(&b, "category: Hobbies\n");
    return dbuf_take(&b);
}

/* Section-route: yes when a word of 5+ letters of the heading or of what the section says (but
 * "person", "wrote") is in the note (never the lead);
 * new section: "Notes On <label>"; classifier: evolution; patch: the old text and one sentence. */
static char *fake_fold(const char *stage, const char *prompt)
{
    const char *ns, *ne;
    if (strstr(prompt, "Update the infobox of this article")) return fake_refresh(prompt);
    if (strstr(prompt, "Tighten this section")) {
        /* wikify: "the person wrote:" becomes "they wrote:", the rest as it was */
        const char *cur = strstr(prompt, "Current text:\n<<<\n"), *end = cur ? strstr(cur, ">>>\n") : NULL;
        if (!cur || !end) return strdup("");
        cur += strlen("Current text:\n<<<\n");
        struct dbuf b = {0};
        while (cur < end) {
            if (!strncmp(cur, "the person wrote:", 17)) {
                dbuf_puts(&b, "they wrote:");
                cur += 17;
            } else {
                dbuf_putc(&b, *cur++);
            }
        }
        return fake_prose(&b);
    }
    if (strstr(prompt, "EVOLUTION or ERROR")) return strdup("EVOLUTION");
    if (strstr(prompt, "Answer that earlier value only, or NONE.")) {
        /* reconcile's earlier position: the other practice slot when the text names it */
        const char *f = strstr(prompt, "Infobox field (current): "), *txt = strstr(prompt, "Its text:\n<<<\n");
        const char *txt_end = txt ? strstr(txt, ">>>\n") : NULL;
        if (!f || !txt || !txt_end) return strdup("NONE");
        const char *fe = f + strcspn(f, "\n");
        if (fake_find(f, fe, "morning") && fake_find(txt, txt_end, "in the evening")) return strdup("evening");
        if (fake_find(f, fe, "evening") && fake_find(txt, txt_end, "in the morning")) return strdup("morning");
        return strdup("NONE");
    }
    if (strstr(prompt, "Does the field still agree with the lead?")) {
        /* reconcile: naive on purpose: any mention of the other slot in the lead (even one told as
         * the past) is offered as the correction; the stage must accept only a value the lead
         * states as current */
        const char *f = strstr(prompt, "Infobox field: ");
        const char *lead = strstr(prompt, "Its lead (the current position):\n");
        if (f && lead && fake_find(f, f + strcspn(f, "\n"), "morning") && fake_find(lead, f, "in the evening")) return strdup("evening");
        if (f && lead && fake_find(f, f + strcspn(f, "\n"), "evening") && fake_find(lead, f, "in the morning")) return strdup("morning");
        return strdup("KEEP");
    }
    if (strstr(prompt, "Output only the section's new prose.")) {
        /* reconcile's rewrite of a section still stating the old value: each mention of it told
         * as the past ("morning no longer, evening now"), the rest as it was; a section that
         * opens "Briefly, " comes back as a few words */
        const char *cur = strstr(prompt, "Section text:\n<<<\n"), *end = cur ? strstr(cur, ">>>\n") : NULL;
        const char *now = end ? strstr(end, " is now ") : NULL, *no = now ? strstr(now, ", no longer ") : NULL;
        if (!cur || !end || !no) return strdup("no");
        cur += strlen("Section text:\n<<<\n");
        char neu[64], old[64];
        snprintf(neu, sizeof neu, "%.*s", (int)(no - now - 8), now + 8);
        snprintf(old, sizeof old, "%.*s", (int)strcspn(no + 12, "."), no + 12);
        size_t ol = strlen(old);
        struct dbuf b = {0};
        const char *first = cur + strspn(cur, " \n");
        if (!strncmp(first, "Briefly, ", 9)) {
            /* a model that boils the section down to a few words, its markers kept */
            dbuf_printf(&b, "Now %s.", neu);
            for (const char *m = cur; (m = strstr(m, "[^")) != NULL && m < end; m += 2) dbuf_printf(&b, "[^%d]", atoi(m + 2));
            return dbuf_take(&b);
        }
        while (cur < end) {
            if (ol && (size_t)(end - cur) >= ol && !strncasecmp(cur, old, ol)) {
                dbuf_printf(&b, "%s no longer, %s now", old, neu);
                cur += ol;
            } else {
                dbuf_putc(&b, *cur++);
            }
        }
        return fake_prose(&b);
    }
    if (!fake_note(prompt, &ns, &ne)) return strdup("no");
    if (!strcmp(stage, "section")) {
        char h[200];
        fake_quoted(prompt, "Section: \"", h, sizeof h);
        if (!strcmp(h, "Lead Summary")) return strdup(fake_find(ns, ne, "switched") || fake_find(ns, ne, " now ") ? "yes" : "no");
        const char *g = strstr(prompt, "What it says: ");
        size_t hl = strlen(h);
        if (g) snprintf(h + hl, sizeof h - hl, " %.*s", (int)strcspn(g + 14, "\n"), g + 14);
        for (char *w = strtok(h, " .,:;!?\"()"); w; w = strtok(NULL, " .,:;!?\"()"))
            if (strlen(w) >= 5 && strcasecmp(w, "person") != 0 && strcasecmp(w, "wrote") != 0 && fake_find(ns, ne, w)) return strdup("Yes");
        return strdup("no");
    }
    if (strstr(prompt, "Name one new section")) {
        const char *l = strstr(prompt, "The note is about: ");
        struct dbuf b = {0};
        dbuf_puts(&b, "Notes On");
        bool start = true;
        for (l = l ? l + 19 : ""; *l && *l != '\n'; l++) {
            if (start) dbuf_putc(&b, ' ');
            if (*l != ' ') dbuf_putc(&b, start && *l >= 'a' && *l <= 'z' ? (char)(*l - 32) : *l);
            start = *l == ' ';
        }
        return dbuf_take(&b);
    }
    if (strstr(prompt, "Rewrite the lead")) {
        /* the later date holds: a newer note moves the slot, an older one is told as the past */
        const char *cur = strstr(prompt, "Current text:\n<<<\n"), *cur_end = cur ? strstr(cur, ">>>\n") : NULL;
        const char *cite = strstr(prompt, "citing it as [^");
        const char *dates = strstr(prompt, "Dates of the claims it already cites:");
        char date[16] = "", newest[16] = ""; /* an undated note is older than any dated one */
        if (!cur || !cur_end || !cite || !fake_note_date(prompt, date, sizeof date)) return strdup("I cannot do that.");
        cur += strlen("Current text:\n<<<\n");
        while (cur_end > cur && (cur_end[-1] == '\n' || cur_end[-1] == ' ')) cur_end--;
        int n = atoi(cite + strlen("citing it as [^"));
        for (const char *d = dates; d && (d = strstr(d, "] ")) != NULL && d < cur; d += 2) {
            char one[16];
            if (sscanf(d + 2, "%15[0-9-]", one) == 1 && strcmp(one, newest) > 0) snprintf(newest, sizeof newest, "%s", one);
        }
        const char *slot = fake_find(ns, ne, "in the evening") ? "evening" : fake_find(ns, ne, "in the morning") ? "morning" : NULL;
        const char *other = slot && !strcmp(slot, "evening") ? "morning" : "evening";
        struct dbuf b = {0};
        const char *at = slot ? fake_find(cur, cur_end, other) : NULL;
        if (slot && at && strcmp(date, newest) > 0) {
            const char *mk = strstr(at, "]");
            size_t upto = mk && mk < cur_end ? (size_t)(mk + 1 - cur) : (size_t)(cur_end - cur);
            dbuf_printf(&b, "%.*s%s%.*s[^%d]%.*s\n", (int)(at - cur), cur, slot, (int)(upto - (size_t)(at + strlen(other) - cur)), at + strlen(other), n,
                        (int)(cur_end - cur - (long)upto), cur + upto);
        } else {
            dbuf_printf(&b, "%.*s Earlier, the person practised in the %s.[^%d]\n", (int)(cur_end - cur), cur, slot ? slot : "same way", n);
        }
        return fake_prose(&b);
    }
    const char *cur = strstr(prompt, "Current text:\n<<<\n"), *cur_end = cur ? strstr(cur, ">>>\n") : NULL;
    const char *cite = strstr(prompt, "citing it as [^");
    char date[16] = "", sent[300];
    if (!cur || !cur_end || !cite || !fake_note_date(prompt, date, sizeof date)) return strdup("I cannot do that.");
    cur += strlen("Current text:\n<<<\n");
    while (cur_end > cur && (cur_end[-1] == '\n' || cur_end[-1] == ' ')) cur_end--;
    int n = atoi(cite + strlen("citing it as [^"));
    fake_user_sentence(ns, ne, sent, sizeof sent);
    struct dbuf b = {0};
    if (*date)
        dbuf_printf(&b, "%.*s%sLater, on %s, the person wrote: \"%s\".[^%d]\n", (int)(cur_end - cur), cur, cur_end > cur ? " " : "", date, sent, n);
    else dbuf_printf(&b, "%.*s%sLater, the person wrote: \"%s\".[^%d]\n", (int)(cur_end - cur), cur, cur_end > cur ? " " : "", sent, n);
    return fake_prose(&b);
}

static char *fake_synthesis(const char *prompt)
{
    if (strstr(prompt, "List the sections this article needs")) return fake_outline(prompt);
    if (strstr(prompt, "Write the prose of this one section")) return fake_section(prompt);
    if (strstr(prompt, "Write the lead of this article")) return fake_lead(prompt);
    if (strstr(prompt, "Write the infobox of this article")) {
        char slot[16];
        int m;
        fake_slot(prompt, slot, sizeof slot, &m);
        struct dbuf b = {0};
        dbuf_puts(&b, "type: pastime\ncategory: Hobbies\nstatus: active\nkind: person\n");
        if (*slot) dbuf_printf(&b, "current_routine: %s\n", slot);
        if (dreaming_fake_infobox_extra) dbuf_puts(&b, dreaming_fake_infobox_extra);
        return dbuf_take(&b);
    }
    return strdup("I am sorry, I cannot help with that.");
}

/* ---- the answer stage (dream ask) --------------------------------------------------------- */

const char *dreaming_fake_answer_wrap;

static bool fake_answer_stop(const char *w, size_t n)
{
    static const char *const stop[] = {"the", "and", "what", "when", "where", "which", "how", "did", "does", "my", "for", "with", "about",
                                       "that", "this", "often", "many", "much", "use", "are", "was", "you", "your", "have", NULL};
    for (size_t i = 0; stop[i]; i++)
        if (strlen(stop[i]) == n && strncasecmp(stop[i], w, n) == 0) return true;
    return n < 3;
}

/* How many distinct content words of the question [q, qe) the sentence [s, e) holds (a word
 * matches by its first five letters, so "plants" finds "planted"). */
static int fake_overlap(const char *q, const char *qe, const char *s, const char *e)
{
    int score = 0;
    for (const char *w = q; w < qe;) {
        while (w < qe && !isalnum((unsigned char)*w)) w++;
        const char *we = w;
        while (we < qe && isalnum((unsigned char)*we)) we++;
        size_t n = (size_t)(we - w);
        if (n && !fake_answer_stop(w, n)) {
            size_t k = n > 5 ? 5 : n;
            for (const char *p = s; p + k <= e; p++)
                if ((p == s || !isalnum((unsigned char)p[-1])) && strncasecmp(p, w, k) == 0) {
                    score++;
                    break;
                }
        }
        w = we;
    }
    return score;
}

/* The answer: the note sentence (with a footnote marker) sharing the most content words with
 * the question, at least two, as it is; else NOTHING ON FILE. dreaming_fake_answer_wrap (a
 * format with one %s) wraps it when set. */
static char *fake_answer(const char *prompt)
{
    const char *q = strstr(prompt, "\nQuestion: "), *notes = strstr(prompt, "Notes:\n"), *foot = strstr(prompt, "Footnotes:\n");
    if (!q || !notes || !foot) return strdup("NOTHING ON FILE");
    q += 11;
    const char *qe = q + strcspn(q, "\n");
    const char *best = NULL, *best_end = NULL;
    int best_score = 1;
    for (const char *s = notes + 7; s < foot;) {
        while (s < foot && (*s == ' ' || *s == '\n')) s++;
        const char *e = s;
        if (*s == '#') /* a heading: its line */
            while (e < foot && *e != '\n') e++;
        else /* a sentence: to its full stop or the paragraph's end */
            while (e < foot && !(e[0] == '.' && (e[1] == ' ' || e[1] == '\n')) && !(e[0] == '\n' && e[1] == '\n')) e++;
        if (e < foot && *e == '.') e++;
        if (e > s && *s != '#') {
            int sc = fake_overlap(q, qe, s, e);
            if (sc > best_score && fake_find(s, e, "[^")) {
                best_score = sc;
                best = s;
                best_end = e;
            }
        }
        s = e;
    }
    if (!best) return strdup("NOTHING ON FILE");
    struct dbuf b = {0};
    char *sentence = strndup(best, (size_t)(best_end - best));
    for (char *c = sentence; c && *c; c++)
        if (*c == '\n') *c = ' ';
    if (dreaming_fake_answer_wrap) dbuf_printf(&b, dreaming_fake_answer_wrap, sentence ? sentence : "");
    else dbuf_puts(&b, sentence ? sentence : "");
    free(sentence);
    return dbuf_take(&b);
}

int dreaming_fake_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                       char **out)
{
    (void)ud;
    (void)opts;
    dreaming_fake_calls++;
    if (dreaming_fake_on_call) dreaming_fake_on_call(stage);
    if (dreaming_fake_delay_us) usleep(dreaming_fake_delay_us);
    bool chunk = strcmp(stage, "chunk") == 0, synthesis = strcmp(stage, "synthesis") == 0;
    if (synthesis) {
        for (size_t i = 0; i < n; i++) out[i] = fake_synthesis(in[i].user);
        return 0;
    }
    if (!strcmp(stage, "section") || !strcmp(stage, "editor")) {
        for (size_t i = 0; i < n; i++) out[i] = fake_fold(stage, in[i].user);
        return 0;
    }
    if (!strcmp(stage, "answer")) {
        for (size_t i = 0; i < n; i++) out[i] = fake_answer(in[i].user);
        return 0;
    }
    if (!chunk && strcmp(stage, "entity") != 0) return dream_error_set(DREAM_ENOTFOUND, "the fixture fake has no stage '%s'", stage);
    for (size_t i = 0; i < n; i++) out[i] = chunk ? dreaming_fake_chunk(in[i].user) : dreaming_fake_entities(in[i].user);
    return 0;
}
