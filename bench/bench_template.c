/*
 * bench_template.c — microseconds per render of the Gemma 4 chat template for one seam call:
 * a system turn plus a user turn carrying a ~16 KB (~4,000-token) conversation chunk, with the
 * generation prompt, as the chunk stage sends it.
 *
 * Usage: bench_template [TEMPLATE.jinja] [ITERATIONS]
 * (default: google-gemma-4-31B-it.jinja of the pinned llama.cpp tree, 2000 iterations)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dream/error.h"
#include "dream/template.h"
#include "util/file.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    char def[4096];
    const char *src_dir = getenv("LLAMA_SRC") ? getenv("LLAMA_SRC") : DREAM_LLAMA_SRC;
    snprintf(def, sizeof(def), "%s/models/templates/google-gemma-4-31B-it.jinja", src_dir);
    const char *path = argc > 1 ? argv[1] : def;
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    size_t len;
    char *src = NULL;
    if (file_read_all(path, 0, &src, &len)) {
        fprintf(stderr, "bench_template: cannot read %s\n", path);
        return 1;
    }
    /* a conversation chunk of ~16 KB: numbered turns of ordinary prose */
    size_t cap = 17000, n = 0;
    char *chunk = malloc(cap + 200);
    for (int turn = 0; n < 16000; turn++)
        n += (size_t)snprintf(chunk + n, cap + 200 - n,
                              "[%d] %s: I have been thinking about the garden again; the tomatoes by the south "
                              "fence need more sun, and the basil keeps bolting when the nights get warm.\n",
                              turn, turn % 2 ? "assistant" : "user");
    struct dream_chat_message msgs[] = {
        {"system", "You split a conversation into single-topic chunks. Answer with JSON only: a list of "
                   "{\"start\": N, \"end\": N, \"topic\": \"...\"} objects covering every turn in order."},
        {"user", chunk},
    };
    dream_template *t = NULL;
    double t0 = now_us();
    if (dream_template_parse(src, len, &t)) {
        fprintf(stderr, "bench_template: %s\n", dream_error_last());
        return 1;
    }
    double parse_us = now_us() - t0;
    struct dream_chat_input in = {.messages = msgs, .n_messages = 2};
    dream_template_default_params(&in.params);
    in.params.add_generation_prompt = true;
    in.params.bos_token = "<bos>";
    struct dream_render out;
    size_t out_len = 0;
    for (int i = 0; i < 20; i++) { /* warm-up */
        if (dream_template_render(t, &in, &out)) {
            fprintf(stderr, "bench_template: %s\n", dream_error_last());
            return 1;
        }
        out_len = out.len;
        dream_render_free(&out);
    }
    t0 = now_us();
    for (int i = 0; i < iters; i++) {
        dream_template_render(t, &in, &out);
        dream_render_free(&out);
    }
    double per = (now_us() - t0) / iters;
    printf("bench_template: template=%s chunk_bytes=%zu output_bytes=%zu parse_us=%.1f iterations=%d us_per_render=%.2f\n",
           path, n, out_len, parse_us, iters, per);
    dream_template_free(t);
    free(chunk);
    free(src);
    return 0;
}
