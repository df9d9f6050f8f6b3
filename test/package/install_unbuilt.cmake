# cmake -DSRC=<devplace> -DBIN=<build dir> -DPREFIX=<prefix> -P install_unbuilt.cmake: configure
# devplace with its defaults (the tool and the compiled library included, tests and examples off)
# and install it without building anything; the headers and package files must be installed.
file(REMOVE_RECURSE ${BIN} ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN} -DDEVPLACE_BUILD_TESTS=OFF -DDEVPLACE_BUILD_EXAMPLES=OFF
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BIN} --prefix ${PREFIX} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cmake --install of the unbuilt tree failed")
endif()
file(GLOB_RECURSE _config ${PREFIX}/*/devplaceConfig.cmake)
if(NOT EXISTS ${PREFIX}/include/devplace/devplace.hpp OR NOT _config)
  message(FATAL_ERROR "the unbuilt install lacks the headers or devplaceConfig.cmake")
endif()
message(STATUS "unbuilt install ok")
