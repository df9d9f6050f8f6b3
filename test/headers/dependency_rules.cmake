# cmake -DINCLUDE_DIR=<repo>/include -P dependency_rules.cmake
#
# The compile-time budget of the public headers, checked as rules on what each header may include
# (docs/compile-time.md): the time to compile a header is dominated by the heavy headers it pulls
# in (nlohmann/json, Eigen, the readers, the topology generators, solver headers) and by the
# instantiations of the code it reaches, so the budget is kept by keeping those out of the
# headers that do not need them. A rule on the include graph is deterministic, needs no compiler
# and takes well under a second; the time itself is checked by `headers: compile budget`
# (compile_budget.sh), in CPU seconds scaled by anchors compiled in the same run.
#
# The include graph is read from the sources: every `#include` line of every devplace header
# (.hpp and .ipp, whatever #if guards it: the header-only closure, a superset of the compiled
# mode's), followed transitively through devplace's own headers. Third-party headers are reached
# only through devplace headers, so the closure names every heavy header a header pulls in.
cmake_minimum_required(VERSION 3.21)
if(NOT INCLUDE_DIR OR NOT IS_DIRECTORY "${INCLUDE_DIR}/devplace")
  message(FATAL_ERROR "dependency_rules.cmake: INCLUDE_DIR must be the include directory holding devplace/")
endif()

