/*
 * make_dataset.c — dream-dataset: turns stage-call records (train/oracle.py's records.jsonl) into
 * the token file train/train.py reads.
 *
 * Every prompt is rendered and tokenized by the seam's own prompt path (dream_prompt_tokens), with
 * the system turn chosen as the seam chooses it (the record's own, else the stage's default), so
 * the model is trained on exactly the tokens it sees in use. The answer is tokenized as the text
 * that continues the prompt: the prompt's last plain-text stretch (after its last control token;
 * "\n" after <|assistant|> in the Phi-3.5 template) is tokenized together with the answer, and the
 * answer's tokens are what follows that stretch's own tokens. That avoids the SentencePiece
 * space prefix a lone tokenization would add ("Yes" → "▁Yes"), and every answer is checked to
 * decode back to exactly its text. The end-of-turn token (<|end|>), where the greedy decode stops,
 * closes it.
 *
 * data.bin (little-endian), version 2:
 *   header, 32 bytes: "DMDS", u32 version = 2, u32 n_records, u32 n_vocab, u32 n_stages,
 *                     u32 token_bytes (2 when n_vocab <= 65536, else 4), u64 n_tokens
 *   n_stages x 64 bytes: the stage names (--stages order), NUL-padded
 *   n_records x 16 bytes: u32 n_prompt, u32 n_answer (the end-of-turn token included),
 *                         u32 stage index, u32 source (the record's number among all records
 *                         read, from 0, skipped ones counted)
 *   n_tokens x token_bytes: each record's prompt then answer tokens, records back to back
 * and beside it data.json (OUT with .bin replaced by .json): the stages, counts, the end-of-turn
 * and end-of-generation token ids, and every token's piece as hex bytes, so the GPU side can
 * decode without a tokenizer.
 */
#include "dream/engine.h"
#include "dream/error.h"
#include "dream/grammar.h"
#include "dream/model.h"
#include "util/buf.h"
#include "util/file.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DS_DEFAULT_STAGES "chunk,entity,route,section,synthesis,editor"
#define DS_MAX_STAGES 32
#define DS_STAGE_NAME 64
#define DS_VERSION 2
/* Answers that fail the round trip are reported one by one up to this many. */
#define DS_REPORT_MAX 5

struct ds_stage_count {
    long records, skipped_long, prompt_tokens, answer_tokens, longest;
};

struct ds_record {
    uint32_t n_prompt, n_answer, stage, source;
};

struct ds {
    dream_model *model;
    char stages[DS_MAX_STAGES][DS_STAGE_NAME];
    int n_stages;
    long max_tokens;
    bool names_from_text; /* --names-from-text: entity answers in dream_names_copy_form */
    dream_token end_token;
    struct ds_stage_count count[DS_MAX_STAGES];
    /* records of stages not in --stages, by name */
    char other[DS_MAX_STAGES][DS_STAGE_NAME];
    long other_count[DS_MAX_STAGES];
    int n_other;
    long other_overflow;
    long mismatched;
    long read;
    struct ds_record *records;
    size_t n_records, cap_records;
    struct dream_tokens tokens;
};

static void ds_usage(FILE *f)
{
    fprintf(f,
            "usage: dream-dataset --model MODEL.gguf [options] -o DATA.bin RECORDS.jsonl...\n"
            "\n"
            "Renders and tokenizes stage-call records ({stage, kind, system, user, answer} per line)\n"
            "exactly as the seam does, and writes them for train/train.py.\n"
            "\n"
            "  --model PATH      a model with the vocabulary and chat template to train (any dream-mini\n"
            "                    GGUF, e.g. dream-make-model --arch llama --preset mini); only its\n"
            "                    tokenizer is loaded\n"
            "  --stages LIST     the stages to keep, in the order of their index in DATA.bin\n"
            "                    (default " DS_DEFAULT_STAGES ")\n"
            "  --max-tokens N    skip (and count) records whose prompt + answer + end token exceed N\n"
            "                    (default 8192, the context dream-mini is trained for)\n"
            "  --end-token TEXT  the end-of-turn token appended to every answer (default <|end|>);\n"
            "                    it must be one end-of-generation token of the vocabulary\n"
            "  --names-from-text entity answers in the form the names-from-text grammar decodes:\n"
            "                    one leading space a line (for a model made with dream-make-model\n"
            "                    --names-from-text; why: include/dream/grammar.h)\n"
            "  -o, --output PATH DATA.bin; DATA.json (PATH without .bin, plus .json) is written beside it\n"
            "  -h, --help        this help\n"
            "\n"
            "A record's system null (or missing) gets the stage's default system turn, as the seam\n"
            "gives it (dream_stage_default_system: none for chunk). Prints counts per stage.\n");
}

