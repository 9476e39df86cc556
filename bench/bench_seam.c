/* bench_seam.c — serial vs continuous batching on the Dreaming's own mix of calls.
 *
 * Workloads (deterministic from --seed), shaped like the stages (DESIGN.md §5):
 *   dreaming       segment (2–6k prompt tokens, 100–600 out), entity (~600 in, 10–40 out),
 *                  route (~400 in, 1–2 out, groups sharing one chunk as a prefix),
 *                  section patch (~1.5k in, 100–400 out); each stage's calls share a 60-token head
 *   dreaming-policy  the same calls (every length as in dreaming), each stage's head as long as
 *                  the pipeline's own prompts share: its system turn, instructions and policy
 *                  pages (segment 464, entity 186, section 359 tokens: the common prefix of every
 *                  call of the stage in a dream run over casual corpus 3001, Gemma 4 vocabulary)
 *   uniform        every call 256 in, 64 out
 *   shared-prefix  N calls sharing one 1,024-token prefix, 32-token tails, 32 out
 *   rounds         a fold round: groups of 6 calls sharing a 660-token chunk prefix (its own per
 *                  group), 40-token tails, 2 out; --prefix-slots N sets how many prefixes are kept
 *   long-short     of every 4 calls one has a 3,000-token prompt and three 300, all 100 out: what
 *                  length-aware waves save and cost, in isolation
 * Every output runs to its planned length (end-of-generation ignored), so random weights give
 * real lengths. Serial is dream_generate per call; batched is one dream_batcher_run per width;
 * both in this one process and run, so the ratio is meaningful on any machine. Prints one line
 * per (workload, width):
 *   SEAM-BENCH workload=W width=K speedup=X agreement=P saved_prefill=F
 * speedup = batched output tokens/s ÷ serial output tokens/s; agreement = % of calls whose tokens
 * equal the serial ones; saved_prefill = prompt tokens served from shared prefixes. */
#include "dream/engine.h"
#include "dream/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct workload {
    struct dream_tokens *prompts;
    int *out;
    int n;
};

static unsigned long long rng;
static int rnd(int lo, int hi) /* inclusive */
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (int)((rng >> 33) % (unsigned long long)(hi - lo + 1));
}

static void push_random(struct dream_tokens *t, int n)
{
    for (int i = 0; i < n; i++) dream_tokens_push(t, rnd(1000, 30000));
}

static void add(struct workload *w, const dream_token *prefix, int n_prefix, int n_tail, int out)
{
    w->prompts = realloc(w->prompts, (size_t)(w->n + 1) * sizeof *w->prompts);
    w->out = realloc(w->out, (size_t)(w->n + 1) * sizeof *w->out);
    struct dream_tokens *t = &w->prompts[w->n];
    memset(t, 0, sizeof *t);
    for (int i = 0; i < n_prefix; i++) dream_tokens_push(t, prefix[i]);
    push_random(t, n_tail);
    w->out[w->n++] = out;
}

/* The stage system turns are shared by all calls of a stage: a 60-token head per stage. */
static int uniform_in = 256, uniform_out = 64;

/* A dreaming call of a 60-token head and n_tail tokens after it, with the head head[0..n_head)
 * instead (n_head >= 60): the same prompt length, and the same random draws, so every later call
 * of the mix is dreaming's too. */
static void add_headed(struct workload *w, const dream_token *head, int n_head, int n_tail, int out)
{
    add(w, head, n_head, n_tail - (n_head - 60), out);
    for (int i = 60; i < n_head; i++) (void)rnd(0, 1);
}

/* The shared head of each stage in dreaming-policy (segment, entity, route, section); route's calls
 * share their chunk instead. */
static const int policy_head[4] = {464, 186, 60, 359};

