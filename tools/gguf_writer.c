/* gguf_writer.c — streams generated tensor data into a GGUF file (see gguf_writer.h). */
#include "gguf_writer.h"

#include "dream/error.h"
#include "dream/log.h"
#include "util/file.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Elements generated per batch (per tensor, across all threads): bounds the memory to ~40 MiB. */
#define GW_BATCH_ELEMS (4 * 1024 * 1024)
/* Below this many elements a batch is not worth spreading over threads. */
#define GW_THREAD_MIN_ELEMS (256 * 1024)

/* The body of gw_list_add and gw_list_add_data: appends one description, name from fmt/ap. */
static int gw_list_addv(struct gw_list *l, enum ggml_type type, int n_dims, const int64_t ne[4], enum gw_fill fill,
                        float value, const char *name_fmt, va_list ap)
{
    if (n_dims < 1 || n_dims > 4) return dream_error_set(DREAM_EINVAL, "tensor with %d dimensions", n_dims);
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct gw_tensor *items = realloc(l->items, cap * sizeof *items);
        if (!items) return dream_error_set(DREAM_ENOMEM, "out of memory listing tensors");
        l->items = items;
        l->cap = cap;
    }
    struct gw_tensor *t = &l->items[l->len];
    memset(t, 0, sizeof *t);
    int n = vsnprintf(t->name, sizeof t->name, name_fmt, ap);
    if (n < 0 || (size_t)n >= sizeof t->name)
        return dream_error_set(DREAM_EINVAL, "tensor name '%s...' is longer than %d characters", t->name,
                               GGML_MAX_NAME - 1);
    t->type = type;
    t->n_dims = n_dims;
    for (int i = 0; i < 4; i++) {
        t->ne[i] = i < n_dims ? ne[i] : 1;
        if (t->ne[i] < 1)
            return dream_error_set(DREAM_EINVAL, "tensor %s: dimension %d is %lld; every dimension must be >= 1",
                                   t->name, i, (long long)t->ne[i]);
    }
    t->fill = fill;
    t->value = value;
    l->len++;
    return 0;
}

int gw_list_add(struct gw_list *l, enum ggml_type type, int n_dims, const int64_t ne[4], enum gw_fill fill,
                float value, const char *name_fmt, ...)
{
    va_list ap;
    va_start(ap, name_fmt);
    int rc = gw_list_addv(l, type, n_dims, ne, fill, value, name_fmt, ap);
    va_end(ap);
    return rc;
}

int gw_list_add_data(struct gw_list *l, enum ggml_type type, int n_dims, const int64_t ne[4], const void *data,
                     enum ggml_type data_type, const char *name_fmt, ...)
{
    if (data_type != GGML_TYPE_F32 && data_type != GGML_TYPE_F16)
        return dream_error_set(DREAM_EINVAL, "tensor data of type %s; only f32 and f16 values can be written",
                               ggml_type_name(data_type));
    va_list ap;
    va_start(ap, name_fmt);
    int rc = gw_list_addv(l, type, n_dims, ne, GW_FILL_DATA, 0.0f, name_fmt, ap);
    va_end(ap);
    if (rc) return rc;
    l->items[l->len - 1].data = data;
    l->items[l->len - 1].data_type = data_type;
    return 0;
}

void gw_list_free(struct gw_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}

int64_t gw_tensor_nelements(const struct gw_tensor *t)
{
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

int64_t gw_list_nelements(const struct gw_list *l)
{
    int64_t n = 0;
    for (size_t i = 0; i < l->len; i++) n += gw_tensor_nelements(&l->items[i]);
    return n;
}

int gw_parse_seed(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || s[0] == '+' || s[0] == ' ')
        return dream_error_set(DREAM_EINVAL, "--seed '%s' is not a non-negative whole number", s);
    *out = v;
    return 0;
}

