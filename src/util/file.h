/*
 * file.h — whole-file reads and atomic writes.
 */
#ifndef DREAM_UTIL_FILE_H
#define DREAM_UTIL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Reads the whole file into a NUL-terminated malloc'd buffer (*out, length *len). Refuses files
 * larger than max_bytes (0 = no limit). Returns 0, DREAM_ENOTFOUND, DREAM_EIO or DREAM_ETOOBIG,
 * with a message naming the path. The caller frees *out. */
int file_read_all(const char *path, size_t max_bytes, char **out, size_t *len);

/* Writes data to path atomically: a temporary file in the same directory, fsync, rename.
 * A reader sees the old file or the new one, never a torn one. */
int file_write_atomic(const char *path, const void *data, size_t len);

/* mkdir -p; 0 when the directory exists afterwards. */
int file_mkdirs(const char *path, int mode);

/* Whether path, an entry of the wiki's articles/ directory, is an article file by the rule every
 * reader of the wiki keeps (the read tools, dream reindex): its name (after the last '/') is
 * valid UTF-8, since a name no JSON string can carry could not be named back; and it is a
 * regular file, or a symbolic link that resolves to a regular file inside root (the wiki's
 * resolved path, from realpath): a link out of the wiki is never followed. *st gets the file's
 * status, the link's target's for a link. */
bool file_wiki_article(const char *path, const char *root, struct stat *st);

/* st's modification time in nanoseconds since the epoch (st_mtim): two writes in one second
 * mostly differ in it, where st_mtime's seconds do not. */
int64_t file_mtime_ns(const struct stat *st);

bool file_exists(const char *path);
bool file_is_dir(const char *path);

#endif
