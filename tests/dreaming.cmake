# Tests of The Dreaming's pipeline (issue 4): the vault and the segment stage.
if(TARGET dream_memory)
  dream_add_test(NAME test_vault SOURCES test_vault.c LIBS dream_memory PkgConfig::LIBGIT2)
  dream_add_test(NAME test_segment SOURCES test_segment.c LIBS dream_memory PkgConfig::SQLITE3
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/ingest ${CMAKE_SOURCE_DIR}/examples/conversations)
  target_include_directories(test_segment PRIVATE ${CMAKE_SOURCE_DIR}/src/memory)
endif()
