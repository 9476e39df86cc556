/* store_move.c — moving the store out of the cache directory, where dream kept it before, into
 * the data directory (see paths_internal.h). The cache directory is for what can be rebuilt:
 * cache cleaners empty ~/.cache, and the conversations exist nowhere else. */
#include "paths_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "util/buf.h"
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long the move waits for another connection to let go of the old store. */
#define MOVE_BUSY_MS 2000

/* path + suffix, malloc'd; NULL when out of memory (error set). */
static char *move_path(const char *path, const char *suffix)
{
    struct dbuf b = {0};
    if (dbuf_printf(&b, "%s%s", path, suffix)) return NULL;
    return dbuf_take(&b);
}

/* fsyncs the directory holding path, so a link, rename or unlink in it is on disk. */
static void move_sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

/* fsyncs the file at path (not open in SQLite: closing this descriptor drops no lock of ours). */
static int move_sync_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        int rc = dream_error_set(DREAM_EIO, "cannot flush %s to disk: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return rc;
    }
    close(fd);
    return 0;
}

/* Removes path and the files SQLite keeps beside it (-wal, -shm, -journal); a missing one is
 * no error. Only for a store no connection uses any more. */
static void move_unlink_store(const char *path)
{
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        char *p = move_path(path, sides[i]);
        if (p) unlink(p);
        free(p);
    }
}

/* Takes the old store's run lock ("<old>.lock", the one dream_run_lock takes), so no dream run
 * of an older dream that still uses the old place is writing it. */
static int move_lock(const char *old_path, int *fd)
{
    char *lock = move_path(old_path, ".lock");
    if (!lock) return DREAM_ENOMEM;
    *fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    int rc = 0;
    if (*fd < 0) rc = dream_error_set(DREAM_EIO, "cannot open %s to move the store: %s", lock, strerror(errno));
    else if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
        rc = dream_error_set(DREAM_EBUSY, "a dream run holds %s: let it finish, then run this again (dream then moves the store %s)", lock,
                             old_path);
        close(*fd);
        *fd = -1;
    }
    free(lock);
    return rc;
}

static void move_unlock(const char *old_path, int fd)
{
    if (fd < 0) return;
    char *lock = move_path(old_path, ".lock");
    if (lock) unlink(lock);
    free(lock);
    close(fd);
}

/* Opens the old store and makes it one self-contained file that only this connection may touch:
 * rollback-journal mode (which checkpoints the WAL into the file and removes -wal and -shm; SQLite
 * refuses while another connection has the store open) and an exclusive lock held until close. */
