# Fuzzer of the Meta/Aliases page parser (issue 4). Seeds in fuzz/corpus/alias_seeds/.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_alias_seeds SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_alias_seeds.c LIBS dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/alias_seeds)
endif()
