# Tests of src/cli: the command's own behaviour, verb by verb (help, typos, the options every
# model-loading verb shares). Each prints "PASS: <what>" or "FAIL: <why>".
if(TARGET dream)
  # `dream help VERB` is `dream VERB --help` for every verb; a mistyped verb gets "did you mean".
  add_test(NAME cli_help_and_typos
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cli/help_cli.sh $<TARGET_FILE:dream>)
  set_tests_properties(cli_help_and_typos PROPERTIES PASS_REGULAR_EXPRESSION "PASS: dream help" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()

# --model PATH on every verb that loads a model: documented alike, a missing file refused alike,
# and the model run and ask call (over $DREAM_BACKEND, with no other model to be found).
if(TARGET dream)
  add_test(NAME cli_model_option
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cli/model_cli.sh $<TARGET_FILE:dream> ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf
                   ${CMAKE_SOURCE_DIR}/tests/data/dreaming/corpus ${CMAKE_SOURCE_DIR}/tests/data/vault ${CMAKE_BINARY_DIR}/tests/model-cli)
  set_tests_properties(cli_model_option PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 300
    PASS_REGULAR_EXPRESSION "PASS: --model PATH" FAIL_REGULAR_EXPRESSION "FAIL:"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# `dream run`'s progress on stderr (issue 18 item 7): the model's loading, the calls of the batch
# in flight, no carriage return on a pipe, the status line on a terminal; stdout unchanged.
if(TARGET dream)
  find_program(DREAM_SCRIPT_PROG script)
  add_test(NAME cli_run_progress
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cli/progress_cli.sh $<TARGET_FILE:dream> ${CMAKE_BINARY_DIR}/models/tiny-gemma4.gguf
                   ${CMAKE_SOURCE_DIR}/tests/data/dreaming/corpus ${CMAKE_BINARY_DIR}/tests/progress-cli "${DREAM_SCRIPT_PROG}")
  set_tests_properties(cli_run_progress PROPERTIES FIXTURES_REQUIRED tiny_models TIMEOUT 300
    PASS_REGULAR_EXPRESSION "PASS: dream run progress" FAIL_REGULAR_EXPRESSION "FAIL:"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# `dream run --retry`: what a stage gave up on (a context too small for its prompts) is tried
# again once the cause is fixed; status points to it. dream-mini (committed) segments for real.
if(TARGET dream)
  add_test(NAME cli_run_retry
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cli/retry_cli.sh $<TARGET_FILE:dream> ${CMAKE_SOURCE_DIR}/models/dream-mini.gguf
                   ${CMAKE_SOURCE_DIR}/examples/conversations ${CMAKE_BINARY_DIR}/tests/retry-cli)
  set_tests_properties(cli_run_retry PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "PASS: dream run --retry" FAIL_REGULAR_EXPRESSION "FAIL:"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# Ctrl-C or SIGTERM while `dream run` waits on a model call: said on stderr, and death by the
# signal (130, 143).
if(TARGET dream)
  add_test(NAME cli_run_interrupt
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cli/interrupt_cli.sh $<TARGET_FILE:dream> ${CMAKE_SOURCE_DIR}/tests/data/dreaming/corpus
                   ${CMAKE_BINARY_DIR}/tests/interrupt-cli)
  set_tests_properties(cli_run_interrupt PROPERTIES TIMEOUT 120 PASS_REGULAR_EXPRESSION "PASS: dream run interrupted" FAIL_REGULAR_EXPRESSION "FAIL:"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
