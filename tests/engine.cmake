# Engine layer: tokenizer conformance, greedy parity with llama.cpp, determinism, bad input.
dream_add_test(NAME test_tokenizer_conformance SOURCES test_tokenizer_conformance.c LIBS dream_engine)
dream_add_test(NAME test_engine SOURCES test_engine.c LIBS dream_engine FIXTURES tiny_models)
dream_add_test(NAME test_greedy_parity SOURCES test_greedy_parity.c LIBS dream_engine FIXTURES tiny_models
  ARGS ${LLAMA_SIMPLE} ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/models/tiny-qwen3.gguf)
dream_add_test(NAME test_scheduler SOURCES test_scheduler.c LIBS dream_engine FIXTURES tiny_models
  ARGS ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_BINARY_DIR}/models/tiny-qwen3.gguf)
