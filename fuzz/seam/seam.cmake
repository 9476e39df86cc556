# Fuzzer of the names-from-text grammar builder (dream_grammar_names_from: it reads chunk text).
# Seeds in fuzz/corpus/names_grammar/.
dream_add_fuzzer(NAME fuzz_names_grammar SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_names_grammar.c LIBS dream_seam
                 CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/names_grammar)

# Fuzzer of the prose grammar builder (dream_grammar_prose_from: it reads the notes' text).
# Seeds in fuzz/corpus/prose_grammar/.
dream_add_fuzzer(NAME fuzz_prose_grammar SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_prose_grammar.c LIBS dream_seam
                 CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/prose_grammar)