static void make_workload(const char *name, int n, double scale, struct workload *w)
{
    memset(w, 0, sizeof *w);
    dream_token sys[4][464], chunk[400], shared[1024];
    for (int s = 0; s < 4; s++)
        for (int i = 0; i < 60; i++) sys[s][i] = rnd(1000, 30000);
    /* the longer heads of dreaming-policy, drawn apart so that every other length and token of
     * the mix is dreaming's */
    for (int s = 0; s < 4; s++)
        for (int i = 60; i < 464; i++) sys[s][i] = 1000 + (dream_token)(((unsigned)s * 7919u + (unsigned)i * 104729u) % 29000u);
    bool policy = !strcmp(name, "dreaming-policy");
    int head[4];
    for (int s = 0; s < 4; s++) head[s] = policy && (int)(policy_head[s] * scale) > 60 ? (int)(policy_head[s] * scale) : 60;
    if (!strcmp(name, "uniform")) {
        for (int i = 0; i < n; i++) add(w, NULL, 0, uniform_in, uniform_out);
    } else if (!strcmp(name, "rounds")) { /* fold rounds: groups of 6 yes/no questions, each group on its own chunk */
        for (int i = 0; i < n; i++) {
            if (i % 6 == 0) /* the next group's chunk: the stage head, then 600 tokens of its own */
                for (int j = 0; j < 660; j++) shared[j] = j < 60 ? sys[2][j] : rnd(1000, 30000);
            add(w, shared, 660, 40, 2);
        }
    } else if (!strcmp(name, "long-short")) {
        for (int i = 0; i < n; i++) add(w, sys[0], 60, (int)((i % 4 ? 240 : 2940) * scale), (int)(100 * scale));
    } else if (!strcmp(name, "shared-prefix")) {
        for (int i = 0; i < 1024; i++) shared[i] = rnd(1000, 30000);
        for (int i = 0; i < n; i++) add(w, shared, 1024, 32, 32);
    } else { /* dreaming(-policy): every 16 calls, 2 segment, 5 entity, 6 route (one chunk), 3 section */
        static const char stage[16] = "SEEEEERRSRRRRXXX";
        int chunk_len = (int)(350 * scale) < 64 ? 64 : (int)(350 * scale);
        for (int i = 0; i < n; i++) {
            switch (stage[i % 16]) {
            case 'S': add_headed(w, sys[0], head[0], (int)(rnd(2000, 6000) * scale), (int)(rnd(100, 600) * scale)); break;
            case 'E': add_headed(w, sys[1], head[1], (int)(rnd(500, 640) * scale), rnd(10, 40)); break;
            case 'R':
                if (i % 16 == 6) /* a new chunk that this group of route calls asks about */
                    for (int j = 0; j < chunk_len; j++) chunk[j] = j < 60 ? sys[2][j] : rnd(1000, 30000);
                add(w, chunk, chunk_len, (int)(50 * scale) < 8 ? 8 : (int)(50 * scale), rnd(1, 2));
                break;
            default: add_headed(w, sys[3], head[3], (int)(rnd(1300, 1600) * scale), (int)(rnd(100, 400) * scale)); break;
            }
        }
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_seam --model PATH [--workload dreaming|dreaming-policy|uniform|shared-prefix|rounds|long-short] [--n N] [--widths 2,4,8,8n]\n"
                    "                  [--threads N] [--scale X] [--seed N] [--no-reuse] [--flash-attn] [--uniform-shape IN,OUT]\n"
                    "                  [--unified] [--step N] [--serial-step N] [--host-sampling] [--device-sampling] [--no-compact] [--prefix-slots N]\n"
                    "  --unified        one shared KV pool, decode and prefill packed in one decode (GPU layout; not exact)\n"
                    "  --step N         batched step budget / prefill chunk (default: the device's, as the pipeline: 512 on\n"
                    "                   the CPU, 1024 on a GPU; the serial path's chunk is 512)\n"
                    "  --serial-step N  the serial path's prefill chunk (default 512, the session's; larger only\n"
                    "                   to see what a GPU's serial path would gain from it, not exact on a CPU)\n"
                    "  --host-sampling  take the argmax on the host even when the model runs on a GPU\n"
                    "  --device-sampling take it in llama.cpp's graph even on a CPU\n"
                    "  --prefix-slots N shared prefixes the batcher keeps (default 2)\n"
                    "  --no-compact     leave finished sequences' slots as holes (to measure what compaction saves);\n"
                    "                   a width written '8n' runs width 8 so, in the same run as the others\n"
                    "  --no-serial      batched runs only (no speedup, agreement 0: to compare widths quickly)\n"
                    "  --wave-cells N   length-aware decode waves: the attention (in KV cells) a wave must save\n"
                    "                   (default: the device's); a width written '4f' runs width 4 flat (one wave\n"
                    "                   per step, the scheduling before issue 16), '4w2048' with N = 2048\n");
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *workload = "dreaming", *widths_s = "2,4,8,16";
    int n = 16, threads = 0, seed = 1, fa = 0, step = -1, serial_step = 0, device_sampling = -1, prefix_slots = -1, wave_cells = -1;
    double scale = 1.0;
    bool reuse = true, unified = false, compact = true, serial = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--model") && v) model_path = argv[++i];
        else if (!strcmp(a, "--workload") && v) workload = argv[++i];
        else if (!strcmp(a, "--n") && v) n = atoi(argv[++i]);
        else if (!strcmp(a, "--widths") && v) widths_s = argv[++i];
        else if (!strcmp(a, "--threads") && v) threads = atoi(argv[++i]);
        else if (!strcmp(a, "--scale") && v) scale = atof(argv[++i]);
        else if (!strcmp(a, "--seed") && v) seed = atoi(argv[++i]);
        else if (!strcmp(a, "--no-reuse")) reuse = false;
        else if (!strcmp(a, "--flash-attn")) fa = 1;
        else if (!strcmp(a, "--unified")) unified = true;
        else if (!strcmp(a, "--no-compact")) compact = false;
        else if (!strcmp(a, "--no-serial")) serial = false;
        else if (!strcmp(a, "--prefix-slots") && v) prefix_slots = atoi(argv[++i]);
        else if (!strcmp(a, "--wave-cells") && v) wave_cells = atoi(argv[++i]);
        else if (!strcmp(a, "--host-sampling")) device_sampling = 0;
        else if (!strcmp(a, "--device-sampling")) device_sampling = 1; /* llama.cpp's sampler even on a CPU */
        else if (!strcmp(a, "--step") && v) step = atoi(argv[++i]);
        else if (!strcmp(a, "--serial-step") && v) serial_step = atoi(argv[++i]);
        else if (!strcmp(a, "--uniform-shape") && v) {
            if (sscanf(argv[++i], "%d,%d", &uniform_in, &uniform_out) != 2) {
                usage();
                return 2;
            }
        }
        else {
            usage();
            return 2;
        }
    }
    if (!model_path || n < 1) {
        usage();
        return 2;
    }
    rng = (unsigned long long)seed * 0x9E3779B97F4A7C15ULL + 1;
    dream_model *m = NULL;
    if (dream_model_load(model_path, NULL, &m)) {
        fprintf(stderr, "bench_seam: %s\n", dream_error_last());
        return 1;
    }
    struct workload w;
    make_workload(workload, n, scale, &w);
    long in_tokens = 0, out_tokens = 0;
    int max_prompt = 0;
    for (int i = 0; i < w.n; i++) {
        in_tokens += w.prompts[i].n;
        out_tokens += w.out[i];
        if (w.prompts[i].n > max_prompt) max_prompt = w.prompts[i].n;
    }
    int seq_ctx = ((max_prompt + 700) / 256 + 1) * 256;
    char step_s[16] = "device";
    if (step > 0) snprintf(step_s, sizeof step_s, "%d", step);
    printf("workload=%s calls=%d prompt_tokens=%ld output_tokens=%ld model=%s threads=%d flash_attn=%d kv=%s step=%s sampling=%s\n",
           workload, w.n, in_tokens, out_tokens, model_path, threads, fa, unified ? "unified" : "streams", step_s,
           device_sampling > 0 ? "device" : device_sampling ? "auto" : "host");
    fflush(stdout);

    /* Serial: the exact path, one call after another. */
    struct dream_session_params sp = dream_session_default_params();
    sp.n_ctx = seq_ctx;
    if (threads) sp.n_threads = threads;
    sp.flash_attn = fa;
    sp.device_sampling = device_sampling;
    if (serial_step > 0) sp.n_batch = serial_step;
    dream_session *s = NULL;
    if (dream_session_new(m, &sp, &s)) {
        fprintf(stderr, "bench_seam: %s\n", dream_error_last());
        return 1;
    }
    struct dream_gen_result *ref = calloc((size_t)w.n, sizeof *ref);
    struct dream_gen_params gp = dream_gen_default_params();
    gp.ignore_eog = true;
    double t0 = now_s();
    for (int i = 0; serial && i < w.n; i++) {
        gp.max_tokens = w.out[i];
        if (dream_generate(s, w.prompts[i].ids, w.prompts[i].n, &gp, &ref[i])) {
            fprintf(stderr, "bench_seam: serial call %d: %s\n", i, dream_error_last());
            return 1;
        }
    }
    double serial_s = now_s() - t0;
    dream_session_free(s);
    double serial_tps = out_tokens / serial_s;
    double pf_ms = 0, dec_ms = 0;
    long pf_tok = 0, dec_tok = 0;
    for (int i = 0; i < w.n; i++) {
        pf_ms += ref[i].prefill_ms;
        dec_ms += ref[i].decode_ms;
        pf_tok += ref[i].n_prompt;
        dec_tok += ref[i].n_tokens > 0 ? ref[i].n_tokens - 1 : 0; /* the first token comes from the prefill */
    }
    printf("serial chunk=%d: %.2f s, %.3f calls/s, %.2f output tok/s (single-call prefill %.1f tok/s, decode %.1f tok/s)\n",
           sp.n_batch > 0 ? sp.n_batch : 512, serial_s, w.n / serial_s, serial_tps, pf_ms > 0 ? pf_tok * 1000.0 / pf_ms : 0.0, dec_ms > 0 ? dec_tok * 1000.0 / dec_ms : 0.0);
    fflush(stdout);

    char *ws = strdup(widths_s);
    for (char *tok = strtok(ws, ","); tok; tok = strtok(NULL, ",")) {
        int width = atoi(tok);
        if (width < 1) continue;
        struct dream_batch_params bp = dream_batch_default_params();
        bp.width = width;
        bp.seq_ctx = seq_ctx;
        if (threads) bp.n_threads = threads;
        bp.flash_attn = fa;
        bp.prefix_reuse = reuse;
        bp.kv_unified = unified;
        bp.compact = compact && !strchr(tok, 'n'); /* "8n": width 8 without compaction */
        if (step > 0) bp.step_tokens = step;
        bp.device_sampling = device_sampling;
        if (prefix_slots >= 0) bp.prefix_slots = prefix_slots;
        bp.wave_cells = wave_cells;
        if (strchr(tok, 'f')) bp.wave_cells = 0; /* "4f": flat, one wave per step */
        if (strchr(tok, 'w')) bp.wave_cells = atoi(strchr(tok, 'w') + 1); /* "4w2048" */
        dream_batcher *b = NULL;
        if (dream_batcher_new(m, &bp, &b)) {
            fprintf(stderr, "bench_seam: width %d: %s\n", width, dream_error_last());
            continue;
        }
        struct dream_gen_result *out = calloc((size_t)w.n, sizeof *out);
        int *status = calloc((size_t)w.n, sizeof *status);
        t0 = now_s();
        int rc = dream_batcher_run(b, w.prompts, w.n, &gp, w.out, out, status);
        double bs = now_s() - t0;
        if (rc) {
            fprintf(stderr, "bench_seam: width %d: %s\n", width, dream_error_last());
            return 1;
        }
        int agree = 0;
        for (int i = 0; i < w.n; i++) {
            agree += status[i] == 0 && out[i].n_tokens == ref[i].n_tokens &&
                     !memcmp(out[i].tokens, ref[i].tokens, (size_t)ref[i].n_tokens * sizeof *ref[i].tokens);
            dream_gen_result_free(&out[i]);
        }
        struct dream_batch_stats st = dream_batcher_stats(b);
        double tps = out_tokens / bs;
        printf("batched width=%s%s step=%d: %.2f s, %.3f calls/s, %.2f output tok/s, prefill computed %ld of %ld, %ld steps "
               "(%.1f ms each, %.2f ubatches each, %ld moves), %.0f ms in prefill-only decodes, decode attends %.2fx its own cells (%.0f per step)\n",
               tok, unified ? " unified" : bp.compact ? "" : " no-compact", dream_batcher_params(b).step_tokens, bs, w.n / bs, tps, st.prefill_tokens, st.prompt_tokens, st.steps,
               st.steps ? st.step_ms / (double)st.steps : 0.0, st.steps ? (double)st.decode_runs / (double)st.steps : 0.0, st.moves,
               st.prefill_ms, st.decode_cells_own ? (double)st.decode_cells / (double)st.decode_cells_own : 0.0,
               st.steps ? (double)st.decode_cells / (double)st.steps : 0.0);
        /* where the batched run's wall time went: decode steps (their llama_decode calls, the wait
         * for their tokens), prefill calls, slot moves and admission, and the rest: on a GPU
         * mostly the first-token reads after each prompt's last prefill chunk, which wait for that
         * chunk (docs/BENCHMARKS.md, "where the 128-call mix's time goes"); then finishing
         * requests and the loop itself */
        double rest = bs * 1000.0 - st.step_ms - st.prefill_ms - st.admit_ms;
        printf("batched width=%s time: decode calls %.0f ms, token waits %.0f ms, other step work %.0f ms, prefill calls %.0f ms, moves and admission %.0f ms, rest %.0f ms\n",
               tok, st.step_call_ms, st.step_wait_ms, st.step_ms - st.step_call_ms - st.step_wait_ms, st.prefill_ms, st.admit_ms, rest);
        printf("SEAM-BENCH workload=%s width=%s speedup=%.2f agreement=%.1f saved_prefill=%ld\n", workload, tok, serial ? tps / serial_tps : 0.0,
               100.0 * agree / w.n, st.saved_tokens);
        fflush(stdout);
        free(out);
        free(status);
        dream_batcher_free(b);
    }
    free(ws);
    for (int i = 0; i < w.n; i++) {
        dream_gen_result_free(&ref[i]);
        dream_tokens_free(&w.prompts[i]);
    }
    free(ref);
    free(w.prompts);
    free(w.out);
    dream_model_free(m);
    return 0;
}
