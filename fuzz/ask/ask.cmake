# Fuzzer of `dream ask`'s handling of the model's answer and of what it reads (ask_internal.h):
# the answer's cleaning and the reads' marker renumbering. Seeds in fuzz/corpus/ask_answer/.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_ask_answer SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_ask_answer.c LIBS dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/ask_answer)
endif()
