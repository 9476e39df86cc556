/* weights.c — reads PREFIX.json + PREFIX.bin[.N] trained weights (see weights.h). */
#include "weights.h"

#include "dream/error.h"
#include "util/file.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The index is small (names and shapes); a few MiB is far more than a model of ours needs. */
#define DW_INDEX_MAX (16u << 20)
/* More parts than this is a runaway, not a model that fits our 40 MB target. */
#define DW_MAX_PARTS 4096

void dw_free(struct dw_weights *w)
{
    free(w->prefix);
    if (w->config) json_decref((json_t *)w->config);
    free(w->data);
    free(w->tensors);
    memset(w, 0, sizeof *w);
}

/* Appends the whole file at path to w->data. */
static int dw_append_file(struct dw_weights *w, const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = file_read_all(path, 0, &buf, &len);
    if (rc) return rc;
    char *p = realloc(w->data, w->data_len + len + 1);
    if (!p) {
        free(buf);
        return dream_error_set(DREAM_ENOMEM, "out of memory reading %s (%zu bytes)", path, len);
    }
    memcpy(p + w->data_len, buf, len);
    w->data = p;
    w->data_len += len;
    free(buf);
    return 0;
}

/* Reads PREFIX.bin, else PREFIX.bin.0, PREFIX.bin.1, ... until total bytes are read or a part is
 * missing. Parts past total are not read: a later, smaller save leaves an earlier save's extra
 * parts behind when the writer does not remove them. */
static int dw_read_data(struct dw_weights *w, size_t total)
{
    size_t n = strlen(w->prefix) + 32;
    char *path = malloc(n);
    if (!path) return dream_error_set(DREAM_ENOMEM, "out of memory");
    snprintf(path, n, "%s.bin", w->prefix);
    int rc = 0;
    if (file_exists(path)) {
        rc = dw_append_file(w, path);
    } else {
        int parts = 0;
        for (; parts < DW_MAX_PARTS && (parts == 0 || w->data_len < total); parts++) {
            snprintf(path, n, "%s.bin.%d", w->prefix, parts);
            if (!file_exists(path)) break;
            if ((rc = dw_append_file(w, path))) break;
        }
        if (!rc && parts == 0)
            rc = dream_error_set(DREAM_ENOTFOUND, "the data of %s.json is missing: neither %s.bin nor %s.bin.0 exists",
                                 w->prefix, w->prefix, w->prefix);
    }
    free(path);
    return rc;
}

/* Fills t from one entry of the index's "tensors" object. */
static int dw_parse_tensor(const struct dw_weights *w, const char *name, json_t *v, struct dw_tensor *t)
{
    memset(t, 0, sizeof *t);
    if (strlen(name) >= sizeof t->name)
        return dream_error_set(DREAM_EFORMAT, "%s.json: tensor name '%s' is longer than %d characters", w->prefix, name,
                               GGML_MAX_NAME - 1);
    snprintf(t->name, sizeof t->name, "%s", name);
    json_t *shape = json_object_get(v, "shape");
    json_t *dtype = json_object_get(v, "dtype");
    json_t *offset = json_object_get(v, "offset");
    if (!json_is_object(v) || !json_is_array(shape) || !json_is_string(dtype) || !json_is_integer(offset))
        return dream_error_set(DREAM_EFORMAT,
                               "%s.json: tensor %s needs \"shape\" (array), \"dtype\" (\"f16\" or \"f32\") and "
                               "\"offset\" (integer)",
                               w->prefix, name);
    size_t nd = json_array_size(shape);
    if (nd < 1 || nd > 4)
        return dream_error_set(DREAM_EFORMAT, "%s.json: tensor %s has %zu dimensions; 1 to 4 are supported", w->prefix,
                               name, nd);
    t->n_dims = (int)nd;
    int64_t nel = 1;
    for (int i = 0; i < 4; i++) t->ne[i] = 1;
    for (size_t i = 0; i < nd; i++) {
        json_t *d = json_array_get(shape, i);
        if (!json_is_integer(d) || json_integer_value(d) < 1 || json_integer_value(d) > (1LL << 31))
            return dream_error_set(DREAM_EFORMAT, "%s.json: tensor %s: shape[%zu] is not a whole number >= 1",
                                   w->prefix, name, i);
        t->ne[nd - 1 - i] = (int64_t)json_integer_value(d); /* row-major shape → ggml ne */
        nel *= t->ne[nd - 1 - i];
    }
    const char *dt = json_string_value(dtype);
    size_t esize;
    if (!strcmp(dt, "f16")) {
        t->data_type = GGML_TYPE_F16;
        esize = 2;
    } else if (!strcmp(dt, "f32")) {
        t->data_type = GGML_TYPE_F32;
        esize = 4;
    } else {
        return dream_error_set(DREAM_EFORMAT, "%s.json: tensor %s has dtype '%s'; use f16 or f32", w->prefix, name, dt);
    }
    json_int_t off = json_integer_value(offset);
    size_t bytes = (size_t)nel * esize;
    if (off < 0 || (size_t)off % esize != 0 || (size_t)off > w->data_len || bytes > w->data_len - (size_t)off)
        return dream_error_set(DREAM_EFORMAT,
                               "%s.json: tensor %s at offset %lld (%zu bytes) lies outside the %zu bytes of data or is "
                               "misaligned; is a part PREFIX.bin.N missing?",
                               w->prefix, name, (long long)off, bytes, w->data_len);
    t->data = w->data + off;
    return 0;
}

