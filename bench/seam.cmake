# Serial vs batched on the Dreaming's mix (bench/run.sh drives it; make bench).
add_executable(bench_seam ${CMAKE_CURRENT_LIST_DIR}/bench_seam.c)
target_compile_options(bench_seam PRIVATE ${DREAM_WARNINGS})
target_link_libraries(bench_seam PRIVATE dream_engine)
