/* gguf_copy.h — tests: a copy of a GGUF file with its metadata or tensors edited (a damaged
 * setting, a NaN tensor, another chat template), written with ggml's own GGUF writer. */
#ifndef DREAM_TEST_GGUF_COPY_H
#define DREAM_TEST_GGUF_COPY_H

struct gguf_context;
struct ggml_context;

/* Copies src to dst: every key and tensor as loaded, then edit(out, tensors, arg) changes the
 * copy (out's keys; the tensors' data in place). Fails the test when src cannot be read or dst
 * written. */
void gguf_copy_edited(const char *src, const char *dst, void (*edit)(struct gguf_context *out, struct ggml_context *tensors, const void *arg),
                      const void *arg);

#endif
