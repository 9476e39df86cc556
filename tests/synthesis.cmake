# Tests of The Dreaming's writing stages (issue 5): create and fold over the fixture corpus with
# the scripted fake, compared with the golden vault in tests/data/dreaming/golden.
if(TARGET dream_memory)
  dream_add_test(NAME test_synthesis SOURCES test_synthesis.c dreaming_fixture.c dreaming_fake.c
                 LIBS dream_memory PkgConfig::SQLITE3 PkgConfig::LIBGIT2 ARGS ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  target_include_directories(test_synthesis PRIVATE ${CMAKE_SOURCE_DIR}/src/memory)
endif()
