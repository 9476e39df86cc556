/* test_greedy_parity.c — our exact serial greedy decode against llama.cpp's own reference
 * greedy program (examples/simple, built from the same pinned tree), token for token.
 *
 * llama-simple tokenizes with BOS and special parsing, decodes the whole prompt in one call
 * (n_ubatch 512), greedy-samples n tokens, and prints every prompt and generated piece (control
 * tokens rendered) to stdout. We decode the same prompt through dream_generate in the same
 * configuration llama-simple uses (flash attention auto, 4 threads, n_ctx = prompt + n - 1,
 * 512-token prefill chunks, so a longer prompt is prefilled in several calls) and compare the
 * exact byte stream. Prints GREEDY-PARITY identical=N total=M.
 *
 * With --grammar-ref=PROGRAM (tests/llama_grammar_greedy.c) it also decodes under answer
 * grammars against that reference, which masks the whole vocabulary with llama.cpp's grammar
 * sampler before its greedy sampler at every step, where we ask about the argmax first: the
 * same tokens prove the shortcut changes nothing. Prints GRAMMAR-PARITY identical=N total=M. */
#include "dream/engine.h"
#include "dream/error.h"
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs argv[0] with argv (stderr to /dev/null when quiet) and returns its stdout (malloc'd), or
 * NULL when it fails. */
static char *run_program(char *const argv[], bool quiet)
{
    int fd[2];
    if (pipe(fd) != 0) return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        if (quiet) {
            FILE *devnull = freopen("/dev/null", "w", stderr);
            (void)devnull;
        }
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    struct dbuf out = {0};
    char buf[4096];
    ssize_t k;
    while ((k = read(fd[0], buf, sizeof buf)) > 0) dbuf_append(&out, buf, (size_t)k);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s exited with status %d\n", argv[0], WEXITSTATUS(status));
        dbuf_free(&out);
        return NULL;
    }
    return out.data ? dbuf_take(&out) : strdup("");
}

/* Runs llama-simple and returns its stdout (malloc'd), or NULL. */
static char *run_simple(const char *simple, const char *model, int n, const char *prompt)
{
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", n);
    char *const argv[] = {(char *)simple, "-m", (char *)model, "-n", nbuf, (char *)prompt, NULL};
    return run_program(argv, true);
}

static void append_pieces(dream_model *m, const dream_token *t, int n, struct dbuf *out)
{
    for (int i = 0; i < n; i++) {
        char buf[512];
        int k = dream_token_to_piece(m, t[i], true, buf, sizeof buf);
        if (k > 0) dbuf_append(out, buf, (size_t)k);
    }
}

/* Runs the grammar reference and returns its stdout (token ids, "eog"), or NULL. */
static char *run_grammar_ref(const char *ref, const char *model, int n, const char *grammar_file, const char *prompt)
{
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", n);
    char *const argv[] = {(char *)ref, (char *)model, nbuf, (char *)grammar_file, (char *)prompt, NULL};
    return run_program(argv, false);
}

/* Our side under grammar, in the reference's configuration, as the same lines; *text gets the
 * answer. */
static char *run_ours_grammar(dream_model *m, int n, const char *grammar, const char *prompt, char **text)
{
    struct dream_tokens toks = {0};
    *text = NULL;
    if (dream_tokenize(m, prompt, strlen(prompt), true, true, &toks)) return NULL;
    struct dream_session_params sp = dream_session_default_params();
    sp.n_ctx = toks.n + n + 8;
    sp.n_batch = 512;
    sp.n_threads = 1;
    sp.flash_attn = 0;
    dream_session *s = NULL;
    struct dream_gen_result r = {0};
    struct dbuf out = {0};
    if (dream_session_new(m, &sp, &s) == 0) {
        struct dream_gen_params gp = dream_gen_default_params();
        gp.max_tokens = n;
        gp.grammar = grammar;
        if (dream_generate(s, toks.ids, toks.n, &gp, &r) == 0) {
            for (int i = 0; i < r.n_tokens; i++) dbuf_printf(&out, "%d\n", r.tokens[i]);
            if (r.stopped_at_eog) dbuf_puts(&out, "eog\n");
            *text = r.text;
            r.text = NULL;
        } else {
            fprintf(stderr, "dream_generate under a grammar: %s\n", dream_error_last());
        }
    }
    dream_gen_result_free(&r);
    dream_session_free(s);
    dream_tokens_free(&toks);
    return out.data ? dbuf_take(&out) : (*text ? strdup("") : NULL);
}

/* Answer shapes of the stages, small enough to finish on a random model. */
static const char *const parity_grammars[] = {
    "root ::= (\"yes\" | \"no\")\n",
    "root ::= line{1,3}\nline ::= [A-Z] [a-z0-9 ]{0,12} \"\\n\"\n",
    "root ::= \"{\\\"chunks\\\": [\" chunk (\", \" chunk)? \"]}\"\n"
    "chunk ::= \"{\\\"start_message_id\\\": \" pos \", \\\"end_message_id\\\": \" pos \", \\\"label\\\": \\\"\" [a-zA-Z ]{1,8} \"\\\"}\"\n"
    "pos ::= [0-9] | \"1\" [0-9]\n",
};

