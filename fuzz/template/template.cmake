# Chat-template engine: lexer, parser and evaluator on untrusted templates.
dream_add_fuzzer(NAME fuzz_template SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_template.c LIBS dream_template
                 CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/template)
