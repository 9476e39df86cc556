# Fuzzer of the synthesis stages' model-answer handling (issue 5): sanitize, gist, outline,
# infobox, new-section name, reconcile correction. Seeds in fuzz/corpus/synth_answers/.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_synth_answers SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_synth_answers.c LIBS dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/synth_answers)
endif()

# Fuzzer of reconcile's reading of a later position from the person's own words
# (synth_message_successor). Seeds in fuzz/corpus/message_successor/: the value, a newline, the message.
if(TARGET dream_memory)
  dream_add_fuzzer(NAME fuzz_message_successor SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_message_successor.c LIBS dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/message_successor)
endif()
