# Fuzzer of the search query compiler (issue 15). Seeds in fuzz/corpus/search_query/.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_search_query SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_search_query.c LIBS dream_memory PkgConfig::SQLITE3
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/search_query)
endif()
