/* cmd_forget.c — `dream forget`: take conversations out of the store and the wiki. */
#include "cli.h"

#include "dream/error.h"
#include "dream/forget.h"
#include "dream/paths.h"
#include "dream/store.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char cmd_forget_summary[] = "take conversations out of the store and the wiki (one commit)";

static void forget_usage(FILE *f)
{
    fprintf(f,
            "usage: dream forget CONVERSATION... [options]\n"
            "       dream forget [--source SOURCE] [--before DAY] [options]\n"
            "\n"
            "Takes conversations out of the store: their messages (and their rows of the search\n"
            "index), what the Dreaming made of them (chunks, the subjects only they name, the\n"
            "stages' state), so that no later `dream run` writes their claims again; the store is\n"
            "written over where they were. And out of the wiki, claim by claim: a sentence cited\n"
            "only by them goes (with the uncited sentences of its paragraph that lead up to it,\n"
            "or that follow it at the paragraph's end: keep notes of your own in paragraphs of\n"
            "their own), a sentence that other\n"
            "conversations support too keeps those footnotes and loses theirs, their footnote\n"
            "definitions go, an article left with nothing cited and no prose (your own sections\n"
            "keep it) is removed and the links to it become plain text. Other articles are not\n"
            "touched. The wiki's changes are one\n"
            "git commit, \"memory: forget ...\", which names no title. `dream ingest` of the same\n"
            "export does not bring them back (the store keeps a one-way key of each).\n"
            "\n"
            "CONVERSATION is a citation hash as footnotes show it: conv:HASH, or HASH. A hash the\n"
            "store no longer has is still taken out of the wiki.\n"
            "\n"
            "The git history keeps what was removed; the README says how to purge it.\n"
            "\n"
            "options:\n"
            "  --source SOURCE  every conversation from SOURCE (chatgpt, claude, claude-code, codex,\n"
            "                   pi, openai-jsonl)\n"
            "  --before DAY     every conversation whose last message is before DAY (YYYY-MM-DD,\n"
            "                   UTC); with --source, those of both\n"
            "  --dry-run        list what would change; change nothing\n"
            "  --store PATH     the store (default: ~/.local/share/dream/memory.sqlite,\n"
            "                   $XDG_DATA_HOME/dream/memory.sqlite, or $DREAM_HOME/memory.sqlite)\n"
            "  --wiki DIR       the wiki (default: the one `dream init` set up, when there is one)\n"
            "  --no-wiki        the store alone\n"
            "  -h, --help       this text\n");
}

struct forget_ui {
    bool dry_run;
};

static void forget_on_item(void *ud, const struct dream_forget_item *it)
{
    const struct forget_ui *ui = ud;
    const char *verb = ui->dry_run ? "would " : "";
    switch (it->what) {
    case DREAM_FORGET_CONVERSATION:
        if (it->stored)
            printf("conversation conv:%s \"%s\" (%s, %s, %zu message(s))\n", it->cite, it->title, it->source, it->date[0] ? it->date : "undated",
                   it->messages);
        else printf("conversation conv:%s (no longer in the store; cited in the wiki)\n", it->cite);
        break;
    case DREAM_FORGET_ARTICLE_EDITED:
        printf("%s: %sremove %zu sentence(s) and %zu footnote marker(s)", it->path, verb, it->sentences, it->citations);
        if (it->sections) printf(", %zu emptied section(s)", it->sections);
        if (it->links) printf(", unlink %zu link(s) to removed articles", it->links);
        printf("\n");
        break;
    case DREAM_FORGET_ARTICLE_REMOVED: printf("%s: %sremove the article (nothing cited and no other prose is left)\n", it->path, verb); break;
    case DREAM_FORGET_ARTICLE_UNLINKED: printf("%s: %sunlink %zu link(s) to removed articles\n", it->path, verb, it->links); break;
    }
}

