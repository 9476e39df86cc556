# Tests of tools/: dream-make-model, dream-make-adapter and dream-dataset.

# Fixture: the tiny models every model-using test relies on. Other modules require it with
# FIXTURES tiny_models and read ${CMAKE_BINARY_DIR}/models/tiny-{gemma4,qwen3}.gguf and
# tiny-{gemma4,qwen3}-lora.gguf (names fixed; preset tiny, Q8_0, seed 42).
add_test(NAME tiny_models
  COMMAND ${CMAKE_COMMAND} -DBIN=${CMAKE_BINARY_DIR}/bin -DOUT=${CMAKE_BINARY_DIR}/models -DLLAMA_SRC=${LLAMA_SRC}
          -P ${CMAKE_SOURCE_DIR}/tests/data/tools/make_tiny_models.cmake)
set_tests_properties(tiny_models PROPERTIES FIXTURES_SETUP tiny_models TIMEOUT 300
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")

# dream_seam: the stages' default system turns, which dream-dataset must use as the seam does.
dream_add_test(NAME test_tools SOURCES tools/test_tools.c support/gguf_copy.c LIBS dream_seam dream_util dream::llama FIXTURES tiny_models
  TIMEOUT 300)
add_dependencies(test_tools dream-make-model dream-make-adapter dream-dataset)
