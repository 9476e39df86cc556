# The article parser (issue 5): round trip, idempotent normalize, check and gate on any bytes.
# Seeds in fuzz/corpus/article/.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_article SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_article.c LIBS dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/article)
endif()
