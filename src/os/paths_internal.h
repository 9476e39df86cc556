/* paths_internal.h — what paths.c needs from store_move.c: settling the store in its place. */
#ifndef DREAM_OS_PATHS_INTERNAL_H
#define DREAM_OS_PATHS_INTERNAL_H

/* Moves the store at old_path (where dream kept it before: the cache directory) to new_path
 * (the data directory), when old_path holds one and new_path does not; then says on stderr what
 * was moved where. The move is atomic: dream never sees two live copies. The old store's
 * -wal is checkpointed into it first (its -shm goes with the WAL), under an exclusive lock, so
 * nothing committed is lost and no other process writes it meanwhile. Within one file system
 * it is a hard link and an unlink; across file systems, a copy through SQLite's backup API to
 * "<new_path>.moving", fsync'd, then linked into place, and only then the old one removed. A
 * move cut short at any point leaves the old store complete, or the new one complete (and the
 * old one too, which the next call treats as below).
 *
 * When both exist, the new one is used and the old one left as it is, with a warning naming
 * both (the same file under both names, from a move cut short, is finished quietly).
 * Returns 0; DREAM_EBUSY when another process has the old store open (it names it and says to
 * stop that process); DREAM_EIO when the move fails (it says what and where; the old store is
 * left in place and whole). */
int paths_store_move(const char *old_path, const char *new_path);

#endif
