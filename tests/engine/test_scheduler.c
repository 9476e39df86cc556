/* test_scheduler.c — the continuous-batching scheduler gives, token for token, the answers of
 * the exact serial decode (tiny Gemma 4 and Qwen3, Q8_0, flash attention off), at widths 1, 2,
 * 4, 8 and 16, prompts of 10 to 3,000 tokens, outputs of 1 to 300 tokens, with and without
 * prefix reuse; and requests queue rather than fail when the KV budget is short. Under answer
 * grammars too: per-request grammars give the serial decode's tokens at widths 1 and 4, and
 * a grammar llama.cpp rejects or one that dead-ends fails its request alone, at once. And
 * forced answers (replay) come out exactly as forced. Length-aware waves keep each step's
 * attention near its sequences' own lengths without changing an answer (widths 2, 4 and 16).
 * Flash attention on the CPU keeps all of this at widths 2 and 4 (run_flash). */
#include "dream/engine.h"
#include "dream/error.h"
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_REQ 12

static int failures;

#define CHECK(cond, ...)                                                                                                       \
    do {                                                                                                                       \
        if (!(cond)) {                                                                                                         \
            failures++;                                                                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                              \
            fprintf(stderr, __VA_ARGS__);                                                                                      \
            fprintf(stderr, "\n");                                                                                             \
        }                                                                                                                      \
    } while (0)

/* Deterministic prompts: a shared 200-token head (like a system turn), then a tail of varying
 * length drawn from the vocabulary's ordinary range. */
static void make_prompts(dream_model *m, struct dream_tokens *p, int *max_tokens)
{
    static const int tail_len[N_REQ] = {10, 2800, 40, 700, 5, 1200, 90, 300, 3, 1500, 60, 25};
    static const int out_len[N_REQ] = {1, 12, 300, 40, 7, 25, 64, 3, 120, 18, 2, 90};
    unsigned x = 12345;
    dream_token head[200];
    int n_vocab = dream_model_n_vocab(m);
    for (int i = 0; i < 200; i++) head[i] = 1000 + (int)((x = x * 1103515245u + 12345u) >> 8) % 20000;
    for (int r = 0; r < N_REQ; r++) {
        memset(&p[r], 0, sizeof p[r]);
        if (r % 3 != 2) /* most share the head; some do not */
            for (int i = 0; i < 200; i++) dream_tokens_push(&p[r], head[i]);
        for (int i = 0; i < tail_len[r]; i++) dream_tokens_push(&p[r], 1000 + (int)((x = x * 1103515245u + 12345u) >> 8) % (n_vocab < 30000 ? n_vocab - 1000 : 29000));
        max_tokens[r] = out_len[r];
    }
}

/* The GPU layout, run on this CPU: the argmax taken by llama.cpp's backend sampler gives the
 * host argmax's tokens (both keep the lowest id on a tie); the unified KV pool at width 1 puts
 * every cell where the serial decode does, so it answers exactly; at width 4 it finishes every
 * request at its length and still shares prefixes (its agreement is printed, not promised). */
static void run_gpu_layout(dream_model *m, const char *path, const struct dream_tokens *prompts, const int *max_tokens,
                           const struct dream_gen_result *ref)
{
    static const int pick[] = {0, 4, 6, 10, 11}; /* short ones: this adds seconds, not minutes */
    enum { N_PICK = (int)(sizeof pick / sizeof pick[0]) };
    const char *name = strrchr(path, '/') + 1;
    struct dream_tokens sub[N_PICK];
    int mt[N_PICK];
    for (int j = 0; j < N_PICK; j++) sub[j] = prompts[pick[j]], mt[j] = max_tokens[pick[j]];
    struct dream_gen_params gp = dream_gen_default_params();
    gp.ignore_eog = true;

    struct dream_session_params sp = dream_session_default_params();
    sp.n_ctx = 4096;
    sp.n_threads = 1;
    sp.device_sampling = 1;
    dream_session *s = NULL;
    CHECK(dream_session_new(m, &sp, &s) == 0, "device-sampling session: %s", dream_error_last());
    for (int j = 0; s && j < N_PICK; j++) {
        struct dream_gen_result r;
        gp.max_tokens = mt[j];
        CHECK(dream_generate(s, sub[j].ids, sub[j].n, &gp, &r) == 0, "device-sampling call %d: %s", pick[j], dream_error_last());
        const struct dream_gen_result *want = &ref[pick[j]];
        CHECK(r.n_tokens == want->n_tokens && !memcmp(r.tokens, want->tokens, (size_t)want->n_tokens * sizeof *r.tokens),
              "%s: request %d with the argmax taken by llama.cpp's sampler differs from the host argmax", name, pick[j]);
        dream_gen_result_free(&r);
        gp.digest = true;
        CHECK(dream_generate(s, sub[j].ids, sub[j].n, &gp, &r) == DREAM_EINVAL, "a digest with device sampling was not refused");
        gp.digest = false;
    }
    dream_session_free(s);

    for (int width = 1; width <= 4; width += 3) {
        struct dream_batch_params bp = dream_batch_default_params();
        bp.width = width;
        bp.seq_ctx = 4096;
        bp.n_threads = 1;
        bp.kv_unified = true;
        bp.device_sampling = width == 4;
        dream_batcher *b = NULL;
        if (dream_batcher_new(m, &bp, &b)) {
            CHECK(0, "unified batcher: %s", dream_error_last());
            return;
        }
        struct dream_gen_result out[N_PICK];
        int status[N_PICK], agree = 0;
        CHECK(dream_batcher_run(b, sub, N_PICK, &gp, mt, out, status) == 0, "unified run: %s", dream_error_last());
        for (int j = 0; j < N_PICK; j++) {
            const struct dream_gen_result *want = &ref[pick[j]];
            CHECK(status[j] == 0 && out[j].n_tokens == mt[j], "%s unified width %d: request %d failed or stopped early (%d of %d tokens)", name,
                  width, pick[j], out[j].n_tokens, mt[j]);
            bool eq = status[j] == 0 && out[j].n_tokens == want->n_tokens &&
                      !memcmp(out[j].tokens, want->tokens, (size_t)want->n_tokens * sizeof *want->tokens);
            agree += eq;
            if (width == 1) CHECK(eq, "%s unified width 1: request %d differs from the serial decode", name, pick[j]);
            dream_gen_result_free(&out[j]);
        }
        struct dream_batch_stats st = dream_batcher_stats(b);
        if (width == 4) CHECK(st.saved_tokens > 0, "%s unified width 4 shared no prefix", name);
        printf("%s unified width %d: %d of %d requests equal the serial decode, %ld prompt tokens from shared prefixes\n", name, width, agree,
               N_PICK, st.saved_tokens);
        dream_batcher_free(b);
    }
}

