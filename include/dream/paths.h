/*
 * paths.h — where dream keeps its files (DESIGN.md §6).
 *
 * The part src/os/ (docs/ARCHITECTURE.md): dream's place on this machine. paths.c resolves the
 * paths below; schedule.c installs the nightly run as a systemd user timer or a crontab line
 * (dream/schedule.h). It stands on util alone, below every other part of The Dreaming.
 *
 * Defaults follow XDG: config in ~/.config/dream, the wiki in ~/.local/share/dream/wiki, the
 * store and caches in ~/.cache/dream. XDG_CONFIG_HOME, XDG_DATA_HOME and XDG_CACHE_HOME move
 * them. DREAM_HOME=DIR puts all three under one directory (DIR/config, DIR/wiki, DIR/cache).
 * DREAM_WIKI and DREAM_ADAPTERS name the wiki and the adapters directory outright and win over
 * everything else.
 *
 * Every function returns 0 and a malloc'd path in *out (freed by the caller), or
 * DREAM_ENOTFOUND when neither the relevant variable nor HOME is set, or DREAM_ENOMEM.
 * Nothing is created on disk.
 */
#ifndef DREAM_PATHS_H
#define DREAM_PATHS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The config directory: DREAM_HOME/config, else $XDG_CONFIG_HOME/dream, else ~/.config/dream. */
int dream_paths_config_dir(char **out);

/* The wiki: DREAM_WIKI, else DREAM_HOME/wiki, else $XDG_DATA_HOME/dream/wiki, else
 * ~/.local/share/dream/wiki. */
int dream_paths_wiki_dir(char **out);

/* The cache directory: DREAM_HOME/cache, else $XDG_CACHE_HOME/dream, else ~/.cache/dream. */
int dream_paths_cache_dir(char **out);

/* The SQLite store: <cache dir>/memory.sqlite. */
int dream_paths_store(char **out);

/* The LoRA adapters: DREAM_ADAPTERS, else <cache dir>/adapters. */
int dream_paths_adapters_dir(char **out);

/* The home directory ($HOME, else the password database); used for per-tool defaults such
 * as ~/.claude/projects. */
int dream_paths_home(char **out);

#ifdef __cplusplus
}
#endif
#endif
