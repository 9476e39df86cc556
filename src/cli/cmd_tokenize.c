/* cmd_tokenize.c — `dream tokenize`: show how a model's tokenizer splits text. */
#include "cli.h"

#include "dream/engine.h"
#include "dream/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_tokenize_summary[] = "print the token ids (and pieces) of a text under a model's tokenizer";

static void usage(FILE *f)
{
    fprintf(f, "usage: dream tokenize [--model PATH] [--no-special] [--no-bos] [--pieces] TEXT\n\n"
               "Tokenizes TEXT with the model's vocabulary and prints one token id per line\n"
               "(with --pieces, the id and its text).\n\n"
               "  --model PATH   " CLI_MODEL_HELP "\n"
               "  --no-special   treat control-token strings such as <bos> as plain text\n"
               "  --no-bos       do not add the vocabulary's BOS token\n"
               "  --pieces       print each token's text beside its id\n");
}

int cmd_tokenize(int argc, char **argv)
{
    const char *model_path = NULL, *text = NULL;
    bool special = true, bos = true, pieces = false, words = false; /* words: after "--", the text */
    for (int i = 1; i < argc; i++) {
        if (!words && !strcmp(argv[i], "--")) {
            words = true;
        } else if (words && !text) {
            text = argv[i];
        } else if (words) {
            fprintf(stderr, "dream tokenize: give the text as one argument (quote it)\n");
            return 2;
        } else if (cli_wants_help(argv[i])) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--model") && cli_option_value(argc, argv, i)) model_path = argv[++i];
        else if (!strcmp(argv[i], "--no-special")) special = false;
        else if (!strcmp(argv[i], "--no-bos")) bos = false;
        else if (!strcmp(argv[i], "--pieces")) pieces = true;
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "dream tokenize: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!text) text = argv[i];
        else {
            fprintf(stderr, "dream tokenize: give the text as one argument (quote it)\n");
            return 2;
        }
    }
    if (!text) {
        usage(stderr);
        return 2;
    }
    char *path = NULL;
    if (dream_model_resolve(model_path, &path)) return cli_fail("tokenize", DREAM_ENOTFOUND);
    struct dream_model_params mp = dream_model_default_params();
    mp.vocab_only = true;
    dream_model *m = NULL;
    int rc = dream_model_load(path, &mp, &m);
    free(path);
    if (rc) return cli_fail("tokenize", rc);
    struct dream_tokens toks = {0};
    rc = dream_tokenize(m, text, strlen(text), bos, special, &toks);
    if (!rc) {
        for (int i = 0; i < toks.n; i++) {
            if (!pieces) {
                printf("%d\n", toks.ids[i]);
                continue;
            }
            char buf[256];
            int n = dream_token_to_piece(m, toks.ids[i], true, buf, sizeof buf);
            printf("%d\t%.*s\n", toks.ids[i], n > 0 ? n : 0, buf);
        }
    }
    dream_tokens_free(&toks);
    dream_model_free(m);
    return rc ? cli_fail("tokenize", rc) : 0;
}
