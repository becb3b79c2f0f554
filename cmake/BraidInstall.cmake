# Install rules: what `cmake --install` puts under a prefix for programs that
# link braid from outside this tree.
#
#   lib/libbraid.so.0           the datagram API (include/braid/*.h) in one
#                               shared library, built from the same objects
#                               as the in-tree static modules
#   lib/libbraid-verbs.so       the braid0 verbs device (LD_PRELOAD it)
#   lib/libfabric/libbraid-fi.so  the libfabric provider "braid" (point
#                               FI_PROVIDER_PATH at lib/libfabric)
#   include/braid/              the public headers
#   lib/cmake/braid/            find_package(braid) -> target braid::braid
#   lib/pkgconfig/braid.pc      pkg-config --cflags --libs braid
#   bin/braid-perf, braid-sim   the perf tool and the simulator
#
# Consumers need C++20 and Abseil (libabsl-dev): the headers use
# absl::Status, absl::StatusOr and absl::Span. tests/install/ checks all of
# this from a scratch prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The modules behind include/braid/endpoint.h. A module added to the
# endpoint's dependencies must be added here too: the link below uses
# --no-undefined, so a missing one fails the build instead of a user's link.
set(BRAID_SHARED_MODULES braid_wire braid_crypto braid_cc braid_multipath braid_retransmit
    braid_reorder braid_backend_udp braid_backend_impair braid_core
    braid_endpoint)
set(_braid_objects "")
foreach(m IN LISTS BRAID_SHARED_MODULES)
  list(APPEND _braid_objects $<TARGET_OBJECTS:${m}>)
endforeach()
add_library(braid_shared SHARED ${_braid_objects})
# The static modules bring their own dependencies (Abseil, threads) to the
# link; their archive members are not pulled again (the objects above
# define every symbol).
target_link_libraries(braid_shared PRIVATE braid_endpoint)
target_link_libraries(braid_shared INTERFACE absl::status absl::statusor
                      absl::strings absl::span)
target_include_directories(braid_shared INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(braid_shared INTERFACE cxx_std_20)
target_link_options(braid_shared PRIVATE "-Wl,--no-undefined")
set_target_properties(braid_shared PROPERTIES
  OUTPUT_NAME braid
  EXPORT_NAME braid
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR})

install(TARGETS braid_shared EXPORT braidTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/braid
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(EXPORT braidTargets NAMESPACE braid::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/braidConfig.cmake.in
  ${PROJECT_BINARY_DIR}/braidConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/braidConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/braidConfig.cmake
              ${PROJECT_BINARY_DIR}/braidConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
# braid.pc names its prefix relative to its own directory, so a prefix given
# only at install time (cmake --install --prefix P) still comes out right.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(BRAID_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _braid_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" _braid_up "${_braid_up}")
  set(BRAID_PC_PREFIX "\${pcfiledir}/${_braid_up}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/braid.pc.in
               ${PROJECT_BINARY_DIR}/braid.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/braid.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

foreach(t braid-perf braid-sim)
  if(TARGET ${t})
    install(TARGETS ${t} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
if(TARGET braid-verbs)
  install(TARGETS braid-verbs LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET braid-fi)
  install(TARGETS braid-fi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/libfabric)
endif()
