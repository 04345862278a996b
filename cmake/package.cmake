# Downpour as something to install (included at the end of CMakeLists.txt):
# `cmake --install build --prefix P` and the Debian package (`make package`)
# put under P:
#   bin/downpour, bin/downpour-make-certs, bin/downpour-make-csv
#   lib/ARCH/libdownpour.a           one static library: the model and the runtime
#                                    (lib/ARCH: Debian's multiarch directory)
#   include/downpour/...             the public headers, paths as in the source tree
#   lib/cmake/Downpour/              find_package(Downpour CONFIG): Downpour::downpour
#   share/man/man1/downpour.1, share/downpour/examples/ (configs, custom_model/,
#                                    embedding_model/)
#   lib/systemd/system/downpour-{ps,worker}@.service, share/downpour/cluster.env
#                                    (the package's postinst copies it to
#                                    /etc/downpour/ and adds the downpour user)
# docs/library.md has the why of each choice.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
# Installing (and cpack, through its preinstall step) takes what is built
# instead of building every target first, the tests included: make package
# and test_package build what is installed.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# The headers a program built against Downpour includes: these, and every
# header of ours they include (followed through their #include lines, again
# whenever one of them changes). Eigen, CAF and the actors stay out of them.
# model/layers: the blocks a program's own model is composed from
# (examples/custom_model, examples/embedding_model).
set(DOWNPOUR_API_HEADERS runtime/cli/app.hpp model/model.hpp config/version.hpp
  model/network_model.hpp model/ctr_network.hpp model/layers/dense.hpp
  model/layers/activations.hpp model/layers/dropout.hpp model/layers/concatenate.hpp)
function(downpour_header_closure out)
  set(todo ${ARGN})
  set(seen "")
  while(todo)
    list(POP_FRONT todo header)
    if(header IN_LIST seen)
      continue()
    endif()
    set(path ${CMAKE_CURRENT_SOURCE_DIR}/${header})
    if(NOT EXISTS ${path})
      message(FATAL_ERROR "public header ${header} (included by the library's API) does not exist")
    endif()
    list(APPEND seen ${header})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
    file(STRINGS ${path} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"]+\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*$" "\\1" included "${line}")
      list(APPEND todo ${included})
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()
downpour_header_closure(DOWNPOUR_INSTALLED_HEADERS ${DOWNPOUR_API_HEADERS})

# libdownpour.a: the objects of downpour_core, and of downpour_model when it
# is static (nothing compiled twice), so a user links one library. Static:
# the objects carry this build's -march, and nothing promises a stable ABI
# yet. A shared downpour_model (with its copies for newer CPUs,
# cmake/kernel_dispatch.cmake) is installed beside it and linked through it.
if(DOWNPOUR_MODEL_LIBRARY_TYPE STREQUAL "STATIC")
  add_library(downpour_library STATIC $<TARGET_OBJECTS:downpour_model>
    $<TARGET_OBJECTS:downpour_core>)
