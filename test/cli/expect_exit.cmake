# cmake -DCODE=N -P expect_exit.cmake -- COMMAND ARGS... : passes when the command exits with N.
include(${CMAKE_CURRENT_LIST_DIR}/command_args.cmake)
execute_process(COMMAND ${_cmd} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL CODE)
  message(FATAL_ERROR "exit status ${rc}, expected ${CODE}: ${_cmd}")
endif()
