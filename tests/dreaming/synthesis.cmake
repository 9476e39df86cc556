# Tests of The Dreaming's writing stages (issue 5): create and fold over the fixture corpus with
# the scripted fake, compared with the golden vault in tests/data/dreaming/golden.
if(TARGET dream_memory)
  # gbnf_match asks llama.cpp's own grammar sampler whether the refresh grammar takes an answer.
  dream_add_test(NAME test_synthesis SOURCES dreaming/test_synthesis.c support/dreaming_fixture.c support/dreaming_fake.c support/gbnf_match.c
                 LIBS dream_memory dream::llama PkgConfig::SQLITE3 PkgConfig::LIBGIT2 ARGS ${CMAKE_SOURCE_DIR}/tests/data/dreaming
                 FIXTURES tiny_models)
endif()

# `dream run` over a set-up wiki lists the writing stages after route in its dry run.
if(TARGET dream)
  set(_s ${CMAKE_BINARY_DIR}/tests/synthesis-cli)
  add_test(NAME cli_run_synthesis_dry
           COMMAND sh -c "rm -rf '${_s}' && DREAM_HOME='${_s}' '$<TARGET_FILE:dream>' init --quiet && DREAM_HOME='${_s}' '$<TARGET_FILE:dream>' ingest '${CMAKE_SOURCE_DIR}/tests/data/dreaming/corpus' >/dev/null && DREAM_HOME='${_s}' '$<TARGET_FILE:dream>' run --dry-run")
  set_tests_properties(cli_run_synthesis_dry PROPERTIES PASS_REGULAR_EXPRESSION "route: 0 entit.*\ncreate: 0 article\\(s\\) would be written \\(dry run: nothing called or written\\)\nfold: 0 new chunk\\(s\\) would be routed.*\nreconcile: 0 article\\(s\\) would be reconciled.*\nlink: 0 article\\(s\\) would be scanned.*\nwikify: 0 changed article\\(s\\) would be tightened")
endif()

# The same program in its noise mode: create and fold on the tiny random-weight model, with the
# dream binary's `check` after every run.
if(TARGET dream_memory AND TARGET dream)
  add_test(NAME test_synthesis_noise COMMAND test_synthesis ${CMAKE_SOURCE_DIR}/tests/data/dreaming noise)
  set_tests_properties(test_synthesis_noise PROPERTIES TIMEOUT 900 FIXTURES_REQUIRED tiny_models
    ENVIRONMENT "DREAM_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;DREAM_TEST_BUILD=${CMAKE_BINARY_DIR};ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  add_dependencies(test_synthesis dream)
  # Kill and resume: 20 runs of the whole pipeline killed with SIGKILL and resumed; dream check
  # after every kill, the same store and vault as an uninterrupted run at the end.
  dream_add_test(NAME test_synthesis_resume SOURCES dreaming/test_synthesis_resume.c support/dreaming_fixture.c support/dreaming_fake.c support/kill_resume.c
                 LIBS dream_memory PkgConfig::SQLITE3 PkgConfig::LIBGIT2 ARGS ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  add_dependencies(test_synthesis_resume dream)
endif()

# An article no edit can be placed in (a code fence that never closes) is named in a warning and
# counted in the stage's summary line; the run still succeeds and the file stays as it was.
if(TARGET dream)
  set(_k ${CMAKE_BINARY_DIR}/tests/synthesis-cli-skip)
  set(_g ${CMAKE_SOURCE_DIR}/tests/data/dreaming/golden/wikify)
  add_test(NAME cli_run_skip_unclosed_fence
           COMMAND sh -c "rm -rf '${_k}' && DREAM_HOME='${_k}' '$<TARGET_FILE:dream>' init --quiet && cp '${_g}/Sourdough.md' '${_g}/Cello_Practice.md' '${_k}/wiki/articles/' && printf '\\n```c\\nint x;\\n' >> '${_k}/wiki/articles/Cello_Practice.md' && cp '${_k}/wiki/articles/Cello_Practice.md' '${_k}/before.md' && DREAM_HOME='${_k}' '$<TARGET_FILE:dream>' run --stage link 2>&1 && cmp '${_k}/before.md' '${_k}/wiki/articles/Cello_Practice.md' && echo unchanged")
  set_tests_properties(cli_run_skip_unclosed_fence PROPERTIES
    PASS_REGULAR_EXPRESSION "warning: link: skipped [^\n]*/Cello_Practice.md:[0-9]+: the code fence opened on this line never closes.*link: 2 article\\(s\\): .*1 article\\(s\\) left as they are: no edit can be placed in them.*\nunchanged")
endif()

# `dream forget` (issue 18.3): conversations out of a real store and a dreamt wiki under git.
if(TARGET dream_memory)
  dream_add_test(NAME test_forget SOURCES dreaming/test_forget.c support/dreaming_fixture.c support/dreaming_fake.c
                 LIBS dream_memory PkgConfig::SQLITE3 PkgConfig::LIBGIT2 ARGS ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
endif()

# `dream run` on a wiki of the older format migrates it first, in a commit of its own, and says
# so in a line of its own; the next run has nothing to migrate and prints no such line.
if(TARGET dream)
  set(_m ${CMAKE_BINARY_DIR}/tests/synthesis-cli-migrate)
  set(_o ${CMAKE_SOURCE_DIR}/tests/data/dreaming/old-format)
  add_test(NAME cli_run_migrates_an_old_wiki
           COMMAND sh -c "rm -rf '${_m}' && DREAM_HOME='${_m}' '$<TARGET_FILE:dream>' init --quiet && cp '${_o}'/*.md '${_m}/wiki/articles/' && git -C '${_m}/wiki' add articles && git -C '${_m}/wiki' -c user.name=t -c user.email=t@localhost commit -qm old && DREAM_HOME='${_m}' '$<TARGET_FILE:dream>' run --stage link 2>&1 && git -C '${_m}/wiki' log --format=%s && DREAM_HOME='${_m}' '$<TARGET_FILE:dream>' run --stage link 2>&1 | grep -c '^migrate:' ; true")
  set_tests_properties(cli_run_migrates_an_old_wiki PROPERTIES PASS_REGULAR_EXPRESSION
    "migrate: 5 article\\(s\\) moved to the Obsidian format \\(front matter, tags\\)[^\n]*\nlink: [^\n]*\n(memory: [^\n]*\n)*memory: migrate 5 article\\(s\\) to the Obsidian format[^\n]*\nold\n[^\n]*\n0\n")
endif()
