# cmake -D PROGRAM=... -D OUT=... -D TIMEOUT=... -D LABELS=... -D WORKING_DIRECTORY=... -P GtestSuitesList.cmake
#
# Writes OUT: one add_test per GoogleTest suite that PROGRAM lists (GtestSuites.cmake). Runs after
# each build of PROGRAM.
execute_process(COMMAND "${PROGRAM}" --gtest_list_tests
  WORKING_DIRECTORY "${WORKING_DIRECTORY}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_VARIABLE errors TIMEOUT 60)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}")
  message(FATAL_ERROR "${PROGRAM} --gtest_list_tests failed (${rc}):\n${listing}${errors}")
endif()

# The listing: a suite's line ("Suite." or "Prefix/Suite/0.  # TypeParam = int") at the margin,
# its cases indented below it.
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
# gtest exits 0 when its cases passed or skipped: with none passed, they all skipped (GTEST_SKIP:
# no GPU here), and the suite is reported as skipped (exit 77) rather than passed.
set(run_suite [=[out=$("$@" 2>&1); rc=$?; printf '%s\n' "$out"; [ $rc = 0 ] && case $out in *'[  PASSED  ] 0 tests.'*) exit 77 ;; esac; exit $rc]=])
set(script "")
set(count 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.( |$)")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND script
      "add_test([=[${suite}]=] sh -c [==[${run_suite}]==] gtest-suite \"${PROGRAM}\" [=[--gtest_filter=${suite}.*]=])\n"
      "set_tests_properties([=[${suite}]=] PROPERTIES WORKING_DIRECTORY \"${WORKING_DIRECTORY}\""
      " TIMEOUT ${TIMEOUT} SKIP_RETURN_CODE 77 LABELS \"${LABELS}\")\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  file(REMOVE "${OUT}")
  message(FATAL_ERROR "${PROGRAM} lists no test suite:\n${listing}")
endif()
file(WRITE "${OUT}" "${script}")
