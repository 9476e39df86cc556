# The read tools (issue 6) on an article of any bytes, asked with any name, anchor and query.
# Seeds in fuzz/corpus/read/.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_read SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_read.c LIBS dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/read)
endif()
