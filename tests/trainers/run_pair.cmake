# SPDX-License-Identifier: BSD-3-Clause
# One corpus program, run as two processes: plain eager, then with ca::EnableGuard. Their stdout
# must be byte-for-byte equal, and the enabled run's counters (its stderr line
# `ca: hits=H misses=M fallbacks=F`) must show that most of its backwards replayed: at least
# MIN_HITS hits, and more hits than misses and fallbacks together; where the program says how
# many backwards it made and how many had a hook (`calls=N hooked=K` on stderr), the counters
# must add up to exactly N, with no fallback and K opaque calls (each hooked node called as
# itself, the rest of its graph replayed).
#   cmake -DEXE=trainer_corpus -DPROGRAM=gan -DMIN_HITS=60 -P run_pair.cmake
foreach(mode eager enable)
  execute_process(COMMAND ${EXE} --program ${PROGRAM} --mode ${mode}
                  OUTPUT_VARIABLE out_${mode} ERROR_VARIABLE err_${mode} RESULT_VARIABLE rc_${mode})
  if(NOT rc_${mode} EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} --mode ${mode} exited with ${rc_${mode}}:\n${err_${mode}}")
  endif()
endforeach()

if(NOT out_eager STREQUAL out_enable)
  string(REPLACE "\n" ";" eager_lines "${out_eager}")
  string(REPLACE "\n" ";" enable_lines "${out_enable}")
  list(LENGTH eager_lines n_eager)
  list(LENGTH enable_lines n_enable)
  set(first "(one output is a prefix of the other: ${n_eager} vs ${n_enable} lines)")
  math(EXPR last "${n_eager} - 1")
  foreach(i RANGE ${last})
    list(GET eager_lines ${i} a)
    if(i LESS n_enable)
      list(GET enable_lines ${i} b)
    else()
      set(b "<missing>")
    endif()
    if(NOT a STREQUAL b)
      math(EXPR line "${i} + 1")
      set(first "line ${line}:\n  eager:  ${a}\n  enable: ${b}")
      break()
    endif()
  endforeach()
  message(FATAL_ERROR "${PROGRAM}: stdout differs from eager's at ${first}\n${err_enable}")
endif()

if(NOT err_enable MATCHES "ca: hits=([0-9]+) misses=([0-9]+) fallbacks=([0-9]+)")
  message(FATAL_ERROR "${PROGRAM}: no ca stats line on stderr:\n${err_enable}")
endif()
set(hits ${CMAKE_MATCH_1})
set(fallbacks ${CMAKE_MATCH_3})
math(EXPR others "${CMAKE_MATCH_2} + ${CMAKE_MATCH_3}")
if(hits LESS MIN_HITS OR NOT hits GREATER others)
  message(FATAL_ERROR "${PROGRAM}: too few backwards replayed (want at least ${MIN_HITS} hits and "
                      "more hits than misses + fallbacks):\n${err_enable}")
endif()
# A program that reports how many backwards it made (`calls=N hooked=K` on stderr, threads do)
# must see each of them counted once (hits + misses + fallbacks), none of them a fallback, and
# the K with a hook each calling its one hooked node as itself.
if(err_enable MATCHES "calls=([0-9]+) hooked=([0-9]+)")
  set(calls ${CMAKE_MATCH_1})
  set(hooked ${CMAKE_MATCH_2})
  math(EXPR counted "${hits} + ${others}")
  if(NOT counted EQUAL calls)
    message(FATAL_ERROR "${PROGRAM}: ${calls} backwards made, ${counted} counted:\n${err_enable}")
  endif()
  if(NOT err_enable MATCHES "opaque=([0-9]+)")
    message(FATAL_ERROR "${PROGRAM}: no opaque count in the counters:\n${err_enable}")
  endif()
  if(NOT fallbacks EQUAL 0 OR NOT CMAKE_MATCH_1 EQUAL hooked)
    message(FATAL_ERROR "${PROGRAM}: ${hooked} backwards with a hook: want no fallback and "
                        "${hooked} opaque calls:\n${err_enable}")
  endif()
endif()
string(STRIP "${err_enable}" stats)
message(STATUS "${PROGRAM}: stdout identical to eager's; ${stats}")
