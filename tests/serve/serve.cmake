# The server: `dream serve` with curl and the official openai npm client (installed at test
# time into the build directory; a failed install fails the test).
if(TARGET dream_serve)
  add_test(NAME test_serve COMMAND bash ${CMAKE_SOURCE_DIR}/tests/serve/test_serve.sh $<TARGET_FILE:dream>
           ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/serve-test)
  set_tests_properties(test_serve PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 900
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# The sanitized server under a short concurrent load: no failed request, no leak, clean exit.
if(TARGET dream_serve AND TARGET serve_load)
  add_test(NAME test_serve_load COMMAND bash ${CMAKE_SOURCE_DIR}/tests/serve/test_serve_load.sh $<TARGET_FILE:dream>
           $<TARGET_FILE:serve_load> ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/serve-load.log)
  set_tests_properties(test_serve_load PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 600
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# POST /v1/memory/dream: the pipeline over HTTP (libcurl against the in-process server), the
# fixture corpus with the scripted fake; the run lock shared with `dream run`.
if(TARGET dream_serve)
  dream_add_test(NAME test_serve_dream SOURCES serve/test_serve_dream.c support/dreaming_fixture.c support/dreaming_fake.c
                 LIBS dream_serve dream_memory PkgConfig::SQLITE3 PkgConfig::CURL PkgConfig::JANSSON Threads::Threads
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/dreaming ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf FIXTURES tiny_models)
endif()

# GET /v1/memory/<tool> on `dream serve` with curl, on the hand-written vault.
if(TARGET dream_serve)
  add_test(NAME test_serve_memory COMMAND bash ${CMAKE_SOURCE_DIR}/tests/serve/test_serve_memory.sh $<TARGET_FILE:dream>
           ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_BINARY_DIR}/serve-memory-test)
  set_tests_properties(test_serve_memory PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 300 PASS_REGULAR_EXPRESSION "PASS: GET /v1/memory"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# What `dream serve` lets in (issue 18): Host, Origin and CORS, Content-Type, OPTIONS and 405's
# Allow, with curl against the running server; the store's stage_state shows a refused POST
# started no run.
if(TARGET dream_serve)
  add_test(NAME test_serve_guard COMMAND bash ${CMAKE_SOURCE_DIR}/tests/serve/test_serve_guard.sh $<TARGET_FILE:dream>
           ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_BINARY_DIR}/serve-guard-test)
  set_tests_properties(test_serve_guard PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 300
    PASS_REGULAR_EXPRESSION "PASS: dream serve's Host, Origin"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# Idle connections time out (DREAM_IDLE_TIMEOUT) and free their slots: issue from the audit
# of the read side, where 64 silent sockets kept `dream serve` from answering anyone.
if(TARGET dream_serve)
  add_test(NAME test_serve_idle COMMAND bash ${CMAKE_SOURCE_DIR}/tests/serve/test_serve_idle.sh $<TARGET_FILE:dream>
           ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/serve-idle-test)
  set_tests_properties(test_serve_idle PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 300
    PASS_REGULAR_EXPRESSION "PASS: dream serve closes idle connections"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
