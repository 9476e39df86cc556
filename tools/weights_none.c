/* weights_none.c — the trained-weights reader of builds without jansson (DREAM_ENGINE_ONLY on a
 * machine without libjansson-dev): every read is a clear error; random models still work. */
#include "weights.h"

#include "dream/error.h"

#include <stdlib.h>
#include <string.h>

int dw_load(const char *prefix, struct dw_weights *w)
{
    memset(w, 0, sizeof *w);
    return dream_error_set(DREAM_EINVAL,
                           "cannot read %s.json: this build has no JSON reader (an engine-only build without "
                           "libjansson-dev); convert trained weights with a full build (make build)",
                           prefix);
}

void dw_free(struct dw_weights *w)
{
    memset(w, 0, sizeof *w);
}

struct dw_tensor *dw_find(struct dw_weights *w, const char *name)
{
    (void)w;
    (void)name;
    return NULL;
}

int dw_expect(struct dw_weights *w, const char *name, int n_dims, const int64_t ne[4], struct dw_tensor **out)
{
    (void)w;
    (void)n_dims;
    (void)ne;
    *out = NULL;
    return dream_error_set(DREAM_EINVAL, "tensor %s: this build cannot read trained weights", name);
}

int dw_check_all_used(const struct dw_weights *w)
{
    (void)w;
    return 0;
}

int dw_config_int(const struct dw_weights *w, const char *key, long lo, long hi, long *out)
{
    (void)w;
    (void)lo;
    (void)hi;
    *out = 0;
    return dream_error_set(DREAM_EINVAL, "config.%s: this build cannot read trained weights", key);
}

int dw_config_float(const struct dw_weights *w, const char *key, double *out)
{
    (void)w;
    *out = 0;
    return dream_error_set(DREAM_EINVAL, "config.%s: this build cannot read trained weights", key);
}

int dw_config_str(const struct dw_weights *w, const char *key, const char **out)
{
    (void)w;
    *out = NULL;
    return dream_error_set(DREAM_EINVAL, "config.%s: this build cannot read trained weights", key);
}
