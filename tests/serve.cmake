# The server: `dream serve` with curl and the official openai npm client (installed at test
# time into the build directory; a failed install fails the test).
if(TARGET dream_serve)
  add_test(NAME test_serve COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_serve.sh $<TARGET_FILE:dream>
           ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/serve-test)
  set_tests_properties(test_serve PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 600
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