/* Requests that join a running batch (as HTTP clients arriving mid-run) get the serial
 * decode's answers too, and overlap the ones already running. */
struct joiner {
    struct dream_tokens *prompts;
    int *max_tokens;
    const struct dream_tokens *src;
    const int *src_max;
    const int *pick;
    int n_pick, calls, joined;
};

static int join_more(void *ud, int n)
{
    struct joiner *j = ud;
    j->calls++;
    if (n >= j->n_pick) return n;
    j->prompts[n] = j->src[j->pick[n]]; /* one arrives per call: a trickle, not a wave */
    j->max_tokens[n] = j->src_max[j->pick[n]];
    j->joined++;
    return n + 1;
}

static void run_joining(dream_model *m, const char *path, const struct dream_tokens *prompts, const int *max_tokens,
                        const struct dream_gen_result *ref)
{
    static const int pick[] = {2, 0, 4, 6, 10, 11, 8};
    enum { N_PICK = (int)(sizeof pick / sizeof pick[0]) };
    struct dream_tokens arr[N_PICK];
    int mt[N_PICK], status[N_PICK];
    struct dream_gen_result out[N_PICK];
    struct joiner j = {.prompts = arr, .max_tokens = mt, .src = prompts, .src_max = max_tokens, .pick = pick, .n_pick = N_PICK};
    arr[0] = prompts[pick[0]], mt[0] = max_tokens[pick[0]]; /* the run starts with one request, 300 tokens out */
    struct dream_batch_params bp = dream_batch_default_params();
    bp.width = 3;
    bp.seq_ctx = 4096;
    bp.n_threads = 1;
    dream_batcher *b = NULL;
    if (dream_batcher_new(m, &bp, &b)) {
        CHECK(0, "joining batcher: %s", dream_error_last());
        return;
    }
    struct dream_gen_params gp = dream_gen_default_params();
    gp.ignore_eog = true;
    gp.more = join_more;
    gp.capacity = N_PICK;
    gp.hook_ud = &j;
    CHECK(dream_batcher_run(b, arr, 1, &gp, mt, out, status) == 0, "joining run: %s", dream_error_last());
    long outs = 0;
    for (int i = 0; i < N_PICK; i++) {
        const struct dream_gen_result *want = &ref[pick[i]];
        CHECK(i < 1 + j.joined && status[i] == 0 && out[i].n_tokens == want->n_tokens &&
                  !memcmp(out[i].tokens, want->tokens, (size_t)want->n_tokens * sizeof *want->tokens),
              "%s: request %d that joined a running batch differs from the serial decode", strrchr(path, '/') + 1, pick[i]);
        outs += want->n_tokens;
        if (i < 1 + j.joined) dream_gen_result_free(&out[i]);
    }
    struct dream_batch_stats st = dream_batcher_stats(b);
    CHECK(j.joined == N_PICK - 1, "only %d of %d requests joined", j.joined, N_PICK - 1);
    CHECK(st.steps < outs - N_PICK, "joined requests did not overlap: %ld steps for %ld tokens", st.steps, outs);
    printf("%s: %d requests joined a running batch one at a time, %ld decode steps for %ld tokens, all equal to the serial decode\n",
           strrchr(path, '/') + 1, j.joined, st.steps, outs);
    dream_batcher_free(b);
}

