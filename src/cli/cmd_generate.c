/* cmd_generate.c — `dream generate`: one exact greedy completion from the model. */
#include "cli.h"

#include "dream/engine.h"
#include "dream/error.h"
#include "dream/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_generate_summary[] = "one exact greedy completion of a prompt or a chat message";

static void usage(FILE *f)
{
    fprintf(f, "usage: dream generate [--model PATH] (--prompt TEXT | --chat TEXT [--system TEXT])\n"
               "                      [--adapter PATH] [--max-tokens N] [--ctx N] [--threads N] [--tokens] [--stats]\n\n"
               "Decodes greedily (argmax; the lowest id wins ties) until an end-of-generation\n"
               "token or --max-tokens, and prints the completion.\n\n"
               "  --model PATH     " CLI_MODEL_HELP "\n"
               "  --prompt TEXT    raw text, tokenized with the vocabulary's BOS\n"
               "  --chat TEXT      a user message, rendered through the model's own chat template\n"
               "  --system TEXT    a system turn for --chat\n"
               "  --adapter PATH   a LoRA adapter GGUF applied at scale 1 (as a stage's memory-<stage>.gguf)\n"
               "  --max-tokens N   the most tokens to generate (default 256)\n"
               "  --ctx N          context size (default: the model's, at most 8192)\n"
               "  --threads N      CPU threads (default: all cores)\n"
               "  --tokens         also print the generated token ids\n"
               "  --stats          print token counts and timings to stderr\n\n"
               "Flash attention as `dream run` chooses it (DREAM_FLASH_ATTN; by default on for a model\n"
               "under 512 MiB on the CPU), so the answer is the one the seam gives.\n");
}

/* Renders a chat prompt (chat.c). */
int cli_render_chat(dream_model *m, const char *system, const char *user, struct dream_tokens *out);

int cmd_generate(int argc, char **argv)
{
    const char *model_path = NULL, *prompt = NULL, *chat = NULL, *system = NULL, *adapter_path = NULL;
    long max_tokens = 256, n_ctx = 0, threads = 0;
    bool show_tokens = false, stats = false;
    for (int i = 1; i < argc; i++) {
        /* a prompt may start with "--"; a file name or a number may not */
        const char *a = argv[i], *v = cli_option_value(argc, argv, i), *text = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_wants_help(a)) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--model") && v) model_path = argv[++i];
        else if (!strcmp(a, "--prompt") && text) prompt = argv[++i];
        else if (!strcmp(a, "--chat") && text) chat = argv[++i];
        else if (!strcmp(a, "--system") && text) system = argv[++i];
        else if (!strcmp(a, "--adapter") && v) adapter_path = argv[++i];
        else if (!strcmp(a, "--max-tokens")) {
            if (!cli_parse_int("generate", a, v, 0, 64000, &max_tokens)) return 2;
            i++;
        } else if (!strcmp(a, "--ctx")) {
            if (!cli_parse_int("generate", a, v, 16, 1 << 20, &n_ctx)) return 2;
            i++;
        } else if (!strcmp(a, "--threads")) {
            if (!cli_parse_int("generate", a, v, 1, 1024, &threads)) return 2;
            i++;
        } else if (!strcmp(a, "--tokens")) show_tokens = true;
        else if (!strcmp(a, "--stats")) stats = true;
        else {
            fprintf(stderr, "dream generate: unknown option or missing value '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!!prompt == !!chat) {
        fprintf(stderr, "dream generate: give exactly one of --prompt TEXT or --chat TEXT\n");
        return 2;
    }
    char *path = NULL;
    if (dream_model_resolve(model_path, &path)) return cli_fail("generate", DREAM_ENOTFOUND);
    dream_model *m = NULL;
    int rc = dream_model_load(path, NULL, &m);
    free(path);
    if (rc) return cli_fail("generate", rc);

    struct dream_tokens toks = {0};
    if (prompt) {
        if (!*prompt) rc = dream_error_set(DREAM_EINVAL, "the prompt is empty: give some text with --prompt");
        else rc = dream_tokenize(m, prompt, strlen(prompt), true, true, &toks);
    } else {
        rc = cli_render_chat(m, system, chat, &toks);
    }
    dream_session *s = NULL;
    dream_adapter *adapter = NULL;
    struct dream_gen_result res = {0};
    if (!rc) {
        struct dream_session_params sp = dream_session_default_params();
        sp.n_ctx = (int)n_ctx;
        if (threads) sp.n_threads = (int)threads;
        struct dream_seam_config cfg;
        dream_seam_default_config(&cfg);
        sp.flash_attn = dream_model_flash_attn_choice(m, cfg.flash_attn);
        rc = dream_session_new(m, &sp, &s);
    }
    if (!rc && adapter_path) {
        rc = dream_adapter_load(m, adapter_path, &adapter);
        if (!rc) rc = dream_session_set_adapter(s, adapter, 1.0f);
    }
    if (!rc) {
        struct dream_gen_params gp = dream_gen_default_params();
        gp.max_tokens = (int)max_tokens;
        rc = dream_generate(s, toks.ids, toks.n, &gp, &res);
    }
    if (!rc) {
        printf("%s\n", res.text);
        if (show_tokens) {
            for (int i = 0; i < res.n_tokens; i++) printf("%s%d", i ? " " : "", res.tokens[i]);
            printf("\n");
        }
        if (stats)
            fprintf(stderr, "prompt %d tokens, %.1f ms; generated %d tokens, %.1f ms (%.1f tok/s); stopped by %s\n", res.n_prompt,
                    res.prefill_ms, res.n_tokens, res.decode_ms, res.decode_ms > 0 ? res.n_tokens * 1000.0 / res.decode_ms : 0.0,
                    res.stopped_at_eog ? "end-of-generation" : "max tokens");
    }
    dream_gen_result_free(&res);
    dream_session_free(s);
    dream_adapter_free(adapter);
    dream_tokens_free(&toks);
    dream_model_free(m);
    return rc ? cli_fail("generate", rc) : 0;
}
