# Runs one example and checks what it prints: the program must exit with 0 and its output must
# match every "// prints: <regex>" line of its source (values worked out by hand or by another
# path, written next to the code that computes them).
#
#   cmake -DPROGRAM=<executable> -DSOURCE=<example.cpp> -P run_example.cmake
execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message("${_out}${_err}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${_rc}")
endif()
file(STRINGS "${SOURCE}" _expected REGEX "^[ \t]*// prints: ")
if(NOT _expected)
  message(FATAL_ERROR "${SOURCE}: no \"// prints: <regex>\" line to check the output against")
endif()
foreach(_line IN LISTS _expected)
  string(REGEX REPLACE "^[ \t]*// prints: " "" _regex "${_line}")
  if(NOT _out MATCHES "${_regex}")
    message(FATAL_ERROR "the output does not match \"${_regex}\"")
  endif()
endforeach()
