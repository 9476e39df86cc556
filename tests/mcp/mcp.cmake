# The MCP server (issue 14): its JSON-RPC handling in C on the hand-written vault; then `dream mcp`
# (stdio) and `dream serve` (POST /mcp) with the official MCP TypeScript SDK client, which the
# dependency step installs (scripts/deps.sh, DREAM_DEPS_NODE=1 under `make test`).
if(TARGET dream_mcp)
  dream_add_test(NAME test_mcp SOURCES mcp/test_mcp.c LIBS dream_mcp dream_memory
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/vault)
endif()

# The official MCP SDK client over stdio and HTTP, and curl for the malformed requests.
if(TARGET dream_mcp AND TARGET dream_serve)
  add_test(NAME test_mcp_sdk COMMAND bash ${CMAKE_SOURCE_DIR}/tests/mcp/test_mcp_sdk.sh $<TARGET_FILE:dream>
           ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf ${CMAKE_SOURCE_DIR}/tests/data/vault "${DREAM_NODE_MODULES}"
           ${CMAKE_BINARY_DIR}/mcp-sdk-test)
  set_tests_properties(test_mcp_sdk PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 300 PASS_REGULAR_EXPRESSION "PASS: MCP over stdio and HTTP"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
