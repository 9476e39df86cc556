/* cmd_ask.c — `dream ask`: a question answered from the memory in one model call (dream/ask.h). */
#include "cli.h"

#include "dream/article.h"
#include "dream/ask.h"
#include "dream/error.h"
#include "dream/read.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_ask_summary[] = "answer a question from the memory, with the footnotes it used";

static void ask_usage(FILE *f)
{
    fprintf(f, "usage: dream ask QUESTION... [--json] [--wiki DIR] [--store PATH] [--model PATH | --backend URL]\n"
               "\n"
               "Finds what the memory holds about the question (names resolved, then the full-text\n"
               "search), reads a little of it (an article's lead, its infobox, a section or two, a\n"
               "message), and asks the model once to answer from that alone. The answer comes with\n"
               "the footnotes it used; when nothing read answers it, it says so.\n"
               "\n"
               "options:\n"
               "  --json         the answer, its citations and the reads as one JSON object\n"
               "                 (the same as POST /v1/memory/ask)\n"
               "  --wiki DIR     the wiki (default: $DREAM_WIKI, $DREAM_HOME/wiki, ~/.local/share/dream/wiki)\n"
               "  --store PATH   the store (default: the data directory's memory.sqlite)\n"
               "  --model PATH   " CLI_MODEL_HELP "\n"
               "  --backend URL  send the model call to an OpenAI-compatible server (default:\n"
               "                 $DREAM_BACKEND, unless --model is given)\n"
               "  -h, --help     this text\n");
}

int cmd_ask(int argc, char **argv)
{
    struct dream_reader_params p;
    dream_reader_default_params(&p);
    const char *model = NULL, *backend = NULL;
    bool json = false;
    char question[DREAM_ASK_QUESTION_MAX + 1] = ""; /* one limit: the library's */
    bool words = false; /* after "--": the question's words, whatever they start with */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!words && !strcmp(a, "--")) {
            words = true;
        } else if (words) {
            goto word;
        } else if (cli_wants_help(a)) {
            ask_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--wiki") || !strcmp(a, "--store") || !strcmp(a, "--model") || !strcmp(a, "--backend")) {
            if (!cli_option_value(argc, argv, i)) {
                fprintf(stderr, "dream ask: %s needs a value\n", a);
                ask_usage(stderr);
                return 2;
            }
            if (a[2] == 'w') p.wiki = argv[++i];
            else if (a[2] == 's') p.store = argv[++i];
            else if (a[2] == 'm') model = argv[++i];
            else backend = argv[++i];
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "dream ask: unknown option '%s'\n", a);
            ask_usage(stderr);
            return 2;
        } else {
        word:;
            size_t l = strlen(question);
            if (l + (l ? 1 : 0) + strlen(a) > DREAM_ASK_QUESTION_MAX) {
                fprintf(stderr, "dream ask: the question is over %d bytes; ask a shorter one\n", DREAM_ASK_QUESTION_MAX);
                return 2;
            }
            snprintf(question + l, sizeof question - l, "%s%s", l ? " " : "", a);
        }
    }
    if (!question[0]) {
        fprintf(stderr, "dream ask: ask what? give a question\n");
        ask_usage(stderr);
        return 2;
    }
    if (cli_store_missing("ask", p.store)) return 1;
    int rc = cli_model_select("ask", model, backend);
    if (rc) return rc;
    dream_reader *r = NULL;
    rc = dream_reader_open(&p, &r);
    if (rc) return cli_fail("ask", rc);
    json_t *out = NULL;
    rc = dream_ask(r, question, NULL, &out);
    dream_reader_close(r);
    if (rc) {
        cli_fail("ask", rc);
        return rc == DREAM_EINVAL ? 2 : 1;
    }
    if (json) {
        char *s = json_dumps(out, JSON_COMPACT);
        if (s) printf("%s\n", s);
        free(s);
    } else {
        printf("%s\n", json_string_value(json_object_get(out, "answer")));
        size_t i;
        json_t *c;
        if (json_array_size(json_object_get(out, "citations"))) putchar('\n');
        json_array_foreach(json_object_get(out, "citations"), i, c) {
            const char *d = json_string_value(json_object_get(c, "date")), *t = json_string_value(json_object_get(c, "title"));
            printf("[^%lld]: `%s` (%s, %s)\n", (long long)json_integer_value(json_object_get(c, "n")), json_string_value(json_object_get(c, "cite")),
                   d && d[0] ? d : DREAM_CITATION_UNDATED, t && t[0] ? t : "conversation"); /* an untitled one, as the prompt calls it */
        }
    }
    json_decref(out);
    return 0;
}