file(GLOB_RECURSE _headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/devplace/*.hpp" "${INCLUDE_DIR}/devplace/*.ipp")
list(SORT _headers)

# Direct includes: devplace headers by path, everything else as written.
foreach(_h IN LISTS _headers)
  string(MAKE_C_IDENTIFIER "${_h}" _id)
  file(STRINGS "${INCLUDE_DIR}/${_h}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  set(_deps)
  foreach(_l IN LISTS _lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"].*$" "\\1" _inc "${_l}")
    list(APPEND _deps "${_inc}")
  endforeach()
  set(_direct_${_id} ${_deps})
endforeach()

# The transitive closure of one header (devplace headers followed, others recorded).
function(devplace_closure header out)
  set(_seen)
  set(_todo "${header}")
  while(_todo)
    list(POP_FRONT _todo _cur)
    if(_cur IN_LIST _seen)
      continue()
    endif()
    list(APPEND _seen "${_cur}")
    if(_cur MATCHES "^devplace/")
      if(NOT EXISTS "${INCLUDE_DIR}/${_cur}")
        message(SEND_ERROR "${header}: includes ${_cur}, which does not exist")
        continue()
      endif()
      string(MAKE_C_IDENTIFIER "${_cur}" _cid)
      list(APPEND _todo ${_direct_${_cid}})
    endif()
  endwhile()
  list(REMOVE_ITEM _seen "${header}")
  set(${out} ${_seen} PARENT_SCOPE)
endfunction()

# What is heavy, as regular expressions over included paths.
set(_json "^nlohmann/")
set(_eigen "^Eigen/|^unsupported/Eigen/")
set(_readers "^devplace/io/(detail/|graph_json|read_graph|topology_json|cluster_json|nvidia_smi|plan_json|piper|pipedream|tarnawski)")
set(_generators "^devplace/topology/generators\\.hpp$")
set(_solvers "^coin/|^Cbc|^Osi|^glpk\\.h$|^scotch\\.h$|^ptscotch\\.h$")

# The rules. Algorithm modules: no JSON, no Eigen, no readers, no generators.
set(_algorithm_modules "^devplace/(algorithm|cluster|cost|dag|detail|map|partition|refine|transform|views)(/|\\.hpp$)|^devplace/(config|executor|plan|status|version)\\.hpp$|^devplace/topology/(concepts|device_limit)\\.hpp$|^devplace/ilp/(concepts|expr|model|solution|lp_writer|mps_writer)\\.hpp$|^devplace/ilp/builders/")
# Models and simulators hold dense matrices (Eigen) but read nothing: no JSON, no readers, no
# generators. The readers of their own inputs (dfmodel/setup*.hpp, phaze/cores_json.hpp) are
# readers. peers/piper*.hpp and peers/tarnawski*.hpp take their authors' input structs, which
# live with the readers of those formats, and are not ruled here. The module headers of these
# modules (devplace/sim.hpp, …) include their readers too and are not ruled either.
set(_model_modules "^devplace/(sim|mcm|phaze|dfmodel|topology|llm)/|^devplace/peers/pipedream")
set(_model_readers "^devplace/dfmodel/setup|^devplace/phaze/cores_json\\.hpp$|^devplace/topology/generators\\.hpp$")
# Solver libraries only behind their components' headers.
set(_solver_headers "^devplace/ilp/backends/|^devplace/map/scotch\\.hpp$|^devplace/sweep/mpi\\.hpp$")

set(_failures 0)
function(devplace_forbid header closure heavy what)
  foreach(_dep IN LISTS closure)
    if(_dep MATCHES "${heavy}")
      message(SEND_ERROR "${header} includes ${_dep} (${what}), which its module must not pull in (docs/compile-time.md)")
      math(EXPR _n "${_failures} + 1")
      set(_failures ${_n} PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

set(_checked 0)
foreach(_h IN LISTS _headers)
  devplace_closure("${_h}" _closure)
  math(EXPR _checked "${_checked} + 1")
  if(_h MATCHES "${_algorithm_modules}")
    devplace_forbid("${_h}" "${_closure}" "${_json}" "nlohmann/json")
    devplace_forbid("${_h}" "${_closure}" "${_eigen}" "Eigen")
    devplace_forbid("${_h}" "${_closure}" "${_readers}" "a reader")
    devplace_forbid("${_h}" "${_closure}" "${_generators}" "the topology generators")
  elseif(_h MATCHES "${_model_modules}" AND NOT _h MATCHES "${_model_readers}")
    devplace_forbid("${_h}" "${_closure}" "${_json}" "nlohmann/json")
    devplace_forbid("${_h}" "${_closure}" "${_readers}" "a reader")
    devplace_forbid("${_h}" "${_closure}" "${_generators}" "the topology generators")
  endif()
  if(NOT _h MATCHES "${_solver_headers}")
    devplace_forbid("${_h}" "${_closure}" "${_solvers}" "a solver library's header")
  endif()
endforeach()
# One header per module and one for all: devplace/<module>.hpp includes every header of
# devplace/<module>/ but the internal ones (detail/) and the optional components' (their own
# targets); devplace/devplace.hpp includes every module header.
set(_component_headers "/detail/|^devplace/ilp/backends/|^devplace/map/scotch\\.hpp$|^devplace/sweep/mpi\\.hpp$")
file(GLOB _module_dirs LIST_DIRECTORIES true RELATIVE "${INCLUDE_DIR}/devplace" "${INCLUDE_DIR}/devplace/*")
string(MAKE_C_IDENTIFIER "devplace/devplace.hpp" _all_id)
foreach(_m IN LISTS _module_dirs)
  if(NOT IS_DIRECTORY "${INCLUDE_DIR}/devplace/${_m}" OR _m STREQUAL "detail")
    continue()
  endif()
  if(NOT EXISTS "${INCLUDE_DIR}/devplace/${_m}.hpp")
    message(SEND_ERROR "module ${_m} has no header devplace/${_m}.hpp")
    math(EXPR _failures "${_failures} + 1")
    continue()
  endif()
  if(NOT "devplace/${_m}.hpp" IN_LIST _direct_${_all_id})
    message(SEND_ERROR "devplace/devplace.hpp does not include devplace/${_m}.hpp")
    math(EXPR _failures "${_failures} + 1")
  endif()
  string(MAKE_C_IDENTIFIER "devplace/${_m}.hpp" _mid)
  foreach(_h IN LISTS _headers)
    if(_h MATCHES "^devplace/${_m}/" AND _h MATCHES "\\.hpp$" AND NOT _h MATCHES "${_component_headers}"
       AND NOT _h IN_LIST _direct_${_mid})
      message(SEND_ERROR "devplace/${_m}.hpp does not include ${_h}")
      math(EXPR _failures "${_failures} + 1")
    endif()
  endforeach()
endforeach()

# A definitions file (.ipp) compiles nothing where it is only included: no ordinary (inline)
# function at namespace scope, whose body would instantiate what it calls in every file that
# includes it; its helpers are templates (`template <int = 0>`), like the functions it defines.
foreach(_h IN LISTS _headers)
  if(_h MATCHES "\\.ipp$")
    file(STRINGS "${INCLUDE_DIR}/${_h}" _inline REGEX "^inline ")
    foreach(_l IN LISTS _inline)
      message(SEND_ERROR "${_h}: an inline function, compiled wherever the file is included: ${_l}")
      math(EXPR _failures "${_failures} + 1")
    endforeach()
  endif()
endforeach()

if(_checked LESS 100)
  message(FATAL_ERROR "only ${_checked} headers found under ${INCLUDE_DIR}: the glob is wrong")
endif()
if(_failures)
  message(FATAL_ERROR "${_failures} header dependency rule(s) broken (docs/compile-time.md)")
endif()
message(STATUS "header dependency rules hold for ${_checked} headers")
