# The seam: call_local / call_local_batch, stage adapters, the operation lock, backends.
# gbnf_match asks llama.cpp's own grammar sampler whether the prose grammar takes a text.
dream_add_test(NAME test_seam SOURCES seam/test_seam.c support/gbnf_match.c support/gguf_copy.c LIBS dream_seam dream::llama PkgConfig::JANSSON FIXTURES tiny_models)

# The seam's remote backend: a scripted flaky server in the test, then a real `dream serve`.
if(TARGET dream_serve)
  add_executable(test_remote seam/test_remote.c)
  target_compile_options(test_remote PRIVATE ${DREAM_WARNINGS})
  target_link_libraries(test_remote PRIVATE dream_seam PkgConfig::MHD PkgConfig::JANSSON PkgConfig::CMOCKA Threads::Threads)
  add_test(NAME test_remote COMMAND bash ${CMAKE_SOURCE_DIR}/tests/seam/test_remote.sh $<TARGET_FILE:dream> $<TARGET_FILE:test_remote>
           ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/remote-serve.log)
  set_tests_properties(test_remote PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 300
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
