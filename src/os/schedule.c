/* schedule.c — the nightly dream as a systemd user timer or a crontab line (see
 * dream/schedule.h). systemctl and crontab are run directly (fork + exec, no shell), found on
 * PATH. */
#include "dream/schedule.h"

#include "dream/error.h"
#include "dream/paths.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/utf8.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SCHEDULE_CRON_TAG "# dream schedule"

/* Variables the job carries from the moment it was scheduled. */
/* What the nightly job must see as the person's shell does: where things live, which model (or
 * backend) and how it runs. DREAM_BACKEND_KEY is left out on purpose: a unit file or a crontab
 * line is no place for a secret (dream schedule says so when it is set). */
static const char *const schedule_env[] = {"DREAM_HOME",          "DREAM_WIKI",          "DREAM_MODEL",      "DREAM_ADAPTERS",
                                           "DREAM_MEMORY_BATCH",  "DREAM_THREADS",       "DREAM_FLASH_ATTN", "DREAM_CTX",
                                           "DREAM_GRAMMAR",       "DREAM_BACKEND",       "DREAM_BACKEND_MODEL",
                                           "DREAM_BACKEND_GRAMMAR", "HF_HOME",           "HF_HUB_CACHE",     "XDG_CONFIG_HOME",
                                           "XDG_DATA_HOME",       "XDG_CACHE_HOME",      "CLAUDE_CONFIG_DIR", "CODEX_HOME",
                                           "PI_CODING_AGENT_DIR", NULL};

/* Those of them that hold a path. The job starts in another directory than `dream schedule` (the
 * home directory, under systemd and cron alike), so a relative one is carried made absolute
 * against the directory it was given in; a relative XDG_* one is not carried at all, since
 * dream and systemd both ignore it, as the XDG Base Directory spec says. */
static const char *const schedule_path_env[] = {"DREAM_HOME",   "DREAM_WIKI",        "DREAM_MODEL", "DREAM_ADAPTERS",      "HF_HOME",
                                                "HF_HUB_CACHE", "CLAUDE_CONFIG_DIR", "CODEX_HOME",  "PI_CODING_AGENT_DIR", NULL};

/* Path v (what names it), made absolute against the current directory when it is relative,
 * into *out (malloc'd). */
static int schedule_absolute(const char *what, const char *v, char **out)
{
    *out = NULL;
    if (v[0] == '/') return (*out = strdup(v)) ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return dream_error_set(DREAM_EIO, "%s '%s' is a relative path and the current directory cannot be read (%s): give an absolute one", what, v,
                               strerror(errno));
    struct dbuf b = {0};
    while (v[0] == '.' && v[1] == '/') v += 2; /* "./x" is "x" */
    if (dbuf_printf(&b, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", strcmp(v, ".") ? v : "")) return DREAM_ENOMEM;
    *out = dbuf_take(&b);
    return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
}

/* The value the job carries for variable name (malloc'd), NULL in *out when it carries none. */
static int schedule_env_value(const char *name, char **out)
{
    *out = NULL;
    const char *v = getenv(name);
    if (!v || !v[0]) return 0;
    bool path = !strncmp(name, "XDG_", 4);
    for (size_t i = 0; !path && schedule_path_env[i]; i++) path = !strcmp(name, schedule_path_env[i]);
    if (!path || v[0] == '/') return (*out = strdup(v)) ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    if (!strncmp(name, "XDG_", 4)) return 0;
    return schedule_absolute(name, v, out);
}

int dream_schedule_parse_time(const char *text, int *hour, int *minute)
{
    const char *s = text ? text : "";
    int h = 0, m = 0, nd = 0;
    while (isdigit((unsigned char)*s) && nd < 3) h = h * 10 + (*s++ - '0'), nd++;
    bool ok = nd >= 1 && nd <= 2 && *s == ':' && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) && s[3] == '\0';
    if (ok) m = (s[1] - '0') * 10 + (s[2] - '0');
    if (!ok || h > 23 || m > 59)
        return dream_error_set(DREAM_EINVAL, "'%s' is not a time of day: give HH:MM on a 24-hour clock, e.g. 03:30", text ? text : "");
    *hour = h;
    *minute = m;
    return 0;
}

/* True when name is an executable file in a directory of PATH. */
static bool schedule_on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path) return false;
    char *copy = strdup(path), *save = NULL;
    bool found = false;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found; d = strtok_r(NULL, ":", &save)) {
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", d[0] ? d : ".", name);
        found = access(full, X_OK) == 0;
    }
    free(copy);
    return found;
}

