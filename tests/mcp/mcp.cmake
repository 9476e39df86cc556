# The MCP server (issue 14): its JSON-RPC handling in C on the hand-written vault; then `dream mcp`
# (stdio) and `dream serve` (POST /mcp) with the official MCP TypeScript SDK client, which the
# dependency step installs (scripts/deps.sh, DREAM_DEPS_NODE=1 under `make test`).
if(TARGET dream_mcp)
  dream_add_test(NAME test_mcp SOURCES mcp/test_mcp.c LIBS dream_mcp dream_memory
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/vault)
endif()
