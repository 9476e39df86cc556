/* fuzz_serve_request.c — the server's request parsing on any bytes: a chat completion body is
 * accepted or refused with a message, never a crash or a leak; and the UTF-8 repair of
 * generated text always yields valid UTF-8 (repairing again changes nothing), holding back at
 * most an incomplete last character. A POST /v1/memory/dream body is likewise accepted (a known
 * stage or none, a batch of at least 1) or refused with a message. */
#include "serve/serve_handlers.h"

#include <stdint.h>
#include <string.h>

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
    return 0;
}
