# model/ (the models' forward and backward, the update kernels) and data/,
# which it builds on, as one library.
# Built for this machine (DOWNPOUR_ARCH=native) it is static. Built for a CPU
# baseline (x86-64 or x86-64-v2: make package) its Eigen products would take
# about twice as long as on an AVX2 machine (docs/performance.md), so it
# is then a shared library compiled once more for each level of
# DOWNPOUR_KERNEL_LEVELS into glibc-hwcaps/LEVEL/ beside it: the dynamic
# loader picks at start-up the copy for the newest level the CPU supports
# (glibc >= 2.33 searches those subdirectories of every library directory,
# RUNPATH included), the baseline copy on older CPUs. No code dispatches.
include(GNUInstallDirs)
if(DOWNPOUR_ARCH MATCHES "^x86-64(-v2)?$")
  set(DOWNPOUR_KERNEL_LEVELS x86-64-v3)
  set(DOWNPOUR_MODEL_LIBRARY_TYPE SHARED)
else()
  set(DOWNPOUR_KERNEL_LEVELS "")
  set(DOWNPOUR_MODEL_LIBRARY_TYPE STATIC)
endif()

# The library NAME of type TYPE from MODEL_SOURCES (model/ and data/). Eigen
# stays inside model/: only this library sees its headers.
function(downpour_model_library name type)
  add_library(${name} ${type} ${MODEL_SOURCES})
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}>)
  target_link_libraries(${name} PRIVATE Eigen3::Eigen ZLIB::ZLIB Threads::Threads)
  # GCC 12 warns inside its own AVX-512 intrinsics when Eigen uses them.
  target_compile_options(${name} PRIVATE -Wno-maybe-uninitialized)
  if(type STREQUAL "SHARED")
    # The version is the soname: a program built against another version's
    # model/ does not start rather than call into a different interface.
    set_target_properties(${name} PROPERTIES OUTPUT_NAME downpour_model
      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION})
  endif()
endfunction()

# The copies of the shared model library for DOWNPOUR_KERNEL_LEVELS, built
# with it, installed beside it.
function(downpour_kernel_copies model)
  foreach(level IN LISTS DOWNPOUR_KERNEL_LEVELS)
    string(MAKE_C_IDENTIFIER "${model}_${level}" copy)
    downpour_model_library(${copy} SHARED)
    # After the directory's -march=${DOWNPOUR_ARCH}: the last -march wins.
    target_compile_options(${copy} PRIVATE -march=${level})
    set_target_properties(${copy} PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/glibc-hwcaps/${level})
    add_dependencies(${model} ${copy})
    install(FILES $<TARGET_FILE:${copy}>
      DESTINATION ${CMAKE_INSTALL_LIBDIR}/glibc-hwcaps/${level})
  endforeach()
endfunction()
