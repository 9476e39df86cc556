/* synth_fold.c — FOLD (spec §6.6). */
#include "synth_internal.h"

int dream_synth_fold(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result)
{
    (void)store;
    (void)params;
    if (result) *result = (struct dream_synth_result){0};
    return 0;
}
