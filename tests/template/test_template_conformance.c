/*
 * test_template_conformance.c — renders every chat template of the pinned llama.cpp tree
 * (models/templates/ *.jinja plus the template inside models/ggml-vocab-gemma-4.gguf) with
 * every fixture under tests/data/template/fixtures, and compares each output byte for byte
 * with Python's Jinja2 set up as Hugging Face does (tests/template_reference.py). A pair
 * passes when both outputs are identical or both engines raise.
 *
 * Prints `TEMPLATE-CONFORMANCE passed=N total=M required_failed=K` and the failing pairs;
 * fails when a required family (Gemma 4, Qwen3/3.5, Llama 3.x, Mistral, DeepSeek, Phi,
 * SmolLM3, gpt-oss) has a failing pair or fewer than 95% of all pairs pass.
 *
 * argv[1]: path of template_reference.py. Environment: LLAMA_SRC, DREAM_TEST_DATA,
 * DREAM_TEST_BUILD (scratch files go there).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dream/error.h"
#include "dream/template.h"
#include "util/file.h"

#define FIXED_NOW 1750000000 /* 2025-06-15 15:06:40 UTC, in both engines */
#define BOS "<|bos|>"
#define EOS "<|eos|>"

/* ---- the chat template inside a GGUF file (key tokenizer.chat_template) ---- */

static int rd(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n ? 0 : -1; }

static int skip_value(FILE *f, uint32_t type)
{
    static const int sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type == 8) {
        uint64_t n;
        return rd(f, &n, 8) || fseek(f, (long)n, SEEK_CUR);
    }
    if (type == 9) {
        uint32_t et;
        uint64_t n;
        if (rd(f, &et, 4) || rd(f, &n, 8))
            return -1;
        if (et != 8 && et != 9 && et < 13)
            return fseek(f, (long)(n * (uint64_t)sizes[et]), SEEK_CUR);
        for (uint64_t i = 0; i < n; i++)
            if (skip_value(f, et))
                return -1;
        return 0;
    }
    if (type >= 13)
        return -1;
    return fseek(f, sizes[type], SEEK_CUR);
}

static char *gguf_chat_template(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char magic[4];
    uint32_t version;
    uint64_t n_tensors, n_kv;
    char *result = NULL;
    if (rd(f, magic, 4) || memcmp(magic, "GGUF", 4) || rd(f, &version, 4) || rd(f, &n_tensors, 8) || rd(f, &n_kv, 8))
        goto done;
    for (uint64_t i = 0; i < n_kv; i++) {
        uint64_t klen;
        if (rd(f, &klen, 8) || klen > 4096)
            goto done;
        char key[4097];
        uint32_t type;
        if (rd(f, key, klen) || rd(f, &type, 4))
            goto done;
        key[klen] = 0;
        if (!strcmp(key, "tokenizer.chat_template") && type == 8) {
            uint64_t n;
            if (rd(f, &n, 8) || n > (64u << 20))
                goto done;
            result = malloc(n + 1);
            if (result && rd(f, result, n)) {
                free(result);
                result = NULL;
            }
            if (result)
                result[n] = 0;
            goto done;
        }
        if (skip_value(f, type))
            goto done;
    }
done:
    fclose(f);
    return result;
}

