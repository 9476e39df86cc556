# Engine layer: tokenizer conformance, greedy parity with llama.cpp, determinism, bad input.
dream_add_test(NAME test_tokenizer_conformance SOURCES engine/test_tokenizer_conformance.c LIBS dream_engine)
dream_add_test(NAME test_engine SOURCES engine/test_engine.c LIBS dream_engine FIXTURES tiny_models)
dream_add_test(NAME test_greedy_parity SOURCES engine/test_greedy_parity.c LIBS dream_engine FIXTURES tiny_models
  ARGS ${LLAMA_SIMPLE} ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/models/tiny-qwen3.gguf)
dream_add_test(NAME test_scheduler SOURCES engine/test_scheduler.c LIBS dream_engine FIXTURES tiny_models
  ARGS ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/models/tiny-qwen3.gguf)
# The GPU test exists in CUDA builds (DREAM_CUDA=1); there it skips, saying why, when the machine
# has no GPU. A CPU build has no GPU path to test, and says so here.
if(DREAM_CUDA)
  dream_add_test(NAME test_gpu SOURCES engine/test_gpu.c LIBS dream_engine FIXTURES tiny_models
    ARGS ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf)
  set_tests_properties(test_gpu PROPERTIES SKIP_RETURN_CODE 77)
else()
  message(STATUS "test_gpu: not built (a CPU build; DREAM_CUDA=1 builds it, and it skips where no GPU is present)")
endif()