/* A fold round: one group of questions per article, each group sharing its own chunk. With the
 * default slots (one per sequence) every group's chunk is computed once, not only two of them,
 * and the answers stay the serial decode's. */
static void run_prefix_groups(dream_model *m, const char *path)
{
    enum { GROUPS = 4, PER = 3, CHUNK = 160 };
    struct dream_tokens prompts[GROUPS * PER];
    int max_tokens[GROUPS * PER];
    unsigned x = 777;
    for (int g = 0; g < GROUPS; g++) {
        dream_token chunk[CHUNK];
        for (int i = 0; i < CHUNK; i++) chunk[i] = 1000 + (int)((x = x * 1103515245u + 12345u) >> 8) % 20000;
        for (int k = 0; k < PER; k++) {
            struct dream_tokens *t = &prompts[g * PER + k];
            memset(t, 0, sizeof *t);
            for (int i = 0; i < CHUNK; i++) dream_tokens_push(t, chunk[i]);
            for (int i = 0; i < 6; i++) dream_tokens_push(t, 1000 + (int)((x = x * 1103515245u + 12345u) >> 8) % 20000);
            max_tokens[g * PER + k] = 2;
        }
    }
    struct dream_session_params sp = dream_session_default_params();
    sp.n_ctx = 1024;
    sp.n_threads = 1;
    dream_session *s = NULL;
    CHECK(dream_session_new(m, &sp, &s) == 0, "session: %s", dream_error_last());
    struct dream_batch_params bp = dream_batch_default_params();
    bp.width = GROUPS;
    bp.seq_ctx = 1024;
    bp.n_threads = 1;
    dream_batcher *b = NULL;
    CHECK(s && dream_batcher_new(m, &bp, &b) == 0, "batcher: %s", dream_error_last());
    if (!s || !b) {
        dream_session_free(s);
        return;
    }
    struct dream_gen_result out[GROUPS * PER];
    int status[GROUPS * PER];
    struct dream_gen_params gp = dream_gen_default_params();
    gp.ignore_eog = true;
    CHECK(dream_batcher_run(b, prompts, GROUPS * PER, &gp, max_tokens, out, status) == 0, "run: %s", dream_error_last());
    for (int r = 0; r < GROUPS * PER; r++) {
        struct dream_gen_result ref;
        gp.max_tokens = max_tokens[r];
        CHECK(dream_generate(s, prompts[r].ids, prompts[r].n, &gp, &ref) == 0, "serial %d: %s", r, dream_error_last());
        CHECK(status[r] == 0 && out[r].n_tokens == ref.n_tokens && !memcmp(out[r].tokens, ref.tokens, (size_t)ref.n_tokens * sizeof *ref.tokens),
              "%s prefix groups: request %d differs from the serial decode", strrchr(path, '/') + 1, r);
        dream_gen_result_free(&ref);
        dream_gen_result_free(&out[r]);
        dream_tokens_free(&prompts[r]);
    }
    struct dream_batch_stats st = dream_batcher_stats(b);
    printf("  %s prefix groups: %d groups of %d at width %d, saved %ld prompt tokens (every group shared: %d)\n", strrchr(path, '/') + 1,
           GROUPS, PER, GROUPS, st.saved_tokens, GROUPS * PER * CHUNK);
    CHECK(st.saved_tokens >= GROUPS * PER * CHUNK, "only %ld prompt tokens shared; every group's chunk should be computed once",
          st.saved_tokens);
    dream_batcher_free(b);
    dream_session_free(s);
}

/* Answer shapes (see test_greedy_parity.c for the same against llama.cpp's own samplers). */
static const char grammar_yes_no[] = "root ::= (\"yes\" | \"no\")\n";
static const char grammar_json[] =
    "root ::= \"{\\\"chunks\\\": [\" chunk (\", \" chunk)? \"]}\"\n"
    "chunk ::= \"{\\\"start_message_id\\\": \" pos \", \\\"end_message_id\\\": \" pos \", \\\"label\\\": \\\"\" [a-zA-Z ]{1,8} \"\\\"}\"\n"
    "pos ::= [0-9] | \"1\" [0-9]\n";
static const char grammar_lines[] = "root ::= line{1,3}\nline ::= [A-Z] [a-z0-9 ]{0,12} \"\\n\"\n";
static const char grammar_bad[] = "root ::= \"unterminated\n";
static const char grammar_dead_end[] = "root ::= \"a\" \"\\x00\"\n"; /* no token's text holds a NUL */

