# The function-size rule: no function of the library (every public header, the optional backends'
# included where their dependencies were found) nor of the command-line tool is longer than
# 100 lines. Checked by clang-tidy-14's readability-function-size over one translation unit that
# includes every header and every source of the tool; every function over the limit is listed.
#
#   cmake -DCLANG_TIDY=<clang-tidy-14 or empty> -DTU=<source> -DROOT=<source dir>
#         -DINCLUDES=<dir|dir|...> -DDEFINES=<NAME=V|...> -P function_size.cmake
#   cmake -DCLANG_TIDY=<clang-tidy-14 or empty> -DSELF_TEST=<scratch dir> -P function_size.cmake
#
# The second form plants a function of 101 lines and one of 100 in a scratch file and fails unless
# exactly the first is reported. Both report themselves skipped when clang-tidy-14 is missing.
cmake_minimum_required(VERSION 3.20)
set(_limit 100)

if(NOT CLANG_TIDY)
  message("DEVPLACE-SKIPPED: clang-tidy-14 is not installed")
  return()
endif()

# Runs the check over `tu`; `out` receives "file:line: function 'name' (N lines)" for every function
# over the limit defined in a file under one of the directories matched by `filter`.
function(devplace_function_size tu filter out)
  set(_args)
  foreach(_dir IN LISTS ARGN)
    list(APPEND _args "${_dir}")
  endforeach()
  execute_process(
    COMMAND "${CLANG_TIDY}" -quiet "-checks=-*,readability-function-size"
            "-config={CheckOptions: [{key: readability-function-size.LineThreshold, value: ${_limit}}]}"
            "-header-filter=${filter}" "${tu}" -- -std=c++20 ${_args}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _o ERROR_VARIABLE _e)
  if(NOT _rc EQUAL 0 OR _o MATCHES ": error: ")
    message(FATAL_ERROR "clang-tidy could not check ${tu} (exit status ${_rc}):\n${_o}${_e}")
  endif()
  # One warning per function, then its source line and caret, then a note giving its length.
  # (';' would split a line, an unbalanced '[' would stop the splitting: neither matters here.)
  string(REPLACE ";" "," _o "${_o}")
  string(REPLACE "[" "(" _o "${_o}")
  string(REPLACE "]" ")" _o "${_o}")
  string(REPLACE "\n" ";" _lines "${_o}")
  set(_found)
  set(_function)
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^(.*):([0-9]+):[0-9]+: warning: function '([^']*)' exceeds recommended size")
      set(_function "${CMAKE_MATCH_1}:${CMAKE_MATCH_2}: function '${CMAKE_MATCH_3}'")
    elseif(_function AND _line MATCHES ": note: ([0-9]+) lines including")
      list(APPEND _found "${_function} (${CMAKE_MATCH_1} lines)")
      set(_function)
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _found)
  list(SORT _found)
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

if(DEFINED SELF_TEST)
  file(REMOVE_RECURSE "${SELF_TEST}")
  file(MAKE_DIRECTORY "${SELF_TEST}")
  # long_one: its body from "{" to "}" spans 101 lines; at_limit: 100.
  set(_body "")
  foreach(_i RANGE 1 99)
    string(APPEND _body "  x += ${_i};\n")
  endforeach()
  file(WRITE "${SELF_TEST}/planted.cpp"
       "int long_one(int x) {\n${_body}  return x;\n}\n"
       "int at_limit(int x) {\n${_body}}\n")
  devplace_function_size("${SELF_TEST}/planted.cpp" "planted" _found)
  list(LENGTH _found _n)
  if(NOT _n EQUAL 1 OR NOT _found MATCHES "function 'long_one' \\(101 lines\\)")
    message(FATAL_ERROR "the planted function of 101 lines (and only it) should be reported; found: ${_found}")
  endif()
  message(STATUS "the planted function is reported: ${_found}")
  return()
endif()

if(NOT TU OR NOT ROOT)
  message(FATAL_ERROR "function_size.cmake: pass -DTU=<source> -DROOT=<source dir>, or -DSELF_TEST=<scratch dir>")
endif()
set(_flags)
string(REPLACE "|" ";" _includes "${INCLUDES}")
foreach(_dir IN LISTS _includes)
  list(APPEND _flags "-I${_dir}")
endforeach()
string(REPLACE "|" ";" _defines "${DEFINES}")
foreach(_def IN LISTS _defines)
  list(APPEND _flags "-D${_def}")
endforeach()
string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" _root "${ROOT}")
devplace_function_size("${TU}" "^${_root}/(include|cli)/" _found ${_flags})
if(_found)
  list(LENGTH _found _n)
  list(JOIN _found "\n  " _text)
  message(FATAL_ERROR "${_n} function(s) over ${_limit} lines (split each into named steps):\n  ${_text}")
endif()
message(STATUS "no function over ${_limit} lines")
