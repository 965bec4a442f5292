# SPDX-License-Identifier: MIT
# expect.cmake — runs one command and checks its exit code and output, for the
# CLI tests (tests/cli/CMakeLists.txt). Script mode:
#   cmake -DCMD="prog^^arg^^..." -DEXPECT_RC=2 [-DEXPECT_STDERR="text"]
#         [-DEXPECT_STDOUT="text"] [-DSKIP_RC=77] -P expect.cmake
# EXPECT_STDERR / EXPECT_STDOUT are substrings that must appear,
# REJECT_STDERR one that must not. A run that
# exits with SKIP_RC (no device) ends the script with that code too, so CTest
# reports a skip.
string(REPLACE "^^" ";" CMD "${CMD}")
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(DEFINED SKIP_RC AND rc STREQUAL SKIP_RC AND NOT EXPECT_RC STREQUAL SKIP_RC)
  message("skipped: exit code ${rc}\n${err}")
  # cmake -P cannot choose its exit code; the skip is signalled by this line,
  # matched by SKIP_REGULAR_EXPRESSION in the test's properties.
  message("TANDEM_TEST_SKIPPED")
  return()
endif()
if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_STDERR)
  string(FIND "${err}" "${EXPECT_STDERR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stderr lacks \"${EXPECT_STDERR}\"\nstderr:\n${err}")
  endif()
endif()
if(DEFINED REJECT_STDERR)
  string(FIND "${err}" "${REJECT_STDERR}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "stderr has \"${REJECT_STDERR}\"\nstderr:\n${err}")
  endif()
endif()
if(DEFINED EXPECT_STDOUT)
  string(FIND "${out}" "${EXPECT_STDOUT}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stdout lacks \"${EXPECT_STDOUT}\"\nstdout:\n${out}")
  endif()
endif()
message("ok: exit code ${rc}\n${err}")