static void run_grammar(dream_model *m, const char *path, const struct dream_tokens *prompts)
{
    const char *name = strrchr(path, '/') + 1;
    const char *grammars[N_REQ];
    for (int r = 0; r < N_REQ; r++) grammars[r] = r % 3 == 0 ? grammar_json : r % 3 == 1 ? grammar_yes_no : grammar_lines;
    grammars[4] = grammar_bad;
    grammars[7] = grammar_dead_end;

    struct dream_session_params sp = dream_session_default_params();
    sp.n_ctx = 4096;
    sp.n_threads = 1;
    dream_session *s = NULL;
    CHECK(dream_session_new(m, &sp, &s) == 0, "session: %s", dream_error_last());
    if (!s) return;
    struct dream_gen_result ref[N_REQ];
    static const char json_head[] = "{\"chunks\": [{\"start_message_id\": ";
    struct dream_gen_params gp = dream_gen_default_params();
    int mt[N_REQ], complete = 0;
    for (int r = 0; r < N_REQ; r++) {
        gp.max_tokens = mt[r] = grammars[r] == grammar_json ? 96 : 48;
        gp.grammar = grammars[r];
        int rc = dream_generate(s, prompts[r].ids, prompts[r].n, &gp, &ref[r]);
        if (r == 4) CHECK(rc == DREAM_EINVAL && strstr(dream_error_last(), "grammar"), "a grammar that does not parse gave %d (%s)", rc, dream_error_last());
        else if (r == 7) CHECK(rc == DREAM_EFORMAT && strstr(dream_error_last(), "allows no token"), "a dead-end grammar gave %d (%s)", rc, dream_error_last());
        else {
            CHECK(rc == 0, "serial under a grammar %d: %s", r, dream_error_last());
            complete += rc == 0 && ref[r].stopped_at_eog;
            if (rc == 0 && grammars[r] == grammar_yes_no)
                CHECK(!strcmp(ref[r].text, "yes") || !strcmp(ref[r].text, "no"), "the yes/no grammar let through \"%s\"", ref[r].text);
            if (rc == 0 && grammars[r] == grammar_json && ref[r].stopped_at_eog)
                CHECK(!strncmp(ref[r].text, json_head, strlen(json_head)), "the JSON grammar let through \"%s\"", ref[r].text);
        }
    }
    gp.grammar = NULL;
    gp.grammars = grammars;
    printf("  %s under grammars: %d of %d serial answers complete\n", name, complete, N_REQ - 2);
    CHECK(complete >= N_REQ - 4, "only %d answers under a grammar were complete", complete);

    static const int widths[] = {1, 4};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        struct dream_batch_params bp = dream_batch_default_params();
        bp.width = widths[w];
        bp.seq_ctx = 4096;
        bp.n_threads = 1;
        dream_batcher *b = NULL;
        if (dream_batcher_new(m, &bp, &b)) {
            CHECK(0, "grammar batcher: %s", dream_error_last());
            continue;
        }
        struct dream_gen_result out[N_REQ];
        int status[N_REQ];
        gp.ignore_eog = true;
        CHECK(dream_batcher_run(b, prompts, N_REQ, &gp, mt, out, status) == DREAM_EINVAL, "a grammar with ignore_eog was not refused");
        gp.ignore_eog = false;
        CHECK(dream_batcher_run(b, prompts, N_REQ, &gp, mt, out, status) == 0, "grammar run: %s", dream_error_last());
        int same = 0;
        long want_picks = 1; /* the dead-end request's one token before the dead end */
        for (int r = 0; r < N_REQ; r++) {
            if (r != 4 && r != 7 && !status[r]) want_picks += out[r].n_tokens + out[r].stopped_at_eog;
            if (r == 4 || r == 7) {
                CHECK(status[r] == (r == 4 ? DREAM_EINVAL : DREAM_EFORMAT), "%s width %d: bad grammar request %d got status %d", name, widths[w], r,
                      status[r]);
                continue;
            }
            bool eq = status[r] == 0 && out[r].n_tokens == ref[r].n_tokens && out[r].stopped_at_eog == ref[r].stopped_at_eog &&
                      !memcmp(out[r].tokens, ref[r].tokens, (size_t)ref[r].n_tokens * sizeof *ref[r].tokens);
            same += eq;
            CHECK(eq, "%s width %d: request %d under a grammar differs from the serial decode (status %d)", name, widths[w], r, status[r]);
            if (!status[r]) dream_gen_result_free(&out[r]);
        }
        struct dream_batch_stats st = dream_batcher_stats(b);
        long picks = st.grammar_picks[0] + st.grammar_picks[1] + st.grammar_picks[2];
        CHECK(picks == want_picks, "%s width %d: %ld tokens counted under grammars, %ld chosen", name, widths[w], picks, want_picks);
        printf("  %s grammar width=%d identical=%d/%d; of %ld tokens, %ld by the argmax, %ld among the 32 best, %ld over the vocabulary\n", name,
               widths[w], same, N_REQ - 2, picks, st.grammar_picks[0], st.grammar_picks[1], st.grammar_picks[2]);
        dream_batcher_free(b);
    }
    for (int r = 0; r < N_REQ; r++)
        if (r != 4 && r != 7) dream_gen_result_free(&ref[r]);
    dream_session_free(s);
}

/* Replay: a forced answer comes out token for token, serial and batched, then ends as at
 * end-of-generation; max_tokens still cuts it; an empty one ends at once; a forced token outside
 * the vocabulary fails its request alone; forced answers and grammars do not mix. The forced
 * tokens are arbitrary ids, not what the random-weight model would choose, so an engine that
 * kept its own choice fails here. */
