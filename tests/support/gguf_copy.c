/* gguf_copy.c — see gguf_copy.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "gguf_copy.h"

#include <ggml.h>
#include <gguf.h>

void gguf_copy_edited(const char *src, const char *dst, void (*edit)(struct gguf_context *, struct ggml_context *, const void *), const void *arg)
{
    struct ggml_context *gctx = NULL;
    struct gguf_init_params ip = {.no_alloc = false, .ctx = &gctx};
    struct gguf_context *g = gguf_init_from_file(src, ip), *o = gguf_init_empty();
    assert_non_null(g);
    gguf_set_kv(o, g);
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) gguf_add_tensor(o, ggml_get_tensor(gctx, gguf_get_tensor_name(g, i)));
    edit(o, gctx, arg);
    assert_true(gguf_write_to_file(o, dst, false));
    gguf_free(o);
    gguf_free(g);
    ggml_free(gctx);
}
