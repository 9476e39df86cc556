# A Dreaming stage through the seam, serial vs batched (extract; see bench_stages.c). Needs the
# memory layer, so not in DREAM_ENGINE_ONLY builds.
if(TARGET dream_memory)
  add_executable(bench_stages ${CMAKE_CURRENT_LIST_DIR}/bench_stages.c)
  target_compile_options(bench_stages PRIVATE ${DREAM_WARNINGS})
  target_link_libraries(bench_stages PRIVATE dream_memory PkgConfig::SQLITE3)
endif()
