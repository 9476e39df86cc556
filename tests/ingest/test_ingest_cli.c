/* test_ingest_cli.c — `dream ingest` end to end: the built binary on the fixtures and the
 * bundled examples. argv: DREAM_BINARY FIXTURE_DIR EXAMPLES_DIR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dream_bin, *data_dir, *examples_dir;
static char tmpdir[256];
static char out[1 << 16];

/* Runs a shell command line with stdout and stderr captured into out; returns the exit status. */
static int run(const char *fmt, ...)
{
    char cmd[4096], full[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "(%s) >'%s/out' 2>&1", cmd, tmpdir);
    int st = system(full);
    char path[400];
    snprintf(path, sizeof path, "%s/out", tmpdir);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    if (f) fclose(f);
    out[n] = '\0';
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dream-test-cli-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    (void)state;
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    assert_int_equal(system(cmd), 0);
    (void)state;
    return 0;
}

static void test_cli_ingest_reports_new_then_unchanged(void **state)
{
    assert_int_equal(run("'%s' ingest --store '%s/a.sqlite' '%s/chatgpt' '%s/claude-export.zip'", dream_bin, tmpdir, data_dir, data_dir), 0);
    assert_non_null(strstr(out, "3 new, 0 changed, 0 unchanged, 2 skipped"));
    assert_non_null(strstr(out, "2 empty"));
    assert_int_equal(run("'%s' ingest --store '%s/a.sqlite' '%s/chatgpt' '%s/claude-export.zip'", dream_bin, tmpdir, data_dir, data_dir), 0);
    assert_non_null(strstr(out, "0 new, 0 changed, 3 unchanged"));
    assert_non_null(strstr(out, "3 conversations"));
    (void)state;
}

/* A directory holding an export saved with its name in capitals (EXPORT.JSON, as Windows
 * tools write it) reads it; it was passed over without a word. */
static void test_cli_ingest_reads_names_in_capitals(void **state)
{
    assert_int_equal(run("mkdir -p '%s/caps' && cp '%s/openai/chats.jsonl' '%s/caps/CHATS.JSONL'", tmpdir, data_dir, tmpdir), 0);
    assert_int_equal(run("'%s' ingest --store '%s/caps.sqlite' '%s/caps'", dream_bin, tmpdir, tmpdir), 0);
    assert_non_null(strstr(out, "3 new"));
    (void)state;
}

static void test_cli_ingest_store_defaults_to_dream_home(void **state)
{
    assert_int_equal(run("DREAM_HOME='%s/home' '%s' ingest '%s/openai/chats.jsonl'", tmpdir, dream_bin, data_dir), 0);
    char path[400];
    snprintf(path, sizeof path, "%s/home/memory.sqlite", tmpdir);
    assert_true(file_exists(path));
    assert_non_null(strstr(out, "3 new"));
    (void)state;
}

static void test_cli_ingest_from_pi_reads_the_default_session_directory(void **state)
{
    assert_int_equal(run("mkdir -p '%s/h/.pi/agent' && cp -r '%s/pi' '%s/h/.pi/agent/sessions'", tmpdir, data_dir, tmpdir), 0);
    assert_int_equal(run("HOME='%s/h' '%s' ingest --store '%s/p.sqlite' --from pi", tmpdir, dream_bin, tmpdir), 0);
    assert_non_null(strstr(out, "1 new"));
    /* A missing agent directory is named, not fatal for the others, and no error among several
     * (the nightly job asks for all three agents: its log showed an error every night) ... */
    assert_int_equal(run("HOME='%s/h' '%s' ingest --store '%s/p.sqlite' --from codex --from pi", tmpdir, dream_bin, tmpdir), 0);
    assert_non_null(strstr(out, ".codex/sessions does not exist (the other agents are read)"));
    assert_non_null(strstr(out, "1 unchanged"));
    /* ... but the one agent asked for, or every one, missing is */
    assert_int_equal(run("HOME='%s/h' '%s' ingest --store '%s/p.sqlite' --from codex", tmpdir, dream_bin, tmpdir), 1);
    assert_non_null(strstr(out, ".codex/sessions does not exist"));
    assert_int_equal(run("HOME='%s/h' '%s' ingest --store '%s/p.sqlite' --from codex --from claude-code", tmpdir, dream_bin, tmpdir), 1);
    /* the agents' own settings for where they keep their files: PI_CODING_AGENT_DIR,
     * CLAUDE_CONFIG_DIR (and CODEX_HOME) */
    assert_int_equal(run("mkdir -p '%s/pa' '%s/cc' && cp -r '%s/pi' '%s/pa/sessions' && cp -r '%s/claude-code' '%s/cc/projects'", tmpdir, tmpdir,
                         data_dir, tmpdir, data_dir, tmpdir),
                     0);
    assert_int_equal(run("HOME='%s/nowhere' PI_CODING_AGENT_DIR='%s/pa' CLAUDE_CONFIG_DIR='%s/cc' '%s' ingest --store '%s/q.sqlite' --from pi "
                         "--from claude-code",
                         tmpdir, tmpdir, tmpdir, dream_bin, tmpdir),
                     0);
    assert_non_null(strstr(out, "2 new"));
    (void)state;
}

static void test_cli_ingest_malformed_input_names_the_file_and_exits_1(void **state)
{
    assert_int_equal(run("printf '[{\"id\": \"x\", \"mapping\": {' > '%s/cut.json'", tmpdir), 0);
    assert_int_equal(run("'%s' ingest --store '%s/m.sqlite' '%s/cut.json' '%s/codex'", dream_bin, tmpdir, tmpdir, data_dir), 1);
    assert_non_null(strstr(out, "cut.json"));
    assert_non_null(strstr(out, "truncated"));
    assert_non_null(strstr(out, "1 new")); /* the codex session after it is still read */
    (void)state;
}

