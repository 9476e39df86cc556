# The vault the pipeline makes, read by Obsidian's rules (issue 14): test_synthesis leaves it at
# tests/obsidian-vault (fixture obsidian_vault), and a Markdown parser the dependency step installs
# (scripts/deps.sh: unified, remark-parse, remark-gfm, remark-frontmatter, yaml and
# @flowershow/remark-wiki-link) resolves every link of it: OBSIDIAN-LINKS resolved=N total=M.
if(TARGET test_synthesis)
  set_tests_properties(test_synthesis PROPERTIES FIXTURES_SETUP obsidian_vault)
  add_test(NAME test_obsidian_links COMMAND bash ${CMAKE_SOURCE_DIR}/tests/obsidian/test_obsidian_links.sh
           ${CMAKE_BINARY_DIR}/tests/obsidian-vault "${DREAM_NODE_MODULES}" ${CMAKE_BINARY_DIR}/tests/obsidian-links)
  set_tests_properties(test_obsidian_links PROPERTIES FIXTURES_REQUIRED obsidian_vault TIMEOUT 120
    PASS_REGULAR_EXPRESSION "PASS: every link" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()