int cmd_forget(int argc, char **argv)
{
    struct dream_forget_params p;
    dream_forget_default_params(&p);
    const char *store_arg = NULL;
    const char **convs = calloc((size_t)argc + 1, sizeof *convs);
    if (!convs) return cli_fail("forget", dream_error_set(DREAM_ENOMEM, "out of memory"));
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = cli_option_value(argc, argv, i) != NULL;
        if (cli_wants_help(a)) {
            forget_usage(stdout);
            free(convs);
            return 0;
        } else if (!strcmp(a, "--dry-run")) {
            p.dry_run = true;
        } else if (!strcmp(a, "--no-wiki")) {
            p.no_wiki = true;
        } else if (has_value && (!strcmp(a, "--source") || !strcmp(a, "--before")) && (a[2] == 's' ? p.source : p.before)) {
            /* a second one took the first's place without a word (forget --source chatgpt
             * --source claude forgot claude's alone) */
            fprintf(stderr, "dream forget: %s is given twice: forget one source (or day) at a time\n", a);
            forget_usage(stderr);
            free(convs);
            return 2;
        } else if (has_value && !strcmp(a, "--source")) {
            p.source = argv[++i];
        } else if (has_value && !strcmp(a, "--before")) {
            p.before = argv[++i];
        } else if (has_value && !strcmp(a, "--store")) {
            store_arg = argv[++i];
        } else if (has_value && !strcmp(a, "--wiki")) {
            p.wiki_dir = argv[++i];
        } else if (a[0] == '-') {
            bool wants_value = !strcmp(a, "--source") || !strcmp(a, "--before") || !strcmp(a, "--store") || !strcmp(a, "--wiki");
            if (wants_value) fprintf(stderr, "dream forget: %s needs a value\n", a);
            else fprintf(stderr, "dream forget: unknown argument '%s'\n", a);
            forget_usage(stderr);
            free(convs);
            return 2;
        } else {
            convs[n++] = a;
        }
    }
    p.conversations = convs;
    p.n_conversations = n;
    if (!n && !p.source && !p.before) {
        forget_usage(stderr);
        free(convs);
        return 2;
    }
    char *store_path = NULL;
    int rc = store_arg ? ((store_path = strdup(store_arg)) ? 0 : DREAM_ENOMEM) : dream_paths_store(&store_path);
    struct stat st;
    if (!rc && stat(store_path, &st) != 0)
        rc = dream_error_set(DREAM_ENOTFOUND, "no store at %s: there is nothing to forget (point --store at one)", store_path);
    dream_store *store = NULL;
    if (!rc) rc = dream_store_open(store_path, &store);
    struct forget_ui ui = {.dry_run = p.dry_run};
    p.on_item = forget_on_item;
    p.ud = &ui;
    struct dream_forget_result r;
    if (!rc) rc = dream_forget(store, &p, &r);
    dream_store_close(store);
    free(store_path);
    free(convs);
    if (rc) {
        cli_fail("forget", rc);
        return rc == DREAM_EINVAL ? 2 : 1;
    }
    if (!r.conversations && !r.edited && !r.removed && !r.unlinked) {
        printf("nothing to forget: no conversation matches\n");
        return 0;
    }
    printf("%s %zu conversation(s): %zu message(s), %zu chunk(s) and %zu subject(s) from the store", p.dry_run ? "would forget" : "forgot",
           r.conversations, r.messages, r.chunks, r.subjects);
    if (r.wiki) printf("; %zu article(s) edited, %zu removed, %zu unlinked", r.edited, r.removed, r.unlinked);
    else printf("; no wiki (dream init sets one up; --wiki names one)");
    if (p.dry_run) printf(" (dry run: nothing changed)\n");
    else if (r.committed) printf("; one commit of %zu file(s)\n", r.committed);
    else printf("\n");
    if (r.left)
        fprintf(stderr, "dream forget: %zu article(s) changed on disk meanwhile and still cite them (the warnings above name each); "
                        "run dream forget again with their hashes\n",
                r.left);
    return r.left ? 1 : 0;
}
