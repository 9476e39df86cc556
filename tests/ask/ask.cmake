# Tests of src/ask (issue 15): `dream ask` over the hand-written vault and the fixture store,
# the scripted fake answering the "answer" stage; the CLI verb end to end.
if(TARGET dream_memory)
  dream_add_test(NAME test_ask SOURCES ask/test_ask.c support/dreaming_fixture.c support/dreaming_fake.c
                 LIBS dream_memory PkgConfig::SQLITE3 PkgConfig::LIBGIT2
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_SOURCE_DIR}/tests/data/dreaming $<TARGET_FILE:dream>)
endif()
