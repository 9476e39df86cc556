/* kill_resume.c — the kill-and-resume harness (see kill_resume.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kill_resume.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int kill_resume_round(const struct kill_resume *kr, bool by_event_round)
{
    int kills = 0;
    for (int tries = 0;; tries++) {
        bool by_event = by_event_round && tries < 3;
        long k = 1 + rand() % kr->total_events;
        if (by_event && kr->aim) k = kr->aim(tries, k, kr->ud);
        useconds_t delay = (useconds_t)(rand() % (int)(kr->run_s * 1e6 + 1));
        memset(kr->stage, 0, kr->stage_size);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) _exit(kr->run(by_event ? k : 0, kr->ud));
        if (!by_event && tries < 3) {
            usleep(delay);
            kill(pid, SIGKILL); /* may already have exited: then it finished */
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status)) {
            assert_int_equal(WTERMSIG(status), SIGKILL);
            kills++;
            if (kr->on_kill) kr->on_kill(tries, kr->ud);
            continue;
        }
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        return kills;
    }
}

void *kill_resume_shared(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int kill_resume_tmpdir(char *dir, size_t size, const char *name)
{
    const char *b = getenv("DREAM_TEST_BUILD");
    snprintf(dir, size, "%s/tmp-%s-XXXXXX", b ? b : "/tmp", name);
    return mkdtemp(dir) ? 0 : -1;
}

int kill_resume_rmdir(const char *dir)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

double kill_resume_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
