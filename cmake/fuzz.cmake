# The libFuzzer targets of fuzz/: built as an external project with clang (the main build may
# use GCC) when clang and its fuzzer runtime (Debian: clang, libclang-rt-dev) are found, each
# run by ctest for SEXTANT_FUZZ_SECONDS with ASan and UBSan. Without clang one test says so and
# ctest reports it skipped.
option(SEXTANT_FUZZ "Build and run the libFuzzer targets of fuzz/ when clang with libFuzzer is found" ON)
set(SEXTANT_FUZZ_SECONDS 10 CACHE STRING "Seconds each fuzz target runs under ctest")

set(sextant_fuzz_ok OFF)
if(SEXTANT_FUZZ)
  find_program(SEXTANT_CLANGXX NAMES clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14)
  if(SEXTANT_CLANGXX)
    # Can clang link a sanitized fuzzer? (clang without its runtime package cannot.)
    set(probe_dir ${CMAKE_BINARY_DIR}/fuzz-probe)
    file(WRITE ${probe_dir}/probe.cpp
         "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
    execute_process(COMMAND ${SEXTANT_CLANGXX} -fsanitize=fuzzer,address,undefined ${probe_dir}/probe.cpp -o ${probe_dir}/probe
                    RESULT_VARIABLE probe_result OUTPUT_QUIET ERROR_QUIET)
    if(probe_result EQUAL 0)
      set(sextant_fuzz_ok ON)
    endif()
  endif()
endif()

if(NOT sextant_fuzz_ok)
  message(STATUS "Fuzz targets: not built (no clang with libFuzzer; Debian: apt-get install clang libclang-rt-dev)")
  add_test(NAME fuzz_targets COMMAND ${CMAKE_COMMAND} -E echo "clang with libFuzzer not found: fuzz targets not built")
  set_tests_properties(fuzz_targets PROPERTIES SKIP_REGULAR_EXPRESSION "libFuzzer not found" LABELS fuzz)
  return()
endif()

message(STATUS "Fuzz targets: built with ${SEXTANT_CLANGXX}, each run ${SEXTANT_FUZZ_SECONDS} s by ctest")
include(ExternalProject)
set(SEXTANT_FUZZ_BIN ${CMAKE_BINARY_DIR}/fuzz)
ExternalProject_Add(sextant_fuzz
  SOURCE_DIR ${CMAKE_SOURCE_DIR}/fuzz
  BINARY_DIR ${SEXTANT_FUZZ_BIN}
  CMAKE_ARGS -DCMAKE_CXX_COMPILER=${SEXTANT_CLANGXX} -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
  INSTALL_COMMAND ""
  BUILD_ALWAYS ON
  # One console job: its compiler jobs do not multiply with the main build's.
  USES_TERMINAL_BUILD ON)

# Each target with the repository files it reads as seeds.
set(seeds_scenario scenarios)
set(seeds_model models)
set(seeds_hf_config tests/data/hf)
set(seeds_cluster topologies)
set(seeds_calibration calibration)
set(seeds_runtime_profile calibration/runtime)
set(seeds_reliability calibration/reliability)
set(seeds_published_runs tests/validation)
set(seeds_job_logs tests/data/jobs)
set(seeds_nccl_tests tests/data/nccl-tests)
set(seeds_flags fuzz/seeds/flags)
foreach(target scenario model hf_config cluster calibration runtime_profile reliability published_runs job_logs nccl_tests flags)
  set(dirs "")
  foreach(d ${seeds_${target}})
    list(APPEND dirs ${CMAKE_SOURCE_DIR}/${d})
  endforeach()
  add_test(NAME fuzz_${target}
           COMMAND ${CMAKE_SOURCE_DIR}/fuzz/run.sh ${SEXTANT_FUZZ_BIN}/fuzz_${target} ${SEXTANT_FUZZ_SECONDS}
                   ${CMAKE_BINARY_DIR}/fuzz-work/${target} ${dirs})
  math(EXPR fuzz_timeout "${SEXTANT_FUZZ_SECONDS} + 120")
  set_tests_properties(fuzz_${target} PROPERTIES TIMEOUT ${fuzz_timeout} LABELS fuzz)
endforeach()
