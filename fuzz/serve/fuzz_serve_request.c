/* fuzz_serve_request.c — the server's request parsing on any bytes: a chat completion body is
 * accepted or refused with a message, never a crash or a leak; and the UTF-8 repair of
 * generated text always yields valid UTF-8 (repairing again changes nothing), holding back at
 * most an incomplete last character. A POST /v1/memory/dream body is likewise accepted (a known
 * stage or none, a batch of at least 1) or refused with a message. The header checks (guard.c)
 * take the input's first line as a Host value and the second as an Origin, and the whole input
 * as a Content-Type and as the --allow-host and --cors lists: what they let in must be of the
 * form they promise. */
#include "serve/serve_handlers.h"

#include "dream/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The guard's checks on header values made of the input. */
static void fuzz_guard(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return;
    memcpy(text, data, size);
    text[size] = 0; /* a header value ends at the first NUL, as MHD gives it */
    char *host = text, *origin = strchr(text, '\n');
    if (origin) *origin++ = 0;

    struct serve_guard g;
    if (serve_guard_init(&g, "127.0.0.1", "dream.lan, box.local", "http://localhost:5173") != 0) __builtin_trap();
    char name[256];
    bool named = serve_guard_host_name(host, name, sizeof name);
    if (named)
        for (const char *c = name; *c; c++)
            if (*c >= 'A' && *c <= 'Z') __builtin_trap();
    if (serve_guard_host_allowed(&g, host) && !named) __builtin_trap();
    if (origin) {
        enum serve_origin v = serve_guard_origin(&g, origin, host);
        if (v == SERVE_ORIGIN_SAME && (strncasecmp(origin, "http://", 7) || strcasecmp(origin + 7, host))) __builtin_trap();
        if (v == SERVE_ORIGIN_CORS && strcasecmp(origin, "http://localhost:5173")) __builtin_trap();
    }
    if (serve_guard_origin(&g, NULL, host) != SERVE_ORIGIN_NONE) __builtin_trap();
    serve_guard_free(&g);

    if (serve_guard_json_type(text) && strncasecmp(text + strspn(text, " \t"), "application/json", 16)) __builtin_trap();
    if (serve_guard_header_list(text) && text[strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_, \t")])
        __builtin_trap();

    /* the input as the two lists: taken (every name then lets itself in) or refused with a message */
    dream_error_clear();
    if (serve_guard_init(&g, "0.0.0.0", host, origin) == 0) {
        for (size_t i = 0; i < g.n_hosts; i++)
            if (!serve_guard_host_allowed(&g, g.hosts[i])) __builtin_trap();
        for (size_t i = 0; i < g.n_origins; i++)
            if (!serve_guard_origin_form(g.origins[i]) || serve_guard_origin(&g, g.origins[i], NULL) != SERVE_ORIGIN_CORS) __builtin_trap();
        serve_guard_free(&g);
    } else if (!dream_error_last()[0]) {
        __builtin_trap();
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dream_serve_params p;
    dream_serve_default_params(&p);
    p.max_tokens = 512;
    char err[512];
    err[0] = 0;
    if (serve_chat_check(&p, (const char *)data, size, err, sizeof err) != 0 && !err[0]) __builtin_trap();

    struct serve_dream_body body;
    err[0] = 0;
    if (serve_dream_parse((const char *)data, size, &body, err, sizeof err) == 0) {
        if ((body.p.stage && !dream_pipeline_stage_known(body.p.stage)) || body.p.batch < 1 || body.p.stage != body.stage) __builtin_trap();
        serve_dream_body_free(&body);
    } else if (!err[0]) {
        __builtin_trap();
    }

    struct dbuf once = {0}, twice = {0};
    if (serve_utf8_clean((const char *)data, size, &once) == 0 && serve_utf8_clean(once.data ? once.data : "", once.len, &twice) == 0) {
        if (once.len != twice.len || (once.len && memcmp(once.data, twice.data, once.len))) __builtin_trap();
        if (serve_utf8_complete(once.data ? once.data : "", once.len) != once.len) __builtin_trap();
    }
    size_t keep = serve_utf8_complete((const char *)data, size);
    if (keep > size || size - keep > 3) __builtin_trap();
    dbuf_free(&once);
    dbuf_free(&twice);
    fuzz_guard(data, size);
    return 0;
}
