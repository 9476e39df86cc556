/* read_text.c — dream_read_text: a read tool's JSON result as short text for a terminal or an
 * agent that reads plain text. */
#include "read_internal.h"

#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

static const char *s_(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static json_int_t i_(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static void text_candidates(struct dbuf *b, const json_t *o)
{
    json_t *c = json_object_get(o, "candidates"), *cap = json_object_get(o, "captured_near"), *v;
    size_t k;
    if (json_array_size(c)) {
        dbuf_puts(b, "did you mean:\n");
        json_array_foreach(c, k, v) dbuf_printf(b, "  %s (%s)\n", s_(v, "stem"), s_(v, "title"));
    }
    if (json_array_size(cap)) {
        dbuf_puts(b, "captured subjects (no article yet):\n");
        json_array_foreach(cap, k, v) dbuf_printf(b, "  %s (%lld chunk(s))\n", s_(v, "name"), (long long)i_(v, "chunks"));
    }
    json_t *anchors = json_object_get(o, "anchors");
    if (json_array_size(anchors)) {
        dbuf_puts(b, "sections:");
        json_array_foreach(anchors, k, v) dbuf_printf(b, " %s", json_string_value(v));
        dbuf_putc(b, '\n');
    }
}

static void text_resolve(struct dbuf *b, const json_t *o)
{
    const char *status = s_(o, "status");
    if (strcmp(status, "article") == 0) {
        dbuf_printf(b, "%s (%s", s_(o, "title"), s_(o, "stem"));
        if (json_object_get(o, "kind")) dbuf_printf(b, ", %s", s_(o, "kind"));
        if (json_object_get(o, "type")) dbuf_printf(b, ", %s", s_(o, "type"));
        dbuf_printf(b, ")\n");
        if (json_object_get(o, "redirected_from")) dbuf_printf(b, "(redirected from %s)\n", s_(o, "redirected_from"));
        dbuf_printf(b, "%s\nnext: dream read %s\n", s_(o, "lead"), s_(o, "stem"));
    } else if (strcmp(status, "captured") == 0) {
        dbuf_printf(b, "%s: a captured subject with no article yet, in %lld chunk(s):\n", s_(o, "name"), (long long)i_(o, "chunks"));
        json_t *v;
        size_t k;
        json_array_foreach(json_object_get(o, "mentions"), k, v)
            dbuf_printf(b, "  conv:%s %s: %s\n", s_(v, "cite"), s_(v, "title"), s_(v, "label"));
    }
}

static void text_toc(struct dbuf *b, const json_t *o)
{
    dbuf_printf(b, "# %s (%s, %lld bytes)\n\n", s_(o, "title"), s_(o, "stem"), (long long)i_(o, "bytes"));
    if (json_object_get(o, "redirected_from")) dbuf_printf(b, "(redirected from %s)\n\n", s_(o, "redirected_from"));
    dbuf_printf(b, "%s\n\n", s_(o, "lead"));
    json_t *v;
    size_t k;
    json_array_foreach(json_object_get(o, "sections"), k, v) {
        int level = (int)i_(v, "level");
        dbuf_printf(b, "%*s- %s  #%s\n", level > 2 ? 2 * (level - 2) : 0, "", s_(v, "title"), s_(v, "anchor"));
    }
    if (json_object_get(o, "more_sections")) dbuf_printf(b, "  ...and %lld more sections\n", (long long)i_(o, "more_sections"));
    if (json_object_get(o, "note")) dbuf_printf(b, "(%s)\n", s_(o, "note"));
    else dbuf_printf(b, "next: dream section %s ANCHOR\n", s_(o, "stem"));
}

static void text_links(struct dbuf *b, const json_t *o)
{
    dbuf_printf(b, "%s\n", s_(o, "stem"));
    static const char *const groups[] = {"infobox", "series", "main", "see_also", "prose"};
    json_t *ob = json_object_get(o, "outbound"), *more = json_object_get(o, "more"), *v;
    size_t k;
    for (size_t g = 0; g < 5; g++) {
        json_t *arr = json_object_get(ob, groups[g]);
        if (!json_array_size(arr)) continue;
        dbuf_printf(b, "  %s:", groups[g]);
        json_array_foreach(arr, k, v) dbuf_printf(b, " %s", json_string_value(v));
        if (json_object_get(more, groups[g])) dbuf_printf(b, " +%lld more", (long long)i_(more, groups[g]));
        dbuf_putc(b, '\n');
    }
    if (json_array_size(json_object_get(o, "redlinks"))) {
        dbuf_puts(b, "  redlinks:");
        json_array_foreach(json_object_get(o, "redlinks"), k, v) dbuf_printf(b, " [[%s]]", json_string_value(v));
        if (json_object_get(more, "redlinks")) dbuf_printf(b, " +%lld more", (long long)i_(more, "redlinks"));
        dbuf_putc(b, '\n');
    }
    dbuf_puts(b, "  inbound:");
    if (!json_array_size(json_object_get(o, "inbound"))) dbuf_puts(b, " (none)");
    json_array_foreach(json_object_get(o, "inbound"), k, v) dbuf_printf(b, " %s (%s)", s_(v, "stem"), s_(v, "via"));
    if (json_object_get(more, "inbound")) dbuf_printf(b, " +%lld more", (long long)i_(more, "inbound"));
    dbuf_putc(b, '\n');
}

/* "  segment: 3 of 14 conversations done (1 given up)". */
static void text_stage_progress(struct dbuf *b, const char *stage, const json_t *p, const char *items)
{
    dbuf_printf(b, "  %s: %lld of %lld %s done", stage, (long long)i_(p, "done"), (long long)i_(p, "total"), items);
    if (i_(p, "given_up")) dbuf_printf(b, " (%lld given up; once the cause is fixed, dream run --retry tries them again)", (long long)i_(p, "given_up"));
    dbuf_putc(b, '\n');
}

static void text_status(struct dbuf *b, const json_t *o)
{
    if (json_is_false(json_object_get(o, "wiki_exists"))) {
        dbuf_printf(b, "wiki: none yet at %s: `dream init --wiki %s` creates it, then `dream run` writes its articles\n", s_(o, "wiki"),
                    s_(o, "wiki"));
    } else {
        dbuf_printf(b, "wiki: %s\narticles: %lld (%lld stubs, %lld redirects", s_(o, "wiki"), (long long)i_(o, "articles"),
                    (long long)i_(o, "stubs"), (long long)i_(o, "redirects"));
        if (i_(o, "skipped")) dbuf_printf(b, ", %lld files skipped", (long long)i_(o, "skipped"));
        dbuf_puts(b, ")\n");
        json_t *last = json_object_get(o, "last_commit");
        if (json_is_object(last)) dbuf_printf(b, "last memory commit: %s %s %s\n", s_(last, "date"), s_(last, "id"), s_(last, "subject"));
        else dbuf_printf(b, "last memory commit: none%s\n", json_is_true(json_object_get(o, "git")) ? "" : " (the wiki is not a git repository)");
    }
    if (json_is_string(json_object_get(o, "store"))) {
        json_t *e = json_object_get(o, "entities"), *p = json_object_get(o, "progress");
        dbuf_printf(b, "store: %s\n  %lld conversations, %lld messages, %lld chunks, %lld entities (%lld with an article, %lld captured)\n",
                    s_(o, "store"), (long long)i_(o, "conversations"), (long long)i_(o, "messages"), (long long)i_(o, "chunks"),
                    (long long)i_(e, "total"), (long long)i_(e, "article"), (long long)i_(e, "captured"));
        if (p) {
            text_stage_progress(b, "segment", json_object_get(p, "segment"), "conversations");
            text_stage_progress(b, "extract", json_object_get(p, "extract"), "chunks");
        }
        json_t *run = json_object_get(o, "running");
        if (json_is_object(run)) {
            if (i_(run, "pid") > 0) dbuf_printf(b, "running: a dream run is in progress (process %lld)\n", (long long)i_(run, "pid"));
            else dbuf_puts(b, "running: a dream run is in progress\n");
        }
    } else {
        dbuf_puts(b, "store: none (`dream ingest` reads conversations into it)\n");
    }
    json_t *s = json_object_get(o, "schedule");
    if (json_is_true(json_object_get(s, "installed"))) {
        const char *gone = "";
        if (json_is_false(json_object_get(s, "live")))
            gone = strcmp(s_(s, "via"), "systemd") == 0
                       ? "; but the timer is not enabled now (systemctl --user enable --now dream.timer, or dream schedule again)"
                       : "; but its crontab line is gone (dream schedule again)";
        else if (json_is_false(json_object_get(s, "ours")))
            gone = "; but the job now dreams another memory (a schedule made with another DREAM_HOME replaced it: dream schedule here takes it back)";
        dbuf_printf(b, "schedule: daily at %s (%s)%s\n", s_(s, "at"), s_(s, "via"), gone);
    }
    else dbuf_puts(b, "schedule: none (dream schedule --at HH:MM)\n");
    json_t *v;
    size_t k;
    if (json_array_size(json_object_get(o, "recent"))) {
        dbuf_puts(b, "recent:");
        json_array_foreach(json_object_get(o, "recent"), k, v) dbuf_printf(b, " %s", json_string_value(v));
        dbuf_putc(b, '\n');
    }
}

/* The full-text search's hits (dream_read_search_index): articles first, then messages. */
static void text_search_index(struct dbuf *b, const json_t *o)
{
    json_t *v;
    size_t k;
    const json_t *res = json_object_get(o, "results"), *conv = json_object_get(o, "conversations"), *more = json_object_get(o, "more");
    /* what would show the rest: a higher --limit, or (past the 2 KB every read tool keeps to) a
     * narrower query */
    const char *hint = !strcmp(s_(more, "by"), "budget") ? " (more than fit in 2 KB: add a word, a phrase or --since)" : " (more: --limit, up to 30)";
    if (res) dbuf_printf(b, "%zu article hit(s)%s\n", json_array_size(res), json_is_true(json_object_get(more, "results")) ? hint : "");
    json_array_foreach(res, k, v) {
        if (!strcmp(s_(v, "kind"), "subject")) {
            dbuf_printf(b, "  captured subject %s (%lld chunk(s)): %s\n", s_(v, "name"), (long long)i_(v, "chunks"), s_(v, "snippet"));
            continue;
        }
        dbuf_printf(b, "  %s%s%s", s_(v, "stem"), s_(v, "anchor")[0] ? "#" : "", s_(v, "anchor"));
        if (json_is_string(json_object_get(v, "date"))) dbuf_printf(b, " %s", s_(v, "date"));
        if (json_is_string(json_object_get(v, "cite"))) dbuf_printf(b, " %s", s_(v, "cite"));
        dbuf_printf(b, ": %s\n", s_(v, "snippet"));
    }
    dbuf_printf(b, "%zu message hit(s)%s\n", json_array_size(conv), json_is_true(json_object_get(more, "conversations")) ? hint : "");
    json_array_foreach(conv, k, v) {
        dbuf_printf(b, "  %s %s", s_(v, "cite"), json_is_string(json_object_get(v, "date")) ? s_(v, "date") : DREAM_CITATION_UNDATED);
        dbuf_printf(b, " %s in \"%s\": %s\n", s_(v, "role"), s_(v, "conversation"), s_(v, "snippet"));
    }
    if (json_object_get(o, "note")) dbuf_printf(b, "note: %s\n", s_(o, "note"));
}

static void text_search(struct dbuf *b, const json_t *o)
{
    json_t *v;
    size_t k;
    if (json_object_get(o, "match")) {
        text_search_index(b, o);
        return;
    }
    dbuf_printf(b, "%lld article(s) match\n", (long long)i_(o, "total"));
    json_array_foreach(json_object_get(o, "results"), k, v)
        dbuf_printf(b, "  %s (%lld/%zu terms, %lld hits): %s\n", s_(v, "stem"), (long long)i_(v, "matched"),
                    json_array_size(json_object_get(o, "terms")), (long long)i_(v, "hits"), s_(v, "lead"));
    if (json_array_size(json_object_get(o, "lines"))) dbuf_puts(b, "lines:\n");
    json_array_foreach(json_object_get(o, "lines"), k, v)
        dbuf_printf(b, "  %s%s%s:%lld: %s\n", s_(v, "stem"), s_(v, "anchor")[0] ? "#" : "", s_(v, "anchor"), (long long)i_(v, "line"),
                    s_(v, "text"));
    if (json_array_size(json_object_get(o, "captured"))) {
        dbuf_puts(b, "captured subjects (no article yet):");
        json_array_foreach(json_object_get(o, "captured"), k, v) dbuf_printf(b, " %s (%lld)", s_(v, "name"), (long long)i_(v, "chunks"));
        dbuf_putc(b, '\n');
    }
}

char *dream_read_text(const char *tool, const json_t *o)
{
    struct dbuf b = {0};
    json_t *v;
    size_t k;
    if (!tool) tool = "";
    if (json_object_get(o, "error")) {
        dbuf_printf(&b, "%s\n", s_(o, "error"));
        text_candidates(&b, o);
    } else if (strcmp(tool, "resolve") == 0) {
        text_resolve(&b, o);
    } else if (strcmp(tool, "read") == 0) {
        if (json_object_get(o, "text")) dbuf_puts(&b, s_(o, "text"));
        else text_toc(&b, o);
    } else if (strcmp(tool, "section") == 0) {
        dbuf_printf(&b, "%s\n", s_(o, "text"));
        if (json_array_size(json_object_get(o, "references"))) dbuf_putc(&b, '\n');
        json_array_foreach(json_object_get(o, "references"), k, v) dbuf_printf(&b, "[^%s]: %s\n", s_(v, "label"), s_(v, "text"));
        if (json_is_true(json_object_get(o, "truncated"))) dbuf_puts(&b, "(truncated)\n");
    } else if (strcmp(tool, "links") == 0) {
        text_links(&b, o);
    } else if (strcmp(tool, "infobox") == 0) {
        json_array_foreach(json_object_get(o, "fields"), k, v) dbuf_printf(&b, "%s: %s\n", s_(v, "key"), s_(v, "value"));
        if (!json_array_size(json_object_get(o, "fields"))) dbuf_printf(&b, "%s has no infobox\n", s_(o, "stem"));
    } else if (json_object_get(o, "members")) { /* category, or list with a filter */
        dbuf_printf(&b, "%s %s: %lld article(s)\n", s_(o, "by"), s_(o, "value"), (long long)i_(o, "total"));
        json_array_foreach(json_object_get(o, "members"), k, v) dbuf_printf(&b, "  %s · %s\n", s_(v, "stem"), s_(v, "lead"));
        if (json_object_get(o, "more")) dbuf_printf(&b, "  ...and %lld more (--offset)\n", (long long)i_(o, "more"));
    } else if (strcmp(tool, "list") == 0) {
        json_array_foreach(json_object_get(o, "articles"), k, v) dbuf_printf(&b, "%s\n", json_string_value(v));
        if (json_object_get(o, "more")) dbuf_printf(&b, "...and %lld more (--offset)\n", (long long)i_(o, "more"));
    } else if (strcmp(tool, "search") == 0) {
        text_search(&b, o);
    } else if (strcmp(tool, "status") == 0) {
        text_status(&b, o);
    } else {
        char *s = json_dumps(o, JSON_INDENT(2));
        if (s) dbuf_printf(&b, "%s", s);
        free(s);
    }
    if (b.len && b.data[b.len - 1] != '\n') dbuf_putc(&b, '\n');
    return dbuf_take(&b);
}
