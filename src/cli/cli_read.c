/* cli_read.c — the read verbs' shared driver (see cli_read.h). Exit status: 0 found, 1 not
 * found or failed (the near candidates are printed), 2 bad usage. */
#include "cli_read.h"

#include "cli.h"
#include "dream/error.h"
#include "dream/read.h"
#include "util/utf8.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cli_read_usage(const struct cli_read_verb *v, FILE *f)
{
    fprintf(f, "usage: dream %s %s\n\n%s\n\noptions:\n", v->verb, v->usage, v->help);
    if (v->options & CLI_READ_OPT_WHOLE) fprintf(f, "  --whole       the whole article (refused over 8 KB: read sections)\n");
    if (v->options & CLI_READ_OPT_MEMBERS)
        fprintf(f, "  --category C, --type T, --kind K, --series S\n                only the members of one (40 at a time, with each one's lead)\n");
    if (v->options & (CLI_READ_OPT_PAGE | CLI_READ_OPT_LIMIT)) fprintf(f, "  --limit N     at most N rows\n");
    if (v->options & CLI_READ_OPT_PAGE) fprintf(f, "  --offset N    skip the first N\n");
    if (v->options & CLI_READ_OPT_SEARCH)
        fprintf(f, "  --conversations  messages only (no articles)\n"
                   "  --since DAY, --until DAY\n"
                   "                only hits dated in that span (YYYY-MM-DD, both days included)\n");
    fprintf(f, "  --json        the result as one JSON object (the same as GET /v1/memory/%s)\n"
               "  --wiki DIR    the wiki (default: $DREAM_WIKI, $DREAM_HOME/wiki, ~/.local/share/dream/wiki)\n"
               "  --store PATH  the store, for captured subjects and counts (default: the data directory's memory.sqlite)\n"
               "  -h, --help    this text\n",
            v->tool);
}

static int cli_read_bad(const struct cli_read_verb *v, const char *fmt, const char *arg)
{
    fprintf(stderr, "dream %s: ", v->verb);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    cli_read_usage(v, stderr);
    return 2;
}

/* Sets args[key] to value, a string from the command line (what: how the usage error names it).
 * A value that is not valid UTF-8 cannot be a JSON string, and left out it would widen the call
 * (every article for a --category, every day for a --since): it is a usage error instead, 2. */
static int cli_read_set_text(const struct cli_read_verb *v, json_t *args, const char *key, const char *what, const char *value)
{
    size_t n = strlen(value), ok = utf8_valid_prefix(value, n);
    if (ok < n) {
        fprintf(stderr, "dream %s: %s is not valid UTF-8 (byte %zu is 0x%02x); give it as UTF-8 text\n", v->verb, what, ok,
                (unsigned char)value[ok]);
        cli_read_usage(v, stderr);
        return 2;
    }
    if (json_object_set_new(args, key, json_string(value))) return cli_fail(v->verb, dream_error_set(DREAM_ENOMEM, "out of memory"));
    return 0;
}

