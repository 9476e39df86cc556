# Tests of the memory layer: the store and ingest (issue 3).
if(TARGET dream_memory)
  dream_add_test(NAME test_store SOURCES test_store.c LIBS dream_memory PkgConfig::SQLITE3)
  dream_add_test(NAME test_ingest SOURCES test_ingest.c LIBS dream_memory PkgConfig::SQLITE3
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/ingest)
  if(TARGET dream)
    dream_add_test(NAME test_ingest_cli SOURCES test_ingest_cli.c LIBS dream_memory PkgConfig::SQLITE3
                   ARGS $<TARGET_FILE:dream> ${CMAKE_SOURCE_DIR}/tests/data/ingest ${CMAKE_SOURCE_DIR}/examples/conversations)
  endif()
endif()
if(TARGET test_ingest)
  # test_ingest also checks internal pieces (the ZIP reader, the raw store).
endif()