else()
  add_library(downpour_library STATIC $<TARGET_OBJECTS:downpour_core>)
  target_link_libraries(downpour_library INTERFACE downpour_model)
  set_target_properties(downpour_model PROPERTIES EXPORT_NAME model)
  install(TARGETS downpour_model EXPORT DownpourTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  # The binary finds it (and glibc-hwcaps/ beside it) wherever the prefix is.
  set_target_properties(downpour PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
endif()
set_target_properties(downpour_library PROPERTIES OUTPUT_NAME downpour EXPORT_NAME downpour)
target_include_directories(downpour_library INTERFACE
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/downpour>)
target_compile_features(downpour_library INTERFACE cxx_std_17)
target_link_libraries(downpour_library INTERFACE ${DOWNPOUR_SHARED_LIBRARIES})

install(TARGETS downpour RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS scripts/make-certs DESTINATION ${CMAKE_INSTALL_BINDIR}
  RENAME downpour-make-certs)
# The planted CSV data of the custom-model example (examples/custom_model/README.md).
install(PROGRAMS scripts/make-csv DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME downpour-make-csv)
# The systemd units and the cluster's settings they read (deploy/systemd).
install(FILES deploy/systemd/downpour-ps@.service deploy/systemd/downpour-worker@.service
  DESTINATION lib/systemd/system)
install(FILES deploy/systemd/cluster.env DESTINATION ${CMAKE_INSTALL_DATADIR}/downpour)
install(TARGETS downpour_library EXPORT DownpourTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(header IN LISTS DOWNPOUR_INSTALLED_HEADERS)
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/downpour/${dir})
endforeach()

set(DOWNPOUR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Downpour)
install(EXPORT DownpourTargets NAMESPACE Downpour:: DESTINATION ${DOWNPOUR_CMAKE_DIR})
configure_package_config_file(cmake/DownpourConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/generated/DownpourConfig.cmake
  INSTALL_DESTINATION ${DOWNPOUR_CMAKE_DIR})
# 0.x: a minor version may change the model interface.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/generated/DownpourConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/generated/DownpourConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/generated/DownpourConfigVersion.cmake
  cmake/FindCAF.cmake DESTINATION ${DOWNPOUR_CMAKE_DIR})

if(DOWNPOUR_HELP2MAN)
  install(FILES ${CMAKE_BINARY_DIR}/downpour.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
file(GLOB DOWNPOUR_EXAMPLE_CONFIGS CONFIGURE_DEPENDS examples/*.ini)
install(FILES ${DOWNPOUR_EXAMPLE_CONFIGS} DESTINATION ${CMAKE_INSTALL_DATADIR}/downpour/examples)
install(DIRECTORY examples/custom_model examples/embedding_model
  DESTINATION ${CMAKE_INSTALL_DATADIR}/downpour/examples)

# The Debian package (make package; docs/library.md). Its version is the
# build's (cmake/build_version.cmake), read when cpack runs, so that it is
# always the version the packaged binary prints; cpack refuses a build tuned
# for this machine's CPU (DOWNPOUR_ARCH=native) unless told
# -D DOWNPOUR_PACKAGE_NATIVE=ON (the tests do, to look inside a package).
set(DOWNPOUR_PACKAGE_MAINTAINER "Downpour maintainers <maintainers@downpour.invalid>"
  CACHE STRING "Maintainer field of the Debian package")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME downpour)
set(CPACK_PACKAGE_VENDOR Downpour)
set(CPACK_PACKAGE_CONTACT "${DOWNPOUR_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "parameter-server training runtime (Downpour SGD, sync replicas) on CAF")
set(CPACK_PACKAGE_DESCRIPTION "Downpour trains TensorFlow 1.x's distributed MNIST job, and models \
of your own built against its library, on parameter servers and workers: asynchronous, \
synchronous and stale-synchronous modes, exact stop, checkpoints, TLS. The package holds the \
downpour binary, libdownpour.a with its headers and CMake package config, example cluster \
configs and an example project, and systemd units run as the downpour system user.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# dpkg-shlibdeps on build/downpour (Debian 12); test_package checks that every
# library the packaged binary loads comes from one of these.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libboost-program-options1.74.0 (>= 1.74.0+ds1), \
libc6 (>= 2.34), libcaf-core0.17 (>= 0.17.6), libcaf-io0.17 (>= 0.17.6), \
libcaf-openssl0.17 (>= 0.17.6), libgcc-s1 (>= 3.0), \
libssl3 (>= 3.0.0), libstdc++6 (>= 11), libzip4 (>= 1.0), zlib1g (>= 1:1.2.11.dfsg)")
# adduser: the postinst adds the units' system user (deploy/debian/postinst).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${CPACK_DEBIAN_PACKAGE_DEPENDS}, adduser")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_SOURCE_DIR}/deploy/debian/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The default data set, and openssl for downpour-make-certs.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist, openssl")
# What building against libdownpour.a needs (docs/library.md).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake, g++, pkg-config, libcaf-dev, \
libboost-program-options-dev, zlib1g-dev, libzip-dev, libssl-dev")
configure_file(cmake/cpack_project.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/generated/cpack_project.cmake
  @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_BINARY_DIR}/generated/cpack_project.cmake)
include(CPack)

# test_package installs and packages this build (what that needs built, and
# where); test_package_build and test_package_portable configure `make package`'s build;
# test_torch_package installs a build with LibTorch (cmake/torch.cmake).
foreach(program test_package test_package_build test_package_portable test_torch_package)
  set(test ${DOWNPOUR_TEST_TARGET_${program}})
  if(test AND TARGET ${test})
    add_dependencies(${test} downpour_library)
    if(TARGET man)
      add_dependencies(${test} man)
    endif()
    target_compile_definitions(${test} PRIVATE DOWNPOUR_BUILD_DIR="${CMAKE_BINARY_DIR}"
      DOWNPOUR_CMAKE="${CMAKE_COMMAND}" DOWNPOUR_CPACK="${CMAKE_CPACK_COMMAND}"
      DOWNPOUR_CXX="${CMAKE_CXX_COMPILER}" DOWNPOUR_PROJECT_VERSION="${PROJECT_VERSION}"
      DOWNPOUR_INSTALL_LIBDIR="${CMAKE_INSTALL_LIBDIR}" DOWNPOUR_BUILD_ARCH="${DOWNPOUR_ARCH}"
      DOWNPOUR_KERNEL_LEVELS="${DOWNPOUR_KERNEL_LEVELS}")
  endif()
endforeach()