/* Every grammar, every prompt, each model: our tokens against the reference's. */
static void grammar_parity(const char *ref, dream_model *m, const char *model_path, const char *const *prompts, int *identical,
                           int *total)
{
    for (size_t gi = 0; gi < sizeof parity_grammars / sizeof parity_grammars[0]; gi++) {
        char gfile[] = "/tmp/dream-grammar-XXXXXX";
        int fd = mkstemp(gfile);
        if (fd < 0 || write(fd, parity_grammars[gi], strlen(parity_grammars[gi])) < 0) {
            fprintf(stderr, "FAIL writing a grammar file\n");
            (*total)++;
            continue;
        }
        close(fd);
        for (int p = 0; p < 2; p++) {
            char *text = NULL;
            char *want = run_grammar_ref(ref, model_path, 120, gfile, prompts[p]);
            char *ours = run_ours_grammar(m, 120, parity_grammars[gi], prompts[p], &text);
            (*total)++;
            bool same = want && ours && strcmp(want, ours) == 0 && strstr(ours, "eog");
            *identical += same;
            printf("  %s grammar %zu prompt %d: %s, answer \"%.80s\"\n", strrchr(model_path, '/') + 1, gi, p,
                   same ? "identical" : "DIFFERENT", text ? text : "(none)");
            if (!same) fprintf(stderr, "reference:\n%s\nours:\n%s\n", want ? want : "(failed)", ours ? ours : "(failed)");
            free(want);
            free(ours);
            free(text);
        }
        unlink(gfile);
    }
}

/* Our side; returns the same byte stream llama-simple prints, or NULL. */
static char *run_ours(dream_model *m, int n, const char *prompt, int *n_prompt)
{
    struct dream_tokens toks = {0};
    if (dream_tokenize(m, prompt, strlen(prompt), true, true, &toks)) return NULL;
    *n_prompt = toks.n;
    struct dream_session_params sp = dream_session_default_params();
    sp.n_ctx = toks.n + n - 1;
    sp.n_batch = 512;
    sp.n_threads = 4;
    sp.flash_attn = -1;
    dream_session *s = NULL;
    struct dream_gen_result r = {0};
    struct dbuf out = {0};
    if (dream_session_new(m, &sp, &s) == 0) {
        struct dream_gen_params gp = dream_gen_default_params();
        gp.max_tokens = n;
        if (dream_generate(s, toks.ids, toks.n, &gp, &r) == 0) {
            append_pieces(m, toks.ids, toks.n, &out);
            append_pieces(m, r.tokens, r.n_tokens, &out);
            dbuf_putc(&out, '\n');
        } else {
            fprintf(stderr, "dream_generate: %s\n", dream_error_last());
        }
    }
    dream_gen_result_free(&r);
    dream_session_free(s);
    dream_tokens_free(&toks);
    return out.data ? dbuf_take(&out) : NULL;
}

int main(int argc, char **argv)
{
    const char *grammar_ref = NULL;
    if (argc > 1 && !strncmp(argv[1], "--grammar-ref=", 14)) {
        grammar_ref = argv[1] + 14;
        argv++;
        argc--;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s [--grammar-ref=PROGRAM] LLAMA_SIMPLE MODEL...\n", argv[0]);
        return 2;
    }
    const char *simple = argv[1];
    struct dbuf longp = {0};
    for (int i = 0; i < 90; i++)
        dbuf_printf(&longp, "Paragraph %d: the sourdough starter rose %d%% overnight, and the bike commute took %d minutes. ", i,
                    i * 7 % 100, 20 + i % 13);
    const char *prompts[] = {
        "Hello",
        "The capital of France is a city where people like to",
        longp.data,
    };
    const int n_gen[] = {32, 48, 24};
    int identical = 0, total = 0, g_identical = 0, g_total = 0;
    for (int mi = 2; mi < argc; mi++) {
        dream_model *m = NULL;
        if (dream_model_load(argv[mi], NULL, &m)) {
            fprintf(stderr, "FAIL load %s: %s\n", argv[mi], dream_error_last());
            total += 3;
            continue;
        }
        for (int p = 0; p < 3; p++) {
            int n_prompt = 0;
            char *ref = run_simple(simple, argv[mi], n_gen[p], prompts[p]);
            char *ours = run_ours(m, n_gen[p], prompts[p], &n_prompt);
            total++;
            bool same = ref && ours && strcmp(ref, ours) == 0;
            identical += same;
            printf("  %s prompt %d (%d tokens, %d out): %s\n", strrchr(argv[mi], '/') + 1, p, n_prompt, n_gen[p],
                   same ? "identical" : "DIFFERENT");
            if (!same) {
                size_t tail = 200;
                fprintf(stderr, "reference: ...%s\nours:      ...%s\n", ref && strlen(ref) > tail ? ref + strlen(ref) - tail : ref,
                        ours && strlen(ours) > tail ? ours + strlen(ours) - tail : ours);
            }
            free(ref);
            free(ours);
        }
        if (grammar_ref) grammar_parity(grammar_ref, m, argv[mi], prompts, &g_identical, &g_total);
        dream_model_free(m);
    }
    dbuf_free(&longp);
    printf("GREEDY-PARITY identical=%d total=%d\n", identical, total);
    if (grammar_ref) printf("GRAMMAR-PARITY identical=%d total=%d\n", g_identical, g_total);
    if (grammar_ref && (g_identical != g_total || g_total == 0)) return 1;
    return identical == total && total > 0 ? 0 : 1;
}