/* Splits a comma-separated stage list into d->stages. */
static int ds_parse_stages(struct ds *d, const char *list)
{
    d->n_stages = 0;
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || len >= DS_STAGE_NAME)
            return dream_error_set(DREAM_EINVAL, "--stages '%s': every name must have 1 to %d characters", list,
                                   DS_STAGE_NAME - 1);
        if (d->n_stages == DS_MAX_STAGES)
            return dream_error_set(DREAM_EINVAL, "--stages '%s' names more than %d stages", list, DS_MAX_STAGES);
        memcpy(d->stages[d->n_stages], p, len);
        d->stages[d->n_stages][len] = '\0';
        for (int i = 0; i < d->n_stages; i++)
            if (!strcmp(d->stages[i], d->stages[d->n_stages]))
                return dream_error_set(DREAM_EINVAL, "--stages '%s' names %s twice", list, d->stages[i]);
        d->n_stages++;
        p += len;
        if (*p == ',') p++;
    }
    if (!d->n_stages) return dream_error_set(DREAM_EINVAL, "--stages is empty");
    return 0;
}

static int ds_stage_index(const struct ds *d, const char *stage)
{
    for (int i = 0; i < d->n_stages; i++)
        if (!strcmp(d->stages[i], stage)) return i;
    return -1;
}

static void ds_count_other(struct ds *d, const char *stage)
{
    for (int i = 0; i < d->n_other; i++)
        if (!strcmp(d->other[i], stage)) {
            d->other_count[i]++;
            return;
        }
    if (d->n_other == DS_MAX_STAGES || strlen(stage) >= DS_STAGE_NAME) {
        d->other_overflow++;
        return;
    }
    snprintf(d->other[d->n_other], DS_STAGE_NAME, "%s", stage);
    d->other_count[d->n_other++] = 1;
}

/* The concatenated pieces of tokens (control tokens as nothing) into *out (malloc'd). */
static int ds_pieces(const dream_model *m, const dream_token *t, int n, char **out)
{
    return dream_detokenize(m, t, n, out);
}

