# Runs one workload for the ctest tests of tests/workloads.
#
#   cmake -DMODE=golden -DEXE=<wl_x> -DSIZE=<n> -DSEED=<s> -DEXPECTED=<file> -DOUT=<file> -P run_workload.cmake
#       runs the workload, fails if it exits non-zero or if its stdout differs
#       from the golden file EXPECTED.
#   cmake -DMODE=seeds -DEXE=<wl_x> -DSIZE=<n> -DSEED_A=<s> -DSEED_B=<t> -DOUT=<prefix> -P run_workload.cmake
#       runs it with two seeds and fails if the two outputs are identical.
#   -DFORBID_STDERR=<regex> (with golden) also fails if stderr matches it
#   (a DMM that did not load says so on stderr: tests/alloc runs the
#   workloads under TAILOR_DMM).
#   cmake -DMODE=update ... (as golden)
#       (re)writes the golden file from the current output.
cmake_minimum_required(VERSION 3.20)

foreach(_var EXE SIZE OUT)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "run_workload.cmake: ${_var} is not set")
  endif()
endforeach()
if(NOT DEFINED MODE)
  set(MODE golden)
endif()

# Runs the workload with the given seed, stdout to out_file; fails on a
# non-zero exit or when the output does not end with a "result: " line.
function(run_one seed out_file)
  execute_process(
    COMMAND "${EXE}" --seed "${seed}" --size "${SIZE}"
    OUTPUT_FILE "${out_file}"
    ERROR_VARIABLE err
    RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${EXE} --seed ${seed} --size ${SIZE} failed (exit status ${rc}):\n${err}")
  endif()
  if(DEFINED FORBID_STDERR AND err MATCHES "${FORBID_STDERR}")
    message(FATAL_ERROR "${EXE} --seed ${seed} --size ${SIZE} wrote what it must not on stderr:\n${err}")
  endif()
  file(STRINGS "${out_file}" lines)
  list(LENGTH lines n)
  if(n EQUAL 0)
    message(FATAL_ERROR "${EXE} --seed ${seed} --size ${SIZE} printed nothing")
  endif()
  list(GET lines -1 last)
  if(NOT last MATCHES "^result: [^ ]+$")
    message(FATAL_ERROR "${EXE}: last line is not 'result: <value>' but '${last}'")
  endif()
endfunction()

if(MODE STREQUAL "golden" OR MODE STREQUAL "update")
  if(NOT DEFINED SEED OR NOT DEFINED EXPECTED)
    message(FATAL_ERROR "run_workload.cmake: MODE=${MODE} needs SEED and EXPECTED")
  endif()
  run_one("${SEED}" "${OUT}")
  if(MODE STREQUAL "update")
    configure_file("${OUT}" "${EXPECTED}" COPYONLY)
    message(STATUS "wrote ${EXPECTED}")
    return()
  endif()
  if(NOT EXISTS "${EXPECTED}")
    message(FATAL_ERROR "golden file ${EXPECTED} is missing")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${EXPECTED}" "${OUT}" RESULT_VARIABLE same)
  if(NOT same STREQUAL "0")
    file(READ "${EXPECTED}" want)
    file(READ "${OUT}" got)
    message(FATAL_ERROR "output of ${EXE} --seed ${SEED} --size ${SIZE} differs from ${EXPECTED}\n"
                        "--- expected\n${want}--- got\n${got}")
  endif()
elseif(MODE STREQUAL "seeds")
  if(NOT DEFINED SEED_A OR NOT DEFINED SEED_B)
    message(FATAL_ERROR "run_workload.cmake: MODE=seeds needs SEED_A and SEED_B")
  endif()
  run_one("${SEED_A}" "${OUT}.seed${SEED_A}")
  run_one("${SEED_B}" "${OUT}.seed${SEED_B}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUT}.seed${SEED_A}" "${OUT}.seed${SEED_B}"
                  RESULT_VARIABLE same)
  if(same STREQUAL "0")
    message(FATAL_ERROR "${EXE}: seeds ${SEED_A} and ${SEED_B} give identical output; the seed is ignored")
  endif()
else()
  message(FATAL_ERROR "run_workload.cmake: unknown MODE '${MODE}'")
endif()
