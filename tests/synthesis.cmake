# Tests of The Dreaming's writing stages (issue 5): create and fold over the fixture corpus with
# the scripted fake, compared with the golden vault in tests/data/dreaming/golden.
if(TARGET dream_memory)
  dream_add_test(NAME test_synthesis SOURCES test_synthesis.c dreaming_fixture.c dreaming_fake.c
                 LIBS dream_memory PkgConfig::SQLITE3 PkgConfig::LIBGIT2 ARGS ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  target_include_directories(test_synthesis PRIVATE ${CMAKE_SOURCE_DIR}/src/memory)
endif()

# `dream run` over a set-up wiki lists the writing stages after route in its dry run.
if(TARGET dream)
  set(_s ${CMAKE_BINARY_DIR}/tests/synthesis-cli)
  add_test(NAME cli_run_synthesis_dry
           COMMAND sh -c "rm -rf '${_s}' && DREAM_HOME='${_s}' '$<TARGET_FILE:dream>' init --quiet && DREAM_HOME='${_s}' '$<TARGET_FILE:dream>' ingest '${CMAKE_SOURCE_DIR}/tests/data/dreaming/corpus' >/dev/null && DREAM_HOME='${_s}' '$<TARGET_FILE:dream>' run --dry-run")
  set_tests_properties(cli_run_synthesis_dry PROPERTIES PASS_REGULAR_EXPRESSION "route: 0 entit.*\ncreate: 0 article\\(s\\) would be written \\(dry run: nothing called or written\\)\nfold: 0 new chunk\\(s\\) would be routed")
endif()
