# braid_library(NAME SOURCES ... DEPS ...): a static module library with the
# project include roots (include/ and src/).
function(braid_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# The compile flags of test code (the test binaries' own sources), added
# after the build type's. Test sources are mostly GoogleTest macro
# expansions: optimising them and their full debug info cost most of the
# build and buy nothing, while the code under test (the module libraries,
# tools and benchmarks) keeps the build type's flags. -g1 keeps the line
# tables, so failures and sanitizer reports still name file and line.
# Empty gives test code the build type's flags too.
set(BRAID_TEST_CXX_FLAGS "-O0 -g1" CACHE STRING
    "Compile flags of test sources, after the build type's (empty: none)")
separate_arguments(BRAID_TEST_CXX_FLAGS_LIST UNIX_COMMAND "${BRAID_TEST_CXX_FLAGS}")

# braid_test(NAME SOURCES ... DEPS ... [LABELS ...]): one GoogleTest binary,
# registered with ctest as one test. Labels default to "unit".
function(braid_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_options(${name} PRIVATE ${BRAID_TEST_CXX_FLAGS_LIST})
  if(TARGET braid_test_pch)
    target_precompile_headers(${name} REUSE_FROM braid_test_pch)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()

# braid_optional_pkg(OPTION MODULE PREFIX WHAT DEBIAN_PACKAGE HAVE_VAR): sets
# HAVE_VAR ON when the cache option OPTION (AUTO, ON or OFF) is not OFF and
# pkg-config finds MODULE (imported target PkgConfig::PREFIX, visible
# everywhere); ON without MODULE is a fatal error naming DEBIAN_PACKAGE. WHAT
# names what is built with it, for the status line.
macro(braid_optional_pkg option module prefix what debian have_var)
  set(${have_var} OFF)
  if(NOT ${option} STREQUAL "OFF")
    find_package(PkgConfig)
    if(PkgConfig_FOUND)
      pkg_check_modules(${prefix} QUIET IMPORTED_TARGET GLOBAL ${module})
    endif()
    if(${prefix}_FOUND)
      set(${have_var} ON)
      message(STATUS "braid: ${module} ${${prefix}_VERSION} found, building ${what}")
    elseif(${option} STREQUAL "ON")
      message(FATAL_ERROR "${option}=ON but pkg-config finds no ${module} "
                          "(Debian: apt-get install ${debian})")
    else()
      message(STATUS "braid: ${module} not found, ${what} is not built")
    endif()
  endif()
endmacro()