static void run_forced(dream_model *m, const char *path, const struct dream_tokens *prompts)
{
    static const int pick[] = {0, 4, 6, 10, 11, 2};
    static const int forced_len[] = {5, 0, 30, 12, 3, 40};
    static const int budget[] = {20, 8, 30, 4, 16, 64}; /* request 2 ends at its budget, request 3 is cut */
    enum { N_PICK = (int)(sizeof pick / sizeof pick[0]) };
    const char *name = strrchr(path, '/') + 1;
    struct dream_tokens sub[N_PICK], forced[N_PICK];
    int mt[N_PICK];
    for (int j = 0; j < N_PICK; j++) {
        sub[j] = prompts[pick[j]];
        mt[j] = budget[j];
        memset(&forced[j], 0, sizeof forced[j]);
        for (int k = 0; k < forced_len[j]; k++) dream_tokens_push(&forced[j], 2000 + 37 * j + 11 * k);
    }
    /* what each request must give: its forced tokens up to its budget */
    for (int pass = 0; pass < 2; pass++) { /* 0: serial, 1: batched at width 4 */
        struct dream_gen_result out[N_PICK];
        int status[N_PICK] = {0};
        struct dream_gen_params gp = dream_gen_default_params();
        dream_batcher *b = NULL;
        long generated0 = 0;
        if (pass == 0) {
            struct dream_session_params sp = dream_session_default_params();
            sp.n_ctx = 4096;
            sp.n_threads = 1;
            dream_session *s = NULL;
            CHECK(dream_session_new(m, &sp, &s) == 0, "session: %s", dream_error_last());
            for (int j = 0; j < N_PICK && s; j++) {
                gp.max_tokens = mt[j];
                gp.forced = &forced[j];
                status[j] = dream_generate(s, sub[j].ids, sub[j].n, &gp, &out[j]);
            }
            dream_session_free(s);
        } else {
            struct dream_batch_params bp = dream_batch_default_params();
            bp.width = 4;
            bp.seq_ctx = 4096;
            bp.n_threads = 1;
            CHECK(dream_batcher_new(m, &bp, &b) == 0, "batcher: %s", dream_error_last());
            if (!b) return;
            gp.forced = forced;
            CHECK(dream_batcher_run(b, sub, N_PICK, &gp, mt, out, status) == 0, "forced run: %s", dream_error_last());
            generated0 = dream_batcher_stats(b).generated;
        }
        long want_generated = 0;
        for (int j = 0; j < N_PICK; j++) {
            int want = forced_len[j] < mt[j] ? forced_len[j] : mt[j];
            want_generated += want;
            bool eq = status[j] == 0 && out[j].n_tokens == want && (!want || !memcmp(out[j].tokens, forced[j].ids, (size_t)want * sizeof(dream_token)));
            CHECK(eq, "%s %s: request %d (%d forced, budget %d) gave %d tokens, not its forced ones (status %d)", name, pass ? "batched" : "serial",
                  j, forced_len[j], mt[j], status[j] ? -1 : out[j].n_tokens, status[j]);
            if (status[j]) continue;
            CHECK(out[j].stopped_at_eog == (forced_len[j] < mt[j]), "%s %s: request %d stopped_at_eog is %d", name, pass ? "batched" : "serial", j,
                  out[j].stopped_at_eog);
            char *text = NULL;
            CHECK(dream_detokenize(m, forced[j].ids, want, &text) == 0 && text && !strcmp(text, out[j].text), "%s: request %d's text is not its forced tokens'",
                  name, j);
            free(text);
            dream_gen_result_free(&out[j]);
        }
        if (b) {
            CHECK(generated0 == want_generated, "%s batched: %ld tokens generated, %ld forced", name, generated0, want_generated);
            /* a bad forced token fails its request alone; forced answers and a grammar do not mix */
            dream_token keep = forced[2].ids[3];
            forced[2].ids[3] = dream_model_n_vocab(m) + 5;
            CHECK(dream_batcher_run(b, sub, N_PICK, &gp, mt, out, status) == 0, "forced run 2: %s", dream_error_last());
            CHECK(status[2] == DREAM_EINVAL && strstr(dream_error_last(), "outside the vocabulary"), "a forced token outside the vocabulary gave status %d",
                  status[2]);
            CHECK(status[0] == 0 && out[0].n_tokens == forced_len[0], "request 0 failed beside the bad one");
            for (int j = 0; j < N_PICK; j++)
                if (!status[j]) dream_gen_result_free(&out[j]);
            forced[2].ids[3] = keep;
            gp.grammar = grammar_yes_no;
            CHECK(dream_batcher_run(b, sub, N_PICK, &gp, mt, out, status) == DREAM_EINVAL, "forced answers under a grammar were not refused");
            dream_batcher_free(b);
        }
    }
    printf("  %s forced decoding: serial and batched give the forced tokens\n", name);
    for (int j = 0; j < N_PICK; j++) dream_tokens_free(&forced[j]);
}

