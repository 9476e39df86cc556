# Tests of src/store (issue 3): the schema and its migrations, conversations and messages.
if(TARGET dream_memory)
  dream_add_test(NAME test_store SOURCES store/test_store.c LIBS dream_memory PkgConfig::SQLITE3)
endif()
