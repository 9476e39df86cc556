# Tests of src/cli: the command's own behaviour, verb by verb (help, typos, the options every
# model-loading verb shares). Each prints "PASS: <what>" or "FAIL: <why>".
if(TARGET dream)
  # `dream help VERB` is `dream VERB --help` for every verb; a mistyped verb gets "did you mean".
  add_test(NAME cli_help_and_typos
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cli/help_cli.sh $<TARGET_FILE:dream>)
  set_tests_properties(cli_help_and_typos PROPERTIES PASS_REGULAR_EXPRESSION "PASS: dream help" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()
