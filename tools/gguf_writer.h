/*
 * gguf_writer.h — writes a GGUF file whose tensor data is generated, not held in memory.
 *
 * The model and adapter makers describe each tensor (name, type, shape, how to fill it) and hand
 * the list with a metadata context to gw_write(). The data of each tensor is produced in row
 * batches (deterministic pseudo-random values from the seed, the tensor's name and the row index,
 * a constant, or the caller's own F32/F16 values: trained weights), converted to the tensor's
 * type with ggml_quantize_chunk, and streamed to a
 * temporary file next to the output, which is renamed into place only when complete. So a file
 * of several GiB needs a few MiB of memory, and the same inputs give byte-identical files whatever
 * the thread count.
 */
#ifndef DREAM_TOOLS_GGUF_WRITER_H
#define DREAM_TOOLS_GGUF_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "ggml.h"
#include "gguf.h"

enum gw_fill {
    GW_FILL_RANDOM, /* uniform in [-a, a] with standard deviation `value` (a = value * sqrt(3)) */
    GW_FILL_CONST,  /* every element = value */
    GW_FILL_DATA,   /* the caller's values (gw_tensor.data), converted to the tensor's type */
};

struct gw_tensor {
    char name[GGML_MAX_NAME];
    enum ggml_type type;
    int n_dims;
    int64_t ne[4]; /* ggml order: ne[0] is the row length */
    enum gw_fill fill;
    float value;
    const void *data;          /* GW_FILL_DATA: row-major rows of ne[0] values; not owned, and
                                  must stay valid until gw_write returns */
    enum ggml_type data_type;  /* GW_FILL_DATA: GGML_TYPE_F32 or GGML_TYPE_F16 */
};

/* A growable list of tensor descriptions. A zeroed struct is an empty list. */
struct gw_list {
    struct gw_tensor *items;
    size_t len;
    size_t cap;
};

/* Appends a tensor description; the name is printf-formatted. Returns 0, DREAM_ENOMEM, or
 * DREAM_EINVAL when the formatted name does not fit GGML_MAX_NAME or a dimension is < 1. */
int gw_list_add(struct gw_list *l, enum ggml_type type, int n_dims, const int64_t ne[4], enum gw_fill fill,
                float value, const char *name_fmt, ...) __attribute__((format(printf, 7, 8)));

/* Appends a tensor whose values are data (data_type F32 or F16, row-major, gw_tensor_nelements
 * values; borrowed until gw_write returns). Errors as gw_list_add, and DREAM_EINVAL for another
 * data_type. */
int gw_list_add_data(struct gw_list *l, enum ggml_type type, int n_dims, const int64_t ne[4], const void *data,
                     enum ggml_type data_type, const char *name_fmt, ...) __attribute__((format(printf, 7, 8)));

void gw_list_free(struct gw_list *l);

/* Number of elements of one tensor. */
int64_t gw_tensor_nelements(const struct gw_tensor *t);

/* Total number of elements of every tensor of the list (the parameter count). */
int64_t gw_list_nelements(const struct gw_list *l);

/* Parses a --seed value (a non-negative decimal integer, up to 2^64-1) into *out. Returns 0 or
 * DREAM_EINVAL with a message quoting the value. */
int gw_parse_seed(const char *s, uint64_t *out);

/* Checks that a tensor's row length is a multiple of its type's block size (32 for Q8_0, 256 for
 * Q4_K). Returns 0 or DREAM_EINVAL with a message naming the tensor, its shape and the block size. */
int gw_check_shape(const struct gw_tensor *t);

/* Writes meta's key/value pairs plus every tensor of l (in list order) to path, atomically.
 * Tensors are added to meta (meta must hold no tensors before). seed selects the random values;
 * n_threads (>= 1) only changes the speed. On success *bytes_out (if not NULL) is the file size.
 * Returns 0, or DREAM_EIO (the message names the path and says what to check), DREAM_EINVAL (a
 * shape the type cannot hold), DREAM_ENOMEM. No partial file is left behind on failure. */
int gw_write(const char *path, struct gguf_context *meta, const struct gw_list *l, uint64_t seed, int n_threads,
             uint64_t *bytes_out);

/* Routes ggml's own log output (e.g. gguf parse errors) to dream's logger at debug level, so the
 * tools print only their own messages unless DREAM_LOG=debug. */
void gw_quiet_ggml_logs(void);

/* A typical number of worker threads for this machine (online CPUs, at most 32). */
int gw_default_threads(void);

#endif
