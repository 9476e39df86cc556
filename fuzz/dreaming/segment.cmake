# Fuzzer of the segment stage's answer parser (issue 4). Seeds in fuzz/corpus/segment_answer/.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_segment_answer SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_segment_answer.c LIBS dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/segment_answer)
endif()
# Fuzzer of the cut snapping (segment_snap.c): message texts, roles and chunk arrangements. Seeds in
# fuzz/corpus/segment_snap/.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_segment_snap SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_segment_snap.c LIBS dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/segment_snap)
endif()
