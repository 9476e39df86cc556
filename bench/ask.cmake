# The `dream ask` benchmark (bench_ask.c): the fixture corpus dreamed by the scripted fake,
# questions with expected points and negative controls, scored deterministically.
if(TARGET dream_memory)
  add_executable(bench_ask ${CMAKE_CURRENT_LIST_DIR}/bench_ask.c ${CMAKE_SOURCE_DIR}/tests/support/dreaming_fake.c
                 ${CMAKE_SOURCE_DIR}/tests/support/dreaming_fixture.c)
  target_include_directories(bench_ask PRIVATE ${CMAKE_SOURCE_DIR}/tests/support)
  target_compile_options(bench_ask PRIVATE ${DREAM_WARNINGS})
  target_link_libraries(bench_ask PRIVATE dream_memory PkgConfig::SQLITE3 PkgConfig::JANSSON PkgConfig::LIBGIT2)
endif()
