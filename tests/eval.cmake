# The quality benchmark's short version: dream-mini over a held-out corpus, fixed thresholds
# (tests/data/mini-heldout/THRESHOLDS; bench/eval.py says what each measure is).
add_test(NAME dream_mini_eval COMMAND bash ${CMAKE_SOURCE_DIR}/tests/dream_mini_eval.sh $<TARGET_FILE:dream> ${CMAKE_SOURCE_DIR})
# dream run decodes on every core (nproc threads): ctest gives it both, so no other test's
# threads share them (sharing slowed it and test_scheduler 2-3x on CI's two cores).
set_tests_properties(dream_mini_eval PROPERTIES TIMEOUT 900 PROCESSORS 2
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
