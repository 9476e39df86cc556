/*
 * weights.h — reads trained weights written by train/train.py (and train/ref_forward.py) so that
 * dream-make-model and dream-make-adapter can put them into a GGUF.
 *
 * A weights file is PREFIX.json, the index, plus the raw data: PREFIX.bin, or the parts
 * PREFIX.bin.0, PREFIX.bin.1, ... (read in order and concatenated up to total_bytes; the GPU
 * machine returns files of at most 16 MiB, so train.py splits). The index:
 *
 *   {"format": "dream-weights", "version": 1, "kind": "model" | "lora",
 *    "config": {...},                          numbers (and strings) the maker reads by name
 *    "total_bytes": N,                         the size of the concatenated data
 *    "tensors": {"blk.0.attn_q.weight": {"shape": [384, 384], "dtype": "f16", "offset": 0}, ...}}
 *
 * Names are the GGUF tensor names. shape is row-major (numpy / PyTorch order: [n_out, n_in] for a
 * matrix), so the GGUF's ne[] is shape reversed. dtype is f16 or f32, little-endian; offset is in
 * bytes into the concatenated data and a multiple of the element size.
 */
#ifndef DREAM_TOOLS_WEIGHTS_H
#define DREAM_TOOLS_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml.h"

struct dw_tensor {
    char name[GGML_MAX_NAME];
    int n_dims;
    int64_t ne[4];             /* ggml order (shape reversed), unused dimensions 1 */
    enum ggml_type data_type;  /* GGML_TYPE_F16 or GGML_TYPE_F32 */
    const void *data;          /* into the weights' data buffer */
    bool used;                 /* set by dw_find, so dw_check_all_used can name leftovers */
};

struct dw_weights {
    char *prefix;
    char kind[16];             /* "model" or "lora" */
    void *config;              /* the index's "config" object (a json_t *, owned) */
    char *data;                /* the concatenated data (owned) */
    size_t data_len;
    struct dw_tensor *tensors;
    size_t n_tensors;
};

/* Loads PREFIX.json and its data. Every tensor is checked against the data's size (so a missing
 * part is an error naming the prefix, not garbage weights). Returns 0, DREAM_ENOTFOUND,
 * DREAM_EFORMAT (the message names the file, the tensor and the field), DREAM_EIO, DREAM_ENOMEM.
 * On success the caller frees w with dw_free. */
int dw_load(const char *prefix, struct dw_weights *w);
void dw_free(struct dw_weights *w);

/* The tensor called name, or NULL; marks it used. */
struct dw_tensor *dw_find(struct dw_weights *w, const char *name);

/* The tensor called name with exactly the ggml shape ne[0..n_dims), or an error: DREAM_EFORMAT
 * naming the tensor, the prefix and both shapes (or saying it is missing). */
int dw_expect(struct dw_weights *w, const char *name, int n_dims, const int64_t ne[4], struct dw_tensor **out);

/* DREAM_EFORMAT naming the first tensor that dw_find never returned (a tensor the maker does not
 * know is a mistake in the weights, never silently dropped), else 0. */
int dw_check_all_used(const struct dw_weights *w);

/* config.key as an integer in [lo, hi] / a finite number / a string; missing or mistyped keys are
 * DREAM_EFORMAT naming the key and the index file. dw_config_str's result is owned by w. */
int dw_config_int(const struct dw_weights *w, const char *key, long lo, long hi, long *out);
int dw_config_float(const struct dw_weights *w, const char *key, double *out);
int dw_config_str(const struct dw_weights *w, const char *key, const char **out);

#endif