/* Length-aware waves (issue 16): two long prompts decoding beside short ones, at width 4. Flat
 * (wave_cells 0, the scheduling before and still the CPU default), every sequence of a step
 * attends over the fullest stream's cells; with waves (wave_cells 1024) a step is cut into waves
 * of similar length, so the cells attended come close to each sequence's own. The first long call finishes first, from slot 0:
 * the other long one must move down beside nothing but long ones, not a short call into its
 * place (a short one among long ones splits a step into three waves). Answers are the serial
 * decode's in both. */
static void run_waves(dream_model *m, const char *path)
{
    enum { N = 8 };
    static const int tail[N] = {2900, 2300, 120, 60, 200, 90, 150, 30};
    static const int outs[N] = {30, 60, 45, 50, 40, 45, 50, 40};
    const char *name = strrchr(path, '/') + 1;
    struct dream_tokens prompts[N];
    struct dream_gen_result ref[N];
    unsigned x = 4242;
    int n_vocab = dream_model_n_vocab(m);
    struct dream_session_params sp = dream_session_default_params();
    sp.n_ctx = 4096;
    sp.n_threads = 1;
    dream_session *s = NULL;
    CHECK(dream_session_new(m, &sp, &s) == 0, "session: %s", dream_error_last());
    struct dream_gen_params gp = dream_gen_default_params();
    gp.ignore_eog = true;
    for (int r = 0; r < N; r++) {
        memset(&prompts[r], 0, sizeof prompts[r]);
        for (int i = 0; i < tail[r]; i++)
            dream_tokens_push(&prompts[r], 1000 + (int)((x = x * 1103515245u + 12345u) >> 8) % (n_vocab < 30000 ? n_vocab - 1000 : 29000));
        gp.max_tokens = outs[r];
        CHECK(s && dream_generate(s, prompts[r].ids, prompts[r].n, &gp, &ref[r]) == 0, "serial %d: %s", r, dream_error_last());
    }
    dream_session_free(s);
    double ratio[2] = {0, 0};
    for (int waves = 0; waves <= 1; waves++) {
        struct dream_batch_params bp = dream_batch_default_params();
        bp.width = 4;
        bp.seq_ctx = 4096;
        bp.n_threads = 1;
        bp.wave_cells = waves ? 1024 : 0;
        dream_batcher *b = NULL;
        if (dream_batcher_new(m, &bp, &b)) {
            CHECK(0, "batcher: %s", dream_error_last());
            continue;
        }
        struct dream_gen_result out[N];
        int status[N];
        CHECK(dream_batcher_run(b, prompts, N, &gp, outs, out, status) == 0, "waves run: %s", dream_error_last());
        for (int r = 0; r < N; r++) {
            CHECK(status[r] == 0 && out[r].n_tokens == ref[r].n_tokens &&
                      !memcmp(out[r].tokens, ref[r].tokens, (size_t)ref[r].n_tokens * sizeof *ref[r].tokens),
                  "%s waves %d: request %d (%d prompt, %d out) differs from the serial decode", name, waves, r, prompts[r].n, outs[r]);
            dream_gen_result_free(&out[r]);
        }
        struct dream_batch_stats st = dream_batcher_stats(b);
        ratio[waves] = st.decode_cells_own ? (double)st.decode_cells / (double)st.decode_cells_own : 0;
        printf("  %s length-aware waves %s: %ld steps, %.2f ubatches each, %ld moves, decode attends %.2fx its own cells\n", name,
               waves ? "on " : "off", st.steps, st.steps ? (double)st.decode_runs / (double)st.steps : 0.0, st.moves, ratio[waves]);
        if (waves) {
            CHECK(ratio[1] < 1.15, "%s: with waves, decode attends %.2fx its own cells (want < 1.15x)", name, ratio[1]);
            /* 1.57 per step; 1.89 when a short call is moved in among the long ones */
            CHECK(st.decode_runs > st.steps && st.decode_runs * 10 <= st.steps * 17, "%s: %ld waves in %ld steps (want 1-1.7 per step)",
                  name, st.decode_runs, st.steps);
        } else CHECK(ratio[0] > 2.0, "%s: flat steps attend only %.2fx their own cells: the workload does not mix lengths", name, ratio[0]);
        dream_batcher_free(b);
    }
    for (int r = 0; r < N; r++) {
        dream_gen_result_free(&ref[r]);
        dream_tokens_free(&prompts[r]);
    }
}

/* The serial decode's answers to the N_REQ prompts, each run to its max_tokens, on a session
 * with these threads and flash_attn: the reference the batched runs are held to. ref is zeroed
 * (safe to free) where a call could not run. */
