# Tests of The Dreaming's pipeline (issue 4): the segment, extract, resolve and route stages.
if(TARGET dream_memory)
  dream_add_test(NAME test_segment SOURCES dreaming/test_segment.c support/segment_fake.c LIBS dream_memory PkgConfig::SQLITE3
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/ingest ${CMAKE_SOURCE_DIR}/examples/conversations)
  dream_add_test(NAME test_segment_resume SOURCES dreaming/test_segment_resume.c support/segment_fake.c support/kill_resume.c LIBS dream_memory PkgConfig::SQLITE3)
  dream_add_test(NAME test_extract SOURCES dreaming/test_extract.c support/segment_fake.c LIBS dream_memory PkgConfig::SQLITE3
                 ARGS ${CMAKE_SOURCE_DIR}/examples/conversations)
  # The fixture corpus (tests/data/dreaming) through all four stages with the scripted fake, and
  # the same pipeline killed at random points and resumed.
  dream_add_test(NAME test_dreaming_fixture SOURCES dreaming/test_dreaming_fixture.c support/dreaming_fixture.c support/dreaming_fake.c
                 LIBS dream_memory PkgConfig::SQLITE3 ARGS ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  dream_add_test(NAME test_pipeline_resume SOURCES dreaming/test_pipeline_resume.c support/dreaming_fixture.c support/dreaming_fake.c support/kill_resume.c
                 LIBS dream_memory PkgConfig::SQLITE3 ARGS ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  dream_add_test(NAME test_resolve SOURCES dreaming/test_resolve.c LIBS dream_memory PkgConfig::SQLITE3 PkgConfig::LIBGIT2)
  dream_add_test(NAME test_segment_noise SOURCES dreaming/test_segment_noise.c LIBS dream_memory PkgConfig::SQLITE3 FIXTURES tiny_models)
  dream_add_test(NAME test_extract_noise SOURCES dreaming/test_extract_noise.c LIBS dream_memory PkgConfig::SQLITE3 FIXTURES tiny_models)
endif()

# A dry run of the segment stage over the ingested sample corpus (lists the work, calls no model).
if(TARGET dream)
  set(_d ${CMAKE_BINARY_DIR}/tests/dreaming-cli)
  add_test(NAME cli_run_segment_dry
           COMMAND sh -c "rm -rf '${_d}/run' && DREAM_HOME='${_d}/run' '$<TARGET_FILE:dream>' ingest '${CMAKE_SOURCE_DIR}/examples/conversations' >/dev/null && DREAM_HOME='${_d}/run' '$<TARGET_FILE:dream>' run --stage segment --dry-run")
  set_tests_properties(cli_run_segment_dry PROPERTIES PASS_REGULAR_EXPRESSION "segment: [1-9][0-9]* conversation\\(s\\) would be segmented")
  # `dream run` with no --stage runs every stage in order: segment, extract, resolve, route.
  add_test(NAME cli_run_all_dry
           COMMAND sh -c "rm -rf '${_d}/run-all' && DREAM_HOME='${_d}/run-all' '$<TARGET_FILE:dream>' ingest '${CMAKE_SOURCE_DIR}/examples/conversations' >/dev/null && DREAM_HOME='${_d}/run-all' '$<TARGET_FILE:dream>' run --dry-run")
  set_tests_properties(cli_run_all_dry PROPERTIES PASS_REGULAR_EXPRESSION "segment: [1-9][0-9]* conversation.*extract: 0 chunk\\(s\\) would be extracted.*resolve: 0 name.*route: 0 entit")
  # Progress: on a terminal (script(1) gives stderr a pty) each stage redraws "done/total (pct),
  # rate/s" in place; on a pipe only the one summary line per stage. The tiny model's context
  # is set too small for the prompts, so every call fails at once (a recorded failed attempt)
  # and the test takes seconds.
  set(_tiny "DREAM_MODEL='${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf' DREAM_ADAPTERS='${_d}/no-adapters' DREAM_THREADS=1 DREAM_CTX=256")
  set(_ingest "rm -rf '${_d}/progress' && DREAM_HOME='${_d}/progress' '$<TARGET_FILE:dream>' ingest '${CMAKE_SOURCE_DIR}/tests/data/dreaming/corpus' >/dev/null")
  find_program(DREAM_SCRIPT_PROG script)
  if(DREAM_SCRIPT_PROG)
    add_test(NAME cli_run_progress_tty
             COMMAND sh -c "${_ingest} && ${_tiny} DREAM_HOME='${_d}/progress' '${DREAM_SCRIPT_PROG}' -qec \"'$<TARGET_FILE:dream>' run --stage segment --limit 4 --batch 2\" /dev/null")
    set_tests_properties(cli_run_progress_tty PROPERTIES FIXTURES_REQUIRED tiny_models RESOURCE_LOCK dreaming_cli_progress
      PASS_REGULAR_EXPRESSION "segment: 2/4 \\(50%\\), [0-9.]+/s.*segment: 4/4 \\(100%\\), [0-9.]+/s.*segment: 4 conversation\\(s\\): 0 segmented into 0 chunk\\(s\\), 0 skipped \\(nothing to cut\\), 4 failed attempt\\(s\\).*conversations/s")
  endif()
  add_test(NAME cli_run_progress_pipe
           COMMAND sh -c "${_ingest} && ${_tiny} DREAM_HOME='${_d}/progress' '$<TARGET_FILE:dream>' run --limit 4 --batch 2 2>&1 | cat")
  set_tests_properties(cli_run_progress_pipe PROPERTIES FIXTURES_REQUIRED tiny_models RESOURCE_LOCK dreaming_cli_progress
    PASS_REGULAR_EXPRESSION "segment: 4 conversation\\(s\\).*4 failed attempt\\(s\\).*conversations/s\\)\nextract: 0 chunk\\(s\\).*chunks/s\\)\nresolve: 0 name\\(s\\).*names/s\\)\nroute: 0 entit\\(ies\\).*entities/s\\)\n"
    FAIL_REGULAR_EXPRESSION "[0-9]+/[0-9]+ \\([0-9]+%\\)")
  # The route options reach the stage: the engagement gate is named in the summary; a negative
  # gate is a usage error.
  add_test(NAME cli_run_route_engagement_dry
           COMMAND sh -c "rm -rf '${_d}/engage' && DREAM_HOME='${_d}/engage' '$<TARGET_FILE:dream>' run --stage route --engagement 3 --dry-run")
  set_tests_properties(cli_run_route_engagement_dry PROPERTIES
    PASS_REGULAR_EXPRESSION "route: 0 entit\\(ies\\): 0 with an article \\(0 new, 0 by the engagement gate of 3 message\\(s\\)\\), 0 captured \\(dry run")
  add_test(NAME cli_run_bad_engagement COMMAND sh -c "'$<TARGET_FILE:dream>' run --engagement -1; test $? -eq 2")
  add_test(NAME cli_run_unknown_stage COMMAND sh -c "'$<TARGET_FILE:dream>' run --stage synthesize; test $? -eq 2")
endif()

# The run lock (tests/dreaming/run_lock_cli.sh): while another process holds <store>.lock, `dream run`
# stops at once naming it, `dream status` says a run is in progress, a dry run still works.
find_program(DREAM_FLOCK_PROG flock)
if(TARGET dream AND DREAM_FLOCK_PROG)
  add_test(NAME cli_run_lock COMMAND bash ${CMAKE_SOURCE_DIR}/tests/dreaming/run_lock_cli.sh $<TARGET_FILE:dream> ${DREAM_FLOCK_PROG}
           ${CMAKE_SOURCE_DIR}/tests/data/dreaming/corpus ${CMAKE_BINARY_DIR}/tests/dreaming-cli/lock)
  set_tests_properties(cli_run_lock PROPERTIES PASS_REGULAR_EXPRESSION "PASS: run lock")
endif()

# `dream forget` end to end (tests/dreaming/forget_cli.sh): the verb list, --help, bad arguments,
# a dry run, and a forget that removes an article and commits.
find_program(DREAM_GIT_PROG git)
if(TARGET dream AND DREAM_GIT_PROG)
  add_test(NAME cli_forget COMMAND bash ${CMAKE_SOURCE_DIR}/tests/dreaming/forget_cli.sh $<TARGET_FILE:dream>
           ${CMAKE_SOURCE_DIR}/tests/data/dreaming/corpus ${CMAKE_BINARY_DIR}/tests/dreaming-cli/forget)
  set_tests_properties(cli_forget PROPERTIES PASS_REGULAR_EXPRESSION "PASS: dream forget" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()

# The wiki's git repository as git itself treats it (tests/dreaming/wiki_git_cli.sh): forget is
# refused mid-rebase, on a detached HEAD, under git's lock, over uncommitted changes it would lose
# or leave staged; a killed commit's lock is cleared; the commit bears the person's git names.
if(TARGET dream AND DREAM_GIT_PROG)
  add_test(NAME cli_wiki_git COMMAND bash ${CMAKE_SOURCE_DIR}/tests/dreaming/wiki_git_cli.sh $<TARGET_FILE:dream>
           ${CMAKE_SOURCE_DIR}/tests/data/dreaming/corpus ${CMAKE_BINARY_DIR}/tests/dreaming-cli/wiki-git)
  set_tests_properties(cli_wiki_git PROPERTIES PASS_REGULAR_EXPRESSION "PASS: wiki git" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()

# Replay (tests/dreaming/replay_cli.sh): `dream run --replay` on the tiny model writes the same
# wiki as `dream run --backend` from the same ground-truth oracle (train/oracle.py), so the
# oracle's answers really go through the engine's forced decoding.
find_program(DREAM_PYTHON_PROG python3)
if(TARGET dream AND DREAM_PYTHON_PROG AND EXISTS /usr/share/wordnet/data.noun)
  add_test(NAME cli_run_replay COMMAND bash ${CMAKE_SOURCE_DIR}/tests/dreaming/replay_cli.sh $<TARGET_FILE:dream>
           ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/tests/dreaming-cli/replay)
  set_tests_properties(cli_run_replay PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 900
    PASS_REGULAR_EXPRESSION "PASS: replay" FAIL_REGULAR_EXPRESSION "FAIL:"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  # The same history recorded twice through the real pipeline and the oracle gives the same
  # records and the same wiki, byte for byte (tests/dreaming/record_stable.sh).
  add_test(NAME cli_record_stable COMMAND bash ${CMAKE_SOURCE_DIR}/tests/dreaming/record_stable.sh $<TARGET_FILE:dream>
           ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/tests/dreaming-cli/record-stable)
  set_tests_properties(cli_record_stable PROPERTIES TIMEOUT 600
    PASS_REGULAR_EXPRESSION "PASS: record stable" FAIL_REGULAR_EXPRESSION "FAIL:"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
else()
  message(STATUS "cli_run_replay, cli_record_stable: not registered (need python3 and wordnet-base for train/gen_corpus.py)")
endif()
