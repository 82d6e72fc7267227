# ddp_gtest_suites(TARGET [TIMEOUT seconds] [LABELS label...])
#
# One CTest test per GoogleTest suite of a test program that links LibTorch, named after the suite
# (`ctest -R Sampler`; one case: `ddp_runtime_tests --gtest_filter=Sampler.DropLastCutsTheRemainder`).
# gtest_discover_tests gives each case a process of its own, and each such process loads LibTorch
# first: 0.65 CPU-seconds on 1.13, about 1 on 2.x, for cases that mostly take milliseconds. A
# suite's cases share one process instead, as when the program runs by itself; every program it
# is used for passes run whole.
#
# As gtest_discover_tests does, the suites are listed after each build (the program's
# --gtest_list_tests, by GtestSuitesList.cmake) into a file CTest includes. A suite whose cases all
# skip (GTEST_SKIP: no GPU here) is reported as skipped.
set(_ddp_gtest_suites_lister "${CMAKE_CURRENT_LIST_DIR}/GtestSuitesList.cmake")

function(ddp_gtest_suites target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TIMEOUT" "LABELS")
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  set(listed "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -D "PROGRAM=$<TARGET_FILE:${target}>" -D "OUT=${listed}"
            -D "TIMEOUT=${arg_TIMEOUT}" -D "LABELS=${arg_LABELS}"
            -D "WORKING_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}" -P "${_ddp_gtest_suites_lister}"
    BYPRODUCTS "${listed}"
    VERBATIM)
  # Until the program is built, CTest says so instead of running nothing.
  file(WRITE "${include_file}"
    "if(EXISTS \"${listed}\")\n"
    "  include(\"${listed}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
