# FindScotch: locate Scotch's sequential library (Debian libscotch-dev ships no CMake config).
# Defines Scotch_FOUND, Scotch_INCLUDE_DIRS, Scotch_LIBRARIES and the target Scotch::Scotch
# (libscotch + libscotcherr, which libscotch needs for its error handler).
find_path(Scotch_INCLUDE_DIR NAMES scotch.h PATH_SUFFIXES scotch)
find_library(Scotch_LIBRARY NAMES scotch)
find_library(Scotch_ERR_LIBRARY NAMES scotcherr)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Scotch REQUIRED_VARS Scotch_LIBRARY Scotch_ERR_LIBRARY Scotch_INCLUDE_DIR)
if(Scotch_FOUND)
  set(Scotch_INCLUDE_DIRS ${Scotch_INCLUDE_DIR})
  set(Scotch_LIBRARIES ${Scotch_LIBRARY} ${Scotch_ERR_LIBRARY})
  if(NOT TARGET Scotch::Scotch)
    add_library(Scotch::Scotch UNKNOWN IMPORTED)
    set_target_properties(Scotch::Scotch PROPERTIES IMPORTED_LOCATION "${Scotch_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${Scotch_INCLUDE_DIR}"
                          INTERFACE_LINK_LIBRARIES "${Scotch_ERR_LIBRARY};m")
  endif()
endif()
mark_as_advanced(Scotch_INCLUDE_DIR Scotch_LIBRARY Scotch_ERR_LIBRARY)
