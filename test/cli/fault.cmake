# Fault behaviour of devplace's output files (issue 18).
#   cmake -DMODE=M -DOUT=FILE [-DSIGNAL=TERM|INT -DAFTER=S] [-DFSIZE=BLOCKS] -P fault.cmake -- COMMAND ARGS...
# MODE signal: FILE holds an old text; the command is sent SIGNAL after AFTER seconds (coreutils
#   timeout); it must die of that signal, FILE must still hold the old text and no temporary
#   .devplace-* file may be left in FILE's directory.
# MODE fsize: the same old FILE; the command runs under `ulimit -f FSIZE` (a file-size limit, as a
#   full disk): exit status 1, one line on stderr naming FILE and "File too large", FILE intact,
#   no temporary file.
# MODE early: FILE is in a missing directory and the command would work for long: exit status 1,
#   nothing on stdout (no work was reported), one line on stderr naming FILE.
include(${CMAKE_CURRENT_LIST_DIR}/command_args.cmake)

get_filename_component(_dir "${OUT}" DIRECTORY)
set(_old "old contents that must survive\n")
if(NOT MODE STREQUAL "early")
  file(MAKE_DIRECTORY "${_dir}")
  file(GLOB _stale "${_dir}/.devplace-*")
  if(_stale)
    file(REMOVE ${_stale})
  endif()
  file(WRITE "${OUT}" "${_old}")
endif()

if(MODE STREQUAL "signal")
  execute_process(COMMAND timeout --preserve-status -s ${SIGNAL} ${AFTER} ${_cmd}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(SIGNAL STREQUAL "TERM")
    set(_expected 143)
  else()
    set(_expected 130)
  endif()
  if(NOT rc EQUAL _expected)
    message(FATAL_ERROR "exit status ${rc}, expected ${_expected} (killed by SIG${SIGNAL}; did it finish before ${AFTER} s?)\n${err}")
  endif()
elseif(MODE STREQUAL "fsize")
  string(REPLACE ";" "' '" _quoted "${_cmd}")
  execute_process(COMMAND sh -c "ulimit -f ${FSIZE} && exec '${_quoted}'"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "exit status ${rc}, expected 1\n${err}")
  endif()
  if(NOT err MATCHES "^devplace: [^\n]*${OUT}: cannot write: File too large\n$")
    message(FATAL_ERROR "expected one line naming ${OUT} and 'File too large', got:\n${err}")
  endif()
elseif(MODE STREQUAL "early")
  execute_process(COMMAND ${_cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "exit status ${rc}, expected 1\n${err}")
  endif()
  if(NOT out STREQUAL "")
    message(FATAL_ERROR "the command worked before finding that ${OUT} cannot be written:\n${out}")
  endif()
  if(NOT err MATCHES "^devplace: [^\n]*${OUT}: cannot write: [^\n]+\n$")
    message(FATAL_ERROR "expected one line naming ${OUT}, got:\n${err}")
  endif()
  return()
else()
  message(FATAL_ERROR "MODE must be signal, fsize or early")
endif()

file(READ "${OUT}" _now)
if(NOT _now STREQUAL _old)
  message(FATAL_ERROR "${OUT} was changed: ${_now}")
endif()
file(GLOB _left "${_dir}/.devplace-*")
if(_left)
  message(FATAL_ERROR "temporary files left behind: ${_left}")
endif()
