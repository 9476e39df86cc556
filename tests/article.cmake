# Tests of the article module (issue 5): parse/write, edits, footnotes, normalize, the gate, check.
if(TARGET dream_memory)
  dream_add_test(NAME test_article SOURCES test_article.c LIBS dream_memory
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/articles)
endif()
