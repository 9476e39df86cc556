# Engine layer: tokenizer conformance, greedy parity with llama.cpp, determinism, bad input.
dream_add_test(NAME test_tokenizer_conformance SOURCES engine/test_tokenizer_conformance.c LIBS dream_engine)
dream_add_test(NAME test_engine SOURCES engine/test_engine.c LIBS dream_engine FIXTURES tiny_models)
# The grammar reference: llama.cpp's own grammar and greedy samplers, masking first (a test
# helper that includes llama.h, as llama-simple is one).
add_executable(llama_grammar_greedy engine/llama_grammar_greedy.c)
target_link_libraries(llama_grammar_greedy PRIVATE dream::llama m)
dream_add_test(NAME test_greedy_parity SOURCES engine/test_greedy_parity.c LIBS dream_engine FIXTURES tiny_models
  ARGS --grammar-ref=$<TARGET_FILE:llama_grammar_greedy> ${LLAMA_SIMPLE} ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/models/tiny-qwen3.gguf)
add_dependencies(test_greedy_parity llama_grammar_greedy)
# One ctest entry per model, so neither runs past its limit on a slow CI machine (the two
# together took over 600 s there while dream_mini_eval shared the cores; about 130 s and 65 s
# apart, here).
dream_add_test(NAME test_scheduler SOURCES engine/test_scheduler.c LIBS dream_engine FIXTURES tiny_models
  ARGS ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf TIMEOUT 1200)
add_test(NAME test_scheduler_qwen3 COMMAND test_scheduler ${CMAKE_BINARY_DIR}/models/tiny-qwen3.gguf)
get_test_property(test_scheduler ENVIRONMENT DREAM_SCHEDULER_ENV)
set_tests_properties(test_scheduler_qwen3 PROPERTIES TIMEOUT 1200 FIXTURES_REQUIRED tiny_models
  ENVIRONMENT "${DREAM_SCHEDULER_ENV}")
# The GPU test exists in CUDA builds (DREAM_CUDA=1); there it skips, saying why, when the machine
# has no GPU. A CPU build has no GPU path to test, and says so here.
if(DREAM_CUDA)
  dream_add_test(NAME test_gpu SOURCES engine/test_gpu.c LIBS dream_engine FIXTURES tiny_models
    ARGS ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf)
  set_tests_properties(test_gpu PROPERTIES SKIP_RETURN_CODE 77)
else()
  message(STATUS "test_gpu: not built (a CPU build; DREAM_CUDA=1 builds it, and it skips where no GPU is present)")
endif()
