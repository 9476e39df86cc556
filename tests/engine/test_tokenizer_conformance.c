/* test_tokenizer_conformance.c — our tokenizer path against llama.cpp's own test vectors.
 *
 * Every models/ggml-vocab-*.gguf of the pinned tree that has .inp/.out files: the .inp strings
 * (separated by "\n__ggml_vocab_test__\n") must tokenize (no BOS, no special parsing) to the ids
 * of the matching .out line, which Hugging Face's tokenizers produced. Prints
 * TOKENIZER-CONFORMANCE passed=N total=M and fails unless N == M. */
#include "dream/engine.h"
#include "dream/error.h"
#include "util/file.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SEP[] = "\n__ggml_vocab_test__\n";

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Runs one vocabulary's cases; adds to *passed and *total. Returns 0 unless the files are bad. */
static int run_vocab(const char *gguf, int *passed, int *total)
{
    char inp_path[4200], out_path[4200];
    snprintf(inp_path, sizeof inp_path, "%s.inp", gguf);
    snprintf(out_path, sizeof out_path, "%s.out", gguf);
    char *inp = NULL, *outs = NULL;
    size_t inp_len = 0, out_len = 0;
    if (file_read_all(inp_path, 0, &inp, &inp_len) || file_read_all(out_path, 0, &outs, &out_len)) {
        fprintf(stderr, "%s\n", dream_error_last());
        free(inp);
        return 1;
    }
    struct dream_model_params mp = dream_model_default_params();
    mp.vocab_only = true;
    dream_model *m = NULL;
    if (dream_model_load(gguf, &mp, &m)) {
        fprintf(stderr, "FAIL load %s: %s\n", gguf, dream_error_last());
        free(inp);
        free(outs);
        return 1;
    }
    int vocab_pass = 0, vocab_total = 0;
    size_t pos = 0;
    char *line = outs;
    while (pos < inp_len) {
        const char *next = memmem(inp + pos, inp_len - pos, SEP, sizeof SEP - 1);
        size_t end = next ? (size_t)(next - inp) : inp_len;
        /* the matching expected line */
        char *nl = line ? strchr(line, '\n') : NULL;
        if (nl) *nl = '\0';
        struct dream_tokens got = {0};
        int rc = dream_tokenize(m, inp + pos, end - pos, false, false, &got);
        bool ok = rc == 0 && line != NULL;
        int k = 0;
        char *p = line;
        while (ok && p && *p) {
            while (*p == ' ') p++;
            if (!*p || *p == '\r') break;
            long id = strtol(p, &p, 10);
            ok = k < got.n && got.ids[k] == id;
            k++;
        }
        ok = ok && k == got.n;
        vocab_total++;
        if (ok) vocab_pass++;
        else fprintf(stderr, "FAIL %s case %d: '%.*s'\n", gguf, vocab_total, (int)(end - pos > 60 ? 60 : end - pos), inp + pos);
        dream_tokens_free(&got);
        line = nl ? nl + 1 : NULL;
        if (!next) break;
        pos = end + sizeof SEP - 1;
    }
    printf("  %-40s %d/%d\n", strrchr(gguf, '/') + 1, vocab_pass, vocab_total);
    *passed += vocab_pass;
    *total += vocab_total;
    dream_model_free(m);
    free(inp);
    free(outs);
    return 0;
}

int main(void)
{
    const char *src = getenv("LLAMA_SRC");
    if (!src) {
        fprintf(stderr, "LLAMA_SRC is not set (ctest sets it)\n");
        return 1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models", src);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", dir);
        return 1;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "ggml-vocab-", 11) || len < 5 || strcmp(e->d_name + len - 5, ".gguf")) continue;
        char inp[4400];
        snprintf(inp, sizeof inp, "%s/%s.inp", dir, e->d_name);
        if (!file_exists(inp)) continue;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    int passed = 0, total = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        bad |= run_vocab(path, &passed, &total);
        free(names[i]);
    }
    printf("TOKENIZER-CONFORMANCE passed=%d total=%d vocabularies=%d\n", passed, total, n);
    return bad || n == 0 || total == 0 || passed != total;
}