/* Runs argv (found on PATH) with input on its stdin (NULL: none); its stdout, and stderr, go to
 * *output when it is not NULL. Returns the exit status, or -1 when it could not be run. */
static int schedule_exec(char *const argv[], const char *input, struct dbuf *output)
{
    int in[2] = {-1, -1}, outp[2] = {-1, -1};
    if (pipe(in) != 0) return -1;
    if (pipe(outp) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]), close(in[1]), close(outp[0]), close(outp[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(outp[1], 1);
        dup2(outp[1], 2);
        close(in[0]), close(in[1]), close(outp[0]), close(outp[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(outp[1]);
    if (input) {
        size_t n = strlen(input), off = 0;
        while (off < n) {
            ssize_t w = write(in[1], input + off, n - off);
            if (w <= 0 && errno != EINTR) break;
            if (w > 0) off += (size_t)w;
        }
    }
    close(in[1]);
    char buf[4096];
    ssize_t r;
    while ((r = read(outp[0], buf, sizeof buf)) != 0) {
        if (r < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (output) dbuf_append(output, buf, (size_t)r);
    }
    close(outp[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs argv; on failure sets an error quoting its output. */
static int schedule_run(char *const argv[], const char *input, const char *what)
{
    struct dbuf o = {0};
    int st = schedule_exec(argv, input, &o);
    if (st == 0) {
        dbuf_free(&o);
        return 0;
    }
    while (o.len && (o.data[o.len - 1] == '\n' || o.data[o.len - 1] == ' ')) o.data[--o.len] = '\0';
    int rc = dream_error_set(DREAM_EIO, "%s failed (%s %d)%s%.*s", what, st < 0 ? "could not run it:" : "exit status", st,
                             o.len ? ": " : "", o.data ? utf8_cut(o.data, 300) : 0, o.data ? o.data : "");
    dbuf_free(&o);
    return rc;
}

/* The systemd user unit directory: $XDG_CONFIG_HOME/systemd/user, else (unset or relative, as
 * systemd reads it too) ~/.config/systemd/user. */
static int schedule_unit_dir(char **out)
{
    const char *x = getenv("XDG_CONFIG_HOME");
    struct dbuf b = {0};
    if (x && x[0] == '/') {
        dbuf_printf(&b, "%s/systemd/user", x);
    } else {
        char *home = NULL;
        int rc = dream_paths_home(&home);
        if (rc) return rc;
        dbuf_printf(&b, "%s/.config/systemd/user", home);
        free(home);
    }
    *out = dbuf_take(&b);
    return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
}

static int schedule_state_path(char **out)
{
    char *cfg = NULL;
    int rc = dream_paths_config_dir(&cfg);
    if (rc) return rc;
    struct dbuf b = {0};
    dbuf_printf(&b, "%s/schedule", cfg);
    free(cfg);
    *out = dbuf_take(&b);
    return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
}

/* Values put into unit files and crontab lines are quoted, never escaped: refuse what quoting
 * cannot carry (quotes, backslashes, '%' which both systemd and cron expand, control bytes). */
static int schedule_check_value(const char *what, const char *v)
{
    for (const char *p = v; *p; p++)
        if (*p == '"' || *p == '\'' || *p == '\\' || *p == '%' || *p == '$' || *p == '`' || (unsigned char)*p < 0x20)
            return dream_error_set(DREAM_EINVAL, "%s '%s' holds '%c', which a scheduled job cannot carry safely: use a path without it", what, v,
                                   (unsigned char)*p < 0x20 ? '?' : *p);
    return 0;
}

static int schedule_self(const char *given, char *out, size_t n)
{
    if (given) {
        if (given[0] != '/') return dream_error_set(DREAM_EINVAL, "the dream binary must be an absolute path, not '%s'", given);
        snprintf(out, n, "%s", given);
        return 0;
    }
    ssize_t l = readlink("/proc/self/exe", out, n - 1);
    if (l <= 0) return dream_error_set(DREAM_EIO, "cannot find this program's own path (/proc/self/exe): %s", strerror(errno));
    out[l] = '\0';
    return 0;
}

static int schedule_write_state(const char *via, int hour, int minute, const char *file)
{
    char *path = NULL;
    int rc = schedule_state_path(&path);
    if (rc) return rc;
    char *dir = strdup(path);
    if (!dir) {
        free(path);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    *strrchr(dir, '/') = '\0';
    struct dbuf b = {0};
    dbuf_printf(&b, "via=%s\nat=%02d:%02d\nfile=%s\n", via, hour, minute, file);
    rc = file_mkdirs(dir, 0755);
    if (!rc) rc = file_write_atomic(path, b.data, b.len);
    dbuf_free(&b);
    free(dir);
    free(path);
    return rc;
}

/* ---- systemd ------------------------------------------------------------------------------ */

static int schedule_systemd_install(int hour, int minute, const char *self, struct dream_schedule_result *out)
{
    char *dir = NULL;
    int rc = schedule_unit_dir(&dir);
    if (rc) return rc;
    struct dbuf svc = {0}, tmr = {0}, sp = {0}, tp = {0};
    dbuf_printf(&svc,
                "# Written by `dream schedule`; removed by `dream unschedule`.\n"
                "[Unit]\n"
                "Description=dream: ingest new agent sessions and dream them into the wiki\n"
                "\n"
                "[Service]\n"
                "Type=oneshot\n"
                "Nice=10\n");
    for (size_t i = 0; schedule_env[i]; i++) {
        char *v = NULL;
        if (!schedule_env_value(schedule_env[i], &v) && v) dbuf_printf(&svc, "Environment=\"%s=%s\"\n", schedule_env[i], v);
        free(v);
    }
    /* '-': a missing session directory makes ingest exit 1; the pipeline still runs */
    const char *q = strchr(self, ' ') ? "\"" : ""; /* quoted only when it must be */
    dbuf_printf(&svc, "ExecStart=-%s%s%s ingest --from claude-code --from codex --from pi\nExecStart=%s%s%s run\n", q, self, q, q, self, q);
    dbuf_printf(&tmr,
                "# Written by `dream schedule`; removed by `dream unschedule`.\n"
                "[Unit]\n"
                "Description=dream, daily at %02d:%02d\n"
                "\n"
                "[Timer]\n"
                "OnCalendar=*-*-* %02d:%02d:00\n"
                "Persistent=true\n"
                "\n"
                "[Install]\n"
                "WantedBy=timers.target\n",
                hour, minute, hour, minute);
    dbuf_printf(&sp, "%s/dream.service", dir);
    dbuf_printf(&tp, "%s/dream.timer", dir);
    if (!svc.data || !tmr.data || !sp.data || !tp.data) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    /* the units of an earlier schedule, put back if this one fails: a failed reschedule took the
     * working job away, and status still named it */
    char *old_svc = NULL, *old_tmr = NULL;
    size_t old_svc_len = 0, old_tmr_len = 0;
    if (!rc && file_read_all(sp.data, 1 << 20, &old_svc, &old_svc_len) != 0) old_svc = NULL;
    if (!rc && file_read_all(tp.data, 1 << 20, &old_tmr, &old_tmr_len) != 0) old_tmr = NULL;
    dream_error_clear();
    if (!rc) rc = file_mkdirs(dir, 0755);
    if (!rc) rc = file_write_atomic(sp.data, svc.data, svc.len);
    if (!rc) rc = file_write_atomic(tp.data, tmr.data, tmr.len);
    if (!rc) {
        char *reload[] = {"systemctl", "--user", "daemon-reload", NULL};
        char *enable[] = {"systemctl", "--user", "enable", "--now", "dream.timer", NULL};
        rc = schedule_run(reload, NULL, "systemctl --user daemon-reload");
        if (!rc) rc = schedule_run(enable, NULL, "systemctl --user enable --now dream.timer");
        if (rc) { /* no user manager here (a container, no login session): take the files back */
            if (old_svc) file_write_atomic(sp.data, old_svc, old_svc_len);
            else unlink(sp.data);
            if (old_tmr) file_write_atomic(tp.data, old_tmr, old_tmr_len);
            else unlink(tp.data);
        }
    }
    free(old_svc);
    free(old_tmr);
    if (!rc) {
        snprintf(out->via, sizeof out->via, "systemd");
        snprintf(out->file, sizeof out->file, "%s", tp.data);
    }
    dbuf_free(&svc), dbuf_free(&tmr), dbuf_free(&sp), dbuf_free(&tp);
    free(dir);
    return rc;
}

/* Removes the units when they are there; *removed says whether they were. */
static int schedule_systemd_remove(bool *removed, char *file, size_t n)
{
    char *dir = NULL;
    *removed = false;
    int rc = schedule_unit_dir(&dir);
    if (rc) return rc;
    char sp[PATH_MAX], tp[PATH_MAX];
    snprintf(sp, sizeof sp, "%s/dream.service", dir);
    snprintf(tp, sizeof tp, "%s/dream.timer", dir);
    free(dir);
    if (!file_exists(tp) && !file_exists(sp)) return 0;
    if (schedule_on_path("systemctl")) {
        char *disable[] = {"systemctl", "--user", "disable", "--now", "dream.timer", NULL};
        struct dbuf ignored = {0};
        schedule_exec(disable, NULL, &ignored); /* best effort: the files go either way */
        dbuf_free(&ignored);
    }
    if ((file_exists(tp) && unlink(tp) != 0) || (file_exists(sp) && unlink(sp) != 0))
        return dream_error_set(DREAM_EIO, "cannot remove %s: %s", tp, strerror(errno));
    if (schedule_on_path("systemctl")) {
        char *reload[] = {"systemctl", "--user", "daemon-reload", NULL};
        struct dbuf ignored = {0};
        schedule_exec(reload, NULL, &ignored);
        dbuf_free(&ignored);
    }
    *removed = true;
    snprintf(file, n, "%s", tp);
    return 0;
}

/* ---- cron --------------------------------------------------------------------------------- */

/* Whether line[0..n) is dream's crontab line: a job (not a comment) that ends with the tag, as
 * dream schedule writes it; a comment of the person's that names the tag is theirs. */
static bool schedule_cron_ours(const char *line, size_t n)
{
    size_t tl = strlen(SCHEDULE_CRON_TAG);
    while (n && isspace((unsigned char)line[n - 1])) n--;
    const char *first = line;
    while (first < line + n && isspace((unsigned char)*first)) first++;
    return n >= tl && *first != '#' && memcmp(line + n - tl, SCHEDULE_CRON_TAG, tl) == 0;
}

/* The current crontab without dream's line in *rest; *had says whether dream's line was there
 * (and ours, when not NULL, gets that line).
 * crontab -l fails both when there is no crontab (cron's "no crontab for <user>", busybox's "No
 * such file or directory") and when the crontab could not be read; only the first is an empty
 * crontab. Reading the second as empty would have the caller install a crontab of dream's line
 * alone, in place of every line the person had. */
static int schedule_cron_read(struct dbuf *rest, bool *had, struct dbuf *ours)
{
    char *list[] = {"crontab", "-l", NULL};
    struct dbuf cur = {0};
    int st = schedule_exec(list, NULL, &cur);
    *had = false;
    if (st < 0) {
        dbuf_free(&cur);
        return dream_error_set(DREAM_EIO, "cannot run crontab -l");
    }
    if (st != 0) {
        bool none = cur.data && (strcasestr(cur.data, "no crontab") || strstr(cur.data, "No such file or directory"));
        if (!none) {
            while (cur.len && isspace((unsigned char)cur.data[cur.len - 1])) cur.data[--cur.len] = '\0';
            int rc = dream_error_set(DREAM_EIO, "crontab -l failed (exit status %d)%s%.*s: the crontab was not read, so it is left as it is",
                                     st, cur.len ? ": " : "", cur.data ? utf8_cut(cur.data, 300) : 0, cur.data ? cur.data : "");
            dbuf_free(&cur);
            return rc;
        }
        dbuf_reset(&cur);
    }
    for (char *line = cur.data, *next; line && *line; line = next) {
        char *nl = strchr(line, '\n');
        next = nl ? nl + 1 : line + strlen(line);
        size_t len = (size_t)(next - line);
        if (schedule_cron_ours(line, nl ? (size_t)(nl - line) : len)) {
            *had = true;
            if (ours) dbuf_append(ours, line, nl ? (size_t)(nl - line) : len);
            continue;
        }
        dbuf_append(rest, line, len);
        if (!nl) dbuf_putc(rest, '\n');
    }
    dbuf_free(&cur);
    return 0;
}

static int schedule_cron_write(const struct dbuf *text)
{
    char *install[] = {"crontab", "-", NULL};
    return schedule_run(install, text->data ? text->data : "", "crontab -");
}

static int schedule_cron_install(int hour, int minute, const char *self, struct dream_schedule_result *out)
{
    char *rel = NULL, *cache = NULL; /* the job's log goes there: a relative DREAM_HOME makes it relative */
    int rc = dream_paths_cache_dir(&rel);
    if (rc) return rc;
    rc = schedule_absolute("the cache directory", rel, &cache);
    free(rel);
    if (!rc) rc = schedule_check_value("the cache directory", cache);
    struct dbuf env = {0}, text = {0};
    for (size_t i = 0; !rc && schedule_env[i]; i++) {
        char *v = NULL;
        if (!(rc = schedule_env_value(schedule_env[i], &v)) && v && !(rc = schedule_check_value(schedule_env[i], v)))
            dbuf_printf(&env, "%s='%s' ", schedule_env[i], v);
        free(v);
    }
    bool had = false;
    if (!rc) rc = file_mkdirs(cache, 0755);
    if (!rc) rc = schedule_cron_read(&text, &had, NULL);
    if (!rc) {
        const char *e = env.data ? env.data : "";
        dbuf_printf(&text, "%d %d * * * %s'%s' ingest --from claude-code --from codex --from pi >>'%s/schedule.log' 2>&1; %s'%s' run >>'%s/schedule.log' 2>&1 %s\n",
                    minute, hour, e, self, cache, e, self, cache, SCHEDULE_CRON_TAG);
        rc = schedule_cron_write(&text);
    }
    if (!rc) {
        snprintf(out->via, sizeof out->via, "cron");
        snprintf(out->file, sizeof out->file, "crontab");
    }
    dbuf_free(&env);
    dbuf_free(&text);
    free(cache);
    return rc;
}

/* ---- public ------------------------------------------------------------------------------- */

int dream_schedule_install(int hour, int minute, const char *dream_path, struct dream_schedule_result *out)
{
    memset(out, 0, sizeof *out);
    if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return dream_error_set(DREAM_EINVAL, "%d:%d is not a time of day", hour, minute);
    char self[PATH_MAX];
    int rc = schedule_self(dream_path, self, sizeof self);
    if (!rc) rc = schedule_check_value("the dream binary", self);
    for (size_t i = 0; !rc && schedule_env[i]; i++) {
        char *v = NULL;
        if (!(rc = schedule_env_value(schedule_env[i], &v)) && v) rc = schedule_check_value(schedule_env[i], v);
        free(v);
    }
    if (rc) return rc;
    bool systemd = schedule_on_path("systemctl"), cron = schedule_on_path("crontab");
    if (!systemd && !cron)
        return dream_error_set(DREAM_ENOTFOUND, "neither systemctl nor crontab is on PATH: run `%s ingest --from claude-code --from codex --from pi; %s run` daily from your own scheduler",
                               self, self);
    /* a job of the other kind from an earlier schedule would run twice */
    if (systemd) {
        rc = schedule_systemd_install(hour, minute, self, out);
        if (rc && cron) {
            snprintf(out->note, sizeof out->note, "systemd passed over: %s", dream_error_last());
            dream_error_clear();
            rc = 0;
            systemd = false;
        }
        if (rc) return rc;
    }
    if (!systemd) {
        bool removed;
        char f[PATH_MAX];
        if ((rc = schedule_systemd_remove(&removed, f, sizeof f))) return rc;
        if ((rc = schedule_cron_install(hour, minute, self, out))) return rc;
    } else if (cron) {
        struct dbuf rest = {0};
        bool had = false;
        if (schedule_cron_read(&rest, &had, NULL) != 0) dream_error_clear(); /* unreadable: nothing to take out */
        else if (had) rc = schedule_cron_write(&rest);
        dbuf_free(&rest);
        if (rc) return rc;
    }
    return schedule_write_state(out->via, hour, minute, out->file);
}

int dream_schedule_remove(struct dream_schedule_result *out)
{
    memset(out, 0, sizeof *out);
    bool removed = false;
    char file[PATH_MAX] = "";
    int rc = schedule_systemd_remove(&removed, file, sizeof file);
    if (rc) return rc;
    if (removed) {
        snprintf(out->via, sizeof out->via, "systemd");
        snprintf(out->file, sizeof out->file, "%s", file);
    }
    if (schedule_on_path("crontab")) {
        struct dbuf rest = {0};
        bool had = false;
        rc = schedule_cron_read(&rest, &had, NULL);
        if (!rc && had) {
            rc = schedule_cron_write(&rest);
            if (!rc) {
                snprintf(out->via, sizeof out->via, "%s", removed ? "systemd+cron" : "cron");
                if (!removed) snprintf(out->file, sizeof out->file, "crontab");
            }
        }
        dbuf_free(&rest);
        if (rc) return rc;
    }
    char *state = NULL;
    if ((rc = schedule_state_path(&state))) return rc;
    if (file_exists(state) && unlink(state) != 0) rc = dream_error_set(DREAM_EIO, "cannot remove %s: %s", state, strerror(errno));
    free(state);
    return rc;
}

int dream_schedule_live(const char *via)
{
    if (via && strcmp(via, "systemd") == 0) {
        if (!schedule_on_path("systemctl")) return -1;
        char *ask[] = {"systemctl", "--user", "is-enabled", "dream.timer", NULL};
        struct dbuf o = {0};
        int st = schedule_exec(ask, NULL, &o);
        dbuf_free(&o);
        return st < 0 ? -1 : st == 0;
    }
    if (via && strcmp(via, "cron") == 0) {
        if (!schedule_on_path("crontab")) return -1;
        struct dbuf rest = {0};
        bool had = false;
        int rc = schedule_cron_read(&rest, &had, NULL);
        dbuf_free(&rest);
        if (rc) dream_error_clear();
        return rc ? -1 : had;
    }
    return -1;
}

/* The DREAM_HOME value text carries after key (up to the closing quote), malloc'd; NULL when the
 * text names none (the job dreams the default memory). */
static char *schedule_home_in(const char *text, const char *key, char close)
{
    const char *p = text ? strstr(text, key) : NULL;
    if (!p) return NULL;
    p += strlen(key);
    const char *e = strchr(p, close);
    return e ? strndup(p, (size_t)(e - p)) : NULL;
}

/* Whether a job of kind via is in place; 1 with *have the DREAM_HOME it carries (malloc'd, NULL
 * for the default memory), 0 when there is none, -1 when it cannot tell. */
static int schedule_job_home(const char *via, char **have)
{
    *have = NULL;
    int r = -1;
    if (via && strcmp(via, "systemd") == 0) {
        char *dir = NULL, *text = NULL;
        size_t len = 0;
        struct dbuf sp = {0};
        if (!schedule_unit_dir(&dir) && !dbuf_printf(&sp, "%s/dream.service", dir)) {
            if (!file_exists(sp.data)) r = 0;
            else if (!file_read_all(sp.data, 1 << 20, &text, &len)) {
                *have = schedule_home_in(text, "Environment=\"DREAM_HOME=", '"');
                r = 1;
            }
        }
        dbuf_free(&sp);
        free(dir);
        free(text);
    } else if (via && strcmp(via, "cron") == 0 && schedule_on_path("crontab")) {
        struct dbuf rest = {0}, line = {0};
        bool had = false;
        if (schedule_cron_read(&rest, &had, &line) == 0) {
            r = had;
            if (had) *have = schedule_home_in(line.data, "DREAM_HOME='", '\'');
        }
        dbuf_free(&rest);
        dbuf_free(&line);
    }
    dream_error_clear();
    return r;
}

/* 1 when want and have name the same memory (both NULL: the default one). */
static bool schedule_same_home(const char *want, const char *have)
{
    return (!want && !have) || (want && have && strcmp(want, have) == 0);
}

int dream_schedule_ours(const char *via)
{
    char *want = NULL, *have = NULL;
    if (schedule_env_value("DREAM_HOME", &want)) {
        dream_error_clear();
        return -1;
    }
    int r = schedule_job_home(via, &have);
    if (r == 1) r = schedule_same_home(want, have);
    else r = -1;
    free(want);
    free(have);
    return r;
}

int dream_schedule_other(char **home)
{
    *home = NULL;
    char *want = NULL;
    if (schedule_env_value("DREAM_HOME", &want)) {
        dream_error_clear();
        return -1;
    }
    int r = 0;
    const char *const kinds[] = {"systemd", "cron"};
    for (size_t i = 0; i < 2 && r == 0; i++) {
        char *have = NULL;
        if (schedule_job_home(kinds[i], &have) == 1 && !schedule_same_home(want, have)) {
            r = 1;
            *home = have ? have : strdup("");
            if (!*home) r = -1;
        } else {
            free(have);
        }
    }
    free(want);
    return r;
}
