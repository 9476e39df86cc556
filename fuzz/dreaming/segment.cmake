# Fuzzer of the segment stage's answer parser (issue 4). Seeds in fuzz/corpus/segment_answer/.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_segment_answer SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_segment_answer.c LIBS dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/segment_answer)
endif()
