/* cli_model.c — where a verb's model calls go: the one meaning of --model and --backend that
 * every model-loading verb shares (see cli.h). */
#include "cli.h"

#include "dream/engine.h"
#include "dream/error.h"
#include "dream/model.h"

#include <stdio.h>
#include <stdlib.h>

int cli_model_select(const char *verb, const char *model, const char *backend)
{
    if (model && backend) {
        fprintf(stderr, "dream %s: give --model PATH (a local model) or --backend URL (a server), not both\n", verb);
        return 2;
    }
    if (model) {
        char *path = NULL;
        int rc = dream_model_resolve(model, &path);
        free(path);
        if (rc) return cli_fail(verb, rc);
        struct dream_seam_config cfg;
        dream_seam_default_config(&cfg);
        cfg.model_path = model;
        rc = dream_seam_configure(&cfg);
        return rc ? cli_fail(verb, rc) : 0;
    }
    if (!backend) backend = getenv("DREAM_BACKEND");
    if (!backend || !*backend) return 0;
    struct dream_remote_params rp;
    dream_remote_default_params(&rp);
    rp.url = backend;
    int rc = dream_seam_use_remote(&rp);
    return rc ? cli_fail(verb, rc) : 0;
}
