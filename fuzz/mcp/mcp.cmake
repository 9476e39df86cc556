# Fuzzer of the MCP server's JSON-RPC handling. Seeds in fuzz/corpus/mcp/.
if(TARGET dream_mcp)
  dream_add_fuzzer(NAME fuzz_mcp SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_mcp.c LIBS dream_mcp dream_memory
                   CORPUS ${CMAKE_SOURCE_DIR}/fuzz/corpus/mcp)
endif()
