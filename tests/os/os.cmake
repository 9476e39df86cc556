# Tests of src/os: the nightly schedule.
# `dream schedule` / `unschedule` / `status` with a temporary HOME and fake systemctl/crontab.
if(TARGET dream)
  add_test(NAME cli_schedule
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/os/schedule_cli.sh $<TARGET_FILE:dream> ${CMAKE_BINARY_DIR}/tests/schedule-cli)
  set_tests_properties(cli_schedule PROPERTIES PASS_REGULAR_EXPRESSION "PASS: dream schedule" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()
