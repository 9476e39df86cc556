# Tests of src/ingest (issue 3): every importer, format detection, the ZIP and stream readers, and
# `dream ingest` end to end.
if(TARGET dream_memory)
  # test_ingest also checks internal pieces (the ZIP reader, the raw store).
  dream_add_test(NAME test_ingest SOURCES ingest/test_ingest.c LIBS dream_memory PkgConfig::SQLITE3
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/ingest)
  if(TARGET dream)
    dream_add_test(NAME test_ingest_cli SOURCES ingest/test_ingest_cli.c LIBS dream_memory PkgConfig::SQLITE3
                   ARGS $<TARGET_FILE:dream> ${CMAKE_SOURCE_DIR}/tests/data/ingest ${CMAKE_SOURCE_DIR}/examples/conversations)
  endif()
endif()