static void serial_refs(dream_model *m, int threads, int flash_attn, const struct dream_tokens *prompts, const int *max_tokens,
                        struct dream_gen_result *ref)
{
    memset(ref, 0, N_REQ * sizeof *ref);
    struct dream_session_params sp = dream_session_default_params();
    sp.n_ctx = 4096;
    sp.n_threads = threads;
    sp.flash_attn = flash_attn;
    dream_session *s = NULL;
    CHECK(dream_session_new(m, &sp, &s) == 0, "session (flash_attn %d): %s", flash_attn, dream_error_last());
    for (int r = 0; s && r < N_REQ; r++) {
        struct dream_gen_params gp = dream_gen_default_params();
        gp.max_tokens = max_tokens[r];
        gp.ignore_eog = true;
        CHECK(dream_generate(s, prompts[r].ids, prompts[r].n, &gp, &ref[r]) == 0, "serial %d (flash_attn %d): %s", r, flash_attn,
              dream_error_last());
        CHECK(ref[r].n_tokens == max_tokens[r], "serial %d made %d tokens", r, ref[r].n_tokens);
    }
    dream_session_free(s);
}

/* Runs the N_REQ prompts through a batcher of bp and checks every answer against ref (the
 * serial decode); what names the configuration in messages. Returns the batcher's stats
 * (steps 0 when the batcher could not be made). */
static struct dream_batch_stats batch_vs_serial(dream_model *m, const char *what, struct dream_batch_params bp,
                                                const struct dream_tokens *prompts, const int *max_tokens,
                                                const struct dream_gen_result *ref, int *identical)
{
    struct dream_batch_stats st = {0};
    *identical = 0;
    dream_batcher *b = NULL;
    if (dream_batcher_new(m, &bp, &b)) {
        CHECK(0, "%s: batcher: %s", what, dream_error_last());
        return st;
    }
    struct dream_gen_result out[N_REQ];
    int status[N_REQ];
    struct dream_gen_params gp = dream_gen_default_params();
    gp.ignore_eog = true;
    int rc = dream_batcher_run(b, prompts, N_REQ, &gp, max_tokens, out, status);
    CHECK(rc == 0, "%s: run: %s", what, dream_error_last());
    for (int r = 0; r < N_REQ && rc == 0; r++) {
        bool eq = status[r] == 0 && out[r].n_tokens == ref[r].n_tokens &&
                  memcmp(out[r].tokens, ref[r].tokens, (size_t)ref[r].n_tokens * sizeof *ref[r].tokens) == 0;
        *identical += eq;
        CHECK(eq, "%s: request %d (%d prompt, %d out) differs from the serial decode", what, r, prompts[r].n, max_tokens[r]);
        dream_gen_result_free(&out[r]);
    }
    st = dream_batcher_stats(b);
    dream_batcher_free(b);
    return st;
}

/* Flash attention on the CPU (docs/EXACTNESS.md, engine_internal.h): with two threads, so the
 * serial decode's single-token steps would split their KV cells across threads were they not
 * put on one, and with prefix reuse, whose 200-token head is cut at 192 (whole tiles of 64
 * rows) and backed off to 128 for the prompts of 205 and 210 tokens: their serial prefill is
 * one tiled chunk, and 13 or 18 rows after 192 would take the one-row path. Widths 2 and 4
 * against the serial decode with flash attention on. */
static void run_flash(dream_model *m, const char *path, const struct dream_tokens *prompts, const int *max_tokens)
{
    const char *name = strrchr(path, '/') + 1;
    struct dream_gen_result ref[N_REQ];
    serial_refs(m, 2, 1, prompts, max_tokens, ref);
    static const int widths[] = {2, 4};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        struct dream_batch_params bp = dream_batch_default_params();
        bp.width = widths[w];
        bp.seq_ctx = 4096;
        bp.n_threads = 2;
        bp.flash_attn = 1;
        char what[160];
        snprintf(what, sizeof what, "%s flash attention width %d", name, widths[w]);
        int same;
        struct dream_batch_stats st = batch_vs_serial(m, what, bp, prompts, max_tokens, ref, &same);
        printf("  %s flash_attn=1 threads=2 width=%d identical=%d/%d saved=%ld\n", name, widths[w], same, N_REQ, st.saved_tokens);
        /* of the eight prompts with the head, six reuse 192 tokens, those of 205 and 210 tokens 128 */
        CHECK(st.saved_tokens == 6 * 192 + 2 * 128, "%s: %ld prompt tokens reused (want 6 x 192 + 2 x 128)", what, st.saved_tokens);
    }
    for (int r = 0; r < N_REQ; r++) dream_gen_result_free(&ref[r]);
}

/* What a batcher leaves to the device: on the CPU the step is the serial decode's chunk, which
 * exactness needs, and waves are off; on a GPU the larger step measured faster there. */
