/*
 * paths.h — where dream keeps its files (DESIGN.md §6).
 *
 * The part src/os/ (docs/ARCHITECTURE.md): dream's place on this machine. paths.c resolves the
 * paths below, and store_move.c moves the store from where older versions kept it;
 * schedule.c installs the nightly run as a systemd user timer or a crontab line
 * (dream/schedule.h). It stands on util (and SQLite, for the move) alone, below every other part
 * of The Dreaming.
 *
 * Defaults follow XDG: config in ~/.config/dream; what cannot be rebuilt (the store of
 * conversations and the wiki) in the data directory ~/.local/share/dream; only true caches (the
 * adapters) in ~/.cache/dream, which cache cleaners may empty. XDG_CONFIG_HOME, XDG_DATA_HOME
 * and XDG_CACHE_HOME move them. DREAM_HOME=DIR puts everything under one directory (DIR/config,
 * DIR/memory.sqlite, DIR/wiki, DIR/cache). DREAM_WIKI and DREAM_ADAPTERS name the wiki and the
 * adapters directory outright and win over everything else.
 *
 * Every function returns 0 and a malloc'd path in *out (freed by the caller), or
 * DREAM_ENOTFOUND when neither the relevant variable nor HOME is set, or DREAM_ENOMEM.
 * Nothing is created on disk, except by dream_paths_store's move of an old store.
 */
#ifndef DREAM_PATHS_H
#define DREAM_PATHS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The config directory: DREAM_HOME/config, else $XDG_CONFIG_HOME/dream, else ~/.config/dream. */
int dream_paths_config_dir(char **out);

/* The data directory, for what cannot be rebuilt: DREAM_HOME, else $XDG_DATA_HOME/dream, else
 * ~/.local/share/dream. */
int dream_paths_data_dir(char **out);

/* The wiki: DREAM_WIKI, else DREAM_HOME/wiki, else $XDG_DATA_HOME/dream/wiki, else
 * ~/.local/share/dream/wiki. */
int dream_paths_wiki_dir(char **out);

/* The cache directory: DREAM_HOME/cache, else $XDG_CACHE_HOME/dream, else ~/.cache/dream. */
int dream_paths_cache_dir(char **out);

/* The SQLite store: <data dir>/memory.sqlite (DREAM_HOME/memory.sqlite, else
 * $XDG_DATA_HOME/dream/memory.sqlite, else ~/.local/share/dream/memory.sqlite).
 *
 * Dream kept the store in the cache directory before (<cache dir>/memory.sqlite). When a store
 * is there and none at the new place, this call moves it (with what its -wal holds) and says on
 * stderr what it moved where; the move is atomic and loses nothing when interrupted. When both
 * exist, the new one is used, the old one is left alone, and a warning names both. Errors of the
 * move: DREAM_EBUSY when another process has the old store open (stop it and retry), DREAM_EIO
 * when it cannot be moved (the old store stays whole where it was); the message says which. */
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