int gw_check_shape(const struct gw_tensor *t)
{
    int64_t blck = ggml_blck_size(t->type);
    if (t->ne[0] % blck != 0)
        return dream_error_set(DREAM_EINVAL,
                               "tensor %s has rows of %lld elements, not a multiple of %lld (the %s block size); "
                               "choose dimensions divisible by %lld or another --type",
                               t->name, (long long)t->ne[0], (long long)blck, ggml_type_name(t->type),
                               (long long)blck);
    return 0;
}

static void gw_ggml_log(enum ggml_log_level level, const char *text, void *user_data)
{
    (void)level;
    (void)user_data;
    dream_log(DREAM_LOG_DEBUG, "ggml: %s", text);
}

void gw_quiet_ggml_logs(void)
{
    ggml_log_set(gw_ggml_log, NULL);
}

int gw_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n > 32 ? 32 : (int)n;
}

/* splitmix64's output function: a strong 64-bit mixer. */
static uint64_t gw_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* FNV-1a over the tensor name, so each tensor's values do not depend on its position in the file. */
static uint64_t gw_name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* Fills one row: a splitmix64 stream seeded from (seed, name, row), mapped to uniform [-a, a];
 * or the constant; or row `row` of the caller's data, widened to F32. */
static void gw_fill_row(const struct gw_tensor *t, uint64_t seed, uint64_t name_hash, int64_t row, float *out)
{
    int64_t n = t->ne[0];
    if (t->fill == GW_FILL_DATA) {
        if (t->data_type == GGML_TYPE_F16)
            ggml_fp16_to_fp32_row((const ggml_fp16_t *)t->data + row * n, out, n);
        else
            memcpy(out, (const float *)t->data + row * n, (size_t)n * sizeof *out);
        return;
    }
    if (t->fill == GW_FILL_CONST) {
        for (int64_t i = 0; i < n; i++) out[i] = t->value;
        return;
    }
    const float a = t->value * 1.7320508f; /* uniform [-a, a] has standard deviation a / sqrt(3) */
    uint64_t state = gw_mix64(seed ^ gw_mix64(name_hash + (uint64_t)row * 0x9e3779b97f4a7c15ULL));
    for (int64_t i = 0; i < n; i++) {
        state += 0x9e3779b97f4a7c15ULL;
        uint64_t z = gw_mix64(state);
        float u = (float)(z >> 40) * (1.0f / 16777216.0f); /* [0, 1) with 24 bits */
        out[i] = (2.0f * u - 1.0f) * a;
    }
}

struct gw_job {
    const struct gw_tensor *t;
    uint64_t seed, name_hash;
    int64_t row0;    /* first row of the batch in the tensor */
    int64_t r0, r1;  /* this job's rows, relative to the batch */
    float *src;      /* the batch's float rows */
    char *dst;       /* the batch's converted rows */
    size_t row_size; /* bytes per converted row */
    int failed;
};

/* Generates and converts rows [r0, r1) of one batch. */
static void *gw_job_run(void *arg)
{
    struct gw_job *j = arg;
    int64_t n = j->t->ne[0];
    for (int64_t r = j->r0; r < j->r1; r++) gw_fill_row(j->t, j->seed, j->name_hash, j->row0 + r, j->src + r * n);
    if (j->r1 <= j->r0) return NULL;
    float *src = j->src + j->r0 * n;
    char *dst = j->dst + (size_t)j->r0 * j->row_size;
    size_t want = (size_t)(j->r1 - j->r0) * j->row_size;
    if (j->t->type == GGML_TYPE_F32) {
        memcpy(dst, src, want);
    } else {
        size_t got = ggml_quantize_chunk(j->t->type, src, dst, 0, j->r1 - j->r0, n, NULL);
        if (got != want) j->failed = 1;
    }
    return NULL;
}

/* Writes all of len bytes; returns 0 or DREAM_EIO naming tmp. */
static int gw_fwrite(FILE *f, const void *p, size_t len, const char *tmp)
{
    if (len && fwrite(p, 1, len, f) != len)
        return dream_error_set(DREAM_EIO, "writing %s: %s (is the disk full?)", tmp, strerror(errno));
    return 0;
}

