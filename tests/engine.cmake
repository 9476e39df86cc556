# Engine layer: tokenizer conformance, greedy parity with llama.cpp, determinism, bad input.
dream_add_test(NAME test_tokenizer_conformance SOURCES test_tokenizer_conformance.c LIBS dream_engine)