static bool ds_same(const dream_token *a, const dream_token *b, int n)
{
    return n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/*
 * The answer's tokens as they continue prompt: appended to out (not prompt), then the end token. The text of
 * the prompt's trailing plain stretch is recovered from its tokens (their pieces, less the one
 * leading space a SentencePiece vocabulary adds, whichever re-tokenizes to the same tokens), then
 * tokenized together with the answer. Returns 0; 1 when the answer does not round-trip (out
 * unchanged; the reason in *why); or an error.
 */
static int ds_answer_tokens(const dream_model *m, const struct dream_tokens *prompt, const char *answer,
                            dream_token end_token, struct dream_tokens *out, const char **why)
{
    int k = prompt->n;
    while (k > 0 && !dream_model_is_control(m, prompt->ids[k - 1])) k--;
    const dream_token *tail = prompt->ids + k;
    const int n_tail = prompt->n - k;

    char *text = NULL;
    int rc = ds_pieces(m, tail, n_tail, &text);
    if (rc) return rc;
    /* Candidates for the stretch's text: the pieces as they are, and without a leading space. */
    const char *stretch = NULL;
    struct dream_tokens probe = {0};
    for (int cand = 0; cand < 2 && !stretch && !rc; cand++) {
        const char *s = text + cand;
        if (cand == 1 && text[0] != ' ') break;
        probe.n = 0;
        rc = dream_tokenize(m, s, strlen(s), false, false, &probe);
        if (!rc && probe.n == n_tail && ds_same(probe.ids, tail, n_tail)) stretch = s;
    }
    struct dbuf joined = {0};
    if (!rc && !stretch) {
        *why = "the prompt's last text does not re-tokenize to its own tokens";
        rc = 1;
    }
    if (!rc) rc = dbuf_puts(&joined, stretch);
    if (!rc) rc = dbuf_puts(&joined, answer);
    if (!rc) {
        probe.n = 0;
        rc = dream_tokenize(m, joined.data, joined.len, false, false, &probe);
    }
    if (!rc && (probe.n < n_tail || !ds_same(probe.ids, tail, n_tail))) {
        *why = "the answer's first characters merge with the prompt's last token";
        rc = 1;
    }
    char *back = NULL;
    if (!rc) rc = ds_pieces(m, probe.ids + n_tail, probe.n - n_tail, &back);
    if (!rc && strcmp(back, answer) != 0) {
        *why = "the answer's tokens do not decode back to the answer";
        rc = 1;
    }
    for (int i = n_tail; i < probe.n && !rc; i++)
        if (dream_model_is_eog(m, probe.ids[i])) {
            *why = "the answer's text holds an end-of-generation token (such as </s>), where the decode would stop";
            rc = 1;
        }
    for (int i = n_tail; i < probe.n && !rc; i++) rc = dream_tokens_push(out, probe.ids[i]);
    if (!rc) rc = dream_tokens_push(out, end_token);
    free(back);
    free(text);
    dbuf_free(&joined);
    dream_tokens_free(&probe);
    return rc;
}

/* A string member, NULL when missing or null; DREAM_EFORMAT when another type. */
static int ds_get_str(json_t *rec, const char *key, bool required, const char **out, const char *where)
{
    json_t *v = json_object_get(rec, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (required) return dream_error_set(DREAM_EFORMAT, "%s: the record has no \"%s\" string", where, key);
        return 0;
    }
    if (!json_is_string(v)) return dream_error_set(DREAM_EFORMAT, "%s: \"%s\" is not a string", where, key);
    *out = json_string_value(v);
    return 0;
}

/* One record: tokenized and kept, or counted as skipped. */
static int ds_add_record(struct ds *d, json_t *rec, const char *where)
{
    if (!json_is_object(rec)) return dream_error_set(DREAM_EFORMAT, "%s: a record must be a JSON object", where);
    const char *stage, *system, *user, *answer;
    int rc = ds_get_str(rec, "stage", true, &stage, where);
    if (!rc) rc = ds_get_str(rec, "system", false, &system, where);
    if (!rc) rc = ds_get_str(rec, "user", true, &user, where);
    if (!rc) rc = ds_get_str(rec, "answer", true, &answer, where);
    if (rc) return rc;
    long source = d->read++;
    int si = ds_stage_index(d, stage);
    if (si < 0) {
        ds_count_other(d, stage);
        return 0;
    }
    /* As the seam's engine_calls: the record's system turn, else the stage's default. */
    if (!system) system = dream_stage_default_system(stage);
    struct dream_tokens t = {0};
    rc = dream_prompt_tokens(d->model, system, user, &t);
    if (rc) return dream_error_wrap(rc, "%s", where);
    int n_prompt = t.n;
    const char *why = NULL;
    struct dream_tokens a = {0};
    char *copied = NULL;
    if (d->names_from_text && strcmp(stage, "entity") == 0) {
        if (!(copied = dream_names_copy_form(answer))) {
            dream_tokens_free(&t);
            return dream_error_set(DREAM_ENOMEM, "out of memory");
        }
        answer = copied;
    }
    rc = ds_answer_tokens(d->model, &t, answer, d->end_token, &a, &why);
    free(copied);
    for (int i = 0; i < a.n && !rc; i++) rc = dream_tokens_push(&t, a.ids[i]);
    dream_tokens_free(&a);
    if (rc == 1) {
        if (d->mismatched++ < DS_REPORT_MAX) fprintf(stderr, "dream-dataset: %s: skipped: %s\n", where, why);
        dream_tokens_free(&t);
        return 0;
    }
    if (rc) {
        dream_tokens_free(&t);
        return dream_error_wrap(rc, "%s", where);
    }
    struct ds_stage_count *c = &d->count[si];
    if (t.n > d->max_tokens) {
        c->skipped_long++;
        dream_tokens_free(&t);
        return 0;
    }
    if (d->n_records == d->cap_records) {
        size_t cap = d->cap_records ? d->cap_records * 2 : 1024;
        struct ds_record *p = realloc(d->records, cap * sizeof *p);
        if (!p) {
            dream_tokens_free(&t);
            return dream_error_set(DREAM_ENOMEM, "out of memory at %s", where);
        }
        d->records = p;
        d->cap_records = cap;
    }
    d->records[d->n_records++] = (struct ds_record){
        .n_prompt = (uint32_t)n_prompt, .n_answer = (uint32_t)(t.n - n_prompt), .stage = (uint32_t)si,
        .source = (uint32_t)source};
    c->records++;
    c->prompt_tokens += n_prompt;
    c->answer_tokens += t.n - n_prompt;
    if (t.n > c->longest) c->longest = t.n;
    for (int i = 0; i < t.n && !rc; i++) rc = dream_tokens_push(&d->tokens, t.ids[i]);
    dream_tokens_free(&t);
    return rc;
}

static int ds_read_file(struct ds *d, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return dream_error_set(errno == ENOENT ? DREAM_ENOTFOUND : DREAM_EIO, "cannot open records %s: %s", path,
                               strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    int rc = 0;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t n = (size_t)len;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ')) n--;
        if (!n) continue;
        char where[1024];
        snprintf(where, sizeof where, "%s:%ld", path, lineno);
        json_error_t jerr;
        json_t *rec = json_loadb(line, n, 0, &jerr);
        if (!rec) {
            rc = dream_error_set(DREAM_EFORMAT, "%s: not valid JSON: %s", where, jerr.text);
            break;
        }
        rc = ds_add_record(d, rec, where);
        json_decref(rec);
    }
    if (!rc && ferror(f)) rc = dream_error_set(DREAM_EIO, "reading %s: %s", path, strerror(errno));
    free(line);
    fclose(f);
    return rc;
}

static int ds_put_u32(struct dbuf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    return dbuf_append(b, x, 4);
}

static int ds_put_u64(struct dbuf *b, uint64_t v)
{
    int rc = ds_put_u32(b, (uint32_t)v);
    return rc ? rc : ds_put_u32(b, (uint32_t)(v >> 32));
}

static int ds_write_bin(const struct ds *d, const char *path)
{
    int n_vocab = dream_model_n_vocab(d->model);
    uint32_t tb = n_vocab <= 65536 ? 2 : 4;
    struct dbuf b = {0};
    int rc = dbuf_reserve(&b, 32 + (size_t)d->n_stages * DS_STAGE_NAME + d->n_records * 16 + (size_t)d->tokens.n * tb);
    if (!rc) rc = dbuf_append(&b, "DMDS", 4);
    if (!rc) rc = ds_put_u32(&b, DS_VERSION);
    if (!rc) rc = ds_put_u32(&b, (uint32_t)d->n_records);
    if (!rc) rc = ds_put_u32(&b, (uint32_t)n_vocab);
    if (!rc) rc = ds_put_u32(&b, (uint32_t)d->n_stages);
    if (!rc) rc = ds_put_u32(&b, tb);
    if (!rc) rc = ds_put_u64(&b, (uint64_t)d->tokens.n);
    for (int i = 0; i < d->n_stages && !rc; i++) {
        char name[DS_STAGE_NAME] = {0};
        memcpy(name, d->stages[i], strlen(d->stages[i]));
        rc = dbuf_append(&b, name, sizeof name);
    }
    for (size_t i = 0; i < d->n_records && !rc; i++) {
        const struct ds_record *r = &d->records[i];
        rc = ds_put_u32(&b, r->n_prompt);
        if (!rc) rc = ds_put_u32(&b, r->n_answer);
        if (!rc) rc = ds_put_u32(&b, r->stage);
        if (!rc) rc = ds_put_u32(&b, r->source);
    }
    for (int i = 0; i < d->tokens.n && !rc; i++) {
        uint32_t t = (uint32_t)d->tokens.ids[i];
        unsigned char x[4] = {(unsigned char)t, (unsigned char)(t >> 8), (unsigned char)(t >> 16), (unsigned char)(t >> 24)};
        rc = dbuf_append(&b, x, tb);
    }
    if (!rc) rc = file_write_atomic(path, b.data, b.len);
    dbuf_free(&b);
    return rc;
}

/* DATA.json: what train.py needs besides the tokens (see the file comment). */
static int ds_write_json(const struct ds *d, const char *path, const char *bin_path)
{
    const dream_model *m = d->model;
    int n_vocab = dream_model_n_vocab(m);
    json_t *root = json_object();
    json_t *stages = json_array(), *counts = json_object(), *eog = json_array(), *pieces = json_array();
    if (!root || !stages || !counts || !eog || !pieces) {
        json_decref(root);
        json_decref(stages);
        json_decref(counts);
        json_decref(eog);
        json_decref(pieces);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    json_object_set_new(root, "format", json_string("dream-dataset"));
    json_object_set_new(root, "version", json_integer(DS_VERSION));
    json_object_set_new(root, "data", json_string(bin_path));
    json_object_set_new(root, "model", json_string(dream_model_path(m)));
    json_object_set_new(root, "n_vocab", json_integer(n_vocab));
    json_object_set_new(root, "n_records", json_integer((json_int_t)d->n_records));
    json_object_set_new(root, "n_tokens", json_integer(d->tokens.n));
    json_object_set_new(root, "end_token", json_integer(d->end_token));
    json_object_set_new(root, "bos", json_integer(dream_model_bos(m)));
    for (int i = 0; i < d->n_stages; i++) {
        const struct ds_stage_count *c = &d->count[i];
        json_array_append_new(stages, json_string(d->stages[i]));
        json_object_set_new(counts, d->stages[i],
                            json_pack("{sI sI sI sI sI}", "records", (json_int_t)c->records, "skipped_long",
                                      (json_int_t)c->skipped_long, "prompt_tokens", (json_int_t)c->prompt_tokens,
                                      "answer_tokens", (json_int_t)c->answer_tokens, "longest", (json_int_t)c->longest));
    }
    json_object_set_new(root, "stages", stages);
    json_object_set_new(root, "counts", counts);
    json_object_set_new(root, "mismatched", json_integer(d->mismatched));
    int rc = 0;
    static const char hex[] = "0123456789abcdef";
    for (int id = 0; id < n_vocab && !rc; id++) {
        if (dream_model_is_eog(m, id)) json_array_append_new(eog, json_integer(id));
        char piece[256], hexbuf[2 * sizeof piece + 1];
        int k = dream_token_to_piece(m, id, true, piece, sizeof piece);
        if (k < 0) k = 0; /* no piece of our vocabularies is that long; shown as nothing */
        for (int i = 0; i < k; i++) {
            hexbuf[2 * i] = hex[(unsigned char)piece[i] >> 4];
            hexbuf[2 * i + 1] = hex[(unsigned char)piece[i] & 15];
        }
        hexbuf[2 * k] = '\0';
        if (json_array_append_new(pieces, json_string(hexbuf))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    json_object_set_new(root, "eog", eog);
    json_object_set_new(root, "pieces_hex", pieces);
    char *text = rc ? NULL : json_dumps(root, JSON_COMPACT);
    if (!rc && !text) rc = dream_error_set(DREAM_ENOMEM, "out of memory writing %s", path);
    if (!rc) rc = file_write_atomic(path, text, strlen(text));
    free(text);
    json_decref(root);
    return rc;
}

static void ds_print_counts(const struct ds *d)
{
    long tot[5] = {0};
    printf("%-12s %9s %12s %14s %14s %8s\n", "stage", "records", "skipped>max", "prompt_tokens", "answer_tokens",
           "longest");
    for (int i = 0; i < d->n_stages; i++) {
        const struct ds_stage_count *c = &d->count[i];
        printf("%-12s %9ld %12ld %14ld %14ld %8ld\n", d->stages[i], c->records, c->skipped_long, c->prompt_tokens,
               c->answer_tokens, c->longest);
        tot[0] += c->records;
        tot[1] += c->skipped_long;
        tot[2] += c->prompt_tokens;
        tot[3] += c->answer_tokens;
        if (c->longest > tot[4]) tot[4] = c->longest;
    }
    printf("%-12s %9ld %12ld %14ld %14ld %8ld\n", "total", tot[0], tot[1], tot[2], tot[3], tot[4]);
    for (int i = 0; i < d->n_other; i++)
        printf("not in --stages: %s (%ld records, skipped)\n", d->other[i], d->other_count[i]);
    if (d->other_overflow) printf("not in --stages: %ld more records of other stages, skipped\n", d->other_overflow);
    if (d->mismatched)
        printf("answers that do not round-trip through the tokenizer: %ld (skipped; the first are named above)\n",
               d->mismatched);
}

/* The end-of-turn token: text must be exactly one end-of-generation token. */
static int ds_end_token(struct ds *d, const char *text)
{
    struct dream_tokens t = {0};
    int rc = dream_tokenize(d->model, text, strlen(text), false, true, &t);
    if (!rc && (t.n != 1 || !dream_model_is_eog(d->model, t.ids[0])))
        rc = dream_error_set(DREAM_EINVAL,
                             "--end-token '%s' is not one end-of-generation token of %s (it gives %d tokens); the "
                             "greedy decode stops only at those",
                             text, dream_model_path(d->model), t.n);
    if (!rc) d->end_token = t.ids[0];
    dream_tokens_free(&t);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"model", required_argument, 0, 'm'},  {"stages", required_argument, 0, 's'},
        {"max-tokens", required_argument, 0, 'n'}, {"end-token", required_argument, 0, 'e'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"names-from-text", no_argument, 0, 'f'},
        {0, 0, 0, 0},
    };
    struct ds *d = calloc(1, sizeof *d);
    if (!d) {
        fprintf(stderr, "dream-dataset: out of memory\n");
        return 1;
    }
    const char *model_path = NULL, *out = NULL, *stages = DS_DEFAULT_STAGES, *end_text = "<|end|>";
    d->max_tokens = 8192;
    int rc = 0, c;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'h':
            ds_usage(stdout);
            free(d);
            return 0;
        case 'm': model_path = optarg; break;
        case 's': stages = optarg; break;
        case 'e': end_text = optarg; break;
        case 'o': out = optarg; break;
        case 'f': d->names_from_text = true; break;
        case 'n':
            errno = 0;
            d->max_tokens = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || d->max_tokens < 2 || d->max_tokens > (1L << 24))
                rc = dream_error_set(DREAM_EINVAL, "--max-tokens '%s' is not a whole number in [2, %ld]", optarg,
                                     1L << 24);
            break;
        case ':': rc = dream_error_set(DREAM_EINVAL, "option %s needs a value; see --help", argv[optind - 1]); break;
        default: rc = dream_error_set(DREAM_EINVAL, "unknown option '%s'; see --help", argv[optind - 1]); break;
        }
    }
    if (!rc && !model_path) rc = dream_error_set(DREAM_EINVAL, "--model PATH is required (its tokenizer and template)");
    if (!rc && !out) rc = dream_error_set(DREAM_EINVAL, "-o DATA.bin is required");
    if (!rc && optind >= argc) rc = dream_error_set(DREAM_EINVAL, "give at least one RECORDS.jsonl file");
    if (!rc) rc = ds_parse_stages(d, stages);
    char *json_path = NULL;
    if (!rc) {
        size_t n = strlen(out);
        json_path = malloc(n + 8);
        if (!json_path) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else {
            if (n > 4 && !strcmp(out + n - 4, ".bin")) n -= 4;
            snprintf(json_path, n + 8, "%.*s.json", (int)n, out);
        }
    }
    if (!rc) {
        struct dream_model_params mp = dream_model_default_params();
        mp.vocab_only = true;
        rc = dream_model_load(model_path, &mp, &d->model);
    }
    if (!rc) rc = ds_end_token(d, end_text);
    for (int i = optind; i < argc && !rc; i++) rc = ds_read_file(d, argv[i]);
    if (!rc) rc = ds_write_bin(d, out);
    if (!rc) rc = ds_write_json(d, json_path, out);
    if (!rc) {
        ds_print_counts(d);
        printf("dream-dataset: wrote %s (%zu records, %d tokens) and %s\n", out, d->n_records, d->tokens.n, json_path);
    }
    if (rc) fprintf(stderr, "dream-dataset: %s\n", dream_error_last());
    free(json_path);
    free(d->records);
    dream_tokens_free(&d->tokens);
    dream_model_free(d->model);
    free(d);
    return rc ? (rc == DREAM_EINVAL ? 2 : 1) : 0;
}
