# Fuzzer of the server's request parsing and UTF-8 repair. Seeds in fuzz/corpus/serve_request/.
if(TARGET dream_serve)
  dream_add_fuzzer(NAME fuzz_serve_request SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_serve_request.c LIBS dream_serve
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/serve_request)
  target_include_directories(fuzz_serve_request PRIVATE ${CMAKE_SOURCE_DIR}/src)
endif()