int dw_load(const char *prefix, struct dw_weights *w)
{
    memset(w, 0, sizeof *w);
    w->prefix = strdup(prefix);
    if (!w->prefix) return dream_error_set(DREAM_ENOMEM, "out of memory");
    size_t n = strlen(prefix) + 8;
    char *index_path = malloc(n);
    if (!index_path) {
        dw_free(w);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    snprintf(index_path, n, "%s.json", prefix);
    char *text = NULL;
    size_t len = 0;
    int rc = file_read_all(index_path, DW_INDEX_MAX, &text, &len);
    json_t *root = NULL;
    if (!rc) {
        json_error_t jerr;
        root = json_loadb(text, len, 0, &jerr);
        if (!root)
            rc = dream_error_set(DREAM_EFORMAT, "%s:%d: not valid JSON: %s", index_path, jerr.line, jerr.text);
    }
    free(text);
    json_t *fmt = root ? json_object_get(root, "format") : NULL;
    json_t *ver = root ? json_object_get(root, "version") : NULL;
    json_t *kind = root ? json_object_get(root, "kind") : NULL;
    json_t *config = root ? json_object_get(root, "config") : NULL;
    json_t *tensors = root ? json_object_get(root, "tensors") : NULL;
    json_t *total = root ? json_object_get(root, "total_bytes") : NULL;
    if (!rc && (!json_is_string(fmt) || strcmp(json_string_value(fmt), "dream-weights") != 0))
        rc = dream_error_set(DREAM_EFORMAT, "%s: \"format\" is not \"dream-weights\"; write it with train/train.py",
                             index_path);
    if (!rc && (!json_is_integer(ver) || json_integer_value(ver) != 1))
        rc = dream_error_set(DREAM_EFORMAT, "%s: \"version\" is not 1 (this tool reads version 1)", index_path);
    if (!rc && (!json_is_string(kind) || strlen(json_string_value(kind)) >= sizeof w->kind))
        rc = dream_error_set(DREAM_EFORMAT, "%s: \"kind\" must be \"model\" or \"lora\"", index_path);
    if (!rc && (!json_is_object(config) || !json_is_object(tensors) || !json_is_integer(total)))
        rc = dream_error_set(DREAM_EFORMAT, "%s needs a \"config\" object, a \"tensors\" object and \"total_bytes\"",
                             index_path);
    if (!rc) {
        snprintf(w->kind, sizeof w->kind, "%s", json_string_value(kind));
        w->config = json_incref(config);
        rc = dw_read_data(w, json_integer_value(total) > 0 ? (size_t)json_integer_value(total) : 0);
    }
    if (!rc && (json_int_t)w->data_len != json_integer_value(total))
        rc = dream_error_set(DREAM_EFORMAT,
                             "%s says total_bytes %lld but its data has %zu bytes; a part PREFIX.bin.N is missing or "
                             "truncated",
                             index_path, (long long)json_integer_value(total), w->data_len);
    if (!rc) {
        w->n_tensors = json_object_size(tensors);
        w->tensors = calloc(w->n_tensors ? w->n_tensors : 1, sizeof *w->tensors);
        if (!w->tensors) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    if (!rc) {
        size_t i = 0;
        const char *name;
        json_t *v;
        json_object_foreach(tensors, name, v)
        {
            if ((rc = dw_parse_tensor(w, name, v, &w->tensors[i++]))) break;
        }
    }
    json_decref(root);
    free(index_path);
    if (rc) dw_free(w);
    return rc;
}

struct dw_tensor *dw_find(struct dw_weights *w, const char *name)
{
    for (size_t i = 0; i < w->n_tensors; i++)
        if (!strcmp(w->tensors[i].name, name)) {
            w->tensors[i].used = true;
            return &w->tensors[i];
        }
    return NULL;
}

/* Formats ne[0..n) as "[a, b]" in row-major order (as the index writes shapes). */
static void dw_shape_str(char *buf, size_t len, int n, const int64_t *ne)
{
    size_t at = 0;
    at += (size_t)snprintf(buf + at, len - at, "[");
    for (int i = n - 1; i >= 0 && at < len; i--)
        at += (size_t)snprintf(buf + at, len - at, "%lld%s", (long long)ne[i], i ? ", " : "");
    if (at < len) snprintf(buf + at, len - at, "]");
}

int dw_expect(struct dw_weights *w, const char *name, int n_dims, const int64_t ne[4], struct dw_tensor **out)
{
    struct dw_tensor *t = dw_find(w, name);
    char want[96], got[96];
    dw_shape_str(want, sizeof want, n_dims, ne);
    if (!t) return dream_error_set(DREAM_EFORMAT, "%s.json has no tensor %s (expected shape %s)", w->prefix, name, want);
    bool same = t->n_dims == n_dims;
    for (int i = 0; i < n_dims && same; i++) same = t->ne[i] == ne[i];
    if (!same) {
        dw_shape_str(got, sizeof got, t->n_dims, t->ne);
        return dream_error_set(DREAM_EFORMAT, "%s.json: tensor %s has shape %s but the model needs %s", w->prefix, name,
                               got, want);
    }
    *out = t;
    return 0;
}

int dw_check_all_used(const struct dw_weights *w)
{
    for (size_t i = 0; i < w->n_tensors; i++)
        if (!w->tensors[i].used)
            return dream_error_set(DREAM_EFORMAT,
                                   "%s.json has a tensor %s that this model does not have (a typo in a name, or "
                                   "weights of another shape or architecture?)",
                                   w->prefix, w->tensors[i].name);
    return 0;
}

static json_t *dw_config_get(const struct dw_weights *w, const char *key)
{
    return json_object_get((json_t *)w->config, key);
}

int dw_config_int(const struct dw_weights *w, const char *key, long lo, long hi, long *out)
{
    json_t *v = dw_config_get(w, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return dream_error_set(DREAM_EFORMAT, "%s.json: config.%s must be a whole number in [%ld, %ld]", w->prefix, key,
                               lo, hi);
    *out = (long)json_integer_value(v);
    return 0;
}

int dw_config_float(const struct dw_weights *w, const char *key, double *out)
{
    json_t *v = dw_config_get(w, key);
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return dream_error_set(DREAM_EFORMAT, "%s.json: config.%s must be a finite number", w->prefix, key);
    *out = json_number_value(v);
    return 0;
}

int dw_config_str(const struct dw_weights *w, const char *key, const char **out)
{
    json_t *v = dw_config_get(w, key);
    if (!json_is_string(v))
        return dream_error_set(DREAM_EFORMAT, "%s.json: config.%s must be a string", w->prefix, key);
    *out = json_string_value(v);
    return 0;
}