/* Generates one tensor's data batch by batch and appends it to f. */
static int gw_write_tensor(FILE *f, const struct gw_tensor *t, uint64_t seed, int n_threads, float *src, char *dst,
                           const char *tmp)
{
    const int64_t n = t->ne[0];
    const int64_t nrows = gw_tensor_nelements(t) / n;
    const size_t row_size = ggml_row_size(t->type, n);
    int64_t batch_rows = GW_BATCH_ELEMS / n;
    if (batch_rows < 1) batch_rows = 1;
    const uint64_t name_hash = gw_name_hash(t->name);

    for (int64_t row0 = 0; row0 < nrows; row0 += batch_rows) {
        int64_t rows = nrows - row0 < batch_rows ? nrows - row0 : batch_rows;
        int threads = n_threads;
        if (rows * n < GW_THREAD_MIN_ELEMS) threads = 1;
        if (threads > rows) threads = (int)rows;
        struct gw_job jobs[32];
        pthread_t tids[32];
        if (threads > 32) threads = 32;
        int started = 0;
        for (int k = 0; k < threads; k++) {
            jobs[k] = (struct gw_job){
                .t = t,
                .seed = seed,
                .name_hash = name_hash,
                .row0 = row0,
                .r0 = rows * k / threads,
                .r1 = rows * (k + 1) / threads,
                .src = src,
                .dst = dst,
                .row_size = row_size,
            };
        }
        for (int k = 1; k < threads; k++) {
            if (pthread_create(&tids[k], NULL, gw_job_run, &jobs[k]) != 0) break;
            started = k;
        }
        /* Jobs whose thread could not start run here, so the result never depends on threads. */
        gw_job_run(&jobs[0]);
        for (int k = started + 1; k < threads; k++) gw_job_run(&jobs[k]);
        for (int k = 1; k <= started; k++) pthread_join(tids[k], NULL);
        for (int k = 0; k < threads; k++)
            if (jobs[k].failed)
                return dream_error_set(DREAM_EINTERNAL, "converting tensor %s to %s failed", t->name,
                                       ggml_type_name(t->type));
        int rc = gw_fwrite(f, dst, (size_t)rows * row_size, tmp);
        if (rc) return rc;
    }
    return 0;
}

/* Makes sure the output's directory exists and the output is not a directory. */
static int gw_prepare_path(const char *path)
{
    if (file_is_dir(path))
        return dream_error_set(DREAM_EIO, "cannot write %s: it is a directory; pass a file path with -o", path);
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) return 0;
    size_t dlen = (size_t)(slash - path);
    char *dir = malloc(dlen + 1);
    if (!dir) return dream_error_set(DREAM_ENOMEM, "out of memory");
    memcpy(dir, path, dlen);
    dir[dlen] = '\0';
    int rc = file_is_dir(dir) ? 0 : file_mkdirs(dir, 0755);
    free(dir);
    if (rc) return dream_error_wrap(DREAM_EIO, "cannot write %s (check the path and its permissions)", path);
    return 0;
}

