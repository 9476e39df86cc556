# Tests of the read side (issue 6): the read tools on a hand-written vault (tests/data/vault)
# and a store made by the Dreaming fixture; then the CLI verbs on the same, end to end.
if(TARGET dream_memory)
  dream_add_test(NAME test_read SOURCES test_read.c dreaming_fixture.c dreaming_fake.c
                 LIBS dream_memory PkgConfig::SQLITE3 PkgConfig::LIBGIT2
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  if(TARGET dream)
    dream_add_test(NAME test_read_cli SOURCES test_read_cli.c dreaming_fixture.c dreaming_fake.c
                   LIBS dream_memory PkgConfig::SQLITE3
                   ARGS $<TARGET_FILE:dream> ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  endif()
endif()

# `dream schedule` / `unschedule` / `status` with a temporary HOME and fake systemctl/crontab.
if(TARGET dream)
  add_test(NAME cli_schedule
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/schedule_cli.sh $<TARGET_FILE:dream> ${CMAKE_BINARY_DIR}/tests/schedule-cli)
  set_tests_properties(cli_schedule PROPERTIES PASS_REGULAR_EXPRESSION "PASS: dream schedule" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()

# GET /v1/memory/<tool> on `dream serve` with curl, on the hand-written vault.
if(TARGET dream_serve)
  add_test(NAME test_serve_memory COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_serve_memory.sh $<TARGET_FILE:dream>
           ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_BINARY_DIR}/serve-memory-test)
  set_tests_properties(test_serve_memory PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 300 PASS_REGULAR_EXPRESSION "PASS: GET /v1/memory"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
