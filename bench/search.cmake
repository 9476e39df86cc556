# The full-text search index at the issue's scale (100,000 messages, 2,000 articles; see
# bench_search.c). Needs the memory layer.
if(TARGET dream_memory)
  add_executable(bench_search ${CMAKE_CURRENT_LIST_DIR}/bench_search.c)
  target_compile_options(bench_search PRIVATE ${DREAM_WARNINGS})
  target_link_libraries(bench_search PRIVATE dream_memory PkgConfig::SQLITE3 PkgConfig::JANSSON)
endif()