static int move_seal(const char *old_path, const char *new_path, sqlite3 **out)
{
    sqlite3 *db = NULL;
    int rc = 0;
    if (sqlite3_open_v2(old_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        rc = dream_error_set(DREAM_EIO, "cannot open the store %s to move it to %s: %s", old_path, new_path,
                             db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, MOVE_BUSY_MS);
    sqlite3_stmt *st = NULL;
    bool sealed = false;
    if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = DELETE", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        const char *mode = (const char *)sqlite3_column_text(st, 0);
        sealed = mode && strcmp(mode, "delete") == 0;
    }
    int code = sqlite3_extended_errcode(db);
    sqlite3_finalize(st);
    if (sealed && sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        sealed = false;
        code = sqlite3_extended_errcode(db);
    }
    if (!sealed) {
        bool busy = (code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED || code == SQLITE_ROW;
        rc = busy ? dream_error_set(DREAM_EBUSY,
                                    "the store %s is open in another process (a `dream serve` or `dream run` of an older dream?): "
                                    "stop it and run this again, and dream moves the store to %s",
                                    old_path, new_path)
                  : dream_error_set(DREAM_EIO, "cannot prepare the store %s for its move to %s: %s", old_path, new_path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

/* Copies the sealed store db into tmp_path through SQLite's backup API and flushes it to disk. */
static int move_copy(sqlite3 *db, const char *tmp_path)
{
    move_unlink_store(tmp_path); /* a copy an interrupted move left: never a live store */
    sqlite3 *dst = NULL;
    int rc = 0;
    if (sqlite3_open_v2(tmp_path, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        rc = dream_error_set(DREAM_EIO, "cannot create %s: %s", tmp_path, dst ? sqlite3_errmsg(dst) : "out of memory");
        sqlite3_close(dst);
        return rc;
    }
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", db, "main");
    int step = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
    int fin = b ? sqlite3_backup_finish(b) : SQLITE_ERROR;
    if (step != SQLITE_DONE || fin != SQLITE_OK) rc = dream_error_set(DREAM_EIO, "copying the store into %s: %s", tmp_path, sqlite3_errmsg(dst));
    if (sqlite3_close(dst) != SQLITE_OK && !rc) rc = dream_error_set(DREAM_EIO, "closing %s", tmp_path);
    if (!rc) rc = move_sync_file(tmp_path);
    if (rc) move_unlink_store(tmp_path);
    return rc;
}

/* Puts from in place at to unless to exists (then *raced): a hard link and an unlink, so that
 * nothing is ever replaced; a rename where the file system has no hard links. Across file
 * systems nothing happens and *cross says so (the caller copies instead). */
static int move_place(const char *from, const char *to, bool *raced, bool *cross)
{
    *raced = *cross = false;
    if (link(from, to) == 0) {
        unlink(from);
        return 0;
    }
    if (errno == EEXIST) {
        *raced = true;
        return 0;
    }
    if (errno == EXDEV) {
        *cross = true;
        return 0;
    }
    if ((errno == EPERM || errno == EOPNOTSUPP || errno == EMLINK) && !file_exists(to) && rename(from, to) == 0) return 0;
    return dream_error_set(DREAM_EIO, "cannot move %s to %s: %s", from, to, strerror(errno));
}

/* Both files exist: the same file under two names is a move cut short between its link and its
 * unlink, which this finishes; two files are two stores, and the new one wins. (One name reached
 * two ways never comes here: paths_store_move leaves it alone. A file of one name that a bind
 * mount shows in two places has one link, and is not unlinked either.) */
static void move_both(const char *old_path, const char *new_path)
{
    struct stat o, n;
    if (stat(old_path, &o) == 0 && stat(new_path, &n) == 0 && o.st_dev == n.st_dev && o.st_ino == n.st_ino) {
        if (o.st_nlink < 2) return;
        unlink(old_path);
        move_sync_dir(old_path);
        dream_log(DREAM_LOG_WARN, "finished moving the store from %s to %s", old_path, new_path);
        return;
    }
    dream_log(DREAM_LOG_WARN,
              "two stores: %s (used) and %s (an older one, from where dream kept the store before; not read). "
              "Nothing was copied between them; when %s holds everything you want, delete %s",
              new_path, old_path, new_path, old_path);
}

/* Whether a and b are one directory entry reached two ways (a linked directory on the way, a
 * link naming the other): then there is nothing to move, and nothing may be unlinked. */
static bool move_same_entry(const char *a, const char *b)
{
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    bool same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

/* The old store is a link to where the person keeps it: the store stays there, and new_path
 * becomes a link to it (by its full path, so it names the same file from the new directory). */
static int move_link(const char *old_path, const char *new_path)
{
    char *target = realpath(old_path, NULL);
    if (!target) return dream_error_set(DREAM_EIO, "cannot follow the link %s: %s", old_path, strerror(errno));
    int rc = 0;
    if (symlink(target, new_path) != 0) {
        if (errno == EEXIST) move_both(old_path, new_path);
        else rc = dream_error_set(DREAM_EIO, "cannot link %s to the store %s: %s", new_path, target, strerror(errno));
        free(target);
        return rc;
    }
    move_sync_dir(new_path);
    unlink(old_path);
    move_sync_dir(old_path);
    dream_log(DREAM_LOG_WARN,
              "the store %s was a link to %s, which stays where it is: dream now reaches it through a link at %s (the cache "
              "directory is for what can be rebuilt, and cache cleaners empty it)",
              old_path, target, new_path);
    free(target);
    return 0;
}

int paths_store_move(const char *old_path, const char *new_path)
{
    if (!file_exists(old_path) || strcmp(old_path, new_path) == 0 || move_same_entry(old_path, new_path)) return 0;
    if (file_exists(new_path)) {
        move_both(old_path, new_path);
        return 0;
    }
    const char *slash = strrchr(new_path, '/');
    char *dir = slash && slash != new_path ? strndup(new_path, (size_t)(slash - new_path)) : NULL;
    int rc = dir ? file_mkdirs(dir, 0700) : 0;
    free(dir);
    if (rc) return dream_error_wrap(rc, "moving the store %s", old_path);
    struct stat ls;
    if (lstat(old_path, &ls) == 0 && S_ISLNK(ls.st_mode)) return move_link(old_path, new_path);
    int lock_fd = -1;
    sqlite3 *db = NULL;
    rc = move_lock(old_path, &lock_fd);
    if (!rc) rc = move_seal(old_path, new_path, &db);
    bool raced = false, cross = false;
    if (!rc) rc = move_place(old_path, new_path, &raced, &cross);
    char *tmp = NULL;
    if (!rc && cross) {
        tmp = move_path(new_path, ".moving");
        rc = tmp ? move_copy(db, tmp) : DREAM_ENOMEM;
        if (!rc) rc = move_place(tmp, new_path, &raced, &cross);
        if (!rc && raced) move_unlink_store(tmp);
        if (!rc && !raced) {
            move_sync_dir(new_path);
            unlink(old_path); /* only now: the copy is whole and in place */
        }
    }
    if (!rc && !raced) {
        move_sync_dir(new_path);
        move_sync_dir(old_path);
    }
    sqlite3_close(db);
    if (!rc && !raced) move_unlink_store(old_path); /* -journal, should a rollback have left one */
    move_unlock(old_path, lock_fd);
    free(tmp);
    if (rc) return rc;
    if (raced) move_both(old_path, new_path);
    else
        dream_log(DREAM_LOG_WARN,
                  "moved the store (your conversations) from %s to %s: the cache directory is for what can be rebuilt, and "
                  "cache cleaners empty it",
                  old_path, new_path);
    return 0;
}
