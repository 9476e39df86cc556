# Fuzzers of src/ingest's parsers (issue 3): one per importer, format detection, the ZIP
# reader and the streaming JSON splitter. Seeds in fuzz/corpus/<name>/.
if(TARGET dream_memory)
  foreach(name ingest_chatgpt ingest_claude ingest_claude_code ingest_codex ingest_pi ingest_openai_jsonl
               ingest_detect zip json_array)
    dream_add_fuzzer(NAME fuzz_${name} SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_${name}.c LIBS dream_memory
                     CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/${name})
  endforeach()
endif()
