# Tests of the read side (issue 6): the read tools on a hand-written vault (tests/data/vault)
# and a store made by the Dreaming fixture; then the CLI verbs on the same, end to end.
if(TARGET dream_memory)
  dream_add_test(NAME test_read SOURCES read/test_read.c support/dreaming_fixture.c support/dreaming_fake.c
                 LIBS dream_memory PkgConfig::SQLITE3 PkgConfig::LIBGIT2
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  dream_add_test(NAME test_search SOURCES read/test_search.c support/dreaming_fixture.c support/dreaming_fake.c
                 LIBS dream_memory PkgConfig::SQLITE3 PkgConfig::LIBGIT2
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  if(TARGET dream)
    dream_add_test(NAME test_read_cli SOURCES read/test_read_cli.c support/dreaming_fixture.c support/dreaming_fake.c
                   LIBS dream_memory PkgConfig::SQLITE3
                   ARGS $<TARGET_FILE:dream> ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_SOURCE_DIR}/tests/data/dreaming)
  endif()
endif()
