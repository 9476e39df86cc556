/* file.c — whole-file reads and atomic writes (see file.h). */
#include "util/file.h"

#include "dream/error.h"
#include "util/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int file_read_all(const char *path, size_t max_bytes, char **out, size_t *len)
{
    *out = NULL;
    if (len) *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int code = errno == ENOENT ? DREAM_ENOTFOUND : DREAM_EIO;
        return dream_error_set(code, "cannot open %s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return dream_error_set(DREAM_EIO, "%s is not a regular file", path);
    }
    size_t size = (size_t)st.st_size;
    if (max_bytes && size > max_bytes) {
        close(fd);
        return dream_error_set(DREAM_ETOOBIG, "%s is %zu bytes, over the limit of %zu", path, size, max_bytes);
    }
    char *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return dream_error_set(DREAM_ENOMEM, "out of memory reading %s (%zu bytes)", path, size);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    if (got != size) {
        free(buf);
        return dream_error_set(DREAM_EIO, "short read on %s (%zu of %zu bytes)", path, got, size);
    }
    buf[size] = '\0';
    *out = buf;
    if (len) *len = size;
    return 0;
}

/* Writing to a link writes the file it names, so the link stays a link (an article the person
 * keeps elsewhere stays there); a file that exists keeps its permission bits (a private one stays
 * private). A link that names no file is replaced. */
static int file_write_atomic_at(const char *path, const void *data, size_t len);

int file_write_atomic(const char *path, const void *data, size_t len)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) return file_write_atomic_at(path, data, len);
    char *real = realpath(path, NULL);
    int rc = file_write_atomic_at(real ? real : path, data, len);
    free(real);
    return rc;
}

static int file_write_atomic_at(const char *path, const void *data, size_t len)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32);
    if (!tmp) return dream_error_set(DREAM_ENOMEM, "out of memory");
    snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    struct stat was;
    bool had = stat(path, &was) == 0 && S_ISREG(was.st_mode);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0 && had && fchmod(fd, was.st_mode & 07777) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        fd = -1;
    }
    if (fd < 0) {
        int rc = dream_error_set(DREAM_EIO, "cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int rc = dream_error_set(DREAM_EIO, "writing %s: %s", tmp, strerror(errno));
            close(fd);
            unlink(tmp);
            free(tmp);
            return rc;
        }
        p += n;
        left -= (size_t)n;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int rc = dream_error_set(DREAM_EIO, "flushing %s: %s", tmp, strerror(errno));
        unlink(tmp);
        free(tmp);
        return rc;
    }
    if (rename(tmp, path) != 0) {
        int rc = dream_error_set(DREAM_EIO, "renaming %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return rc;
    }
    free(tmp);
    return 0;
}

int file_mkdirs(const char *path, int mode)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return dream_error_set(DREAM_EINVAL, "bad directory path '%s'", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
                return dream_error_set(DREAM_EIO, "cannot create directory %s: %s", buf, strerror(errno));
            buf[i] = c;
        }
    }
    if (!file_is_dir(path)) return dream_error_set(DREAM_EIO, "%s exists and is not a directory", path);
    return 0;
}

/* True when path resolves (through any links) to somewhere inside root (a resolved path). */
static bool file_inside(const char *path, const char *root)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) return false;
    size_t n = strlen(root);
    return strncmp(real, root, n) == 0 && real[n] == '/';
}

bool file_wiki_article(const char *path, const char *root, struct stat *st)
{
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    size_t l = strlen(name);
    if (utf8_valid_prefix(name, l) != l) return false;
    if (lstat(path, st) != 0) return false;
    if (S_ISLNK(st->st_mode) && !(file_inside(path, root) && stat(path, st) == 0)) return false;
    return S_ISREG(st->st_mode);
}

int64_t file_mtime_ns(const struct stat *st) { return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec; }

bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

bool file_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
