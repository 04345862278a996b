# LibTorch models (model/torch/, docs/torch.md): -DDOWNPOUR_WITH_TORCH=ON
# builds the adapter downpour_torch, its tests (test/*/test_torch_*.cpp) and
# bench_torch against Debian's libtorch-dev (scripts/install-deps --with-torch).
# Without it those tests are ctest entries that skip (77), so that every test
# program keeps its entry (scripts/check-test-kinds). Included by
# CMakeLists.txt after the test settings, before the other tests are added.
option(DOWNPOUR_WITH_TORCH "Build the LibTorch adapter (model/torch/), its tests and bench" OFF)
set(TORCH_TEST_SOURCES ${TEST_SOURCES})
list(FILTER TORCH_TEST_SOURCES INCLUDE REGEX "/test_torch[^/]*\\.cpp$")
list(FILTER TEST_SOURCES EXCLUDE REGEX "/test_torch[^/]*\\.cpp$")

if(NOT DOWNPOUR_WITH_TORCH)
  foreach(src ${TORCH_TEST_SOURCES})
    get_filename_component(name ${src} NAME_WE)
    get_filename_component(dir ${src} DIRECTORY)
    get_filename_component(label ${dir} NAME)
    add_test(NAME ${name} COMMAND sh -c
      "echo '${name}: skipped: built without LibTorch (-DDOWNPOUR_WITH_TORCH=ON)'; exit 77")
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS ${label})
  endforeach()
  return()
endif()

find_package(Torch REQUIRED)
file(GLOB TORCH_ADAPTER_SOURCES CONFIGURE_DEPENDS model/torch/*.cpp)
add_library(downpour_torch STATIC ${TORCH_ADAPTER_SOURCES})
target_link_libraries(downpour_torch PUBLIC $<BUILD_INTERFACE:downpour_model>
  $<INSTALL_INTERFACE:Downpour::downpour> ${TORCH_LIBRARIES})
target_include_directories(downpour_torch PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/downpour>)

# Installed beside libdownpour.a: find_package(Downpour COMPONENTS torch)
# gives Downpour::torch (cmake/DownpourConfig.cmake.in), and the examples.
include(GNUInstallDirs)
set_target_properties(downpour_torch PROPERTIES EXPORT_NAME torch)
install(TARGETS downpour_torch EXPORT DownpourTorchTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES model/torch/torch_model.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/downpour/model/torch)
install(EXPORT DownpourTorchTargets NAMESPACE Downpour::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Downpour)
install(DIRECTORY examples/torch_mlp examples/torch_embedding
  DESTINATION ${CMAKE_INSTALL_DATADIR}/downpour/examples)

# The torch tests skip the shared precompiled header (LibTorch's flags differ).
# downpour_torch_tests builds them all (make test-torch).
add_custom_target(downpour_torch_tests)
foreach(src ${TORCH_TEST_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  get_filename_component(dir ${src} DIRECTORY)
  get_filename_component(label ${dir} NAME)
  add_executable(${name} ${src} $<TARGET_OBJECTS:doctest_main>)
  set(DOWNPOUR_TEST_TARGET_${name} ${name})  # cmake/package.cmake: test_torch_package
  target_link_libraries(${name} PRIVATE downpour_test_settings downpour_torch)
  # The tests train the examples' very networks (examples/torch_*/*.hpp).
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/examples)
  add_dependencies(${name} downpour gen_libsvm)
  add_dependencies(downpour_torch_tests ${name})
  set(properties LABELS ${label} PROCESSORS 2)
  if(label IN_LIST DOWNPOUR_SPLIT_KINDS)
    downpour_add_doctest_cases(${name} ${name} "${properties}")
  else()
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES ${properties})
  endif()
endforeach()

# bench_torch: the adapter against the same module in plain LibTorch and
# against PyTorch's RPC parameter server (built on its own: --target bench_torch).
add_executable(bench_torch EXCLUDE_FROM_ALL bench/torch/bench_torch.cpp)
target_link_libraries(bench_torch PRIVATE downpour_core downpour_torch)
target_include_directories(bench_torch PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/examples)
