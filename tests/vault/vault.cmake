# Tests of src/vault: files, git and the seeded Meta pages; `dream init` twice (the second run
# changes nothing and says so).
if(TARGET dream_memory)
  dream_add_test(NAME test_vault SOURCES vault/test_vault.c LIBS dream_memory PkgConfig::LIBGIT2)
endif()
if(TARGET dream)
  set(_d ${CMAKE_BINARY_DIR}/tests/dreaming-cli)
  add_test(NAME cli_init_twice
           COMMAND sh -c "rm -rf '${_d}/init' && '$<TARGET_FILE:dream>' init --wiki '${_d}/init/wiki' --quiet && '$<TARGET_FILE:dream>' init --wiki '${_d}/init/wiki'")
  set_tests_properties(cli_init_twice PROPERTIES PASS_REGULAR_EXPRESSION "already set up \\(8 file\\(s\\) as seeded, 0 kept\\)")
endif()

# `dream init --no-sources` keeps no transcripts (the git setting dream.sources of the wiki's
# repository), `--sources` turns them back on; the vault reads the setting back.
if(TARGET dream)
  set(_n ${CMAKE_BINARY_DIR}/tests/dreaming-cli/no-sources)
  add_test(NAME cli_init_no_sources
           COMMAND sh -c "rm -rf '${_n}' && '$<TARGET_FILE:dream>' init --wiki '${_n}' --no-sources --quiet && echo \"off=$(git -C '${_n}' config dream.sources)\" && '$<TARGET_FILE:dream>' init --wiki '${_n}' --sources && echo \"on=$(git -C '${_n}' config dream.sources)\"")
  set_tests_properties(cli_init_no_sources PROPERTIES PASS_REGULAR_EXPRESSION "off=false\ntranscript notes \\(Sources/\\): kept; the next run writes them\n.*on=true")
endif()
