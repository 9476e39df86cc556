/* paths.c — XDG and DREAM_* path resolution (see include/dream/paths.h). */
#include "dream/paths.h"

#include "paths_internal.h"

#include "dream/error.h"
#include "util/buf.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Returns a variable's value when it is set and non-empty, else NULL. */
static const char *paths_env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

/* Joins a and b with one '/' into a malloc'd *out. */
static int paths_join(const char *a, const char *b, char **out)
{
    struct dbuf p = {0};
    size_t alen = strlen(a);
    while (alen > 1 && a[alen - 1] == '/') alen--;
    if (dbuf_append(&p, a, alen) || dbuf_putc(&p, '/') || dbuf_puts(&p, b)) {
        dbuf_free(&p);
        return DREAM_ENOMEM;
    }
    *out = dbuf_take(&p);
    return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory building a path");
}

int dream_paths_home(char **out)
{
    *out = NULL;
    const char *home = paths_env("HOME");
    if (!home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw && pw->pw_dir && pw->pw_dir[0] ? pw->pw_dir : NULL;
    }
    if (!home)
        return dream_error_set(DREAM_ENOTFOUND, "cannot find the home directory: set HOME, or DREAM_HOME for dream's files");
    *out = strdup(home);
    return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
}

/* DREAM_HOME/<sub>, else $<xdg_var>/<xdg_sub>, else ~/<home_sub>. A relative $<xdg_var> is
 * ignored, as the XDG Base Directory spec says: it would follow the working directory. */
static int paths_resolve(const char *sub, const char *xdg_var, const char *xdg_sub, const char *home_sub, char **out)
{
    *out = NULL;
    const char *v = paths_env("DREAM_HOME");
    if (v) return paths_join(v, sub, out);
    v = paths_env(xdg_var);
    if (v && v[0] == '/') return paths_join(v, xdg_sub, out);
    char *home;
    int rc = dream_paths_home(&home);
    if (rc) return rc;
    rc = paths_join(home, home_sub, out);
    free(home);
    return rc;
}

int dream_paths_config_dir(char **out)
{
    return paths_resolve("config", "XDG_CONFIG_HOME", "dream", ".config/dream", out);
}

int dream_paths_data_dir(char **out)
{
    *out = NULL;
    const char *v = paths_env("DREAM_HOME");
    if (v) {
        *out = strdup(v);
        return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    return paths_resolve("", "XDG_DATA_HOME", "dream", ".local/share/dream", out);
}

int dream_paths_wiki_dir(char **out)
{
    const char *v = paths_env("DREAM_WIKI");
    if (v) {
        *out = strdup(v);
        return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    return paths_resolve("wiki", "XDG_DATA_HOME", "dream/wiki", ".local/share/dream/wiki", out);
}

int dream_paths_cache_dir(char **out)
{
    return paths_resolve("cache", "XDG_CACHE_HOME", "dream", ".cache/dream", out);
}

/* <dir from get>/memory.sqlite into *out. */
static int paths_store_in(int (*get)(char **), char **out)
{
    *out = NULL;
    char *dir;
    int rc = get(&dir);
    if (rc) return rc;
    rc = paths_join(dir, "memory.sqlite", out);
    free(dir);
    return rc;
}

int dream_paths_store(char **out)
{
    char *old = NULL;
    int rc = paths_store_in(dream_paths_data_dir, out);
    if (!rc) rc = paths_store_in(dream_paths_cache_dir, &old);
    if (!rc) rc = paths_store_move(old, *out);
    free(old);
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

int dream_paths_adapters_dir(char **out)
{
    const char *v = paths_env("DREAM_ADAPTERS");
    if (v) {
        *out = strdup(v);
        return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    char *cache;
    int rc = dream_paths_cache_dir(&cache);
    if (rc) return rc;
    rc = paths_join(cache, "adapters", out);
    free(cache);
    return rc;
}