static void test_cli_ingest_usage_errors_exit_2(void **state)
{
    assert_int_equal(run("'%s' ingest --format word '%s'", dream_bin, data_dir), 2);
    assert_non_null(strstr(out, "unknown format 'word'"));
    assert_int_equal(run("'%s' ingest --from chatgpt", dream_bin), 2);
    assert_int_equal(run("'%s' ingest", dream_bin), 2);
    assert_int_equal(run("'%s' ingest --help", dream_bin), 0);
    assert_non_null(strstr(out, "--from"));
    (void)state;
}

static void test_cli_ingest_missing_path_exits_1(void **state)
{
    assert_int_equal(run("'%s' ingest --store '%s/x.sqlite' '%s/nope'", dream_bin, tmpdir, tmpdir), 1);
    assert_non_null(strstr(out, "nope"));
    /* nothing to read: no store is made for it (before, an empty one was left behind) */
    char store[400];
    snprintf(store, sizeof store, "%s/x.sqlite", tmpdir);
    assert_int_not_equal(access(store, F_OK), 0);
    (void)state;
}

/* A folder with nothing dream reads is no silent success: the message says what was found there
 * and why none of it was read, the summary's skipped count is its breakdown's sum, and the exit
 * status is 1. Files of other names are counted as found, not opened. */
static void test_cli_ingest_folder_with_nothing_readable_says_why_and_exits_1(void **state)
{
    assert_int_equal(run("mkdir -p '%s/odd' && echo '{\"a\": 1}' > '%s/odd/a.json' && echo hello > '%s/odd/b.json' && echo notes > '%s/odd/c.txt'",
                         tmpdir, tmpdir, tmpdir, tmpdir),
                     0);
    assert_int_equal(run("'%s' ingest --store '%s/o.sqlite' '%s/odd'", dream_bin, tmpdir, tmpdir), 1);
    assert_non_null(strstr(out, "0 new, 0 changed, 0 unchanged, 2 skipped"));
    assert_non_null(strstr(out, "skipped: 2 not in a known format (files)"));
    char want[512];
    snprintf(want, sizeof want, "found 3 files in %s/odd, none in a format dream reads (ChatGPT or Claude.ai exports", tmpdir);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "1 of them not named *.json, *.jsonl or *.zip; nothing ingested from it"));
    /* only files of other names: found, none opened */
    assert_int_equal(run("mkdir -p '%s/txt' && echo notes > '%s/txt/a.txt'", tmpdir, tmpdir), 0);
    assert_int_equal(run("'%s' ingest --store '%s/o.sqlite' '%s/txt'", dream_bin, tmpdir, tmpdir), 1);
    assert_non_null(strstr(out, "found 1 file in"));
    assert_non_null(strstr(out, "none named *.json, *.jsonl or *.zip"));
    /* an empty folder */
    assert_int_equal(run("mkdir -p '%s/none'", tmpdir), 0);
    assert_int_equal(run("'%s' ingest --store '%s/o.sqlite' '%s/none'", dream_bin, tmpdir, tmpdir), 1);
    assert_non_null(strstr(out, "found no files in"));
    /* one readable path beside it still fails the run, and is still stored */
    assert_int_equal(run("'%s' ingest --store '%s/o.sqlite' '%s/odd' '%s/openai/chats.jsonl'", dream_bin, tmpdir, tmpdir, data_dir), 1);
    assert_non_null(strstr(out, "3 new"));
    assert_non_null(strstr(out, "nothing ingested from it"));
    (void)state;
}

/* An export holding no conversation (an account with none: `[]`, an empty ZIP export) says so:
 * before, it exited 1 with only the summary line, as if a message had named the file. */
static void test_cli_ingest_empty_export_says_so(void **state)
{
    assert_int_equal(run("echo '[]' > '%s/empty.json'", tmpdir), 0);
    assert_int_equal(run("'%s' ingest --store '%s/e.sqlite' '%s/empty.json'", dream_bin, tmpdir, tmpdir), 1);
    char want[512];
    snprintf(want, sizeof want, "%s/empty.json holds no conversation; nothing ingested from it", tmpdir);
    assert_non_null(strstr(out, want));
    (void)state;
}

static void test_cli_ingest_bundled_examples_cleanly(void **state)
{
    assert_int_equal(run("'%s' ingest --store '%s/ex.sqlite' '%s'", dream_bin, tmpdir, examples_dir), 0);
    assert_non_null(strstr(out, "8 new, 0 changed, 0 unchanged, 0 skipped"));
    (void)state;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_ingest_cli DREAM FIXTURE_DIR EXAMPLES_DIR\n");
        return 2;
    }
    dream_bin = argv[1];
    data_dir = argv[2];
    examples_dir = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_ingest_reports_new_then_unchanged),
        cmocka_unit_test(test_cli_ingest_reads_names_in_capitals),
        cmocka_unit_test(test_cli_ingest_store_defaults_to_dream_home),
        cmocka_unit_test(test_cli_ingest_from_pi_reads_the_default_session_directory),
        cmocka_unit_test(test_cli_ingest_malformed_input_names_the_file_and_exits_1),
        cmocka_unit_test(test_cli_ingest_usage_errors_exit_2),
        cmocka_unit_test(test_cli_ingest_missing_path_exits_1),
        cmocka_unit_test(test_cli_ingest_folder_with_nothing_readable_says_why_and_exits_1),
        cmocka_unit_test(test_cli_ingest_empty_export_says_so),
        cmocka_unit_test(test_cli_ingest_bundled_examples_cleanly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
