if(TARGET dream_template)
# Chat-template render speed: the Gemma 4 prompt for a ~4,000-token conversation chunk.
add_executable(bench_template ${CMAKE_CURRENT_LIST_DIR}/bench_template.c)
target_compile_options(bench_template PRIVATE ${DREAM_WARNINGS})
target_compile_definitions(bench_template PRIVATE DREAM_LLAMA_SRC="${LLAMA_SRC}")
target_link_libraries(bench_template PRIVATE dream_template)
endif()
