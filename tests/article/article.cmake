# Tests of the article module (issue 5): parse/write, edits, footnotes, normalize, the gate, check.
if(TARGET dream_memory)
  dream_add_test(NAME test_article SOURCES article/test_article.c LIBS dream_memory
                 ARGS ${CMAKE_SOURCE_DIR}/tests/data/articles)
endif()

# `dream check` on a clean vault (the fixtures) and on a vault with one violation of each kind.
if(TARGET dream)
  add_test(NAME cli_check_vault
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/article/article_check_cli.sh $<TARGET_FILE:dream> ${CMAKE_SOURCE_DIR}/tests/data
                   ${CMAKE_BINARY_DIR}/tests/check-cli)
  set_tests_properties(cli_check_vault PROPERTIES PASS_REGULAR_EXPRESSION "PASS: dream check" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()