static void run_device_defaults(dream_model *m, const char *path)
{
    struct dream_batch_params bp = dream_batch_default_params();
    bp.width = 2;
    bp.seq_ctx = 512;
    bp.n_threads = 1;
    CHECK(bp.step_tokens < 2, "the default step (%d) is not left to the device", bp.step_tokens);
    dream_batcher *b = NULL;
    if (dream_batcher_new(m, &bp, &b)) {
        CHECK(0, "device-default batcher: %s", dream_error_last());
        return;
    }
    struct dream_batch_params got = dream_batcher_params(b);
    bool gpu = dream_engine_has_gpu();
    CHECK(DREAM_STEP_TOKENS_CPU == dream_session_default_params().n_batch, "the CPU step (%d) is not the serial chunk (%d)",
          DREAM_STEP_TOKENS_CPU, dream_session_default_params().n_batch);
    CHECK(got.step_tokens == (gpu ? DREAM_STEP_TOKENS_GPU : DREAM_STEP_TOKENS_CPU), "%s: step left to the device became %d on a %s",
          strrchr(path, '/') + 1, got.step_tokens, gpu ? "GPU" : "CPU");
    CHECK(got.wave_cells == (gpu ? DREAM_WAVE_CELLS_GPU : DREAM_WAVE_CELLS_CPU), "%s: waves left to the device became %d",
          strrchr(path, '/') + 1, got.wave_cells);
    printf("%s: a step left to the device is %d tokens (%s)\n", strrchr(path, '/') + 1, got.step_tokens, gpu ? "GPU" : "CPU");
    dream_batcher_free(b);
}

static void run_model(const char *path)
{
    dream_model *m = NULL;
    if (dream_model_load(path, NULL, &m)) {
        CHECK(0, "load %s: %s", path, dream_error_last());
        return;
    }
    run_device_defaults(m, path);
    run_prefix_groups(m, path);
    run_waves(m, path);
    struct dream_tokens prompts[N_REQ];
    int max_tokens[N_REQ];
    make_prompts(m, prompts, max_tokens);

    /* The serial reference. */
    struct dream_gen_result ref[N_REQ];
    serial_refs(m, 1, 0, prompts, max_tokens, ref);

    static const int widths[] = {1, 2, 4, 8, 16};
    for (int reuse = 0; reuse <= 1; reuse++) {
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
            if (reuse && (widths[w] == 1 || widths[w] == 8)) continue; /* keep the suite quick */
            struct dream_batch_params bp = dream_batch_default_params();
            bp.width = widths[w];
            bp.seq_ctx = 4096;
            bp.n_threads = 1;
            bp.prefix_reuse = reuse;
            bp.wave_cells = reuse ? 256 : 0; /* length-aware waves (a GPU's default) at widths 2, 4 and 16 */
            char what[160];
            snprintf(what, sizeof what, "%s width %d reuse %d", strrchr(path, '/') + 1, widths[w], reuse);
            int same;
            struct dream_batch_stats st = batch_vs_serial(m, what, bp, prompts, max_tokens, ref, &same);
            printf("  %s width=%-2d prefix_reuse=%d waves=%d identical=%d/%d steps=%ld ubatches=%ld prefill=%ld saved=%ld\n",
                   strrchr(path, '/') + 1, widths[w], reuse, bp.wave_cells > 0, same, N_REQ, st.steps, st.decode_runs, st.prefill_tokens,
                   st.saved_tokens);
            if (reuse) CHECK(st.saved_tokens >= 200 * 6, "prefix reuse saved only %ld tokens", st.saved_tokens);
            else CHECK(st.saved_tokens == 0, "saved %ld tokens with reuse off", st.saved_tokens);
        }
    }

    /* More requests than sequences: they queue and all finish; a request whose prompt can never
     * fit a sequence fails alone. */
    {
        struct dream_batch_params bp = dream_batch_default_params();
        bp.width = 3;
        bp.seq_ctx = 2048;
        bp.n_threads = 1;
        dream_batcher *b = NULL;
        CHECK(dream_batcher_new(m, &bp, &b) == 0, "small batcher: %s", dream_error_last());
        struct dream_gen_result out[N_REQ];
        int status[N_REQ];
        struct dream_gen_params gp = dream_gen_default_params();
        gp.ignore_eog = true;
        int mt[N_REQ];
        memcpy(mt, max_tokens, sizeof mt);
        /* request 1 has 3,000 prompt tokens: more than a 2,048-cell sequence */
        CHECK(dream_batcher_run(b, prompts, N_REQ, &gp, mt, out, status) == 0, "small run: %s", dream_error_last());
        for (int r = 0; r < N_REQ; r++) {
            if (r == 1) {
                CHECK(status[r] == DREAM_ETOOBIG, "the oversized request got status %d", status[r]);
                continue;
            }
            CHECK(status[r] == 0 && out[r].n_tokens == ref[r].n_tokens &&
                      memcmp(out[r].tokens, ref[r].tokens, (size_t)ref[r].n_tokens * sizeof *ref[r].tokens) == 0,
                  "queued request %d differs or failed (status %d)", r, status[r]);
            dream_gen_result_free(&out[r]);
        }
        dream_batcher_free(b);
    }
    run_grammar(m, path, prompts);
    run_forced(m, path, prompts);
    run_gpu_layout(m, path, prompts, max_tokens, ref);
    run_joining(m, path, prompts, max_tokens, ref);
    run_flash(m, path, prompts, max_tokens);
    for (int r = 0; r < N_REQ; r++) {
        dream_gen_result_free(&ref[r]);
        dream_tokens_free(&prompts[r]);
    }
    dream_model_free(m);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) run_model(argv[i]);
    printf("SCHEDULER-EXACTNESS %s (%d failures)\n", failures ? "FAILED" : "passed", failures);
    return failures != 0 || argc < 2;
}
