# The whole pipeline, ingest to wikify, in replay mode (bench_pipeline.c; bench/pipeline.sh
# makes the corpus and runs the oracle). Needs the memory layer, so not in DREAM_ENGINE_ONLY builds.
if(TARGET dream_memory)
  add_executable(bench_pipeline ${CMAKE_CURRENT_LIST_DIR}/bench_pipeline.c)
  target_compile_options(bench_pipeline PRIVATE ${DREAM_WARNINGS})
  target_link_libraries(bench_pipeline PRIVATE dream_memory)
endif()