int cli_read_main(const struct cli_read_verb *v, int argc, char **argv)
{
    struct dream_reader_params p;
    dream_reader_default_params(&p);
    p.wiki_optional = (v->options & CLI_READ_NO_WIKI_OK) != 0;
    bool json = false;
    json_t *args = json_object();
    char text[4096] = ""; /* the words of a name or query, joined (the messages say 4095) */
    size_t nwords = 0, npos = 0;
    const char *pos[2] = {NULL, NULL};
    int status = 0;
    bool words = false; /* after "--": words, whatever they start with */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!words && !strcmp(a, "--")) {
            words = true;
            continue;
        }
        if (words) goto word;
        if (cli_wants_help(a)) {
            cli_read_usage(v, stdout);
            json_decref(args);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--wiki") == 0 || strcmp(a, "--store") == 0) {
            if (!cli_option_value(argc, argv, i)) return json_decref(args), cli_read_bad(v, "%s needs a value", a);
            if (a[2] == 'w') p.wiki = argv[++i];
            else p.store = argv[++i];
        } else if ((v->options & CLI_READ_OPT_WHOLE) && strcmp(a, "--whole") == 0) {
            json_object_set_new(args, "whole", json_true());
        } else if ((v->options & (CLI_READ_OPT_PAGE | CLI_READ_OPT_LIMIT)) && strcmp(a, "--limit") == 0) {
            long n;
            if (!cli_parse_int(v->verb, a, cli_option_value(argc, argv, i) ? argv[++i] : NULL, 1, 100000, &n)) return json_decref(args), 2;
            json_object_set_new(args, "limit", json_integer(n));
        } else if ((v->options & CLI_READ_OPT_PAGE) && strcmp(a, "--offset") == 0) {
            long n;
            if (!cli_parse_int(v->verb, a, cli_option_value(argc, argv, i) ? argv[++i] : NULL, 0, DREAM_READ_OFFSET_MAX, &n)) return json_decref(args), 2;
            json_object_set_new(args, "offset", json_integer(n));
        } else if ((v->options & CLI_READ_OPT_SEARCH) && strcmp(a, "--conversations") == 0) {
            json_object_set_new(args, "conversations", json_true());
        } else if ((v->options & CLI_READ_OPT_SEARCH) && (!strcmp(a, "--since") || !strcmp(a, "--until"))) {
            if (!cli_option_value(argc, argv, i)) return json_decref(args), cli_read_bad(v, "%s needs a day (YYYY-MM-DD)", a);
            char what[48];
            snprintf(what, sizeof what, "the value of %s", a);
            int bad = cli_read_set_text(v, args, a + 2, what, argv[++i]);
            if (bad) return json_decref(args), bad;
        } else if ((v->options & CLI_READ_OPT_MEMBERS) &&
                   (!strcmp(a, "--category") || !strcmp(a, "--type") || !strcmp(a, "--kind") || !strcmp(a, "--series"))) {
            if (!cli_option_value(argc, argv, i)) return json_decref(args), cli_read_bad(v, "%s needs a value", a);
            char what[48];
            snprintf(what, sizeof what, "the value of %s", a);
            int bad = cli_read_set_text(v, args, a + 2, what, argv[++i]);
            if (bad) return json_decref(args), bad;
        } else if (a[0] == '-' && a[1] == '-') {
            return json_decref(args), cli_read_bad(v, "unknown option '%s'", a);
        } else {
        word:
            if (v->positionals == 1 || v->positionals == 3) {
                size_t l = strlen(text);
                if (l + (nwords ? 1 : 0) + strlen(a) >= sizeof text) /* it was cut, mid-character at times */
                    return json_decref(args), cli_read_bad(v, "the %s is over 4095 bytes", v->positionals == 1 ? "name" : "query");
                snprintf(text + l, sizeof text - l, "%s%s", nwords++ ? " " : "", a);
            } else if (v->positionals == 2 && npos < 2) {
                pos[npos++] = a;
            } else {
                return json_decref(args), cli_read_bad(v, "unexpected argument '%s'", a);
            }
        }
    }
    if (v->positionals == 1 || v->positionals == 2) {
        const char *name = v->positionals == 1 ? (nwords ? text : NULL) : pos[0];
        if (!name) return json_decref(args), cli_read_bad(v, "%s", "which article? give its name");
        int bad = cli_read_set_text(v, args, "name", "the article name", name);
        if (bad) return json_decref(args), bad;
        if (v->positionals == 2) {
            if (!pos[1]) return json_decref(args), cli_read_bad(v, "%s", "which section? give its anchor or title");
            if ((bad = cli_read_set_text(v, args, "anchor", "the section", pos[1]))) return json_decref(args), bad;
        }
    } else if (v->positionals == 3) {
        if (!nwords) return json_decref(args), cli_read_bad(v, "%s", "search for what? give words");
        int bad = cli_read_set_text(v, args, "query", "the query", text);
        if (bad) return json_decref(args), bad;
    }
    /* a search of the conversations alone reads the store: a wiki not made yet is no error */
    if (json_is_true(json_object_get(args, "conversations"))) p.wiki_optional = true;
    if (cli_store_missing(v->verb, p.store)) return json_decref(args), 1;
    const char *tool = v->tool;
    dream_reader *r = NULL;
    int rc = dream_reader_open(&p, &r);
    if (rc) {
        json_decref(args);
        return cli_fail(v->verb, rc);
    }
    json_t *out = NULL;
    rc = dream_read_call(r, tool, args, &out);
    if (rc) status = rc == DREAM_EINVAL ? 2 : 1;
    if (out) {
        if (json) {
            char *s = json_dumps(out, JSON_COMPACT);
            if (s) printf("%s\n", s);
            free(s);
        } else {
            char *s = dream_read_text(tool, out);
            if (s && rc) fprintf(stderr, "dream %s: %s", v->verb, s);
            else if (s) fputs(s, stdout);
            free(s);
        }
    } else if (rc) {
        cli_fail(v->verb, rc);
    }
    json_decref(out);
    json_decref(args);
    dream_reader_close(r);
    return status;
}