/* ---- listing ---- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static size_t list_dir(const char *dir, const char *suffix, char ***out)
{
    DIR *d = opendir(dir);
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name), s = strlen(suffix);
        if (l <= s || strcmp(e->d_name + l - s, suffix))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, cap * sizeof(*v));
        }
        v[n++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (n)
        qsort(v, n, sizeof(*v), cmp_str);
    *out = v;
    return n;
}

static bool required(const char *name)
{
    static const char *fam[] = {"gemma-4", "qwen3", "llama-3.", "mistral", "deepseek", "phi-", "smollm3", "gpt-oss", NULL};
    char low[512];
    size_t i;
    for (i = 0; name[i] && i < sizeof(low) - 1; i++)
        low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    low[i] = 0;
    for (size_t k = 0; fam[k]; k++)
        if (strstr(low, fam[k]))
            return true;
    return false;
}

static void show_diff(const char *want, const char *got)
{
    size_t i = 0;
    while (want[i] && want[i] == got[i])
        i++;
    size_t from = i > 60 ? i - 60 : 0;
    json_t *w = json_stringn(want + from, strnlen(want + from, i - from + 80));
    json_t *g = json_stringn(got + from, strnlen(got + from, i - from + 80));
    char *ws = json_dumps(w, JSON_ENCODE_ANY), *gs = json_dumps(g, JSON_ENCODE_ANY);
    printf("    first difference at byte %zu\n    jinja2: %s\n    dream:  %s\n", i, ws ? ws : "?", gs ? gs : "?");
    free(ws);
    free(gs);
    json_decref(w);
    json_decref(g);
}

int main(int argc, char **argv)
{
    const char *llama = getenv("LLAMA_SRC"), *data = getenv("DREAM_TEST_DATA"), *build = getenv("DREAM_TEST_BUILD");
    if (argc < 2 || !llama || !data || !build) {
        fprintf(stderr, "usage: LLAMA_SRC=.. DREAM_TEST_DATA=.. DREAM_TEST_BUILD=.. %s template_reference.py\n", argv[0]);
        return 2;
    }
    const char *only = getenv("TEMPLATE_ONLY"); /* debugging: substring of template names */
    char path[4096];
    /* templates */
    char **tnames;
    snprintf(path, sizeof(path), "%s/models/templates", llama);
    size_t nt = list_dir(path, ".jinja", &tnames);
    json_t *templates = json_object();
    char **tsrc = calloc(nt + 1, sizeof(char *));
    char **names = calloc(nt + 1, sizeof(char *));
    size_t count = 0;
    for (size_t i = 0; i < nt; i++) {
        if (only && !strstr(tnames[i], only))
            continue;
        snprintf(path, sizeof(path), "%s/models/templates/%s", llama, tnames[i]);
        tsrc[count] = NULL;
        if (file_read_all(path, 0, &tsrc[count], NULL)) tsrc[count] = NULL;
        names[count] = tnames[i];
        if (!tsrc[count]) {
            fprintf(stderr, "cannot read %s\n", path);
            return 2;
        }
        json_object_set_new(templates, names[count], json_string(tsrc[count]));
        count++;
    }
    snprintf(path, sizeof(path), "%s/models/ggml-vocab-gemma-4.gguf", llama);
    if (!only || strstr("ggml-vocab-gemma-4.gguf", only)) {
        char *g = gguf_chat_template(path);
        if (!g) {
            fprintf(stderr, "cannot read tokenizer.chat_template from %s\n", path);
            return 2;
        }
        tsrc[count] = g;
        names[count] = "ggml-vocab-gemma-4.gguf";
        json_object_set_new(templates, names[count], json_string(g));
        count++;
    }
    /* fixtures */
    char **fnames;
    char fdir[4096];
    snprintf(fdir, sizeof(fdir), "%s/template/fixtures", data);
    size_t nf = list_dir(fdir, ".json", &fnames);
    json_t *fixtures = json_object();
    json_t **fx = calloc(nf + 1, sizeof(json_t *));
    for (size_t i = 0; i < nf; i++) {
        snprintf(path, sizeof(path), "%s/%s", fdir, fnames[i]);
        json_error_t err;
        fx[i] = json_load_file(path, 0, &err);
        if (!fx[i]) {
            fprintf(stderr, "%s:%d: %s\n", path, err.line, err.text);
            return 2;
        }
        json_object_set(fixtures, fnames[i], fx[i]);
    }
    /* reference renders */
    json_t *manifest = json_pack("{s:i, s:{s:s, s:s}, s:o, s:o}", "now", (json_int_t)FIXED_NOW, "params", "bos_token", BOS,
                                 "eos_token", EOS, "templates", templates, "fixtures", fixtures);
    char mpath[4096], opath[4096], cmd[12288];
    snprintf(mpath, sizeof(mpath), "%s/template_conformance_manifest.json", build);
    snprintf(opath, sizeof(opath), "%s/template_conformance_reference.json", build);
    if (json_dump_file(manifest, mpath, 0)) {
        fprintf(stderr, "cannot write %s\n", mpath);
        return 2;
    }
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s' '%s' '%s'", argv[1], mpath, opath);
    if (system(cmd) != 0) {
        fprintf(stderr, "reference renderer failed: %s\n", cmd);
        return 2;
    }
    json_error_t err;
    json_t *ref = json_load_file(opath, 0, &err);
    if (!ref) {
        fprintf(stderr, "%s: %s\n", opath, err.text);
        return 2;
    }
    /* compare */
    int passed = 0, total = 0, required_failed = 0, jinja_errors = 0;
    bool verbose = getenv("TEMPLATE_VERBOSE") != NULL;
    for (size_t t = 0; t < count; t++) {
        dream_template *tmpl = NULL;
        int prc = dream_template_parse(tsrc[t], strlen(tsrc[t]), &tmpl);
        char perr[1024] = "";
        if (prc)
            snprintf(perr, sizeof(perr), "%s", dream_error_last());
        for (size_t i = 0; i < nf; i++) {
            char key[1024];
            snprintf(key, sizeof(key), "%s|%s", names[t], fnames[i]);
            json_t *r = json_object_get(ref, key);
            bool want_ok = json_is_true(json_object_get(r, "ok"));
            const char *want = json_string_value(json_object_get(r, want_ok ? "text" : "error"));
            struct dream_template_params params;
            dream_template_default_params(&params);
            params.add_generation_prompt = json_is_true(json_object_get(fx[i], "add_generation_prompt"));
            json_t *th = json_object_get(fx[i], "enable_thinking");
            params.enable_thinking = json_is_boolean(th) ? json_is_true(th) : DREAM_TEMPLATE_UNSET;
            params.bos_token = BOS;
            params.eos_token = EOS;
            params.use_fixed_now = true;
            params.fixed_now = FIXED_NOW;
            struct dream_render out = {0};
            int rc = prc ? prc : dream_template_render_json(tmpl, json_object_get(fx[i], "context"), &params, &out);
            const char *got_err = prc ? perr : (rc ? dream_error_last() : NULL);
            bool ok;
            if (!want_ok)
                ok = rc != 0;
            else
                ok = rc == 0 && out.len == strlen(want) && memcmp(out.text, want, out.len) == 0;
            total++;
            if (!want_ok)
                jinja_errors++;
            if (ok) {
                passed++;
                if (verbose)
                    printf("ok   %s%s\n", key, want_ok ? "" : " (both raise)");
            } else {
                bool req = required(names[t]);
                required_failed += req;
                printf("FAIL %s%s\n", key, req ? " [required]" : "");
                if (!want_ok)
                    printf("    jinja2 raised: %s\n    dream rendered %zu bytes\n", want ? want : "?", out.len);
                else if (rc)
                    printf("    dream failed: %s\n", got_err);
                else
                    show_diff(want, out.text);
            }
            dream_render_free(&out);
        }
        dream_template_free(tmpl);
    }
    printf("(pairs where Jinja2 raises: %d)\n", jinja_errors);
    printf("TEMPLATE-CONFORMANCE passed=%d total=%d required_failed=%d\n", passed, total, required_failed);
    bool good = required_failed == 0 && total > 0 && (double)passed / total >= 0.95;
    json_decref(ref);
    json_decref(manifest);
    for (size_t i = 0; i < nf; i++) {
        json_decref(fx[i]);
        free(fnames[i]);
    }
    free(fx);
    free(fnames);
    for (size_t t = 0; t < count; t++)
        free(tsrc[t]);
    for (size_t i = 0; i < nt; i++)
        free(tnames[i]);
    free(tnames);
    free(tsrc);
    free(names);
    return good ? 0 : 1;
}