int gw_write(const char *path, struct gguf_context *meta, const struct gw_list *l, uint64_t seed, int n_threads,
             uint64_t *bytes_out)
{
    if (n_threads < 1) n_threads = 1;
    if (gguf_get_n_tensors(meta) != 0) return dream_error_set(DREAM_EINTERNAL, "gw_write: meta already has tensors");

    int64_t max_batch = 1;
    size_t max_row_bytes = 0;
    for (size_t i = 0; i < l->len; i++) {
        const struct gw_tensor *t = &l->items[i];
        int rc = gw_check_shape(t);
        if (rc) return rc;
        for (size_t k = 0; k < i; k++)
            if (strcmp(l->items[k].name, t->name) == 0)
                return dream_error_set(DREAM_EINTERNAL, "tensor %s is listed twice", t->name);
        int64_t rows = GW_BATCH_ELEMS / t->ne[0];
        if (rows < 1) rows = 1;
        int64_t elems = rows * t->ne[0];
        if (elems > max_batch) max_batch = elems;
        size_t rb = ggml_row_size(t->type, t->ne[0]) * (size_t)rows;
        if (rb > max_row_bytes) max_row_bytes = rb;
    }

    struct ggml_init_params ip = {
        .mem_size = (l->len + 1) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context *gctx = ggml_init(ip);
    if (!gctx) return dream_error_set(DREAM_ENOMEM, "out of memory creating tensor metadata");
    for (size_t i = 0; i < l->len; i++) {
        const struct gw_tensor *t = &l->items[i];
        struct ggml_tensor *gt = ggml_new_tensor(gctx, t->type, t->n_dims, t->ne);
        ggml_set_name(gt, t->name);
        gguf_add_tensor(meta, gt);
    }

    int rc = gw_prepare_path(path);
    float *src = NULL;
    char *dst = NULL;
    char *tmp = NULL;
    FILE *f = NULL;
    if (rc) goto out;

    src = malloc((size_t)max_batch * sizeof *src);
    dst = malloc(max_row_bytes ? max_row_bytes : 1);
    size_t tlen = strlen(path) + 16;
    tmp = malloc(tlen);
    if (!src || !dst || !tmp) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory writing %s", path);
        goto out;
    }
    snprintf(tmp, tlen, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        rc = dream_error_set(DREAM_EIO, "cannot write %s: %s; check that its directory is writable or pass another -o",
                             path, strerror(errno));
        free(tmp);
        tmp = NULL;
        goto out;
    }
    /* mkstemp makes the file 0600; a model is an ordinary data file. */
    (void)fchmod(fd, 0644); /* not fatal: the file is still usable by its owner */
    f = fdopen(fd, "wb");
    if (!f) {
        rc = dream_error_set(DREAM_EIO, "cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        goto fail_unlink;
    }
    if (!gguf_write_to_file_ptr(meta, f, true)) {
        rc = dream_error_set(DREAM_EIO, "writing the metadata of %s failed (is the disk full?)", tmp);
        goto fail_unlink;
    }
    const size_t align = gguf_get_alignment(meta);
    uint64_t pos = gguf_get_meta_size(meta);
    static const char zeros[256];
    for (size_t i = 0; i < l->len; i++) {
        const struct gw_tensor *t = &l->items[i];
        rc = gw_write_tensor(f, t, seed, n_threads, src, dst, tmp);
        if (rc) goto fail_unlink;
        size_t nbytes = ggml_row_size(t->type, t->ne[0]) * (size_t)(gw_tensor_nelements(t) / t->ne[0]);
        pos += nbytes;
        size_t pad = (size_t)((align - pos % align) % align);
        if (pad > sizeof zeros) {
            rc = dream_error_set(DREAM_EINTERNAL, "alignment %zu is too large", align);
            goto fail_unlink;
        }
        rc = gw_fwrite(f, zeros, pad, tmp);
        if (rc) goto fail_unlink;
        pos += pad;
    }
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        rc = dream_error_set(DREAM_EIO, "flushing %s: %s (is the disk full?)", tmp, strerror(errno));
        goto fail_unlink;
    }
    int crc = fclose(f);
    f = NULL;
    if (crc != 0) {
        rc = dream_error_set(DREAM_EIO, "closing %s: %s", tmp, strerror(errno));
        goto fail_unlink;
    }
    if (rename(tmp, path) != 0) {
        rc = dream_error_set(DREAM_EIO, "cannot write %s: renaming %s failed: %s", path, tmp, strerror(errno));
        goto fail_unlink;
    }
    if (bytes_out) *bytes_out = pos;
    rc = 0;
    goto out;

fail_unlink:
    if (f) fclose(f);
    f = NULL;
    unlink(tmp);
out:
    free(tmp);
    free(src);
    free(dst);
    ggml_free(gctx);
    return rc;
}
